"""Lesson 04's figures (learnable projections): M = W_Q W_K^T by feature beside score maps, weights compared
on one scale, one query step by step.

Every figure here is drawn for a slide: the deck shows a figure across the slide's width (about
``DECK_PX`` pixels), so a figure ``w`` inches wide needs text of at least ``deck_font_pt(w)`` points for
its smallest text to be ``MIN_PX`` pixels high there. :func:`legible` enlarges any smaller text.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.text import Text
from numpy.typing import ArrayLike

__all__ = ["MIN_PX", "DECK_PX", "deck_font_pt", "legible", "feature_and_scores", "shared_or_not",
           "weights_compared",
           "query_steps", "keys_and_queries"]

MIN_PX = 20  # the smallest text on a slide, in pixels
DECK_PX = 1180  # the width a figure is drawn at on a 1280 x 720 slide (its margins taken off), in pixels


def deck_font_pt(width_in: float, min_px: float = MIN_PX, shown_px: float = DECK_PX) -> float:
    """The smallest font size (points) that is ``min_px`` pixels high when a figure ``width_in`` inches wide
    is shown ``shown_px`` pixels wide: a point is 1/72 inch, so ``min_px * 72 * width_in / shown_px``."""
    if not width_in > 0:
        raise ValueError(f"width_in must be a positive width in inches, got {width_in!r}")
    return min_px * 72.0 * width_in / shown_px


def legible(fig: Figure, shown_px: float = DECK_PX) -> Figure:
    """Raise every text of ``fig`` (titles, labels, ticks, colour bars, annotations) to at least
    :func:`deck_font_pt` of the figure's width shown ``shown_px`` pixels wide (less than the slide's width
    for a figure that shares its slide, a widget's); returns ``fig``."""
    if not isinstance(fig, Figure):
        raise TypeError(f"fig is a {type(fig).__name__}; expected a matplotlib Figure")
    smallest = deck_font_pt(float(fig.get_figwidth()), shown_px=shown_px)
    for ax in fig.axes:  # tick labels are made when drawn: set their size, not only the ones made so far
        ax.tick_params(which="both", labelsize=smallest)
    for text in fig.findobj(Text):  # empty ones too: a widget fills them in later
        if text.get_fontsize() < smallest:
            text.set_fontsize(smallest)
    return fig


def weights_compared(maps: Sequence[ArrayLike], titles: Sequence[str], labels: Sequence[str],
                     width: float = 12.0) -> Figure:
    """Attention weights side by side on ONE colour scale from 0 to 1, each weight written in its square,
    every text legible on a slide.

    Inputs: maps: n arrays (T, T) (rows: queries, columns: keys); titles: n strings; labels: the T tokens.
    """
    arrays = [np.asarray(m, dtype=float) for m in maps]
    T = len(labels)
    if not arrays or len(arrays) != len(titles) or any(a.shape != (T, T) for a in arrays):
        raise ValueError(f"maps has {len(arrays)} arrays of shapes {[a.shape for a in arrays]} and titles "
                         f"{len(titles)}; expected one title per map, each map ({T}, {T}) for {T} labels")
    fig, axes = plt.subplots(1, len(arrays), figsize=(width, 0.42 * width + 0.1), layout="constrained")
    axes = np.atleast_1d(axes)
    size = deck_font_pt(width)
    for k, (ax, a, title) in enumerate(zip(axes, arrays, titles, strict=True)):
        image = ax.imshow(a, cmap="Blues", vmin=0.0, vmax=1.0)
        for (i, j), w in np.ndenumerate(a):
            ax.text(j, i, f"{w:.2f}", ha="center", va="center", fontsize=size,
                    color="white" if w > 0.6 else "black")
        ax.set_xticks(range(T), labels, rotation=45, ha="right")
        ax.set_yticks(range(T), labels if k == 0 else [])
        ax.set_title(title)
        ax.set_xlabel("key")
    axes[0].set_ylabel("query")
    fig.colorbar(image, ax=list(axes), shrink=0.8, label="weight")
    return legible(fig)


