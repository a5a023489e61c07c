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
from mistakes import hidden_test_passes
from mistakes import message as _message
from mistakes import names_only as _names_only
from mistakes import right_answer_passes as _right_answer_passes

from selfattention.checks import check_attention_param_count, check_cross_attention_numpy, check_silence_head

# ---------------------------------------------------------------- exercise 1: silence one head
SILENCE = {
    "nothing": "nothing was silenced",
    "other head": "you silenced the other head",
    "uniform": "weights became uniform",
    "both": "both heads were silenced",
    "in place": "changed the model itself",
    "pair": "returned a pair",
    "hook left": "left a forward hook",
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
    "hook left": lambda model, head, X: _hook_left(model, head, X),
}


def _hook_left(model, head, X):
    """A forward hook that zeroes the head's output, never removed."""
    model.attention.heads[head].register_forward_hook(lambda m, i, out: (torch.zeros_like(out[0]), out[1]))
    with torch.no_grad():
        return model(X)[0]


def _zero_block(model, head, X, d_k):
    """The head's block of the concatenation set to 0 before the readout, d_k columns wide."""
    with torch.no_grad():
        Z = model.attention(X)[0].clone()
        Z[..., head * d_k:(head + 1) * d_k] = 0
        return model.readout(Z[:, -1]).view(len(X), 2, -1)


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
    # the lesson's model has d_k = 16: slicing with a hard-coded 16 is right for it, and for the check's model
    _right_answer_passes(check_silence_head, lambda model, head, X: _zero_block(model, head, X, 16), capsys)


def test_silence_a_function_that_returns_accuracy_does_not_pass():
    """The shortcut: measuring instead of silencing (an accuracy is not the logits)."""
    text = _message(check_silence_head, lambda model, head, X: 0.5)
    assert "shape" in text


# ---------------------------------------------------------------- exercise 2: cross-attention in NumPy
def _cross(mha, x, memory, *, q_t=True, o_t=True, scale=None, split="heads", bias=True, axis=-1, w_o=True):
    """A learner's NumPy answer, with a switch for each slip."""
    d, h = mha.embed_dim, mha.num_heads
    d_k = d // h
    W_Q = mha.q_proj_weight.detach().numpy()
    W_Q = W_Q.T if q_t else W_Q
    W_K, W_V = mha.k_proj_weight.detach().numpy().T, mha.v_proj_weight.detach().numpy().T
    b_Q, b_K, b_V = np.split(mha.in_proj_bias.detach().numpy(), 3) if bias else (0, 0, 0)
    W_O = mha.out_proj.weight.detach().numpy()
    W_O = W_O.T if o_t else W_O
    b_O = mha.out_proj.bias.detach().numpy() if bias else 0
    Q, K, V = x @ W_Q + b_Q, memory @ W_K + b_K, memory @ W_V + b_V
    if split == "reshape":
        Q, K, V = (M.reshape(h, len(M), d_k) for M in (Q, K, V))
    elif split == "none":
        Q, K, V = Q[None], K[None], V[None]
    else:
        Q, K, V = (M.reshape(len(M), h, d_k).transpose(1, 0, 2) for M in (Q, K, V))
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k if scale is None else scale)
    A = np.exp(S) / np.exp(S).sum(axis=axis, keepdims=True)
    Z = A @ V
    Z = Z.reshape(len(x), d) if split == "reshape" else Z.transpose(1, 0, 2).reshape(len(x), d)
    return Z @ W_O + b_O if w_o else Z


