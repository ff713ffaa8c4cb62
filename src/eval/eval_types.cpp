// JSON forms of EvalRequest and EvalResult (the worker protocol, the store and `kevo eval --json`),
// from the field lists in eval_types.hpp.
#include "eval/eval_types.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kevo {

namespace {
constexpr const char* kVerdicts[] = {"ok", "compile_error", "rejected", "incorrect", "runtime_error", "timeout", "crash"};
constexpr const char* kSizeSelections[] = {"in", "heldout", "all"};
constexpr const char* kRooflineModes[] = {"static", "workload"};
constexpr const char* kLimiters[] = {"none", "memory", "cuda_cores", "tensor_cores"};

template <class Enum, size_t N>
Expected<Enum> parse_enum(const char* const (&names)[N], const std::string& name, const char* what) {
    for (size_t i = 0; i < N; ++i)
        if (name == names[i]) return static_cast<Enum>(i);
    std::string expected;
    for (size_t i = 0; i < N; ++i) expected += fmt::format("{}{}", i ? ", " : "", names[i]);
    return make_error(fmt::format("{}: '{}' is not one of {}", what, name, expected));
}

template <class Enum, size_t N>
void enum_from_json(const nlohmann::json& j, Enum& v, const char* const (&names)[N], const char* what) {
    auto parsed = parse_enum<Enum>(names, j.get<std::string>(), what);
    if (!parsed) throw nlohmann::json::other_error::create(501, parsed.error().message, &j);
    v = *parsed;
}

// How close a trial came to failing: error over tolerance (a non-finite error is past any tolerance).
double closeness(const TrialCheck& t) {
    if (!std::isfinite(t.error)) return INFINITY;
    if (t.tolerance > 0) return t.error / t.tolerance;
    return t.error > 0 ? INFINITY : 0;
}
}  // namespace

const char* verdict_name(Verdict v) { return kVerdicts[static_cast<int>(v)]; }
const char* roofline_mode_name(RooflineMode mode) { return kRooflineModes[static_cast<int>(mode)]; }

Expected<Verdict> parse_verdict(const std::string& name) { return parse_enum<Verdict>(kVerdicts, name, "verdict"); }
Expected<SizeSelection> parse_size_selection(const std::string& name) {
    return parse_enum<SizeSelection>(kSizeSelections, name, "--sizes");
}
Expected<RooflineMode> parse_roofline_mode(const std::string& name) {
    return parse_enum<RooflineMode>(kRooflineModes, name, "--roofline");
}

void to_json(nlohmann::json& j, Verdict v) { j = verdict_name(v); }
void from_json(const nlohmann::json& j, Verdict& v) { enum_from_json(j, v, kVerdicts, "verdict"); }
void to_json(nlohmann::json& j, SizeSelection v) { j = kSizeSelections[static_cast<int>(v)]; }
void from_json(const nlohmann::json& j, SizeSelection& v) { enum_from_json(j, v, kSizeSelections, "sizes"); }
void to_json(nlohmann::json& j, RooflineMode v) { j = roofline_mode_name(v); }
const char* limiter_name(Limiter limiter) { return kLimiters[static_cast<int>(limiter)]; }
void to_json(nlohmann::json& j, Limiter v) { j = limiter_name(v); }
void from_json(const nlohmann::json& j, Limiter& v) { enum_from_json(j, v, kLimiters, "limiter"); }
void from_json(const nlohmann::json& j, RooflineMode& v) { enum_from_json(j, v, kRooflineModes, "roofline"); }

void add_trial_check(SizeResult& size, TrialCheck check) {
    double nearest = -1;
    for (const auto& t : size.trials) nearest = std::max(nearest, closeness(t));
    if (closeness(check) > nearest) {
        size.error_kind = check.kind;
        size.error = check.error;
        size.tolerance = check.tolerance;
        size.worst_index = check.worst_index;
    }
    size.trials.push_back(std::move(check));
}

nlohmann::json to_json(const EvalRequest& r) { return nlohmann::json(r); }

Expected<EvalRequest> eval_request_from_json(const nlohmann::json& j) {
    try {
        return j.get<EvalRequest>();
    } catch (const nlohmann::json::exception& e) {
        return make_error(fmt::format("malformed evaluation request: {}", e.what()));
    }
}

nlohmann::json to_json(const EvalResult& r) { return nlohmann::json(r); }

Expected<EvalResult> eval_result_from_json(const nlohmann::json& j) {
    try {
        EvalResult r = j.get<EvalResult>();
        // Documents stored before `timed` was written: a timed size is one with a median.
        for (auto& s : r.sizes)
            if (!s.timed && s.seconds > 0) s.timed = true;
        return r;
    } catch (const nlohmann::json::exception& e) {
        return make_error(fmt::format("malformed evaluation result: {}", e.what()));
    }
}

}  // namespace kevo
