"""Checks for lesson 06 (scaling by 1/sqrt(d_k)).

Each check builds its own inputs and reference answers, and knows the typical wrong answers of
its exercise, so that the message names the mistake.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, check_array, check_function, check_value, passed, reference_softmax

__all__ = [
    "check_scaled_scores",
    "check_score_divisor",
    "check_softmax_jacobian",
    "check_scaled_attention",
]


def _scores(Q: np.ndarray, K: np.ndarray, divisor: float) -> np.ndarray:
    return Q @ np.swapaxes(K, -1, -2) / divisor


def _call(fn: Callable[..., Any], name: str, args: tuple, what: str) -> Any:
    """Call the learner's function; turn a crash into one plain sentence."""
    try:
        return fn(*args)
    except NotImplementedError:
        raise ExerciseError(f"{name} still raises NotImplementedError: replace that line with your code.") from None
    except ExerciseError:
        raise
    except Exception as exc:
        raise ExerciseError(f"{name} raised {type(exc).__name__} on {what}: {exc}") from None


# ----------------------------------------------------------------------------------------------
# Exercise 1: the scaled scores Q K^T / sqrt(d_k)


def _score_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    # Every size differs (T_q = 3, T_k = 5, d_k = 6), so dividing by the wrong one gives its own result;
    # the second case has large entries (scores in the hundreds).
    rng = np.random.default_rng(4)
    Q, K = rng.standard_normal((3, 6)), rng.standard_normal((5, 6))
    return [(Q, K), (30.0 * rng.standard_normal((3, 6)), 30.0 * rng.standard_normal((5, 6)))]


def _score_mistakes(case: tuple[np.ndarray, np.ndarray]) -> dict[str, np.ndarray]:
    Q, K = case
    d_k, T_q, T_k = Q.shape[-1], Q.shape[-2], K.shape[-2]
    mistakes = {
        "these are the raw dot products Q K^T; divide them by sqrt(d_k).": _scores(Q, K, 1.0),
        f"you divided by d_k = {d_k}; divide by its square root, sqrt(d_k) = {np.sqrt(d_k):.4g}.":
            _scores(Q, K, d_k),
        f"you divided by the square root of the number of keys (T_k = {T_k}); the factor is "
        f"sqrt(d_k), the length of each query and key vector (Q.shape[-1]).": _scores(Q, K, np.sqrt(T_k)),
        f"you divided by the square root of the number of queries (T_q = {T_q}, Q.shape[-2]); the factor is "
        f"sqrt(d_k), the length of each query and key vector (Q.shape[-1]).": _scores(Q, K, np.sqrt(T_q)),
        "you multiplied by sqrt(d_k); divide by it instead.": _scores(Q, K, 1.0 / np.sqrt(d_k)),
    }
    if Q.ndim == 3:
        mistakes[f"you divided by the square root of the batch size ({Q.shape[0]}, Q.shape[0]); d_k is the "
                 f"last axis, Q.shape[-1], whatever the number of leading axes."] = _scores(Q, K, np.sqrt(Q.shape[0]))
    return mistakes


def check_scaled_scores(scaled_scores: Callable[[np.ndarray, np.ndarray], Any]) -> None:
    """Exercise 1: ``scaled_scores(Q, K)`` returns ``Q K^T / sqrt(d_k)``, batches included."""
    check_function(
        scaled_scores,
        lambda Q, K: _scores(Q, K, np.sqrt(Q.shape[-1])),
        _score_cases(),
        "scaled_scores",
        mistakes=_score_mistakes,
    )
    rng = np.random.default_rng(40)
    Qb, Kb = rng.standard_normal((2, 3, 6)), rng.standard_normal((2, 5, 6))  # batch 2, T_q 3, T_k 5, d_k 6
    what = "a batch: Q of shape (2, 3, 6) and K of shape (2, 5, 6)"
    try:
        got = scaled_scores(Qb, Kb)
    except Exception:
        raise ExerciseError(
            f"scaled_scores works on single matrices but fails on {what}. K.T reverses *all* "
            f"axes of a 3-D array; swap only the last two: np.swapaxes(K, -1, -2)."
        ) from None
    check_array(got, _scores(Qb, Kb, np.sqrt(6)), f"the result of scaled_scores on {what}",
                mistakes=_score_mistakes((Qb, Kb)))
    passed("Q K^T / sqrt(d_k), for one sequence and for a batch. These scores have variance about 1 "
           "for unit-variance queries and keys, whatever d_k is.")


