"""Lesson 02's checks name each typical mistake, and only that one, when a learner makes it.

Every wrong answer below is written as a learner would write it. The message must contain the phrase of its
own mistake and none of the other mistakes' phrases; two different right answers get ``Correct:``; a shortcut
that skips what the exercise teaches does not pass.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize
import scipy.special
from mistakes import hidden_test_passes
from mistakes import message as _message
from mistakes import names_only as _names_only
from mistakes import right_answer_passes as _right_answer_passes

import selfattention as sa
from selfattention.checks import check_notes_scores, check_one_sided, check_softmax_row

NOTES = np.array([0.25, 0.70, 0.05])  # money, bank, grows

# ---------------------------------------------------------------- exercise 1: scores for the notes' weights
SCORES = {
    "weights": "these are the weights themselves",
    "exp": "you exponentiated the weights",
    "log10": "base-10 logarithm",
    "log2": "base-2 logarithm",
    "sign": "wrong sign",
    "reversed": "wrong order",
    "doubled": "times 2",
    "river row": "bank's row of *river bank flows*",
    "money row": "the row of *money*",
}
SCORES_WRONG = {
    "weights": NOTES.copy(),                            # "the weights are the scores"
    "exp": np.exp(NOTES),
    "log10": np.log10(NOTES),
    "log2": np.log2(NOTES),
    "sign": -np.log(NOTES),
    "reversed": np.log([0.05, 0.70, 0.25]),
    "doubled": 2 * np.log(NOTES),                     # "any scores with the right ratios"
    "river row": np.log([0.20, 0.78, 0.02]),
    "money row": np.log([0.70, 0.20, 0.10]),
}


@pytest.mark.parametrize("key", sorted(SCORES_WRONG))
def test_notes_scores_mistake_is_named(key):
    _names_only(_message(check_notes_scores, SCORES_WRONG[key]), key, SCORES)


def test_notes_scores_with_bank_first_are_in_the_wrong_order():
    """The largest weight written first: bank, money, grows."""
    _names_only(_message(check_notes_scores, np.log([0.70, 0.25, 0.05])), "reversed", SCORES)


@pytest.mark.parametrize("answer", [
    np.log(NOTES),                                  # the derivation: omega_j = ln(alpha_j)
    np.log(NOTES / 0.05),                           # another constant: grows gets score 0
    [-1.386, -0.357, -2.996],                       # typed in, rounded to three decimals
])
def test_notes_scores_right_answers(answer, capsys):
    _right_answer_passes(check_notes_scores, answer, capsys)


def test_notes_scores_guessed_by_hand_fails_and_says_why():
    """A shortcut: scores guessed until the order looks right, without inverting softmax. The message asks
    for the derivation without handing over its result."""
    text = _message(check_notes_scores, [1.0, 2.0, 0.0])
    assert "solve it for the score" in text and "ln(alpha" not in text, text
    assert not [k for k, p in SCORES.items() if p in text], text


@pytest.mark.parametrize(("answer", "said"), [
    (None, "has no value yet"), ([1.0, 2.0], "shape (2,)"), ("bank", "should be three scores"),
    ([np.nan, 1.0, 0.0], "NaN or infinite"),
])
def test_notes_scores_bad_input_is_named(answer, said):
    text = _message(check_notes_scores, answer)
    assert said in text and not [k for k, p in SCORES.items() if p in text], text


GAIN = {
    "ratio of weights": "0.90 / 0.70 times larger",
    "weight difference": "the change of weight (0.90 - 0.70)",
    "target odds": "they were already 0.70 / 0.30",
    "new score": "is bank's new score, not the gain",
    "log of the target weight": "is the log of the target weight",
    "target over old odds": "divides the target weight 0.90 by bank's old odds",
    "forgot the log": "you forgot the log",
    "odds against money": "bank against money only",
    "weights' ratio as gain": "is the ratio of the two weights, not a score",
    "wrong sign": "your gain has the wrong sign",
    "base-10 log": "is the base-10 logarithm of the factor",
}
def with_right_scores(gain):
    check_notes_scores(np.log(NOTES), gain)


GAIN_WRONG = {
    "ratio of weights": np.log(0.90 / 0.70),     # "bank's exponential must grow as its weight does"
    "weight difference": 0.90 - 0.70,            # "add to the score what the weight must gain"
    "target odds": np.log(0.90 / 0.10),           # "bank against the rest must be 9 to 1"
    "new score": np.log(0.70) + np.log((0.90 / 0.10) / (0.70 / 0.30)),   # 0.993: the score, not the gain
    "log of the target weight": np.log(0.9),     # "the gain is the log of the weight bank must reach"
    "target over old odds": np.log(0.9 * 0.3 / 0.7),   # the new weight over the old odds, not new odds
    "forgot the log": 3.857,                     # (0.9 / 0.1) / (0.7 / 0.3), the factor itself
    "odds against money": np.log(9) - np.log(0.70 / 0.25),   # 1.168: old odds against money alone
    "weights' ratio as gain": 0.9 / 0.7,         # 1.286, the ratio of the weights typed in as the gain
    "wrong sign": -np.log(27 / 7),               # solved with the ratio upside down
    "base-10 log": np.log10(27 / 7),             # np.log10 for np.log
}


@pytest.mark.parametrize("key", sorted(GAIN_WRONG))
def test_bank_gain_mistake_is_named(key):
    _names_only(_message(with_right_scores, GAIN_WRONG[key]), key, GAIN)


@pytest.mark.parametrize("key", sorted(GAIN_WRONG))
def test_a_wrong_bank_gain_fails_the_hidden_test(key):
    assert not _hidden_passes("l02-scores-test", notes_scores=np.log(NOTES), bank_gain=GAIN_WRONG[key])


@pytest.mark.parametrize("gain", [
    np.log(0.9 * 0.3 / (0.1 * 0.7)),                # solved from 0.7 e^g / (0.7 e^g + 0.3) = 0.9
    np.log(0.90 / 0.10) - np.log(0.70 / 0.30),      # the odds of bank against the rest, before and after
    1.35,                                           # typed in, rounded
])
def test_bank_gain_right_answers(gain, capsys):
    _right_answer_passes(lambda s: check_notes_scores(s, gain), np.log(NOTES / 0.05), capsys)


@pytest.mark.parametrize(("scores", "gain", "shown"), [
    (np.log(NOTES), 1.36,
     "e^1.360 = 3.896, close to (0.90 / 0.10) / (0.70 / 0.30) = 3.857 (your gain is rounded"),
    (np.log(NOTES), 1.34, "e^1.340 = 3.819, close to (0.90 / 0.10) / (0.70 / 0.30) = 3.857"),
    (np.log(NOTES), np.log(27 / 7), "e^1.350 = 3.857 = (0.90 / 0.10) / (0.70 / 0.30)"),
    (np.array([-1.386, -0.357, -2.996]), 1.35, "1.029 above money's, close to ln(0.70 / 0.25) = 1.030"),
])
def test_pass_message_numbers_agree_at_the_digits_shown(scores, gain, shown, capsys):
    """A rounded answer within the tolerance passes, but the message never writes = between numbers that
    differ at the digits shown (e^1.360 is 3.896, not the exact factor 3.857)."""
    check_notes_scores(scores, gain)
    said = capsys.readouterr().out
    assert said.startswith("Correct:") and shown in said, said
    assert _hidden_passes("l02-scores-test", notes_scores=scores, bank_gain=gain)


def test_new_score_is_named_whatever_constant_the_scores_carry():
    """Scores with grows at 0: bank's new score is ln 14 + 1.350 = 3.989, still not the gain."""
    scores = np.log(NOTES / 0.05)
    text = _message(lambda g: check_notes_scores(scores, g), scores[1] + np.log(27 / 7))
    _names_only(text, "new score", GAIN)


