"""A tiny lesson of the course's format, for the tests of graded rounds (``test_grading_rounds.py``; the hub
tests take its course id): one autograded exercise (1 point) and one written answer (2 points), made in
seconds."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from selfattention.coursework import lessons

LESSON = "01_tiny"
COURSE_ID = "tiny-course"


def _graded(source: str, grade_id: str, points: float, *, solution: bool, markdown: bool = False):
    cell = (new_markdown_cell if markdown else new_code_cell)(source)
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "locked": not solution,
                                 "points": points, "schema_version": 3, "solution": solution,
                                 "task": False}
    return cell


def _answer(source: str, grade_id: str):
    cell = new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": False, "grade_id": grade_id, "locked": False,
                                 "schema_version": 3, "solution": True, "task": False}
    return cell


def _test(name: str, visible: str) -> str:
    return (f"{visible}\n### BEGIN HIDDEN TESTS\n"
            "from selfattention.coursework.results import record as _record\n"
            f"assert float({name}) == 3.0\n_record('tiny-{name}-test', float({name}))\n### END HIDDEN TESTS")


def write_lesson(notebooks: Path, *, changed: bool = False) -> Path:
    """The instructor's lesson: one autograded exercise (1 point), one written answer (2 points), each under
    its heading as in the course's lessons. ``changed``: its test reworded and a third exercise (1 point)
    added, as after a release."""
    visible = f"assert x is not None, {'x is still None' if changed else 'set x first'!r}"
    cells = [
        new_markdown_cell("# A tiny lesson"),
        new_markdown_cell("### Exercise 1 (1 point): x\n\nSet `x` to 3."),
        _answer("### BEGIN SOLUTION\nx = 3\n### END SOLUTION", "tiny-x-answer"),
        _graded(_test("x", visible), "tiny-x-test", 1, solution=False),
        new_markdown_cell("### Question 2 (2 points, graded by hand)\n\nWhy 3? Say it in a sentence."),
        _graded("### BEGIN SOLUTION\nBecause it is the answer.\n### END SOLUTION", "tiny-written", 2,
                solution=True, markdown=True),
    ]
    if changed:
        cells += [new_markdown_cell("### Exercise 3 (1 point): y\n\nSet `y` to 3 as well."),
                  _answer("### BEGIN SOLUTION\ny = 3\n### END SOLUTION", "tiny-y-answer"),
                  _graded(_test("y", "assert y is not None"), "tiny-y-test", 1, solution=False)]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    notebooks.mkdir(parents=True, exist_ok=True)
    path = notebooks / f"{LESSON}.ipynb"
    nbformat.write(nb, path)
    return path


def fill(student_version: Path, dest: Path, written: str) -> None:
    """A learner's work on the student version: every code answer solved, ``written`` as the answer."""
    nb = nbformat.read(student_version, as_version=4)
    for cell in nb.cells:
        if lessons.is_code_answer(cell):
            cell.source = f"{lessons.grade_id(cell).split('-')[1]} = 3"
        elif lessons.is_answer(cell):
            cell.source = written
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest)


def release(base: Path) -> Path:
    """What ``make release`` does for the lesson (into the course folder): its student version."""
    from selfattention.coursework.course import generate_student_versions

    [made] = generate_student_versions(base / "course", [base / "notebooks" / f"{LESSON}.ipynb"]).values()
    return made
