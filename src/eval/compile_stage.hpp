// Directives, knob values and compilation: the part of the cascade that needs no device when the
// compiler works offline (NVRTC), shared by full evaluations and `kevo eval --compile-only`.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "eval/directives.hpp"
#include "eval/eval_types.hpp"
#include "task/task.hpp"

namespace kevo {

// `arch` is empty for the device's own architecture, or the target the candidate declared (see resolve_target).
using CompileFn = std::function<Expected<CompileOutcome>(const std::string& source, const std::vector<std::string>& defines,
                                                         const std::string& arch)>;

struct CompileStage {
    std::optional<Verdict> verdict;  // set when the candidate failed here
    std::string diagnostics;
    Language language;  // the language it was compiled as
    Directives directives;
    std::map<std::string, std::string> knobs;  // values in force
    std::optional<uint32_t> module;
    std::vector<KernelImage> images;  // a language compiled ahead of time (CompileOutcome::images)
    std::string image_metadata;
    std::string log;
    double seconds = 0;
    std::vector<CompileMessage> messages;
    std::vector<std::string> warnings;  // `// kevo:` lines that are ordinary comments, noted
};

// The language a request is written in: its `language` when named (a language `backend` compiles),
// else the backend's default. An unknown name, or one another backend compiles, is an error.
Expected<Language> request_language(const EvalRequest& request, const std::string& backend);

// Compiler messages name request.source_name (see name_source_in_log). `language` and `device_arch`
// (the device's, or the offline compiler's, "sm_90") decide whether a declared target may be used.
// A language with its own compiler (KernelLanguage::compile) compiles there instead of `compile`.
// Errors are environment faults of the compiler itself (cannot be loaded, ...).
Expected<CompileStage> run_compile_stage(const TaskSpec& spec, const EvalRequest& request, Language language,
                                         const std::string& device_arch, const CompileFn& compile);

}  // namespace kevo
