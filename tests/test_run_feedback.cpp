// What the next prompt says about an answer that was not evaluated, through the real binary with
// the cmd proposer (a script that saves each prompt it gets): no code, edits that do not apply, a
// duplicate of the seed and a failed command each get their own words, so consecutive prompts
// differ in more than the iteration; the summary counts them. A command the shell cannot find
// interrupts the run after three failures in a row (exit 2).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "task/registry.hpp"

using kevo::test::has_device;
using kevo::test::run_kevo;
using kevo::test::slurp;

namespace {

std::string path(const std::string& name) { return kevo::test::temp_path("kevo_feedback", name); }

// The prompt's section about the last answer, or "" when it has none.
std::string unused_section(const std::string& prompt) {
    const size_t start = prompt.find("## Your last answer");
    if (start == std::string::npos) return {};
    return prompt.substr(start, prompt.find("\n## ", start + 1) - start);
}

TEST(RunFeedback, EachUnusedAnswerIsToldToTheNextPrompt) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string prompts = path("prompts"), seed = path("seed.cl"), script = path("proposer.sh");
    std::filesystem::create_directories(prompts);
    std::ofstream(seed) << kevo::task_file("heat2d", "seed.cl");
    std::ofstream(script) << "#!/bin/sh\n"
                             "cat > \"" + prompts + "/prompt-$KEVO_ITERATION.txt\"\n"
                             "case $KEVO_ITERATION in\n"
                             "1) echo 'I would tile it in local memory.' ;;\n"
                             "2) printf '<<<<<<< SEARCH\\nthis line is not in the kernel\\n=======\\nx\\n>>>>>>> REPLACE\\n' ;;\n"
                             "3) printf '```opencl\\n'; cat '" + seed + "'; printf '```\\n' ;;\n"
                             "4) echo 'model quota exceeded' >&2; exit 1 ;;\n"
                             "*) echo 'Still thinking.' ;;\n"
                             "esac\n";
    const std::string db = path("feedback.db");
    const auto r = run_kevo({"run", "heat2d", "--backend", "opencl", "--proposer", "cmd", "--command", "sh '" + script + "'",
                             "--iterations", "5", "--warmup", "1", "--repeat", "3", "--gate-rounds", "1", "--db", db,
                             "--out", path("out"), "--json"});
    ASSERT_EQ(r.exit_code, kevo::test::run_exit_status(r.json())) << r.err;
    std::vector<std::string> sections;
    for (int it = 1; it <= 5; ++it) sections.push_back(unused_section(slurp(prompts + "/prompt-" + std::to_string(it) + ".txt")));
    EXPECT_EQ(sections[0], "") << "the first proposal follows the seed, which was evaluated";
    EXPECT_NE(sections[1].find("(iteration 1) was not used"), std::string::npos) << sections[1];
    EXPECT_NE(sections[1].find("no usable code"), std::string::npos) << sections[1];
    EXPECT_NE(sections[1].find("no fenced code block"), std::string::npos) << sections[1];
    EXPECT_NE(sections[2].find("edits could not be applied"), std::string::npos) << sections[2];
    EXPECT_NE(sections[2].find("this line is not in the kernel"), std::string::npos) << sections[2];
    EXPECT_NE(sections[3].find("identical to the seed"), std::string::npos) << sections[3];
    EXPECT_NE(sections[4].find("the request failed"), std::string::npos) << sections[4];
    EXPECT_NE(sections[4].find("model quota exceeded"), std::string::npos) << sections[4];
    EXPECT_NE(sections[4].find("4 answers in a row"), std::string::npos) << sections[4];
    // Apart from the iteration line, consecutive prompts differ in that section.
    const std::regex iteration_line("This is iteration [0-9]+\\.\n");
    for (int it = 1; it < 5; ++it) {
        const std::string a = std::regex_replace(slurp(prompts + "/prompt-" + std::to_string(it) + ".txt"), iteration_line, "");
        const std::string b = std::regex_replace(slurp(prompts + "/prompt-" + std::to_string(it + 1) + ".txt"), iteration_line, "");
        EXPECT_NE(a, b) << "prompts " << it << " and " << it + 1 << " are the same but for the iteration";
        EXPECT_NE(sections[it - 1], sections[it]);
    }
    const auto counts = r.json()["proposals"];
    EXPECT_EQ(counts["evaluated"], 0) << counts.dump();
    EXPECT_EQ(counts["no_code"], 3) << "the failed command's iteration is not counted: a sixth one ran";
    EXPECT_EQ(counts["edit_failed"], 1);
    EXPECT_EQ(counts["duplicate"], 1);
    EXPECT_EQ(counts["failed"], 1);
}

TEST(RunFeedback, ACommandTheShellCannotFindStopsTheRun) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string db = path("missing.db");
    const auto r = run_kevo({"run", "heat2d", "--backend", "opencl", "--proposer", "cmd", "--command",
                             "kevo-no-such-proposer-program", "--iterations", "10", "--warmup", "1", "--repeat", "3",
                             "--db", db, "--out", path("out")});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("3 times in a row"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("status 127"), std::string::npos) << r.err;
    const auto all = run_kevo({"report", "--all", "--db", db, "--json"}).json();
    ASSERT_EQ(all["runs"].size(), 1u);
    EXPECT_EQ(all["runs"][0]["status"], "interrupted") << "resumable once the command is mended";
    EXPECT_EQ(all["runs"][0]["iterations_done"], 3) << all.dump(1);
}

}  // namespace
