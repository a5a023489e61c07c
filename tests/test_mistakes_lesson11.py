"""Lesson 11's checks name each typical mistake, and only that one, when a learner makes it.

Every function below is a wrong answer as a learner would write it; the check's message must name that mistake
(a phrase of its explanation) and no other named mistake; the right answer must get ``Correct:``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from mistakes import message as _message
from mistakes import names_only as _names_only

from selfattention.checks import (
    check_ablated_output,
    check_feed_forward_block,
    check_sentence_embedding,
)

# ---------------------------------------------------------------- exercise 1: remove one head
ABLATION = {
    "nothing removed": "nothing was removed",
    "kept only": "kept only that head",
    "columns of W_O": "zeroed columns of W_O",
    "no bias": "the bias b_O is missing",
    "num_heads wide": "the slice is num_heads wide",
    "counted from 1": "heads are counted from 0",
}


def _ablate(context, W_O, b_O, head, num_heads, *, start=None, width=None, bias=True, keep_only=False,
            columns=False):
    d_k = context.shape[1] // num_heads
    width = d_k if width is None else width
    start = head * width if start is None else start
    c = context.copy()
    if columns:
        W = W_O.copy()
        W[:, start:start + width] = 0
        return c @ W + b_O
    if keep_only:
        only = np.zeros_like(c)
        only[:, start:start + width] = c[:, start:start + width]
        c = only
    else:
        c[:, start:start + width] = 0
    return c @ W_O + (b_O if bias else 0)


ABLATION_WRONG = {
    "nothing removed": lambda c, W, b, h, n: c @ W + b,
    "kept only": lambda c, W, b, h, n: _ablate(c, W, b, h, n, keep_only=True),
    "columns of W_O": lambda c, W, b, h, n: _ablate(c, W, b, h, n, columns=True),
    "no bias": lambda c, W, b, h, n: _ablate(c, W, b, h, n, bias=False),
    "num_heads wide": lambda c, W, b, h, n: _ablate(c, W, b, h, n, width=n),
    "counted from 1": lambda c, W, b, h, n: _ablate(c, W, b, h, n, start=(h - 1) * (c.shape[1] // n)),
}


@pytest.mark.parametrize("key", sorted(ABLATION_WRONG))
def test_ablation_mistake_is_named(key):
    _names_only(_message(check_ablated_output, ABLATION_WRONG[key]), key, ABLATION)


def test_ablation_right_answer_passes(capsys):
    check_ablated_output(lambda c, W, b, h, n: _ablate(c, W, b, h, n))
    assert capsys.readouterr().out.startswith("Correct:")


# ---------------------------------------------------------------- exercise 2: feed-forward block
FFN = {
    "no residual": "the residual is missing",
    "pre-norm": "pre-norm arrangement",
    "relu": "that is ReLU",
    "tanh gelu": "tanh approximation of GELU",
    "axis 0": "normalised over the tokens (axis 0)",
    "ddof 1": "ddof=1",
    "no gamma beta": "gamma and beta are not applied",
    "no eps": "the eps inside the square root is missing",
}


def _torch_gelu(z):
    return torch.nn.functional.gelu(torch.from_numpy(z)).numpy()


def _erf_gelu(z):
    return 0.5 * z * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))


def _tanh_gelu(z):
    return torch.nn.functional.gelu(torch.from_numpy(z), approximate="tanh").numpy()


def _ffn(x1, W_1, b_1, W_2, b_2, gamma, beta, eps=1e-12, *, act=_torch_gelu, residual=True, pre_norm=False,
         axis=-1, ddof=0, affine=True, use_eps=True):
    def norm(h, axis=axis):
        mu = h.mean(axis=axis, keepdims=True)
        var = ((h - mu) ** 2).sum(axis=axis, keepdims=True) / (h.shape[axis] - ddof)
        out = (h - mu) / np.sqrt(var + eps if use_eps else var)
        return gamma * out + beta if affine else out

    if pre_norm:
        return x1 + act(norm(x1) @ W_1 + b_1) @ W_2 + b_2
    h = act(x1 @ W_1 + b_1) @ W_2 + b_2
    return norm(x1 + h if residual else h)


FFN_WRONG = {
    "no residual": lambda *a: _ffn(*a, residual=False),
    "pre-norm": lambda *a: _ffn(*a, pre_norm=True),
    "relu": lambda *a: _ffn(*a, act=lambda z: np.maximum(z, 0)),
    "tanh gelu": lambda *a: _ffn(*a, act=_tanh_gelu),
    "axis 0": lambda *a: _ffn(*a, axis=0),
    "ddof 1": lambda *a: _ffn(*a, ddof=1),
    "no gamma beta": lambda *a: _ffn(*a, affine=False),
    "no eps": lambda *a: _ffn(*a, use_eps=False),
}


@pytest.mark.parametrize("key", sorted(FFN_WRONG))
def test_ffn_mistake_is_named(key):
    _names_only(_message(check_feed_forward_block, FFN_WRONG[key]), key, FFN)


def test_ffn_right_answers_pass(capsys):
    check_feed_forward_block(lambda *a: _ffn(*a))
    check_feed_forward_block(lambda *a: _ffn(*a, act=_erf_gelu))
    out = capsys.readouterr().out
    assert out.count("Correct:") == 2, out


# ---------------------------------------------------------------- exercise 3: sentence embedding
EMBEDDING = {
    "padding averaged": "the padding was averaged in",
    "not unit": "not unit length",
    "cls": "that is the [CLS] vector",
    "tokens normalised": "each token was normalised before the mean",
    "max pooling": "that is max pooling",
}


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _mean_real(hidden, mask):
    m = mask[..., None].astype(float)
    return (hidden * m).sum(axis=1) / m.sum(axis=1)


EMBEDDING_WRONG = {
    "padding averaged": lambda h, m: _unit(h.mean(axis=1)),
    "not unit": lambda h, m: _mean_real(h, m),
    "cls": lambda h, m: _unit(h[:, 0, :]),
    "tokens normalised": lambda h, m: _unit(_mean_real(_unit(h), m)),
    "max pooling": lambda h, m: _unit(np.where(m[..., None] == 1, h, -np.inf).max(axis=1)),
}


@pytest.mark.parametrize("key", sorted(EMBEDDING_WRONG))
def test_embedding_mistake_is_named(key):
    _names_only(_message(check_sentence_embedding, EMBEDDING_WRONG[key]), key, EMBEDDING)


def test_embedding_right_answer_passes(capsys):
    check_sentence_embedding(lambda h, m: _unit(_mean_real(h, m)))
    assert capsys.readouterr().out.startswith("Correct:")
