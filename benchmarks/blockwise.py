"""Section 3: full against block-wise (online-softmax) attention: time and peak memory against T."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable

import numpy as np

from .common import BLOCK_D_K, BLOCK_SIZE, Config, Log, Results, fit_exponent, median_time, mib, ms

NAME, TITLE = "blockwise", "## 3. Full vs block-wise attention"


def _peak_bytes(fn: Callable[[], object]) -> int:
    """Peak NumPy/Python memory allocated while ``fn()`` runs (tracemalloc), beyond what existed before."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def run(cfg: Config, res: Results, log: Log) -> None:
    """Section 3: full vs block-wise attention, one head, d_k = BLOCK_D_K, float64."""
    from selfattention import blockwise_attention, scaled_dot_product_attention

    rng = np.random.default_rng(0)
    for T in cfg.block_T:
        Q, K, V = (rng.standard_normal((T, BLOCK_D_K)) for _ in range(3))
        calls: dict[str, Callable[[], object]] = {
            "full": lambda Q=Q, K=K, V=V: scaled_dot_product_attention(Q, K, V),
            "block-wise": lambda Q=Q, K=K, V=V: blockwise_attention(Q, K, V, block_size=BLOCK_SIZE),
        }
        for name, fn in calls.items():
            seconds, _ = median_time(fn, cfg.time_budget_s, cfg.min_repeats, cfg.max_repeats)
            res.block_time.setdefault(name, {})[T] = seconds
            res.block_peak.setdefault(name, {})[T] = _peak_bytes(fn)
        full_out = scaled_dot_product_attention(Q, K, V)[0]
        block_out = blockwise_attention(Q, K, V, block_size=BLOCK_SIZE)
        res.block_diff[T] = float(np.abs(full_out - block_out).max())
        del full_out, block_out
        log(
            f"  T={T}: full {res.block_time['full'][T]:.3f} s {res.block_peak['full'][T] / 2**20:.1f} MiB, "
            f"block-wise {res.block_time['block-wise'][T]:.3f} s "
            f"{res.block_peak['block-wise'][T] / 2**20:.1f} MiB, max abs diff {res.block_diff[T]:.1e}"
        )


def lines(cfg: Config, res: Results) -> list[str]:
    """The section's markdown: a row per T, the fitted exponents."""
    L: list[str] = [TITLE, ""]
    add = L.append
    add(f"One head, d_k = {BLOCK_D_K}, float64 inputs (the dtype lesson 09 uses), self-attention on "
        f"random Q, K, V of shape (T, {BLOCK_D_K}); `scaled_dot_product_attention` (full (T, T) scores) "
        f"against `blockwise_attention(..., block_size={BLOCK_SIZE})` (online softmax over blocks of keys). "
        "Peak memory is what `tracemalloc` sees NumPy allocate during the call (inputs excluded). "
        "Time: median as above.")
    add("")
    if not res.block_diff:
        add("Not measured in this run.")
        add("")
        return L
    add("| T | full (ms) | block-wise (ms) | full peak (MiB) | block-wise peak (MiB) | memory ratio | "
        "max abs diff |")
    add("|---|---|---|---|---|---|---|")
    for T in cfg.block_T:
        f_t, b_t = res.block_time["full"][T], res.block_time["block-wise"][T]
        f_m, b_m = res.block_peak["full"][T], res.block_peak["block-wise"][T]
        add(f"| {T} | {ms(f_t)} | {ms(b_t)} | {mib(f_m)} | {mib(b_m)} | {b_m / f_m:.2%} | "
            f"{res.block_diff[T]:.1e} |")
    add("")
    Tb = cfg.block_T
    top = Tb[-3:]
    add(f"Fitted exponents b (value ∝ T^b, least squares on log-log over T = {Tb[0]}..{Tb[-1]}, and for time "
        f"also over the three largest T, {top[0]}..{top[-1]}, where fixed per-call costs matter least):")
    add("")
    add("| | time, all T | time, three largest T | peak memory, all T |")
    add("|---|---|---|---|")
    for name in ("full", "block-wise"):
        bt = fit_exponent(Tb, [res.block_time[name][T] for T in Tb])
        bt_top = fit_exponent(top, [res.block_time[name][T] for T in top])
        bm = fit_exponent(Tb, [res.block_peak[name][T] for T in Tb])
        add(f"| {name} | {bt:.2f} | {bt_top:.2f} | {bm:.2f} |")
    add("")
    T = Tb[-1]
    mem_ratio = res.block_peak["block-wise"][T] / res.block_peak["full"][T]
    time_ratio = res.block_time["block-wise"][T] / res.block_time["full"][T]
    add(f"At T = {T}: block-wise peak memory is {mem_ratio:.2%} of full attention's, "
        f"its time {time_ratio:.2f}x, "
        f"max abs difference {res.block_diff[T]:.1e}.")
    add("")
    return L
    return L
