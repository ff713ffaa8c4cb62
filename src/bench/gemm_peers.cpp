// The cuBLASLt peers of the GEMM tasks (see gemm_peers.hpp): draw the task-shaped inputs, lay them
// out for cuBLASLt (gemm_peer_layout.hpp), time the call with the bench protocol, then run it once
// more into a poisoned output and check what it wrote.
#include "bench/gemm_peers.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "bench/gemm_peer_layout.hpp"
#include "bench/peer_checks.hpp"
#include "bench/peer_timing.hpp"
#include "core/dtypes.hpp"
#include "core/rng.hpp"

namespace kevo {
namespace {

constexpr uint64_t kPeerSeed = 0x67656d6d70656572ull;
enum Stream : uint64_t { x_stream = 1, w_stream = 2, a_scale_stream = 3, b_scale_stream = 4 };

// Everything one peer call needs on the host: cuBLASLt's operands (A = the weights, B = the
// activations), the block scales where the routine has them, the size of D, and the check of D.
struct GemmPeerInputs {
    VendorRoutine routine = VendorRoutine::gemm_bf16;
    GemmDims dims;
    std::vector<std::byte> a, b;
    std::vector<float> scale_a, scale_b;
    size_t output_bytes = 0;
    std::function<std::optional<std::string>(const std::vector<std::byte>&)> check;
};

TaskGemm task_gemm(const SizeSpec& size) {
    return {static_cast<uint64_t>(size.param("M")), static_cast<uint64_t>(size.param("N")),
            static_cast<uint64_t>(size.param("K"))};
}

template <class T> std::vector<std::byte> bytes_of(const std::vector<T>& v) {
    std::vector<std::byte> out(v.size() * sizeof(T));
    std::memcpy(out.data(), v.data(), out.size());
    return out;
}

template <class T> std::span<const T> view_as(const std::vector<std::byte>& bytes) {
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
}

std::vector<float> normal(size_t count, uint64_t stream, float sd) {
    std::vector<float> v(count);
    rng::fill_normal(v, kPeerSeed, stream, 0.0f, sd);
    return v;
}

std::vector<float> uniform(size_t count, uint64_t stream, float lo, float hi) {
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i)
        v[i] = lo + (hi - lo) * static_cast<float>(rng::bits(kPeerSeed, stream, i) >> 40) / static_cast<float>(1 << 24);
    return v;
}

GemmPeerInputs bf16_inputs(const TaskGemm& t) {
    GemmPeerInputs in;
    in.routine = VendorRoutine::gemm_bf16;
    in.dims = lt_dims_for(in.routine, t);
    auto x = normal(t.m * t.k, x_stream, 1.0f);
    auto w = normal(t.n * t.k, w_stream, static_cast<float>(1.0 / std::sqrt(static_cast<double>(t.k))));
    std::vector<uint16_t> xb(x.size()), wb(w.size());
    for (size_t i = 0; i < x.size(); ++i) x[i] = bf16_to_float(xb[i] = float_to_bf16(x[i]));
    for (size_t i = 0; i < w.size(); ++i) w[i] = bf16_to_float(wb[i] = float_to_bf16(w[i]));
    in.a = bytes_of(wb);
    in.b = bytes_of(xb);
    in.output_bytes = t.m * t.n * 2;
    in.check = [t, x = std::move(x), w = std::move(w)](const std::vector<std::byte>& d) {
        return check_gemm_bf16(x, w, t.m, t.n, t.k, view_as<uint16_t>(d));
    };
    return in;
}

std::vector<int8_t> int8_values(size_t count, uint64_t stream) {
    std::vector<int8_t> v(count);
    for (size_t i = 0; i < count; ++i) v[i] = static_cast<int8_t>(static_cast<int>(rng::bits(kPeerSeed, stream, i) % 255) - 127);
    return v;
}

GemmPeerInputs int8_inputs(const TaskGemm& t) {
    GemmPeerInputs in;
    in.routine = VendorRoutine::gemm_int8;
    in.dims = lt_dims_for(in.routine, t);
    auto x = int8_values(t.m * t.k, x_stream), w = int8_values(t.n * t.k, w_stream);
    in.a = bytes_of(w);
    in.b = bytes_of(x);
    in.output_bytes = t.m * t.n * 4;
    in.check = [t, x = std::move(x), w = std::move(w)](const std::vector<std::byte>& d) {
        return check_gemm_int8(x, w, t.m, t.n, t.k, view_as<int32_t>(d));
    };
    return in;
}

// e4m3 values of normal(0, 1) data (no scaling needed: the peer's scales are drawn on their own).
std::vector<uint8_t> e4m3_values(size_t count, uint64_t stream, std::vector<float>& decoded) {
    const auto v = normal(count, stream, 1.0f);
    std::vector<uint8_t> q(count);
    decoded.resize(count);
    for (size_t i = 0; i < count; ++i) decoded[i] = e4m3_to_float(q[i] = float_to_e4m3(v[i]));
    return q;
}

GemmPeerInputs fp8_block_inputs(const TaskGemm& t) {
    GemmPeerInputs in;
    in.routine = VendorRoutine::gemm_fp8_block;
    in.dims = lt_dims_for(in.routine, t);
    const size_t k_blocks = (t.k + 127) / 128, n_blocks = (t.n + 127) / 128;
    std::vector<float> x, w;
    auto xq = e4m3_values(t.m * t.k, x_stream, x);
    auto wq = e4m3_values(t.n * t.k, w_stream, w);
    xq.resize(in.dims.n * t.k, 0);  // the padding tokens: zeros
    auto a_scale = uniform(t.m * k_blocks, a_scale_stream, 0.5f, 2.0f);
    auto b_scale = uniform(n_blocks * k_blocks, b_scale_stream, 0.5f, 2.0f);
    const BlockScaleCounts counts = gemm_fp8_block_scale_counts(in.dims);
    in.a = bytes_of(wq);
    in.b = bytes_of(xq);
    in.scale_a = lt_blk128_scales(b_scale, n_blocks, k_blocks, counts.a_lead);
    in.scale_b = lt_vec128_scales(a_scale, t.m, k_blocks, counts.b_lead);
    in.output_bytes = in.dims.n * t.n * 2;  // D has a column per padded token
    in.check = [t, x = std::move(x), w = std::move(w), a_scale = std::move(a_scale),
                b_scale = std::move(b_scale)](const std::vector<std::byte>& d) {
        return check_gemm_fp8_block(x, a_scale, w, b_scale, t.m, t.n, t.k, view_as<uint16_t>(d));
    };
    return in;
}

const char* peer_name(VendorRoutine routine) {
    switch (routine) {
        case VendorRoutine::gemm_int8: return "cuBLASLt int8 (int32 out, no scale epilogue)";
        case VendorRoutine::gemm_fp8_block: return "cuBLASLt fp8 block-scaled";
        default: return "cuBLASLt bf16";
    }
}

GemmPeerInputs inputs_for(VendorRoutine routine, const TaskGemm& t) {
    switch (routine) {
        case VendorRoutine::gemm_int8: return int8_inputs(t);
        case VendorRoutine::gemm_fp8_block: return fp8_block_inputs(t);
        default: return bf16_inputs(t);
    }
}

}  // namespace

