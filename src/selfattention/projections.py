"""Lesson 04's measurements on score matrices (learnable projections): how often a word scores itself highest,
and how often two words each score the other above themselves (a *mutual preference*).

Both take a stack of score matrices ``S`` of shape ``(..., T, T)``, one per random draw, with
``S[..., i, j] = omega_ij``, and return one share per matrix, shape ``(...,)``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["mutual", "own_top"]


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
