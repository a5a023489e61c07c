"""Lesson 12's checks name each typical mistake, and only that one, when a learner makes it.

Every function below is a wrong answer as a learner would write it; the check's message must name that mistake
(a phrase of its explanation) and no other named mistake; two right answers must get ``Correct:``; a shortcut
that skips what the exercise teaches must not.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from mistakes import hidden_test_passes
from mistakes import message as _message
from mistakes import names_only as _names_only

from selfattention.checks import (
    check_feed_forward_block,
    check_head_to_residual,
    check_mean_ablated_output,
)

LESSON = "12_inside_a_real_transformer"

# ---------------------------------------------------------------- exercise 1: mean-ablation
ABLATION = {
    "zero": "that is zero-ablation",
    "own sentence": "this sentence's own T tokens",
    "scalar": "replaced by a single number",
    "all heads": "every head was replaced by its mean",
    "others removed": "the other heads were removed",
    "W_O transposed": "W_O transposed",
    "no bias": "the bias b_O is missing",
    "num_heads wide": "the slice is num_heads wide",
    "counted from 1": "heads are counted from 0",
    "no W_O": "without W_O",
    "centred": "the slice was centred",
    "starts at head": "the slice starts at column head",
    "strided": "every num_heads-th column",
    "median": "you took the median",
    "too wide": "one column too wide",
    "d_k from T": "d_k was computed from the number of tokens",
    "bias twice": "b_O was added twice",
    "context and pool": "the sentence's tokens and the pool's together",
    "W_O columns": "block of W_O by columns",
    "mean added": "the pool's mean was added",
    "counted from the last": "counting the heads from the last one",
    "times 100": "exactly 100 times the right answer",
    "d_k 32": "hard-coded to 32",
    "own features": "averaged over its own d_k features",
    "first T rows": "only the first T",
    "counted from 1 (head+1)": "as if the heads were counted from 1",
    "d_k from pool": "the pool's number of tokens",
    "first d_k of the pool mean": "the first d_k features (head 0's)",
}


def _ablate(context, pool, W_O, b_O, head, num_heads, *, how="mean", start=None, width=None, bias=True,
            transposed=False, project=True):
    d_k = context.shape[1] // num_heads
    width = d_k if width is None else width
    start = head * width if start is None else start
    c = context.copy()
    mean = pool[:, start:start + width].mean(axis=0)
    if how == "mean":
        c[:, start:start + width] = mean
    elif how == "own sentence":
        c[:, start:start + width] = c[:, start:start + width].mean(axis=0)
    elif how == "centred":
        c[:, start:start + width] -= mean
    elif how == "mean added":
        c[:, start:start + width] += mean
    elif how == "zero":
        c[:, start:start + width] = 0
    elif how == "scalar":
        c[:, start:start + width] = pool[:, start:start + width].mean()
    elif how == "median":
        c[:, start:start + width] = np.median(pool[:, start:start + width], axis=0)
    elif how == "all heads":
        c = np.tile(pool.mean(axis=0), (len(c), 1))
    elif how == "others removed":
        c = np.zeros_like(c)
        c[:, start:start + width] = mean
    if not project:
        return c
    return c @ (W_O.T if transposed else W_O) + (b_O if bias else 0)


def _ablate_torch(context, pool, W_O, b_O, head, num_heads):
    c = torch.tensor(context)
    d_k = c.shape[1] // num_heads
    c[:, head * d_k:(head + 1) * d_k] = torch.tensor(pool)[:, head * d_k:(head + 1) * d_k].mean(dim=0)
    return torch.nn.functional.linear(c, torch.tensor(W_O).T, torch.tensor(b_O)).numpy()


def _ablate_strided(context, pool, W_O, b_O, head, num_heads):
    c = context.copy()
    c[:, head::num_heads] = pool[:, head::num_heads].mean(axis=0)
    return c @ W_O + b_O


def _ablate_own_features(context, pool, W_O, b_O, head, num_heads):
    d_k = context.shape[1] // num_heads
    c = context.copy()
    c[:, head * d_k:(head + 1) * d_k] = c[:, head * d_k:(head + 1) * d_k].mean(axis=1, keepdims=True)
    return c @ W_O + b_O


def _ablate_columns(context, pool, W_O, b_O, head, num_heads):
    """The head's mean sent through W_O[:, columns] (transposed to fit) instead of W_O's rows."""
    d_k = context.shape[1] // num_heads
    cols = slice(head * d_k, (head + 1) * d_k)
    rest = context.copy()
    rest[:, cols] = 0
    return rest @ W_O + pool[:, cols].mean(axis=0) @ W_O[:, cols].T + b_O


def _ablate_first_features(context, pool, W_O, b_O, head, num_heads):
    """The pool's mean over all features, cut to its first d_k (head 0's), put in head `head`'s slice."""
    d_k = context.shape[1] // num_heads
    c = context.copy()
    c[:, head * d_k:(head + 1) * d_k] = pool.mean(axis=0)[:d_k]
    return c @ W_O + b_O


