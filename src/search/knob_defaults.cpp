// See knob_defaults.hpp.
#include "search/knob_defaults.hpp"

#include <regex>
#include <sstream>
#include <vector>

namespace kevo {

namespace {

// `#ifndef NAME`: NAME, else empty.
std::string ifndef_name(const std::string& line) {
    static const std::regex kIfndef(R"(^\s*#\s*ifndef\s+([A-Za-z_][A-Za-z0-9_]*)\s*$)");
    std::smatch m;
    return std::regex_match(line, m, kIfndef) ? m[1].str() : std::string();
}

// A `#define NAME value` guarded by the `#ifndef NAME` just before it is the knob's fallback (what
// the kernel uses compiled outside kevo): it gets the tuned value too.
std::string with_fallback_value(const std::string& line, const std::string& guarded, const std::map<std::string, std::string>& values) {
    const auto it = values.find(guarded);
    if (guarded.empty() || it == values.end()) return line;
    static const std::regex kDefine(R"(^(\s*#\s*define\s+)([A-Za-z_][A-Za-z0-9_]*)(\s+)(\S+)(.*)$)");
    std::smatch m;
    if (!std::regex_match(line, m, kDefine) || m[2].str() != guarded) return line;
    return m[1].str() + m[2].str() + m[3].str() + it->second + m[5].str();
}

}  // namespace

std::string apply_knob_defaults(const std::string& source, const std::map<std::string, std::string>& values,
                                std::string_view comment) {
    std::istringstream in(source);
    std::string line, out, guarded;
    while (std::getline(in, line)) {
        line = with_fallback_value(line, guarded, values);
        guarded = ifndef_name(line);
        const auto at = line.find("kevo: tune ");
        if (at != std::string::npos && line.find(comment) < at) {
            std::istringstream words(line.substr(at + 11));
            std::string name, v;
            words >> name;
            std::vector<std::string> list;
            while (words >> v) list.push_back(v);
            if (auto it = values.find(name); it != values.end()) {
                std::vector<std::string> reordered = {it->second};
                for (const auto& x : list)
                    if (x != it->second) reordered.push_back(x);
                line = line.substr(0, at) + "kevo: tune " + name;
                for (const auto& x : reordered) line += " " + x;
            }
        }
        out += line + "\n";
    }
    if (!source.empty() && source.back() != '\n' && !out.empty()) out.pop_back();
    return out;
}

std::string strip_kevo_header(const std::string& source, std::string_view comment) {
    size_t pos = 0;
    if (!source.starts_with(std::string(comment) + " kevo run ")) return source;
    // The header is the leading block of comment lines.
    while (pos < source.size() && source.compare(pos, comment.size(), comment) == 0) {
        const size_t end = source.find('\n', pos);
        if (end == std::string::npos) return {};
        pos = end + 1;
    }
    return source.substr(pos);
}

}  // namespace kevo
