"""Lesson 08's checks name each typical mistake, and only that one, when a learner makes it.

Every answer below is wrong as a learner would write it; the check's message must name that mistake (a phrase
of its explanation) and no other named mistake; two different right answers must get ``Correct:``; a shortcut
that skips what the exercise teaches must not pass.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from mistakes import message as _message
from mistakes import names_only as _names_only
from mistakes import right_answer_passes as _right_answer_passes

from selfattention.checks import check_attention_param_count, check_silence_head, check_torch_to_numpy

# ---------------------------------------------------------------- exercise 1: silence one head
SILENCE = {
    "nothing": "nothing was silenced",
    "other head": "you silenced the other head",
    "uniform": "weights became uniform",
    "both": "both heads were silenced",
    "in place": "changed the model itself",
    "pair": "returned a pair",
}


def _zero_value(model, head, X):
    silent = copy.deepcopy(model)
    with torch.no_grad():
        silent.attention.heads[head].W_value.weight.zero_()
        return silent(X)[0]


SILENCE_WRONG = {
    "nothing": lambda model, head, X: model(X)[0].detach(),
    "other head": lambda model, head, X: _zero_value(model, 1 - head, X),
    "uniform": lambda model, head, X: _zero_query(model, head, X),
    "both": lambda model, head, X: _zero_value(copy.deepcopy(model), 0, X) * 0 + _both(model, X),
    "in place": lambda model, head, X: _in_place(model, head, X),
    "pair": lambda model, head, X: tuple(t.detach() for t in _pair(model, head, X)),
}


def _zero_query(model, head, X):
    silent = copy.deepcopy(model)
    with torch.no_grad():
        silent.attention.heads[head].W_query.weight.zero_()
        return silent(X)[0]


def _both(model, X):
    silent = copy.deepcopy(model)
    with torch.no_grad():
        for h in silent.attention.heads:
            h.W_value.weight.zero_()
        return silent(X)[0]


def _in_place(model, head, X):
    with torch.no_grad():
        model.attention.heads[head].W_value.weight.zero_()
        return model(X)[0]


def _pair(model, head, X):
    silent = copy.deepcopy(model)
    with torch.no_grad():
        silent.attention.heads[head].W_value.weight.zero_()
        return silent(X)


@pytest.mark.parametrize("key", sorted(SILENCE_WRONG))
def test_silence_mistake_is_named(key):
    _names_only(_message(check_silence_head, SILENCE_WRONG[key]), key, SILENCE)


def test_silence_right_answers_pass(capsys):
    _right_answer_passes(check_silence_head, _zero_value, capsys)

    def zero_block(model, head, X):  # the concatenation's block of that head, set to 0 before the readout
        with torch.no_grad():
            Z, _ = model.attention(X)
            d_k = Z.shape[-1] // len(model.attention.heads)
            Z = Z.clone()
            Z[..., head * d_k:(head + 1) * d_k] = 0
            return model.readout(Z[:, -1]).view(len(X), 2, -1)

    _right_answer_passes(check_silence_head, zero_block, capsys)


def test_silence_a_function_that_returns_accuracy_does_not_pass():
    """The shortcut: measuring instead of silencing (an accuracy is not the logits)."""
    text = _message(check_silence_head, lambda model, head, X: 0.5)
    assert "shape" in text


# ---------------------------------------------------------------- exercise 2: PyTorch's weights in NumPy
def _right(mha):
    W_Q, W_K, W_V = (w.detach().numpy().T for w in mha.in_proj_weight.chunk(3))
    b_Q, b_K, b_V = (b.detach().numpy() for b in mha.in_proj_bias.chunk(3))
    W_O, b_O = mha.out_proj.weight.detach().numpy().T, mha.out_proj.bias.detach().numpy()
    return W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O


def _swap(seq, i, j):
    seq = list(seq)
    seq[i], seq[j] = seq[j], seq[i]
    return tuple(seq)


TORCH = {
    "not transposed": "nn.Linear's (out, in) order",
    "Q and K swapped": "these are the numbers of W_K",
    "whole in_proj": "that is the whole in_proj_weight",
    "columns cut": "was cut along its columns",
    "whole bias": "that is the whole in_proj_bias",
    "biases swapped": "these are the numbers of b_V",
    "W_O not transposed": "transpose it (.T)",
}
TORCH["biases zero"] = "the biases are missing"
TORCH_WRONG = {
    "biases zero": lambda mha: (*_right(mha)[:4], *(np.zeros_like(b) for b in _right(mha)[4:])),
    "not transposed": lambda mha: (*(w.detach().numpy() for w in mha.in_proj_weight.chunk(3)),
                                   *_right(mha)[3:]),
    "Q and K swapped": lambda mha: _swap(_right(mha), 0, 1),
    "whole in_proj": lambda mha: (mha.in_proj_weight.detach().numpy(), *_right(mha)[1:]),
    "columns cut": lambda mha: (*(w.detach().numpy() for w in mha.in_proj_weight.chunk(3, dim=1)),
                                *_right(mha)[3:]),
    "whole bias": lambda mha: (*_right(mha)[:4], mha.in_proj_bias.detach().numpy(), *_right(mha)[5:]),
    "biases swapped": lambda mha: _swap(_right(mha), 5, 6),
    "W_O not transposed": lambda mha: (*_right(mha)[:3], mha.out_proj.weight.detach().numpy(),
                                       *_right(mha)[4:]),
}
# W_O in (out, in) order is named by the same words as the three projections: the same mistake.
TORCH_SAME = {"W_O not transposed": "not transposed"}


@pytest.mark.parametrize("key", sorted(TORCH_WRONG))
def test_torch_mistake_is_named(key):
    text = _message(check_torch_to_numpy, TORCH_WRONG[key])
    same = TORCH_SAME.get(key)
    phrases = {k: v for k, v in TORCH.items() if k not in TORCH_SAME and k != same} | {key: TORCH[key]}
    _names_only(text, key, phrases)


def test_torch_right_answers_pass(capsys):
    _right_answer_passes(check_torch_to_numpy, _right, capsys)

    def by_rows(mha):  # slicing the rows by hand, torch tensors returned as they are
        d = mha.embed_dim
        w, b = mha.in_proj_weight.detach(), mha.in_proj_bias.detach()
        return (w[:d].T, w[d:2 * d].T, w[2 * d:].T, mha.out_proj.weight.detach().T,
                b[:d], b[d:2 * d], b[2 * d:], mha.out_proj.bias.detach())

    _right_answer_passes(check_torch_to_numpy, by_rows, capsys)


def test_torch_handing_back_pytorchs_own_tensors_does_not_pass():
    """The shortcut: PyTorch's tensors as they are stored, no layout worked out."""
    def as_stored(mha):
        return (*mha.in_proj_weight.chunk(3), mha.out_proj.weight,
                *mha.in_proj_bias.chunk(3), mha.out_proj.bias)

    assert "(out, in) order" in _message(check_torch_to_numpy, as_stored)


