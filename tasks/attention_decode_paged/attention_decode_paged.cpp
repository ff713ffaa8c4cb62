// ML pack, attention: attention_decode_paged, one query token per request against a paged KV cache
// (vLLM's paged_attention with block size 16): q [B, Hq, d] bf16; k_cache, v_cache [num_blocks, 16,
// Hkv, d] bf16; block_tables [B, max_blocks_per_seq] int32 (physical block of each logical block);
// context_lens [B]. out[b, h] = sum_{t < ctx_b} softmax_t(scale * q_bh . k_t) v_t with kv head
// h / (Hq / Hkv), token t in slot t % 16 of physical block block_tables[b, t / 16]; fp32 accumulation,
// rounded once. A float workspace and zeroed counters are there for split-context (flash-decoding)
// kernels. Bandwidth-bound: 4 Hkv d sum ctx + 4 B Hq d + 4 sum ceil(ctx / 16) + 4 B bytes.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/attention_common.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/outliers.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

constexpr size_t kBlockSize = 16;       // tokens per cache block (vLLM's default)
constexpr size_t kPartitionBlocks = 32;  // the workspace holds one record per 512 tokens of context
// As attention_prefill's: one channel of q and k at 40 adds scale * 1600 to every logit; query head 0
// holds -40 there (every logit of its rows very negative).
constexpr float kLogitChannel = 40.0f;

enum Stream : uint64_t { q_stream = 1, k_stream = 2, v_stream = 3, context_stream = 4, block_stream = 5,
                         scale_stream = 6, spike_stream = 7, channel_stream = 10, tail_stream = 11 };

// B requests with contexts drawn in [c_min, c_max] (the first one c_max).
SizeSpec size_of(int64_t b, int64_t c_min, int64_t c_max, int64_t hq, int64_t hkv, int64_t d, bool heldout = false) {
    const std::string ctx = c_min == c_max ? std::to_string(c_max) : fmt::format("{}-{}", c_min, c_max);
    return {fmt::format("{}x{}x{}x{}x{}", b, ctx, hq, hkv, d), heldout,
            {{"B", b}, {"ctx_min", c_min}, {"ctx_max", c_max}, {"Hq", hq}, {"Hkv", hkv}, {"d", d}}};
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "attention_decode_paged";
    s.regime = "ML attention";
    s.pack = "ml";
    s.category = "attention";
    s.order = 116;
    s.bound = Bound::bandwidth;
    s.model = "4 Hkv d sum(ctx) + 4 B Hq d + 4 sum ceil(ctx / 16) + 4 B bytes for B requests (bf16 keys and values "
              "read once per kv head, q read and out written; int32 block-table entries and context lengths)";
    s.tolerance = "bf16 out: per element, error beyond the output's own rounding <= 2^-7 (|ref| + rms(ref)) + 2^-7 "
                  "sum_j p_j |v_j| (admits P rounded once to bf16); NaN or Inf fails";
    s.kernels = {{"attention_decode_paged",
                  {sig::const_ptr("q", ParamType::bf16), sig::const_ptr("k_cache", ParamType::bf16),
                   sig::const_ptr("v_cache", ParamType::bf16),
                   sig::const_ptr("block_tables", ParamType::i32),
                   sig::const_ptr("context_lens", ParamType::i32),
                   sig::ptr("out", ParamType::bf16), sig::ptr("workspace", ParamType::f32),
                   sig::ptr("counters", ParamType::u32), sig::value("num_seqs", ParamType::u32),
                   sig::value("q_heads", ParamType::u32), sig::value("kv_heads", ParamType::u32),
                   sig::value("head_dim", ParamType::u32),
                   sig::value("max_blocks_per_seq", ParamType::u32),
                   sig::value("scale", ParamType::f32)},
                  2, Dim3{32, 1, 1}}};
    // B x contexts x Hq x Hkv x d. small: contexts <= 300, B <= 8, head-group ratios 1, 4, 2 and 8. paper: LLaMA-3-8B
    // (32, 8) 16 requests of 512-4k, LLaMA-3-70B TP8 (8, 1) 64 of 512-2k, Qwen3-30B-A3B (32, 4) one of
    // 8k; held out 32 of 512-8k. large: one 32k request, 16 of 512-32k, 64 of 512-8k, held out 256 of
    // 512-4k. Every reference is the CPU's (a few GFLOP in double at most).
    s.profiles["small"] = {size_of(1, 300, 300, 4, 4, 64), size_of(4, 17, 200, 8, 2, 128), size_of(8, 1, 100, 4, 2, 64),
                           size_of(5, 33, 257, 8, 1, 128, true)};
    s.profiles["paper"] = {size_of(16, 512, 4096, 32, 8, 128), size_of(64, 512, 2048, 8, 1, 128),
                           size_of(1, 8192, 8192, 32, 4, 128), size_of(32, 512, 8192, 32, 4, 128, true)};
    s.profiles["large"] = {size_of(1, 32768, 32768, 32, 8, 128), size_of(16, 512, 32768, 32, 4, 128),
                           size_of(64, 512, 8192, 8, 1, 128), size_of(256, 512, 4096, 32, 4, 128, true)};
    return s;
}

