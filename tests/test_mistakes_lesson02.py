"""Lesson 02's checks, fed the mistakes they name: each message names that mistake and no other.

Each wrong answer is written as a learner would write it. A mistake is recognised by a phrase found in its own
message only (``KEYS``); the right answer gets one line starting with ``Correct:``.
"""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import checks
from selfattention.checks import ExerciseError

# mistake -> a phrase that only its message contains
KEYS = {
    # exercise 1
    "divided by the sum": "divided the scores by their sum",
    "not normalised": "not yet normalised",
    "not exponentiated": "did not exponentiate",
    "divided by the max": "divided the exponentials by their largest value",
    "overflow": "subtract each row's maximum",
    # exercise 2
    "raw scores": "raw dot products x_i . x_j as weights",
    "plain average": "plain average",
    "x_i unchanged": "x_i itself, unchanged",
    "column of A": "column i of the weights",
    "position i + 1": "position i + 1",
    "position i - 1": "position i - 1",
    "returned the weights": "look like the weights alpha_i",
    # exercise 3
    "batch raw scores": "multiplied the raw scores X X^T by X",
    "batch transposed": "your weights are transposed",
    "X.T on a batch": "X.T reverses all three axes",
    "returned a tuple": "returned a tuple",
    # exercise 4
    "a tie": "a tie",
    "points away": "points away from bank",
    "too short": "too short or not aligned enough",
    "below one half": "below one half",
}


def message(check, answer) -> str:
    """The check's message for ``answer``; fails the test if the check passes it."""
    with pytest.raises(ExerciseError) as info:
        check(answer)
    return str(info.value)


def names_only(text: str, mistake: str) -> None:
    named = [m for m, key in KEYS.items() if key in text]
    assert named == [mistake], f"expected only {mistake!r}, the message names {named}: {text}"


def _softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# --------------------------------------------------------------------------- exercise 1
SOFTMAX_MISTAKES = {
    "divided by the sum": lambda s: s / s.sum(),
    "not normalised": lambda s: np.exp(s),
    "not exponentiated": lambda s: s - s.max(),
    "divided by the max": lambda s: np.exp(s - s.max()),
    "overflow": lambda s: np.exp(s) / np.exp(s).sum(),
}


@pytest.mark.parametrize("mistake", SOFTMAX_MISTAKES)
def test_softmax_row_names_the_mistake(mistake):
    def softmax_row(scores):
        s = np.asarray(scores, dtype=float)
        with np.errstate(all="ignore"):
            return SOFTMAX_MISTAKES[mistake](s)

    names_only(message(checks.check_softmax_row, softmax_row), mistake)


def test_softmax_row_without_max_subtraction_fails_on_large_scores_only():
    with np.errstate(all="ignore"):
        text = message(checks.check_softmax_row, lambda s: np.exp(s) / np.exp(s).sum())
    assert "[1000.0, 999.0, 998.0]" in text and "NaN or infinite" in text


def test_softmax_row_right_answer(capsys):
    checks.check_softmax_row(lambda s: _softmax(np.asarray(s, dtype=float)))
    assert capsys.readouterr().out.startswith("Correct:")


# --------------------------------------------------------------------------- exercise 2
def _weights(X, i):
    return _softmax(X @ X[i])


CONTEXT_MISTAKES = {
    "raw scores": lambda X, i: (X @ X[i]) @ X,
    "plain average": lambda X, i: X.mean(axis=0),
    "x_i unchanged": lambda X, i: X[i],
    "column of A": lambda X, i: _softmax(X @ X.T)[:, i] @ X,
    "position i + 1": lambda X, i: _weights(X, i + 1) @ X,
    "position i - 1": lambda X, i: _weights(X, i - 1) @ X,
    "returned the weights": lambda X, i: _weights(X, i),
    "overflow": lambda X, i: (np.exp(X @ X[i]) / np.exp(X @ X[i]).sum()) @ X,
}


