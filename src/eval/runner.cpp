// The worker-side evaluation cascade (see runner.hpp and DESIGN.md "The evaluation cascade").
#include "eval/runner.hpp"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "core/hash.hpp"
#include "core/stats.hpp"
#include "eval/compile_stage.hpp"
#include "eval/device_case.hpp"
#include "eval/directives.hpp"
#include "eval/roofline.hpp"
#include "task/registry.hpp"

namespace kevo {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr size_t kMaxCachedModules = 64;
constexpr double kImplausibleFraction = 1.05;

uint64_t trial_seed(uint64_t seed, const SizeSpec& size, Trial trial) {
    return hash64(size.label, seed) ^ (trial == Trial::outlier ? 0x5DEECE66Dull : 0);
}

std::vector<const SizeSpec*> selected_sizes(const TaskSpec& spec, const std::string& profile, SizeSelection which) {
    std::vector<const SizeSpec*> out;
    for (const auto& s : spec.profiles.at(profile)) {
        const bool take = which == SizeSelection::all || (which == SizeSelection::in) != s.heldout;
        if (take) out.push_back(&s);
    }
    return out;
}

std::string constants_text(const Case& c) {
    std::string out;
    for (const auto& [name, value] : c.constants) {
        // Integers (seeds, counts) in full; physical constants to 6 significant digits.
        const bool integral = value == std::floor(value) && std::fabs(value) < 1e15;
        out += integral ? fmt::format("{}{}={:.0f}", out.empty() ? "" : ", ", name, value)
                        : fmt::format("{}{}={:g}", out.empty() ? "" : ", ", name, value);
    }
    return out;
}

// The grid the host derived (or the candidate fixed) must fit the device; empty when it does.
std::string grid_beyond_limits(const Case& c, const std::vector<Launch>& launches, const DeviceInfo& device) {
    for (size_t i = 0; i < launches.size(); ++i) {
        const Dim3& g = launches[i].grid;
        const uint64_t axes[3] = {g.x, g.y, g.z};
        for (int a = 0; a < 3; ++a)
            if (device.max_grid[a] && axes[a] > device.max_grid[a])
                return fmt::format("launch {} ('{}') needs a grid of {}x{}x{} blocks; the device allows at most {} along {} "
                                   "(use a larger block or more cells per thread)",
                                   i, c.launches[i].kernel, g.x, g.y, g.z, device.max_grid[a], "xyz"[a]);
    }
    return {};
}

}  // namespace

Runner::Runner(Device& device, ReferenceCache& references, std::function<void(const nlohmann::json&)> emit)
    : device_(device), references_(references), emit_(std::move(emit)) {}

void Runner::stage(const char* name, const std::string& size, const char* trial, size_t launches) {
    nlohmann::json e = {{"event", "stage"}, {"stage", name}};
    if (!size.empty()) e["size"] = size;
    if (trial) e["trial"] = trial;
    if (launches) e["launches"] = launches;
    emit_(e);
}

Expected<Runner::Compiled> Runner::compile(const std::string& source, const std::vector<std::string>& defines) {
    std::string key_text = source;
    for (const auto& d : defines) key_text += "\n-D" + d;
    const std::string key = hex64(hash64(key_text));
    if (auto it = compiled_.find(key); it != compiled_.end()) return it->second;
    auto outcome = device_.compile(source, defines);
    if (!outcome) return outcome.error();
    Compiled c{outcome->module.value_or(0), outcome->log, outcome->seconds, outcome->module.has_value()};
    if (compiled_.size() >= kMaxCachedModules) {
        for (auto& [k, v] : compiled_)
            if (v.ok) device_.release_module(v.module);
        compiled_.clear();
    }
    compiled_[key] = c;
    return c;
}

Expected<CompileOutcome> Runner::compile_outcome(const std::string& source, const std::vector<std::string>& defines) {
    auto c = compile(source, defines);
    if (!c) return c.error();
    CompileOutcome o;
    if (c->ok) o.module = c->module;
    o.log = c->log;
    o.seconds = c->seconds;
    return o;
}

