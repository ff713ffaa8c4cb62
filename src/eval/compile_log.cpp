// Compiler-log parser (see compile_log.hpp).
#include "eval/compile_log.hpp"

#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "backend/kernel_language.hpp"

namespace kevo {

std::vector<CompileMessage> parse_compile_log(std::string_view log) {
    static const std::regex nvrtc(R"(^[^\s(]*\((\d+)\):\s*(error|warning|catastrophic error)[^:]*:\s*(.*)$)");
    static const std::regex clang(R"(^[^:]*:(\d+):(\d+):\s*(error|warning|fatal error):\s*(.*)$)");
    // PoCL 3 puts the severity first: "error: /path/tempfile.cl:4:40: expected expression".
    static const std::regex pocl(R"(^(error|warning|fatal error):\s*[^:]*:(\d+):(\d+):\s*(.*)$)");
    std::vector<CompileMessage> out;
    std::istringstream lines{std::string(log)};
    std::string text;
    while (std::getline(lines, text)) {
        if (!text.empty() && text.back() == '\r') text.pop_back();
        std::smatch m;
        if (std::regex_match(text, m, nvrtc)) {
            const std::string severity = m[2];
            out.push_back({std::stoi(m[1]), 0, severity == "warning" ? "warning" : "error", m[3]});
        } else if (std::regex_match(text, m, clang)) {
            const std::string severity = m[3];
            out.push_back({std::stoi(m[1]), std::stoi(m[2]), severity == "warning" ? "warning" : "error", m[4]});
        } else if (std::regex_match(text, m, pocl)) {
            const std::string severity = m[1];
            out.push_back({std::stoi(m[2]), std::stoi(m[3]), severity == "warning" ? "warning" : "error", m[4]});
        }
    }
    return out;
}

namespace {

// The language whose suffix ends the compiler's file name ("kernel.cu"); none for a placeholder.
Language language_of_file(const std::string& file) {
    const size_t dot = file.rfind('.');
    return dot == std::string::npos ? Language() : language_for_suffix(std::string_view(file).substr(dot + 1));
}

// The compiler's name for the main source: a placeholder in angle brackets or a path with a kernel
// language's suffix.
bool names_main_source(const std::string& file) {
    return (file.starts_with("<") && file.ends_with(">")) || static_cast<bool>(language_of_file(file));
}

std::string replacement_for(const std::string& file, const std::string& source_name) {
    if (!source_name.empty()) return source_name;
    const Language language = language_of_file(file);
    return fmt::format("candidate.{}", language ? language->suffix : std::string("cl"));
}

}  // namespace

std::string name_source_in_log(std::string_view log, const std::string& source_name) {
    // The file name's position in each of the three layouts parse_compile_log reads.
    static const std::regex nvrtc(R"(^([^\s(]+)(\(\d+\):.*)$)");
    static const std::regex clang(R"(^([^:\s]+)(:\d+:\d+:.*)$)");
    static const std::regex pocl(R"(^((?:error|warning|fatal error):\s*)([^:\s]+)(:\d+:\d+:.*)$)");
    static const std::regex nvrtc_summary(R"(^(.* detected in the compilation of ")([^"]+)(".*)$)");
    std::string out;
    std::istringstream lines{std::string(log)};
    std::string text;
    bool first = true;
    while (std::getline(lines, text)) {
        if (!first) out += '\n';
        first = false;
        std::smatch m;
        if ((std::regex_match(text, m, pocl) || std::regex_match(text, m, nvrtc_summary)) && names_main_source(m[2]))
            text = std::string(m[1]) + replacement_for(m[2], source_name) + std::string(m[3]);
        else if ((std::regex_match(text, m, nvrtc) || std::regex_match(text, m, clang)) && names_main_source(m[1]))
            text = replacement_for(m[1], source_name) + std::string(m[2]);
        out += text;
    }
    if (!log.empty() && log.back() == '\n') out += '\n';
    return out;
}

std::string log_head(std::string_view log, size_t max_lines) {
    std::string out;
    size_t lines = 0, pos = 0;
    while (pos < log.size() && lines < max_lines) {
        const size_t end = log.find('\n', pos);
        out.append(log.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos + 1));
        pos = end == std::string_view::npos ? log.size() : end + 1;
        ++lines;
    }
    if (pos < log.size()) out += "[... log truncated ...]\n";
    return out;
}

}  // namespace kevo
