"""Figures of lesson 09 (positions and masks): the sinusoidal encoding as a map, and attention weights under
masks, side by side on one colour scale, NaN entries drawn apart.

Every figure is drawn 11 inches wide with text of at least 15 points, so that shown across a 1280-pixel slide
its smallest text stays above 20 pixels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

__all__ = ["FONT", "encoding_map", "weight_maps", "draw_weights", "set_weight_texts", "position_maps",
           "dot_products_by_offset"]

#: Smallest text size of these figures, in points (11-inch figures: 15 pt is 24 px on a 1280-px slide).
FONT = 15
_RC = {"font.size": FONT, "axes.titlesize": FONT + 1, "axes.labelsize": FONT, "xtick.labelsize": FONT,
       "ytick.labelsize": FONT, "legend.fontsize": FONT}


def _array(x: ArrayLike, name: str, ndim: int) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    arr = np.asarray(x, dtype=float)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    return arr


def encoding_map(pe: ArrayLike, *, title: str | None = None, pairs: Sequence[int] = (0, 2, 4),
                 positions: int = 12) -> Figure:
    """Draw a (T, d_model) positional encoding: on the left one row per column, one column per position i, -1
    to 1; on the right, for each pair c in ``pairs``, the points (sine column 2c, cosine column 2c+1) of the
    first ``positions`` positions as unjoined markers, which lie on the unit circle (a clock hand per pair),
    i = 0 marked.

    Returns the figure (11 x 4.6 inches, one colour bar).
    """
    pe = _array(pe, "pe", 2)
    pairs = [c for c in pairs if 2 * c + 1 < pe.shape[1]]
    n = min(positions, pe.shape[0])
    with plt.rc_context(_RC):
        fig, (ax, clock) = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained",
                                        gridspec_kw={"width_ratios": [1.5, 1]})
        image = ax.imshow(pe.T, cmap="RdBu", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
        ax.set_xlabel("position i")
        ax.set_ylabel("column (2c sine, 2c+1 cosine)")
        ax.set_title(title or f"{pe.shape[0]} positions, d_model = {pe.shape[1]}")
        fig.colorbar(image, ax=ax, label="value", pad=0.01)
        turn = np.linspace(0, 2 * np.pi, 200)
        clock.plot(np.sin(turn), np.cos(turn), color="0.8", lw=1)
        # one marker shape and size per pair, the largest hollow: where two pairs' points meet on the circle
        # (pair 4's first steps fall on pair 0's), both stay visible
        looks = [("o", 13, "none"), ("s", 8, None), ("^", 6, None), ("D", 5, None), ("v", 5, None)]
        for k, c in enumerate(pairs):
            marker, size, face = looks[k % len(looks)]
            clock.plot(pe[:n, 2 * c], pe[:n, 2 * c + 1], marker, ls="none", ms=size, mew=2,
                       **({"mfc": face} if face else {}), label=f"pair c = {c}")
        for p in range(1, min(n, 4)):                  # pair 0 turns by 1 radian: number its first steps
            x, y = pe[p, 0], pe[p, 1]
            clock.annotate(str(p), (x, y), xytext=(1.2 * x - 0.04, 1.2 * y - 0.04), fontsize=FONT)
        clock.plot(pe[0, 0], pe[0, 1], "ks", ms=10)
        clock.annotate("i = 0", (pe[0, 0], pe[0, 1]), xytext=(0.15, 1.12), fontsize=FONT)
        clock.set_xlabel("sine column 2c")
        clock.set_ylabel("cosine column 2c+1")
        clock.set_title(f"i = 0 to {n - 1}: each pair turns\n(labels 1, 2, 3: pair 0 only)")
        clock.set_aspect("equal")
        clock.set_xlim(-1.25, 1.25)
        clock.set_ylim(-1.25, 1.35)
        clock.legend(loc="center", fontsize=FONT - 2 if FONT > 16 else FONT, frameon=False)
    return fig


def draw_weights(ax: Axes, weights: ArrayLike, labels: Sequence[str], *, title: str = "",
                 key_labels: Sequence[str] | None = None) -> list[list[plt.Text]]:
    """Draw (T_q, T_k) attention weights on ``ax`` on the scale 0 to 1, each weight written in its square;
    NaN entries are grey and read "NaN". Returns the text artists, ``texts[i][j]`` for query i, key j (a
    widget changes their strings; :func:`selfattention.plots.masks.weight_maps` draws several)."""
    w = _array(weights, "weights", 2)
    cmap = plt.get_cmap("Blues").with_extremes(bad="#bbbbbb")
    ax.imshow(np.ma.masked_invalid(w), cmap=cmap, vmin=0.0, vmax=1.0)
    keys = list(key_labels) if key_labels is not None else list(labels)
    ax.set_yticks(range(w.shape[0]), labels)
    ax.set_xticks(range(w.shape[1]), keys, rotation=45, ha="right")
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query")
    if title:
        ax.set_title(title)
    texts = [[ax.text(j, i, "", ha="center", va="center", fontsize=FONT) for j in range(w.shape[1])]
             for i in range(w.shape[0])]
    set_weight_texts(texts, w)
    return texts


def set_weight_texts(texts: list[list[plt.Text]], weights: np.ndarray) -> None:
    """Write ``weights`` (T_q, T_k) into the squares' texts: two decimals, "0" for an exact zero, "NaN"."""
    for i, row in enumerate(texts):
        for j, text in enumerate(row):
            v = weights[i, j]
            if np.isnan(v):
                text.set_text("NaN")
                text.set_color("black")
            else:
                text.set_text("0" if v == 0.0 else f"{v:.2f}")
                text.set_color("white" if v > 0.6 else "black")


