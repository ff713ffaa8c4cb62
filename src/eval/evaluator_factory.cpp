// The evaluator factory in force: the real Evaluator unless an executable installed another.
#include "eval/evaluator_factory.hpp"

namespace kevo {

namespace {

std::unique_ptr<Evaluating> make_real_evaluator(const EvaluatorOptions& options) {
    return std::make_unique<Evaluator>(options);
}

EvaluatorFactory& factory_in_force() {
    static EvaluatorFactory factory = make_real_evaluator;
    return factory;
}

}  // namespace

std::unique_ptr<Evaluating> make_evaluator(const EvaluatorOptions& options) { return factory_in_force()(options); }

void install_evaluator_factory(EvaluatorFactory factory) {
    factory_in_force() = factory ? factory : make_real_evaluator;
}

}  // namespace kevo
