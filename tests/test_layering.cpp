// The folder layering of src/ (docs/architecture.md): every `#include "folder/..."` goes to the
// same floor or below, and vendor headers appear only under src/backends/ (so not in the vendor
// routines' interface, src/backend/vendor_routines). Read from the source tree, so a new upward
// include fails here rather than in a review.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Floor of each folder of src/; a folder may include its own floor and those below.
const std::map<std::string, int>& floors() {
    static const std::map<std::string, int> table = {
        {"core", 1},   {"backend", 2}, {"store", 2},  {"task", 3},  {"backends", 3},
        {"eval", 4},   {"pack", 4},    {"knowledge", 4}, {"search", 5}, {"report", 5}, {"study", 6},
        {"bench", 6},  {"cli", 7},
    };
    return table;
}

struct Include {
    std::string file;
    std::string target;
};

std::vector<Include> project_includes(const fs::path& src) {
    static const std::regex project(R"(^\s*#\s*include\s+"([a-z_]+)/)");
    std::vector<Include> found;
    for (const auto& entry : fs::recursive_directory_iterator(src)) {
        auto ext = entry.path().extension();
        if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
        std::ifstream in(entry.path());
        std::string line;
        std::smatch match;
        while (std::getline(in, line))
            if (std::regex_search(line, match, project))
                found.push_back({fs::relative(entry.path(), src).string(), match[1]});
    }
    return found;
}

std::string folder_of(const std::string& relative_file) {
    return relative_file.substr(0, relative_file.find('/'));
}

// "file -> folder" for every include that goes to a higher floor; an unknown folder counts too.
std::set<std::string> upward(const std::vector<Include>& includes) {
    std::set<std::string> found;
    for (const auto& inc : includes) {
        auto from = floors().find(folder_of(inc.file));
        auto to = floors().find(inc.target);
        if (from == floors().end() || to == floors().end() || to->second > from->second)
            found.insert(inc.file + " -> " + inc.target);
    }
    return found;
}

std::string listed(const std::set<std::string>& lines) {
    std::string text;
    for (const auto& line : lines) text += "\n  " + line;
    return text;
}

TEST(Layering, NoFolderIncludesAFolderAboveIt) {
    auto includes = project_includes(fs::path(KEVO_SOURCE_DIR) / "src");
    ASSERT_GT(includes.size(), 500u) << "the scan found too few includes to mean anything";
    auto found = upward(includes);
    EXPECT_TRUE(found.empty()) << "upward includes (or folders without a floor here):" << listed(found);
}

TEST(Layering, TheRuleReportsAnUpwardIncludeAndAnUnknownFolder) {
    auto found = upward({{"pack/weights_text.cpp", "report"},
                         {"report/eval_text.cpp", "core"},
                         {"widgets/w.cpp", "core"}});
    EXPECT_EQ(found, (std::set<std::string>{"pack/weights_text.cpp -> report", "widgets/w.cpp -> core"}));
}

TEST(Layering, VendorHeadersOnlyInBackends) {
    static const std::regex vendor(R"(^\s*#\s*include\s+[<"](cuda|cublas|cufft|nvrtc|CL/)[^>"]*[>"])");
    fs::path src = fs::path(KEVO_SOURCE_DIR) / "src";
    std::set<std::string> offenders, scanned;
    for (const auto& entry : fs::recursive_directory_iterator(src)) {
        if (!entry.is_regular_file()) continue;
        std::string rel = fs::relative(entry.path(), src).string();
        if (folder_of(rel) == "backends") continue;
        scanned.insert(rel);
        std::ifstream in(entry.path());
        std::string line;
        while (std::getline(in, line))
            if (std::regex_search(line, vendor)) offenders.insert(rel + ": " + line);
    }
    EXPECT_TRUE(offenders.empty()) << "vendor headers outside src/backends/:" << listed(offenders);
    // The vendor routines' interface (cuFFT, cuBLAS, cuBLASLt) is backend-neutral: it is scanned too.
    for (const char* file : {"backend/backend.hpp", "backend/vendor_routines.hpp", "backend/vendor_routines.cpp"})
        EXPECT_TRUE(scanned.count(file)) << file << " was not scanned";
}

}  // namespace
