"""Figures and tables of lesson 06 (scaling by 1/sqrt(d_k)): score variance, softmax saturation, training.

Every figure is 12 inches wide with text of at least 15 pt, so that on a slide 1280 px wide (the figure drawn
about 1200 px wide, 100 px an inch) its smallest text is about 21 px. The three divisors of the lesson are
drawn in the same colours everywhere: none (red), sqrt(d_k) (blue), d_k (gray).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib import patheffects
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["WIDTH", "SMALLEST_PT", "STYLE", "score_variance", "saturation", "training",
           "stall_table", "sweep_table", "training_table", "control_table", "train_seeds",
           "score_spread", "saturation_table", "saturation_measures", "q_gradient_line", "LookupRuns",
           "starting_weights"]

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
    ("entropy", "Entropy of the weights", r"median entropy (natural log)"),
    ("largest weight", "Weight of the top key", "median largest weight"),
    ("|dL/domega|", r"Gradient to $\omega$ (—), $q$ (- -)", "median gradient norm"),
)


def saturation(d_ks: Sequence[int], measures: Mapping[str, Mapping[str, Sequence[float]]], T: int) -> Figure:
    """Three panels against d_k, one line per divisor: the median entropy, largest weight and gradient
    (reaching the scores, solid; reaching the query, dashed, when the measures have "|dL/dq|"). In the
    gradient panel the lines are shifted a little along d_k (the dashed ones most), so that lines of equal
    values stay apart.

    Inputs:
        d_ks: n lengths of the query and key vectors.
        measures: divisor name ("none", "sqrt(d_k)", "d_k") -> {"entropy", "largest weight",
            "|dL/domega|"} (and optionally "|dL/dq|") -> n entries, one per d_k: a value, or the array of
            values measured at that d_k (its median is drawn).
        T: keys per query (the uniform weights' entropy ln T and largest weight 1/T are drawn dashed).
    Returns:
        the figure.
    """
    if T < 2:
        raise ValueError(f"T must be at least 2 keys, got {T!r}")
    fig, axes = plt.subplots(1, 3, figsize=(WIDTH, 4.6), layout="constrained")
    measures = {name: {key: [float(np.median(v)) for v in vs] for key, vs in m.items()}
                for name, m in measures.items()}
    markers = ("o", "s", "^")  # one marker per divisor, and in the gradient panel each line shifted a little
    for number, (name, values) in enumerate(measures.items()):  # along d_k: lines that meet stay apart
        color, label = _style(name)
        shift = 2.0 ** (0.08 * (number - 1))   # the solid line; its dashed one a further 2^0.3 to the right
        for ax, (key, _, _) in zip(axes, _MEASURES, strict=True):
            if key not in values:
                expected = [m[0] for m in _MEASURES]
                raise ValueError(f"measures[{name!r}] has no {key!r}; expected the keys {expected}")
            x = np.asarray(d_ks, dtype=float) * (shift if ax is axes[2] else 1.0)
            ax.plot(x, _values(values[key], d_ks, f"measures[{name!r}][{key!r}]"), "-",
                    marker=markers[number % 3], color=color, label=label)
        if "|dL/dq|" in values:
            axes[2].plot(np.asarray(d_ks, dtype=float) * shift * 2.0 ** 0.3,
                         _values(values["|dL/dq|"], d_ks, f"measures[{name!r}]['|dL/dq|']"), "x--",
                         color=color, ms=9, lw=2.5, zorder=3,   # a white edge: visible on a solid line too
                         path_effects=[patheffects.withStroke(linewidth=5, foreground="white")])
    for ax, level in ((axes[0], np.log(T)), (axes[1], 1 / T)):  # what uniform weights give
        ax.axhline(level, color="k", ls="--", lw=1.2)
        ax.annotate("uniform", (0.97, level), xycoords=("axes fraction", "data"), xytext=(0, 6),
                    textcoords="offset points", ha="right", va="bottom", fontsize=SMALLEST_PT)
    axes[0].set_ylim(0, np.log(T) * 1.25)  # room for the label under the title
    axes[2].set_yscale("log")
    for ax, (_, title, ylabel) in zip(axes, _MEASURES, strict=True):
        _log2_axis(ax, d_ks)
        _finish(ax, title, r"$d_k$", ylabel)
    handles, labels = axes[1].get_legend_handles_labels()  # the divisors, below the panels: no point hidden
    if any("|dL/dq|" in values for values in measures.values()):
        handles += [plt.Line2D([], [], color="k", ls="-"),
                    plt.Line2D([], [], color="k", marker="x", ls="--", ms=9)]
        labels += [r"$\partial L/\partial\omega$", r"$\partial L/\partial q$"]
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=SMALLEST_PT)
    return fig


def training(
    runs: Mapping[tuple[str, int, int], Sequence[tuple[int, float, float]]],
    d_ks: Sequence[int],
    seeds: Sequence[int],
    d_k: int,
) -> Figure:
    """Training runs of the lookup task at one ``d_k``, step by step, one colour per divisor.

    Inputs:
        runs: (divisor name, d_k, seed) -> checkpoints ``(step, held-out accuracy, score spread)``, as
            ``selfattention.tasks.train`` returns them with a snapshot that measures the spread.
        d_ks: the lengths trained; seeds: the seeds trained.
        d_k: the length whose runs the figure shows.
    Returns:
        the figure: accuracy (left) and score spread (right) against the step at ``d_k``, one thin line
        per seed (the final accuracies are in :func:`training_table`).
    """
    names = list(dict.fromkeys(name for name, _, _ in runs))
    if d_k not in d_ks:
        raise ValueError(f"d_k={d_k!r} is not one of the trained lengths {list(d_ks)}")
    for name in names:
        for seed in seeds:
            if (name, d_k, seed) not in runs:
                raise ValueError(f"runs has no entry {(name, d_k, seed)!r}")
    fig, axes = plt.subplots(1, 2, figsize=(WIDTH, 5.0), layout="constrained")
    for name in names:
        color, label = _style(name)
        for seed in seeds:
            steps, accuracy, spread = zip(*runs[name, d_k, seed], strict=True)
            axes[0].plot(steps, accuracy, color=color, lw=1.5, alpha=0.7,
                         label=label if seed == seeds[0] else None)
            axes[1].plot(steps, spread, color=color, lw=1.5, alpha=0.7)
    _finish(axes[0], rf"Accuracy, $d_k = {d_k}$", "step", "held-out accuracy")
    axes[1].set_yscale("log")
    _finish(axes[1], rf"Score spread, $d_k = {d_k}$", "step", "std of the scores")
    axes[0].set_ylim(0, 1.05)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3, fontsize=SMALLEST_PT)
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


def control_table(runs: Mapping[tuple[str, int, int], Sequence[tuple[int, float, float]]],
                  arms: Sequence[str], d_k: int) -> None:
    """Print, per arm at ``d_k``, how many seeds end at accuracy 1.0, the lowest final accuracy, and the
    mean spread of the scores at steps 0 and 20 (checkpoints every 10 steps).

    Inputs: ``runs``: (arm name, d_k, seed) -> checkpoints ``(step, accuracy, spread)``; ``arms``: the arm
    names to print, in order.
    """
    print(f"d_k = {d_k}{'':22}runs at 1.0   lowest    spread of the scores")
    print(f"{'arm':34}{'':14}accuracy   step 0  step 20")
    for arm in arms:
        got = [c for (a, d, _), c in runs.items() if a == arm and d == d_k]
        if not got:
            raise ValueError(f"runs has no run of arm {arm!r} at d_k={d_k}")
        finals = np.array([c[-1][1] for c in got])
        start, step20 = (float(np.mean([c[i][2] for c in got])) for i in (0, 2))
        print(f"{arm:34}{(finals > 0.99).sum():3} of {len(got):2}    {finals.min():.2f}   "
              f"{start:7.2f} {step20:8.2f}")


def score_spread(model: torch.nn.Module, X: torch.Tensor) -> float:
    """The standard deviation of the last (query) token's scores, the layer's scale included.

    Inputs: ``model`` a ``tasks.ReadoutModel`` over a ``SelfAttention``; X (n, T, d_in).
    """
    layer = model.attention
    scale = 1.0 / layer.d_out ** 0.5 if layer.scale is None else layer.scale
    with torch.no_grad():
        q, k = layer.W_query(X[:, -1:]), layer.W_key(X)                   # (n, 1, d_k), (n, T, d_k)
        return ((q @ k.transpose(1, 2)) * scale).std().item()


def saturation_table(sat: Mapping[str, Mapping[str, Sequence[np.ndarray]]], d_ks: Sequence[int],
                     shown: Sequence[int], T: int) -> None:
    """Print section 3's measures at the lengths ``shown`` (a subset of ``d_ks``): for each divisor the number
    of queries n, then the median (min-max) over them of the largest weight and of |dL/domega|, and the median
    |dL/dq|. ``sat``: divisor name -> {"largest weight", "|dL/domega|", "|dL/dq|"} -> one array per d_k."""
    print(f"uniform weights: largest weight 1/T = {1 / T:.4f}; median (min-max) over n queries, "
          "|dL/dq| median only")
    for d in shown:
        if d not in d_ks:
            raise ValueError(f"shown has d_k={d!r}, not one of {list(d_ks)}")
        i = list(d_ks).index(d)
        print(f"d_k = {d:<5}     n   largest weight        |dL/domega|                |dL/dq| median")
        for name, m in sat.items():
            w, g, gq = (np.asarray(m[key][i]) for key in ("largest weight", "|dL/domega|", "|dL/dq|"))
            print(f"  divide by {name:9} {w.size:4}   {np.median(w):.3f} ({w.min():.2f}-{w.max():.2f})   "
                  f"{np.median(g):.0e} ({g.min():.0e}-{g.max():.0e})   {np.median(gq):.0e}")

def q_gradient_line(sat: Mapping[str, Mapping[str, Sequence[np.ndarray]]], d_ks: Sequence[int],
                    names: Sequence[str] = ("none", "sqrt(d_k)")) -> None:
    """Print, for each divisor in ``names``, the median |dL/dq| over the queries at every d_k of ``d_ks``
    (``sat`` as :func:`saturation_measures` returns it)."""
    print("median |dL/dq|  d_k =" + "".join(f"{d:>7}" for d in d_ks))
    for name in names:
        print(f"  divide by {name:10}" + "".join(f"{np.median(g):7.2g}" for g in sat[name]["|dL/dq|"]))


def train_seeds(
    models: Sequence[torch.nn.Module],
    datas: Sequence[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]],
    steps: int = 80,
    lr: float = 0.05,
    every: int = 10,
    snapshot: Callable[[torch.nn.Module], float] | None = None,
    lr_factor: Mapping[str, float] | None = None,
    optimizer: str = "adam",
    batch: int = 100,
) -> list[list[tuple[int, float, float | None]]]:
    """Train several lookup models at once, each as ``selfattention.tasks.train`` trains one.

    Each model is a ``tasks.ReadoutModel`` over a ``SelfAttention`` without bias, all of the same shape
    and scale. Their weights are stacked along a new first axis and trained together: the loss is the sum
    of the models' own losses, so each model gets its own gradient, and Adam (or plain SGD) works entry by
    entry, so each model follows the same computation as if trained alone. Rounding differs, though, and
    these runs are chaotic: counts over seeds match ``tasks.train``'s, a single run may not (e.g. a run
    that ends at 0.87 here may reach 1.0 alone). The models are updated in place.

    Inputs:
        models: n models (e.g. one per seed).
        datas: n tuples (X_train, y_train, X_test, y_test), one per model, as ``tasks.make_lookup_data``
            makes them (X (N, T, d_in), y (N, 1)).
        steps, lr, every, batch: as for ``tasks.train``.
        snapshot: a function of one model, recorded at each checkpoint.
        lr_factor: parameter name -> factor on ``lr`` for that parameter (e.g.
            ``{"attention.W_query.weight": 1 / 16}``); the other parameters train at ``lr``.
        optimizer: "adam" (``torch.optim.Adam``) or "sgd" (``torch.optim.SGD``, no momentum).
    Returns:
        per model, its checkpoints ``(step, held-out accuracy, snapshot or None)``.
    """
    if len(models) != len(datas) or not models:
        raise ValueError(f"models and datas have lengths {len(models)} and {len(datas)}; "
                         "expected the same length, at least 1")
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer={optimizer!r}; expected 'adam' or 'sgd'")
    names = [name for name, _ in models[0].named_parameters()]
    expected = ["attention.W_query.weight", "attention.W_key.weight", "attention.W_value.weight",
                "readout.weight", "readout.bias"]
    if names != expected:
        raise ValueError(f"models have parameters {names}; expected {expected} (a ReadoutModel over a "
                         "SelfAttention without bias)")
    lr_factor = dict(lr_factor or {})
    unknown = set(lr_factor) - set(names)
    if unknown:
        raise ValueError(f"lr_factor names {sorted(unknown)}, not parameters of the models: {names}")
    scale = models[0].attention.scale
    scale = 1.0 / models[0].attention.d_out ** 0.5 if scale is None else scale
    params = {name: torch.stack([dict(m.named_parameters())[name].detach() for m in models]).requires_grad_()
              for name in names}
    groups = [{"params": [p], "lr": lr * lr_factor.get(name, 1.0)} for name, p in params.items()]
    opt = torch.optim.Adam(groups, lr=lr) if optimizer == "adam" else torch.optim.SGD(groups, lr=lr)
    Wq, Wk, Wv, Wr, br = (params[name] for name in expected)

    def logits_of(X: torch.Tensor) -> torch.Tensor:      # X (n, b, T, d_in) -> (n, b, N_SYM)
        q = torch.einsum("nbi,nki->nbk", X[:, :, -1], Wq)                # the query token's query
        k, v = torch.einsum("nbti,nki->nbtk", X, Wk), torch.einsum("nbti,nki->nbtk", X, Wv)
        alpha = torch.softmax(torch.einsum("nbk,nbtk->nbt", q, k) * scale, dim=-1)
        z = torch.einsum("nbt,nbtv->nbv", alpha, v)                      # its output z
        return torch.einsum("nbv,nov->nbo", z, Wr) + br[:, None]

    X_train, y_train, X_test, y_test = (torch.stack([d[i] for d in datas]) for i in range(4))
    n = len(models)
    histories: list[list[tuple[int, float, float | None]]] = [[] for _ in models]
    for step in range(steps + 1):
        if step % every == 0 or step == steps:
            with torch.no_grad():
                right = logits_of(X_test).argmax(-1) == y_test.reshape(n, -1)
                for i, model in enumerate(models):
                    for name, p in model.named_parameters():
                        p.copy_(params[name][i])
                    histories[i].append((step, right[i].float().mean().item(),
                                         snapshot(model) if snapshot else None))
        if step == steps:
            break
        start = (step * batch) % X_train.shape[1]
        logits = logits_of(X_train[:, start:start + batch])                 # (n, batch, N_SYM)
        target = y_train[:, start:start + batch].reshape(n, -1)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), target.flatten(), reduction="none")
        opt.zero_grad()
        loss.view(n, -1).mean(1).sum().backward()
        opt.step()
    return histories


def stall_table(runs: Mapping[tuple[str, int, int], Sequence[tuple[int, float, float]]],
                models: Mapping[tuple[str, int, int], torch.nn.Module],
                data: Mapping[int, tuple[torch.Tensor, ...]], arm: str, d_k: int,
                seeds: Sequence[int], first_by_letter: bool = True) -> None:
    """Print, for the runs of ``arm`` at ``d_k`` that stalled (final accuracy below 0.99) and those that
    reached 1.0: the spread of the scores at step 20 and the query's largest weight at the end (mean and
    range over the runs, each run's weight averaged over its held-out sequences), and in how many letters
    the query keeps more than half its weight on itself; then, for the first stalled run, its accuracy
    and its weight on itself by the query's letter (unless ``first_by_letter`` is False).

    Inputs: ``runs`` and ``models`` keyed by (arm, d_k, seed), checkpoints every 10 steps; ``data``: seed ->
    (X_train, y_train, X_test, y_test) of the lookup task.
    """
    from selfattention import tasks

    def per_letter(seed: int) -> tuple[list[float], list[float], float]:
        X, y = data[seed][2], data[seed][3]
        with torch.no_grad():
            logits, A = models[arm, d_k, seed](X)
        letter = X[:, -1, :tasks.N_SYM].argmax(-1)
        right, self_weight = (logits.argmax(-1) == y).float().reshape(-1), A[:, -1, -1]
        by = [[round(v[letter == sym].mean().item(), 2) for sym in range(tasks.N_SYM)]
              for v in (right, self_weight)]
        return by[0], by[1], A[:, -1].max(-1).values.mean().item()

    stalled = [s for s in seeds if runs[arm, d_k, s][-1][1] < 0.99]
    groups = {f"stalled ({len(stalled)})": stalled,
              f"reached 1.0 ({len(seeds) - len(stalled)})": [s for s in seeds if s not in stalled]}
    print(f"divide by {arm}, d_k = {d_k}     spread at step 20    largest weight   "
          "letters the query keeps on itself")
    for name, group in groups.items():
        if not group:
            continue
        spread = np.array([runs[arm, d_k, s][2][2] for s in group])
        stats = [per_letter(s) for s in group]
        top = np.array([t for _, _, t in stats])
        kept = sorted({sum(w > 0.5 for w in own) for _, own, _ in stats})
        print(f"{name:26} {spread.mean():5.2f} ({spread.min():.2f}-{spread.max():.2f})   "
              f"{top.mean():.3f} ({top.min():.3f}-{top.max():.3f})   {' or '.join(map(str, kept))}")
    if stalled and first_by_letter:
        right, own, _ = per_letter(stalled[0])
        print(f"seed {stalled[0]}, by the query's letter A to H: accuracy     {right}")
        print(f"{'':37}weight on itself {own}")


def locked_letters(lab: LookupRuns, arms: Sequence[str], d_k: int, seeds: Sequence[int]) -> None:
    """Print, for each arm at ``d_k``: how many runs stalled; over every (run, query letter) pair, how many
    the model fails (held-out accuracy below 0.9) and how many it solves, and in each group how many pairs
    have the query keep more than half its weight on itself (a token with no digit); and the query's largest
    weight (mean over all runs and held-out sequences)."""
    from selfattention import tasks

    print(f"d_k = {d_k}{'':23}stalled   letters failed:      letters solved:      largest weight")
    print(f"{'arm':33}{'runs':>7}   on itself / all      on itself / all      (mean)")
    for arm in arms:
        failed = solved = failed_self = solved_self = 0
        top = []
        for seed in seeds:
            X, y = lab.data[seed][2], lab.data[seed][3]
            with torch.no_grad():
                logits, A = lab.models[arm, d_k, seed](X)
            letter, right = X[:, -1, :tasks.N_SYM].argmax(-1), logits.argmax(-1) == y
            top.append(A[:, -1].max(-1).values.mean().item())
            for sym in range(tasks.N_SYM):
                mine = letter == sym
                on_self = A[mine, -1, -1].mean().item() > 0.5
                if right[mine].float().mean().item() < 0.9:
                    failed, failed_self = failed + 1, failed_self + on_self
                else:
                    solved, solved_self = solved + 1, solved_self + on_self
        stalled = len(lab.stalled(arm, d_k, seeds))
        print(f"{arm:33}{stalled:4} of {len(seeds)}   {failed_self:4} / {failed:<4}          "
              f"{solved_self:4} / {solved:<4}          {np.mean(top):.3f}")


def starting_weights(lab: LookupRuns, d_k: int, seeds: Sequence[int]) -> None:
    """Print, per divisor (none, sqrt(d_k), d_k) at ``d_k``, the query's largest weight before training (step
    0): the mean over the held-out sequences of each seed, then its mean and range over ``seeds``."""
    from selfattention import tasks

    T = tasks.N_ITEMS + 1
    parts = []
    for name, divisor in (("none", 1.0), ("sqrt(d_k)", math.sqrt(d_k)), ("d_k", float(d_k))):
        top = []
        for seed in seeds:
            with torch.random.fork_rng(devices=[]), torch.no_grad():     # the training runs' draws untouched
                _, A = lab.make_model(divisor, d_k, seed)(lab.data[seed][2])
            top.append(A[:, -1].max(-1).values.mean().item())
        parts.append(f"{name} {np.mean(top):.2f} ({min(top):.2f}-{max(top):.2f})")
    print(f"d_k = {d_k}, step 0: the query's largest weight, mean (range) of {len(seeds)} seeds "
          f"(uniform: 1/T = {1 / T:.2f}): " + ", ".join(parts))


def stalled_letters(lab: LookupRuns, variant: str, d_k: int, seeds: Sequence[int]) -> None:
    """Print, for each run of ``variant`` at ``d_k`` among ``seeds`` that stalled (final accuracy below 0.99),
    by the query's letter A to H: the held-out accuracy, the weight the query keeps on itself, how many
    different digits the model answers, the loss on the 2000 training sequences, and the median |dL/dW_Q|
    over W_Q's column that reads that letter (one entry per weight, the loss averaged over all sequences)."""
    from selfattention import tasks

    def by_letter(values: torch.Tensor, letter: torch.Tensor, fmt: str) -> str:
        means = [values[letter == sym].float().mean().item() for sym in range(tasks.N_SYM)]
        return " ".join(format(m, fmt) for m in means)

    print(f"divide by {variant}, d_k = {d_k}: every run that stalled; by the query's letter, A to H")
    for seed in lab.stalled(variant, d_k, seeds):
        model = lab.models[variant, d_k, seed]
        X_train, y_train, X_test, y_test = lab.data[seed]
        with torch.no_grad():
            logits, A = model(X_test)                                  # A: (n, T, T) weights
        letter, answer = X_test[:, -1, :tasks.N_SYM].argmax(-1), logits.argmax(-1)
        answers = [len(answer[letter == sym].unique()) for sym in range(tasks.N_SYM)]
        model.zero_grad()
        logits_train = model(X_train)[0]
        per_sequence = torch.nn.functional.cross_entropy(logits_train, y_train, reduction="none")
        per_sequence.mean().backward()
        grad = model.attention.W_query.weight.grad.abs()[:, :tasks.N_SYM]     # (d_k, letters)
        letter_train = X_train[:, -1, :tasks.N_SYM].argmax(-1)
        print(f"seed {seed}")
        print("  accuracy            ", by_letter(answer == y_test, letter, "5.2f"))
        print("  weight on itself    ", by_letter(A[:, -1, -1], letter, "5.2f"))
        print("  digits answered     ", " ".join(f"{n:5}" for n in answers))
        print("  training loss       ", by_letter(per_sequence.detach(), letter_train, "5.2f"))
        print("  median |dL/dW_Q|    ", " ".join(f"{g:5.0e}" for g in grad.median(0).values.tolist()))


