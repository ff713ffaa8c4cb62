// ML pack, attention: mla_decode_paged, DeepSeek-V2/V3's multi-head latent attention at decode over a
// paged latent cache (FlashMLA's flash_mla_with_kvcache, FlashInfer's MLA decode, aiter's mla_decode_fwd),
// with q_nope absorbed into the latent space: q [B, H, 576] bf16 (512 latent + 64 rope dims per head);
// kv_cache [num_pages, page_size, 576] bf16, one row per token (512 c_kv + 64 k_rope), shared by every
// head; block_table [B, max_pages_per_seq] int32; cache_seqlens [B]. For request b and head h,
// out[b, h] = sum_{t < ctx_b} softmax_t(softmax_scale * q_bh . row_t) row_t[0, 512), token t in slot
// t % page_size of page block_table[b, t / page_size]; fp32 accumulation, rounded once to bf16 (P may
// be rounded once to bf16 before P V, as FlashMLA does: attention_common.hpp's second term). A float
// workspace and zeroed counters are there for split-KV kernels. Roofline: 2 H (576 + 512) sum ctx
// bf16 tensor FLOPs over 1152 sum ctx + 2176 B H + 4 sum ceil(ctx / page_size) + 4 B bytes.
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

constexpr size_t kLatent = 512;                  // kv_lora_rank: c_kv, and the value (and output) width
constexpr size_t kRope = 64;                     // qk_rope_head_dim
constexpr size_t kRow = kLatent + kRope;         // 576: one q head, one cache row
constexpr size_t kPartitionTokens = 512;         // the workspace holds one record per 512 tokens of context
// The outlier trial's large-logit channel, in the rope part: q and every cache row hold 72 there,
// which adds softmax_scale * 5184 (>= 129 at every outlier scale) to every logit: softmax is unchanged,
// exp without the maximum subtracted overflows fp32 (e^89 > FLT_MAX). Head 0 holds -72: every logit of
// its rows is below -115 (a running maximum started at 0 underflows every exp, subnormals included).
constexpr float kLogitChannel = 72.0f;

enum Stream : uint64_t { q_stream = 1, kv_stream = 2, context_stream = 4, page_stream = 5, scale_stream = 6,
                         spike_stream = 7, channel_stream = 10, tail_stream = 11 };

