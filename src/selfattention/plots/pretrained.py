"""Figures of lessons 11 and 12 (the pretrained model): cosines layer by layer, values per group of
sentences, one number per head of every layer, a head's removal against a yardstick, the encoder layer.

Every text is drawn at :data:`FONT` points or more: at the widths used here (at most 11 inches), that is at
least 20 px when a figure is shown across a 1280 px slide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

__all__ = ["FONT", "layer_curves", "strips", "move_strips", "layer_head_maps", "removal_against_yardstick",
           "attention_map", "encoder_layer"]

#: The smallest font size of these figures, in points.
FONT = 15
_COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]


def _style(ax: Axes) -> None:
    ax.tick_params(labelsize=FONT)
    ax.xaxis.label.set_fontsize(FONT)
    ax.yaxis.label.set_fontsize(FONT)
    ax.title.set_fontsize(FONT + 1)


def _array(values: ArrayLike, name: str, ndim: int) -> np.ndarray:
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    a = np.asarray(values, dtype=float)
    if a.ndim != ndim or a.size == 0:
        raise ValueError(f"{name} must be a non-empty {ndim}-D array, got shape {a.shape}")
    return a


def layer_curves(
    values: Mapping[str, ArrayLike],
    *,
    xlabel: str = "hidden state (0: the input to layer 0; l + 1: the output of layer l)",
    ylabel: str = "cosine",
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """One line per named series: its mean at each hidden state, with its range (min to max) shaded.

    Inputs:
        values: ``{name: (n_states, n) array}``, n values (for example the cosines of n pairs of
            sentences) at each of n_states hidden states; every series has the same n_states.
    Returns:
        the Axes drawn on.
    """
    if not values:
        raise ValueError("values is empty; expected {name: (n_states, n) array}")
    arrays = {name: _array(v, f"values[{name!r}]", 2) for name, v in values.items()}
    states = {a.shape[0] for a in arrays.values()}
    if len(states) != 1:
        raise ValueError(f"every series needs the same number of hidden states, got {sorted(states)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4.6), layout="constrained")
    x = np.arange(states.pop())
    for (name, a), colour in zip(arrays.items(), _COLOURS, strict=False):
        ax.plot(x, a.mean(axis=1), "o-", color=colour, lw=2.5, label=f"{name} (mean of {a.shape[1]})")
        ax.fill_between(x, a.min(axis=1), a.max(axis=1), color=colour, alpha=0.15)
    ax.set_xticks(x)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=FONT, loc="lower left")
    if title:
        ax.set_title(title)
    _style(ax)
    return ax


def strips(
    groups: Mapping[str, Mapping[str, ArrayLike]],
    *,
    ylabel: str,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Every value as a dot, grouped: ``groups[group][series]`` is a 1-D array of values; each group gets a
    place on the x axis, each series a colour and a short bar at its mean.

    Returns:
        the Axes drawn on.
    """
    if not groups:
        raise ValueError("groups is empty; expected {group: {series: values}}")
    series = list(dict.fromkeys(name for inner in groups.values() for name in inner))
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4.8), layout="constrained")
    width = 0.8 / len(series)
    rng = np.random.default_rng(0)  # the same horizontal jitter on every drawing
    for g, (group, inner) in enumerate(groups.items()):
        for s, name in enumerate(series):
            if name not in inner:
                continue
            v = _array(inner[name], f"groups[{group!r}][{name!r}]", 1)
            centre = g - 0.4 + width * (s + 0.5)
            ax.scatter(centre + rng.uniform(-0.25, 0.25, v.size) * width, v, s=60, color=_COLOURS[s],
                       alpha=0.8, label=name if g == 0 else None, zorder=3)
            ax.plot([centre - 0.4 * width, centre + 0.4 * width], [v.mean()] * 2, color="black", lw=3,
                    zorder=4)
    ax.set_xticks(range(len(groups)), list(groups))
    ax.set_ylabel(ylabel)
    ax.axhline(0, color="grey", lw=0.8)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=FONT, loc="best")
    if title:
        ax.set_title(title)
    _style(ax)
    return ax


def move_strips(
    word: Mapping[str, ArrayLike],
    controls: Mapping[str, Mapping[str, ArrayLike]],
    *,
    name: str = "apple",
    baseline: str = "neutral",
    ylabel: str = "move towards tech",
    ax: Axes | None = None,
) -> Axes:
    """Lesson 11's moves as strips: each value minus the same word's mean in the ``baseline`` group.

    ``word[group]`` is the word's ``(n,)`` leans, one dot per sentence; ``controls[control][group]`` the
    ``(k, n)`` leans of ``k`` words in its place, one dot per word: its mean move over the ``n`` sentences.

    Returns:
        the Axes drawn on.
    """
    if baseline not in word:
        raise ValueError(f"word has no baseline group {baseline!r}; it has {list(word)}")
    w = {g: _array(v, f"word[{g!r}]", 1) for g, v in word.items()}
    groups: dict[str, dict[str, np.ndarray]] = {}
    for g in w:
        groups[g] = {f'"{name}": one dot per sentence': w[g] - w[baseline].mean()}
        for c, leans in controls.items():
            if g == baseline:                  # each control word minus itself: 0 by construction, not drawn
                continue
            v, base = _array(leans[g], f"controls[{c!r}][{g!r}]", 2), _array(leans[baseline], c, 2)
            moved = v.mean(axis=1) - base.mean(axis=1)                     # (k,): each word's mean move
            groups[g][f"{c}: one dot per word"] = moved
    ax = strips(groups, ylabel=ylabel, ax=ax,
                title=f"move: lean minus the same word's mean {baseline} lean")
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi + 0.6 * (hi - lo))  # room above every value for the legend
    ax.legend(fontsize=FONT, loc="upper right")
    return ax


