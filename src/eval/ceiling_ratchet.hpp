// Ceilings that bound: the fp8 and int8 tensor ceilings are upper bounds, not one vendor GEMM's
// achieved rate (cuBLASLt int8 reached 1.03 of its own ceiling at another shape; published fp8
// GEMMs beat cuBLASLt's 8192^3). Each is the largest of its measurement, the datasheet's dense
// figure and the fastest rate kevo has measured for the class on this device model (cuBLASLt, or
// any kernel it timed: peers and best-known kernels included). That fastest rate is kept in a
// record per device model (the cache's "ceilings" folder), which only ever rises.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/expected.hpp"
#include "eval/calibration.hpp"

namespace kevo {

// The classes whose ceiling is bounded so.
inline constexpr ComputeClass kBoundedTensorClasses[] = {ComputeClass::tensor_fp8, ComputeClass::tensor_int8};
bool is_bounded_tensor_class(ComputeClass kind);

struct ClassRate {
    ComputeClass kind = ComputeClass::tensor_fp8;
    double gflops = 0;  // dense, an FMA as 2 operations
    std::string by;     // what ran at that rate ("cuBLASLt int8 8192^3", "gemm_w8a8 best at 2048x28672x4096")
    std::string at;     // ISO-8601 UTC
};

struct RateRecord {
    std::string device_name;
    std::vector<ClassRate> rates;  // one per class at most
    const ClassRate* find(ComputeClass kind) const;
};

// Raises the record's figure for `rate.kind` when `rate` is faster; true when it did. A rate above
// kImplausibleFraction of the datasheet's dense figure is a timing fault, never recorded.
bool ratchet(RateRecord& record, const ClassRate& rate, const std::optional<Datasheet>& sheet);

// The record of a device model (empty when there is none or it does not read), and its writing.
RateRecord load_rate_record(const std::string& device_name);
Expected<void> store_rate_record(const RateRecord& record);

// load, ratchet, store: the figure the record held before when it rose, else nullopt.
struct Raised {
    double before = 0, after = 0;
};
Expected<std::optional<Raised>> record_class_rate(const std::string& device_name, const ClassRate& rate,
                                                  const std::optional<Datasheet>& sheet);

// Every bounded class of `c` becomes the largest of its own figure, the datasheet's dense figure
// and the record's, its source and `how` saying which one it is.
void bound_tensor_ceilings(Calibration& c, const RateRecord& record);

}  // namespace kevo
