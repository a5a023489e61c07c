"""Figures of lesson 10 (cost and memory): how far a gradient reaches (an RNN against one attention layer),
measured memory and time against the sequence length, and the weight a planted key keeps as keys are added;
and the measuring behind them (peak memory, time per score, a median-and-range formatter), kept out of the
lesson's reading path.

Every figure is drawn 11 inches wide with text of at least 15 points (at least 20 pixels on a 1280-pixel
slide).
Curves measured over several seeds or draws show their median (or mean) as a line and their range as a band.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator
from numpy.typing import ArrayLike

__all__ = ["FONT", "dependence", "dependence_curves", "dilution_curves", "memory_and_time", "peak_memory",
           "seeded_model", "spread", "step_bars", "step_times", "time_per_score"]

FONT = 15
_RC = {"font.size": FONT, "axes.titlesize": FONT + 1, "axes.labelsize": FONT, "xtick.labelsize": FONT,
       "ytick.labelsize": FONT, "legend.fontsize": FONT - 1}


def _runs(name: str, runs: ArrayLike, n: int) -> np.ndarray:
    arr = np.asarray(runs, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != n:
        raise ValueError(f"{name} must be (runs, {n}): one row per seed or draw, got shape {arr.shape}")
    return arr


def dependence_curves(distance: ArrayLike, curves: Mapping[str, ArrayLike]) -> Figure:
    """Semilog plot of how much the last output depends on the token ``distance`` steps back.

    Inputs:
        distance: (n,) distances in tokens.
        curves: label -> (seeds, n) dependences, relative to the dependence on the token at distance 1.
    Draws each label's median over the seeds as a line and its range (min to max) as a band.
    """
    distance = np.asarray(distance, dtype=float)
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(11, 5.2), layout="constrained")
        for label, runs in curves.items():
            runs = _runs(label, runs, len(distance))
            line, = ax.semilogy(distance, np.median(runs, axis=0), lw=2.5, label=label)
            ax.fill_between(distance, runs.min(axis=0), runs.max(axis=0), color=line.get_color(), alpha=0.2)
        ax.axhline(1.0, color="black", lw=1, ls=":")
        lim = ax.get_ylim()
        low, high = (np.floor(np.log10(v) / 20) * 20 for v in lim)
        ax.set_yticks(10.0 ** np.arange(low, high + 20, 20))    # 10^0 among the ticks, steps of 10^20
        ax.set_ylim(lim)
        ax.minorticks_off()
        ax.set_xlabel("distance from the last token (steps)")
        ax.set_ylabel("dependence relative to the\ntoken just before the last")
        ax.set_title(f"How much the last output depends on an earlier token ({len(runs)} seeds each)")
        ax.legend(loc="lower left", ncol=2)
    return fig


def memory_and_time(sizes: ArrayLike, memory_mib: Mapping[str, ArrayLike],
                    ns_per_score: ArrayLike | Mapping[str, ArrayLike] | None = None) -> Figure:
    """Measured cost against the sequence length T (log axis): peak memory in MiB (log-log; one line per label
    of ``memory_mib``, each (n,)) and, when ``ns_per_score`` is given ((n,), or label -> (n,) for several
    variants; (repeats, n) draws the median run as the line and the middle half of the runs, 25th to 75th
    percentile, as a band), a second
    panel with the measured time per score in nanoseconds, on a log axis (single runs span decades)."""
    sizes = np.asarray(sizes, dtype=float)
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(1, 1 if ns_per_score is None else 2, figsize=(11, 4.8), layout="constrained",
                                 squeeze=False)
        left = axes[0][0]
        for (label, mib), marker in zip(memory_mib.items(), "os^v", strict=False):
            mib = np.asarray(mib, dtype=float)
            slope = np.polyfit(np.log(sizes[-3:]), np.log(mib[-3:]), 1)[0]
            left.loglog(sizes, mib, marker + "-", lw=2, label=f"{label}: grows like T^{slope:.1f}")
        left.set_ylabel("peak memory (MiB)")
        left.set_title("Memory")
        left.legend(loc="upper left")
        if ns_per_score is not None:
            right = axes[0][1]
            timed = ns_per_score if isinstance(ns_per_score, Mapping) else {"full attention": ns_per_score}
            for (label, ns), marker in zip(timed.items(), "os^v", strict=False):
                ns = np.asarray(ns, dtype=float)
                runs = ns.reshape(-1, len(sizes))                # (repeats, n); one row when (n,)
                line, = right.loglog(sizes, np.median(runs, axis=0), marker + "-", lw=2, label=label)
                if len(runs) > 1:
                    low, high = np.percentile(runs, [25, 75], axis=0)
                    right.fill_between(sizes, low, high, color=line.get_color(), alpha=0.2)
            if len(timed) > 1:
                right.legend(loc="upper left", fontsize=FONT - 2)
            right.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            right.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            right.set_ylabel("time / T² (ns per score, log)")
            banded = any(np.ndim(ns) == 2 and len(ns) > 1 for ns in timed.values())
            band = "\n(line: median run; band: middle half of the runs)" if banded else ""
            right.set_title("Time per score, one thread" + band)
        for ax in axes[0]:
            ax.set_xticks(sizes, [f"{int(t)}" for t in sizes], rotation=45)
            ax.minorticks_off()
            ax.set_xlabel("sequence length T")
    return fig


def dilution_curves(lengths: ArrayLike, weights: Mapping[str, ArrayLike],
                    predicted: Mapping[str, ArrayLike] | None = None) -> Figure:
    """Log-log plot of the weight a planted key gets among T keys.

    Inputs:
        lengths: (n,) numbers of keys T.
        weights: label -> (draws, n) measured weights; drawn as the median (line and dots) and the range
            (band).
        predicted: label -> (n,) a formula's prediction, drawn dashed in black.
    """
    lengths = np.asarray(lengths, dtype=float)
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(11, 5.0), layout="constrained")
        for label, runs in weights.items():
            runs = _runs(label, runs, len(lengths))
            line, = ax.loglog(lengths, np.median(runs, axis=0), "o-", lw=2.5,
                              label=f"{label} ({len(runs)} draws)")
            ax.fill_between(lengths, runs.min(axis=0), runs.max(axis=0), color=line.get_color(), alpha=0.25)
        for label, values in (predicted or {}).items():
            ax.loglog(lengths, np.asarray(values, dtype=float), "k--", lw=1.5, label=label)
        ax.set_xlabel("number of keys T")
        ax.set_ylabel("weight of the planted key")
        ax.set_title("One relevant key among T: its weight")
        ax.legend(loc="lower left")
    return fig


# ---------------------------------------------------------------- measuring
def peak_memory(fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
    """Run ``fn(*args)`` once under ``tracemalloc``; return (its result, the peak bytes allocated
    meanwhile)."""
    tracemalloc.start()
    try:
        result = fn(*args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, peak


def spread(x: ArrayLike, fmt: str) -> str:
    """Median [min, max] of the numbers ``x`` (any shape), each formatted with ``fmt`` (e.g. ".2f")."""
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        raise ValueError("x must hold at least one number, got an empty array")
    return f"{np.median(x):{fmt}} [{np.min(x):{fmt}}, {np.max(x):{fmt}}]"


def time_per_score(inputs: Mapping[int, np.ndarray], variants: Mapping[str, Callable[..., Any]],
                   repeats: int = 8) -> dict[str, np.ndarray]:
    """Time attention in PyTorch on one thread, one call per variant, run and T.

    Inputs:
        inputs: T -> (3, T, d_k) float array holding Q, K and V.
        variants: name -> ``fn(Q, K, V, S)``, each returning the (T, d_k) output; ``S`` is one preallocated
            (T, T) tensor the variant may write into (or ignore).
        repeats: timed runs per variant and T, all returned (a timing varies from run to run).
    Returns name -> (repeats, len(inputs)) nanoseconds per score (time / T^2). Before the timed runs each
    variant is called once per T, untimed (a warm-up): a first call pays one-time costs (PyTorch's first
    dispatch of each operation, memory the allocator has not reserved yet, cold caches) that are no part of
    attention's cost.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if not variants:
        raise ValueError("variants must name at least one function fn(Q, K, V, S), got none")
    out: dict[str, list[list[float]]] = {name: [] for name in variants}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)     # with several threads, extra cores join in only above some size
    try:
        for T, qkv in inputs.items():
            qkv = np.asarray(qkv)
            if qkv.ndim != 3 or qkv.shape[0] != 3 or qkv.shape[1] != T:
                raise ValueError(f"inputs[{T}] must have shape (3, {T}, d_k), got {qkv.shape}")
            Q, K, V = torch.from_numpy(qkv)
            S = torch.empty(T, T, dtype=Q.dtype)
            for name, run in variants.items():
                run(Q, K, V, S)                                 # warm-up call, not timed
                times = []
                for _ in range(repeats):
                    start = time.perf_counter()
                    run(Q, K, V, S)
                    times.append((time.perf_counter() - start) / T ** 2 * 1e9)
                out[name].append(times)
    finally:
        torch.set_num_threads(threads)
    return {name: np.array(ns).T for name, ns in out.items()}


