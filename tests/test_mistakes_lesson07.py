"""Lesson 07's checks name each typical mistake, and only that one, when a learner makes it.

Every answer below is wrong as a learner would write it; the check's message must name that mistake (a phrase
of its explanation) and no other named mistake; two different right answers must get ``Correct:``; a shortcut
that skips what the exercise teaches must not pass.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from mistakes import NOTEBOOKS, hidden_test_passes, starter_names
from mistakes import message as _message
from mistakes import names_only as _names_only
from mistakes import right_answer_passes as _right_answer_passes

from selfattention.checks import check_apple_output, check_mha_layer, check_mixing_W_O

# ---------------------------------------------------------------- exercise 1: "apple" through the layer
# The worked example's two heads: z_apple^(1) = [0.924, 1.333] (printed), z_apple^(2) = [0.503, 0.796], and
# [z^(1) | z^(2)] @ W_O_ex for the exercise's W_O_ex.
Z1 = [0.924, 1.333]
Z2 = [0.503, 0.796]
COLS = (2, 3)
OUT = [1.720, 0.503, 1.333, -0.293]
W_O_EX = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 1], [1, 0, 0, -1]], dtype=float)


def test_the_notebook_uses_the_checks_W_O_ex():
    """The W_O_ex the exercise cell gives is the one the check grades against."""
    from selfattention.checks.lesson07 import W_O_EX as checked

    scope = starter_names("l07-apple-answer")
    assert scope["out_apple"] is None
    assert np.array_equal(scope["W_O_ex"], checked) and np.array_equal(checked, W_O_EX)


def test_the_lesson_prints_no_answer_of_exercise_1_before_it():
    """Head 2's outputs are first printed in the concatenation, after the exercise; out_apple nowhere but
    in the check's own message."""
    lesson = json.loads((NOTEBOOKS / "07_multi_head_attention.ipynb").read_text())
    seen_exercise = False
    for cell in lesson["cells"]:
        source = "".join(cell["source"])
        seen_exercise = seen_exercise or "check_apple_output" in source
        if cell["cell_type"] != "code" or "check_apple_output" in source:
            continue
        for out in cell.get("outputs", []):
            text = "".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", ""))
            for line in text.splitlines():
                assert not ("1.72" in line and "-0.29" in line), line
                assert seen_exercise or not ("0.503" in line and "0.796" in line), line


def _apple(z2=Z2, cols=COLS, out=OUT, tech=True):
    return check_apple_output(z2, cols, out, tech)


def _hidden(z2=Z2, cols=COLS, out=OUT, tech=True):
    return hidden_test_passes("07_multi_head_attention", "l07-apple-test", z2_apple=z2, head2_columns=cols,
                              out_apple=out, leans_to_tech=tech)


Z2_MISTAKES = {
    "head 1": "head 1's output",
    "unscaled": "not divided by sqrt(d_k)",
    "wrong axis": "softmax ran down a column",
    "column of apple": "the column of \"apple\"",
    "reversed": "reverse order",
    "rounding": "rounded to 1 decimal",
    "queries": "averages the queries Q2",
    "by d_k": "divided by d_k = 2",
    "plain mean": "plain mean of head 2's values",
    "phones": "output row of \"phones\"",
    "love": "row of weights of \"love\"",
    "values of head 1": "applied to head 1's values V1",
}
Z2_WRONG = {  # z_apple^(2) as a learner would type it
    "head 1": Z1,
    "unscaled": [0.503, 0.911],        # softmax(Omega2)[apple] @ V2
    "wrong axis": [0.643, 0.847],      # softmax(Omega2 / sqrt(2), axis=0)[apple] @ V2
    "column of apple": [0.481, 0.605],  # A2[:, apple] @ V2
    "reversed": [0.796, 0.503],        # also: the weights times K2, whose columns are V2's swapped
    "rounding": [0.53, 0.76],          # [0.1, 0.1, 0.3, 0.5] @ V2
    "queries": [1.006, 0.796],         # A2[apple] @ Q2
    "by d_k": [0.492, 0.700],          # softmax(Omega2 / 2)[apple] @ V2
    "plain mean": [0.425, 0.45],       # V2.mean(axis=0)
    "phones": [0.556, 0.609],          # Z2[3], the row of "phones"
    "love": [0.433, 0.482],            # A2[love] @ V2
    "values of head 1": [0.717, 1.558],  # A2[apple] @ V1
}


@pytest.mark.parametrize("key", sorted(Z2_WRONG))
def test_apple_z2_mistake_is_named(key):
    _names_only(_message(lambda z: _apple(z2=z), Z2_WRONG[key]), key, Z2_MISTAKES)
    assert not _hidden(z2=Z2_WRONG[key])


