"""Figures of lesson 10 (cost and memory): how far a gradient reaches (an RNN against one attention layer),
measured memory and time against the sequence length, and the weight a planted key keeps as keys are added.

Every figure is drawn 11 inches wide with text of at least 15 points (at least 20 pixels on a 1280-pixel
slide).
Curves measured over several seeds or draws show their median (or mean) as a line and their range as a band.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

__all__ = ["FONT", "dependence_curves", "memory_and_time", "dilution_curves"]

FONT = 15
_RC = {"font.size": FONT, "axes.titlesize": FONT + 1, "axes.labelsize": FONT, "xtick.labelsize": FONT,
       "ytick.labelsize": FONT, "legend.fontsize": FONT - 1}


def _runs(name: str, runs: ArrayLike, n: int) -> np.ndarray:
    arr = np.asarray(runs, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != n:
        raise ValueError(f"{name} must be (runs, {n}): one row per seed or draw, got shape {arr.shape}")
    return arr


def dependence_curves(distance: ArrayLike, curves: Mapping[str, ArrayLike]) -> Figure:
    """Semilog plot of how much the last output depends on the token ``distance`` steps back.

    Inputs:
        distance: (n,) distances in tokens.
        curves: label -> (seeds, n) dependences, relative to the dependence on the previous token.
    Draws each label's median over the seeds as a line and its range (min to max) as a band.
    """
    distance = np.asarray(distance, dtype=float)
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(11, 5.2), layout="constrained")
        for label, runs in curves.items():
            runs = _runs(label, runs, len(distance))
            line, = ax.semilogy(distance, np.median(runs, axis=0), lw=2.5, label=label)
            ax.fill_between(distance, runs.min(axis=0), runs.max(axis=0), color=line.get_color(), alpha=0.2)
        ax.axhline(1.0, color="black", lw=1, ls=":")
        ax.set_xlabel("distance from the last token (steps)")
        ax.set_ylabel("dependence / dependence\non the previous token")
        ax.set_title(f"How much the last output depends on an earlier token ({len(runs)} seeds each)")
        ax.legend(loc="lower left", ncol=2)
    return fig


def memory_and_time(sizes: ArrayLike, memory_mib: Mapping[str, ArrayLike],
                    ns_per_score: ArrayLike | None = None) -> Figure:
    """Measured cost against the sequence length T (log axis): peak memory in MiB (log-log; one line per label
    of ``memory_mib``, each (n,)) and, when ``ns_per_score`` (n,) is given, a second panel with the measured
    time per score in nanoseconds."""
    sizes = np.asarray(sizes, dtype=float)
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(1, 1 if ns_per_score is None else 2, figsize=(11, 4.8), layout="constrained",
                                 squeeze=False)
        left = axes[0][0]
        for (label, mib), marker in zip(memory_mib.items(), "os^v", strict=False):
            mib = np.asarray(mib, dtype=float)
            slope = np.polyfit(np.log(sizes[-3:]), np.log(mib[-3:]), 1)[0]
            left.loglog(sizes, mib, marker + "-", lw=2, label=f"{label}: slope {slope:.1f}")
        left.set_ylabel("peak memory (MiB)")
        left.set_title("Memory")
        left.legend(loc="upper left")
        if ns_per_score is not None:
            right = axes[0][1]
            right.semilogx(sizes, np.asarray(ns_per_score, dtype=float), "o-", lw=2, color="tab:red")
            right.set_ylim(bottom=0)
            right.set_ylabel("time / T² (ns per score)")
            right.set_title("Time per score, one thread")
        for ax in axes[0]:
            ax.set_xticks(sizes, [f"{int(t)}" for t in sizes], rotation=45)
            ax.minorticks_off()
            ax.set_xlabel("sequence length T")
    return fig


def dilution_curves(lengths: ArrayLike, weights: Mapping[str, ArrayLike],
                    predicted: Mapping[str, ArrayLike] | None = None) -> Figure:
    """Log-log plot of the weight a planted key gets among T keys.

    Inputs:
        lengths: (n,) numbers of keys T.
        weights: label -> (draws, n) measured weights; drawn as the mean (line and dots) and the range (band).
        predicted: label -> (n,) a formula's prediction, drawn dashed in black.
    """
    lengths = np.asarray(lengths, dtype=float)
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(11, 5.0), layout="constrained")
        for label, runs in weights.items():
            runs = _runs(label, runs, len(lengths))
            line, = ax.loglog(lengths, runs.mean(axis=0), "o-", lw=2.5, label=f"{label} ({len(runs)} draws)")
            ax.fill_between(lengths, runs.min(axis=0), runs.max(axis=0), color=line.get_color(), alpha=0.25)
        for label, values in (predicted or {}).items():
            ax.loglog(lengths, np.asarray(values, dtype=float), "k--", lw=1.5, label=label)
        ax.set_xlabel("number of keys T")
        ax.set_ylabel("weight of the planted key")
        ax.set_title("One relevant key among T: its weight")
        ax.legend(loc="lower left")
    return fig
