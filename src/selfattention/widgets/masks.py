"""Lesson 09's widget: one score matrix under a choice of masks and of ways to fill the masked scores.

The figure is built once; a change of the dropdowns only swaps the image's data and the squares' texts, then
:func:`selfattention.widgets.show` draws it once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np
import torch
from numpy.typing import ArrayLike

from ..core import softmax
from ..plots import masks as mask_plots
from . import show

__all__ = ["FILLS", "example_masks", "masked_weights", "mask_explorer", "token_labels"]

#: How the masked scores are filled, and which softmax then runs.
FILLS = ("-inf, then torch.softmax", "-1e9, then torch.softmax", "-inf, then sa.softmax",
         "lowered by 10, then torch.softmax")


def example_masks(T: int, pad: int = 2) -> dict[str, np.ndarray | None]:
    """Lesson 09's masks for one sequence of ``T`` tokens of which ``pad`` are padding: name -> (T, T) boolean
    mask (True = may attend), or None for no mask. "right padding" pads the last ``pad`` keys, "left padding"
    the first ``pad``; "causal + left padding" is both conditions at once (AND)."""
    if not isinstance(T, (int, np.integer)) or T < 1:
        raise ValueError(f"T must be a positive integer, got {T!r}")
    if not isinstance(pad, (int, np.integer)) or not 0 <= pad < T:
        raise ValueError(f"pad must be an integer in [0, T) = [0, {T}), got {pad!r}")
    causal = np.tril(np.ones((T, T), dtype=bool))
    left = np.broadcast_to(np.arange(T) >= pad, (T, T))
    return {"none": None, "causal": causal, "right padding": np.broadcast_to(np.arange(T) < T - pad, (T, T)),
            "left padding": left, "causal + left padding": causal & left}


def masked_weights(scores: ArrayLike, mask: ArrayLike | None, fill: str) -> np.ndarray:
    """(T_q, T_k) weights of (T_q, T_k) ``scores`` under a boolean ``mask`` (True = may attend; None: no
    mask), the masked scores filled as ``fill`` says (one of :data:`FILLS`). Rows with no allowed key come
    out NaN with ``-inf`` and torch.softmax, uniform with ``-1e9``, zeros with sa.softmax; a score only
    lowered by 10 (a soft mask) keeps a small weight on every masked key."""
    if fill not in FILLS:
        raise ValueError(f"fill is {fill!r}; expected one of {FILLS}")
    s = np.asarray(scores, dtype=float)
    if mask is None:
        mask = np.ones_like(s, dtype=bool)
    mask = np.asarray(mask)
    if mask.dtype != bool or mask.shape != s.shape:
        raise ValueError(f"mask must be a boolean array of the scores' shape {s.shape}, "
                         f"got dtype {mask.dtype} and shape {mask.shape}")
    if fill == FILLS[2]:
        return softmax(np.where(mask, s, -np.inf))
    if fill == FILLS[3]:
        filled = torch.from_numpy(np.where(mask, s, s - 10.0))
    else:
        value = float("-inf") if fill == FILLS[0] else -1e9
        filled = torch.from_numpy(s).masked_fill(torch.from_numpy(~mask), value)
    return torch.softmax(filled, dim=-1).numpy()


def token_labels(labels: Sequence[str], mask: ArrayLike | None) -> list[str]:
    """``labels`` with "<pad>" for every token that ``mask`` hides from every query (a padding key)."""
    if mask is None:
        return list(labels)
    hidden = ~np.asarray(mask, dtype=bool).any(axis=0)
    return ["<pad>" if hidden[j] else str(label) for j, label in enumerate(labels)]


def mask_explorer(scores: ArrayLike, labels: Sequence[str],
                  masks: Mapping[str, ArrayLike | None] | None = None, *, mask: str | None = None,
                  fill: str = FILLS[0]) -> ipywidgets.interactive:
    """A widget showing softmax weights of (T, T) ``scores`` (labels: the T tokens) under the masks of
    ``masks`` (name -> (T, T) boolean array or None; by default :func:`example_masks` with 2 padding tokens),
    with the fills of :data:`FILLS`; a token that the chosen mask hides from every query is labelled
    "<pad>". Prints how many weights are exactly 0 and how many rows are NaN. Returns
    the widget (display it, or leave it last in a cell)."""
    s = np.asarray(scores, dtype=float)
    if s.ndim != 2 or s.shape[0] != s.shape[1] or len(labels) != s.shape[0]:
        raise ValueError(f"scores must be (T, T) with one label per token, got shape {s.shape} and "
                         f"{len(labels)} labels")
    if masks is None:
        masks = example_masks(s.shape[0])
    names = list(masks)
    if not names:
        raise ValueError("masks is empty; expected at least one name -> (T, T) boolean mask (or None)")
    T = s.shape[0]
    with plt.rc_context(mask_plots._RC):
        fig, ax = plt.subplots(figsize=(8.5, 6.5), layout="constrained")
        plt.close(fig)
        texts = mask_plots.draw_weights(ax, np.zeros((T, T)), ["<pad>"] * T, title=" ")
        fig.colorbar(ax.images[0], ax=ax, shrink=0.8, label="attention weight")
        fig.canvas.draw()  # the first drawing is the slow one: done before the first change
        # the layout engine stays on: each drawing lays out again around its tick labels ("<pad>", turned 45
        # degrees, is longer than "x2"), so the key axis's label is never pushed off the bottom

    def update(mask: str, fill: str) -> None:
        w = masked_weights(s, masks[mask], fill)
        names = token_labels(labels, masks[mask])
        ax.set_yticks(range(T), names)
        ax.set_xticks(range(T), names, rotation=45, ha="right")
        ax.images[0].set_data(np.ma.masked_invalid(w))
        mask_plots.set_weight_texts(texts, w)
        ax.set_title(f"mask: {mask}; fill: {fill}", fontsize=mask_plots.FONT)
        show(fig)
        nan_rows = int(np.isnan(w).all(axis=-1).sum())
        print(f"{int((w == 0).sum())} of {w.size} weights are exactly 0; {nan_rows} rows are NaN.")

    return ipywidgets.interactive(
        update,
        mask=ipywidgets.Dropdown(options=names, value=mask or names[0], description="mask"),
        fill=ipywidgets.Dropdown(options=list(FILLS), value=fill, description="fill",
                                 layout=ipywidgets.Layout(width="22em")),
    )
