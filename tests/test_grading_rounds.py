"""Rounds of graded work as a class lives them, on a small lesson of its own (seconds per run).

- Through nbgrader's exchange (a local folder): release, a learner fetches and submits, collect,
  `make grade` on the collected work, `make feedback`, release_feedback, and the learner fetches
  the course's feedback page (not nbgrader's, which shows the hidden tests).
- A hand mark given to an answer that changes afterwards is set aside, with a note, not kept.
- A lesson changed after release (a graded cell added, a test reworded) keeps the hand marks.

Submissions run without the sandbox here (``RunPolicy(isolation="none")``): what is tested is the
bookkeeping around them, which is the same either way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from tiny_lesson import COURSE_ID, LESSON, fill, release, write_lesson

from selfattention.coursework import lessons
from selfattention.coursework.feedback import write_feedback
from selfattention.coursework.folder import CourseFolder
from selfattention.coursework.grading import GradeRow, RunPolicy, grade_all

POLICY = RunPolicy(cell_timeout=60, submission_timeout=300, isolation="none")


def grade(base: Path) -> dict[str, GradeRow]:
    rows = grade_all(base / "notebooks", base / "submissions", base / "course", base / "grades.csv",
                     POLICY, say=lambda line: None)
    return {row.learner: row for row in rows}


def hand_mark(course: Path, learner: str, grade_id: str, score: float) -> None:
    """What the formgrader does when a grader saves a mark (tests/test_formgrader.py drives it)."""
    with CourseFolder(course).gradebook() as gb:
        found = gb.find_grade(grade_id, LESSON, LESSON, learner)
        found.manual_score = score
        found.needs_manual_grade = False
        gb.db.commit()


# --- nbgrader's exchange, end to end ---------------------------------------------------------


def nbgrader(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """An nbgrader command as one user of the hub: own home (config, cache)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env.update(HOME=str(home), JUPYTER_CONFIG_DIR=str(home / ".jupyter"))
    result = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


