"""Figures of lessons 13, 14 and 15 (generation, memory, long context, memory traffic).

Each function draws one figure at a size meant for a 1280-px slide (fonts of 14 pt on a 10-inch figure are
about 25 px there) and returns it; the lesson cell ends with ``plt.show()``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter
from numpy.typing import ArrayLike

__all__ = ["FONT", "loss_curves", "prefill_decode",
           "block_map", "loss_by_position", "io_counts", "io_ratio",
           "matmul_tile_for", "per_entry_moves", "standard_same_m", "decode_costs",
           "decode_rates", "rope_turns", "rope_pairs_turning", "window_reach", "H100"]

#: Font size (pt) of every figure here.
FONT = 14

#: One NVIDIA H100 SXM: "80 GB" of HBM3, of which nvidia-smi reports 81,559 MiB (85.5e9 bytes; a little less
#: is usable), read at 3.35 TB/s; 989 TFLOP/s dense bf16 (datasheet).
H100 = {"memory_bytes": 81_559 * 2**20, "bandwidth": 3.35e12, "flops": 989e12}


def _style() -> dict[str, object]:
    return {"font.size": FONT, "axes.titlesize": FONT, "axes.labelsize": FONT, "legend.fontsize": FONT - 1,
            "xtick.labelsize": FONT - 1, "ytick.labelsize": FONT - 1}


def loss_curves(losses: Mapping[str, Sequence[float]], every: int = 1) -> Figure:
    """The training loss per step of each seed (log scale).

    Inputs: losses: {seed name: loss of every step}; every: plot every ``every``-th step.
    """
    if not losses:
        raise ValueError("losses is empty; expected {seed: [loss per step]}")
    with plt.rc_context(_style()):
        fig, ax = plt.subplots(figsize=(10, 3.6), layout="constrained")
        for name, curve in losses.items():
            curve = np.asarray(curve, dtype=float)
            ax.plot(np.arange(len(curve))[::every], curve[::every], label=f"seed {name}")
        ax.set_yscale("log")
        ax.set_xlabel("training step (4 windows of 256 characters each)")
        ax.set_ylabel("loss (nats per character)")
        ax.legend()
    return fig


def prefill_decode(prompt: int = 5, steps: int = 2) -> Figure:
    """What generation with a KV cache computes: the prefill's ``prompt x prompt`` scores (above the
    diagonal masked), then each decode step's single row, one query against every cached key plus its own
    new key; the cache grows by one key and value per step.

    Inputs: prompt: tokens in the prompt (1-12); steps: decode steps drawn (1-4).
    """
    if not 1 <= prompt <= 12:
        raise ValueError(f"prompt must be 1..12 tokens, got {prompt!r}")
    if not 1 <= steps <= 4:
        raise ValueError(f"steps must be 1..4, got {steps!r}")
    colours = {"used": "#4C72B0", "masked": "#DDDDDD", "cached": "#4C72B0", "new": "#DD8452"}
    with plt.rc_context(_style()):
        widths = [prompt] + [prompt + s for s in range(1, steps + 1)]
        fig, axes = plt.subplots(1, steps + 1, figsize=(12, 4.6), layout="constrained",
                                 gridspec_kw={"width_ratios": widths})
        for n, ax in enumerate(axes):
            keys = widths[n]
            rows = prompt if n == 0 else 1
            for r in range(rows):
                for c in range(keys):
                    if n == 0:
                        colour = colours["used"] if c <= r else colours["masked"]
                    else:
                        colour = colours["new"] if c == keys - 1 else colours["cached"]
                    y = prompt - 1 - r if n == 0 else 0  # a decode row lines up with the prefill's last row
                    ax.add_patch(plt.Rectangle((c, y), 0.92, 0.92, color=colour))
            ax.set_xlim(-0.2, keys + 0.1)
            ax.set_ylim(-0.2, prompt + 0.1)
            ax.set_aspect("equal")
            ax.set_xticks([])
            ax.set_yticks([])
            for side in ax.spines.values():
                side.set_visible(False)
            if n == 0:
                ax.set_title(f"prefill: {prompt} x {prompt} scores")
                ax.set_xlabel("keys (the prompt)")
                ax.set_ylabel("queries")
            else:
                ax.set_title(f"decode step {n}: 1 x {keys} scores")
                ax.set_xlabel(f"cache: {keys - 1} + 1 new key")
        handles = [plt.Rectangle((0, 0), 1, 1, color=colours[k]) for k in ("used", "masked", "new")]
        fig.legend(handles, ["score against a cached key", "score computed, then masked",
                             "score against the new token's own key"],
                   loc="outside lower center", ncol=3, frameon=False, fontsize=FONT)
    return fig


def block_map(block_tables: Sequence[Sequence[int]], num_blocks: int, names: Sequence[str] | None = None,
              lengths: Sequence[int] | None = None, block_size: int = 16) -> Figure:
    """The blocks of a paged cache's pool, coloured by the sequence that holds them (white: free).

    Inputs: block_tables: one list of block numbers per sequence; num_blocks: blocks in the pool;
    lengths: the tokens each sequence holds (optional): each block is then shaded dark over its used slots
    (block_size of them when full) and pale over its empty ones, and labelled with its used slots.
    """
    owner = np.full(num_blocks, -1)
    used = np.zeros(num_blocks, dtype=int)
    for seq, table in enumerate(block_tables):
        n = None if lengths is None else lengths[seq]
        if n is not None and not (len(table) - 1) * block_size < n <= len(table) * block_size:
            raise ValueError(f"sequence {seq}: {n} tokens do not fill {len(table)} blocks of {block_size}")
        for i, block in enumerate(table):
            if not 0 <= block < num_blocks:
                raise ValueError(f"block {block} of sequence {seq} is outside the pool of {num_blocks}")
            owner[block] = seq
            if lengths is not None:
                used[block] = min(block_size, lengths[seq] - i * block_size)
    cols = 16
    rows = math.ceil(num_blocks / cols)
    grid = np.full((rows, cols), np.nan)
    grid.flat[:num_blocks] = np.where(owner >= 0, owner, np.nan)
    with plt.rc_context(_style()):
        fig, ax = plt.subplots(figsize=(10, 0.7 + 0.62 * rows), layout="constrained")
        cmap = plt.get_cmap("tab10", max(len(block_tables), 1))
        ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=len(block_tables) - 0.5, aspect="auto",
                  alpha=None if lengths is None else 0.3)
        for (r, c), seq in np.ndenumerate(grid):
            b = r * cols + c
            if b >= num_blocks:
                continue
            label = "free" if np.isnan(seq) else str(int(seq))
            if lengths is not None and not np.isnan(seq):
                ax.add_patch(plt.Rectangle((c - 0.5, r - 0.5), used[b] / block_size, 1, color=cmap(int(seq)),
                                           linewidth=0))
                label += f"\n{used[b]}/{block_size}" if used[b] < block_size else ""
            ax.text(c, r, label, ha="center", va="center", fontsize=FONT)
        ax.set_xticks([])
        ax.set_yticks(range(rows),
                      [f"blocks {r * cols}-{min(num_blocks, (r + 1) * cols) - 1}" for r in range(rows)])
        label = "the number of the request holding each block" if names is None else ", ".join(
            f"{i}: {n}" for i, n in enumerate(names))
        if lengths is not None:
            label += f"; dark: slots used, pale: empty (a part-full block shows used/{block_size})"
        ax.set_title(label, fontsize=FONT - 1)
    return fig


def loss_by_position(curves: Mapping[str, ArrayLike], trained_length: int, bucket: int = 32,
                     title: str | None = None) -> Figure:
    """Loss against position for several ways of running a model: the mean over the inputs (line) and
    their range (band), averaged over buckets of ``bucket`` positions.

    Inputs: curves: {name: (n_inputs, T) loss of each input at each position}; trained_length: drawn as a
    vertical line (the length of the training windows).
    """
    with plt.rc_context(_style()):
        fig, ax = plt.subplots(figsize=(10, 4), layout="constrained")
        for name, losses in curves.items():
            losses = np.asarray(losses, dtype=float)
            if losses.ndim != 2:
                raise ValueError(f"curves[{name!r}] has shape {losses.shape}; expected (n_inputs, T)")
            n = losses.shape[1] // bucket
            per = losses[:, : n * bucket].reshape(len(losses), n, bucket).mean(axis=2)  # (n_inputs, n)
            x = (np.arange(n) + 0.5) * bucket
            line, = ax.plot(x, per.mean(axis=0), label=name, lw=2)
            ax.fill_between(x, per.min(axis=0), per.max(axis=0), color=line.get_color(), alpha=0.2)
        ax.axvline(trained_length, color="gray", ls=":", lw=2)
        ax.text(trained_length, 0.97, " trained length", transform=ax.get_xaxis_transform(), va="top",
                color="gray")
        ax.set_yscale("log")
        ax.set_xlabel(f"position in the text (means over bins of {bucket})")
        ax.set_ylabel("loss (nats per character)")
        ax.legend(loc="center right")
        if title:
            ax.set_title(title)
    return fig


def io_counts(T_values: ArrayLike, M_values: Sequence[int], d: int) -> Figure:
    """Elements moved between slow and fast memory by standard attention (4Td + 4T^2) and by the tiled
    loop (2Td + 2T^2 d / b, tiles of b = the largest with 4bd + b^2 <= M), against T, one line per M."""
    T = np.asarray(T_values, dtype=float)
    with plt.rc_context(_style()):
        fig, ax = plt.subplots(figsize=(10, 4), layout="constrained")
        ax.loglog(T, 4 * T * d + 4 * T**2, "k-", lw=2.5, label="standard: S and P through slow memory")
        for M in M_values:
            b = tile_for(M, d)
            ax.loglog(T, 2 * T * d + 2 * T**2 * d / b, "--", lw=2,
                      label=f"tiled, fast memory M = {M:,} (tiles of {b})")
        ax.set_xlabel("tokens T")
        ax.set_ylabel(f"elements moved (d = {d})")
        ax.legend()
    return fig


def _log2_ticks(ax: object, values: np.ndarray) -> None:
    """Put the x axis on a base-2 log scale with a tick, labelled 2^k, at each power of two in ``values``."""
    from matplotlib.ticker import FixedLocator, NullLocator

    ax.set_xscale("log", base=2)  # type: ignore[attr-defined]
    ks = np.arange(math.ceil(np.log2(values.min())), math.floor(np.log2(values.max())) + 1)
    ax.xaxis.set_major_locator(FixedLocator(2.0 ** ks))  # type: ignore[attr-defined]
    ax.xaxis.set_minor_locator(NullLocator())  # type: ignore[attr-defined]
    ax.set_xticklabels([f"$2^{{{k}}}$" for k in ks])  # type: ignore[attr-defined]


def io_ratio(M_values: ArrayLike, d_values: Sequence[int]) -> Figure:
    """How many times fewer elements the tiled loop moves than standard attention, per entry of the T x T
    matrix (long inputs: the T d terms left out), against the fast memory M, one line per d: both held to the
    same M, :func:`standard_same_m` over the tiled loop's 2d/b (tiles of b = :func:`tile_for`). A thin grey
    line per d gives section 1's unlimited-memory bound for standard attention (4 per entry) over the same
    2d/b, for reference. Base-2 x and logarithmic y axes; a dotted line at 1: above it tiling wins."""
    M = np.asarray(M_values, dtype=float)
    with plt.rc_context(_style()):
        fig, ax = plt.subplots(figsize=(10, 4), layout="constrained")
        ax.axhline(1.0, color="k", ls=":", lw=1.5, label="1: above it, tiling wins")
        tiled = {d: np.array([2 * d / tile_for(int(m), d) for m in M]) for d in d_values}
        for d in d_values:
            same_m = np.array([standard_same_m(int(m), d) for m in M])
            ax.plot(M, same_m / tiled[d], "o-", lw=2.5, label=f"d = {d}")
        for n, d in enumerate(d_values):   # the reference, thin and grey, under each d's line
            ax.plot(M, 4.0 / tiled[d], "-", lw=1, color="0.6",
                    label="standard with unlimited memory" if n == 0 else None)
        _log2_ticks(ax, M)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.set_xlabel("fast memory M (numbers)")
        ax.set_ylabel("standard / tiled, same M")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))   # beside the axes: no line hidden
    return fig


def tile_for(M: int, d: int) -> int:
    """The largest tile size b whose Q, O, K, V tiles (4 b d) and score tile (b^2) fit in M numbers."""
    b = int((-4 * d + math.sqrt(16 * d * d + 4 * M)) / 2)
    if b < 1:
        raise ValueError(f"a fast memory of M={M} numbers cannot hold one row of d={d} four times")
    return b


def matmul_tile_for(M: int) -> int:
    """The largest c with c^2 + 2c <= M: a c x c tile of a matrix product's output in fast memory, with one
    column of each input's c rows streamed past it."""
    c = int(math.isqrt(M + 1)) - 1
    while (c + 1) ** 2 + 2 * (c + 1) <= M:
        c += 1
    if c < 1:
        raise ValueError(f"a fast memory of M={M} numbers cannot hold a 1 x 1 output tile and its inputs")
    return c


