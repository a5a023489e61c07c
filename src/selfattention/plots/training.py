"""Lesson 05's figures (training attention): held-out accuracy during training, and what the trained
matrices hold; and the lesson's printed reports, so that its cells show only the training and the maths.
Text sizes follow :func:`selfattention.plots.projections.legible` (legible on a slide)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from .basic_attention import _hull
from .projections import legible

__all__ = ["descent_figure", "accuracy_curves", "learned_matrices",
           "checkpoint_on", "report_runs", "runs_figure",
           "report_learned", "next_letter_weight", "line_bound", "line_orders_on", "letter_scores_and_values",
           "report_question_weights"]

COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")


def descent_figure(path: Sequence[tuple[float, float]], target: float | None = None) -> Figure:
    """Gradient descent on one weight: the weight w (left) and the loss (right) against the step.
    path: (w, loss) before each step, one pair per step; target: the best w, drawn dashed."""
    pairs = np.asarray(path, dtype=float)          # (steps, 2)
    w, loss = pairs[:, 0], pairs[:, 1]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    left.plot(w, "o-", color=COLOURS[0])
    if target is not None:
        left.axhline(target, ls="--", color="grey")
    left.set(xlabel="step", ylabel="weight w", title="the weight")
    right.plot(loss, "o-", color=COLOURS[1])
    right.set(xlabel="step", ylabel="loss", title="the loss")
    legible(fig)
    fig.tight_layout()
    return fig


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

    Inputs: letter_scores (n_letters, n_letters): the score an asked letter (rows) gives an item's letter
    (columns); to_logits (n_features, n_digits): how much each input feature, through W_V and the readout,
    raises each digit's logit (rows: the letters, the digits, the question flag).
    """
    scores, logits = np.asarray(letter_scores, dtype=float), np.asarray(to_logits, dtype=float)
    n, d = len(letters), len(digits)
    if scores.shape != (n, n) or logits.shape != (2 * n + 1, d):
        raise ValueError(f"letter_scores is {scores.shape} and to_logits {logits.shape}; expected ({n}, {n}) "
                         f"and ({2 * n + 1}, {d}) for {n} letters and {d} digits")
    fig, axes = plt.subplots(1, 2, figsize=(12, 6.2), layout="constrained", width_ratios=(1, 1))
    panels = (
        (axes[0], scores, [f"?{c}" for c in letters], list(letters), "letter part of the scores",
         "item's letter", "asked letter", "score"),
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


def checkpoint_on(X_test: Any, y_test: Any, example: int) -> Any:
    """A snapshot for ``tasks.train``: ``model -> (A, loss)``, with A the (T, T) weights of held-out
    sequence ``example`` (a NumPy array) and loss the held-out cross-entropy (a float).
    X_test: (n, T, d_in) tensor; y_test: (n,) right digits."""
    import torch.nn.functional as F

    if not 0 <= example < len(X_test):
        raise ValueError(f"example is {example}; expected 0..{len(X_test) - 1}")

    def checkpoint(model: Any) -> tuple[np.ndarray, float]:
        logits, A = model(X_test)
        return A[example].numpy(), F.cross_entropy(logits, y_test).item()
    return checkpoint


def report_runs(models: Mapping[str, Sequence[Any]],
                runs: Mapping[str, Sequence[Sequence[tuple[int, float, Any]]]],
                data: tuple[Any, ...]) -> None:
    """Print, per model, its count of trained weights, held-out accuracy before and after training, training
    accuracy after, and held-out loss after (each as mean (min..max) over the runs). runs: ``tasks.train``'s
    checkpoints with ``checkpoint_on``'s snapshots; data: (X_train, y_train, X_test, y_test)."""
    import torch

    from ..tasks import accuracy, spread

    for name, histories in runs.items():
        before, after = (spread([h[k][1] for h in histories]) for k in (0, -1))
        with torch.no_grad():
            train_acc = spread([accuracy(m(data[0])[0], data[1]) for m in models[name]])
        weights = sum(p.numel() for p in models[name][0].parameters() if p.requires_grad)   # not frozen ones
        loss = spread([h[-1][2][1] for h in histories])
        print(f"{name}, {weights} trained weights:\n  held-out accuracy {before} before, {after} after; "
              f"training accuracy after {train_acc}; held-out loss after {loss}")


def runs_figure(runs: Mapping[str, Sequence[Sequence[tuple[int, float, Any]]]]) -> Figure:
    """:func:`accuracy_curves` for runs whose snapshots are ``checkpoint_on``'s (A, loss): held-out loss
    (with the levels ln 8 and ln 4) and accuracy (with a guess among 4 digits, 0.25)."""
    losses = {name: [[c[2][1] for c in h] for h in histories] for name, histories in runs.items()}
    return accuracy_curves(runs, chance={"a guess among the 4 digits present": 0.25}, losses=losses,
                           loss_levels={r"$\ln 8$: all 8 digits equally likely": float(np.log(8)),
                                        r"$\ln 4$: the 4 present digits equally likely": float(np.log(4))})


def report_question_weights(models: Sequence[Any], X: Any, roles: Mapping[str, Any]) -> None:
    """Print the question token's mean weight on each kind of item (``roles``: ``tasks.item_roles``'s
    masks (n, 4)) and on itself, as mean (min..max) over ``models``; X: (n, T, d_in) tensor."""
    import torch

    from ..tasks import spread

    with torch.no_grad():
        A_q = torch.stack([m(X)[1][:, -1] for m in models])          # (models, n, T)
    n_items = next(iter(roles.values())).shape[1]
    for role, mask in roles.items():
        print(f"question token's weight on the {role:10}:",
              spread([a[:, :n_items][mask].mean().item() for a in A_q]))
    print("question token's weight on itself        :", spread(A_q[:, :, -1].mean(1).tolist()))


def letter_scores_and_values(model: Any) -> tuple[np.ndarray, np.ndarray]:
    """What a trained ``tasks.ReadoutModel`` on ``sa.SelfAttention`` holds: the letter block (8, 8) of
    M = W_Q W_K^T / sqrt(d_k) plus the flag's row (the letter part of the score a question ?s, row s, gives
    an item with letter k, column k), and W_V then the readout (d_in, 8): each input feature's push on the
    8 digit logits."""
    import torch

    att, n = model.attention, 8
    with torch.no_grad():
        M = att.W_query.weight.T @ att.W_key.weight / att.W_key.out_features ** 0.5   # (d_in, d_in)
        to_logits = att.W_value.weight.T @ model.readout.weight.T                     # (d_in, 8)
    return (M[:n, :n] + M[-1, :n]).numpy(), to_logits.numpy()


def report_learned(after: Sequence[tuple[np.ndarray, np.ndarray]], before: Sequence[np.ndarray]) -> None:
    """Print what training wrote, per model: the rows of the letter block (8, 8) where the next letter
    scores highest; the smallest next-minus-before lead over the rows, before and after training; the digit
    rows of W_V-then-readout (17, 8) that raise their own digit's logit most; the largest entries of its
    digit rows and letter rows. after: (letter block, W_V-then-readout) per trained model; before: the
    letter blocks at the start."""
    from ..tasks import spread

    n = after[0][0].shape[0]
    s = np.arange(n)

    def lead(block: np.ndarray) -> float:
        return float((block[s, (s + 1) % n] - block[s, (s - 1) % n]).min())

    print("next letter first (of 8 rows):", [int((b.argmax(1) == (s + 1) % n).sum()) for b, _ in after])
    print("smallest lead of the next letter over the letter before, before training:",
          spread([lead(b) for b in before], 2), "| after:", spread([lead(b) for b, _ in after], 2))
    print("digit d -> logit d (of 8 rows):", [int((v[n:2 * n].argmax(1) == s).sum()) for _, v in after])
    print("largest |entry|, digit rows:", spread([np.abs(v[n:2 * n]).max() for _, v in after], 1),
          "| letter rows:", spread([np.abs(v[:n]).max() for _, v in after], 1))


def _hull_corners(P: np.ndarray) -> int:
    """How many of the points P (n, 2) are corners of their convex hull."""
    return len(_hull(np.round(P, 9)))


def ring_order(K: ArrayLike, letters: str = "ABCDEFGH") -> str:
    """The letters of the keys K (n, 2) in the order of their angles round the origin."""
    K = np.asarray(K, dtype=float)
    return "".join(letters[i] for i in np.argsort(np.arctan2(K[:, 1], K[:, 0])))


def report_rings(after: Sequence[tuple[ArrayLike, ArrayLike]], before: Sequence[ArrayLike]) -> None:
    """Print, for the letters' keys (8, 2) of each model before and after training: how many are corners of
    their outline (their convex hull: a key inside it can never be any query's top key); the shortest over the
    longest distance from the origin; and, after training, how many queries ?s (8, 2) score the key of the
    letter after s highest; and how many alphabet neighbours (A-B, ..., H-A) sit side by side round the
    origin (8 when the ring runs A to H), before and after, with a random circular order's mean, 2n/(n-1):
    each of the n pairs is side by side with probability 2/(n-1).
    after: (queries, keys) per trained model; before: keys."""
    from ..tasks import spread

    def side_by_side(K: np.ndarray) -> int:
        order = np.argsort(np.arctan2(K[:, 1], K[:, 0]))
        n = len(order)
        return sum(abs(int(order[i]) - int(order[(i + 1) % n])) in (1, n - 1) for i in range(n))

    for name, keys in (("before training", before), ("after", [K for _, K in after])):
        Ks = [np.asarray(K, dtype=float) for K in keys]
        r = [np.linalg.norm(K, axis=1) for K in Ks]
        print(f"{name}: keys on the outline (of 8) {[_hull_corners(K) for K in Ks]}; shortest / longest "
              f"distance from the origin {spread([x.min() / x.max() for x in r], 2)}")
    nxt = [int((np.argmax(np.asarray(Q, dtype=float) @ np.asarray(K, dtype=float).T, axis=1)
                == (np.arange(len(Q)) + 1) % len(Q)).sum()) for Q, K in after]
    print("after: queries whose top key is the next letter's (of 8)", nxt)
    n = len(np.asarray(before[0]))
    start = [side_by_side(np.asarray(K, dtype=float)) for K in before]
    print(f"alphabet neighbours side by side round the origin (of {n}): a random order {2 * n / (n - 1):.2f} "
          f"on average; before training {spread(start, 2)}; "
          f"after {[side_by_side(np.asarray(K, dtype=float)) for _, K in after]}")


def next_letter_weight(model: Any, X: Any) -> float:
    """The mean weight an item row gives the item whose letter comes next (after H: A), over every item
    row of every sequence in X (n, T, d_in) that has such an item; the last token is the question token."""
    import torch

    from ..tasks import N_ITEMS, N_SYM

    with torch.no_grad():
        A = model(X)[1][:, :N_ITEMS, :N_ITEMS]                       # (n, 4, 4): item rows, item columns
    letters = X[:, :N_ITEMS, :N_SYM].argmax(-1)                      # (n, 4)
    is_next = letters[:, None, :] == (letters[:, :, None] + 1) % N_SYM   # (n, 4, 4): column j is row i's next
    if not bool(is_next.any()):
        raise ValueError("no item in X has the next letter of another item")
    return float(A[is_next].mean())


def line_bound(n_sym: int = 8, n_items: int = 4) -> float:
    """The largest share of lookup sequences in which the target's key is the top key, when each key is one
    number set by its item's letter alone: the best of all ``n_sym!`` orders of the letters on the line, with
    the best query sign (largest or smallest key) for each asked letter s. Sequences as
    :func:`selfattention.tasks.make_lookup_data` draws them: s uniform, the items s, s + 1 (the target) and
    ``n_items - 2`` of the other letters, every choice equally likely."""
    from itertools import combinations, permutations

    if n_sym < n_items or n_items < 2:
        raise ValueError(f"n_sym={n_sym}, n_items={n_items}: expected n_sym >= n_items >= 2")
    rank = np.argsort(np.array(list(permutations(range(n_sym)))), axis=1)   # (n_sym!, n_sym): letter places
    share = np.zeros(len(rank))
    for s in range(n_sym):
        t = (s + 1) % n_sym
        others = [k for k in range(n_sym) if k not in (s, t)]
        up, down = np.zeros(len(rank)), np.zeros(len(rank))
        picks = list(combinations(others, n_items - 2))
        for rest in picks:
            rivals = rank[:, [s, *rest]]
            up += (rank[:, [t]] > rivals).all(1)
            down += (rank[:, [t]] < rivals).all(1)
        share += np.maximum(up, down) / len(picks)
    return float(share.max() / n_sym)


def line_orders_on(X: Any) -> tuple[float, float]:
    """On the sequences ``X`` (n, N_ITEMS + 1, D_IN; the question token last, lookup offset 1): the smallest
    and largest share in which the target's key is the top key, over the orders of the letters on a line that
    reach :func:`line_bound` on average, each asked letter with the query sign that is best on average. The
    expected share is a mean over all sequences; a finite set lands around it."""
    from itertools import combinations, permutations

    from ..tasks import N_ITEMS, N_SYM

    X = np.asarray(X, dtype=float)
    if X.ndim != 3 or X.shape[1:] != (N_ITEMS + 1, 2 * N_SYM + 1):
        raise ValueError(f"X: expected shape (n, {N_ITEMS + 1}, {2 * N_SYM + 1}), got {X.shape}")
    rank = np.argsort(np.array(list(permutations(range(N_SYM)))), axis=1)   # (8!, 8): each letter's place
    share, up_sign = np.zeros(len(rank)), np.zeros((len(rank), N_SYM), dtype=bool)
    for s in range(N_SYM):
        t = (s + 1) % N_SYM
        others = [k for k in range(N_SYM) if k not in (s, t)]
        picks = list(combinations(others, N_ITEMS - 2))
        up, down = np.zeros(len(rank)), np.zeros(len(rank))
        for rest in picks:
            rivals = rank[:, [s, *rest]]
            up += (rank[:, [t]] > rivals).all(1)
            down += (rank[:, [t]] < rivals).all(1)
        share += np.maximum(up, down) / len(picks) / N_SYM
        up_sign[:, s] = up >= down
    best = rank[np.isclose(share, share.max())]                             # the optimal orders, (m, 8)
    s = X[:, -1, :N_SYM].argmax(-1)
    letters = X[:, :N_ITEMS, :N_SYM].argmax(-1)                             # (n, 4)
    is_target = letters == ((s + 1) % N_SYM)[:, None]
    places = best[:, letters]                                               # (m, n, 4)
    t_place = (places * is_target[None]).sum(-1, keepdims=True)             # (m, n, 1)
    top = np.where(up_sign[np.isclose(share, share.max())][:, s], (t_place >= places).all(-1),
                   (t_place <= places).all(-1))
    hits = top.mean(1)
    return float(hits.min()), float(hits.max())
