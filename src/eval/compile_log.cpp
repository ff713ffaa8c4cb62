// Compiler-log parser (see compile_log.hpp).
#include "eval/compile_log.hpp"

#include <regex>
#include <sstream>

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