def test_bank_gain_guessed_fails_and_says_what_to_solve():
    """A shortcut: gain 1 ("one more unit of score"), without solving for it."""
    text = _message(with_right_scores, 1.0)
    assert "weight becomes 0.864" in text and "solve for g" in text and "1.35" not in text, text
    assert not [k for k, p in GAIN.items() if p in text], text


@pytest.mark.parametrize(("gain", "said"), [(None, "bank_gain has no value yet"),
                                            ([1.0, 2.0], "should be a single number"),
                                            ([1.35, 0.0, 0.0], "should be a single number"),
                                            ("1.35", "should be a single number")])
def test_bank_gain_bad_input_is_named(gain, said):
    assert said in _message(with_right_scores, gain)


@pytest.mark.parametrize("gain", ["1.35", "1.350", ["1.35"]])
def test_bank_gain_typed_as_text_is_named_as_text(gain):
    """bank_gain = "1.35": the message says it is text, not that it has the wrong shape."""
    text = _message(with_right_scores, gain)
    assert "is text (a string)" in text and "without quotes" in text and "shape" not in text, text
    assert not [k for k, p in GAIN.items() if p in text], text


def test_notes_scores_typed_as_text_are_named_as_text():
    text = _message(check_notes_scores, ["-1.386", "-0.357", "-2.996"])
    assert "is text (a string)" in text and not [k for k, p in SCORES.items() if p in text], text


