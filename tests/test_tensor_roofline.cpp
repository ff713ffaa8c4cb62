// The multi-class roofline and the tensor-core ceilings: the speed-of-light math (memory binding,
// tensor binding with mixed dtypes summed, the CUDA cores beside the tensor cores, an absent class),
// the scores it gives (sizes of the scientific tasks unchanged), the ceiling cache holding the
// tensor classes (a real file), the datasheet fallback said loudly, PoCL getting no tensor ceiling,
// and the cuBLASLt ABI constants against the installed headers.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "backend/registry.hpp"
#include "eval/calibration.hpp"
#include "eval/roofline.hpp"
#include "temp_dir.hpp"

#if __has_include(<cublasLt.h>) && __has_include(<cuda.h>)
#include <cublasLt.h>

#include "backends/cuda/vendor_libraries.hpp"
#define KEVO_TEST_CUBLASLT_HEADERS 1
#endif

namespace kevo {
namespace {

// Round figures: 4800 GB/s, 50 TFLOP/s fp32, 1 PFLOP/s bf16, 2 PFLOP/s fp8, int8 absent.
Calibration ceilings() {
    Calibration c;
    c.device_key = "cuda_Test_GPU_1";
    c.device_name = "Test GPU";
    c.source = "measured";
    c.bandwidth_gbs = 4800;
    c.fp32_gflops = 50e3;
    c.curve = {{64e6, 9000, 9600}, {1e9, 4800, 4700}};  // a cache-resident working set streams at 9600 GB/s
    c.tensor = {{ComputeClass::tensor_bf16, CeilingSource::measured, 1e6, {0.9e6, 1e6}, "test GEMM"},
                {ComputeClass::tensor_fp8, CeilingSource::measured, 2e6, {2e6}, "test GEMM"},
                {ComputeClass::tensor_int8, CeilingSource::absent, 0, {}, "no vendor library for int8 GEMM"}};
    return c;
}

TEST(SpeedOfLight, MemoryBindsWhenTheBytesTakeLonger) {
    // 4.8 GB at 4800 GB/s: 1 ms; 1e11 bf16 FLOPs at 1 PFLOP/s: 0.1 ms.
    const auto s = speed_of_light({{ComputeClass::tensor_bf16, 1e11}}, 4.8e9, 4800, ceilings());
    EXPECT_DOUBLE_EQ(s.memory_seconds, 1e-3);
    EXPECT_DOUBLE_EQ(s.tensor_seconds, 1e-4);
    EXPECT_DOUBLE_EQ(s.seconds, 1e-3);
    EXPECT_EQ(s.limiter, Limiter::memory);
    EXPECT_TRUE(s.missing.empty());
}

TEST(SpeedOfLight, TensorClassesAddUpAndBindOverMemory) {
    // bf16 5e11 at 1 PF: 0.5 ms; fp8 1e12 at 2 PF: 0.5 ms; together 1 ms (the max over dtypes would
    // say 0.5 ms); memory 0.96 GB: 0.2 ms.
    const auto s = speed_of_light({{ComputeClass::tensor_bf16, 5e11}, {ComputeClass::tensor_fp8, 1e12}}, 0.96e9, 4800,
                                  ceilings());
    EXPECT_DOUBLE_EQ(s.tensor_seconds, 1e-3);
    EXPECT_DOUBLE_EQ(s.memory_seconds, 2e-4);
    EXPECT_DOUBLE_EQ(s.seconds, 1e-3);
    EXPECT_EQ(s.limiter, Limiter::tensor_cores);
}

TEST(SpeedOfLight, CudaCoresRunBesideTheTensorCores) {
    // fp32 3e10 at 50 TF: 0.6 ms; bf16 5e11: 0.5 ms. Separate pipes: 0.6 ms, not 1.1 ms.
    const auto s = speed_of_light({{ComputeClass::fp32, 3e10}, {ComputeClass::tensor_bf16, 5e11}}, 0, 4800, ceilings());
    EXPECT_DOUBLE_EQ(s.cuda_core_seconds, 6e-4);
    EXPECT_DOUBLE_EQ(s.seconds, 6e-4);
    EXPECT_EQ(s.limiter, Limiter::cuda_cores);
}

TEST(SpeedOfLight, AnAbsentClassIsLeftOutAndNamed) {
    const auto s = speed_of_light({{ComputeClass::tensor_int8, 1e15}, {ComputeClass::tensor_bf16, 1e11}}, 0.48e9, 4800,
                                  ceilings());
    ASSERT_EQ(s.missing.size(), 1u);
    EXPECT_EQ(s.missing[0], ComputeClass::tensor_int8);
    EXPECT_DOUBLE_EQ(s.seconds, 1e-4);  // the bf16 and memory terms only (both 0.1 ms)
}

Case gemm_case(double bytes, double bf16_flops, double working_set) {
    Case c;
    c.flops_by_class = {{ComputeClass::tensor_bf16, bf16_flops}};
    c.roofline_bytes = bytes;
    c.working_set_bytes = working_set;
    c.work = 123;  // not used on the multi-class roofline
    return c;
}

TEST(MultiClassScore, FractionIsSpeedOfLightOverTheMedianInTheLimitersUnit) {
    SizeResult s;
    s.label = "4096";
    s.seconds = 2e-3;
    score_size(s, Bound::bandwidth, gemm_case(0.96e9, 1e12, 1e9), ceilings(), RooflineMode::static_peak);
    EXPECT_EQ(s.limiter, Limiter::tensor_cores);
    EXPECT_DOUBLE_EQ(s.sol_seconds, 1e-3);
    EXPECT_DOUBLE_EQ(s.fraction, 0.5);
    EXPECT_EQ(s.unit, "GFLOP/s");
    EXPECT_DOUBLE_EQ(s.work, 1e12);
    EXPECT_DOUBLE_EQ(s.achieved, 5e5);   // 1e12 FLOPs in 2 ms
    EXPECT_DOUBLE_EQ(s.ceiling, 1e6);    // what the bound allows: the bf16 peak
    EXPECT_NEAR(s.achieved / s.ceiling, s.fraction, 1e-12);
    EXPECT_FALSE(beyond_physical(s));

    // Faster than the speed of light by more than 5%: beyond what the device can do.
    s.seconds = 0.9e-3;
    score_size(s, Bound::bandwidth, gemm_case(0.96e9, 1e12, 1e9), ceilings(), RooflineMode::static_peak);
    EXPECT_GT(s.fraction, kImplausibleFraction);
    EXPECT_TRUE(beyond_physical(s));
}

TEST(MultiClassScore, AMemoryBoundSizeUsesTheWorkloadBandwidthUnderWorkload) {
    // 0.96 GB: 0.2 ms at 4800 GB/s; its 64 MB working set streams at 9600 GB/s: 0.1 ms.
    SizeResult s;
    s.seconds = 4e-4;
    const Case c = gemm_case(0.96e9, 1e9, 64e6);
    score_size(s, Bound::compute, c, ceilings(), RooflineMode::static_peak);
    EXPECT_EQ(s.limiter, Limiter::memory);
    EXPECT_EQ(s.unit, "GB/s");
    EXPECT_DOUBLE_EQ(s.fraction, 0.5);
    EXPECT_DOUBLE_EQ(s.ceiling, 4800);
    EXPECT_DOUBLE_EQ(s.ceiling_workload, 9600);
    score_size(s, Bound::compute, c, ceilings(), RooflineMode::workload);
    EXPECT_DOUBLE_EQ(s.fraction, 0.25);
    EXPECT_DOUBLE_EQ(s.ceiling, 9600);
}

TEST(MultiClassScore, ASizeWithoutFlopsByClassKeepsTheScientificScore) {
    Case c;
    c.work = 9.6e9;  // bytes
    c.working_set_bytes = 1e9;
    SizeResult s;
    s.seconds = 4e-3;
    s.work = c.work;
    score_size(s, Bound::bandwidth, c, ceilings(), RooflineMode::static_peak);
    EXPECT_EQ(s.limiter, Limiter::none);
    EXPECT_DOUBLE_EQ(s.sol_seconds, 0);
    EXPECT_DOUBLE_EQ(s.achieved, 2400);
    EXPECT_DOUBLE_EQ(s.fraction, 0.5);
    EXPECT_FALSE(roofline_note(s, c, ceilings()));
}

TEST(MultiClassScore, TheLimiterTravelsInJson) {
    SizeResult s;
    s.limiter = Limiter::tensor_cores;
    s.sol_seconds = 1e-3;
    nlohmann::json j = s;
    EXPECT_EQ(j["limiter"], "tensor_cores");
    EXPECT_EQ(j["sol_seconds"], 1e-3);
    SizeResult back = j.get<SizeResult>();
    EXPECT_EQ(back.limiter, Limiter::tensor_cores);
    nlohmann::json bad = j;
    bad["limiter"] = "warp_schedulers";
    EXPECT_THROW(bad.get<SizeResult>(), nlohmann::json::exception);
}

TEST(MultiClassScore, AbsentAndDatasheetClassesAreSaidInTheResult) {
    Calibration c = ceilings();
    Case needs_int8;
    needs_int8.flops_by_class = {{ComputeClass::tensor_int8, 1e12}};
    needs_int8.roofline_bytes = 1e6;
    SizeResult s;
    s.label = "m256";
    auto note = roofline_note(s, needs_int8, c);
    ASSERT_TRUE(note);
    EXPECT_NE(note->find("NO ceiling for int8"), std::string::npos) << *note;
    EXPECT_NE(note->find("no vendor library"), std::string::npos) << *note;
    EXPECT_NE(note->find("lower bound"), std::string::npos) << *note;

    c.tensor[0].source = CeilingSource::datasheet;
    auto sheet = roofline_note(s, gemm_case(1e6, 1e12, 1e6), c);
    ASSERT_TRUE(sheet);
    EXPECT_NE(sheet->find("DATASHEET"), std::string::npos) << *sheet;
    EXPECT_NE(sheet->find("bf16 1000 TFLOP/s"), std::string::npos) << *sheet;
    c.tensor[0].source = CeilingSource::measured;
    EXPECT_FALSE(roofline_note(s, gemm_case(1e6, 1e12, 1e6), c));
}

// ---- the ceiling cache and the datasheet ----

Calibration cacheable(const DeviceInfo& info) {
    Calibration c = ceilings();
    c.device_key = calibration_key(info);
    c.measured_at = "2026-12-02T03:00:00Z";
    c.datasheet = datasheet_for("NVIDIA H200");
    return c;
}

TEST(TensorCeilingCache, HoldsTheTensorClassesInARealFile) {
    test::TempDir dir("tensor-ceilings");
    test::ScopedEnv cache("KEVO_CACHE_DIR", dir.file("cache"));
    DeviceInfo info;
    info.backend = "cuda";
    info.name = "NVIDIA H200";
    info.driver = "580.159.04";
    const Calibration c = cacheable(info);
    ASSERT_TRUE(store_calibration(c));
    auto back = load_cached_calibration(info);
    ASSERT_TRUE(back);
    ASSERT_EQ(back->tensor.size(), 3u);
    // int8 was absent; reading it back bounds it by the datasheet's dense figure (eval/ceiling_ratchet.hpp).
    EXPECT_EQ(back->tensor[2].source, CeilingSource::datasheet);
    EXPECT_DOUBLE_EQ(back->tensor[2].gflops, 1978900);
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(back->tensor[i].kind, c.tensor[i].kind);
        EXPECT_EQ(back->tensor[i].source, c.tensor[i].source);
        EXPECT_DOUBLE_EQ(back->tensor[i].gflops, c.tensor[i].gflops);
        EXPECT_EQ(back->tensor[i].runs, c.tensor[i].runs);
        EXPECT_EQ(back->tensor[i].how, c.tensor[i].how);
    }
    EXPECT_DOUBLE_EQ(back->peak_gflops(ComputeClass::tensor_fp8), 2e6);
    EXPECT_DOUBLE_EQ(back->peak_gflops(ComputeClass::fp32), 50e3);
    EXPECT_DOUBLE_EQ(back->peak_gflops(ComputeClass::tensor_int8), 1978900);
    ASSERT_TRUE(back->datasheet);
    EXPECT_DOUBLE_EQ(back->datasheet->tensor_gflops.at(ComputeClass::tensor_bf16), 989400);

