// Renders bench reports (see bench_render.hpp). Both forms show the same figures: per size, seed
// and best time, the best's rate and fractions of the static and workload ceilings, the speed-up
// over the seed, and each peer's time with the best kernel's speed-up over it (> 1: best faster).
#include "bench/bench_render.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/eval_text.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

std::string timed_time(const std::optional<SizeResult>& s) {
    if (!s) return "-";
    if (!s->correct) return "incorrect";
    return s->timed ? seconds_text(s->seconds) : "-";
}

std::string fraction(const std::optional<SizeResult>& s, bool workload) {
    if (!s || !s->timed) return "-";
    const double ceiling = workload ? s->ceiling_workload : s->ceiling_static;
    return ceiling > 0 ? fmt::format("{:.3f}", s->achieved / ceiling) : "-";
}

// The mark `kevo eval` prints beside a fraction: ! implausible (above 1.05 of a ceiling), ~ noisy.
std::string mark(const std::optional<SizeResult>& s) {
    if (!s || !s->timed) return "";
    return s->implausible ? "!" : s->noisy ? "~" : "";
}

// The best kernel's fraction on the datasheet basis (the vendor's figures), "-" without one.
std::string datasheet_fraction(const std::optional<SizeResult>& s) {
    if (!s || !s->timed || !(s->fraction_datasheet > 0)) return "-";
    return fmt::format("{:.3f}", s->fraction_datasheet);
}

// Every warning a kernel's evaluation carried (implausible and noisy sizes among them), as eval prints them.
std::string warning_lines(const std::string& indent, const char* kernel, const std::optional<EvalResult>& r) {
    std::string out;
    if (r)
        for (const auto& w : r->warnings) out += fmt::format("{}   {}: warning: {}\n", indent, kernel, w);
    return out;
}

std::string rate(const std::optional<SizeResult>& s) {
    if (!s || !s->timed) return "-";
    return fmt::format("{:.1f} {}", s->achieved, s->unit);
}

std::string peers_text(const BenchSize& s) {
    std::string out;
    for (const auto& p : s.peers) {
        if (!out.empty()) out += "; ";
        if (!p.ran()) {
            out += fmt::format("{}: not run ({})", p.name, p.error.substr(0, p.error.find('\n')));
        } else if (!p.right()) {
            out += fmt::format("{} {}: {}", p.name, seconds_text(p.seconds), p.check.empty() ? "output not checked" : p.check);
        } else if (const auto sp = s.speedup_over(p)) {
            out += fmt::format("{} {} (best {:.2f}x)", p.name, seconds_text(p.seconds), *sp);
        } else {
            out += fmt::format("{} {}", p.name, seconds_text(p.seconds));
        }
    }
    return out;
}

std::string check_summary(const BenchTask& t) {
    if (!t.best_missing.empty()) return t.best_missing;
    std::string out;
    for (const auto& c : t.checks) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", c.profile, verdict_name(c.verdict));
    return out.empty() ? "no check profiles" : out;
}

std::string verdicts(const BenchTask& t) {
    return fmt::format("seed {}, best {}", t.seed ? verdict_name(t.seed->verdict) : "-",
                       t.best ? verdict_name(t.best->verdict) : "-");
}

// The static ceiling the task's rows were scored against (from the evaluation itself).
std::string ceiling_used(const BenchTask& t) {
    for (const auto& s : t.sizes)
        for (const auto* r : {&s.best, &s.seed})
            if (*r && (*r)->ceiling_static > 0) return fmt::format("{:.1f} {}", (*r)->ceiling_static, (*r)->unit);
    return "-";
}

// One row of the terminal table; the numeric columns are wide enough for any figure they show.
struct RowCells {
    std::string seed, best, rate, fraction_static, fraction_workload, mark, fraction_datasheet, speedup, peers;  // mark: beside the fraction in force (static)
};
std::string table_row(const BenchLayout& l, const std::string& task, const std::string& size, const RowCells& c) {
    return fmt::format("{:<{}} {:<{}} {:>11} {:>11} {:>16} {:>7} {:1} {:>8} {:>9} {:>8}  {}\n", task, l.task, size, l.size,
                       c.seed, c.best, c.rate, c.fraction_static, c.mark, c.fraction_workload, c.fraction_datasheet,
                       c.speedup, c.peers);
}

