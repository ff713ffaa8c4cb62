// The knowledge base (issue 28 item 4): note files and their checks, the shipped library, which notes
// a prompt carries (scope, order, token budget; drafts never), the prompt's notes section and its
// place in the prompt's cutting order, the notes and promotion gain stored with an iteration, and
// `kevo knowledge distil` on a real store written by the real search loop (scripted evaluations).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "kevo_process.hpp"
#include "knowledge/distil.hpp"
#include "knowledge/library.hpp"
#include "knowledge/select.hpp"
#include "scripted_run.hpp"
#include "search/prompt.hpp"
#include "task/registry.hpp"
#include "temp_dir.hpp"

namespace kevo {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string note_text(const std::string& title, const std::string& scope, const std::string& body,
                      const std::string& more = "") {
    return "+++\ntitle = \"" + title + "\"\n" + scope + more + "+++\n" + body + "\n";
}

TEST(KnowledgeNotes, ReadTheirHeaderAndText) {
    auto n = parse_note(note_text("Wide loads", "bounds = [\"bandwidth\"]\ndevices = [\"gpu\"]\n", "Use float4.",
                                  "source = \"docs/best-kernels.md\"\n"),
                        "wide", "x/wide.md");
    ASSERT_TRUE(n) << n.error().message;
    EXPECT_EQ(n->id, "wide");
    EXPECT_EQ(n->title, "Wide loads");
    EXPECT_EQ(n->text, "Use float4.");
    EXPECT_EQ(n->scope.bounds, std::vector<std::string>{"bandwidth"});
    EXPECT_EQ(n->scope.devices, std::vector<std::string>{"gpu"});
    EXPECT_EQ(n->source, "docs/best-kernels.md");
    EXPECT_FALSE(n->draft);
    // What note_file_text writes, parse_note reads back (quotes and backslashes escaped).
    KnowledgeNote odd = *n;
    odd.title = "a \"quoted\" \\ title";
    odd.scope.tasks = {"saxpy", "heat2d"};
    odd.draft = true;
    auto back = parse_note(note_file_text(odd), "wide", "x/wide.md");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->title, odd.title);
    EXPECT_EQ(back->scope.tasks, odd.scope.tasks);
    EXPECT_TRUE(back->draft);
    EXPECT_EQ(back->text, odd.text);
}

TEST(KnowledgeNotes, BadFilesNameTheFileLineAndWhatIsAccepted) {
    const auto error = [](const std::string& text) {
        auto n = parse_note(text, "n", "notes/n.md");
        EXPECT_FALSE(n) << text;
        return n ? std::string() : n.error().message;
    };
    EXPECT_NE(error("title = \"x\"\n").find("notes/n.md:1: a note starts with a line `+++`"), std::string::npos);
    EXPECT_NE(error("+++\ntitle = \"x\"\nno end").find("no closing `+++`"), std::string::npos);
    const std::string unknown = error(note_text("x", "task = [\"saxpy\"]\n", "text"));
    EXPECT_NE(unknown.find("notes/n.md:3: task is not a key"), std::string::npos) << unknown;
    EXPECT_NE(unknown.find("tasks, categories, regimes, bounds, languages, devices"), std::string::npos) << unknown;
    EXPECT_NE(error(note_text("x", "bounds = [\"memory\"]\n", "t")).find("a bound is \"bandwidth\" or \"compute\""),
              std::string::npos);
    EXPECT_NE(error(note_text("x", "tasks = \"saxpy\"\n", "t")).find("must be a list of strings"), std::string::npos);
    EXPECT_NE(error("+++\nsource = \"s\"\n+++\ntext\n").find("has no title"), std::string::npos);
    EXPECT_NE(error(note_text("x", "", "")).find("no text after its header"), std::string::npos);
    const std::string toml = error("+++\ntitle = \n+++\nt\n");
    EXPECT_NE(toml.find("notes/n.md:2:"), std::string::npos) << "the file's line: " << toml;
    EXPECT_NE(toml.find("not valid TOML"), std::string::npos) << toml;
}

