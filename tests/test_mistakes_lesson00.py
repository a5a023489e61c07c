"""Lesson 00's check names each typical mistake, and only that one; right answers get "Correct:"; no message
prints the right values."""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import message, names_only, right_answer_passes

from selfattention import checks

love, apple, phones = np.array([0.3, 0.3]), np.array([0.7, 0.7]), np.array([0.1, 1.0])
juice = np.array([1.0, 0.1])                                       # section 2's neighbour
X = np.stack([love, apple, phones])
table = np.array([[0.5, 0.3, 0.2], [0.1, 0.3, 0.6], [0.0, 0.2, 0.8]])   # the lesson's weight table

# mistake -> words only that mistake's message uses
PHRASES = {
    "column": "you read column 2",
    "row 1": "you used row 1",
    "row 3": "you used row 3",
    "largest only": "phones alone, the word with the largest weight",
    "largest term": "only the largest term",
    "average": "plain average",
    "sum": "sum of the three vectors",
    "static apple": "static apple, unchanged",
    "section 2": "weights of section 2",
    "juice or swapped": "holds juice, not phones",
    "no love": "leaves out the love term",
    "no apple": "leaves out the apple term",
    "no phones": "leaves out the phones term",
    "percent": "percentages (10, 30, 60) instead of fractions",
    "scale": "weights must sum to 1",
    "food off": "its second (technology) coordinate is right, its first (food) one is not",
    "technology off": "its first (food) coordinate is right, its second (technology) one is not",
    "not added up": "not yet added up",
    "all rows": "all three new vectors",
    "other": "Check each product again",
}
# mistake -> the answer as a learner would write (or type) it
WRONG = {
    "column": [0.32, 0.5],                                   # 0.3 love + 0.3 apple + 0.2 phones, by hand
    "row 1": 0.5 * love + 0.3 * apple + 0.2 * phones,
    "row 3": [0.22, 0.94],
    "largest only": [0.1, 1.0],                              # picks the largest weight's word only
    "largest term": 0.6 * phones,
    "average": [0.367, 0.667],                               # typed, rounded to three decimals
    "sum": love + apple + phones,
    "static apple": [0.7, 0.7],
    "section 2": 0.1 * love + 0.5 * apple + 0.4 * phones,   # the mix computed above, reused
    "juice or swapped": 0.1 * love + 0.3 * apple + 0.6 * juice,   # section 2's X reused
    "no love": 0.3 * apple + 0.6 * phones,
    "no apple": [0.09, 0.63],
    "no phones": 0.1 * love + 0.3 * apple,
    "percent": 10 * love + 30 * apple + 60 * phones,         # weights as percentages: they sum to 100
    "scale": 2 * (0.1 * love + 0.3 * apple + 0.6 * phones),  # weights that sum to 2
    "food off": [0.31, 0.84],                                # one product of the first coordinate slipped
    "technology off": [0.3, 0.81],
    "not added up": table[1][:, None] * X,                   # (3, 2): no sum over the words
    "all rows": table @ X,                                   # (3, 2): every word's mix
    "other": [0.35, 0.8],                                    # an arithmetic slip no rule names
}


@pytest.mark.parametrize("mistake", sorted(WRONG))
def test_warmup_names_the_mistake_and_no_other(mistake: str) -> None:
    said = message(checks.check_warmup_mix, WRONG[mistake])
    names_only(said, mistake, PHRASES)
    assert "0.84" not in said and "[0.3," not in said     # no message prints the right values


@pytest.mark.parametrize("answer", [0.1 * love + 0.3 * apple + 0.6 * phones,
                                    table[1] @ X,
                                    [0.3, 0.84],                        # the prediction, typed as a list
                                    np.array([0.30, 0.84])])
def test_warmup_right_answers(answer: object, capsys: pytest.CaptureFixture[str]) -> None:
    right_answer_passes(checks.check_warmup_mix, answer, capsys)


@pytest.mark.parametrize("answer, words", [(None, "is None"), (np.array([0.3, 0.84, 0.0]), "shape"),
                                           (np.ones((3, 2)), "shape"), ("apple", "apple_in_context")])
def test_warmup_blank_wrong_shape_or_not_numbers(answer: object, words: str) -> None:
    assert words in message(checks.check_warmup_mix, answer)


def _hidden_test(apple_in_context: object) -> None:
    """The hidden test of the lesson's test cell, as the grader runs it."""
    expected = 0.1 * love + 0.3 * apple + 0.6 * phones
    assert np.allclose(np.asarray(apple_in_context, dtype=float), expected, atol=1e-9)


@pytest.mark.parametrize("shortcut", [[0.42, 0.78], 0.5 * love + 0.5 * phones])
def test_shortcuts_fail_the_check_and_the_hidden_test(shortcut: object) -> None:
    """Section 2's mix reused, and a guess between apple's two neighbours, are refused by both."""
    message(checks.check_warmup_mix, shortcut)
    with pytest.raises(AssertionError):
        _hidden_test(shortcut)


def test_swapped_coordinates_typed_by_hand_get_the_same_two_named_slips():
    """[0.84, 0.30] is both section 2's juice mix and the right mix with its coordinates swapped: the message
    names both, the juice slip first (the X left in the kernel by section 2 holds juice)."""
    text = message(checks.check_warmup_mix, [0.84, 0.3])
    assert "holds juice, not phones" in text and "swapping the two coordinates" in text, text
