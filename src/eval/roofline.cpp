// See roofline.hpp.
#include "eval/roofline.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/stats.hpp"

namespace kevo {

Rate measure_rate(Bound bound, double work, double seconds, double working_set_bytes, const Calibration& ceilings) {
    Rate r;
    r.achieved = seconds > 0 ? work / seconds / 1e9 : 0;
    if (bound == Bound::compute) {
        r.unit = "GFLOP/s";
        r.ceiling_static = r.ceiling_workload = ceilings.fp32_gflops;
    } else {
        r.unit = "GB/s";
        r.ceiling_static = ceilings.bandwidth_gbs;
        // A cache-resident working set streams faster than DRAM; never score against less than DRAM.
        r.ceiling_workload = std::max(ceilings.bandwidth_at(working_set_bytes), ceilings.bandwidth_gbs);
    }
    return r;
}

namespace {

void score_by_bound(SizeResult& size, Bound bound, double working_set_bytes, const Calibration& ceilings,
                    RooflineMode mode) {
    const Rate rate = measure_rate(bound, size.work, size.seconds, working_set_bytes, ceilings);
    size.achieved = rate.achieved;
    size.unit = rate.unit;
    size.ceiling_static = rate.ceiling_static;
    size.ceiling_workload = rate.ceiling_workload;
    size.ceiling = mode == RooflineMode::static_peak ? rate.ceiling_static : rate.ceiling_workload;
    size.fraction = size.ceiling > 0 ? rate.achieved / size.ceiling : 0;
}

double tensor_flops(const std::map<ComputeClass, double>& flops) {
    double sum = 0;
    for (const auto& [kind, w] : flops)
        if (is_tensor_class(kind)) sum += w;
    return sum;
}

void score_multi_class(SizeResult& size, const Case& c, const Calibration& ceilings, RooflineMode mode) {
    const double workload_bw = std::max(ceilings.bandwidth_at(c.working_set_bytes), ceilings.bandwidth_gbs);
    const SpeedOfLight at_static = speed_of_light(c.flops_by_class, c.roofline_bytes, ceilings.bandwidth_gbs, ceilings);
    const SpeedOfLight at_workload = speed_of_light(c.flops_by_class, c.roofline_bytes, workload_bw, ceilings);
    const SpeedOfLight& sol = mode == RooflineMode::static_peak ? at_static : at_workload;
    size.sol_seconds = sol.seconds;
    size.limiter = sol.limiter;
    // The work of the binding term, in its unit.
    const auto fp32 = c.flops_by_class.find(ComputeClass::fp32);
    size.unit = sol.limiter == Limiter::memory ? "GB/s" : "GFLOP/s";
    if (sol.limiter == Limiter::memory) size.work = c.roofline_bytes;
    else if (sol.limiter == Limiter::cuda_cores) size.work = fp32 == c.flops_by_class.end() ? 0 : fp32->second;
    else size.work = tensor_flops(c.flops_by_class);
    const double t = size.seconds;
    size.achieved = t > 0 ? size.work / t / 1e9 : 0;
    // ceiling = achieved / fraction = work / sol time: the rate the bound allows for this work.
    auto ceiling = [&](const SpeedOfLight& s) { return s.seconds > 0 ? size.work / s.seconds / 1e9 : 0; };
    size.ceiling_static = ceiling(at_static);
    size.ceiling_workload = ceiling(at_workload);
    size.ceiling = ceiling(sol);
    size.fraction = t > 0 ? sol.seconds / t : 0;
}

// The same time against the vendor's figures, in the size's unit (ceiling_datasheet = achieved /
// fraction_datasheet). The datasheet has no bandwidth curve: its static peak serves both rooflines.
void score_datasheet_basis(SizeResult& size, Bound bound, const Case& c, const Calibration& sheet) {
    const double t = size.seconds;
    if (!(t > 0)) return;
    if (c.flops_by_class.empty()) {
        size.ceiling_datasheet = bound == Bound::compute ? sheet.fp32_gflops : sheet.bandwidth_gbs;
        size.fraction_datasheet = size.ceiling_datasheet > 0 ? size.achieved / size.ceiling_datasheet : 0;
        return;
    }
    const SpeedOfLight sol = speed_of_light(c.flops_by_class, c.roofline_bytes, sheet.bandwidth_gbs, sheet);
    if (!(sol.seconds > 0)) return;
    size.fraction_datasheet = sol.seconds / t;
    size.ceiling_datasheet = size.work / sol.seconds / 1e9;
}

void mark_tensor_class(SizeResult& size, const Case& c) {
    const ComputeClass* only = nullptr;
    for (const auto& [kind, work] : c.flops_by_class) {
        if (!is_tensor_class(kind) || !(work > 0)) continue;
        if (only) return;  // two classes: no one class's rate
        only = &kind;
    }
    if (!only) return;
    size.tensor_class = compute_class_name(*only);
    size.tensor_flops = c.flops_by_class.at(*only);
}

}  // namespace

SpeedOfLight speed_of_light(const std::map<ComputeClass, double>& flops, double bytes, double bandwidth_gbs,
                            const Calibration& ceilings) {
    SpeedOfLight s;
    s.memory_seconds = bandwidth_gbs > 0 ? bytes / (bandwidth_gbs * 1e9) : 0;
    for (const auto& [kind, work] : flops) {
        if (!(work > 0)) continue;
        const double peak = ceilings.peak_gflops(kind);
        if (!(peak > 0)) {
            s.missing.push_back(kind);
            continue;
        }
        const double seconds = work / (peak * 1e9);
        if (is_tensor_class(kind)) s.tensor_seconds += seconds;
        else s.cuda_core_seconds += seconds;
    }
    s.seconds = std::max({s.memory_seconds, s.cuda_core_seconds, s.tensor_seconds});
    s.limiter = s.seconds == s.memory_seconds      ? Limiter::memory
                : s.seconds == s.tensor_seconds    ? Limiter::tensor_cores
                                                   : Limiter::cuda_cores;
    return s;
}

Calibration datasheet_ceilings(const Datasheet& sheet) {
    Calibration c;
    c.device_name = sheet.name;
    c.source = "datasheet";
    c.bandwidth_gbs = sheet.bandwidth_gbs;
    c.fp32_gflops = sheet.fp32_gflops;
    c.tensor = datasheet_tensor_ceilings(sheet, "the datasheet basis");
    c.datasheet = sheet;
    return c;
}

double sol_seconds_of(Bound bound, const Case& c, const Calibration& ceilings) {
    if (!c.flops_by_class.empty())
        return ceilings.bandwidth_gbs > 0
                   ? speed_of_light(c.flops_by_class, c.roofline_bytes, ceilings.bandwidth_gbs, ceilings).seconds
                   : 0.0;
    const double peak = bound == Bound::bandwidth ? ceilings.bandwidth_gbs : ceilings.fp32_gflops;
    return peak > 0 ? c.work / (peak * 1e9) : 0.0;
}

void score_size(SizeResult& size, Bound bound, const Case& c, const Calibration& ceilings, RooflineMode mode) {
    if (c.flops_by_class.empty()) score_by_bound(size, bound, c.working_set_bytes, ceilings, mode);
    else score_multi_class(size, c, ceilings, mode);
    mark_tensor_class(size, c);
    if (ceilings.datasheet) score_datasheet_basis(size, bound, c, datasheet_ceilings(*ceilings.datasheet));
}

std::optional<double> datasheet_score(const EvalResult& r) {
    std::vector<double> fractions, weights;
    for (const auto& s : r.sizes) {
        if (s.heldout) continue;
        if (!s.timed || !(s.fraction_datasheet > 0)) return std::nullopt;
        fractions.push_back(s.fraction_datasheet);
        weights.push_back(s.weight);
    }
    if (fractions.empty()) return std::nullopt;
    return weighted_geometric_mean(fractions, weights);
}

std::optional<double> datasheet_heldout_fraction(const EvalResult& r) {
    for (const auto& s : r.sizes)
        if (s.heldout && s.timed && s.fraction_datasheet > 0) return s.fraction_datasheet;
    return std::nullopt;
}

std::optional<std::string> roofline_note(const SizeResult& size, const Case& c, const Calibration& ceilings) {
    if (c.flops_by_class.empty()) return std::nullopt;
    std::vector<std::string> absent, sheet;
    for (const auto& [kind, work] : c.flops_by_class) {
        if (!(work > 0) || !is_tensor_class(kind)) continue;
        const TensorCeiling* t = ceilings.tensor_ceiling(kind);
        if (!t || t->source == CeilingSource::absent)
            absent.push_back(fmt::format("{} ({})", compute_class_name(kind), t ? t->how : "not in this calibration"));
        else if (t->source == CeilingSource::datasheet)
            sheet.push_back(fmt::format("{} {:.0f} TFLOP/s", compute_class_name(kind), t->gflops * 1e-3));
    }
    std::string note;
    if (!absent.empty())
        note = fmt::format("size {}: the device has NO ceiling for {}; that work is left out of the speed-of-light "
                           "time, so the fraction is a lower bound (it would be higher with that ceiling)", size.label,
                           fmt::join(absent, ", "));
    if (!sheet.empty())
        note += fmt::format("{}size {}: scored against the DATASHEET's tensor-core figures ({}), not a measurement",
                            note.empty() ? "" : "; ", size.label, fmt::join(sheet, ", "));
    if (note.empty()) return std::nullopt;
    return note;
}

bool beyond_physical(const SizeResult& size) {
    const double physical = std::max(size.ceiling_static, size.ceiling_workload);
    return physical > 0 && size.achieved / physical > kImplausibleFraction;
}

std::string implausible_warning(const SizeResult& s, double working_set_bytes, uint64_t llc_bytes) {
    auto mib = [](double bytes) { return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0)); };
    if (beyond_physical(s))
        return fmt::format("size {}: {:.3g} {} is {:.2f}x what the device reached at this working set, after re-timing "
                           "and re-measuring the ceilings; the figure is implausible (check the task's model)",
                           s.label, s.achieved, s.unit, s.achieved / std::max(s.ceiling_static, s.ceiling_workload));
    return fmt::format("size {}: fraction {:.2f} is above the static ceiling ({:.1f} {}, DRAM): its working set ({}) "
                       "fits in the last-level cache ({}); --roofline workload scores it against the cache",
                       s.label, s.fraction, s.ceiling_static, s.unit, mib(working_set_bytes), mib(double(llc_bytes)));
}

}  // namespace kevo
