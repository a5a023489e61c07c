"""Checks for lesson 05 (multi-head attention): splitting heads, the full layer, its size."""

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


def _mha(X, W_Q, W_K, W_V, W_O, num_heads, *, scale_by=None, heads=True, out_proj=True,
         keys_axis=True):
    """Reference multi-head attention (and, through the keywords, its typical wrong versions)."""
    h = num_heads if heads else 1
    Q, K, V = _split(X @ W_Q, h), _split(X @ W_K, h), _split(X @ W_V, h)
    d = Q.shape[-1] if scale_by is None else scale_by
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(d)
    A = reference_softmax(S) if keys_axis else reference_softmax(S.transpose(0, 2, 1)).transpose(0, 2, 1)
    Z = _merge(A @ V)
    return Z @ W_O if out_proj else Z


def _rng_cases_split() -> list[tuple[np.ndarray, int]]:
    rng = np.random.default_rng(5)
    return [
        (np.arange(12.0).reshape(3, 4), 2),
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
    rng = np.random.default_rng(55)
    cases = []
    for T, d_model, n in ((3, 6, 2), (5, 8, 4), (4, 6, 3), (4, 6, 1)):
        X = rng.normal(size=(T, d_model))
        W = [rng.normal(size=(d_model, d_model)) for _ in range(4)]
        cases.append((X, *W, n))
    return cases


def check_multi_head_attention(multi_head_attention: Callable[..., Any]) -> None:
    """Exercise 2: ``multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads)`` in NumPy."""

    def mistakes(case: tuple[Any, ...]) -> dict[str, np.ndarray]:
        X, W_Q, W_K, W_V, W_O, n = case
        d_model = X.shape[1]
        out = {
            "the scores are divided by sqrt(d_model). Each head compares vectors of size "
            "d_k = d_model / num_heads, so divide by sqrt(d_k).":
                _mha(X, W_Q, W_K, W_V, W_O, n, scale_by=d_model),
            "the scores are divided by d_k instead of sqrt(d_k).":
                _mha(X, W_Q, W_K, W_V, W_O, n, scale_by=(d_model // n) ** 2),
            "the scores are not scaled at all: divide Q K^T by sqrt(d_k) before the softmax.":
                _mha(X, W_Q, W_K, W_V, W_O, n, scale_by=1),
            "the softmax runs over the wrong axis (down the columns); each query's weights over "
            "the keys must sum to 1, so use the last axis (axis=-1).":
                _mha(X, W_Q, W_K, W_V, W_O, n, keys_axis=False),
            "the output projection is missing: multiply the concatenated heads by W_O at the end.":
                _mha(X, W_Q, W_K, W_V, W_O, n, out_proj=False),
        }
        if n > 1:
            out["this is single-head attention over all d_model features; split Q, K and V into "
                "num_heads heads first (your split_heads), attend in each head, then merge."] = (
                _mha(X, W_Q, W_K, W_V, W_O, n, heads=False))
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
           "for 1 to 4 heads.")


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
