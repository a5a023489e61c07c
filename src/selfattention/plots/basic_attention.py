"""Figures of lessons 02 and 03 (basic self-attention, no parameters).

Every figure is drawn for a slide: its text is ``FONT`` points, legible at the deck's 1280 px width for
figures up to about 13 inches wide and 6.5 inches high (at least 20 px on screen). Maps of attention weights
label their axes by what the lessons have defined by then: the word attending (row i) and the word attended
to (column j); queries and keys come in lesson 04.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

__all__ = [
    "FONT",
    "score_scale_sweep",
    "ROW_LABEL",
    "COLUMN_LABEL",
    "plane",
    "score_weight_bars",
    "update_score_weight_bars",
    "weight_map",
    "weight_maps",
    "toy_and_real_maps",
    "matrix_flow",
    "one_query_pipeline",
    "softmax_of_two",
    "lean_table",
]

#: Font size (points) of every text in these figures.
FONT = 16
ROW_LABEL = "word attending (row i)"
COLUMN_LABEL = "word attended to (column j)"
#: The colours :func:`plane` gives its vectors in order when none are named.
PALETTE = ("tab:orange", "tab:green", "gray", "tab:red", "tab:blue", "tab:purple", "tab:brown", "tab:cyan")


def _array(name: str, x: ArrayLike, ndim: int) -> np.ndarray:
    """``x`` as a float array of ``ndim`` dimensions, or a ValueError naming ``name``."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    arr = np.asarray(x, dtype=float)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    return arr


def _hull(points: np.ndarray) -> np.ndarray:
    """The corners of the convex hull of 2-D ``points`` (n, 2), in order around it (monotone chain)."""
    pts = sorted(map(tuple, points))

    def half(seq: list[tuple[float, float]]) -> list[tuple[float, float]]:
        out: list[tuple[float, float]] = []
        for p in seq:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (p[1] - out[-2][1])
                                     - (out[-1][1] - out[-2][1]) * (p[0] - out[-2][0])) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1])


