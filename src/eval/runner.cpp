// The worker-side evaluation cascade (see runner.hpp and docs/evaluation.md).
#include "eval/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/hash.hpp"
#include "eval/compile_stage.hpp"
#include "eval/roofline.hpp"
#include "eval/signature_check.hpp"
#include "eval/device_lease.hpp"
#include "eval/host_memory.hpp"
#include "eval/replay_timing.hpp"
#include "eval/timing.hpp"
#include "task/registry.hpp"

namespace kevo {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr size_t kMaxCachedModules = 64;

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

// The case as scoring reads it: everything but the buffers (which may be gigabytes).
std::shared_ptr<const Case> shape_of(const Case& c) {
    auto shape = std::make_shared<Case>();
    shape->launches = c.launches;
    shape->results = c.results;
    shape->constants = c.constants;
    shape->work = c.work;
    shape->working_set_bytes = c.working_set_bytes;
    shape->flops_by_class = c.flops_by_class;
    shape->roofline_bytes = c.roofline_bytes;
    return shape;
}

std::string gib(uint64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1ull << 30)); }

}  // namespace

Runner::Runner(Device& device, ReferenceCache& references, CeilingKeeper& ceilings,
               std::function<void(const nlohmann::json&)> emit)
    : device_(device), references_(references), ceilings_(ceilings), emit_(std::move(emit)) {}

void Runner::stage(Stage name, const std::string& size, const char* trial, size_t launches) {
    const StageEvent event{name, size, trial ? trial : "", launches};
    where_ = event.describe();
    emit_(stage_message(event));
}

Expected<CompileOutcome> Runner::compile(const std::string& source, const std::vector<std::string>& defines,
                                         const std::string& arch) {
    std::string key_text = source;
    for (const auto& d : defines) key_text += "\n-D" + d;
    key_text += "\n--arch=" + arch;
    const std::string key = hex64(hash64(key_text));
    if (auto it = compiled_.find(key); it != compiled_.end()) return it->second;
    auto outcome = arch.empty() ? device_.compile(source, defines) : device_.compile_for_arch(source, defines, arch);
    if (!outcome) return outcome.error();
    if (compiled_.size() >= kMaxCachedModules) {
        for (auto& [k, v] : compiled_)
            if (v.module) device_.release_module(*v.module);
        compiled_.clear();
    }
    compiled_[key] = *outcome;
    return *outcome;
}

Expected<uint32_t> Runner::image_module(const KernelImage& image) {
    const std::string key = hex64(hash64(image.binary));
    if (auto it = image_modules_.find(key); it != image_modules_.end()) return it->second;
    auto module = device_.load_image(image);
    if (!module) return module.error();
    if (image_modules_.size() >= kMaxCachedModules) {
        for (auto& [k, m] : image_modules_) device_.release_module(m);
        image_modules_.clear();
    }
    image_modules_[key] = *module;
    return *module;
}

namespace {
const KernelImage* image_of(const CompileStage& compiled, const std::string& kernel) {
    for (const auto& image : compiled.images)
        if (image.kernel == kernel) return &image;
    return nullptr;
}
}  // namespace

