// `kevo knowledge list [TASK]`: the notes of a library (--knowledge), or those a run on TASK would
// put into its prompts, in the order and within the budget a run uses; `kevo knowledge distil`:
// draft notes from a store's accepted kernels, written as files for a person to keep or drop.
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/kernel_language.hpp"
#include "backend/registry.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "core/files.hpp"
#include "core/text_table.hpp"
#include "core/token_estimate.hpp"
#include "eval/evaluator_factory.hpp"
#include "knowledge/distil.hpp"
#include "knowledge/library.hpp"
#include "knowledge/select.hpp"
#include "store/store.hpp"
#include "task/registry.hpp"

namespace kevo::cli {

namespace {

namespace fs = std::filesystem;

struct ListOptions {
    std::string task, knowledge = std::string(kShippedKnowledge), language;
    DeviceOptions device;
    int tokens = kDefaultKnowledgeTokens;
    bool json = false;
};

struct DistilOptions {
    std::string db = "kevo.db", run_id, out = "knowledge-drafts";
    bool json = false;
};

std::string scope_text(const NoteScope& s) {
    std::vector<std::string> parts;
    const auto add = [&](const char* key, const std::vector<std::string>& v) {
        if (!v.empty()) parts.push_back(fmt::format("{} {}", key, fmt::join(v, "/")));
    };
    add("task", s.tasks);
    add("category", s.categories);
    add("regime", s.regimes);
    add("bound", s.bounds);
    add("language", s.languages);
    add("device", s.devices);
    return parts.empty() ? "any task" : fmt::format("{}", fmt::join(parts, "; "));
}

nlohmann::json note_json(const KnowledgeNote& n) {
    return {{"id", n.id},
            {"title", n.title},
            {"path", n.path},
            {"source", n.source},
            {"scope",
             {{"tasks", n.scope.tasks}, {"categories", n.scope.categories}, {"regimes", n.scope.regimes},
              {"bounds", n.scope.bounds}, {"languages", n.scope.languages}, {"devices", n.scope.devices}}}};
}

// The device a run on this backend would use, as kevo run finds it (its errors included).
Expected<DeviceInfo> target_device(const DeviceOptions& o) {
    auto name = resolve_backend_name(o.backend);
    if (!name) return name.error();
    return make_evaluator(EvaluatorOptions{.backend = *name, .device = o.device})->device();
}

int list_library(const KnowledgeLibrary& library, bool json) {
    nlohmann::json doc = {{"knowledge", library.setting}, {"notes", nlohmann::json::array()}, {"drafts", library.drafts}};
    TextTable table({{"note"}, {"tokens", TextTable::Align::right}, {"applies to"}, {"title"}});
    for (const auto& n : library.notes) {
        doc["notes"].push_back(note_json(n));
        table.add_row({n.id, std::to_string(estimated_tokens(note_prompt_text(n))), scope_text(n.scope), n.title});
    }
    if (json) print_json(doc);
    else
        say(false, fmt::format("{} note{} in {}{}\n{}", library.notes.size(), library.notes.size() == 1 ? "" : "s",
                               library.setting,
                               library.drafts.empty() ? "" : fmt::format(" ({} drafts left out: {})", library.drafts.size(),
                                                                         fmt::join(library.drafts, ", ")),
                               library.notes.empty() ? "" : table.render()));
    return kExitOk;
}

int list_for_task(const KnowledgeLibrary& library, const ListOptions& o) {
    auto task = make_task(o.task);
    if (!task) return fail(task.error().message);
    auto device = target_device(o.device);
    if (!device) return fail(device.error().message);
    auto language = backend_language(o.language, device->backend);
    if (!language) return fail("--language: " + language.error().message);
    const NoteTarget target = note_target((*task)->spec(), (*language)->name, *device);
    const auto choices = choose_notes(library.notes, target, static_cast<size_t>(std::max(0, o.tokens)));
    nlohmann::json doc = {{"task", o.task},          {"language", (*language)->name}, {"device", device->name},
                          {"knowledge", library.setting}, {"budget_tokens", o.tokens},      {"notes", nlohmann::json::array()}};
    TextTable table({{"note"}, {"tokens", TextTable::Align::right}, {"in the prompt"}, {"applies to"}});
    size_t shown = 0;
    for (const auto& c : choices) {
        nlohmann::json j = note_json(*c.note);
        j["tokens"] = c.tokens;
        j["shown"] = c.shown;
        doc["notes"].push_back(std::move(j));
        shown += c.shown;
        table.add_row({c.note->id, std::to_string(c.tokens), c.shown ? "yes" : "no: over the budget", scope_text(c.note->scope)});
    }
    if (o.json) {
        print_json(doc);
        return kExitOk;
    }
    say(false, fmt::format("{} ({}) on {}: {} of {} note{} in {} apply; {} fit the budget of {} tokens{}", o.task,
                           (*language)->name, device->name, choices.size(), library.notes.size(),
                           library.notes.size() == 1 ? "" : "s", library.setting, shown, o.tokens,
                           choices.empty() ? "" : "\n" + table.render()));
    return kExitOk;
}

int run_list(const ListOptions& o) {
    auto library = load_knowledge(o.knowledge);
    if (!library) return fail(library.error().message);
    return o.task.empty() ? list_library(*library, o.json) : list_for_task(*library, o);
}

int run_distil(const DistilOptions& o) {
    auto store = Store::open(o.db, Store::Access::read_only);
    if (!store) return fail(store.error().message);
    auto notes = distil_notes(**store, o.run_id);
    if (!notes) return fail(notes.error().message);
    std::error_code ec;
    fs::create_directories(o.out, ec);
    if (ec) return fail(fmt::format("--out {}: cannot create the folder: {}", o.out, ec.message()));
    nlohmann::json doc = {{"db", o.db}, {"out", o.out}, {"written", nlohmann::json::array()}, {"kept", nlohmann::json::array()}};
    std::string text;
    for (const auto& n : *notes) {
        const fs::path file = fs::path(o.out) / (n.id + ".md");
        // A draft already there may have been edited by a person: it is never overwritten.
        if (fs::exists(file, ec)) {
            doc["kept"].push_back(file.string());
            text += fmt::format("kept {} (already there)\n", file.string());
            continue;
        }
        if (auto w = write_file_atomic(file, note_file_text(n)); !w) return fail(w.error().message);
        doc["written"].push_back(file.string());
        text += fmt::format("wrote {}: {}\n", file.string(), n.title);
    }
    if (o.json) print_json(doc);
    else
        say(false, notes->empty() ? fmt::format("no accepted kernel in {}{}: nothing to draft", o.db,
                                                o.run_id.empty() ? "" : " run " + o.run_id)
                                  : text + fmt::format("{} draft{}: edit each to keep it (delete `draft = true`), or "
                                                       "delete it; `kevo run --knowledge {}` then reads the kept ones",
                                                       notes->size(), notes->size() == 1 ? "" : "s", o.out));
    return kExitOk;
}

}  // namespace

void setup_knowledge(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("knowledge", "the notes a proposer's prompt draws from (docs/knowledge.md)");
    cmd->require_subcommand(1);

    auto* list = cmd->add_subcommand("list", "the notes of a library, or with TASK those a run's prompt would carry");
    auto lo = std::make_shared<ListOptions>();
    list->add_option("TASK", lo->task, "the task a run would search (see `kevo tasks`)");
    list->add_option("--knowledge", lo->knowledge, "shipped, none, or a folder of note files (*.md)")->capture_default_str();
    list->add_option("--knowledge-tokens", lo->tokens, "the notes' budget in one prompt, estimated tokens")
        ->capture_default_str()
        ->check(whole_range(0, 1000000));
    list->add_option("--language", lo->language, "the candidates' language: " + language_choices() +
                                                     " (default: the backend's own)");
    add_device_options(*list, lo->device);
    add_json_option(*list, lo->json);
    list->callback([&exit_code, lo] { exit_code = run_list(*lo); });

    auto* distil = cmd->add_subcommand("distil", "draft notes from a store: for each accepted kernel, what changed "
                                                 "from its parent and the gain measured");
    auto d = std::make_shared<DistilOptions>();
    distil->add_option("--db", d->db, "SQLite store")->capture_default_str();
    distil->add_option("--run", d->run_id, "only this run (default: every run in the store)");
    distil->add_option("--out", d->out, "the folder the drafts are written to")->capture_default_str();
    add_json_option(*distil, d->json);
    distil->callback([&exit_code, d] { exit_code = run_distil(*d); });
}

}  // namespace kevo::cli
