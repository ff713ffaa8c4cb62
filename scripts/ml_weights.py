#!/usr/bin/env python3
"""Writes (or checks) packs/ml/weights.toml: the ml pack's two importance-weight vectors.

W_trace: Atrex-Bench's published operator importance (data/operator_importance.json), each Atrex
operator mapped onto at most one pack operator (MAPPING below), summed per pack operator and
renormalised over what was mapped. Pack operators the trace lacks get 0, with the reason.

W_model: each pack operator's share of the speed-of-light time of one forward step of LLaMA-3-8B
on an H200 (chunked prefill: one 2048-token prompt plus 128 decode requests at context 2048; 32
layers, the final norm, the LM head on the sampled rows, sampling). Each operator's time is the
roofline max(W / peak of its data type, Q / bandwidth) with the byte (Q) and FLOP (W) models of
/work/shared/research/ml-pack.md section 4.2, which are also the tasks' own models. The dense
GEMMs are split over the pack's four GEMM data types by DEPLOYMENT_MIX (an assumption, stated).
The device figures are the H200 SXM datasheet's (dense, no sparsity) unless given.

Standard library only. Usage:
  python3 scripts/ml_weights.py --write packs/ml/weights.toml
  python3 scripts/ml_weights.py --check packs/ml/weights.toml   # exit 1 if the file's numbers differ
"""
import argparse
import math
import sys

# --- W_trace inputs -------------------------------------------------------------------------
ATREX_COMMIT = "2aa0fa3c3f2cd26821a55bc74703cdd23ff4d14c"
ATREX_URL = f"https://github.com/alibaba/atrex-bench/blob/{ATREX_COMMIT}/data/operator_importance.json"
# importance_score per operator, as published (1303 profiles; the scores sum to 1.095, not 1).
ATREX_SCORES = {
    "unified_attention": 0.394972, "fused_moe": 0.113586, "block_scaled_mm": 0.093155,
    "fp8_blockscale_fused_moe": 0.051305, "paged_attention_decode": 0.044119, "reshape_and_cache": 0.043524,
    "topk_filter": 0.035326, "gated_delta_rule_update": 0.034959, "fused_qkv_rope": 0.033527,
    "rms_norm": 0.027508, "mla_decode_attention": 0.022828, "attention_forward": 0.022438,
    "causal_conv1d": 0.021834, "moe_topk_gating_softmax": 0.020529, "fused_qk_rmsnorm": 0.018695,
    "silu_and_mul": 0.017601, "chunk_gated_delta_rule_state": 0.015735, "fused_add_rms_norm": 0.011487,
    "moe_align_block_size": 0.011082, "mrope": 0.010032, "chunk_delta_rule_output": 0.008234,
    "fp8_dynamic_per_token_quant": 0.008223, "linear_sigmoid_mul": 0.007234, "per_token_group_quant_fp8": 0.005308,
    "gated_rms_norm": 0.004735, "l2_norm": 0.004661, "moe_count_and_sort": 0.004544,
    "fused_rmsnorm_quant": 0.003433, "moe_sum_reduce": 0.003393, "layer_norm": 0.000773,
}
# Atrex operator -> pack operator (the mapping of ml-pack.md 4.3; the router and its sort are moe_align).
MAPPING = {
    "unified_attention": "attention_prefill",   # all 25 of its Atrex shapes are prefill
    "attention_forward": "attention_prefill",
    "fused_moe": "fused_moe",
    "block_scaled_mm": "gemm_fp8_block",
    "paged_attention_decode": "attention_decode_paged",
    "reshape_and_cache": "kv_cache_write",
    "topk_filter": "topk_sampling",
    "fused_qkv_rope": "rope",
    "mrope": "rope",
    "rms_norm": "add_rmsnorm",
    "fused_add_rms_norm": "add_rmsnorm",
    "silu_and_mul": "silu_and_mul",
    "causal_conv1d": "causal_conv1d",
    "fused_qk_rmsnorm": "qk_norm_rope_kv",    # per-head q/k RMSNorm; the task fuses rope and the KV write too
    "per_token_group_quant_fp8": "per_token_group_quant_fp8",
    "moe_topk_gating_softmax": "moe_align",   # the router's top-k gating: the task's first kernel
    "moe_align_block_size": "moe_align",      # the block-aligned sort: its count and scatter kernels
    "moe_count_and_sort": "moe_align",        # vLLM's count_and_sort_expert_tokens: the task's scatter
    "mla_decode_attention": "mla_decode_paged",
}
# Why the Atrex operators not in MAPPING are left out.
LEFT_OUT = {
    "fp8_blockscale_fused_moe": "fp8 block-scaled MoE: the pack's fused_moe is bf16 and its gemm_fp8_block is dense",
    "gated_delta_rule_update": "linear-attention (delta rule) state update: no such operator in the pack",
    "chunk_gated_delta_rule_state": "linear-attention (delta rule) prefill: not in the pack",
    "chunk_delta_rule_output": "linear-attention (delta rule) prefill: not in the pack",
    "fp8_dynamic_per_token_quant": "activation quantization: not in the pack",
    "linear_sigmoid_mul": "gated linear unit of linear-attention models: not in the pack",
    "gated_rms_norm": "gated RMSNorm of linear-attention models: not in the pack",
    "l2_norm": "L2 norm: not in the pack",
    "fused_rmsnorm_quant": "RMSNorm fused with fp8 quantization: not add_rmsnorm's bf16 output",
    "moe_sum_reduce": "MoE combine: not in the pack",
    "layer_norm": "LayerNorm: not in the pack",
}