OUT_MISTAKES = {
    "heads swapped": "the heads are swapped",
    "W_O transposed": "concat @ W_O^T",
    "head 1 only": "head 1's part alone",
    "head 2 only": "head 2's part alone",
    "diagonal blocks": "diagonal 2 x 2 block",
    "no W_O": "the concatenation, before W_O",
    "unscaled": "not divided by sqrt(d_k)",
    "wrong axis": "softmax ran down a column",
    "rounding": "rounded to 1 decimal",
    "diagonal": "entry by entry with W_O's diagonal",
    "by d_k": "divided by d_k = 2",
    "phones": "\"phones\"'s output row",
    "z1 of I": "the row of \"I\"",
    "deck's head 1": "the slide deck's numbers",
    "deck's concatenation": "the slide deck's \"Final Multi-Head Output\"",
    "z1 of love": "the row of \"love\"",
    "z1 of phones": "the row of \"phones\" (token 3)",
    "no fruit": "fruit feature (concatenated feature 2) was dropped",
}
_C = np.array(Z1 + Z2)
OUT_WRONG = {  # out_apple as a learner would type it, z2_apple right
    "heads swapped": np.array(Z2 + Z1) @ W_O_EX,
    "W_O transposed": _C @ W_O_EX.T,                       # W_O read as PyTorch's (out, in)
    "head 1 only": np.array(Z1) @ W_O_EX[:2],              # W_O per head, not summed
    "head 2 only": np.array(Z2) @ W_O_EX[2:],
    "diagonal blocks": np.concatenate([np.array(Z1) @ W_O_EX[:2, :2], np.array(Z2) @ W_O_EX[2:, 2:]]),
    "no W_O": _C,                                          # the concatenation (the deck's "final output")
    "unscaled": [1.834, 0.503, 1.326, -0.407],             # both heads from softmax(Omega), no sqrt(2)
    "wrong axis": [1.729, 0.643, 1.301, -0.204],           # both heads' softmax over axis 0
    "rounding": [1.7, 0.5, 1.3, -0.3],                     # [0.9, 1.3, 0.5, 0.8] @ W_O_ex
    "diagonal": _C * np.diag(W_O_EX),                      # elementwise, not a matrix product
    "by d_k": [1.624, 0.492, 1.338, -0.208],               # both heads' scores / 2
    "phones": [1.532, 0.556, 1.333, -0.052],               # head 2's row of "phones", Z2[3]
    "z1 of I": [1.713, 0.503, 1.331, -0.293],              # head 1's row of "I", [0.917, 1.331]
    "deck's head 1": [1.920, 0.503, 1.035, -0.293],        # the deck's z^(1)_apple, [1.124, 1.035]
    "no fruit": [1.720, 0.0, 1.333, -0.796],               # head 2's fruit feature left out
    "deck's concatenation": [2.144, 1.02, 1.035, 0.0],     # the deck's [1.124, 1.035, 1.02, 1.02] @ W_O_ex
    "z1 of love": [1.738, 0.503, 1.336, -0.293],           # head 1's row of "love", [0.942, 1.336]
    "z1 of phones": [1.759, 0.503, 1.351, -0.293],         # head 1's row of "phones", [0.963, 1.351]
}


@pytest.mark.parametrize("key", sorted(OUT_WRONG))
def test_apple_out_mistake_is_named(key):
    _names_only(_message(lambda o: _apple(out=o), OUT_WRONG[key]), key, OUT_MISTAKES)
    assert not _hidden(out=OUT_WRONG[key])


@pytest.mark.parametrize(("cols", "phrase"), [((0, 1), "head 1 first"), ((3, 4), "features count from 0"),
                                              ((1, 2), "off by one"), ((2, 4), "a slice 2:4 ends before 4"),
                                              ((1, 3), "give the two feature indices")])
def test_apple_columns_mistake_is_named(cols, phrase):
    assert phrase in _message(lambda c: _apple(cols=c), cols)
    assert not _hidden(cols=cols)


def test_apple_an_arithmetic_slip_names_the_entry():
    text = _message(lambda o: _apple(out=o), [1.72, 0.503, 1.433, -0.293])
    assert "entry 2 is 1.433" in text and not any(p in text for p in OUT_MISTAKES.values())
    assert "decimals" not in text


def test_apple_right_answers_pass(capsys):
    """From the printed 3-decimal weights, to 2 decimals, or exact (list, tuple or array)."""
    _right_answer_passes(lambda a: _apple(*a), (Z2, COLS, OUT, True), capsys)
    z2 = np.array([0.11, 0.09, 0.25, 0.55]) @ np.array([[0.2, 0.1], [0.1, 0.0], [1.0, 0.5], [0.4, 1.2]])
    out = np.concatenate([[0.92, 1.33], z2]) @ W_O_EX
    _right_answer_passes(lambda a: _apple(*a), (z2, np.array([2, 3]), out, np.bool_(True)), capsys)
    assert _hidden() and _hidden(z2=z2, cols=[2, 3], out=out, tech=np.bool_(True))


def test_apple_a_wrong_prediction_passes_and_is_explained_after_the_numbers(capsys):
    """An honest wrong prediction is not graded: the check passes and says, after the numbers, why."""
    _apple(tech=False)
    text = capsys.readouterr().out
    assert text.startswith("Correct:") and "you predicted False (not graded)" in text and "0.549" in text
    assert text.index("you predicted False") > text.index("[0.503, 0.796]")
    assert _hidden(tech=False)
    _apple(tech=True)
    assert "your prediction, True, matched" in capsys.readouterr().out
    assert "set it to True or False" in _message(lambda t: _apple(tech=t), "yes")
    assert not _hidden(tech="yes")


def test_apple_no_prediction_passes_and_says_so(capsys):
    """The prediction has its own cell, None until the learner types it; it is never graded."""
    _apple(tech=None)
    text = capsys.readouterr().out
    assert text.startswith("Correct:") and "no prediction to compare" in text
    assert "outputs 0 and 3" in text and "-0.293 < 0" in text
    assert _hidden(tech=None)


def test_apple_a_rounded_z2_carried_into_out_apple_passes():
    """z2_apple = [0.50, 0.80] (2 decimals) is accepted; carried into out_apple it gives entry 3 =
    0.50 - 0.80 = -0.30, 0.007 from the exact -0.293: the check and the hidden test judge out_apple against
    the row that carries the learner's own z2_apple, so both accept it, and a named slip on top of the
    rounded z2_apple is still named."""
    z2 = [0.50, 0.80]
    out = np.concatenate([Z1, z2]) @ W_O_EX              # [1.724, 0.5, 1.333, -0.3]
    assert abs(out[3] - OUT[3]) > 0.005
    _apple(z2=z2, out=out)
    assert _hidden(z2=z2, out=out)
    slips = {"z1 of I": [0.917, 1.331], "z1 of love": [0.942, 1.336], "deck's head 1": [1.124, 1.035]}
    for key, z1 in slips.items():
        wrong = np.concatenate([z1, z2]) @ W_O_EX
        _names_only(_message(lambda o: _apple(z2=z2, out=o), wrong), key, OUT_MISTAKES)
        assert not _hidden(z2=z2, out=wrong)
    fruitless = np.concatenate([Z1, [0.0, 0.80]]) @ W_O_EX
    _names_only(_message(lambda o: _apple(z2=z2, out=o), fruitless), "no fruit", OUT_MISTAKES)


def test_apple_blank_is_told():
    assert "None" in _message(lambda a: check_apple_output(*a), (None, None, None))
    assert "out_apple" in _message(lambda a: check_apple_output(*a), (Z2, COLS, None))
    assert "should hold 4 numbers" in _message(lambda o: _apple(out=o), Z2)


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
        if slip in ("reshape without transpose", "split and merge without transpose"):
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
        if slip not in ("merge without transpose", "split and merge without transpose"):
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
    "split and merge without transpose": "no transpose either way",
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

    for shortcut in (ready_made, functional):        # named in the code: refused before it runs
        assert "mha_forward uses torch's" in _message(check_mha_layer, shortcut)
        assert not _layer_hidden(shortcut)

    def built_name(X, W_in, b_in, W_out, b_out, pad, h):   # a name the code never spells: blocked as it runs
        import importlib
        layer = getattr(importlib.import_module("torch.nn"), "Multihead" + "Attention")
        x = torch.as_tensor(X)
        return layer(X.shape[-1], h, batch_first=True, dtype=torch.float64)(x, x, x)[0]

    assert "called a ready-made attention" in _message(check_mha_layer, built_name)
    with pytest.raises(ReadyMadeCalled):
        _layer_hidden(built_name)


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


def _split_heads(Y, num_heads, how):
    """(B, T, d_model) -> (B, num_heads, T, d_k) with no loop of the learner's: NumPy's split functions (whose
    own Python runs once per piece) and a stack."""
    if how == "split":
        return np.stack(np.split(Y, num_heads, axis=-1), axis=1)
    if how == "array_split":
        return np.stack(np.array_split(Y, num_heads, axis=-1), axis=1)
    return np.stack(np.hsplit(Y.transpose(0, 2, 1), num_heads), axis=1).transpose(0, 1, 3, 2)