Expected<Reference> Runner::device_reference(const Task& task, const SizeSpec& size, uint64_t case_seed, Trial trial,
                                             const Case& c) {
    const TaskSpec& spec = task.spec();
    EvalRequest seed;
    seed.task = spec.name;
    seed.source = std::string(task_file(spec.name, fmt::format("seed.{}", language_suffix(device_.language()))));
    auto compiled = run_compile_stage(spec, seed, [&](const std::string& source, const std::vector<std::string>& defines) {
        return compile_outcome(source, defines);
    });
    if (!compiled) return compiled.error();
    if (compiled->verdict) return make_error("the seed failed to compile: " + compiled->diagnostics);
    std::map<std::string, uint32_t> kernels;
    std::map<std::string, Geometry> geometry;
    for (const auto& k : spec.kernels) {
        auto handle = device_.kernel(*compiled->module, k.name);
        if (!handle) return handle.error();
        auto g = resolve_geometry(compiled->directives, k, compiled->knobs);
        if (!g) return g.error();
        kernels[k.name] = *handle;
        geometry[k.name] = *g;
    }
    auto dc = device_cases_.get(task, size, case_seed, trial, c);
    if (!dc) return dc.error();
    if (auto r = dc->reset(); !r) return r.error();
    const auto launches = dc->launches(c, kernels, geometry);
    if (auto r = device_.run(launches); !r) return r.error();
    auto outputs = dc->download_results(c);
    if (!outputs) return outputs.error();
    return Reference{std::move(*outputs)};
}