def plane(
    vectors: Mapping[str, ArrayLike],
    *,
    dims: tuple[int, int] = (0, 1),
    names: tuple[str, str] = ("finance", "nature"),
    colors: Mapping[str, str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    shade: Sequence[Sequence[str]] = (),
    shade_colors: Sequence[str] = (),
    label_at: Mapping[str, tuple[float, float]] | None = None,
) -> Axes:
    """Draw named vectors as arrows from the origin in the plane of two of their coordinates.

    Inputs:
        vectors: name -> vector of shape (d,), d > max(dims); each is drawn by its coordinates ``dims``.
        names: the two axes' names. colors: name -> colour (default: one colour of ``PALETTE`` per vector,
        in order). shade: groups of names of ``vectors``; the region of all weighted averages of each
        group's points (their convex hull, a triangle for three points) is shaded in light grey, or lightly
        in ``shade_colors[k]`` when given (e.g. the colour of the average drawn inside it).
    Returns:
        the Axes drawn on.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 5.2))
    points = []
    for k, (name, v) in enumerate(vectors.items()):
        v = _array(f"vectors[{name!r}]", v, 1)
        if v.shape[0] <= max(dims):
            raise ValueError(f"vectors[{name!r}] has shape {v.shape}; dims {dims} need more coordinates")
        p = v[list(dims)]
        color = (colors or {}).get(name, PALETTE[k % len(PALETTE)])
        ax.annotate("", xy=p, xytext=(0, 0), arrowprops={"arrowstyle": "->", "color": color, "lw": 2.5})
        if label_at and name in label_at:
            ax.annotate(name, xy=p, xytext=label_at[name], color=color, fontsize=FONT, va="center",
                        arrowprops={"arrowstyle": "-", "color": color, "lw": 0.8})
        else:
            ax.text(p[0], p[1], f" {name}", color=color, fontsize=FONT, va="bottom")
        points.append(p)
    at = dict(zip(vectors, points, strict=True))
    for k, group in enumerate(shade):
        unknown = [name for name in group if name not in at]
        if unknown or len(group) < 3:
            raise ValueError(f"shade[{k}] is {list(group)}; expected 3 or more names of `vectors` "
                             f"(unknown: {unknown})")
        tint = {"color": shade_colors[k], "alpha": 0.15} if k < len(shade_colors) else {"color": "0.85"}
        ax.fill(*_hull(np.array([at[name] for name in group])).T, zorder=0, **tint)
    top = 1.2 * max(1e-9, float(np.abs(np.array(points)).max()))
    ax.set_xlim(min(0.0, -0.05 * top), top)
    ax.set_ylim(min(0.0, -0.05 * top), top)
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.set_xlabel(names[0], fontsize=FONT)
    ax.set_ylabel(names[1], fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    if title:
        ax.set_title(title, fontsize=FONT)
    return ax


#: One colour per toy word of lesson 02, the same in every figure (and for the two contextual banks).
WORD_COLORS: dict[str, str] = {
    "money": "tab:orange", "grows": "tab:green", "bank": "tab:gray", "river": "tab:blue", "flows": "tab:cyan",
    "a": "tab:olive", "near": "tab:pink", "the": "tab:red",
    "bank′ (money sentence)": "tab:purple", "bank′ (river sentence)": "tab:brown",
}


def bank_plane(toy: Mapping[str, ArrayLike], bank_money: ArrayLike, bank_river: ArrayLike) -> Axes:
    """Lesson 02's picture of two contextual banks from typed-in weights: money, grows, bank, river and flows
    (``toy``: word -> vector of shape (d,), d >= 2) and the two bank′ (each of shape (d,)) in the
    finance/nature plane (the title says food and tech are not shown: grows has food 0.1), each bank′ inside
    the shaded triangle of its sentence, tinted in its colour."""
    vectors = {w: toy[w] for w in ["money", "grows", "bank", "river", "flows"]}
    money, river = "bank′ (money sentence)", "bank′ (river sentence)"
    vectors |= {money: bank_money, river: bank_river}
    # Both labels sit outside the two triangles, clear of bank's label, each joined to its tip.
    return plane(vectors, colors=WORD_COLORS, shade=[["money", "bank", "grows"], ["river", "bank", "flows"]],
                 shade_colors=[WORD_COLORS[money], WORD_COLORS[river]],
                 label_at={money: (0.92, 0.55), river: (0.62, 0.98)},
                 title="bank′ from typed-in weights (food and tech not shown)")


def score_weight_bars(words: Sequence[str], scores: ArrayLike, weights: ArrayLike, *,
                      max_words: int | None = None) -> tuple[Figure, BarContainer, BarContainer]:
    """One word's row, as two bar charts side by side: its scores omega_ij and its weights alpha_ij.

    Inputs:
        words: the T words; scores, weights: shape (T,).
        max_words: room for this many bars (default T), so a widget can redraw longer sentences in place.
    Returns:
        the figure and the two BarContainers (scores, weights), for :func:`update_score_weight_bars`.
    """
    scores, weights = _array("scores", scores, 1), _array("weights", weights, 1)
    if not len(words) == scores.shape[0] == weights.shape[0]:
        raise ValueError(f"words, scores and weights have lengths {len(words)}, {scores.shape[0]} and "
                         f"{weights.shape[0]}; expected one score and one weight per word")
    n = max(len(words), max_words or 0)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.27, top=0.84, wspace=0.2)
    pad = np.zeros(n)
    score_bars = left.bar(range(n), pad, color="tab:gray")
    weight_bars = right.bar(range(n), pad, color="tab:blue")
    left.set_title(r"scores  $\omega_{ij} = x_i \cdot x_j$", fontsize=FONT)
    right.set_title(r"weights  $\alpha_{ij} = \mathrm{softmax}_j(\omega_{ij})$", fontsize=FONT)
    right.set_ylim(0, 1)
    for ax in (left, right):
        ax.axhline(0, color="black", lw=0.8)
        ax.tick_params(labelsize=FONT)
    update_score_weight_bars(fig, score_bars, weight_bars, words, scores, weights)
    return fig, score_bars, weight_bars


def update_score_weight_bars(fig: Figure, score_bars: BarContainer, weight_bars: BarContainer,
                             words: Sequence[str], scores: ArrayLike, weights: ArrayLike, *,
                             score_range: tuple[float, float] | None = None) -> None:
    """Redraw the bars of :func:`score_weight_bars` in place for a row of T words (T <= number of bars),
    each bar labelled with its value; the bars past T are emptied. ``score_range`` (low, high), when given,
    fixes the score panel's span (so bars can be compared as a slider moves); else the scores set it."""
    scores, weights = _array("scores", scores, 1), _array("weights", weights, 1)
    n = len(score_bars)
    if not len(words) == scores.shape[0] == weights.shape[0] <= n:
        raise ValueError(f"got {len(words)} words, {scores.shape[0]} scores and {weights.shape[0]} weights; "
                         f"expected the same number, at most {n} (the bars drawn)")
    left, right = fig.axes[:2]
    for k in range(n):
        s, w = (float(scores[k]), float(weights[k])) if k < len(words) else (0.0, 0.0)
        score_bars[k].set_height(s)
        weight_bars[k].set_height(w)
    labels = list(words) + [""] * (n - len(words))
    for ax in (left, right):
        ax.set_xticks(range(n), labels, rotation=40, ha="right", fontsize=FONT)
        ax.set_xlim(-0.6, len(words) - 0.4)
    low, high = min(0.0, float(scores.min())), max(0.0, float(scores.max()))
    if score_range is not None:
        low, high = min(low, float(score_range[0]), 0.0), max(high, float(score_range[1]), 0.0)
    span = max(high - low, 1e-9)
    left.set_ylim(low - 0.15 * span * (low < 0), high + 0.15 * span)
    for text in list(left.texts) + list(right.texts):
        text.remove()
    for k, s in enumerate(scores):   # a negative score's label below its bar
        left.text(k, float(s) + (0.02 if s >= 0 else -0.02) * span, f"{float(s):.2f}", ha="center",
                  va="bottom" if s >= 0 else "top", fontsize=FONT)
    for k, w in enumerate(weights):
        right.text(k, float(w) + 0.02, f"{float(w):.2f}", ha="center", va="bottom", fontsize=FONT)


def weight_map(weights: ArrayLike, words: Sequence[str], *, ax: Axes | None = None, title: str | None = None,
               vmax: float = 1.0, annotate: bool = True, labels: bool | tuple[str, str] = True) -> Axes:
    """Draw a (T, T) matrix of attention weights: row i is the word attending, column j the word attended to.

    Inputs:
        weights: (T, T); words: T labels. vmax: the weight drawn darkest (1.0: maps compare on one scale).
        annotate: write each weight in its square. labels: name the two axes (True: ROW_LABEL and
            COLUMN_LABEL; a pair: these names; False: none).
    Returns:
        the Axes drawn on.
    """
    w = _array("weights", weights, 2)
    if w.shape != (len(words), len(words)):
        raise ValueError(f"weights has shape {w.shape}; expected ({len(words)}, {len(words)}), one row and "
                         "one column per word")
    if ax is None:
        _, ax = plt.subplots(figsize=(1.8 + 0.9 * len(words), 1.6 + 0.8 * len(words)))
    ax.imshow(w, cmap="Blues", vmin=0.0, vmax=vmax)
    ax.set_yticks(range(len(words)), words, fontsize=FONT)
    ax.set_xticks(range(len(words)), words, rotation=40, ha="right", fontsize=FONT)
    if labels:
        rows, columns = (ROW_LABEL, COLUMN_LABEL) if labels is True else labels
        ax.set_ylabel(rows, fontsize=FONT)
        ax.set_xlabel(columns, fontsize=FONT)
    if annotate:
        for (i, j), v in np.ndenumerate(w):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=FONT,
                    color="white" if v > 0.6 * vmax else "black")
    if title:
        ax.set_title(title, fontsize=FONT)
    return ax


