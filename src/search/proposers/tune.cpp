// See tune.hpp.
#include "search/proposers/tune.hpp"
#include "search/proposers/registry.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/hash.hpp"
#include "core/rng.hpp"
#include "eval/directives.hpp"

namespace kevo {

namespace {

using Point = std::map<std::string, std::string>;

std::string point_key(const std::string& source, const Point& p) {
    std::string text = hex64(hash64(source));
    for (const auto& [k, v] : p) text += "|" + k + "=" + v;
    return text;
}

std::string describe(const Point& p) {
    std::string out;
    for (const auto& [k, v] : p) out += fmt::format("{}{}={}", out.empty() ? "" : " ", k, v);
    return out;
}

class TuneProposer final : public Proposer {
public:
    explicit TuneProposer(Language language) : comment_(language->directive_comment) {}  // (asserts a language)

    std::string name() const override { return "tune"; }

    // A kernel evaluated without a define for a knob ran with that knob's default (its first value):
    // the point is recorded complete, so the starting kernel's point is not proposed again.
    void observe(const Attempt& a) override {
        Point point = a.result.defines.empty() ? a.defines : a.result.defines;
        if (auto directives = parse_directives(a.source, comment_))
            for (const auto& k : directives->knobs)
                if (!point.count(k.name) && !k.values.empty()) point[k.name] = k.values.front();
        evaluated_.insert(point_key(a.source, point));
    }

    Proposal propose(const ProposalContext& context) override {
        Proposal p;
        const std::string& source = context.incumbent.source;
        auto directives = parse_directives(source, comment_);
        if (!directives || directives->knobs.empty()) {
            p.status = Proposal::Status::exhausted;
            p.note = directives ? fmt::format("the incumbent declares no `{} kevo: tune` knobs: nothing to tune", comment_)
                                : "the incumbent's directives do not parse: " + directives.error().message;
            return p;
        }
        const auto& knobs = directives->knobs;
        Point current = context.incumbent.result.defines;
        for (const auto& k : knobs)
            if (!current.count(k.name)) current[k.name] = k.values.front();

        uint64_t draw = context.seed ^ (static_cast<uint64_t>(context.iteration) << 32);
        auto next_random = [&](uint64_t bound) { return rng::splitmix64(draw++) % bound; };
        auto fresh = [&](const Point& q) { return !evaluated_.count(point_key(source, q)); };

        std::vector<Point> candidates;
        // Local moves first: each knob to each of its neighbouring values.
        for (const auto& k : knobs) {
            auto at = std::find(k.values.begin(), k.values.end(), current[k.name]);
            const long i = at == k.values.end() ? -1 : at - k.values.begin();
            for (long j : {i - 1, i + 1}) {
                if (j < 0 || j >= static_cast<long>(k.values.size())) continue;
                Point q = current;
                q[k.name] = k.values[j];
                if (fresh(q)) candidates.push_back(q);
            }
        }
        const bool first_move = context.iteration <= 1;
        if (candidates.empty() || first_move) {
            // A random start (or an escape from a local optimum): a few uniform draws over the space.
            for (int tries = 0; tries < 256; ++tries) {
                Point q;
                for (const auto& k : knobs) q[k.name] = k.values[next_random(k.values.size())];
                if (fresh(q)) {
                    candidates = {q};
                    break;
                }
            }
        }
        if (candidates.empty()) {
            // Exhaustive fallback for small spaces the random draws missed.
            std::vector<size_t> index(knobs.size(), 0);
            while (candidates.empty()) {
                Point q;
                for (size_t i = 0; i < knobs.size(); ++i) q[knobs[i].name] = knobs[i].values[index[i]];
                if (fresh(q)) candidates.push_back(q);
                size_t i = 0;
                while (i < knobs.size() && ++index[i] == knobs[i].values.size()) index[i++] = 0;
                if (i == knobs.size()) break;
            }
        }
        if (candidates.empty()) {
            p.status = Proposal::Status::exhausted;
            p.note = "every point of the knob space has been evaluated";
            return p;
        }
        const Point chosen = candidates[next_random(candidates.size())];
        evaluated_.insert(point_key(source, chosen));  // proposed once, never again
        p.source = source;
        p.defines = chosen;
        p.note = describe(chosen);
        p.prompt = fmt::format("tune: from {} ({} local move{} open)", describe(current), candidates.size(),
                               candidates.size() == 1 ? "" : "s");
        p.answer = p.note;
        return p;
    }

private:
    std::string comment_;  // what starts a directive line in the run's language
    std::set<std::string> evaluated_;
};

}  // namespace

std::unique_ptr<Proposer> make_tune_proposer(Language language) { return std::make_unique<TuneProposer>(language); }

}  // namespace kevo

// The proposer's entry in the registry (search/proposers/registry.hpp): no options of its own.
namespace kevo {
namespace {

const bool registered = register_proposer(
    {"tune", "the built-in autotuner of the kernel's `// kevo: tune` knobs", 0, {},
     [](const ProposerContext& context) -> Expected<std::unique_ptr<Proposer>> {
         return make_tune_proposer(context.language);
     }});

}  // namespace
}  // namespace kevo
