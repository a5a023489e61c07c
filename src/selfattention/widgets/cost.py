"""Lesson 10's widget: the weight one planted key keeps among T keys, for a chosen score margin.

The figure is built once; a slider move only changes the curves' and the marker's data, then
:func:`selfattention.widgets.show` draws it once.
"""

from __future__ import annotations

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import ArrayLike

from ..plots import cost as cost_plots
from . import show

__all__ = ["planted_weights", "dilution_explorer"]


def planted_weights(distractors: ArrayLike, lengths: ArrayLike, margin: float | ArrayLike) -> np.ndarray:
    """Softmax weight of a key with score ``margin`` when the other T - 1 keys have the first T - 1 scores of
    ``distractors`` (n,), for every T of ``lengths`` (m,) (each at most n + 1); ``margin`` is one number or
    one per length. Returns (m,) weights."""
    scores = np.asarray(distractors, dtype=float)
    lengths = np.asarray(lengths)
    if scores.ndim != 1 or lengths.ndim != 1 or lengths.min() < 1 or lengths.max() > len(scores) + 1:
        raise ValueError(f"distractors must be (n,) and lengths (m,) with 1 <= T <= n + 1; got shapes "
                         f"{scores.shape}, {lengths.shape} and T from {lengths.min()} to {lengths.max()}")
    top = max(float(np.max(margin)), float(scores.max()))               # subtract a maximum: no overflow
    totals = np.concatenate([[0.0], np.cumsum(np.exp(scores - top))])   # totals[t]: the first t distractors
    planted = np.exp(np.asarray(margin, dtype=float) - top)
    return planted / (planted + totals[lengths - 1])


def dilution_explorer(distractors: ArrayLike, *, margin: float = 5.0,
                      log2_T: int = 10) -> ipywidgets.interactive:
    """A widget: sliders for the planted key's score ``margin`` and for log2 of the number of keys T; the
    figure shows the planted key's weight against T for that margin (solid), for a margin that grows like
    ln(T - 1) from the same value at T = 16 (dashed), and a dot at the chosen T. ``distractors``: (n,) scores
    of the other keys, n + 1 >= 2**16. Returns the widget."""
    scores = np.asarray(distractors, dtype=float)
    if scores.ndim != 1 or len(scores) + 1 < 2 ** 16:
        raise ValueError(f"distractors must be (n,) with n >= {2 ** 16 - 1}, got shape {scores.shape}")
    lengths = np.unique(np.round(np.logspace(4, 16, 97, base=2)).astype(int))
    with plt.rc_context(cost_plots._RC):
        fig, ax = plt.subplots(figsize=(10, 5.4), layout="constrained")
        plt.close(fig)
        ax.set_title(" ", fontsize=cost_plots.FONT)  # room for the title each change writes
        fixed, = ax.loglog(lengths, np.ones(len(lengths)), lw=2.5, label="fixed margin")
        growing, = ax.loglog(lengths, np.ones(len(lengths)), "--", lw=2, label="margin + ln((T-1)/15)")
        dot, = ax.loglog([16], [1.0], "o", ms=12, color="black")
        ax.set_ylim(1e-5, 1.5)
        # plain tick labels: log axes otherwise typeset "10^k" with mathtext on every redraw
        ax.set_yticks([1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1], ["0.00001", "0.0001", "0.001", "0.01", "0.1", "1"])
        ax.set_xticks([16, 64, 256, 1024, 4096, 16384, 65536],
                      ["16", "64", "256", "1,024", "4,096", "16,384", "65,536"])
        ax.minorticks_off()
        ax.set_xlabel("number of keys T")
        ax.set_ylabel("weight of the planted key")
        ax.legend(loc="lower left")
        fig.canvas.draw()  # the first drawing is the slow one: done before the first change
        fig.set_layout_engine("none")  # keep the layout just computed: a redraw does not lay out again

    def update(margin: float, log2_T: int) -> None:
        T = 2 ** log2_T
        fixed.set_ydata(planted_weights(scores, lengths, margin))
        growing.set_ydata(planted_weights(scores, lengths, margin + np.log((lengths - 1) / 15)))
        w = float(planted_weights(scores, np.array([T]), margin)[0])
        dot.set_data([T], [w])
        ax.set_title(f"margin {margin:g}, T = {T:,}: planted key's weight {w:.3f}", fontsize=cost_plots.FONT)
        show(fig)
        print(f"T = {T:,}, margin {margin:g}: the planted key gets {w:.3f} of the weight; "
              f"the other {T - 1:,} keys share {1 - w:.3f}.")

    return ipywidgets.interactive(
        update,
        margin=ipywidgets.FloatSlider(value=margin, min=0.0, max=12.0, step=0.1, description="margin"),
        log2_T=ipywidgets.IntSlider(value=log2_T, min=4, max=16, step=1, description="log2 T"),
    )