def standard_same_m(M: int, d: int) -> float:
    """Elements standard attention moves per entry of the T x T matrix (long inputs: T d terms left out) when
    its two matrix multiplies are tiled in a fast memory of M numbers, with c = matmul_tile_for(M): QK^T reads
    2d/c (c x c output tiles, 2cd reads each); PV reads as much when d >= c, else 1 + d/c (c x d output tiles:
    each entry of P read once, V's rows c at a time); S written and read and P written add 3."""
    c = matmul_tile_for(M)
    return 3 + 2 * d / c + (2 * d / c if d >= c else 1 + d / c)


def per_entry_moves(M: int, d: int) -> dict[str, float]:
    """Elements moved per entry of the T x T matrix (long inputs: the T d terms left out). "tiled": 2d/b;
    "standard": section 1's 4 (Q, K, V read once, as if fast memory held them whole); "standard, same M":
    :func:`standard_same_m`."""
    return {"b": tile_for(M, d), "c": matmul_tile_for(M), "tiled": 2 * d / tile_for(M, d), "standard": 4.0,
            "standard, same M": standard_same_m(M, d)}


def decode_costs(n_params: float, cache_bytes_per_token: float, T: int, batches: ArrayLike,
                 gpus: int = 2, bytes_per_param: int = 2) -> dict[str, np.ndarray]:
    """Lower bounds on one decode step of a model on ``gpus`` H100s: the milliseconds to read the bytes
    (weights once, every sequence's cache once) and to do the FLOPs (2 per weight per sequence).

    Returns: {"batch", "memory_ms", "compute_ms", "step_ms", "tokens_per_s", "bytes"} arrays, and
    "fits" (bool per batch): weights and caches within the GPUs' memory.
    """
    batch = np.asarray(batches, dtype=float)
    weights = n_params * bytes_per_param
    total_bytes = weights + batch * T * cache_bytes_per_token
    memory_ms = 1e3 * total_bytes / (gpus * H100["bandwidth"])
    compute_ms = 1e3 * 2 * n_params * batch / (gpus * H100["flops"])
    step_ms = np.maximum(memory_ms, compute_ms)
    return {"batch": batch, "memory_ms": memory_ms, "compute_ms": compute_ms, "step_ms": step_ms,
            "tokens_per_s": batch / step_ms * 1e3, "bytes": total_bytes,
            "fits": total_bytes <= gpus * H100["memory_bytes"]}