# ---------------------------------------------------------------- exercise 2: a softmax that never overflows
SOFTMAX = {
    "divided by the sum": "divided the scores by their sum",
    "not normalised": "not yet normalised",
    "not exponentiated": "did not exponentiate",
    "divided by the max": "the exponentials over the largest one",
    "clipped": "differences between the scores were lost",
    "nan_to_num": "np.nan_to_num does that",
    "no shift": "np.exp(1000) overflows",
    "smallest": "subtracting anything but the row's largest score",
    "mean": "subtracting the mean",
    "half max": "subtracting half the largest",
    "first": "subtracting the first score",
    "library": "calls a library function",
    "global max": "one number for the whole matrix",
    "max without keepdims": "subtracted scores.max(axis=1) without keepdims",
    "sum without keepdims": "divided by e.sum(axis=1) without keepdims",
    "whole sum": "divided by the sum of the whole matrix",
    "long double": "a longer float (np.longdouble) only moves the limit",
    "transposed": "the right weights transposed",
    "column max": "you shifted by scores.max(axis=0",
    "column softmax": "you took the softmax down the columns",
}


def rowwise(f):
    """A learner's one-row softmax applied to each row of the matrix, as the exercise asks."""
    return lambda scores: np.stack([f(row) for row in scores])


def divided_by_the_sum(scores):
    return scores / scores.sum()


def not_normalised(scores):
    return np.exp(scores)


def not_exponentiated(scores):
    return scores - scores.max()


def divided_by_the_max(scores):
    e = np.exp(scores - scores.max())
    return e / e.max()


def no_division(scores):
    return np.exp(scores - scores.max())   # shifted, then forgot to divide


def clipped(scores):
    e = np.exp(np.clip(scores, -700, 700))  # "keep the scores where np.exp is finite"
    return e / e.sum()


def nan_to_num(scores):
    e = np.exp(scores)
    return np.nan_to_num(e / e.sum())   # "replace the NaN"


def no_shift(scores):
    e = np.exp(scores)
    return e / e.sum()


def smallest(scores):
    e = np.exp(scores - scores.min())   # "shift so that the smallest is 0"
    return e / e.sum()


def first(scores):
    e = np.exp(scores - scores[0])      # "any shift works, take the first score"
    return e / e.sum()


def mean(scores):
    e = np.exp(scores - scores.mean())  # "centre the scores"
    return e / e.sum()


def half_max(scores):
    e = np.exp(scores - scores.max() / 2)   # "half the largest keeps both ends in range"
    return e / e.sum()


def library(scores):
    return sa.softmax(scores)


def global_max(scores):
    e = np.exp(scores - scores.max())          # one shift for the whole matrix
    return e / e.sum(axis=1, keepdims=True)


def max_without_keepdims(scores):
    e = np.exp(scores - scores.max(axis=1))
    return e / e.sum(axis=1, keepdims=True)


def sum_without_keepdims(scores):
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1)


def whole_sum(scores):
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum()


def transposed(scores):
    s = scores.T                                # "softmax down each column of the transpose"
    e = np.exp(s - s.max(axis=0))
    return e / e.sum(axis=0)                   # ...and never turned back


def column_max(scores):
    e = np.exp(scores - scores.max(axis=0, keepdims=True))   # axis=0 for the shift: each column's maximum
    return e / e.sum(axis=1, keepdims=True)