def feature_and_scores(M: ArrayLike, features: Sequence[str], scores: Sequence[ArrayLike],
                       titles: Sequence[str], words: Sequence[str], width: float = 13.0) -> Figure:
    """M = W_Q W_K^T as a map by feature (row: a feature of the word that looks, column: a feature of the word
    looked at), then maps of scores, all on ONE colour scale, each number written in its square.

    Inputs: M (d_in, d_in); features: the d_in feature names; scores: n arrays (T, T) (rows: queries,
    columns: keys); titles: 1 + n strings (M's first); words: the T tokens.
    """
    M = np.asarray(M, dtype=float)
    maps = [np.asarray(a, dtype=float) for a in scores]
    d, T = len(features), len(words)
    if M.shape != (d, d) or len(titles) != 1 + len(maps) or any(a.shape != (T, T) for a in maps):
        raise ValueError(f"M {M.shape}, scores {[a.shape for a in maps]} and {len(titles)} titles: "
                         f"expected M ({d}, {d}) for {d} features, each score map ({T}, {T}) for {T} words, "
                         f"and one title per map, M's first")
    low = min(0.0, *(float(a.min()) for a in [M, *maps]))
    high = max(float(a.max()) for a in [M, *maps])
    fig, axes = plt.subplots(1, 1 + len(maps), figsize=(width, 0.4 * width), layout="constrained",
                             gridspec_kw={"width_ratios": [d] + [T] * len(maps)})
    size = deck_font_pt(width)
    for k, (ax, a, title) in enumerate(zip(axes, [M, *maps], titles, strict=True)):
        image = ax.imshow(a, cmap="Blues", vmin=low, vmax=high)
        for (i, j), v in np.ndenumerate(a):
            ax.text(j, i, f"{v:g}", ha="center", va="center", fontsize=size,
                    color="white" if v > low + 0.6 * (high - low) else "black")
        labels = features if k == 0 else words
        ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
        ax.set_yticks(range(len(labels)), labels)
        ax.set_title(title)
        ax.set_xlabel("feature looked at" if k == 0 else "key")
        ax.set_ylabel("feature that looks" if k == 0 else ("query" if k == 1 else ""))
    fig.colorbar(image, ax=list(axes), shrink=0.8, label="value (M) or score")
    return legible(fig)


TOY_FEATURES = ("person", "action", "food", "fruit", "red")


def shared_or_not(M: ArrayLike, shared_K: ArrayLike, shared_Q: ArrayLike, separate: ArrayLike,
                  words: Sequence[str], width: float = 16.0) -> Figure:
    """Lesson 04's figure: M = W_Q W_K^T by the toy's five features, then the scores with one matrix (W_K,
    then W_Q) for both roles and with W_Q and W_K, on one colour scale.

    Inputs: M (5, 5); shared_K, shared_Q, separate: (T, T) score maps; words: the T tokens.
    """
    titles = ["$M = W_QW_K^\\top$ by feature", "$W_K$ for both roles", "$W_Q$ for both roles",
              "$W_Q$ and $W_K$"]
    return feature_and_scores(M, TOY_FEATURES, [shared_K, shared_Q, separate], titles, words, width=width)


def keys_and_queries(Q: ArrayLike, K: ArrayLike, words: Sequence[str], width: float = 7.0,
                     queries: Sequence[str] | None = None) -> Figure:
    """Two query/key axes drawn as a plane: each key a labelled point, each query a labelled arrow from the
    origin, one colour per word (a word's query and key share it).

    Inputs: Q (T, 2) and K (T, 2), the words' queries and keys; words: the T tokens; queries: the words whose
    query arrows are drawn (None: all).
    """
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    T = len(words)
    if Q.shape != (T, 2) or K.shape != (T, 2):
        raise ValueError(f"Q {Q.shape} and K {K.shape}: expected both ({T}, 2) for {T} words")
    unknown = [w for w in (queries or []) if w not in words]
    if unknown:
        raise ValueError(f"queries: got {unknown}, expected words among {list(words)}")
    fig, ax = plt.subplots(figsize=(width, width), layout="constrained")
    size = deck_font_pt(width, shown_px=DECK_PX / 2)
    reach = max(1.0, float(np.abs(np.vstack([Q, K])).max())) * 1.4
    ax.axhline(0, color="0.85", lw=1)
    ax.axvline(0, color="0.85", lw=1)
    for i, word in enumerate(words):
        colour = f"C{i}"
        if queries is None or word in queries:
            ax.annotate("", xy=tuple(Q[i]), xytext=(0, 0),
                        arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 2.5})
            # the label sits beyond the arrow's tip, along its direction, so it never lies on its own arrow
            u = Q[i] / max(float(np.linalg.norm(Q[i])), 1e-12)
            ax.annotate(f" q {word}", tuple(Q[i]), xytext=tuple(10 * u), textcoords="offset points",
                        color=colour, fontsize=size, ha="left" if u[0] > 0.3 else "right" if u[0] < -0.3 else
                        "center", va="bottom" if u[1] > 0.3 else "top" if u[1] < -0.3 else "center")
        ax.plot(*K[i], "o", color=colour, ms=12)
        ax.annotate(f"k {word}", tuple(K[i]), xytext=(6, -6), textcoords="offset points", color=colour,
                    fontsize=size, ha="left", va="top", fontweight="bold")
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    ax.set_aspect("equal")
    ax.set_xlabel("axis 1")
    ax.set_ylabel("axis 2")
    ax.set_title("keys (points) and queries (arrows)")
    return legible(fig, shown_px=DECK_PX / 2)


