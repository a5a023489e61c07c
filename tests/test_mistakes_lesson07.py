"""Lesson 07's checks name each typical mistake, and only that one, when a learner makes it.

Every answer below is wrong as a learner would write it; the check's message must name that mistake (a phrase
of its explanation) and no other named mistake; two different right answers must get ``Correct:``; a shortcut
that skips what the exercise teaches must not pass.
"""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import hidden_test_passes
from mistakes import message as _message
from mistakes import names_only as _names_only
from mistakes import right_answer_passes as _right_answer_passes

from selfattention.checks import check_head2_sharpen, check_mixing_W_O, check_multi_head_attention

# ---------------------------------------------------------------- exercise 1: the factor c on head 2's W_Q
# Head 2 of the worked example, as the lesson prints it: the raw scores of "apple", q_apple . k_j.
SCORES = [0.3, 0.05, 1.5, 2.6]
RIGHT_C = 2.9786          # the smallest c with softmax(c * SCORES / sqrt(2))[phones] above 0.9


def _head2(c, scores=SCORES):
    return check_head2_sharpen(scores, c)


SCORE_MISTAKES = {
    "column of apple": "the column of \"apple\"",
    "already scaled": "already divided by sqrt(2)",
    "q . q": "queries against queries",
    "head 1": "head 1's scores",
    "reversed": "the scores are in reverse order",
    "row of I": "the scores of \"I\"",
    "row of love": "the scores of \"love\"",
    "row of phones": "the scores of \"phones\"",
}
SCORES_WRONG = {  # step 1 as a learner would type it
    "column of apple": [0.3, 0.1, 1.5, 1.6],          # k_apple . q_j: [0.5, 1.0] against each query
    "already scaled": [0.21, 0.04, 1.06, 1.84],
    "q . q": [0.85, 0.4, 4.25, 2.2],
    "head 1": [1.7, 1.83, 1.5, 1.67],
    "reversed": [2.6, 1.5, 0.05, 0.3],
    "row of I": [0.06, 0.01, 0.3, 0.52],
    "row of love": [0.02, 0.0, 0.1, 0.24],
    "row of phones": [0.32, 0.12, 1.6, 1.44],
}


@pytest.mark.parametrize("key", sorted(SCORES_WRONG))
def test_head2_score_mistake_is_named(key):
    """The scores are graded first: a slip in step 1 is named there, whatever c is."""
    text = _message(lambda s: _head2(RIGHT_C, s), SCORES_WRONG[key])
    _names_only(text, key, SCORE_MISTAKES)


def test_head2_an_arithmetic_slip_in_one_score_names_that_key():
    text = _message(lambda s: _head2(RIGHT_C, s), [0.3, 0.05, 1.5, 2.4])
    assert "apple_scores_2 differs" in text and 'key of "phones"' in text, text


C_MISTAKES = {
    "no sqrt(2)": "not divided by sqrt(d_k)",
    "divided by d_k": "divided by d_k = 2",
    "c squared": "multiplies every score by c^2",
    "apple's term only": "only the term of \"apple\"'s own key",
    "not the smallest": "but a smaller c already does",
    "too small": "not above 0.9",
}
C_WRONG = {  # c_phones as a learner would type it, to two decimals
    "no sqrt(2)": 2.11,        # softmax(c s): c = 2.106
    "divided by d_k": 4.21,    # softmax(c s / 2): c = 4.212
    "c squared": 1.73,         # both q and k scaled: c^2 = 2.979
    "apple's term only": 2.82,  # exp(-1.1 c / sqrt(2)) = 1/9, without the keys of I and love
    "not the smallest": 3.0,   # the widget's slider, in steps of 0.5: 0.902 on "phones"
    "too small": 2.96,         # 0.8985 on "phones"
}


@pytest.mark.parametrize("key", sorted(C_WRONG))
def test_head2_c_mistake_is_named(key):
    _names_only(_message(_head2, C_WRONG[key]), key, C_MISTAKES)


