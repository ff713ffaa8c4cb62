// Parsing a proposer's free-text answer: reasoning sections (<think>...</think> and kin) are set
// aside, then the last fenced block in the run's language that defines the entry points (a quote of
// a kernel the prompt showed only when the model wrote none), else SEARCH/REPLACE edits applied to
// the previous source, else a reason why nothing was usable.
#include "search/answer.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <tuple>
#include <vector>

#include <fmt/format.h>

namespace kevo {
namespace {

std::string normalise_newlines(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\r') {
            out += '\n';
            if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
        } else {
            out += text[i];
        }
    }
    return out;
}

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    size_t start = 0;
    while (start < text.size()) {
        const size_t end = text.find('\n', start);
        if (end == std::string_view::npos) {
            lines.push_back(text.substr(start));
            break;
        }
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Tags under which a model plausibly writes a kernel for `target`: none, or the fence tags of any
// registered language of the same family (a model may label OpenCL C as plain C or as CUDA, which
// is then named); a block tagged json, text, ... or in a language of the other family (Python
// beside C) is an illustration, not a candidate.
bool is_code_tag(std::string_view tag, Language target) {
    const std::string t = lower(tag);
    if (t.empty()) return true;
    for (const Language l : languages())
        if (l->c_family == target->c_family &&
            std::find(l->fence_tags.begin(), l->fence_tags.end(), t) != l->fence_tags.end())
            return true;
    return false;
}

struct FencedBlock {
    std::string tag;
    std::string body;
};

struct Fences {
    std::vector<FencedBlock> blocks;
    bool unterminated = false;
};

// A fence line is up to three spaces, then three or more backticks, then an optional info string
// whose first word is the language tag.
std::optional<std::pair<size_t, std::string>> fence_open(std::string_view line) {
    size_t indent = 0;
    while (indent < line.size() && indent < 4 && line[indent] == ' ') ++indent;
    if (indent > 3) return std::nullopt;
    line.remove_prefix(indent);
    size_t ticks = 0;
    while (ticks < line.size() && line[ticks] == '`') ++ticks;
    if (ticks < 3) return std::nullopt;
    std::string_view info = trim(line.substr(ticks));
    if (info.find('`') != std::string_view::npos) return std::nullopt;  // inline code, not a fence
    const size_t space = info.find_first_of(" \t{");
    return std::make_pair(ticks, std::string(space == std::string_view::npos ? info : info.substr(0, space)));
}

bool fence_close(std::string_view line, size_t ticks) {
    const std::string_view t = trim(line);
    return t.size() >= ticks && std::all_of(t.begin(), t.end(), [](char c) { return c == '`'; });
}

Fences find_fences(const std::vector<std::string_view>& lines) {
    Fences fences;
    for (size_t i = 0; i < lines.size(); ++i) {
        const auto open = fence_open(lines[i]);
        if (!open) continue;
        size_t j = i + 1;
        std::string body;
        while (j < lines.size() && !fence_close(lines[j], open->first)) {
            body.append(lines[j]);
            body += '\n';
            ++j;
        }
        if (j == lines.size()) {
            fences.unterminated = true;
            break;
        }
        fences.blocks.push_back({open->second, std::move(body)});
        i = j;
    }
    return fences;
}

bool holds_kernel(std::string_view code, Language language) {
    for (const auto& marker : language->kernel_markers)
        if (code.find(marker) != std::string_view::npos) return true;
    return false;
}

// The first other registered language (by name) whose kernel the code holds.
Language other_language_held(std::string_view code, Language language) {
    for (const Language other : languages())
        if (other != language && holds_kernel(code, other)) return other;
    return {};
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// True when `name` occurs as a whole identifier followed by "(": a definition (or a call, which a
// kernel file does not make of its own entry point).
bool names_function(std::string_view code, std::string_view name) {
    for (size_t pos = code.find(name); pos != std::string_view::npos; pos = code.find(name, pos + 1)) {
        if (pos > 0 && is_identifier_char(code[pos - 1])) continue;
        size_t end = pos + name.size();
        if (end < code.size() && is_identifier_char(code[end])) continue;
        while (end < code.size() && std::isspace(static_cast<unsigned char>(code[end]))) ++end;
        if (end < code.size() && code[end] == '(') return true;
    }
    return false;
}

bool defines_entry_points(std::string_view code, const std::vector<std::string>& names) {
    return std::all_of(names.begin(), names.end(), [&](const std::string& n) { return names_function(code, n); });
}

// Text compared for "the same source": trailing spaces of each line and trailing blank lines aside.
std::string comparable(std::string_view text) {
    std::string out;
    for (std::string_view line : split_lines(normalise_newlines(text))) {
        while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
        out.append(line);
        out += '\n';
    }
    while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') out.pop_back();
    return out;
}

bool is_marker(std::string_view line, char c, std::string_view word) {
    const std::string_view t = trim(line);
    size_t n = 0;
    while (n < t.size() && t[n] == c) ++n;
    if (n < 5) return false;
    return trim(t.substr(n)) == word;
}

struct Edit {
    std::string search, replace;
};

struct Edits {
    std::vector<Edit> edits;
    std::string error;  // a malformed block
};

Edits find_edits(const std::vector<std::string_view>& lines) {
    Edits out;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (!is_marker(lines[i], '<', "SEARCH")) continue;
        const size_t number = out.edits.size() + 1;
        Edit edit;
        size_t j = i + 1;
        while (j < lines.size() && !is_marker(lines[j], '=', "")) {
            edit.search.append(lines[j]);
            edit.search += '\n';
            ++j;
        }
        if (j == lines.size()) {
            out.error = fmt::format("edit {}: no ======= after <<<<<<< SEARCH", number);
            return out;
        }
        ++j;
        while (j < lines.size() && !is_marker(lines[j], '>', "REPLACE")) {
            edit.replace.append(lines[j]);
            edit.replace += '\n';
            ++j;
        }
        if (j == lines.size()) {
            out.error = fmt::format("edit {}: no >>>>>>> REPLACE after =======", number);
            return out;
        }
        out.edits.push_back(std::move(edit));
        i = j;
    }
    return out;
}

// Occurrences of `needle` in `text` that start at the beginning of a line (edits replace whole
// lines, so a match inside a line would corrupt it).
std::vector<size_t> line_matches(const std::string& text, const std::string& needle) {
    std::vector<size_t> found;
    for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
        if (pos == 0 || text[pos - 1] == '\n') found.push_back(pos);
    return found;
}

ParsedAnswer apply_edits(const std::vector<Edit>& edits, std::string_view previous_source, std::string_view base_name) {
    ParsedAnswer parsed;
    if (trim(previous_source).empty()) {
        parsed.reason = "the answer holds SEARCH/REPLACE edits but there is no previous source to apply them to";
        return parsed;
    }
    std::string source = normalise_newlines(previous_source);
    if (!source.empty() && source.back() != '\n') source += '\n';
    for (size_t i = 0; i < edits.size(); ++i) {
        const Edit& e = edits[i];
        if (trim(e.search).empty()) {
            parsed.reason = fmt::format("edit {} of {}: the SEARCH text is empty", i + 1, edits.size());
            return parsed;
        }
        const auto found = line_matches(source, e.search);
        if (found.size() != 1) {
            const std::string first_line(trim(e.search.substr(0, e.search.find('\n'))));
            parsed.reason = found.empty()
                                ? fmt::format("edit {} of {}: SEARCH text not found in {} (first line: \"{}\")", i + 1,
                                              edits.size(), base_name, first_line)
                                : fmt::format("edit {} of {}: SEARCH text matches {} places in {} (first line: "
                                              "\"{}\"); it must match exactly once",
                                              i + 1, edits.size(), found.size(), base_name, first_line);
            return parsed;
        }
        source.replace(found.front(), e.search.size(), e.replace);
    }
    parsed.ok = true;
    parsed.source = std::move(source);
    parsed.reason = fmt::format("{} search/replace edit{} applied", edits.size(), edits.size() == 1 ? "" : "s");
    return parsed;
}

// Reasoning models write drafts inside <think>...</think> (or <thinking>, <reasoning>); only the
// text outside them is the answer. An opening tag that is never closed hides everything after it.
struct Answer {
    std::string text;
    bool had_reasoning = false;
    bool unclosed_reasoning = false;
};

Answer strip_reasoning(const std::string& text) {
    static constexpr std::array<std::string_view, 4> kTags = {"think", "thinking", "reasoning", "reflection"};
    const std::string low = lower(text);
    Answer out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t open = std::string::npos;
        std::string_view tag;
        for (std::string_view t : kTags) {
            const size_t at = low.find(fmt::format("<{}>", t), pos);
            if (at < open) open = at, tag = t;
        }
        if (open == std::string::npos) {
            out.text.append(text, pos, std::string::npos);
            break;
        }
        out.text.append(text, pos, open - pos);
        out.had_reasoning = true;
        const std::string close = fmt::format("</{}>", tag);
        const size_t end = low.find(close, open);
        if (end == std::string::npos) {
            out.unclosed_reasoning = true;
            break;
        }
        pos = end + close.size();
    }
    return out;
}

}  // namespace

