"""Written answers, graded by hand in nbgrader's formgrader, as the README tells an instructor to.

One learner submits lesson 02 with its written answer; `make grade`'s code grades it (the written points
wait); JupyterLab is started in the course folder (`cd build/course && jupyter lab`); through the
formgrader's own web API the submission is listed as needing a hand grade, its manual-grading page opens
and a mark is given; grading again keeps that mark, and the CSV's `score` counts it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

from labdriver import start_lab
from selfattention.coursework import lessons
from selfattention.coursework.grading import GradeRow, RunPolicy, grade_all

pytestmark = pytest.mark.needs_sandbox

LESSON = ROOT / "notebooks" / "02_basic_self_attention.ipynb"
POLICY = RunPolicy(cell_timeout=120, submission_timeout=600)


def written_answers(path: Path) -> dict[str, float]:
    """grade_id -> points of the written answers (graded, solution, markdown cells) of a lesson."""
    nb = nbformat.read(path, as_version=4)
    return {lessons.grade_id(c): lessons.points(c) for c in nb.cells
            if lessons.is_written_answer(c) and lessons.is_graded(c)}


@pytest.fixture(scope="module")
def graded_by_hand(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("formgrader")
    (base / "submissions" / "ann").mkdir(parents=True)
    shutil.copyfile(LESSON, base / "submissions" / "ann" / LESSON.name)

    def grade() -> GradeRow:
        [row] = grade_all(ROOT / "notebooks", base / "submissions", base / "course", base / "grades.csv",
                          POLICY, say=lambda line: None)
        return row

    before = grade()
    # nbgrader finds the course through nbgrader_config.py in the folder JupyterLab is started from.
    course = base / "course"
    server = start_lab(base, course, base / "jupyterlab.log", cwd=course)
    try:
        lesson = LESSON.stem
        [listed] = server.api("GET", f"/formgrader/api/submitted_notebooks/{lesson}/{lesson}")
        page = server.request("GET", f"/formgrader/submissions/{listed['id']}/").decode()
        grades = server.api("GET", f"/formgrader/api/grades?submission_id={listed['id']}")
        marks = {}
        for grade_ in grades:
            if grade_["needs_manual_grade"]:
                marks[grade_["name"]] = grade_["max_score"] - 0.5  # the instructor takes half a point off
                server.api("PUT", f"/formgrader/api/grade/{grade_['id']}",
                           {"manual_score": marks[grade_["name"]]})
        after_marking = server.api("GET", f"/formgrader/api/submitted_notebooks/{lesson}/{lesson}")[0]
    finally:
        server.stop()
    return {"before": before, "listed": listed, "page": page, "marks": marks,
            "after_marking": after_marking, "after": grade()}


def test_submission_waits_for_its_written_answers(graded_by_hand):
    written = written_answers(LESSON)
    assert written, f"{LESSON.name} has no written answer to grade by hand"
    before, listed = graded_by_hand["before"], graded_by_hand["listed"]
    assert before.to_grade_by_hand == sum(written.values())
    assert before.score == before.auto_score == before.auto_max_score
    assert listed["student"] == "ann" and listed["needs_manual_grade"]
    assert listed["max_written_score"] == sum(written.values()) and listed["written_score"] == 0


def test_manual_grading_page_shows_each_written_answer(graded_by_hand):
    page = graded_by_hand["page"]  # an HTTP error status would have raised
    for grade_id in written_answers(LESSON):
        assert grade_id in page, f"{grade_id} not on the manual grading page"


def test_hand_marks_count_and_survive_grading_again(graded_by_hand):
    marks, after = graded_by_hand["marks"], graded_by_hand["after"]
    assert set(marks) == set(written_answers(LESSON))
    assert not graded_by_hand["after_marking"]["needs_manual_grade"]
    assert after.auto_score == after.auto_max_score
    assert after.score == after.auto_score + sum(marks.values())
    assert after.to_grade_by_hand == 0