def test_head2_right_answers_pass(capsys):
    """Typed to two decimals, or found exactly (float or one-element array)."""
    _right_answer_passes(_head2, 2.98, capsys)
    near = np.array(SCORES) + 0.004                 # scores computed exactly, or nearly
    _right_answer_passes(lambda c: check_head2_sharpen(near, c), np.array([RIGHT_C]), capsys)


def test_head2_shortcuts_fail_the_check_and_the_hidden_test():
    """The slider's grid (3.0) and the dominant-term estimate (2.82) skip the derivation: both refused."""
    for c in (3.0, 2.82):
        assert "Correct" not in _message(_head2, c)
        assert not hidden_test_passes("07_multi_head_attention", "l07-head2-test",
                                      apple_scores_2=SCORES, c_phones=c)
    assert hidden_test_passes("07_multi_head_attention", "l07-head2-test", apple_scores_2=SCORES,
                              c_phones=2.98)


def test_head2_blank_is_told_to_answer():
    assert "None" in _message(lambda a: check_head2_sharpen(*a), (None, None))
    assert "c_phones" in _message(lambda a: check_head2_sharpen(*a), (SCORES, None))


# ---------------------------------------------------------------- exercise 2: the batched layer
def _split(x, n):
    B, T, d_model = x.shape
    return x.reshape(B, T, n, d_model // n).transpose(0, 2, 1, 3)


MHA = {
    "sqrt(d_model)": "divided by sqrt(d_model)",
    "d_k": "instead of sqrt(d_k)",
    "no scaling": "not scaled at all",
    "sqrt(T)": "the number of tokens",
    "axis -2": "runs down the columns",
    "axis 0": "across the sequences of the batch (axis=0)",
    "axis 1": "runs across the heads",
    "K Q^T": "the scores are transposed",
    "no W_O": "the output projection is missing",
    "W_O.T": "multiplied by W_O.T",
    "W.T projections": "the projections use W.T",
    "one head": "single-head attention",
    "split straight": "reshaping straight to (batch, num_heads, T, d_k)",
    "split interleaved": "every num_heads-th feature",
    "merge without transpose": "merged by reshaping",
    "concatenation order": "concatenated in the wrong order",
    "batch joined": "attend across the sequences of the batch",
    "overflow": "subtract each row's maximum",
    "split and merge straight": "both split and merged with a plain reshape",
    "values from W_K": "the values are computed with W_K",
    "values from W_Q": "the values are computed with W_Q",
    "split without transpose": "heads attend to each other",
    "split without transpose, merge with it": "heads attend to each other",
    "scaled after softmax": "divided by sqrt(d_k) after the softmax",
    "first sequence repeated": "got the output of the first sequence",
}
MHA_SAME = {"split without transpose": "split without transpose, merge with it"}


def _softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _naive_softmax(s, axis=-1):
    e = np.exp(s)                            # no max subtraction: overflows for large scores
    return e / e.sum(axis=axis, keepdims=True)


def _layer(divide=lambda T, d_model, d_k: np.sqrt(d_k), softmax=_softmax, axis=-1, kq=False, w_o="W_O",
           transpose_w=False, one_head=False, split=_split, merge="right", join_batch=False,
           values=None, after_softmax=False, first_only=False):
    """A learner's multi_head_attention, right by default; each keyword puts in one mistake."""
    def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads):
        B, T, d_model = X.shape
        if first_only:                       # the first sequence, its output copied to every sequence
            X = X[:1]
        if join_batch:
            X = X.reshape(1, B * T, d_model)
        b, t = X.shape[:2]
        n = 1 if one_head else num_heads
        d_k = d_model // n
        proj = (lambda W: X @ W.T) if transpose_w else (lambda W: X @ W)
        W_values = {"W_K": W_K, "W_Q": W_Q}.get(values, W_V)
        Q, K, V = split(proj(W_Q), n), split(proj(W_K), n), split(proj(W_values), n)
        scores = K @ Q.swapaxes(-1, -2) if kq else Q @ K.swapaxes(-1, -2)
        if after_softmax:
            heads = softmax(scores, axis=axis) / divide(t, d_model, d_k) @ V
        else:
            heads = softmax(scores / divide(t, d_model, d_k), axis=axis) @ V      # (b, n, t, d_k)
        if merge == "no transpose":
            merged = heads.reshape(b, t, d_model)
        elif merge == "interleaved":
            merged = heads.transpose(0, 2, 3, 1).reshape(b, t, d_model)
        else:
            merged = heads.transpose(0, 2, 1, 3).reshape(b, t, d_model)
        out = {"W_O": merged @ W_O, "none": merged, "W_O.T": merged @ W_O.T}[w_o]
        if first_only:
            return np.repeat(out, B, axis=0)
        return out.reshape(B, T, d_model)
    return multi_head_attention


