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
    check_bank_mix([0.5, 0.2, 0.3])
    text = capsys.readouterr().out
    river, own, flows = RBF @ RBF[1]   # bank's x.x scores: its own is the largest
    assert own > max(river, flows) and "bank's own score would have to be the lowest" in text, text
    assert np.argmin(np.log([0.5, 0.2, 0.3])) == 1   # omega_j = ln alpha_j + c: bank's the lowest


@pytest.mark.parametrize(("answer", "said"), [(None, "has no value yet"), ([0.5, 0.5], "has shape (2,)"),
                                              ("0.5 0.2 0.3", "is text (a string)"),
                                              ([0.5, np.nan, 0.3], "NaN or infinite")])
def test_bank_mix_bad_input_is_named(answer, said):
    text = _message(check_bank_mix, answer)
    assert said in text and not [k for k, p in MIX.items() if p in text], text


# ---------------------------------------------------------------- the hidden tests agree with the checks
def _hidden_passes(grade_id: str, **answer) -> bool:
    return hidden_test_passes("02_basic_self_attention", grade_id, **answer)


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


# ---------------------------------------------------------------- exercise 1: the derived tie length
TIE = {
    "as long as x_1": "as long as x_1",
    "multiplied": "you multiplied by cos 60 deg",
    "factor left out": "leaving out the factor |x_1|",
    "sine": "you used sin 60 deg",
    "radians": "reads 60 as radians",
    "other": "do not tie",
    "empty": "has no value yet",
    "text": "is text (a string)",
    "shape": "it should be one number",
}
TIE_WRONG = {   # as a learner would write them
    "as long as x_1": 2.0,                                      # no cosine (or L^2 |x_1| cos = |x_1|^2)
    "multiplied": 2.0 * np.cos(np.pi / 3),                      # |x_1| cos 60 deg
    "factor left out": 4.0 / np.cos(np.pi / 3),                 # |x_1|^2 / cos 60 deg
    "sine": 2.0 / np.sin(np.pi / 3),
    "radians": 2.0 / np.cos(60),
    "other": 3.0,
    "empty": None,
    "text": "4",
    "shape": [4.0, 4.0],
}
# *the river flows near a bank*, toy table; river is word 2 (index 1): its right scores, weights and vector.
TRFNAB = np.array([[0.2, 0.1, 0, 0.1], [0.1, 1.0, 0, 0], [0.2, 0.8, 0, 0], [0, 0.3, 0, 0.1],
                   [0.1, 0.1, 0.1, 0.1], [0.7, 0.7, 0, 0]])
OMEGA_R = TRFNAB @ TRFNAB[1]
ALPHA_R = np.exp(OMEGA_R) / np.exp(OMEGA_R).sum()
Z_R = ALPHA_R @ TRFNAB
ROW = dict(omega_river=OMEGA_R, alpha_river=ALPHA_R, z_river=Z_R)


def _tie(L):
    return check_river_row(OMEGA_R, ALPHA_R, Z_R, L)


def _hidden_row(**changed) -> bool:
    answer = {**ROW, "L_tie": 4.0, **changed}
    return hidden_test_passes("02_basic_self_attention", "l02-elsewhere-test", **answer)


@pytest.mark.parametrize("key", sorted(TIE_WRONG))
def test_tie_length_mistake_is_named(key):
    """A wrong L_tie is named for its mistake, whatever the design, and never told the value."""
    text = _message(_tie, TIE_WRONG[key])
    _names_only(text, key, TIE)
    assert not _hidden_row(L_tie=TIE_WRONG[key])


@pytest.mark.parametrize("L", [4, 4.0, np.float64(4.0), np.array([4.0]), 2.0 / np.cos(np.radians(60))])
def test_tie_length_right_answers_pass(L, capsys):
    _right_answer_passes(_tie, L, capsys)
    assert _hidden_row(L_tie=L)


def test_the_row_alone_does_not_pass_without_the_derivation():
    """The river row right, the derivation left blank: the check and the hidden test both refuse it."""
    assert "L_tie has no value yet" in _message(_tie, None)
    assert not _hidden_row(L_tie=None)


# ---------------------------------------------------------------- exercise 1: river's row, step by step
_A_FULL = sa.softmax(TRFNAB @ TRFNAB.T, axis=-1)                 # every word's weights, rows sum to 1
_OTHERS = [0, 2, 3, 4, 5]
_ALPHA_NO_OWN = np.zeros(6)
_ALPHA_NO_OWN[_OTHERS] = sa.softmax(OMEGA_R[_OTHERS])
_N = np.linalg.norm(TRFNAB, axis=1)
RIVER = {
    "wrong index": "Python counts from 0",
    "cosines": "are cosines, not scores",
    "own score left out": "river's own score x_2 . x_2 is left out",
    "score matrix": "the whole matrix",
    "scores as weights": "scores used as weights",
    "divided by their sum": "the scores divided by their sum, not a softmax",
    "column": "a column of the weight matrix",
    "own weight left out": "river's own weight is left out",
    "own left out of the softmax": "river's own score is left out of the softmax",
    "wrong axis": "you summed over the wrong axis",
    "own vector left out": "river's own vector is left out of the sum",
    "z from scores": "weights the words by their scores",
    "equal weights": "equal weights",
}
RIVER_WRONG = {   # (omega_river, alpha_river, z_river), as a learner would write them
    "wrong index": (TRFNAB @ TRFNAB[2], ALPHA_R, Z_R),                           # index 2 = word 3, flows
    "cosines": (TRFNAB @ TRFNAB[1] / (_N * _N[1]), ALPHA_R, Z_R),                # lesson 01's cosine
    "own score left out": (OMEGA_R[_OTHERS], ALPHA_R, Z_R),                      # j != i
    "score matrix": (TRFNAB @ TRFNAB.T, ALPHA_R, Z_R),                           # every row at once
    "scores as weights": (OMEGA_R, OMEGA_R, OMEGA_R @ TRFNAB),                   # no softmax
    "divided by their sum": (OMEGA_R, OMEGA_R / OMEGA_R.sum(), Z_R),             # normalised, not softmax
    "column": (OMEGA_R, _A_FULL[:, 1], _A_FULL[:, 1] @ TRFNAB),                  # A transposed / axis 0
    "own weight left out": (OMEGA_R, ALPHA_R[_OTHERS], Z_R),                     # 5 weights
    "own left out of the softmax": (OMEGA_R, _ALPHA_NO_OWN, _ALPHA_NO_OWN @ TRFNAB),
    "wrong axis": (OMEGA_R, ALPHA_R, (ALPHA_R[:, None] * TRFNAB).sum(axis=1)),   # summed over coordinates
    "own vector left out": (OMEGA_R, ALPHA_R, Z_R - ALPHA_R[1] * TRFNAB[1]),     # sum over j != i
    "z from scores": (OMEGA_R, ALPHA_R, OMEGA_R @ TRFNAB),                       # scores in the weighted sum
    "equal weights": (OMEGA_R, ALPHA_R, TRFNAB.mean(axis=0)),
}


@pytest.mark.parametrize("key", sorted(RIVER_WRONG))
def test_river_row_mistake_is_named(key):
    o, a, z = RIVER_WRONG[key]
    _names_only(_message(lambda args: check_river_row(*args, 4.0), (o, a, z)), key, RIVER)
    try:
        passes = _hidden_row(omega_river=o, alpha_river=a, z_river=z)
    except ValueError:                                   # a wrong size does not reshape
        passes = False
    assert not passes


RIGHT_ROW = [
    (OMEGA_R, ALPHA_R, Z_R),                                                     # step by step, as written
    (list((TRFNAB @ TRFNAB.T)[1]), sa.softmax(TRFNAB @ TRFNAB.T, axis=-1)[1],   # every row, then river's
     (sa.softmax(TRFNAB @ TRFNAB.T) @ TRFNAB)[1]),
    (OMEGA_R.reshape(6, 1), ALPHA_R.reshape(1, 6), TRFNAB.T @ ALPHA_R),         # a column, a row, X^T alpha
]


@pytest.mark.parametrize("answer", RIGHT_ROW)
def test_river_row_right_answers_pass_the_check_and_the_hidden_test(answer, capsys):
    _right_answer_passes(lambda args: check_river_row(*args, 4.0), answer, capsys)
    assert _hidden_row(omega_river=answer[0], alpha_river=answer[1], z_river=answer[2])


def test_river_row_left_blank_is_named():
    assert "omega_river has no value yet" in _message(lambda a: check_river_row(*a), (None, None, None, None))


def test_row_1_near_miss_names_the_length_lever():
    """x_1 = [0.3, 0, 0, 0], x_3 = [2, 0, 0, 0]: alpha_13 = 0.439 just misses; the message says a slightly
    longer x_1 fixes it (a shorter x_3 would lower omega_13 too, so it is not named)."""
    x_1, x_3 = [0.3, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]
    text = _message(lambda a: check_one_sided(*a), (x_1, x_3))
    _names_only(text, "row 1", ONE_SIDED)
    assert "only 0.439" in text and "a slightly longer x_1" in text and "shorter x_3" not in text, text
    assert not _hidden_passes("l02-asym-test", x_1=x_1, x_3=x_3)
    assert _hidden_passes("l02-asym-test", x_1=[0.6, 0.0, 0.0, 0.0], x_3=x_3)   # the lever named works


def test_river_weights_rounded_to_2_decimals_are_told_to_keep_3():
    """The right softmax, typed rounded to 2 decimals: named as rounding, not as a missing softmax."""
    text = _message(lambda args: check_river_row(*args, 4.0), (OMEGA_R, ALPHA_R.round(2), Z_R))
    assert "rounded to 2 decimals" in text and "keep 3 decimals" in text, text
    assert "Take the softmax" not in text, text
    assert not _hidden_row(alpha_river=ALPHA_R.round(2))


def test_tie_success_states_the_general_rule(capsys):
    _tie(4.0)
    assert "|x_j| cos(theta_ij) > |x_i|" in capsys.readouterr().out