CROSS = {
    "W_Q not transposed": "W_Q is used in PyTorch's",
    "W_O not transposed": "W_O is used in PyTorch's",
    "both not transposed": "W_Q and W_O are used",
    "no scale": "the scores are not scaled",
    "sqrt(d_model)": "divided by sqrt(d_model)",
    "plain reshape": "split with a plain reshape",
    "one head": "this is one head over all d_model features",
    "no biases": "the biases are missing",
    "softmax over queries": "the softmax runs over the queries",
    "no W_O": "W_O is missing",
    "called PyTorch": "called the PyTorch layer",
}
CROSS_WRONG = {
    "W_Q not transposed": lambda mha, x, m: _cross(mha, x, m, q_t=False),
    "W_O not transposed": lambda mha, x, m: _cross(mha, x, m, o_t=False),
    "both not transposed": lambda mha, x, m: _cross(mha, x, m, q_t=False, o_t=False),
    "no scale": lambda mha, x, m: _cross(mha, x, m, scale=1),
    "sqrt(d_model)": lambda mha, x, m: _cross(mha, x, m, scale=mha.embed_dim),
    "plain reshape": lambda mha, x, m: _cross(mha, x, m, split="reshape"),
    "one head": lambda mha, x, m: _cross(mha, x, m, split="none", scale=mha.embed_dim),
    "no biases": lambda mha, x, m: _cross(mha, x, m, bias=False),
    "softmax over queries": lambda mha, x, m: _cross(mha, x, m, axis=-2),
    "no W_O": lambda mha, x, m: _cross(mha, x, m, w_o=False),
    "called PyTorch": lambda mha, x, m: mha(torch.tensor(x[None], dtype=torch.float32),
                                            *[torch.tensor(m[None], dtype=torch.float32)] * 2)[0][0].detach(),
}


@pytest.mark.parametrize("key", sorted(CROSS_WRONG))
def test_cross_mistake_is_named(key):
    _names_only(_message(check_cross_attention_numpy, CROSS_WRONG[key]), key, CROSS)


def test_cross_right_answers_pass(capsys):
    _right_answer_passes(check_cross_attention_numpy, _cross, capsys)

    def head_by_head(mha, x, memory):  # a loop over heads, biases sliced by hand, torch for the projections
        d, h = mha.embed_dim, mha.num_heads
        d_k = d // h
        b = mha.in_proj_bias.detach()
        X, M = torch.tensor(x, dtype=torch.float64), torch.tensor(memory, dtype=torch.float64)
        Q = X @ mha.q_proj_weight.detach().double().T + b[:d].double()
        K = M @ mha.k_proj_weight.detach().double().T + b[d:2 * d].double()
        V = M @ mha.v_proj_weight.detach().double().T + b[2 * d:].double()
        outs = []
        for i in range(h):
            cols = slice(i * d_k, (i + 1) * d_k)
            A = torch.softmax(Q[:, cols] @ K[:, cols].T / d_k ** 0.5, dim=-1)
            outs.append(A @ V[:, cols])
        return (torch.cat(outs, dim=1) @ mha.out_proj.weight.detach().double().T
                + mha.out_proj.bias.detach().double()).numpy()

    _right_answer_passes(check_cross_attention_numpy, head_by_head, capsys)


def _cross_two_heads(mha, x, memory):
    """Right for the example layer only: 2 heads taken from it, not from mha."""
    W_Q, W_K, W_V = (w.detach().numpy().T for w in (mha.q_proj_weight, mha.k_proj_weight, mha.v_proj_weight))
    b_Q, b_K, b_V = np.split(mha.in_proj_bias.detach().numpy(), 3)
    d = W_Q.shape[1]
    d_k = d // 2                                                    # the example's 2 heads, typed in
    Q, K, V = x @ W_Q + b_Q, memory @ W_K + b_K, memory @ W_V + b_V
    Q, K, V = (M.reshape(len(M), 2, d_k).transpose(1, 0, 2) for M in (Q, K, V))
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    Z = (A / A.sum(axis=-1, keepdims=True)) @ V
    return Z.transpose(1, 0, 2).reshape(len(x), d) @ mha.out_proj.weight.detach().numpy().T \
        + mha.out_proj.bias.detach().numpy()


def test_cross_two_heads_typed_in_is_named_and_fails_the_hidden_test():
    """The hidden test's layer has 4 heads: the check has one too, so it never says Correct to this."""
    assert "not from the example's 2 heads" in _message(check_cross_attention_numpy, _cross_two_heads)
    two = _cross_two_heads
    assert not hidden_test_passes("08_why_several_heads", "l08-torch-test", cross_attention_numpy=two)


def test_cross_right_answer_passes_the_hidden_test():
    assert hidden_test_passes("08_why_several_heads", "l08-torch-test", cross_attention_numpy=_cross)


