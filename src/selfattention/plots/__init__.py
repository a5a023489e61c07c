"""Pictures the lessons reuse: attention heatmaps and 2-D vector diagrams.

The figures of one lesson or topic live in a module of this package named for the topic (for example
``selfattention.plots.embeddings``), imported by the lessons that draw them; this module holds the ones
several lessons share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from numpy.typing import ArrayLike

__all__ = ["heatmap", "heatmaps", "vectors_2d"]


def heatmap(
    weights: ArrayLike,
    labels: Sequence[str] | None = None,
    *,
    key_labels: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    annotate: bool | None = None,
    cmap: str = "Blues",
    vmax: float | None = None,
) -> Axes:
    """Draw a (T_q, T_k) attention matrix: rows are queries, columns are keys.

    Inputs:
        weights: (T_q, T_k) array (a torch tensor is accepted).
        labels: T_q query tokens (also used for the keys unless ``key_labels`` is given).
        annotate: write each weight in its square (default: when T_k <= 8).
        vmax: the weight drawn darkest (default: the largest weight); pass 1.0 to compare
            maps drawn side by side or at different training steps on one colour scale.
    Returns:
        the matplotlib Axes drawn on.
    """
    if hasattr(weights, "detach"):
        weights = weights.detach().cpu().numpy()
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2:
        raise ValueError(f"weights must be a (T_q, T_k) matrix, got shape {w.shape}")
    if ax is None:
        _, ax = plt.subplots(figsize=(1.0 + 0.55 * w.shape[1], 0.8 + 0.5 * w.shape[0]))
    top = max(1e-12, float(w.max()) if vmax is None else float(vmax))
    ax.imshow(w, cmap=cmap, vmin=0.0, vmax=top)
    keys = key_labels if key_labels is not None else labels
    if labels is not None:
        ax.set_yticks(range(w.shape[0]), labels)
    if keys is not None:
        ax.set_xticks(range(w.shape[1]), keys, rotation=45, ha="right")
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending)")
    if annotate is None:
        annotate = w.shape[1] <= 8
    if annotate:
        threshold = 0.6 * top
        for (i, j), v in np.ndenumerate(w):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8,
                    color="white" if v > threshold else "black")
    if title:
        ax.set_title(title)
    return ax


def heatmaps(
    matrices: Sequence[ArrayLike],
    titles: Sequence[str],
    labels: Sequence[str] | None = None,
    *,
    key_labels: Sequence[str] | None = None,
    vmax: float | None = None,
    annotate: bool | None = None,
    cmap: str = "Blues",
    size: float = 3.6,
) -> tuple[plt.Figure, list[Axes]]:
    """Draw attention matrices side by side on ONE colour scale, with one colour bar.

    Maps drawn with their own scale each show a nearly flat matrix with full contrast; sharing ``vmin=0`` and
    one ``vmax`` lets the eye compare them.

    Inputs:
        matrices: n arrays of shape (T_q, T_k) (torch tensors accepted); titles: n titles.
        labels, key_labels: as in :func:`heatmap`.
        vmax: the weight drawn darkest in every panel (default: the largest weight of all the matrices).
        size: the width of one panel in inches.
    Returns:
        the figure and its n panels' Axes.
    """
    arrays = [np.asarray(m.detach().cpu().numpy() if hasattr(m, "detach") else m, dtype=float)
              for m in matrices]
    if not arrays or len(arrays) != len(titles):
        raise ValueError(f"matrices has {len(arrays)} entries and titles {len(titles)}; "
                         "expected one title per matrix, at least one matrix")
    top = float(vmax) if vmax is not None else max(float(a.max()) for a in arrays)
    rows = max(a.shape[0] for a in arrays)
    fig, axes = plt.subplots(1, len(arrays), figsize=(size * len(arrays) + 0.8, 0.9 + 0.45 * rows),
                             squeeze=False, layout="constrained")
    panels = list(axes[0])
    for i, (a, ax, title) in enumerate(zip(arrays, panels, titles, strict=True)):
        heatmap(a, labels, key_labels=key_labels, ax=ax, title=title, annotate=annotate, cmap=cmap,
                vmax=top)
        if i:
            ax.set_ylabel("")
    fig.colorbar(panels[-1].images[0], ax=panels, shrink=0.8, label="attention weight")
    return fig, panels


def vectors_2d(
    vectors: Mapping[str, ArrayLike],
    *,
    ax: Axes | None = None,
    colors: Mapping[str, str] | None = None,
    title: str | None = None,
) -> Axes:
    """Draw named 2-D vectors as arrows from the origin, each labelled at its tip."""
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4.5))
    pts = []
    for name, v in vectors.items():
        v = np.asarray(v, dtype=float)
        if v.shape != (2,):
            raise ValueError(f"vector {name!r} must have shape (2,), got {v.shape}")
        color = (colors or {}).get(name, "tab:blue")
        ax.annotate("", xy=v, xytext=(0, 0), arrowprops={"arrowstyle": "->", "color": color, "lw": 2})
        ax.text(v[0], v[1], f" {name}", color=color, fontsize=10, va="bottom")
        pts.append(v)
    lim = 1.15 * max(1e-9, float(np.abs(np.array(pts)).max()))
    ax.set_xlim(min(0.0, -0.1 * lim), lim)
    ax.set_ylim(min(0.0, -0.1 * lim), lim)
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title)
    return ax
