"""Lesson 04's checks name each typical mistake, and only that one.

Every wrong answer below is written the way a learner would write it. The test asserts that the message
contains the phrase of its own mistake and none of the other mistakes' phrases, and that the right answer
gets a line starting with ``Correct:``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from selfattention.checks import ExerciseError, check_apple_query, check_letter_before, check_self_attention


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def message(check, *answer) -> str:
    with pytest.raises(ExerciseError) as err:
        check(*answer)
    return str(err.value)


def assert_names_only(text: str, phrase: str, phrases: dict[str, str]) -> None:
    assert phrase in text, text
    others = [p for p in phrases.values() if p != phrase and p in text]
    assert not others, f"{text!r} also names {others}"


# ------------------------------------------------------------------ Exercise 1: apple looks for ate
W_Q = np.array([[0, 2, 0], [1, 0, 2], [0, 0, 0], [0, 0, 0], [0, 0, 2]], dtype=float)
GOOD = W_Q.copy()
GOOD[2], GOOD[3] = [0, 3, 0], [0, 0, -2]  # q_apple = [0, 3, 0]: scores 0, 3, 0, 0
RIGHT = math.exp(3) / (math.exp(3) + 3)

APPLE = {
    "linear layout": "nn.Linear layout",
    "unchanged": "still the lesson's W_Q",
    "other query": "changed too",
    "too little": "it should give 'ate' at least 0.8",
    "no prediction": "predicted_weight has no value yet",
    "score": "that is the score",
    "scaled": "with 1/sqrt(d_k)",
    "old W_Q": "with the lesson's unchanged W_Q",
    "percent": "looks like a percentage",
    "other": "the weight is e^(score of ate)",
}


def test_apple_right_answer(capsys):
    check_apple_query(GOOD, RIGHT)
    assert capsys.readouterr().out.startswith("Correct:")


def test_apple_prediction_rounded_to_two_decimals_passes(capsys):
    check_apple_query(GOOD, round(RIGHT, 2))
    assert capsys.readouterr().out.startswith("Correct:")


def red_changed() -> np.ndarray:
    W = W_Q.copy()
    W[4] = [0, 3, 0]  # "apple is red": but red's own query changes too
    return W


def weak() -> np.ndarray:
    W = W_Q.copy()
    W[2] = [0, 3, 0]  # forgets to cancel what red adds: scores 0, 3, 0, 2 -> 0.68
    return W


@pytest.mark.parametrize(
    ("answer", "mistake"),
    [
        ((GOOD.T, RIGHT), "linear layout"),
        ((W_Q.copy(), RIGHT), "unchanged"),
        ((red_changed(), RIGHT), "other query"),
        ((weak(), 0.68), "too little"),
        ((GOOD, None), "no prediction"),
        ((GOOD, 3.0), "score"),
        ((GOOD, float(softmax(np.array([0, 3, 0, 0]) / math.sqrt(3))[1])), "scaled"),
        ((GOOD, float(softmax(np.array([0.0, 0, 0, 2]))[1])), "old W_Q"),
        ((GOOD, 100 * RIGHT), "percent"),
        ((GOOD, 0.5), "other"),
    ],
)
def test_apple_mistakes_are_named(answer, mistake):
    assert_names_only(message(check_apple_query, *answer), APPLE[mistake], APPLE)


# ------------------------------------------------------------------ Exercise 2: self_attention
def right(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return softmax(Q @ K.T) @ V


def linear_habit(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    return softmax(Q @ K.T) @ V


def linear_habit_query_only(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q.T, X @ W_k, X @ W_v
    return softmax(Q @ K.T) @ V


def keys_first(X, W_q, W_k, W_v):
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return softmax(K @ Q.T) @ V


def no_softmax(X, W_q, W_k, W_v):
    return (X @ W_q) @ (X @ W_k).T @ (X @ W_v)


def softmax_axis0(X, W_q, W_k, W_v):
    return softmax((X @ W_q) @ (X @ W_k).T, axis=0) @ (X @ W_v)


def scaled(divisor):
    def attention(X, W_q, W_k, W_v):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        return softmax(Q @ K.T / divisor(Q, K, V, X)) @ V
    return attention


def naive_softmax(X, W_q, W_k, W_v):
    S = (X @ W_q) @ (X @ W_k).T
    with np.errstate(over="ignore", invalid="ignore"):
        E = np.exp(S)
        return E / E.sum(axis=1, keepdims=True) @ (X @ W_v)


def weights_transposed(X, W_q, W_k, W_v):
    return softmax((X @ W_q) @ (X @ W_k).T).T @ (X @ W_v)


def parameter_free_scores(X, W_q, W_k, W_v):
    return softmax(X @ X.T) @ (X @ W_v)


def mixes_x(X, W_q, W_k, W_v):
    return softmax((X @ W_q) @ (X @ W_k).T) @ X


def values_from_wq(X, W_q, W_k, W_v):
    return softmax((X @ W_q) @ (X @ W_k).T) @ (X @ W_q)


ATTENTION = {
    "linear habit": "nn.Linear habit",
    "query only": "you wrote X @ W_q.T:",
    "keys first": "K @ Q.T instead of Q @ K.T",
    "no softmax": "softmax is missing",
    "axis 0": "down the columns (axis=0)",
    "sqrt d_k": "divided by sqrt(d_k)",
    "sqrt d_v": "divided by sqrt(d_v)",
    "sqrt T": "divided by sqrt(T)",
    "d_k": "divided by d_k;",
    "overflow": "subtract each row's maximum",
    "transposed weights": "alpha.T @ V",
    "parameter-free": "X @ X.T",
    "mixes X": "multiply X instead of the values",
    "values from W_q": "values were computed with W_q",
}


def test_attention_right_answer(capsys):
    check_self_attention(right)
    assert capsys.readouterr().out.startswith("Correct:")


@pytest.mark.parametrize(
    ("fn", "mistake"),
    [
        (linear_habit, "linear habit"),
        (linear_habit_query_only, "query only"),
        (keys_first, "keys first"),
        (no_softmax, "no softmax"),
        (softmax_axis0, "axis 0"),
        (scaled(lambda Q, K, V, X: math.sqrt(K.shape[1])), "sqrt d_k"),
        (scaled(lambda Q, K, V, X: math.sqrt(V.shape[1])), "sqrt d_v"),
        (scaled(lambda Q, K, V, X: math.sqrt(X.shape[0])), "sqrt T"),
        (scaled(lambda Q, K, V, X: K.shape[1]), "d_k"),
        (naive_softmax, "overflow"),
        (weights_transposed, "transposed weights"),
        (parameter_free_scores, "parameter-free"),
        (mixes_x, "mixes X"),
        (values_from_wq, "values from W_q"),
    ],
)
def test_attention_mistakes_are_named(fn, mistake):
    text = message(check_self_attention, fn)
    if mistake == "query only":  # its phrase is part of the general nn.Linear message, which is right here
        assert ATTENTION[mistake] in text and "W_k.T" not in text and "W_v.T" not in text, text
        return
    phrases = dict(ATTENTION)
    phrases.pop("query only")
    assert_names_only(text, ATTENTION[mistake], phrases)


def test_x_at_w_transposed_is_not_called_keys_first():
    """The reported bug: X @ W_q.T was diagnosed as K @ Q.T (square toy matrices hid the transpose)."""
    text = message(check_self_attention, linear_habit)
    assert "K @ Q.T" not in text and "X @ W_q.T" in text


# ------------------------------------------------------------------ Exercise 3: the letter before
D_IN, N = 17, 8


def before_answer(shift: int = -1, scale: float = 5.0) -> tuple[np.ndarray, np.ndarray]:
    W_k = np.zeros((D_IN, N))
    W_k[:N] = np.eye(N)
    W_q = np.zeros((D_IN, N))
    W_q[:N] = scale * np.roll(np.eye(N), shift, axis=1)
    return W_q, W_k


BEFORE = {
    "linear layout": "nn.Linear layout",
    "sizes": "a dot product needs the same d_k",
    "after": "the letter after",
    "itself": "its own letter, the distractor",
    "query token": "the query token itself",
    "wrap": "Only ?A fails",
    "too small": "Make the scores larger",
}


def test_before_right_answer(capsys):
    check_letter_before(*before_answer())
    assert capsys.readouterr().out.startswith("Correct:")


def no_wrap() -> tuple[np.ndarray, np.ndarray]:
    W_q, W_k = before_answer()
    W_q[:N] = 5 * np.eye(N, k=-1)  # row s -> column s - 1, but row A has nothing
    return W_q, W_k


def tied() -> tuple[np.ndarray, np.ndarray]:
    W_q, _ = before_answer()
    W_q[-1, 0] = 3.0  # the flag too
    return W_q, W_q.copy()


@pytest.mark.parametrize(
    ("answer", "mistake"),
    [
        (tuple(W.T for W in before_answer()), "linear layout"),
        ((before_answer()[0], before_answer()[1][:, :5]), "sizes"),
        (before_answer(shift=1), "after"),
        (before_answer(shift=0), "itself"),
        (tied(), "query token"),
        (no_wrap(), "wrap"),
        (before_answer(scale=1.0), "too small"),
    ],
)
def test_before_mistakes_are_named(answer, mistake):
    assert_names_only(message(check_letter_before, *answer), BEFORE[mistake], BEFORE)


def test_check_inputs_keep_the_sizes_apart():
    """T != d_in != d_k != d_v and no square projection, so that a transpose cannot pass unnoticed."""
    from selfattention.checks.lesson04 import _attention_cases

    for X, W_q, W_k, W_v in _attention_cases():
        sizes = [X.shape[0], X.shape[1], W_q.shape[1], W_v.shape[1]]
        assert len(set(sizes)) == 4, sizes
        assert W_q.shape == W_k.shape and W_q.shape[0] != W_q.shape[1]
    big = _attention_cases()[-1]
    scores = (big[0] @ big[1]) @ (big[0] @ big[2]).T
    assert np.abs(scores).max() > 710  # np.exp overflows in float64 beyond ~709