def column_softmax(scores):
    e = np.exp(scores - scores.max(axis=0, keepdims=True))   # axis=0 throughout: each column sums to 1
    return e / e.sum(axis=0, keepdims=True)


def transposed_at_the_end(scores):
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).T


SOFTMAX_WRONG = {**{k: rowwise(f) for k, f in {
    "divided by the sum": divided_by_the_sum, "not normalised": not_normalised,
    "not exponentiated": not_exponentiated, "divided by the max": divided_by_the_max,
    "no shift": no_shift, "smallest": smallest, "mean": mean, "first": first, "half max": half_max,
    "clipped": clipped, "nan_to_num": nan_to_num}.items()},
    "library": library, "global max": global_max, "max without keepdims": max_without_keepdims,
    "sum without keepdims": sum_without_keepdims, "whole sum": whole_sum, "transposed": transposed,
    "column max": column_max, "column softmax": column_softmax}


def test_a_transposed_result_gets_this_exercises_message_not_a_matrix_product():
    """There is no matrix product in exercise 2 (and no Q or K before lesson 04)."""
    text = _message(check_softmax_row, transposed_at_the_end)
    _names_only(text, "transposed", SOFTMAX)
    assert "Q @ K.T" not in text and "matrix product" not in text, text


@pytest.mark.parametrize("key", sorted(SOFTMAX_WRONG))
def test_softmax_row_mistake_is_named(key):
    _names_only(_message(check_softmax_row, SOFTMAX_WRONG[key]), key, SOFTMAX)


def test_shifted_exponentials_not_divided_are_named_as_such():
    """np.exp(s - max) alone, with no division: the same numbers as dividing by the largest exponential."""
    _names_only(_message(check_softmax_row, rowwise(no_division)), "divided by the max", SOFTMAX)


def test_the_smallest_shift_is_caught_on_the_wide_row_the_reviewers_found():
    """A softmax shifted by its minimum is right on [1000, 999, 998] and NaN on [800, 0]."""
    text = _message(check_softmax_row, rowwise(smallest))
    assert "[800.0, 0.0]" in text and "nan" in text


def test_subtracting_the_second_largest_score_is_named_as_not_the_largest():
    """The second largest (the only score of a one-score row): right on small rows, NaN on [800, 0]; the
    message names what was subtracted as a score other than the largest, not only as the smallest."""
    def softmax_row(scores):
        c = np.sort(scores, axis=1)[:, max(scores.shape[1] - 2, 0)][:, None]
        e = np.exp(scores - c)
        return e / e.sum(axis=1, keepdims=True)

    text = _message(check_softmax_row, softmax_row)
    _names_only(text, "smallest", SOFTMAX)
    assert "also the second largest" in text, text


def test_a_library_softmax_fetched_by_getattr_does_not_pass_the_check_or_the_hidden_test():
    """No library softmax named in the code: the stand-ins put in its place while softmax_row runs see it."""
    def softmax_row(scores):
        g = getattr(sa, "soft" + "max")
        return g(scores, axis=1)

    _names_only(_message(check_softmax_row, softmax_row), "library", SOFTMAX)
    assert not _hidden_passes("l02-softmax-test", softmax_row=softmax_row)
    assert sa.softmax(np.array([0.0, 0.0])).tolist() == [0.5, 0.5]          # put back afterwards


@pytest.mark.parametrize("route", ["torch method", "scipy getattr", "logaddexp getattr"])
def test_other_library_softmaxes_reached_by_getattr_are_seen(route):
    import torch

    def softmax_row(scores):
        if route == "torch method":
            return getattr(torch.as_tensor(scores), "soft" + "max")(dim=1).numpy()
        if route == "scipy getattr":
            return getattr(scipy.special, "soft" + "max")(scores, axis=1)
        return np.exp(scores - getattr(np, "logadd" + "exp").reduce(scores, axis=1, keepdims=True))

    _names_only(_message(check_softmax_row, softmax_row), "library", SOFTMAX)
    assert not _hidden_passes("l02-softmax-test", softmax_row=softmax_row)
    assert torch.as_tensor([0.0, 0.0]).softmax(dim=0).tolist() == [0.5, 0.5]   # put back afterwards
    assert np.logaddexp(0.0, 0.0) == pytest.approx(np.log(2.0))


