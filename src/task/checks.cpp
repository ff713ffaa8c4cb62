// The generic max-abs comparator and its message helpers (see checks.hpp).
#include "task/checks.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>

#include <fmt/format.h>

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

// What one chunk of the comparison found; merged under a lock.
struct Scan {
    double max_want = 0;
    double max_err = -1;
    int64_t worst = -1;
    int64_t first_bad = -1;   // first non-finite element of got
    int64_t bad_count = 0;
};

void merge(Scan& into, const Scan& part) {
    into.max_want = std::max(into.max_want, part.max_want);
    // Ties go to the lower index so the report does not depend on the thread count.
    if (part.max_err > into.max_err || (part.max_err == into.max_err && part.worst >= 0 && part.worst < into.worst)) {
        into.max_err = part.max_err;
        into.worst = part.worst;
    }
    if (part.first_bad >= 0 && (into.first_bad < 0 || part.first_bad < into.first_bad)) into.first_bad = part.first_bad;
    into.bad_count += part.bad_count;
}

std::string value_text(float v) { return fmt::format("{:.7g}", v); }

}  // namespace

CheckResult check_max_abs(std::span<const float> got, std::span<const float> want, const Tolerance& tolerance,
                          const IndexFormatter& where) {
    CheckResult r;
    if (got.size() != want.size()) {
        r.kind = "size";
        r.message = fmt::format("output holds {} values, expected {}", got.size(), want.size());
        return r;
    }

    Scan total;
    std::mutex lock;
    parallel_for(got.size(), [&](size_t begin, size_t end) {
        Scan s;
        for (size_t i = begin; i < end; ++i) {
            const double g = got[i], w = want[i];
            s.max_want = std::max(s.max_want, std::fabs(w));
            if (!std::isfinite(g)) {
                if (s.first_bad < 0) s.first_bad = static_cast<int64_t>(i);
                ++s.bad_count;
                continue;
            }
            const double err = std::fabs(g - w);
            if (err > s.max_err) {
                s.max_err = err;
                s.worst = static_cast<int64_t>(i);
            }
        }
        std::lock_guard guard(lock);
        merge(total, s);
    });

    r.tolerance = tolerance.resolve(total.max_want);
    if (total.first_bad >= 0) {
        const auto i = total.first_bad;
        r.kind = "nan";
        r.error = std::numeric_limits<double>::quiet_NaN();
        r.worst_index = i;
        r.message = fmt::format("{} at {} (first of {} non-finite values): expected {}",
                                std::isnan(got[i]) ? "NaN" : "Inf", where(i), total.bad_count, value_text(want[i]));
        return r;
    }
    r.kind = "max_abs";
    r.error = std::max(0.0, total.max_err);
    r.worst_index = total.worst;
    r.pass = r.error <= r.tolerance;
    if (total.worst < 0) {
        r.message = "no values to compare";
        return r;
    }
    const auto i = total.worst;
    r.message = fmt::format("max |err| {} at {}: got {}, expected {}; tolerance {}", short_sci(r.error), where(i),
                            value_text(got[i]), value_text(want[i]), short_sci(r.tolerance));
    return r;
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
