// Static scan of candidate sources (see static_scan.hpp). Two independent layers guard #include:
//  1. On the physical text, after everything that can rebuild a '#' or join lines (line ends,
//     trigraphs, line splices with trailing blanks, digraphs), every '#' followed by blanks or
//     block comments and then include/import/embed is refused unless it is an allow-listed
//     directive. This layer ignores strings and comments on purpose: it cannot be desynchronised
//     by a literal the compiler lexes differently (raw strings, digit separators, ...).
//  2. A lexer removes comments and literals (raw strings and digit separators included) for the
//     remaining checks (dynamic parallelism, warnings), which work on tokens, not regexes, so a
//     long line cannot exhaust the stack.
#include "eval/static_scan.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kevo {

namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }

ScanResult refuse(int line, std::string reason) {
    ScanResult r;
    r.accepted = false;
    r.line = line;
    r.reason = line > 0 ? fmt::format("line {}: {}", line, reason) : reason;
    return r;
}

// The text as the compiler's first translation phases see it, with a map back to physical lines.
struct Physical {
    std::string text;
    std::vector<int> line;  // physical line of each character of text
};

Physical translate(std::string_view in) {
    // Line ends: CRLF and a lone CR both end a line for some compilers.
    std::string lf;
    lf.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        if (in[i] == '\r') {
            lf += '\n';
            if (i + 1 < in.size() && in[i + 1] == '\n') ++i;
        } else {
            lf += in[i];
        }
    }
    // Trigraphs (??/ is a backslash, so also a splice) and digraph '%:' become what they spell.
    static const std::string from = "=/'()!<>-", to = "#\\^[]|{}~";
    std::string tri;
    std::vector<int> tri_line;
    tri.reserve(lf.size());
    int line = 1;
    for (size_t i = 0; i < lf.size(); ++i) {
        char c = lf[i];
        if (c == '?' && i + 2 < lf.size() && lf[i + 1] == '?' && from.find(lf[i + 2]) != std::string::npos) {
            c = to[from.find(lf[i + 2])];
            i += 2;
        } else if (c == '%' && i + 1 < lf.size() && lf[i + 1] == ':') {
            c = '#';
            ++i;
        }
        tri += c;
        tri_line.push_back(line);
        if (c == '\n') ++line;
    }
    // Splices: a backslash, optional blanks, then a newline join two lines.
    Physical out;
    out.text.reserve(tri.size());
    for (size_t i = 0; i < tri.size(); ++i) {
        if (tri[i] == '\\') {
            size_t j = i + 1;
            while (j < tri.size() && is_blank(tri[j])) ++j;
            if (j < tri.size() && tri[j] == '\n') {
                i = j;
                continue;
            }
        }
        out.text += tri[i];
        out.line.push_back(tri_line[i]);
    }
    return out;
}

