"""Design exercises are judged by the lesson's own check, in the grader's process (results.judge).

A design exercise has many right answers, so its hidden test records the learner's design with
``judge="check_..."``; the grader runs that check on it instead of comparing with the instructor's design.
"""

from __future__ import annotations

import nbformat
import pytest

from selfattention.coursework.results import MAX_JUDGED_NUMBERS, judge
from selfattention.coursework.verdicts import judge_tests

RIGHT = [0.1, 0.4, 0.5]  # lesson 00's warm-up: a row of weights designed to a brief


def test_judge_runs_the_check_on_the_recorded_arguments() -> None:
    assert judge("check_warmup_weights", [RIGHT]) is None
    why = judge("check_warmup_weights", [[0.5, 0.5, 0.0]])
    assert why and "apple_weights" in why
    assert "does not lean at all" in why  # the check's own diagnosis


def test_judge_refuses_odd_records_without_crashing() -> None:
    assert "not a list" in judge("check_warmup_weights", RIGHT[0])
    assert "could not read" in judge("check_warmup_weights", [RIGHT, "extra", "args"])
    assert judge("check_warmup_weights", [["a", "b", "c"]])  # strings: refused, however the check words it
    assert "more than" in judge("check_warmup_weights", [[0.0] * (MAX_JUDGED_NUMBERS + 1)])
    with pytest.raises(ValueError, match="judge is 'open'"):
        judge("open", [RIGHT])
    with pytest.raises(ValueError, match="judge is 'check_nothing'"):
        judge("check_nothing", [RIGHT])


def _notebook(records: list[dict]) -> nbformat.NotebookNode:
    """A one-test notebook whose test cell shows ``records`` as the hidden test's outputs."""
    from selfattention.coursework.results import MIME

    cell = nbformat.v4.new_code_cell("check(x)")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "design-test", "points": 1}
    cell.outputs = [nbformat.v4.new_output("display_data", data={MIME: r}) for r in records]
    return nbformat.v4.new_notebook(cells=[cell])


def _record(value: object, judge_name: str | None) -> dict:
    return {"grade_id": "design-test", "value": value, "atol": 1e-8, "rtol": 1e-5, "judge": judge_name}


def test_grader_judges_with_the_instructors_judge_not_the_learners() -> None:
    instructor = [_record([[0.0, 0.0]], "check_warmup_weights")]  # any value: the judge decides, not equality
    released = _notebook([])
    # a learner's record names no judge; another right answer passes
    other_right = _notebook([_record([[0.0, 0.5, 0.5]], None)])
    assert judge_tests(other_right, released, {"design-test": instructor}, set()) == {"design-test": None}
    wrong = _notebook([_record([[0.5, 0.5, 0.0]], None)])
    assert "did not accept" in judge_tests(wrong, released, {"design-test": instructor}, set())["design-test"]
    # A learner's record that names a judge of its own changes nothing when the instructor's has none.
    plain = [_record(RIGHT, None)]
    forged = _notebook([_record([[0.5, 0.5, 0.0]], "check_warmup_weights")])
    assert "different result" in judge_tests(forged, released, {"design-test": plain}, set())["design-test"]


def test_design_exercises_accept_every_right_design_and_name_a_wrong_one() -> None:
    """Two different right answers pass each design judge (equality with one design would fail one)."""
    import numpy as np

    c = np.array([3.0, 2.0])  # lesson 01, exercise 3: D . C = 11 and cos(D, C) > 0.95
    along = 11 / 13 * c
    turned = along + 0.3 * np.array([-2.0, 3.0]) / np.sqrt(13)
    for d in (along, turned):
        assert judge("check_dot_cosine_disagree", [d.tolist()]) is None
    assert "must equal" in judge("check_dot_cosine_disagree", [[1.0, 1.0]])
    for counts in ([8640000, 691200, 24], [8.64e6, 691200.0, 24.0]):   # lesson 03, exercise 3: two spellings
        assert judge("check_layer_costs", counts) is None
    assert "dropped the factor 2" in judge("check_layer_costs", [8640000, 691200, 48])
    assert "not a whole number" in judge("check_layer_costs", [8640000, 691200.5, 24])