# The pack's operators, in the order the file lists them.
PACK = ["silu_and_mul", "add_rmsnorm", "rope", "kv_cache_write", "gemm_bf16", "gemm_w8a8", "gemm_w4a16",
        "gemm_fp8_block", "fused_moe", "attention_prefill", "attention_decode_paged", "topk_sampling",
        "causal_conv1d", "qk_norm_rope_kv", "per_token_group_quant_fp8", "moe_align", "mla_decode_paged"]
TRACE_ZERO = {g: "the trace has no dense GEMM of this data type: a gap in the trace, not a finding"
              for g in ("gemm_bf16", "gemm_w8a8", "gemm_w4a16")}

# --- W_model inputs -------------------------------------------------------------------------
LLAMA3_8B = dict(layers=32, H=4096, I=14336, Hq=32, Hkv=8, d=128, vocab=128256)
PREFILL_TOKENS = 2048      # one prompt, causal
DECODE_REQUESTS = 128      # one token each
DECODE_CONTEXT = 2048
PAGE = 16                  # paged-cache block size
# H200 SXM datasheet, dense (no sparsity): GB/s and GFLOP/s (GOP/s for int8).
H200 = dict(bandwidth=4800.0, bf16=989_400.0, fp8=1_978_900.0, int8=1_978_900.0)
# Which share of the served layers runs its dense GEMMs in each data type. No deployment statistics
# were found: uniform over the pack's four variants. The LM head stays bf16.
DEPLOYMENT_MIX = {"gemm_bf16": 0.25, "gemm_w8a8": 0.25, "gemm_w4a16": 0.25, "gemm_fp8_block": 0.25}
MODEL_ZERO = {"fused_moe": "LLaMA-3-8B is a dense model: it has no MoE layer",
              "causal_conv1d": "LLaMA-3-8B has no short convolution (that of linear-attention hybrids such as Qwen3-Next)",
              "qk_norm_rope_kv": "LLaMA-3-8B has no per-head q/k RMSNorm (Qwen3's); its rope and KV write are scored by rope and kv_cache_write",
              "moe_align": "LLaMA-3-8B is a dense model: it has no MoE router",
              "mla_decode_paged": "LLaMA-3-8B has no multi-head latent attention (DeepSeek-V2/V3's)"}


def gemm_seconds(kind, M, N, K, dev):
    """Roofline time of C[M,N] = A[M,K] B[N,K]^T in the data type of `kind` (byte models of ml-pack.md 4.2)."""
    W = 2.0 * M * N * K
    if kind == "gemm_bf16":
        Q, peak = 2.0 * (M * K + N * K + M * N), dev["bf16"]
    elif kind == "gemm_w8a8":
        Q, peak = M * K + N * K + 4.0 * (M + N) + 2.0 * M * N, dev["int8"]
    elif kind == "gemm_w4a16":
        Q, peak = 2.0 * M * K + N * K / 2 + N * K / 64 + 2.0 * M * N, dev["bf16"]
    elif kind == "gemm_fp8_block":
        Q, peak = M * K + N * K + M * K / 32 + N * K / 4096 + 2.0 * M * N, dev["fp8"]
    else:
        raise ValueError(kind)
    return max(W / (peak * 1e9), Q / (dev["bandwidth"] * 1e9))