def _vectorised(how):
    def mha_forward(X, W_in, b_in, W_out, b_out, pad, num_heads):
        B, T, d_model = X.shape
        Q, K, V = (_split_heads(Y, num_heads, how) for Y in np.split(X @ W_in.T + b_in, 3, axis=-1))
        scores = Q @ K.swapaxes(-1, -2) / np.sqrt(d_model // num_heads)
        scores = np.where(pad[:, None, None, :], -np.inf, scores)
        E = np.exp(scores - scores.max(axis=-1, keepdims=True))
        Z = np.concatenate(np.split(E / E.sum(axis=-1, keepdims=True) @ V, num_heads, axis=1), axis=-1)[:, 0]
        return Z @ W_out.T + b_out

    return mha_forward


@pytest.mark.parametrize("how", ["split", "array_split", "hsplit"])
def test_layer_a_split_by_numpy_is_no_loop_over_heads(how, capsys):
    """np.split, np.array_split and np.stack run NumPy's own Python once per piece; the learner's code has no
    loop, so the check and the hidden test count only the learner's lines and pass it."""
    check_mha_layer(_vectorised(how))
    assert "Correct" in capsys.readouterr().out
    assert _layer_hidden(_vectorised(how))


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
    assert not hidden_test_passes("07_multi_head_attention", "l07-mix-test", W_O_mix=MIX_WRONG[key])


def test_mixing_a_transposed_design_leads_with_what_it_does():
    """A right design written (out, in): the message opens with what the matrix does as written (row 2 leaks
    fruit), then says that its transpose would be right."""
    text = _message(check_mixing_W_O, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]])
    assert text.startswith("W_O_mix is not right yet: output features 2-3 read head 2's fruit feature")
    assert text.index("row 2 of W_O") < text.index("Its transpose would be right")
    assert "rows of W_O are the inputs" in text
    assert "row 2 of W_O" in _message(check_mixing_W_O, _route(r2c3=1.0))


def test_mixing_a_near_zero_fruit_row_counts_as_zero(capsys):
    """A fruit entry of 1e-9 counts as 0 for the check, and the reason it gives is the zero row."""
    W = np.diag([1.0, 1.0, 1e-9, 1.0])
    check_mixing_W_O(W)
    assert "row 2, head 2's fruit, writes nothing" in capsys.readouterr().out


def test_mixing_messages_say_nothing_of_reading_fruit_back():
    """What a W_O does to the outputs is the point; whether fruit could be read back (a rank fact) is not
    said, whatever row 2 holds."""
    for W in (np.eye(4), _route(r2c3=1.0), _route(r2c2=1.0, r3c3=0.0), _route(r2c3=1.0, r3c2=1.0)):
        text = _message(check_mixing_W_O, W)
        assert "read back" not in text and "recoverable" not in text and "rank" not in text


def test_mixing_says_its_transpose_would_be_right_only_when_it_is():
    """The transpose remark comes only when the transposed matrix passes the check."""
    import contextlib
    import io

    from selfattention.checks import ExerciseError

    for W in list(MIX_WRONG.values()) + [_route(r2c2=1.0), _route(r2c3=1.0, r3c2=1.0)]:
        W = np.asarray(W, dtype=float)
        text = _message(check_mixing_W_O, W)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                check_mixing_W_O(W.T)
            transpose_right = True
        except ExerciseError:
            transpose_right = False
        assert ("Its transpose would be right" in text) == transpose_right, text


def test_mixing_a_leak_that_is_no_transpose_never_says_transpose():
    text = _message(check_mixing_W_O, _route(r2c2=1.0))     # fruit and tech both into output 2
    assert "row 2 of W_O" in text and "transpose" not in text


def test_mixing_a_design_in_out_in_order_gets_the_row_reminder():
    """Every message that names a wrong row says what a row and a column of W_O are."""
    for key in ("transposed", "transposed, tech into output 2", "fruit, not tech"):
        text = _message(check_mixing_W_O, MIX_WRONG[key])
        assert ("Row r of W_O is what concatenated feature r writes" in text
                or "the rows of W_O are the inputs" in text)     # a transposed design: said once, plainly


def test_mixing_right_answers_pass(capsys):
    _right_answer_passes(check_mixing_W_O, ROUTE, capsys)
    both = _route(r3c2=-2.0, r3c3=0.5)            # tech written into both outputs 2 and 3
    _right_answer_passes(check_mixing_W_O, both.tolist(), capsys)


def test_mixing_a_full_rank_shortcut_does_not_pass():
    """Keeping everything (W_O = I) is the shortcut: it passes head 2's fruit feature through too."""
    assert "Correct" not in _message(check_mixing_W_O, np.eye(4))


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