RowCells row_cells(const BenchSize& s) {
    const auto sp = s.speedup();
    return {timed_time(s.seed),           timed_time(s.best),          rate(s.best),
            fraction(s.best, false),      fraction(s.best, true),      mark(s.best),
            datasheet_fraction(s.best),   sp ? fmt::format("{:.2f}x", *sp) : "-", peers_text(s)};
}

// What the datasheet basis divided by: the vendor's figures for this device.
std::string datasheet_basis_text(const BenchReport& report) {
    if (!report.ceilings || !report.ceilings->datasheet) return "no datasheet entry for this device: no datasheet basis";
    const Datasheet& d = *report.ceilings->datasheet;
    std::string out = fmt::format("{}: {:.0f} GB/s, {:.0f} GFLOP/s FP32", d.name, d.bandwidth_gbs, d.fp32_gflops);
    for (const auto& [kind, gflops] : d.tensor_gflops)
        out += fmt::format(", {} {:.1f} TFLOP/s dense", compute_class_name(kind), gflops * 1e-3);
    return out;
}

// What the measured basis divided by for the tensor classes (the bounded fp8 and int8 included).
std::string tensor_ceilings_text(const BenchReport& report) {
    if (!report.ceilings) return {};
    std::string out;
    for (const auto& t : report.ceilings->tensor)
        out += fmt::format("; tensor {} {}", compute_class_name(t.kind),
                           t.source == CeilingSource::absent
                               ? std::string("ABSENT")
                               : fmt::format("{:.1f} TFLOP/s ({})", t.gflops * 1e-3, ceiling_source_name(t.source)));
    return out;
}

// Device, start and ceilings.
std::string head_lines(const BenchReport& report) {
    std::string out = fmt::format("kevo bench on {} ({}), profile {}, started {}\n", report.device.name, report.device.backend,
                                  report.profile, report.started);
    if (report.ceilings)
        out += fmt::format("measured basis, ceilings ({}): {:.1f} GB/s, {:.0f} GFLOP/s{}\n", report.ceilings->source,
                           report.ceilings->bandwidth_gbs, report.ceilings->fp32_gflops, tensor_ceilings_text(report));
    out += fmt::format("datasheet basis: {}\n", datasheet_basis_text(report));
    out += "marks: ! implausible (a fraction above 1.05 of its ceiling), ~ noisy (as kevo eval prints them)\n";
    return out;
}

std::string verdict_line(const BenchReport& report) {
    return report.ok() ? "all kernels correct\n" : "SOME KERNELS FAILED (see above)\n";
}

}  // namespace

BenchLayout bench_layout(const std::vector<std::string>& tasks, const std::string& profile) {
    BenchLayout l;
    for (const auto& name : tasks) {
        l.task = std::max(l.task, name.size());
        auto task = make_task(name);
        if (!task || !(*task)->spec().profiles.count(profile)) continue;
        for (const auto& s : (*task)->spec().profiles.at(profile))
            l.size = std::max(l.size, s.label.size() + (s.heldout ? 4 : 0));
    }
    return l;
}

std::string render_bench_header(const BenchLayout& layout) {
    return table_row(layout, "task", "size",
                     {"seed", "best", "best rate", "static", "", "workload", "datasheet", "speed-up", "peers"});
}

std::string render_bench_task_text(const BenchTask& t, const BenchLayout& layout) {
    std::string out;
    for (const auto& s : t.sizes) out += table_row(layout, t.task, s.label + (s.heldout ? " [h]" : ""), row_cells(s));
    const std::string indent(layout.task, ' ');
    out += fmt::format("{} {}; best checked: {}\n", indent, verdicts(t), check_summary(t));
    out += warning_lines(indent, "seed", t.seed) + warning_lines(indent, "best", t.best);
    if (t.seed && t.seed->verdict != Verdict::ok) out += fmt::format("{}   seed: {}\n", indent, t.seed->diagnostics);
    if (t.best && t.best->verdict != Verdict::ok) out += fmt::format("{}   best: {}\n", indent, t.best->diagnostics);
    for (const auto& c : t.checks)
        if (c.verdict != Verdict::ok) out += fmt::format("{}   best at {}: {}\n", indent, c.profile, c.diagnostics);
    return out;
}

