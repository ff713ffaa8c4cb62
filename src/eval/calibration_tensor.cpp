// The tensor-core ceilings: each class's vendor GEMM (cuBLASLt on CUDA, through the backend's vendor
// routines) at a large square size on random operands, the best of a few calls; where that cannot
// run, the datasheet's figure or nothing, said in the ceiling's `how`. See calibration.hpp.
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "backend/vendor_routines.hpp"
#include "core/rng.hpp"
#include "eval/calibration.hpp"

namespace kevo {
namespace {

constexpr uint64_t kGemmSide = 8192;  // the size the ML pack's notes quote (788 TFLOP/s bf16 through PyTorch)
constexpr uint64_t kMinGemmSide = 2048;
constexpr int kWarmupCalls = 3;
constexpr int kTimedCalls = 10;

struct ClassGemm {
    ComputeClass kind;
    VendorRoutine routine;
    uint64_t operand_size, output_size;  // bytes per element
};

constexpr ClassGemm kGemms[] = {{ComputeClass::tensor_bf16, VendorRoutine::gemm_bf16, 2, 2},
                                {ComputeClass::tensor_fp8, VendorRoutine::gemm_fp8, 1, 2},
                                {ComputeClass::tensor_int8, VendorRoutine::gemm_int8, 1, 4}};

// Random operands: a GEMM on zeros runs faster (less switching power: 894 against 788 TFLOP/s bf16
// on the H200), which would make the ceiling unreachable on real data. Every value is finite and
// moderate: bf16 in [0.5, 1) with a random sign, fp8 e4m3 below 2 in magnitude (its exponent's top bit
// clear, so never NaN), int8 anything (8192 products of |x| <= 128 fit an int32).
std::vector<uint8_t> random_operand(const ClassGemm& g, uint64_t n) {
    std::vector<uint8_t> bytes(n * n * g.operand_size);
    for (size_t i = 0; i < bytes.size(); i += 8) {
        const uint64_t r = rng::bits(0x74656e736f72ull, static_cast<uint64_t>(g.kind), i / 8);
        for (size_t b = 0; b < 8 && i + b < bytes.size(); ++b) bytes[i + b] = static_cast<uint8_t>(r >> (8 * b));
    }
    if (g.kind == ComputeClass::tensor_bf16)
        for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
            // Little-endian bf16: the high byte is the sign and the exponent's top 7 bits, the low byte
            // the exponent's last bit and the 7 mantissa bits. Exponent 126: [0.5, 1).
            bytes[i] &= 0x7F;
            bytes[i + 1] = static_cast<uint8_t>((bytes[i + 1] & 0x80) | 0x3F);
        }
    if (g.kind == ComputeClass::tensor_fp8)
        for (auto& b : bytes) b &= 0xBF;
    return bytes;
}

// The side of the GEMM: 8192, halved while A, B and D would take more than a quarter of the memory.
uint64_t gemm_side(const DeviceInfo& info, const ClassGemm& g) {
    uint64_t n = kGemmSide;
    auto bytes = [&](uint64_t side) { return side * side * (2 * g.operand_size + g.output_size); };
    while (n > kMinGemmSide && info.global_mem_bytes > 0 && bytes(n) > info.global_mem_bytes / 4) n /= 2;
    if (info.max_alloc_bytes > 0)
        while (n > kMinGemmSide && n * n * std::max(g.operand_size, g.output_size) > info.max_alloc_bytes) n /= 2;
    return n;
}

TensorCeiling from_datasheet(ComputeClass kind, const std::optional<Datasheet>& sheet, const std::string& why) {
    TensorCeiling t;
    t.kind = kind;
    auto it = sheet ? sheet->tensor_gflops.find(kind) : std::map<ComputeClass, double>::const_iterator{};
    if (sheet && it != sheet->tensor_gflops.end()) {
        t.source = CeilingSource::datasheet;
        t.gflops = it->second;
        t.how = fmt::format("not measured ({}): the datasheet's {} figure", why, sheet->name);
    } else {
        t.source = CeilingSource::absent;
        t.how = fmt::format("not measured ({}), and the datasheet has no {} figure for this device", why,
                            compute_class_name(kind));
    }
    return t;
}

// One class's GEMM: the buffers, warm-up calls, then the timed calls; the best rate is the ceiling.
Expected<TensorCeiling> measure_class(Device& device, const ClassGemm& g, const CalibrationOptions& options) {
    auto library = vendor_library(device, g.routine);
    if (!library) return library.error();
    const uint64_t n = gemm_side(device.info(), g);
    std::vector<BufferHandle> buffers;
    auto release = [&] {
        if (device.is_poisoned()) return;
        for (auto b : buffers) device.release(b);
    };
    auto allocate = [&](uint64_t bytes) -> Expected<BufferHandle> {
        auto b = device.allocate(bytes);
        if (b) buffers.push_back(*b);
        return b;
    };
    const auto operand = random_operand(g, n);
    auto a = allocate(operand.size());
    auto b = a ? allocate(operand.size()) : a;
    auto d = b ? allocate(n * n * g.output_size) : b;
    Expected<void> ready = d ? device.upload(*a, 0, operand.data(), operand.size()) : Expected<void>(d.error());
    if (ready) ready = device.upload(*b, 0, operand.data(), operand.size());
    if (!ready) {
        release();
        return make_error(fmt::format("preparing the {}^3 operands: {}", n, ready.error().message));
    }
    VendorCall call{g.routine, n, *a, *d, 1.0f, *b};
    const double ops = 2.0 * double(n) * double(n) * double(n);
    TensorCeiling t;
    t.kind = g.kind;
    for (int i = 0; i < kWarmupCalls + kTimedCalls; ++i) {
        auto seconds = run_vendor_timed(device, call);
        if (!seconds) {
            release();
            return seconds.error();
        }
        if (i >= kWarmupCalls && *seconds > 0) t.runs.push_back(ops / *seconds * 1e-9);
    }
    release();
    if (t.runs.empty()) return make_error("the device timer returned no positive time");
    t.source = CeilingSource::measured;
    t.gflops = *std::max_element(t.runs.begin(), t.runs.end());
    t.how = fmt::format("{} {}^3 on random operands, best of {} calls", *library, n, t.runs.size());
    if (options.progress)
        options.progress(fmt::format("tensor {}: {:.1f} TFLOP/s ({})", compute_class_name(g.kind), t.gflops * 1e-3, t.how));
    return t;
}

}  // namespace

