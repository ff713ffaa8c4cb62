// See eval_text.hpp.
#include "report/eval_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

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
    return out;
}

std::string render_eval_text(const EvalResult& r) {
    std::string out = fmt::format("{} on {} ({}), profile {}, seed {}\n", r.task, r.device, r.backend, r.profile, r.seed);
    out += fmt::format("verdict: {}", verdict_name(r.verdict));
    if (r.score) out += fmt::format("   score S = {:.4f}", *r.score);
    if (r.heldout_fraction) out += fmt::format("   held-out Phi = {:.4f}", *r.heldout_fraction);
    out += "\n";
    if (!r.diagnostics.empty()) out += fmt::format("{}\n", r.diagnostics);
    if (!r.sizes.empty()) {
        out += fmt::format("\n{:<16} {:<8} {:>10} {:>10} {:>11} {:>11} {:>11} {:>6} {:>14} {:>11} {:>9}\n", "size", "correct",
                           "error", "tolerance", "median", "min", "max", "cv", "achieved", "ceiling", "fraction");
        for (const auto& s : r.sizes) {
            const std::string label = s.heldout ? s.label + " (held-out)" : s.label;
            out += fmt::format("{:<16} {:<8} {:>10.2e} {:>10.2e}", label, s.correct ? "yes" : "NO", s.error, s.tolerance);
            if (s.timed)
                out += fmt::format(" {:>11} {:>11} {:>11} {:>5.1f}% {:>9.1f} {:<4} {:>11.1f} {:>9.4f}{}", seconds_text(s.seconds),
                                   seconds_text(s.seconds_min), seconds_text(s.seconds_max), 100 * s.cv, s.achieved, s.unit,
                                   s.ceiling, s.fraction, s.implausible ? " !" : s.noisy ? " ~" : "");
            out += "\n";
        }
        if (!r.ceilings.source.empty()) out += ceilings_text(r.ceilings) + "\n";
    }
    for (const auto& k : r.resources)
        out += fmt::format("resources: {} registers={} shared={} B local={} B max_threads={} block={} per_thread={}\n", k.kernel,
                           k.registers, k.shared_bytes, k.local_bytes, k.max_threads, fmt::join(k.block, "x"),
                           fmt::join(k.per_thread, "x"));
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