std::optional<Runner::Stop> Runner::bind(const Task& task, const CompileStage& compiled, BoundKernels& kernels,
                                         EvalResult& result) {
    const Language language = compiled.language ? compiled.language : device_.language();
    for (const auto& k : task.spec().kernels) {
        // A kernel compiled ahead of time is loaded from its image; otherwise it is in the module.
        const KernelImage* image = image_of(compiled, k.name);
        Expected<uint32_t> handle = make_error("no module");
        if (image) {
            auto module = image_module(*image);
            if (!module) return Stop{Verdict::compile_error, "the compiled kernel cannot be loaded: " + module.error().message};
            handle = device_.kernel(*module, image->entry);
        } else if (compiled.module) {
            handle = device_.kernel(*compiled.module, k.name);
        }
        if (!handle)
            return Stop{Verdict::compile_error,
                        fmt::format("entry point '{}' not found; the task needs: {}", k.name,
                                    k.params.empty() ? k.name : signature_text(k, language))};
        auto params = device_.parameters(*handle);
        if (!params) return Stop{Verdict::runtime_error, params.error().message};
        if (image && params->known)  // the compiler's own trailing parameters are not the task's
            params->params.resize(params->params.size() - std::min<size_t>(image->trailing_null_params, params->params.size()));
        if (auto wrong = signature_mismatch(k, language, *params)) return Stop{Verdict::compile_error, *wrong};
        auto attributes = device_.attributes(*handle);
        if (!attributes) return Stop{Verdict::runtime_error, attributes.error().message};
        auto g = resolve_geometry(compiled.directives, k, compiled.knobs);
        if (!g) return Stop{Verdict::rejected, g.error().message};
        if (image) {
            if (image->threads_per_block) g->threads = Dim3{image->threads_per_block, 1, 1};
            g->dynamic_shared_bytes = image->dynamic_shared_bytes;
            g->null_args = image->trailing_null_params;
        }
        if (auto valid = validate_geometry(k.name, *g, device_.info(), *attributes); !valid)
            return Stop{Verdict::rejected, valid.error().message};
        kernels.handles[k.name] = *handle;
        kernels.geometry[k.name] = *g;
        result.resources.push_back({k.name, attributes->registers, attributes->shared_bytes, attributes->local_bytes,
                                    attributes->max_threads, {g->block.x, g->block.y, g->block.z},
                                    {g->per_thread.x, g->per_thread.y, g->per_thread.z}, g->dynamic_shared_bytes});
    }
    return std::nullopt;
}

// The device reference: the task's seed run on this device, and where the task folder ships a
// recipe_reference kernel (the value of a second admitted recipe, e.g. gemm_w4a16's 16-bit weights),
// that kernel too, its outputs after the seed's, as the CPU reference orders them.
Expected<Reference> Runner::device_reference(const Task& task, const SizeSpec& size, uint64_t seed, Trial trial,
                                             std::shared_ptr<const Case> c) {
    const TaskSpec& spec = task.spec();
    const std::string suffix(language_suffix(device_.language()));
    Reference ref;
    for (const char* stem : {"seed", "recipe_reference"}) {
        const std::string_view source = task_file(spec.name, fmt::format("{}.{}", stem, suffix));
        if (source.empty()) continue;
        auto outputs = run_reference_kernel(task, size, seed, trial, c, std::string(source), stem);
        if (!outputs) return outputs.error();
        for (auto& output : *outputs) ref.results.push_back(std::move(output));
    }
    return ref;
}

Expected<std::vector<std::vector<std::byte>>> Runner::run_reference_kernel(const Task& task, const SizeSpec& size,
                                                                           uint64_t seed, Trial trial,
                                                                           std::shared_ptr<const Case> c,
                                                                           std::string source, const std::string& stem) {
    const TaskSpec& spec = task.spec();
    EvalRequest seed_kernel;
    seed_kernel.task = spec.name;
    seed_kernel.source = std::move(source);
    auto compiled = run_compile_stage(spec, seed_kernel, device_.language(), device_.info().arch,
                                      [&](const std::string& text, const std::vector<std::string>& defines,
                                          const std::string& arch) { return compile(text, defines, arch); });
    if (!compiled) return compiled.error();
    if (compiled->verdict) return make_error(fmt::format("the {} failed to compile: {}", stem, compiled->diagnostics));
    BoundKernels kernels;
    EvalResult unused;
    if (auto stop = bind(task, *compiled, kernels, unused))
        return make_error(fmt::format("the {} cannot be launched: {}", stem, stop->diagnostics));
    auto run = CaseRun::create(device_, device_cases_, task, size, seed, trial, std::move(c), kernels);
    if (!run) return run.error();
    if (auto fault = run->run()) return make_error(fmt::format("the {} failed: {}", stem, fault->message));
    return run->outputs();
}

std::shared_ptr<const Reference> Runner::reference_for(const Task& task, const SizeSpec& size,
                                                       const std::shared_ptr<const Case>& c, uint64_t seed, Trial trial,
                                                       const EvalRequest& request, std::string& error) {
    if (!size.device_reference && !request.device_reference) return references_.share(task, size, *c, seed, trial);
    auto ref = references_.get_or_compute(task, size, seed, trial, device_.info().name,
                                          [&] { return device_reference(task, size, seed, trial, c); });
    if (!ref) {
        error = ref.error().message;
        return nullptr;
    }
    return std::move(*ref);
}