def weight_maps(maps: Sequence[ArrayLike], words: Sequence[Sequence[str]], titles: Sequence[str], *,
                vmax: float = 1.0, width: float = 12.0) -> tuple[Figure, list[Axes]]:
    """Draw several (T, T) weight maps side by side on ONE colour scale (0 to ``vmax``), with one colour bar.

    Inputs:
        maps: n arrays (T_k, T_k); words: n word lists; titles: n titles. width: figure width in inches.
    Returns:
        the figure and its n Axes. Only the first names its rows, all name their columns' words.
    """
    if not len(maps) == len(words) == len(titles) >= 1:
        raise ValueError(f"maps, words and titles have {len(maps)}, {len(words)} and {len(titles)} entries; "
                         "expected the same number, at least 1")
    fig, axes = plt.subplots(1, len(maps), figsize=(width, 4.8), layout="constrained")
    axes = list(np.atleast_1d(axes))
    for k, (ax, m, ws, title) in enumerate(zip(axes, maps, words, titles, strict=True)):
        weight_map(m, ws, ax=ax, title=title, vmax=vmax, labels=False)
        if k == 0:
            ax.set_ylabel("row i: attending", fontsize=FONT)
    fig.supxlabel("column j: the word attended to", fontsize=FONT)
    bar = fig.colorbar(axes[-1].images[0], ax=axes, shrink=0.8)
    bar.ax.tick_params(labelsize=FONT)
    bar.set_label(r"weight $\alpha_{ij}$", fontsize=FONT)
    return fig, axes


