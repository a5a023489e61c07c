"""Figures of lesson 15 (IO-aware attention) that are not shared with lessons 13 and 14.

Each function draws one figure at a size meant for a 1280-px slide and returns it; the lesson cell ends with
``plt.show()``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from selfattention.plots.llm import FONT, H100, _style

__all__ = ["H100_ON_CHIP", "causal_tile_grid", "memory_levels"]

#: One NVIDIA H100 SXM's on-chip memories (NVIDIA Hopper tuning guide and H100 datasheet): 132 streaming
#: multiprocessors (compute units), each with up to 228 KB of shared memory (SRAM), and a 50 MB L2 cache.
H100_ON_CHIP = {"sms": 132, "sram_bytes_per_sm": 228 * 1024, "l2_bytes": 50 * 10**6}


def causal_tile_grid(T: int, b: int) -> Figure:
    """The (T/b) x (T/b) grid of score tiles, query tiles down and key tiles across, for a causal mask: the
    tiles whose keys all come after their queries (skipped by the causal loop) hatched, the diagonal tiles,
    which the mask cuts through, shaded darker, the rest light; the title says how many are skipped. No row is
    singled out."""
    from matplotlib.patches import Patch, Rectangle

    if T % b or T < b:
        raise ValueError(f"T={T} must be a positive multiple of the tile size b={b}")
    n = T // b
    with plt.rc_context(_style()):
        fig, ax = plt.subplots(figsize=(6.2, 5.4), layout="constrained")
        for i in range(n):
            for j in range(n):
                if j > i:
                    face, hatch = "white", "//"
                else:
                    face, hatch = ("tab:orange" if j == i else "moccasin"), None
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor=face, edgecolor="gray", hatch=hatch, lw=0.8))
        ax.set_xlim(0, n)
        ax.set_ylim(n, 0)
        ax.set_aspect("equal")
        ax.set_xticks([k + 0.5 for k in range(n)], [str(k) for k in range(n)])
        ax.set_yticks([k + 0.5 for k in range(n)], [str(k) for k in range(n)])
        ax.set_xlabel(f"key tile (b = {b} keys each)")
        ax.set_ylabel("query tile")
        ax.set_title(f"T = {T}: {n} x {n} tiles, {n * (n - 1) // 2} skipped")
        ax.legend(handles=[
            Patch(facecolor="moccasin", edgecolor="gray", label="every key allowed"),
            Patch(facecolor="tab:orange", edgecolor="gray", label="mask inside (diagonal)"),
            Patch(facecolor="white", edgecolor="gray", hatch="//", label="all keys after the queries")],
                  loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=FONT - 2)
    return fig


def memory_levels() -> Figure:
    """The H100's memories as three boxes, slow to fast: HBM (its size and bandwidth, :data:`H100`), the L2
    cache, and each compute unit's SRAM (:data:`H100_ON_CHIP`), with the arrow whose traffic lesson 15 counts
    (every tile read into SRAM, or written from it). Spec-sheet figures, not measured."""
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    boxes = [(0.0, "HBM (slow memory)", f"{H100['memory_bytes'] / 2**30:.0f} GiB,\n"
                                        f"read at {H100['bandwidth'] / 1e12:.2f} TB/s"),
             (3.6, "L2 cache", f"{H100_ON_CHIP['l2_bytes'] / 1e6:.0f} MB,\nshared by all compute units"),
             (7.2, "SRAM (fast memory, M)", f"{H100_ON_CHIP['sram_bytes_per_sm'] // 1024} KB in each of\n"
                                            f"{H100_ON_CHIP['sms']} compute units")]
    with plt.rc_context(_style()):
        fig, ax = plt.subplots(figsize=(10, 3.4), layout="constrained")
        for x, name, size in boxes:
            ax.add_patch(FancyBboxPatch((x, 0.2), 3.0, 1.6, boxstyle="round,pad=0.05", facecolor="aliceblue",
                                        edgecolor="tab:blue", lw=2))
            ax.text(x + 1.5, 1.35, name, ha="center", va="center", fontsize=FONT, weight="bold")
            ax.text(x + 1.5, 0.75, size, ha="center", va="center", fontsize=FONT - 1)
        ax.add_patch(FancyArrowPatch((1.5, 2.0), (8.7, 2.0), connectionstyle="arc3,rad=-0.25",
                                     arrowstyle="<|-|>", mutation_scale=22, lw=2, color="tab:red"))
        ax.text(5.1, 3.05, "elements moved: what SlowMemory counts", ha="center", color="tab:red",
                fontsize=FONT)
        ax.set_xlim(-0.2, 10.4)
        ax.set_ylim(0, 3.45)
        ax.axis("off")
    return fig
