"""Lesson 07's checks name each typical mistake, and only that one, when a learner makes it.

Every answer below is wrong as a learner would write it; the check's message must name that mistake (a phrase
of its explanation) and no other named mistake; two different right answers must get ``Correct:``; a shortcut
that skips what the exercise teaches must not pass.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from mistakes import NOTEBOOKS, hidden_test_passes
from mistakes import message as _message
from mistakes import names_only as _names_only
from mistakes import right_answer_passes as _right_answer_passes

from selfattention.checks import check_head2_sharpen, check_mha_layer, check_mixing_W_O

# ---------------------------------------------------------------- exercise 1: the factor c on head 2's W_Q
# Head 2 of the worked example: the raw scores of "apple", q_apple . k_j (the lesson prints Q, K, weights).
SCORES = [0.3, 0.05, 1.5, 2.6]
RIGHT_C = 2.9786          # the smallest c with softmax(c * SCORES / sqrt(2))[phones] above 0.9


def test_the_lesson_prints_no_answer_of_exercise_1():
    """The answer is worked out from head 2's Q and K: no output but the check's own prints apple's raw
    scores in one line, and none prints the factor c."""
    lesson = json.loads((NOTEBOOKS / "07_multi_head_attention.ipynb").read_text())
    for cell in lesson["cells"]:
        if cell["cell_type"] != "code" or "check_head2_sharpen" in "".join(cell["source"]):
            continue
        for out in cell.get("outputs", []):
            text = "".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", ""))
            for line in text.splitlines():
                assert not all(f"{v:g}" in line for v in SCORES), line
                assert "2.979" not in line and "2.98" not in line, line


def _head2(c, scores=SCORES, predicted=True):
    return check_head2_sharpen(scores, c, predicted)


SCORE_MISTAKES = {
    "column of apple": "the column of \"apple\"",
    "already scaled": "already divided by sqrt(2)",
    "q . q": "queries against queries",
    "head 1": "head 1's scores",
    "reversed": "the scores are in reverse order",
    "weights": "weights after softmax",
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
    "weights": [0.11, 0.09, 0.25, 0.55],              # A2[2]: head 2's weights of "apple", not its scores
    "row of I": [0.06, 0.01, 0.3, 0.52],
    "row of love": [0.02, 0.0, 0.1, 0.24],
    "row of phones": [0.32, 0.12, 1.6, 1.44],
}


@pytest.mark.parametrize("key", sorted(SCORES_WRONG))
def test_head2_score_mistake_is_named(key):
    """The scores are graded first: a slip in step 1 is named there, whatever c is."""
    text = _message(lambda s: _head2(RIGHT_C, s), SCORES_WRONG[key])
    _names_only(text, key, SCORE_MISTAKES)
    assert not hidden_test_passes("07_multi_head_attention", "l07-head2-test",
                                  apple_scores_2=SCORES_WRONG[key], c_phones=RIGHT_C,
                                  more_than_estimate=True)


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
    _right_answer_passes(lambda c: check_head2_sharpen(near, c, np.bool_(True)), np.array([RIGHT_C]), capsys)


def test_head2_shortcuts_fail_the_check_and_the_hidden_test():
    """The slider's grid (3.0) and the dominant-term estimate (2.82) skip the derivation: both refused."""
    for c in (3.0, 2.82):
        assert "Correct" not in _message(_head2, c)
        assert not hidden_test_passes("07_multi_head_attention", "l07-head2-test",
                                      apple_scores_2=SCORES, c_phones=c, more_than_estimate=True)
    assert hidden_test_passes("07_multi_head_attention", "l07-head2-test", apple_scores_2=SCORES,
                              c_phones=2.98, more_than_estimate=True)


def test_head2_c_rounded_down_is_too_small():
    """2.97 lies within 0.01 of c = 2.979 but gives "phones" 0.8993: not above 0.9, so check and hidden test
    refuse it."""
    assert "not above 0.9" in _message(_head2, 2.97)
    assert not hidden_test_passes("07_multi_head_attention", "l07-head2-test", apple_scores_2=SCORES,
                                  c_phones=2.97, more_than_estimate=True)


