// Lookup over the generated task list (see registry.hpp).
#include "task/registry.hpp"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "task/trace_profile.hpp"

namespace kevo {

const char* trial_name(Trial trial) { return trial == Trial::nominal ? "nominal" : "outlier"; }

size_t elem_size(ElemType type) {
    switch (type) {
        case ElemType::f32: return 4;
        case ElemType::u32: return 4;
        case ElemType::i8: return 1;
        case ElemType::i32: return 4;
        case ElemType::f16: return 2;
        case ElemType::bf16: return 2;
        case ElemType::f8e4m3: return 1;
        case ElemType::i4x2: return 1;
    }
    return 1;
}

const char* elem_type_name(ElemType type) {
    switch (type) {
        case ElemType::f32: return "f32";
        case ElemType::u32: return "u32";
        case ElemType::i8: return "i8";
        case ElemType::i32: return "i32";
        case ElemType::f16: return "f16";
        case ElemType::bf16: return "bf16";
        case ElemType::f8e4m3: return "f8e4m3";
        case ElemType::i4x2: return "i4x2";
    }
    return "?";
}

int64_t SizeSpec::param(const std::string& name) const {
    for (const auto& [key, value] : params)
        if (key == name) return value;
    assert(false && "size parameter missing");
    return 0;
}

std::vector<std::string> task_names() {
    std::vector<std::pair<int, std::string>> ordered;
    for (const auto& entry : task_entries()) ordered.emplace_back(entry.make()->spec().order, std::string(entry.name));
    std::sort(ordered.begin(), ordered.end());
    std::vector<std::string> names;
    for (auto& [order, name] : ordered) names.push_back(name);
    return names;
}

std::vector<std::string> tasks_shipping(std::string_view file) {
    std::vector<std::string> shipping;
    for (auto& name : task_names())
        if (!task_file(name, file).empty()) shipping.push_back(std::move(name));
    return shipping;
}

Expected<std::unique_ptr<Task>> make_task(const std::string& name) {
    for (const auto& entry : task_entries())
        if (entry.name == name) return with_trace_profile(entry.make());
    return make_error(fmt::format("unknown task '{}'; the suite has: {}", name, fmt::join(task_names(), ", ")));
}

std::string task_source_hash(const std::string& name) {
    for (const auto& entry : task_entries())
        if (entry.name == name) return std::string(entry.source_hash);
    return {};
}

}  // namespace kevo
