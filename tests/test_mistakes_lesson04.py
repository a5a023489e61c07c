"""Lesson 04's checks name each typical mistake, and only that one.

Every wrong answer below is written the way a learner would write it. Each test asserts that the message names
its own mistake and none of the others (``tests/mistakes.py``), that two different right answers pass, and
that a shortcut which skips what the exercise teaches does not.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from mistakes import message, names_only, right_answer_passes

from selfattention import checks


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


X_TOY = np.array([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0, 1], [0, 0, 1, 1, 1]], dtype=float)


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


def check_apple(answer):
    checks.check_apple_query(*answer)


def test_apple_right_answers(capsys):
    right_answer_passes(check_apple, (GOOD, RIGHT), capsys)
    other = W_Q.copy()
    other[3] = [0, 4, -2]  # the fruit row alone: q_apple = [0, 4, 0]
    right_answer_passes(check_apple, (other, math.exp(4) / (math.exp(4) + 3)), capsys)
    right_answer_passes(check_apple, (GOOD, round(RIGHT, 2)), capsys)


def red_changed() -> np.ndarray:
    """The shortcut: 'apple is red', so change the red row; but red's own query changes too."""
    W = W_Q.copy()
    W[4] = [0, 3, 0]
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
    names_only(message(check_apple, answer), mistake, APPLE)


# ------------------------------------------------------------------ Exercise 2: read a PyTorch layer
def weights(layer):
    return [lin.weight.detach().numpy().T for lin in (layer.W_query, layer.W_key, layer.W_value)]


def right_layer(layer, X):
    W_q, W_k, W_v = weights(layer)
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1])) @ (X @ W_v)


def right_layer_scaled_queries(layer, X):
    """Another right answer: scale the queries, as the package does, then a softmax by hand."""
    W_q, W_k, W_v = weights(layer)
    Q = X @ W_q / math.sqrt(W_k.shape[1])
    S = Q @ (X @ W_k).T
    E = np.exp(S - S.max(axis=1, keepdims=True))
    return (E / E.sum(axis=1, keepdims=True)) @ (X @ W_v)


def scaled_by(divisor):
    def answer(layer, X):
        W_q, W_k, W_v = weights(layer)
        S = (X @ W_q) @ (X @ W_k).T
        return softmax(S / divisor(X, W_q, W_v)) @ (X @ W_v)
    return answer


def untransposed(layer, X):
    W_q, W_k, W_v = (lin.weight.detach().numpy() for lin in (layer.W_query, layer.W_key, layer.W_value))
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[0])) @ (X @ W_v)


def columns(layer, X):
    W_q, W_k, W_v = weights(layer)
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1]), axis=0) @ (X @ W_v)


def keys_first(layer, X):
    W_q, W_k, W_v = weights(layer)
    return softmax((X @ W_k) @ (X @ W_q).T / math.sqrt(W_q.shape[1])) @ (X @ W_v)


def only_weights(layer, X):
    W_q, W_k, _ = weights(layer)
    return softmax((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1]))


def naive_softmax(layer, X):
    W_q, W_k, W_v = weights(layer)
    E = np.exp((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1]))
    return E / E.sum(axis=1, keepdims=True) @ (X @ W_v)


def calls_the_layer(layer, X):
    """The shortcut: let the layer compute it."""
    import torch

    return layer(torch.tensor(X, dtype=torch.float32))[0].detach().numpy()


def calls_the_projections(layer, X):
    """Another shortcut: let nn.Linear do the transpose."""
    import torch

    x = torch.tensor(X, dtype=torch.float32)
    q, k, v = (lin(x).detach().numpy() for lin in (layer.W_query, layer.W_key, layer.W_value))
    return softmax(q @ k.T / math.sqrt(q.shape[1])) @ v


LAYER = {
    "untransposed": "you used X @ weight",
    "no scale": "yours are not divided",
    "sqrt d_v": "divided by sqrt(d_v)",
    "d_k": "divided by d_k;",
    "sqrt d_in": "divided by sqrt(d_in)",
    "sqrt T": "divided by sqrt(T)",
    "axis 0": "down the columns (axis=0)",
    "keys first": "K @ Q.T instead of Q @ K.T",
    "weights": "the attention weights",
    "overflow": "subtract each row's maximum",
    "calls": "your code calls the layer",
}


def test_layer_right_answers(capsys):
    right_answer_passes(checks.check_layer_output, right_layer, capsys)
    right_answer_passes(checks.check_layer_output, right_layer_scaled_queries, capsys)