def test_head2_a_wrong_prediction_is_explained_from_c():
    """The prediction is graded after c: False is refused with the learner's own c against the estimate, by
    the check and by the hidden test; a blank is told to answer."""
    text = _message(lambda p: _head2(2.98, predicted=p), False)
    assert "more_than_estimate is not" in text and "2.979 is above the two-term estimate 2.825" in text
    assert not hidden_test_passes("07_multi_head_attention", "l07-head2-test", apple_scores_2=SCORES,
                                  c_phones=2.98, more_than_estimate=False)
    assert "answer True or False" in _message(lambda p: _head2(2.98, predicted=p), None)
    assert "answer True or False" in _message(lambda p: _head2(2.98, predicted=p), "yes")


def test_head2_blank_is_told_to_answer():
    assert "None" in _message(lambda a: check_head2_sharpen(*a), (None, None))
    assert "c_phones" in _message(lambda a: check_head2_sharpen(*a), (SCORES, None))


# ---------------------------------------------------------------- exercise 2: the whole layer, batched
def _learner(slip=""):
    """mha_forward as a learner writes it, with one slip (named by ``slip``) or none."""

    def mha_forward(X, W_in, b_in, W_out, b_out, pad, h):
        B, T, d = X.shape
        d_k = d // h
        blocks = [W_in[i * d:(i + 1) * d] for i in range(3)]
        biases = [b_in[i * d:(i + 1) * d] for i in range(3)]
        if slip == "order KQV":
            blocks, biases = [blocks[1], blocks[0], blocks[2]], [biases[1], biases[0], biases[2]]
        if slip == "order VKQ":
            blocks, biases = blocks[::-1], biases[::-1]
        if slip == "x @ W":
            blocks = [W.T for W in blocks]
        if slip in ("no in bias", "no biases"):
            biases = [0.0, 0.0, 0.0]
        if slip == "bias on queries only":
            biases = [biases[0], 0.0, 0.0]
        Q, K, V = (X @ W.T + b for W, b in zip(blocks, biases, strict=True))
        if slip == "reshape without transpose":
            Q, K, V = (Y.reshape(B, h, T, d_k) for Y in (Q, K, V))
        else:
            Q, K, V = (Y.reshape(B, T, h, d_k).transpose(0, 2, 1, 3) for Y in (Q, K, V))
        S = Q @ K.transpose(0, 1, 3, 2)
        if slip != "no sqrt(d_k)":
            S = S / (d_k if slip == "divided by d_k" else np.sqrt(d_k))
        if slip == "mask not broadcast over heads":
            S = np.where(pad[:, None, :], -np.inf, S)
        elif slip == "mask on queries":
            S = np.where(pad[:, None, :, None], -1e9, S)
        elif slip != "no mask":
            S = np.where(pad[:, None, None, :], -np.inf, S)
        axis = -2 if slip == "softmax over queries" else -1
        with np.errstate(invalid="ignore"):                              # a column of -inf: weights 0
            A = np.exp(S - S.max(axis=axis, keepdims=True))
            Z = np.nan_to_num(A / A.sum(axis=axis, keepdims=True)) @ V
        if slip != "merge without transpose":
            Z = Z.transpose(0, 2, 1, 3)
        Z = Z.reshape(B, T, d)
        if slip == "W_O missing":
            return Z
        out = Z @ (W_out if slip == "W_O transposed" else W_out.T)
        out = out if slip in ("no out bias", "no biases") else out + b_out
        return (out, A) if slip == "returns the weights too" else out

    return mha_forward


LAYER = {
    "order KQV": "read in the order KQV",
    "order VKQ": "read in the order VKQ",
    "x @ W": "multiply by the stored block itself (X @ W)",
    "reshape without transpose": "split by a reshape straight to (B, h, T, d_k)",
    "merge without transpose": "merged by a reshape of (B, h, T, d_k) straight",
    "no sqrt(d_k)": "not divided by sqrt(d_k)",
    "divided by d_k": "divided by d_k instead of sqrt(d_k)",
    "no mask": "the padding mask is not applied",
    "mask not broadcast over heads": "the mask needs the shape (B, 1, 1, T)",
    "mask on queries": "applied to the queries (the rows of the scores) instead of the keys",
    "W_O transposed": "W_O is applied as stored, Z @ W_out",
    "W_O missing": "W_O is missing",
    "no in bias": "the in_proj bias is left out",
    "no out bias": "the out_proj bias is left out",
    "no biases": "both biases are left out",
    "bias on queries only": "the in_proj bias is added to the queries only",
    "softmax over queries": "the softmax runs down the columns",
    "returns the weights too": "returned a tuple of 2",
}