EvalResult Runner::evaluate(const EvalRequest& request, const Calibration& ceilings) {
    const auto start = Clock::now();
    device_cases_.begin_evaluation();
    EvalResult result;
    result.task = request.task;
    result.backend = device_.info().backend;
    result.device = device_.info().name;
    result.profile = request.profile;
    result.seed = request.seed;
    result.ceiling_source = ceilings.source;
    auto finish = [&](Verdict v, std::string diagnostics) {
        result.verdict = v;
        result.diagnostics = std::move(diagnostics);
        result.stage_seconds.total = since(start);
        return result;
    };

    auto task_or = make_task(request.task);
    if (!task_or) return finish(Verdict::rejected, task_or.error().message);
    const Task& task = **task_or;
    const TaskSpec& spec = task.spec();
    if (!spec.profiles.count(request.profile))
        return finish(Verdict::rejected, fmt::format("task {} has no profile '{}'", spec.name, request.profile));

    // Directives, knobs, compilation.
    stage("compile");
    const auto compile_start = Clock::now();
    auto compiled = run_compile_stage(spec, request, [&](const std::string& source, const std::vector<std::string>& defines) {
        return compile_outcome(source, defines);
    });
    result.stage_seconds.compile = since(compile_start);
    if (!compiled) return finish(Verdict::runtime_error, "compiler failure: " + compiled.error().message);
    result.defines = compiled->knobs;
    result.compile_messages = compiled->messages;
    if (compiled->verdict) return finish(*compiled->verdict, compiled->diagnostics);
    const Directives& directives = compiled->directives;
    const auto& knobs = compiled->knobs;

    // Entry points, resources and geometry.
    std::map<std::string, uint32_t> kernels;
    std::map<std::string, Geometry> geometry;
    for (const auto& k : spec.kernels) {
        auto handle = device_.kernel(*compiled->module, k.name);
        if (!handle)
            return finish(Verdict::compile_error, fmt::format("entry point '{}' not found; the task needs: {}", k.name,
                                                              k.cuda_signature.empty() ? k.name : (device_.language() == Language::cuda ? k.cuda_signature : k.opencl_signature)));
        auto attributes = device_.attributes(*handle);
        if (!attributes) return finish(Verdict::runtime_error, attributes.error().message);
        auto g = resolve_geometry(directives, k, knobs);
        if (!g) return finish(Verdict::rejected, g.error().message);
        if (auto valid = validate_geometry(k.name, *g, device_.info(), *attributes); !valid)
            return finish(Verdict::rejected, valid.error().message);
        kernels[k.name] = *handle;
        geometry[k.name] = *g;
        result.resources.push_back({k.name, attributes->registers, attributes->shared_bytes, attributes->local_bytes,
                                    attributes->max_threads, {g->block.x, g->block.y, g->block.z},
                                    {g->per_thread.x, g->per_thread.y, g->per_thread.z}});
    }

    // Correctness: every selected size, nominal then outlier trial; the first failure ends it.
    // The nominal trial of every size stays resident (host and device) for the timing phase.
    struct Kept {
        const SizeSpec* size;
        std::shared_ptr<const Case> c;
        std::shared_ptr<const Reference> ref;
        DeviceCase dc;
    };
    std::vector<Kept> kept;
    const auto sizes = selected_sizes(spec, request.profile, request.sizes);
    const auto correctness_start = Clock::now();
    double reference_seconds = 0;
    for (const SizeSpec* size : sizes) {
        SizeResult sr;
        sr.label = size->label;
        sr.heldout = size->heldout;
        for (Trial trial : {Trial::nominal, Trial::outlier}) {
            const uint64_t seed = trial_seed(request.seed, *size, trial);
            stage("reference", size->label, trial_name(trial));
            const auto ref_start = Clock::now();
            const std::shared_ptr<const Case> case_ptr = cases_.get(task, *size, seed, trial);
            const Case& c = *case_ptr;
            std::shared_ptr<const Reference> ref;
            if (size->device_reference || request.device_reference) {
                auto device_ref = references_.get_or_compute(task, *size, seed, trial, device_.info().name,
                                                             [&] { return device_reference(task, *size, seed, trial, c); });
                if (!device_ref) {
                    result.stage_seconds.correctness = since(correctness_start);
                    return finish(Verdict::runtime_error, fmt::format("size {}: the reference (the task's seed run on "
                                                                      "this device) failed: {}", size->label,
                                                                      device_ref.error().message));
                }
                ref = std::move(*device_ref);
            } else {
                ref = references_.share(task, *size, c, seed, trial);
            }
            reference_seconds += since(ref_start);
            auto fail = [&](Verdict v, const std::string& what) {
                sr.correct = false;
                sr.diagnostics = what;
                result.sizes.push_back(sr);
                result.stage_seconds.correctness = since(correctness_start) - reference_seconds;
                return finish(v, fmt::format("size {} ({} trial: {}): {}", size->label, trial_name(trial), constants_text(c), what));
            };
            auto dc = device_cases_.get(task, *size, seed, trial, c);
            if (!dc) return fail(Verdict::runtime_error, "could not set up the buffers: " + dc.error().message);
            if (auto r = dc->reset(); !r) return fail(Verdict::runtime_error, r.error().message);
            const auto launches = dc->launches(c, kernels, geometry);
            if (auto too_big = grid_beyond_limits(c, launches, device_.info()); !too_big.empty()) {
                sr.diagnostics = too_big;
                result.sizes.push_back(sr);
                return finish(Verdict::rejected, fmt::format("size {}: {}", size->label, too_big));
            }
            stage("run", size->label, trial_name(trial), launches.size());
            if (auto r = device_.run(launches); !r) return fail(Verdict::runtime_error, r.error().message);
            stage("check", size->label, trial_name(trial));
            auto guards = dc->check_guards();
            if (!guards) return fail(Verdict::runtime_error, guards.error().message);
            if (!guards->empty()) return fail(Verdict::runtime_error, *guards);
            auto modified = dc->modified_inputs(c);
            if (!modified) return fail(Verdict::runtime_error, modified.error().message);
            if (!modified->empty())
                return fail(Verdict::incorrect, fmt::format("input buffer '{}' was modified; inputs are read-only", modified->front()));
            auto outputs = dc->download_results(c);
            if (!outputs) return fail(Verdict::runtime_error, outputs.error().message);
            const CheckResult check = task.check(*size, c, *ref, *outputs);
            add_trial_check(sr, {trial_name(trial), check.kind, check.error, check.tolerance, check.worst_index, check.pass});
            if (!check.pass) return fail(Verdict::incorrect, check.message);
            if (trial == Trial::nominal) {
                // The checked output's checksums: the re-check after timing compares with them.
                if (auto r = dc->remember_results(c); !r) return fail(Verdict::runtime_error, r.error().message);
                kept.push_back({size, case_ptr, ref, std::move(*dc)});
            }
        }
        sr.correct = true;
        result.sizes.push_back(sr);
    }
    result.stage_seconds.correctness = since(correctness_start) - reference_seconds;

    // Performance: warm-ups, then repeated timed runs, each from restored state with a cold cache.
    if (!request.check_only) {
        const auto timing_start = Clock::now();
        for (size_t i = 0; i < kept.size(); ++i) {
            Kept& k = kept[i];
            SizeResult& sr = result.sizes[i];
            auto fail = [&](Verdict v, const std::string& what) {
                sr.correct = v != Verdict::incorrect && v != Verdict::runtime_error ? sr.correct : false;
                sr.diagnostics = what;
                result.stage_seconds.timing = since(timing_start);
                return finish(v, fmt::format("size {} (timed runs): {}", k.size->label, what));
            };
            DeviceCase* dc = &k.dc;
            const Case& kc = *k.c;
            const auto launches = dc->launches(kc, kernels, geometry);
            auto timed_runs = [&](int count, std::vector<double>* samples) -> Expected<void> {
                for (int r = 0; r < count; ++r) {
                    if (auto e = dc->reset(); !e) return e;
                    if (auto e = flusher_.flush(); !e) return e;
                    stage("timed_run", k.size->label, nullptr, launches.size());
                    auto t = device_.run_timed(launches);
                    if (!t) return t.error();
                    if (samples) samples->push_back(*t);
                }
                return {};
            };
            stage("timing", k.size->label);
            std::vector<double> samples;
            if (auto e = timed_runs(request.warmup, nullptr); !e) return fail(Verdict::runtime_error, e.error().message);
            if (auto e = timed_runs(std::max(1, request.repeat), &samples); !e) return fail(Verdict::runtime_error, e.error().message);
            Summary s = summarize(samples);
            Rate rate = measure_rate(spec.bound, kc.work, s.median, kc.working_set_bytes, ceilings);
            double ceiling = request.roofline == RooflineMode::static_peak ? rate.ceiling_static : rate.ceiling_workload;
            // Plausibility is judged against what the hardware can do at this working set (cache
            // included), whichever ceiling the score uses.
            auto physical = [&] { return std::max(rate.ceiling_static, rate.ceiling_workload); };
            if (physical() > 0 && rate.achieved / physical() > kImplausibleFraction) {
                // Faster than the hardware allows: measure once more before believing it.
                samples.clear();
                if (auto e = timed_runs(std::max(1, request.repeat), &samples); !e) return fail(Verdict::runtime_error, e.error().message);
                s = summarize(samples);
                rate = measure_rate(spec.bound, kc.work, s.median, kc.working_set_bytes, ceilings);
                ceiling = request.roofline == RooflineMode::static_peak ? rate.ceiling_static : rate.ceiling_workload;
                sr.implausible = rate.achieved / physical() > kImplausibleFraction;
                if (sr.implausible)
                    result.warnings.push_back(fmt::format("size {}: {:.3g} {} is {:.2f}x what the device reached at this "
                                                          "working set; the figure is implausible (check the model or the "
                                                          "calibration)", k.size->label, rate.achieved, rate.unit,
                                                          rate.achieved / physical()));
            }
            // The last timed run's output must still be right: catches kernels that skip work when
            // called again or cache results across calls.
            stage("check", k.size->label, "timed");
            auto guards = dc->check_guards();
            if (!guards) return fail(Verdict::runtime_error, guards.error().message);
            if (!guards->empty()) return fail(Verdict::runtime_error, *guards);
            // A write into the pristine copies would have changed what every timed run started from.
            auto pristine = dc->verify_pristine();
            if (!pristine) return fail(Verdict::runtime_error, pristine.error().message);
            if (!pristine->empty()) return fail(Verdict::runtime_error, *pristine);
            // Bit-identical to the checked output of the nominal trial: right without a download.
            auto unchanged = dc->results_as_remembered(kc);
            if (!unchanged) return fail(Verdict::runtime_error, unchanged.error().message);
            if (!*unchanged) {
                auto outputs = dc->download_results(kc);
                if (!outputs) return fail(Verdict::runtime_error, outputs.error().message);
                const CheckResult recheck = task.check(*k.size, kc, *k.ref, *outputs);
                if (!recheck.pass)
                    return fail(Verdict::incorrect, "the output of a timed run is wrong although the first run was "
                                                    "right (does the kernel skip work when called again?): " +
                                                    recheck.message);
            }
            sr.timed = true;
            sr.seconds = s.median;
            sr.seconds_min = s.min;
            sr.seconds_max = s.max;
            sr.cv = s.cv;
            sr.samples = s.count;
            sr.achieved = rate.achieved;
            sr.unit = rate.unit;
            sr.ceiling_static = rate.ceiling_static;
            sr.ceiling_workload = rate.ceiling_workload;
            sr.ceiling = ceiling;
            sr.fraction = ceiling > 0 ? rate.achieved / ceiling : 0;
            sr.work = kc.work;
        }
        result.stage_seconds.timing = since(timing_start);
        std::vector<double> fractions;
        for (const auto& sr : result.sizes) {
            if (sr.heldout) result.heldout_fraction = sr.fraction;
            else fractions.push_back(sr.fraction);
        }
        if (!fractions.empty()) result.score = geometric_mean(fractions);
    }
    std::string summary = fmt::format("correct at {} size{}", result.sizes.size(), result.sizes.size() == 1 ? "" : "s");
    if (result.score) summary += fmt::format("; score {:.4f}", *result.score);
    return finish(Verdict::ok, summary);
}

}  // namespace kevo