def test_a_library_softmax_under_another_name_does_not_pass():
    def softmax_row(scores):
        g = sa.softmax
        return g(scores)

    _names_only(_message(check_softmax_row, softmax_row), "library", SOFTMAX)


def test_a_global_alias_of_a_library_softmax_does_not_pass():
    f = scipy.special.softmax

    def softmax_row(scores):
        return f(scores)

    _names_only(_message(check_softmax_row, softmax_row), "library", SOFTMAX)


def test_a_scipy_softmax_is_a_shortcut_that_does_not_pass():
    def softmax_row(scores):
        return scipy.special.softmax(scores)

    _names_only(_message(check_softmax_row, softmax_row), "library", SOFTMAX)


def max_shift(scores):
    shifted = scores - scores.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def log_sum_exp(scores):
    m = np.max(scores, axis=-1)[:, None]
    return np.exp(scores - m - np.log(np.sum(np.exp(scores - m), axis=-1))[:, None])


def one_row(s):
    e = np.exp(s - s.max())
    return e / e.sum()


def row_loop(scores):
    return np.array([one_row(row) for row in scores])   # the learner's own helper, row by row


@pytest.mark.parametrize("answer", [max_shift, log_sum_exp, row_loop])
def test_softmax_row_right_answers(answer, capsys):
    _right_answer_passes(check_softmax_row, answer, capsys)


def test_softmax_row_that_crashes_is_named():
    def softmax_row(scores):
        return np.exp(scores - scores.max(axis=1, keepdims=True)) / undefined_total  # noqa: F821

    assert "raised NameError" in _message(check_softmax_row, softmax_row)


def _learner_cells(*cells: str) -> dict:
    """Run ``cells`` as a notebook would (one namespace named ``__main__``); return that namespace."""
    namespace: dict = {"__name__": "__main__", "np": np, "sa": sa}
    for cell in cells:
        exec(cell, namespace)
    return namespace


RIGHT_SOFTMAX_CELL = """
def softmax_row(s):
    e = np.exp(np.asarray(s, dtype=float) - np.max(s, axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
"""


def test_a_wrapper_around_the_learners_own_softmax_passes():
    """A learner who wraps their own softmax_row (to print or warn) is not using a library softmax."""
    ns = _learner_cells(RIGHT_SOFTMAX_CELL, "_mine = softmax_row\n"
                        "def softmax_row(s):\n    print('debug')\n    return _mine(s)\n")
    check_softmax_row(ns["softmax_row"])


def test_a_wrapper_around_a_library_softmax_under_another_name_is_named():
    ns = _learner_cells("_lib = sa.softmax\ndef helper(s):\n    return _lib(s)\n"
                        "def softmax_row(s):\n    return helper(s)\n")
    _names_only(_message(check_softmax_row, ns["softmax_row"]), "library", SOFTMAX)


def test_the_lessons_own_naive_softmax_shifted_passes():
    """The lesson's cell defines softmax_naive; an answer that shifts the scores and calls it follows the
    lesson's own words (its name holds "softmax", yet it is the learner's, not a library's)."""
    ns = _learner_cells("def softmax_naive(s):\n    e = np.exp(s)\n    return e / e.sum()\n",
                        "def softmax_row(s):\n"
                        "    return np.stack([softmax_naive(r - r.max()) for r in s])\n")
    check_softmax_row(ns["softmax_row"])


def test_the_learners_own_helper_named_softmax_passes_the_check_and_the_hidden_test(capsys):
    """A helper the learner wrote and called softmax is no library softmax."""
    ns = _learner_cells("def softmax(v):\n    e = np.exp(v - v.max())\n    return e / e.sum()\n",
                        "def softmax_row(scores):\n    scores = np.asarray(scores, dtype=float)\n"
                        "    return np.stack([softmax(r) for r in scores])\n")
    _right_answer_passes(check_softmax_row, ns["softmax_row"], capsys)
    assert _hidden_passes("l02-softmax-test", softmax_row=ns["softmax_row"])


