// The comparison of a compiled kernel's parameters with the task's declared signature (a pure
// function: OpenCL with and without kernel-arg info, CUDA's sizes), and every task's declared
// signatures parsed to the parameters its cases pass.
#include <gtest/gtest.h>

#include <algorithm>

#include "eval/signature_check.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

const char* kHeatCl = "__kernel void heat_step(__global const float* u_in, __global float* u_out, uint nx, uint ny, float alpha)";
const char* kHeatCu = "extern \"C\" __global__ void heat_step(const float* u_in, float* u_out, unsigned nx, unsigned ny, float alpha)";

KernelSpec heat_step() {
    return KernelSpec{"heat_step",
                      {sig::const_ptr("u_in", ParamType::f32), sig::ptr("u_out", ParamType::f32), sig::value("nx", ParamType::u32),
                       sig::value("ny", ParamType::u32), sig::value("alpha", ParamType::f32)},
                      2,
                      Dim3{16, 16, 1}};
}

// The one neutral signature renders as each language's declaration.
TEST(SignatureCheck, TheNeutralSignatureRendersInEachLanguage) {
    EXPECT_EQ(signature_text(heat_step(), language_named("opencl")), kHeatCl);
    EXPECT_EQ(signature_text(heat_step(), language_named("cuda")), kHeatCu);
    KernelSpec undeclared = heat_step();
    undeclared.params.clear();
    EXPECT_EQ(signature_text(undeclared, language_named("cuda")), "");
}

KernelParam cl_param(std::string space, std::string type, std::string name, bool is_const = false) {
    KernelParam p;
    p.address_space = std::move(space);
    p.type_name = std::move(type);
    p.name = std::move(name);
    p.is_const = is_const;
    return p;
}

KernelParams detailed(std::vector<KernelParam> params) { return {true, true, std::move(params)}; }

KernelParams cuda_sizes(std::vector<uint64_t> sizes) {
    KernelParams k{true, false, {}};
    for (auto s : sizes) {
        KernelParam p;
        p.bytes = s;
        k.params.push_back(p);
    }
    return k;
}

TEST(SignatureCheck, ParsesOpenclAndCudaDeclarations) {
    const auto cl = parse_signature(kHeatCl);
    ASSERT_EQ(cl.size(), 5u);
    EXPECT_TRUE(cl[0].pointer);
    EXPECT_TRUE(cl[0].is_const);
    EXPECT_EQ(cl[0].address_space, "global");
    EXPECT_EQ(cl[0].type, "float");
    EXPECT_EQ(cl[0].name, "u_in");
    EXPECT_FALSE(cl[2].pointer);
    EXPECT_EQ(cl[2].type, "uint");
    EXPECT_EQ(cl[2].address_space, "private");
    const auto cu = parse_signature(kHeatCu);
    ASSERT_EQ(cu.size(), 5u);
    EXPECT_EQ(cu[2].type, "uint");  // "unsigned" is uint
    EXPECT_EQ(cu[2].name, "nx");
    EXPECT_EQ(parse_signature("__global__ void ising(signed char* spins)")[0].type, "char");
    EXPECT_TRUE(parse_signature("__kernel void k()").empty());
}

TEST(SignatureCheck, TheTasksOwnOpenclSignatureMatches) {
    const auto right = detailed({cl_param("global", "float*", "u_in", true), cl_param("global", "float*", "u_out"),
                                 cl_param("private", "uint", "nx"), cl_param("private", "uint", "ny"),
                                 cl_param("private", "float", "alpha")});
    EXPECT_EQ(signature_mismatch(heat_step(), language_named("opencl"), right), std::nullopt);
    // Names, const and the integers' sign do not matter: `int ny` reads the bits the task passes.
    auto renamed = right;
    renamed.params[0] = cl_param("global", "float*", "in");
    renamed.params[3] = cl_param("private", "int", "height");
    EXPECT_EQ(signature_mismatch(heat_step(), language_named("opencl"), renamed), std::nullopt);
}

TEST(SignatureCheck, AWrongOpenclSignatureNamesBoth) {
    const auto wrong = detailed({cl_param("global", "float*", "u"), cl_param("private", "int", "nx")});
    const auto message = signature_mismatch(heat_step(), language_named("opencl"), wrong);
    ASSERT_TRUE(message);
    EXPECT_EQ(*message, "kernel 'heat_step' takes (global float* u, int nx) but the task passes (global const float* u_in, "
                        "global float* u_out, uint nx, uint ny, float alpha)");
}

