"""Lesson 03's checks name each typical mistake, and only that one, when a learner makes it.

Every wrong answer below is written as a learner would write it. The message must contain the phrase of its
own mistake and none of the other mistakes' phrases; two different right answers get ``Correct:``; a shortcut
that skips what the exercise teaches does not pass.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
from mistakes import hidden_test_passes
from mistakes import message as _message
from mistakes import names_only as _names_only
from mistakes import right_answer_passes as _right_answer_passes

import selfattention
import selfattention as sa
from selfattention import checks
from selfattention.checks import check_masked_row, check_self_attention_batch
from selfattention.checks.lesson03 import loops_in


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ---------------------------------------------------------------- exercise 1 (a): padding's share, predicted
PAD = {
    "one row": "the weight of section 4's one padding row",
    "not renormalised": "without renormalising",
    "each row": "that is each padding row's weight",
    "zero": "the padding is not ignored",
    "equal weights": "3/5 assumes equal weights",
    "two rows": "that is two padding rows",
    "real words": "that is what the real words keep",
    "bank's row": "is bank's row",
}
PAD_RIGHT = 3 / (np.exp(1.01) + np.exp(0.77) + 3)        # 0.379
PAD_WRONG = {
    "one row": 0.169,                                     # section 4's one padding row, copied
    "not renormalised": 3 * 0.169,                        # 0.507: three of them, the sum not renewed
    "each row": PAD_RIGHT / 3,                            # one padding row's weight of three
    "zero": 0.0,                                          # padding assumed ignored without a mask
    "equal weights": 3 / 5,                               # three of five words, scores ignored
    "two rows": 2 / (np.exp(1.01) + np.exp(0.77) + 2),    # T = 5 miscounted as two padding rows
    "real words": 1 - PAD_RIGHT,                          # river's and bank's part, not the padding's
    "bank's row": 0.383,                                  # bank's row (bank . bank = 0.98) instead of river's
}


@pytest.mark.parametrize("key", sorted(PAD_WRONG))
def test_padding_share_mistake_is_named(key):
    _names_only(_message(checks.check_padding_share, PAD_WRONG[key]), key, PAD)
    assert not _hidden_passes("l03-batch-test", self_attention_batch=minus_inf_by_hand,
                              padding_share=PAD_WRONG[key])


@pytest.mark.parametrize("answer", [PAD_RIGHT, 0.379, 3 * 0.169 / (0.465 + 0.366 + 3 * 0.169),
                                    np.float32(0.38)])
def test_padding_share_right_answers(answer, capsys):
    _right_answer_passes(checks.check_padding_share, answer, capsys)
    assert _hidden_passes("l03-batch-test", self_attention_batch=minus_inf_by_hand, padding_share=answer)


@pytest.mark.parametrize(("answer", "said"), [(None, "has no value yet"), ("0.379", "is text"),
                                              ([0.3, 0.1], "one finite number"), (0.45, "is not it")])
def test_padding_share_bad_input_is_named(answer, said):
    text = _message(checks.check_padding_share, answer)
    assert said in text and not [k for k, p in PAD.items() if p in text], text
    assert not _hidden_passes("l03-batch-test", self_attention_batch=minus_inf_by_hand, padding_share=answer)


# ---------------------------------------------------------------- exercise 1: a padded batch at once
BATCH = {
    "no mask": "give weight to the padding",
    "zeroed after": "zeroed after the softmax",
    "raw scores": "multiplied the raw scores X X^T by X",
    "transposed": "your weights are transposed",
    "batch axis": "your softmax ran over axis 0",
    "X.T": "X.T reverses all three axes",
    "keepdims": "needs keepdims=True",
    "tuple": "returned a tuple",
    "overflow": "subtract each row's maximum",
    "loop": "loops in Python",
    "library": "calls sa.basic_self_attention",
    "sqrt(d)": "divided the scores by sqrt(d_model)",
    "off by one": "keeps one padding column",
    "nan padding": "but the padding rows of Z hold",
    "hidden library": "reached a ready-made attention or mask",
    "weak mask": "adds a finite number such as -10",
}


def _mask(X, lengths):                   # (B, 1, T): True for the real words attended to
    return (np.arange(X.shape[1]) < lengths[:, None])[:, None, :]


def no_mask(X, lengths):                 # lengths ignored: padding columns score 0
    return _softmax(X @ np.swapaxes(X, -1, -2)) @ X


def mask_with_zero(X, lengths):          # "masked" scores of 0: still e^0 = 1
    return _softmax(np.where(_mask(X, lengths), X @ np.swapaxes(X, -1, -2), 0.0)) @ X


def mask_after_softmax(X, lengths):
    return (_softmax(X @ np.swapaxes(X, -1, -2)) * _mask(X, lengths)) @ X


def raw_scores(X, lengths):
    return np.where(_mask(X, lengths), X @ np.swapaxes(X, -1, -2), 0.0) @ X


def transposed(X, lengths):              # softmax down the columns of each (T, T) map
    return _softmax(np.where(_mask(X, lengths), X @ np.swapaxes(X, -1, -2), -np.inf), axis=1) @ X


def over_the_batch(X, lengths):          # softmax across the sentences: axis=0 of (B, T, T)
    return _softmax(np.where(_mask(X, lengths), X @ np.swapaxes(X, -1, -2), -np.inf), axis=0) @ X


def with_X_T(X, lengths):                # the 2-D habit on a 3-D array
    return _softmax(np.where(_mask(X, lengths), X @ X.T, -np.inf)) @ X


def no_keepdims(X, lengths):             # the max over the last axis loses that axis
    O = np.where(_mask(X, lengths), X @ np.swapaxes(X, -1, -2), -np.inf)
    E = np.exp(O - O.max(axis=-1))
    return E / E.sum(axis=-1, keepdims=True) @ X


def mask_without_new_axis(X, lengths):   # a (B, T) mask against (B, T, T) scores
    real = np.arange(X.shape[1]) < lengths[:, None]
    return _softmax(np.where(real, X @ np.swapaxes(X, -1, -2), -np.inf)) @ X


def returns_a_tuple(X, lengths):
    A = _softmax(np.where(_mask(X, lengths), X @ np.swapaxes(X, -1, -2), -np.inf))
    return A @ X, A


def overflow(X, lengths):
    E = np.exp(X @ np.swapaxes(X, -1, -2)) * _mask(X, lengths)
    return E / E.sum(axis=-1, keepdims=True) @ X


def scaled(X, lengths):                  # the scaled attention of other tutorials
    d = X.shape[-1]
    return _softmax(np.where(_mask(X, lengths), X @ np.swapaxes(X, -1, -2) / np.sqrt(d), -np.inf)) @ X


def loop(X, lengths):                    # the shortcut: each sentence cut to its length, no mask at all
    Z = np.zeros_like(X)
    for b, n in enumerate(lengths):
        Z[b, :n] = _softmax(X[b, :n] @ X[b, :n].T) @ X[b, :n]
    return Z


def off_by_one(X, lengths):              # <= keeps the first padding column
    real = (np.arange(X.shape[1]) <= lengths[:, None])[:, None, :]
    return _softmax(np.where(real, X @ np.swapaxes(X, -1, -2), -np.inf)) @ X


def zero_rows_are_padding(X, lengths):   # the shortcut: lengths ignored, rows of zeros taken for padding
    real = (np.abs(X).sum(axis=-1) > 0)[:, None, :]
    return _softmax(np.where(real, X @ np.swapaxes(X, -1, -2), -np.inf)) @ X


def weak_mask(X, lengths):               # an additive mask of -10, not -inf: padding keeps e^-10 of weight
    return _softmax(X @ np.swapaxes(X, -1, -2) + np.where(_mask(X, lengths), 0.0, -10.0)) @ X


def library(X, lengths):                 # the lesson's function does the batch too
    return sa.basic_self_attention(X)[0]


BATCH_WRONG = {"no mask": no_mask, "raw scores": raw_scores,
               "transposed": transposed, "batch axis": over_the_batch, "X.T": with_X_T,
               "keepdims": no_keepdims, "tuple": returns_a_tuple, "overflow": overflow, "loop": loop,
               "library": library, "sqrt(d)": scaled, "off by one": off_by_one,
               "weak mask": weak_mask}


@pytest.mark.parametrize("key", sorted(BATCH_WRONG))
def test_batch_mistake_is_named(key):
    with np.errstate(all="ignore"):
        _names_only(_message(check_self_attention_batch, BATCH_WRONG[key]), key, BATCH)


def test_taking_rows_of_zeros_for_padding_does_not_pass():   # padding need not be zeros
    text = _message(check_self_attention_batch, zero_rows_are_padding)
    _names_only(text, "no mask", BATCH)
    assert "not zeros" in text


def test_rows_of_zeros_taken_for_padding_are_named_as_such():   # not "a padding row of zeros scores 0"
    def nonzero_rows(X, lengths):
        real = np.any(X != 0, axis=-1)[:, None, :]
        return _softmax(np.where(real, X @ np.swapaxes(X, -1, -2), -np.inf)) @ X

    for answer in (zero_rows_are_padding, nonzero_rows):
        text = _message(check_self_attention_batch, answer)
        assert "found the padding from rows of zeros" in text and "Use `lengths`" in text, text
        assert "A padding row of zeros scores 0" not in text, text


def ready_made_mask(X, lengths):         # the shortcut: the package builds the mask
    real = sa.padding_mask(lengths, X.shape[1])
    return _softmax(np.where(real, X @ np.swapaxes(X, -1, -2), -np.inf)) @ X


def library_attention(X, lengths):      # the shortcut: scaled attention with the scale undone
    s = X.shape[-1] ** 0.25
    return sa.scaled_dot_product_attention(X * s, X * s, X, mask=sa.padding_mask(lengths, X.shape[1]))[0]


_sdpa = sa.scaled_dot_product_attention     # bound in another cell, under another name
_basic = sa.basic_self_attention
_lengths_mask = sa.padding_mask
_scaled_torch = functools.partial(torch.nn.functional.scaled_dot_product_attention, scale=1.0)


def _to_numpy(t):
    return t.detach().numpy()


def alias_attention(X, lengths):         # the library's attention under a name of the learner's
    s = X.shape[-1] ** 0.25
    return _sdpa(X * s, X * s, X, mask=np.arange(X.shape[1]) < np.asarray(lengths)[:, None, None])[0]


def alias_basic(X, lengths):             # the lesson's function under another name
    return _basic(X)[0]


def alias_mask(X, lengths):
    real = _lengths_mask(lengths, X.shape[1])
    return _softmax(np.where(real, X @ np.swapaxes(X, -1, -2), -np.inf)) @ X


def torch_attention(X, lengths):         # PyTorch's fused attention, scale undone
    t = torch.as_tensor(X)
    mask = torch.as_tensor(np.arange(X.shape[1]) < np.asarray(lengths)[:, None, None])
    return _to_numpy(torch.nn.functional.scaled_dot_product_attention(t, t, t, attn_mask=mask, scale=1.0))


def torch_alias(X, lengths):             # the same, kept under another name first
    t = torch.as_tensor(X)
    mask = torch.as_tensor(np.arange(X.shape[1]) < np.asarray(lengths)[:, None, None])
    return _to_numpy(_scaled_torch(t, t, t, attn_mask=mask))


def _helper(X, lengths):                 # a helper of the learner's that takes the shortcut
    return library_attention(X, lengths)


def shortcut_in_a_helper(X, lengths):
    return _helper(X, lengths)


SHORTCUTS = [(ready_made_mask, "sa.padding_mask"), (library_attention, "sa.scaled_dot_product_attention"),
             (alias_attention, "sa.scaled_dot_product_attention (as _sdpa)"),
             (alias_mask, "sa.padding_mask (as _lengths_mask)"),
             (torch_attention, "torch's scaled_dot_product_attention"),
             (torch_alias, "torch's scaled_dot_product_attention (as _scaled_torch)"),
             (shortcut_in_a_helper, "sa.scaled_dot_product_attention")]


@pytest.mark.parametrize(("answer", "name"), SHORTCUTS)
def test_the_packaged_mask_and_attention_do_not_pass(answer, name):
    text = _message(check_self_attention_batch, answer)
    assert f"calls {name}," in text and "Write it yourself" in text, text
    assert not _hidden_passes("l03-batch-test", self_attention_batch=answer)


def causal_mask_called(X, lengths):       # a causal mask is not the length mask: the message says "a mask"
    sa.causal_mask(X.shape[1])
    return masked_attention(X, lengths)


def test_a_ready_made_causal_mask_is_not_called_a_length_mask():
    text = _message(check_self_attention_batch, causal_mask_called)
    assert "calls sa.causal_mask, which builds a ready-made mask" in text, text
    assert "length mask for you" not in text, text
    assert not _hidden_passes("l03-batch-test", self_attention_batch=causal_mask_called)


@pytest.mark.parametrize("answer", [library, alias_basic])
def test_the_lesson_s_own_attention_does_not_pass(answer):
    _names_only(_message(check_self_attention_batch, answer), "library", BATCH)
    assert not _hidden_passes("l03-batch-test", self_attention_batch=answer)


def masked_attention(X, lengths):        # a helper of the learner's own, named "attention": no shortcut
    real = np.arange(X.shape[1]) < np.asarray(lengths)[:, None]
    return sa.softmax(np.where(real[:, None, :], X @ np.swapaxes(X, -1, -2), -np.inf), axis=-1) @ X


def own_helper_named_attention(X, lengths):
    return masked_attention(X, lengths)


def package_by_its_full_name(X, lengths):   # the package's softmax, reached as selfattention.softmax
    real = np.arange(X.shape[1]) < np.asarray(lengths)[:, None]
    return selfattention.softmax(np.where(real[:, None, :], X @ np.swapaxes(X, -1, -2), -np.inf), axis=-1) @ X


def test_the_package_named_in_full_is_no_shortcut(capsys):   # "selfattention" says attention: a module
    _right_answer_passes(check_self_attention_batch, package_by_its_full_name, capsys)
    assert _hidden_passes("l03-batch-test", self_attention_batch=package_by_its_full_name)


def test_a_helper_of_the_learner_s_named_attention_passes(capsys):
    _right_answer_passes(check_self_attention_batch, own_helper_named_attention, capsys)
    assert _hidden_passes("l03-batch-test", self_attention_batch=own_helper_named_attention)


def test_a_mask_of_zero_scores_is_no_mask():
    _names_only(_message(check_self_attention_batch, mask_with_zero), "no mask", BATCH)


def test_a_mask_after_the_softmax_is_named():
    text = _message(check_self_attention_batch, mask_after_softmax)
    _names_only(text, "zeroed after", BATCH)
    assert "e^0 = 1" not in text, text
    assert not _hidden_passes("l03-batch-test", self_attention_batch=mask_after_softmax)


def test_a_mask_on_the_rows_is_named():  # padding queries masked, padding keys still attended to
    def self_attention_batch(X, lengths):
        rows = (np.arange(X.shape[1]) < lengths[:, None])[:, :, None]
        with np.errstate(invalid="ignore"):
            return _softmax(np.where(rows, X @ np.swapaxes(X, -1, -2), -np.inf)) @ X

    text = _message(check_self_attention_batch, self_attention_batch)
    _names_only(text, "no mask", BATCH)
    assert "you masked the queries, not the keys" in text, text


def test_weights_zeroed_after_the_softmax_without_renormalising_are_named():
    def self_attention_batch(X, lengths):
        mask = np.arange(X.shape[1]) < lengths[:, None]
        A = sa.softmax(X @ np.swapaxes(X, -1, -2), axis=-1)
        A = A * mask[:, None, :]   # padding weights set to 0, rows not renormalised
        return A @ X

    text = _message(check_self_attention_batch, self_attention_batch)
    _names_only(text, "zeroed after", BATCH)
    assert "e^0 = 1" not in text and "queries" not in text, text


def test_nan_in_the_padding_rows_is_named():   # queries and keys both masked: padding rows are 0 / 0
    def self_attention_batch(X, lengths):
        real = np.arange(X.shape[1]) < lengths[:, None]
        both = real[:, :, None] & real[:, None, :]
        return _softmax(np.where(both, X @ np.swapaxes(X, -1, -2), -np.inf)) @ X

    with np.errstate(all="ignore"):
        text = _message(check_self_attention_batch, self_attention_batch)
    _names_only(text, "nan padding", BATCH)
    assert "Correct" not in text and "mask[:, None, :]" in text, text
    assert "hold NaN" in text and "0 / 0 = NaN" in text and "sa.softmax returns zeros" in text, text
    assert not _hidden_passes("l03-batch-test", self_attention_batch=self_attention_batch)


def test_both_axes_masked_with_sa_softmax_passes(capsys):   # sa.softmax gives an all -inf row zeros, not NaN
    def self_attention_batch(X, lengths):
        real = np.arange(X.shape[1]) < lengths[:, None]
        both = real[:, :, None] & real[:, None, :]
        return sa.softmax(np.where(both, X @ np.swapaxes(X, -1, -2), -np.inf), axis=-1) @ X

    _right_answer_passes(check_self_attention_batch, self_attention_batch, capsys)
    assert _hidden_passes("l03-batch-test", self_attention_batch=self_attention_batch)


def test_inf_in_the_padding_rows_does_not_pass():
    def self_attention_batch(X, lengths):
        Z = _softmax(np.where(_mask(X, lengths), X @ np.swapaxes(X, -1, -2), -np.inf)) @ X
        return np.where((np.arange(X.shape[1]) < lengths[:, None])[..., None], Z, np.inf)

    text = _message(check_self_attention_batch, self_attention_batch)
    _names_only(text, "nan padding", BATCH)
    assert "hold inf" in text and "0 / 0" not in text, text


def torch_by_a_built_name(X, lengths):   # the shortcut no name in the code gives away
    import importlib

    f = getattr(importlib.import_module("torch.nn.functional"), "scaled_dot_" + "product_attention")
    real = torch.as_tensor(np.arange(X.shape[1]) < np.asarray(lengths)[:, None])[:, None, :]
    X = torch.as_tensor(X)
    return f(X, X, X, attn_mask=real, scale=1.0).numpy()


def sa_by_a_built_name(X, lengths):
    f = getattr(sa, "scaled_dot_" + "product_attention")
    real = (np.arange(X.shape[1]) < np.asarray(lengths)[:, None])[:, None, :]
    return f(X * X.shape[-1] ** 0.25, X * X.shape[-1] ** 0.25, X, mask=real)[0]


@pytest.mark.parametrize("answer", [torch_by_a_built_name, sa_by_a_built_name])
def test_a_ready_made_attention_under_a_built_name_does_not_pass(answer):
    _names_only(_message(check_self_attention_batch, answer), "hidden library", BATCH)
    assert not _hidden_passes("l03-batch-test", self_attention_batch=answer)


def test_a_blank_answer_returns_none():
    def self_attention_batch(X, lengths):
        X = np.asarray(X, dtype=float)
        # YOUR CODE HERE
        ...

    text = _message(check_self_attention_batch, self_attention_batch)
    assert "returns None" in text and not [k for k, p in BATCH.items() if p in text], text


def test_a_mask_without_its_new_axis_is_named():
    _names_only(_message(check_self_attention_batch, mask_without_new_axis), "keepdims", BATCH)


def test_batch_multiplied_by_A_transposed_is_named():
    def self_attention_batch(X, lengths):
        A = _softmax(np.where(_mask(X, lengths), X @ np.swapaxes(X, -1, -2), -np.inf))
        return np.swapaxes(A, -1, -2) @ X

    _names_only(_message(check_self_attention_batch, self_attention_batch), "transposed", BATCH)


def test_starmap_is_a_loop_too():
    import itertools

    def self_attention_batch(X, lengths):
        def one(s, n):
            m = np.arange(len(s)) < n
            return _softmax(np.where(m[None, :], s @ s.T, -np.inf)) @ s
        return np.stack(list(itertools.starmap(one, zip(X, lengths, strict=True))))

    _names_only(_message(check_self_attention_batch, self_attention_batch), "loop", BATCH)
    assert not _hidden_passes("l03-batch-test", self_attention_batch=self_attention_batch)


def test_a_comprehension_is_a_loop_too():
    def self_attention_batch(X, lengths):
        return np.stack([_softmax(s @ s.T) @ s for s in X])

    _names_only(_message(check_self_attention_batch, self_attention_batch), "loop", BATCH)


def test_map_is_a_loop_too():
    def self_attention_batch(X, lengths):
        one = lambda s, n: np.vstack([_softmax(s[:n] @ s[:n].T) @ s[:n], s[n:]])  # noqa: E731
        return np.stack(list(map(one, X, lengths)))

    _names_only(_message(check_self_attention_batch, self_attention_batch), "loop", BATCH)


def minus_inf_by_hand(X, lengths):
    omega = X @ np.swapaxes(X, -1, -2)
    real = np.arange(X.shape[1])[None, None, :] < lengths[:, None, None]
    omega = np.where(real, omega, -np.inf)
    A = np.exp(omega - omega.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    return A @ X


def big_negative_and_sa_softmax(X, lengths):
    omega = np.einsum("btd,bsd->bts", X, X)
    mask = np.arange(X.shape[1]) >= lengths[:, None]            # True on padding
    omega = omega - 1e9 * mask[:, None, :]
    return sa.softmax(omega, axis=-1) @ X


def exp_times_mask(X, lengths):          # zero the padding's e^score, then normalise
    omega = X @ X.transpose(0, 2, 1)
    E = np.exp(omega - omega.max(axis=-1, keepdims=True)) * _mask(X, lengths)
    return (E / E.sum(axis=-1, keepdims=True)) @ X


@pytest.mark.parametrize("answer", [minus_inf_by_hand, big_negative_and_sa_softmax, exp_times_mask])
def test_batch_right_answers(answer, capsys):
    with np.errstate(all="ignore"):
        _right_answer_passes(check_self_attention_batch, answer, capsys)


def test_batch_praise_says_nothing_about_loops(capsys):
    check_self_attention_batch(minus_inf_by_hand)
    assert "loop" not in capsys.readouterr().out


# ---------------------------------------------------------------- exercise 2: a row under a mask
MASK = {
    "no mask": "without the mask",
    "zero score": "e^0 = 1",
    "zeroed after": "without sharing it out",
    "column": "is flows' column",
    "hid a": "hides a, not flows",
    "equal": "equal weights",
    "order": "in the wrong order",
    "one decimal": "rounded to one decimal",
    "truncated": "cut off after 2 decimals",
    "truncated 1": "cut off after 1 decimal ",
    "percent": "in percent",
    "exps": "divide each by that sum",
    "scores": "not weights",
    "close": "further from flows' masked row than rounding",
    "other": "not flows' masked row",
    "sqrt(d)": "divided by sqrt(d_model) = 2, as scaled attention does",
    "sqrt(d) no mask": "unmasked row with the scores divided by sqrt(d_model)",
    "bank's row": "is the masked row of bank, not of flows",
    "river masked": "masks river, flows' largest score",
    "no a": "leaves out the word a",
    "cosines": "comes from cosines, not dot products",
    "equal share": "out equally, adding 0.089",
}
_SCORES = np.array([0.10, 0.82, 0.70, 0.68])              # flows . (a, river, bank, flows), by hand
_X4 = np.array([[0.1, 0.1, 0.1, 0.1], [0.1, 1.0, 0, 0], [0.7, 0.7, 0, 0], [0.2, 0.8, 0, 0]])
_HIDDEN = np.where(np.eye(4, dtype=bool), -np.inf, _X4 @ _X4.T)
_RIGHT_ROW = _softmax(np.where(np.arange(4) == 3, -np.inf, _SCORES))
MASK_WRONG = {
    "no mask": _softmax(_SCORES),                                         # forgot the mask
    "zero score": _softmax(np.where(np.arange(4) == 3, 0.0, _SCORES)),    # masked with 0, not -inf
    "zeroed after": _softmax(_SCORES) * [1, 1, 1, 0],                     # zeroed after the softmax
    "column": _softmax(_HIDDEN)[:, 3],                                    # flows' column of the masked A
    "hid a": _softmax(np.where(np.arange(4) == 0, -np.inf, _SCORES)),     # masked the first word
    "equal": np.array([1, 1, 1, 0]) / 3,                                  # the shortcut: the mask alone
    "order": np.array([0.421, 0.374, 0.205, 0.0]),                        # right numbers, largest first
    "one decimal": np.array([0.2, 0.4, 0.4, 0.0]),                        # rounded too far
    "truncated 1": np.array([0.2, 0.4, 0.3, 0.0]),                        # cut after one decimal
    "percent": np.array([20.5, 42.1, 37.4, 0.0]),                         # the right row in percent
    "exps": np.exp(_SCORES) * [1, 1, 1, 0],                               # softmax not divided by its sum
    "scores": _SCORES * [1, 1, 1, 0],                                     # the masked scores, no softmax
    "close": np.array([0.21, 0.42, 0.38, 0.0]),                           # bank's 0.374 slipped to 0.38
    "other": np.array([0.2, 0.45, 0.35, 0.0]),                            # a guess that sums to 1
    "sqrt(d)": _softmax(np.where(np.arange(4) == 3, -np.inf, _SCORES / 2)),   # scaled, d_model = 4
    "sqrt(d) no mask": _softmax(_SCORES / 2),                              # scaled, and no mask
    "bank's row": _softmax(_HIDDEN)[2],                                   # the masked row of bank
    "river masked": _softmax(np.where(np.arange(4) == 1, -np.inf, _SCORES)),   # the largest score hidden
    "no a": np.append(0.0, _softmax(np.array([0.82, 0.70, -np.inf]))),     # "a" left out of the sentence
    "cosines": _softmax(np.where(np.arange(4) == 3, -np.inf, (_X4 / np.linalg.norm(_X4, axis=1)[:, None])
                                 @ (_X4[3] / np.linalg.norm(_X4[3])))),   # cosines, not dot products
    "equal share": np.array([0.150, 0.308, 0.273, 0.0]) + 0.268 / 3 * np.array([1, 1, 1, 0]),   # by hand
}


@pytest.mark.parametrize("key", sorted(MASK_WRONG))
def test_masked_row_mistake_is_named(key):
    _names_only(_message(check_masked_row, MASK_WRONG[key]), key, MASK)


def test_masked_row_close_names_only_the_weights_outside_both_roundings():
    """0.20 is an accepted rounding of a's weight (0.150 / 0.732 = 0.2049): only bank's 0.38 is named."""
    text = _message(check_masked_row, [0.20, 0.42, 0.38, 0.0])
    assert MASK["close"] in text and "bank (0.38)" in text
    assert "a (0.2)" not in text and "river" not in text


def test_masked_row_rounded_equal_shares_are_named():
    """[0.33, 0.33, 0.33, 0] is the equal-shares shortcut rounded, not a row that fails to sum to 1."""
    text = _message(check_masked_row, [0.33, 0.33, 0.33, 0.0])
    assert MASK["equal"] in text and "sums to" not in text


@pytest.mark.parametrize("key", sorted(MASK_WRONG))
def test_the_hidden_masked_row_test_refuses_what_the_check_refuses(key):
    assert not _hidden_passes("l03-mask-test", flows_row=MASK_WRONG[key])


@pytest.mark.parametrize("answer", [["0.205", "0.421", "0.374", "0"], "0.205 0.421 0.374 0"])
def test_a_row_written_as_text_is_refused_by_the_check_and_the_hidden_test(answer):
    assert "holds text" in _message(check_masked_row, answer)
    assert not _hidden_passes("l03-mask-test", flows_row=answer)


RIGHT_ROWS = [_RIGHT_ROW,                                                  # -inf, then softmax
              list(_softmax(_SCORES) * [1, 1, 1, 0] / (1 - _softmax(_SCORES)[3])),   # renormalised
              _softmax(_HIDDEN)[3].round(3),                               # the whole masked map, row 4
              [0.21, 0.42, 0.37, 0],                                       # to 2 decimals, as the task allows
              [0.20, 0.42, 0.37, 0],                                       # by hand, 0.150 / 0.732 = 0.2049
              np.array([0.150, 0.308, 0.273, 0.0]) / (1 - 0.268)]         # by hand from the given row


@pytest.mark.parametrize("answer", RIGHT_ROWS,
                         ids=["softmax", "renormalised", "rounded", "2 decimals", "2 decimals by hand",
                              "by hand"])
def test_masked_row_right_answers_pass_the_check_and_the_hidden_test(answer, capsys):
    _right_answer_passes(check_masked_row, answer, capsys)
    assert _hidden_passes("l03-mask-test", flows_row=answer, growth=_GROWTH)


_GROWTH = 1 / (1 - _softmax(_SCORES)[3])              # 1.366: each other weight divided by 1 - 0.268
GROWTH = {"inverted": "what each weight is divided by", "added": "adds flows' unmasked weight",
          "taken": "the weight the mask takes away",
          "percent": "as a percentage", "other": "is not the factor"}
GROWTH_WRONG = {"inverted": 1 - _softmax(_SCORES)[3], "added": 1 + _softmax(_SCORES)[3],
                "taken": _softmax(_SCORES)[3], "percent": 36.6, "other": 2.0}


@pytest.mark.parametrize("key", sorted(GROWTH_WRONG))
def test_a_wrong_growth_factor_is_named(key):
    check = functools.partial(check_masked_row, _RIGHT_ROW)
    _names_only(_message(lambda g: check(growth=g), GROWTH_WRONG[key]), key, GROWTH)
    assert not _hidden_passes("l03-mask-test", flows_row=_RIGHT_ROW, growth=GROWTH_WRONG[key])


@pytest.mark.parametrize("growth", [_GROWTH, 1.37, _RIGHT_ROW[1] / _softmax(_SCORES)[1]])
def test_a_right_growth_factor_passes(growth, capsys):
    _right_answer_passes(lambda g: check_masked_row(_RIGHT_ROW, g), growth, capsys)
    assert _hidden_passes("l03-mask-test", flows_row=[0.21, 0.42, 0.37, 0], growth=growth)


@pytest.mark.parametrize(("growth", "said"), [(None, "growth has no value yet"),
                                              ("1.37", "should be one number"),
                                              ([1.3, 1.4], "should be one number")])
def test_a_blank_or_odd_growth_is_named(growth, said):
    text = _message(lambda g: check_masked_row(_RIGHT_ROW, g), growth)
    assert said in text and not [k for k, p in GROWTH.items() if p in text], text
    assert not _hidden_passes("l03-mask-test", flows_row=_RIGHT_ROW, growth=growth)


@pytest.mark.parametrize(("answer", "said"), [(None, "has no value yet"), ([0.2, 0.4], "give 4 numbers"),
                                              ([np.nan, 0.4, 0.3, 0.0], "is not finite"),
                                              ([0.3, 0.4, 0.4, 0.0], "sums to 1.100")])
def test_masked_row_bad_input_is_named(answer, said):
    text = _message(check_masked_row, answer)
    assert said in text and not [k for k, p in MASK.items() if p in text], text


# ---------------------------------------------------------------- exercise 3: one layer's cost, counted
COST = {
    "one product": "only one of the two products",
    "T d": "you counted T d instead of T^2 d",
    "T and d": "you mixed up T and d",
    "softmax": "you counted the softmax",
    "one step": "you counted one step",
    "d per step": "d^2 multiply-adds per step, not d",
    "x_t added": "you counted the additions of x_t",
    "input projection": "counts an input projection x_t W_x too",
    "factor 2": "you dropped the factor 2",
    "wrong side": "the factor 2 is on the wrong side",
    "not whole": "is not a whole number",
    "FLOPs": "you counted FLOPs, 2 per multiply-add",
    "T - 1 steps": "you counted T - 1 products",
}
_T, _D = 300, 48
_RIGHT = (2 * _T * _T * _D, _T * _D * _D, _D // 2)      # 8,640,000; 691,200; 24
COST_WRONG = {                                           # (attention_madds, recurrent_madds, T_equal)
    "one product": (_T * _T * _D, _RIGHT[1], _RIGHT[2]),
    "T d": (_T * _D, _RIGHT[1], _RIGHT[2]),
    "T and d": (2 * _T * _D * _D, _RIGHT[1], _RIGHT[2]),
    "softmax": (2 * _T * _T * _D + _T * _T, _RIGHT[1], _RIGHT[2]),
    "one step": (_RIGHT[0], _D * _D, _RIGHT[2]),
    "d per step": (_RIGHT[0], _T * _D, _RIGHT[2]),
    "x_t added": (_RIGHT[0], _T * _D * _D + _T * _D, _RIGHT[2]),
    "input projection": (_RIGHT[0], 2 * _T * _D * _D, _RIGHT[2]),   # h W_h + x W_x: 2 T d^2
    "factor 2": (*_RIGHT[:2], _D),                       # the table's T = d, constants dropped
    "wrong side": (*_RIGHT[:2], 2 * _D),
    "not whole": (_RIGHT[0], _RIGHT[0] / 12.37, _RIGHT[2]),   # a count from a ratio of timings
    "FLOPs": (4 * _T * _T * _D, _RIGHT[1], _RIGHT[2]),   # 2 FLOPs per multiply-add
    "T - 1 steps": (_RIGHT[0], (_T - 1) * _D * _D, _RIGHT[2]),   # from recurrent(): no product at t = 0
}


def _costs(answer):
    return dict(zip(("attention_madds", "recurrent_madds", "T_equal"), answer, strict=True))


def _all_three(answer):                  # the check with the three answers of a tuple
    checks.check_layer_costs(*answer)


@pytest.mark.parametrize("key", sorted(COST_WRONG))
def test_layer_costs_mistake_is_named(key):
    _names_only(_message(_all_three, COST_WRONG[key]), key, COST)
    assert not _hidden_passes("l03-cost-test", **_costs(COST_WRONG[key]))


def test_a_mistake_does_not_give_the_answer_away():
    text = _message(_all_three, COST_WRONG["factor 2"])
    assert "24" not in text, text
    text = _message(_all_three, COST_WRONG["one product"])
    assert "8,640,000" not in text and "8640000" not in text, text


@pytest.mark.parametrize("answer", [
    _RIGHT,
    (2 * 300**2 * 48, 300 * 48**2, 48 / 2),                 # floats from the formulas
    (8.64e6, 6.912e5, 24.0),                                # written out
    (np.int64(_RIGHT[0]), np.float64(_RIGHT[1]), np.array(24)),
])
def test_layer_costs_right_answers(answer, capsys):
    _right_answer_passes(_all_three, answer, capsys)
    assert _hidden_passes("l03-cost-test", **_costs(answer))


def test_a_timed_answer_cannot_pass():   # the shortcut: time both layers, scale a count by the ratio
    timed = (_RIGHT[0], _RIGHT[0] / 12.5 * 1.003, 24)
    _names_only(_message(_all_three, timed), "not whole", COST)
    assert not _hidden_passes("l03-cost-test", **_costs(timed))


@pytest.mark.parametrize(("answer", "said"), [
    ((None, 1, 1), "has no value yet"), (("8640000", 1, 1), "is text"),
    (([1, 2], 1, 1), "should be one number"),
    ((np.nan, 1, 1), "is not finite"), ((_RIGHT[0], _RIGHT[1], None), "T_equal has no value yet"),
])
def test_layer_costs_bad_input_is_named(answer, said):
    text = _message(_all_three, answer)
    assert said in text and not [k for k, p in COST.items() if p in text], text
    assert not _hidden_passes("l03-cost-test", **_costs(answer))


# ---------------------------------------------------------------- the hidden tests agree with the checks
def _hidden_passes(grade_id: str, **answer) -> bool:
    if grade_id == "l03-batch-test":           # part (a), right, unless a test gives its own
        answer.setdefault("padding_share", PAD_RIGHT)
    return hidden_test_passes("03_matrix_form", grade_id, **answer)


@pytest.mark.parametrize("answer", [loop, zero_rows_are_padding])
def test_the_hidden_batch_test_refuses_what_the_check_refuses(answer):
    assert not _hidden_passes("l03-batch-test", self_attention_batch=answer)


@pytest.mark.parametrize("answer", [minus_inf_by_hand, big_negative_and_sa_softmax, exp_times_mask])
def test_the_hidden_batch_test_passes_right_answers(answer):
    assert _hidden_passes("l03-batch-test", self_attention_batch=answer)


def recursion(X, lengths):               # the shortcut: no loop written, each sentence cut to its length
    if len(X) > 1:
        return np.concatenate([recursion(X[:1], lengths[:1]), recursion(X[1:], lengths[1:])])
    Z, n = np.zeros_like(X), lengths[0]
    Z[0, :n] = _softmax(X[0, :n] @ X[0, :n].T) @ X[0, :n]
    return Z


def test_a_recursion_is_a_loop_too():
    _names_only(_message(check_self_attention_batch, recursion), "loop", BATCH)
    assert "calls itself" in _message(check_self_attention_batch, recursion)
    assert not _hidden_passes("l03-batch-test", self_attention_batch=recursion)


def _one_sentence(S, n):                 # a learner's helper: one padded sentence, cut to its length
    Z = np.zeros_like(S)
    Z[:n] = _softmax(S[:n] @ S[:n].T) @ S[:n]
    return Z


def _each_sentence(X, L):                # the loop, hidden in a helper of the learner's own
    return np.stack([_one_sentence(S, n) for S, n in zip(X, L, strict=True)])


def loop_in_a_helper(X, lengths):        # no loop in its own body
    return _each_sentence(X, lengths)


def test_a_loop_in_a_helper_is_a_loop_too():
    _names_only(_message(check_self_attention_batch, loop_in_a_helper), "loop", BATCH)
    assert not _hidden_passes("l03-batch-test", self_attention_batch=loop_in_a_helper)


def test_a_mask_without_the_max_shift_fails_the_hidden_test_too():   # NaN on scores in the hundreds
    _names_only(_message(check_self_attention_batch, overflow), "overflow", BATCH)
    assert not _hidden_passes("l03-batch-test", self_attention_batch=overflow)


def test_a_docstring_that_says_for_is_no_loop(capsys):   # "for every sentence" in words, no loop in code
    def self_attention_batch(X, lengths):
        """Basic self-attention for every sentence in the batch at once, while padding is ignored."""
        real = np.arange(X.shape[1]) < np.asarray(lengths)[:, None]   # for each sentence: its real words
        scores = np.where(real[:, None, :], X @ np.swapaxes(X, -1, -2), -np.inf)
        return sa.softmax(scores, axis=-1) @ X

    assert not loops_in(self_attention_batch)
    _right_answer_passes(check_self_attention_batch, self_attention_batch, capsys)
    assert _hidden_passes("l03-batch-test", self_attention_batch=self_attention_batch)


# ---------------------------------------------------------------- exercise 1: mistakes judged by behaviour
def _hidden_fails(answer) -> bool:       # an assertion, or an error the learner's code raises, fails
    try:
        with np.errstate(all="ignore"):
            return not _hidden_passes("l03-batch-test", self_attention_batch=answer)
    except Exception:  # noqa: BLE001
        return True


def lengths_without_new_axis(X, lengths):   # (T,) against (B,): no table
    real = np.arange(X.shape[1]) < lengths
    return sa.softmax(np.where(real[:, None, :], X @ np.swapaxes(X, -1, -2), -np.inf), axis=-1) @ X


def zero_times_inf(X, lengths):          # 0 x (-inf) = NaN on every real score
    real = np.arange(X.shape[1]) < lengths[:, None]
    omega = X @ np.swapaxes(X, -1, -2)
    return sa.softmax(omega + (1 - real[:, None, :]) * -np.inf, axis=-1) @ X


def zero_times_inf_by_hand(X, lengths):  # the same with np.exp: NaN rows
    real = np.arange(X.shape[1]) < lengths[:, None]
    omega = X @ np.swapaxes(X, -1, -2) + (~real[:, None, :]) * -np.inf
    E = np.exp(omega - omega.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True) @ X


def padding_rows_of_X_zeroed(X, lengths):   # zeroed rows still score 0, and e^0 = 1
    real = np.arange(X.shape[1]) < lengths[:, None]
    X = X * real[..., None]
    return sa.softmax(X @ np.swapaxes(X, -1, -2), axis=-1) @ X


def queries_masked_with_expand_dims(X, lengths):   # a (B, T, 1) mask, written without [:, :, None]
    real = np.arange(X.shape[1]) < lengths[:, None]
    return sa.softmax(np.where(np.expand_dims(real, -1), X @ np.swapaxes(X, -1, -2), -np.inf), axis=-1) @ X


def loop_by_reduce(X, lengths):          # no loop keyword: functools.reduce over the sentences
    def one(b):
        n, S = lengths[b], X[b]
        Z = np.zeros_like(S)
        Z[:n] = sa.softmax(S[:n] @ S[:n].T, axis=-1) @ S[:n]
        return Z
    return np.stack(functools.reduce(lambda acc, b: acc + [one(b)], range(X.shape[0]), []))


def last_real_word_hidden(X, lengths):   # lengths - 1: the last real word masked too
    real = np.arange(X.shape[1]) < lengths[:, None] - 1
    return sa.softmax(np.where(real[:, None, :], X @ np.swapaxes(X, -1, -2), -np.inf), axis=-1) @ X


def mask_the_wrong_way_round(X, lengths):   # np.where's branches swapped
    real = np.arange(X.shape[1]) < lengths[:, None]
    return sa.softmax(np.where(real[:, None, :], -np.inf, X @ np.swapaxes(X, -1, -2)), axis=-1) @ X


def mask_of_shape_T_B(X, lengths):       # np.arange(T)[:, None] < lengths: one row per word
    real = np.arange(X.shape[1])[:, None] < lengths[None, :]
    return sa.softmax(np.where(real[:, None, :], X @ np.swapaxes(X, -1, -2), -np.inf), axis=-1) @ X


def scores_times_mask(X, lengths):       # masked scores become 0, not -inf
    real = np.arange(X.shape[1]) < lengths[:, None]
    return sa.softmax(X @ np.swapaxes(X, -1, -2) * real[:, None, :], axis=-1) @ X


BEHAVIOUR = {
    lengths_without_new_axis: "Give lengths a new axis, lengths[:, None]",
    zero_times_inf: "0 x (-inf) is NaN",
    zero_times_inf_by_hand: "0 x (-inf) is NaN",
    padding_rows_of_X_zeroed: "you set the padding rows of X to zeros, but a row of zeros still scores 0",
    queries_masked_with_expand_dims: "you masked the queries, not the keys",
    loop_by_reduce: "loops in Python: run on 2 sentences",
    last_real_word_hidden: "hides each sentence's last real word",
    mask_the_wrong_way_round: "your mask is the wrong way round",
    mask_of_shape_T_B: "Your mask has shape (4, 2), (T, B)",
    scores_times_mask: "sets the padding scores to 0 rather than removing them",
}


@pytest.mark.parametrize("answer", list(BEHAVIOUR), ids=lambda f: f.__name__)
def test_batch_mistakes_judged_by_behaviour_are_named(answer):
    text = _message(check_self_attention_batch, answer)
    assert BEHAVIOUR[answer] in text, text
    assert "keepdims" not in text and "largest difference" not in text, text
    assert _hidden_fails(answer)


def test_zeroed_padding_rows_are_not_called_masked_queries():
    text = _message(check_self_attention_batch, padding_rows_of_X_zeroed)
    assert "queries" not in text and "e^0 = 1" in text, text


def test_a_whole_batch_answer_runs_the_same_lines_at_every_size():
    from selfattention.checks.lesson03 import lines_run

    for answer in (minus_inf_by_hand, big_negative_and_sa_softmax, exp_times_mask):
        counts = lines_run(answer)
        assert counts is not None and len(set(counts)) == 1, counts
    assert len(set(lines_run(loop_by_reduce))) > 1


def keys_masked_with_expand_dims(X, lengths):   # right: (B, 1, T) by expand_dims, einsum, a finite floor
    real = np.expand_dims(np.arange(X.shape[1]) < lengths[:, None], 1)
    scores = np.where(real, np.einsum("btd,bsd->bts", X, X), np.finfo(float).min)
    E = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True) @ X


def test_keys_masked_with_expand_dims_pass_the_check_and_the_hidden_test(capsys):
    _right_answer_passes(check_self_attention_batch, keys_masked_with_expand_dims, capsys)
    assert _hidden_passes("l03-batch-test", self_attention_batch=keys_masked_with_expand_dims)


def shape_read_by_a_generator(X, lengths):   # right: a generator over X.shape is no loop over sentences
    B, T, d = (int(n) for n in X.shape)
    real = np.arange(T) < np.asarray(lengths)[:, None]
    return sa.softmax(np.where(real[:, None, :], X @ np.swapaxes(X, -1, -2), -np.inf), axis=-1) @ X


def test_a_comprehension_over_the_shape_is_no_loop(capsys):
    assert not loops_in(shape_read_by_a_generator)
    _right_answer_passes(check_self_attention_batch, shape_read_by_a_generator, capsys)
    assert _hidden_passes("l03-batch-test", self_attention_batch=shape_read_by_a_generator)


def batch_by_map(X, lengths):                 # wrong: map over NumPy's matmul, one sentence at a time
    real = np.arange(X.shape[1]) < np.asarray(lengths)[:, None]
    scores = np.array(list(map(np.matmul, X, np.swapaxes(X, -1, -2))))
    return sa.softmax(np.where(real[:, None, :], scores, -np.inf), axis=-1) @ X


def test_a_map_over_sentences_is_named_with_its_line():
    text = _message(check_self_attention_batch, batch_by_map)
    assert "loops in Python" in text and "map(np.matmul" in text, text
    assert _hidden_fails(batch_by_map)


def test_padded_batch_checks_part_b_while_part_a_is_wrong(capsys):
    """Exercise 1's test cell runs both checks: a wrong (a) does not hold back (b)'s feedback."""
    text = _message(lambda a: checks.check_padded_batch(a, minus_inf_by_hand), PAD_WRONG["one row"])
    assert text.startswith("(a)") and PAD["one row"] in text and "(b)" not in text
    assert "Correct" in capsys.readouterr().out                      # (b) passed and said so
    text = _message(lambda a: checks.check_padded_batch(a, BATCH_WRONG["no mask"]), PAD_WRONG["one row"])
    assert PAD["one row"] in text and "(b)" in text and BATCH["no mask"] in text   # both named
    text = _message(lambda f: checks.check_padded_batch(PAD_RIGHT, f), BATCH_WRONG["no mask"])
    assert text.startswith("(b)") and BATCH["no mask"] in text
