// Writes tuned knob values back into a source as its defaults (the value moved to the front of its
// `kevo: tune` line), so a saved best kernel evaluates with the values that won; in CUDA C++ and
// OpenCL C the fallback `#ifndef NAME` / `#define NAME value` gets them too, so it compiles the same
// outside kevo. `comment` is what starts a line comment in the source's language (`//`, `#`).
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace kevo {

std::string apply_knob_defaults(const std::string& source, const std::map<std::string, std::string>& values,
                                std::string_view comment);

// The source without the "// kevo run ..." header lines a written best kernel starts with, so a
// kernel handed back (--from) does not collect one header per run.
std::string strip_kevo_header(const std::string& source, std::string_view comment);

}  // namespace kevo