def sweep_table(runs: Mapping[tuple[str, int, int], Sequence[tuple[int, float, float]]], arms: Sequence[str],
                lrs: Sequence[float], d_k: int, default_lr: float = 0.05) -> None:
    """Print, per arm (rows) and learning rate (columns), how many runs at ``d_k`` reach accuracy 1.0;
    then, at ``default_lr``, the lowest final accuracy and the mean spread of the scores at steps 0 and 20
    (checkpoints every 10 steps). The runs of learning rate ``lr`` are stored under the arm name
    ``f"{arm}, lr {lr}"``, those of ``default_lr`` under ``arm`` itself."""
    print(f"d_k = {d_k}: runs at 1.0".ljust(24) + "".join(f"lr {lr:<9}" for lr in lrs)
          + f"at lr {default_lr}: lowest accuracy, spread at step 0, 20")
    for arm in arms:
        cells = []
        for lr in lrs:
            name = arm if lr == default_lr else f"{arm}, lr {lr}"
            got = [c for (a, d, _), c in runs.items() if a == name and d == d_k]
            if not got:
                raise ValueError(f"runs has no run of arm {arm!r} at lr {lr} and d_k={d_k}")
            cells.append(f"{sum(c[-1][1] > 0.99 for c in got):2} of {len(got):<6}")
        default = [c for (a, d, _), c in runs.items() if a == arm and d == d_k]
        extra = ""
        if default_lr in lrs:
            lowest = min(c[-1][1] for c in default)
            start, step20 = (float(np.mean([c[i][2] for c in default])) for i in (0, 2))
            extra = f"{lowest:6.2f} {start:13.2f} {step20:7.2f}"
        print(f"{arm:24}" + "".join(cells) + extra)


