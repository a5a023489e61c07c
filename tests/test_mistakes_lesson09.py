"""Lesson 09's checks name each typical mistake, and only that one, when a learner makes it.

Every function below is a wrong answer as a learner would write it; the check's message must name that mistake
(a phrase of its explanation) and no other named mistake; the right answer must get ``Correct:``.
"""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import message as _message
from mistakes import names_only as _names_only

import selfattention as sa
from selfattention.checks import (
    check_causal_weights,
    check_online_weighted_sum,
    check_positional_encoding,
)


def _own_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ---------------------------------------------------------------- exercise 1: causal weights
CAUSAL = {
    "no mask": "no mask was applied",
    "wrong way": "the mask points the wrong way",
    "after softmax": "set to 0 after the softmax",
    "zero not -inf": "set to 0, not -inf",
    "axis 0": "taken over the columns (axis=0)",
    "diagonal": "the diagonal was masked too",
    "overflow": "subtract each row's maximum",
    "not exactly 0": "small but not exactly 0",
}


def _causal(scores, mask_fn=None, fill=-np.inf, softmax=sa.softmax, axis=-1):
    T = scores.shape[-1]
    mask = sa.causal_mask(T) if mask_fn is None else mask_fn(T)
    return softmax(np.where(mask, scores, fill), axis=axis)


def _no_max_softmax(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


CAUSAL_WRONG = {
    "no mask": lambda s: sa.softmax(s),
    "wrong way": lambda s: _causal(s, mask_fn=lambda T: np.triu(np.ones((T, T), dtype=bool))),
    "after softmax": lambda s: sa.softmax(s) * np.tril(np.ones_like(s)),
    "zero not -inf": lambda s: _causal(s, fill=0.0),
    "axis 0": lambda s: _causal(s, axis=0),
    "diagonal": lambda s: _causal(s, mask_fn=lambda T: np.tril(np.ones((T, T), dtype=bool), -1)),
    "overflow": lambda s: _causal(s, softmax=_no_max_softmax),
    "not exactly 0": lambda s: _causal(s, fill=-30.0),
}


@pytest.mark.parametrize("key", sorted(CAUSAL_WRONG))
def test_causal_mistake_is_named(key):
    _names_only(_message(check_causal_weights, CAUSAL_WRONG[key]), key, CAUSAL)


def test_causal_diagonal_with_own_softmax_is_named_not_nan():
    def fn(s):
        return _causal(s, mask_fn=lambda T: np.tril(np.ones((T, T), dtype=bool), -1), softmax=_own_softmax)

    _names_only(_message(check_causal_weights, fn), "diagonal", CAUSAL)


def test_causal_right_answer_passes(capsys):
    check_causal_weights(lambda s: _causal(s))
    check_causal_weights(lambda s: _causal(s, softmax=_own_softmax))
    assert capsys.readouterr().out.startswith("Correct:")


# ---------------------------------------------------------------- exercise 2: positional encoding
PE = {
    "swapped": "sine and cosine are swapped",
    "own index": "each column used its own index j",
    "i/d": "the exponent is i/d",
    "from 1": "positions start at 1",
}


def _pe(T, d, *, swap=False, own_index=False, half=False, start=0):
    pe = np.zeros((T, d))
    for pos in range(start, T + start):
        for i in range(d // 2):
            k = i if half else 2 * i
            a = (pos / 10000 ** (k / d),) * 2
            if own_index:                                   # column j's exponent uses j itself
                a = (pos / 10000 ** (2 * i / d), pos / 10000 ** ((2 * i + 1) / d))
            first, second = (np.cos(a[0]), np.sin(a[1])) if swap else (np.sin(a[0]), np.cos(a[1]))
            pe[pos - start, 2 * i], pe[pos - start, 2 * i + 1] = first, second
    return pe


PE_WRONG = {
    "swapped": lambda T, d: _pe(T, d, swap=True),
    "own index": lambda T, d: _pe(T, d, own_index=True),
    "i/d": lambda T, d: _pe(T, d, half=True),
    "from 1": lambda T, d: _pe(T, d, start=1),
}


@pytest.mark.parametrize("key", sorted(PE_WRONG))
def test_pe_mistake_is_named(key):
    _names_only(_message(check_positional_encoding, PE_WRONG[key]), key, PE)


def test_pe_right_answer_passes(capsys):
    check_positional_encoding(lambda T, d: _pe(T, d))
    assert capsys.readouterr().out.startswith("Correct:")


# ---------------------------------------------------------------- exercise 3: online softmax
ONLINE = {
    "no rescale": "neither the running sum nor the running output was rescaled",
    "output not rescaled": "the running sum was rescaled but the running output was not",
    "sum not rescaled": "the running output was rescaled but the running sum was not",
    "no division": "the final division is missing",
    "overflow": "np.exp(1000) overflows",
    "max starts at 0": "Start the running maximum at -np.inf",
}


def _online(scores, values, block_size, *, m0=-np.inf, rescale_l=True, rescale_o=True, divide=True,
            subtract=True):
    m, l, o = m0, 0.0, np.zeros(values.shape[-1])
    for start in range(0, len(scores), block_size):
        s, v = scores[start:start + block_size], values[start:start + block_size]
        m_new = max(m, s.max())
        correction = np.exp(m - m_new) if subtract else 1.0
        p = np.exp(s - m_new) if subtract else np.exp(s)
        l = (l * correction if rescale_l else l) + p.sum()
        o = (o * correction if rescale_o else o) + p @ v
        m = m_new
    return o / l if divide else o


ONLINE_WRONG = {
    "no rescale": lambda s, v, b: _online(s, v, b, rescale_l=False, rescale_o=False),
    "output not rescaled": lambda s, v, b: _online(s, v, b, rescale_o=False),
    "sum not rescaled": lambda s, v, b: _online(s, v, b, rescale_l=False),
    "no division": lambda s, v, b: _online(s, v, b, divide=False),
    "overflow": lambda s, v, b: _online(s, v, b, subtract=False),
    "max starts at 0": lambda s, v, b: _online(s, v, b, m0=0.0),
}


@pytest.mark.parametrize("key", sorted(ONLINE_WRONG))
def test_online_mistake_is_named(key):
    with np.errstate(all="ignore"):
        message = _message(check_online_weighted_sum, ONLINE_WRONG[key])
    _names_only(message, key, ONLINE)


def test_online_right_answer_passes(capsys):
    check_online_weighted_sum(lambda s, v, b: _online(s, v, b))
    assert capsys.readouterr().out.startswith("Correct:")
