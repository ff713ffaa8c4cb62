// How strict fused_moe's large-size check is (the seed on the device as the reference) towards
// correct kernels: two fp32 kernels simulated on the host at a large size, one summing in order as
// seed.cu does, one in blocks of 16 as an mma k-step does, each rounding act and out once; the
// first's outputs are the reference, the second is checked against them. Prints how many act
// elements the two rounded differently and the check's verdict, error and tolerance (tolerance /
// error is the margin). Not a test: a few minutes of CPU at the default size.
// Usage: kevo_fused_moe_check [SIZE_INDEX of the large profile, default 0] [INPUT_SEED, default 1]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/dtypes.hpp"
#include "core/parallel.hpp"
#include "task/registry.hpp"

namespace {

using namespace kevo;

struct Outputs {
    std::vector<uint16_t> act, out;
};

// sum_h w[h] v[h] in fp32: in order, or as partial sums of 16 added in order.
float dot(const uint16_t* w, const float* v, size_t n, bool blocked) {
    float acc = 0;
    for (size_t h0 = 0; h0 < n; h0 += blocked ? 16 : n) {
        float part = 0;
        for (size_t h = h0; h < (blocked ? h0 + 16 : n); ++h) part += bf16_to_float(w[h]) * v[h];
        acc += part;
    }
    return acc;
}

Outputs simulate(const SizeSpec& s, const Case& c, bool blocked) {
    const size_t t_n = s.param("T"), k = s.param("k"), h_n = s.param("H"), i_n = s.param("I");
    const uint16_t *x = c.buffers[0].as<uint16_t>(), *w13 = c.buffers[3].as<uint16_t>(), *w2 = c.buffers[4].as<uint16_t>();
    const int32_t* ids = c.buffers[1].as<int32_t>();
    const float* weights = c.buffers[2].as<float>();
    std::vector<float> xf(t_n * h_n);
    for (size_t n = 0; n < xf.size(); ++n) xf[n] = bf16_to_float(x[n]);
    Outputs o{std::vector<uint16_t>(t_n * k * i_n), std::vector<uint16_t>(t_n * h_n)};
    parallel_for(t_n * k, [&](size_t begin, size_t end) {
        for (size_t p = begin; p < end; ++p)
            for (size_t i = 0; i < i_n; ++i) {
                const uint16_t* gate = w13 + (size_t(ids[p]) * 2 * i_n + i) * h_n;
                const float g = dot(gate, &xf[p / k * h_n], h_n, blocked), u = dot(gate + i_n * h_n, &xf[p / k * h_n], h_n, blocked);
                o.act[p * i_n + i] = float_to_bf16(g / (1.0f + std::exp(-g)) * u);
            }
    });
    parallel_for(t_n, [&](size_t begin, size_t end) {
        std::vector<float> a(i_n);
        for (size_t t = begin; t < end; ++t)
            for (size_t h = 0; h < h_n; ++h) {
                float sum = 0;
                for (size_t j = 0; j < k; ++j) {
                    const size_t p = t * k + (blocked ? k - 1 - j : j);  // atomics land in any order
                    for (size_t i = 0; i < i_n; ++i) a[i] = bf16_to_float(o.act[p * i_n + i]);
                    sum += weights[p] * dot(w2 + (size_t(ids[p]) * h_n + h) * i_n, a.data(), i_n, blocked);
                }
                o.out[t * h_n + h] = float_to_bf16(sum);
            }
    });
    return o;
}

std::vector<std::byte> bytes_of(const std::vector<uint16_t>& v) {
    std::vector<std::byte> b(v.size() * sizeof(uint16_t));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

}  // namespace

int main(int argc, char** argv) {
    auto task = make_task("fused_moe");
    if (!task) return std::fprintf(stderr, "%s\n", task.error().message.c_str()), 2;
    const auto& large = (*task)->spec().profiles.at("large");
    const size_t index = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 0;
    const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
    if (index >= large.size()) return std::fprintf(stderr, "size index %zu: the large profile has %zu sizes\n", index, large.size()), 2;
    const SizeSpec& s = large[index];
    const Case c = (*task)->make_case(s, seed, Trial::nominal);
    const Outputs in_order = simulate(s, c, false), blocked = simulate(s, c, true);
    size_t differing = 0;
    float largest = 0;
    for (size_t n = 0; n < in_order.act.size(); ++n)
        if (in_order.act[n] != blocked.act[n]) ++differing, largest = std::max(largest, std::fabs(bf16_to_float(in_order.act[n])));
    std::printf("%s, input seed %llu: %zu of %zu act elements rounded differently (|act| up to %.3g)\n", s.label.c_str(),
                static_cast<unsigned long long>(seed), differing, in_order.act.size(), largest);
    const Reference device{{bytes_of(in_order.act), bytes_of(in_order.out)}};
    const CheckResult r = (*task)->check(s, c, device, {bytes_of(blocked.act), bytes_of(blocked.out)});
    std::printf("blocked against in-order: %s, error %.3g, tolerance %.3g (margin %.3g)\n  %s\n", r.pass ? "pass" : "FAIL",
                r.error, r.tolerance, r.error > 0 ? r.tolerance / r.error : INFINITY, r.message.c_str());
    return r.pass ? 0 : 1;
}
