"""Lesson 06's checks name each typical mistake, and only that one, when a learner makes it.

Every function below is a wrong answer as a learner would write it; the check's message must name that mistake
(a phrase of its explanation) and no other named mistake; the right answer must get ``Correct:``.
"""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import message as _message
from mistakes import names_only as _names_only
from mistakes import right_answer_passes as _right_answer_passes

from selfattention.checks import (
    check_scaled_attention,
    check_scaled_scores,
    check_score_divisor,
    check_softmax_jacobian,
)

# ---------------------------------------------------------------- exercise 1: scaled scores
SCORES = {
    "raw": "raw dot products",
    "d_k": "you divided by d_k",
    "sqrt(T_k)": "number of keys",
    "sqrt(T_q)": "number of queries",
    "times": "you multiplied by sqrt(d_k)",
    "batch": "batch size",
    "K.T on a batch": "K.T reverses *all* axes",
    "transposed": "transposed",
}


def _kt(K):
    return np.swapaxes(K, -1, -2)


SCORES_WRONG = {
    "raw": lambda Q, K: Q @ _kt(K),
    "d_k": lambda Q, K: Q @ _kt(K) / Q.shape[-1],
    "sqrt(T_k)": lambda Q, K: Q @ _kt(K) / np.sqrt(len(K) if K.ndim == 2 else K.shape[-2]),
    "sqrt(T_q)": lambda Q, K: Q @ _kt(K) / np.sqrt(len(Q)),                 # len(Q) = T_q for one sequence
    "times": lambda Q, K: Q @ _kt(K) * np.sqrt(Q.shape[-1]),
    "batch": lambda Q, K: Q @ _kt(K) / np.sqrt(Q.shape[-1] if Q.ndim == 2 else Q.shape[0]),
    "K.T on a batch": lambda Q, K: Q @ K.T / np.sqrt(Q.shape[-1]),
    "transposed": lambda Q, K: K @ _kt(Q) / np.sqrt(Q.shape[-1]),
}


@pytest.mark.parametrize("key", sorted(SCORES_WRONG))
def test_scaled_scores_mistake_is_named(key):
    _names_only(_message(check_scaled_scores, SCORES_WRONG[key]), key, SCORES)


def test_scaled_scores_with_shape_1_uses_the_wrong_axis_in_a_batch():
    """Q.shape[1] is d_k for one sequence but T_q for a batch: named as the number of queries."""
    message = _message(check_scaled_scores, lambda Q, K: Q @ _kt(K) / np.sqrt(Q.shape[1]))
    _names_only(message, "sqrt(T_q)", SCORES)


def test_scaled_scores_right_answer_passes(capsys):
    _right_answer_passes(check_scaled_scores, lambda Q, K: Q @ _kt(K) / np.sqrt(Q.shape[-1]), capsys)


# ---------------------------------------------------------------- exercise 2: the divisor
DIVISOR = {
    "sqrt(d_k)": "the right divisor when the entries have variance 1",
    "variance once": "accounted for the variance 4 only once",
    "the variance": "that is the variance of q.k",
    "d_k": "that is d_k.",
    "d_k * 4": "that is d_k * 4",
    "root of d_k only": "square root of d_k but not of the factor",
}
DIVISOR_WRONG = {
    "sqrt(d_k)": 8.0,
    "variance once": np.sqrt(64 * 4),
    "the variance": 64 * 16,
    "d_k": 64,
    "d_k * 4": 256,
    "root of d_k only": 8 * 16,
}


@pytest.mark.parametrize("key", sorted(DIVISOR_WRONG))
def test_divisor_mistake_is_named(key):
    _names_only(_message(check_score_divisor, DIVISOR_WRONG[key]), key, DIVISOR)


def test_divisor_right_answer_passes(capsys):
    _right_answer_passes(check_score_divisor, 32.0, capsys)


