"""Checks for lesson 07 (multi-head attention): splitting heads, the full layer, its size."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import ExerciseError, check_function, passed, reference_softmax

__all__ = ["check_split_into_heads", "check_multi_head_attention", "check_param_count"]


def _split(x: np.ndarray, num_heads: int) -> np.ndarray:
    """(T, d_model) -> (num_heads, T, d_k)."""
    T, d_model = x.shape
    return x.reshape(T, num_heads, d_model // num_heads).transpose(1, 0, 2)


def _merge(h: np.ndarray) -> np.ndarray:
    """(num_heads, T, d_k) -> (T, num_heads * d_k)."""
    n, T, d_k = h.shape
    return h.transpose(1, 0, 2).reshape(T, n * d_k)


def _mha(X, W_Q, W_K, W_V, W_O, num_heads, *, divisor=None, heads=True, out_proj="W_O", softmax_axis=-1,
         split="blocks", merge="transpose", scores_transposed=False, weights_transposed=False):
    """Reference multi-head attention (and, through the keywords, its typical wrong versions).

    X (T, d_model), W_* (d_model, d_model) -> (T, d_model). ``divisor`` replaces sqrt(d_k); ``split``:
    "blocks" (right), "straight" (reshape to (h, T, d_k) directly) or "interleaved" (every h-th feature);
    ``merge``: "transpose" (right), "no transpose" or "interleaved"; ``out_proj``: "W_O", "none" or "W_O.T";
    ``weights_transposed``: X @ W.T for the three projections.
    """
    h = num_heads if heads else 1
    T, d_model = X.shape
    d_k = d_model // h

    def cut(Y):
        if split == "straight":
            return Y.reshape(h, T, d_k)
        if split == "interleaved":
            return Y.reshape(T, d_k, h).transpose(2, 0, 1)
        return _split(Y, h)

    proj = (lambda W: X @ W.T) if weights_transposed else (lambda W: X @ W)
    Q, K, V = cut(proj(W_Q)), cut(proj(W_K)), cut(proj(W_V))
    S = Q @ K.transpose(0, 2, 1) / (np.sqrt(d_k) if divisor is None else divisor)
    if scores_transposed:
        S = S.transpose(0, 2, 1)
    A = reference_softmax(S, axis=softmax_axis)
    H = A @ V                                                   # (h, T, d_k)
    if merge == "no transpose":
        Z = H.reshape(T, d_model)
    elif merge == "interleaved":
        Z = H.transpose(1, 2, 0).reshape(T, d_model)
    else:
        Z = _merge(H)
    return {"W_O": Z @ W_O, "none": Z, "W_O.T": Z @ W_O.T}[out_proj]


def _rng_cases_split() -> list[tuple[np.ndarray, int]]:
    rng = np.random.default_rng(5)
    # T, num_heads and d_k differ in every case (no reshape that mixes them up keeps the right shape).
    return [
        (np.arange(30.0).reshape(3, 10), 2),
        (np.arange(24.0).reshape(4, 6), 3),
        (rng.normal(size=(5, 8)), 4),
        (rng.normal(size=(3, 6)), 1),
    ]


def check_split_into_heads(split_heads: Callable[[np.ndarray, int], Any]) -> None:
    """Exercise 1: ``split_heads(x, num_heads)``, (T, d_model) -> (num_heads, T, d_k)."""

    def mistakes(case: tuple[np.ndarray, int]) -> dict[str, np.ndarray]:
        x, n = case
        T, d_model = x.shape
        return {
            "you reshaped straight to (num_heads, T, d_k). That cuts the flat list of numbers in the "
            "wrong places, so a head gets pieces of several tokens. Reshape to (T, num_heads, d_k) "
            "first, then move the head axis to the front with .transpose(1, 0, 2).":
                x.reshape(n, T, d_model // n),
            "each head got every num_heads-th feature (features 0, h, 2h, ... for head 0). A head "
            "owns a block of d_k neighbouring features: reshape to (T, num_heads, d_k), not "
            "(T, d_k, num_heads).":
                x.reshape(T, d_model // n, n).transpose(2, 0, 1),
            "the last two axes are swapped: each head should be (T, d_k), one row per token. "
            "Use .transpose(1, 0, 2), which keeps the token and feature axes in order.":
                _split(x, n).transpose(0, 2, 1),
        }

    x, n = _rng_cases_split()[1]  # (4, 6), 3 heads: every axis has its own length
    try:
        got = split_heads(x, n)
    except Exception:  # check_function below words the crash for the learner
        got = None
    shape = np.shape(got) if got is not None and got is not Ellipsis else None
    T, d_k = x.shape[0], x.shape[1] // n
    if shape == (T, n, d_k):
        raise ExerciseError(
            f"split_heads returned shape {shape} = (T, num_heads, d_k) for x of shape {x.shape} and "
            f"num_heads={n}; the heads must come first, (num_heads, T, d_k) = {(n, T, d_k)}: "
            f"add .transpose(1, 0, 2)."
        )
    check_function(
        split_heads, _split, _rng_cases_split(), "split_heads",
        describe=lambda c: f"x of shape {c[0].shape} and num_heads={c[1]}",
        mistakes=mistakes,
    )
    passed("split_heads turns (T, d_model) into (num_heads, T, d_k); head i owns features "
           "i*d_k ... (i+1)*d_k - 1 of every token.")


def _mha_cases() -> list[tuple[Any, ...]]:
    # T, d_model, num_heads and d_k all differ (sqrt(d_k), sqrt(d_model), sqrt(T), d_k are four different
    # divisors); no matrix is symmetric, so a transposed W gives its own result. The second case has scores in
    # the hundreds (np.exp overflows without subtracting each row's maximum); the last has one head.
    rng = np.random.default_rng(55)
    cases = []
    for T, d_model, n, scale in ((5, 12, 3, 1.0), (7, 12, 4, 6.0), (4, 6, 1, 1.0)):
        X = scale * rng.normal(size=(T, d_model))
        W = [rng.normal(size=(d_model, d_model)) for _ in range(4)]
        cases.append((X, *W, n))
    return cases


def check_multi_head_attention(multi_head_attention: Callable[..., Any]) -> None:
    """Exercise 2: ``multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads)`` in NumPy."""

    def mistakes(case: tuple[Any, ...]) -> dict[str, np.ndarray]:
        X, W_Q, W_K, W_V, W_O, n = case
        T, d_model = X.shape
        d_k = d_model // n
        args = (X, W_Q, W_K, W_V, W_O, n)
        out = {
            f"the scores are divided by sqrt(d_model) = sqrt({d_model}). Each head compares vectors of "
            f"size d_k = d_model / num_heads = {d_k}, so divide by sqrt(d_k).": _mha(*args, divisor=np.sqrt(d_model)),
            f"the scores are divided by d_k = {d_k} instead of sqrt(d_k).": _mha(*args, divisor=d_k),
            "the scores are not scaled at all: divide Q K^T by sqrt(d_k) before the softmax.": _mha(*args, divisor=1),
            f"the scores are divided by sqrt(T) = sqrt({T}), the number of tokens; divide by sqrt(d_k), "
            f"d_k = d_model / num_heads = {d_k}.": _mha(*args, divisor=np.sqrt(T)),
            "the softmax runs over the wrong axis (down the columns, axis=1); each query's weights over "
            "the keys must sum to 1, so use the last axis (axis=-1).": _mha(*args, softmax_axis=-2),
            "the scores are transposed (K Q^T instead of Q K^T): in each head, row i should hold query i's "
            "scores against every key, Q @ K.transpose(0, 2, 1).": _mha(*args, scores_transposed=True),
            "the output projection is missing: multiply the concatenated heads by W_O at the end.":
                _mha(*args, out_proj="none"),
            "the output is multiplied by W_O.T; W_O is (d_model, d_model) in (in, out) order here, so "
            "multiply by W_O itself.": _mha(*args, out_proj="W_O.T"),
            "the projections use W.T (X @ W_Q.T, as nn.Linear stores its weight); here the matrices are in "
            "(in, out) order, so compute X @ W_Q, X @ W_K, X @ W_V.": _mha(*args, weights_transposed=True),
        }
        if n > 1:
            out.update({
                "the softmax runs across the heads (axis=0 of the (num_heads, T, T) scores); each query's "
                "weights over the keys must sum to 1 in every head, so use the last axis (axis=-1).":
                    _mha(*args, softmax_axis=0),
                "this is single-head attention over all d_model features; split Q, K and V into "
                "num_heads heads first (your split_heads), attend in each head, then merge.":
                    _mha(*args, heads=False),
                "the heads were split by reshaping straight to (num_heads, T, d_k), which cuts the rows in "
                "the wrong places; reshape to (T, num_heads, d_k), then transpose(1, 0, 2) (your split_heads).":
                    _mha(*args, split="straight"),
                "each head got every num_heads-th feature (reshape to (T, d_k, num_heads)); a head owns a "
                "block of d_k neighbouring features: reshape to (T, num_heads, d_k).": _mha(*args, split="interleaved"),
                "the heads were merged by reshaping (num_heads, T, d_k) straight to (T, d_model), which mixes "
                "tokens; transpose back to (T, num_heads, d_k) first, then reshape.": _mha(*args, merge="no transpose"),
                "the heads were concatenated in the wrong order (features interleaved: transpose(1, 2, 0)); "
                "token t's row must be head 0's d_k features, then head 1's, ...: transpose(1, 0, 2), then "
                "reshape.": _mha(*args, merge="interleaved"),
            })
        return out

    cases = _mha_cases()
    for case in cases:  # a clear message if the shape is wrong, before any comparison
        try:
            got = multi_head_attention(*case)
        except Exception:  # check_function below words the crash for the learner
            break
        if got is not None and got is not Ellipsis and np.shape(got) != case[0].shape:
            raise ExerciseError(
                f"multi_head_attention returned shape {np.shape(got)} for X of shape {case[0].shape}; "
                f"the output has one row of d_model features per token, shape (T, d_model). "
                f"Did you merge the heads back (transpose, then reshape)?"
            )
    check_function(
        multi_head_attention, lambda *c: _mha(*c), cases, "multi_head_attention",
        describe=lambda c: f"X of shape {c[0].shape}, num_heads={c[5]}",
        mistakes=mistakes,
    )
    passed("split, scaled attention per head, merge and W_O: your layer matches the reference "
           "for 1, 3 and 4 heads, large scores included.")


def _params(d_model: int, num_heads: int, bias: bool) -> int:
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def check_param_count(mha_param_count: Callable[[int, int, bool], Any]) -> None:
    """Exercise 3: number of parameters of multi-head attention (W_Q, W_K, W_V, W_O, biases)."""
    if not callable(mha_param_count):
        raise ExerciseError(f"mha_param_count should be a function, but it is a "
                            f"{type(mha_param_count).__name__}.")
    cases = [(4, 2, False), (4, 2, True), (8, 1, True), (8, 4, True), (512, 8, True), (512, 8, False)]
    for d_model, n, bias in cases:
        what = f"d_model={d_model}, num_heads={n}, bias={bias}"
        try:
            got = mha_param_count(d_model, n, bias)
        except NotImplementedError:
            raise ExerciseError("mha_param_count still raises NotImplementedError: replace that line "
                                "with your code.") from None
        except Exception as exc:
            raise ExerciseError(f"mha_param_count raised {type(exc).__name__} for {what}: {exc}") from None
        if got is None or got is Ellipsis:
            raise ExerciseError("mha_param_count returns nothing yet: `return` the number of parameters.")
        try:
            value = float(got)
        except (TypeError, ValueError):
            raise ExerciseError(f"mha_param_count should return a number, but for {what} it returned "
                                f"{type(got).__name__} {got!r:.60}") from None
        right = _params(d_model, n, bias)
        if value == right:
            continue
        d_k = d_model // n
        hints = {
            3 * d_model * d_model + (3 * d_model if bias else 0):
                "W_O (d_model x d_model, plus its bias) is missing from the count.",
            4 * d_model * d_model + (4 * d_model if not bias else 0):
                "the bias terms are counted the wrong way round: with bias=True each of the four "
                "projections adds d_model biases, with bias=False there are none.",
            4 * n * d_model * d_model + (4 * n * d_model if bias else 0):
                "each head does not get full d_model x d_model matrices: a head's W_Q is "
                "d_model x d_k with d_k = d_model / num_heads, so the heads together use d_model x d_model.",
            4 * d_model * d_k + (4 * d_k if bias else 0):
                "that is the size of one head only; all num_heads heads together use d_model x d_model "
                "for each of W_Q, W_K, W_V (and W_O is d_model x d_model).",
        }
        if value in hints:
            raise ExerciseError(f"for {what} you count {value:g} parameters, the right number is "
                                f"{right}: {hints[value]}")
        raise ExerciseError(f"for {what} you count {value:g} parameters, the right number is {right}. "
                            f"Count W_Q, W_K, W_V and W_O (each d_model x d_model) and, with bias=True, "
                            f"one bias vector of d_model numbers per projection.")
    passed("4 * d_model**2 + 4 * d_model parameters with biases, 4 * d_model**2 without, "
           "whatever the number of heads.")