    // What a result carries about them.
    const auto used = ceilings_used(*back);
    ASSERT_EQ(used.tensor.size(), 3u);
    EXPECT_EQ(used.tensor[1].kind, "fp8");
    EXPECT_EQ(used.tensor[1].source, "measured");
    EXPECT_EQ(used.tensor[2].source, "datasheet");
    EXPECT_DOUBLE_EQ(used.datasheet_bandwidth_gbs, 4800);
    EXPECT_EQ(used.datasheet_tensor.size(), 3u);
}

TEST(TensorCeilingCache, RejectsBadTensorEntriesNamingThem) {
    DeviceInfo info;
    info.backend = "cuda";
    info.name = "NVIDIA H200";
    const nlohmann::json good = to_json(cacheable(info));
    auto expect_rejected = [](const nlohmann::json& j, const std::string& needle) {
        auto c = calibration_from_json(j);
        ASSERT_FALSE(c) << "accepted " << j["tensor"].dump();
        EXPECT_NE(c.error().message.find(needle), std::string::npos) << c.error().message;
    };
    nlohmann::json j = good;
    j["tensor"][0]["class"] = "fp32";
    expect_rejected(j, "tensor[0].class");
    j = good;
    j["tensor"][1]["source"] = "guessed";
    expect_rejected(j, "tensor[1].source");
    j = good;
    j["tensor"][0]["gflops"] = 0;
    expect_rejected(j, "tensor[0].gflops");
    j = good;
    j["tensor"][2]["class"] = "bf16";
    expect_rejected(j, "twice");
    j = good;
    j.erase("tensor");
    expect_rejected(j, "'tensor'");
    j = good;
    j["datasheet"]["tensor_gflops"]["fp4"] = 1.0;
    expect_rejected(j, "fp4");
    // A version-3 file (before the tensor classes) is re-measured, not read without them.
    j = good;
    j["version"] = 3;
    expect_rejected(j, "version");
}

TEST(TensorCeilingDatasheet, H200FiguresAndTheFallbackSaidLoudly) {
    auto sheet = datasheet_for("NVIDIA H200");
    ASSERT_TRUE(sheet);
    EXPECT_DOUBLE_EQ(sheet->tensor_gflops.at(ComputeClass::tensor_bf16), 989400);
    EXPECT_DOUBLE_EQ(sheet->tensor_gflops.at(ComputeClass::tensor_fp8), 1978900);
    EXPECT_DOUBLE_EQ(sheet->tensor_gflops.at(ComputeClass::tensor_int8), 1978900);
    EXPECT_FALSE(datasheet_for("NVIDIA A100 80GB")->tensor_gflops.count(ComputeClass::tensor_fp8));  // Ampere has no fp8
    EXPECT_TRUE(datasheet_for("NVIDIA GeForce RTX 4090")->tensor_gflops.empty());

    DeviceInfo info;
    info.backend = "cuda";
    info.name = "NVIDIA H200";
    auto c = datasheet_calibration(info);
    ASSERT_TRUE(c);
    ASSERT_EQ(c->tensor.size(), 3u);
    for (const auto& t : c->tensor) {
        EXPECT_EQ(t.source, CeilingSource::datasheet);
        EXPECT_NE(t.how.find("not measured"), std::string::npos) << t.how;
    }
    const auto lines = describe_tensor_ceilings(*c);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_NE(lines[0].find("tensor bf16: 989.4 TFLOP/s from the DATASHEET"), std::string::npos) << lines[0];

    // A device the table has no tensor figures for: absent, and said so.
    const auto absent = datasheet_tensor_ceilings(datasheet_for("NVIDIA A100 80GB"), "no vendor library");
    EXPECT_EQ(absent[0].source, CeilingSource::datasheet);
    EXPECT_EQ(absent[1].source, CeilingSource::absent);
    EXPECT_NE(absent[1].how.find("no vendor library"), std::string::npos) << absent[1].how;
    Calibration with_absent = *c;
    with_absent.tensor = absent;
    EXPECT_NE(describe_tensor_ceilings(with_absent)[1].find("tensor fp8: ABSENT"), std::string::npos);
}

TEST(TensorCeilingDatasheet, AMeasurementIsShownBesideTheDatasheet) {
    Calibration c = ceilings();
    c.datasheet = datasheet_for("NVIDIA H200");
    c.tensor[0].gflops = 788000;
    const auto lines = describe_tensor_ceilings(c);
    EXPECT_NE(lines[0].find("tensor bf16: 788.0 TFLOP/s measured (test GEMM); datasheet 989 TFLOP/s (80% of it)"),
              std::string::npos)
        << lines[0];
}

// PoCL has no vendor GEMM and is in no datasheet: every tensor class is absent, with the reason.
TEST(TensorCeilingMeasure, PoclHasNoTensorCeilings) {
    auto backend = make_backend("opencl");
    const auto devices = backend->probe();
    if (devices.empty()) GTEST_SKIP() << backend->unavailable_reason();
    auto device = backend->open(devices.front().index);
    ASSERT_TRUE(device) << device.error().message;
    std::vector<std::string> lines;
    CalibrationOptions options;
    options.progress = [&](const std::string& line) { lines.push_back(line); };
    const auto tensor = measure_tensor_ceilings(**device, std::nullopt, options);
    ASSERT_EQ(tensor.size(), 3u);
    for (const auto& t : tensor) {
        EXPECT_EQ(t.source, CeilingSource::absent);
        EXPECT_EQ(t.gflops, 0);
        EXPECT_NE(t.how.find("no vendor library"), std::string::npos) << t.how;
    }
    EXPECT_EQ(lines.size(), 3u);
}

#ifdef KEVO_TEST_CUBLASLT_HEADERS
// kevo declares cuBLASLt's entry points itself (it loads the library at run time); the values and
// the heuristic result's layout must match the headers where they are installed.
TEST(CublasLtAbi, ConstantsAndLayoutMatchTheHeaders) {
    using L = cuda::CublasLtApi;
    static_assert(L::kR32F == CUDA_R_32F && L::kR8I == CUDA_R_8I && L::kR32I == CUDA_R_32I && L::kR16BF == CUDA_R_16BF &&
                  L::kR8F_E4M3 == CUDA_R_8F_E4M3);
    static_assert(L::kCompute32F == CUBLAS_COMPUTE_32F && L::kCompute32I == CUBLAS_COMPUTE_32I);
    static_assert(L::kOpN == CUBLAS_OP_N && L::kOpT == CUBLAS_OP_T);
    static_assert(L::kDescTransA == CUBLASLT_MATMUL_DESC_TRANSA && L::kDescTransB == CUBLASLT_MATMUL_DESC_TRANSB);
    static_assert(L::kPrefMaxWorkspaceBytes == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
    static_assert(sizeof(L::HeuristicResult) == sizeof(cublasLtMatmulHeuristicResult_t));
    static_assert(sizeof(L::Algo) == sizeof(cublasLtMatmulAlgo_t));
    EXPECT_EQ(offsetof(L::HeuristicResult, workspace_size), offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize));
    EXPECT_EQ(offsetof(L::HeuristicResult, state), offsetof(cublasLtMatmulHeuristicResult_t, state));
}
#endif

}  // namespace
}  // namespace kevo