def saturation_measures(d_ks: Sequence[int], T: int = 16, n: int = 500,
                        seed: int = 3) -> dict[str, dict[str, list[np.ndarray]]]:
    """Section 3's measures: for each d_k, ``n`` random queries, each with its own ``T`` random keys, values
    (length 8) and target y (entries standard normal, ``np.random.default_rng(seed)``); scores divided by
    none, sqrt(d_k) or d_k; the loss L = 0.5 ||z - y||^2 of the output z = sum_j alpha_j v_j.

    Returns divisor name -> {"entropy", "largest weight", "|dL/domega|", "|dL/dq|"} -> one array of ``n``
    values per d_k (the gradients by autograd)."""
    divisors = {"none": lambda d: 1.0, "sqrt(d_k)": math.sqrt, "d_k": float}
    rng = np.random.default_rng(seed)
    keys = ("entropy", "largest weight", "|dL/domega|", "|dL/dq|")
    sat: dict[str, dict[str, list[np.ndarray]]] = {name: {key: [] for key in keys} for name in divisors}
    for d_k in d_ks:
        q = torch.tensor(rng.standard_normal((n, 1, d_k)), requires_grad=True)
        K, V, y = (torch.tensor(rng.standard_normal(shape)) for shape in ((n, T, d_k), (n, T, 8), (n, 1, 8)))
        for name, c in divisors.items():
            q.grad = None
            omega = q @ K.transpose(1, 2) / c(d_k)                 # (n, 1, T) scores
            omega.retain_grad()
            alpha = torch.softmax(omega, dim=-1)
            (0.5 * ((alpha @ V - y) ** 2).sum()).backward()        # summed over queries: one backward for all
            values = (-(alpha * alpha.clamp_min(1e-300).log()).sum(-1), alpha.amax(-1),
                      omega.grad.norm(dim=-1), q.grad.norm(dim=-1))
            for key, value in zip(keys, values, strict=True):
                sat[name][key].append(value.detach().flatten().numpy())
    return sat