@pytest.mark.parametrize(
    ("answer", "mistake"),
    [
        (untransposed, "untransposed"),
        (scaled_by(lambda X, W_q, W_v: 1.0), "no scale"),
        (scaled_by(lambda X, W_q, W_v: math.sqrt(W_v.shape[1])), "sqrt d_v"),
        (scaled_by(lambda X, W_q, W_v: W_q.shape[1]), "d_k"),
        (scaled_by(lambda X, W_q, W_v: math.sqrt(X.shape[1])), "sqrt d_in"),
        (scaled_by(lambda X, W_q, W_v: math.sqrt(X.shape[0])), "sqrt T"),
        (columns, "axis 0"),
        (keys_first, "keys first"),
        (only_weights, "weights"),
        (naive_softmax, "overflow"),
        (calls_the_layer, "calls"),
        (calls_the_projections, "calls"),
    ],
)
def test_layer_mistakes_are_named(answer, mistake):
    text = message(checks.check_layer_output, answer)
    names_only(text, mistake, LAYER)
    if answer is calls_the_projections:
        assert "layer.W_query(...)" in text, text


def test_layer_cases_keep_the_sizes_apart():
    """A square case, where X @ weight runs; one where d_in, d_k, d_v and T all differ; one that overflows."""
    from selfattention.checks.lesson04 import _layer_cases, _weights

    sizes = []
    for layer, X in _layer_cases():
        W_q, _, W_v = _weights(layer)
        sizes.append((X.shape[0], X.shape[1], W_q.shape[1], W_v.shape[1]))
    assert sizes[0][1] == sizes[0][2] == sizes[0][3]
    assert len(set(sizes[1])) == 4
    layer, X = _layer_cases()[-1]
    W_q, W_k, _ = _weights(layer)
    assert np.abs((X @ W_q) @ (X @ W_k).T / math.sqrt(W_q.shape[1])).max() > 710


# ------------------------------------------------------------------ Exercise 3: the next word, d_k = 2
K_NEXT = np.array([[1, 0], [0, 1], [1, -1], [0, 0], [-1, 0]], dtype=float)  # keys point 4 ways
Q_NEXT = np.array([[0, 3], [-3, 0], [3, 3], [0, 0], [0, -3]], dtype=float)   # 3 x the next word's key


def keys_and_queries(keys: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """W_Q, W_K (5, d) that give these four word queries and keys (X_TOY has full row rank)."""
    pinv = np.linalg.pinv(X_TOY)
    return pinv @ queries, pinv @ keys


def check_next(answer):
    checks.check_next_word(*answer)


NEXT = {
    "linear layout": "nn.Linear layout",
    "d_k": "the exercise asks for d_k = 2",
    "sizes": "a dot product needs the same d_k",
    "itself": "every word looks most at itself",
    "previous": "looks at the word before it",
    "too small": "Make the scores' gaps larger",
    "wrap": "Only 'apple' is wrong",
    "zero query": "spreads its attention evenly",
    "other": "four points in the plane",
}

KEYS = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], dtype=float)


def test_next_word_right_answers(capsys):
    right_answer_passes(check_next, (Q_NEXT, K_NEXT), capsys)
    right_answer_passes(check_next, keys_and_queries(2 * KEYS, 3 * np.roll(KEYS, -1, axis=0)), capsys)


def one_hot_axes() -> tuple[np.ndarray, np.ndarray]:
    """The shortcut: one axis per word (d_k = 4), which needs no design."""
    return keys_and_queries(np.eye(4), 5 * np.roll(np.eye(4), -1, axis=0))


def apple_wrong() -> tuple[np.ndarray, np.ndarray]:
    queries = 3 * np.roll(KEYS, -1, axis=0)
    queries[3] = 3 * KEYS[2]  # apple looks at red, not at Sam
    return keys_and_queries(KEYS, queries)


def zero_query() -> tuple[np.ndarray, np.ndarray]:
    queries = 3 * np.roll(KEYS, -1, axis=0)
    queries[2] = 0.0
    return keys_and_queries(KEYS, queries)


def scrambled() -> tuple[np.ndarray, np.ndarray]:
    queries = 3 * KEYS[[2, 3, 1, 0]]  # Sam -> red, ate -> apple, red -> ate, apple -> Sam
    return keys_and_queries(KEYS, queries)


@pytest.mark.parametrize(
    ("answer", "mistake"),
    [
        ((Q_NEXT.T, K_NEXT.T), "linear layout"),
        (one_hot_axes(), "d_k"),
        ((Q_NEXT, K_NEXT[:, :1]), "sizes"),
        ((K_NEXT * 3, K_NEXT), "itself"),
        (keys_and_queries(KEYS, 3 * np.roll(KEYS, 1, axis=0)), "previous"),
        ((Q_NEXT / 3, K_NEXT), "too small"),
        (apple_wrong(), "wrap"),
        (zero_query(), "zero query"),
        (scrambled(), "other"),
    ],
)
def test_next_word_mistakes_are_named(answer, mistake):
    names_only(message(check_next, answer), mistake, NEXT)
