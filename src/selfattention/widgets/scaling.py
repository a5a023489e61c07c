"""The widget of lesson 06: scores divided by a divisor c, for queries and keys of length d_k.

:func:`divided_scores` builds the figure once and returns the callback that ``ipywidgets.interact`` calls; a
change of a control only moves the histogram's and the bars' data and redraws that one figure
(:func:`selfattention.widgets.show`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.layout_engine import TightLayoutEngine

from . import set_heights, set_histogram, show

__all__ = ["divided_scores", "entropy", "explore_divisor"]

_SMALLEST_PT, _TITLE_PT = 15, 16
_SCORE_RANGE = 100.0  # the histogram's x-axis, fixed: scores beyond +-100 are counted at the edge


def entropy(weights: np.ndarray) -> float:
    """Entropy in nats of one row of softmax weights, shape (T,); 0 ln 0 counts as 0."""
    a = np.asarray(weights, dtype=float)
    if a.ndim != 1:
        raise ValueError(f"weights has shape {a.shape}; expected (T,), one query's weights")
    safe = np.where(a > 0, a, 1.0)  # ln 1 = 0 where a weight is 0
    return float(-np.sum(a * np.log(safe)) + 0.0)


def _draw(d_k: int, c: float, T: int, n_queries: int, d_v: int) -> tuple[np.ndarray, np.ndarray, float]:
    """The widget's numbers for one setting: scores (n_queries, T), the first query's weights (T,) and
    the norm of dL/domega for that query, by autograd."""
    rng = np.random.default_rng(d_k)  # the same vectors for a given d_k
    K, Q = rng.standard_normal((T, d_k)), rng.standard_normal((n_queries, d_k))
    V, y = rng.standard_normal((T, d_v)), rng.standard_normal(d_v)
    omega = Q @ K.T / c  # (n_queries, T)
    row = torch.tensor(omega[0], requires_grad=True)  # the first query's scores, (T,)
    weights = torch.softmax(row, dim=-1)
    (0.5 * ((weights @ torch.tensor(V) - torch.tensor(y)) ** 2).sum()).backward()
    return omega, weights.detach().numpy(), float(row.grad.norm())


def divided_scores(T: int = 16, n_queries: int = 500, d_v: int = 8) -> Callable[..., None]:
    """The callback ``explore(d_k=64, c=1.0, standard=False)`` and its figure, built once.

    For a given ``d_k`` it draws, from a generator seeded with ``d_k``, ``T`` keys and ``n_queries`` queries
    with unit-variance entries, values (T, d_v) and a target (d_v,). The scores are
    ``omega = q . k_j / c`` (``c = sqrt(d_k)`` when ``standard``). Left: a histogram of the scores of
    all the queries, with their standard deviation; right: the first query's weights. It prints the
    largest weight, the entropy and the norm of dL/domega for L = 0.5 |sum_j alpha_j v_j - y|^2.
    The figure is ``explore.figure``.
    """
    for name, value, least in (("T", T, 2), ("n_queries", n_queries, 1), ("d_v", d_v, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name} must be an integer of at least {least}, got {value!r}")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    plt.close(fig)  # shown by the widget only
    _, _, hist = axes[0].hist(np.zeros(1), bins=40, color="tab:purple")
    bars = axes[1].bar(range(T), np.zeros(T), color="tab:blue")
    for x in (-1, 1):  # the unit spread
        axes[0].axvline(x, color="k", lw=1, ls="--")
    # plain text, no $...$: mathtext would be laid out again on every redraw (about twice the time)
    axes[0].set_xlabel("score ω = q·k / c (dashed: ±1)", fontsize=_SMALLEST_PT)
    axes[0].set_ylabel("how often", fontsize=_SMALLEST_PT)
    axes[0].set_yticks([])
    axes[1].set(ylim=(0, 1), xticks=range(0, T, 3))
    axes[1].set_xlabel("key j", fontsize=_SMALLEST_PT)
    axes[1].set_ylabel("weight α", fontsize=_SMALLEST_PT)
    for ax in axes:
        ax.tick_params(labelsize=_SMALLEST_PT)
        ax.set_title(" ", fontsize=_TITLE_PT)
    TightLayoutEngine().execute(fig)  # laid out once; a redraw only changes data and titles

    def explore(d_k: int = 64, c: float = 1.0, standard: bool = False) -> None:
        if isinstance(d_k, bool) or not isinstance(d_k, (int, np.integer)) or d_k < 1:
            raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
        c = math.sqrt(d_k) if standard else float(c)
        if not c > 0:
            raise ValueError(f"c must be positive, got {c!r}")
        omega, alpha, grad = _draw(int(d_k), c, T, n_queries, d_v)
        # a fixed axis, so that a spread of 1 and one of 32 look different; bins over the scores' own range
        # (within the axis), so that a narrow spread still shows its shape
        reach = min(_SCORE_RANGE, max(1.0, float(np.abs(omega).max())))
        counts, edges = np.histogram(np.clip(omega, -_SCORE_RANGE, _SCORE_RANGE), bins=len(hist),
                                     range=(-reach, reach))
        set_histogram(hist, counts, edges)
        axes[0].set(xlim=(-_SCORE_RANGE, _SCORE_RANGE), ylim=(0, 1.05 * counts.max()))
        axes[0].set_title(f"scores of {n_queries} queries: std {omega.std():.2f}", fontsize=_TITLE_PT)
        set_heights(bars, alpha)
        axes[1].set_title(f"one query: largest weight {alpha.max():.3f}", fontsize=_TITLE_PT)
        show(fig)
        print(f"d_k = {d_k}, c = {c:.2f}: score std {omega.std():.2f}, largest weight {alpha.max():.3f}, "
              f"entropy {entropy(alpha):.3f} of ln T = {math.log(T):.3f}, |dL/domega| {grad:.1e}")

    explore.figure = fig  # type: ignore[attr-defined]  # for tests and for saving a picture
    return explore


def explore_divisor(d_ks: Sequence[int], T: int = 16) -> Any:
    """Show :func:`divided_scores`'s figure with its controls: a slider over ``d_ks`` (starting at 64 when
    it is one of them), a log slider for ``c`` from 0.1 to 100 and a box for ``c = sqrt(d_k)``. Returns
    what ``ipywidgets.interact`` returns."""
    import ipywidgets as widgets

    d_ks = list(d_ks)
    if not d_ks:
        raise ValueError("d_ks is empty; expected lengths such as [2, 4, ..., 1024]")
    return widgets.interact(
        divided_scores(T=T),
        d_k=widgets.SelectionSlider(options=d_ks, value=64 if 64 in d_ks else d_ks[0], description="d_k"),
        c=widgets.FloatLogSlider(value=1.0, base=10, min=-1, max=2, step=0.05, description="c"),
        standard=widgets.Checkbox(value=False, description="c = sqrt(d_k)"),
    )