std::optional<Runner::Stop> Runner::check_size(const Task& task, const SizeSpec& size, const EvalRequest& request,
                                               const BoundKernels& kernels, SizeResult& sr,
                                               std::vector<CheckedSize>& kept) {
    for (Trial trial : {Trial::nominal, Trial::outlier}) {
        const uint64_t seed = trial_seed(request.seed, size, trial);
        stage(Stage::reference, size.label, trial_name(trial));
        const std::shared_ptr<const Case> c = cases_.get(task, size, seed, trial);
        std::string reference_error;
        const auto reference_start = Clock::now();
        auto ref = reference_for(task, size, c, seed, trial, request, reference_error);
        reference_seconds_ += since(reference_start);
        if (!ref) {
            // kevo's own reference, not the candidate: an environment error.
            environment_fault_ = EnvironmentFault{fmt::format("size {} ({} trial): kevo's reference (the task's seed run on "
                                                              "this device) failed: {}", size.label, trial_name(trial),
                                                              reference_error)};
            return Stop{Verdict::runtime_error, environment_fault_->message};
        }
        auto fail = [&](const Fault& f) {
            sr.correct = false;
            sr.diagnostics = f.message;
            return Stop{f.verdict, fmt::format("size {} ({} trial: {}): {}", size.label, trial_name(trial),
                                               constants_text(*c), f.message)};
        };
        auto run = CaseRun::create(device_, device_cases_, task, size, seed, trial, c, kernels);
        if (!run && !device_.is_poisoned()) {
            // The case's buffers do not fit the device (nothing of the candidate's has run on them yet;
            // a context its earlier run left unusable stays the candidate's runtime error below).
            environment_fault_ = EnvironmentFault{fmt::format("size {} ({} trial): kevo could not allocate the case's "
                                                              "buffers on the device: {}", size.label, trial_name(trial),
                                                              run.error().message)};
            return Stop{Verdict::runtime_error, environment_fault_->message};
        }
        if (!run) return fail({Verdict::runtime_error, "could not set up the buffers: " + run.error().message});
        if (auto too_big = grid_beyond_limits(*c, run->launches(), device_.info()); !too_big.empty()) {
            sr.diagnostics = too_big;
            return Stop{Verdict::rejected, fmt::format("size {}: {}", size.label, too_big)};
        }
        stage(Stage::run, size.label, trial_name(trial), run->launches().size());
        if (auto fault = run->run()) return fail(*fault);
        stage(Stage::check, size.label, trial_name(trial));
        CheckResult check;
        auto fault = run->verify(task, size, *ref, &check);
        if (!check.kind.empty())
            add_trial_check(sr, {trial_name(trial), check.kind, check.error, check.tolerance, check.worst_index, check.pass});
        if (fault) return fail(*fault);
        if (trial == Trial::nominal) {
            // Resident for timing only while the kept sizes fit the resident-case budget: kept sizes
            // add up, and on a CPU device every one is host memory (fused_moe's paper sizes hold
            // 2.6 GiB of weights, three times over with the live and pristine device copies).
            const uint64_t bytes = run->device_bytes();
            const bool resident = !request.check_only && resident_kept_bytes_ + bytes <= device_case_budget(device_.info());
            if (resident) {
                if (auto r = run->remember_outputs(); !r) return fail({Verdict::runtime_error, r.error().message});
                resident_kept_bytes_ += bytes;
            }
            kept.push_back({&size, ref, resident ? std::optional<CaseRun>(std::move(*run)) : std::nullopt, shape_of(*c)});
        }
    }
    sr.correct = true;
    return std::nullopt;
}