// Layer 1: any '#' that introduces include/import/embed, wherever it stands.
std::optional<ScanResult> check_file_directives(const Physical& p, const std::vector<std::string>& allowed) {
    const std::string& t = p.text;
    const std::string allowed_text = allowed.empty() ? std::string("no header may be included in this language")
                                                     : fmt::format("allowed: {}", fmt::join(allowed, ", "));
    for (size_t i = 0; i < t.size(); ++i) {
        if (t[i] != '#') continue;
        size_t j = i + 1;
        while (j < t.size()) {  // blanks and block comments may sit between '#' and the name
            if (is_blank(t[j])) ++j;
            else if (t.compare(j, 2, "/*") == 0) {
                const size_t end = t.find("*/", j + 2);
                j = end == std::string::npos ? t.size() : end + 2;
            } else break;
        }
        size_t k = j;
        while (k < t.size() && is_ident_char(t[k])) ++k;
        const std::string name = t.substr(j, k - j);
        if (name != "include" && name != "include_next" && name != "import" && name != "embed") continue;
        // Allowed only as a plain directive at the start of a line naming an allow-listed header.
        size_t line_start = i;
        while (line_start > 0 && t[line_start - 1] != '\n') --line_start;
        const bool at_line_start = std::all_of(t.begin() + static_cast<long>(line_start), t.begin() + static_cast<long>(i), is_blank);
        size_t end = t.find('\n', k);
        std::string operand = t.substr(k, end == std::string::npos ? std::string::npos : end - k);
        // A trailing comment is not part of the operand.
        for (const char* opener : {"//", "/*"})
            if (const size_t c = operand.find(opener); c != std::string::npos && operand.find_first_of("<\"") < c) operand.resize(c);
        operand.erase(0, operand.find_first_not_of(" \t"));
        operand.erase(operand.find_last_not_of(" \t") + 1 > operand.size() ? 0 : operand.find_last_not_of(" \t") + 1);
        std::string header;
        if (operand.size() >= 2 && ((operand.front() == '<' && operand.back() == '>') || (operand.front() == '"' && operand.back() == '"')))
            header = operand.substr(1, operand.size() - 2);
        const bool ok = name == "include" && at_line_start && !header.empty() &&
                        std::find(allowed.begin(), allowed.end(), header) != allowed.end();
        if (!ok)
            return refuse(p.line[i], fmt::format("#{} {} is refused: candidates may not read files ({}; the check "
                                                 "also applies inside comments and strings)",
                                                 name, operand.empty() ? "(nothing)" : operand.substr(0, 80), allowed_text));
    }
    return std::nullopt;
}

struct Token {
    std::string text;
    int line = 0;
};

// Layer 2: tokens of the code with comments and literals removed (literals become "\"\"").
std::vector<Token> lex(const Physical& p, std::vector<int>* string_lines) {
    const std::string& t = p.text;
    std::vector<Token> out;
    size_t i = 0;
    while (i < t.size()) {
        const char c = t[i];
        const int line = p.line[i];
        if (std::isspace(static_cast<unsigned char>(c))) { ++i; continue; }
        if (t.compare(i, 2, "//") == 0) { i = t.find('\n', i); if (i == std::string::npos) break; continue; }
        if (t.compare(i, 2, "/*") == 0) { const size_t e = t.find("*/", i + 2); i = e == std::string::npos ? t.size() : e + 2; continue; }
        // Raw string: optional prefix, R"delim( ... )delim".
        size_t r = i;
        while (r < t.size() && r - i < 2 && (t[r] == 'u' || t[r] == 'U' || t[r] == 'L' || t[r] == '8')) ++r;
        if (r + 1 < t.size() && t[r] == 'R' && t[r + 1] == '"' && (i == 0 || !is_ident_char(t[i - 1]))) {
            const size_t open = t.find('(', r + 2);
            if (open != std::string::npos && open - (r + 2) <= 16) {
                const std::string close = ")" + t.substr(r + 2, open - (r + 2)) + "\"";
                const size_t e = t.find(close, open + 1);
                i = e == std::string::npos ? t.size() : e + close.size();
                out.push_back({"\"\"", line});
                if (string_lines) string_lines->push_back(line);
                continue;
            }
        }
        if (c == '"' || c == '\'') {
            size_t j = i + 1;
            while (j < t.size() && t[j] != c && t[j] != '\n') j += t[j] == '\\' ? 2 : 1;
            i = std::min(t.size(), j + 1);
            out.push_back({"\"\"", line});
            if (string_lines) string_lines->push_back(line);
            continue;
        }
        // pp-number: digits, letters, '.', digit separators and exponent signs.
        if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < t.size() && std::isdigit(static_cast<unsigned char>(t[i + 1])))) {
            size_t j = i + 1;
            while (j < t.size()) {
                if (is_ident_char(t[j]) || t[j] == '.') ++j;
                else if (t[j] == '\'' && j + 1 < t.size() && is_ident_char(t[j + 1])) j += 2;
                else if ((t[j] == '+' || t[j] == '-') && std::strchr("eEpP", t[j - 1])) ++j;
                else break;
            }
            out.push_back({t.substr(i, j - i), line});
            i = j;
            continue;
        }
        if (is_ident_start(c)) {
            size_t j = i + 1;
            while (j < t.size() && is_ident_char(t[j])) ++j;
            out.push_back({t.substr(i, j - i), line});
            i = j;
            continue;
        }
        out.push_back({std::string(1, c), line});
        ++i;
    }
    return out;
}

}  // namespace

