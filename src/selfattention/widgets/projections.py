"""Lesson 04's widget: design one query by hand and watch where its attention goes.

The figure (one bar per key: its weight) is built once; a move of a slider changes the bars' heights
and the texts, and :func:`selfattention.widgets.show` draws it once.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import ArrayLike

from ..plots.projections import legible
from . import set_heights, show

__all__ = ["WIDGET_PX", "query_designer"]

WIDGET_PX = 900  # a widget's figure shares its slide with the controls: drawn about this wide


def _fmt(v: np.ndarray) -> str:
    return "[" + ", ".join(f"{x:g}" for x in np.round(v, 2)) + "]"


def query_designer(K: ArrayLike, V: ArrayLike, words: Sequence[str], q0: ArrayLike,
                   axes: Sequence[str], values: Sequence[str], limit: float = 4.0,
                   step: float = 0.5) -> widgets.interactive:
    """Sliders for the d_k numbers of one query q; shows softmax(q K^T) as bars over the words and
    z = sum_j alpha_j v_j.

    Inputs: K (T, d_k), V (T, d_v), words (T,), q0 (d_k,) the starting query; axes: the d_k names of the
    query/key axes (the sliders' labels); values: the d_v names of the value axes.
    """
    K, V, q0 = np.asarray(K, dtype=float), np.asarray(V, dtype=float), np.asarray(q0, dtype=float)
    T, d_k = K.shape
    if (q0.shape != (d_k,) or len(axes) != d_k or V.shape[0] != T or len(words) != T
            or len(values) != V.shape[1]):
        raise ValueError(f"K is {K.shape}, V {V.shape}, q0 {q0.shape}, with {len(words)} words, {len(axes)} "
                         f"axes and {len(values)} value names; expected K (T, d_k), V (T, d_v), q0 (d_k,), "
                         f"T words, d_k axes, d_v value names")
    fig, ax = plt.subplots(figsize=(11, 4.2), layout="constrained")
    plt.close(fig)  # shown by widgets.show only, once per move
    bars = ax.bar(range(T), np.zeros(T), color="tab:blue")
    ax.set(ylim=(0, 1.1), ylabel=r"weight $\alpha_{ij}$",
           xticks=range(T), xticklabels=[f"{w}\n$k$={_fmt(k)}" for w, k in zip(words, K, strict=True)])
    ax.axhline(1 / T, color="0.5", ls=":", lw=1)
    ax.set_xlim(-0.6, T + 0.2)
    ax.text(T - 0.45, 1 / T, "1/T", color="0.4", ha="left", va="center")
    labels = [ax.text(j, 0, "", ha="center", va="bottom") for j in range(T)]
    title = ax.set_title(" ")
    legible(fig, shown_px=WIDGET_PX)

    def draw(**q_parts: float) -> None:
        q = np.array([q_parts[name] for name in axes])
        scores = K @ q
        e = np.exp(scores - scores.max())
        alpha = e / e.sum()
        set_heights(bars, alpha)
        for j, text in enumerate(labels):
            text.set_position((j, alpha[j] + 0.02))
            text.set_text(f"{alpha[j]:.2f}")
        title.set_text(f"scores $q \\cdot k_j$ = {_fmt(scores)}")
        show(fig)
        z = alpha @ V
        print(f"q = {_fmt(q)}: z = sum_j alpha_j v_j = {_fmt(z)} ({', '.join(values)})")

    sliders = {name: widgets.FloatSlider(value=float(q0[i]), min=-limit, max=limit, step=step,
                                         description=name, continuous_update=False)
               for i, name in enumerate(axes)}
    return widgets.interactive(draw, **sliders)