def _layer_hidden(fn):
    return hidden_test_passes("07_multi_head_attention", "l07-split-test", mha_forward=fn)


@pytest.mark.parametrize("key", sorted(LAYER))
def test_layer_mistake_is_named(key):
    _names_only(_message(check_mha_layer, _learner(key)), key, LAYER)
    try:
        assert not _layer_hidden(_learner(key))
    except ValueError:               # a mask that cannot broadcast raises in the hidden test too
        assert key == "mask not broadcast over heads"


def test_layer_right_answers_pass(capsys):
    import torch

    def torch_layer(X, W_in, b_in, W_out, b_out, pad, h):   # PyTorch tensors, chunk and masked_fill
        X, W_in, b_in, W_out, b_out, pad = map(torch.as_tensor, (X, W_in, b_in, W_out, b_out, pad))
        B, T, d = X.shape
        q, k, v = (X @ W_in.T + b_in).chunk(3, dim=-1)
        q, k, v = (y.view(B, T, h, -1).transpose(1, 2) for y in (q, k, v))
        s = (q @ k.transpose(-2, -1) / (d // h) ** 0.5).masked_fill(pad[:, None, None, :], float("-inf"))
        return (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, d) @ W_out.T + b_out

    for answer in (_learner(), torch_layer):
        _right_answer_passes(check_mha_layer, answer, capsys)
        assert _layer_hidden(answer)


def test_layer_ready_made_fails_the_check_and_the_hidden_test():
    import torch

    from selfattention.checks.lesson07 import ReadyMadeCalled

    def ready_made(X, W_in, b_in, W_out, b_out, pad, h):
        mha = torch.nn.MultiheadAttention(X.shape[-1], h, batch_first=True, dtype=torch.float64)
        x = torch.as_tensor(X)
        return mha(x, x, x, key_padding_mask=torch.as_tensor(pad))[0]

    def functional(X, W_in, b_in, W_out, b_out, pad, h):
        x = torch.as_tensor(X).transpose(0, 1)
        out = torch.nn.functional.multi_head_attention_forward(
            x, x, x, X.shape[-1], h, torch.as_tensor(W_in), torch.as_tensor(b_in), None, None, False, 0.0,
            torch.as_tensor(W_out), torch.as_tensor(b_out), key_padding_mask=torch.as_tensor(pad))[0]
        return out.transpose(0, 1)

    for shortcut in (ready_made, functional):
        assert "called a ready-made attention" in _message(check_mha_layer, shortcut)
        with pytest.raises(ReadyMadeCalled):
            _layer_hidden(shortcut)


def _per_head(X, W_in, b_in, W_out, b_out, pad, h):
    """Right outputs, head by head, after np.asarray (which a check that wraps the arrays could not see)."""
    X, W_in, b_in, W_out, b_out = map(np.asarray, (X, W_in, b_in, W_out, b_out))
    d = X.shape[-1]
    d_k = d // h
    Q, K, V = (X @ W_in[i * d:(i + 1) * d].T + b_in[i * d:(i + 1) * d] for i in range(3))
    heads = []
    for i in range(h):
        cols = slice(i * d_k, (i + 1) * d_k)
        S = Q[..., cols] @ np.swapaxes(K[..., cols], 1, 2) / np.sqrt(d_k)
        S = np.where(pad[:, None, :], -np.inf, S)
        A = np.exp(S - S.max(axis=-1, keepdims=True))
        heads.append(A / A.sum(axis=-1, keepdims=True) @ V[..., cols])
    return np.concatenate(heads, axis=-1) @ W_out.T + b_out


def _einsum_per_head(X, W_in, b_in, W_out, b_out, pad, h):
    d = X.shape[-1]
    d_k = d // h
    Q, K, V = (np.einsum("btd,ed->bte", X, W_in[i * d:(i + 1) * d]) + b_in[i * d:(i + 1) * d]
               for i in range(3))

    def one(i):
        c = slice(i * d_k, (i + 1) * d_k)
        S = np.where(pad[:, None, :], -np.inf, np.einsum("bqe,bke->bqk", Q[..., c], K[..., c]) / np.sqrt(d_k))
        A = np.exp(S - S.max(axis=-1, keepdims=True))
        return np.einsum("bqk,bke->bqe", A / A.sum(axis=-1, keepdims=True), V[..., c])

    return np.einsum("btd,ed->bte", np.concatenate([one(i) for i in range(h)], -1), W_out) + b_out


def _torch_per_head(X, W_in, b_in, W_out, b_out, pad, h):
    import torch

    X, W_in, b_in, W_out, b_out, pad = map(torch.as_tensor, (X, W_in, b_in, W_out, b_out, pad))
    d_k = X.shape[-1] // h
    q, k, v = (X @ W_in.T + b_in).chunk(3, dim=-1)
    heads = [torch.softmax((q[..., c] @ k[..., c].transpose(1, 2) / d_k ** 0.5)
                           .masked_fill(pad[:, None, :], float("-inf")), -1) @ v[..., c]
             for c in (slice(i * d_k, (i + 1) * d_k) for i in range(h))]
    return torch.cat(heads, -1) @ W_out.T + b_out


def _comprehensions_per_head(X, W_in, b_in, W_out, b_out, pad, h):
    """Head by head in one-line comprehensions of NumPy calls only (np.split, @, np.where, np.exp)."""
    d = X.shape[-1]
    k = d // h
    Q, K, V = np.split(X @ W_in.T + b_in, 3, axis=-1)
    cols = [slice(i * k, (i + 1) * k) for i in range(h)]
    S = [np.where(pad[:, None, :], -np.inf, Q[..., c] @ K[..., c].swapaxes(1, 2) / k ** 0.5) for c in cols]
    E = [np.exp(s - s.max(-1, keepdims=True)) for s in S]
    Z = np.concatenate([e / e.sum(-1, keepdims=True) @ V[..., c] for c, e in zip(cols, E, strict=True)], -1)
    return Z @ W_out.T + b_out


@pytest.mark.parametrize("loop", [_per_head, _einsum_per_head, _torch_per_head, _comprehensions_per_head])
def test_layer_a_loop_over_heads_fails_the_check_and_the_hidden_test(loop):
    """Right outputs, head by head (numpy after np.asarray, einsum, torch): more lines of Python run with
    more heads, named with the counts; the hidden test counts the same way."""
    text = _message(check_mha_layer, loop)
    assert "it loops over heads" in text and "lines of Python with h = 1" in text
    assert not _layer_hidden(loop)


def test_layer_column_blocks_of_W_in_are_told_the_blocks_are_rows():
    def columns(X, W_in, b_in, W_out, b_out, pad, h):          # W_in cut by columns, as stored or transposed
        d = X.shape[-1]
        return [X @ W_in[:, i * d:(i + 1) * d] + b_in[i * d:(i + 1) * d] for i in range(3)][0]

    def columns_t(X, W_in, b_in, W_out, b_out, pad, h):
        d = X.shape[-1]
        return [X @ W_in[:, i * d:(i + 1) * d].T + b_in[i * d:(i + 1) * d] for i in range(3)][0]

    for answer in (columns, columns_t):
        text = _message(check_mha_layer, answer)
        assert "they are its rows, not its columns" in text
        assert "W_in is (3 d_model, d_model) = (36, 12)" in text
        assert "mask" not in text
        with pytest.raises(ValueError):
            _layer_hidden(answer)


def test_layer_mask_after_the_softmax_is_told_to_go_before():
    import selfattention as sa

    def after(X, W_in, b_in, W_out, b_out, pad, h):
        B, T, d = X.shape
        Q, K, V = (X @ W_in[i * d:(i + 1) * d].T + b_in[i * d:(i + 1) * d] for i in range(3))
        Q, K, V = (Y.reshape(B, T, h, d // h).transpose(0, 2, 1, 3) for Y in (Q, K, V))
        A = np.where(pad[:, None, None, :], 0, sa.softmax(Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d // h)))
        return (A @ V).transpose(0, 2, 1, 3).reshape(B, T, d) @ W_out.T + b_out

    text = _message(check_mha_layer, after)
    assert "set to 0 after the softmax" in text and "-inf into the scores of the padding keys before" in text
    assert "recheck the mask" not in text
    assert not _layer_hidden(after)


def test_layer_blank_and_in_place_are_told():
    assert "not a function yet" in _message(check_mha_layer, None)

    def stub(*args):
        raise NotImplementedError

    assert "still raises NotImplementedError" in _message(check_mha_layer, stub)

    def in_place(X, W_in, b_in, W_out, b_out, pad, h):
        X -= X.mean()
        return _learner()(X, W_in, b_in, W_out, b_out, pad, h)

    assert "changed one of its inputs in place" in _message(check_mha_layer, in_place)


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
    "transposed": "Its transpose would be right",
    "identity": "change with head 2's fruit feature",
    "fruit and tech": "change with head 2's fruit feature",
    "fruit, not tech": "read head 2's fruit feature",
    "transposed, tech into output 2": "Its transpose would be right",
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
    assert not hidden_test_passes("07_multi_head_attention", "l07-mix-test", W_O_mix=MIX_WRONG[key],
                                  can_recover_fruit=False)


def test_mixing_a_transposed_design_leads_with_what_it_does():
    """A right design written (out, in): the message opens with what the matrix does as written (row 2 leaks
    fruit), then says that its transpose would be right."""
    text = _message(check_mixing_W_O, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]])
    assert text.startswith("W_O_mix is not right yet: output features 2-3 read head 2's fruit feature")
    assert text.index("row 2 of W_O") < text.index("Its transpose would be right")
    assert "rows of W_O are the inputs" in text
    assert "row 2 of W_O" in _message(check_mixing_W_O, _route(r2c3=1.0))


def test_mixing_a_near_zero_fruit_row_gets_a_rank_that_agrees(capsys):
    """A fruit entry of 1e-9 counts as 0 for the check, and for the rank it reports."""
    W = np.diag([1.0, 1.0, 1e-9, 1.0])
    check_mixing_W_O(W, False)
    assert "rank 3" in capsys.readouterr().out


def test_mixing_a_leak_that_is_no_transpose_never_says_transpose():
    text = _message(check_mixing_W_O, _route(r2c2=1.0))     # fruit and tech both into output 2
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


def _masked_by(mask_step):
    """mha_forward, right but for the mask step ``mask_step(scores, pad) -> weights``."""
    import selfattention as sa

    def mha_forward(X, W_in, b_in, W_out, b_out, pad, h):
        B, T, d = X.shape
        Q, K, V = (X @ W_in[i * d:(i + 1) * d].T + b_in[i * d:(i + 1) * d] for i in range(3))
        Q, K, V = (Y.reshape(B, T, h, d // h).transpose(0, 2, 1, 3) for Y in (Q, K, V))
        with np.errstate(invalid="ignore"):
            A = mask_step(Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d // h), pad, sa.softmax)
        return (A @ V).transpose(0, 2, 1, 3).reshape(B, T, d) @ W_out.T + b_out

    return mha_forward


MASK_STEPS = {   # mask step as a learner writes it -> the phrase its message must hold
    "scores set to 0": (lambda s, pad, sm: sm(np.where(pad[:, None, None, :], 0, s)),
                        "scores were set to 0, not -inf"),
    "pad * -inf": (lambda s, pad, sm: sm(s + pad[:, None, None, :] * -np.inf), "0 * inf is NaN"),
    "weights times ~pad": (lambda s, pad, sm: sm(s) * ~pad[:, None, None, :], "set to 0 after the softmax"),
    "weights zeroed on query rows": (lambda s, pad, sm: np.where(pad[:, None, :, None], 0, sm(s)),
                                     "applied to the queries (the rows of the scores)"),
}


@pytest.mark.parametrize("key", sorted(MASK_STEPS))
def test_layer_mask_step_mistake_is_named(key):
    step, phrase = MASK_STEPS[key]
    text = _message(check_mha_layer, _masked_by(step))
    assert phrase in text and "recheck the mask" not in text
    assert not _layer_hidden(_masked_by(step))


def test_layer_mask_after_the_softmax_renormalised_passes(capsys):
    """Zeroing the padding's weights and dividing each row by its new sum is the same attention."""
    def renormalised(s, pad, sm):
        A = np.where(pad[:, None, None, :], 0, sm(s))
        return A / A.sum(axis=-1, keepdims=True)

    _right_answer_passes(check_mha_layer, _masked_by(renormalised), capsys)
    assert _layer_hidden(_masked_by(renormalised))