const std::vector<std::string>& include_allow_list(Language language) { return language->scan.include_allow_list; }

ScanResult scan_source(std::string_view source, Language language) {
    if (source.size() > kMaxSourceBytes)
        return refuse(0, fmt::format("source is {} bytes; the limit is {} bytes", source.size(), kMaxSourceBytes));
    if (source.find('\0') != std::string_view::npos) return refuse(0, "source contains a NUL byte");
    if (std::all_of(source.begin(), source.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
        return refuse(0, "source is empty");
    // A language that is not C checks its own syntax tree in its compiler (KernelLanguage::c_family).
    if (!language->c_family) return ScanResult{};

    const Physical physical = translate(source);
    if (auto refused = check_file_directives(physical, include_allow_list(language))) return *refused;

    std::vector<int> string_lines;
    const auto tokens = lex(physical, &string_lines);
    static const std::set<std::string> probes = {"__has_include", "__has_include_next"};
    const ScanRules& rules = language->scan;
    const std::set<std::string> launch_calls(rules.launch_calls.begin(), rules.launch_calls.end());
    const std::set<std::string> global_words(rules.global_words.begin(), rules.global_words.end());
    ScanResult result;
    int depth = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
        const Token& tok = tokens[i];
        if (probes.count(tok.text)) return refuse(tok.line, "__has_include is refused: candidates may not probe the file system");
        if (launch_calls.count(tok.text))
            return refuse(tok.line, fmt::format("{} ('{}') is refused: the host plans every launch", rules.launch_calls_what,
                                                tok.text));
        if (rules.refuse_chevron_launch && tok.text == "<" && i + 2 < tokens.size() && tokens[i + 1].text == "<" &&
            tokens[i + 2].text == "<")
            return refuse(tok.line, fmt::format("{} ('<<<') is refused: the host plans every launch", rules.launch_calls_what));
        if ((tok.text == "clock" || tok.text == "clock64") && i + 1 < tokens.size() && tokens[i + 1].text == "(")
            result.warnings.push_back(fmt::format("line {}: reads a timer ('{}()'); kevo times with device events, so this "
                                                  "cannot change a measurement", tok.line, tok.text));
        // Mutable globals: a declaration that is not a function, at file scope.
        if (global_words.count(tok.text) && (depth == 0 || !rules.globals_at_file_scope_only)) {
            bool is_const = i > 0 && (tokens[i - 1].text == "const" || tokens[i - 1].text == "__constant__");
            size_t j = i + 1;
            for (; j < tokens.size(); ++j) {
                const std::string& s = tokens[j].text;
                if (s == "const" || s == "__constant__" || s == "constexpr") is_const = true;
                if (s == "(" || s == ";" || s == "=" || s == "{" || s == "[" || s == ")" || s == ",") break;
            }
            if (j < tokens.size() && !is_const && (tokens[j].text == ";" || tokens[j].text == "=" || tokens[j].text == "["))
                result.warnings.push_back(fmt::format("line {}: mutable device global ('{}'): state that outlives a launch "
                                                      "is re-checked after timing", tok.line, tokens[j - 1].text));
        }
        if (tok.text == "{") ++depth;
        if (tok.text == "}") depth = std::max(0, depth - 1);
    }
    // %globaltimer is read through inline PTX, inside a string literal: look at the text itself.
    if (const size_t at = physical.text.find("globaltimer"); at != std::string::npos)
        result.warnings.push_back(fmt::format("line {}: reads %globaltimer; kevo times with device events, so this cannot "
                                              "change a measurement", physical.line[at]));
    return result;
}

}  // namespace kevo