def toy_and_real_maps(toy_out: Mapping[str, tuple], real_out: Mapping[str, tuple]
                      ) -> tuple[Figure, list[Axes]]:
    """Lesson 03's heatmaps: each sentence's weights with toy vectors, then with real ones, on one scale.

    Inputs:
        toy_out, real_out: sentence -> (Z, A), the same sentences in the same order; A is (T, T).
    Returns:
        :func:`weight_maps`'s figure and Axes, titled "toy:" or "real:" and the sentence.
    """
    if list(toy_out) != list(real_out):
        raise ValueError(f"toy_out has sentences {list(toy_out)} but real_out has {list(real_out)}; "
                         "expected the same sentences in the same order")
    sentences = list(toy_out)
    maps = [out[s][1] for out in (toy_out, real_out) for s in sentences]
    titles = [f"{kind}:\n{s}" for kind in ("toy", "real") for s in sentences]
    return weight_maps(maps, [s.split() for s in sentences] * 2, titles)


def matrix_flow(matrices: Sequence[tuple[str, ArrayLike]], words: Sequence[str], *,
                columns: Sequence[Sequence[str] | None] | None = None,
                limits: Sequence[tuple[float, float] | None] | None = None) -> tuple[Figure, list[Axes]]:
    """The matrix form as a row of pictures, each matrix drawn to scale (one square per entry) with an arrow
    from the one before; each has its own colour scale, shown by a labelled colour bar below it, and its
    entries written in its squares.

    Inputs:
        matrices: (title, array of shape (T, n)) pairs, e.g. X (T, d), Omega (T, T), A (T, T), Z (T, d);
        words: the T row labels (written left of the first matrix);
        columns: one list of n column labels per matrix (e.g. the feature names for X and Z, the words for
            Omega and A), or None for a matrix without them;
        limits: one (low, high) colour range per matrix (e.g. (0, 1) for weights, so that flat weights look
            pale), or None for the matrix's own min and max.
    Returns:
        the figure and its Axes.
    """
    arrays = [(title, _array(f"matrices[{k}]", m, 2)) for k, (title, m) in enumerate(matrices)]
    if not arrays or any(m.shape[0] != len(words) for _, m in arrays):
        raise ValueError(f"every matrix needs {len(words)} rows (one per word); got shapes "
                         f"{[m.shape for _, m in arrays]}")
    labels = list(columns) if columns is not None else [None] * len(arrays)
    if len(labels) != len(arrays) or any(c is not None and len(c) != m.shape[1]
                                         for c, (_, m) in zip(labels, arrays, strict=False)):
        raise ValueError(f"columns needs one label per column of each matrix; got {labels} for shapes "
                         f"{[m.shape for _, m in arrays]}")
    ranges = list(limits) if limits is not None else [None] * len(arrays)
    if len(ranges) != len(arrays):
        raise ValueError(f"limits needs one (low, high) or None per matrix; got {len(ranges)} for "
                         f"{len(arrays)} matrices")
    fig, axes = plt.subplots(1, len(arrays), figsize=(12.5, 5.4),
                             gridspec_kw={"width_ratios": [m.shape[1] for _, m in arrays], "wspace": 0.5})
    fig.subplots_adjust(left=0.09, right=0.99, bottom=0.1, top=0.76)
    for k, (ax, (title, m), cols, lim) in enumerate(zip(axes, arrays, labels, ranges, strict=True)):
        low, high = (float(m.min()), float(m.max())) if lim is None else (float(lim[0]), float(lim[1]))
        image = ax.imshow(m, cmap="Blues", vmin=low, vmax=high)
        for (r, c), value in np.ndenumerate(m):
            dark = (value - low) > 0.6 * (high - low)
            text = f"{value:.2f}"
            ax.text(c, r, text[1:] if text.startswith("0.") else text, ha="center", va="center",
                    fontsize=FONT, color="white" if dark else "black")
        ax.set_title(f"{title}\n{m.shape[0]} x {m.shape[1]}", fontsize=FONT, pad=12)
        ax.xaxis.tick_top()
        ax.set_xticks(range(m.shape[1]) if cols else [], list(cols) if cols else [], fontsize=FONT,
                      rotation=90)
        ax.set_yticks(range(len(words)), words if k == 0 else [], fontsize=FONT)
        bar = fig.colorbar(image, ax=ax, orientation="horizontal", pad=0.04, fraction=0.08, aspect=10)
        bar.set_ticks([low, high], labels=[f"{low:.2f}", f"{high:.2f}"])
        bar.ax.tick_params(labelsize=FONT)
        for label, side in zip(bar.ax.get_xticklabels(), ("left", "right"), strict=True):
            label.set_horizontalalignment(side)   # inside the bar's width
        if k:
            ax.annotate("", xy=(-0.05, 0.5), xytext=(-0.4, 0.5), xycoords="axes fraction",
                        arrowprops={"arrowstyle": "->", "lw": 2.5}, annotation_clip=False)
    return fig, list(axes)