std::optional<Runner::Stop> Runner::time_size(const Task& task, CheckedSize& k, const EvalRequest& request,
                                              const BoundKernels& kernels, SizeResult& sr) {
    auto fail = [&](const Fault& f) {
        if (f.verdict == Verdict::incorrect || f.verdict == Verdict::runtime_error) sr.correct = false;
        sr.diagnostics = f.message;
        return Stop{f.verdict, fmt::format("size {} (timed runs): {}", k.size->label, f.message)};
    };
    // Not kept resident after its check: built again (recheck() then downloads and checks the output).
    std::optional<CaseRun> rebuilt;
    if (!k.run) {
        const uint64_t seed = trial_seed(request.seed, *k.size, Trial::nominal);
        stage(Stage::reference, k.size->label, trial_name(Trial::nominal));
        auto built = CaseRun::create(device_, device_cases_, task, *k.size, seed, Trial::nominal,
                                     cases_.get(task, *k.size, seed, Trial::nominal), kernels);
        if (!built) return fail({Verdict::runtime_error, "could not set up the buffers: " + built.error().message});
        rebuilt.emplace(std::move(*built));
    }
    CaseRun& run = k.run ? *k.run : *rebuilt;
    auto in_force = ceilings_.current();
    // A launch-bound trace shape: several copies replayed as one submission (replay_timing.hpp).
    ReplaySet replay(device_, run);
    const double sol = in_force ? sol_seconds_of(task.spec().bound, *k.shape, **in_force) : 0.0;
    if (const int copies = replay_copies(request.profile, sol, run.device_bytes()); copies > 0) {
        stage(Stage::check, k.size->label, "replay copies");
        if (auto fault = replay.add_copies(copies, device_cases_.checksum(), kernels, task, *k.size, *k.ref))
            return fail(*fault);
        if (replay.copies() >= 2) sr.replays = replay.copies();
    }
    const TimingPolicy policy{request.warmup, request.repeat, std::max(request.max_repeat, request.repeat),
                              request.noise_cv};
    const size_t launches = sr.replays ? replay.launches_per_replay() : run.launches().size();
    auto before_run = [&] { stage(Stage::timed_run, k.size->label, nullptr, launches); };
    auto time_it = [&] {
        if (sr.replays) return time_samples([&] { return replay.run_timed(flusher_); }, policy, before_run);
        return time_case(run, flusher_, policy, before_run);
    };
    stage(Stage::timing, k.size->label);
    auto timed = time_it();
    if (!timed) return fail({Verdict::runtime_error, timed.error().message});
    auto fill = [&](const Timed& t) {
        sr.timed = true;
        sr.seconds = t.summary.median;
        sr.seconds_min = t.summary.min;
        sr.seconds_max = t.summary.max;
        sr.cv = t.summary.cv;
        sr.samples = t.summary.count;
        sr.noisy = t.noisy;
        sr.work = k.shape->work;
    };
    fill(*timed);
    // Faster than the device can go at this working set: measure once more before believing it.
    if (in_force) {
        score_size(sr, task.spec().bound, *k.shape, **in_force, request.roofline);
        if (beyond_physical(sr)) {
            auto again = time_it();
            if (!again) return fail({Verdict::runtime_error, again.error().message});
            fill(*again);
        }
    }
    // The last timed run's output must still be right: catches kernels that skip work when called
    // again or cache results across calls (every copy of a replay).
    stage(Stage::check, k.size->label, "timed");
    if (auto fault = sr.replays ? replay.recheck(task, *k.size, *k.ref) : run.recheck(task, *k.size, *k.ref))
        return fail(*fault);
    if (sr.noisy)
        sr.diagnostics = fmt::format("noisy: cv {:.0f}% over {} timed runs (median {:.3g} s, min {:.3g} s, max {:.3g} s)",
                                     100 * sr.cv, sr.samples, sr.seconds, sr.seconds_min, sr.seconds_max);
    return std::nullopt;
}