# ----------------------------------------------------------------------------------------------
# Exercise 2: the divisor that gives unit variance when entries have variance 4


_SIGMA2, _DK = 4.0, 64


def check_score_divisor(divisor: Any) -> None:
    """Exercise 2: entries of variance 4, d_k = 64: divide q.k by sqrt(64 * 4 * 4) = 32."""
    expected = float(np.sqrt(_DK * _SIGMA2 * _SIGMA2))
    check_value(
        divisor,
        expected,
        "divisor",
        hints={
            "that is sqrt(d_k), the right divisor when the entries have variance 1. Here each entry has "
            "variance 4, so each product q_i k_i has variance 4 * 4 = 16.": np.sqrt(_DK),
            "you accounted for the variance 4 only once. Each term q_i k_i multiplies an entry of q "
            "(variance 4) by an entry of k (variance 4), so its variance is 4 * 4 = 16.":
                np.sqrt(_DK * _SIGMA2),
            "that is the variance of q.k, d_k * 16 = 1024. Dividing by c divides the variance by c^2, "
            "so divide by the standard deviation, the square root of the variance.": _DK * _SIGMA2**2,
            "that is d_k. For unit variance divide by the standard deviation of q.k, the square root "
            "of d_k * 4 * 4.": float(_DK),
            "that is d_k * 4, which is neither the variance of q.k (d_k * 4 * 4) nor its square root.":
                _DK * _SIGMA2,
            "you took the square root of d_k but not of the factor 4 * 4: the square root applies to "
            "the whole variance d_k * 16.": np.sqrt(_DK) * _SIGMA2**2,
        },
    )
    passed(f"Var(q.k) = d_k * 4 * 4 = {int(_DK * _SIGMA2**2)}, so divide by its square root, "
           f"{expected:g}. With unit-variance entries the same reasoning gives sqrt(d_k).")


# ----------------------------------------------------------------------------------------------
# Exercise 3: the Jacobian of softmax, diag(a) - a a^T


def _jacobian(a: np.ndarray) -> np.ndarray:
    return np.diag(a) - np.outer(a, a)


def check_softmax_jacobian(softmax_jacobian: Callable[[np.ndarray], Any]) -> None:
    """Exercise 3: ``softmax_jacobian(a)`` returns the (T, T) matrix diag(a) - a a^T."""
    cases = [
        (np.array([0.5, 0.3, 0.2]),),
        (reference_softmax(np.array([1.0, -0.5, 2.0, 0.0, 0.3])),),
        (np.array([1.0, 0.0, 0.0, 0.0]),),
    ]

    def mistakes(case: tuple[np.ndarray]) -> dict[str, np.ndarray]:
        (a,) = case
        return {
            "only the diagonal a_i (1 - a_i) is there; the off-diagonal entries are -a_i a_j.":
                np.diag(a * (1.0 - a)),
            "that is diag(a) alone; subtract the outer product a a^T (np.outer(a, a)).": np.diag(a),
            "you subtracted a * a (element by element) from every entry; the term to subtract is the "
            "outer product np.outer(a, a), whose entry (i, j) is a_i a_j.": np.diag(a) - a * a,
            "you subtracted a a^T from the identity, not from diag(a): entry (i, i) is a_i - a_i^2.":
                np.eye(len(a)) - np.outer(a, a),
            "you subtracted a @ a, a single number (the sum of the a_i^2), from every entry; the term to "
            "subtract is the outer product np.outer(a, a), a matrix.": np.diag(a) - a @ a,
        }

    check_function(
        softmax_jacobian,
        _jacobian,
        cases,
        "softmax_jacobian",
        describe=lambda case: f"a = {np.round(case[0], 3).tolist()}",
        mistakes=mistakes,
        scale_hints={"the signs are flipped: it is diag(a) - a a^T, not a a^T - diag(a).": -1.0},
    )
    uniform = _jacobian(np.full(4, 0.25))
    passed("J = diag(a) - a a^T. For one-hot weights every entry is 0 (no gradient at all); for "
           f"uniform weights over 4 keys the diagonal is {uniform[0, 0]:.4f}.")


# ----------------------------------------------------------------------------------------------
# Exercise 4: scaled dot-product attention, returning (out, weights)