std::vector<TensorCeiling> datasheet_tensor_ceilings(const std::optional<Datasheet>& sheet, const std::string& why) {
    std::vector<TensorCeiling> out;
    for (const auto& g : kGemms) out.push_back(from_datasheet(g.kind, sheet, why));
    return out;
}

std::vector<TensorCeiling> measure_tensor_ceilings(Device& device, const std::optional<Datasheet>& sheet,
                                                   const CalibrationOptions& options) {
    std::vector<TensorCeiling> out;
    for (const auto& g : kGemms) {
        auto measured = measure_class(device, g, options);
        if (measured) {
            out.push_back(std::move(*measured));
            continue;
        }
        out.push_back(from_datasheet(g.kind, sheet, measured.error().message));
        if (options.progress)
            options.progress(fmt::format("tensor {}: {}", compute_class_name(g.kind), out.back().how));
    }
    return out;
}

std::vector<std::string> describe_tensor_ceilings(const Calibration& c) {
    std::vector<std::string> lines;
    for (const auto& t : c.tensor) {
        const char* name = compute_class_name(t.kind);
        std::string line;
        switch (t.source) {
            case CeilingSource::measured:
                line = fmt::format("tensor {}: {:.1f} TFLOP/s measured ({})", name, t.gflops * 1e-3, t.how);
                break;
            case CeilingSource::datasheet:
                line = fmt::format("tensor {}: {:.1f} TFLOP/s from the DATASHEET, {}", name, t.gflops * 1e-3, t.how);
                break;
            case CeilingSource::absent:
                line = fmt::format("tensor {}: ABSENT, {}", name, t.how);
                break;
        }
        if (t.source == CeilingSource::measured && c.datasheet) {
            auto it = c.datasheet->tensor_gflops.find(t.kind);
            if (it != c.datasheet->tensor_gflops.end())
                line += fmt::format("; datasheet {:.0f} TFLOP/s ({:.0f}% of it)", it->second * 1e-3, 100 * t.gflops / it->second);
        }
        lines.push_back(std::move(line));
    }
    return lines;
}

}  // namespace kevo