TEST(KnowledgeLibrary, ShippedNotesAllReadAndSayWhereTheyComeFrom) {
    auto shipped = load_knowledge("shipped");
    ASSERT_TRUE(shipped) << shipped.error().message;
    std::set<std::string> categories, regimes;
    for (const auto& name : task_names()) {
        auto task = make_task(name);
        ASSERT_TRUE(task) << name;
        categories.insert((*task)->spec().category);
        regimes.insert((*task)->spec().regime);
    }
    EXPECT_GE(shipped->notes.size(), 12u);
    EXPECT_TRUE(shipped->drafts.empty());
    for (const auto& n : shipped->notes) {
        EXPECT_FALSE(n.source.empty()) << n.id;
        EXPECT_EQ(n.path, "shipped:" + n.id + ".md");
        EXPECT_LE(estimated_tokens(note_prompt_text(n)), 250u) << n.id << ": a note is short";
        for (const auto& t : n.scope.tasks) EXPECT_TRUE(make_task(t).has_value()) << n.id << " names task " << t;
        for (const auto& c : n.scope.categories) EXPECT_TRUE(categories.count(c)) << n.id << " names category " << c;
        for (const auto& r : n.scope.regimes) EXPECT_TRUE(regimes.count(r)) << n.id << " names regime " << r;
        for (const auto& l : n.scope.languages) EXPECT_TRUE(language_named(l)) << n.id << " names language " << l;
    }
    auto none = load_knowledge("none");
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->notes.empty());
}

TEST(KnowledgeLibrary, AFolderReadsItsNotesAndLeavesDraftsOut) {
    TempDir dir("knowledge");
    write(dir.path() / "a.md", note_text("A", "", "a"));
    write(dir.path() / "b.md", note_text("B", "", "b", "draft = true\n"));
    write(dir.path() / "readme.txt", "not a note");
    fs::create_directories(dir.path() / "inner");
    write(dir.path() / "inner" / "c.md", "not read: a folder inside");
    auto lib = load_knowledge(dir.path().string());
    ASSERT_TRUE(lib) << lib.error().message;
    ASSERT_EQ(lib->notes.size(), 1u);
    EXPECT_EQ(lib->notes[0].id, "a");
    EXPECT_EQ(lib->drafts, std::vector<std::string>{"b"});

    write(dir.path() / "bad.md", "+++\ntitel = \"x\"\n+++\nt\n");
    auto bad = load_knowledge(dir.path().string());
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find((dir.path() / "bad.md").string() + ":2: titel is not a key"), std::string::npos)
        << bad.error().message;
    auto missing = load_knowledge(dir.file("nowhere"));
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("no such folder"), std::string::npos);
    EXPECT_NE(missing.error().message.find("\"shipped\" or \"none\""), std::string::npos);
    auto file = load_knowledge((dir.path() / "a.md").string());
    ASSERT_FALSE(file);
    EXPECT_NE(file.error().message.find("not a folder"), std::string::npos);
}

KnowledgeNote scoped(const std::string& id, NoteScope scope, size_t chars = 40) {
    KnowledgeNote n;
    n.id = id;
    n.title = id;
    n.text = std::string(chars, 'x');
    n.scope = std::move(scope);
    return n;
}

NoteTarget saxpy_on_gpu() {
    NoteTarget t;
    t.task = "saxpy";
    t.category = "smoke";
    t.regime = "R0 smoke";
    t.bound = "bandwidth";
    t.language = "cuda";
    t.device_name = "NVIDIA H200";
    t.device_vendor = "NVIDIA Corporation";
    t.device_arch = "sm_90";
    return t;
}

TEST(KnowledgeSelection, ScopesMatchTaskLanguageAndDevice) {
    const NoteTarget t = saxpy_on_gpu();
    EXPECT_TRUE(note_applies({}, t));
    EXPECT_TRUE(note_applies({.tasks = {"heat2d", "saxpy"}}, t));
    EXPECT_FALSE(note_applies({.tasks = {"heat2d"}}, t));
    EXPECT_TRUE(note_applies({.bounds = {"bandwidth"}, .languages = {"cuda"}}, t));
    EXPECT_FALSE(note_applies({.bounds = {"bandwidth"}, .languages = {"opencl"}}, t));
    EXPECT_FALSE(note_applies({.bounds = {"compute"}}, t));
    EXPECT_TRUE(note_applies({.devices = {"gpu"}}, t));
    EXPECT_FALSE(note_applies({.devices = {"cpu"}}, t));
    EXPECT_TRUE(note_applies({.devices = {"h200"}}, t)) << "a word of the name, case ignored";
    EXPECT_TRUE(note_applies({.devices = {"SM_90"}}, t)) << "the architecture";
    EXPECT_FALSE(note_applies({.devices = {"h100", "cpu"}}, t));
    EXPECT_FALSE(note_applies({.categories = {"stencil"}}, t));
    EXPECT_FALSE(note_applies({.regimes = {"R1 stencil"}}, t));
}