# ---------------------------------------------------------------- exercise 3: the softmax Jacobian
JACOBIAN = {
    "diagonal only": "only the diagonal",
    "diag(a) alone": "that is diag(a) alone",
    "element by element": "element by element",
    "identity": "from the identity",
    "sign": "the signs are flipped",
    "a @ a": "a single number",
}
JACOBIAN_WRONG = {
    "diagonal only": lambda a: np.diag(a * (1 - a)),
    "diag(a) alone": lambda a: np.diag(a),
    "element by element": lambda a: np.diag(a) - a * a,
    "identity": lambda a: np.eye(len(a)) - np.outer(a, a),
    "sign": lambda a: np.outer(a, a) - np.diag(a),
    "a @ a": lambda a: np.diag(a) - a @ a,
}


@pytest.mark.parametrize("key", sorted(JACOBIAN_WRONG))
def test_jacobian_mistake_is_named(key):
    _names_only(_message(check_softmax_jacobian, JACOBIAN_WRONG[key]), key, JACOBIAN)


def test_jacobian_right_answer_passes(capsys):
    _right_answer_passes(check_softmax_jacobian, lambda a: np.diag(a) - np.outer(a, a), capsys)


# ---------------------------------------------------------------- exercise 4: scaled attention
ATTENTION = {
    "no scaling": "the scores were not scaled",
    "d_k": "you divided the scores by d_k",
    "sqrt(T_q)": "number of queries",
    "sqrt(T_k)": "number of keys",
    "sqrt(d_v)": "value size",
    "axis 0": "the softmax ran down the columns",
    "no exp": "divided the scores by their row sums",
    "overflow": "subtract each row's maximum",
    "scores @ V": "multiplied the values by the scores",
    "order": "returned (weights, out)",
}


def _softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _attn(divisor=lambda Q, K, V: np.sqrt(Q.shape[-1]), softmax=_softmax, swap=False, out_from_scores=False):
    def attention(Q, K, V):
        s = Q @ K.T / divisor(Q, K, V)
        w = softmax(s)
        out = s @ V if out_from_scores else w @ V
        return (w, out) if swap else (out, w)
    return attention


def _naive_softmax(s):
    e = np.exp(s)                      # no max subtraction: overflows for large scores
    return e / e.sum(axis=-1, keepdims=True)


ATTENTION_WRONG = {
    "no scaling": _attn(divisor=lambda Q, K, V: 1.0),
    "d_k": _attn(divisor=lambda Q, K, V: Q.shape[-1]),
    "sqrt(T_q)": _attn(divisor=lambda Q, K, V: np.sqrt(Q.shape[0])),
    "sqrt(T_k)": _attn(divisor=lambda Q, K, V: np.sqrt(len(K))),
    "sqrt(d_v)": _attn(divisor=lambda Q, K, V: np.sqrt(V.shape[-1])),
    "axis 0": _attn(softmax=lambda s: _softmax(s, axis=0)),
    "no exp": _attn(softmax=lambda s: s / s.sum(axis=-1, keepdims=True)),
    "overflow": _attn(softmax=_naive_softmax),
    "scores @ V": _attn(out_from_scores=True),
    "order": _attn(swap=True),
}


@pytest.mark.parametrize("key", sorted(ATTENTION_WRONG))
def test_attention_mistake_is_named(key):
    with np.errstate(over="ignore", invalid="ignore"):
        message = _message(check_scaled_attention, ATTENTION_WRONG[key])
    _names_only(message, key, ATTENTION)


def test_attention_right_answer_passes(capsys):
    _right_answer_passes(check_scaled_attention, _attn(), capsys)


def test_attention_inputs_include_overflowing_scores():
    """The check's own inputs are numerically hard: a softmax without max-subtraction overflows on them."""
    from selfattention.checks.lesson06 import _attention_cases

    largest = max(float((Q @ K.T / np.sqrt(Q.shape[-1])).max()) for _, Q, K, _ in _attention_cases())
    assert largest > np.log(np.finfo(float).max)
