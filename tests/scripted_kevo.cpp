// kevo_scripted: the kevo executable with scripted evaluations (scripted_evaluator.hpp) in place of
// the worker: the same commands, store, sweeps (whose cells run this executable again) and reports,
// in milliseconds and deterministically, for the CLI-level tests of resume, studies, aggregates and
// reports that do not test the kernels themselves. The environment may set
//   KEVO_SCRIPTED_FAIL_AFTER=N     evaluations past the N-th fail as a dead worker would
//   KEVO_SCRIPTED_DELAY_MS=M       each evaluation takes M ms (for a test that kills a run mid-way)
//   KEVO_SCRIPTED_BANDWIDTH=GBS    the device's calibration (default 100 GB/s) ...
//   KEVO_SCRIPTED_MEASURED_AT=ISO  ... and when it was measured (a recalibration changes both)
//   KEVO_SCRIPTED_BACKEND=cuda     the device is an sm_90 GPU (default opencl, a CPU)
//   KEVO_SCRIPTED_FAULTY_DEVICE=D  device D of a pool faults in its first evaluation (which fails), and
//   KEVO_SCRIPTED_FAULT_FILE=PATH  is then lost: PATH is written, and while it exists D cannot be opened
#include <cstdlib>
#include <memory>
#include <string>

#include "cli/cli_main.hpp"
#include "eval/evaluator_factory.hpp"
#include "scripted_evaluator.hpp"

namespace {

std::string environment(const char* name, const std::string& fallback) {
    const char* value = std::getenv(name);
    return value && *value ? value : fallback;
}

std::unique_ptr<kevo::Evaluating> make_scripted_evaluator(const kevo::EvaluatorOptions& options) {
    auto e = std::make_unique<kevo::test::ScriptedEvaluator>();
    e->device_index = options.device;
    e->faulty_device = std::stoi(environment("KEVO_SCRIPTED_FAULTY_DEVICE", "-1"));
    e->fault_file = environment("KEVO_SCRIPTED_FAULT_FILE", "kevo-scripted-device-fault");
    e->fail_after = std::stoi(environment("KEVO_SCRIPTED_FAIL_AFTER", "-1"));
    e->backend = environment("KEVO_SCRIPTED_BACKEND", "opencl");
    e->delay = std::chrono::milliseconds(std::stoi(environment("KEVO_SCRIPTED_DELAY_MS", "0")));
    e->calibration = kevo::test::scripted_calibration(std::stod(environment("KEVO_SCRIPTED_BANDWIDTH", "100")),
                                                      environment("KEVO_SCRIPTED_MEASURED_AT", "2026-01-01T00:00:00Z"));
    return e;
}

}  // namespace

int main(int argc, char** argv) {
    kevo::install_evaluator_factory(make_scripted_evaluator);
    return kevo::cli::kevo_main(argc, argv);
}