def one_query_pipeline(words: Sequence[str], X: ArrayLike, i: int, *,
                       coordinates: Sequence[str] = ("finance", "nature", "food", "tech"),
                       colors: Mapping[str, str] | None = None) -> tuple[Figure, list[Axes]]:
    """One word's three steps as three panels: scores omega_ij = x_i . x_j, weights alpha_ij = softmax_j, and
    z_i = sum_j alpha_ij x_j drawn coordinate by coordinate as stacked contributions alpha_ij x_j.

    Inputs:
        words: the T words; X: their vectors, shape (T, d) with d = len(coordinates); i: the word's index.
        colors: word -> colour (e.g. ``WORD_COLORS``); words it lacks, and all words when None, get the
        tab10 colours in order.
    Returns:
        the figure and its three Axes (scores, weights, weighted sum). Negative contributions are not
        stacked: use vectors with non-negative entries (the lessons' toy vectors).
    """
    X = _array("X", X, 2)
    if X.shape != (len(words), len(coordinates)):
        raise ValueError(f"X has shape {X.shape}; expected ({len(words)}, {len(coordinates)}): "
                         "one row per word, one column per coordinate")
    if not 0 <= i < len(words):
        raise ValueError(f"i is {i}; expected the index of one of the {len(words)} words "
                         f"(0 to {len(words) - 1})")
    if (X < 0).any():
        raise ValueError("X has negative entries; the stacked contributions need non-negative vectors")
    scores = X @ X[i]
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    parts = weights[:, None] * X                      # (T, d): alpha_ij x_j
    fig, axes = plt.subplots(1, 3, figsize=(13, 5.2), gridspec_kw={"width_ratios": [1, 1, 1.2]})
    fig.subplots_adjust(left=0.07, right=0.99, bottom=0.24, top=0.82, wspace=0.36)
    default = plt.get_cmap("tab10")(np.arange(len(words)) % 10)
    colors = [(colors or {}).get(w, default[k]) for k, w in enumerate(words)]
    axes[0].bar(range(len(words)), scores, color=colors)
    n = i + 1
    axes[0].set_title(f"1. scores\n$\\omega_{{{n}j}} = x_{{{n}}} \\cdot x_j$", fontsize=FONT)
    axes[0].set_ylabel("score", fontsize=FONT)
    axes[1].bar(range(len(words)), weights, color=colors)
    axes[1].set_title(f"2. weights\n$\\alpha_{{{n}j}} = \\mathrm{{softmax}}_j(\\omega_{{{n}j}})$",
                      fontsize=FONT)
    axes[1].set_ylabel("weight", fontsize=FONT)
    axes[1].set_ylim(0, 1)
    for ax in axes[:2]:
        ax.set_xticks(range(len(words)), words, fontsize=FONT, rotation=30)
        ax.axhline(0, color="black", lw=0.8)
    bottom = np.zeros(len(coordinates))
    for j, word in enumerate(words):
        axes[2].bar(range(len(coordinates)), parts[j], bottom=bottom, color=colors[j], label=word)
        bottom += parts[j]
    axes[2].set_xticks(range(len(coordinates)), coordinates, fontsize=FONT, rotation=30)
    axes[2].set_title(f"3. $z_{{{n}}} = \\sum_j \\alpha_{{{n}j}}\\, x_j$", fontsize=FONT)
    axes[2].set_ylabel("coordinate of z", fontsize=FONT)
    axes[2].legend(fontsize=FONT, loc="upper right", title="share of", title_fontsize=FONT)
    for ax in axes:
        ax.tick_params(labelsize=FONT)
    return fig, list(axes)


