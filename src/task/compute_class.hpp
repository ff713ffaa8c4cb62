// The classes of arithmetic a task's work is counted in, each with its own device ceiling: FP32 on
// the CUDA cores and the tensor-core classes (dense; an FMA counts as 2 operations). A task of the
// ML pack declares FLOPs per class (Case::flops_by_class); the roofline divides each by its peak.
#pragma once

#include <optional>
#include <string_view>

namespace kevo {

enum class ComputeClass {
    fp32,         // FP32 FMA on the CUDA cores (the calibration's FMA chain)
    tensor_bf16,  // bf16 or fp16 operands, fp32 accumulate
    tensor_fp8,   // fp8 (e4m3/e5m2) operands, fp32 accumulate
    tensor_int8,  // int8 operands, int32 accumulate
};

inline constexpr ComputeClass kTensorClasses[] = {ComputeClass::tensor_bf16, ComputeClass::tensor_fp8,
                                                  ComputeClass::tensor_int8};

const char* compute_class_name(ComputeClass c);  // "fp32", "bf16", "fp8", "int8"
std::optional<ComputeClass> parse_compute_class(std::string_view name);
inline bool is_tensor_class(ComputeClass c) { return c != ComputeClass::fp32; }

}  // namespace kevo
