"""Section 2: attention forward on CPU, float32: our NumPy function and layer against PyTorch's."""

from __future__ import annotations

import gc
import math
from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from selfattention import MultiHeadAttention

from .common import (
    BATCH,
    D_K,
    D_MODEL,
    GRAD_OURS,
    GRAD_REF,
    METHODS,
    MHA_TARGET_T,
    NP_SDPA,
    NUM_HEADS,
    OUR_MHA,
    REFERENCE,
    RETURNS_WEIGHTS,
    TORCH_MHA_NOW,
    TORCH_MHA_W,
    TORCH_SDPA,
    Config,
    Log,
    Results,
    fit_exponent,
    median_time,
    ms,
)

NAME, TITLE = "attention", "## 2. Attention forward, CPU, float32"


def run(cfg: Config, res: Results, log: Log) -> None:
    """Section 2: forward times of the five attention implementations against T."""
    import torch.nn.functional as F

    from selfattention import scaled_dot_product_attention
    from selfattention.layers import attention_weights

    torch.manual_seed(0)
    reference = torch.nn.MultiheadAttention(D_MODEL, NUM_HEADS, batch_first=True).eval()
    ours = MultiHeadAttention.from_torch(reference).eval()
    rng = np.random.default_rng(0)

    with torch.inference_mode():
        # Same layers, same input: the outputs must agree before their speed means anything.
        x = torch.randn(2, 16, D_MODEL)
        out_ours, w_ours = ours(x)
        out_ref, w_ref = reference(x, x, x, need_weights=True, average_attn_weights=False)
        checks = res.attention_checks
        checks["ours vs torch MHA, max abs out diff (T=16)"] = float((out_ours - out_ref).abs().max())
        checks["ours vs torch MHA, max abs weights diff (T=16)"] = float(
            (w_ours - w_ref).abs().max()
        )
        q = rng.standard_normal((2, NUM_HEADS, 16, D_K), dtype=np.float32)
        out_np, _ = scaled_dot_product_attention(q, q, q)
        qt = torch.from_numpy(q)
        out_t = F.scaled_dot_product_attention(qt, qt, qt)
        checks["NumPy vs torch SDPA, max abs out diff (T=16)"] = float(
            np.abs(out_np - out_t.numpy()).max()
        )
        checks["dtype our NumPy function returns for float32 input"] = str(out_np.dtype)

        for T in cfg.attention_T:
            x = torch.randn(BATCH, T, D_MODEL)
            q, k, v = (rng.standard_normal((BATCH, NUM_HEADS, T, D_K), dtype=np.float32) for _ in range(3))
            qt, kt, vt = (torch.from_numpy(a) for a in (q, k, v))
            calls: dict[str, Callable[[], object]] = {
                NP_SDPA: lambda q=q, k=k, v=v: scaled_dot_product_attention(q, k, v),
                OUR_MHA: lambda x=x: ours(x),
                TORCH_SDPA: lambda qt=qt, kt=kt, vt=vt: F.scaled_dot_product_attention(qt, kt, vt),
                TORCH_MHA_W: lambda x=x: reference(x, x, x, need_weights=True, average_attn_weights=False),
                TORCH_MHA_NOW: lambda x=x: reference(x, x, x, need_weights=False),
            }
            for method, fn in calls.items():
                if RETURNS_WEIGHTS[method] and T > cfg.weights_max_T:
                    continue
                if method == NP_SDPA and T > cfg.numpy_max_T:
                    continue
                seconds, repeats = median_time(fn, cfg.time_budget_s, cfg.min_repeats, cfg.max_repeats)
                res.attention.setdefault(method, {})[T] = seconds
                res.attention_repeats.setdefault(method, {})[T] = repeats
                gc.collect()
            log(
                f"  T={T}: "
                + ", ".join(f"{m.split(': ')[1][:28]} {res.attention[m][T] * 1e3:.1f} ms"
                            for m in METHODS if T in res.attention.get(m, {}))
            )
            del calls, x, q, k, v, qt, kt, vt
            gc.collect()

        # Where our layer spends its time at the target T: the same steps as its forward, one by one.
        T = MHA_TARGET_T if MHA_TARGET_T in cfg.attention_T else cfg.attention_T[-1]
        x = torch.randn(BATCH, T, D_MODEL)
        qh = ours.split_heads(ours.W_query(x))
        kh = ours.split_heads(ours.W_key(x))
        vh = ours.split_heads(ours.W_value(x))
        weights = attention_weights(qh, kh)
        ctx = ours.merge_heads(weights @ vh)
        steps: dict[str, Callable[[], object]] = {
            "Q, K, V projections (3 Linear) and split_heads": lambda: (
                ours.split_heads(ours.W_query(x)),
                ours.split_heads(ours.W_key(x)),
                ours.split_heads(ours.W_value(x)),
            ),
            "scores (q / sqrt(d_k)) @ k^T": lambda: (qh / math.sqrt(D_K)) @ kh.transpose(-2, -1),
            "scores and softmax (attention_weights, in place)": lambda: attention_weights(qh, kh),
            "weights @ v and merge_heads": lambda: ours.merge_heads(weights @ vh),
            "output projection W_out": lambda: ours.W_out(ctx),
            "whole forward": lambda: ours(x),
        }
        res.breakdown = {"T": float(T)}
        for name, fn in steps.items():
            res.breakdown[name] = median_time(fn, cfg.time_budget_s, cfg.min_repeats, cfg.max_repeats)[0]
        res.reference_ops = reference_ops(reference, x)

    # The same pair with autograd recording, as in training (dropout is 0): no fused path for PyTorch,
    # the plain softmax for us.
    x = torch.randn(BATCH, T, D_MODEL)  # not an inference tensor: autograd may record it
    reference.train()
    ours.train()
    res.with_grad = {
        GRAD_OURS: median_time(lambda: ours(x), cfg.time_budget_s, cfg.min_repeats, cfg.max_repeats)[0],
        GRAD_REF: median_time(
            lambda: reference(x, x, x, need_weights=True, average_attn_weights=False),
            cfg.time_budget_s, cfg.min_repeats, cfg.max_repeats,
        )[0],
    }
    res.with_grad["T"] = float(T)
    log(f"  with autograd at T={T}: ours {res.with_grad[GRAD_OURS] * 1e3:.1f} ms, "
        f"torch {res.with_grad[GRAD_REF] * 1e3:.1f} ms")


