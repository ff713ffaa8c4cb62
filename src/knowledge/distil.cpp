// See distil.hpp.
#include "knowledge/distil.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/kernel_language.hpp"

namespace kevo {
namespace {

constexpr size_t kMaxLinesShown = 12;  // of the added and of the removed lines, in a draft's text
constexpr size_t kMaxLineChars = 160;

std::vector<std::string> code_lines(const std::string& source) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= source.size()) {
        size_t end = source.find('\n', start);
        if (end == std::string::npos) end = source.size();
        std::string line = source.substr(start, end - start);
        const size_t first = line.find_first_not_of(" \t\r");
        if (first != std::string::npos) out.push_back(line.substr(first, line.find_last_not_of(" \t\r") + 1 - first));
        start = end + 1;
    }
    return out;
}

std::string clipped(const std::string& line) {
    return line.size() <= kMaxLineChars ? line : line.substr(0, kMaxLineChars) + " ...";
}

// The run's candidates' language by the one rule (backend_language: the stored name, else the
// backend's own); a default handle when the stored settings name none the backend compiles.
Language language_of_run(const RunRecord& run) {
    auto language = backend_language(run.settings.value("language", std::string()), run.backend);
    return language ? *language : Language{};
}

bool is_directive(const std::string& line, const std::string& comment) {
    return line.rfind(comment, 0) == 0 && line.find("kevo:") != std::string::npos;
}

// "BX 128 -> 256", "UNROLL=4 (new)", "VEC (dropped, was 2)".
std::vector<std::string> knob_changes(const std::map<std::string, std::string>& before,
                                      const std::map<std::string, std::string>& after) {
    std::vector<std::string> out;
    for (const auto& [k, v] : after) {
        const auto it = before.find(k);
        if (it == before.end()) out.push_back(fmt::format("{}={} (new)", k, v));
        else if (it->second != v) out.push_back(fmt::format("{} {} -> {}", k, it->second, v));
    }
    for (const auto& [k, v] : before)
        if (!after.count(k)) out.push_back(fmt::format("{} (dropped, was {})", k, v));
    return out;
}

std::string bullet_lines(const std::vector<std::string>& lines, const char* mark) {
    std::string out;
    for (size_t i = 0; i < lines.size() && i < kMaxLinesShown; ++i) out += fmt::format("    {} {}\n", mark, clipped(lines[i]));
    if (lines.size() > kMaxLinesShown) out += fmt::format("    ({} more)\n", lines.size() - kMaxLinesShown);
    return out;
}

std::string gain_text(const IterationRecord& it, int parent_iteration) {
    const std::string parent = parent_iteration == 0 ? "the seed" : fmt::format("iteration {}", parent_iteration);
    if (!it.gain) return fmt::format("over {} (the gain was not recorded: the run was stored by an older kevo)", parent);
    return fmt::format("{:+.1f}% over {}, both re-timed side by side (the gain had to exceed a spread of {:.1f}%)",
                       100 * *it.gain, parent, 100 * it.gain_spread.value_or(0));
}

class Distiller {
public:
    explicit Distiller(Store& store) : store_(store) {}

    Expected<void> add_run(const RunRecord& run, std::vector<KnowledgeNote>& out) {
        auto iterations = store_.load_iterations(run.run_id);
        if (!iterations) return iterations.error();
        std::map<int64_t, int> iteration_of;  // candidate id -> the iteration that evaluated it
        for (const auto& it : *iterations)
            if (it.candidate_id) iteration_of.emplace(*it.candidate_id, it.iteration);
        for (const auto& it : *iterations) {
            if (!it.accepted || it.iteration == 0 || !it.candidate_id) continue;
            auto candidate = store_.load_candidate(*it.candidate_id);
            if (!candidate) return candidate.error();
            if (!candidate->parent_id) continue;
            auto parent = store_.load_candidate(*candidate->parent_id);
            if (!parent) return parent.error();
            const auto p = iteration_of.find(parent->id);
            out.push_back(draft(run, it, *candidate, *parent, p == iteration_of.end() ? 0 : p->second));
        }
        return {};
    }

private:
    Store& store_;

