// JSON field lists for plain structs, in the manner of nlohmann's NLOHMANN_DEFINE_TYPE macros, with
// the two rules kevo's documents need and nlohmann's macros lack: a missing field or a null keeps
// the struct's default (so older stored documents still read), a double written as null (JSON has
// no NaN) reads back as NaN, and std::optional maps to null.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace nlohmann {
template <class T>
struct adl_serializer<std::optional<T>> {
    static void to_json(json& j, const std::optional<T>& v) {
        if (v) j = *v;
        else j = nullptr;
    }
    static void from_json(const json& j, std::optional<T>& v) {
        if (j.is_null()) v.reset();
        else v = j.get<T>();
    }
};
}  // namespace nlohmann

namespace kevo {

// A finite double, or null: what a measurement that could not be taken looks like in JSON.
inline nlohmann::json json_number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

template <class T>
void json_write(nlohmann::json& j, const char* key, const T& value) {
    if constexpr (std::is_floating_point_v<T>) j[key] = json_number(value);
    else j[key] = value;
}

template <class T>
void json_read(const nlohmann::json& j, const char* key, T& out) {
    auto it = j.find(key);
    if (it == j.end()) return;
    if (it->is_null()) {
        if constexpr (std::is_floating_point_v<T>) out = std::numeric_limits<T>::quiet_NaN();
        else if constexpr (requires { out.reset(); }) out.reset();
        return;
    }
    it->get_to(out);
}

}  // namespace kevo

#define KEVO_JSON_WRITE_FIELD(field) ::kevo::json_write(kevo_json_j, #field, kevo_json_v.field);
#define KEVO_JSON_READ_FIELD(field) ::kevo::json_read(kevo_json_j, #field, kevo_json_v.field);

// Defines to_json/from_json for Type over the named fields; use at namespace scope beside Type.
#define KEVO_JSON_FIELDS(Type, ...)                                                                  \
    inline void to_json(nlohmann::json& kevo_json_j, const Type& kevo_json_v) {                      \
        kevo_json_j = nlohmann::json::object();                                                      \
        NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(KEVO_JSON_WRITE_FIELD, __VA_ARGS__))                \
    }                                                                                                \
    inline void from_json(const nlohmann::json& kevo_json_j, Type& kevo_json_v) {                    \
        if (!kevo_json_j.is_object())                                                                \
            throw nlohmann::json::type_error::create(302, #Type " must be a JSON object", &kevo_json_j); \
        NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(KEVO_JSON_READ_FIELD, __VA_ARGS__))                 \
    }
