// The `replay` proposer: candidate files of a directory in name order; see replay.hpp.
#include "search/proposers/replay.hpp"
#include "search/proposers/registry.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/files.hpp"
#include "search/proposers/common.hpp"

namespace kevo {
namespace {

namespace fs = std::filesystem;

class ReplayProposer final : public Proposer {
public:
    ReplayProposer(fs::path dir, std::vector<fs::path> files) : dir_(std::move(dir)), files_(std::move(files)) {}

    std::string name() const override { return "replay"; }

    Proposal propose(const ProposalContext& context) override {
        // Files of another registered language are skipped; answers (.md, .txt, ...) are parsed.
        std::vector<const fs::path*> usable;
        std::set<std::string> skipped;
        for (const auto& f : files_) {
            const std::string ext = f.extension().string();
            const Language of_file = ext.size() > 1 ? language_for_suffix(ext.substr(1)) : Language();
            if (of_file && of_file != context.language) skipped.insert(ext);
            else usable.push_back(&f);
        }

        // The iteration number keeps a resumed run in step with the files it already replayed.
        const size_t index = std::max(next_, context.iteration > 0 ? static_cast<size_t>(context.iteration - 1) : 0);
        Proposal proposal;
        if (index >= usable.size()) {
            proposal.status = Proposal::Status::exhausted;
            proposal.note = fmt::format("replayed all {} file{} of {}", usable.size(), usable.size() == 1 ? "" : "s",
                                        dir_.string());
            if (usable.size() < files_.size())
                proposal.note += fmt::format(" ({} {} file{} skipped)", files_.size() - usable.size(),
                                             fmt::join(skipped, "/"), files_.size() - usable.size() == 1 ? "" : "s");
            return proposal;
        }
        next_ = index + 1;
        const fs::path& file = *usable[index];
        auto text = read_text_file(file);
        if (!text) {
            proposal.status = Proposal::Status::failed;
            proposal.failure = Proposal::Failure::transient;  // the next file may read
            proposal.note = fmt::format("replay: {}", text.error().message);
            return proposal;
        }
        const std::string ext = file.extension().string();
        proposal.note = "replay " + file.filename().string();
        if (ext == std::string(".") + language_suffix(context.language)) {
            proposal.status = Proposal::Status::ok;
            proposal.source = *text;
            proposal.answer = std::move(*text);
        } else {
            fill_from_answer(proposal, std::move(*text), context);
        }
        return proposal;
    }

private:
    fs::path dir_;
    std::vector<fs::path> files_;
    size_t next_ = 0;
};

}  // namespace

Expected<std::unique_ptr<Proposer>> make_replay_proposer(std::string dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return make_error(fmt::format("replay directory '{}' {}", dir, ec ? "cannot be read: " + ec.message() : "does not exist or is not a directory"));
    std::vector<fs::path> files;
    fs::directory_iterator it(dir, ec), end;
    if (ec) return make_error(fmt::format("replay directory '{}' cannot be read: {}", dir, ec.message()));
    for (; it != end; it.increment(ec)) {
        if (ec) return make_error(fmt::format("replay directory '{}' cannot be read: {}", dir, ec.message()));
        const auto name = it->path().filename().string();
        if (name.empty() || name.front() == '.') continue;
        std::error_code type_ec;
        if (it->is_regular_file(type_ec)) files.push_back(it->path());
    }
    if (files.empty()) return make_error(fmt::format("replay directory '{}' holds no candidate files", dir));
    std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
    return std::unique_ptr<Proposer>(std::make_unique<ReplayProposer>(fs::path(dir), std::move(files)));
}

}  // namespace kevo

// The proposer's entry in the registry (search/proposers/registry.hpp): its option and its factory.
namespace kevo {
namespace {

const bool registered = register_proposer(
    {"replay", "the candidate files of a folder, in name order (--replay)", 3,
     {{.name = "replay", .flag = "--replay", .type = OptionType::path, .fallback = "",
       .help = "folder of candidate files, used in name order (replay)", .study = StudyPlace::model_table,
       .required = "\"folder/{task}\""}},
     [](const ProposerContext& c) -> Expected<std::unique_ptr<Proposer>> {
         const std::string dir = c.values.value("replay", std::string());
         if (dir.empty()) return make_error("--proposer replay needs --replay DIR");
         return make_replay_proposer(dir);
     }});

}  // namespace
}  // namespace kevo