def decode_rates(n_params: float, layers: int, d_k: int, T: int, kv_heads: Sequence[int] = (8, 64),
                 gpus: int = 2, bytes_per_number: int = 2) -> Figure:
    """The most tokens per second a decode step allows at each batch (:func:`decode_costs`), one line per
    number of key/value heads g, solid while the caches fit beside the weights; the compute-bound line dashed.
    """
    batches = np.unique(np.geomspace(1, 1024, 60).round())
    with plt.rc_context(_style()):
        fig, ax = plt.subplots(figsize=(10, 4.2), layout="constrained")
        for g in kv_heads:
            cost = decode_costs(n_params, 2 * layers * g * d_k * bytes_per_number, T, batches, gpus)
            line, = ax.loglog(batches, np.where(cost["fits"], cost["tokens_per_s"], np.nan), lw=3,
                              label=f"g = {g}, fits in memory")
            ax.loglog(batches, np.where(cost["fits"], np.nan, cost["tokens_per_s"]), ":", lw=2,
                      color=line.get_color(), label=f"g = {g}, does not fit")
        ax.loglog(batches, batches / (2 * n_params / (gpus * H100["flops"])), "--", color="gray",
                  label="if only FLOPs counted")
        ax.set_xlabel("sequences decoded together (batch)")
        ax.set_ylabel("tokens per second, at most")
        ax.set_title(f"T = {T:,} tokens per sequence, {gpus} H100s", fontsize=FONT)
        ax.set_ylim(1, 1e6)
        ax.legend(loc="lower right", fontsize=FONT - 2)
    return fig