def test_a_library_softmax_imported_as_softmax_is_still_named():
    ns = _learner_cells("from scipy.special import softmax\n"
                        "def softmax_row(scores):\n    return softmax(scores, axis=1)\n")
    _names_only(_message(check_softmax_row, ns["softmax_row"]), "library", SOFTMAX)
    assert not _hidden_passes("l02-softmax-test", softmax_row=ns["softmax_row"])


def test_a_library_softmax_stored_under_a_softmax_name_is_named():
    ns = _learner_cells("my_softmax = sa.softmax\ndef softmax_row(s):\n    return my_softmax(s)\n")
    _names_only(_message(check_softmax_row, ns["softmax_row"]), "library", SOFTMAX)


def test_scipy_logsumexp_is_a_library_shift_that_does_not_pass():
    def softmax_row(scores):
        return np.exp(scores - scipy.special.logsumexp(scores, axis=1, keepdims=True))

    _names_only(_message(check_softmax_row, softmax_row), "library", SOFTMAX)


def test_an_unshifted_softmax_in_long_double_does_not_pass():
    """np.longdouble reaches about e^11356 on x86: without a shift it survives e^1000, not e^40000."""
    def softmax_row(scores):
        e = np.exp(np.asarray(scores).astype(np.longdouble))
        return e / e.sum(axis=1, keepdims=True)

    _names_only(_message(check_softmax_row, softmax_row), "long double", SOFTMAX)


@pytest.mark.parametrize("shift", ["min", "mean", "half", "first", "global"])
def test_a_wrong_shift_in_long_double_does_not_pass(shift):
    def softmax_row(scores):
        s = np.asarray(scores).astype(np.longdouble)
        c = {"min": s.min(axis=1, keepdims=True), "mean": s.mean(axis=1, keepdims=True),
             "half": s.max(axis=1, keepdims=True) / 2, "first": s[:, :1], "global": s.max()}[shift]
        e = np.exp(s - c)
        return e / e.sum(axis=1, keepdims=True)

    assert "Correct" not in _message(check_softmax_row, softmax_row)


def test_the_naive_softmax_gets_a_question_not_the_answer():
    text = _message(check_softmax_row, rowwise(no_shift))
    assert "which c" in text and "largest score" not in text, text
    assert "exponentiates the scores as they are" in text and "as large as 1" not in text, text


def test_numpy_logaddexp_is_a_library_shift_that_does_not_pass():
    def softmax_row(scores):
        return np.exp(scores - np.logaddexp.reduce(scores, axis=1, keepdims=True))

    _names_only(_message(check_softmax_row, softmax_row), "library", SOFTMAX)


def test_softmax_praise_says_what_was_checked(capsys):
    check_softmax_row(max_shift)
    out = capsys.readouterr().out
    assert out.startswith("Correct") and "its own maximum" not in out


# ---------------------------------------------------------------- the hidden tests agree with the checks
def _hidden_passes(grade_id: str, **answer) -> bool:
    return hidden_test_passes("02_basic_self_attention", grade_id, **answer)


def _torch_softmax(scores):
    import torch

    return torch.softmax(torch.as_tensor(scores), dim=1).numpy()


@pytest.mark.parametrize("answer", [
    lambda scores: sa.softmax(scores, axis=1),
    lambda scores: scipy.special.softmax(scores, axis=1),
    _torch_softmax,
    lambda scores: np.exp(scores - np.logaddexp.reduce(scores, axis=1, keepdims=True)),
], ids=["sa", "scipy", "torch", "logaddexp"])
def test_the_hidden_softmax_test_refuses_library_softmaxes(answer):
    assert not _hidden_passes("l02-softmax-test", softmax_row=answer)


def test_the_hidden_softmax_test_passes_a_right_answer():
    assert _hidden_passes("l02-softmax-test", softmax_row=max_shift)


