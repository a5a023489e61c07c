"""Figures and tables of lesson 06 (scaling by 1/sqrt(d_k)): score variance, softmax saturation, training.

Every figure is 12 inches wide with text of at least 15 pt, so that on a slide 1280 px wide (the figure drawn
about 1200 px wide, 100 px an inch) its smallest text is about 21 px. The three divisors of the lesson are
drawn in the same colours everywhere: none (red), sqrt(d_k) (blue), d_k (gray).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["WIDTH", "SMALLEST_PT", "STYLE", "score_variance", "saturation", "measure_saturation", "training",
           "training_table", "control_table"]

#: Width of every figure, in inches.
WIDTH = 12.0
#: The smallest font size used, in points (tick labels, legends).
SMALLEST_PT = 15
_LABEL_PT, _TITLE_PT = 16, 17

#: divisor name -> (colour, label): the divisors the lesson compares.
STYLE: dict[str, tuple[str, str]] = {
    "none": ("tab:red", "no divisor"),
    "sqrt(d_k)": ("tab:blue", r"divide by $\sqrt{d_k}$"),
    "d_k": ("tab:gray", r"divide by $d_k$"),
}


def _style(name: str) -> tuple[str, str]:
    if name not in STYLE:
        raise ValueError(f"divisor {name!r} is not one of {sorted(STYLE)}")
    return STYLE[name]


def _finish(ax: Axes, title: str, xlabel: str, ylabel: str) -> None:
    ax.set_title(title, fontsize=_TITLE_PT)
    ax.set_xlabel(xlabel, fontsize=_LABEL_PT)
    ax.set_ylabel(ylabel, fontsize=_LABEL_PT)
    ax.tick_params(which="both", labelsize=SMALLEST_PT)
    ax.grid(alpha=0.3)


def _log2_axis(ax: Axes, d_ks: Sequence[int]) -> None:
    ax.set_xscale("log", base=2)
    shown = list(d_ks) if len(d_ks) <= 6 else list(d_ks)[::3]
    ax.set_xticks(shown, [str(d) for d in shown])
    ax.minorticks_off()


def _values(values: Sequence[float], d_ks: Sequence[int], name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.shape != (len(d_ks),):
        raise ValueError(f"{name} has shape {arr.shape}; expected ({len(d_ks)},), one value per d_k")
    return arr


def score_variance(d_ks: Sequence[int], variances: Sequence[float]) -> Figure:
    """The variance of q.k against d_k, before and after dividing by sqrt(d_k), on log-log axes.

    Inputs:
        d_ks: n lengths of the query and key vectors.
        variances: (n,) measured variances of q.k (unscaled), one per d_k.
    Returns:
        the figure (one panel).
    """
    var = _values(variances, d_ks, "variances")
    d = np.asarray(d_ks, dtype=float)
    fig, ax = plt.subplots(figsize=(WIDTH, 4.4), layout="constrained")
    ax.plot(d, d, "k--", lw=1.2, label=r"the line Var $= d_k$")
    ax.plot(d, var, "o", ms=9, color=STYLE["none"][0], label=r"Var$(q\cdot k)$, measured")
    ax.plot(d, var / d, "s", ms=9, color=STYLE["sqrt(d_k)"][0], label=r"Var$(q\cdot k/\sqrt{d_k})$, measured")
    ax.set_yscale("log")
    _log2_axis(ax, d_ks)
    _finish(ax, "Scores of random vectors with unit-variance entries", r"$d_k$", "variance of the score")
    ax.legend(fontsize=SMALLEST_PT, loc="upper left")
    return fig


_MEASURES = (
    ("entropy", "Entropy of the weights", r"mean entropy (natural log)"),
    ("largest weight", "Weight of the top key", "mean largest weight"),
    ("|dL/domega|", r"Gradient to $\omega$ (—), $q$ (- -)", "median gradient norm"),
)


def saturation(d_ks: Sequence[int], measures: Mapping[str, Mapping[str, Sequence[float]]], T: int) -> Figure:
    """Three panels against d_k, one line per divisor: mean entropy, mean largest weight, median gradient
    (reaching the scores, solid; reaching the query, dashed, when the measures have "|dL/dq|").

    Inputs:
        d_ks: n lengths of the query and key vectors.
        measures: divisor name ("none", "sqrt(d_k)", "d_k") -> {"entropy", "largest weight",
            "|dL/domega|"} (and optionally "|dL/dq|") -> (n,) values, one per d_k.
        T: keys per query (the uniform weights' entropy ln T and largest weight 1/T are drawn dashed).
    Returns:
        the figure.
    """
    if T < 2:
        raise ValueError(f"T must be at least 2 keys, got {T!r}")
    fig, axes = plt.subplots(1, 3, figsize=(WIDTH, 4.6), layout="constrained")
    for name, values in measures.items():
        color, label = _style(name)
        for ax, (key, _, _) in zip(axes, _MEASURES, strict=True):
            if key not in values:
                expected = [m[0] for m in _MEASURES]
                raise ValueError(f"measures[{name!r}] has no {key!r}; expected the keys {expected}")
            ax.plot(d_ks, _values(values[key], d_ks, f"measures[{name!r}][{key!r}]"), "o-", color=color,
                    label=label)
        if "|dL/dq|" in values:
            axes[2].plot(d_ks, _values(values["|dL/dq|"], d_ks, f"measures[{name!r}]['|dL/dq|']"), "x--",
                         color=color, ms=9)
    for ax, level in ((axes[0], np.log(T)), (axes[1], 1 / T)):  # what uniform weights give
        ax.axhline(level, color="k", ls="--", lw=1.2)
        ax.annotate("uniform", (0.97, level), xycoords=("axes fraction", "data"), xytext=(0, 6),
                    textcoords="offset points", ha="right", va="bottom", fontsize=SMALLEST_PT)
    axes[0].set_ylim(0, np.log(T) * 1.25)  # room for the label under the title
    axes[2].set_yscale("log")
    for ax, (_, title, ylabel) in zip(axes, _MEASURES, strict=True):
        _log2_axis(ax, d_ks)
        _finish(ax, title, r"$d_k$", ylabel)
    axes[1].legend(fontsize=SMALLEST_PT, loc="lower right", bbox_to_anchor=(1, 0.26))  # the divisors
    if any("|dL/dq|" in values for values in measures.values()):
        styles = [plt.Line2D([], [], color="k", marker="o", ls="-"),
                  plt.Line2D([], [], color="k", marker="x", ls="--", ms=9)]
        axes[2].legend(styles, [r"$\partial L/\partial\omega$", r"$\partial L/\partial q$"],
                       fontsize=SMALLEST_PT, loc="lower left")
    return fig


def measure_saturation(d_ks: Sequence[int], divisors: Mapping[str, Callable[[int], float]], T: int,
                       n: int = 500, seed: int = 3) -> dict[str, dict[str, list[float]]]:
    """Section 3's measurement: for each d_k, ``n`` random queries against ``T`` random keys (entries
    N(0, 1)), scores divided by each divisor, a loss L = 0.5 ||sum_j alpha_j v_j - y||^2
    with random values and target.

    Returns name -> {"entropy": mean entropy of the weights, "largest weight": its mean, "|dL/domega|" and
    "|dL/dq|": the median over the queries of the gradient's length (autograd)}, one entry per d_k.
    """
    import torch

    rng = np.random.default_rng(seed)
    sat: dict[str, dict[str, list[float]]] = {
        name: {"entropy": [], "largest weight": [], "|dL/domega|": [], "|dL/dq|": []} for name in divisors}
    for d_k in d_ks:
        q, K = torch.tensor(rng.standard_normal((n, 1, d_k))), torch.tensor(rng.standard_normal((n, T, d_k)))
        V, y = torch.tensor(rng.standard_normal((n, T, 8))), torch.tensor(rng.standard_normal((n, 1, 8)))
        for name, divisor in divisors.items():
            q.grad = None
            omega = q.requires_grad_() @ K.transpose(1, 2) / divisor(d_k)
            omega.retain_grad()
            alpha = torch.softmax(omega, dim=-1)
            (0.5 * ((alpha @ V - y) ** 2).sum()).backward()
            entropy = -(alpha * alpha.clamp_min(1e-300).log()).sum(-1)  # 0 ln 0 counts as 0
            for key, value in (("entropy", entropy.mean()), ("largest weight", alpha.max(-1).values.mean()),
                               ("|dL/domega|", omega.grad.norm(dim=-1).median()),
                               ("|dL/dq|", q.grad.norm(dim=-1).median())):
                sat[name][key].append(value.item())
    return sat


def training(
    runs: Mapping[tuple[str, int, int], Sequence[tuple[int, float, float]]],
    d_ks: Sequence[int],
    seeds: Sequence[int],
    d_k: int,
) -> Figure:
    """Training runs of the lookup task, one colour per divisor.

    Inputs:
        runs: (divisor name, d_k, seed) -> checkpoints ``(step, held-out accuracy, score spread)``, as
            ``selfattention.tasks.train`` returns them with a snapshot that measures the spread.
        d_ks: the lengths trained; seeds: the seeds trained.
        d_k: the length whose runs the middle and right panels show, step by step.
    Returns:
        the figure: final accuracy of every run against d_k; accuracy and score spread against the step
        at ``d_k`` (one thin line per seed).
    """
    names = list(dict.fromkeys(name for name, _, _ in runs))
    if d_k not in d_ks:
        raise ValueError(f"d_k={d_k!r} is not one of the trained lengths {list(d_ks)}")
    fig, axes = plt.subplots(1, 3, figsize=(WIDTH, 5.0), layout="constrained")
    offsets = np.linspace(-0.15, 0.15, len(names))  # side by side, so that no dot hides another
    for name, offset in zip(names, offsets, strict=True):
        color, label = _style(name)
        for d in d_ks:
            for seed in seeds:
                if (name, d, seed) not in runs:
                    raise ValueError(f"runs has no entry {(name, d, seed)!r}")
            finals = [runs[name, d, seed][-1][1] for seed in seeds]
            axes[0].plot(np.full(len(finals), d * 2.0 ** offset), finals, "o", color=color, alpha=0.6, ms=7,
                         label=label if d == d_ks[0] else None)
        for seed in seeds:
            steps, accuracy, spread = zip(*runs[name, d_k, seed], strict=True)
            axes[1].plot(steps, accuracy, color=color, lw=1.5, alpha=0.7,
                         label=label if seed == seeds[0] else None)
            axes[2].plot(steps, spread, color=color, lw=1.5, alpha=0.7)
    _log2_axis(axes[0], d_ks)
    _finish(axes[0], f"After training ({len(seeds)} seeds)", r"$d_k$", "held-out accuracy")
    _finish(axes[1], rf"Accuracy, $d_k = {d_k}$", "step", "held-out accuracy")
    axes[2].set_yscale("log")
    _finish(axes[2], rf"Score spread, $d_k = {d_k}$", "step", "std of the scores")
    for ax in axes[:2]:
        ax.set_ylim(0, 1.05)
    fig.legend(*axes[1].get_legend_handles_labels(), loc="outside lower center", ncol=3, fontsize=SMALLEST_PT)
    return fig


def training_table(runs: Mapping[tuple[str, int, int], Sequence[tuple[int, float, float]]],
                   d_ks: Sequence[int], seeds: Sequence[int]) -> None:
    """Print, per divisor and d_k, the final accuracy over the seeds (mean, range, how many at 1.0) and the
    mean spread of the scores at steps 0 and 20 (the second and third checkpoints of ``every=10``), then the
    growth of that spread at the largest d_k over the smallest, measured and as predicted (d_k / divisor).

    Inputs: ``runs`` as for :func:`training`; checkpoints every 10 steps.
    """
    divisors = {"none": lambda d: 1.0, "sqrt(d_k)": np.sqrt, "d_k": float}
    names = list(dict.fromkeys(name for name, _, _ in runs))
    growth: dict[tuple[str, int], float] = {}
    print(f"                 final accuracy          spread of the scores (mean of {len(seeds)})")
    print("divisor    d_k    mean  (range)     at 1.0   step 0  step 20  growth")
    for name in names:
        for d in d_ks:
            final = np.array([runs[name, d, s][-1][1] for s in seeds])
            start, step20 = (float(np.mean([runs[name, d, s][i][2] for s in seeds])) for i in (0, 2))
            growth[name, d] = step20 - start
            print(f"{name:9} {d:4}   {final.mean():.3f} ({final.min():.2f}-{final.max():.2f})  "
                  f"{(final > 0.99).sum()} of {len(seeds)}  {start:6.2f} {step20:7.2f} "
                  f"{step20 - start:+7.2f}")
    small, large = min(d_ks), max(d_ks)
    print(f"growth at d_k = {large} over d_k = {small}, measured (predicted d_k / divisor): " + ", ".join(
        f"{name} {growth[name, large] / growth[name, small]:.1f} "
        f"({(large / divisors[name](large)) / (small / divisors[name](small)):g})"
        for name in names if name in divisors))


def control_table(control: Mapping[tuple[str, float, int], Sequence[tuple[int, float, float]]]) -> None:
    """Print, per arm and learning rate, how many seeds end at accuracy 1.0, the lowest final accuracy, and
    the mean spread of the scores at steps 0 and 20 ("-" where an arm was not trained at that rate); then,
    per arm and rate, how many of the runs that end below 1.0 gained more than 0.02 over their last 20 steps
    (still climbing).

    Inputs: ``control``: (arm name, learning rate, seed) -> checkpoints ``(step, accuracy, spread)`` taken
    every 10 steps.
    """
    arms = list(dict.fromkeys(arm for arm, _, _ in control))
    rates = sorted(dict.fromkeys(lr for _, lr, _ in control), reverse=True)
    seeds = list(dict.fromkeys(seed for _, _, seed in control))
    n, climbing = len(seeds), []
    last = {lr: next(c[-1][0] for (_, r, _), c in control.items() if r == lr) for lr in rates}
    print(f"{n} seeds{'':10}runs at 1.0 (lowest accuracy){'':6}spread of the scores")
    print(f"{'arm':18}" + "".join(f"{f'lr {lr}, step {last[lr]}':19}" for lr in rates)
          + "step 0   step 20 at each lr")
    for arm in arms:
        row, spreads, start = f"{arm:18}", "", None
        for lr in rates:
            if (arm, lr, seeds[0]) not in control:
                row, spreads = row + f"{'-':^15}    ", spreads + f"{'-':>8}"
                continue
            runs = [control[arm, lr, s] for s in seeds]
            finals = np.array([r[-1][1] for r in runs])
            below = [r for r in runs if r[-1][1] <= 0.99]
            if below:
                up = sum(r[-1][1] - r[-3][1] > 0.02 for r in below)
                climbing.append(f"{arm} at lr {lr}: {up} of {len(below)}")
            row += f"{(finals > 0.99).sum():2} of {n} ({finals.min():.2f})    "
            spreads += f"{np.mean([r[2][2] for r in runs]):8.2f}"
            start = float(np.mean([r[0][2] for r in runs]))
        print(row + f"{start:6.2f} " + spreads)
    if climbing:
        print("runs below 1.0 still climbing (more than +0.02 over their last 20 steps): "
              + "; ".join(climbing))