    KnowledgeNote draft(const RunRecord& run, const IterationRecord& it, const CandidateRecord& kernel,
                        const CandidateRecord& parent, int parent_iteration) const {
        const Language run_language = language_of_run(run);
        const std::string language = run_language ? run_language->name : run.backend;
        const std::string comment = run_language ? run_language->directive_comment : "//";
        const LineChanges lines = changed_lines(parent.source, kernel.source);
        std::vector<std::string> directives_before, directives_after, removed, added;
        for (const auto& l : lines.removed) (is_directive(l, comment) ? directives_before : removed).push_back(l);
        for (const auto& l : lines.added) (is_directive(l, comment) ? directives_after : added).push_back(l);

        KnowledgeNote note;
        note.id = fmt::format("{}-{}-i{}", run.task, run.run_id, it.iteration);
        note.title = it.gain ? fmt::format("{}: what iteration {} changed ({:+.1f}%)", run.task, it.iteration, 100 * *it.gain)
                             : fmt::format("{}: what iteration {} changed", run.task, it.iteration);
        note.scope.tasks = {run.task};
        note.scope.languages = {language};
        if (!run.device.empty()) note.scope.devices = {run.device};
        note.source = fmt::format("kevo knowledge distil: {}, run {}, iteration {}", store_.path(), run.run_id, it.iteration);
        note.draft = true;
        std::string text = fmt::format("Accepted at iteration {} of run {} (proposer {}) on {}: {}.\n", it.iteration,
                                       run.run_id, run.proposer, run.device.empty() ? run.backend : run.device,
                                       gain_text(it, parent_iteration));
        text += "What changed:\n";
        const auto knobs = knob_changes(parent.defines, kernel.defines);
        if (!knobs.empty()) text += fmt::format("- knob values: {}\n", fmt::join(knobs, ", "));
        if (!directives_before.empty() || !directives_after.empty())
            text += "- directives:\n" + bullet_lines(directives_before, "-") + bullet_lines(directives_after, "+");
        if (!removed.empty() || !added.empty())
            text += fmt::format("- source: {} line{} added, {} removed\n", added.size(), added.size() == 1 ? "" : "s",
                                removed.size()) +
                    bullet_lines(removed, "-") + bullet_lines(added, "+");
        if (knobs.empty() && lines.removed.empty() && lines.added.empty())
            text += "- nothing but layout and comments\n";
        text += "\nTo keep it: say in a sentence why this was faster, and delete the line `draft = true`. To drop it: "
                "delete the file.";
        note.text = std::move(text);
        return note;
    }
};

}  // namespace

LineChanges changed_lines(const std::string& before, const std::string& after) {
    const std::vector<std::string> a = code_lines(before), b = code_lines(after);
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
    for (size_t i = a.size(); i-- > 0;)
        for (size_t j = b.size(); j-- > 0;)
            lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    LineChanges out;
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (a[i] == b[j]) ++i, ++j;
        else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.removed.push_back(a[i++]);
        else out.added.push_back(b[j++]);
    }
    for (; i < a.size(); ++i) out.removed.push_back(a[i]);
    for (; j < b.size(); ++j) out.added.push_back(b[j]);
    return out;
}

Expected<std::vector<KnowledgeNote>> distil_notes(Store& store, const std::string& run_id) {
    std::vector<RunRecord> runs;
    if (run_id.empty()) {
        auto all = store.list_runs();
        if (!all) return all.error();
        runs = std::move(*all);
        std::reverse(runs.begin(), runs.end());  // oldest first
    } else {
        auto run = store.load_run(run_id);
        if (!run) return run.error();
        runs.push_back(std::move(*run));
    }
    std::vector<KnowledgeNote> notes;
    Distiller distiller(store);
    for (const auto& run : runs)
        if (auto ok = distiller.add_run(run, notes); !ok) return ok.error();
    return notes;
}

}  // namespace kevo
