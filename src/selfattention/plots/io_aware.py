"""Figures of lesson 15 (IO-aware attention) that are not shared with lessons 13 and 14.

Each function draws one figure at a size meant for a 1280-px slide and returns it; the lesson cell ends with
``plt.show()``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from selfattention.plots.llm import FONT, _style

__all__ = ["causal_tile_grid"]


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
