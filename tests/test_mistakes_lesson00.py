"""Lesson 00's check names each typical mistake, and only that one; the right answer gets "Correct:"."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import checks
from selfattention.checks import ExerciseError

love, apple, phones, juice = (np.array([0.3, 0.3]), np.array([0.7, 0.7]), np.array([0.1, 1.0]),
                              np.array([1.0, 0.1]))

# mistake -> (the answer as a learner would write it, words only that mistake's message uses)
MISTAKES = {
    "average": ((love + apple + phones) / 3, "plain average"),
    "sum": (love + apple + phones, "sum of the three vectors"),
    "reversed": (0.4 * love + 0.5 * apple + 0.1 * phones, "weights went to the wrong words"),
    "juice": (0.1 * love + 0.5 * apple + 0.4 * juice, "apple next to juice"),
    "one term": (0.4 * phones, "only the phones term"),
}


@pytest.mark.parametrize("mistake", MISTAKES)
def test_warmup_names_the_mistake_and_no_other(mistake: str) -> None:
    answer, words = MISTAKES[mistake]
    with pytest.raises(ExerciseError) as err:
        checks.check_warmup_mix(answer)
    message = str(err.value)
    assert words in message, message
    others = [w for m, (_, w) in MISTAKES.items() if m != mistake]
    assert not any(w in message for w in others), message


def test_warmup_right_answer(capsys: pytest.CaptureFixture[str]) -> None:
    checks.check_warmup_mix(0.1 * love + 0.5 * apple + 0.4 * phones)
    assert capsys.readouterr().out.startswith("Correct:")


@pytest.mark.parametrize("answer, words", [(None, "is None"), (np.array([0.42, 0.78, 0.0]), "shape"),
                                           (np.array([0.5, 0.5]), "differs from the right answer")])
def test_warmup_blank_wrong_shape_or_unknown(answer: object, words: str) -> None:
    with pytest.raises(ExerciseError, match=words):
        checks.check_warmup_mix(answer)
