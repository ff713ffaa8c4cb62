// Benchmark of the evaluator's own overhead: for each task, the seed is evaluated repeatedly by
// one persistent worker (as in a search), and the median wall time per candidate is split into
// compile, correctness and timing. Each run's source differs by a comment, so every run compiles;
// the first evaluation (cold: reference computed, caches empty) is reported apart. A task whose seed
// fails is reported and the others still run (exit status 1). Usage:
// kevo_bench_eval [--backend B] [--profile P] [--runs N] [--json FILE] [tasks...]   (default: every task)
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/registry.hpp"
#include "core/stats.hpp"
#include "eval/evaluator.hpp"
#include "task/registry.hpp"

using namespace kevo;

int main(int argc, char** argv) {
    std::string backend = "auto", profile = "paper";
    int runs = 7;
    std::string json_path;
    std::vector<std::string> tasks;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--backend" && i + 1 < argc) backend = argv[++i];
        else if (a == "--profile" && i + 1 < argc) profile = argv[++i];
        else if (a == "--runs" && i + 1 < argc) runs = std::max(2, std::atoi(argv[++i]));
        else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
        else tasks.push_back(a);
    }
    if (tasks.empty()) tasks = task_names();
    auto resolved = resolve_backend_name(backend);
    if (!resolved) return std::fprintf(stderr, "%s\n", resolved.error().message.c_str()), 2;
    EvaluatorOptions options;
    options.backend = *resolved;
    // The worker is the kevo binary built beside this one.
    options.worker_executable = (std::filesystem::path(self_executable()).parent_path() / "kevo").string();
    Evaluator evaluator(options);
    auto info = evaluator.device();
    if (!info) return std::fprintf(stderr, "%s\n", info.error().message.c_str()), 2;
    const char* suffix = language_suffix(make_backend(*resolved)->language());
    std::printf("evaluator overhead on %s (%s), profile %s, %d runs per task (defaults: 3 warm-ups, 10 timed runs)\n",
                info->name.c_str(), resolved->c_str(), profile.c_str(), runs);
    std::printf("%-8s %10s | %10s %10s %10s %10s %10s | %9s\n", "task", "cold (s)", "wall (s)", "compile", "correct",
                "timing", "other", "kernel(s)");
    nlohmann::json doc = nlohmann::json::object();
    int status = 0;
    for (const auto& task : tasks) {
        EvalRequest request;
        request.task = task;
        request.profile = profile;
        request.source = std::string(task_file(task, fmt::format("seed.{}", suffix)));
        request.seed = 1;  // fixed: the reference is computed once, then cached
        std::vector<double> wall, compile, correct, timing, kernel;
        double cold = 0;
        const std::string seed_source = request.source;
        std::string failure;
        for (int r = 0; r < runs && failure.empty(); ++r) {
            // A distinct comment per run: the module cache must not hide the compiler's time.
            request.source = seed_source + fmt::format("\n// overhead run {}\n", r);
            const auto start = std::chrono::steady_clock::now();
            auto result = evaluator.evaluate(request);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (!result || result->verdict != Verdict::ok) {
                failure = result ? result->diagnostics : result.error().message;
                continue;
            }
            if (r == 0) {
                cold = seconds;
                continue;
            }
            wall.push_back(seconds);
            compile.push_back(result->stage_seconds.compile);
            correct.push_back(result->stage_seconds.correctness);
            timing.push_back(result->stage_seconds.timing);
            double k = 0;
            for (const auto& s : result->sizes) k += s.seconds * (request.warmup + request.repeat);
            kernel.push_back(k);
        }
        if (!failure.empty()) {
            // The other tasks still run: one broken task should not cost the whole table.
            std::printf("%-8s failed: %s\n", task.c_str(), failure.c_str());
            doc[task] = {{"error", failure}};
            status = 1;
            continue;
        }
        const double w = summarize(wall).median, c = summarize(compile).median, k = summarize(correct).median,
                     t = summarize(timing).median, other = std::max(0.0, w - c - k - t);
        std::printf("%-8s %10.3f | %10.3f %10.3f %10.3f %10.3f %10.3f | %9.4f\n", task.c_str(), cold, w, c, k, t, other,
                    summarize(kernel).median);
        auto spec = make_task(task);
        doc[task] = {{"cold", cold}, {"wall", w}, {"compile", c}, {"correctness", k}, {"timing", t},
                     {"other", other}, {"kernel", summarize(kernel).median},
                     {"runs", runs - 1}, {"profile", profile}, {"device", info->name},
                     {"regime", spec ? (*spec)->spec().regime : std::string()}};
    }
    if (!json_path.empty()) std::ofstream(json_path) << doc.dump(2) << "\n";
    std::printf("wall = median per candidate with a warm worker and cached reference; other = scan, reference "
                "lookup, transfers and the pipe; kernel(s) = device time of the timed and warm-up runs\n");
    return status;
}
