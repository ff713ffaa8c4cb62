// Where kevo's commands get their evaluation service: the Evaluator (the scan, then the worker
// process), unless the executable installed another before running the commands. Only test
// executables do (tests/scripted_kevo.cpp: kevo's own commands, sweeps and their children on
// scripted evaluations, so that the CLI-level tests of studies, resume and reports are fast and
// deterministic).
#pragma once

#include <memory>

#include "eval/evaluating.hpp"
#include "eval/evaluator.hpp"

namespace kevo {

using EvaluatorFactory = std::unique_ptr<Evaluating> (*)(const EvaluatorOptions& options);

// The evaluation service for `options`, from the factory in force.
std::unique_ptr<Evaluating> make_evaluator(const EvaluatorOptions& options);
// Replaces the factory for the rest of the process (null: the Evaluator again).
void install_evaluator_factory(EvaluatorFactory factory);

}  // namespace kevo