def softmax_of_two(gaps: ArrayLike | None = None, shares: ArrayLike | None = None, *,
                   band: float | None = None) -> tuple[Figure, Axes]:
    """The weight of the second of two scores [0, s] against the gap s, next to the hard argmax (0 below
    s = 0, 1 above, an open dot at 1/2 for the tie at s = 0): softmax as a smooth argmax.

    Inputs:
        gaps: the gaps s, shape (n,), increasing (default: -6 to 6 in steps of 0.1); shares: the second
        weight softmax([0, s])[1] at each gap, shape (n,) (default: computed from ``gaps``). band: if given,
        the gaps |s| <= band are shaded, labelled with the largest weight ratio e^band they allow (in the
        lesson: the max - min gap of one word's scores, so no weight of that row is more than e^band times
        another).
    Returns:
        the figure and its Axes.
    """
    gaps = _array("gaps", np.linspace(-6, 6, 121) if gaps is None else gaps, 1)
    if shares is None:
        shares = 1 / (1 + np.exp(-gaps))   # softmax([0, s])[1] = e^s / (1 + e^s)
    shares = _array("shares", shares, 1)
    if gaps.shape != shares.shape:
        raise ValueError(f"gaps has shape {gaps.shape} and shares {shares.shape}; expected the same shape")
    fig, ax = plt.subplots(figsize=(13, 6))
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.32, top=0.95)
    step = np.where(gaps == 0, np.nan, (gaps > 0).astype(float))   # broken at the tie, marked by the dot
    ax.plot(gaps, step, color="gray", lw=2.5, ls="--", label="argmax: all or nothing")
    ax.plot(gaps, shares, color="tab:blue", lw=3, label="softmax: weight of the second score")
    ax.scatter([0.0], [0.5], s=120, facecolors="white", edgecolors="gray", linewidths=2.5, zorder=3,
               label="argmax at a tie: 1/2 each (a convention)")
    if band is not None:
        if not band > 0:
            raise ValueError(f"band is {band!r}; expected a positive gap or None")
        ax.axvspan(-band, band, color="tab:orange", alpha=0.25,
                   label=f"gaps within $\\pm${band:.2f}: weights at most $e^{{{band:.2f}}}$ = "
                         f"{np.exp(band):.2f} times apart")
    ax.set_xlabel("gap s between the two scores [0, s]", fontsize=FONT)
    ax.set_ylabel("weight of the second", fontsize=FONT)
    ax.set_ylim(-0.05, 1.05)
    ax.grid(alpha=0.3)
    ax.tick_params(labelsize=FONT)
    handles, labels = ax.get_legend_handles_labels()
    order = [0, 3, 1, 2] if band is not None else [0, 1, 2]   # the long band label in the first column
    ax.legend([handles[k] for k in order], [labels[k] for k in order], fontsize=FONT, loc="lower center",
              bbox_to_anchor=(0.5, 0.01), bbox_transform=fig.transFigure, ncol=2, columnspacing=0.8,
              handlelength=1.5)   # under the axes, so it hides no part of the curve
    return fig, ax


