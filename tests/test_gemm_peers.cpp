// Tests of the GEMM peers' host side (no GPU here): the task-to-cuBLASLt translation (extents, the
// row-major C = X W^T as cuBLASLt's column-major "TN" D, the block scales re-laid for VEC128 and
// BLK128x128), the square calls of the tensor ceilings kept, the cuBLASLt version gate of block
// scaling, the sampled output checks on both sides, and the ABI constants against the headers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>

#include "backend/registry.hpp"
#include "backends/cuda/lt_gemm.hpp"
#include "bench/gemm_peer_layout.hpp"
#include "bench/gemm_peers.hpp"
#include "bench/peer_checks.hpp"
#include "core/dtypes.hpp"
#include "core/rng.hpp"
#include "eval/cache_flusher.hpp"
#include "task/registry.hpp"
#include "task/gemm_reference.hpp"

#if __has_include(<cublasLt.h>) && __has_include(<cuda.h>)
#include <cublasLt.h>

#include "backends/cuda/vendor_libraries.hpp"
#define KEVO_TEST_CUBLASLT_HEADERS 1
#endif

namespace kevo {
namespace {

TEST(GemmPeerLayout, TaskExtentIsTransposedAndFp8BlockPadsTheTokens) {
    EXPECT_EQ(lt_dims_for(VendorRoutine::gemm_bf16, {7, 384, 320}), (GemmDims{384, 7, 320}));
    EXPECT_EQ(lt_dims_for(VendorRoutine::gemm_int8, {1, 256, 256}), (GemmDims{256, 1, 256}));
    EXPECT_EQ(lt_dims_for(VendorRoutine::gemm_fp8_block, {7, 384, 320}), (GemmDims{384, 8, 320}));
    EXPECT_EQ(lt_dims_for(VendorRoutine::gemm_fp8_block, {8, 384, 320}), (GemmDims{384, 8, 320}));
}

TEST(GemmPeerLayout, CeilingCallsStayCubes) {
    VendorCall square{VendorRoutine::gemm_bf16, 8192};
    EXPECT_EQ(gemm_dims(square), (GemmDims{8192, 8192, 8192}));
    VendorCall general{VendorRoutine::gemm_bf16, 7};
    general.m = 384, general.k = 320;
    EXPECT_EQ(gemm_dims(general), (GemmDims{384, 7, 320}));
    EXPECT_EQ(cuda::gemm_a_bytes(VendorRoutine::gemm_bf16, {384, 7, 320}), 384u * 320 * 2);
    EXPECT_EQ(cuda::gemm_b_bytes(VendorRoutine::gemm_int8, {384, 7, 320}), 7u * 320);
    EXPECT_EQ(cuda::gemm_output_bytes(VendorRoutine::gemm_int8, {384, 7, 320}), 384u * 7 * 4);
    EXPECT_EQ(cuda::gemm_output_bytes(VendorRoutine::gemm_fp8_block, {384, 8, 320}), 384u * 8 * 2);
    EXPECT_TRUE(cuda::is_gemm(VendorRoutine::gemm_fp8_block));
    EXPECT_FALSE(cuda::is_gemm(VendorRoutine::saxpy));
}

// cuBLASLt's D = A^T B with A = W and B = X, read row-major, is the task's C = X W^T.
TEST(GemmPeerLayout, TnGemmOfWeightsAndActivationsIsTheTasksProduct) {
    const size_t m = 5, n = 12, k = 7;
    std::vector<float> x(m * k), w(n * k);
    rng::fill_normal(x, 1, 1, 0.0f, 1.0f);
    rng::fill_normal(w, 1, 2, 0.0f, 1.0f);
    const GemmDims dims = lt_dims_for(VendorRoutine::gemm_bf16, {m, n, k});
    const auto d = lt_tn_reference(w, x, dims);
    const auto c = matmul_abt(x, w, m, n, k);
    ASSERT_EQ(d.size(), c.size());
    for (size_t i = 0; i < c.size(); ++i) EXPECT_DOUBLE_EQ(d[i], c[i]) << i;
}

TEST(GemmPeerLayout, BlockScalesAreReLaidWithPaddedLeadingExtents) {
    // a_scale [3 tokens, 2 k-blocks] row-major -> VEC128: 2 rows of 4 (tokens fastest, one pad).
    const std::vector<float> a_scale = {1, 2, 3, 4, 5, 6};
    EXPECT_EQ(lt_vec128_scales(a_scale, 3, 2, 4), (std::vector<float>{1, 3, 5, 0, 2, 4, 6, 0}));
    // b_scale [2 n-blocks, 3 k-blocks] row-major -> BLK128x128: 2 columns of 4 k-blocks.
    const std::vector<float> b_scale = {1, 2, 3, 4, 5, 6};
    EXPECT_EQ(lt_blk128_scales(b_scale, 2, 3, 4), (std::vector<float>{1, 2, 3, 0, 4, 5, 6, 0}));
    // The counts the device checks the buffers against: m 384 (3 blocks), k 320 (3 blocks), n 8.
    const BlockScaleCounts counts = gemm_fp8_block_scale_counts({384, 8, 320});
    EXPECT_EQ(counts.a_lead, 4u);
    EXPECT_EQ(counts.b_lead, 8u);
    EXPECT_EQ(counts.a, 12u);
    EXPECT_EQ(counts.b, 24u);
}

TEST(GemmPeerLayout, BlockScalingNeedsCuBlasLt129) {
    EXPECT_EQ(cuda::block_scale_support(120900), "");
    EXPECT_EQ(cuda::block_scale_support(130100), "");
    const std::string why = cuda::block_scale_support(120804);
    EXPECT_NE(why.find("120804"), std::string::npos) << why;
    EXPECT_NE(why.find("12.9"), std::string::npos) << why;
}

// Each task names its peers in its own folder; every name is one the peer table knows.
TEST(GemmPeers, TasksDeclareTheirPeersByNamesThePeerTableKnows) {
    const std::map<std::string, std::vector<std::string>> expected = {
        {"gemm_bf16", {"cublaslt_bf16"}},       {"gemm_w8a8", {"cublaslt_int8"}},
        {"gemm_fp8_block", {"cublaslt_fp8_block"}}, {"fft3d", {"cufft_c2c"}},
        {"saxpy", {"cublas_saxpy", "vectorised_axpy"}}};
    for (const auto& name : task_names()) {
        auto task = make_task(name);
        ASSERT_TRUE(task) << name;
        const auto& peers = (*task)->spec().peers;
        for (const auto& peer : peers) EXPECT_TRUE(is_peer_name(peer)) << name << " names unknown peer " << peer;
        const auto it = expected.find(name);
        EXPECT_EQ(peers, it == expected.end() ? std::vector<std::string>{} : it->second) << name;
    }
    EXPECT_FALSE(is_peer_name("cublaslt_bf17"));
    EXPECT_EQ(peer_names().size(), 6u);
}

// On PoCL: saxpy's two peers in the order it declares them (cuBLAS cannot run on OpenCL and says
// why; the vectorised kernel runs and its output is checked), and a name the table lacks is a peer
// that did not run, naming the names it knows.
TEST(GemmPeers, DeclaredPeersRunInOrderAndAnUnknownNameSaysSo) {
    auto backend = make_backend("opencl");
    if (!backend || backend->probe().empty()) GTEST_SKIP() << "no OpenCL device";
    auto device = backend->open(0);
    ASSERT_TRUE(device) << device.error().message;
    CacheFlusher flusher(**device);
    auto saxpy = make_task("saxpy");
    ASSERT_TRUE(saxpy);
    TaskSpec spec = (*saxpy)->spec();
    const SizeSpec& size = spec.profiles.at("small").at(0);
    const auto peers = time_peers(**device, flusher, spec, size, 1, 3);
    ASSERT_EQ(peers.size(), 2u);
    EXPECT_EQ(peers[0].name, "cuBLAS saxpy");
    EXPECT_FALSE(peers[0].ran());
    EXPECT_EQ(peers[1].name, "vectorised kernel");
    EXPECT_TRUE(peers[1].right()) << peers[1].error << peers[1].check;
    EXPECT_GT(peers[1].seconds, 0);
    spec.peers = {"cublaslt_bf17"};
    const auto unknown = time_peers(**device, flusher, spec, size, 1, 3);
    ASSERT_EQ(unknown.size(), 1u);
    EXPECT_FALSE(unknown[0].ran());
    EXPECT_NE(unknown[0].error.find("'cublaslt_bf17'"), std::string::npos) << unknown[0].error;
    EXPECT_NE(unknown[0].error.find("cublaslt_bf16"), std::string::npos) << unknown[0].error;
}

// ---------------------------------------------------------------------------------------------
// the sampled checks, both sides

TEST(GemmPeerChecks, SamplesIncludeTheCornersAndAreDistinct) {
    const auto s = gemm_check_samples(7, 384);
    EXPECT_EQ(s.size(), 64u);
    for (const auto corner : {std::pair<size_t, size_t>{0, 0}, {0, 383}, {6, 0}, {6, 383}})
        EXPECT_NE(std::find(s.begin(), s.end(), corner), s.end());
    auto sorted = s;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end());
    EXPECT_EQ(gemm_check_samples(1, 2).size(), 2u);  // a 1 x 2 result has two elements
}

std::vector<uint16_t> rounded(const std::vector<double>& exact) {
    std::vector<uint16_t> out(exact.size());
    for (size_t i = 0; i < exact.size(); ++i) out[i] = float_to_bf16(static_cast<float>(exact[i]));
    return out;
}

TEST(GemmPeerChecks, Bf16RightPassesAndAnUlpOffAtASampleFails) {
    const size_t m = 3, n = 40, k = 64;
    std::vector<float> x(m * k), w(n * k);
    rng::fill_normal(x, 2, 1, 0.0f, 1.0f);
    rng::fill_normal(w, 2, 2, 0.0f, 0.125f);
    for (auto* v : {&x, &w})
        for (float& f : *v) f = round_to_bf16(f);
    auto c = rounded(matmul_abt(x, w, m, n, k));
    EXPECT_EQ(check_gemm_bf16(x, w, m, n, k, c), std::nullopt);
    uint16_t& corner = c[(m - 1) * n + (n - 1)];
    corner = float_to_bf16(bf16_to_float(corner) + 1.0f);  // a corner, one off
    const auto wrong = check_gemm_bf16(x, w, m, n, k, c);
    ASSERT_TRUE(wrong.has_value());
    EXPECT_NE(wrong->find("C[2, 39]"), std::string::npos) << *wrong;
}

TEST(GemmPeerChecks, Int8IsExact) {
    const size_t m = 2, n = 3, k = 4;
    const std::vector<int8_t> x = {127, -127, 1, 2, -128, 0, 5, 7};
    const std::vector<int8_t> w = {1, 1, 1, 1, 127, 127, 127, 127, -1, 2, -3, 4};
    std::vector<int32_t> c(m * n);
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j)
            for (size_t p = 0; p < k; ++p) c[i * n + j] += x[i * k + p] * w[j * k + p];
    EXPECT_EQ(check_gemm_int8(x, w, m, n, k, c), std::nullopt);
    c[1 * n + 2] += 1;
    EXPECT_TRUE(check_gemm_int8(x, w, m, n, k, c).has_value());
}