def layer_head_maps(
    maps: Sequence[ArrayLike],
    titles: Sequence[str],
    *,
    label: str,
    vmax: float = 1.0,
    cmap: str = "Blues",
) -> tuple[Figure, list[Axes]]:
    """(num_layers, num_heads) arrays side by side on ONE colour scale (0 to ``vmax``) with one colour bar:
    a number per head of every layer, layers and heads counted from 0.

    Returns:
        the figure and its panels' Axes.
    """
    arrays = [_array(m, f"maps[{i}]", 2) for i, m in enumerate(maps)]
    if not arrays or len(arrays) != len(titles):
        raise ValueError(f"maps has {len(arrays)} entries and titles {len(titles)}; expected one title per "
                         "map, at least one map")
    fig, axes = plt.subplots(1, len(arrays), figsize=(3.4 * len(arrays) + 1.4, 3.8), squeeze=False,
                             layout="constrained")
    panels = list(axes[0])
    for i, (a, ax, title) in enumerate(zip(arrays, panels, titles, strict=True)):
        image = ax.imshow(a, cmap=cmap, vmin=0.0, vmax=vmax, aspect="auto")
        ax.set_title(title)
        ax.set_xlabel("head")
        ax.set_xticks(range(0, a.shape[1], 2))
        ax.set_yticks(range(a.shape[0]))
        ax.set_ylabel("layer" if i == 0 else "")
        _style(ax)
    bar = fig.colorbar(image, ax=panels, shrink=0.9)
    bar.set_label(label, fontsize=FONT)
    bar.ax.tick_params(labelsize=FONT)
    return fig, panels