std::string render_bench_summary(const BenchReport& report) { return head_lines(report) + verdict_line(report); }

std::string render_bench_text(const BenchReport& report) {
    std::vector<std::string> names;
    for (const auto& t : report.tasks) names.push_back(t.task);
    const BenchLayout layout = bench_layout(names, report.profile);
    std::string out = head_lines(report) + render_bench_header(layout);
    for (const auto& t : report.tasks) out += render_bench_task_text(t, layout);
    return out + verdict_line(report);
}

std::string render_bench_markdown(const BenchReport& report, const std::string& command) {
    std::string out = fmt::format("# kevo bench: {} ({})\n\n", report.device.name, report.device.backend);
    out += fmt::format("- Date: {} (UTC). Driver: {}. Profile timed: `{}`.\n", report.started, report.device.driver, report.profile);
    out += fmt::format("- Produced by: `{}`\n", command);
    if (report.invocations.size() > 1) {
        out += fmt::format("- Resumed with `--state`: {} invocations contributed checks or rows (each row keeps the ceilings of the "
                           "invocation that measured it):", report.invocations.size());
        for (const auto& i : report.invocations)
            out += fmt::format(" {} ({:.1f} GB/s, {:.0f} GFLOP/s);", i.started, i.bandwidth_gbs, i.fp32_gflops);
        out.back() = '.';
        out += "\n";
    }
    if (report.ceilings)
        out += fmt::format("- Measured basis, ceilings ({}, {}): {:.1f} GB/s streaming bandwidth, {:.0f} GFLOP/s FP32{}.\n",
                           report.ceilings->source, report.ceilings->measured_at, report.ceilings->bandwidth_gbs,
                           report.ceilings->fp32_gflops, tensor_ceilings_text(report));
    out += fmt::format("- Datasheet basis (Atrex-Bench's: the vendor's figures): {}.\n", datasheet_basis_text(report));
    out += "- Before timing, each best-known kernel was checked at every size of these profiles (held-out included): ";
    std::string profiles;
    for (const auto& p : report.check_profiles) profiles += (profiles.empty() ? "" : ", ") + p;
    out += (profiles.empty() ? "none" : profiles) + ".\n";
    out += "- Times are medians of the timed runs (each after an L2 flush); one run is every launch of the size. "
           "Fractions are the best kernel's achieved rate over the measured static ceiling (device peak) and the "
           "workload ceiling (bandwidth at the size's working set), marked ! when implausible (above 1.05 of a ceiling) "
           "and ~ when noisy, as `kevo eval` marks them; `datasheet` is the same time against the vendor's figures "
           "(the datasheet basis). Speed-up = seed time / best time. Peers: time, and "
           "in brackets the best kernel's speed-up over the peer (> 1: best faster), quoted only when the peer's output "
           "passed its check after the timing. [h] = held-out size.\n\n";
    out += "| task | size | seed | best | best rate | static | mark | workload | datasheet | speed-up | peers |\n";
    out += "| --- | --- | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: | --- |\n";
    std::string warnings;
    for (const auto& t : report.tasks) {
        for (const auto& s : t.sizes) {
            const RowCells c = row_cells(s);
            out += fmt::format("| {} | {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", t.task, s.label,
                               s.heldout ? " [h]" : "", c.seed, c.best, c.rate, c.fraction_static, c.mark,
                               c.fraction_workload, c.fraction_datasheet, c.speedup, c.peers);
        }
        for (const auto* r : {&t.seed, &t.best})
            if (*r)
                for (const auto& w : (*r)->warnings)
                    warnings += fmt::format("- {} {}: warning: {}\n", t.task, r == &t.seed ? "seed" : "best", w);
    }
    if (!warnings.empty()) out += "\n## Warnings\n\n" + warnings;
    out += "\n## Correctness\n\n| task | verdicts at the timed profile | best-known kernel checked | static ceiling of its rows |\n"
           "| --- | --- | --- | --- |\n";
    for (const auto& t : report.tasks)
        out += fmt::format("| {} | {} | {} | {} |\n", t.task, verdicts(t), check_summary(t), ceiling_used(t));
    out += report.ok() ? "\nEvery kernel was correct at every size.\n" : "\n**Some kernels failed; see the verdicts above.**\n";
    return out;
}

}  // namespace kevo