TEST(KnowledgeSelection, MostSpecificFirstAndWholeNotesWithinTheBudget) {
    const std::vector<KnowledgeNote> notes = {
        scoped("general", {}),
        scoped("bound", {.bounds = {"bandwidth"}}),
        scoped("task", {.tasks = {"saxpy"}}),
        scoped("category", {.categories = {"smoke"}}),
        scoped("other-task", {.tasks = {"nbody"}}),
        scoped("big-device", {.devices = {"gpu"}}, 4000),
    };
    const auto all = choose_notes(notes, saxpy_on_gpu(), 100000);
    std::vector<std::string> order;
    for (const auto& c : all) order.push_back(c.note->id);
    EXPECT_EQ(order, (std::vector<std::string>{"task", "category", "big-device", "bound", "general"}));
    // A budget the large note does not fit: it is left out whole, and the smaller ones after it still fit.
    const size_t small = estimated_tokens(note_prompt_text(notes[0]));
    const auto some = select_notes(notes, saxpy_on_gpu(), 4 * small);
    std::vector<std::string> shown;
    for (const auto& n : some) shown.push_back(n.id);
    EXPECT_EQ(shown, (std::vector<std::string>{"task", "category", "bound", "general"}));
    EXPECT_TRUE(select_notes(notes, saxpy_on_gpu(), 0).empty());
}

ProposalContext context_with_notes(std::vector<KnowledgeNote> notes) {
    static const auto task = make_task("saxpy");
    ProposalContext c;
    c.spec = &(*task)->spec();
    c.language = language_named("opencl");
    c.brief = std::string(task_file("saxpy", "brief.md"));
    c.profile = "small";
    c.iteration = 2;
    c.incumbent.source = std::string(task_file("saxpy", "seed.cl"));
    c.knowledge = std::move(notes);
    return c;
}

TEST(KnowledgePrompt, CarriesTheNotesAndSaysWhichItKept) {
    const auto c = context_with_notes({scoped("first", {}), scoped("second", {})});
    const BuiltPrompt p = compose_prompt(c);
    EXPECT_NE(p.text.find("## Notes from the knowledge base"), std::string::npos);
    EXPECT_NE(p.text.find("### first\n"), std::string::npos);
    EXPECT_NE(p.text.find("### second\n"), std::string::npos);
    EXPECT_LT(p.text.find("## Notes from the knowledge base"), p.text.find("## Incumbent"));
    EXPECT_EQ(p.notes, (std::vector<std::string>{"first", "second"}));
    EXPECT_EQ(compose_prompt(context_with_notes({})).text.find("knowledge base"), std::string::npos);
}

TEST(KnowledgePrompt, NotesAreCutAfterTheHistoryAndBeforeTheSources) {
    ProposalContext c = context_with_notes({scoped("first", {}, 2000), scoped("second", {}, 2000)});
    for (int i = 1; i <= 3; ++i) c.history.push_back(Attempt{i, c.incumbent.source, {}, {}});
    ProposalContext first_only = c;
    first_only.history.clear();
    first_only.knowledge.pop_back();
    // Room for the prompt without history and with the first note (and the line saying one was cut):
    // the history goes, then the second note, and the sources stay whole.
    PromptLimits limits;
    limits.max_tokens = static_cast<int>((compose_prompt(first_only).text.size() + 80) / kCharsPerToken);
    const BuiltPrompt p = compose_prompt(c, limits);
    EXPECT_EQ(p.notes, std::vector<std::string>{"first"});
    EXPECT_NE(p.text.find("[1 more left out to keep the prompt under its bound]"), std::string::npos);
    EXPECT_EQ(p.text.find("## Recent history"), std::string::npos);
    EXPECT_NE(p.text.find(c.incumbent.source), std::string::npos) << "the incumbent is quoted whole";
}

