"""Checks for lesson 03 (learnable projections): scores, self-attention, the bilinear form."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._engine import check_array, check_function, passed, reference_softmax

__all__ = ["check_toy_scores", "check_self_attention", "check_bilinear_form"]

# The lesson's toy sentence "Sam ate (a) red apple": features person, action, food, fruit, red.
_X_TOY = np.array(
    [
        [1.0, 0.0, 0.0, 0.0, 0.0],  # Sam
        [0.0, 1.0, 0.0, 0.0, 0.0],  # ate
        [0.0, 0.0, 0.0, 0.0, 1.0],  # red
        [0.0, 0.0, 1.0, 1.0, 1.0],  # apple
    ]
)
# Row f of W_Q: what feature f makes a word look for (same five named axes).
_W_Q = np.array(
    [
        [0.0, 2.0, 0.0, 0.0, 0.0],  # a person looks for an action
        [1.0, 0.0, 2.0, 0.0, 0.0],  # an action looks for food (and, less, for a person)
        [0.0, 0.0, 0.0, 0.0, 0.0],  # food looks for nothing in particular
        [0.0, 0.0, 0.0, 0.0, 0.0],  # fruit likewise
        [0.0, 0.0, 0.0, 2.0, 0.0],  # a colour looks for a fruit to describe
    ]
)
_W_K = np.eye(5)  # a word offers its own features as tags


def check_toy_scores(scores_toy: Any) -> None:
    """Exercise 1: the raw scores Q K^T of the toy sentence, with the lesson's W_Q and W_K."""
    Q, K = _X_TOY @ _W_Q, _X_TOY @ _W_K  # (4, 5) each
    expected = Q @ K.T  # (4, 4)
    check_array(
        scores_toy,
        expected,
        "scores_toy",
        mistakes={
            "these are the parameter-free scores X X^T of lesson 02. Project first: "
            "Q = X_toy @ W_Q and K = X_toy @ W_K, then take Q @ K.T.": _X_TOY @ _X_TOY.T,
            "this is Q @ Q.T: each query is compared with the other queries. Compare queries with "
            "keys: Q @ K.T.": Q @ Q.T,
            "this is K @ K.T: the keys compared with each other. The rows must be queries: Q @ K.T.":
                K @ K.T,
            "you applied softmax. The exercise asks for the raw scores, before softmax.":
                reference_softmax(expected),
            "you divided by sqrt(d_k). That factor is lesson 04's subject; here the raw scores "
            "Q @ K.T are wanted.": expected / np.sqrt(K.shape[1]),
        },
    )
    ate, apple = 1, 3
    passed(
        f"'ate' scores 'apple' {expected[ate, apple]:.1f}, but 'apple' scores 'ate' "
        f"{expected[apple, ate]:.1f}: the scores are not symmetric."
    )


def _reference_attention(X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray) -> np.ndarray:
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return reference_softmax(Q @ K.T) @ V


def _attention_cases() -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(3)
    return [
        (_X_TOY, _W_Q, _W_K, np.eye(5)),  # the toy sentence, d_in = d_k = 5
        (rng.normal(size=(3, 4)), rng.normal(size=(4, 4)), rng.normal(size=(4, 4)),
         rng.normal(size=(4, 4))),
        (rng.normal(size=(5, 3)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2)),
         rng.normal(size=(3, 2))),
    ]


def _attention_mistakes(case: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    X, W_q, W_k, W_v = case
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    S = Q @ K.T
    found = {
        "the scores were divided by sqrt(d_k). Leave that factor out here (lesson 04 is about it).":
            reference_softmax(S / np.sqrt(K.shape[1])) @ V,
        "softmax was taken down the columns (axis=0). Each query's weights over the keys must sum "
        "to 1: use axis=-1.": reference_softmax(S, axis=0) @ V,
        "softmax is missing: the raw scores were used as weights.": S @ V,
        "the weights came from K @ Q.T instead of Q @ K.T (row i must hold query i's scores).":
            reference_softmax(K @ Q.T) @ V,
        "the scores came from X @ X.T (lesson 02's parameter-free attention); use the projected "
        "queries and keys.": reference_softmax(X @ X.T) @ V,
    }
    if V.shape == X.shape:
        found["the weights multiply X instead of the values V = X @ W_v."] = reference_softmax(S) @ X
    return found


def check_self_attention(self_attention: Callable[..., Any]) -> None:
    """Exercise 2: self_attention(X, W_q, W_k, W_v) -> Z = softmax(Q K^T) V, no scaling."""
    cases = _attention_cases()
    check_function(
        self_attention,
        _reference_attention,
        cases,
        "self_attention",
        describe=lambda c: f"X of shape {c[0].shape} and W_q of shape {c[1].shape}",
        mistakes=_attention_mistakes,
        rtol=1e-6,
        atol=1e-8,
    )
    Z = _reference_attention(*cases[0])
    passed(f"on the toy sentence, 'ate' becomes {np.round(Z[1], 2).tolist()}, mostly 'apple'.")


def _bilinear_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(4)
    return [
        (_W_Q, _W_K),
        (rng.normal(size=(3, 3)), rng.normal(size=(3, 3))),
        (rng.normal(size=(4, 2)), rng.normal(size=(4, 2))),
    ]


def _bilinear_mistakes(case: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    W_q, W_k = case
    found = {
        "this is W_k @ W_q.T, the transpose: the query side must be on the left, M = W_q @ W_k.T.":
            W_k @ W_q.T,
        "this is W_q @ W_q.T: the key matrix is missing.": W_q @ W_q.T,
        "this is W_k @ W_k.T: the query matrix is missing.": W_k @ W_k.T,
    }
    if W_q.shape[0] == W_q.shape[1]:
        found["this is W_q @ W_k: W_k must be transposed, M = W_q @ W_k.T (so that the key "
              "side sums over the same d_k axis as the query side)."] = W_q @ W_k
        found["this is W_q.T @ W_k, a (d_k, d_k) product. Scores are x_i W_q W_k^T x_j^T, so "
              "M = W_q @ W_k.T, of shape (d_in, d_in)."] = W_q.T @ W_k
    return found


def check_bilinear_form(bilinear_form: Callable[..., Any]) -> None:
    """Exercise 3: bilinear_form(W_q, W_k) -> M = W_q W_k^T, so that Q K^T = X M X^T."""
    check_function(
        bilinear_form,
        lambda W_q, W_k: W_q @ W_k.T,
        _bilinear_cases(),
        "bilinear_form",
        describe=lambda c: f"W_q and W_k of shape {c[0].shape}",
        mistakes=_bilinear_mistakes,
    )
    M = _W_Q @ _W_K.T
    sym = bool(np.allclose(M, M.T))
    passed(
        f"with the toy W_Q and W_K, M is {'symmetric' if sym else 'not symmetric'}, so X M X^T "
        f"gives different scores for (ate, apple) and (apple, ate)."
    )