def reference_ops(reference: torch.nn.MultiheadAttention, x: Tensor) -> list[str]:
    """The aten operators one ``reference(x, x, x, need_weights=True)`` call runs (torch.profiler),
    by the time they took, slowest first: they show whether PyTorch took its fused inference path."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        reference(x, x, x, need_weights=True, average_attn_weights=False)
    events = sorted(prof.key_averages(), key=lambda e: e.cpu_time_total, reverse=True)
    return [e.key for e in events if e.key.startswith("aten::")][:6]


def lines(cfg: Config, res: Results) -> list[str]:
    """The section's markdown: times, ratios, exponents, where our layer spends its time."""
    L: list[str] = [TITLE, ""]
    add = L.append
    add(f"batch {BATCH}, d_model {D_MODEL}, {NUM_HEADS} heads (d_k = {D_K}), self-attention, no mask, "
        "`torch.inference_mode()`, torch threads as above. The NumPy function and "
        "`F.scaled_dot_product_attention` get Q, K, V already split into heads, "
        f"shape ({BATCH}, {NUM_HEADS}, T, {D_K}); the two layers get x of shape ({BATCH}, T, {D_MODEL}) "
        "and do their own projections. "
        "`nn.MultiheadAttention` runs in eval mode with `batch_first=True`; with `need_weights=True` it is "
        "asked for per-head weights (`average_attn_weights=False`), as ours always returns them.")
    add("")
    skipped = [T for T in cfg.attention_T if T > cfg.weights_max_T]
    if skipped:
        mib = BATCH * NUM_HEADS * min(skipped) ** 2 * 4 / 2**20
        add(f"The methods that return weights run up to T = {cfg.weights_max_T} only: at T = {min(skipped)} "
            f"the weights alone are {BATCH}·{NUM_HEADS}·T² float32 numbers = {mib:,.0f} MiB, and the softmax "
            "holds two or three such arrays at once.")
        add("")
    np_row = res.attention.get(NP_SDPA, {})
    if np_row and any(T > cfg.numpy_max_T for T in cfg.attention_T if T <= cfg.weights_max_T):
        T_np = max(np_row)
        add(f"Our NumPy function runs up to T = {T_np} only (`--numpy-max-t`): its time at T = {T_np} was "
            f"{np_row[T_np]:.2f} s per call and grows about 4x per doubling of T.")
        add("")
    add("Checks before timing (same weights, same input):")
    add("")
    for k, v in res.attention_checks.items():
        add(f"- {k}: {v if isinstance(v, str) else f'{v:.1e}'}")
    add("")
    Ts = cfg.attention_T
    if not res.attention:
        add("Not measured in this run.")
        add("")
    reps = [n for row in res.attention_repeats.values() for n in row.values()]
    if reps:
        add(f"Each figure is the median of {min(reps)} to {max(reps)} timed calls (about "
            f"{cfg.time_budget_s:g} s of calls, at least {cfg.min_repeats}) after one warm-up call.")
        add("")
    add("Median time per forward call (ms):")
    add("")
    add("| method | returns weights | " + " | ".join(f"T={T}" for T in Ts) + " |")
    add("|---|---|" + "---|" * len(Ts))
    for m in METHODS:
        row = res.attention.get(m, {})
        add(f"| {m} | {'yes' if RETURNS_WEIGHTS[m] else 'no'} | "
            + " | ".join(ms(row.get(T)) for T in Ts) + " |")
    add("")
    add("Ratio to `nn.MultiheadAttention(need_weights=True)` (below 1 = faster):")
    add("")
    ref = res.attention.get(REFERENCE, {})
    ref_Ts = [T for T in Ts if T in ref]
    add("| method | " + " | ".join(f"T={T}" for T in ref_Ts) + " |")
    add("|---|" + "---|" * len(ref_Ts))
    for m in METHODS:
        row = res.attention.get(m, {})
        add(f"| {m} | " + " | ".join(f"{row[T] / ref[T]:.2f}" if T in row else "—" for T in ref_Ts) + " |")
    add("")
    fitted = {m: r for m in METHODS if len(r := res.attention.get(m, {})) >= 2}
    if fitted:
        add("Time exponents b (time ∝ T^b, least squares on log-log): over all T measured, and over the "
            "three largest (where fixed per-call costs matter least):")
        add("")
        add("| method | b, all T | b, three largest T |")
        add("|---|---|---|")
        for m, r in fitted.items():
            Ts = sorted(r)
            top = Ts[-3:]
            add(f"| {m} | {fit_exponent(Ts, [r[T] for T in Ts]):.2f} ({Ts[0]}..{Ts[-1]}) | "
                f"{fit_exponent(top, [r[T] for T in top]):.2f} ({top[0]}..{top[-1]}) |")
        add("")
    if res.breakdown:
        T = int(res.breakdown["T"])
        total = res.breakdown["whole forward"]
        add(f"Where our `MultiHeadAttention` spends its time at T = {T} (each step timed alone on the same "
            "tensors; the steps need not add up exactly to the whole):")
        add("")
        add("| step | ms | share of the whole forward |")
        add("|---|---|---|")
        for k, v in res.breakdown.items():
            if k != "T":
                add(f"| {k} | {v * 1e3:.2f} | {v / total:.0%} |")
        add("")
    if res.reference_ops:
        fused = "aten::_native_multi_head_attention" in res.reference_ops
        add("What `nn.MultiheadAttention(need_weights=True)` ran in that setting (torch.profiler, slowest "
            f"first): {', '.join(f'`{op}`' for op in res.reference_ops)}. "
            + ("That is PyTorch's fused inference path (eval mode, no autograd, self-attention): it scales q "
               "inside the projection kernel and writes the softmax over the scores' own buffer, one "
               "(batch, heads, T, T) array in all. Ours does the same arithmetic in the same order without "
               "autograd (q / sqrt(d_k) before the product, softmax in place)."
               if fused else "PyTorch did not take its fused inference path here."))
        add("")
    if res.with_grad:
        g = res.with_grad
        add("With autograd recording, as in training (train mode, dropout 0, forward only, "
            f"T = {int(g['T'])}), "
            "both layers take their plain path: no fused kernel for PyTorch, and for ours `torch.softmax` "
            "into a new array, which autograd keeps for the backward pass:")
        add("")
        add("| method | ms | ratio |")
        add("|---|---|---|")
        add(f"| {GRAD_OURS} | {g[GRAD_OURS] * 1e3:.2f} | {g[GRAD_OURS] / g[GRAD_REF]:.2f} |")
        add(f"| {GRAD_REF} | {g[GRAD_REF] * 1e3:.2f} | 1.00 |")
        add("")
    return L