def _attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, divisor: float | None = None,
               axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    d = np.sqrt(Q.shape[-1]) if divisor is None else divisor
    s = _scores(Q, K, d)
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    w = e / e.sum(axis=axis, keepdims=True)
    return w @ V, w


def _attention_cases() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    # Every size differs (T_q = 3, T_k = 5, d_k = 6, d_v = 4), so a divisor taken from the wrong size gives its
    # own weights. The second case has scores in the hundreds: np.exp overflows unless each row's maximum is
    # subtracted first.
    rng = np.random.default_rng(44)
    Q, K, V = rng.standard_normal((3, 6)), rng.standard_normal((5, 6)), rng.standard_normal((5, 4))
    return [
        ("Q (3, 6), K (5, 6), V (5, 4)", 1.5 * Q, 1.5 * K, V),
        ("large scores: Q (3, 6), K (5, 6), V (5, 4) with entries about 40", 40.0 * rng.standard_normal((3, 6)),
         40.0 * rng.standard_normal((5, 6)), rng.standard_normal((5, 4))),
    ]


def check_scaled_attention(attention: Callable[..., Any]) -> None:
    """Exercise 4: ``attention(Q, K, V)`` returns ``(out, weights)`` with the 1/sqrt(d_k) scaling."""
    if not callable(attention):
        raise ExerciseError(f"attention should be a function, but it is a {type(attention).__name__}.")
    for what, Q, K, V in _attention_cases():
        result = _call(attention, "attention", (Q, K, V), what)
        if result is None:
            raise ExerciseError("attention returned None: end it with `return out, weights`.")
        if not isinstance(result, tuple) or len(result) != 2:
            raise ExerciseError(
                f"attention should return two things, `return out, weights`, but it returned a "
                f"{type(result).__name__}" + (f" of length {len(result)}." if isinstance(result, tuple) else ".")
            )
        out, weights = result
        exp_out, exp_w = _attention(Q, K, V)
        d_k, T_q, T_k, d_v = Q.shape[-1], Q.shape[-2], K.shape[-2], V.shape[-1]
        if np.shape(out) == exp_w.shape and np.shape(weights) == exp_out.shape and exp_w.shape != exp_out.shape:
            raise ExerciseError("attention returned (weights, out); return them in the order `out, weights`.")
        check_array(
            weights, exp_w, f"your `weights` (on {what})", rows_sum_to_one=True,
            mistakes={
                "the scores were not scaled: divide Q K^T by sqrt(d_k) before the softmax.":
                    _attention(Q, K, V, divisor=1.0)[1],
                f"you divided the scores by d_k = {d_k}; divide by sqrt(d_k) = {np.sqrt(d_k):g}.":
                    _attention(Q, K, V, divisor=float(d_k))[1],
                f"you divided by the square root of the number of queries (T_q = {T_q}); divide by "
                f"sqrt(d_k), with d_k = Q.shape[-1].": _attention(Q, K, V, divisor=np.sqrt(T_q))[1],
                f"you divided by the square root of the number of keys (T_k = {T_k}); divide by "
                f"sqrt(d_k), with d_k = Q.shape[-1].": _attention(Q, K, V, divisor=np.sqrt(T_k))[1],
                f"you divided by the square root of the value size (d_v = {d_v}, V.shape[-1]); the "
                f"scores compare queries with keys, so divide by sqrt(d_k), d_k = Q.shape[-1].":
                    _attention(Q, K, V, divisor=np.sqrt(d_v))[1],
                "the softmax ran down the columns (axis=0); each query's weights over the keys are a "
                "row, so use axis=-1.": _attention(Q, K, V, axis=0)[1],
                "you divided the scores by their row sums; softmax first takes the exponential of each "
                "score (np.exp), then divides by the row sum of the exponentials.":
                    _scores(Q, K, np.sqrt(d_k)) / _scores(Q, K, np.sqrt(d_k)).sum(axis=-1, keepdims=True),
            },
        )
        out_mistakes = {
            "out should be weights @ V (each output row is a weighted sum of the value rows); "
            "you multiplied the values by the scores before the softmax.": _scores(Q, K, np.sqrt(d_k)) @ V,
        }
        check_array(out, exp_out, f"your `out` (on {what})", mistakes=out_mistakes)
    passed("softmax(Q K^T / sqrt(d_k)) V, returning both the output and the weights; it agrees with "
           "selfattention.scaled_dot_product_attention.")