STEPS = ("Q K^T", "amax", "subtract", "exp", "sum", "divide", "S @ V")


def _steps(Q: torch.Tensor, Kt: torch.Tensor, V: torch.Tensor, S: torch.Tensor,
           row: torch.Tensor) -> dict[str, Callable[[], Any]]:
    """The seven steps of in-place attention, each a call with no arguments, in ``STEPS`` order."""
    return {"Q K^T": lambda: torch.matmul(Q, Kt, out=S),
            "amax": lambda: torch.amax(S, dim=-1, keepdim=True, out=row),
            "subtract": lambda: S.sub_(row),
            "exp": lambda: S.exp_(),
            "sum": lambda: torch.sum(S, dim=-1, keepdim=True, out=row),
            "divide": lambda: S.div_(row),
            "S @ V": lambda: S @ V}


def step_times(inputs: Mapping[int, np.ndarray], repeats: int = 15) -> dict[str, np.ndarray]:
    """Time each step of in-place attention on its own, in PyTorch on one thread: the fastest of ``repeats``
    runs of each step, per T, in nanoseconds per score (time / T^2).

    Inputs:
        inputs: T -> (3, T, d_k) float array holding Q, K and V.
        repeats: timed runs per step and T (after one untimed warm-up); the fastest is kept, the run least
            disturbed by whatever else the machine was doing.
    Returns step -> (len(inputs),) ns per score, steps in ``STEPS`` order: the two products with T^2 d_k
    multiply-adds each (Q K^T, S @ V) and the five passes over the T x T scores between them.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    out: dict[str, list[float]] = {step: [] for step in STEPS}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for T, qkv in inputs.items():
            qkv = np.asarray(qkv)
            if qkv.ndim != 3 or qkv.shape[0] != 3 or qkv.shape[1] != T:
                raise ValueError(f"inputs[{T}] must have shape (3, {T}, d_k), got {qkv.shape}")
            Q, K, V = torch.from_numpy(qkv)
            Kt = (K / np.sqrt(K.shape[-1])).T.contiguous()
            S = torch.empty(T, T, dtype=Q.dtype)
            torch.matmul(Q, Kt, out=S)
            row = torch.empty(T, 1, dtype=Q.dtype)
            base = S.clone()
            steps = _steps(Q, Kt, V, S, row)
            for step, run in steps.items():
                best = np.inf
                for _ in range(repeats + 1):                 # the first run is a warm-up, not counted
                    S.copy_(base)                            # the same values each time: no overflow
                    row.fill_(1.0)
                    start = time.perf_counter()
                    run()
                    best = min(best, time.perf_counter() - start) if _ else np.inf
                out[step].append(best / T ** 2 * 1e9)
    finally:
        torch.set_num_threads(threads)
    return {step: np.array(ns) for step, ns in out.items()}


def step_bars(sizes: ArrayLike, ns_per_score: Mapping[str, ArrayLike]) -> Figure:
    """A stacked bar per T: each step's time per score (``step_times``), the two products hatched."""
    sizes = np.asarray(sizes)
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(11, 4.8), layout="constrained")
        bottom = np.zeros(len(sizes))
        x = np.arange(len(sizes))
        for step, ns in ns_per_score.items():
            ns = np.asarray(ns, dtype=float)
            product = "@" in step or "K^T" in step
            ax.bar(x, ns, 0.6, bottom=bottom, label=step + (" (multiply-adds)" if product else ""),
                   hatch="//" if product else None, edgecolor="black", linewidth=0.5)
            bottom += ns
        ax.set_xticks(x, [f"{int(t)}" for t in sizes])
        ax.set_xlabel("sequence length T")
        ax.set_ylabel("time / T² (ns per score)")
        ax.set_title("Each step timed alone, fastest run, one thread")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=FONT - 2)
    return fig