TEST(SignatureCheck, OpenclTypeAndAddressSpaceMismatchesAreFaults) {
    auto base = detailed({cl_param("global", "float*", "u_in", true), cl_param("global", "float*", "u_out"),
                          cl_param("private", "uint", "nx"), cl_param("private", "uint", "ny"),
                          cl_param("private", "float", "alpha")});
    auto scalar_type = base;
    scalar_type.params[4] = cl_param("private", "uint", "alpha");  // a float read as an integer
    EXPECT_TRUE(signature_mismatch(heat_step(), language_named("opencl"), scalar_type));
    auto element = base;
    element.params[1] = cl_param("global", "uint*", "u_out");  // floats read as integers
    EXPECT_TRUE(signature_mismatch(heat_step(), language_named("opencl"), element));
    auto vectorised = base;  // the same float buffer, read four at a time
    vectorised.params[1] = cl_param("global", "float4*", "u_out");
    EXPECT_EQ(signature_mismatch(heat_step(), language_named("opencl"), vectorised), std::nullopt);
    auto space = base;
    space.params[0] = cl_param("constant", "float*", "u_in", true);
    EXPECT_TRUE(signature_mismatch(heat_step(), language_named("opencl"), space));
    auto pointer = base;
    pointer.params[2] = cl_param("global", "uint*", "nx");
    EXPECT_TRUE(signature_mismatch(heat_step(), language_named("opencl"), pointer));
}

TEST(SignatureCheck, WithoutKernelArgInfoOnlyTheCountIsCompared) {
    KernelParams counted{true, false, std::vector<KernelParam>(5)};
    EXPECT_EQ(signature_mismatch(heat_step(), language_named("opencl"), counted), std::nullopt);
    counted.params.resize(2);
    const auto message = signature_mismatch(heat_step(), language_named("opencl"), counted);
    ASSERT_TRUE(message);
    EXPECT_NE(message->find("takes 2 parameters but the task passes 5: (global const float* u_in"), std::string::npos) << *message;
    // A backend that cannot list the parameters compares nothing.
    EXPECT_EQ(signature_mismatch(heat_step(), language_named("opencl"), KernelParams{}), std::nullopt);
}

TEST(SignatureCheck, CudaComparesCountAndSizes) {
    EXPECT_EQ(signature_mismatch(heat_step(), language_named("cuda"), cuda_sizes({8, 8, 4, 4, 4})), std::nullopt);
    const auto fewer = signature_mismatch(heat_step(), language_named("cuda"), cuda_sizes({8, 4}));
    ASSERT_TRUE(fewer);
    EXPECT_EQ(*fewer, "kernel 'heat_step' takes 2 parameters (8 B, 4 B) but the task passes 5: (const float* u_in [8 B], "
                      "float* u_out [8 B], uint nx [4 B], uint ny [4 B], float alpha [4 B])");
    // Five parameters, but a pointer where the task passes a float: the sizes differ.
    EXPECT_TRUE(signature_mismatch(heat_step(), language_named("cuda"), cuda_sizes({8, 8, 4, 4, 8})));
}

// A Triton kernel's declaration is a def of names and constexprs, not C: its compiled parameters
// (the compiler's own trailing ones already set aside) are compared with the task's parameters.
// Found on an H100: the def's text was parsed as C and counted one parameter too many.
TEST(SignatureCheck, TritonComparesTheTasksParametersNotTheDefsText) {
    const Language triton = language_named("triton");
    ASSERT_TRUE(triton);
    EXPECT_EQ(signature_mismatch(heat_step(), triton, cuda_sizes({8, 8, 4, 4, 4})), std::nullopt);
    const auto fewer = signature_mismatch(heat_step(), triton, cuda_sizes({8, 8, 4, 4}));
    ASSERT_TRUE(fewer);
    EXPECT_EQ(*fewer, "kernel 'heat_step' takes 4 parameters (8 B, 8 B, 4 B, 4 B) but the task passes 5: (u_in [8 B], "
                      "u_out [8 B], nx [4 B], ny [4 B], alpha [4 B])");
    EXPECT_TRUE(signature_mismatch(heat_step(), triton, cuda_sizes({8, 8, 4, 4, 8})));
}

// Every task's declared signatures parse to as many parameters as its cases pass to the kernel.
TEST(SignatureCheck, EveryTasksDeclaredSignaturesMatchTheArgumentsItPasses) {
    for (const auto& name : task_names()) {
        auto task = make_task(name);
        ASSERT_TRUE(task) << name;
        const auto& spec = (*task)->spec();
        const auto c = (*task)->make_case(spec.profiles.at("small").front(), 1, Trial::nominal);
        for (const auto& launch : c.launches) {
            const auto k = std::find_if(spec.kernels.begin(), spec.kernels.end(), [&](const KernelSpec& s) { return s.name == launch.kernel; });
            ASSERT_NE(k, spec.kernels.end()) << name << ": " << launch.kernel;
            for (const std::string& declared : {signature_text(*k, language_named("opencl")), signature_text(*k, language_named("cuda"))}) {
                const auto params = parse_signature(declared);
                ASSERT_EQ(params.size(), launch.args.size()) << name << ": " << declared;
                for (size_t i = 0; i < params.size(); ++i) {
                    const auto kind = launch.args[i].kind;
                    EXPECT_EQ(params[i].pointer, kind == ArgRef::Kind::buffer) << name << ": " << declared << " #" << i;
                    if (kind == ArgRef::Kind::f32) EXPECT_EQ(params[i].type, "float") << name << ": " << declared << " #" << i;
                    if (kind == ArgRef::Kind::u32) EXPECT_TRUE(params[i].type == "uint" || params[i].type == "int") << name << " #" << i;
                }
            }
        }
    }
}

}  // namespace
}  // namespace kevo
