"""Figures of lessons 07 and 08 (multi-head attention): the layer's diagram, heads' weights on one scale.

Every figure is drawn :data:`WIDTH` inches wide with text of at least :data:`FONT` points, so that on a
slide 1280 px wide (where a figure fills the width) its smallest text is about 22 px high: legible from
the back of a room.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

__all__ = ["WIDTH", "FONT", "mha_diagram", "split_merge_diagram", "head_maps", "query_bars", "role_positions",
           "by_role",
           "role_table", "print_rows", "cost_table", "role_maps", "summary",
           "summary_table", "range_table", "weight_gaps", "silencing",
           "fit_linear_readout", "best_linear_readout", "binding_bars", "corner_picture"]

WIDTH = 12.0  # inches: every figure of this module, so that FONT points are the same size on every slide
FONT = 16  # points: 16/72 in of a 12-in figure drawn 1280 px wide is 23.7 px


def _matrix(name: str, m: ArrayLike) -> np.ndarray:
    if hasattr(m, "detach"):
        m = m.detach().cpu().numpy()
    a = np.asarray(m, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (rows, columns) array, got shape {a.shape}")
    return a


def mha_diagram() -> Figure:
    """The multi-head layer as boxes: X, h heads of width d_k, their concatenation, W_O, the output.

    Returns the figure (WIDTH x 4.6 inches); nothing is shown.
    """
    fig, ax = plt.subplots(figsize=(WIDTH, 4.6))
    ax.set(xlim=(0, 12), ylim=(0.1, 4.3))
    ax.axis("off")

    def box(x: float, y: float, text: str, color: str) -> None:
        ax.text(x, y, text, ha="center", va="center", fontsize=FONT,
                bbox={"boxstyle": "round,pad=0.4", "ec": "gray", "fc": color})

    def arrow(start: tuple[float, float], end: tuple[float, float]) -> None:
        ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "->", "color": "gray", "lw": 1.5})

    box(0.75, 2.2, "$X$\n$T \\times d_{model}$", "#dbe9f6")
    for y, i in ((3.65, "1"), (2.2, "2"), (0.6, "h")):
        arrow((1.55, 2.2), (2.3, y))
        q, k, v = (f"{m}^{{({i})}}" for m in "QKV")
        box(4.25, y, f"head {i}: ${q} = X W_Q^{{({i})}}$, ${k}$, ${v}$\n"
                     f"softmax$({q} {{{k}}}^{{\\top}} / \\sqrt{{d_k}})\\, {v}$", "#fde0c5")
        arrow((6.25, y), (6.95, 2.2))
    ax.text(4.25, 1.42, "$\\vdots$", ha="center", va="center", fontsize=FONT)
    box(7.85, 2.2, "concat\n$T \\times h\\,d_k$\n$= T \\times d_{model}$", "#e5f5e0")
    arrow((8.8, 2.2), (9.75, 2.2))
    ax.text(9.27, 2.95, "$\\times\\, W_O$", ha="center", va="center", fontsize=FONT)
    box(10.95, 2.2, "output\n$T \\times d_{model}$", "#dbe9f6")
    fig.suptitle("$h$ heads of width $d_k = d_{model} / h$, concatenated, then mixed by $W_O$", fontsize=FONT)
    fig.tight_layout()
    return fig


#: One colour per head (up to 4 heads), for the split-and-merge picture.
_HEAD_COLOURS = ("#fdae6b", "#6baed6", "#a1d99b", "#bcbddc")


def split_merge_diagram(T: int = 4, h: int = 2, d_k: int = 2) -> Figure:
    """The shapes of one multi-head layer, as grids of cells coloured by head: X W_Q (T, d_model) is split
    into (h, T, d_k) (a reshape to (T, h, d_k), drawn with a gap between heads and its axes labelled: T down,
    h across, d_k inside each head's block; then a transpose, the heads
    stacked; every block at one cell size), each head
    attends on its own (T, d_k) block, the merge gives back (T, h d_k) with head m in columns m d_k ...
    (m + 1) d_k - 1, and W_O (h d_k, d_model) reads head m through its block of rows W_O^(m).
    Defaults: the worked example (T = 4, h = 2, d_k = 2).

    Returns the figure (WIDTH x 4.0 inches); nothing is shown.
    """
    if not (1 <= h <= len(_HEAD_COLOURS)) or T < 1 or d_k < 1:
        raise ValueError(f"need 1 <= h <= {len(_HEAD_COLOURS)}, T >= 1 and d_k >= 1; got h = {h}, T = {T}, "
                         f"d_k = {d_k}")
    d = h * d_k
    fig, ax = plt.subplots(figsize=(WIDTH, 4.0))
    ax.set_aspect("equal")
    ax.axis("off")
    cell = 0.42

    def grid(x: float, y: float, rows: int, cols: int, colour_of_col: Callable[[int], str] | None,
             colour_of_row: Callable[[int], str] | None = None, size: float = cell) -> tuple[float, float]:
        """A rows x cols grid of cells ``size`` wide, top-left corner at (x, y); returns (width, height)."""
        for r in range(rows):
            for c in range(cols):
                colour = colour_of_row(r) if colour_of_row else colour_of_col(c)  # type: ignore[misc]
                ax.add_patch(plt.Rectangle((x + c * size, y - (r + 1) * size), size, size, fc=colour,
                                           ec="white", lw=1.5))
        return cols * size, rows * size

    def label(x: float, y: float, text: str) -> None:
        ax.text(x, y, text, ha="center", va="top", fontsize=FONT)

    def arrow(x0: float, x1: float, y: float, text: str) -> None:
        ax.annotate("", xy=(x1, y), xytext=(x0, y),
                    arrowprops={"arrowstyle": "->", "color": "gray", "lw": 1.5})
        ax.text((x0 + x1) / 2, y + 0.12, text, ha="center", va="bottom", fontsize=FONT - 1)

    top, by_head = 3.2, (lambda c: _HEAD_COLOURS[c // d_k])
    mid = top - T * cell / 2
    x = 0.0
    w, hgt = grid(x, top, T, d, by_head)                                    # X W_Q: (T, d_model)
    label(x + w / 2, top - hgt - 0.15, f"$XW_Q$\n({T}, {d})")
    x += w
    arrow(x + 0.15, x + 1.95, mid, "reshape")
    x += 2.1
    for m in range(h):                                                       # (T, h, d_k), heads apart
        grid(x + m * (d_k * cell + 0.12), top, T, d_k, lambda c, m=m: _HEAD_COLOURS[m])
    w = h * d_k * cell + (h - 1) * 0.12
    label(x + w / 2, top - T * cell - 0.15, f"({T}, {h}, {d_k})")
    for m in range(h):                                                       # its axes: d_k inside a block,
        ax.text(x + m * (d_k * cell + 0.12) + d_k * cell / 2, top + 0.04, "$d_k$", ha="center", va="bottom",
                fontsize=FONT - 1)
    ax.text(x + w / 2, top + 0.5, "$h$ \u2192", ha="center", va="bottom", fontsize=FONT - 1)   # h across
    ax.text(x - 0.06, top - (T - 0.5) * cell, "$T$\u2193", ha="right", va="center", fontsize=FONT - 1)  # T
    x += w
    arrow(x + 0.15, x + 2.25, mid, "transpose")
    x += 2.4
    gap = 0.25
    stack_h = h * T * cell + (h - 1) * gap                                  # heads stacked, full size
    y0 = mid + stack_h / 2
    for m in range(h):                                                       # (h, T, d_k): one block per head
        grid(x, y0 - m * (T * cell + gap), T, d_k, lambda c, m=m: _HEAD_COLOURS[m])
    label(x + d_k * cell / 2, y0 - stack_h - 0.15, f"({h}, {T}, {d_k})")
    x += d_k * cell
    arrow(x + 0.2, x + 4.0, mid, "each head:\nsoftmax\n$(QK^\\top/\\sqrt{d_k})\\,V$")
    x += 4.2
    for m in range(h):                                                       # each head's Z^(m): (T, d_k)
        top_m = y0 - m * (T * cell + gap)
        grid(x, top_m, T, d_k, lambda c, m=m: _HEAD_COLOURS[m])
        ax.text(x + d_k * cell + 0.08, top_m - T * cell / 2, f"$Z^{{({m + 1})}}$",
                ha="left", va="center", fontsize=FONT)
    label(x + d_k * cell / 2, y0 - stack_h - 0.15, f"({h}, {T}, {d_k})")
    x += d_k * cell + 0.8
    arrow(x + 0.1, x + 1.4, mid, "merge")
    x += 1.5
    w, hgt = grid(x, top, T, d, by_head)                                     # concat: (T, h d_k)
    label(x + w / 2, top - hgt - 0.15, f"concat\n({T}, {h}$\\times${d_k})")
    x += w
    ax.text(x + 0.35, mid, "$\\times$", ha="center", va="center", fontsize=FONT)
    x += 0.9
    w, hgt = grid(x, top, d, d, None, lambda r: _HEAD_COLOURS[r // d_k])     # W_O: rows by head
    label(x + w / 2, top - hgt - 0.15, f"$W_O$ ({d}, {d})\nrows: $W_O^{{(m)}}$")
    x += w
    arrow(x + 0.1, x + 0.9, mid, "")
    x += 1.0
    w, hgt = grid(x, top, T, d, lambda c: "#d9d9d9")                         # output: (T, d_model)
    label(x + w / 2, top - hgt - 0.15, f"output\n({T}, {d})")
    ax.set(xlim=(-0.2, x + w + 0.2),
           ylim=(min(top - max(d, T) * cell - 1.0, y0 - stack_h - 0.6), max(top, y0) + 0.2))
    fig.suptitle(f"Split and merge: $T = {T}$, $h = {h}$ heads of $d_k = {d_k}$; colour = head",
                 fontsize=FONT)
    fig.tight_layout()
    return fig


def head_maps(
    maps: Sequence[ArrayLike],
    titles: Sequence[str],
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    vmax: float = 1.0,
    annotate: bool = True,
    digits: int = 2,
    height: float | None = None,
    xlabel: str = "key (attended to)",
    ylabel: str = "query (attending)",
) -> tuple[Figure, list[Axes]]:
    """Attention weights of several heads side by side, on ONE colour scale from 0 to ``vmax``.

    Inputs:
        maps: n arrays of shape (rows, cols) (torch tensors accepted), one per panel.
        titles: n panel titles; row_labels: ``rows`` labels; col_labels: ``cols`` labels.
        annotate: write each weight in its square, with ``digits`` decimals.
        height: the figure's height in inches (default: from the number of rows).
    Returns:
        the figure (WIDTH inches wide) and its n panels' Axes; ``panel.images[0].set_data`` redraws one.
    """
    arrays = [_matrix(f"maps[{i}]", m) for i, m in enumerate(maps)]
    if not arrays or len(arrays) != len(titles):
        raise ValueError(f"maps has {len(arrays)} entries and titles {len(titles)}; "
                         "expected one title per map, at least one map")
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"maps must all have one shape, got {sorted(shapes)}")
    rows, cols = arrays[0].shape
    if (len(row_labels), len(col_labels)) != (rows, cols):
        raise ValueError(f"row_labels has {len(row_labels)} and col_labels {len(col_labels)} labels; "
                         f"the maps are {rows} x {cols}")
    fig, axes = plt.subplots(1, len(arrays), figsize=(WIDTH, height or 1.6 + 0.55 * rows),
                             squeeze=False, layout="constrained")
    panels = list(axes[0])
    for i, (a, ax, title) in enumerate(zip(arrays, panels, titles, strict=True)):
        ax.imshow(a, cmap="Blues", vmin=0.0, vmax=vmax, aspect="auto")
        ax.set_xticks(range(cols), col_labels, rotation=30 if max(map(len, col_labels)) > 3 else 0,
                      ha="right" if max(map(len, col_labels)) > 3 else "center", fontsize=FONT)
        ax.set_yticks(range(rows), row_labels if i == 0 else [""] * rows, fontsize=FONT)
        ax.set_title(title, fontsize=FONT)
        ax.set_xlabel(xlabel, fontsize=FONT)
        if annotate:
            for (r, c), v in np.ndenumerate(a):
                ax.text(c, r, f"{v:.{digits}f}", ha="center", va="center", fontsize=FONT,
                        color="white" if v > 0.6 * vmax else "black")
    panels[0].set_ylabel(ylabel, fontsize=FONT)
    bar = fig.colorbar(panels[-1].images[0], ax=panels, shrink=0.9)
    bar.set_label("attention weight", fontsize=FONT)
    bar.ax.tick_params(labelsize=FONT)
    return fig, panels


def query_bars(num_heads: int, num_tokens: int) -> tuple[Figure, list[Axes], list]:
    """One bar chart per head for one query's weights over ``num_tokens`` tokens, laid out once.

    Returns the figure (WIDTH inches wide), its ``num_heads`` Axes (weights from 0 to 1) and, per head,
    the bars (``selfattention.widgets.set_heights`` moves them); tick labels and titles are set by the caller.
    """
    for name, value in (("num_heads", num_heads), ("num_tokens", num_tokens)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    fig, axes = plt.subplots(1, num_heads, figsize=(WIDTH, 4.4), squeeze=False, layout="constrained")
    panels, bars = list(axes[0]), []
    for i, ax in enumerate(panels):
        bars.append(ax.bar(range(num_tokens), np.zeros(num_tokens), color="tab:blue"))
        ax.set_ylim(0, 1)
        ax.set_xticks(range(num_tokens), [""] * num_tokens, fontsize=FONT)
        ax.tick_params(labelsize=FONT)
        ax.set_title(f"head {i + 1}", fontsize=FONT)
        ax.grid(axis="y", alpha=0.3)
    panels[0].set_ylabel("weight of the query", fontsize=FONT)
    return fig, panels, bars


def role_positions(X, offsets: Sequence[int]):
    """Where each role sits in lookup sequences, for reading the query token's weights by role.

    ``X`` is (n, N_ITEMS + 1, D_IN) as :func:`selfattention.tasks.make_lookup_data` makes it; ``offsets`` the
    letter offsets asked for. Returns an integer tensor (n, N_ITEMS + 1): per sequence, the position of the
    item under each offset's letter (in the order of ``offsets``), then the distractor (the query's own
    letter), then any remaining items in their order, then the query token (position N_ITEMS).
    """
    import torch

    from selfattention import tasks

    offsets = tuple(offsets)
    if not offsets or len(offsets) >= tasks.N_ITEMS:
        raise ValueError(f"offsets must hold 1 to {tasks.N_ITEMS - 1} letter offsets, got {offsets!r}")
    masks = [tasks.item_roles(X, o)["target"] for o in offsets]
    masks.append(tasks.item_roles(X, offsets[0])["distractor"])
    key = torch.full((len(X), tasks.N_ITEMS), len(masks))  # unnamed items sort last
    for r, mask in enumerate(masks):
        if not bool((mask.sum(1) == 1).all()):
            raise ValueError(f"offsets {offsets!r}: every sequence must hold each role exactly once")
        key[mask] = r
    order = torch.sort(key * tasks.N_ITEMS + torch.arange(tasks.N_ITEMS), dim=1).indices
    return torch.cat([order, torch.full((len(X), 1), tasks.N_ITEMS)], dim=1)


def by_role(weights, where):
    """The query token's weight on each role's item: ``weights`` (n, heads, T, T) with the query token last,
    ``where`` (n, R) positions from :func:`role_positions` -> (n, heads, R)."""
    import torch

    if weights.ndim != 4 or where.ndim != 2 or len(weights) != len(where):
        raise ValueError(f"weights must be (n, heads, T, T) and where (n, R) with the same n, got "
                         f"{tuple(weights.shape)} and {tuple(where.shape)}")
    return torch.take_along_dim(weights[:, :, -1, :], where[:, None, :], dim=2)


def role_table(models: dict, where, roles: Sequence[str]) -> str:
    """A text table of the query token's mean weight on each role, as a range over seeds.

    ``models`` maps a model's name to its held-out weights, one (n, heads, T, T) tensor per seed. Each seed's
    weights are averaged over the n sequences; in a model of several heads, the head with more weight on the
    first role is listed first. One line per model and head: the range (min-max over seeds) for each role.
    """
    import torch

    lines = [f"{f'min to max, {len(next(iter(models.values())))} seeds':20} {'head':13}"
             + "".join(f"{r:>12}" for r in roles)]
    for name, per_seed in models.items():
        mean = torch.stack([by_role(w, where).mean(0) for w in per_seed])              # (seeds, heads, R)
        mean = torch.stack([m[m[:, 0].argsort(descending=True)] for m in mean])
        for h in range(mean.shape[1]):
            label = "the one head" if mean.shape[1] == 1 else f"more on {roles[h][:4]}"
            lines.append(f"{name:20} {label:13}" + "".join(
                f"{lo:.2f}-{hi:.2f}".rjust(12) for lo, hi in zip(mean[:, h].amin(0), mean[:, h].amax(0),
                                                                  strict=True)))
    return "\n".join(lines)


def print_rows(name: str, tokens: Sequence[str], *matrices: ArrayLike) -> None:
    """Print ``name``, then one line per token: the token and its row of each matrix, side by side.

    Inputs: tokens: T words; matrices: each (T, n) (n may differ between matrices). Rows are rounded to 3
    decimals.
    """
    arrays = [_matrix(f"matrix {i}", m) for i, m in enumerate(matrices)]
    for i, m in enumerate(arrays):
        if m.shape[0] != len(tokens):
            raise ValueError(f"matrix {i} has {m.shape[0]} rows; expected {len(tokens)}, one per token")
    print(name)
    for token, *rows in zip(tokens, *arrays, strict=True):
        print(f"  {token:7}", " | ".join(str(row.round(3)) for row in rows))


def cost_table(T: int, d_model: int, heads: Sequence[int]) -> None:
    """Print, per number of heads h (each of width d_model // h), the multiply-adds of one multi-head layer
    on T tokens: the projections (3 T d_model d_k per head), the scores and weighted sums (2 T^2 d_k per head)
    and W_O (T d_model^2), its parameters without biases (3 d_model d_k per head + d_model^2), and the
    number of attention weights, h T^2.
    """
    for name, value in (("T", T), ("d_model", d_model)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}={value!r}; expected a positive int")
    for h in heads:
        if not isinstance(h, int) or h < 1 or d_model % h:
            raise ValueError(f"heads has {h!r}; expected positive ints that divide d_model={d_model}")
    print(" heads  d_k   Q, K, V   scores + sums         W_O   parameters   weights (h T^2)")
    for h in heads:
        d_k = d_model // h
        projections, attend = h * 3 * T * d_model * d_k, h * 2 * T * T * d_k
        output, parameters = T * d_model * d_model, h * 3 * d_model * d_k + d_model * d_model
        print(f"{h:6d} {d_k:4d} {projections:9,d} {attend:15,d} {output:11,d} {parameters:12,d} "
              f"{h * T**2:17,d}")


def role_maps(X, where, panels: dict, roles: Sequence[str], per_position: int = 2,
              title: str = "the query's weight on each item, by role") -> tuple[Figure, list[Axes]]:
    """:func:`head_maps` of weights read by role, on ``per_position`` held-out sequences for each position of
    the first role's item (so that every position is shown equally), written with two decimals.

    Inputs:
        X: (n, T, D_IN) lookup sequences; where: (n, R) from :func:`role_positions`.
        panels: title -> (n, R) weights by role (one head's slice of :func:`by_role`).
        roles: R column labels; title: the figure's title.
    Returns:
        the figure and its panels; rows are labelled by the position of the first role's item and the
        sequence's number.
    """
    import torch

    from selfattention import tasks

    picked = [(p, int(i)) for p in range(tasks.N_ITEMS)
              for i in torch.nonzero(where[:, 0] == p)[:per_position, 0]]
    labels = [f"{roles[0]} at {p}: #{i}" for p, i in picked]
    rows = [i for _, i in picked]
    fig, panels_ = head_maps([w[rows] for w in panels.values()], list(panels), labels, roles, digits=2,
                             height=1.4 + 0.52 * len(rows), xlabel="",
                             ylabel="held-out sequence")
    fig.suptitle(title, fontsize=FONT)
    fig.supxlabel("columns: each item by its role (next, previous, ...), not by its position", fontsize=FONT)
    return fig, panels_


def summary(group: Sequence, where) -> str:
    """One line over a group of trained lookup models with two answers, one per seed: the range over seeds of
    the fraction of sequences with both answers right, of the accuracy of the heavier item's answer (the item
    of the two the heads weight more on average) and of the lighter item's.

    ``group``: (model, weights (n, heads, T, T), right (n, 2) booleans) per seed; ``where`` from
    :func:`role_positions`, its first two columns the items that hold the answers.
    """
    import torch

    rows = []
    for _, weights, right in group:
        if right.ndim != 2 or right.shape[1] != 2:
            raise ValueError(f"right must be (n, 2), one column per answer, got {tuple(right.shape)}")
        heavier = int(by_role(weights, where)[:, :, :2].mean((0, 1)).argmax())   # 0: next, 1: previous
        accuracy = right.float().mean(0)
        rows.append([right.all(1).float().mean(), accuracy[heavier], accuracy[1 - heavier]])
    low, high = torch.tensor(rows).aminmax(dim=0)
    return ", ".join(f"{k} {a:.3f} to {b:.3f}" for k, a, b in
                     zip(("both right", "heavier", "lighter"), low.tolist(), high.tolist(), strict=True))


def summary_table(groups: dict, where) -> str:
    """A table, one row per condition (name -> list of (model, weights, right), one per seed, two answers):
    the number of seeds and, as min-max over seeds, the fraction with both answers right and the accuracy of
    the heavier and of the lighter item's answer (as :func:`summary`)."""
    import torch

    width = max(len("condition"), *(len(name) for name in groups))
    lines = [f"{'condition':{width}}  seeds   both right       heavier       lighter"]
    for name, group in groups.items():
        rows = []
        for _, weights, right in group:
            heavier = int(by_role(weights, where)[:, :, :2].mean((0, 1)).argmax())
            accuracy = right.float().mean(0)
            rows.append([right.all(1).float().mean(), accuracy[heavier], accuracy[1 - heavier]])
        low, high = torch.tensor(rows).aminmax(dim=0)
        cells = "  ".join(f"{a:.3f}-{b:.3f}" for a, b in zip(low.tolist(), high.tolist(), strict=True))
        lines.append(f"{name:{width}}  {len(group):5}  {cells}")
    return "\n".join(lines)


def range_table(values: dict, column: str) -> str:
    """A table, one row per condition (name -> one number per seed): the number of seeds and the min-max."""
    width = max(len("condition"), *(len(name) for name in values))
    lines = [f"{'condition':{width}}  seeds  {column}"]
    for name, v in values.items():
        v = [float(x) for x in v]
        lines.append(f"{name:{width}}  {len(v):5}  {min(v):.3f}-{max(v):.3f}")
    return "\n".join(lines)


def weight_gaps(groups: dict, where) -> str:
    """Per group of one-head models (name -> list of (model, weights, right), one per seed): the range over
    seeds of the mean weight on the lighter and on the heavier of the two answer items, and of the median
    over sequences of the gap between the two weights."""
    import torch

    lines = []
    for name, group in groups.items():
        w = torch.stack([by_role(r[1], where)[:, 0, :2] for r in group])      # (seeds, n, 2)
        mean = w.mean(1).sort(-1).values
        gap = (w[..., 0] - w[..., 1]).abs().median(1).values
        larger, smaller = w.max(-1).values.amin(1), w.min(-1).values.amax(1)      # (seeds,)
        lines.append(f"{name}: mean weights {mean[:, 0].min():.2f}-{mean[:, 0].max():.2f} and "
                     f"{mean[:, 1].min():.2f}-{mean[:, 1].max():.2f}; "
                     f"median gap {gap.min():.2f} to {gap.max():.2f};\n    per sequence, the larger weight "
                     f"at least {larger.min():.2f}-{larger.max():.2f}, the smaller at most "
                     f"{smaller.min():.2f}-{smaller.max():.2f}")
    return "\n".join(lines)


def silencing(models: Sequence, X, y, where) -> str:
    """Each two-head lookup model (one per seed) with each head's output replaced by zeros in turn: the range
    over seeds of each answer's accuracy on ``X`` (n, T, D_IN) against ``y`` (n, 2), heads named by the role
    (of the first two in ``where``, from :func:`role_positions`) they weight more, and how often the broken
    answer gives the other answer's digit instead."""
    import torch

    found = {}
    for model in models:
        with torch.no_grad():
            main = by_role(model(X)[1], where)[:, :, :2].mean(0).argmax(1)     # (heads,): 0 next, 1 previous
            for h, head in enumerate(model.attention.heads):
                hook = head.register_forward_hook(lambda _m, _i, out: (torch.zeros_like(out[0]), out[1]))
                answer = model(X)[0].argmax(-1)
                hook.remove()
                role = int(main[h])
                right = (answer == y).float().mean(0)
                swapped = (answer[:, role] == y[:, 1 - role]).float().mean()   # the other answer's digit
                found.setdefault(role, []).append(torch.cat([right, swapped[None]]))
    names = ("next", "previous")
    lines = []
    for role, rights in sorted(found.items()):
        r = torch.stack(rights)
        lines.append(f"head on the {names[role]} letter silenced, {len(r)} seeds: " + ", ".join(
            f"{names[a]} {r[:, a].min():.3f} to {r[:, a].max():.3f}" for a in (0, 1))
            + f";\n    its answer is the {names[1 - role]} digit on "
            + f"{r[:, 2].min():.3f} to {r[:, 2].max():.3f}")
    return "\n".join(lines)


def fit_linear_readout(readout, Z, y, iterations: int = 200) -> float:
    """Fit ``readout`` (an ``nn.Linear`` to answers x N_SYM logits) in place to the best it can do on
    features ``Z`` (n, d) for targets ``y`` (n, answers): cross-entropy minimised by L-BFGS on all n rows at
    once (full batch, strong Wolfe line search, ``iterations`` steps at most). Returns the final loss."""
    import torch
    from torch import nn

    from selfattention import tasks

    if Z.ndim != 2 or len(Z) != len(y):
        raise ValueError(f"Z must be (n, d) with one row per row of y, got Z {tuple(Z.shape)}, "
                         f"y {tuple(y.shape)}")
    Z, y = Z.detach(), y.reshape(len(y), -1)
    opt = torch.optim.LBFGS(readout.parameters(), max_iter=iterations, line_search_fn="strong_wolfe")

    def cross_entropy() -> torch.Tensor:
        return nn.functional.cross_entropy(readout(Z).view(-1, tasks.N_SYM), y.reshape(-1))

    def closure() -> torch.Tensor:
        opt.zero_grad()
        value = cross_entropy()
        value.backward()
        return value

    opt.step(closure)
    with torch.no_grad():
        return float(cross_entropy())


def best_linear_readout(model, data: tuple) -> tuple:
    """A copy of ``model`` (a ``tasks.ReadoutModel`` on a lookup task) with its attention frozen as trained
    and a fresh linear readout of the query token's output, fitted by :func:`fit_linear_readout` on the
    training sequences. ``data`` is (X_train, y_train, X_test, y_test). Returns, like lesson 08's ``run``,
    (the new model, its weights on X_test (n, heads, T, T), right (n, answers) booleans on X_test)."""
    import copy

    import torch
    from torch import nn

    from selfattention import tasks

    if not hasattr(model, "attention") or not hasattr(model, "readout"):
        raise ValueError("model must be a ReadoutModel with .attention and .readout, "
                         f"got {type(model).__name__}")
    X_train, y_train, X_test, y_test = data
    new = copy.deepcopy(model).requires_grad_(False)
    with torch.no_grad():
        Z = new.attention(X_train)[0][:, -1]                       # the query token's outputs (n, d)
    torch.manual_seed(0)                                           # the start; L-BFGS goes to the optimum
    new.readout = nn.Linear(Z.shape[1], y_train.reshape(len(y_train), -1).shape[1] * tasks.N_SYM)
    fit_linear_readout(new.readout, Z, y_train)
    with torch.no_grad():
        logits, weights = new(X_test)
    return new, weights, (logits.argmax(-1) == y_test).view(len(y_test), -1)


def binding_bars(X, index: int, weights: dict, where) -> tuple[Figure, list[Axes]]:
    """What a head hands on for one lookup sequence: the blend sum_j alpha_j x_j of the query token's weights
    (before W_V, which maps it linearly) over the 8 letter and 8 digit features, one panel per head.

    Inputs:
        X: (n, T, D_IN) lookup sequences; index: the sequence shown.
        weights: panel title -> (n, T) the query token's weights in one head.
        where: (n, R) from :func:`role_positions`; its first two columns the next and previous letter's items,
            whose letter and digit bars are drawn orange and green.
    Returns:
        the figure (WIDTH inches wide) and its panels.
    """
    import torch

    from selfattention import tasks

    x = X[index].float()
    colours = ["lightgray"] * 16
    for pos, colour in ((int(where[index, 0]), "tab:orange"), (int(where[index, 1]), "tab:green")):
        token = x[pos]
        colours[int(token[:8].argmax())] = colour
        colours[8 + int(token[8:16].argmax())] = colour
    fig, axes = plt.subplots(1, len(weights), figsize=(WIDTH, 4.2), squeeze=False, sharey=True,
                             layout="constrained")
    panels = list(axes[0])
    ticks = [*tasks.LETTERS, *(str(d) for d in range(8))]
    spots = [*range(8), *(9 + d for d in range(8))]                  # a gap between letters and digits
    for ax, (title, w) in zip(panels, weights.items(), strict=True):
        blend = torch.as_tensor(w[index]).float() @ x                 # (D_IN,)
        ax.bar(spots, blend[:16].numpy(), color=colours)
        ax.set_xticks(spots, ticks, fontsize=FONT - 4)
        ax.set_ylim(0, 1)
        ax.set_title(title, fontsize=FONT)
        ax.set_xlabel("letter features    digit features", fontsize=FONT - 2)
        ax.tick_params(axis="y", labelsize=FONT - 2)
    panels[0].set_ylabel("feature of the blend", fontsize=FONT)
    label = " ".join(tasks.token_labels(X[index]))
    fig.suptitle(f"{label}: the query's blend $\\sum_j \\alpha_j x_j$ (orange: next item, green: previous)",
                 fontsize=FONT)
    return fig, panels


def corner_picture(index: int, panels: dict) -> tuple[Figure, list[Axes]]:
    """Each digit of one lookup sequence as a point (its item's weight in head 1, in head 2; a digit absent
    from the sequence at (0, 0)), with the corners of the point set joined: one panel per model.

    Inputs:
        index: the sequence shown in each panel.
        panels: panel title -> (X (n, T, D_IN) lookup sequences, weights (n, heads, T, T) of a model of 1 or 2
            heads, where (n, R) from :func:`role_positions`, names of where's first columns: the targets,
            then "distractor"); a single head's points lie on the horizontal axis.
    Returns:
        the figure (WIDTH inches wide) and its panels.
    """
    from selfattention import headstudy, tasks

    fig, axes = plt.subplots(1, len(panels), figsize=(WIDTH, 5.2), squeeze=False, layout="constrained")
    for ax, (title, (X, weights, where, names)) in zip(axes[0], panels.items(), strict=True):
        digit = X[index, : tasks.N_ITEMS, 8:16].argmax(-1)
        pts = headstudy.digit_points(weights[index : index + 1], X[index : index + 1])[0]  # (8, 2)
        corner = np.array([headstudy.is_corner(pts[None], np.array([d]))[0] for d in range(8)])
        hull = pts[corner]
        if len(hull) > 2:
            c = hull.mean(0)
            hull = hull[np.argsort(np.arctan2(hull[:, 1] - c[1], hull[:, 0] - c[0]))]
            hull = np.vstack([hull, hull[:1]])
        ax.plot(hull[:, 0], hull[:, 1], color="gray", lw=1.5, zorder=1)
        ax.scatter(pts[:, 0], pts[:, 1], s=60, color="lightgray", edgecolor="black", zorder=2)
        for r, name in enumerate(names):
            d = int(digit[int(where[index, r])])
            colour = "tab:red" if name == "distractor" else ("tab:orange", "tab:green", "tab:blue")[r]
            ax.scatter(*pts[d], s=130, color=colour, edgecolor="black", zorder=3,
                       marker="o" if corner[d] else "X")
            ax.annotate(f"{name} ({d})", pts[d], xytext=(4, -22 if r % 2 == 0 else 12),
                        textcoords="offset points", fontsize=FONT - 4)
        ax.set_xlim(-0.05, 1.05)
        ax.set_ylim(-0.05, 1.05)
        ax.set_aspect("equal")
        ax.set_title(f"{title}: {' '.join(tasks.token_labels(X[index]))}", fontsize=FONT - 2)
        ax.set_xlabel("weight in head 1", fontsize=FONT - 2)
        ax.set_ylabel("weight in head 2" if weights.shape[1] > 1 else "(one head: 0)", fontsize=FONT - 2)
        ax.tick_params(labelsize=FONT - 4)
    fig.suptitle("each digit a point (gray: other digits; absent ones at 0, 0); "
                 "named: circle = corner, cross = not", fontsize=FONT)
    return fig, list(axes[0])