ABLATION_WRONG = {
    "zero": lambda *a: _ablate(*a, how="zero"),
    "own sentence": lambda *a: _ablate(*a, how="own sentence"),
    "scalar": lambda *a: _ablate(*a, how="scalar"),
    "all heads": lambda *a: _ablate(*a, how="all heads"),
    "others removed": lambda *a: _ablate(*a, how="others removed"),
    "W_O transposed": lambda *a: _ablate(*a, transposed=True),
    "no bias": lambda *a: _ablate(*a, bias=False),
    "num_heads wide": lambda c, P, W, b, h, n: _ablate(c, P, W, b, h, n, width=n),
    "counted from 1": lambda c, P, W, b, h, n: _ablate(c, P, W, b, h, n, start=(h - 1) * (c.shape[1] // n)),
    "no W_O": lambda *a: _ablate(*a, project=False),
    "centred": lambda *a: _ablate(*a, how="centred"),
    "starts at head": lambda c, P, W, b, h, n: _ablate(c, P, W, b, h, n, start=h),
    "strided": lambda c, P, W, b, h, n: _ablate_strided(c, P, W, b, h, n),
    "median": lambda *a: _ablate(*a, how="median"),
    "too wide": lambda c, P, W, b, h, n: _ablate(c, P, W, b, h, n, start=h * (c.shape[1] // n),
                                                 width=c.shape[1] // n + 1),
    "d_k from T": lambda c, P, W, b, h, n: _ablate(c, P, W, b, h, n, width=c.shape[0] // n),
    "bias twice": lambda c, P, W, b, h, n: _ablate(c, P, W, b, h, n) + b,
    "context and pool": lambda c, P, W, b, h, n: _ablate(c, np.concatenate([c, P]), W, b, h, n),
    "W_O columns": lambda c, P, W, b, h, n: _ablate_columns(c, P, W, b, h, n),
    "mean added": lambda c, P, W, b, h, n: _ablate(c, P, W, b, h, n, how="mean added"),
    "counted from the last": lambda c, P, W, b, h, n: _ablate(c, P, W, b, h, n,
                                                             start=(n - 1 - h) * (c.shape[1] // n)),
    "times 100": lambda *a: 100 * _ablate(*a),
    "d_k 32": lambda c, P, W, b, h, n: _ablate(c, P, W, b, h, n, start=h * 32, width=32),
    "own features": lambda c, P, W, b, h, n: _ablate_own_features(c, P, W, b, h, n),
    "first T rows": lambda c, P, W, b, h, n: _ablate(c, P[: len(c)], W, b, h, n),
    "counted from 1 (head+1)": lambda c, P, W, b, h, n: _ablate(c, P, W, b, h, n,
                                                               start=(h + 1) * (c.shape[1] // n)),
    "d_k from pool": lambda c, P, W, b, h, n: _ablate(c, P, W, b, h, n, width=P.shape[0] // n),
    "first d_k of the pool mean": lambda c, P, W, b, h, n: _ablate_first_features(c, P, W, b, h, n),
}


def _ablate_float32(context, pool, W_O, b_O, head, num_heads):
    c = context.astype(np.float32)
    d_k = c.shape[1] // num_heads
    c[:, head * d_k:(head + 1) * d_k] = pool[:, head * d_k:(head + 1) * d_k].mean(axis=0)
    return c @ W_O.astype(np.float32) + b_O.astype(np.float32)


@pytest.mark.parametrize("key", sorted(ABLATION_WRONG))
def test_ablation_mistake_is_named(key):
    _names_only(_message(check_mean_ablated_output, ABLATION_WRONG[key]), key, ABLATION)


def test_ablation_right_answers_pass(capsys):
    check_mean_ablated_output(lambda *a: _ablate(*a))
    check_mean_ablated_output(_ablate_torch)
    check_mean_ablated_output(_ablate_float32)
    out = capsys.readouterr().out
    assert out.count("Correct:") == 3, out


@pytest.mark.parametrize("key", ["median", "too wide", "d_k from T", "zero", "context and pool",
                                 "W_O columns", "mean added", "own features", "first T rows"])
def test_ablation_mistake_fails_the_hidden_test(key):
    assert not hidden_test_passes(LESSON, "l12-mean-ablate-test", mean_ablated_output=ABLATION_WRONG[key])


def test_ablation_with_d_k_hard_coded_to_32_fails_the_hidden_test():
    """The model's d_k is 32; the hidden test feeds a second input with another d_k: a hard-coded 32 fails."""
    def hard_coded(context, pool, W_O, b_O, head, num_heads):
        c = np.array(context, dtype=float)
        c[:, head * 32:(head + 1) * 32] = np.asarray(pool)[:, head * 32:(head + 1) * 32].mean(axis=0)
        return c @ W_O + b_O

    _names_only(_message(check_mean_ablated_output, hard_coded), "d_k 32", ABLATION)
    assert not hidden_test_passes(LESSON, "l12-mean-ablate-test", mean_ablated_output=hard_coded)


def test_ablation_in_float32_passes_the_hidden_test_as_it_passes_the_check():
    assert hidden_test_passes(LESSON, "l12-mean-ablate-test", mean_ablated_output=_ablate_float32)


def test_ablation_that_changes_the_context_in_place_is_told_to_copy():
    """The exercise says to leave ``context`` unchanged (the hidden test asserts it): the check says so."""
    def in_place(context, pool, W_O, b_O, head, num_heads):
        d_k = context.shape[1] // num_heads
        context[:, head * d_k:(head + 1) * d_k] = pool[:, head * d_k:(head + 1) * d_k].mean(axis=0)
        return context @ W_O + b_O

    msg = _message(check_mean_ablated_output, in_place)
    assert "changed `context` or `pool` itself" in msg and not any(p in msg for p in ABLATION.values())


def test_ablation_shortcut_that_drops_the_head_entirely_fails():
    """Leaving the head's features out of both context and W_O is zero-ablation in disguise: named as such,
    and the hidden test refuses it too."""
    def shortcut(context, pool, W_O, b_O, head, num_heads):
        d_k = context.shape[1] // num_heads
        keep = [j for j in range(context.shape[1]) if not head * d_k <= j < (head + 1) * d_k]
        return context[:, keep] @ W_O[keep] + b_O

    _names_only(_message(check_mean_ablated_output, shortcut), "zero", ABLATION)
    assert not hidden_test_passes(LESSON, "l12-mean-ablate-test", mean_ablated_output=shortcut)


def test_ablation_by_the_sentences_own_mean_fails_the_hidden_test_too():
    """The per-sentence mean the check names is refused by the hidden test; the right answer passes it."""
    assert not hidden_test_passes(LESSON, "l12-mean-ablate-test",
                                  mean_ablated_output=ABLATION_WRONG["own sentence"])
    assert hidden_test_passes(LESSON, "l12-mean-ablate-test", mean_ablated_output=lambda *a: _ablate(*a))


# ---------------------------------------------------------------- exercise 2: feed-forward block
FFN_ID = "l12-ffn-test"
FFN = {
    "no residual": "the residual is missing",
    "pre-norm": "pre-norm arrangement",
    "relu": "that is ReLU",
    "tanh gelu": "tanh approximation of GELU",
    "sigmoid gelu": "sigmoid approximation of GELU",
    "no b_2": "the bias b_2 is missing",
    "residual after norm": "the residual was added after the LayerNorm",
    "no layernorm": "the final LayerNorm is missing",
    "no gelu": "the GELU is missing",
    "gelu after W_2": "the GELU was applied after W_2",
    "erf without sqrt 2": "that GELU uses erf(z)",
    "b_1 after gelu": "b_1 was added after the GELU",
    "gelu without half": "that GELU lacks the factor 1/2",
    "LN(LN(x1) + FFN(x1))": "before the residual as well",
    "LN(LN(x1) + FFN(LN(x1)))": "before the feed-forward and the residual",
    "own norm": "a LayerNorm of your own",
    "library": "uses PyTorch's",
    "module": "a module of the model or of PyTorch",
    "reference": "the course's reference answer",
    "times 100": "exactly 100 times the right answer",
    "erf(z/2)": "that GELU uses erf(z / 2)",
    "no b_1": "the bias b_1 is missing",
    "gelu without z": "that GELU lacks its factor z",
    "b_2 after norm": "b_2 was added after the LayerNorm",
}


def _torch_gelu(z):
    return torch.nn.functional.gelu(torch.from_numpy(z)).numpy()


def _erf_gelu(z):
    return 0.5 * z * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))


def _sigmoid_gelu(z):
    return z / (1 + np.exp(-1.702 * z))


def _tanh_gelu(z):
    return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))


def _plain_norm(h):
    return (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-12)


def _ffn(x1, W_1, b_1, W_2, b_2, layer_norm, *, act=_erf_gelu, residual=True, pre_norm=False, bias_2=True,
         residual_after=False, norm=True, act_last=False, b_1_after=False, norm_x1=False,
         norm_ffn_input=False):
    if norm_x1:
        n1 = layer_norm(x1)
        return layer_norm(n1 + act((n1 if norm_ffn_input else x1) @ W_1 + b_1) @ W_2 + b_2)
    if pre_norm:
        return x1 + act(layer_norm(x1) @ W_1 + b_1) @ W_2 + b_2
    if act_last:
        return layer_norm(x1 + act((x1 @ W_1 + b_1) @ W_2 + b_2))
    h = (act(x1 @ W_1) + b_1 if b_1_after else act(x1 @ W_1 + b_1)) @ W_2 + (b_2 if bias_2 else 0)
    if not norm:
        return x1 + h
    if residual_after:
        return x1 + layer_norm(h)
    return layer_norm(x1 + h if residual else h)


def _ffn_by_module(x1, W_1, b_1, W_2, b_2, layer_norm):
    """The feed-forward through PyTorch's nn.Linear and nn.GELU modules, built from the given weights."""
    first, second = torch.nn.Linear(*W_1.shape).double(), torch.nn.Linear(*W_2.shape).double()
    with torch.no_grad():
        first.weight.copy_(torch.from_numpy(W_1.T))
        first.bias.copy_(torch.from_numpy(b_1))
        second.weight.copy_(torch.from_numpy(W_2.T))
        second.bias.copy_(torch.from_numpy(b_2))
        return layer_norm(x1 + second(torch.nn.GELU()(first(torch.from_numpy(x1)))).numpy())


def _ffn_by_reference(x1, W_1, b_1, W_2, b_2, layer_norm):
    from selfattention.checks.lesson12 import _ffn_block

    return _ffn_block(x1, W_1, b_1, W_2, b_2, layer_norm)


FFN_WRONG = {
    "no residual": lambda *a: _ffn(*a, residual=False),
    "pre-norm": lambda *a: _ffn(*a, pre_norm=True),
    "relu": lambda *a: _ffn(*a, act=lambda z: np.maximum(z, 0)),
    "tanh gelu": lambda *a: _ffn(*a, act=_tanh_gelu),
    "sigmoid gelu": lambda *a: _ffn(*a, act=_sigmoid_gelu),
    "no b_2": lambda *a: _ffn(*a, bias_2=False),
    "residual after norm": lambda *a: _ffn(*a, residual_after=True),
    "no layernorm": lambda *a: _ffn(*a, norm=False),
    "no gelu": lambda *a: _ffn(*a, act=lambda z: z),
    "gelu after W_2": lambda *a: _ffn(*a, act_last=True),
    "erf without sqrt 2": lambda *a: _ffn(*a, act=lambda z: 0.5 * z * (1 + np.vectorize(math.erf)(z))),
    "b_1 after gelu": lambda *a: _ffn(*a, b_1_after=True),
    "gelu without half": lambda *a: _ffn(*a, act=lambda z: 2 * _erf_gelu(z)),
    "LN(LN(x1) + FFN(x1))": lambda *a: _ffn(*a, norm_x1=True),
    "LN(LN(x1) + FFN(LN(x1)))": lambda *a: _ffn(*a, norm_x1=True, norm_ffn_input=True),
    "own norm": lambda x1, W_1, b_1, W_2, b_2, layer_norm: _ffn(x1, W_1, b_1, W_2, b_2, _plain_norm),
    "library": lambda *a: _ffn(*a, act=_torch_gelu),
    "reference": _ffn_by_reference,
    "times 100": lambda *a: 100 * _ffn(*a),
    "erf(z/2)": lambda *a: _ffn(*a, act=lambda z: 0.5 * z * (1 + np.vectorize(math.erf)(z / 2))),
    "no b_1": lambda x1, W_1, b_1, W_2, b_2, ln: _ffn(x1, W_1, 0 * b_1, W_2, b_2, ln),
    "gelu without z": lambda *a: _ffn(*a, act=lambda z: 0.5 * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))),
    "b_2 after norm": lambda x1, W_1, b_1, W_2, b_2, ln: ln(x1 + _erf_gelu(x1 @ W_1 + b_1) @ W_2) + b_2,
}


@pytest.mark.parametrize("key", sorted(FFN_WRONG))
def test_ffn_mistake_is_named(key):
    _names_only(_message(check_feed_forward_block, FFN_WRONG[key]), key, FFN)


@pytest.mark.parametrize("key", ["erf without sqrt 2", "b_1 after gelu", "gelu without half", "own norm",
                                 "library", "reference", "erf(z/2)", "pre-norm", "no residual"])
def test_ffn_mistake_fails_the_hidden_test(key):
    assert not hidden_test_passes(LESSON, FFN_ID, feed_forward_block=FFN_WRONG[key])


def test_ffn_with_math_erf_on_an_array_is_told_to_vectorize():
    """math.erf on an array raises a bare TypeError; the check points to np.vectorize or scipy.special.erf."""
    msg = _message(check_feed_forward_block,
                   lambda *a: _ffn(*a, act=lambda z: 0.5 * z * (1 + math.erf(z / math.sqrt(2)))))
    assert "np.vectorize(math.erf)" in msg and "scipy.special.erf" in msg
    assert not any(p in msg for p in FFN.values())


def _torch_erf_gelu(z):
    return (0.5 * torch.from_numpy(z) * (1 + torch.erf(torch.from_numpy(z) / math.sqrt(2)))).numpy()


def test_ffn_right_answers_pass(capsys):
    check_feed_forward_block(lambda *a: _ffn(*a))
    check_feed_forward_block(lambda *a: _ffn(*a, act=_torch_erf_gelu))   # torch's erf is allowed
    out = capsys.readouterr().out
    assert out.count("Correct:") == 2, out


def test_ffn_right_answers_pass_the_hidden_test():
    assert hidden_test_passes(LESSON, FFN_ID, feed_forward_block=lambda *a: _ffn(*a))
    assert hidden_test_passes(LESSON, FFN_ID, feed_forward_block=lambda *a: _ffn(*a, act=_torch_erf_gelu))


def test_ffn_through_torch_modules_fails():
    """nn.Linear and nn.GELU built inside the answer are seen at run time, by check and hidden test."""
    _names_only(_message(check_feed_forward_block, _ffn_by_module), "library", FFN)
    assert not hidden_test_passes(LESSON, FFN_ID, feed_forward_block=_ffn_by_module)


def _models_gelu():
    from selfattention import data

    return data.load_pretrained().model.encoder.layer[2].intermediate


def test_ffn_through_the_models_own_gelu_fails():
    """The model's GELU module (bert_layer.intermediate.intermediate_act_fn), bound to torch's GELU when the
    model was built, is seen at run time; the check names it and the hidden test refuses it."""
    act = _models_gelu().intermediate_act_fn

    def shortcut(x1, W_1, b_1, W_2, b_2, layer_norm):
        return layer_norm(x1 + act(torch.from_numpy(x1 @ W_1 + b_1)).numpy() @ W_2 + b_2)

    _names_only(_message(check_feed_forward_block, shortcut), "module", FFN)
    assert not hidden_test_passes(LESSON, FFN_ID, feed_forward_block=shortcut)


def test_ffn_through_the_models_whole_modules_fails():
    """bert_layer.intermediate and bert_layer.output run whole: refused by the check and the hidden test."""
    intermediate = _models_gelu()

    def shortcut(x1, W_1, b_1, W_2, b_2, layer_norm):
        with torch.no_grad():
            inner = intermediate(torch.from_numpy(x1).float()).double().numpy()
        return layer_norm(x1 + inner @ W_2 + b_2)

    _names_only(_message(check_feed_forward_block, shortcut), "module", FFN)
    assert not hidden_test_passes(LESSON, FFN_ID, feed_forward_block=shortcut)


def test_ffn_reference_imported_at_the_top_fails():
    """The reference bound to a global name of the learner's (imported in an earlier cell) is refused too."""
    from selfattention.checks import lesson12

    scope = {"ref": lesson12._ffn_block}
    exec("def feed_forward_block(x1, W_1, b_1, W_2, b_2, layer_norm):\n"   # noqa: S102
         "    return ref(x1, W_1, b_1, W_2, b_2, layer_norm)\n", scope)
    _names_only(_message(check_feed_forward_block, scope["feed_forward_block"]), "reference", FFN)
    assert not hidden_test_passes(LESSON, FFN_ID, feed_forward_block=scope["feed_forward_block"])


# ---------------------------------------------------------------- exercise 3: one head against the residual
RATIO_ID = "l12-ratio-test"
RATIO = {
    "upside down": "the ratio upside down",
    "squared": "squared norms",
    "no weights": "without the weights",
    "sum of lengths": "a sum of lengths",
    "transposed": "the weights are transposed",
    "whole x": "the norm of the whole x",
    "heads summed": "the heads were summed before the norm",
    "mean length": "the mean length of x's tokens",
    "longest length": "the longest token's length",
    "length change": "how much token i's length changes",
    "length after": "the length after the head is added",
    "percentage": "that is a percentage",
    "not divided": "without dividing by ||x_i||",
}


def _o(weights, vW):
    return np.asarray(weights) @ np.asarray(vW)


RATIO_WRONG = {
    "upside down": lambda w, vW, x: np.linalg.norm(x, axis=-1) / np.linalg.norm(_o(w, vW), axis=-1),
    "squared": lambda w, vW, x: (_o(w, vW) ** 2).sum(-1) / (np.asarray(x) ** 2).sum(-1),
    "no weights": lambda w, vW, x: np.linalg.norm(vW, axis=-1) / np.linalg.norm(x, axis=-1),
    "sum of lengths": lambda w, vW, x: (w * np.linalg.norm(vW, axis=-1)[:, None, :]).sum(-1)
    / np.linalg.norm(x, axis=-1),
    "transposed": lambda w, vW, x: np.linalg.norm(np.transpose(w, (0, 2, 1)) @ vW, axis=-1)
    / np.linalg.norm(x, axis=-1),
    "whole x": lambda w, vW, x: np.linalg.norm(_o(w, vW), axis=-1) / np.linalg.norm(x),
    "mean length": lambda w, vW, x: np.linalg.norm(_o(w, vW), axis=-1) / np.linalg.norm(x, axis=-1).mean(),
    "longest length": lambda w, vW, x: (w @ vW).norm(dim=-1) / x.norm(dim=-1).max(),   # torch, as section 3
    "length change": lambda w, vW, x: (np.linalg.norm(x + _o(w, vW), axis=-1) - np.linalg.norm(x, axis=-1))
    / np.linalg.norm(x, axis=-1),
    "length after": lambda w, vW, x: np.linalg.norm(x + _o(w, vW), axis=-1) / np.linalg.norm(x, axis=-1),
    "not divided": lambda w, vW, x: np.linalg.norm(_o(w, vW), axis=-1),
    "percentage": lambda w, vW, x: 100 * np.linalg.norm(_o(w, vW), axis=-1) / np.linalg.norm(x, axis=-1),
    "heads summed": lambda w, vW, x: np.broadcast_to(np.linalg.norm(_o(w, vW).sum(0), axis=-1)
                                                     / np.linalg.norm(x, axis=-1), np.shape(w)[:2]).copy(),
}


def _right(w, vW, x):
    return np.linalg.norm(_o(w, vW), axis=-1) / np.linalg.norm(x, axis=-1)


def _right_torch(w, vW, x):
    o = torch.as_tensor(np.asarray(w)) @ torch.as_tensor(np.asarray(vW))
    return (o.norm(dim=-1) / torch.as_tensor(np.asarray(x)).norm(dim=-1)).numpy()


@pytest.mark.parametrize("key", sorted(RATIO_WRONG))
def test_ratio_mistake_is_named(key):
    _names_only(_message(lambda f: check_head_to_residual(f, 0.08, 0.12), RATIO_WRONG[key]), key, RATIO)


@pytest.mark.parametrize("key", sorted(RATIO_WRONG))
def test_ratio_mistake_fails_the_hidden_test(key):
    assert not hidden_test_passes(LESSON, RATIO_ID, head_to_residual=RATIO_WRONG[key], predicted_parked=0.08,
                                  predicted_other=0.12)


def _tensor_style(weights, vW, x):
    """Modelled on section 3's cell, on the torch tensors the exercise names."""
    return (weights @ vW).norm(dim=-1) / x.norm(dim=-1)


GUESSES = [(7.8, 12.3), (12.7, 8.1), (0.12, 0.08), (0.0062, 0.015), (0.4, 0.6), (None, None), (0.035, 0.04),
           (0.0, 0.1)]


@pytest.mark.parametrize("guess", GUESSES)
def test_a_prediction_is_never_graded(guess, capsys):
    """Any guess, even none, leaves a right function passing the check and the hidden test."""
    check_head_to_residual(_right, *guess)
    assert capsys.readouterr().out.startswith("Correct:")
    assert hidden_test_passes(LESSON, RATIO_ID, head_to_residual=_right, predicted_parked=guess[0],
                              predicted_other=guess[1])


def test_a_tensor_answer_passes_the_check_and_the_hidden_test(capsys):
    check_head_to_residual(_tensor_style, 0.08, 0.12)
    assert capsys.readouterr().out.startswith("Correct:")
    assert hidden_test_passes(LESSON, RATIO_ID, head_to_residual=_tensor_style, predicted_parked=0.08,
                              predicted_other=0.12)


def test_ratio_right_answers_pass(capsys):
    check_head_to_residual(_right, 0.91 / 11.6, 1.43 / 11.6)
    check_head_to_residual(_right_torch, 0.049, 0.091)
    out = capsys.readouterr().out
    assert out.count("Correct:") == 2, out


def test_ratio_right_answers_pass_the_hidden_test():
    assert hidden_test_passes(LESSON, RATIO_ID, head_to_residual=_right, predicted_parked=0.91 / 11.6,
                              predicted_other=1.43 / 11.6)
    assert hidden_test_passes(LESSON, RATIO_ID, head_to_residual=_right_torch, predicted_parked=0.049,
                              predicted_other=0.091)


def test_ratio_check_prints_the_measured_medians_next_to_the_predictions(capsys):
    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(5), size=(12, 5))
    vW, x = rng.normal(size=(12, 5, 7)), 10 * rng.normal(size=(5, 7))
    check_head_to_residual(_right, 0.08, None, w, vW, x)
    out = capsys.readouterr().out
    assert f"Head 7: measured median {np.median(_right(w, vW, x)[7]):.3f}; your prediction 0.080" in out
    assert "no prediction recorded in predicted_other" in out


def test_ratio_shortcut_of_one_number_per_head_fails():
    """One median per head skips the per-token ratio: shape refused by check and hidden test."""
    def shortcut(w, vW, x):
        return np.median(_right(w, vW, x), axis=-1)

    msg = _message(lambda f: check_head_to_residual(f, 0.08, 0.12), shortcut)
    assert "shape" in msg and not any(p in msg for p in RATIO.values())
    assert not hidden_test_passes(LESSON, RATIO_ID, head_to_residual=shortcut, predicted_parked=0.08,
                                  predicted_other=0.12)


def test_a_prediction_of_zero_is_recorded(capsys):
    """A guess of 0 (the head adds nothing) is a prediction, not a missing one."""
    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(5), size=(12, 5))
    vW, x = rng.normal(size=(12, 5, 7)), 10 * rng.normal(size=(5, 7))
    check_head_to_residual(_right, 0.0, 0.1, w, vW, x)
    out = capsys.readouterr().out
    assert "no prediction recorded" not in out, out
    assert "Head 7: measured median" in out and "your prediction 0:" in out
    assert f"your prediction 0.100 ({0.1 / np.median(_right(w, vW, x)[10]):.1f} times" in out
