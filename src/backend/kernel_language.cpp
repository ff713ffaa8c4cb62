// The registry of kernel languages (see kernel_language.hpp). Entries are filled at static
// initialisation by the backends' descriptor files and never removed, so handles stay valid.
#include "backend/kernel_language.hpp"

#include <algorithm>
#include <deque>

#include <fmt/format.h>

namespace kevo {
namespace {

// A deque: registering one more language does not move the ones handed out.
std::deque<KernelLanguage>& table() {
    static std::deque<KernelLanguage> languages;
    return languages;
}

}  // namespace

bool register_language(KernelLanguage language) {
    for (const auto& l : table()) {
        assert(l.name != language.name && "two kernel languages of one name");
        assert(l.suffix != language.suffix && "two kernel languages of one suffix");
        (void)l;
    }
    assert(language.render_signature && "a kernel language must render signatures");
    table().push_back(std::move(language));
    return true;
}

std::vector<Language> languages() {
    std::vector<Language> out;
    for (const auto& l : table()) out.emplace_back(&l);
    std::sort(out.begin(), out.end(), [](Language a, Language b) { return a->name < b->name; });
    return out;
}

std::vector<std::string> language_names() {
    std::vector<std::string> names;
    for (const Language l : languages()) names.push_back(l->name);
    return names;
}

Language language_named(std::string_view name) {
    for (const auto& l : table())
        if (l.name == name) return Language(&l);
    return {};
}

Language language_for_suffix(std::string_view suffix) {
    for (const auto& l : table())
        if (l.suffix == suffix) return Language(&l);
    return {};
}

Language default_language_of(std::string_view backend) {
    for (const auto& l : table())
        if (l.backend == backend && l.backend_default) return Language(&l);
    return {};
}

Expected<Language> backend_language(std::string_view name, std::string_view backend) {
    if (name.empty()) {
        const Language language = default_language_of(backend);
        if (!language) return make_error(fmt::format("backend '{}' has no kernel language", backend));
        return language;
    }
    const Language language = language_named(name);
    std::string of_backend;
    for (const Language l : languages())
        if (l->backend == backend) of_backend += (of_backend.empty() ? "" : ", ") + l->name;
    if (!language)
        return make_error(fmt::format("unknown kernel language '{}' (the {} backend compiles: {})", name, backend, of_backend));
    if (language->backend != backend)
        return make_error(fmt::format("{} is compiled by the {} backend, not {} (which compiles: {})", language->display_name,
                                      language->backend, backend, of_backend));
    return language;
}

}  // namespace kevo
