"""Checks for lesson 02 (basic self-attention, no parameters).

Every check builds its own inputs (the lesson's toy vectors, or seeded random arrays) and its own
reference answer, and passes the typical wrong answers of the exercise to the shared engine so the
message names the mistake.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._engine import ExerciseError, check_function, passed, reference_softmax

__all__ = [
    "check_softmax_row",
    "check_context_vector",
    "check_self_attention_batch",
    "check_bank_attends",
]

# The lesson's toy vectors; axes: (finance, nature, tech, food).
_TOY: dict[str, np.ndarray] = {
    "money": np.array([1.0, 0.1, 0.0, 0.0]),
    "bank": np.array([0.7, 0.7, 0.0, 0.0]),
    "grows": np.array([0.5, 0.3, 0.0, 0.1]),
    "river": np.array([0.1, 1.0, 0.0, 0.0]),
    "flows": np.array([0.2, 0.8, 0.0, 0.0]),
    "a": np.array([0.1, 0.1, 0.1, 0.1]),
    "near": np.array([0.0, 0.3, 0.1, 0.0]),
    "the": np.array([0.2, 0.1, 0.1, 0.0]),
}


def _sentence(words: str) -> np.ndarray:
    """(T, 4) toy vectors of a space-separated sentence."""
    return np.stack([_TOY[w] for w in words.split()])


def _attention(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reference basic self-attention for (..., T, d) inputs: returns Z (..., T, d), A (..., T, T)."""
    omega = X @ np.swapaxes(X, -1, -2)
    A = reference_softmax(omega)
    return A @ X, A