def memory_seconds(Q, dev):
    return Q / (dev["bandwidth"] * 1e9)


def model_times(dev):
    """Seconds per operator over one forward step (see the module docstring)."""
    m = LLAMA3_8B
    H, I, Hq, Hkv, d = m["H"], m["I"], m["Hq"], m["Hkv"], m["d"]
    T = PREFILL_TOKENS + DECODE_REQUESTS
    sampled = DECODE_REQUESTS + 1  # every decode request and the prompt's last token
    layer_gemms = [(Hq * d + 2 * Hkv * d, H), (H, Hq * d), (2 * I, H), (H, I)]  # qkv, o, gate_up, down: (N, K)
    t = dict.fromkeys(PACK, 0.0)
    for kind, share in DEPLOYMENT_MIX.items():
        t[kind] += m["layers"] * share * sum(gemm_seconds(kind, T, N, K, dev) for N, K in layer_gemms)
    t["gemm_bf16"] += gemm_seconds("gemm_bf16", sampled, m["vocab"], H, dev)  # LM head
    t["add_rmsnorm"] = (2 * m["layers"] + 1) * memory_seconds(2 * (4 * T * H + H), dev)
    t["silu_and_mul"] = m["layers"] * memory_seconds(6 * T * I, dev)
    t["rope"] = m["layers"] * memory_seconds(4 * T * (Hq + Hkv) * d + 4 * T * d + 4 * T, dev)
    t["kv_cache_write"] = m["layers"] * memory_seconds(8 * T * Hkv * d + 8 * T, dev)
    L = PREFILL_TOKENS
    prefill_W = 4.0 * d * Hq * L * (L + 1) / 2
    prefill_Q = 4.0 * (L * Hq + L * Hkv) * d
    t["attention_prefill"] = m["layers"] * max(prefill_W / (dev["bf16"] * 1e9), memory_seconds(prefill_Q, dev))
    ctx_total = DECODE_REQUESTS * DECODE_CONTEXT
    decode_Q = 4.0 * Hkv * d * ctx_total + 4.0 * DECODE_REQUESTS * Hq * d + 4.0 * DECODE_REQUESTS * math.ceil(DECODE_CONTEXT / PAGE)
    t["attention_decode_paged"] = m["layers"] * memory_seconds(decode_Q, dev)
    t["topk_sampling"] = memory_seconds(8.0 * sampled * m["vocab"], dev)
    # The fp8 layers' activations are quantised per token and group of 128 before each of their four
    # GEMMs: read bf16, write e4m3 and one fp32 scale per group.
    t["per_token_group_quant_fp8"] = m["layers"] * DEPLOYMENT_MIX["gemm_fp8_block"] * sum(
        memory_seconds(3.0 * T * K + 4.0 * T * K / 128, dev) for _, K in layer_gemms)
    return t


def normalised(values):
    total = sum(values.values())
    return {k: v / total for k, v in values.items()}, total


def trace_weights():
    for op in ATREX_SCORES:
        assert (op in MAPPING) != (op in LEFT_OUT), f"{op}: mapped or left out, exactly one"
    mapped = dict.fromkeys(PACK, 0.0)
    for atrex, op in MAPPING.items():
        mapped[op] += ATREX_SCORES[atrex]
    return normalised(mapped)


