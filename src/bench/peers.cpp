// The peers of fft3d and saxpy, and the dispatch to the GEMM tasks' peers (see peers.hpp).
#include "bench/peers.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "backend/vendor_routines.hpp"
#include "bench/gemm_peers.hpp"
#include "bench/peer_checks.hpp"
#include "bench/peer_timing.hpp"
#include "core/rng.hpp"
#include "eval/builtin_kernels.hpp"
#include "eval/device_lease.hpp"

namespace kevo {
namespace {

constexpr float kPeerAlpha = 2.5f;  // a in the axpy peers' y <- a x + y

// After the timing: the peer runs once more on fresh inputs (the timed calls may have updated its
// output in place) and what it wrote is checked, so no ratio is quoted against a wrong answer.
using OutputCheck = std::function<std::optional<std::string>(const std::vector<float>& output)>;

void check_peer_output(PeerTiming& peer, Device& device, BufferHandle output,
                       const std::vector<float>& fresh_output, const std::function<Expected<double>()>& call,
                       const OutputCheck& check) {
    if (!peer.ran()) return;
    std::vector<float> written(fresh_output.size());
    auto done = device.upload(output, 0, fresh_output.data(), fresh_output.size() * sizeof(float));
    if (done) {
        auto once = call();
        if (!once) done = once.error();
    }
    if (done) done = device.download(output, 0, written.data(), written.size() * sizeof(float));
    if (!done) {
        peer.error = "checking the output: " + done.error().message;
        return;
    }
    const auto wrong = check(written);
    peer.check = wrong ? "wrong output: " + *wrong : "ok";
}

// The peers' inputs at one size, each drawn once: saxpy's two peers read the same x and y (at the
// large profile, 2 x 2^28 normal floats, which drawing twice cost seconds).
class PeerInputs {
public:
    const std::vector<float>& normal(size_t count, uint64_t stream) {
        auto [at, fresh] = drawn_.try_emplace({count, stream});
        if (fresh) {
            at->second.resize(count);
            rng::fill_normal(at->second, 0x7065657273ull, stream, 0.0f, 1.0f);
        }
        return at->second;
    }

private:
    std::map<std::pair<size_t, uint64_t>, std::vector<float>> drawn_;
};

PeerTiming vendor_peer(Device& device, CacheFlusher& flusher, const char* name, VendorCall call,
                       const std::vector<float>& in, const std::vector<float>& out, const OutputCheck& check,
                       int warmup, int repeat) {
    PeerTiming peer;
    peer.name = name;
    auto library = vendor_library(device, call.routine);
    if (!library) {
        peer.error = library.error().message;
        return peer;
    }
    peer.library = *library;
    ScopedBuffers buffers(device);
    auto a = buffers.upload(in);
    auto b = a ? buffers.upload(out) : a;
    if (!b) {
        peer.error = b.error().message;
        return peer;
    }
    call.in = *a;
    call.out = *b;
    const auto run_once = [&] { return run_vendor_timed(device, call); };
    time_calls(peer, flusher, warmup, repeat, run_once);
    check_peer_output(peer, device, *b, out, run_once, check);
    return peer;
}

// y <- a x + y, one float4 per thread: the plain kernel anyone would write first.
PeerTiming vectorised_axpy_peer(Device& device, CacheFlusher& flusher, uint64_t n, const std::vector<float>& x,
                                const std::vector<float>& y, int warmup, int repeat) {
    PeerTiming peer;
    peer.name = "vectorised kernel";
    peer.library = "built-in " + builtin_file(device, "peer_axpy");
    auto compiled = compile_builtin(device, "peer_axpy", {});
    if (!compiled || !compiled->module) {
        peer.error = compiled ? "did not compile:\n" + compiled->log : compiled.error().message;
        return peer;
    }
    const uint32_t module = *compiled->module;
    auto kernel = device.kernel(module, "peer_axpy");
    ScopedBuffers buffers(device);
    auto xb = kernel ? buffers.upload(x) : Expected<BufferHandle>(kernel.error());
    auto yb = xb ? buffers.upload(y) : xb;
    if (!yb) {
        peer.error = yb.error().message;
        device.release_module(module);
        return peer;
    }
    Launch l;
    l.kernel = *kernel;
    l.block = {256, 1, 1};
    l.grid = {(n / 4 + 1 + 255) / 256, 1, 1};  // one more thread than float4s: it does the tail
    l.args = {KernelArg::buf(*xb), KernelArg::buf(*yb), KernelArg::f(kPeerAlpha), KernelArg::u(static_cast<uint32_t>(n))};
    const auto run_once = [&] { return device.run_timed(std::span<const Launch>(&l, 1)); };
    time_calls(peer, flusher, warmup, repeat, run_once);
    check_peer_output(peer, device, *yb, y, run_once,
                      [&](const std::vector<float>& y_out) { return check_axpy(x, y, kPeerAlpha, y_out); });
    if (!device.is_poisoned()) device.release_module(module);
    return peer;
}

using PeerFunction = PeerTiming (*)(Device&, CacheFlusher&, const SizeSpec&, PeerInputs&, int warmup, int repeat);

PeerTiming cufft_c2c(Device& device, CacheFlusher& flusher, const SizeSpec& size, PeerInputs& inputs, int warmup, int repeat) {
    const auto n = static_cast<uint64_t>(size.param("n"));
    const auto& data = inputs.normal(2 * n * n * n, 1);
    VendorCall call{VendorRoutine::fft3d_c2c, n};
    const auto check = [&](const std::vector<float>& out) { return check_fft3d(data, out, n); };
    return vendor_peer(device, flusher, "cuFFT", call, data, data, check, warmup, repeat);
}

PeerTiming cublas_saxpy(Device& device, CacheFlusher& flusher, const SizeSpec& size, PeerInputs& inputs, int warmup,
                        int repeat) {
    const auto n = static_cast<uint64_t>(size.param("n"));
    const auto &x = inputs.normal(n, 1), &y = inputs.normal(n, 2);
    VendorCall call{VendorRoutine::saxpy, n, {}, {}, kPeerAlpha};
    const auto check = [&](const std::vector<float>& y_out) { return check_axpy(x, y, kPeerAlpha, y_out); };
    return vendor_peer(device, flusher, "cuBLAS saxpy", call, x, y, check, warmup, repeat);
}

PeerTiming vectorised_axpy(Device& device, CacheFlusher& flusher, const SizeSpec& size, PeerInputs& inputs, int warmup,
                           int repeat) {
    const auto n = static_cast<uint64_t>(size.param("n"));
    return vectorised_axpy_peer(device, flusher, n, inputs.normal(n, 1), inputs.normal(n, 2), warmup, repeat);
}

// (cuBLASLt's GEMM peers draw their own typed operands: gemm_peers.cpp.)
template <VendorRoutine Routine>
PeerTiming cublaslt_gemm(Device& device, CacheFlusher& flusher, const SizeSpec& size, PeerInputs&, int warmup, int repeat) {
    return time_gemm_peer(device, flusher, Routine, size, warmup, repeat);
}

// The peer table: a new peer is one entry here and its function (in this file or its own).
const std::vector<std::pair<std::string, PeerFunction>>& peer_table() {
    static const std::vector<std::pair<std::string, PeerFunction>> table = {
        {"cufft_c2c", cufft_c2c},
        {"cublas_saxpy", cublas_saxpy},
        {"vectorised_axpy", vectorised_axpy},
        {"cublaslt_bf16", cublaslt_gemm<VendorRoutine::gemm_bf16>},
        {"cublaslt_int8", cublaslt_gemm<VendorRoutine::gemm_int8>},
        {"cublaslt_fp8_block", cublaslt_gemm<VendorRoutine::gemm_fp8_block>},
    };
    return table;
}

PeerFunction find_peer(const std::string& name) {
    for (const auto& [known, function] : peer_table())
        if (known == name) return function;
    return nullptr;
}

}  // namespace

std::vector<std::string> peer_names() {
    std::vector<std::string> names;
    for (const auto& [name, function] : peer_table()) names.push_back(name);
    return names;
}

bool is_peer_name(const std::string& name) { return find_peer(name) != nullptr; }

std::vector<PeerTiming> time_peers(Device& device, CacheFlusher& flusher, const TaskSpec& spec, const SizeSpec& size,
                                   int warmup, int repeat) {
    // Peers are timed here, in the parent, so they take the device's lease here (device_lease.hpp);
    // one that cannot be taken leaves the timing as it was before there were leases.
    const auto lease = DeviceLease::acquire(device.info());
    std::vector<PeerTiming> peers;
    PeerInputs inputs;
    for (const auto& name : spec.peers) {
        if (const PeerFunction function = find_peer(name)) {
            peers.push_back(function(device, flusher, size, inputs, warmup, repeat));
            continue;
        }
        PeerTiming unknown;
        unknown.name = name;
        unknown.error = fmt::format("task {} names peer '{}', which kevo does not know (known: {})", spec.name, name,
                                    fmt::join(peer_names(), ", "));
        peers.push_back(unknown);
    }
    return peers;
}

}  // namespace kevo