struct Shape {
    size_t b, c_min, c_max, hq, hkv, d;
    size_t max_blocks() const { return (c_max + kBlockSize - 1) / kBlockSize; }
    size_t partitions() const { return (max_blocks() + kPartitionBlocks - 1) / kPartitionBlocks; }
};

Shape shape_of(const SizeSpec& size) {
    const auto p = [&](const char* n) { return static_cast<size_t>(size.param(n)); };
    return {p("B"), p("ctx_min"), p("ctx_max"), p("Hq"), p("Hkv"), p("d")};
}

// Log-uniform in [c_min, c_max]; request 0 has c_max and request 1 c_min, request 2 (nominal) a whole
// number of blocks (its last block full). The outlier trial gives the last request a context of 1
// (request 0 of a batch of one gets c_max - 1: a partial block).
std::vector<size_t> contexts(const Shape& s, uint64_t seed, Trial trial) {
    std::vector<size_t> ctx(s.b);
    const double lo = std::log(static_cast<double>(s.c_min)), hi = std::log(static_cast<double>(s.c_max));
    for (size_t r = 0; r < s.b; ++r)
        ctx[r] = std::clamp<size_t>(static_cast<size_t>(std::exp(lo + (hi - lo) * rng::uniform(seed, context_stream, r))),
                                    s.c_min, s.c_max);
    ctx[0] = s.c_max;
    if (s.b > 1) ctx[1] = s.c_min;
    if (s.b > 2 && trial == Trial::nominal)
        ctx[2] = std::clamp<size_t>(ctx[2] / kBlockSize * kBlockSize, (s.c_min + kBlockSize - 1) / kBlockSize * kBlockSize,
                                    s.c_max / kBlockSize * kBlockSize);
    if (trial == Trial::outlier) {
        if (s.b > 1) ctx[s.b - 1] = 1;
        else ctx[0] = std::max<size_t>(1, s.c_max - 1);
    }
    return ctx;
}

size_t blocks_of(size_t ctx) { return (ctx + kBlockSize - 1) / kBlockSize; }

// The physical blocks: block 0 (vLLM's null block) and a quarter more than the requests use are
// never mapped; the mapped ones are a random permutation of the rest, so consecutive logical blocks
// lie anywhere in the cache. Entries past a request's last block are 0 (nominal) or random blocks
// of the cache (outlier): a kernel that reads past the context reads other data either way.
struct Tables {
    size_t num_blocks = 0;
    std::vector<int32_t> entries;  // B x max_blocks
};

Tables block_tables(const Shape& s, const std::vector<size_t>& ctx, uint64_t seed, Trial trial) {
    size_t used = 0;
    for (size_t c : ctx) used += blocks_of(c);
    Tables t;
    t.num_blocks = 1 + used + used / 4 + 1;
    std::vector<int32_t> physical(t.num_blocks - 1);
    std::iota(physical.begin(), physical.end(), 1);
    std::sort(physical.begin(), physical.end(), [&](int32_t a, int32_t b) {
        return rng::bits(seed, block_stream, static_cast<uint64_t>(a)) < rng::bits(seed, block_stream, static_cast<uint64_t>(b));
    });
    t.entries.assign(s.b * s.max_blocks(), 0);
    size_t next = 0;
    for (size_t r = 0; r < s.b; ++r)
        for (size_t blk = 0; blk < s.max_blocks(); ++blk) {
            int32_t& e = t.entries[r * s.max_blocks() + blk];
            if (blk < blocks_of(ctx[r])) e = physical[next++];
            else if (trial == Trial::outlier)
                e = static_cast<int32_t>(rng::bits(seed, tail_stream, r * s.max_blocks() + blk) % t.num_blocks);
        }
    return t;
}

class AttentionDecodePagedTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Shape s = shape_of(size);
        const std::vector<size_t> ctx = contexts(s, seed, trial);
        const Tables tables = block_tables(s, ctx, seed, trial);
        const size_t row = s.hkv * s.d;
        std::vector<float> q(s.b * s.hq * s.d), k(tables.num_blocks * kBlockSize * row), v(k.size());
        rng::fill_normal(q, seed, q_stream, 0.0f, 1.0f);
        rng::fill_normal(k, seed, k_stream, 0.0f, 1.0f);
        rng::fill_normal(v, seed, v_stream, 0.0f, 1.0f);
        double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
        if (trial == Trial::outlier) {
            scale *= draw_outlier(rng::uniform(seed, scale_stream, 0), 0.7, 1.5, 1.0, 0.15);
            const auto channel = static_cast<size_t>(rng::bits(seed, channel_stream, 0) % s.d);
            for (size_t r = 0; r < q.size() / s.d; ++r) q[r * s.d + channel] = r % s.hq == 0 ? -kLogitChannel : kLogitChannel;
            for (size_t r = 0; r < k.size() / s.d; ++r) k[r * s.d + channel] = kLogitChannel;
            outliers::plant_spikes(q, {0.01, 50, 0}, seed, spike_stream);
            outliers::plant_spikes(k, {}, seed, spike_stream + 1);
            outliers::plant_spikes(v, {}, seed, spike_stream + 2);
        }
        Case c;
        c.buffers.push_back(make_bf16_buffer("q", BufferRole::input, q));
        c.buffers.push_back(make_bf16_buffer("k_cache", BufferRole::input, k));
        c.buffers.push_back(make_bf16_buffer("v_cache", BufferRole::input, v));
        auto table_buffer = make_buffer<int32_t>("block_tables", BufferRole::input, ElemType::i32, tables.entries.size());
        std::copy(tables.entries.begin(), tables.entries.end(), table_buffer.as<int32_t>());
        c.buffers.push_back(std::move(table_buffer));
        auto ctx_buffer = make_buffer<int32_t>("context_lens", BufferRole::input, ElemType::i32, s.b);
        for (size_t r = 0; r < s.b; ++r) ctx_buffer.as<int32_t>()[r] = static_cast<int32_t>(ctx[r]);
        c.buffers.push_back(std::move(ctx_buffer));
        c.buffers.push_back(make_bf16_buffer("out", BufferRole::output, s.b * s.hq * s.d));
        // Scratch for split-context kernels: one record of head_dim + 2 floats per (request, query
        // head, 512 tokens of the longest context), and one zeroed counter per (request, query head).
        c.buffers.push_back(make_buffer<float>("workspace", BufferRole::state, ElemType::f32,
                                               s.b * s.hq * s.partitions() * (s.d + 2)));
        c.buffers.push_back(make_buffer<uint32_t>("counters", BufferRole::state, ElemType::u32, s.b * s.hq));
        const auto u = [](size_t x) { return ArgRef::u(static_cast<uint32_t>(x)); };
        c.launches.push_back({"attention_decode_paged",
                              {ArgRef::buf(0), ArgRef::buf(1), ArgRef::buf(2), ArgRef::buf(3), ArgRef::buf(4), ArgRef::buf(5),
                               ArgRef::buf(6), ArgRef::buf(7), u(s.b), u(s.hq), u(s.hkv), u(s.d), u(s.max_blocks()),
                               ArgRef::f(static_cast<float>(scale))},
                              Dim3{s.hq, s.b, 1}});
        c.results = {5};
        c.constants = {{"scale", static_cast<double>(static_cast<float>(scale))}};
        double tokens = 0, blocks = 0;
        for (size_t n : ctx) tokens += static_cast<double>(n), blocks += static_cast<double>(blocks_of(n));
        c.work = 4.0 * static_cast<double>(row) * tokens + 4.0 * static_cast<double>(s.b * s.hq * s.d) + 4.0 * blocks +
                 4.0 * static_cast<double>(s.b);
        c.working_set_bytes = c.work;
        return c;
    }

    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Shape s = shape_of(size);
        const std::vector<float> q = bf16_values(c.buffers[0]), k = bf16_values(c.buffers[1]), v = bf16_values(c.buffers[2]);
        const int32_t* tables = c.buffers[3].as<int32_t>();
        const int32_t* ctx = c.buffers[4].as<int32_t>();
        const size_t group = s.hq / s.hkv, maxb = s.max_blocks();
        const double scale = c.constants.at("scale");
        std::vector<float> out(q.size()), abs_weighted(q.size());
        parallel_rows(s.b * s.hq, [&](size_t begin, size_t end) {
            for (size_t row = begin; row < end; ++row) {
                const size_t r = row / s.hq, kvh = row % s.hq / group;
                const auto slot = [&](size_t t) {
                    const auto block = static_cast<size_t>(tables[r * maxb + t / kBlockSize]);
                    return ((block * kBlockSize + t % kBlockSize) * s.hkv + kvh) * s.d;
                };
                const auto key = [&](size_t t) { return &k[slot(t)]; };
                const auto value = [&](size_t t) { return &v[slot(t)]; };
                attend_row(&q[row * s.d], s.d, scale, static_cast<size_t>(ctx[r]), key, value, &out[row * s.d],
                           &abs_weighted[row * s.d]);
            }
        });
        return Reference{{to_bytes(out), to_bytes(abs_weighted)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != 1 || ref.results.size() != 2) return missing_output();
        const Shape s = shape_of(size);
        const int32_t* ctx = c.buffers[4].as<int32_t>();
        const IndexFormatter where = [&, ctx](int64_t e) {
            const auto u = static_cast<size_t>(e);
            const size_t r = u / (s.hq * s.d);
            return fmt::format("(request={} of context {}, head={}, j={})", r, ctx[r], u / s.d % s.hq, u % s.d);
        };
        return check_attention_output(outputs[0], ref.results[0], c.buffers[5].count<uint16_t>(), as_floats(ref.results[1]),
                                      where);
    }

private:
    static CheckResult missing_output() {
        CheckResult r;
        r.kind = "size";
        r.message = "the run returned no output for out";
        return r;
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_attention_decode_paged_task() { return std::make_unique<AttentionDecodePagedTask>(); }

}  // namespace kevo
