// See select.hpp.
#include "knowledge/select.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/token_estimate.hpp"

namespace kevo {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

bool listed(const std::vector<std::string>& values, const std::string& value) {
    return values.empty() || std::find(values.begin(), values.end(), value) != values.end();
}

bool device_matches(const std::string& word, const NoteTarget& t) {
    const std::string w = lower(word);
    if (w == "gpu") return !t.device_is_cpu;
    if (w == "cpu") return t.device_is_cpu;
    for (const std::string* field : {&t.device_name, &t.device_vendor, &t.device_arch})
        if (!field->empty() && lower(*field).find(w) != std::string::npos) return true;
    return false;
}

// A note about this task outranks one about its category or regime, which outranks one about its
// bound, language or device alone; a note with no scope at all comes last.
int specificity(const NoteScope& s) {
    return 16 * !s.tasks.empty() + 8 * !s.categories.empty() + 4 * !s.regimes.empty() + 2 * !s.devices.empty() +
           !s.bounds.empty() + !s.languages.empty();
}

}  // namespace

NoteTarget note_target(const TaskSpec& spec, const std::string& language, const DeviceInfo& device) {
    return {spec.name,  spec.category, spec.regime, spec.bound == Bound::compute ? "compute" : "bandwidth", language,
            device.name, device.vendor, device.arch, device.is_cpu};
}

bool note_applies(const NoteScope& s, const NoteTarget& t) {
    const bool device = s.devices.empty() ||
                        std::any_of(s.devices.begin(), s.devices.end(), [&](const auto& w) { return device_matches(w, t); });
    return listed(s.tasks, t.task) && listed(s.categories, t.category) && listed(s.regimes, t.regime) &&
           listed(s.bounds, t.bound) && listed(s.languages, t.language) && device;
}

std::string note_prompt_text(const KnowledgeNote& note) { return fmt::format("### {}\n{}\n", note.title, note.text); }

std::vector<NoteChoice> choose_notes(const std::vector<KnowledgeNote>& notes, const NoteTarget& target, size_t token_budget) {
    std::vector<NoteChoice> choices;
    for (const auto& n : notes)
        if (note_applies(n.scope, target)) choices.push_back({&n, estimated_tokens(note_prompt_text(n)), false});
    std::stable_sort(choices.begin(), choices.end(), [](const NoteChoice& a, const NoteChoice& b) {
        const int sa = specificity(a.note->scope), sb = specificity(b.note->scope);
        return sa != sb ? sa > sb : a.note->id < b.note->id;
    });
    size_t left = token_budget;
    for (auto& c : choices) {
        c.shown = c.tokens <= left;
        if (c.shown) left -= c.tokens;
    }
    return choices;
}

std::vector<KnowledgeNote> select_notes(const std::vector<KnowledgeNote>& notes, const NoteTarget& target,
                                        size_t token_budget) {
    std::vector<KnowledgeNote> out;
    for (const auto& c : choose_notes(notes, target, token_budget))
        if (c.shown) out.push_back(*c.note);
    return out;
}

}  // namespace kevo
