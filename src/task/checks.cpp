// The comparators behind the tasks' checks and their message helpers (see checks.hpp).
#include "task/checks.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "core/dtypes.hpp"
#include "core/parallel.hpp"

namespace kevo {

double Tolerance::resolve(double max_abs_want) const { return abs + rel * std::max(rel_floor, max_abs_want); }

IndexFormatter flat_index() {
    return [](int64_t i) { return fmt::format("[{}]", i); };
}

IndexFormatter grid_index(uint64_t nx, uint64_t ny, uint64_t nz) {
    assert(nx > 0 && ny > 0 && nz > 0);
    return [nx, ny, nz](int64_t i) {
        const uint64_t u = static_cast<uint64_t>(i);
        const uint64_t x = u % nx, y = (u / nx) % ny, z = u / (nx * ny);
        if (nz > 1) return fmt::format("(x={}, y={}, z={})", x, y, z);
        return fmt::format("(x={}, y={})", x, y);
    };
}

IndexFormatter vec4_index(std::string noun) {
    return [noun = std::move(noun)](int64_t i) { return fmt::format("{} {} ({})", noun, i / 4, "xyzw"[i % 4]); };
}

std::string short_sci(double value) {
    if (!std::isfinite(value)) return fmt::format("{}", value);
    std::string s = fmt::format("{:.1e}", value);  // "3.1e-02"
    const auto e = s.find('e');
    if (e == std::string::npos) return s;
    size_t digits = e + 1;
    if (digits < s.size() && (s[digits] == '-' || s[digits] == '+')) ++digits;
    // Drop the sign '+' and the leading zeros of the exponent, keeping at least one digit.
    std::string exponent = s.substr(digits);
    exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
    const std::string sign = s[e + 1] == '-' ? "-" : "";
    return s.substr(0, e + 1) + sign + exponent;
}

namespace {

std::string value_text(float v) { return fmt::format("{:.7g}", v); }

// Where got holds NaN or Inf: the first such element and how many.
struct NonFinite {
    int64_t first = -1;
    int64_t count = 0;
};

NonFinite find_non_finite(std::span<const float> got) {
    NonFinite total;
    std::mutex lock;
    parallel_for(got.size(), [&](size_t begin, size_t end) {
        NonFinite part;
        for (size_t i = begin; i < end; ++i)
            if (!std::isfinite(got[i])) {
                if (part.first < 0) part.first = static_cast<int64_t>(i);
                ++part.count;
            }
        std::lock_guard guard(lock);
        if (part.first >= 0 && (total.first < 0 || part.first < total.first)) total.first = part.first;
        total.count += part.count;
    });
    return total;
}

// The failures every comparator shares: lengths that differ (kind "size") and NaN or Inf
// anywhere in got (kind "nan", worst_index = the first). Empty when neither applies.
std::optional<CheckResult> reject_size_or_non_finite(std::span<const float> got, std::span<const float> want,
                                                     const IndexFormatter& where) {
    CheckResult r;
    if (got.size() != want.size()) {
        r.kind = "size";
        r.message = fmt::format("output holds {} values, expected {}", got.size(), want.size());
        return r;
    }
    const NonFinite bad = find_non_finite(got);
    if (bad.first < 0) return std::nullopt;
    const auto i = bad.first;
    r.kind = "nan";
    r.error = std::numeric_limits<double>::quiet_NaN();
    r.worst_index = i;
    r.message = fmt::format("{} at {} (first of {} non-finite values): expected {}", std::isnan(got[i]) ? "NaN" : "Inf",
                            where(i), bad.count, value_text(want[i]));
    return r;
}

// The element that comes nearest to failing (largest error/tolerance), merged over chunks; ties
// go to the lower index so that the report does not depend on the thread count.
struct Worst {
    double key = -1;  // what is maximised: |err| (max-abs) or |err| / tolerance (per element)
    int64_t index = -1;