def test_a_shift_by_the_largest_absolute_score_is_named_as_too_far_down():
    def softmax_row(scores):
        e = np.exp(scores - np.abs(scores).max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    text = _message(check_softmax_row, softmax_row)
    assert "far below 0" in text and "largest |score|" in text and "too little" not in text, text
    with np.errstate(all="ignore"):
        assert not _hidden_passes("l02-softmax-test", softmax_row=softmax_row)


def test_a_shift_that_only_guards_against_overflow_is_named_by_the_shift_used():
    """np.maximum(max, 0): the row [-1000, -1001] is shifted by 0, not pushed further down."""
    def softmax_row(scores):
        m = np.maximum(scores.max(axis=1, keepdims=True), 0)
        e = np.exp(scores - m)
        return e / e.sum(axis=1, keepdims=True)

    text = _message(check_softmax_row, softmax_row)
    assert "np.maximum(scores.max(axis=1, keepdims=True), 0)" in text and "largest |score|" not in text, text
    with np.errstate(all="ignore"):
        assert not _hidden_passes("l02-softmax-test", softmax_row=softmax_row)


# ---------------------------------------------------------------- exercise 3: one-sided attention
ONE_SIDED = {
    "equal": "equal row sums",
    "swapped": "the roles are swapped",
    "brute force": "beyond 2",
    "row 1": "word 1 gives word 3 only",
    "row 3": "word 3 still gives word 1",
    "points away": "because x_1 points away from x_3",
    "zero vector": "is the zero vector",
}
ONE_SIDED_WRONG = {
    "equal": ([0.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]),        # the same word twice: symmetric rows
    "swapped": ([0.0, 2.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]),      # the long word first
    "brute force": ([0.0, 1.0, 0.0, 0.0], [0.0, 50.0, 0.0, 0.0]),  # the shortcut: a huge word 3
    "row 1": ([0.5, 0.5, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]),        # word 1 too close to bank
    "row 3": ([0.0, 1.0, 0.0, 0.0], [0.0, 1.6, 0.0, 0.0]),        # word 3 not long enough
    "points away": ([0.0, 0.0, 0.0, -1.0], [0.0, 0.0, 0.0, 2.0]),  # omega_13 = -2 < 0
    "zero vector": ([0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]),   # x_3 = 0: omega_13 = 0
}


def test_x_3_at_the_bound_is_told_the_other_lever():
    """x_3 already reaches 2: the message names a shorter x_1 too, not only a larger |x_3|^2."""
    text = _message(lambda a: check_one_sided(*a), ([0.0, 1.5, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]))
    _names_only(text, "row 3", ONE_SIDED)
    assert "already reaches the bound of 2 on one coordinate" in text and "a shorter x_1" in text, text
    assert not _hidden_passes("l02-asym-test", x_1=[0.0, 1.5, 0.0, 0.0], x_3=[0.0, 2.0, 0.0, 0.0])


@pytest.mark.parametrize("key", sorted(ONE_SIDED_WRONG))
def test_one_sided_mistake_is_named(key):
    _names_only(_message(lambda a: check_one_sided(*a), ONE_SIDED_WRONG[key]), key, ONE_SIDED)


@pytest.mark.parametrize("key", sorted(ONE_SIDED_WRONG))
def test_the_hidden_one_sided_test_refuses_what_the_check_refuses(key):
    x_1, x_3 = ONE_SIDED_WRONG[key]
    assert not _hidden_passes("l02-asym-test", x_1=x_1, x_3=x_3)


RIGHT_ONE_SIDED = [([0.0, 1.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]),     # along nature
                   ([-0.5, 1.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]),    # word 1 turned away from bank
                   (np.array([0.0, 0.0, 1.0, 0.0]), np.array([0.0, 0.0, 2.0, 0.0]))]   # food axis


@pytest.mark.parametrize("answer", RIGHT_ONE_SIDED)
def test_one_sided_right_answers_pass_the_check_and_the_hidden_test(answer, capsys):
    _right_answer_passes(lambda a: check_one_sided(*a), answer, capsys)
    assert _hidden_passes("l02-asym-test", x_1=answer[0], x_3=answer[1])


@pytest.mark.parametrize(("answer", "said"), [((None, None), "has no value yet"),
                                              (([0.0, 1.0], [0.0, 2.0, 0.0, 0.0]), "has shape (2,)"),
                                              (([0.0, np.nan, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]), "not finite"),
                                              (("river", [0.0, 2.0, 0.0, 0.0]), "should be 4 numbers")])
def test_one_sided_bad_input_is_named(answer, said):
    text = _message(lambda a: check_one_sided(*a), answer)
    assert said in text and not [k for k, p in ONE_SIDED.items() if p in text], text
