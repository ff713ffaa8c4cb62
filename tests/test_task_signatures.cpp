// Every task's kernel signatures, CUDA and OpenCL, as derived from the task's one language-neutral
// signature, equal the ones recorded in tests/data/task_signatures.tsv (the hand-written strings of
// the task specs before each task stated its signature once), and every kernel of every task is
// recorded there.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include "task/registry.hpp"

namespace kevo {
namespace {

using Recorded = std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>>;

Recorded read_recorded() {
    Recorded out;
    std::ifstream in(std::string(KEVO_SOURCE_DIR) + "/tests/data/task_signatures.tsv");
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line.front() == '#') continue;
        std::istringstream fields(line);
        std::string task, kernel, cuda, opencl;
        std::getline(fields, task, '\t');
        std::getline(fields, kernel, '\t');
        std::getline(fields, cuda, '\t');
        std::getline(fields, opencl, '\t');
        out[{task, kernel}] = {cuda, opencl};
    }
    return out;
}

TEST(TaskSignatures, EqualTheRecordedHandWrittenOnes) {
    const Recorded recorded = read_recorded();
    ASSERT_GE(recorded.size(), 34u);
    size_t kernels = 0;
    for (const auto& name : task_names()) {
        auto task = make_task(name);
        ASSERT_TRUE(task) << name;
        for (const auto& k : (*task)->spec().kernels) {
            ++kernels;
            const auto it = recorded.find({name, k.name});
            ASSERT_NE(it, recorded.end()) << name << "/" << k.name << " is not recorded";
            EXPECT_EQ(signature_text(k, language_named("cuda")), it->second.first) << name << "/" << k.name;
            EXPECT_EQ(signature_text(k, language_named("opencl")), it->second.second) << name << "/" << k.name;
        }
    }
    EXPECT_EQ(kernels, recorded.size());
}

}  // namespace
}  // namespace kevo