def test_cross_calling_pytorchs_functional_form_does_not_pass():
    """The shortcut: let PyTorch compute it, through its functional form."""
    def functional(mha, x, memory):
        t = [torch.tensor(a[:, None], dtype=torch.float32) for a in (x, memory, memory)]
        return torch.nn.functional.multi_head_attention_forward(
            *t, mha.embed_dim, mha.num_heads, None, mha.in_proj_bias, None, None, False, 0.0,
            mha.out_proj.weight, mha.out_proj.bias, use_separate_proj_weight=True,
            q_proj_weight=mha.q_proj_weight, k_proj_weight=mha.k_proj_weight,
            v_proj_weight=mha.v_proj_weight)[0][:, 0].detach()

    assert "called the PyTorch layer" in _message(check_cross_attention_numpy, functional)


def test_cross_pytorchs_finished_pieces_do_not_pass():
    """The shortcut: F.linear for the projections and F.scaled_dot_product_attention for the heads."""
    F = torch.nn.functional

    def split(t, h):
        return t.view(len(t), h, -1).transpose(0, 1)

    def finished(mha, x, memory):
        d, h, b = mha.embed_dim, mha.num_heads, mha.in_proj_bias
        X, M = torch.tensor(x, dtype=torch.float32), torch.tensor(memory, dtype=torch.float32)
        Q, K = F.linear(X, mha.q_proj_weight, b[:d]), F.linear(M, mha.k_proj_weight, b[d:2 * d])
        V = F.linear(M, mha.v_proj_weight, b[2 * d:])
        Z = F.scaled_dot_product_attention(split(Q, h), split(K, h), split(V, h))
        Z = Z.transpose(0, 1).reshape(len(x), d)
        return F.linear(Z, mha.out_proj.weight, mha.out_proj.bias).detach().numpy()

    def sdpa_only(mha, x, memory):
        d, h, b = mha.embed_dim, mha.num_heads, mha.in_proj_bias
        X, M = torch.tensor(x, dtype=torch.float32), torch.tensor(memory, dtype=torch.float32)
        Q, K = X @ mha.q_proj_weight.T + b[:d], M @ mha.k_proj_weight.T + b[d:2 * d]
        V = M @ mha.v_proj_weight.T + b[2 * d:]
        Z = F.scaled_dot_product_attention(split(Q, h), split(K, h), split(V, h))
        Z = Z.transpose(0, 1).reshape(len(x), d)
        return (Z @ mha.out_proj.weight.T + mha.out_proj.bias).detach().numpy()

    assert "calls F.linear" in _message(check_cross_attention_numpy, finished)
    assert "calls F.scaled_dot_product_attention" in _message(check_cross_attention_numpy, sdpa_only)
    for shortcut in (finished, sdpa_only):
        assert "called the PyTorch layer" not in _message(check_cross_attention_numpy, shortcut)


# ---------------------------------------------------------------- exercise 3: the parameter count
COUNT = {
    "bias ignored": "does not change with `bias`",
    "no biases": "never includes the biases",
    "bias swapped": "the wrong way round",
    "kv heads ignored": "only num_kv_heads heads",
    "kdim ignored": "they have kdim rows",
    "d_k from kdim": "d_k is taken as kdim / num_heads",
    "kv heads d_model wide": "counted d_model wide",
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
    "d_k from kdim": lambda d, h, g, k, bias=True: _c(d, h, g, k, bias, kv=g * (k // h)),
    "kv heads d_model wide": lambda d, h, g, k, bias=True: _c(d, h, g, k, bias, kv=g * d),
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


def test_cross_in_proj_weight_is_none_with_kdim():
    """With kdim set, in_proj_weight is None: reading it (as for the plain layer) gets a message saying so."""
    def stacked(mha, x, memory):  # W_Q, W_K, W_V taken from the stacked matrix, as for the plain layer
        W_Q, W_K, W_V = np.split(mha.in_proj_weight.detach().numpy(), 3)
        return _cross(mha, x, memory)

    def sliced(mha, x, memory):
        d = mha.embed_dim
        W_Q = mha.in_proj_weight[:d].detach().numpy()
        return _cross(mha, x, memory) + 0 * W_Q.sum()

    for answer in (stacked, sliced):
        text = _message(check_cross_attention_numpy, answer)
        assert "in_proj_weight" in text and "q_proj_weight" in text and "None" in text, text
        assert not any(phrase in text for phrase in CROSS.values()), text


def test_silence_message_reads_as_a_sentence():
    text = _message(check_silence_head, lambda model, head, X: model(X)[0])
    assert "the output of silence_head(model, head=0, X) is not right yet" in text, text
