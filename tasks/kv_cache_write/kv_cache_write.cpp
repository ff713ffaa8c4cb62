// ML pack, kv-cache: kv_cache_write, the store of a step's keys and values into the paged KV cache
// (vLLM's reshape_and_cache_flash): for each token t with slot = slot_mapping[t] >= 0, key_cache[slot]
// = key[t] and value_cache[slot] = value[t], rows of Hkv * d bf16; slot -1 marks a padding token that
// writes nothing. Checked bit-exactly over the whole of both caches, so a slot no token maps to must
// keep its contents. Bandwidth-bound: 8 B per element of every mapped token + 4 B per slot entry.
#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/outliers.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

constexpr size_t kBlockSize = 16;  // slots per cache block; block 0 is vLLM's null block, never mapped

enum Stream : uint64_t { key_stream = 1, value_stream = 2, cache_stream = 3, slot_stream = 4, skip_stream = 5 };

SizeSpec size_of(int64_t t, int64_t hkv, int64_t d, bool heldout = false) {
    return {fmt::format("{}x{}x{}", t, hkv, d), heldout, {{"T", t}, {"Hkv", hkv}, {"d", d}}};
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "kv_cache_write";
    s.regime = "ML kv-cache";
    s.pack = "ml";
    s.category = "kv-cache";
    s.order = 103;
    s.bound = Bound::bandwidth;
    s.model = "8 B per element of each mapped token's Hkv*d row (key and value read and written, bf16) + 4 B per "
              "slot_mapping entry";
    s.tolerance = "bit-exact over both whole caches (written slots and untouched ones)";
    s.kernels = {{"kv_cache_write",
                  {sig::const_ptr("key", ParamType::bf16), sig::const_ptr("value", ParamType::bf16),
                   sig::ptr("key_cache", ParamType::bf16),
                   sig::ptr("value_cache", ParamType::bf16),
                   sig::const_ptr("slot_mapping", ParamType::i32),
                   sig::value("row", ParamType::u32), sig::value("tokens", ParamType::u32)},
                  2, Dim3{128, 1, 1}}};
    // T x Hkv x d. paper: LLaMA-3-8B decode (8 KV heads), LLaMA-3-70B TP8 prefill (1), Qwen3-30B-A3B
    // prefill (4); held out a chunk of odd length. large: 16k-token prefill chunks.
    s.profiles["small"] = {size_of(16, 2, 64), size_of(64, 4, 64), size_of(256, 1, 128), size_of(37, 2, 64, true)};
    s.profiles["paper"] = {size_of(64, 8, 128), size_of(2048, 1, 128), size_of(2048, 4, 128),
                           size_of(1000, 4, 128, true)};
    s.profiles["large"] = {size_of(16384, 8, 128), size_of(16384, 1, 128), size_of(16384, 4, 128),
                           size_of(12000, 8, 128, true)};
    return s;
}

struct Shape {
    size_t t, row;
    // Three slots per token, in whole blocks, plus the null block.
    size_t slots() const { return kBlockSize * (1 + (3 * t + kBlockSize - 1) / kBlockSize); }
};

Shape shape_of(const SizeSpec& size) {
    return {static_cast<size_t>(size.param("T")), static_cast<size_t>(size.param("Hkv") * size.param("d"))};
}

// Distinct slots outside the null block for the mapped tokens, -1 for the others. Every trial holds
// what a kernel can get wrong alone: a padding token in the middle of the batch with mapped tokens
// after it (token T/2, from T = 3), the cache's last slot mapped (by the first mapped token), and in the
// nominal trial a mapped last token (the outlier trial pads a tail of a quarter of the batch).
std::vector<int32_t> slot_mapping(const Shape& s, uint64_t seed, Trial trial) {
    const auto picked = outliers::pick_distinct(s.slots() - kBlockSize, s.t, seed, slot_stream);
    std::vector<size_t> order(s.t);
    for (size_t i = 0; i < s.t; ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return rng::bits(seed, slot_stream + 1, a) < rng::bits(seed, slot_stream + 1, b); });
    // Nominal: 5% padding tokens; outlier: half of them, and a padded tail of a quarter of the batch.
    const double skip = trial == Trial::nominal ? 0.05 : 0.5;
    const size_t tail = trial == Trial::nominal ? 0 : std::max<size_t>(1, s.t / 4);
    std::vector<int32_t> map(s.t);
    for (size_t t = 0; t < s.t; ++t) {
        const bool last_mapped = trial == Trial::nominal && t + 1 == s.t;
        // The middle padding token needs mapped tokens on both sides: none in a decode step of one or two.
        const bool middle = s.t >= 3 && t == s.t / 2;
        const bool padding = t + tail >= s.t || middle || (!last_mapped && rng::uniform(seed, skip_stream, t) < skip);
        map[t] = padding ? -1 : static_cast<int32_t>(kBlockSize + picked[order[t]]);
    }
    const auto last_slot = static_cast<int32_t>(s.slots() - 1);
    const auto first = std::find_if(map.begin(), map.end(), [](int32_t v) { return v >= 0; });
    const auto holder = std::find(map.begin(), map.end(), last_slot);
    if (first != map.end() && holder == map.end()) *first = last_slot;
    return map;
}

class KvCacheWriteTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Shape s = shape_of(size);
        std::vector<float> key(s.t * s.row), value(s.t * s.row), cache(s.slots() * s.row);
        rng::fill_normal(key, seed, key_stream, 0.0f, 1.0f);
        rng::fill_normal(value, seed, value_stream, 0.0f, 1.0f);
        const auto map = slot_mapping(s, seed, trial);
        Case c;
        c.buffers.push_back(make_bf16_buffer("key", BufferRole::input, key));
        c.buffers.push_back(make_bf16_buffer("value", BufferRole::input, value));
        // The caches start full of other sequences' entries, so an untouched slot has contents to keep.
        rng::fill_normal(cache, seed, cache_stream, 0.0f, 1.0f);
        c.buffers.push_back(make_bf16_buffer("key_cache", BufferRole::state, cache));
        rng::fill_normal(cache, seed, cache_stream + 1, 0.0f, 1.0f);
        c.buffers.push_back(make_bf16_buffer("value_cache", BufferRole::state, cache));
        auto slots = make_buffer<int32_t>("slot_mapping", BufferRole::input, ElemType::i32, s.t);
        std::copy(map.begin(), map.end(), slots.as<int32_t>());
        c.buffers.push_back(std::move(slots));
        c.launches.push_back({"kv_cache_write",
                              {ArgRef::buf(0), ArgRef::buf(1), ArgRef::buf(2), ArgRef::buf(3), ArgRef::buf(4),
                               ArgRef::u(static_cast<uint32_t>(s.row)), ArgRef::u(static_cast<uint32_t>(s.t))},
                              Dim3{s.row, s.t, 1}});
        c.results = {2, 3};
        const auto mapped = static_cast<double>(std::count_if(map.begin(), map.end(), [](int32_t v) { return v >= 0; }));
        c.constants = {{"mapped_tokens", mapped}};
        c.work = 8.0 * mapped * static_cast<double>(s.row) + 4.0 * static_cast<double>(s.t);
        c.working_set_bytes = c.work;
        return c;
    }

    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Shape s = shape_of(size);
        const int32_t* map = c.buffers[4].as<int32_t>();
        Reference ref;
        for (size_t k = 0; k < 2; ++k) {
            std::vector<std::byte> cache = c.buffers[2 + k].data;
            const std::byte* rows = c.buffers[k].data.data();
            const size_t row_bytes = s.row * sizeof(uint16_t);
            for (size_t t = 0; t < s.t; ++t)
                if (map[t] >= 0)
                    std::memcpy(cache.data() + static_cast<size_t>(map[t]) * row_bytes, rows + t * row_bytes, row_bytes);
            ref.results.push_back(std::move(cache));
        }
        return ref;
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != 2 || ref.results.size() != 2) return missing_output();
        const Shape s = shape_of(size);
        std::vector<int64_t> writer(s.slots(), -1);  // the token that maps to each slot
        const int32_t* map = c.buffers[4].as<int32_t>();
        for (size_t t = 0; t < s.t; ++t)
            if (map[t] >= 0) writer[static_cast<size_t>(map[t])] = static_cast<int64_t>(t);
        CheckResult result;
        for (size_t k = 0; k < 2; ++k) {
            const char* name = k == 0 ? "key_cache" : "value_cache";
            const IndexFormatter where = [&, name](int64_t e) {
                const auto slot = static_cast<size_t>(e) / s.row;
                const std::string whose = writer[slot] >= 0 ? fmt::format("written by token {}", writer[slot])
                                                            : std::string("untouched: no token maps to it");
                return fmt::format("{} slot {} ({}), element {}", name, slot, whose, static_cast<size_t>(e) % s.row);
            };
            CheckResult one = check_bit_exact(outputs[k], ref.results[k], sizeof(uint16_t), where);
            if (!one.pass) return one;
            result = one;
        }
        result.message = fmt::format("both caches bit-exact ({} slots of {} elements each)", s.slots(), s.row);
        return result;
    }

private:
    static CheckResult missing_output() {
        CheckResult r;
        r.kind = "size";
        r.message = "the run returned no output for key_cache and value_cache";
        return r;
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_kv_cache_write_task() { return std::make_unique<KvCacheWriteTask>(); }

}  // namespace kevo