// B requests with contexts drawn in [c_min, c_max] (the first one c_max), H heads, pages of `page` tokens.
SizeSpec size_of(int64_t b, int64_t c_min, int64_t c_max, int64_t h, int64_t page, bool heldout = false,
                 bool device_reference = false) {
    const std::string ctx = c_min == c_max ? std::to_string(c_max) : fmt::format("{}-{}", c_min, c_max);
    SizeSpec s{fmt::format("{}x{}x{}-p{}", b, ctx, h, page), heldout,
               {{"B", b}, {"ctx_min", c_min}, {"ctx_max", c_max}, {"H", h}, {"page_size", page}}};
    s.device_reference = device_reference;
    return s;
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "mla_decode_paged";
    s.regime = "ML attention";
    s.pack = "ml";
    s.category = "attention";
    s.order = 119;
    s.bound = Bound::bandwidth;
    s.model = "W = 2 H (576 + 512) sum(ctx) bf16 tensor FLOPs (q . row over 576 dims, P V over 512); Q = 1152 sum(ctx) + "
              "1152 B H + 1024 B H + 4 sum ceil(ctx / page_size) + 4 B bytes (every cache row read once for all H heads, q "
              "read, out written, int32 block-table entries and context lengths)";
    s.tolerance = "bf16 out: per element, error beyond the output's own rounding <= 2^-7 (|ref| + rms(ref)) + 2^-7 "
                  "sum_j p_j |v_j| (admits P rounded once to bf16, FlashMLA's recipe); NaN or Inf fails";
    s.kernels = {{"mla_decode_paged",
                  {sig::const_ptr("q", ParamType::bf16), sig::const_ptr("kv_cache", ParamType::bf16),
                   sig::const_ptr("block_table", ParamType::i32), sig::const_ptr("cache_seqlens", ParamType::i32),
                   sig::ptr("out", ParamType::bf16), sig::ptr("workspace", ParamType::f32),
                   sig::ptr("counters", ParamType::u32), sig::value("num_seqs", ParamType::u32),
                   sig::value("num_heads", ParamType::u32), sig::value("page_size", ParamType::u32),
                   sig::value("max_pages_per_seq", ParamType::u32), sig::value("softmax_scale", ParamType::f32)},
                  2, Dim3{16, 1, 1}}};
    // B x contexts x H - page size. DeepSeek-V3's 128 heads are 128 at TP1, 64 at TP2, 32 at TP4, 16 at TP8.
    // small (PoCL in seconds): pages of 64 (FlashMLA's), 16 and 1 (SGLang's and aiter's), contexts that end
    // inside a page, shorter than a page, longer than one 512-token partition (a split-KV kernel combines),
    // 16, 128 and 32 heads. paper: TP8 16 requests of 512-4k, TP1 8 of 512-2k, TP8 64 of 128-1k in pages of
    // 1; held out TP4 12 of 600-3000 in pages of 16. Every paper reference is the CPU's (<= 2e9 multiply-adds
    // in double). large (the seed on the device is the reference): TP1 4 x 32k, TP8 128 of 1k-8k, TP1 32 of
    // 2k-16k; held out TP4 256 of 512-4k in pages of 1.
    s.profiles["small"] = {size_of(1, 700, 700, 16, 64), size_of(4, 9, 1100, 16, 16), size_of(3, 1, 150, 128, 1),
                           size_of(5, 33, 600, 32, 64, true)};
    s.profiles["paper"] = {size_of(16, 512, 4095, 16, 64), size_of(8, 512, 2047, 128, 64), size_of(64, 128, 1024, 16, 1),
                           size_of(12, 600, 3000, 32, 16, true)};
    s.profiles["large"] = {size_of(4, 32767, 32767, 128, 64, false, true), size_of(128, 1024, 8191, 16, 64, false, true),
                           size_of(32, 2048, 16383, 128, 64, false, true), size_of(256, 512, 4096, 32, 1, true, true)};
    return s;
}

struct Shape {
    size_t b, c_min, c_max, h, page;
    size_t max_pages() const { return (c_max + page - 1) / page; }
    // Records per (request, head) in the workspace: one per 512 tokens of the longest possible context.
    size_t partitions() const { return (max_pages() * page + kPartitionTokens - 1) / kPartitionTokens; }
    size_t workspace_floats() const { return b * h * partitions() * (kLatent + 2); }
};

Shape shape_of(const SizeSpec& size) {
    const auto p = [&](const char* n) { return static_cast<size_t>(size.param(n)); };
    return {p("B"), p("ctx_min"), p("ctx_max"), p("H"), p("page_size")};
}

size_t pages_of(size_t ctx, size_t page) { return (ctx + page - 1) / page; }

// Log-uniform in [c_min, c_max]; request 0 has c_max and request 1 c_min; request 2 (nominal) a whole
// number of pages (its last page full). The outlier trial gives the last request a context of 1 (a
// batch of one: c_max - 1).
std::vector<size_t> contexts(const Shape& s, uint64_t seed, Trial trial) {
    std::vector<size_t> ctx(s.b);
    const double lo = std::log(static_cast<double>(s.c_min)), hi = std::log(static_cast<double>(s.c_max));
    for (size_t r = 0; r < s.b; ++r)
        ctx[r] = std::clamp<size_t>(static_cast<size_t>(std::exp(lo + (hi - lo) * rng::uniform(seed, context_stream, r))),
                                    s.c_min, s.c_max);
    ctx[0] = s.c_max;
    if (s.b > 1) ctx[1] = s.c_min;
    const size_t whole_lo = pages_of(s.c_min, s.page) * s.page, whole_hi = s.c_max / s.page * s.page;
    if (s.b > 2 && trial == Trial::nominal && whole_lo <= whole_hi)
        ctx[2] = std::clamp<size_t>(ctx[2] / s.page * s.page, whole_lo, whole_hi);
    if (trial == Trial::outlier) {
        if (s.b > 1) ctx[s.b - 1] = 1;
        else ctx[0] = std::max<size_t>(1, s.c_max - 1);
    }
    return ctx;
}