def toml_text(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def weights_table(weights):
    return "".join(f"{op} = {weights[op]:.9f}\n" for op in PACK)


def render(dev):
    trace, mapped_total = trace_weights()
    times = model_times(dev)
    model, step = normalised(times)
    mapped = ", ".join(f"{a} -> {o}" for a, o in MAPPING.items())
    mix = ", ".join(f"{k} {v:g}" for k, v in DEPLOYMENT_MIX.items())
    out = [
        "# The ml pack's importance weights: two labelled vectors, never blended. kevo's default",
        "# aggregate stays the unweighted geometric mean; S_agg = sum of w_i S_i is printed beside it.",
        "# Generated by scripts/ml_weights.py (edit the script, not this file); tests check both.",
        'pack = "ml"',
        "",
        "[vectors.W_trace]",
        f"source = {toml_text('Atrex-Bench operator importance (1303 production profiles on H20 and XPU-A fleets serving vLLM, SGLang, AITER and rtp-llm)')}",
        f"url = {toml_text(ATREX_URL)}",
        "mapping = " + toml_text(
            f"Each Atrex operator's importance_score added to the pack operator it is ({mapped}); the sum of the "
            f"mapped scores ({mapped_total:.6f} of {sum(ATREX_SCORES.values()):.6f}) renormalised to 1. Atrex "
            "operators with no counterpart are listed in left_out with their scores."),
        "",
        "[vectors.W_trace.weights]",
        weights_table(trace),
        "[vectors.W_trace.zero_because]",
        "".join(f"{op} = {toml_text(r)}\n" for op, r in TRACE_ZERO.items()),
        "[vectors.W_trace.left_out]",
        "".join(f"{a} = {toml_text(f'{ATREX_SCORES[a]:.6f}: {r}')}\n" for a, r in LEFT_OUT.items()),
        "[vectors.W_model]",
        f"source = {toml_text('A roofline-time model of one LLaMA-3-8B forward step on an H200 SXM (scripts/ml_weights.py)')}",
        f"url = {toml_text('https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json')}",
        "mapping = " + toml_text(
            f"Each operator's share of the step's speed-of-light time ({step * 1e3:.3f} ms): chunked prefill of one "
            f"{PREFILL_TOKENS}-token prompt plus {DECODE_REQUESTS} decode requests at context {DECODE_CONTEXT}; "
            f"{LLAMA3_8B['layers']} layers (H {LLAMA3_8B['H']}, I {LLAMA3_8B['I']}, {LLAMA3_8B['Hq']}/{LLAMA3_8B['Hkv']} "
            f"heads, d {LLAMA3_8B['d']}), the final norm, the LM head on the {DECODE_REQUESTS + 1} sampled rows and "
            "sampling. Time = max(W / peak of the data type, Q / bandwidth) with the tasks' byte and FLOP models; H200 "
            f"figures: {dev['bandwidth']:g} GB/s, bf16 {dev['bf16']:g}, fp8 {dev['fp8']:g}, int8 {dev['int8']:g} "
            f"GFLOP/s (datasheet, dense). Dense GEMMs split by an assumed deployment mix ({mix}); the LM head bf16."),
        "",
        "[vectors.W_model.weights]",
        weights_table(model),
        "[vectors.W_model.zero_because]",
        "".join(f"{op} = {toml_text(r)}\n" for op, r in MODEL_ZERO.items()),
    ]
    for op in TRACE_ZERO:
        assert trace[op] == 0, op
    for op in MODEL_ZERO:
        assert model[op] == 0, op
    return "\n".join(out)


def check(path, text):
    import tomllib
    want = tomllib.loads(text)["vectors"]
    with open(path, "rb") as f:
        have = tomllib.load(f)["vectors"]
    bad = []
    for name, vector in want.items():
        for op, w in vector["weights"].items():
            got = have.get(name, {}).get("weights", {}).get(op)
            if got is None or abs(got - w) > 1e-9:
                bad.append(f"{name}.{op}: file {got}, computed {w:.9f}")
    return bad


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", metavar="FILE", help="write the weights file")
    g.add_argument("--check", metavar="FILE", help="exit 1 when FILE's weights differ from the computed ones")
    g.add_argument("--print", action="store_true", help="print the file and the model's per-operator times")
    for key in H200:
        p.add_argument(f"--{key}", type=float, default=H200[key], help=f"H200 figure (default {H200[key]:g})")
    a = p.parse_args()
    dev = {k: getattr(a, k) for k in H200}
    text = render(dev)
    if a.write:
        with open(a.write, "w") as f:
            f.write(text)
    elif a.check:
        bad = check(a.check, text)
        for line in bad:
            print(line, file=sys.stderr)
        print(f"{a.check}: {'DIFFERS from' if bad else 'matches'} scripts/ml_weights.py")
        return 1 if bad else 0
    else:
        print(text)
        for op, s in model_times(dev).items():
            print(f"# {op:24s} {s * 1e3:8.4f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
