"""Answers written from each lesson's own words: ``lessonNN.py`` holds ``ANSWERS``, for every code answer
cell of lesson NN (by its grade id), the code a learner who follows the lesson's text would write, other than
the instructor's model answer. ``tests/test_grading.py`` grades them: each must get full marks, hidden tests
included, so that no hidden test judges by a rule the lesson does not state.
"""

from __future__ import annotations

import copy
import importlib.util
import textwrap
from pathlib import Path

from selfattention.coursework import lessons

HERE = Path(__file__).resolve().parent


def answers_for(lesson: Path) -> dict[str, str | tuple[str, ...]] | None:
    """``ANSWERS`` of ``tests/answers/lessonNN.py`` for lesson ``lesson``, or None when there is none."""
    module = HERE / f"lesson{lessons.lesson_number(lesson)}.py"
    if not module.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"answers_{module.stem}", module)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return dict(loaded.ANSWERS)


def fill(student: dict, answers: dict[str, str | tuple[str, ...]]) -> dict:
    """A copy of ``student`` (a learner's copy, answers blank) with each code answer's stub replaced by
    ``answers[grade_id]``, indented as the stub; a cell with several stubs takes a tuple, one answer per stub
    in order. Raises KeyError for an answer cell with no answer."""
    filled = copy.deepcopy(student)
    stub = lessons.CODE_STUB.split("\n")
    for cell in filled["cells"]:
        if not lessons.is_code_answer(cell):
            continue
        given = answers[lessons.grade_id(cell)]
        lines = lessons.source(cell).split("\n")
        start = 0
        for part in (given,) if isinstance(given, str) else given:
            first = next(i for i, line in enumerate(lines) if i >= start and line.strip() == stub[0])
            indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
            answer = textwrap.indent(textwrap.dedent(part).strip("\n"), indent).split("\n")
            lines = lines[:first] + answer + lines[first + len(stub):]
            start = first + len(answer)
        cell["source"] = "\n".join(lines)
    return filled
