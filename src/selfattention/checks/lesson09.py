"""Checks for lesson 09 (limits and masks): causal weights and the online (block-by-block) softmax.

Each check's own inputs make every named mistake give a result different from the right answer and from every
other named mistake (``tests/test_mistakes_lesson06.py`` feeds each one), and include numerically hard inputs:
scores near +-1000, where an ``np.exp`` without the maximum subtracted overflows or underflows, and near-ties.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import causal_mask, softmax
from ..positional import sinusoidal_positional_encoding
from ._engine import ExerciseError, check_function, passed

__all__ = [
    "check_causal_weights",
    "check_positional_encoding",
    "check_online_weighted_sum",
]

CAUSAL_DIAGONAL = ("the diagonal was masked too: a token must be allowed to see itself (key j <= query i, "
                   "not j < i), so the first token has no key left.")
OVERFLOW = ("on scores near 1000 your result is NaN or infinite: np.exp(1000) overflows. Subtract the "
            "(running) maximum before np.exp; the softmax does not change.")


# ---------------------------------------------------------------- exercise 1: causal weights
def _causal_reference(scores: np.ndarray) -> np.ndarray:
    """(T, T) scores -> (T, T) softmax weights with everything above the diagonal at exactly 0."""
    return softmax(np.where(causal_mask(scores.shape[-1]), scores, -np.inf), axis=-1)


def _causal_strict(scores: np.ndarray) -> np.ndarray:
    """The diagonal masked too (j < i): the first row has no key left; sa.softmax gives it zeros."""
    return softmax(np.where(np.tril(causal_mask(scores.shape[-1]), -1), scores, -np.inf), axis=-1)


def _causal_mistakes(case: tuple[np.ndarray]) -> dict[str, np.ndarray]:
    (scores,) = case
    lower = causal_mask(scores.shape[-1])
    return {
        "no mask was applied: every token still sees the tokens after it. Set the scores above "
        "the diagonal to -np.inf before the softmax.": softmax(scores),
        "the mask points the wrong way: each token sees the future and not the past. The causal "
        "mask is True on and BELOW the diagonal (np.tril), key j <= query i.": softmax(
            np.where(lower.T, scores, -np.inf)
        ),
        "the future entries were set to 0 after the softmax, so the rows no longer sum to 1. Mask "
        "the scores (with -np.inf) before the softmax instead.": softmax(scores) * lower,
        "the masked scores were set to 0, not -inf: exp(0) = 1, so the future still gets weight. "
        "Use -np.inf (exp(-inf) = 0).": softmax(np.where(lower, scores, 0.0)),
        "the softmax was taken over the columns (axis=0): each query's weights over the keys must "
        "sum to 1, so use axis=-1.": softmax(np.where(lower, scores, -np.inf), axis=0),
        CAUSAL_DIAGONAL: _causal_strict(scores),
    }


def _causal_cases() -> list[tuple[np.ndarray]]:
    rng = np.random.default_rng(6)
    large = 1000.0 + rng.normal(size=(5, 5))          # scores near 1000: np.exp overflows without the max
    ties = np.full((4, 4), 2.0)
    ties[:, 1] += 1e-9                                # near-ties: weights close to uniform
    return [(rng.normal(size=(3, 3)).round(2),), (rng.normal(size=(6, 6)) * 3,), (large,), (ties,)]


def check_causal_weights(causal_attention_weights: Callable[[np.ndarray], Any]) -> None:
    """Exercise 1: softmax of (T, T) scores under a causal mask; future weights exactly 0."""
    cases = _causal_cases()
    for (scores,) in cases[:1]:
        # A learner's own softmax turns the strict mask's empty first row into NaN (0/0): name it here,
        # before the engine reports NaN in general.
        try:
            got = np.asarray(causal_attention_weights(scores.copy()), dtype=float)
        except Exception:
            got = None
        if got is not None and got.shape == scores.shape and not np.isfinite(got).all():
            if np.allclose(np.nan_to_num(got), _causal_strict(scores)):
                raise ExerciseError(f"the result of causal_attention_weights is not right yet: {CAUSAL_DIAGONAL}")
    check_function(causal_attention_weights, _causal_reference, cases, "causal_attention_weights",
                   mistakes=_causal_mistakes, rows_sum_to_one=True,
                   describe=lambda c: f"a {c[0].shape[0]}x{c[0].shape[0]} score matrix with scores up to "
                                      f"{c[0].max():.4g}")
    for (scores,) in cases:
        got = np.asarray(causal_attention_weights(scores.copy()), dtype=float)
        future = ~causal_mask(scores.shape[-1])
        if not np.all(got[future] == 0.0):
            worst = float(np.abs(got[future]).max())
            raise ExerciseError(
                f"your weights above the diagonal are small but not exactly 0 (largest: {worst:.3g}). "
                "A subtracted constant leaves a little weight on the future; use -np.inf, which "
                "gives exp(-inf) = 0 exactly."
            )
    passed("every row sums to 1 and each token gives exactly 0 weight to the tokens after it, "
           "scores near 1000 included.")


# ---------------------------------------------------------------- exercise 2: positional encoding
def _pe_wrong_column_exponent(T: int, d: int) -> np.ndarray:
    pe = np.zeros((T, d))
    for pos in range(T):
        for j in range(d):
            angle = pos / 10000.0 ** (j / d)
            pe[pos, j] = np.sin(angle) if j % 2 == 0 else np.cos(angle)
    return pe


def _pe_mistakes(case: tuple[int, int]) -> dict[str, np.ndarray]:
    T, d = case
    pe = sinusoidal_positional_encoding(T, d)
    swapped = np.zeros((T, d))
    swapped[:, 0::2], swapped[:, 1::2] = pe[:, 1::2], pe[:, 0::2]
    pairs = np.arange(d // 2)
    half = np.zeros((T, d))
    angles = np.arange(T)[:, None] / 10000.0 ** (pairs / d)
    half[:, 0::2], half[:, 1::2] = np.sin(angles), np.cos(angles)
    return {
        "sine and cosine are swapped: even columns 2i hold the sine, odd columns 2i+1 the cosine.": swapped,
        "each column used its own index j in the exponent. Both columns of a pair (2i and 2i+1) "
        "share one frequency, 1 / 10000^(2i/d).": _pe_wrong_column_exponent(T, d),
        "the exponent is i/d; it should be 2i/d (i counts sine/cosine pairs).": half,
        "positions start at 1; the first position is 0 (its row is 0, 1, 0, 1, ...).":
            sinusoidal_positional_encoding(T + 1, d)[1:],
    }


def check_positional_encoding(positional_encoding: Callable[[int, int], Any]) -> None:
    """Exercise 2: the sinusoidal encoding (T, d), d even, written with loops."""
    check_function(positional_encoding, sinusoidal_positional_encoding, [(3, 4), (10, 8), (50, 6)],
                   "positional_encoding", mistakes=_pe_mistakes,
                   describe=lambda c: f"T={c[0]}, d={c[1]}")
    passed("your encoding matches sa.sinusoidal_positional_encoding (T=10, d=8 included).")


# ---------------------------------------------------------------- exercise 3: online softmax
def _online_reference(scores: np.ndarray, values: np.ndarray, block_size: int) -> np.ndarray:
    return softmax(scores) @ values


def _online_variant(scores: np.ndarray, values: np.ndarray, block_size: int, *,
                    rescale_sum: bool = True, rescale_out: bool = True, divide: bool = True) -> np.ndarray:
    """The online softmax with one step left out (the check's known mistakes)."""
    m, total, acc = -np.inf, 0.0, np.zeros(values.shape[-1])
    for start in range(0, len(scores), block_size):
        s, v = scores[start:start + block_size], values[start:start + block_size]
        new_m = max(m, float(s.max()))
        c = np.exp(m - new_m)
        p = np.exp(s - new_m)
        total = (total * c if rescale_sum else total) + p.sum()
        acc = (acc * c if rescale_out else acc) + p @ v
        m = new_m
    return acc / total if divide else acc


def _online_mistakes(case: tuple[np.ndarray, np.ndarray, int]) -> dict[str, np.ndarray]:
    return {
        "neither the running sum nor the running output was rescaled when the maximum grew. When a "
        "block raises the maximum from m to m_new, multiply both by exp(m - m_new) before adding "
        "the new block.": _online_variant(*case, rescale_sum=False, rescale_out=False),
        "the running sum was rescaled but the running output was not: multiply the output by "
        "exp(m - m_new) as well.": _online_variant(*case, rescale_out=False),
        "the running output was rescaled but the running sum was not: multiply the sum by "
        "exp(m - m_new) as well.": _online_variant(*case, rescale_sum=False),
        "the final division is missing: return the running output divided by the running sum.":
            _online_variant(*case, divide=False),
    }


def _online_cases() -> list[tuple[np.ndarray, np.ndarray, int]]:
    rng = np.random.default_rng(60)
    s1 = np.array([0.5, 2.0, -1.0, 3.0, 0.0, 1.0])   # the maximum grows from block to block
    v1 = rng.normal(size=(6, 2))
    s2 = rng.normal(size=10) * 4                      # 10 keys in blocks of 3: the last block is shorter
    v2 = rng.normal(size=(10, 3))
    s3 = np.linspace(0, 1000, 7)                      # np.exp(1000) overflows
    v3 = rng.normal(size=(7, 2))
    s4 = -1000.0 + np.array([0.0, 1e-9, 3.0, 1e-9, 2.0])   # near -1000 (and near-ties): np.exp underflows to 0
    v4 = rng.normal(size=(5, 2))
    return [(s1, v1, 2), (s2, v2, 3), (s3, v3, 2), (s4, v4, 2), (s2, v2, 1)]


def _online_nonfinite(fn: Callable[..., Any], case: tuple[np.ndarray, np.ndarray, int]) -> bool:
    try:
        got = np.asarray(fn(*(np.copy(case[0]), np.copy(case[1]), case[2])), dtype=float)
    except Exception:
        return False
    return got.shape == case[1].shape[-1:] and not np.isfinite(got).all()


def check_online_weighted_sum(online_weighted_sum: Callable[..., Any]) -> None:
    """Exercise 3: softmax(scores) @ values for one query, computed block by block."""
    cases = _online_cases()
    name = "the result of online_weighted_sum"
    if callable(online_weighted_sum):
        if _online_nonfinite(online_weighted_sum, cases[2]):
            raise ExerciseError(f"{name} is not right yet: {OVERFLOW}")
        if _online_nonfinite(online_weighted_sum, cases[3]):
            raise ExerciseError(
                f"{name} is not right yet: on scores near -1000 your result is NaN or infinite: every "
                "np.exp underflowed to 0 and the sum is 0. Start the running maximum at -np.inf (not 0) "
                "and subtract it, so the largest term is exp(0) = 1."
            )
    check_function(
        online_weighted_sum, _online_reference, cases, "online_weighted_sum",
        mistakes=_online_mistakes,
        describe=lambda c: f"{len(c[0])} scores in blocks of {c[2]} (scores from {c[0].min():.4g} "
                           f"to {c[0].max():.4g})",
    )
    passed("block by block, your running softmax gives exactly the full softmax's weighted sum, "
           "for scores near 1000 and near -1000 too.")