def rope_pairs_turning(d: int = 16, base: float = 10_000.0, pairs: Sequence[int] = (0, 1, 3, 7),
                       positions: Sequence[int] = tuple(range(0, 33, 4))) -> Figure:
    """One unit circle per RoPE pair: where the pair's direction points at each position p (angle
    p theta_u, theta_u = base^(-2u/d)), coloured from the first position (light) to the last (dark), so
    fast pairs are seen to spin and slow ones to creep. Each title gives the pair and its wavelength
    2 pi / theta_u."""
    theta = base ** (-2 * np.arange(d // 2) / d)
    pos = np.asarray(positions, dtype=float)
    with plt.rc_context(_style()):
        fig, axes = plt.subplots(1, len(pairs), figsize=(10, 3.2), layout="constrained")
        for ax, u in zip(np.atleast_1d(axes), pairs, strict=True):
            circle = np.linspace(0, 2 * np.pi, 200)
            ax.plot(np.cos(circle), np.sin(circle), color="0.8", lw=1)
            angle = pos * theta[u]
            ax.plot(np.cos(angle), np.sin(angle), color="0.6", lw=1)
            ax.scatter(np.cos(angle), np.sin(angle), c=pos, cmap="viridis_r", s=45, zorder=3)
            for p, a, up in ((pos[0], angle[0], -14), (pos[-1], angle[-1], 4)):   # first below, last above
                ax.annotate(f"p={p:.0f}", (np.cos(a), np.sin(a)), textcoords="offset points", xytext=(4, up),
                            fontsize=FONT - 3)
            step = (pos[1] - pos[0]) * theta[u] if len(pos) > 1 else 0.0   # radians between two dots
            ax.set_title(f"pair {u}: turn every {2 * np.pi / theta[u]:,.0f}\n{step:.2f} rad per dot",
                         fontsize=FONT - 1)
            ax.set_aspect("equal")
            ax.set_xlim(-1.3, 1.3)
            ax.set_ylim(-1.3, 1.3)
            ax.set_xticks([])
            ax.set_yticks([])
        every = f", every {pos[1] - pos[0]:.0f}" if len(pos) > 1 else ""
        fig.suptitle(f"RoPE, d_k = {d}, base {base:,.0f}: one pair's direction at positions "
                     f"{pos[0]:.0f} to {pos[-1]:.0f}{every}")
    return fig


def window_reach(T: int = 24, window: int = 5, layers: int = 3) -> Figure:
    """One panel per number of stacked layers l = 1..``layers``: which tokens (columns) each token (row) can
    read from through l layers of a causal sliding window of ``window``, a band that widens to l(w-1)+1."""
    ones = np.ones((T, T), dtype=int)
    mask = np.tril(ones) - np.tril(ones, -window)                             # (T, T) one layer's window
    paths = np.eye(T, dtype=int)
    with plt.rc_context(_style()):
        fig, axes = plt.subplots(1, layers, figsize=(10, 3.6), layout="constrained")
        for layer, ax in enumerate(np.atleast_1d(axes), start=1):
            paths = (mask @ paths > 0).astype(int)              # (T, T) reachable in `layer` layers
            ax.imshow(paths, cmap="Blues", vmin=0, vmax=1.4)
            ax.set_title(f"{layer} layer{'s' if layer > 1 else ''}: reach {int(paths[-1].sum())}")
            ax.set_xlabel("key (read from)")
            if layer == 1:
                ax.set_ylabel("query")
            ax.set_xticks([])
            ax.set_yticks([])
        fig.suptitle(f"sliding window w = {window}, T = {T}")
    return fig


def rope_turns(inv_freq_trained: ArrayLike, inv_freq_new: ArrayLike, trained_length: int, new_length: int,
               ax: plt.Axes) -> None:
    """On ``ax``: the turns (angle / 2 pi) each RoPE pair makes over the trained length (grey) and, with the
    new frequencies, over the new length (colour); a pair is on familiar ground when it stays within its
    trained turns or had made a whole turn in training."""
    trained = np.asarray(inv_freq_trained, dtype=float) * trained_length / (2 * np.pi)
    new = np.asarray(inv_freq_new, dtype=float) * new_length / (2 * np.pi)
    pairs = np.arange(len(trained))
    ax.bar(pairs - 0.2, trained, width=0.4, color="0.6", label=f"trained: {trained_length:,} tokens")
    ax.bar(pairs + 0.2, new, width=0.4, color="tab:blue", label=f"now: {new_length:,} tokens")
    ax.axhline(1, color="tab:red", ls=":", lw=2, label="one whole turn")
    ax.set_yscale("log")
    ax.set_xlabel("pair u (fast to slow)")
    ax.set_ylabel("turns over the context")
