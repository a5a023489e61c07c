"""Lesson 07's checks name each typical mistake, and only that one, when a learner makes it.

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
    check_multi_head_attention,
    check_param_count,
    check_split_into_heads,
)


def _split(x, n):
    T, d_model = x.shape
    return x.reshape(T, n, d_model // n).transpose(1, 0, 2)


# ---------------------------------------------------------------- exercise 1: split into heads
SPLIT = {
    "straight": "reshaped straight to (num_heads, T, d_k)",
    "interleaved": "every num_heads-th feature",
    "no transpose": "the heads must come first",
    "last two swapped": "looks transposed",
}
SPLIT_WRONG = {
    "straight": lambda x, n: x.reshape(n, x.shape[0], x.shape[1] // n),
    "interleaved": lambda x, n: x.reshape(x.shape[0], x.shape[1] // n, n).transpose(2, 0, 1),
    "no transpose": lambda x, n: x.reshape(x.shape[0], n, x.shape[1] // n),
    "last two swapped": lambda x, n: x.reshape(x.shape[0], n, x.shape[1] // n).transpose(1, 2, 0),
}


@pytest.mark.parametrize("key", sorted(SPLIT_WRONG))
def test_split_mistake_is_named(key):
    _names_only(_message(check_split_into_heads, SPLIT_WRONG[key]), key, SPLIT)


def test_split_right_answer_passes(capsys):
    _right_answer_passes(check_split_into_heads, _split, capsys)


# ---------------------------------------------------------------- exercise 2: the whole layer
MHA = {
    "sqrt(d_model)": "divided by sqrt(d_model)",
    "d_k": "instead of sqrt(d_k)",
    "no scaling": "not scaled at all",
    "sqrt(T)": "the number of tokens",
    "axis 1": "down the columns, axis=1",
    "axis 0": "runs across the heads",
    "K Q^T": "the scores are transposed",
    "no W_O": "the output projection is missing",
    "W_O.T": "multiplied by W_O.T",
    "W.T projections": "the projections use W.T",
    "one head": "single-head attention",
    "split straight": "reshaping straight to (num_heads, T, d_k)",
    "split interleaved": "every num_heads-th feature",
    "merge without transpose": "merged by reshaping",
    "concatenation order": "concatenated in the wrong order",
    "overflow": "subtract each row's maximum",
}


def _softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _naive_softmax(s, axis=-1):
    e = np.exp(s)                            # no max subtraction: overflows for large scores
    return e / e.sum(axis=axis, keepdims=True)


def _layer(divide=lambda T, d_model, d_k: np.sqrt(d_k), softmax=_softmax, axis=-1, kq=False, w_o="W_O",
           transpose_w=False, one_head=False, split=_split, merge="right"):
    """A learner's multi_head_attention, right by default; each keyword puts in one mistake."""
    def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads):
        T, d_model = X.shape
        n = 1 if one_head else num_heads
        d_k = d_model // n
        proj = (lambda W: X @ W.T) if transpose_w else (lambda W: X @ W)
        Q, K, V = split(proj(W_Q), n), split(proj(W_K), n), split(proj(W_V), n)
        scores = (K @ Q.transpose(0, 2, 1) if kq else Q @ K.transpose(0, 2, 1)) / divide(T, d_model, d_k)
        heads = softmax(scores, axis=axis) @ V                     # (n, T, d_k)
        if merge == "no transpose":
            merged = heads.reshape(T, d_model)
        elif merge == "interleaved":
            merged = heads.transpose(1, 2, 0).reshape(T, d_model)
        else:
            merged = heads.transpose(1, 0, 2).reshape(T, d_model)
        return {"W_O": merged @ W_O, "none": merged, "W_O.T": merged @ W_O.T}[w_o]
    return multi_head_attention


MHA_WRONG = {
    "sqrt(d_model)": _layer(divide=lambda T, d_model, d_k: np.sqrt(d_model)),
    "d_k": _layer(divide=lambda T, d_model, d_k: d_k),
    "no scaling": _layer(divide=lambda T, d_model, d_k: 1.0),
    "sqrt(T)": _layer(divide=lambda T, d_model, d_k: np.sqrt(T)),
    "axis 1": _layer(axis=1),
    "axis 0": _layer(axis=0),
    "K Q^T": _layer(kq=True),
    "no W_O": _layer(w_o="none"),
    "W_O.T": _layer(w_o="W_O.T"),
    "W.T projections": _layer(transpose_w=True),
    "one head": _layer(one_head=True),
    "split straight": _layer(split=lambda Y, n: Y.reshape(n, Y.shape[0], Y.shape[1] // n)),
    "split interleaved": _layer(split=lambda Y, n: Y.reshape(len(Y), Y.shape[1] // n, n).transpose(2, 0, 1)),
    "merge without transpose": _layer(merge="no transpose"),
    "concatenation order": _layer(merge="interleaved"),
    "overflow": _layer(softmax=_naive_softmax),
}


@pytest.mark.parametrize("key", sorted(MHA_WRONG))
def test_mha_mistake_is_named(key):
    with np.errstate(over="ignore", invalid="ignore"):
        message = _message(check_multi_head_attention, MHA_WRONG[key])
    _names_only(message, key, MHA)


def test_mha_right_answer_passes(capsys):
    _right_answer_passes(check_multi_head_attention, _layer(), capsys)


def test_mha_inputs_overflow_a_naive_softmax():
    from selfattention.checks.lesson07 import _mha_cases

    largest = 0.0
    for X, W_Q, W_K, _, _, n in _mha_cases():
        Q, K = _split(X @ W_Q, n), _split(X @ W_K, n)
        largest = max(largest, float((Q @ K.transpose(0, 2, 1)).max() / np.sqrt(Q.shape[-1])))
    assert largest > np.log(np.finfo(float).max)


# ---------------------------------------------------------------- exercise 3: the parameter count
PARAMS = {
    "no W_O": "W_O (d_model x d_model, plus its bias) is missing",
    "bias swapped": "the bias terms are counted the wrong way round",
    "full matrices per head": "each head does not get full d_model x d_model matrices",
    "one head": "that is the size of one head only",
}
PARAMS_WRONG = {
    "no W_O": lambda d, h, bias=True: 3 * d * d + (3 * d if bias else 0),
    "bias swapped": lambda d, h, bias=True: 4 * d * d + (0 if bias else 4 * d),
    "full matrices per head": lambda d, h, bias=True: 4 * h * d * d + (4 * h * d if bias else 0),
    "one head": lambda d, h, bias=True: 4 * d * (d // h) + (4 * (d // h) if bias else 0),
}


@pytest.mark.parametrize("key", sorted(PARAMS_WRONG))
def test_param_mistake_is_named(key):
    _names_only(_message(check_param_count, PARAMS_WRONG[key]), key, PARAMS)


def test_param_right_answer_passes(capsys):
    right = lambda d, h, bias=True: 4 * d * d + (4 * d if bias else 0)  # noqa: E731
    _right_answer_passes(check_param_count, right, capsys)
