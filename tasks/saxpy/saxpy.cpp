// R0 smoke task saxpy: y <- a*x + y in place. The smallest end-to-end exercise of the pipeline
// (bandwidth-bound, one launch per run); its held-out sizes are not multiples of a power of two
// so that kernels which drop the tail fail there.
#include <cmath>
#include <memory>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/checks.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

constexpr double kNominalA = 2.5;
// Per element, relative to the element's own terms: FP32 a*x + y (with or without a fused
// multiply-add) plus the reference's rounding is off by at most 3 * 2^-24 (|a x| + |y|) = 1.8e-7
// of them, so every correct kernel is at least 56x inside; an offset or a wrong constant is not.
constexpr double kRel = 1e-5;

// Stream ids of the generator, one per independent draw.
enum Stream : uint64_t { x_stream = 1, y_stream = 2, constant_stream = 3, spike_stream = 4 };

SizeSpec size_n(int64_t n, bool heldout = false) { return {std::to_string(n), heldout, {{"n", n}}}; }

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "saxpy";
    s.regime = "R0 smoke";
    s.category = "smoke";
    s.peers = {"cublas_saxpy", "vectorised_axpy"};
    s.order = 0;
    s.bound = Bound::bandwidth;
    s.model = "12 B per element (read x, read y, write y)";
    s.tolerance = "per element: |err_i| <= 1e-5 * (|a x_i| + |y_i|); NaN or Inf anywhere fails";
    s.kernels = {{"saxpy", {sig::const_ptr("x", ParamType::f32), sig::ptr("y", ParamType::f32),
                            sig::value("a", ParamType::f32),
                            sig::value("n", ParamType::u32)},
                  1,
                  Dim3{256, 1, 1}}};
    s.profiles["small"] = {size_n(65536), size_n(262144), size_n(1048576), size_n(300007, true)};
    s.profiles["paper"] = {size_n(1 << 20), size_n(1 << 24), size_n(1 << 26), size_n(1 << 22, true)};
    s.profiles["large"] = {size_n(int64_t{1} << 26), size_n(int64_t{1} << 27), size_n(int64_t{1} << 28),
                           size_n(3 * (int64_t{1} << 25) + 7, true)};
    return s;
}

class SaxpyTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const auto n = static_cast<size_t>(size.param("n"));
        Case c;
        auto x = make_buffer<float>("x", BufferRole::input, ElemType::f32, n);
        auto y = make_buffer<float>("y", BufferRole::state, ElemType::f32, n);
        std::span<float> xs(x.as<float>(), n), ys(y.as<float>(), n);
        rng::fill_normal(xs, seed, x_stream, 0.0f, 1.0f);
        rng::fill_normal(ys, seed, y_stream, 0.0f, 1.0f);

        float a = static_cast<float>(kNominalA);
        if (trial == Trial::outlier) {
            // |a| in [1, 4] with either sign, away from the nominal 2.5.
            const double u = rng::uniform(seed, constant_stream, 0);
            const double magnitude = draw_outlier(rng::uniform(seed, constant_stream, 1), 1.0, 4.0, kNominalA, 0.25);
            a = static_cast<float>(u < 0.5 ? -magnitude : magnitude);
            // A wide dynamic range: values around 1e3 with a few spikes of 1e6.
            parallel_for(n, [&](size_t begin, size_t end) {
                for (size_t i = begin; i < end; ++i) {
                    xs[i] *= 1e3f;
                    ys[i] *= 1e3f;
                }
            });
            for (uint64_t k = 0; k < 4; ++k) {
                const auto i = static_cast<size_t>(rng::bits(seed, spike_stream, k) % n);
                const float spike = rng::uniform(seed, spike_stream, 100 + k) < 0.5 ? -1e6f : 1e6f;
                (k % 2 ? ys : xs)[i] = spike;
            }
        }

        c.buffers.push_back(std::move(x));
        c.buffers.push_back(std::move(y));
        c.launches.push_back({"saxpy", {ArgRef::buf(0), ArgRef::buf(1), ArgRef::f(a), ArgRef::u(static_cast<uint32_t>(n))},
                              Dim3{n, 1, 1}});
        c.results = {1};
        c.constants = {{"a", static_cast<double>(a)}};  // the float the kernel receives
        c.work = 12.0 * static_cast<double>(n);
        c.working_set_bytes = 8.0 * static_cast<double>(n);
        return c;
    }

    Reference reference(const SizeSpec&, const Case& c) const override {
        const HostBuffer& x = c.buffers[0];
        const HostBuffer& y = c.buffers[1];
        const size_t n = x.count<float>();
        const double a = c.constants.at("a");
        std::vector<float> out(n);
        const float* xs = x.as<float>();
        const float* ys = y.as<float>();
        parallel_for(n, [&](size_t begin, size_t end) {
            for (size_t i = begin; i < end; ++i) out[i] = static_cast<float>(a * xs[i] + static_cast<double>(ys[i]));
        });
        return Reference{{to_bytes(out)}};
    }

    CheckResult check(const SizeSpec&, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != ref.results.size()) return missing_output();
        const float* x = c.buffers[0].as<float>();
        const float* y = c.buffers[1].as<float>();
        const double a = c.constants.at("a");
        const ElementScale terms = [x, y, a](size_t i) { return std::fabs(a * x[i]) + std::fabs(static_cast<double>(y[i])); };
        return check_per_element(as_floats(outputs[0]), as_floats(ref.results[0]), ElementTolerance{0, kRel}, terms);
    }

private:
    static CheckResult missing_output() {
        CheckResult r;
        r.kind = "size";
        r.message = "the run returned no output for y";
        return r;
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_saxpy_task() { return std::make_unique<SaxpyTask>(); }

}  // namespace kevo