void Runner::score(const Task& task, const std::vector<CheckedSize>& kept, const EvalRequest& request,
                   EvalResult& result) {
    auto in_force = ceilings_.current();
    if (!in_force) {
        result.warnings.push_back("no ceilings: " + in_force.error().message + "; fractions are not computed");
        return;
    }
    const Calibration* ceilings = *in_force;
    auto score_all = [&] {
        for (size_t i = 0; i < kept.size(); ++i)
            score_size(result.sizes[i], task.spec().bound, *kept[i].shape, *ceilings, request.roofline);
    };
    score_all();
    for (size_t i = 0; i < kept.size(); ++i) {
        if (!beyond_physical(result.sizes[i])) continue;
        const SizeResult& s = result.sizes[i];
        const std::string why = fmt::format("size {} ran at {:.2f}x what the device reached at its working set", s.label,
                                            s.achieved / std::max(s.ceiling_static, s.ceiling_workload));
        if (const Calibration* fresh = ceilings_.remeasure(why)) {
            ceilings = fresh;
            score_all();
        }
        break;
    }
    for (size_t i = 0; i < kept.size(); ++i) {
        SizeResult& s = result.sizes[i];
        s.implausible = s.fraction > kImplausibleFraction;
        if (s.implausible)
            result.warnings.push_back(implausible_warning(s, kept[i].shape->working_set_bytes, ceilings->llc_bytes));
        if (s.noisy) result.warnings.push_back(fmt::format("size {}: {}", s.label, s.diagnostics));
        if (auto note = roofline_note(s, *kept[i].shape, *ceilings)) result.warnings.push_back(std::move(*note));
    }
    result.ceilings = ceilings_used(*ceilings);
    result.ceiling_source = result.ceilings.source;
    const auto warnings = ceilings_.warnings();
    result.warnings.insert(result.warnings.end(), warnings.begin(), warnings.end());
    // Weighted by each size's weight: a trace shape's call count (1 at every size of the other profiles).
    std::vector<double> fractions, weights;
    for (const auto& sr : result.sizes) {
        if (sr.heldout) {
            result.heldout_fraction = sr.fraction;
        } else {
            fractions.push_back(sr.fraction);
            weights.push_back(sr.weight);
        }
    }
    if (!fractions.empty()) result.score = weighted_geometric_mean(fractions, weights);
}

std::optional<DeviceLease> Runner::take_lease(EvalResult& result) {
    stage(Stage::lease);
    auto lease = DeviceLease::acquire(device_.info());
    if (lease) return std::move(*lease);
    result.warnings.push_back(lease.error().message + "; this evaluation's timing may overlap another kevo process's");
    return std::nullopt;
}

Expected<EvalResult> Runner::evaluate(const EvalRequest& request) {
    environment_fault_.reset();
    resident_kept_bytes_ = 0;
    where_ = std::string(name(Stage::start));
    try {
        return evaluate_cascade(request);
    } catch (const std::bad_alloc&) {
        // A host allocation of kevo's (inputs, reference, a download) failed: the machine, not the candidate.
        return make_error(fmt::format("kevo ran out of host memory during {} of task {}: an environment error, not a "
                                      "verdict on the candidate (free memory or use a smaller profile)",
                                      where_, request.task));
    }
}

std::optional<Runner::EnvironmentFault> Runner::host_memory_shortfall(const Task& task,
                                                                      const std::vector<const SizeSpec*>& sizes) {
    // On a CPU device the live and pristine device copies of a case are host memory too; the case
    // cache may hold the other trial's inputs meanwhile.
    const uint64_t copies = device_.info().is_cpu ? 4 : 2;
    for (const SizeSpec* size : sizes) {
        const HostFootprint f = task.host_footprint(*size);
        const uint64_t need = copies * f.case_bytes + f.reference_bytes;
        if (need == 0) continue;
        uint64_t available = available_host_bytes();
        if (need <= available) continue;
        cases_.clear();  // what this worker holds from earlier evaluations can go first
        device_cases_.clear();
        references_.clear_memory();
        available = available_host_bytes();
        if (need <= available) continue;
        return EnvironmentFault{fmt::format(
            "size {} of task {} needs about {} of host memory ({} x {} of inputs and outputs{}, {} for the reference and "
            "its check) and {} is available: kevo cannot evaluate it on this machine (an environment error, not a "
            "verdict on the candidate)",
            size->label, task.spec().name, gib(need), copies, gib(f.case_bytes),
            device_.info().is_cpu ? " with their copies on this CPU device" : "", gib(f.reference_bytes), gib(available))};
    }
    return std::nullopt;
}