TEST(GemmPeerChecks, Fp8BlockRightPassesAndTransposedScalesFail) {
    const size_t m = 4, n = 256, k = 256, kb = 2;
    std::vector<float> x(m * k), w(n * k);
    rng::fill_normal(x, 3, 1, 0.0f, 1.0f);
    rng::fill_normal(w, 3, 2, 0.0f, 1.0f);
    for (auto* v : {&x, &w})
        for (float& f : *v) f = e4m3_to_float(float_to_e4m3(f));
    const std::vector<float> a_scale = {0.5f, 2, 1, 1.5f, 0.75f, 1.25f, 2, 0.5f};  // [4, 2]
    const std::vector<float> b_scale = {1, 2, 0.5f, 4};                           // [2, 2]
    auto expected = [&](const std::vector<float>& as, const std::vector<float>& bs) {
        std::vector<double> c(m * n);
        for (size_t i = 0; i < m; ++i)
            for (size_t j = 0; j < n; ++j)
                for (size_t p = 0; p < k; ++p)
                    c[i * n + j] += static_cast<double>(as[i * kb + p / 128]) * bs[(j / 128) * kb + p / 128] * x[i * k + p] *
                                    w[j * k + p];
        return c;
    };
    EXPECT_EQ(check_gemm_fp8_block(x, a_scale, w, b_scale, m, n, k, rounded(expected(a_scale, b_scale))), std::nullopt);
    const std::vector<float> b_transposed = {1, 0.5f, 2, 4};  // the k-block and n-block axes swapped
    EXPECT_TRUE(check_gemm_fp8_block(x, a_scale, w, b_scale, m, n, k, rounded(expected(a_scale, b_transposed))).has_value());
}

#ifdef KEVO_TEST_CUBLASLT_HEADERS
TEST(CublasLtAbi, BlockScaleConstantsMatchTheHeaders) {
    using L = cuda::CublasLtApi;
    static_assert(L::kDescAScalePointer == CUBLASLT_MATMUL_DESC_A_SCALE_POINTER &&
                  L::kDescBScalePointer == CUBLASLT_MATMUL_DESC_B_SCALE_POINTER);
    static_assert(L::kDescAScaleMode == CUBLASLT_MATMUL_DESC_A_SCALE_MODE &&
                  L::kDescBScaleMode == CUBLASLT_MATMUL_DESC_B_SCALE_MODE);
    static_assert(L::kScaleVec128_32F == CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F &&
                  L::kScaleBlk128x128_32F == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F);
    SUCCEED();
}
#endif

}  // namespace
}  // namespace kevo
