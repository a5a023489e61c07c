"""What the lessons' mistake tests (tests/test_mistakes_lessonNN.py) share: run a check on a wrong answer and
read its message; assert the message names one mistake and no other; assert a right answer passes; run a
lesson's hidden test on an answer, as the grader does, to show it agrees with the visible check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from selfattention.checks import ExerciseError
from selfattention.coursework import lessons

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def message(check: Callable[[Any], None], answer: Any) -> str:
    """The message of the ExerciseError ``check(answer)`` must raise (overflow warnings of a wrong answer
    written on purpose, e.g. a softmax without max-subtraction, are silenced)."""
    with pytest.raises(ExerciseError) as err, np.errstate(all="ignore"):
        check(answer)
    return str(err.value)


def names_only(message: str, key: str, phrases: dict[str, str]) -> None:
    """``message`` holds the phrase of mistake ``key`` and the phrase of no other mistake in ``phrases``."""
    assert phrases[key] in message, f"expected {key!r}: {message}"
    others = [k for k, phrase in phrases.items() if k != key and phrase in message]
    assert not others, f"{key!r} also named {others}: {message}"


def right_answer_passes(check: Callable[[Any], None], answer: Any,
                        capsys: pytest.CaptureFixture[str]) -> None:
    """``check(answer)`` prints its ``Correct:`` line."""
    check(answer)
    assert capsys.readouterr().out.startswith("Correct:")


def exercise_cell(lesson: str, grade_id: str) -> str:
    """The source of the cell with ``grade_id`` in ``notebooks/<lesson>.ipynb`` (``lesson`` a stem such as
    ``"03_matrix_form"``): the visible check and its hidden tests, as the grader runs them."""
    cells = lessons.grade_cells(lessons.read_lesson(NOTEBOOKS / f"{lesson}.ipynb"))
    if grade_id not in cells:
        raise KeyError(f"grade_id: {lesson} has no cell {grade_id!r}; it has {sorted(cells)}")
    return lessons.source(cells[grade_id])


def hidden_test(lesson: str, grade_id: str) -> str:
    """Only the hidden-test part (between the markers) of that cell: what the grader adds to the check."""
    text = exercise_cell(lesson, grade_id)
    lines = text.split("\n")
    regions = lessons.marked_regions(text, lessons.BEGIN_HIDDEN, lessons.END_HIDDEN, f"{lesson} {grade_id}")
    if not regions:
        raise ValueError(f"grade_id: {lesson}'s cell {grade_id!r} has no hidden tests")
    return "\n".join(line for first, last in regions for line in lines[first + 1:last])


def hidden_test_passes(lesson: str, grade_id: str, **names: Any) -> bool:
    """Whether the hidden tests of that cell pass when the learner's ``names`` (e.g. ``softmax_row=f``)
    hold the given answer: False on the AssertionError a failing hidden test raises; others propagate."""
    try:
        exec(hidden_test(lesson, grade_id), dict(names))   # noqa: S102  (the lesson's own test code)
    except AssertionError:
        return False
    return True


def starter_names(grade_id: str, names: dict[str, Any] | None = None) -> dict[str, Any]:
    """The names the learner's blank copy of answer cell ``grade_id`` defines (``"l15-flash-answer"``: lesson
    15's notebook), its solution replaced by the stub as in a student copy, run among ``names`` (default: just
    ``np``)."""
    lesson = grade_id.split("-")[0].removeprefix("l")
    (path,) = NOTEBOOKS.glob(f"{lesson}_*.ipynb")
    cells = [c for c in lessons.read_lesson(path)["cells"]
             if lessons.is_code_answer(c) and lessons.grade_id(c) == grade_id]
    if not cells:
        raise KeyError(f"grade_id: {path.stem} has no answer cell {grade_id!r}")
    blank = lessons.solution_parts(lessons.source(cells[0]), lessons.CODE_STUB)[0]
    scope = {"np": np} if names is None else names
    exec(blank, scope)  # noqa: S102  (the lesson's own starter code)
    return scope