Expected<EvalResult> Runner::evaluate_cascade(const EvalRequest& request) {
    const auto start = Clock::now();
    device_cases_.begin_evaluation();
    EvalResult result;
    result.task = request.task;
    result.backend = device_.info().backend;
    result.device = device_.info().name;
    result.profile = request.profile;
    result.seed = request.seed;
    result.roofline = request.roofline;
    auto finish = [&](Verdict v, std::string diagnostics) {
        result.verdict = v;
        result.diagnostics = std::move(diagnostics);
        result.stage_seconds.total = since(start);
        return result;
    };
    auto finish_stop = [&](const Stop& stop) { return finish(stop.verdict, stop.diagnostics); };

    auto task_or = make_task(request.task);
    if (!task_or) return finish(Verdict::rejected, task_or.error().message);
    const Task& task = **task_or;
    const TaskSpec& spec = task.spec();
    if (!spec.profiles.count(request.profile))
        return finish(Verdict::rejected, fmt::format("task {} has no profile '{}'", spec.name, request.profile));

    const auto sizes = selected_sizes(spec, request.profile, request.sizes);
    if (auto shortfall = host_memory_shortfall(task, sizes)) return make_error(shortfall->message);

    // A CPU device is the host: all of its work is leased, compilation included (device_lease.hpp).
    std::optional<DeviceLease> lease;
    if (device_.info().is_cpu) lease = take_lease(result);

    // Directives, knobs, compilation.
    stage(Stage::compile);
    const auto compile_start = Clock::now();
    auto language = request_language(request, device_.info().backend);
    if (!language) return make_error(language.error().message);
    auto compiled = run_compile_stage(spec, request, *language, device_.info().arch,
                                      [&](const std::string& source, const std::vector<std::string>& defines,
                                          const std::string& arch) { return compile(source, defines, arch); });
    result.stage_seconds.compile = since(compile_start);
    if (!compiled) return make_error("the compiler cannot run: " + compiled.error().message);  // kevo's, not the candidate's
    result.defines = compiled->knobs;
    result.compile_messages = compiled->messages;
    result.warnings.insert(result.warnings.end(), compiled->warnings.begin(), compiled->warnings.end());
    if (compiled->verdict) return finish(*compiled->verdict, compiled->diagnostics);

    BoundKernels kernels;
    if (auto stop = bind(task, *compiled, kernels, result)) return finish_stop(*stop);

    // Correctness: every selected size, nominal then outlier trial; the first failure ends it.
    std::vector<CheckedSize> kept;
    const auto correctness_start = Clock::now();
    reference_seconds_ = 0;  // kevo's own work, not the candidate's
    for (const SizeSpec* size : sizes) {
        SizeResult sr;
        sr.label = size->label;
        sr.heldout = size->heldout;
        sr.weight = size->weight;
        auto stop = check_size(task, *size, request, kernels, sr, kept);
        if (environment_fault_) return make_error(environment_fault_->message);
        result.sizes.push_back(sr);
        if (stop) {
            result.stage_seconds.correctness = since(correctness_start) - reference_seconds_;
            return finish_stop(*stop);
        }
    }
    result.stage_seconds.correctness = since(correctness_start) - reference_seconds_;

    if (!request.check_only) {
        if (!lease) lease = take_lease(result);  // a GPU's timed phase: calibration, timing, re-timing
        (void)ceilings_.current();  // a first-use calibration happens here, before any timing (score() reports failure)
        const auto timing_start = Clock::now();
        for (size_t i = 0; i < kept.size(); ++i) {
            if (auto stop = time_size(task, kept[i], request, kernels, result.sizes[i])) {
                result.stage_seconds.timing = since(timing_start);
                return finish_stop(*stop);
            }
        }
        score(task, kept, request, result);
        result.stage_seconds.timing = since(timing_start);
    }
    std::string summary = fmt::format("correct at {} size{}", result.sizes.size(), result.sizes.size() == 1 ? "" : "s");
    if (result.score) summary += fmt::format("; score {:.4f}", *result.score);
    return finish(Verdict::ok, summary);
}

}  // namespace kevo
