"""Lesson 08's experiments on the lookup task with two (or three) answers, behind names a learner can read.

A run trains ``Heads`` (single heads side by side, their outputs concatenated as a layer does before W_O)
and a readout of the query token's output with lesson 05's loop, and returns ``(model, weights, right)``:
the trained model, its held-out weights (n, heads, T, T) and which answers it got right (n, answers).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence

import numpy as np
import torch
from torch import Tensor, nn

from . import layers, tasks
from .plots import heads as head_plots

__all__ = ["Heads", "lookup_data", "run", "train_seeds", "with_new_mlp_readouts",
           "with_best_linear_readouts", "accuracy_table", "blend_summary", "lighter_answer_sources",
           "three_answers", "three_answer_runs", "digit_points", "is_corner", "corner_fractions",
           "query_weights"]


class Heads(nn.Module):
    """``num_heads`` single heads (``layers.SelfAttention`` of width ``d_k``) side by side:
    forward(x (batch, T, 17)) -> (concatenated outputs (batch, T, num_heads d_k),
    weights (batch, num_heads, T, T))."""

    def __init__(self, num_heads: int, d_k: int) -> None:
        super().__init__()
        self.heads = nn.ModuleList(layers.SelfAttention(tasks.D_IN, d_k) for _ in range(num_heads))

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        outputs, weights = zip(*(head(x) for head in self.heads), strict=True)
        return torch.cat(outputs, dim=-1), torch.stack(weights, dim=1)


def lookup_data(offsets: Sequence[int]) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The lesson's data for ``offsets``: 2,000 training sequences (seed 1), 500 held out (seed 2)."""
    return (*tasks.make_lookup_data(2000, seed=1, offsets=offsets),
            *tasks.make_lookup_data(500, seed=2, offsets=offsets))


def run(num_heads: int, d_k: int, data: tuple, seed: int, *, hidden: int | None = None,
        steps: int = 160, frozen: nn.Module | None = None) -> tuple[nn.Module, Tensor, Tensor]:
    """Train ``Heads(num_heads, d_k)`` and a readout (linear, or ``hidden`` ReLU units between two linear
    maps) for ``steps`` steps of 100 sequences; with ``frozen`` (trained heads), those heads are kept as
    they are and only the new readout learns. Returns (model, held-out weights, right (n, answers))."""
    answers = data[3].view(len(data[3]), -1).shape[1]
    torch.manual_seed(seed)
    model = tasks.ReadoutModel(Heads(num_heads, d_k), num_heads * d_k, answers=answers)
    if hidden:
        model.readout = nn.Sequential(nn.Linear(num_heads * d_k, hidden), nn.ReLU(),
                                      nn.Linear(hidden, answers * tasks.N_SYM))
    if frozen is not None:
        model.attention = copy.deepcopy(frozen).requires_grad_(False)
    tasks.train(model, data, steps=steps, every=steps)
    with torch.no_grad():
        logits, weights = model(data[2])
    return model, weights, (logits.argmax(-1) == data[3]).view(len(data[3]), -1)


def train_seeds(num_heads: int, d_k: int, data: tuple, seeds: Iterable[int], **options) -> list:
    """:func:`run` once per seed (same options): a list of (model, weights, right)."""
    return [run(num_heads, d_k, data, seed, **options) for seed in seeds]


def with_new_mlp_readouts(runs: Sequence, data: tuple, hidden: int = 32, steps: int = 480) -> list:
    """Each run's trained heads, frozen, read by a new MLP readout (``hidden`` ReLUs) trained ``steps`` steps
    from the run's seed (its position in ``runs``)."""
    return [run(len(m.attention.heads), m.attention.heads[0].W_value.out_features, data, seed, hidden=hidden,
                steps=steps, frozen=m.attention) for seed, (m, _, _) in enumerate(runs)]


def with_best_linear_readouts(runs: Sequence, data: tuple) -> list:
    """Each run's trained heads, frozen, read by the best linear readout: the one with the lowest
    cross-entropy on the training sequences (:func:`~selfattention.plots.heads.best_linear_readout`)."""
    return [head_plots.best_linear_readout(m, data) for m, _, _ in runs]


def accuracy_table(groups: dict[str, Sequence]) -> str:
    """Per condition (name -> runs): min-max over seeds of the fraction of sequences with every answer
    right."""
    return head_plots.range_table({name: [r[2].all(1).float().mean().item() for r in group]
                                   for name, group in groups.items()}, "all answers right")


