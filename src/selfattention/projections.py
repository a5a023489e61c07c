"""Lesson 04's measurements on score matrices (learnable projections): how often a word scores itself highest,
and how often two words each score the other above themselves (a *mutual preference*).

``own_top`` and ``mutual`` take a stack of score matrices ``S`` of shape ``(..., T, T)``, one per random
draw, with ``S[..., i, j] = omega_ij``, and return one share per matrix, shape ``(...,)``.
``shared_vs_separate`` runs the lesson's experiment: both shares, averaged over sentences, for random draws
of one shared W and of separate W_Q, W_K. ``shared_with_common_direction`` is its control: a shared W that is
not random (random columns plus one that reads the words' common direction), whose own top falls to chance
while mutual stays at 0.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["cycle", "mutual", "own_top", "random_setups", "shared_vs_separate",
           "shared_with_common_direction"]


def _scores(S: ArrayLike) -> NDArray[np.float64]:
    S = np.asarray(S, dtype=float)
    if S.ndim < 2 or S.shape[-1] != S.shape[-2] or S.shape[-1] < 2:
        raise ValueError(f"S should hold square score matrices (..., T, T), T >= 2; it has shape {S.shape}")
    return S


def own_top(S: ArrayLike) -> NDArray[np.float64]:
    """Share of rows i whose highest score is their own, omega_ii, per matrix: (..., T, T) -> (...,)."""
    S = _scores(S)
    return (S.argmax(axis=-1) == np.arange(S.shape[-1])).mean(axis=-1)


def mutual(S: ArrayLike) -> NDArray[np.float64]:
    """Share of the T(T-1)/2 pairs i < j with omega_ij > omega_ii and omega_ji > omega_jj (each word scores
    the other above itself), per matrix: (..., T, T) -> (...,)."""
    S = _scores(S)
    prefers = S > np.diagonal(S, axis1=-2, axis2=-1)[..., None]   # prefers[..., i, j]: omega_ij > omega_ii
    both = prefers & np.swapaxes(prefers, -1, -2)
    return np.triu(both, 1).sum(axis=(-2, -1)) / math.comb(S.shape[-1], 2)


def cycle(S: ArrayLike) -> NDArray[np.bool_]:
    """Whether each row i's highest score is word i + 1's (the last row's: word 0's), as in Exercise 1's
    pattern, per matrix: (..., T, T) -> (...,)."""
    S = _scores(S)
    T = S.shape[-1]
    return np.all(S.argmax(axis=-1) == (np.arange(T) + 1) % T, axis=-1)


def random_setups(X: ArrayLike, d_k: int, draws: int = 20000, seed: int = 0) -> dict[str, dict[str, float]]:
    """For ``draws`` random Gaussian W_a, W_b (d_model, d_k) and the sentence ``X`` (T, d_model), the
    scores (X W_a)(X W_other)^T of three set-ups: one shared W (W_other = W_a), separate W_Q, W_K
    (W_other = W_b) and W_K = -W_Q (W_other = -W_a). Returns {set-up: {"mutual": share of draws with a
    mutual pair, "own < 0": share with some omega_ii < 0, "cycle": share with each word's top score on the
    next word}}."""
    X = np.asarray(X, dtype=float)
    W_a, W_b = np.random.default_rng(seed).normal(size=(2, draws, X.shape[1], d_k))
    out = {}
    for setup, W_other in [("one shared W", W_a), ("separate W_Q, W_K", W_b), ("W_K = -W_Q", -W_a)]:
        S = (X @ W_a) @ np.swapaxes(X @ W_other, -1, -2)                        # (draws, T, T)
        out[setup] = {"mutual": float(np.mean(mutual(S) > 0)),
                      "own < 0": float(np.mean((np.diagonal(S, axis1=-2, axis2=-1) < 0).any(axis=-1))),
                      "cycle": float(np.mean(cycle(S)))}
    return out


def _sentences(Xs: list[ArrayLike]) -> list[NDArray[np.float64]]:
    Xs = [np.asarray(X, dtype=float) for X in Xs]
    if not Xs or any(X.ndim != 2 or X.shape[1] != Xs[0].shape[1] for X in Xs):
        raise ValueError(f"Xs should be sentences (T, d_model) of one d_model; got shapes "
                         f"{[X.shape for X in Xs]}")
    return Xs


def shared_vs_separate(Xs: list[ArrayLike], d_k: int, draws: int = 8, seed: int = 0
                       ) -> dict[str, dict[str, NDArray[np.float64]]]:
    """Own top and mutual shares, averaged over the sentences ``Xs`` (each ``(T, d_model)``), for ``draws``
    random projections ``(d_model, d_k)`` with entries N(0, 1/d_model).

    Returns ``{"one shared W": {"own top": (draws,), "mutual": (draws,)}, "separate W_Q, W_K": {...}}``:
    with one shared W the scores are ``(X W)(X W)^T``; with separate ones ``(X W_Q)(X W_K)^T``, where W_Q is
    the shared draw and W_K a second, independent one (the control)."""
    Xs = _sentences(Xs)
    if d_k < 1 or draws < 1:
        raise ValueError(f"d_k and draws should be at least 1; got d_k={d_k}, draws={draws}")
    d_model = Xs[0].shape[1]
    W_a, W_b = np.random.default_rng(seed).normal(size=(2, draws, d_model, d_k)) / np.sqrt(d_model)
    out = {}
    for name, W_other in (("one shared W", W_a), ("separate W_Q, W_K", W_b)):
        S = [(X @ W_a) @ np.swapaxes(X @ W_other, -1, -2) for X in Xs]     # (draws, T, T) per sentence
        out[name] = {"own top": np.mean([own_top(s) for s in S], axis=0),
                     "mutual": np.mean([mutual(s) for s in S], axis=0)}
    return out


def shared_with_common_direction(Xs: list[ArrayLike], d_k: int = 64, scale: float = 10.0, draws: int = 8,
                                 seed: int = 0) -> dict[str, NDArray[np.float64]]:
    """Own top and mutual shares, averaged over the sentences ``Xs`` (each ``(T, d_model)``), for ``draws``
    shared projections ``W`` of shape ``(d_model, d_k + 1)``: ``d_k`` random columns, entries N(0, 1/d_model),
    plus one column ``scale * u``, where ``u`` is the unit vector along the mean of every word in ``Xs``.

    Scores are ``(X W)(X W)^T``: one shared W, so symmetric and never mutual, but not random.
    Returns ``{"own top": (draws,), "mutual": (draws,)}``."""
    Xs = _sentences(Xs)
    if d_k < 0 or draws < 1:
        raise ValueError(f"d_k should be at least 0 and draws at least 1; got d_k={d_k}, draws={draws}")
    mean = np.concatenate(Xs).mean(axis=0)                                  # (d_model,)
    if not np.linalg.norm(mean) > 0:
        raise ValueError("the words in Xs have a zero mean: there is no common direction to read")
    u = mean / np.linalg.norm(mean)
    d_model = Xs[0].shape[1]
    W_rand = np.random.default_rng(seed).normal(size=(draws, d_model, d_k)) / np.sqrt(d_model)
    W = np.concatenate([W_rand, np.broadcast_to(scale * u[:, None], (draws, d_model, 1))], axis=-1)
    S = [(X @ W) @ np.swapaxes(X @ W, -1, -2) for X in Xs]                 # (draws, T, T) per sentence
    return {"own top": np.mean([own_top(s) for s in S], axis=0),
            "mutual": np.mean([mutual(s) for s in S], axis=0)}
