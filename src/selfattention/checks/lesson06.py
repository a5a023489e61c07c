"""Checks for lesson 06 (limits and masks): causal weights, positional encodings,
the memory of the score matrix, and the online (block-by-block) softmax."""

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
    "check_score_matrix_gb",
    "check_online_weighted_sum",
]


# ---------------------------------------------------------------- exercise 1: causal weights
def _causal_reference(scores: np.ndarray) -> np.ndarray:
    """(T, T) scores -> (T, T) softmax weights with everything above the diagonal at exactly 0."""
    return softmax(np.where(causal_mask(scores.shape[-1]), scores, -np.inf), axis=-1)


def _causal_mistakes(case: tuple[np.ndarray]) -> dict[str, np.ndarray]:
    (scores,) = case
    T = scores.shape[-1]
    lower = causal_mask(T)
    with np.errstate(invalid="ignore"):  # the first row has no key left: 0/0
        strict = np.nan_to_num(softmax(np.where(np.tril(lower, -1), scores, -np.inf)))
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
        "the diagonal was masked too: a token must be allowed to see itself (key j <= query i, "
        "not j < i).": strict,
    }


def _causal_cases() -> list[tuple[np.ndarray]]:
    rng = np.random.default_rng(6)
    return [(rng.normal(size=(3, 3)).round(2),), (rng.normal(size=(6, 6)) * 3,)]


def check_causal_weights(causal_attention_weights: Callable[[np.ndarray], Any]) -> None:
    """Exercise 1: softmax of (T, T) scores under a causal mask; future weights exactly 0."""
    cases = _causal_cases()
    check_function(causal_attention_weights, _causal_reference, cases, "causal_attention_weights",
                   mistakes=_causal_mistakes, rows_sum_to_one=True,
                   describe=lambda c: f"a {c[0].shape[0]}x{c[0].shape[0]} score matrix")
    for (scores,) in cases:
        got = np.asarray(causal_attention_weights(scores), dtype=float)
        future = ~causal_mask(scores.shape[-1])
        if not np.all(got[future] == 0.0):
            worst = float(np.abs(got[future]).max())
            raise ExerciseError(
                f"your weights above the diagonal are small but not exactly 0 (largest: {worst:.3g}). "
                "A subtracted constant leaves a little weight on the future; use -np.inf, which "
                "gives exp(-inf) = 0 exactly."
            )
    passed("every row sums to 1 and each token gives exactly 0 weight to the tokens after it.")


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
    check_function(positional_encoding, sinusoidal_positional_encoding, [(3, 4), (10, 8)],
                   "positional_encoding", mistakes=_pe_mistakes,
                   describe=lambda c: f"T={c[0]}, d={c[1]}")
    passed("your encoding matches sa.sinusoidal_positional_encoding (T=10, d=8 included).")


# ---------------------------------------------------------------- exercise 3: memory of the scores
def _gb_reference(T: int, num_heads: int = 1, bytes_per_number: int = 4) -> float:
    return T * T * num_heads * bytes_per_number / 1e9


def _gb_mistakes(case: tuple[int, int, int]) -> dict[str, float]:
    T, h, b = case
    return {
        "it grows like T, not T^2: the score matrix has T rows AND T columns.": T * h * b / 1e9,
        "the bytes per number are missing: multiply the count of scores by bytes_per_number.":
            T * T * h / 1e9,
        "it is in GiB (2**30 bytes); the exercise asks for GB (10**9 bytes).": T * T * h * b / 2**30,
        "the heads are missing: each head has its own T x T matrix.": T * T * b / 1e9,
        "it counts each pair once (T(T-1)/2); attention scores every query against every key, "
        "T^2 numbers.": T * (T - 1) / 2 * h * b / 1e9,
    }


def check_score_matrix_gb(score_matrix_gb: Callable[..., Any]) -> None:
    """Exercise 3: gigabytes held by the attention scores of one layer."""
    cases = [(1000, 1, 4), (100_000, 1, 4), (4096, 12, 2)]
    check_function(score_matrix_gb, _gb_reference, cases, "score_matrix_gb",
                   mistakes=_gb_mistakes, rtol=1e-6,
                   describe=lambda c: f"T={c[0]:,}, num_heads={c[1]}, bytes_per_number={c[2]}")
    passed(f"100,000 tokens need {_gb_reference(100_000):.0f} GB of float32 scores per head, "
           "before anything else is stored.")


# ---------------------------------------------------------------- exercise 4: online softmax
def _online_reference(scores: np.ndarray, values: np.ndarray, block_size: int) -> np.ndarray:
    return softmax(scores) @ values


def _online_variant(scores: np.ndarray, values: np.ndarray, block_size: int, *,
                    rescale: bool = True, divide: bool = True) -> np.ndarray:
    m, total, acc = -np.inf, 0.0, np.zeros(values.shape[-1])
    for start in range(0, len(scores), block_size):
        s, v = scores[start:start + block_size], values[start:start + block_size]
        new_m = max(m, float(s.max()))
        c = np.exp(m - new_m) if rescale else 1.0
        p = np.exp(s - new_m)
        total, acc, m = total * c + p.sum(), acc * c + p @ v, new_m
    return acc / total if divide else acc


def _online_mistakes(case: tuple[np.ndarray, np.ndarray, int]) -> dict[str, np.ndarray]:
    return {
        "the running sum and the running output were not rescaled when the maximum grew. When a "
        "block raises the maximum from m to m_new, multiply both by exp(m - m_new) before adding "
        "the new block.": _online_variant(*case, rescale=False),
        "the final division is missing: return the running output divided by the running sum.":
            _online_variant(*case, divide=False),
    }


def _online_cases() -> list[tuple[np.ndarray, np.ndarray, int]]:
    rng = np.random.default_rng(60)
    s1 = np.array([0.5, 2.0, -1.0, 3.0, 0.0, 1.0])
    v1 = rng.normal(size=(6, 2))
    s2 = rng.normal(size=10) * 4          # 10 keys in blocks of 3: the last block is shorter
    v2 = rng.normal(size=(10, 3))
    s3 = np.linspace(0, 1000, 7)          # scores far too large for a plain np.exp
    v3 = rng.normal(size=(7, 2))
    return [(s1, v1, 2), (s2, v2, 3), (s3, v3, 2), (s2, v2, 1)]


def check_online_weighted_sum(online_weighted_sum: Callable[..., Any]) -> None:
    """Exercise 4: softmax(scores) @ values for one query, computed block by block."""
    check_function(
        online_weighted_sum, _online_reference, _online_cases(), "online_weighted_sum",
        mistakes=_online_mistakes,
        describe=lambda c: f"{len(c[0])} scores in blocks of {c[2]} (scores up to {c[0].max():.4g})",
    )
    passed("block by block, your running softmax gives exactly the full softmax's weighted sum, "
           "even for scores of 1000.")