PeerTiming time_gemm_peer(Device& device, CacheFlusher& flusher, VendorRoutine routine, const SizeSpec& size, int warmup,
                          int repeat) {
    const TaskGemm t = task_gemm(size);
    PeerTiming peer;
    peer.name = peer_name(routine);
    auto library = vendor_library(device, routine);
    if (!library) {
        peer.error = library.error().message;
        return peer;
    }
    peer.library = *library;
    const GemmPeerInputs in = inputs_for(routine, t);
    ScopedBuffers buffers(device);
    const std::vector<std::byte> poison(in.output_bytes, std::byte{0xFF});  // NaN in bf16, -1 in int32
    auto a = buffers.upload(in.a.data(), in.a.size());
    auto b = a ? buffers.upload(in.b.data(), in.b.size()) : a;
    auto d = b ? buffers.upload(poison.data(), poison.size()) : b;
    VendorCall call{routine, in.dims.n};
    call.m = in.dims.m;
    call.k = in.dims.k;
    if (d && routine == VendorRoutine::gemm_fp8_block) {
        auto sa = buffers.upload(in.scale_a);
        auto sb = sa ? buffers.upload(in.scale_b) : sa;
        if (!sb) d = sb.error();
        else call.scale_a = *sa, call.scale_b = *sb;
    }
    if (!d) {
        peer.error = d.error().message;
        return peer;
    }
    call.in = *a;
    call.in_b = *b;
    call.out = *d;
    const auto run_once = [&] { return run_vendor_timed(device, call); };
    time_calls(peer, flusher, warmup, repeat, run_once);
    if (!peer.ran()) return peer;
    // Once more into a poisoned D, so that the check sees what this very call wrote.
    std::vector<std::byte> written(in.output_bytes);
    Expected<void> done = device.upload(*d, 0, poison.data(), poison.size());
    if (done) {
        auto once = run_once();
        if (!once) done = once.error();
    }
    if (done) done = device.download(*d, 0, written.data(), written.size());
    if (!done) {
        peer.error = "checking the output: " + done.error().message;
        return peer;
    }
    const auto wrong = in.check(written);
    peer.check = wrong ? "wrong output: " + *wrong : "ok";
    return peer;
}

}  // namespace kevo
