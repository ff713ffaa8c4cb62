// See eval_text.hpp.
#include "report/eval_text.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text_table.hpp"
#include "eval/replay_timing.hpp"

namespace kevo {

std::string seconds_text(double s) {
    if (s <= 0) return "-";
    if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
    if (s < 1) return fmt::format("{:.3f} ms", s * 1e3);
    return fmt::format("{:.3f} s", s);
}

std::string ceilings_text(const CeilingsUsed& c) {
    std::string out = fmt::format("ceilings: {:.1f} GB/s, {:.0f} GFLOP/s", c.bandwidth_gbs, c.fp32_gflops);
    if (c.source == "measured")
        out += fmt::format(", measured on this device {}{}", c.measured_at,
                           c.stable ? "" : fmt::format(" (UNSTABLE: passes spread {:.0f}%)", 100 * c.spread));
    else
        out += fmt::format(" from the {} (not measured on this device)", c.source == "datasheet" ? "DATASHEET" : c.source);
    if (!c.datasheet.empty() && c.source == "measured") out += "; datasheet " + c.datasheet;
    for (const auto& t : c.tensor) {
        out += fmt::format("; tensor {} ", t.kind);
        out += t.source == "absent" ? std::string("ABSENT")
                                    : fmt::format("{:.1f} TFLOP/s{}", t.gflops * 1e-3, t.source == "measured" ? "" : " (DATASHEET)");
    }
    return out;
}

namespace {

const char* limiter_text(Limiter limiter) {
    switch (limiter) {
        case Limiter::memory: return "memory";
        case Limiter::cuda_cores: return "the CUDA cores (fp32)";
        case Limiter::tensor_cores: return "the tensor cores";
        case Limiter::none: break;
    }
    return "-";
}

// What the table's ceiling column is: under --roofline workload a bandwidth-bound size's ceiling is
// the bandwidth measured at its working set, not the streaming peak the ceilings line quotes.
std::string roofline_footer(const EvalResult& r) {
    const bool bandwidth = std::any_of(r.sizes.begin(), r.sizes.end(), [](const SizeResult& s) { return s.unit == "GB/s"; });
    if (r.roofline != RooflineMode::workload || !bandwidth) return ceilings_text(r.ceilings);
    return "ceiling column: workload roofline, the bandwidth this device reached at each size's working set (never "
           "below the streaming bandwidth); static " + ceilings_text(r.ceilings);
}

// Which sizes were timed as replays, and how (replay_timing.hpp).
std::optional<std::string> replay_text(const EvalResult& r) {
    std::vector<std::string> sizes;
    for (const auto& s : r.sizes)
        if (s.replays > 0) sizes.push_back(fmt::format("{} x{}", s.label, s.replays));
    if (sizes.empty()) return std::nullopt;
    return fmt::format("launch-bound sizes (speed of light under {:g} us) timed as copies of the case replayed back to back "
                       "{}, time per copy: {}",
                       kLaunchBoundSeconds * 1e6, r.backend == "cuda" ? "as one CUDA graph" : "(every enqueue, one wait)",
                       fmt::join(sizes, ", "));
}

}  // namespace

std::string render_eval_text(const EvalResult& r) {
    // Profile and correctness seed only say something once a size ran (not for --compile-only).
    std::string out = r.sizes.empty() ? fmt::format("{} on {} ({})\n", r.task, r.device, r.backend)
                                      : fmt::format("{} on {} ({}), profile {}, seed {}\n", r.task, r.device, r.backend,
                                                    r.profile, r.seed);
    out += fmt::format("verdict: {}", verdict_name(r.verdict));
    if (r.score) out += fmt::format("   score S = {:.4f}", *r.score);
    if (r.heldout_fraction) out += fmt::format("   held-out Phi = {:.4f}", *r.heldout_fraction);
    out += "\n";
    if (!r.diagnostics.empty()) out += fmt::format("{}\n", r.diagnostics);
    if (!r.sizes.empty()) {
        using A = TextTable::Align;
        TextTable table({{"size"}, {"correct"}, {"error", A::right}, {"tolerance", A::right}, {"median", A::right},
                         {"min", A::right}, {"max", A::right}, {"cv", A::right}, {"achieved", A::right},
                         {"ceiling", A::right}, {"fraction", A::right}, {""}});
        // A trace profile's sizes carry their call counts, which weight S.
        const bool weighted = std::any_of(r.sizes.begin(), r.sizes.end(), [](const SizeResult& s) { return s.weight != 1; });
        for (const auto& s : r.sizes) {
            std::string label = s.heldout ? s.label + " (held-out)" : s.label;
            if (weighted) label += fmt::format(" [w {:g}]", s.weight);
            std::vector<std::string> row = {label, s.correct ? "yes" : "NO",
                                            fmt::format("{:.2e}", s.error), fmt::format("{:.2e}", s.tolerance)};
            if (s.timed)
                for (auto cell : {seconds_text(s.seconds), seconds_text(s.seconds_min), seconds_text(s.seconds_max),
                                  fmt::format("{:.1f}%", 100 * s.cv), fmt::format("{:.1f} {}", s.achieved, s.unit),
                                  fmt::format("{:.1f} {}", s.ceiling, s.unit), fmt::format("{:.4f}", s.fraction),
                                  std::string(s.implausible ? "!" : s.noisy ? "~" : "")})
                    row.push_back(std::move(cell));
            row.resize(12);
            table.add_row(std::move(row));
        }
        out += "\n" + table.render();
        if (!r.ceilings.source.empty()) out += roofline_footer(r) + "\n";
        for (const auto& s : r.sizes)
            if (s.timed && s.limiter != Limiter::none)
                out += fmt::format("speed of light: size {} {} (bound by {}), fraction = that / the median\n", s.label,
                                   seconds_text(s.sol_seconds), limiter_text(s.limiter));
        if (weighted) out += "S weights each size by [w]: its production call count (trace profile; 1 where none is known)\n";
        if (auto replayed = replay_text(r)) out += *replayed + "\n";
    }
    for (const auto& k : r.resources)
        out += fmt::format("resources: {} registers={} shared={} B{} local={} B max_threads={} block={} per_thread={}\n",
                           k.kernel, k.registers >= 0 ? std::to_string(k.registers) : std::string("n/a"),  // OpenCL reports none
                           k.shared_bytes,
                           k.dynamic_shared_bytes ? fmt::format(" dynamic_shared={} B", k.dynamic_shared_bytes) : "",
                           k.local_bytes, k.max_threads, fmt::join(k.block, "x"), fmt::join(k.per_thread, "x"));
    if (!r.defines.empty()) {
        std::vector<std::string> d;
        for (const auto& [name, value] : r.defines) d.push_back(name + "=" + value);
        out += fmt::format("knobs: {}\n", fmt::join(d, " "));
    }
    for (const auto& w : r.warnings) out += fmt::format("warning: {}\n", w);
    const auto& t = r.stage_seconds;
    out += fmt::format("stages: scan {:.3f} s, compile {:.3f} s, correctness {:.3f} s, timing {:.3f} s, total {:.3f} s\n",
                       t.scan, t.compile, t.correctness, t.timing, t.total);
    return out;
}

}  // namespace kevo
