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

from selfattention.checks import check_head2_sharpen, check_mixing_W_O, check_split_merge

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


def _head2(c, scores=SCORES):
    return check_head2_sharpen(scores, c)


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
                                  apple_scores_2=SCORES_WRONG[key], c_phones=RIGHT_C)


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


def test_head2_c_rounded_down_is_too_small():
    """2.97 lies within 0.01 of c = 2.979 but gives "phones" 0.8993: not above 0.9, so check and hidden test
    refuse it."""
    assert "not above 0.9" in _message(_head2, 2.97)
    assert not hidden_test_passes("07_multi_head_attention", "l07-head2-test", apple_scores_2=SCORES,
                                  c_phones=2.97)


def test_head2_blank_is_told_to_answer():
    assert "None" in _message(lambda a: check_head2_sharpen(*a), (None, None))
    assert "c_phones" in _message(lambda a: check_head2_sharpen(*a), (SCORES, None))


# ---------------------------------------------------------------- exercise 2: split and merge heads
def _split(Y, h):
    B, T, d_model = Y.shape
    return Y.reshape(B, T, h, d_model // h).transpose(0, 2, 1, 3)


def _merge(Z):
    B, h, T, d_k = Z.shape
    return Z.transpose(0, 2, 1, 3).reshape(B, T, h * d_k)


SPLIT = {
    "no transpose": "reshaped straight to (B, h, T, d_k), without the transpose",
    "interleaved": "head i got every h-th column",
    "reversed heads": "the heads are in reverse order",
    "reshape only": "not the transpose that makes the head axis 1",
    "head first": "the batch axis must stay axis 0",
    "d_k and h swapped": "the reshape was (B, T, d_k, h)",
    "3-D transpose": "transpose takes 4",
    "typed sizes": "rather than typing numbers",
    "in place": "changed its input Y in place",
    "merge no transpose": "without transposing back",
    "merge interleaved": "interleaves the heads' features",
    "merge no reshape": "not the reshape that joins",
    "merge not inverse": "it is not the inverse of split_heads",
}


def _in_place(Y, h):
    Y *= 1.0
    Y[0, 0, 0] += 1.0
    return _split(Y, h)


SPLIT_WRONG = {
    "no transpose": (lambda Y, h: Y.reshape(Y.shape[0], h, Y.shape[1], -1), _merge),
    "interleaved": (lambda Y, h: Y.reshape(*Y.shape[:2], -1, h).transpose(0, 3, 1, 2), _merge),
    "reversed heads": (lambda Y, h: _split(Y, h)[:, ::-1], _merge),
    "reshape only": (lambda Y, h: Y.reshape(*Y.shape[:2], h, -1), _merge),
    "head first": (lambda Y, h: Y.reshape(*Y.shape[:2], h, -1).transpose(2, 0, 1, 3), _merge),
    "d_k and h swapped": (lambda Y, h: Y.reshape(*Y.shape[:2], -1, h).transpose(0, 2, 1, 3), _merge),
    "3-D transpose": (lambda Y, h: Y.reshape(*Y.shape[:2], h, -1).transpose(1, 0, 2), _merge),   # as in 3-D
    "typed sizes": (lambda Y, h: Y.reshape(2, 3, 4, 5).transpose(0, 2, 1, 3), _merge),
    "in place": (_in_place, _merge),
    "merge no transpose": (_split, lambda Z: Z.reshape(Z.shape[0], Z.shape[2], -1)),
    "merge interleaved": (_split, lambda Z: Z.transpose(0, 2, 3, 1).reshape(Z.shape[0], Z.shape[2], -1)),
    "merge no reshape": (_split, lambda Z: Z.transpose(0, 2, 1, 3)),
    "merge not inverse": (_split, lambda Z: Z.transpose(0, 2, 1, 3).reshape(Z.shape[0], Z.shape[2], -1) * 2),
}


def _split_hidden(split_heads, merge_heads):
    return hidden_test_passes("07_multi_head_attention", "l07-split-test", split_heads=split_heads,
                              merge_heads=merge_heads)


@pytest.mark.parametrize("key", sorted(SPLIT))
def test_split_mistake_is_named(key):
    _names_only(_message(lambda a: check_split_merge(*a), SPLIT_WRONG[key]), key, SPLIT)
    if key != "in place":           # changing Y in place is refused by the check; the split itself is right
        try:
            assert not _split_hidden(*SPLIT_WRONG[key])
        except ValueError:          # the 3-D transpose and typed sizes raise in the hidden test too
            pass


def test_split_right_answers_pass(capsys):
    import torch

    def split_torch(Y, h):             # PyTorch: view and transpose, returned as a tensor
        t = torch.as_tensor(Y)
        return t.view(t.shape[0], t.shape[1], h, -1).transpose(1, 2)

    def merge_loop(Z):                  # the heads' blocks side by side, token by token
        return np.concatenate([Z[:, i] for i in range(Z.shape[1])], axis=-1)

    for answer in ((_split, _merge), (split_torch, merge_loop),
                   (lambda Y, h: np.swapaxes(Y.reshape(*Y.shape[:-1], h, -1), 1, 2), merge_loop)):
        _right_answer_passes(lambda a: check_split_merge(*a), answer, capsys)
        assert _split_hidden(*answer)


def test_split_blank_is_told_to_answer():
    assert "not a function yet" in _message(lambda a: check_split_merge(*a), (None, None))

    def stub(Y, h):
        raise NotImplementedError

    assert "still raises NotImplementedError" in _message(lambda a: check_split_merge(*a), (stub, _merge))


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
    "transposed": "(out, in) order",
    "identity": "change with head 2's fruit feature",
    "fruit and tech": "change with head 2's fruit feature",
    "fruit, not tech": "read head 2's fruit feature",
    "transposed, tech into output 2": "(out, in) order",
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


def test_mixing_a_transposed_design_names_the_order_and_the_leak():
    """A right design written (out, in): the order is named, then what it does as written (row 2 leaks)."""
    text = _message(check_mixing_W_O, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]])
    assert "(out, in) order" in text and "rows of W_O are the inputs" in text
    assert "row 2 of W_O" in _message(check_mixing_W_O, _route(r2c3=1.0))


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