def _vector(v: ArrayLike, decimals: bool = False) -> str:
    """``[1, 0, 2]`` for whole numbers (unless ``decimals``), ``[0.22, 0.61]`` otherwise."""
    a = np.asarray(v, dtype=float)
    if not decimals and np.allclose(a, np.round(a)):
        return "[" + ", ".join(f"{x:.0f}" for x in a) + "]"
    return "[" + ", ".join(f"{x:.2f}" for x in a) + "]"


def query_steps(words: Sequence[str], query: str, q: ArrayLike, K: ArrayLike, V: ArrayLike,
                scores: ArrayLike, weights: ArrayLike, z: ArrayLike,
                value_axes: Sequence[str] | None = None) -> Figure:
    """One query step by step: its vector q, each key k_j, the score q_i . k_j, the weight alpha_ij (shaded by
    its size) and the weighted value alpha_ij v_j, summed into z.

    Inputs: words (T,); q (d_k,); K (T, d_k); V (T, d_v); scores and weights (T,); z (d_v,); value_axes: the
    d_v names of the value axes, written under the two value columns when given.
    """
    K, V = np.asarray(K, dtype=float), np.asarray(V, dtype=float)
    scores, weights = np.asarray(scores, dtype=float), np.asarray(weights, dtype=float)
    T = len(words)
    if K.shape[0] != T or V.shape[0] != T or scores.shape != (T,) or weights.shape != (T,):
        raise ValueError(f"K {K.shape}, V {V.shape}, scores {scores.shape} and weights {weights.shape} must "
                         f"each have one row per word ({T} words)")
    fig, ax = plt.subplots(figsize=(12, 4.6))
    ax.set(xlim=(-0.08, 1.15), ylim=(-0.02, 1.08))
    ax.axis("off")
    box = {"boxstyle": "round", "fc": "white", "ec": "0.6"}
    arrow = {"arrowstyle": "->", "color": "0.5", "shrinkA": 0, "shrinkB": 0}
    ax.text(0.0, 0.45, f"$q_{{{query}}}$\n{_vector(q)}\n$d_k = {len(np.atleast_1d(q))}$", ha="center",
            va="center", bbox=box)
    columns = ((0.22, "key $k_j$"), (0.4, r"$\omega_{ij}$"), (0.52, r"$\alpha_{ij}$"),
               (0.66, "value $v_j$"),
               (0.84, r"$\alpha_{ij} \times v_j$"))
    for x, head in columns:
        ax.text(x, 1.03, head, ha="center")
    if value_axes is not None:
        ax.text(0.75, 0.955, "both as (" + ", ".join(value_axes) + ")", ha="center", color="0.35")
    for j, word in enumerate(words):
        y = 0.85 - 0.8 * j / max(T - 1, 1)
        ax.annotate("", (0.1, y), (0.06, 0.45), arrowprops=arrow)
        ax.text(0.22, y, f"{word}: {_vector(K[j])}", ha="center", va="center", bbox=box)
        ax.text(0.4, y, f"{scores[j]:g}", ha="center", va="center")
        shade = plt.cm.Blues(float(weights[j]))
        ax.text(0.52, y, f"{weights[j]:.2f}", ha="center", va="center",
                color="white" if weights[j] > 0.5 else "black",
                bbox={"boxstyle": "round", "fc": shade, "ec": "0.6"})
        ax.text(0.66, y, _vector(V[j]), ha="center", va="center")
        ax.text(0.84, y, _vector(weights[j] * V[j], decimals=True), ha="center", va="center")
        ax.annotate("", (0.99, 0.45), (0.925, y), arrowprops=arrow)
    ax.text(1.08, 0.45, f"$z_{{{query}}}$\n{_vector(z)}\n$d_v = {len(np.atleast_1d(z))}$", ha="center",
            va="center", bbox=box)
    return legible(fig)