MHA_WRONG = {
    "sqrt(d_model)": _layer(divide=lambda T, d_model, d_k: np.sqrt(d_model)),
    "d_k": _layer(divide=lambda T, d_model, d_k: d_k),
    "no scaling": _layer(divide=lambda T, d_model, d_k: 1.0),
    "sqrt(T)": _layer(divide=lambda T, d_model, d_k: np.sqrt(T)),
    "axis -2": _layer(axis=-2),
    "axis 0": _layer(axis=0),
    "axis 1": _layer(axis=1),
    "K Q^T": _layer(kq=True),
    "no W_O": _layer(w_o="none"),
    "W_O.T": _layer(w_o="W_O.T"),
    "W.T projections": _layer(transpose_w=True),
    "one head": _layer(one_head=True),
    "split straight": _layer(split=lambda Y, n: Y.reshape(Y.shape[0], n, Y.shape[1], Y.shape[2] // n)),
    "split interleaved": _layer(
        split=lambda Y, n: Y.reshape(*Y.shape[:2], Y.shape[2] // n, n).transpose(0, 3, 1, 2)),
    "merge without transpose": _layer(merge="no transpose"),
    "concatenation order": _layer(merge="interleaved"),
    "batch joined": _layer(join_batch=True),
    "overflow": _layer(softmax=_naive_softmax),
    "values from W_K": _layer(values="W_K"),
    "values from W_Q": _layer(values="W_Q"),
    "split without transpose": _layer(
        split=lambda Y, n: Y.reshape(*Y.shape[:2], n, Y.shape[2] // n), merge="no transpose"),
    "split without transpose, merge with it": _layer(
        split=lambda Y, n: Y.reshape(*Y.shape[:2], n, Y.shape[2] // n)),
    "scaled after softmax": _layer(after_softmax=True),
    "first sequence repeated": _layer(first_only=True),
    "split and merge straight": _layer(
        split=lambda Y, n: Y.reshape(Y.shape[0], n, Y.shape[1], Y.shape[2] // n), merge="no transpose"),
}


@pytest.mark.parametrize("key", sorted(MHA_WRONG))
def test_mha_mistake_is_named(key):
    with np.errstate(over="ignore", invalid="ignore"):
        message = _message(check_multi_head_attention, MHA_WRONG[key])
    twins = {k for k in MHA if MHA_SAME.get(k) == key or MHA_SAME.get(key) == k}
    _names_only(message, key, {k: v for k, v in MHA.items() if k not in twins})


def test_mha_right_answers_pass(capsys):
    _right_answer_passes(check_multi_head_attention, _layer(), capsys)

    def one_sequence_at_a_time(X, W_Q, W_K, W_V, W_O, num_heads):  # loops, as the lesson's first version
        out = np.zeros_like(X)
        d_k = X.shape[-1] // num_heads
        for b, x in enumerate(X):
            heads = []
            for i in range(num_heads):
                cols = slice(i * d_k, (i + 1) * d_k)
                q, k, v = x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols]
                heads.append(_softmax(q @ k.T / np.sqrt(d_k)) @ v)
            out[b] = np.concatenate(heads, axis=-1) @ W_O
        return out

    _right_answer_passes(check_multi_head_attention, one_sequence_at_a_time, capsys)


def test_mha_a_single_sequence_layer_does_not_pass():
    """The shortcut: the (T, d_model) layer of the lesson, fed the batch as it is (its reshape to
    (T, num_heads, d_k) fails or mixes sequences)."""
    def unbatched(X, W_Q, W_K, W_V, W_O, num_heads):
        T, d_model = X.shape
        d_k = d_model // num_heads
        Q = (X @ W_Q).reshape(T, num_heads, d_k).transpose(1, 0, 2)
        return Q

    assert "multi_head_attention raised ValueError" in _message(check_multi_head_attention, unbatched)


def test_mha_returning_the_weights_too_is_explained():
    def with_weights(X, W_Q, W_K, W_V, W_O, num_heads):
        B, T, d = X.shape
        Q, K, V = (_split(X @ W, num_heads) for W in (W_Q, W_K, W_V))
        A = _softmax(Q @ K.swapaxes(-1, -2) / np.sqrt(d // num_heads))
        return (A @ V).transpose(0, 2, 1, 3).reshape(B, T, d) @ W_O, A

    assert "return only the output" in _message(check_multi_head_attention, with_weights)

    def with_none(X, W_Q, W_K, W_V, W_O, num_heads):   # (out, None), as some libraries return
        return _layer()(X, W_Q, W_K, W_V, W_O, num_heads), None

    assert "return only the output" in _message(check_multi_head_attention, with_none)


def test_mha_a_float_d_k_is_explained():
    def float_d_k(X, W_Q, W_K, W_V, W_O, num_heads):
        B, T, d = X.shape
        d_k = d / num_heads
        Q, K, V = ((X @ W).reshape(B, T, num_heads, d_k).transpose(0, 2, 1, 3) for W in (W_Q, W_K, W_V))
        A = _softmax(Q @ K.swapaxes(-1, -2) / np.sqrt(d_k))
        return (A @ V).transpose(0, 2, 1, 3).reshape(B, T, d) @ W_O

    assert "d_model // num_heads" in _message(check_multi_head_attention, float_d_k)


def test_mha_inputs_overflow_a_naive_softmax():
    from selfattention.checks.lesson07 import _mha_cases

    largest = 0.0
    for X, W_Q, W_K, _, _, n in _mha_cases():
        Q, K = _split(X @ W_Q, n), _split(X @ W_K, n)
        largest = max(largest, float((Q @ K.swapaxes(-1, -2)).max() / np.sqrt(Q.shape[-1])))
    assert largest > np.log(np.finfo(float).max)


def test_mha_a_3d_transpose_in_4d_code_gets_swapaxes():
    def copied(X, W_Q, W_K, W_V, W_O, num_heads):
        B, T, d = X.shape
        Q, K, V = (_split(X @ W, num_heads) for W in (W_Q, W_K, W_V))
        A = _softmax(Q @ K.transpose(0, 2, 1) / np.sqrt(d // num_heads))
        return (A @ V).transpose(0, 2, 1, 3).reshape(B, T, d) @ W_O

    assert "swapaxes(-1, -2)" in _message(check_multi_head_attention, copied)


# ---------------------------------------------------------------- exercise 3: a W_O that routes the heads
I2, O2 = np.eye(2), np.zeros((2, 2))
ROUTE = np.block([[I2, O2], [O2, np.array([[0.0, 0.0], [0.0, 1.0]])]])   # I with row 2 emptied


def _route(**entries):
    """ROUTE with some entries changed: key "r3c2" sets row 3, column 2."""
    W = ROUTE.copy()
    for key, value in entries.items():
        W[int(key[1]), int(key[3])] = value
    return W


MIX = {
    "transposed": "change with head 2's fruit feature",
    "identity": "change with head 2's fruit feature",
    "fruit and tech": "change with head 2's fruit feature",
    "fruit, not tech": "read head 2's fruit feature",
    "transposed, tech into output 2": "read head 2's fruit feature",
    "head 2 in 0-1": "output features 0-1 change with head 2's output",
    "head 1 scaled": "are not head 1's output unchanged",
    "head 1 in 2-3": "change when head 1's output changes",
    "nothing in 2-3": "never see head 2's tech feature",
    "the old mix": "output features 0-1 change with head 2's output",
}
MIX_WRONG = {
    "transposed": _route(r3c2=1.0).T,           # a right design written (out, in): fruit leaks into output 3
    "fruit and tech": _route(r2c3=1.0),         # the same matrix, meant as "output 3 = fruit + tech"
    "identity": np.eye(4),
    "fruit, not tech": _route(r2c2=1.0, r3c3=0.0),
    "transposed, tech into output 2": _route(r3c2=1.0, r3c3=0.0).T,   # (out, in): row 2 writes, row 3 not
    "head 2 in 0-1": _route(r3c1=1.0),
    "head 1 scaled": _route(r0c0=0.5, r1c1=0.5),
    "head 1 in 2-3": _route(r0c2=1.0),
    "nothing in 2-3": _route(r3c3=0.0),
    "the old mix": np.block([[I2, O2], [I2, I2]]),     # head 2 added into outputs 0-1
}
MIX_SAME = {"the old mix": "head 2 in 0-1", "transposed": "identity", "fruit and tech": "identity",
            "transposed, tech into output 2": "fruit, not tech"}


@pytest.mark.parametrize("key", sorted(MIX_WRONG))
def test_mixing_mistake_is_named(key):
    text = _message(check_mixing_W_O, MIX_WRONG[key])
    _names_only(text, key, {k: v for k, v in MIX.items() if k not in MIX_SAME and k != MIX_SAME.get(key)}
                | {key: MIX[key]})
    assert "right value" not in text               # it names the block, never the value to type


def test_mixing_never_says_transpose_when_a_block_leaks():
    """Output 3 = fruit + tech is a right design transposed: the fruit leak is named, not a transpose."""
    text = _message(check_mixing_W_O, _route(r2c3=1.0))
    assert "row 2 of W_O" in text and "transpose" not in text


def test_mixing_a_design_in_out_in_order_gets_the_row_reminder():
    """Every message that names a wrong row says what a row and a column of W_O are."""
    for key in ("transposed", "transposed, tech into output 2", "fruit, not tech"):
        text = _message(check_mixing_W_O, MIX_WRONG[key])
        assert "Row r of W_O is what concatenated feature r writes" in text


def test_mixing_right_answers_pass(capsys):
    _right_answer_passes(lambda W: check_mixing_W_O(W, False), ROUTE, capsys)
    both = _route(r3c2=-2.0, r3c3=0.5)            # tech written into both outputs 2 and 3
    _right_answer_passes(lambda W: check_mixing_W_O(W, False), both.tolist(), capsys)


def test_mixing_a_full_rank_shortcut_does_not_pass():
    """Keeping everything (W_O = I) is the shortcut: it passes head 2's fruit feature through too."""
    assert "Correct" not in _message(check_mixing_W_O, np.eye(4))


def test_mixing_saying_the_fruit_feature_can_be_recovered_is_explained():
    text = _message(lambda W: check_mixing_W_O(W, True), ROUTE)
    assert "can_recover_fruit is not" in text and "rank 3" in text
    assert "True or False" in _message(lambda W: check_mixing_W_O(W, "no"), ROUTE)
    assert "True or False" in _message(check_mixing_W_O, ROUTE)          # left blank


def test_mixing_the_shape_is_explained():
    assert "shape (4, 4)" in _message(check_mixing_W_O, np.eye(2))


def _torch_layer(X, W_Q, W_K, W_V, W_O, num_heads):
    """The shortcut: PyTorch's finished layer, its weights set from the four matrices (nn.Linear's
    (out, in) order, hence the transposes)."""
    import torch

    B, T, d_model = X.shape
    layer = torch.nn.MultiheadAttention(d_model, num_heads, bias=False, batch_first=True).double()
    with torch.no_grad():
        layer.in_proj_weight.copy_(torch.tensor(np.concatenate([W_Q.T, W_K.T, W_V.T])))
        layer.out_proj.weight.copy_(torch.tensor(W_O.T))
        x = torch.tensor(X)
        return layer(x, x, x, need_weights=False)[0].numpy()


def _torch_functional(X, W_Q, W_K, W_V, W_O, num_heads):
    """The same shortcut through the functional form, one sequence at a time ((T, 1, d_model) layout)."""
    import torch

    F = torch.nn.functional
    out = []
    for x in torch.tensor(X):
        x = x[:, None]
        z, _ = F.multi_head_attention_forward(
            x, x, x, x.shape[-1], num_heads, torch.tensor(np.concatenate([W_Q.T, W_K.T, W_V.T])), None,
            None, None, False, 0.0, torch.tensor(W_O.T), None, need_weights=False)
        out.append(z[:, 0].numpy())
    return np.stack(out)


@pytest.mark.parametrize("shortcut", [_torch_layer, _torch_functional])
def test_mha_pytorchs_own_layer_does_not_pass(shortcut):
    """Exact to rounding, so no comparison of numbers can catch it: the check names PyTorch's layer."""
    text = _message(check_multi_head_attention, shortcut)
    assert "torch.nn.MultiheadAttention" in text, text
    assert not [k for k, phrase in MHA.items() if phrase in text], text


def _with_sa_attention(X, W_Q, W_K, W_V, W_O, num_heads):
    """The shortcut: split and merge by hand, the attention itself from lesson 06's finished function."""
    import selfattention as sa

    B, T, d_model = X.shape
    d_k = d_model // num_heads
    Q, K, V = ((X @ W).reshape(B, T, num_heads, d_k).transpose(0, 2, 1, 3) for W in (W_Q, W_K, W_V))
    Z, _ = sa.scaled_dot_product_attention(Q, K, V)
    return Z.transpose(0, 2, 1, 3).reshape(B, T, d_model) @ W_O


def _with_torch_attention(X, W_Q, W_K, W_V, W_O, num_heads):
    """The same shortcut through PyTorch's torch.nn.functional.scaled_dot_product_attention."""
    import torch

    B, T, d_model = X.shape
    d_k = d_model // num_heads
    Q, K, V = (torch.tensor((X @ W).reshape(B, T, num_heads, d_k).transpose(0, 2, 1, 3))
               for W in (W_Q, W_K, W_V))
    Z = torch.nn.functional.scaled_dot_product_attention(Q, K, V).numpy()
    return Z.transpose(0, 2, 1, 3).reshape(B, T, d_model) @ W_O


@pytest.mark.parametrize("shortcut", [_with_sa_attention, _with_torch_attention])
def test_mha_a_finished_attention_does_not_pass(shortcut):
    """Exact to rounding: the check names the finished attention, and the hidden test refuses it too."""
    text = _message(check_multi_head_attention, shortcut)
    assert "finished scaled dot-product attention" in text, text
    assert "torch.nn.MultiheadAttention" not in text, text
    assert not [k for k, phrase in MHA.items() if phrase in text], text
    assert not hidden_test_passes("07_multi_head_attention", "l07-mha-test", multi_head_attention=shortcut)


@pytest.mark.parametrize("shortcut", [_torch_layer, _torch_functional])
def test_mha_pytorchs_own_layer_fails_the_hidden_test(shortcut):
    assert not hidden_test_passes("07_multi_head_attention", "l07-mha-test", multi_head_attention=shortcut)
