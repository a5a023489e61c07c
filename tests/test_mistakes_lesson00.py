"""Lesson 00's warm-up is a design: the check names every rule a learner's row of weights breaks, computed
from that row; the hidden test refuses the same rows; right designs written differently pass both."""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import hidden_test_passes, message, right_answer_passes

from selfattention import checks

LESSON, TEST = "00_roadmap", "warmup-test"

# a wrong row -> the words its message must hold (every broken rule named), and words it must not hold
RATE = "0.9"  # how each weight moves the lean: the learner works it out; no failure message gives it away
WRONG = {
    "negative": ([-0.2, 0.4, 0.8], ["a weight is negative (love -0.2)", "not the smallest"],
                 ["sum to", RATE]),
    "sum not 1": ([0.2, 0.4, 0.6], ["the weights sum to 1.2, not 1"], ["negative"]),
    "leans to food": ([0.3, 1.0, -0.3], ["negative (phones -0.3)", "leans towards food", "at least 0.45"],
                      [RATE, "diagonal"]),
    "no lean": ([0.5, 0.5, 0.0], ["does not lean at all", "at least 0.45"], ["negative", "sum to", RATE]),
    "lean too small": ([0.4, 0.4, 0.2], ["by 0.18 only", "at least 0.45"], ["sum to", RATE, "diagonal"]),
    "section 2's weights": ([0.1, 0.5, 0.4], ["by 0.36 only", "at least 0.45"],
                            ["sum to", RATE, "0.4 gives"]),
    "the old example": ([0.2, 0.5, 0.3], ["by 0.27 only"], ["sum to", RATE]),
    "love heavy": ([0.5, 0.4, 0.1], ["by 0.09 only"], ["sum to", RATE]),
    "more phones than needed": ([0.0, 0.4, 0.6], ["leans by 0.54, more than the 0.45", "not the smallest"],
                                ["sum to", "only", RATE]),
    "a table row": ([0.1, 0.3, 0.6], ["not the smallest"], ["sum to", "only"]),
    "a third each": ([0.333, 0.333, 0.333], ["by 0.3 only"], ["sum to", RATE]),
    "shares, not fractions": ([1, 3, 6], ["sum to 10, not 1 (dividing each by 10 fixes that)"], []),
    "percentages": ([10, 40, 50], ["percentages"], ["not 1", "lean"]),
    "two broken": ([0.6, 0.1, 0.2], ["sum to 0.9, not 1", "by 0.18 only"], []),
}


@pytest.mark.parametrize("mistake", sorted(WRONG))
def test_warmup_names_every_broken_rule(mistake: str) -> None:
    row, said_words, unsaid = WRONG[mistake]
    said = message(checks.check_warmup_weights, row)
    for words in said_words:
        assert words in said, f"{mistake}: {words!r} not in {said}"
    for words in unsaid:
        assert words not in said, f"{mistake}: {words!r} in {said}"
    assert not hidden_test_passes(LESSON, TEST, apple_weights=row)


@pytest.mark.parametrize("answer, words", [
    (None, "is None"),
    ("0.1, 0.4, 0.5", "holds text"),
    (["0.1", "0.4", "0.5"], "holds text"),                          # quoted numbers: refused, not converted
    ([[0.1], [0.4], [0.5]], "is a column, shape (3, 1)"),
    (np.array([[0.5, 0.3, 0.2], [0.1, 0.4, 0.5], [0.0, 0.2, 0.8]]), "whole (3, 3) table"),
    ([0.34, 0.61], "two numbers"),                                   # apple' itself instead of the weights
    ([0.1, float("nan"), 0.9], "not a finite number (for apple)"),
    ([0.25, 0.25, 0.25, 0.25], "shape (4,)"),
    ([[0.1, 0.4, 0.5]], "shape (1, 3); expected (3,)"),
])
def test_warmup_names_a_wrong_form(answer: object, words: str) -> None:
    said = message(checks.check_warmup_weights, answer)
    assert words in said, said
    if answer is not None:                                           # None: the hidden test raises TypeError
        assert not hidden_test_passes(LESSON, TEST, apple_weights=answer)


@pytest.mark.parametrize("answer", [[0.1, 0.4, 0.5],                 # the solution
                                    np.array([0.0, 0.5, 0.5]),
                                    (0.05, 0.45, 0.5),
                                    [1 / 12, 5 / 12, 1 / 2],         # the widget's 1 : 5 split at 0.5
                                    [0.083, 0.417, 0.5],             # the same typed to three decimals
                                    [0.1, 0.4, 0.4995],
                                    [0.5, 0.0, 0.5]])                # all the rest on love: also right
def test_warmup_right_designs_pass_check_and_hidden_test(answer: object,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    right_answer_passes(checks.check_warmup_weights, answer, capsys)
    assert hidden_test_passes(LESSON, TEST, apple_weights=answer)


def test_shortcut_copying_the_static_apple_fails_both() -> None:
    """All weight on apple itself: apple' = apple, which does not lean; check and hidden test refuse it."""
    assert "does not lean at all" in message(checks.check_warmup_weights, [0, 1, 0])
    assert not hidden_test_passes(LESSON, TEST, apple_weights=[0, 1, 0])


def test_a_row_met_only_to_rounding_says_so() -> None:
    """0.499 on phones leans by 0.449: it passes (typed to three decimals), and the message says it is short
    of 0.45 by the rounding allowed rather than calling 0.499 the smallest weight that reaches 0.45."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        checks.check_warmup_weights([0.1, 0.4, 0.499])
    said = out.getvalue()
    assert said.startswith("Correct:") and "0.449" in said and "short of 0.45" in said, said


def test_a_lean_short_by_rounding_is_printed_to_four_decimals() -> None:
    """[0.25, 0.2505, 0.4995] leans by 0.4496: at three figures that would read "0.45 ... short of 0.45"."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        checks.check_warmup_weights([0.25, 0.2505, 0.4995])
    said = out.getvalue()
    assert "technology - food = 0.449" in said and "short of 0.45" in said, said