ParsedAnswer parse_answer(std::string_view answer, std::string_view previous_source, Language language) {
    AnswerRules rules;
    rules.previous_source = previous_source;
    rules.language = language;
    return parse_answer(answer, rules);
}

ParsedAnswer parse_answer(std::string_view answer, const AnswerRules& rules) {
    const Language language = rules.language;
    const std::string_view previous_source = rules.previous_source;
    const Answer outside = strip_reasoning(normalise_newlines(answer));
    const std::string& text = outside.text;
    const auto lines = split_lines(text);
    const Fences fences = find_fences(lines);

    std::vector<std::string> quotes;
    for (std::string_view q : rules.quoted)
        if (!trim(q).empty()) quotes.push_back(comparable(q));

    // The documented rule: the model's own block over a quote of what the prompt showed, one that
    // defines the entry points over one that does not, and the later over the earlier.
    const FencedBlock* best = nullptr;
    std::tuple<bool, bool> best_rank{false, false};
    size_t kernel_blocks = 0, quoted_blocks = 0;
    Language other_language_kernel;
    for (const auto& block : fences.blocks) {
        if (!is_code_tag(block.tag, language)) continue;
        // A block holding edit markers is an edit, not a whole file.
        if (block.body.find("<<<<<<<") != std::string::npos) continue;
        if (!holds_kernel(block.body, language)) {
            if (!other_language_kernel) other_language_kernel = other_language_held(block.body, language);
            continue;
        }
        ++kernel_blocks;
        const bool quote = std::find(quotes.begin(), quotes.end(), comparable(block.body)) != quotes.end();
        quoted_blocks += quote ? 1 : 0;
        const std::tuple<bool, bool> rank{!quote, defines_entry_points(block.body, rules.entry_points)};
        if (!best || rank >= best_rank) best = &block, best_rank = rank;
    }
    if (best) {
        ParsedAnswer parsed;
        parsed.ok = true;
        parsed.source = best->body;
        parsed.reason = fmt::format("fenced block ({} lines)", std::count(best->body.begin(), best->body.end(), '\n'));
        if (kernel_blocks > 1)
            parsed.reason += fmt::format(", the chosen one of {} kernel blocks{}", kernel_blocks,
                                         quoted_blocks > 0 && std::get<0>(best_rank)
                                             ? fmt::format(" ({} quoting an earlier kernel)", quoted_blocks)
                                             : std::string());
        return parsed;
    }

    const Edits edits = find_edits(lines);
    if (!edits.error.empty()) return {false, {}, edits.error, true};
    if (!edits.edits.empty()) {
        ParsedAnswer applied = apply_edits(edits.edits, previous_source, rules.base_name);
        applied.edit_failed = !applied.ok;
        return applied;
    }

    ParsedAnswer parsed;
    if (outside.unclosed_reasoning && trim(text).empty())
        parsed.reason = "the answer is all reasoning: a <think> section is never closed and nothing follows it "
                        "(answer truncated? raise --max-tokens)";
    else if (other_language_kernel)
        parsed.reason = fmt::format("the fenced code holds a {} kernel but {} is required",
                                    other_language_kernel->short_name, language_name(language));
    else if (fences.unterminated)
        parsed.reason = "a fenced code block is never closed (answer truncated?) and there are no edits";
    else
        parsed.reason = outside.had_reasoning ? "no fenced code block with a kernel and no edits outside the reasoning "
                                                "sections (<think>...</think> drafts are not answers)"
                                              : "no fenced code block with a kernel and no edits";
    return parsed;
}

}  // namespace kevo