// The physical pages: page 0 and a quarter more than the requests use are never mapped; the mapped
// ones are a random permutation of the rest, so consecutive logical pages lie anywhere in the cache.
// Entries past a request's last page are 0 (nominal) or random pages of the cache (outlier).
struct Tables {
    size_t num_pages = 0;
    std::vector<int32_t> entries;  // B x max_pages
};

Tables block_tables(const Shape& s, const std::vector<size_t>& ctx, uint64_t seed, Trial trial) {
    size_t used = 0;
    for (size_t c : ctx) used += pages_of(c, s.page);
    Tables t;
    t.num_pages = 1 + used + used / 4 + 1;
    std::vector<int32_t> physical(t.num_pages - 1);
    std::iota(physical.begin(), physical.end(), 1);
    std::sort(physical.begin(), physical.end(), [&](int32_t a, int32_t b) {
        return rng::bits(seed, page_stream, static_cast<uint64_t>(a)) < rng::bits(seed, page_stream, static_cast<uint64_t>(b));
    });
    t.entries.assign(s.b * s.max_pages(), 0);
    size_t next = 0;
    for (size_t r = 0; r < s.b; ++r)
        for (size_t pg = 0; pg < s.max_pages(); ++pg) {
            int32_t& e = t.entries[r * s.max_pages() + pg];
            if (pg < pages_of(ctx[r], s.page)) e = physical[next++];
            else if (trial == Trial::outlier)
                e = static_cast<int32_t>(rng::bits(seed, tail_stream, r * s.max_pages() + pg) % t.num_pages);
        }
    return t;
}

enum Buf { b_q, b_cache, b_table, b_seqlens, b_out, b_workspace, b_counters };

class MlaDecodePagedTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Shape s = shape_of(size);
        const std::vector<size_t> ctx = contexts(s, seed, trial);
        const Tables tables = block_tables(s, ctx, seed, trial);
        std::vector<float> q(s.b * s.h * kRow), cache(tables.num_pages * s.page * kRow);
        rng::fill_normal(q, seed, q_stream, 0.0f, 1.0f);
        rng::fill_normal(cache, seed, kv_stream, 0.0f, 1.0f);
        // Atrex-Bench's mla_decode_attention (and torch's scaled_dot_product_attention by default) scales
        // by 1 / sqrt(576), the width of q . row; DeepSeek-V3 itself passes 1 / sqrt(192) times its
        // YaRN factor mscale^2 (0.135): both lie in the outlier trial's range.
        double scale = 1.0 / std::sqrt(static_cast<double>(kRow));
        if (trial == Trial::outlier) {
            scale *= draw_outlier(rng::uniform(seed, scale_stream, 0), 0.6, 3.5, 1.0, 0.15);
            // Spikes in q (head 0's rows kept as drawn: a q spike meeting a cache spike in the same dim could
            // lift one of their logits above 0) and in the cache, then the logit channel over them.
            std::vector<float> head0(s.b * kRow);
            for (size_t r = 0; r < s.b; ++r) std::copy_n(&q[r * s.h * kRow], kRow, &head0[r * kRow]);
            outliers::plant_spikes(q, {0.002, 50, 0}, seed, spike_stream);
            for (size_t r = 0; r < s.b; ++r) std::copy_n(&head0[r * kRow], kRow, &q[r * s.h * kRow]);
            outliers::plant_spikes(cache, {}, seed, spike_stream + 1);
            const auto channel = kLatent + static_cast<size_t>(rng::bits(seed, channel_stream, 0) % kRope);
            for (size_t r = 0; r < s.b * s.h; ++r) q[r * kRow + channel] = r % s.h == 0 ? -kLogitChannel : kLogitChannel;
            for (size_t r = 0; r < cache.size() / kRow; ++r) cache[r * kRow + channel] = kLogitChannel;
        }
        Case c;
        c.buffers.push_back(make_bf16_buffer("q", BufferRole::input, q));
        c.buffers.push_back(make_bf16_buffer("kv_cache", BufferRole::input, cache));
        auto table_buffer = make_buffer<int32_t>("block_table", BufferRole::input, ElemType::i32, tables.entries.size());
        std::copy(tables.entries.begin(), tables.entries.end(), table_buffer.as<int32_t>());
        c.buffers.push_back(std::move(table_buffer));
        auto ctx_buffer = make_buffer<int32_t>("cache_seqlens", BufferRole::input, ElemType::i32, s.b);
        for (size_t r = 0; r < s.b; ++r) ctx_buffer.as<int32_t>()[r] = static_cast<int32_t>(ctx[r]);
        c.buffers.push_back(std::move(ctx_buffer));
        c.buffers.push_back(make_bf16_buffer("out", BufferRole::output, s.b * s.h * kLatent));
        // Scratch for split-KV kernels: one record of 512 + 2 floats per (request, head, 512 tokens of the
        // longest context), and one zeroed counter per (request, head).
        c.buffers.push_back(make_buffer<float>("workspace", BufferRole::state, ElemType::f32, s.workspace_floats()));
        c.buffers.push_back(make_buffer<uint32_t>("counters", BufferRole::state, ElemType::u32, s.b * s.h));
        const auto u = [](size_t x) { return ArgRef::u(static_cast<uint32_t>(x)); };
        c.launches.push_back({"mla_decode_paged",
                              {ArgRef::buf(b_q), ArgRef::buf(b_cache), ArgRef::buf(b_table), ArgRef::buf(b_seqlens),
                               ArgRef::buf(b_out), ArgRef::buf(b_workspace), ArgRef::buf(b_counters), u(s.b), u(s.h),
                               u(s.page), u(s.max_pages()), ArgRef::f(static_cast<float>(scale))},
                              Dim3{s.h, s.b, 1}});
        c.results = {b_out};
        c.constants = {{"softmax_scale", static_cast<double>(static_cast<float>(scale))},
                       {"page_size", static_cast<double>(s.page)}};
        double tokens = 0, pages = 0;
        for (size_t n : ctx) tokens += static_cast<double>(n), pages += static_cast<double>(pages_of(n, s.page));
        const double rows = static_cast<double>(s.b * s.h);
        c.flops_by_class = {{ComputeClass::tensor_bf16, 2.0 * static_cast<double>(s.h) * (kRow + kLatent) * tokens}};
        c.roofline_bytes = 2.0 * kRow * tokens + 2.0 * kRow * rows + 2.0 * kLatent * rows + 4.0 * pages +
                           4.0 * static_cast<double>(s.b);
        c.work = c.roofline_bytes;
        c.working_set_bytes = c.roofline_bytes;
        return c;
    }

    HostFootprint host_footprint(const SizeSpec& size) const override {
        const Shape s = shape_of(size);
        const uint64_t mapped = uint64_t(s.b) * s.max_pages(), pages = 2 + mapped + mapped / 4;
        const uint64_t q = uint64_t(s.b) * s.h * kRow, cache = pages * s.page * kRow, out = uint64_t(s.b) * s.h * kLatent;
        // bf16 q, cache and out, the workspace and counters, the table; the reference's floats of q and the
        // cache, its two results and the check's values and scales (the make_case's floats come first).
        return {2 * (q + cache + out) + 4 * s.workspace_floats() + 4 * (uint64_t(s.b) * s.h + mapped + s.b),
                4 * (q + cache) + 16 * out};
    }

    // results: out (exact values as floats) and sum_j p_j |v_j| of every output element (the floor's scale).
    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Shape s = shape_of(size);
        const std::vector<float> q = bf16_values(c.buffers[b_q]), cache = bf16_values(c.buffers[b_cache]);
        const int32_t* table = c.buffers[b_table].as<int32_t>();
        const int32_t* ctx = c.buffers[b_seqlens].as<int32_t>();
        const size_t maxp = s.max_pages();
        const double scale = c.constants.at("softmax_scale");
        std::vector<float> out(s.b * s.h * kLatent), abs_weighted(out.size());
        parallel_rows(s.b * s.h, [&](size_t begin, size_t end) {
            std::vector<float> row_out(kRow), row_abs(kRow);
            for (size_t row = begin; row < end; ++row) {
                const size_t r = row / s.h;
                // The key is the whole 576-wide row; the value is the same row, of which the first 512 (c_kv)
                // count: attend_row weighs all 576 and the rope part of its sum is dropped.
                const auto key = [&](size_t t) {
                    const auto pg = static_cast<size_t>(table[r * maxp + t / s.page]);
                    return &cache[(pg * s.page + t % s.page) * kRow];
                };
                attend_row(&q[row * kRow], kRow, scale, static_cast<size_t>(ctx[r]), key, key, row_out.data(),
                           row_abs.data());
                std::copy_n(row_out.begin(), kLatent, out.begin() + static_cast<ptrdiff_t>(row * kLatent));
                std::copy_n(row_abs.begin(), kLatent, abs_weighted.begin() + static_cast<ptrdiff_t>(row * kLatent));
            }
        });
        return Reference{{to_bytes(out), to_bytes(abs_weighted)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != 1 || ref.results.empty()) return missing_output();
        const Shape s = shape_of(size);
        const std::vector<float> abs_weighted =
            ref.results.size() > 1 ? std::vector<float>(as_floats(ref.results[1]).begin(), as_floats(ref.results[1]).end())
                                   : bound_abs_weighted(s, c);
        const int32_t* ctx = c.buffers[b_seqlens].as<int32_t>();
        const size_t page = s.page;
        const IndexFormatter where = [&s, ctx, page](int64_t e) {
            const auto u = static_cast<size_t>(e);
            const size_t r = u / (s.h * kLatent);
            const auto n = static_cast<size_t>(ctx[r]);
            return fmt::format("(request={} of context {} = {} pages of {} + {}, head={}, j={})", r, n, n / page, page,
                               n % page, u / kLatent % s.h, u % kLatent);
        };
        return check_attention_output(outputs[0], ref.results[0], c.buffers[b_out].count<uint16_t>(), abs_weighted, where);
    }