def blend_summary(groups: dict[str, Sequence], where: Tensor) -> str:
    """Per group of one-head runs: min-max over seeds of the mean weight on the heavier and on the lighter of
    the two answer items (``where`` from ``role_positions``)."""
    lines = []
    for name, group in groups.items():
        blend = torch.stack([head_plots.by_role(w, where)[:, 0, :2].mean(0).sort(descending=True).values
                             for _, w, _ in group])
        lines.append(f"{name}: mean weight on the heavier item {blend[:, 0].min():.2f}-"
                     f"{blend[:, 0].max():.2f}, on the lighter "
                     f"{blend[:, 1].min():.2f}-{blend[:, 1].max():.2f}")
    return "\n".join(lines)


def lighter_answer_sources(group: Sequence, X: Tensor, where: Tensor) -> str:
    """Per one-head run (a seed), where the digit it gives for the lighter answer comes from: the lighter
    item's own digit (right), the heavier answer item's digit, the distractor's, the other item's, or a digit
    absent from the sequence; min-max over seeds of the fraction of the n sequences. The lighter answer is the
    one whose item the query weights less on average (``where`` from ``role_positions``)."""
    digits = X[:, :, 8:16].argmax(-1).masked_fill(X[:, :, 8:16].sum(-1) == 0, -1)   # (n, T); -1: no digit
    on_role = torch.take_along_dim(digits, where[:, :4], dim=1)       # next, previous, distractor, other
    shares = []
    for model, weights, _ in group:
        with torch.no_grad():
            said = model(X)[0].argmax(-1).view(len(X), -1)
        light = int(head_plots.by_role(weights, where)[:, 0, :2].mean(0).argmin())
        got = said[:, light]
        own, heavy = got == on_role[:, light], got == on_role[:, 1 - light]
        rest = [got == on_role[:, 2], got == on_role[:, 3]]
        shares.append([own, heavy, *rest, ~(own | heavy | rest[0] | rest[1])])
    frac = torch.tensor([[s.float().mean().item() for s in seed] for seed in shares])
    names = ("its own item's digit (right)", "the heavier answer's digit", "the distractor's",
             "the other item's", "a digit not in the sequence")
    return (f"lighter answer, {len(group)} seed{'s' * (len(group) != 1)} (min-max): "
            + ", ".join(f"{n} {frac[:, k].min():.2f}-{frac[:, k].max():.2f}" for k, n in enumerate(names)))


def three_answer_runs(configs: dict[str, tuple[int, int]], seeds: Sequence[int],
                      offsets: Sequence[int] = (1, -1, 2)) -> tuple[tuple, dict[str, list]]:
    """The three-answer data (``lookup_data(offsets)``) and each configuration (name -> (num_heads, d_k))
    trained on it once per seed: (data, name -> runs)."""
    data = lookup_data(offsets)
    return data, {name: train_seeds(h, d_k, data, seeds) for name, (h, d_k) in configs.items()}


def three_answers(configs: dict[str, tuple[int, int]], seeds: Sequence[int],
                  offsets: Sequence[int] = (1, -1, 2), trained: tuple | None = None) -> str:
    """Train each configuration (name -> (num_heads, d_k)) on three answers, once per seed (or take
    ``trained`` from :func:`three_answer_runs`). Report the range over seeds of the fraction with all three
    right and, for models of several heads, per target, the range over seeds of the fraction of held-out
    sequences in which that target's item is the heaviest of the four items in at least one head, and the
    range over seeds of the least such fraction."""
    data, trained_runs = trained if trained is not None else three_answer_runs(configs, seeds, offsets)
    at = head_plots.role_positions(data[2], offsets)
    lines = []
    for name, (h, _) in configs.items():
        runs = trained_runs[name]
        right = [r[2].all(1).float().mean().item() for r in runs]
        lines.append(f"{name:20} all three right, {len(runs)} seeds: {min(right):.3f} to {max(right):.3f}")
        if h > 1:
            tops = []
            for _, w, _ in runs:
                heaviest = w[:, :, -1, :tasks.N_ITEMS].argmax(-1)                    # (n, heads): a position
                tops.append(torch.stack([(heaviest == at[:, t, None]).any(1).float().mean()
                                         for t in range(len(offsets))]))
            tops = torch.stack(tops)                                                  # (seeds, targets)
            least = tops.min(1).values                                                # (seeds,)
            lines.append(f"  per seed, the target least often heaviest in some head: on {least.min():.3f} to "
                         f"{least.max():.3f} of sequences")
            for t, o in enumerate(offsets):
                lines.append(f"  target {o:+d}: heaviest item in some head on {tops[:, t].min():.3f} to "
                             f"{tops[:, t].max():.3f} of sequences (per seed: "
                             + ", ".join(f"{v:.3f}" for v in tops[:, t].tolist()) + ")")
    return "\n".join(lines)