# --------------------------------------------------------------------------- exercise 1
def check_softmax_row(softmax_row: Callable[[np.ndarray], Any]) -> None:
    """Exercise 1: a numerically stable softmax of one row of scores, shape (T,) -> (T,)."""
    cases = [
        (np.array([1.0, 2.0, 3.0]),),
        (np.array([0.77, 0.98, 0.56]),),
        (np.array([-1.0, 0.5, 2.0, 0.0]),),
        (np.array([1000.0, 999.0, 998.0]),),
    ]

    def mistakes(case: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
        s = case[0]
        with np.errstate(all="ignore"):
            return {
                "you divided the scores by their sum. Softmax divides the *exponentials* "
                "np.exp(scores) by their sum, which keeps every weight positive.": s / s.sum(),
                "these are the exponentials, not yet normalised: divide them by their sum "
                "so that the weights add up to 1.": np.exp(s),
                "you shifted the scores by their maximum but did not exponentiate them: "
                "the weights must be np.exp(scores - max) divided by their sum.": s - s.max(),
                "you divided the exponentials by their largest value; divide by their sum, "
                "so that the weights add up to 1.": np.exp(s - s.max()),
            }

    check_function(
        softmax_row,
        lambda s: reference_softmax(s),
        cases,
        "softmax_row",
        describe=lambda case: f"the scores {np.round(case[0], 2).tolist()}",
        mistakes=mistakes,
    )
    big = reference_softmax(cases[-1][0])
    passed(
        "your softmax gives positive weights that sum to 1, even for scores near 1000 "
        f"(there it gives {np.round(big, 3).tolist()})."
    )


# --------------------------------------------------------------------------- exercise 2
def check_context_vector(context_vector: Callable[[np.ndarray, int], Any]) -> None:
    """Exercise 2: z_i = sum_j softmax_j(x_i . x_j) x_j for one position i (0-based)."""
    rng = np.random.default_rng(2)
    cases = [
        (_sentence("money bank grows"), 1),
        (_sentence("a bank near the river"), 1),
        (_sentence("river bank flows"), 0),
        (rng.normal(size=(6, 3)), 4),
        (30.0 * _sentence("money bank grows"), 0),   # scores near 900: np.exp alone overflows
    ]
    labels = {
        0: "the toy sentence 'money bank grows' with i = 1 (bank)",
        1: "the toy sentence 'a bank near the river' with i = 1 (bank)",
        2: "the toy sentence 'river bank flows' with i = 0 (river)",
        3: "random X of shape (6, 3) with i = 4",
        4: "30 times the toy vectors of 'money bank grows' with i = 0 (scores near 900)",
    }

    def describe(case: Sequence[Any]) -> str:
        for k, c in enumerate(cases):
            if c[0] is case[0]:
                return labels[k]
        return f"X of shape {np.shape(case[0])}, i = {case[1]}"

    def reference(X: np.ndarray, i: int) -> np.ndarray:
        return _attention(X)[0][i]

    def mistakes(case: Sequence[Any]) -> dict[str, np.ndarray]:
        X, i = case
        T = X.shape[0]
        omega = X @ X.T
        Z, A = _attention(X)
        found = {
            "you used the raw dot products x_i . x_j as weights. Pass them through softmax "
            "first, so the weights are positive and sum to 1.": omega[i] @ X,
            "this is the plain average of all the vectors: the weights must come from the "
            "dot products with x_i, through softmax.": X.mean(axis=0),
            "this is x_i itself, unchanged: mix in the other words with the weights alpha_ij.": X[i],
            "you used column i of the weights (what the other words give to word i); z_i uses "
            "row i, the weights word i gives to every word j.": A[:, i] @ X,
        }
        if i + 1 < T:
            found["this is the context vector of position i + 1. Python counts from 0: "
                  "row i of X is X[i]."] = Z[i + 1]
        if i >= 1:
            found["this is the context vector of position i - 1: use X[i] for word i."] = Z[i - 1]
        return found

    def wrapped(X: np.ndarray, i: int) -> Any:
        out = context_vector(X.copy(), i)
        if out is not None and out is not Ellipsis and np.shape(out) == (X.shape[0],):
            raise ExerciseError(
                f"context_vector returned {X.shape[0]} numbers, one per word: those look like the "
                f"weights alpha_i. Return the weighted sum z_i = sum_j alpha_ij x_j, which has "
                f"{X.shape[1]} numbers (on {describe((X, i))})."
            )
        return out

    check_function(wrapped, reference, cases, "context_vector", describe=describe, mistakes=mistakes)
    z = reference(*cases[0])
    passed(f"in 'money bank grows' the contextual bank is {np.round(z, 3).tolist()}.")


# --------------------------------------------------------------------------- exercise 3
def check_self_attention_batch(self_attention_batch: Callable[[np.ndarray], Any]) -> None:
    """Exercise 3: the matrix form on a batch, X (B, T, d) -> Z (B, T, d)."""
    rng = np.random.default_rng(3)
    cases = [
        (np.stack([_sentence("money bank grows"), _sentence("river bank flows")]),),
        (rng.normal(size=(3, 5, 2)),),
        (rng.normal(size=(1, 4, 6)),),
        (20.0 * rng.normal(size=(2, 5, 3)),),   # scores in the hundreds: np.exp alone overflows
    ]

    def describe(case: Sequence[np.ndarray]) -> str:
        if case[0] is cases[0][0]:
            return "the batch of the two toy sentences, X of shape (2, 3, 4)"
        if case[0] is cases[-1][0]:
            return f"X of shape {case[0].shape} with large values (scores in the hundreds)"
        return f"X of shape {case[0].shape}"

    def mistakes(case: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
        X = case[0]
        omega = X @ np.swapaxes(X, -1, -2)
        A = reference_softmax(omega)
        return {
            "you multiplied the raw scores X X^T by X. Turn the scores into weights with "
            "softmax over the last axis first.": omega @ X,
            "your weights are transposed: either the softmax went down the columns (use "
            "axis=-1, so each word's weights over the T words sum to 1) or you multiplied by "
            "A^T. Z = A @ X, with A[b, i, j] the weight word i gives to word j.":
                np.swapaxes(A, -1, -2) @ X,
        }

    def wrapped(X: np.ndarray) -> Any:
        try:
            out = self_attention_batch(X.copy())
        except ValueError as exc:
            if "matmul" in str(exc) or "shapes" in str(exc) or "broadcast" in str(exc):
                raise ExerciseError(
                    f"self_attention_batch raised ValueError on {describe((X,))}: {exc}. For a batch, "
                    "X.T reverses all three axes; swap only the last two with "
                    "np.swapaxes(X, -1, -2) (or X.transpose(0, 2, 1))."
                ) from None
            raise
        if isinstance(out, tuple):
            raise ExerciseError(
                "self_attention_batch returned a tuple; return only Z, the array of shape (B, T, d)."
            )
        return out

    check_function(wrapped, lambda X: _attention(X)[0], cases, "self_attention_batch",
                   describe=describe, mistakes=mistakes)
    passed("your batched self-attention matches, sentence by sentence, with no Python loop.")


# --------------------------------------------------------------------------- exercise 4
def check_bank_attends(x_new: Any) -> None:
    """Exercise 4: a toy vector x_new (4,) after "river bank" that gets at least half of bank's weight.

    The row of "bank" in the sentence (river, bank, new word) depends only on the three scores
    bank . river = 0.77, bank . bank = 0.98 and bank . x_new; the message says which of them is the problem.
    """
    if x_new is None or x_new is Ellipsis:
        raise ExerciseError("x_new has no value yet: replace `...`/None with an array of 4 numbers.")
    try:
        v = np.asarray(x_new.detach().cpu().numpy() if hasattr(x_new, "detach") else x_new, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(
            f"x_new should be 4 numbers (finance, nature, tech, food), but it is a {type(x_new).__name__}: "
            f"{x_new!r:.80}"
        ) from None
    if v.shape != (4,):
        raise ExerciseError(
            f"x_new has shape {v.shape}; it should be one toy vector of shape (4,): finance, nature, tech, food."
        )
    if not np.isfinite(v).all():
        raise ExerciseError("x_new contains NaN or infinite values; use ordinary finite numbers.")
    X = np.vstack([_TOY["river"], _TOY["bank"], v])       # (3, 4)
    with np.errstate(over="ignore", invalid="ignore"):
        scores = X @ _TOY["bank"]                          # (3,): bank . river, bank . bank, bank . x_new
    if not np.isfinite(scores).all():
        raise ExerciseError(
            f"x_new is so long that bank . x_new overflows ({scores[2]}); numbers up to a few thousand are plenty."
        )
    weights = reference_softmax(scores)
    own, score = float(scores[1]), float(scores[2])
    said = (f"bank's scores are {np.round(scores, 3).tolist()} (river, bank, your word), so its weights are "
            f"{np.round(weights, 3).tolist()}.")
    if weights[2] >= 0.5:
        passed(f"{said} Your word gets {weights[2]:.3f} of bank's weight: to beat a word's score with itself, "
               "a neighbour must point its way and be longer.")
        return
    if np.allclose(v, _TOY["bank"]):
        raise ExerciseError(
            f"x_new is bank's own vector: a tie. {said} To take the lead it must point the same way and be "
            "longer than bank (x_i . x_j = |x_i| |x_j| cos theta)."
        )
    if score <= 0:
        raise ExerciseError(
            f"x_new points away from bank or across it (bank . x_new = {score:.3f} <= 0). {said} Point it "
            "along bank: finance and nature, no tech or food needed."
        )
    if score <= own:
        raise ExerciseError(
            f"x_new is too short or not aligned enough: bank . x_new = {score:.3f} is not above bank's score "
            f"with itself, {own:.3f}. {said} By x_i . x_j = |x_i| |x_j| cos theta, point it along bank and make "
            "it longer than bank."
        )
    raise ExerciseError(
        f"x_new now has bank's largest score ({score:.3f} > {own:.3f}) but only {weights[2]:.3f} of its weight, "
        f"below one half: the other two words still share the rest. {said} Make it longer still, so that its "
        "score pulls further ahead."
    )