def user_home(base: Path, name: str, settings: str) -> Path:
    home = base / "home" / name
    (home / ".jupyter").mkdir(parents=True)
    (home / ".jupyter" / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.Exchange.root = {str(base / 'exchange')!r}\n{settings}", encoding="utf-8")
    return home


@pytest.fixture(scope="module")
def exchange_round(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("exchange")
    write_lesson(base / "notebooks")
    course = base / "course"
    (base / "exchange").mkdir()
    (base / "exchange").chmod(0o777)
    instructor = user_home(base, "instructor", f"c.CourseDirectory.root = {str(course)!r}\n")
    release(base)
    nbgrader(instructor, course, "release_assignment", LESSON)
    # on a hub each learner is a user of their own; here one OS user, so the learner's id is set
    ann = user_home(base, "ann",
                    "c.Exchange.path_includes_course = False\nc.CourseDirectory.student_id = 'ann'\n")
    nbgrader(ann, ann, "fetch_assignment", LESSON)
    fetched = ann / LESSON / f"{LESSON}.ipynb"
    fill(fetched, fetched, "Three is what the task asks for.")
    nbgrader(ann, ann, "submit", LESSON)
    nbgrader(instructor, course, "collect", LESSON)
    collected = course / "submitted" / "ann" / LESSON
    receipts = {p.name: p.read_bytes() for p in collected.glob("*.txt")}
    # docs/instructors.md, section 4: copy what collect gathered into submissions/, then make grade
    (base / "submissions" / "ann").mkdir(parents=True)
    shutil.copyfile(collected / f"{LESSON}.ipynb", base / "submissions" / "ann" / f"{LESSON}.ipynb")
    row = grade(base)["ann"]
    after_grading = {p.name: p.read_bytes() for p in collected.glob("*.txt")}
    [page] = write_feedback(course, base / "feedback", say=lambda line: None)
    nbgrader(instructor, course, "release_feedback", LESSON)
    nbgrader(ann, ann, "fetch_feedback", LESSON)
    return {"row": row, "receipts": receipts, "after_grading": after_grading, "page": page,
            "fetched": sorted((ann / LESSON / "feedback").glob(f"*/{LESSON}.html")),
            "exchange": sorted((base / "exchange" / COURSE_ID / "feedback").glob("*.html"))}


def test_grading_keeps_what_collect_wrote(exchange_round):
    receipts = exchange_round["receipts"]
    assert set(receipts) == {"timestamp.txt", "submission_secret.txt"}, "collect wrote other files"
    assert exchange_round["after_grading"] == receipts
    assert exchange_round["row"].auto_score == 1 and exchange_round["row"].to_grade_by_hand == 2


def test_learner_fetches_the_course_feedback_page_without_hidden_tests(exchange_round):
    [fetched], [released] = exchange_round["fetched"], exchange_round["exchange"]
    ours = exchange_round["page"].read_bytes()
    assert fetched.read_bytes() == released.read_bytes() == ours
    text = ours.decode()
    assert f"{LESSON}: feedback for ann" in text and "Three is what the task asks for." in text
    for hidden in ("HIDDEN TESTS", "_record", "float(x) == 3.0"):
        assert hidden not in text


# --- hand marks and answers that change ------------------------------------------------------


@pytest.fixture(scope="module")
def marked(tmp_path_factory) -> Path:
    """A course with ann's lesson graded once and her written answer marked 1.5 of 2 by hand."""
    base = tmp_path_factory.mktemp("marks")
    write_lesson(base / "notebooks")
    student = release(base)
    fill(student, base / "submissions" / "ann" / f"{LESSON}.ipynb", "First thoughts.")
    shutil.copyfile(student, base / "student.ipynb")
    first = grade(base)["ann"]
    assert (first.score, first.to_grade_by_hand) == (1, 2)
    hand_mark(base / "course", "ann", "tiny-written", 1.5)
    return base


@pytest.fixture
def course(marked, tmp_path) -> Path:
    base = tmp_path / "copy"
    shutil.copytree(marked, base)
    return base


def test_mark_on_an_unchanged_answer_is_kept_silently(course):
    for _ in range(2):
        row = grade(course)["ann"]
        assert (row.score, row.to_grade_by_hand) == (2.5, 0)
        assert "marked by hand" not in row.reason


def test_mark_on_a_changed_answer_is_set_aside_with_a_note(course):
    fill(course / "student.ipynb", course / "submissions" / "ann" / f"{LESSON}.ipynb", "Second thoughts.")
    row = grade(course)["ann"]
    assert (row.score, row.auto_score, row.to_grade_by_hand) == (1, 1, 2)
    assert ("Question 2 (2 points): the answer changed after it was marked by hand (1.5 points): "
            "that mark is set aside, grade it by hand again") in row.reason
    assert "written answers (2 points) await grading by hand" in row.reason
    again = grade(course)["ann"]  # still waiting, and said once, not on every run
    assert (again.score, again.to_grade_by_hand) == (1, 2) and "marked by hand" not in again.reason
    hand_mark(course / "course", "ann", "tiny-written", 2)  # the grader reads the new answer
    after = grade(course)["ann"]
    assert (after.score, after.to_grade_by_hand) == (3, 0) and "marked by hand" not in after.reason


def test_a_code_answer_changing_does_not_touch_the_hand_mark(course):
    path = course / "submissions" / "ann" / f"{LESSON}.ipynb"
    nb = nbformat.read(path, as_version=4)
    [answer] = [c for c in nb.cells if lessons.grade_id(c) == "tiny-x-answer"]
    answer.source = "x = 4"
    nbformat.write(nb, path)
    row = grade(course)["ann"]
    assert (row.score, row.auto_score, row.to_grade_by_hand) == (1.5, 0, 0)
    assert "marked by hand" not in row.reason


# --- a lesson changed after release ----------------------------------------------------------


def test_lesson_changed_after_release_keeps_hand_marks_and_counts_the_new_cell(course):
    write_lesson(course / "notebooks", changed=True)  # a test reworded, an exercise added
    student = release(course)
    assert "x is still None" in student.read_text()
    fill(student, course / "submissions" / "bob" / f"{LESSON}.ipynb", "Bob's reason.")  # the new version
    rows = grade(course)
    ann, bob = rows["ann"], rows["bob"]
    assert (ann.max_score, ann.auto_max_score) == (4, 2)
    assert (ann.score, ann.auto_score, ann.to_grade_by_hand) == (2.5, 1, 0), ann.reason
    assert "Exercise 3 (1 point)" in ann.reason  # not in her copy: 0 for it, with a reason
    assert (bob.score, bob.auto_score, bob.to_grade_by_hand) == (2, 2, 2), bob.reason
    hand_mark(course / "course", "bob", "tiny-written", 2)
    again = grade(course)
    assert (again["ann"].score, again["bob"].score) == (2.5, 4)
    assert again["ann"].reason == ann.reason


def test_lesson_losing_a_graded_cell_keeps_hand_marks(course):
    write_lesson(course / "notebooks", changed=True)
    fill(release(course), course / "submissions" / "bob" / f"{LESSON}.ipynb", "Bob's reason.")
    assert grade(course)["bob"].score == 2
    hand_mark(course / "course", "bob", "tiny-written", 1)
    write_lesson(course / "notebooks")  # the added exercise taken out again; bob's copy still has it
    rows = grade(course)
    assert (rows["ann"].max_score, rows["ann"].score) == (3, 2.5), rows["ann"].reason
    bob = rows["bob"]
    assert (bob.max_score, bob.score, bob.auto_score, bob.to_grade_by_hand) == (3, 2, 1, 0), bob.reason
    assert "cell tiny-y-test is not in the lesson any more: not graded" in bob.reason


# --- an instructor's mistake -----------------------------------------------------------------


def test_a_hidden_test_that_records_nothing_stops_make_grade_with_one_line(tmp_path):
    """The instructor forgot ``_record`` in a hidden test: ``make grade`` names the cell and the fix in one
    line (no traceback), exits 2, and writes no CSV."""
    path = write_lesson(tmp_path / "notebooks")
    nb = nbformat.read(path, as_version=4)
    [test] = [c for c in nb.cells if lessons.grade_id(c) == "tiny-x-test"]
    test.source = test.source.replace("_record('tiny-x-test', float(x))\n", "")
    nbformat.write(nb, path)
    fill(release(tmp_path), tmp_path / "submissions" / "ann" / f"{LESSON}.ipynb", "Because.")
    proc = subprocess.run(
        [sys.executable, "-m", "selfattention.coursework", "--notebooks", str(tmp_path / "notebooks"),
         "grade", "--submissions", str(tmp_path / "submissions"), "--build", str(tmp_path / "course"),
         "--out", str(tmp_path / "grades.csv"), "--isolation", "none"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 2, proc
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "test cell tiny-x-test hands the grader no result" in proc.stderr
    assert "_record('tiny-x-test', value)" in proc.stderr
    assert not (tmp_path / "grades.csv").exists()
