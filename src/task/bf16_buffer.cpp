// See bf16_buffer.hpp.
#include "task/bf16_buffer.hpp"

#include <cassert>

#include "core/dtypes.hpp"
#include "core/parallel.hpp"

namespace kevo {

HostBuffer make_bf16_buffer(std::string name, BufferRole role, std::span<const float> values) {
    auto b = make_buffer<uint16_t>(std::move(name), role, ElemType::bf16, values.size());
    uint16_t* words = b.as<uint16_t>();
    parallel_for(values.size(), [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) words[i] = float_to_bf16(values[i]);
    });
    return b;
}

HostBuffer make_bf16_buffer(std::string name, BufferRole role, size_t count) {
    return make_buffer<uint16_t>(std::move(name), role, ElemType::bf16, count);
}

std::vector<float> bf16_values(const HostBuffer& buffer) {
    assert(buffer.type == ElemType::bf16);
    const size_t n = buffer.count<uint16_t>();
    const uint16_t* words = buffer.as<uint16_t>();
    std::vector<float> out(n);
    parallel_for(n, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) out[i] = bf16_to_float(words[i]);
    });
    return out;
}

void round_all_to_bf16(std::span<float> values) {
    parallel_for(values.size(), [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) values[i] = round_to_bf16(values[i]);
    });
}

}  // namespace kevo
