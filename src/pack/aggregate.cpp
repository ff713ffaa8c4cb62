// See aggregate.hpp.
#include "pack/aggregate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/stats.hpp"
#include "pack/pack.hpp"

namespace kevo {
namespace {

WeightedAggregate weighted_aggregate(const WeightVector& vector, const std::map<std::string, double>& scores) {
    WeightedAggregate out;
    out.vector = vector.name;
    double sum = 0, weight = 0;
    for (const auto& w : vector.weights) {
        const auto score = scores.find(w.task);
        if (score == scores.end()) {
            if (w.weight > 0) out.missing.push_back(w.task);
            continue;
        }
        sum += w.weight * score->second;
        weight += w.weight;
    }
    out.weight_scored = weight;
    if (weight > 0) out.value = sum / weight;
    return out;
}

PackAggregate pack_aggregate(const std::string& pack, const std::map<std::string, double>& scores,
                             const PackWeightsSet& weights) {
    PackAggregate out;
    out.pack = pack;
    std::vector<double> values;
    for (const auto& task : pack_tasks(pack)) {
        const auto score = scores.find(task);
        if (score == scores.end()) {
            out.missing.push_back(task);
            continue;
        }
        out.scored.push_back(task);
        values.push_back(score->second);
    }
    if (!values.empty()) out.geomean = geometric_mean(values);
    if (const auto* w = weights.find(pack))
        for (const auto& v : w->vectors) out.weighted.push_back(weighted_aggregate(v, scores));
    else if (weights.problems.count(pack))
        out.weights_note = fmt::format("packs/{}/weights.toml does not match the pack: {}", pack,
                                       fmt::join(weights.problems.at(pack), "; "));
    return out;
}

}  // namespace

std::vector<PackAggregate> aggregate_packs(const std::map<std::string, double>& scores, const PackWeightsSet& weights) {
    std::vector<PackAggregate> out;
    for (const auto& pack : pack_names()) {
        auto a = pack_aggregate(pack, scores, weights);
        if (!a.scored.empty()) out.push_back(std::move(a));
    }
    return out;
}

std::string aggregate_value_text(const std::optional<double>& v) {
    return v ? fmt::format("{:.4f}", *v) : std::string("-");
}

std::string aggregate_text(const PackAggregate& a) {
    const size_t total = a.scored.size() + a.missing.size();
    std::string out = fmt::format("pack {} ({} of {} tasks{}): S {} (geometric mean)", a.pack, a.scored.size(), total,
                                  a.missing.empty() ? "" : fmt::format("; missing: {}", fmt::join(a.missing, ", ")),
                                  aggregate_value_text(a.geomean));
    for (size_t i = 0; i < a.weighted.size(); ++i) {
        const auto& w = a.weighted[i];
        out += fmt::format("{} {} {}", i == 0 ? "; S_agg" : ",", w.vector, aggregate_value_text(w.value));
        if (!w.value) out += " (no scored task has weight in it)";
        else if (!w.missing.empty())
            out += fmt::format(" (renormalised over the {:.1f}% of its weight scored; missing: {})", 100 * w.weight_scored,
                               fmt::join(w.missing, ", "));
    }
    if (!a.weights_note.empty()) out += "; no S_agg: " + a.weights_note;
    return out;
}

std::string render_aggregates_text(const std::vector<PackAggregate>& aggregates, const std::string& label) {
    std::string out;
    for (const auto& a : aggregates) out += fmt::format("{}, {}\n", label, aggregate_text(a));
    return out;
}

}  // namespace kevo
