// Names of the compute classes (see compute_class.hpp), as JSON and the text reports write them.
#include "task/compute_class.hpp"

namespace kevo {

const char* compute_class_name(ComputeClass c) {
    switch (c) {
        case ComputeClass::fp32: return "fp32";
        case ComputeClass::tensor_bf16: return "bf16";
        case ComputeClass::tensor_fp8: return "fp8";
        case ComputeClass::tensor_int8: return "int8";
    }
    return "?";
}

std::optional<ComputeClass> parse_compute_class(std::string_view name) {
    for (ComputeClass c : {ComputeClass::fp32, ComputeClass::tensor_bf16, ComputeClass::tensor_fp8, ComputeClass::tensor_int8})
        if (name == compute_class_name(c)) return c;
    return std::nullopt;
}

}  // namespace kevo