class LookupRuns:
    """Section 4's training runs on lesson 05's lookup task.

    ``data``: seed -> (X_train, y_train, X_test, y_test), 2000 training and 400 held-out sequences per seed;
    ``runs``: (variant, d_k, seed) -> checkpoints ``(step, held-out accuracy, spread of the query's scores)``
    every 10 steps; ``models``: (variant, d_k, seed) -> the trained model.
    """

    def __init__(self, n_seeds: int = 32) -> None:
        from selfattention import tasks

        self.data = {s: (*tasks.make_lookup_data(2000, 100 + s), *tasks.make_lookup_data(400, 200 + s))
                     for s in range(n_seeds)}
        self.runs: dict[tuple[str, int, int], list[tuple[int, float, Any]]] = {}
        self.models: dict[tuple[str, int, int], torch.nn.Module] = {}

    @staticmethod
    def make_model(divisor: float, d_k: int, seed: int, fold: float = 1.0) -> torch.nn.Module:
        """A ``tasks.ReadoutModel`` over ``SelfAttention(tasks.D_IN, d_k, d_v=16, scale=1 / divisor)`` whose
        W_Q and W_K start normal with variance 1/2 (query and key entries of variance 1), W_Q's divided by
        ``fold``."""
        from selfattention import tasks
        from selfattention.layers import SelfAttention

        torch.manual_seed(seed)
        layer = SelfAttention(tasks.D_IN, d_k, d_v=16, scale=1 / divisor)
        with torch.no_grad():
            layer.W_query.weight.normal_(0, 2 ** -0.5 / fold)
            layer.W_key.weight.normal_(0, 2 ** -0.5)
        return tasks.ReadoutModel(layer, 16)

    def train(self, variant: str, divisor: float, d_k: int, seeds: Sequence[int] = range(8),
              fold: float = 1.0, **options: Any) -> None:
        """Train one model per seed side by side (:func:`train_seeds`; ``options``: lr, steps, every,
        optimizer, lr_factor) and store them under ``(variant, d_k, seed)``."""
        batch = [self.make_model(divisor, d_k, s, fold) for s in seeds]
        checkpoints = train_seeds(batch, [self.data[s] for s in seeds],
                                  snapshot=lambda m: score_spread(m, self.data[0][2]), **options)
        for s, model, c in zip(seeds, batch, checkpoints, strict=True):
            self.runs[variant, d_k, s], self.models[variant, d_k, s] = c, model

    def train_rates(self, variant: str, divisor: float, d_k: int, seeds: Sequence[int], lrs: Sequence[float],
                    default_lr: float = 0.05, **options: Any) -> None:
        """:meth:`train` at each learning rate of ``lrs``, stored as :func:`sweep_table` reads them: under
        ``variant`` at ``default_lr``, under ``f"{variant}, lr {lr}"`` otherwise."""
        for lr in lrs:
            name = variant if lr == default_lr else f"{variant}, lr {lr}"
            self.train(name, divisor, d_k, seeds, lr=lr, **options)

    def more_steps(self, variant: str, d_k: int, seeds: Sequence[int], steps: int = 400) -> np.ndarray:
        """Train copies of the runs of ``variant`` at ``d_k`` among ``seeds`` that stalled (:meth:`stalled`)
        ``steps`` more steps with a fresh Adam (:func:`train_seeds`'s defaults otherwise); the stored runs
        stay as they are. Returns each copy's change of held-out accuracy, in the order of :meth:`stalled`."""
        import copy

        keys = [(variant, d_k, s) for s in self.stalled(variant, d_k, seeds)]
        if not keys:
            return np.zeros(0)
        more = train_seeds([copy.deepcopy(self.models[k]) for k in keys], [self.data[k[2]] for k in keys],
                           steps=steps, every=steps)
        return np.array([m[-1][1] - self.runs[k][-1][1] for k, m in zip(keys, more, strict=True)])

    def reached(self, variant: str, d_k: int, seeds: Sequence[int], step: int | None = None) -> int:
        """How many runs of ``variant`` at ``d_k`` among ``seeds`` have held-out accuracy 1.0 (above 0.99) at
        ``step`` (the last checkpoint if None)."""
        def accuracy(seed: int) -> float:
            checkpoints = self.runs[variant, d_k, seed]
            return checkpoints[-1][1] if step is None else dict((c[0], c[1]) for c in checkpoints)[step]
        return sum(accuracy(s) > 0.99 for s in seeds)

    def stalled(self, variant: str, d_k: int, seeds: Sequence[int]) -> list[int]:
        """The seeds among ``seeds`` whose run of ``variant`` at ``d_k`` ends below accuracy 0.99."""
        return [s for s in seeds if self.runs[variant, d_k, s][-1][1] < 0.99]