def _side_by_side(matrices: Sequence[ArrayLike], titles: Sequence[str],
                  draw: Callable[[Axes, int, ArrayLike, str], None]) -> Figure:
    """Call ``draw(ax, i, matrix, title)`` for n (T, T) weight matrices on one row of axes, then add one
    colour bar (weights 0 to 1) for all. Returns the figure, 11 inches wide."""
    if not matrices or len(matrices) != len(titles):
        raise ValueError(f"matrices has {len(matrices)} entries and titles {len(titles)}; "
                         "expected one title per matrix, at least one matrix")
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(1, len(matrices), figsize=(11, 5.4), layout="constrained", squeeze=False)
        for i, (m, ax, title) in enumerate(zip(matrices, axes[0], titles, strict=True)):
            draw(ax, i, m, title)
        fig.colorbar(axes[0][-1].images[0], ax=list(axes[0]), shrink=0.8, label="attention weight")
    return fig


def weight_maps(matrices: Sequence[ArrayLike], titles: Sequence[str], labels: Sequence[str]) -> Figure:
    """Draw n (T, T) weight matrices side by side on one colour scale (0 to 1), with one colour bar.

    Returns the figure, 11 inches wide.
    """
    def draw(ax: Axes, i: int, m: ArrayLike, title: str) -> None:
        draw_weights(ax, m, labels, title=title)
        if i:
            ax.set_ylabel("")

    return _side_by_side(matrices, titles, draw)


def position_maps(matrices: Sequence[ArrayLike], titles: Sequence[str], fitted: int,
                  zoom: tuple[int, int] | None = None) -> Figure:
    """Draw n (T, T) weight matrices side by side as images on one colour scale (0 to 1), without numbers in
    the squares (T is large), with a dashed line under query ``fitted - 1``: the rows above it are the
    positions a matrix was fitted on, the rows below were never seen by the fit.

    Returns the figure, 11 inches wide.
    """
    def draw(ax: Axes, i: int, m: ArrayLike, title: str) -> None:
        w = _array(m, f"matrices[{i}]", 2)
        ax.imshow(w, cmap="Blues", vmin=0.0, vmax=1.0)
        ax.axhline(fitted - 0.5, color="tab:red", ls="--", lw=2)
        ax.text(0.5, fitted + 1.5, "not fitted below", color="tab:red", ha="left", va="top")   # off the diag.
        ax.set_title(title)
        ax.set_xlabel("key position j")
        ax.set_ylabel("query position i" if i == 0 else "")

    if zoom is None:
        return _side_by_side(matrices, titles, draw)
    row, n = zoom

    def draw_zoom(ax: Axes, i: int, m: ArrayLike, title: str) -> None:
        if i < len(matrices):
            return draw(ax, i, m, title)
        w = _array(matrices[0], "matrices[0]", 2)
        lo = max(row - 3, 0)
        ax.imshow(w[row:row + n, lo:row + n + 1], cmap="Blues", vmin=0.0, vmax=1.0,
                  extent=(lo - 0.5, row + n + 0.5, row + n - 0.5, row - 0.5))
        queries = np.arange(row, row + n)
        ax.plot(queries - 1, queries, ls="none", marker="o", ms=14, mfc="none", mec="tab:orange", mew=2,
                label="key i - 1")
        ax.plot(queries, queries, ls="none", marker="x", ms=8, color="0.5", label="key i")
        ax.legend(loc="lower left", fontsize=FONT - 2, handlelength=1)
        ax.set_title(title)
        ax.set_xlabel("key position j")

    return _side_by_side([*matrices, matrices[0]], [*titles, f"{titles[0]}, zoomed"], draw_zoom)


def dot_products_by_offset(tables: Sequence[ArrayLike], titles: Sequence[str], starts: Sequence[int],
                           offsets: int = 20) -> Figure:
    """For each (T, d) table of position vectors, one panel with one line per start position i in
    ``starts``: the dot product of rows i and i + delta against the offset delta, from -``offsets`` to
    ``offsets`` (the rows must exist). A table whose dot products depend on the offset alone draws all its
    lines on top of each other.

    Returns the figure (11 x 4.6 inches), panels sharing the y axis.
    """
    arrays = [_array(t, f"tables[{n}]", 2) for n, t in enumerate(tables)]
    if not arrays or len(arrays) != len(titles):
        raise ValueError(f"tables has {len(arrays)} entries and titles {len(titles)}; "
                         "expected one title per table, at least one table")
    deltas = np.arange(-offsets, offsets + 1)
    if min(starts) - offsets < 0 or max(starts) + offsets >= min(a.shape[0] for a in arrays):
        raise ValueError(f"starts {list(starts)} +- {offsets} leave the tables' rows")
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(1, len(arrays), figsize=(11, 4.6), layout="constrained", sharey=True,
                                 squeeze=False)
        for n, (a, ax, title) in enumerate(zip(arrays, axes[0], titles, strict=True)):
            for i in starts:
                ax.plot(deltas, a[i + deltas] @ a[i], lw=1.5, alpha=0.7)
            ax.axhline(0.0, color="0.7", lw=1)
            ax.set_title(title)
            ax.set_xlabel("offset delta = j - i")
            ax.set_ylabel(f"row i . row i + delta ({len(starts)} values of i)" if n == 0 else "")
    return fig
