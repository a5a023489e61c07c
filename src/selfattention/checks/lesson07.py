"""Checks for lesson 07 (a real transformer)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._engine import check_function, passed, reference_softmax

__all__ = [
    "check_cosine_similarity",
    "check_split_heads",
    "check_head_weights",
    "check_previous_token_score",
]


def check_cosine_similarity(fn: Callable[[Any, Any], Any]) -> None:
    """cosine_similarity(u, v) = u.v / (|u| |v|) for 1-D vectors."""
    rng = np.random.default_rng(7)
    cases = [(np.array([1.0, 0.0]), np.array([0.0, 2.0])),
             (np.array([3.0, 4.0]), np.array([6.0, 8.0])),
             (rng.normal(size=384), rng.normal(size=384))]

    def ref(u, v):
        return np.array(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))

    check_function(
        fn, ref, cases, "cosine_similarity",
        mistakes=lambda c: {
            "that is the plain dot product u . v; divide it by the two lengths |u| |v|.": c[0] @ c[1],
            "you divided by |u| only; divide by both lengths, |u| |v|.": c[0] @ c[1] / np.linalg.norm(c[0]),
            "that is 1 minus the cosine (a distance); return the cosine itself.":
                1 - ref(*c),
        },
    )
    passed("cosine_similarity measures the angle between two vectors, whatever their lengths.")


def check_split_heads(fn: Callable[[Any, int], Any]) -> None:
    """split_heads(x, num_heads): (T, d_model) -> (num_heads, T, d_k)."""
    x1 = np.arange(24.0).reshape(3, 8)
    x2 = np.random.default_rng(1).normal(size=(5, 384))

    def ref(x, h):
        T, d = x.shape
        return x.reshape(T, h, d // h).transpose(1, 0, 2)

    check_function(
        fn, ref, [(x1, 2), (x2, 12)], "split_heads",
        describe=lambda c: f"x of shape {c[0].shape} and num_heads={c[1]}",
        mistakes=lambda c: {
            "you reshaped straight to (num_heads, T, d_k), which mixes the features of different tokens "
            "into one head. Reshape to (T, num_heads, d_k) first, then swap the first two axes.":
                c[0].reshape(c[1], c[0].shape[0], -1),
        },
    )
    passed("split_heads gives each head its own d_k-wide slice of every token.")


def check_head_weights(fn: Callable[[Any, Any], Any]) -> None:
    """head_weights(q, k) = softmax(q k^T / sqrt(d_k)) for one head, q and k of shape (T, d_k)."""
    rng = np.random.default_rng(3)
    cases = [(rng.normal(size=(4, 2)), rng.normal(size=(4, 2))),
             (rng.normal(size=(6, 32)) * 2, rng.normal(size=(6, 32)) * 2)]

    def ref(q, k):
        return reference_softmax(q @ k.T / np.sqrt(q.shape[-1]))

    check_function(
        fn, ref, cases, "head_weights", rows_sum_to_one=True,
        mistakes=lambda c: {
            "the scores were not divided by sqrt(d_k) before the softmax.": reference_softmax(c[0] @ c[1].T),
            "the scores were divided by d_k instead of sqrt(d_k).":
                reference_softmax(c[0] @ c[1].T / c[0].shape[-1]),
            "those are the scaled scores before the softmax; apply softmax to each row.":
                c[0] @ c[1].T / np.sqrt(c[0].shape[-1]),
            "you computed k q^T (keys as rows): the rows must be the queries, q @ k.T.":
                reference_softmax(c[1] @ c[0].T / np.sqrt(c[0].shape[-1])),
        },
    )
    passed("head_weights computes one head's attention exactly as the model does.")


def check_previous_token_score(fn: Callable[[Any], Any]) -> None:
    """previous_token_score(A): mean of A[i, i-1] over i = 1..T-1."""
    A1 = np.eye(4, k=-1)
    A1[0, 0] = 1.0
    A2 = reference_softmax(np.random.default_rng(5).normal(size=(6, 6)) * 3)

    def ref(A):
        return np.array(np.mean(np.diagonal(A, offset=-1)))

    check_function(
        fn, ref, [(A1,), (A2,)], "previous_token_score",
        describe=lambda c: f"a {c[0].shape[0]}x{c[0].shape[1]} attention matrix",
        mistakes=lambda c: {
            "that is the weight on the NEXT token, A[i, i+1]: rows are queries, so the previous token of "
            "row i is column i-1.": np.mean(np.diagonal(c[0], offset=1)),
            "that is the mean of the diagonal, A[i, i] (attention to itself), not A[i, i-1].":
                np.mean(np.diagonal(c[0])),
            "row 0 has no previous token: average A[i, i-1] over i = 1..T-1 only (no wrap-around).":
                np.mean([c[0][i, i - 1] for i in range(c[0].shape[0])]),
        },
    )
    passed("previous_token_score is 1.0 for a head that always looks one token back.")
