// Device ceilings: streaming bandwidth against working-set size, FP32 FMA throughput and the
// tensor-core classes (bf16, fp8, int8), measured once per device and driver and cached
// (calibration.cpp: the type, its JSON and the cache; calibration_measure.cpp: bandwidth and FP32;
// calibration_tensor.cpp: the vendor GEMMs). A datasheet table is the fallback only where measuring
// is impossible, and the cross-check shown beside a measurement.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.hpp"
#include "core/expected.hpp"
#include "eval/eval_types.hpp"
#include "task/compute_class.hpp"

namespace kevo {

struct Datasheet {
    std::string name;          // as matched
    double bandwidth_gbs = 0;  // vendor peak memory bandwidth
    double fp32_gflops = 0;    // vendor peak FP32 (FMA counted as 2 FLOP)
    std::map<ComputeClass, double> tensor_gflops;  // dense tensor-core peaks the vendor states; absent: none
};

// Case-insensitive substring match against a table of NVIDIA datacenter and consumer GPUs and
// Apple M1-M4 (the Metal-Sci devices).
std::optional<Datasheet> datasheet_for(const std::string& device_name);

struct BandwidthPoint {
    double working_set_bytes = 0;  // bytes read + written by one pass
    double copy_gbs = 0;           // (read + write) bytes / median time
    double triad_gbs = 0;
};

enum class CeilingSource { measured, datasheet, absent };
const char* ceiling_source_name(CeilingSource source);

// One tensor-core class's ceiling: the vendor GEMM's best rate on this device (an n^3 product at a
// large n), else the datasheet's figure, else absent (a task needing it then says so).
struct TensorCeiling {
    ComputeClass kind = ComputeClass::tensor_bf16;
    CeilingSource source = CeilingSource::absent;
    double gflops = 0;         // dense, an FMA as 2 operations; 0 when absent
    std::vector<double> runs;  // the measured calls (GFLOP/s); the best is the ceiling
    std::string how;           // what measured it, or why it was not measured
};

struct Calibration {
    std::string device_key;          // backend/name/driver: the cache key
    std::string device_name;
    std::string source;              // "measured" | "datasheet"
    std::vector<BandwidthPoint> curve;  // ascending working sets
    double bandwidth_gbs = 0;        // streaming bandwidth far above the last-level cache
    double fp32_gflops = 0;          // FMA-chain throughput
    std::optional<Datasheet> datasheet;
    std::string measured_at;         // ISO-8601 UTC
    // How far the figures can be trusted: the plateau and the FMA rate are each measured in passes
    // until the two best agree (the figure is the best: core/settle.hpp); `stable` is false when
    // either never did.
    bool stable = true;
    std::vector<double> bandwidth_passes, fp32_passes;
    double plateau_from_bytes = 0;   // smallest working set averaged into the DRAM plateau
    uint64_t llc_bytes = 0;          // the last-level cache the plan was built around
    std::vector<std::string> notes;  // why a figure may not mean what it says (unstable, cache-sized plateau)
    std::vector<TensorCeiling> tensor;  // one per tensor class (kTensorClasses order)

    // The best of copy and triad at this working set, log-interpolated along the curve; clamped
    // to the curve's ends. Falls back to bandwidth_gbs without a curve.
    double bandwidth_at(double working_set_bytes) const;
    // The ceiling of a compute class: fp32_gflops for fp32; a tensor class's figure (0 when absent).
    double peak_gflops(ComputeClass kind) const;
    const TensorCeiling* tensor_ceiling(ComputeClass kind) const;
};

// Passes whose last two differ by more than this leave the calibration unstable.
inline constexpr double kCalibrationAgreement = 0.05;

// What an evaluation reports about the ceilings it was scored against.
CeilingsUsed ceilings_used(const Calibration& c);

nlohmann::json to_json(const Calibration& c);
Expected<Calibration> calibration_from_json(const nlohmann::json& j);

std::string calibration_key(const DeviceInfo& info);
std::optional<Calibration> load_cached_calibration(const DeviceInfo& info);
Expected<void> store_calibration(const Calibration& c);
// A calibration from the datasheet alone, when the device is in the table.
std::optional<Calibration> datasheet_calibration(const DeviceInfo& info);

struct CalibrationOptions {
    bool quick = false;  // an automatic first-use calibration: fewer cache-resident points and, on a
                         // CPU, shorter runs; the plateau's working sets are the full plan's
    std::function<void(const std::string&)> progress;  // one line per step, may be empty
};

// Runs the copy, triad and FMA kernels (src/eval/kernels/calibrate.{cu,cl}) on the device, then the
// vendor GEMMs for the tensor classes (measure_tensor_ceilings).
Expected<Calibration> measure_calibration(Device& device, const CalibrationOptions& options);

// The vendor GEMM (VendorRoutine::gemm_*) of each tensor class at 8192^3 (smaller where the device's
// memory is), on random operands, best of a few calls. A class whose GEMM cannot run here takes
// the datasheet's figure (source datasheet, `how` saying why), else is absent. Never an error.
std::vector<TensorCeiling> measure_tensor_ceilings(Device& device, const std::optional<Datasheet>& sheet,
                                                   const CalibrationOptions& options);
// The datasheet's figures (or absent) for every tensor class, each saying `why` it was not measured.
std::vector<TensorCeiling> datasheet_tensor_ceilings(const std::optional<Datasheet>& sheet, const std::string& why);
// One line per tensor class: "tensor bf16: 781.2 TFLOP/s measured (...); datasheet 989 TFLOP/s".
std::vector<std::string> describe_tensor_ceilings(const Calibration& c);

// The working sets (bytes) a calibration of this device measures, in order, and where its plateau
// starts: the plan measure_calibration follows (exposed so that tests can compare plans).
struct CalibrationPlanShape {
    std::vector<uint64_t> working_sets;
    uint64_t plateau_from = 0;
};
CalibrationPlanShape calibration_plan_shape(const DeviceInfo& info, bool quick);

}  // namespace kevo
