"""Lesson 00's check names each typical mistake, and only that one; right answers get "Correct:"."""

from __future__ import annotations

import numpy as np
import pytest
from mistakes import message, names_only, right_answer_passes

from selfattention import checks

love, apple, phones, juice = (np.array([0.3, 0.3]), np.array([0.7, 0.7]), np.array([0.1, 1.0]),
                              np.array([1.0, 0.1]))
weights = np.array([0.1, 0.5, 0.4])

# mistake -> words only that mistake's message uses
PHRASES = {
    "average": "plain average",
    "sum": "sum of the three vectors",
    "reversed": "you gave love 0.4, apple 0.5, phones 0.1",
    "swapped love and apple": "you gave love 0.5, apple 0.1, phones 0.4",
    "juice": "apple next to juice",
    "one term": "only the phones term",
    "no love": "leaves out the love term",
    "no apple": "leaves out the apple term",
    "no phones": "leaves out the phones term",
    "not added up": "not yet added up",
    "weights times 10": "weights must sum to 1",
    "plain phones": "phones itself",
    "static apple": "static apple, unchanged",
    "no neighbour": "no weight on phones",
}
# mistake -> the answer as a learner would write it
WRONG = {
    "average": (love + apple + phones) / 3,
    "sum": love + apple + phones,
    "reversed": 0.4 * love + 0.5 * apple + 0.1 * phones,
    "juice": weights @ np.stack([love, apple, juice]),   # the value printed above the exercise: a shortcut
    "one term": 0.4 * phones,
    "swapped love and apple": 0.5 * love + 0.1 * apple + 0.4 * phones,
    "no love": 0.5 * apple + 0.4 * phones,
    "no apple": 0.1 * love + 0.4 * phones,
    "no phones": 0.1 * love + 0.5 * apple,
    "not added up": weights[:, None] * np.stack([love, apple, phones]),   # (3, 2): no sum over words
    "weights times 10": 1 * love + 5 * apple + 4 * phones,               # weights 1, 5, 4: sum 10
    "plain phones": phones,
    "static apple": [0.7, 0.7],                                         # predicts that nothing moves
    "no neighbour": (love + 5 * apple) / 6,                             # the slider at 0
}


@pytest.mark.parametrize("mistake", sorted(WRONG))
def test_warmup_names_the_mistake_and_no_other(mistake: str) -> None:
    names_only(message(checks.check_warmup_mix, WRONG[mistake]), mistake, PHRASES)


@pytest.mark.parametrize("answer", [0.1 * love + 0.5 * apple + 0.4 * phones,
                                    weights @ np.stack([love, apple, phones]),
                                    [0.42, 0.78],                       # the prediction, typed as a list
                                    (weights @ np.stack([love, apple, juice]))[::-1]])  # juice's, mirrored
def test_warmup_right_answers(answer: object, capsys: pytest.CaptureFixture[str]) -> None:
    right_answer_passes(checks.check_warmup_mix, answer, capsys)


@pytest.mark.parametrize("answer, words", [(None, "is None"), (np.array([0.42, 0.78, 0.0]), "shape"),
                                           (np.array([0.5, 0.5]), "both coordinates the same"),
                                           (np.ones((3, 2)), "shape")])
def test_warmup_blank_wrong_shape_or_unknown(answer: object, words: str) -> None:
    assert words in message(checks.check_warmup_mix, answer)


# a wrong prediction -> words only its symmetry slip's message uses; no message may print the right values
SLIPS = {"both the same": "both coordinates the same", "not mirrored": "you did not mirror",
         "one coordinate": "changed only one coordinate", "other numbers": "changes neither number"}
SLIP_WRONG = {
    "both the same": [[0.5, 0.5], [0.78, 0.78], [0.42, 0.42]],
    "not mirrored": [[0.9, 0.1], [0.7, 0.5]],
    "one coordinate": [[0.42, 0.42 + 0.38 * 1.05], [0.3, 0.78]],
    "other numbers": [[0.4, 0.8], [0.2, 0.9]],
}


@pytest.mark.parametrize("slip, answer", [(k, a) for k, v in SLIP_WRONG.items() for a in v])
def test_warmup_prediction_names_the_slip_without_the_answer(slip: str, answer: list[float]) -> None:
    said = message(checks.check_warmup_mix, answer)
    names_only(said, slip, SLIPS)
    assert "0.42" not in said and "0.78" not in said   # the messages never echo the values either
