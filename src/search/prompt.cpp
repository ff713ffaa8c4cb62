// The text a proposer reads: task brief, exact signatures, the launch contract and the geometry in
// force, device and ceilings, scoring rule, incumbent with its per-size results, previous attempt
// with structured feedback, a short history, what became of the last answer when it was not
// evaluated, and the answer format. Held-out sizes are filtered at every place an EvalResult is
// turned into text, and any free-text line naming one is withheld, so a held-out result that
// slipped into a context still never reaches a proposer.
#include "search/prompt.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "eval/directives.hpp"
#include "knowledge/select.hpp"
#include "search/proposers/common.hpp"

namespace kevo {
namespace {

using Labels = std::set<std::string>;

constexpr size_t kMaxDiagnosticLines = 40;
constexpr size_t kMaxCompileMessages = 20;
constexpr size_t kMaxLineChars = 500;      // one line of free text (a diagnostic, a server message)
constexpr size_t kMinQuotedChars = 1500;   // a source is cut no shorter than this before the next part goes
constexpr size_t kMinBriefChars = 1500;

bool is_label_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_';
}

// True when `label` occurs in `line` as a whole token (so "64x64x10" does not match "164x64x10").
// A label that is a bare number (a 1-D size such as "512") is also an ordinary number in compiler
// messages and geometry errors, so only the ways kevo names a size count: "size 512", "512:".
bool mentions(std::string_view line, const std::string& label) {
    if (label.empty()) return false;
    const bool numeric = std::all_of(label.begin(), label.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    for (size_t pos = line.find(label); pos != std::string_view::npos; pos = line.find(label, pos + 1)) {
        const bool left = pos == 0 || !is_label_char(line[pos - 1]);
        const size_t end = pos + label.size();
        const bool right = end >= line.size() || !is_label_char(line[end]);
        if (!left || !right) continue;
        if (!numeric) return true;
        const bool after_size = pos >= 5 && (line.substr(pos - 5, 5) == "size " || line.substr(pos - 5, 5) == "Size ");
        if (after_size || (end < line.size() && line[end] == ':')) return true;
    }
    return false;
}

bool mentions_any(std::string_view line, const Labels& labels) {
    return std::any_of(labels.begin(), labels.end(), [&](const auto& l) { return mentions(line, l); });
}

// Free text from an evaluation, at most `max_lines` lines, each line naming a held-out size withheld.
std::string scrubbed(std::string_view text, const Labels& heldout, size_t max_lines, const std::string& indent) {
    std::string out;
    size_t lines = 0, start = 0;
    bool withheld = false;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        start = end + 1;
        if (mentions_any(line, heldout)) {
            withheld = true;
            continue;
        }
        if (lines == max_lines) {
            out += indent + "[... truncated]\n";
            break;
        }
        out += indent;
        if (line.size() > kMaxLineChars) {
            out.append(line.substr(0, kMaxLineChars));
            out += " [... line cut]";
        } else {
            out.append(line);
        }
        out += '\n';
        ++lines;
    }
    if (withheld) out += indent + "[a line naming a held-out size was withheld]\n";
    return out;
}

// Labels of every held-out entry in a result (defensively: they should never be there).
void collect_heldout(const EvalResult& r, Labels& labels) {
    for (const auto& s : r.sizes)
        if (s.heldout) labels.insert(s.label);
}

Labels heldout_labels(const ProposalContext& c) {
    Labels labels, visible;
    if (c.spec) {
        const auto add = [&](const std::vector<SizeSpec>& sizes) {
            for (const auto& s : sizes) (s.heldout ? labels : visible).insert(s.label);
        };
        const auto it = c.profile.empty() ? c.spec->profiles.end() : c.spec->profiles.find(c.profile);
        if (it != c.spec->profiles.end()) {
            add(it->second);
        } else {
            for (const auto& [name, sizes] : c.spec->profiles)
                for (const auto& s : sizes)
                    if (s.heldout) labels.insert(s.label);
        }
    }
    collect_heldout(c.incumbent.result, labels);
    if (c.previous) collect_heldout(c.previous->result, labels);
    for (const auto& a : c.history) collect_heldout(a.result, labels);
    for (const auto& i : c.inspirations) collect_heldout(i.attempt.result, labels);
    // A size the proposer is scored on may be shown even if another profile holds it out.
    for (const auto& v : visible) labels.erase(v);
    return labels;
}

std::string join(const std::vector<uint64_t>& v, const char* sep = "x") {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + std::to_string(v[i]);
    return out;
}

std::string score_text(const std::optional<double>& s) { return s ? fmt::format("{:.4f}", *s) : "none"; }

std::string source_line(const std::string& source, int line) {
    if (line <= 0) return {};
    size_t start = 0;
    for (int i = 1; i < line; ++i) {
        start = source.find('\n', start);
        if (start == std::string::npos) return {};
        ++start;
    }
    const size_t end = source.find('\n', start);
    std::string text = source.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    return text;
}

std::string size_line(const SizeResult& s) {
    if (s.correct) {
        std::string line = fmt::format("  {}: correct", s.label);
        if (s.timed)
            line += fmt::format(", {:.4g} ms (min {:.4g}, max {:.4g}), {:.4g} {} of ceiling {:.4g} {}, fraction {:.4f}",
                                s.seconds * 1e3, s.seconds_min * 1e3, s.seconds_max * 1e3, s.achieved, s.unit,
                                s.ceiling, s.unit, s.fraction);
        else
            line += " (not timed)";
        if (s.implausible) line += " [implausible: above the ceiling]";
        return line;
    }
    std::string line = fmt::format("  {}: INCORRECT", s.label);
    if (!s.error_kind.empty())
        line += fmt::format(", {} error {:.4g} (tolerance {:.4g})", s.error_kind, s.error, s.tolerance);
    if (s.worst_index >= 0) line += fmt::format(", worst at flat index {}", s.worst_index);
    return line;
}

std::string feedback(const Attempt& attempt, const Labels& heldout) {
    const EvalResult& r = attempt.result;
    std::string out = fmt::format("Verdict: {}; score {}\n", verdict_name(r.verdict), score_text(r.score));

    if (!r.compile_messages.empty()) {
        out += "Compiler messages (line:column in the candidate source):\n";
        auto messages = r.compile_messages;
        std::stable_sort(messages.begin(), messages.end(),
                         [](const auto& a, const auto& b) { return a.severity == "error" && b.severity != "error"; });
        for (size_t i = 0; i < messages.size() && i < kMaxCompileMessages; ++i) {
            const auto& m = messages[i];
            const std::string text = fmt::format("  line {}, column {}: {}: {}", m.line, m.column, m.severity, m.message);
            out += scrubbed(text, heldout, 1, "");
            const std::string quoted = source_line(attempt.source, m.line);
            if (!quoted.empty()) out += "      | " + quoted + "\n";
        }
        if (messages.size() > kMaxCompileMessages)
            out += fmt::format("  ... {} more\n", messages.size() - kMaxCompileMessages);
    }
    if (!r.diagnostics.empty()) {
        out += "Diagnostics:\n";
        out += scrubbed(r.diagnostics, heldout, r.compile_messages.empty() ? kMaxDiagnosticLines : 12, "  ");
    }

    bool any_size = false;
    for (const auto& s : r.sizes) {
        if (s.heldout || heldout.count(s.label)) continue;
        if (!any_size) out += "Per size (in-distribution):\n";
        any_size = true;
        out += size_line(s) + "\n";
        if (!s.correct && !s.diagnostics.empty()) out += scrubbed(s.diagnostics, heldout, 8, "      ");
    }

    if (!r.resources.empty()) {
        out += "Resources:\n";
        for (const auto& k : r.resources) {
            std::string line = fmt::format("  {}:", k.kernel);
            if (!k.block.empty()) line += " block " + join(k.block);
            if (!k.per_thread.empty()) line += ", per_thread " + join(k.per_thread);
            if (k.registers >= 0) line += fmt::format(", {} registers/thread", k.registers);
            if (k.shared_bytes >= 0) line += fmt::format(", {} B shared", k.shared_bytes);
            if (k.local_bytes >= 0)
                line += fmt::format(", {} B local/private per thread{}", k.local_bytes,
                                    k.local_bytes > 0 ? " (spills or stack)" : "");
            if (k.max_threads > 0) line += fmt::format(", max {} threads/block", k.max_threads);
            out += line + "\n";
        }
    }
    const auto& knobs = !r.defines.empty() ? r.defines : attempt.defines;
    if (!knobs.empty()) {
        out += "Knobs in force:";
        for (const auto& [k, v] : knobs) out += fmt::format(" {}={}", k, v);
        out += "\n";
    }
    for (const auto& w : r.warnings) out += scrubbed("Warning: " + w, heldout, 3, "");
    return out;
}

// One line of the short history.
std::string history_line(const Attempt& a, const Labels& heldout) {
    std::string what;
    for (const auto& s : a.result.sizes) {
        if (s.heldout || heldout.count(s.label) || s.correct) continue;
        what = size_line(s).substr(2);
        break;
    }
    if (what.empty() && !a.result.compile_messages.empty()) {
        const auto& m = a.result.compile_messages.front();
        what = fmt::format("line {}: {}", m.line, m.message);
    }
    if (what.empty() && a.result.verdict != Verdict::ok) {
        std::string_view d = a.result.diagnostics;
        what = std::string(d.substr(0, d.find('\n')));
    }
    if (mentions_any(what, heldout)) what.clear();
    if (what.size() > 160) what = what.substr(0, 157) + "...";
    std::string line = fmt::format("- iteration {}: {}, score {}", a.iteration, verdict_name(a.result.verdict),
                                   score_text(a.result.score));
    if (!what.empty()) line += " -- " + what;
    return line + "\n";
}

const char* fence_tag(Language language) { return language->fence_tag.c_str(); }

std::string fenced(std::string_view source, Language language) {
    std::string out = fmt::format("```{}\n{}", fence_tag(language), source);
    if (source.empty() || source.back() != '\n') out += '\n';
    return out + "```\n";
}

size_t count_lines(std::string_view text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

// `source` in a fenced block, or, above `max_chars`, its head (two thirds) and tail (one third) cut
// at line ends, with a marker line saying how much was left out and a note after the block.
std::string quoted(const std::string& source, size_t max_chars, Language language) {
    if (source.size() <= max_chars) return fenced(source, language);
    const std::string_view all = source;
    size_t head = all.rfind('\n', max_chars * 2 / 3);
    head = head == std::string_view::npos ? 0 : head + 1;
    size_t tail = all.find('\n', all.size() - max_chars / 3);
    tail = tail == std::string_view::npos || tail < head ? all.size() : tail + 1;
    const std::string_view cut = all.substr(head, tail - head);
    std::string body(all.substr(0, head));
    body += fmt::format("{} [kevo: {} characters ({} lines) cut here]\n", language->directive_comment, cut.size(),
                        count_lines(cut));
    body += all.substr(tail);
    return fenced(body, language) +
           fmt::format("(This source is {} characters long; only its first {} and last {} lines are shown. "
                       "SEARCH/REPLACE edits can only quote lines shown here.)\n",
                       source.size(), count_lines(all.substr(0, head)), count_lines(all.substr(tail)));
}

// The brief up to `max_chars` (cut at a line end), with a marker when it was cut.
std::string bounded_brief(const std::string& brief, size_t max_chars) {
    if (brief.size() <= max_chars) return brief;
    size_t end = brief.rfind('\n', max_chars);
    end = end == std::string::npos ? max_chars : end + 1;
    return brief.substr(0, end) +
           fmt::format("[... the rest of the brief ({} characters) is left out to keep the prompt under its bound]\n",
                       brief.size() - end);
}

void signatures_section(std::string& out, const ProposalContext& c) {
    out += fmt::format("## Language and kernel signatures\nWrite {} for this device. The file must define these "
                       "kernels with exactly these signatures (parameters are positional):\n",
                       language_name(c.language));
    if (!c.spec) return;
    for (const auto& k : c.spec->kernels) {
        out += fmt::format("```{}\n{}\n```\n", fence_tag(c.language), signature_text(k, c.language));
        out += fmt::format("  {}: {}-D launch domain, default block {} threads, one cell per thread\n", k.name,
                           k.dims, describe(k.default_block, k.dims));
    }
}

void contract_section(std::string& out, const ProposalContext& c) {
    const std::string kernel = c.spec && !c.spec->kernels.empty() ? c.spec->kernels.front().name : "KERNEL";
    out += "\n## Launch contract\n"
           "The file holds kernel code only; no host code of yours runs. The host plans every launch from the "
           "task's launch domain and the geometry in force. A kernel may declare its geometry and tunable knobs in "
           "comment directives:\n";
    const std::string& comment = c.language->directive_comment;
    out += fmt::format("```\n{0} kevo: launch {1} block=32,8 per_thread=1,4\n{0} kevo: tune TILE 16 32 64\n```\n", comment,
                       kernel);
    out += "- `block=X[,Y[,Z]]` sets the block (work-group) shape.\n"
           "- `per_thread=X[,Y[,Z]]` says how many cells along each axis one thread covers; the host derives the "
           "grid per axis as grid = ceil(ceil(domain / per_thread) / block), so edge blocks reach past the domain "
           "and every thread must check its coordinates.\n"
           "- `grid=X[,Y[,Z]]` fixes the block count, where the task allows it.\n";
    out += fmt::format("- `tune NAME V1 V2 ...` declares a knob {} (the first value is the default); `launch` values "
                       "may name knobs.\n",
                       c.language->knob_binding);
    if (c.language->dynamic_shared && c.language->arch_targets)
        out += fmt::format("- `smem=BYTES` gives each block that much dynamic shared memory (`extern __shared__`), "
                           "above 48 KB where the device allows; a line `{} kevo: target sm_90a` compiles for the "
                           "architecture-specific target (wgmma, setmaxnreg), accepted only on a device of compute "
                           "capability 9.0.\n",
                           comment);
    if (!c.language->launch_note.empty()) out += "- " + c.language->launch_note + "\n";
    out += "A declaration that exceeds the device's limits or the compiled kernel's maximum block size is rejected.\n";
}

void geometry_section(std::string& out, const ProposalContext& c) {
    out += "\n## Geometry in force for the incumbent\n";
    const auto& res = c.incumbent.result.resources;
    bool any = false;
    for (const auto& k : res) {
        if (k.block.empty()) continue;
        any = true;
        out += fmt::format("- {}: block={} per_thread={}\n", k.kernel, join(k.block, ","),
                           k.per_thread.empty() ? "1" : join(k.per_thread, ","));
    }
    if (!any && c.spec)
        for (const auto& k : c.spec->kernels)
            out += fmt::format("- {}: block={} per_thread=1 (task default)\n", k.name,
                               describe(k.default_block, k.dims));
    const auto& knobs = !c.incumbent.result.defines.empty() ? c.incumbent.result.defines : c.incumbent.defines;
    if (!knobs.empty()) {
        out += "- knobs:";
        for (const auto& [k, v] : knobs) out += fmt::format(" {}={}", k, v);
        out += "\n";
    }
}

void device_section(std::string& out, const ProposalContext& c) {
    const DeviceInfo& d = c.device;
    out += fmt::format("\n## Device\n{} ({} backend{}{})\n", d.name.empty() ? "unknown device" : d.name,
                       d.backend.empty() ? "?" : d.backend, d.is_cpu ? ", a CPU running OpenCL" : "",
                       d.arch.empty() ? "" : ", " + d.arch);
    out += fmt::format("- compute units: {}\n", d.compute_units);
    if (d.max_threads_per_block) out += fmt::format("- max threads per block: {}\n", d.max_threads_per_block);
    if (d.shared_mem_per_block) out += fmt::format("- shared/local memory per block: {} KiB\n", d.shared_mem_per_block / 1024);
    if (d.l2_bytes) out += fmt::format("- last-level cache: {} KiB\n", d.l2_bytes / 1024);
    const CeilingsUsed& cal = c.ceilings;
    const auto figure = [](double v, const char* unit) { return v > 0 ? fmt::format("{:.1f} {}", v, unit) : std::string("unknown"); };
    out += fmt::format("- ceilings ({}): memory bandwidth {}, FP32 {}\n", cal.source.empty() ? "unknown source" : cal.source,
                       figure(cal.bandwidth_gbs, "GB/s"), figure(cal.fp32_gflops, "GFLOP/s"));
}

void scoring_section(std::string& out, const ProposalContext& c) {
    out += "\n## Scoring\n";
    if (c.spec) {
        out += fmt::format("The task is {}-bound; work model: {}.\n",
                           c.spec->bound == Bound::bandwidth ? "bandwidth" : "compute", c.spec->model);
        if (!c.spec->tolerance.empty()) out += fmt::format("Correctness: {}.\n", c.spec->tolerance);
    }
    out += "Per size, fraction = achieved / ceiling (achieved = modelled bytes or FLOPs / median time of a timed "
           "run). The score is the geometric mean of the fractions over the sizes, and 0 unless every size is "
           "correct. Correctness is checked on fresh random inputs and on outlier inputs every evaluation, and the "
           "final kernel is also scored on a size you are not shown, so never specialise for particular sizes or "
           "data.\n";
}

// Kernels from the rest of the population (other islands, other archive cells): their label, score,
// knob values and source, so that a model can borrow an idea without refining them.
void inspirations_section(std::string& out, const ProposalContext& c, size_t kept, size_t max_quoted_chars) {
    if (c.inspirations.empty() || kept == 0) return;
    out += "\n## Inspirations from the rest of the population\n"
           "Other kernels the search keeps, for ideas; SEARCH/REPLACE edits never apply to them.\n";
    for (size_t n = 0; n < c.inspirations.size() && n < kept; ++n) {
        const auto& i = c.inspirations[n];
        const Attempt& a = i.attempt;
        out += fmt::format("\n### {} ({}): score {}\n", i.label,
                           a.iteration > 0 ? fmt::format("iteration {}", a.iteration) : std::string("the seed"),
                           score_text(a.result.score));
        const auto& knobs = !a.result.defines.empty() ? a.result.defines : a.defines;
        if (!knobs.empty()) {
            out += "Knobs:";
            for (const auto& [k, v] : knobs) out += fmt::format(" {}={}", k, v);
            out += "\n";
        }
        out += quoted(a.source, max_quoted_chars, c.language);
    }
    if (kept < c.inspirations.size())
        out += fmt::format("[{} more left out to keep the prompt under its bound]\n", c.inspirations.size() - kept);
}

// What became of the last answer when it was not evaluated: without this the prompt would repeat
// itself word for word but for the iteration, and so would the model.
void unused_section(std::string& out, const ProposalContext& c, const Labels& heldout) {
    if (!c.unused) return;
    const UnusedAnswer& u = *c.unused;
    out += fmt::format("\n## Your last answer (iteration {}) was not used\n", u.iteration);
    const std::string detail = scrubbed(u.detail, heldout, 3, "  ");  // each line bounded too
    switch (u.kind) {
        case UnusedAnswer::Kind::no_code:
            out += "It held no usable code:\n" + detail +
                   "Reply with the whole kernel file in one fenced code block, or with SEARCH/REPLACE edits.\n";
            break;
        case UnusedAnswer::Kind::edit_failed:
            out += fmt::format("Its SEARCH/REPLACE edits could not be applied:\n{}"
                               "Copy each SEARCH text character for character from the source of the {}, or reply "
                               "with the whole kernel file instead.\n",
                               detail, c.previous && !c.fresh_approach ? "previous attempt" : "incumbent");
            break;
        case UnusedAnswer::Kind::duplicate:
            out += fmt::format("It was identical to {} (the same source and knob values), so it was not evaluated "
                               "again. Propose a kernel that differs from every earlier one.\n",
                               u.duplicate_of == 0  ? std::string("the seed")
                               : u.duplicate_of > 0 ? fmt::format("the candidate of iteration {}", u.duplicate_of)
                                                    : std::string("an earlier candidate"));
            break;
        case UnusedAnswer::Kind::proposer_error:
            out += "No usable answer arrived; the request failed:\n" + detail +
                   "If the answer was cut short or took too long, answer more briefly (edits are shorter than a "
                   "whole file).\n";
            break;
    }
    if (u.in_a_row > 1) out += fmt::format("That makes {} answers in a row that were not used.\n", u.in_a_row);
}

void answer_section(std::string& out, const ProposalContext& c) {
    const bool base_is_previous = c.previous && !c.fresh_approach;
    out += fmt::format(
        "\n## Answer format\n"
        "Either reply with the complete kernel file (all kernels, with any `{2} kevo:` directives) in ONE fenced "
        "code block:\n```{0}\n...\n```\n"
        "or, for a small change, reply with one or more edits against the source of the {1}:\n"
        "<<<<<<< SEARCH\nexact lines of that source\n=======\nreplacement lines\n>>>>>>> REPLACE\n"
        "Each SEARCH text must be whole lines copied character for character and must match exactly one place; "
        "edits are applied in order. Keep explanations short; only the code is used.\n",
        fence_tag(c.language), base_is_previous ? "previous attempt" : "incumbent", c.language->directive_comment);
}

// The knowledge notes the run chose for this task (--knowledge), the first `kept` of them.
void knowledge_section(std::string& out, const ProposalContext& c, size_t kept) {
    if (kept == 0) return;
    out += "\n## Notes from the knowledge base\n"
           "What made fast kernels fast for tasks like this one. Advice, not rules: the contract above decides.\n";
    for (size_t i = 0; i < kept; ++i) out += note_prompt_text(c.knowledge[i]);
    if (kept < c.knowledge.size())
        out += fmt::format("[{} more left out to keep the prompt under its bound]\n", c.knowledge.size() - kept);
}

// How much of each part a prompt quotes; compose_prompt shrinks it until the prompt fits its bound.
struct Shape {
    size_t history = 0;            // recent history lines kept (the newest ones)
    size_t inspirations = 0;       // inspirations kept (the first ones)
    size_t knowledge = 0;          // knowledge notes kept (the first, most specific ones)
    size_t previous_chars = 0;     // bound on the previous attempt's quoted source
    size_t incumbent_chars = 0;    // bound on the incumbent's quoted source
    size_t brief_chars = 0;
};

std::string render(const ProposalContext& c, const Labels& heldout, const Shape& shape) {
    const std::string task = c.spec ? c.spec->name : "the task";
    std::string out = fmt::format(
        "You are optimising the GPU kernel of the task `{}` ({}) for speed while keeping it correct. "
        "Propose one improved kernel file.\n",
        task, c.spec ? c.spec->regime : std::string("scientific kernel"));
    if (c.iteration > 0) out += fmt::format("This is iteration {}.\n", c.iteration);

    if (!c.brief.empty()) {
        out += "\n## Task brief\n" + bounded_brief(c.brief, shape.brief_chars);
        if (out.back() != '\n') out += '\n';
    }
    out += "\n";
    signatures_section(out, c);
    contract_section(out, c);
    geometry_section(out, c);
    device_section(out, c);
    scoring_section(out, c);
    knowledge_section(out, c, shape.knowledge);

    out += fmt::format("\n## Incumbent (best so far{}): score {}\n",
                       c.incumbent.iteration > 0 ? fmt::format(", iteration {}", c.incumbent.iteration) : ", the seed",
                       score_text(c.incumbent.result.score));
    out += quoted(c.incumbent.source, shape.incumbent_chars, c.language);
    out += feedback(c.incumbent, heldout);

    if (c.fresh_approach) {
        out += "\n## Direction: a fresh approach\n"
               "Recent attempts stopped improving. Do not refine them: propose a structurally different approach "
               "from the incumbent's (for example a different work decomposition, data reuse through shared/local "
               "memory or registers, several cells per thread, a different memory access order, fused or split "
               "steps), keeping the result correct.\n";
    } else {
        if (c.previous) {
            const Attempt& p = *c.previous;
            out += fmt::format("\n## Previous attempt (iteration {})\n", p.iteration);
            if (p.source == c.incumbent.source && p.defines == c.incumbent.defines) {
                out += "Its source is the incumbent's, shown above.\n";
            } else {
                out += quoted(p.source, shape.previous_chars, c.language);
            }
            out += feedback(p, heldout);
        }
        if (!c.history.empty() && shape.history > 0) {
            out += "\n## Recent history (oldest first)\n";
            const size_t skipped = c.history.size() - std::min(shape.history, c.history.size());
            if (skipped > 0)
                out += fmt::format("[{} older attempt{} left out to keep the prompt under its bound]\n", skipped,
                                   skipped == 1 ? "" : "s");
            for (size_t i = skipped; i < c.history.size(); ++i) out += history_line(c.history[i], heldout);
        }
    }
    inspirations_section(out, c, shape.inspirations, shape.incumbent_chars);
    unused_section(out, c, heldout);
    answer_section(out, c);
    return out;
}

// The smaller of a quote's bound and the source it quotes, less `over`, never below the floor.
size_t shrunk(size_t bound, size_t size, size_t over, size_t floor) {
    const size_t now = std::min(bound, size);
    return now > floor + over ? now - over : floor;
}

}  // namespace

std::string describe_attempt(const Attempt& attempt, Language) {
    Labels heldout;
    collect_heldout(attempt.result, heldout);
    for (const auto& s : attempt.result.sizes)
        if (!s.heldout) heldout.erase(s.label);
    return feedback(attempt, heldout);
}

std::string build_prompt(const ProposalContext& c, const PromptLimits& limits) { return compose_prompt(c, limits).text; }

BuiltPrompt compose_prompt(const ProposalContext& c, const PromptLimits& limits) {
    const Labels heldout = heldout_labels(c);
    const bool previous_rejected = c.previous && c.previous->result.verdict == Verdict::rejected;
    Shape shape;
    shape.history = c.history.size();
    shape.inspirations = c.inspirations.size();
    shape.knowledge = c.knowledge.size();
    shape.previous_chars = previous_rejected ? limits.max_rejected_chars : limits.max_quoted_chars;
    shape.incumbent_chars = limits.max_quoted_chars;
    shape.brief_chars = c.brief.size();
    const size_t budget = static_cast<size_t>(std::max(0, limits.max_tokens)) * kCharsPerToken;
    const size_t previous_size = c.previous ? c.previous->source.size() : 0;
    const auto built = [&](std::string text) {
        BuiltPrompt p{std::move(text), {}};
        for (size_t i = 0; i < shape.knowledge; ++i) p.notes.push_back(c.knowledge[i].id);
        return p;
    };
    // History goes before the task's own text does: each step cuts the next part, in order.
    for (std::string out = render(c, heldout, shape);; out = render(c, heldout, shape)) {
        if (out.size() <= budget) return built(std::move(out));
        const size_t over = out.size() - budget;
        if (shape.history > 0) {
            --shape.history;
        } else if (shape.inspirations > 0) {
            --shape.inspirations;
        } else if (shape.knowledge > 0) {
            --shape.knowledge;
        } else if (c.previous && std::min(shape.previous_chars, previous_size) > kMinQuotedChars) {
            shape.previous_chars = shrunk(shape.previous_chars, previous_size, over, kMinQuotedChars);
        } else if (std::min(shape.incumbent_chars, c.incumbent.source.size()) > kMinQuotedChars) {
            shape.incumbent_chars = shrunk(shape.incumbent_chars, c.incumbent.source.size(), over, kMinQuotedChars);
        } else if (shape.brief_chars > kMinBriefChars) {
            shape.brief_chars = shrunk(shape.brief_chars, c.brief.size(), over, kMinBriefChars);
        } else {
            return built(std::move(out));  // as small as it gets: the rest is the task's contract and the answer format
        }
    }
}

}  // namespace kevo
