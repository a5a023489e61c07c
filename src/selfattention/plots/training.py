"""Lesson 05's figures (training attention): held-out accuracy during training, and what the trained
matrices hold. Text sizes follow :func:`selfattention.plots.projections.legible` (legible on a slide)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from .projections import legible

__all__ = ["accuracy_curves", "learned_matrices"]

COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")


def accuracy_curves(runs: Mapping[str, Sequence[Sequence[tuple[int, float, Any]]]],
                    chance: Mapping[str, float] | None = None) -> Figure:
    """Held-out accuracy against training step: one colour per model, one line per random start.

    Inputs: runs maps a model's name to its runs, each a list of checkpoints ``(step, accuracy, _)`` as
    ``selfattention.tasks.train`` returns them; chance maps a label to a level drawn as a dotted line.
    """
    if not runs:
        raise ValueError("runs is empty; expected {model name: [checkpoints of each run]}")
    fig, ax = plt.subplots(figsize=(12, 4.4), layout="constrained")
    for colour, (name, histories) in zip(COLOURS, runs.items(), strict=False):
        if not histories:
            raise ValueError(f"runs[{name!r}] has no run")
        for k, history in enumerate(histories):
            steps = [c[0] for c in history]
            acc = [c[1] for c in history]
            label = f"{name} ({len(histories)} starts)" if k == 0 else None
            ax.plot(steps, acc, color=colour, alpha=0.8, lw=2, label=label)
    for k, (label, level) in enumerate((chance or {}).items()):
        ax.axhline(level, color="0.4", ls=":" if k == 0 else "--", lw=1.5, label=label)
    ax.set(xlabel="training step", ylabel="held-out accuracy", ylim=(-0.02, 1.05))
    ax.legend(loc="center right")
    return legible(fig)


def learned_matrices(letter_scores: ArrayLike, to_logits: ArrayLike, letters: Sequence[str],
                     digits: Sequence[str]) -> Figure:
    """Two maps on diverging colour scales centred at 0.

    Inputs: letter_scores (n_letters, n_letters): the score a query letter (rows) gives an item's letter
    (columns); to_logits (n_features, n_digits): how much each input feature, through W_V and the readout,
    raises each digit's logit (rows: the letters, the digits, the query flag).
    """
    scores, logits = np.asarray(letter_scores, dtype=float), np.asarray(to_logits, dtype=float)
    n, d = len(letters), len(digits)
    if scores.shape != (n, n) or logits.shape != (2 * n + 1, d):
        raise ValueError(f"letter_scores is {scores.shape} and to_logits {logits.shape}; expected ({n}, {n}) "
                         f"and ({2 * n + 1}, {d}) for {n} letters and {d} digits")
    fig, axes = plt.subplots(1, 2, figsize=(12, 6.2), layout="constrained", width_ratios=(1, 1))
    panels = (
        (axes[0], scores, [f"?{c}" for c in letters], list(letters), "scores: query letter vs item letter",
         "item's letter"),
        (axes[1], logits, [*letters, *digits, "flag"], list(digits), "W_V then readout", "digit logit"),
    )
    for ax, mat, rows, cols, title, xlabel in panels:
        lim = float(np.abs(mat).max()) or 1.0
        image = ax.imshow(mat, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
        fig.colorbar(image, ax=ax, shrink=0.85)
        ax.set(xticks=range(len(cols)), xticklabels=cols, yticks=range(len(rows)), yticklabels=rows,
               title=title, xlabel=xlabel)
    return legible(fig)