    void offer(double k, int64_t i) {
        if (k > key || (k == key && i >= 0 && (index < 0 || i < index))) key = k, index = i;
    }
};

// Maximises key(i) over the indices of values, in parallel.
template <class Key>
Worst scan_worst(std::span<const float> values, const Key& key) {
    Worst total;
    std::mutex lock;
    parallel_for(values.size(), [&](size_t begin, size_t end) {
        Worst part;
        for (size_t i = begin; i < end; ++i) part.offer(key(i), static_cast<int64_t>(i));
        std::lock_guard guard(lock);
        total.offer(part.key, part.index);
    });
    return total;
}

}  // namespace

double max_magnitude(std::span<const float> values) {
    const Worst largest = scan_worst(values, [&](size_t i) { return static_cast<double>(std::fabs(values[i])); });
    return std::max(0.0, largest.key);
}

CheckResult check_max_abs(std::span<const float> got, std::span<const float> want, const Tolerance& tolerance,
                          const IndexFormatter& where) {
    const double resolved = tolerance.resolve(max_magnitude(want));
    if (auto rejected = reject_size_or_non_finite(got, want, where)) {
        rejected->tolerance = resolved;
        return *rejected;
    }
    const Worst worst =
        scan_worst(want, [&](size_t i) { return std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i])); });
    CheckResult r;
    r.kind = "max_abs";
    r.tolerance = resolved;
    r.error = std::max(0.0, worst.key);
    r.worst_index = worst.index;
    r.pass = r.error <= r.tolerance;
    if (worst.index < 0) {
        r.message = "no values to compare";
        return r;
    }
    const auto i = worst.index;
    r.message = fmt::format("max |err| {} at {}: got {}, expected {}; tolerance {}", short_sci(r.error), where(i),
                            value_text(got[i]), value_text(want[i]), short_sci(r.tolerance));
    return r;
}

ElementScale own_magnitude(std::span<const float> want) {
    return [want](size_t i) { return static_cast<double>(std::fabs(want[i])); };
}

ElementScale constant_scale(double scale) {
    return [scale](size_t) { return scale; };
}

CheckResult check_per_element(std::span<const float> got, std::span<const float> want, const ElementTolerance& tolerance,
                              const ElementScale& scale, const IndexFormatter& where) {
    if (auto rejected = reject_size_or_non_finite(got, want, where)) return *rejected;
    // error / tolerance of one element; an exact element is 0 even where its tolerance is 0.
    const auto ratio = [&](size_t i) {
        const double err = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
        if (err == 0) return 0.0;
        const double tol = tolerance.at(scale(i));
        return tol > 0 ? err / tol : std::numeric_limits<double>::infinity();
    };
    const Worst worst = scan_worst(want, ratio);
    CheckResult r;
    r.kind = "per_element";
    r.worst_index = worst.index;
    if (worst.index < 0) {
        r.pass = true;
        r.message = "no values to compare";
        return r;
    }
    const auto i = worst.index;
    const double s = scale(static_cast<size_t>(i));
    r.error = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
    r.tolerance = tolerance.at(s);
    r.pass = r.error <= r.tolerance;
    r.message = fmt::format("nearest to failing: {}, |err| {} against its tolerance {} ({} + {} x scale {}); got {}, "
                            "expected {}",
                            where(i), short_sci(r.error), short_sci(r.tolerance), short_sci(tolerance.abs),
                            short_sci(tolerance.rel), short_sci(s), value_text(got[i]), value_text(want[i]));
    return r;
}

