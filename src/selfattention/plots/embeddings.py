"""Figures of lesson 01 (static embeddings): the sign of a dot product, lengths against angles, a table
lookup, cosines read against random pairs, the fruit/tech plane, and one word's output vectors compared
across sentences.

Every figure is 12 inches wide with text of at least 15 pt (about 21 px when a slide draws it 1232 px wide),
and at most 6 inches high.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import patheffects
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike, NDArray

__all__ = ["WIDTH", "FONT", "PERCENTILES", "length_angle_figure", "lookup_diagram",
           "draw_chance", "chance_figure", "groups_figure", "draw_plane", "plane_figure",
           "cluster_plane_figure", "cosine_map", "margin_dots_figure"]

WIDTH = 12.0  # inches: a figure drawn across a slide
FONT = 15  # points
PERCENTILES = (50, 95, 99)  # the lines drawn on a distribution of random-pair cosines


def _array(name: str, x: ArrayLike, ndim: int) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim != ndim:
        raise ValueError(f"{name} has shape {a.shape}; expected {ndim} dimension(s)")
    return a


def length_angle_figure(vectors: Mapping[str, ArrayLike], ref: str) -> Figure:
    """2-D arrows from the origin, each labelled with its length, its dot product with ``vectors[ref]`` and
    its angle to it: the picture behind "a larger dot product need not mean a larger cosine".

    Inputs:
        vectors: ``{name: v of shape (2,)}``, one of them named ``ref`` (drawn in black).
    Returns:
        the figure (12 x 5.6 inches).
    """
    if ref not in vectors:
        raise ValueError(f"ref is {ref!r}; expected one of {list(vectors)}")
    arrays = {name: _array(name, v, 1) for name, v in vectors.items()}
    bad = {name: a.shape for name, a in arrays.items() if a.shape != (2,)}
    if bad:
        raise ValueError(f"vectors has shapes {bad}; expected (2,) each")
    r = arrays[ref]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, ax = plt.subplots(figsize=(WIDTH, 5.6))
    for k, (name, v) in enumerate(arrays.items()):
        colour = "black" if name == ref else colours[k % len(colours)]
        ax.annotate("", xy=v, xytext=(0, 0), zorder=10 - np.linalg.norm(v),     # short arrows on top
                    arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 3, "mutation_scale": 22,
                                # a white outline keeps a short arrow visible over a longer one along it
                                "path_effects": [patheffects.withStroke(linewidth=7, foreground="white")]})
        label = f" {name}: length {np.linalg.norm(v):.2f}"
        if name != ref:
            angle = np.degrees(np.arccos(np.clip(v @ r / (np.linalg.norm(v) * np.linalg.norm(r)), -1, 1)))
            label += f", {name} . {ref} = {v @ r:.0f}, angle {angle:.0f}° to {ref}"
        ax.text(v[0], v[1], label, color=colour, fontsize=FONT, va="center")
    top = 1.1 * max(np.abs(a).max() for a in arrays.values())
    ax.set_xlim(-0.3, max(a[0] for a in arrays.values()) + 0.9 * top)   # room for the labels, no more
    ax.set_ylim(-0.3, top)
    ax.set_aspect("equal")
    ax.tick_params(labelsize=FONT)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def lookup_diagram(words: Sequence[str], ids: Sequence[int], table_shape: tuple[int, int],
                   cosine: float) -> Figure:
    """The path from two words to their cosine: words -> row numbers -> rows of the table -> cosine.

    Inputs:
        words: the two words; ids: their row numbers; table_shape: (V, d); cosine: the cosine of the two rows.
    Returns:
        the figure (12 x 2.4 inches).
    """
    if len(words) != 2 or len(ids) != 2 or len(table_shape) != 2:
        raise ValueError(f"words {list(words)}, ids {list(ids)}, table_shape {table_shape}; expected two "
                         "words, two ids and (V, d)")
    steps = [f'"{words[0]}", "{words[1]}"\nwords', f"{ids[0]}, {ids[1]}\nrow numbers",
             f"2 rows of E {tuple(table_shape)},\neach of shape ({table_shape[1]},)", f"cosine\n{cosine:.3f}"]
    arrows = ["look up", "E[i]", "u.v / (|u| |v|)"]
    centres, halves = [1.2, 4.3, 7.9, 10.9], [1.2, 0.95, 1.75, 0.7]
    fig, ax = plt.subplots(figsize=(WIDTH, 2.4))
    for x, text in zip(centres, steps, strict=True):
        ax.text(x, 0, text, ha="center", va="center", fontsize=FONT,
                bbox={"boxstyle": "round", "facecolor": "aliceblue", "edgecolor": "tab:blue"})
    for k, label in enumerate(arrows):
        start, end = centres[k] + halves[k], centres[k + 1] - halves[k + 1]
        ax.annotate("", xy=(end, 0), xytext=(start, 0), arrowprops={"arrowstyle": "-|>", "lw": 2})
        ax.text((start + end) / 2, 0.45, label, ha="center", fontsize=FONT)
    ax.set_xlim(0, 12)
    ax.set_ylim(-0.55, 0.75)
    ax.axis("off")
    fig.tight_layout(pad=0.1)
    return fig


def draw_chance(ax: Axes, chance: ArrayLike, *, bins: int = 60) -> dict[int, float]:
    """Draw the histogram of random-pair cosines ``chance`` (shape (n,)) on ``ax``, with dashed lines at the
    median, 95th and 99th percentiles. Returns ``{percentile: value}``."""
    chance = _array("chance", chance, 1)
    if chance.size < 100:
        raise ValueError(f"chance has {chance.size} cosines; expected at least 100 random pairs")
    ax.hist(chance, bins=bins, color="lightgray", edgecolor="gray")
    marks = {p: float(np.percentile(chance, p)) for p in PERCENTILES}
    # median and 95th labelled left of their lines, at two heights, the 99th right: no label crosses a line
    for height, (p, value) in zip((0.97, 0.72, 0.97), marks.items(), strict=True):
        ax.axvline(value, color="black", ls="--", lw=1.2)
        ax.text(value, height, f"{p}th: {value:.3f} " if p == 95 else f" {p}th: {value:.3f}" if p != 50
                else f"median {value:.3f} ",
                transform=ax.get_xaxis_transform(), ha="left" if p == 99 else "right", va="top",
                fontsize=FONT, bbox={"facecolor": "white", "edgecolor": "none", "pad": 1, "alpha": 0.8})
    ax.set_ylabel("random pairs", fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    return marks


def chance_figure(chance: ArrayLike, pairs: Mapping[str, float], controls: Mapping[str, float] | None = None,
                  controls_label: str = "controls") -> Figure:
    """Cosines of word pairs read against chance: above, the histogram of the random-pair cosines ``chance``
    (shape (n,)) with its median, 95th and 99th percentiles; below, one row per pair of ``pairs`` (``{"bank ~
    money": cosine}``) and one row of gray dots for ``controls`` (pairs that should not be related), labelled
    with their number and ``controls_label``.

    Returns:
        the figure (12 x 6 inches).
    """
    controls = dict(controls or {})
    if not pairs:
        raise ValueError("pairs is empty; expected {label: cosine}")
    rows = list(pairs) + ([f"{len(controls)} {controls_label}"] if controls else [])
    values = np.array(list(pairs.values()) + list(controls.values()))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(WIDTH, 6.0), sharex=True,
                                      height_ratios=[2.0, 0.42 * len(rows)])
    marks = draw_chance(top, chance)
    for value in marks.values():
        bottom.axvline(value, color="black", ls="--", lw=1.2)
    y = np.arange(len(rows))[::-1]
    bottom.scatter(list(pairs.values()), y[:len(pairs)], color="tab:red", s=80, zorder=3)
    if controls:
        bottom.scatter(list(controls.values()), np.full(len(controls), y[-1]), color="gray", s=80, zorder=3)
    bottom.set_yticks(y, rows, fontsize=FONT)
    bottom.set_ylim(-0.6, len(rows) - 0.4)
    bottom.set_xlabel("cosine similarity", fontsize=FONT)
    bottom.tick_params(labelsize=FONT)
    bottom.grid(axis="y", alpha=0.3)
    chance_values = np.asarray(chance, dtype=float)
    bottom.set_xlim(min(float(np.percentile(chance_values, 0.1)), values.min()) - 0.02,
                    max(float(np.percentile(chance_values, 99.9)), values.max()) + 0.05)
    fig.tight_layout(h_pad=0.3)
    return fig


def groups_figure(chance: ArrayLike, groups: Mapping[str, ArrayLike]) -> Figure:
    """Groups of pair cosines read against chance: above, the histogram of the random-pair cosines ``chance``
    (shape (n,)) with its median, 95th and 99th percentiles; below, one row of dots per group of ``groups``
    (``{"synonyms": (n,) cosines}``), labelled with the group's name and size.

    Returns:
        the figure (12 x 5.5 inches).
    """
    if not groups:
        raise ValueError("groups is empty; expected {name: cosines}")
    rows = {f"{name} ({len(np.atleast_1d(c))})": _array(f"groups[{name!r}]", c, 1)
            for name, c in groups.items()}
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(WIDTH, 5.5), sharex=True,
                                      height_ratios=[2.0, 0.5 * len(rows)])
    marks = draw_chance(top, chance)
    for value in marks.values():
        bottom.axvline(value, color="black", ls="--", lw=1.2)
    y = np.arange(len(rows))[::-1]
    for level, values in zip(y, rows.values(), strict=True):
        bottom.scatter(values, np.full(len(values), level), color="tab:red", s=60, alpha=0.7, zorder=3)
    bottom.set_yticks(y, list(rows), fontsize=FONT)
    bottom.set_ylim(-0.6, len(rows) - 0.4)
    bottom.set_xlabel("cosine similarity", fontsize=FONT)
    bottom.tick_params(labelsize=FONT)
    bottom.grid(axis="y", alpha=0.3)
    fig.tight_layout(h_pad=0.3)
    return fig


def draw_plane(ax: Axes, points: Mapping[str, Mapping[str, ArrayLike]], colours: Mapping[str, str],
               offsets: Mapping[str, tuple[float, float]] | None = None) -> None:
    """Draw groups of labelled 2-D points on ``ax``: ``points[group][word]`` has shape (2,), drawn in
    ``colours[group]``. A label sits 4 points up and right of its point, or at ``offsets[word]`` (in points;
    a negative x puts the label's end there) where two labels would overlap."""
    offsets = offsets or {}
    for group, words in points.items():
        pts = np.array([np.asarray(p, dtype=float) for p in words.values()])
        if pts.ndim != 2 or pts.shape[1] != 2:
            raise ValueError(f"points[{group!r}] has points of shape {pts.shape[1:]}; expected (2,)")
        ax.scatter(pts[:, 0], pts[:, 1], color=colours[group], s=40)
        for word, (x, y) in zip(words, pts, strict=True):
            dx, dy = offsets.get(word, (4, 4))
            ax.annotate(word, (x, y), xytext=(dx, dy), textcoords="offset points", color=colours[group],
                        fontsize=FONT, ha="right" if dx < 0 else "left")
    ax.set_xlabel("direction 1 (fruit <-> tech)", fontsize=FONT)
    ax.set_ylabel("direction 2", fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    ax.grid(alpha=0.3)


def plane_figure(points: Mapping[str, Mapping[str, ArrayLike]], colours: Mapping[str, str],
                 star: tuple[str, ArrayLike], control: ArrayLike | None = None,
                 control_label: str = "control words",
                 offsets: Mapping[str, tuple[float, float]] | None = None) -> Figure:
    """The fruit/tech plane (:func:`draw_plane`, which takes ``offsets``) with one word (``star``: (word, (2,)
    point)) as a red star and, if given, ``control`` points ((n, 2): words unrelated to both groups) as
    unlabelled gray crosses.

    Returns:
        the figure (12 x 5.8 inches).
    """
    fig, ax = plt.subplots(figsize=(WIDTH, 5.8))
    if control is not None:
        pts = np.asarray(control, dtype=float)
        if pts.ndim != 2 or pts.shape[1] != 2:
            raise ValueError(f"control has shape {pts.shape}; expected (n, 2)")
        ax.scatter(pts[:, 0], pts[:, 1], color="gray", marker="x", s=60, label=control_label)
        ax.legend(fontsize=FONT, loc="lower center")
    draw_plane(ax, points, colours, offsets)
    word, (x, y) = star[0], np.asarray(star[1], dtype=float)
    ax.scatter([x], [y], color="tab:red", marker="*", s=400, zorder=3)
    ax.annotate(word, (x, y), xytext=(8, 8), textcoords="offset points", color="tab:red", fontsize=FONT + 3,
                fontweight="bold")
    fig.tight_layout()
    return fig


def cosine_map(cosines: ArrayLike, labels: Sequence[str], *, vmin: float, vmax: float = 1.0,
               groups: Sequence[int] = ()) -> Figure:
    """A (n, n) matrix of cosines as a heatmap on the scale ``vmin``..``vmax`` (chosen to show the contrast
    that matters), with lines between the groups that start at the indices ``groups``. The diagonal (each
    vector with itself, cosine 1) is drawn white, so it does not take the top of the scale.

    Returns:
        the figure (12 x 4.6 inches: with a few printed lines above it, it still fits a slide).
    """
    c = _array("cosines", cosines, 2)
    if c.shape[0] != c.shape[1] or len(labels) != c.shape[0]:
        raise ValueError(f"cosines has shape {c.shape} and labels {len(labels)} entries; expected (n, n) "
                         "and n")
    fig, ax = plt.subplots(figsize=(WIDTH, 4.6))
    shown = c.astype(float).copy()
    np.fill_diagonal(shown, np.nan)                       # NaN: drawn in the axes' white background
    image = ax.imshow(shown, cmap="viridis", vmin=vmin, vmax=vmax)
    ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=FONT)
    ax.set_yticks(range(len(labels)), labels, fontsize=FONT)
    for g in groups:
        ax.axhline(g - 0.5, color="white", lw=3)
        ax.axvline(g - 0.5, color="white", lw=3)
    bar = fig.colorbar(image, ax=ax, shrink=0.9)
    bar.set_label("cosine similarity", fontsize=FONT)
    bar.ax.tick_params(labelsize=FONT)
    fig.tight_layout()
    return fig


def cluster_plane_figure(table: Any, clusters: Mapping[str, Sequence[str]], colours: Mapping[str, str],
                         centre: ArrayLike, P2: ArrayLike, word: str, control: Sequence[str],
                         control_label: str = "control words") -> Figure:
    """Lesson 01's fruit/tech plane: every word of ``clusters`` (name -> words), ``word`` as a red star and
    the ``control`` words as gray crosses (the first one named), each row of ``table`` (a
    :class:`~selfattention.data.StaticEmbeddings`) projected as (x_w - centre) @ P2, with ``centre`` (d,)
    and ``P2`` (d, 2) from :func:`selfattention.data.pca_plane`.

    Returns:
        the figure of :func:`plane_figure`.
    """
    centre, P2 = np.asarray(centre, dtype=np.float64), np.asarray(P2, dtype=np.float64)
    if P2.ndim != 2 or P2.shape[1] != 2 or centre.shape != (P2.shape[0],):
        raise ValueError(f"centre has shape {centre.shape} and P2 {P2.shape}; expected (d,) and (d, 2)")

    def project(w: str) -> NDArray[np.float64]:
        return (table.vector(w).astype(np.float64) - centre) @ P2

    fig = plane_figure({n: {w: project(w) for w in ws} for n, ws in clusters.items()}, colours,
                       (word, project(word)), control=[project(w) for w in control],
                       control_label=control_label, offsets={"strawberry": (-6, -10), "intel": (4, -20)})
    if control:                                   # name the first control word ("bank") by its cross
        x, y = project(control[0])
        fig.axes[0].annotate(control[0], (x, y), xytext=(30, -40), textcoords="offset points",
                             color="dimgray", fontsize=FONT,
                             arrowprops={"arrowstyle": "-", "color": "dimgray"})
    return fig


def margin_dots_figure(groups: Mapping[str, Mapping[str, float]], cut: str) -> Figure:
    """Each word's smaller sense margin as a labelled dot, one row per group of ``groups``
    (``{"ambiguous": {"bank": -0.010, ...}, "controls": {...}}``), with a line at 0: a dot right of it has
    both senses present at the chance level ``cut`` (for the x label, e.g. "99th percentile").

    Returns:
        the figure (12 inches wide, 2.4 inches per group).
    """
    if not groups:
        raise ValueError("groups is empty; expected {group: {word: margin}}")
    fig, ax = plt.subplots(figsize=(WIDTH, 2.4 * len(groups) + 1.0))
    colours = ["tab:red", "tab:gray", "tab:blue"]
    y = np.arange(len(groups))[::-1]
    for k, (level, margins) in enumerate(zip(y, groups.values(), strict=True)):
        values = np.array([float(m) for m in margins.values()])
        ax.scatter(values, np.full(len(values), level), color=colours[k % 3], s=70, alpha=0.8, zorder=3)
        order = np.argsort(values)
        for j, i in enumerate(order):                   # slanted labels, alternately above and below the row
            up = j % 2 == 0
            ax.annotate(list(margins)[i], (values[i], level), xytext=(3 if up else -3, 8 if up else -8),
                        textcoords="offset points", ha="left" if up else "right",
                        va="bottom" if up else "top",
                        rotation=50, rotation_mode="anchor", fontsize=FONT)
    ax.axvline(0, color="black", ls="--", lw=1.2)
    ax.set_yticks(y, [f"{name} ({len(m)})" for name, m in groups.items()], fontsize=FONT)
    ax.set_ylim(-0.8, len(groups) - 0.2)
    ax.set_xlabel(f"smaller of the two sense margins (chance: {cut})", fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig
