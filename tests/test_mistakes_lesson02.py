"""Lesson 02's checks name each typical mistake, and only that one, when a learner makes it.

Every wrong answer below is written as a learner would write it. The message must contain the phrase of its
own mistake and none of the other mistakes' phrases; two different right answers get ``Correct:``; a shortcut
that skips what the exercise teaches does not pass.
"""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import hidden_test_passes
from mistakes import message as _message
from mistakes import names_only as _names_only
from mistakes import right_answer_passes as _right_answer_passes

import selfattention as sa
from selfattention.checks import check_bank_mix, check_one_sided, check_river_row

# ---------------------------------------------------------------- exercise 2: put bank' where you want it
RBF = np.array([[0.1, 1.0, 0.0, 0.0], [0.7, 0.7, 0.0, 0.0], [0.2, 0.8, 0.0, 0.0]])   # river, bank, flows
TARGET = np.array([0.25, 0.88, 0.0, 0.0])
MIX = {
    "per cent": "they are per cent",
    "order": "the right weights in the wrong order",
    "no sum equation": "the target's coordinates, but your weights sum to",
    "negative": "is negative: a share is never below 0",
    "transposed": "your M has one row per word",
    "bank's own softmax": "the softmax of bank's own scores",
    "sum not 1": "and they sum to",
    "misses the target": "Your weights sum to 1, so that equation holds",
    "a point": "like a point z",
    "rescaled afterwards": "Rescaling them to sum to 1 moved bank' off the target",
    "swapped coordinates": "finance and nature swapped",
}
MIX_WRONG = {
    "per cent": [50.0, 20.0, 30.0],                                  # shares written as per cent
    "order": [0.2, 0.5, 0.3],                                        # bank's weight first
    "no sum equation": np.linalg.lstsq(RBF.T, TARGET, rcond=None)[0],   # only the coordinates: sums to 1.007
    "negative": [1.2, -0.5, 0.3],                                    # sums to 1, misses, one share below 0
    "transposed": np.linalg.solve(np.column_stack([RBF[:, 0], RBF[:, 1], np.ones(3)]), [0.25, 0.88, 1.0]),
    "bank's own softmax": sa.softmax(RBF @ RBF[1]),                  # section 4's rule, not the target's
    "sum not 1": [0.25, 0.88, 0.0],                                  # the target's coordinates as weights
    "misses the target": [1 / 3, 1 / 3, 1 / 3],                      # equal shares: the mean of the three
    "a point": [0.25, 0.88, 0.0, 0.0],                               # the target itself
    "rescaled afterwards": (lambda w: w / w.sum())(np.linalg.lstsq(RBF.T, TARGET, rcond=None)[0]),
    "swapped coordinates": np.linalg.solve(np.vstack([RBF[:, 0], RBF[:, 1], np.ones(3)]), [0.88, 0.25, 1.0]),
}


@pytest.mark.parametrize("key", sorted(MIX_WRONG))
def test_bank_mix_mistake_is_named(key):
    _names_only(_message(check_bank_mix, MIX_WRONG[key]), key, MIX)


@pytest.mark.parametrize("key", sorted(MIX_WRONG))
def test_the_hidden_mix_test_refuses_what_the_check_refuses(key):
    try:
        passes = _hidden_passes("l02-mix-test", alpha_mix=MIX_WRONG[key])
    except ValueError:                                   # 4 numbers do not reshape to (3,)
        passes = False
    assert not passes


def test_bank_mix_message_is_computed_from_the_weights_returned():
    text = _message(check_bank_mix, [1 / 3, 1 / 3, 1 / 3])
    assert "[0.333, 0.833, 0.0, 0.0]" in text and "+0.083 in finance" in text, text
    assert "0.5" not in text and "0.2," not in text, text   # the answer is not handed over


def test_bank_mix_without_the_sum_sums_close_to_1_and_is_still_named():
    """The two-coordinate least-squares weights sum to 1.0069: close, yet not shares."""
    text = _message(check_bank_mix, MIX_WRONG["no sum equation"])
    assert "sum to 1.0069" in text, text


def test_bank_mix_rescaled_afterwards_names_the_divisor_and_the_shrink():
    """The two coordinate equations' least-squares weights (sum 1.0069) divided by their sum: the weights were
    divided by 1.0069, so bank' lands at 0.9932 times the target, not the reverse."""
    text = _message(check_bank_mix, [0.4646, 0.1895, 0.3459])
    _names_only(text, "rescaled afterwards", MIX)
    assert "divided by 1.007" in text and "to 0.993" in text, text
    assert not _hidden_passes("l02-mix-test", alpha_mix=[0.4646, 0.1895, 0.3459])


def test_bank_mix_as_strings_fails_the_check_and_the_hidden_test():
    """Quoted numbers: the check says they are text, and the hidden test refuses them too."""
    answer = ["0.5", "0.2", "0.3"]
    assert "is text (a string)" in _message(check_bank_mix, answer)
    assert not _hidden_passes("l02-mix-test", alpha_mix=answer)


RIGHT_MIX = [
    np.linalg.solve(np.vstack([RBF[:, 0], RBF[:, 1], np.ones(3)]), [0.25, 0.88, 1.0]),   # the derivation
    [0.5, 0.2, 0.3],                                                                    # solved by hand
    np.linalg.lstsq(np.vstack([RBF.T, np.ones(3)]), [0.25, 0.88, 0.0, 0.0, 1.0], rcond=None)[0],   # 5 rows
]


@pytest.mark.parametrize("answer", RIGHT_MIX)
def test_bank_mix_right_answers_pass_the_check_and_the_hidden_test(answer, capsys):
    _right_answer_passes(check_bank_mix, answer, capsys)
    assert _hidden_passes("l02-mix-test", alpha_mix=answer)


def test_bank_mix_success_says_dot_product_scores_cannot_give_these_weights(capsys):
    check_bank_mix([0.5, 0.2, 0.3], np.log(0.4), 0.21)
    text = capsys.readouterr().out
    river, own, flows = RBF @ RBF[1]   # bank's x.x scores: its own is above river's
    assert own > river and "0.916 below its score with river" in text and "+0.21" in text, text
    assert "the wrong sign" in text, text


@pytest.mark.parametrize(("answer", "said"), [(None, "has no value yet"), ([0.5, 0.5], "has shape (2,)"),
                                              ("0.5 0.2 0.3", "is text (a string)"),
                                              ([0.5, np.nan, 0.3], "NaN or infinite")])
def test_bank_mix_bad_input_is_named(answer, said):
    text = _message(check_bank_mix, answer)
    assert said in text and not [k for k, p in MIX.items() if p in text], text


# ---------------------------------------------------------------- the hidden tests agree with the checks
RIGHT_GAP = float(np.log(0.2 / 0.5))   # omega_bank - omega_river that [0.5, 0.2, 0.3] needs
PLAIN_GAP = float(RBF[1] @ RBF[1] - RBF[1] @ RBF[0])   # the gap plain scores x_2 . x_j give: +0.21


def _ratio_s(x_1, x_3) -> float:
    """S_3 / S_1 for the sentence x_1 bank x_3 (toy bank), the row sums of e^omega; nan if not 4 numbers."""
    try:
        X = np.stack([np.asarray(x_1, dtype=float).reshape(4), [0.7, 0.7, 0.0, 0.0],
                      np.asarray(x_3, dtype=float).reshape(4)])
    except (TypeError, ValueError):
        return float("nan")
    with np.errstate(over="ignore", invalid="ignore"):   # a brute-force design overflows: no ratio then
        S = np.exp(X @ X.T).sum(axis=1)
        return float(S[2] / S[0])


def _sums(x_1, x_3) -> tuple[float, float]:
    """(S_1, S_3), the row sums of e^omega for the sentence x_1 bank x_3 (toy bank); nan if not 4 numbers."""
    try:
        X = np.stack([np.asarray(x_1, dtype=float).reshape(4), [0.7, 0.7, 0.0, 0.0],
                      np.asarray(x_3, dtype=float).reshape(4)])
    except (TypeError, ValueError):
        return float("nan"), float("nan")
    with np.errstate(over="ignore", invalid="ignore"):
        S = np.exp(X @ X.T).sum(axis=1)
        return float(S[0]), float(S[2])


def _hidden_passes(grade_id: str, **answer) -> bool:
    if grade_id == "l02-mix-test":   # the second part right, unless the test gives it
        answer = {"gap_needed": RIGHT_GAP, "gap_plain": PLAIN_GAP, **answer}
    if grade_id == "l02-asym-test":   # the derivation right for the design given, unless the test gives it
        S_1, S_3 = _sums(answer["x_1"], answer["x_3"])
        answer = {"ratio_S": _ratio_s(answer["x_1"], answer["x_3"]), "S_1": S_1, "S_3": S_3, **answer}
    return hidden_test_passes("02_basic_self_attention", grade_id, **answer)


# ---------------------------------------------------------------- exercise 2, second part: the gaps
GAP = {
    "sign": "the sign is flipped",
    "dot gap": "the gap plain dot products give",
    "weight difference": "a difference of weights",
    "ratio": "the ratio of the two weights itself",
    "log10": "a base-10 log",
    "other": "it does not give these weights",
    "close": "close, but not close enough",
}
DOTS = RBF @ RBF[1]   # bank's scores: river, bank, flows
GAP_WRONG = {   # as a learner would write them
    "sign": float(np.log(0.5 / 0.2)),                 # river's minus bank's
    "dot gap": float(DOTS[1] - DOTS[0]),              # what x.x give, not what the weights need
    "weight difference": 0.2 - 0.5,                   # no log
    "ratio": 0.2 / 0.5,                               # e^gap, not the gap
    "log10": float(np.log10(0.2 / 0.5)),
    "other": 1.0,
    "close": -0.91,                                   # ln 0.4 rounded by hand to two decimals, badly
}


def _mix_all(args):
    return check_bank_mix([0.5, 0.2, 0.3], *args)


@pytest.mark.parametrize("key", sorted(GAP_WRONG))
def test_gap_mistake_is_named(key):
    _names_only(_message(_mix_all, (GAP_WRONG[key], PLAIN_GAP)), key, GAP)
    assert not _hidden_passes("l02-mix-test", alpha_mix=[0.5, 0.2, 0.3], gap_needed=GAP_WRONG[key])


PLAIN = {
    "plain sign": "the sign is flipped: that is bank's score with river minus its own",
    "needed again": "that is gap_needed again",
    "flows": "its score with flows (word 3)",
    "plain ratio": "a ratio of the two scores",
    "plain weights": "a difference of the weights that plain scores give",
    "plain other": "it is not x_2 . x_2 - x_2 . x_1",
}
_PLAIN_MIX = sa.softmax(DOTS)
PLAIN_WRONG = {   # as a learner would write them
    "plain sign": -PLAIN_GAP,                                   # river's score first
    "needed again": RIGHT_GAP,                                  # the first answer copied
    "flows": float(DOTS[1] - DOTS[2]),                          # word 3 instead of word 1
    "plain ratio": float(DOTS[1] / DOTS[0]),                    # a ratio, not a difference
    "plain weights": float(_PLAIN_MIX[1] - _PLAIN_MIX[0]),      # softmax first, then the difference
    "plain other": 1.0,
}


@pytest.mark.parametrize("key", sorted(PLAIN_WRONG))
def test_plain_gap_mistake_is_named_without_the_value(key):
    text = _message(_mix_all, (RIGHT_GAP, PLAIN_WRONG[key]))
    _names_only(text, key, PLAIN)
    assert "+0.21" not in text and " 0.21" not in text.replace(f"= {PLAIN_WRONG[key]:.4g}", ""), text
    assert not _hidden_passes("l02-mix-test", alpha_mix=[0.5, 0.2, 0.3], gap_plain=PLAIN_WRONG[key])


def test_the_dot_gap_as_gap_needed_does_not_give_the_plain_gap():
    text = _message(_mix_all, (PLAIN_GAP, PLAIN_GAP))
    assert "the gap plain dot products give" in text and "0.21" not in text.replace("= 0.21:", ""), text


def test_plain_gap_success_sets_the_two_gaps_side_by_side(capsys):
    check_bank_mix([0.5, 0.2, 0.3], RIGHT_GAP, PLAIN_GAP)
    out = capsys.readouterr().out
    assert "0.916 below" in out and "+0.21" in out and "the wrong sign" in out, out


@pytest.mark.parametrize(("args", "said"), [((None, PLAIN_GAP), "gap_needed has no value yet"),
                                            (("-0.92", PLAIN_GAP), "gap_needed is text"),
                                            (([1.0, 2.0], PLAIN_GAP), "gap_needed has shape (2,)"),
                                            ((RIGHT_GAP, None), "gap_plain has no value yet"),
                                            ((RIGHT_GAP, "0.21"), "gap_plain is text"),
                                            ((RIGHT_GAP, False), "not a yes or no"),
                                            ((RIGHT_GAP, [1.0, 2.0]), "gap_plain has shape (2,)")])
def test_second_part_bad_input_is_named(args, said):
    text = _message(_mix_all, args)
    assert said in text and not [k for k, p in {**GAP, **PLAIN}.items() if p in text], text


@pytest.mark.parametrize("answer", [(RIGHT_GAP, PLAIN_GAP), (np.log(0.2) - np.log(0.5), DOTS[1] - DOTS[0]),
                                    (np.array([RIGHT_GAP]), np.array([0.98 - 0.77]))])
def test_second_part_right_answers_pass_the_check_and_the_hidden_test(answer, capsys):
    _right_answer_passes(_mix_all, answer, capsys)
    assert _hidden_passes("l02-mix-test", alpha_mix=[0.5, 0.2, 0.3], gap_needed=answer[0],
                          gap_plain=answer[1])


def test_the_weights_alone_do_not_pass_the_hidden_test():
    """alpha_mix right, the second part left blank: the check asks for it and the hidden test refuses."""
    assert "gap_needed has no value yet" in _message(_mix_all, (None, None))
    assert not _hidden_passes("l02-mix-test", alpha_mix=[0.5, 0.2, 0.3], gap_needed=None, gap_plain=None)


# ---------------------------------------------------------------- exercise 3: one-sided attention
ONE_SIDED = {
    "equal": "equal row sums",
    "swapped": "the roles are swapped",
    "brute force": "longer than 2",
    "row 1": "word 1 gives word 3 only",
    "row 3": "word 3 still gives word 1",
    "points away": "because x_1 points away from x_3",
    "zero vector": "the zero vector, so omega_13",
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


def test_two_zero_vectors_are_told_the_zero_vector_not_equal_sums():
    """x_1 = x_3 = 0 makes the rows equal too, but the zero length is what to fix: that message."""
    zero = [0.0, 0.0, 0.0, 0.0]
    text = _message(lambda a: check_one_sided(*a), (zero, zero))
    _names_only(text, "zero vector", ONE_SIDED)
    assert "x_1 and x_3 are the zero vector" in text, text
    assert not _hidden_passes("l02-asym-test", x_1=zero, x_3=zero)


def test_x_3_at_the_bound_is_told_the_other_lever():
    """x_3 already reaches 2: the message names a shorter x_1 too, not only a larger |x_3|^2."""
    text = _message(lambda a: check_one_sided(*a), ([0.0, 1.5, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]))
    _names_only(text, "row 3", ONE_SIDED)
    assert "already has the largest length allowed, 2" in text and "a shorter x_1" in text, text
    assert not _hidden_passes("l02-asym-test", x_1=[0.0, 1.5, 0.0, 0.0], x_3=[0.0, 2.0, 0.0, 0.0])


def test_every_coordinate_at_2_is_brute_force_too():
    """x_3 = [2, 2, 2, 2] keeps each coordinate within 2 but has length 4 (own score 16): the shortcut the
    length bound shuts, refused by the check and the hidden test."""
    x_1, x_3 = [0.0, 1.0, 0.0, 0.0], [2.0, 2.0, 2.0, 2.0]
    text = _message(lambda a: check_one_sided(*a), (x_1, x_3))
    _names_only(text, "brute force", ONE_SIDED)
    assert "x_3 = [2.0, 2.0, 2.0, 2.0] has length 4" in text, text
    assert not _hidden_passes("l02-asym-test", x_1=x_1, x_3=x_3)


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


# ---------------------------------------------------------------- more mistakes, each named for what it is
def test_orthogonal_words_are_told_omega_13_is_zero_not_equal_sums():
    """x_1 across x_3: omega_13 = 0 is the blocker (e^0 against word 1's own e^4), not the equal row sums."""
    x_1, x_3 = [2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]
    text = _message(lambda a: check_one_sided(*a), (x_1, x_3))
    assert "omega_13 = x_1 . x_3 = 0.00" in text and "right angles" in text and "54.60" in text, text
    assert "equal row sums" not in text, text
    assert not _hidden_passes("l02-asym-test", x_1=x_1, x_3=x_3)


def test_both_bars_missed_names_both_and_the_one_fix():
    """x_3 only a little longer than x_1: row 1 and row 3 both miss, and a longer x_3 fixes both."""
    x_1, x_3 = [0.0, 1.0, 0.0, 0.0], [0.0, 1.5, 0.0, 0.0]
    text = _message(lambda a: check_one_sided(*a), (x_1, x_3))
    assert "both miss" in text and "only 0.486" in text and "word 1 0.266" in text, text
    assert "a longer x_3" in text, text
    assert not _hidden_passes("l02-asym-test", x_1=x_1, x_3=x_3)


def test_both_bars_missed_without_a_longer_x_3_fix_says_what_differs():
    """x_1 nearly as long as x_3: no stretch of x_3 within the bound helps, so the message names the sums."""
    x_1, x_3 = [0.0, 2.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]
    text = _message(lambda a: check_one_sided(*a), (x_1, x_3))
    assert "equal row sums" in text, text          # the same word twice: equal rows
    x_1, x_3 = [0.0, 1.5, 0.0, 0.0], [0.0, 1.6, 0.0, 0.0]   # stretched to 2, x_3 still leaves alpha_31 0.255
    text = _message(lambda a: check_one_sided(*a), (x_1, x_3))
    assert "both miss" in text and "a longer x_3" not in text and "S_3 / S_1" in text, text


@pytest.mark.parametrize(("check", "grade_id", "names", "answer"), [
    (check_bank_mix, "l02-mix-test", ("alpha_mix",), np.array([[0.5], [0.2], [0.3]])),          # a column
    (lambda x: check_one_sided(x, [0.0, 2.0, 0.0, 0.0]), "l02-asym-test", ("x_1",),
     np.array([[0.0], [1.0], [0.0], [0.0]])),
])
def test_a_row_or_column_passes_the_check_and_the_hidden_test(check, grade_id, names, answer, capsys):
    """np.linalg.solve(M, b) with b a column returns shape (3, 1): its numbers are right, and the visible
    check and the hidden test (which reshapes) agree that it passes."""
    _right_answer_passes(check, answer, capsys)
    given = {"alpha_mix": None,
             "x_1": [0.0, 1.0, 0.0, 0.0], "x_3": [0.0, 2.0, 0.0, 0.0]}
    given[names[0]] = answer
    keys = {"l02-mix-test": ["alpha_mix"],
            "l02-asym-test": ["x_1", "x_3"]}[grade_id]
    assert _hidden_passes(grade_id, **{k: given[k] for k in keys})


def test_a_wrong_column_is_still_named():
    text = _message(check_bank_mix, np.array([[0.2], [0.5], [0.3]]))
    _names_only(text, "order", MIX)


# ---------------------------------------------------------------- exercise 1: bank doubled, river's ratio
# *the river flows near a bank*, toy table; river is word 2 (index 1), bank word 6 (index 5).
TRFNAB = np.array([[0.2, 0.1, 0, 0.1], [0.1, 1.0, 0, 0], [0.2, 0.8, 0, 0], [0, 0.3, 0, 0.1],
                   [0.1, 0.1, 0.1, 0.1], [0.7, 0.7, 0, 0]])
OWN, BANK = TRFNAB[1] @ TRFNAB[1], TRFNAB[1] @ TRFNAB[5]   # 1.01 and 0.77
C_TIE = float(OWN / BANK)                                     # x_6 -> c x_6 at which alpha_26 = alpha_22


def _hidden_row(**changed) -> bool:
    answer = {"c_tie": C_TIE, "top_after": "bank", **changed}
    return hidden_test_passes("02_basic_self_attention", "l02-elsewhere-test", **answer)


_X2 = TRFNAB.copy()
_X2[5] *= 2
TIE_MISTAKES = {
    "inverted": "the factor is inverted",
    "squared": "you let bank's score with river grow as c^2",
    "lengths only": "a ratio of lengths",
    "doubled ratio": "a ratio of weights, not the factor c",
    "score gap": "a score gap, not a factor",
    "doubling": "c = 2 is the doubling of the prediction",
    "other": "at this c the two weights are not equal",
    "off by one": "a row is off by one",
    "rounded": "close: you solved it, but the factor is rounded too far",
    "no lengths": "that is 1 / cos(theta_26): the lengths are left out",
    "bank's own": "that uses bank's own score omega_66",
}
TIE_WRONG = {   # as a learner would write them
    "inverted": float(BANK / OWN),                                    # omega_26 / omega_22
    "squared": float(np.sqrt(OWN / BANK)),                            # c^2 omega_26 = omega_22
    "lengths only": float(np.linalg.norm(TRFNAB[1]) / np.linalg.norm(TRFNAB[5])),   # no cosine
    "doubled ratio": float(np.exp(2 * BANK - OWN)),                   # the weights' ratio at c = 2
    "score gap": float(OWN - BANK),                                   # a difference, not a factor
    "doubling": 2.0,                                                  # the prediction's c
    "other": 3.0,
    "rounded": round(float(OWN / BANK), 1),                           # solved, rounded by hand to 1.3
    "off by one": float(TRFNAB[2] @ TRFNAB[2] / (TRFNAB[2] @ TRFNAB[5])),   # river read as X_r[2]
    "no lengths": float(np.linalg.norm(TRFNAB[1]) * np.linalg.norm(TRFNAB[5]) / BANK),   # 1 / cos, 1.292
    "bank's own": float(TRFNAB[5] @ TRFNAB[5] / BANK),                # omega_66 / omega_26, 1.273
}
OFF_BY_ONE = [(2, 5), (1, 4), (2, 4)]   # (river's row, bank's row) as read with 1-based numbers in mind


@pytest.mark.parametrize(("river", "bank"), OFF_BY_ONE)
def test_every_off_by_one_row_is_named(river, bank):
    """Word 2 read as X_r[2] (flows) or word 6 as X_r[4] ("a"): the message names 0-based indexing."""
    wrong = float(TRFNAB[river] @ TRFNAB[river] / (TRFNAB[river] @ TRFNAB[bank]))
    _names_only(_message(check_river_row, wrong), "off by one", TIE_MISTAKES)
    assert not _hidden_row(c_tie=wrong)


@pytest.mark.parametrize("key", sorted(TIE_WRONG))
def test_tie_mistake_is_named(key):
    _names_only(_message(check_river_row, TIE_WRONG[key]), key, TIE_MISTAKES)
    assert not _hidden_row(c_tie=TIE_WRONG[key])


def test_a_factor_rounded_by_hand_to_2_figures_is_told_to_round_less(capsys):
    """c_tie = 1.3 (1.312 rounded to 2 figures) is a rounding slip, not a wrong method; 1.31, what 1.01 / 0.77
    gives by hand to 3 figures, passes the check and the hidden test, within 0.5 per cent."""
    text = _message(check_river_row, 1.3)
    _names_only(text, "rounded", TIE_MISTAKES)
    assert "3 significant figures" in text and not _hidden_row(c_tie=1.3)
    check_river_row(1.31, "bank")
    assert "Correct:" in capsys.readouterr().out
    assert _hidden_row(c_tie=1.31) and _hidden_row(c_tie=1.312)


def test_tie_message_never_gives_the_factor():
    """A wrong factor's message names the mistake, never the right value."""
    for wrong in TIE_WRONG.values():
        text = _message(check_river_row, wrong)
        assert f"{C_TIE:.3f}" not in text and f"{C_TIE:.2f}" not in text, text


RIGHT_TIE = [
    C_TIE,                                                                        # derived from two scores
    float(np.linalg.norm(TRFNAB[1]) / (np.linalg.norm(TRFNAB[5]) * (BANK / (np.linalg.norm(TRFNAB[1])
          * np.linalg.norm(TRFNAB[5]))))),                                        # |c x_6| cos = |x_2|
    np.array([1.01 / 0.77]),                                                      # by hand, in an array
]


@pytest.mark.parametrize("answer", RIGHT_TIE)
def test_tie_right_answers_pass_the_check_and_the_hidden_test(answer, capsys):
    _right_answer_passes(check_river_row, answer, capsys)
    assert _hidden_row(c_tie=answer)


@pytest.mark.parametrize(("answer", "said"), [(None, "c_tie has no value yet"),
                                              ("1.3", "is text (a string)"),
                                              ([1.0, 2.0], "it should be one number"),
                                              (np.inf, "use an ordinary finite number")])
def test_tie_bad_input_is_named(answer, said):
    text = _message(check_river_row, answer)
    assert said in text and not [k for k, p in TIE_MISTAKES.items() if p in text], text


def test_tie_success_answers_the_prediction(capsys):
    """The success line gives river's top weights before and after the doubling, and why bank wins."""
    check_river_row(C_TIE)
    out = capsys.readouterr().out
    before, after = sa.softmax(TRFNAB @ TRFNAB[1]), sa.softmax(_X2 @ _X2[1])
    assert np.argsort(-before)[:2].tolist() == [1, 2] and np.argsort(-after)[:2].tolist() == [5, 1]
    assert "before, river 0.255, flows 0.211" in out and "bank 0.351, river 0.207" in out, out
    assert "|2x_6| cos(theta_26) = 1.53 > |x_2| = 1.00" in out, out


def test_row_1_near_miss_names_the_length_lever():
    """x_1 = [0.3, 0, 0, 0], x_3 = [2, 0, 0, 0]: alpha_13 = 0.439 just misses; the message says a slightly
    longer x_1 fixes it (a shorter x_3 would lower omega_13 too, so it is not named)."""
    x_1, x_3 = [0.3, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]
    text = _message(lambda a: check_one_sided(*a), (x_1, x_3))
    _names_only(text, "row 1", ONE_SIDED)
    assert "only 0.439" in text and "a slightly longer x_1" in text and "shorter x_3" not in text, text
    assert not _hidden_passes("l02-asym-test", x_1=x_1, x_3=x_3)
    assert _hidden_passes("l02-asym-test", x_1=[0.6, 0.0, 0.0, 0.0], x_3=x_3)   # the lever named works


TOP_AFTER_MISTAKES = {
    "river": "river leads before the doubling",
    "unchanged": "does not change when bank doubles",
    "not in the sentence": "it is not a word of",
}
TOP_AFTER_WRONG = {"river": "river", "unchanged": "flows", "not in the sentence": "money"}


@pytest.mark.parametrize("key", sorted(TOP_AFTER_WRONG))
def test_top_after_mistake_is_named(key):
    """The prediction is graded: each wrong word gets its own message, and the hidden test refuses it."""
    text = _message(lambda a: check_river_row(C_TIE, a), TOP_AFTER_WRONG[key])
    _names_only(text, key, TOP_AFTER_MISTAKES)
    assert not _hidden_row(top_after=TOP_AFTER_WRONG[key])


@pytest.mark.parametrize(("answer", "said"), [(None, "top_after has no value yet"),
                                              (5, "top_after is an int")])
def test_top_after_bad_input_is_named(answer, said):
    text = _message(lambda a: check_river_row(C_TIE, a), answer)
    assert said in text and not [k for k, p in TOP_AFTER_MISTAKES.items() if p in text], text


@pytest.mark.parametrize("answer", ["bank", " Bank "])
def test_top_after_right_answers_pass(answer, capsys):
    check_river_row(C_TIE, answer)
    assert "Correct:" in capsys.readouterr().out
    assert _hidden_row(top_after=answer)


def test_tie_success_does_not_repeat_the_general_rule(capsys):
    """The rule |x_j| cos(theta_ij) > |x_i| is stated once, in the lesson's section 4, not again here."""
    check_river_row(C_TIE)
    assert "|x_j| cos(theta_ij) > |x_i|" not in capsys.readouterr().out


# ---------------------------------------------------------------- exercise 2: the gap, one tolerance
def test_weights_a_hair_off_with_their_own_log_ratio_pass_both():
    """[0.5005, 0.1995, 0.3] lands within 1e-3 of the target; its own log-ratio, -0.9198, and a hand-rounded
    -0.92 are within the shared tolerance of ln 0.4: the check and the hidden test both pass them."""
    mix = [0.5005, 0.1995, 0.3]
    for gap in (float(np.log(0.1995 / 0.5005)), -0.92):
        check_bank_mix(mix, gap, PLAIN_GAP)
        assert _hidden_passes("l02-mix-test", alpha_mix=mix, gap_needed=gap)


def test_a_type_is_named_with_its_article():
    assert "gap_plain is True, a bool:" in _message(_mix_all, (RIGHT_GAP, True))


# ---------------------------------------------------------------- exercise 3: the row sums' ratio
X_1, X_3 = [0.0, 1.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]   # a design that meets both bars
_X3 = np.stack([X_1, [0.7, 0.7, 0.0, 0.0], X_3])
_O3 = _X3 @ _X3.T
RATIO_S = _ratio_s(X_1, X_3)
RATIO_S_MISTAKES = {
    "inverted": "the ratio is inverted",
    "own scores": "a ratio of own scores",
    "own terms": "only the own terms",
    "score sums": "a ratio of score sums",
    "other": "it is not S_3 / S_1 for your x_1 and x_3",
    "rounded": "close: the right ratio, rounded too far",
    "shifted sums": "row sums of shifted scores",
    "no bank term": "bank's term is left out",
    "lengths or score sums": "both |x_3| / |x_1| and the score sums' ratio",
    "lengths": "a ratio of lengths, |x_3| / |x_1|",
}
RATIO_S_WRONG = {   # as a learner would write them
    "inverted": 1 / RATIO_S,                                         # S_1 / S_3
    "own scores": float(_O3[2, 2] / _O3[0, 0]),                      # |x_3|^2 / |x_1|^2
    "own terms": float(np.exp(_O3[2, 2] - _O3[0, 0])),               # e^omega_33 / e^omega_11 only
    "other": 3.0,                                                    # a row number, as asked before
    "rounded": round(RATIO_S, 1),                                    # right, rounded by hand to 5.4
    "shifted sums": float(np.exp(_O3[2] - _O3[2].max()).sum()                # each row shifted by its max:
                          / np.exp(_O3[0] - _O3[0].max()).sum()),            # 0.737
    "no bank term": float(np.exp(_O3[2, [0, 2]]).sum() / np.exp(_O3[0, [0, 2]]).sum()),   # 6.13
    "lengths or score sums": float(np.linalg.norm(X_3) / np.linalg.norm(X_1)),   # 2 = 7.4 / 3.7 here
}
# x_3 along x_1 makes |x_3| / |x_1| equal the score sums' ratio; a design off that line tells them apart.
RATIO_S_ELSEWHERE = ([0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.6, 1.2])



def _one_sided_ratio(ratio_S):
    return check_one_sided(X_1, X_3, ratio_S)


@pytest.mark.parametrize("key", sorted(RATIO_S_WRONG))
def test_ratio_s_mistake_is_named_without_the_value(key):
    """The design right, the derivation wrong: the message names it, never gives S_3 / S_1, and the hidden
    test refuses it."""
    text = _message(_one_sided_ratio, RATIO_S_WRONG[key])
    _names_only(text, key, RATIO_S_MISTAKES)
    assert f"{RATIO_S:.2f}" not in text, text
    assert not _hidden_passes("l02-asym-test", x_1=X_1, x_3=X_3, ratio_S=RATIO_S_WRONG[key])


@pytest.mark.parametrize(("ratio_S", "said"), [(None, "ratio_S has no value yet"),
                                               ("3", "is text (a string)"),
                                               (True, "a bool: it should be a number"),
                                               ([1.0, 2.0], "ratio_S has shape (2,)")])
def test_ratio_s_bad_input_is_named(ratio_S, said):
    text = _message(_one_sided_ratio, ratio_S)
    assert said in text and not [k for k, p in RATIO_S_MISTAKES.items() if p in text], text
    assert not _hidden_passes("l02-asym-test", x_1=X_1, x_3=X_3, ratio_S=ratio_S)


@pytest.mark.parametrize("ratio_S", [RATIO_S, np.array([RATIO_S]),
                                     float(sa.softmax(_O3[0])[2] / sa.softmax(_O3[2])[0])])
def test_ratio_s_right_answers_pass_both(ratio_S, capsys):
    _right_answer_passes(_one_sided_ratio, ratio_S, capsys)
    assert _hidden_passes("l02-asym-test", x_1=X_1, x_3=X_3, ratio_S=ratio_S)


def test_a_ratio_of_lengths_is_named_where_it_differs_from_the_score_sums():
    """|x_3| / |x_1| = 2 for this design, the score sums' ratio 5.6 / 2.6 differs: each gets its own name."""
    x_1, x_3 = RATIO_S_ELSEWHERE
    X = np.stack([x_1, [0.7, 0.7, 0.0, 0.0], x_3])
    O = X @ X.T
    lengths, score_sums = 2.0, float(O[2].sum() / O[0].sum())
    assert abs(lengths - score_sums) > 0.1
    _names_only(_message(lambda r: check_one_sided(x_1, x_3, r), lengths), "lengths", RATIO_S_MISTAKES)
    _names_only(_message(lambda r: check_one_sided(x_1, x_3, r), score_sums), "score sums", RATIO_S_MISTAKES)


# ---------------------------------------------------------------- exercise 3: the row sums S_1, S_3
S_1, S_3 = _sums(X_1, X_3)
ROW_SUM_MISTAKES = {
    "swapped": "the other word's row sum",
    "no bank term": "bank's term is left out",
    "own term": "only the own term",
    "score sum": "a sum of scores",
    "shifted": "a sum of shifted scores",
    "rounded": "close: the right sum, rounded too far",
    "other": "it is not the row sum for your x_1 and x_3",
}
ROW_SUM_WRONG = {   # (S_1, S_3) as a learner would write them: one of the two wrong
    "swapped": (S_3, S_1),
    "no bank term": (float(np.exp(_O3[0, [0, 2]]).sum()), S_3),     # bank (k = 2) left out of row 1
    "own term": (S_1, float(np.exp(_O3[2, 2]))),                    # e^omega_33 alone
    "score sum": (float(_O3[0].sum()), S_3),                        # no exponentials
    "shifted": (S_1, float(np.exp(_O3[2] - _O3[2].max()).sum())),   # as a stable softmax computes it
    "rounded": (round(S_1), S_3),                                   # 12.12 written as 12
    "other": (S_1, 100.0),
}


def _one_sided_sums(sums):
    return check_one_sided(X_1, X_3, RATIO_S, S_1=sums[0], S_3=sums[1])


@pytest.mark.parametrize("key", sorted(ROW_SUM_WRONG))
def test_row_sum_mistake_is_named(key):
    """The design right, a row sum wrong: the message names the slip and the hidden test refuses it, even
    with the ratio right (taken from the weights, a shortcut that skips the sums)."""
    text = _message(_one_sided_sums, ROW_SUM_WRONG[key])
    _names_only(text, key, ROW_SUM_MISTAKES)
    S_1_given, S_3_given = ROW_SUM_WRONG[key]
    for right in (S_1, S_3):   # no right sum the learner did not give is told
        assert min(abs(right - S_1_given), abs(right - S_3_given)) < 1e-9 or f"{right:.2f}" not in text, text
    assert not _hidden_passes("l02-asym-test", x_1=X_1, x_3=X_3, S_1=S_1_given, S_3=S_3_given)


def test_the_ratio_from_the_weights_alone_does_not_pass():
    """ratio_S = alpha_13 / alpha_31 read off the weights is S_3 / S_1, but the sums must be given too."""
    ratio = float(sa.softmax(_O3[0])[2] / sa.softmax(_O3[2])[0])
    text = _message(lambda s: check_one_sided(X_1, X_3, ratio, S_1=s, S_3=None), None)
    assert "S_1 has no value yet" in text, text
    assert not _hidden_passes("l02-asym-test", x_1=X_1, x_3=X_3, ratio_S=ratio, S_1=None, S_3=None)


def test_right_row_sums_pass_both(capsys):
    _right_answer_passes(_one_sided_sums, (S_1, S_3), capsys)
    assert _hidden_passes("l02-asym-test", x_1=X_1, x_3=X_3, S_1=np.float64(S_1), S_3=np.array([S_3]))