CheckResult check_relative_l2(std::span<const float> got, std::span<const float> want, double bound) {
    if (auto rejected = reject_size_or_non_finite(got, want, flat_index())) return *rejected;
    double diff2 = 0, norm2 = 0;
    std::mutex lock;
    parallel_for(want.size(), [&](size_t begin, size_t end) {
        double d = 0, w = 0;
        for (size_t i = begin; i < end; ++i) {
            const double e = static_cast<double>(got[i]) - static_cast<double>(want[i]);
            d += e * e;
            w += static_cast<double>(want[i]) * static_cast<double>(want[i]);
        }
        std::lock_guard guard(lock);
        diff2 += d;
        norm2 += w;
    });
    CheckResult r;
    r.kind = "rel_l2";
    r.tolerance = bound;
    r.error = norm2 > 0 ? std::sqrt(diff2 / norm2) : (diff2 > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    r.pass = r.error <= bound;
    r.message = fmt::format("||err||_2 / ||ref||_2 = {} over {} values; tolerance {}", short_sci(r.error), want.size(),
                            short_sci(bound));
    return r;
}

CheckResult check_bf16_per_element(std::span<const uint16_t> got, std::span<const float> want, const Bf16Tolerance& tolerance,
                                   const ElementScale& scale, double own_rounding, const IndexFormatter& where) {
    const std::vector<float> got_values = [&] {
        std::vector<float> v(got.size());
        parallel_for(got.size(), [&](size_t begin, size_t end) {
            for (size_t i = begin; i < end; ++i) v[i] = bf16_to_float(got[i]);
        });
        return v;
    }();
    if (auto rejected = reject_size_or_non_finite(got_values, want, where)) return *rejected;
    const auto excess = [&](size_t i) {
        const double w = want[i];
        return std::max(0.0, std::fabs(got_values[i] - w) - own_rounding * bf16_ulp(w));
    };
    const auto allowed = [&](size_t i) { return tolerance.ulps * bf16_ulp(want[i]) + tolerance.rel * scale(i); };
    const Worst worst = scan_worst(want, [&](size_t i) {
        const double e = excess(i);
        if (e == 0) return 0.0;
        const double a = allowed(i);
        return a > 0 ? e / a : std::numeric_limits<double>::infinity();
    });
    CheckResult r;
    r.kind = "bf16_ulp";
    r.worst_index = worst.index;
    if (worst.index < 0) {
        r.pass = true;
        r.message = "no values to compare";
        return r;
    }
    const auto i = static_cast<size_t>(worst.index);
    const double ulp = bf16_ulp(want[i]);
    r.error = excess(i);
    r.tolerance = allowed(i);
    r.pass = r.error <= r.tolerance;
    r.message = fmt::format("nearest to failing: {}, |err| {} ulp, {} ulp beyond the output's own rounding ({} ulp), "
                            "against {} ulp + {} x scale {}; got {}, expected {}",
                            where(worst.index), short_sci(std::fabs(got_values[i] - static_cast<double>(want[i])) / ulp),
                            short_sci(r.error / ulp), own_rounding, short_sci(tolerance.ulps), short_sci(tolerance.rel),
                            short_sci(scale(i)), value_text(got_values[i]), value_text(want[i]));
    return r;
}

ReferenceValues bf16_reference_values(const std::vector<std::byte>& ref, size_t count) {
    ReferenceValues out;
    if (ref.size() == count * sizeof(uint16_t)) {
        out.values = decode_floats(ElemType::bf16, ref);
        out.own_rounding = 1.0;
    } else {
        const auto floats = as_floats(ref);
        out.values.assign(floats.begin(), floats.end());
    }
    return out;
}

CheckResult check_bit_exact(const std::vector<std::byte>& got, const std::vector<std::byte>& want, size_t element_bytes,
                            const IndexFormatter& where) {
    assert(element_bytes > 0);
    CheckResult r;
    r.kind = "bit_exact";
    if (got.size() != want.size()) {
        r.kind = "size";
        r.message = fmt::format("output holds {} bytes, expected {}", got.size(), want.size());
        return r;
    }
    const size_t count = want.size() / element_bytes;
    int64_t first = -1, differing = 0;
    std::mutex lock;
    parallel_for(count, [&](size_t begin, size_t end) {
        int64_t part_first = -1, part_count = 0;
        for (size_t i = begin; i < end; ++i)
            if (std::memcmp(got.data() + i * element_bytes, want.data() + i * element_bytes, element_bytes) != 0) {
                if (part_first < 0) part_first = static_cast<int64_t>(i);
                ++part_count;
            }
        std::lock_guard guard(lock);
        if (part_first >= 0 && (first < 0 || part_first < first)) first = part_first;
        differing += part_count;
    });
    r.error = static_cast<double>(differing);
    r.worst_index = first;
    r.pass = differing == 0;
    r.message = r.pass ? fmt::format("all {} elements identical", count)
                       : fmt::format("{} of {} elements differ; the first at {}", differing, count, where(first));
    return r;
}

CheckResult check_quant_triple(std::span<const float> got, std::span<const float> want, const QuantThresholds& thresholds) {
    if (auto rejected = reject_size_or_non_finite(got, want, flat_index())) return *rejected;
    struct Sums {
        double dot = 0, got2 = 0, want2 = 0, abs_diff = 0, abs_want = 0, diff2 = 0;
    } total;
    std::mutex lock;
    parallel_for(want.size(), [&](size_t begin, size_t end) {
        Sums part;
        for (size_t i = begin; i < end; ++i) {
            const double g = got[i], w = want[i], d = g - w;
            part.dot += g * w;
            part.got2 += g * g;
            part.want2 += w * w;
            part.abs_diff += std::fabs(d);
            part.abs_want += std::fabs(w);
            part.diff2 += d * d;
        }
        std::lock_guard guard(lock);
        total.dot += part.dot, total.got2 += part.got2, total.want2 += part.want2;
        total.abs_diff += part.abs_diff, total.abs_want += part.abs_want, total.diff2 += part.diff2;
    });
    const double inf = std::numeric_limits<double>::infinity();
    // Two zero vectors agree; a zero against a non-zero one does not.
    const double norms = std::sqrt(total.got2 * total.want2);
    const double cosine = norms > 0 ? total.dot / norms : (total.got2 == total.want2 ? 1.0 : 0.0);
    const double rel_l1 = total.abs_want > 0 ? total.abs_diff / total.abs_want : (total.abs_diff > 0 ? inf : 0.0);
    const double rel_rmse = total.want2 > 0 ? std::sqrt(total.diff2 / total.want2) : (total.diff2 > 0 ? inf : 0.0);
    const auto rule = [&](const char* kind, double error, double tolerance) {
        CheckResult r;
        r.kind = kind;
        r.error = error;
        r.tolerance = tolerance;
        r.pass = error <= tolerance;
        return r;
    };
    CheckResult r = binding(binding(rule("cosine", 1 - cosine, 1 - thresholds.min_cosine),
                                    rule("rel_l1", rel_l1, thresholds.max_rel_l1)),
                            rule("rmse", rel_rmse, thresholds.max_rel_rmse));
    r.message = fmt::format("cosine {:.6f} (min {}), relative L1 {} (max {}), RMSE / rms(ref) {} (max {}) over {} values; "
                            "binding: {}",
                            cosine, thresholds.min_cosine, short_sci(rel_l1), short_sci(thresholds.max_rel_l1),
                            short_sci(rel_rmse), short_sci(thresholds.max_rel_rmse), want.size(), r.kind);
    return r;
}

CheckResult binding(CheckResult a, CheckResult b) {
    if (a.pass != b.pass) return a.pass ? b : a;
    // The smaller margin, i.e. the larger error / tolerance (the one further outside when both
    // fail), compared without dividing by 0.
    return b.error * a.tolerance > a.error * b.tolerance ? b : a;
}

double rms(std::span<const float> values) {
    if (values.empty()) return 0;
    double sum = 0;
    std::mutex lock;
    parallel_for(values.size(), [&](size_t begin, size_t end) {
        double part = 0;
        for (size_t i = begin; i < end; ++i) part += static_cast<double>(values[i]) * static_cast<double>(values[i]);
        std::lock_guard guard(lock);
        sum += part;
    });
    return std::sqrt(sum / static_cast<double>(values.size()));
}

std::vector<float> decode_floats(ElemType type, const std::vector<std::byte>& bytes) {
    const size_t size = elem_size(type);
    assert(bytes.size() % size == 0);
    const size_t count = bytes.size() / size;
    std::vector<float> out(count);
    const auto* raw = reinterpret_cast<const unsigned char*>(bytes.data());
    parallel_for(count, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
            switch (type) {
                case ElemType::f32: std::memcpy(&out[i], raw + 4 * i, 4); break;
                case ElemType::bf16:
                case ElemType::f16: {
                    uint16_t bits;
                    std::memcpy(&bits, raw + 2 * i, 2);
                    out[i] = type == ElemType::bf16 ? bf16_to_float(bits) : f16_to_float(bits);
                    break;
                }
                case ElemType::f8e4m3: out[i] = e4m3_to_float(raw[i]); break;
                default: assert(false && "decode_floats takes a float type"); break;
            }
        }
    });
    return out;
}

std::span<const uint16_t> as_bf16(const std::vector<std::byte>& bytes) {
    assert(bytes.size() % sizeof(uint16_t) == 0);
    return {reinterpret_cast<const uint16_t*>(bytes.data()), bytes.size() / sizeof(uint16_t)};
}

std::span<const float> as_floats(const std::vector<std::byte>& bytes) {
    assert(bytes.size() % sizeof(float) == 0);
    return {reinterpret_cast<const float*>(bytes.data()), bytes.size() / sizeof(float)};
}

std::vector<std::byte> to_bytes(std::span<const float> values) {
    std::vector<std::byte> out(values.size_bytes());
    if (!values.empty()) std::memcpy(out.data(), values.data(), values.size_bytes());
    return out;
}

double draw_outlier(double u, double lo, double hi, double nominal, double gap) {
    const double cut_lo = std::clamp(nominal - gap, lo, hi), cut_hi = std::clamp(nominal + gap, lo, hi);
    const double left = cut_lo - lo, right = hi - cut_hi;
    assert(left + right > 0);
    const double t = u * (left + right);
    return t < left ? lo + t : cut_hi + (t - left);
}

}  // namespace kevo
