// The task model: what a task declares (spec), how it builds one size's problem (a Case: buffers,
// constants and the launch plan), its CPU reference and its check. One task = one folder under
// tasks/, holding a class that implements Task and a factory `make_<name>_task()`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.hpp"
#include "task/compute_class.hpp"

namespace kevo {

enum class Bound { bandwidth, compute };

struct SizeSpec {
    std::string label;  // "256x256x50"
    bool heldout = false;
    std::vector<std::pair<std::string, int64_t>> params;  // named integers: nx, ny, steps, ...
    // The reference at this size comes from the task's own seed kernel run on the evaluating
    // device, not from the CPU (for sizes where the CPU would take too long). The seed itself is
    // checked against the CPU reference at every size that does not set this.
    bool device_reference = false;
    // The trace profile's weight of this shape: its production call count (1 where the anchor gives
    // none, and at every size of the other profiles); scores over a profile weight their sizes by it.
    double weight = 1;
    // Where a trace shape comes from ("atrex silu_and_mul #23: vLLM TP4, ..."); empty elsewhere.
    std::string source = {};  // (initialised, so that the tasks' {label, heldout, params} stay warning-free)

    int64_t param(const std::string& name) const;  // asserts the name exists
};

struct KernelSpec {
    std::string name;
    // Its parameters, once for every language (each renders its own declaration: signature_text).
    // Empty: not declared, and nothing is compared (test doubles).
    std::vector<SignatureParam> params;
    unsigned dims = 1;             // dimensionality of its launch domain
    Dim3 default_block;
};

// The kernel's declaration in `language`, as it must appear in a seed of that language; empty when
// the kernel declares no parameters.
inline std::string signature_text(const KernelSpec& kernel, Language language) {
    return kernel.params.empty() ? std::string() : render_signature(language, kernel.name, kernel.params);
}

// Every task has the first three size profiles, smallest first; the ML pack's tasks also have
// `trace` (production shapes weighted by call count, from tasks/<name>/trace.toml). The one list
// the CLI and study files check against; a task lacking the profile asked for says so.
inline const std::vector<std::string> kProfileNames = {"small", "paper", "large", "trace"};
inline const std::string kTraceProfile = "trace";

struct TaskSpec {
    std::string name;
    std::string regime;      // "R1 stencil"
    std::string pack = "sci";  // the pack the task belongs to: "sci" (the scientific suite) or "ml"
    std::string category;    // its category inside the pack ("stencil", "gemm", "attention", ...)
    int order = 0;           // position in the suite's listing
    Bound bound = Bound::bandwidth;
    std::string model;       // "8 B per cell per step"
    std::string tolerance;   // human-readable check rule
    // What `kevo bench` times beside the task's kernels at each size, by the names of the peer table
    // (src/bench/peers.cpp: "cufft_c2c", "cublas_saxpy", "vectorised_axpy", "cublaslt_bf16", ...).
    std::vector<std::string> peers;
    std::vector<KernelSpec> kernels;
    std::map<std::string, std::vector<SizeSpec>> profiles;  // "small" | "paper" | "large" [| "trace"]
};

enum class Trial { nominal, outlier };
const char* trial_name(Trial trial);

// Element types of buffers. The narrow ones (src/core/dtypes.hpp) are stored as their bits: bf16
// and f16 as 16-bit words, f8e4m3 as bytes, i4x2 as bytes of two int4 (low nibble first), so
// elem_size(i4x2) is the size of one byte holding two elements.
enum class ElemType { f32, u32, i8, i32, f16, bf16, f8e4m3, i4x2 };
size_t elem_size(ElemType type);
const char* elem_type_name(ElemType type);  // "bf16"

// input: read by kernels, must be unchanged afterwards (checksummed).
// state: the initial state, restored before every run; kernels may overwrite it.
// output: poisoned before every run: NaN for the float types (0xFF bytes are NaN in f32, f16,
// bf16 and f8e4m3 alike), 0x7F bytes for i8 and i4x2 (127; (7, 7)), 0xFF bytes for u32 and i32.
enum class BufferRole { input, state, output };

struct HostBuffer {
    std::string name;
    BufferRole role = BufferRole::input;
    ElemType type = ElemType::f32;
    std::vector<std::byte> data;  // initial contents; for outputs only its size matters