def removal_against_yardstick(
    changes: ArrayLike,
    marked: ArrayLike,
    yardstick: Mapping[str, ArrayLike],
    *,
    marked_label: str,
    other_label: str,
    xlabel: str = "change of the sentence embedding, 1 - cos (log scale)",
    spread: ArrayLike | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Each head's removal (one dot per head, rows by layer, ``marked`` heads in their own colour) against
    the same change measured between pairs of sentences (one row per kind of pair), on a log scale.

    Inputs:
        changes: (num_layers, num_heads) changes; marked: (num_layers, num_heads) booleans;
        yardstick: ``{kind of pair: (n,) changes}``.
        spread: optional (num_layers, num_heads, n) changes sentence by sentence: each head's range, from its
            smallest to its largest, is a thin line through its dot (heads a little apart vertically).
    Returns:
        the Axes drawn on.
    """
    c = _array(changes, "changes", 2)
    mark = np.asarray(marked, dtype=bool)
    if mark.shape != c.shape:
        raise ValueError(f"marked has shape {mark.shape}; expected {c.shape}, the shape of changes")
    if (c <= 0).any():
        raise ValueError("changes must be positive to be drawn on a log scale")
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 5.4), layout="constrained")
    rows = [f"remove a head of layer {layer}" for layer in range(c.shape[0])] + list(yardstick)
    each = None if spread is None else _array(spread, "spread", 3)
    if each is not None and each.shape[:2] != c.shape:
        raise ValueError(f"spread has shape {each.shape}; expected {c.shape} + (n,)")
    first_marked = int(np.flatnonzero(mark.any(axis=1))[0]) if mark.any() else -1
    for layer in range(c.shape[0]):            # the marked heads last, so their dots lie on top
        for m, colour, name, z in ((~mark[layer], "tab:blue", other_label, 3),
                                   (mark[layer], "tab:orange", marked_label, 4)):
            y = layer + (0.0 if each is None else (np.flatnonzero(m) - (c.shape[1] - 1) / 2) * 0.035)
            dots = "" if each is None else " (dot: mean)"
            ax.scatter(c[layer][m], np.full(int(m.sum()), layer) + y - layer, s=55, color=colour, alpha=0.9,
                       label=name + dots if layer == 0 else None, zorder=z)
            if each is not None:             # one legend entry for each colour's range lines
                first = 0 if z == 3 else first_marked
                ax.hlines(y, each[layer][m].min(-1), each[layer][m].max(-1), color=colour, alpha=0.5, lw=1,
                          zorder=z - 2, label=(f"line: range over {each.shape[2]} sentences, {name}"
                                               if layer == first else None))
    for k, (kind, values) in enumerate(yardstick.items()):
        v = _array(values, f"yardstick[{kind!r}]", 1)
        ax.scatter(v, np.full(v.size, c.shape[0] + k), s=70, marker="D", color="tab:green",
                   label="pairs of sentences" if k == 0 else None, zorder=3)
    ax.set_xscale("log")
    ax.set_yticks(range(len(rows)), rows)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=FONT, loc="upper center", bbox_to_anchor=(0.32, -0.16), ncol=2)
    _style(ax)
    return ax


def encoder_layer(num_heads: int = 12, d_model: int = 384, d_ff: int = 1536) -> Axes:
    """The diagram of one post-norm encoder layer (BERT's), with the shapes for T tokens."""
    d_k = d_model // num_heads
    steps = [("x: the layer's input", f"(T, {d_model})"),
             (f"multi-head attention, {num_heads} heads", f"(T, {d_model})"),
             ("add x, LayerNorm: x1", f"x1: (T, {d_model})"),
             ("feed-forward: GELU(x1 W_1 + b_1) W_2 + b_2", f"(T, {d_ff}) -> (T, {d_model})"),
             ("add x1, LayerNorm: the layer's output", f"x2: (T, {d_model})")]
    fig, ax = plt.subplots(figsize=(11, 5.2), layout="constrained")
    ax.set_xlim(-0.6, 10.6)
    ax.set_ylim(len(steps) - 0.5, -0.7)
    ax.axis("off")
    _style(ax)
    boxes = []
    for i, (what, shape) in enumerate(steps):
        boxes.append(ax.text(4.3, i, what, ha="center", va="center", fontsize=FONT,
                             bbox={"boxstyle": "round", "fc": "#fde8c8" if "feed" in what else "#dbe9f6"}))
        ax.text(9.3, i, shape, ha="center", va="center", fontsize=FONT, color="tab:blue")
    fig.canvas.draw()                                   # the boxes' sizes, to join lines to them
    to_data = ax.transData.inverted()

    def corners(i: int) -> np.ndarray:                                  # [[left, bottom], [right, top]], data
        return to_data.transform(boxes[i].get_bbox_patch().get_window_extent())

    def left(i: int) -> float:
        return float(corners(i)[0, 0])

    for i in range(1, len(steps)):                                       # the main line, box edge to box edge
        ax.annotate("", (4.3, float(corners(i)[1, 1])), xytext=(4.3, float(corners(i - 1)[0, 1])),
                    arrowprops={"arrowstyle": "->", "shrinkA": 0, "shrinkB": 0})

    # The two residual connections: each leaves the line below a sum's input (x below box 0, x1 below box 2,
    # after its LayerNorm) and joins the left edge of the next "add" box.
    for start, end in [(0, 2), (2, 4)]:
        bar = 0.9
        ax.plot([4.3, bar, bar], [start + 0.5, start + 0.5, end], color="tab:red", lw=2)
        ax.annotate("", (left(end), end), xytext=(bar, end),
                    arrowprops={"arrowstyle": "->", "color": "tab:red", "lw": 2, "shrinkA": 0, "shrinkB": 0})
        ax.text(bar - 0.1, start + 0.5 + (end - start - 0.5) / 2, "residual", color="tab:red", fontsize=FONT,
                rotation=90, ha="right", va="center")
    ax.set_title(f"One encoder layer (post-norm): per head softmax(Q K^T / sqrt({d_k})) V, then W_O",
                 fontsize=FONT + 1)
    return ax


def attention_map(weights: ArrayLike, tokens: Sequence[str], *, title: str | None = None,
                  ax: Axes | None = None) -> Axes:
    """One head's (T, T) weights as a map: rows are the queries i, columns the keys j, on a 0 to 1 scale,
    each weight written in its cell.

    Returns:
        the Axes drawn on.
    """
    a = _array(weights, "weights", 2)
    if a.shape != (len(tokens), len(tokens)):
        raise ValueError(f"weights has shape {a.shape}; expected ({len(tokens)}, {len(tokens)}) for "
                         f"{len(tokens)} tokens")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 5.6), layout="constrained")
    image = ax.imshow(a, cmap="Blues", vmin=0.0, vmax=1.0)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            ax.text(j, i, f"{a[i, j]:.2f}", ha="center", va="center", fontsize=FONT - 1,
                    color="white" if a[i, j] > 0.6 else "black")
    ax.set_xticks(range(len(tokens)), tokens, rotation=30, ha="right")
    ax.set_yticks(range(len(tokens)), tokens)
    ax.set_xlabel("key j (attended to)")
    ax.set_ylabel("query i")
    bar = ax.figure.colorbar(image, ax=ax, shrink=0.85)
    bar.set_label("weight alpha_ij", fontsize=FONT)
    bar.ax.tick_params(labelsize=FONT)
    if title:
        ax.set_title(title)
    _style(ax)
    return ax