// A scripted run on saxpy whose replayed candidates are each faster than the last (so each is
// accepted against its parent), one with a knob changed, one with a line of code changed.
struct DistilledRun {
    TempDir dir{"distil"};
    std::string db = dir.file("runs.db");
    std::string run_id;
};

void make_accepted_run(DistilledRun& r) {
    const fs::path replay = r.dir.path() / "replay";
    fs::create_directories(replay);
    const std::string seed(task_file("saxpy", "seed.cl"));
    write(replay / "01.cl", test::scripted(seed, "speed=2"));
    std::string second = test::scripted(seed, "speed=4");
    second.replace(second.find("y[i] ="), 6, "y[i] = 0.0f + ");
    write(replay / "02.cl", second);
    test::ScriptedEvaluator evaluator;
    const auto options = test::scripted_run_options(
        "saxpy", {{"proposer", "replay"}, {"replay", replay.string()}, {"iterations", 2}, {"seed", 1},
                  {"out", r.dir.file("out")}, {"knowledge", "none"}});
    auto summary = test::scripted_run(evaluator, r.db, options);
    ASSERT_TRUE(summary) << summary.error().message;
    r.run_id = summary->run_id;
}

TEST(KnowledgeDistil, DraftsANoteForEachAcceptedKernelWithTheGainMeasuredSideBySide) {
    DistilledRun r;
    ASSERT_NO_FATAL_FAILURE(make_accepted_run(r));
    auto store = Store::open(r.db);
    ASSERT_TRUE(store);
    auto iterations = (*store)->load_iterations(r.run_id);
    ASSERT_TRUE(iterations);
    ASSERT_EQ(iterations->size(), 3u);
    for (int i : {1, 2}) {
        const auto& it = (*iterations)[static_cast<size_t>(i)];
        ASSERT_TRUE(it.accepted) << it.note;
        ASSERT_TRUE(it.gain.has_value()) << "the promotion's gain is stored";
        EXPECT_NEAR(*it.gain, 1.0, 0.05) << "twice the speed of its parent";
        EXPECT_GT(*it.gain, *it.gain_spread);
    }
    auto notes = distil_notes(**store, "");
    ASSERT_TRUE(notes) << notes.error().message;
    ASSERT_EQ(notes->size(), 2u);
    const KnowledgeNote& second = (*notes)[1];
    EXPECT_TRUE(second.draft);
    EXPECT_EQ(second.id, "saxpy-" + r.run_id + "-i2");
    EXPECT_EQ(second.scope.tasks, std::vector<std::string>{"saxpy"});
    EXPECT_EQ(second.scope.languages, std::vector<std::string>{"opencl"});
    EXPECT_NE(second.text.find("over iteration 1, both re-timed side by side"), std::string::npos) << second.text;
    EXPECT_NE(second.text.find("+100.0%"), std::string::npos) << second.text;
    EXPECT_NE(second.text.find("+ if (i < n) y[i] = 0.0f +"), std::string::npos) << second.text;
    EXPECT_NE(second.text.find("- if (i < n) y[i] = a * x[i]"), std::string::npos) << second.text;
    EXPECT_NE((*notes)[0].text.find("over the seed"), std::string::npos) << (*notes)[0].text;
    // A run that is not there is named.
    auto missing = distil_notes(**store, "r-nope");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("r-nope"), std::string::npos);
}

TEST(KnowledgeDistil, ChangedLinesAreTheDifferenceOfWholeLines) {
    const LineChanges c = changed_lines("a\n  b\n\nc\nd\n", "a\nb\nx\nd\ny\n");
    EXPECT_EQ(c.removed, std::vector<std::string>{"c"});
    EXPECT_EQ(c.added, (std::vector<std::string>{"x", "y"}));
    EXPECT_TRUE(changed_lines("same\n", "  same  \n\n").added.empty());
}

TEST(KnowledgeCli, DistilWritesDraftsThatRunsLeaveOutUntilKept) {
    DistilledRun r;
    ASSERT_NO_FATAL_FAILURE(make_accepted_run(r));
    const std::string out = r.dir.file("drafts");
    const auto first = test::run_kevo({"knowledge", "distil", "--db", r.db, "--out", out});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_NE(first.out.find("2 drafts"), std::string::npos) << first.out;
    const std::string file = out + "/saxpy-" + r.run_id + "-i2.md";
    ASSERT_TRUE(fs::exists(file));
    // A second distil keeps what a person may have edited.
    write(file, test::slurp(file) + "\nedited by a person");
    const auto again = test::run_kevo({"knowledge", "distil", "--db", r.db, "--out", out, "--json"});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(nlohmann::json::parse(again.out)["kept"].size(), 2u);
    EXPECT_NE(test::slurp(file).find("edited by a person"), std::string::npos);

    const auto drafts = test::run_kevo({"knowledge", "list", "--knowledge", out, "--json"});
    ASSERT_EQ(drafts.exit_code, 0) << drafts.err;
    EXPECT_TRUE(nlohmann::json::parse(drafts.out)["notes"].empty());
    EXPECT_EQ(nlohmann::json::parse(drafts.out)["drafts"].size(), 2u);
    // Kept: the draft line deleted, the note is listed for saxpy on OpenCL, and for no other task.
    std::string kept = test::slurp(file);
    kept.erase(kept.find("draft = true\n"), 13);
    write(file, kept);
    const auto listed = test::run_kevo({"knowledge", "list", "saxpy", "--knowledge", out, "--backend", "opencl", "--json"});
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    const auto doc = nlohmann::json::parse(listed.out);
    ASSERT_EQ(doc["notes"].size(), 0u) << "its device scope is the scripted device, not this one: " << doc.dump(1);
    const auto store_empty = test::run_kevo({"knowledge", "distil", "--db", r.dir.file("none.db")});
    EXPECT_EQ(store_empty.exit_code, 2) << "a store that is not there is an error";
}

TEST(KnowledgeCli, ListShowsTheSelectionAndRefusesBadInput) {
    const auto all = test::run_kevo({"knowledge", "list"});
    ASSERT_EQ(all.exit_code, 0) << all.err;
    EXPECT_NE(all.out.find("notes in shipped"), std::string::npos) << all.out;
    EXPECT_NE(all.out.find("stencil-registers"), std::string::npos) << all.out;
    const auto heat = test::run_kevo({"knowledge", "list", "heat2d", "--backend", "opencl", "--json"});
    ASSERT_EQ(heat.exit_code, 0) << heat.err;
    const auto doc = nlohmann::json::parse(heat.out);
    EXPECT_EQ(doc["language"], "opencl");
    std::vector<std::string> ids;
    for (const auto& n : doc["notes"]) ids.push_back(n["id"]);
    // On PoCL (a CPU): the OpenCL notes and the CPU one; not the GPU stencil note.
    EXPECT_NE(std::find(ids.begin(), ids.end(), "pocl-cpu-vectorise"), ids.end()) << heat.out;
    EXPECT_EQ(std::find(ids.begin(), ids.end(), "stencil-registers"), ids.end()) << heat.out;
    EXPECT_EQ(std::find(ids.begin(), ids.end(), "triton-basics"), ids.end()) << heat.out;

    const auto missing = test::run_kevo({"knowledge", "list", "--knowledge", "/nonexistent/notes"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("/nonexistent/notes: no such folder"), std::string::npos) << missing.err;
    const auto task = test::run_kevo({"knowledge", "list", "saxpi"});
    EXPECT_EQ(task.exit_code, 2);
    EXPECT_NE(task.err.find("saxpi"), std::string::npos) << task.err;
    const auto run = test::run_kevo({"run", "saxpy", "--proposer", "cmd", "--command", "cat", "--knowledge",
                                     "/nonexistent/notes", "--iterations", "1", "--db", "/tmp/kevo-knowledge-x.db"});
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find("/nonexistent/notes: no such folder"), std::string::npos) << run.err;
    const auto tune = test::run_scripted_kevo({"run", "saxpy", "--knowledge", "none", "--iterations", "0", "--profile", "small",
                                      "--backend", "opencl", "--db", "/tmp/kevo-knowledge-t.db", "--out", "/tmp/kevo-knowledge-out"});
    EXPECT_NE(tune.out.find("--knowledge shapes the prompt, which --proposer tune does not read"), std::string::npos)
        << tune.out << tune.err;
}

}  // namespace
}  // namespace kevo
