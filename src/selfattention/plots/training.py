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
                    chance: Mapping[str, float] | None = None,
                    losses: Mapping[str, Sequence[Sequence[float]]] | None = None,
                    loss_levels: Mapping[str, float] | None = None) -> Figure:
    """Held-out accuracy against training step: one colour per model, one line per random start; with
    ``losses``, a first panel of held-out loss against the same steps.

    Inputs: runs maps a model's name to its runs, each a list of checkpoints ``(step, accuracy, _)`` as
    ``selfattention.tasks.train`` returns them; chance maps a label to a level drawn as a dotted line.
    losses (optional) maps the same names to each run's held-out loss at each checkpoint; loss_levels maps
    a label to a loss level drawn as a dotted line.
    """
    if not runs:
        raise ValueError("runs is empty; expected {model name: [checkpoints of each run]}")
    if losses is not None and set(losses) != set(runs):
        raise ValueError(f"losses has models {sorted(losses)}; expected the models of runs, {sorted(runs)}")
    if losses is None:
        fig, ax = plt.subplots(figsize=(12, 4.4), layout="constrained")
        axes = [ax]
    else:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), layout="constrained")
    ax = axes[-1]
    for colour, (name, histories) in zip(COLOURS, runs.items(), strict=False):
        if not histories:
            raise ValueError(f"runs[{name!r}] has no run")
        for k, history in enumerate(histories):
            steps = [c[0] for c in history]
            acc = [c[1] for c in history]
            label = f"{name} ({len(histories)} starts)" if k == 0 else None
            ax.plot(steps, acc, color=colour, alpha=0.8, lw=2, label=label)
            if losses is not None:
                axes[0].plot(steps, losses[name][k], color=colour, alpha=0.8, lw=2)
    for k, (label, level) in enumerate((chance or {}).items()):
        ax.axhline(level, color="0.4", ls=":" if k == 0 else "--", lw=1.5, label=label)
    ax.set(xlabel="training step", ylabel="held-out accuracy", ylim=(-0.02, 1.05))
    if losses is None:
        ax.legend(loc="center right")
    else:
        levels = sorted((loss_levels or {}).items(), key=lambda item: -item[1])
        for k, (label, level) in enumerate(levels):   # the highest label above its line, the others below
            axes[0].axhline(level, color="0.4", ls=":", lw=1.5)
            axes[0].annotate(label, (0.98, level), xycoords=("axes fraction", "data"), ha="right",
                             va="bottom" if k == 0 else "top", xytext=(0, 3 if k == 0 else -3),
                             textcoords="offset points")
        top = max([level for _, level in levels] + [max(max(v) for runs_ in losses.values() for v in runs_)])
        axes[0].set(xlabel="training step", ylabel="held-out loss", ylim=(0, 1.15 * top))
        fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2)
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
         "item's letter", "query letter", "score"),
        (axes[1], logits, [*letters, *digits, "flag"], list(digits), "W_V then readout", "digit logit",
         "input feature", "added to the logit"),
    )
    for ax, mat, rows, cols, title, xlabel, ylabel, bar in panels:
        lim = float(np.abs(mat).max()) or 1.0
        image = ax.imshow(mat, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
        fig.colorbar(image, ax=ax, shrink=0.85, label=bar)
        ax.set(xticks=range(len(cols)), xticklabels=cols, yticks=range(len(rows)), yticklabels=rows,
               title=title, xlabel=xlabel, ylabel=ylabel)
    return legible(fig)