# ---------------------------------------------------------------- exercise 3: the parameter count
COUNT = {
    "bias ignored": "does not change with `bias`",
    "no biases": "never includes the biases",
    "bias swapped": "the wrong way round",
    "kv heads ignored": "only num_kv_heads heads",
    "kdim ignored": "they have kdim rows",
    "kdim x kdim": "counted as kdim x kdim",
    "no W_O": "W_O (d_model x d_model, plus its bias) is missing",
    "kv bias d_model": "biases of W_K and W_V are counted with d_model",
    "one of K, V": "only one of W_K and W_V",
    "plain formula": "shown above; here W_K and W_V change",
    "plain formula, bias ignored": "whatever `bias`",
}


def _c(d, h, g, kdim, bias=True, *, kv=None, kin=None, out=True, kvb=None, b=None, n=2):
    d_k = d // h
    kvw = g * d_k if kv is None else kv
    bias = bias if b is None else b(bias)
    k_in = kdim if kin is None else kin
    total = d * d + n * k_in * kvw + (d * d if out else 0)
    return total + ((d + n * (kvw if kvb is None else kvb) + (d if out else 0)) if bias else 0)


COUNT_WRONG = {
    "bias ignored": lambda d, h, g, k, bias=True: _c(d, h, g, k, True),
    "no biases": lambda d, h, g, k, bias=True: _c(d, h, g, k, False),
    "bias swapped": lambda d, h, g, k, bias=True: _c(d, h, g, k, not bias),
    "kv heads ignored": lambda d, h, g, k, bias=True: _c(d, h, g, k, bias, kv=d),
    "kdim ignored": lambda d, h, g, k, bias=True: _c(d, h, g, k, bias, kin=d),
    "kdim x kdim": lambda d, h, g, k, bias=True: _c(d, h, g, k, bias, kv=k),
    "no W_O": lambda d, h, g, k, bias=True: _c(d, h, g, k, bias, out=False),
    "kv bias d_model": lambda d, h, g, k, bias=True: _c(d, h, g, k, bias, kvb=d),
    "one of K, V": lambda d, h, g, k, bias=True: _c(d, h, g, k, bias, n=1),
    "plain formula": lambda d, h, g, k, bias=True: 4 * d * d + (4 * d if bias else 0),
    "plain formula, bias ignored": lambda d, h, g, k, bias=True: 4 * d * d + 4 * d,
}


@pytest.mark.parametrize("key", sorted(COUNT_WRONG))
def test_count_mistake_is_named(key):
    _names_only(_message(check_attention_param_count, COUNT_WRONG[key]), key, COUNT)


def test_count_right_answers_pass(capsys):
    def formula(d, h, g, k, bias=True):
        return _c(d, h, g, k, bias)

    _right_answer_passes(check_attention_param_count, formula, capsys)

    def by_matrix(d_model, num_heads, num_kv_heads, kdim, bias=True):
        d_k = d_model // num_heads
        kv = num_kv_heads * d_k
        shapes = [(d_model, d_model), (kdim, kv), (kdim, kv), (d_model, d_model)]
        return sum(rows * cols + (cols if bias else 0) for rows, cols in shapes)

    _right_answer_passes(check_attention_param_count, by_matrix, capsys)


def test_count_the_plain_formula_does_not_pass():
    """The shortcut: 4 d_model^2 + 4 d_model, the count the lesson shows, whatever the variant."""
    text = _message(check_attention_param_count,
                    lambda d, h, g, k, bias=True: 4 * d * d + (4 * d if bias else 0))
    assert "the plain layer's count" in text


def test_count_agrees_with_pytorch_where_pytorch_has_the_layer():
    from selfattention.checks.lesson08 import _count

    for d, h, k, bias in ((8, 2, 5, True), (12, 3, 12, False), (16, 4, 6, True)):
        m = torch.nn.MultiheadAttention(d, h, kdim=k, vdim=k, bias=bias)
        assert _count(d, h, h, k, bias) == sum(p.numel() for p in m.parameters())


def test_silence_removing_the_head_gets_the_hint():
    def removed(model, head, X):
        smaller = copy.deepcopy(model)
        del smaller.attention.heads[head]
        return smaller(X)[0]

    text = _message(check_silence_head, removed)
    assert "don't remove the head" in text and "2 d_k features" in text