def matrix_form_flow(X: ArrayLike, Omega: ArrayLike, A: ArrayLike, Z: ArrayLike, words: Sequence[str], *,
                     features: Sequence[str] = ("finance", "nature", "food", "tech"),
                     ) -> tuple[Figure, list[Axes]]:
    """Lesson 03's picture of Z = softmax(X X^T) X: X (T, d), Omega (T, T), A (T, T) and Z (T, d) side by
    side, entries written. X and Z share one colour scale from 0 to 1; Omega and A each have their own (its
    min to max, said in the title), so that flat weights (at most about 0.3 on the toy vectors) still show
    their pattern. ``features`` labels the d columns of X and Z."""
    return matrix_flow([("$X$", X), (r"$\Omega = XX^\top$" + "\n(row $i$, column $j$; own scale)", Omega),
                        (r"$A = \mathrm{softmax}_j(\Omega)$" + "\n(row $i$, column $j$; own scale)", A),
                        ("$Z = AX$", Z)], words,
                       columns=[list(features), list(words), list(words), list(features)],
                       limits=[(0, 1), None, None, (0, 1)])


def lean_table(rows: Mapping[str, Sequence[float]], reference: float) -> None:
    """Print lesson 03's table of leans: per condition (name -> its values), how many values, their mean,
    their range and how many lie above / below ``reference`` (the static bank's lean); one value gets its
    mean only."""
    print(f"{'condition':34s} {'n':>4s}  mean lean  min..max        above / below static")
    for condition, values in rows.items():
        v = np.asarray(values, dtype=float)
        span = f"{v.min():+.3f}..{v.max():+.3f}" if len(v) > 1 else ""
        side = f"{np.sum(v > reference)} / {np.sum(v < reference)}" if len(v) > 1 else ""
        print(f"{condition:34s} {len(v):4d}  {v.mean():+9.3f}  {span:15s} {side}")