private:
    // Where the reference is the device's (no sum_j p_j |v_j| from the CPU): its upper bound max_j |v_j|
    // over the request's context, per latent channel (every head of a request reads the same rows).
    static std::vector<float> bound_abs_weighted(const Shape& s, const Case& c) {
        const std::vector<float> cache = bf16_values(c.buffers[b_cache]);
        const int32_t* table = c.buffers[b_table].as<int32_t>();
        const int32_t* ctx = c.buffers[b_seqlens].as<int32_t>();
        const size_t maxp = s.max_pages();
        std::vector<float> out(s.b * s.h * kLatent);
        parallel_rows(s.b, [&](size_t begin, size_t end) {
            std::vector<float> largest(kLatent);
            for (size_t r = begin; r < end; ++r) {
                std::fill(largest.begin(), largest.end(), 0.0f);
                for (size_t t = 0; t < static_cast<size_t>(ctx[r]); ++t) {
                    const auto pg = static_cast<size_t>(table[r * maxp + t / s.page]);
                    const float* row = &cache[(pg * s.page + t % s.page) * kRow];
                    for (size_t e = 0; e < kLatent; ++e) largest[e] = std::max(largest[e], std::fabs(row[e]));
                }
                for (size_t h = 0; h < s.h; ++h)
                    std::copy(largest.begin(), largest.end(), out.begin() + static_cast<ptrdiff_t>((r * s.h + h) * kLatent));
            }
        });
        return out;
    }

    static CheckResult missing_output() {
        CheckResult r;
        r.kind = "size";
        r.message = "the run returned no output for out";
        return r;
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_mla_decode_paged_task() { return std::make_unique<MlaDecodePagedTask>(); }

}  // namespace kevo