# ---------------------------------------------------------------- how far a gradient reaches
def seeded_model(seed: int, gain: float | None = None, d_in: int = 8, d_hidden: int = 16) -> torch.nn.Module:
    """A float64 tanh ``torch.nn.RNN`` (d_in -> d_hidden) with W_hh multiplied by ``gain`` (1: PyTorch's
    default initialisation), or, with ``gain=None``, one ``SelfAttention`` layer; seeded with ``seed``.
    Both map (1, T, d_in) to a pair whose first element is (1, T, d_hidden)."""
    from selfattention.layers import SelfAttention

    torch.manual_seed(seed)
    if gain is None:
        return SelfAttention(d_in, d_hidden).double()
    rnn = torch.nn.RNN(d_in, d_hidden, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        rnn.weight_hh_l0 *= gain
    return rnn


def dependence(model: torch.nn.Module, seed: int, T: int, d_in: int = 8) -> np.ndarray:
    """|gradient of sum_k z_T,k with respect to x_j| on a seeded (1, T, d_in) float64 input, at the distances
    1, ..., T-1 from the last token: (T - 1,)."""
    if T < 2:
        raise ValueError(f"T must be at least 2, got {T}")
    x = torch.randn(1, T, d_in, generator=torch.Generator().manual_seed(seed), dtype=torch.float64,
                    requires_grad=True)                       # (1, T, d_in)
    out, _ = model(x)                                         # (1, T, d_hidden)
    (grad,) = torch.autograd.grad(out[0, -1].sum(), x)        # (1, T, d_in)
    return grad[0].norm(dim=-1).numpy()[::-1][1:].copy()      # distances 1, 2, ..., T-1