def score_scale_sweep(words: Sequence[str], X: ArrayLike, i: int, *, scales: ArrayLike | None = None,
                      colors: Mapping[str, str] | None = None, title: str | None = None
                      ) -> tuple[Figure, np.ndarray]:
    """What lesson 02's explorer slider does, drawn once: every score of word ``i`` multiplied by beta
    before the softmax. Left, the weights alpha_ij(beta) = softmax_j(beta omega_ij), one line per word; right,
    the cosine of z_i(beta) = sum_j alpha_ij(beta) x_j with the plain average of the rows (beta = 0) and with
    the word of the largest score (beta -> infinity). A vertical line marks beta = 1.

    Inputs:
        words: the T words; X: their vectors, shape (T, d_model); i: the focus word (0-based);
        scales: the values of beta (default 0 to 4); colors: word -> colour (e.g. ``WORD_COLORS``);
        title: a title over both panels (e.g. which table the vectors come from).
    Returns:
        the figure and its two axes.
    """
    X = _array("X", X, 2)
    if len(words) != X.shape[0] or not 0 <= i < X.shape[0]:
        raise ValueError(f"words has {len(words)} words, X has shape {X.shape} and i = {i}; expected one row "
                         "of X per word and 0 <= i < T")
    cs = np.linspace(0.0, 4.0, 81) if scales is None else _array("scales", scales, 1)
    scores = X @ X[i]                                            # (T,)
    shifted = cs[:, None] * scores[None, :]                      # (C, T)
    A = np.exp(shifted - shifted.max(axis=1, keepdims=True))
    A = A / A.sum(axis=1, keepdims=True)                         # (C, T): one row of weights per beta
    Z = A @ X                                                    # (C, d_model)
    top = int(np.argmax(scores))

    def cos(U: np.ndarray, v: np.ndarray) -> np.ndarray:
        return (U @ v) / (np.linalg.norm(U, axis=1) * np.linalg.norm(v))

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.6))
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.17, top=0.86, wspace=0.25)
    left, right = axes
    styles = ["-", "--", "-.", ":"]
    for j, w in enumerate(words):   # equal weights overlap: each word its own dash, thinner ones drawn on top
        left.plot(cs, A[:, j], lw=3 if j == top else max(3.6 - 0.5 * j, 1.5), ls=styles[j % len(styles)],
                  zorder=3 + j, color=(colors or {}).get(w), label=f"{j + 1} {w}")
    left.set_xlabel(r"$\beta$ (every score times $\beta$)", fontsize=FONT)
    left.set_ylabel(rf"$\alpha_{{{i + 1}j}}$", fontsize=FONT)
    left.set_title(f"weights of word {i + 1}, {words[i]}", fontsize=FONT)
    left.set_ylim(0, 1)
    left.legend(fontsize=FONT, ncol=2, loc="center right", handlelength=1.8, columnspacing=0.8)
    if title:
        fig.suptitle(title, fontsize=FONT)
    right.plot(cs, cos(Z, X.mean(axis=0)), lw=2, color="black", label="with the plain average")
    right.plot(cs, cos(Z, X[top]), lw=2, color=(colors or {}).get(words[top], "tab:orange"),
               label=f"with {words[top]} (top score)")
    right.set_xlabel(r"$\beta$", fontsize=FONT)
    right.set_title(rf"cosine of $z_{{{i + 1}}}(\beta)$", fontsize=FONT)
    right.set_ylim(min(0.0, float(cos(Z, X.mean(axis=0)).min()), float(cos(Z, X[top]).min())) - 0.02, 1.02)
    right.legend(fontsize=FONT, loc="lower right")
    for ax in axes:
        ax.axvline(1.0, color="gray", ls="--", lw=1)
        ax.tick_params(labelsize=FONT)
    return fig, axes