    size_t bytes() const { return data.size(); }
    template <class T> T* as() { return reinterpret_cast<T*>(data.data()); }
    template <class T> const T* as() const { return reinterpret_cast<const T*>(data.data()); }
    template <class T> size_t count() const { return data.size() / sizeof(T); }
};

// Makes a buffer of `count` elements of T, zero-filled.
template <class T>
HostBuffer make_buffer(std::string name, BufferRole role, ElemType type, size_t count) {
    HostBuffer b{std::move(name), role, type, {}};
    b.data.resize(count * sizeof(T));
    return b;
}

struct ArgRef {
    enum class Kind { buffer, f32, u32 };
    Kind kind = Kind::u32;
    int buffer = -1;
    float f32 = 0;
    uint32_t u32 = 0;

    static ArgRef buf(int index) { return {Kind::buffer, index, 0, 0}; }
    static ArgRef f(float v) { return {Kind::f32, -1, v, 0}; }
    static ArgRef u(uint32_t v) { return {Kind::u32, -1, 0, v}; }
};

struct LaunchSpec {
    std::string kernel;
    std::vector<ArgRef> args;
    Dim3 domain;  // cells (work items at one cell per thread); the host derives the grid
};

// Everything one size needs for one trial. Built deterministically from (size, seed, trial).
struct Case {
    std::vector<HostBuffer> buffers;
    std::vector<LaunchSpec> launches;   // one timed run
    std::vector<int> results;           // indices of the buffers checked against the reference
    std::map<std::string, double> constants;  // the constants in force (shown in diagnostics)
    double work = 0;                    // bytes (bandwidth-bound) or FLOPs (compute-bound) of one run
    double working_set_bytes = 0;       // distinct bytes touched, for the workload ceiling
    // The multi-class roofline (eval/roofline.hpp), for tasks whose work is tensor-core FLOPs and
    // bytes together: when flops_by_class is not empty, the size is scored by its speed-of-light
    // time from these two and `work`/Bound are not used. The scientific tasks leave it empty.
    std::map<ComputeClass, double> flops_by_class;  // FLOPs (int8: integer ops) per class of one run
    double roofline_bytes = 0;                       // bytes one run must move at least (Q)
};

// The expected contents of Case::results, in the same order.
struct Reference {
    std::vector<std::vector<std::byte>> results;
};

struct CheckResult {
    bool pass = false;
    std::string kind;        // "max_abs", "nan", "bit_exact", "statistical", ...
    double error = 0;
    double tolerance = 0;
    int64_t worst_index = -1;
    std::string message;     // human-readable: where and by how much
};

// The host memory one case of a size and its CPU reference take at their peak, estimated from the
// size's parameters alone (nothing is built): the evaluator compares it with the memory the host has
// before the candidate runs.
struct HostFootprint {
    uint64_t case_bytes = 0;       // the host buffers of one case (inputs, outputs, state)
    uint64_t reference_bytes = 0;  // the reference's results and working memory, and the check's
};

class Task {
public:
    virtual ~Task() = default;
    virtual const TaskSpec& spec() const = 0;
    virtual Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const = 0;
    virtual Reference reference(const SizeSpec& size, const Case& c) const = 0;
    // Zero (the default): the size is small enough not to need the estimate.
    virtual HostFootprint host_footprint(const SizeSpec&) const { return {}; }
    virtual CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                              const std::vector<std::vector<std::byte>>& outputs) const = 0;
};

}  // namespace kevo