def digit_points(weights: Tensor, X: Tensor) -> np.ndarray:
    """Each digit's point: the query token's weight, in each head, on the item that holds the digit; a digit
    absent from the sequence sits at 0. ``weights`` (n, heads, T, T), ``X`` (n, T, 17) -> (n, 8, 2): a
    single head's points get 0 as their second coordinate (they lie on a line)."""
    w = np.asarray(weights[:, :, -1, :tasks.N_ITEMS], dtype=float)                  # (n, heads, items)
    digits = np.asarray(X[:, :tasks.N_ITEMS, 8:16], dtype=float)                     # (n, items, 8)
    points = np.einsum("nhi,nid->ndh", w, digits)
    if points.shape[-1] == 1:
        points = np.concatenate([points, np.zeros_like(points)], axis=-1)
    return points[..., :2]


def is_corner(points: np.ndarray, which: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Whether point ``which[n]`` of each set ``points[n]`` (n, m, 2) is a corner of the set: an extreme
    point, one that no segment between other points of the set passes through. In the plane, p is a corner
    exactly when the directions from p to the other points (duplicates of p left out) leave a gap over pi."""
    out = np.zeros(len(points), dtype=bool)
    for n, (pts, k) in enumerate(zip(points, which, strict=True)):
        d = pts - pts[k]
        d = d[np.linalg.norm(d, axis=1) > tol]
        if len(d) == 0:
            out[n] = True
            continue
        angles = np.sort(np.arctan2(d[:, 1], d[:, 0]))
        gaps = np.append(np.diff(angles), 2 * np.pi - (angles[-1] - angles[0]))
        out[n] = gaps.max() > np.pi + 1e-7
    return out


def corner_fractions(runs: Sequence, X: Tensor, where: Tensor, names: Sequence[str]) -> str:
    """Per role (``names``: the roles of ``where``'s first columns, from ``role_positions``), the range over
    the runs (seeds) of the fraction of sequences in which that item's digit is a corner of the digits' points
    (:func:`digit_points`), and the fraction over all runs and sequences."""
    digit = X[:, :tasks.N_ITEMS, 8:16].argmax(-1)                                   # (n, items)
    rows = []
    for r, name in enumerate(names):
        which = torch.take_along_dim(digit, where[:, r:r + 1], dim=1)[:, 0].numpy()
        per_run = [is_corner(digit_points(w, X), which).mean() for _, w, _ in runs]
        rows.append(f"  {name:12} a corner on {min(per_run):.3f} to {max(per_run):.3f} of sequences per "
                    f"seed; {np.mean(per_run):.3f} of all {len(runs) * len(X)}")
    targets = [r for r, name in enumerate(names) if name != "distractor"]
    every = []
    for _, w, _ in runs:
        points = digit_points(w, X)
        on = [is_corner(points, torch.take_along_dim(digit, where[:, r:r + 1], dim=1)[:, 0].numpy())
              for r in targets]
        every.append(np.mean(np.all(on, axis=0)))
    rows.append(f"  all {len(targets)} targets corners at once: on {min(every):.3f} to {max(every):.3f} "
                f"of sequences per seed")
    return "\n".join(rows)


def query_weights(W_Q, W_K, X) -> np.ndarray:
    """The query token's (last position's) weights (n, T) in one head with query and key matrices W_Q,
    W_K ((17, d_k) arrays) on the sequences X (n, T, 17): scores q . k_j over sqrt(d_k), one softmax each."""
    W_Q, W_K = np.asarray(W_Q, dtype=float), np.asarray(W_K, dtype=float)
    X = np.asarray(X, dtype=float)
    scores = np.einsum("nd,ntd->nt", X[:, -1] @ W_Q, X @ W_K) / np.sqrt(W_Q.shape[1])
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)