@pytest.mark.parametrize("mistake", CONTEXT_MISTAKES)
def test_context_vector_names_the_mistake(mistake):
    def context_vector(X, i):
        with np.errstate(all="ignore"):
            return CONTEXT_MISTAKES[mistake](np.asarray(X, dtype=float), i)

    names_only(message(checks.check_context_vector, context_vector), mistake)


def test_context_vector_right_answer(capsys):
    def context_vector(X, i):
        X = np.asarray(X, dtype=float)
        return _weights(X, i) @ X

    checks.check_context_vector(context_vector)
    assert capsys.readouterr().out.startswith("Correct:")


# --------------------------------------------------------------------------- exercise 3
def _omega(X):
    return X @ np.swapaxes(X, -1, -2)


BATCH_MISTAKES = {
    "batch raw scores": lambda X: _omega(X) @ X,
    # softmax down the columns (axis=1 of (B, T, T)) instead of along the rows
    "batch transposed": lambda X: _softmax(_omega(X), axis=1) @ X,
    "X.T on a batch": lambda X: _softmax(X @ X.T) @ X,
    "returned a tuple": lambda X: (_softmax(_omega(X)) @ X, _softmax(_omega(X))),
    "overflow": lambda X: (np.exp(_omega(X)) / np.exp(_omega(X)).sum(axis=-1, keepdims=True)) @ X,
}


@pytest.mark.parametrize("mistake", BATCH_MISTAKES)
def test_self_attention_batch_names_the_mistake(mistake):
    def self_attention_batch(X):
        with np.errstate(all="ignore"):
            return BATCH_MISTAKES[mistake](np.asarray(X, dtype=float))

    names_only(message(checks.check_self_attention_batch, self_attention_batch), mistake)


def test_self_attention_batch_multiplied_by_A_transposed_is_named():
    text = message(checks.check_self_attention_batch,
                   lambda X: np.swapaxes(_softmax(_omega(X)), -1, -2) @ X)
    names_only(text, "batch transposed")


def test_self_attention_batch_right_answer(capsys):
    def self_attention_batch(X):
        X = np.asarray(X, dtype=float)
        return _softmax(_omega(X)) @ X

    checks.check_self_attention_batch(self_attention_batch)
    assert capsys.readouterr().out.startswith("Correct:")


# --------------------------------------------------------------------------- exercise 4
DESIGN_MISTAKES = {
    "a tie": np.array([0.7, 0.7, 0.0, 0.0]),            # bank's own vector
    "points away": np.array([-1.0, 0.0, 0.5, 0.5]),      # against finance, then tech and food
    "too short": np.array([1.0, 0.1, 0.0, 0.0]),         # money: 0.77 < 0.98
    "below one half": np.array([0.8, 0.8, 0.0, 0.0]),    # leads with 1.12 but gets 0.39
}


@pytest.mark.parametrize("mistake", DESIGN_MISTAKES)
def test_bank_attends_names_the_mistake(mistake):
    names_only(message(checks.check_bank_attends, DESIGN_MISTAKES[mistake]), mistake)


@pytest.mark.parametrize("answer", [np.array([2.0, 2.0, 0.0, 0.0]), [1000.0, 1000.0, 0.0, 0.0],
                                    [0.0, 3.0, 0.0, 0.0]])
def test_bank_attends_right_answers(answer, capsys):
    checks.check_bank_attends(answer)   # scores of 1400 included: the check's softmax does not overflow
    assert capsys.readouterr().out.startswith("Correct:")


@pytest.mark.parametrize(("answer", "said"), [
    (None, "has no value yet"), ([1.0, 2.0, 3.0], "shape (3,)"), ("bank", "should be 4 numbers"),
    ([np.nan, 1.0, 0.0, 0.0], "NaN or infinite"), ([1.7e308, 1.7e308, 0.0, 0.0], "overflows"),
])
def test_bank_attends_bad_input_is_named(answer, said):
    text = message(checks.check_bank_attends, answer)
    assert said in text and not [m for m, key in KEYS.items() if key in text], text
