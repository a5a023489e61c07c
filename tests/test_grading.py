"""Graded exercises end to end: the exercise format, student copies, autograding (copies: test_copies.py).

Three grading runs are shared by the tests (each is slow: it executes notebooks):
- every lesson graded once with right answers and blank (``graded_lessons``): each lesson's notebook is
  executed three times in all, the instructor's own run for the reference results, the right answers and
  the blank copy;
- a class of crafted bad submissions to lesson 00, one per failure mode (``crafted``);
- one submission too slow overall, for the per-submission time limit (``too_slow``).
Everything is written under pytest's temporary folders; ``make`` runs with the virtualenv as it is.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import time
from pathlib import Path

import answers
import nbformat
import pytest
from conftest import NOTEBOOKS, ROOT, STUDENT_CACHE, make

from selfattention.coursework import lessons
from selfattention.coursework.folder import CourseFolder
from selfattention.coursework.grading import GradeRow, RunPolicy, grade_all

LESSON00 = ROOT / "notebooks" / "00_roadmap.ipynb"
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?", re.S | re.M)
SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)\n[ \t]*### END SOLUTION", re.S)


def exercise_cells(nb) -> tuple[list, list, list]:
    """(answer cells, autograded test cells, hand-graded answers) of a notebook."""
    answers = [c for c in nb.cells if lessons.is_answer(c) and not lessons.is_graded(c)]
    tests = [c for c in nb.cells if lessons.is_test(c)]
    written = [c for c in nb.cells if lessons.is_hand_graded(c)]
    return answers, tests, written


def read(path: Path):
    return nbformat.read(path, as_version=4)


# --- the authoring format (no execution) -------------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_lesson_follows_the_exercise_format(path):
    nb = read(path)
    answers, tests, written = exercise_cells(nb)
    ids = [lessons.grade_id(c) for c in nb.cells if lessons.grade_id(c)]
    assert len(ids) == len(set(ids)), f"{path.name}: duplicate grade_id in {ids}"
    need_tests, need_written = (1, 0) if path.name.startswith("00_") else (3, 1)
    assert len(tests) >= need_tests, f"{path.name}: {len(tests)} autograded exercises, need {need_tests}"
    assert len(written) >= need_written, f"{path.name}: {len(written)} written questions, need {need_written}"
    for cell in answers:
        assert cell.cell_type == "code" and SOLUTION.search(cell.source), (
            f"{path.name}: answer cell {lessons.grade_id(cell)} has no ### BEGIN/END SOLUTION region"
        )
    for cell in tests:
        gid, src = lessons.grade_id(cell), cell.source
        assert cell.cell_type == "code" and lessons.is_locked(cell), f"{path.name}: {gid} is not locked"
        assert lessons.points(cell) > 0, f"{path.name}: {gid} has no points"
        visible = src.split("### BEGIN HIDDEN TESTS")[0]
        assert re.search(r"checks\.check_\w+\(", visible), f"{path.name}: {gid} has no visible checks.check_*"
        hidden = HIDDEN.search(src)
        assert hidden and "assert" in hidden.group(0), f"{path.name}: {gid} has no hidden test with an assert"
        assert re.search(rf"_record\(\s*\"{re.escape(gid)}\"", hidden.group(0)), (
            f"{path.name}: {gid}'s hidden test hands the grader no result: end it with _record({gid!r}, ...)"
        )
    for cell in written:
        gid = lessons.grade_id(cell)
        assert cell.cell_type == "markdown" and lessons.points(cell) > 0, f"{path.name}: {gid}"


# --- student copies (make release) -------------------------------------------------------------


@pytest.fixture(scope="session")
def released(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release")
    make("release", f"COURSE={STUDENT_CACHE}", f"RELEASE={out}")  # the tests' shared student versions
    return out


def test_release_holds_one_student_notebook_per_lesson_and_nothing_else(released):
    assert sorted(p.name for p in released.iterdir()) == [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_student_copy_has_no_solution_no_hidden_test_no_output(path, released):
    source, student = read(path), read(released / path.name)
    text = json.dumps(student)
    for marker in MARKERS:
        assert marker not in text, f"{path.name}: student copy contains {marker!r}"
    assert "widgets" not in student.metadata, f"{path.name}: saved widget state (old outputs) left in"
    for cell in student.cells:
        assert not cell.get("outputs") and not cell.get("execution_count"), f"{path.name}: outputs left in"
    mine = lessons.grade_cells(student)
    for gid, cell in lessons.grade_cells(source).items():
        copy = mine[gid]
        if lessons.is_answer(cell):
            for region in SOLUTION.findall(cell.source) or [cell.source]:
                for line in region.splitlines():
                    line = line.strip()
                    if len(line) > 3 and line not in SOLUTION.sub("", cell.source):
                        assert line not in copy.source, f"{path.name}: solution line {line!r} in student copy"
            if cell.cell_type == "code":
                stub = [line.strip() for line in copy.source.splitlines()]
                assert all(line in stub for line in lessons.CODE_STUB.split("\n")), (
                    f"{path.name}: no stub: {copy.source!r}")
        elif lessons.is_graded(cell):
            assert copy.source.strip() == HIDDEN.sub("", cell.source).strip(), (
                f"{path.name}: test {gid} differs from the source without its hidden tests"
            )


# --- autograding every lesson: right answers full marks, blank copies 0 -----------------------


def right_answers(path: Path, student: dict) -> dict:
    """``student`` (a lesson's student version) with every code answer right: the answers tests/answers/
    wrote from the lesson's own words where it has them, else the instructor's model answers."""
    mine = answers.answers_for(path)
    if mine is not None:
        return answers.fill(student, mine)
    model = {lessons.grade_id(c): lessons.solution_parts(lessons.source(c), lessons.CODE_STUB)[1]
             for c in read(path).cells if lessons.is_code_answer(c)}
    filled = json.loads(json.dumps(student))
    for cell in filled["cells"]:
        if lessons.is_code_answer(cell):
            cell["source"] = model[lessons.grade_id(cell)]
    return filled


def _selected_lessons(session: pytest.Session) -> list[Path]:
    """The lessons the selected tests of this run grade (``-k 06_scaling`` grades lesson 06 alone)."""
    stems = {item.callspec.params["path"].stem for item in session.items
             if "graded_lessons" in getattr(item, "fixturenames", ())
             and "path" in getattr(getattr(item, "callspec", None), "params", {})}
    return [p for p in NOTEBOOKS if p.stem in stems] or NOTEBOOKS


@pytest.fixture(scope="session")
def graded_lessons(request, tmp_path_factory, released) -> tuple[dict[tuple[str, str], GradeRow], Path]:
    """Every selected lesson graded twice: blank as released ("blank"), and with right answers ("right":
    written from the lesson's own words where tests/answers/ has them, else the instructor's). The
    instructor's own notebook runs once more, for the reference results, and must pass its own hidden tests
    (grading stops, naming the cell, otherwise). Returns ``{(learner, lesson): row}`` and the folder holding
    the course."""
    base = tmp_path_factory.mktemp("lessons")
    for learner in ("blank", "right"):
        (base / "submissions" / learner).mkdir(parents=True)
    for path in _selected_lessons(request.session):
        shutil.copyfile(released / path.name, base / "submissions" / "blank" / path.name)
        student = json.loads((released / path.name).read_text(encoding="utf-8"))
        target = base / "submissions" / "right" / path.name
        target.write_text(json.dumps(right_answers(path, student)), encoding="utf-8")
    rows = grade_all(ROOT / "notebooks", base / "submissions", base / "course", base / "grades.csv",
                     RunPolicy(), say=lambda line: None, jobs=2)
    return {(r.learner, r.lesson): r for r in rows}, base


def autograded(graded_lessons, learner: str, lesson: str):
    return read(graded_lessons[1] / "course" / "autograded" / learner / lesson / f"{lesson}.ipynb")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_right_answers_get_full_marks(path, graded_lessons):
    """A right answer passes the visible check and the hidden tests alike, and no cell raises: answers in
    the lesson's own words (no hidden test judges by a rule the lesson does not state), or the instructor's
    own (which must also pass their own references: the results do not change from one run to the next)."""
    row = graded_lessons[0][("right", path.stem)]
    assert row.auto_max_score > 0
    assert row.auto_score == row.auto_max_score, f"{path.name}: {row.reason}"
    assert row.reason.startswith("all tests pass"), row.reason
    nb = autograded(graded_lessons, "right", path.stem)
    errors = [i for i, c in enumerate(nb.cells) for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, f"{path.name}: cells {errors} raise with right answers in"
    _, tests, _ = exercise_cells(nb)
    for cell in tests:
        printed = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        assert "Correct" in printed, f"{path.name}: {lessons.grade_id(cell)} printed {printed[:200]!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_blank_copy_scores_zero_and_every_test_fails_with_words(path, graded_lessons):
    row = graded_lessons[0][("blank", path.stem)]
    assert row.auto_score == 0, f"{path.name}: a blank copy scores {row.auto_score}: {row.reason}"
    nb = autograded(graded_lessons, "blank", path.stem)
    _, tests, _ = exercise_cells(nb)
    for cell in tests:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert errors and errors[0].ename == "ExerciseError", (
            f"{path.name}: test {lessons.grade_id(cell)} on a blank answer should fail in its visible "
            f"check with a message; it gave {[(o.ename, o.evalue) for o in errors]}"
        )
    broken = [i for i, c in enumerate(nb.cells) if not lessons.is_graded(c)
              for o in c.get("outputs", []) if o.output_type == "error"]
    assert not broken, f"{path.name}: with blank answers, cells {broken} raise (they use an answer's name?)"


# --- crafted bad submissions to lesson 00 ------------------------------------------------------

#: A cell limit with room for the lesson's first cell (it imports torch: 8 s was too short at load 6).
CRAFTED_LIMITS = {"CELL_TIMEOUT": 20, "SUBMISSION_TIMEOUT": 240, "JOBS": 2}


def _crafted(student) -> dict[str, str | object]:
    """One notebook (or broken file) per failure mode, made from lesson 00's student copy."""
    source = read(LESSON00)
    answer = next(c for c in source.cells if lessons.is_code_answer(c))
    test = next(c for c in source.cells if lessons.is_test(c))
    right = answer.source.replace("### BEGIN SOLUTION\n", "").replace("### END SOLUTION", "")
    check = re.search(r"checks\.(check_\w+)\(", test.source).group(1)
    answer_id, test_id = lessons.grade_id(answer), lessons.grade_id(test)
    blank = next(c for c in student.cells if lessons.grade_id(c) == answer_id).source
    ignore_interrupts = "\nimport signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)"
    redefine = f"\n{check} = checks.{check} = lambda *args, **kwargs: print('Correct: surely')"

    def variant(answer_source=None, drop_test=False, test_source=None):
        nb = nbformat.from_dict(json.loads(json.dumps(student)))
        for cell in nb.cells:
            gid = lessons.grade_id(cell)
            if gid == answer_id and answer_source is not None:
                cell.source = answer_source
            if gid == test_id and test_source is not None:
                cell.source = test_source
        if drop_test:
            nb.cells = [c for c in nb.cells if lessons.grade_id(c) != test_id]
        return nb

    died_after = variant(right)  # the kernel dies after the test: the verdict it gave is kept
    at = next(i for i, c in enumerate(died_after.cells) if lessons.grade_id(c) == test_id)
    died_after.cells.insert(at + 1, nbformat.v4.new_code_cell("import os\nos._exit(1)"))
    return {
        "correct": variant(right),
        "blank": variant(),
        "raises": variant(blank + "\nraise ValueError('I give up')"),
        "loops": variant(blank + "\nwhile True:\n    pass"),
        "stuck": variant(blank + ignore_interrupts + "\nwhile True:\n    pass"),
        "died": variant(right + "\nimport os\nos._exit(1)"),
        "died_after": died_after,
        "chatty": variant(right + "\nprint('x' * 5_000_000)\nfor _ in range(20_000):\n    print('again')"),
        "deleted": variant(right, drop_test=True),
        "edited": variant(right, test_source="print('Correct: trust me')"),
        "notjson": json.dumps(student)[:4000],
        "cheat": variant(blank + redefine),
    }


# learner: (autograded score, words the reason must contain)
EXPECTED = {
    "correct": (1.0, ["all tests pass"]),
    "blank": (0.0, ["Warm-up exercise (1 point): ", "apple_weights is None"]),
    "raises": (0.0, ["answer cell warmup-answer raised ValueError: I give up",
                     "Warm-up exercise (1 point): "]),
    "loops": (0.0, ["answer cell warmup-answer ran longer than 20 s and was stopped"]),
    "stuck": (0.0, ["kept running after it was interrupted at the 20 s limit in answer cell warmup-answer",
                    "Warm-up exercise (1 point): not run: "]),
    "died": (0.0, ["kernel died", "in answer cell warmup-answer", "Warm-up exercise (1 point): not run: "]),
    "died_after": (1.0, ["all tests pass", "kernel died (it exited or crashed) in cell",
                         "the cells after it were not run"]),
    "chatty": (1.0, ["printed 5.", "MB; the first 1.0 MB are kept"]),
    "deleted": (0.0, ["Warm-up exercise (1 point): its cell was deleted, 0 for it"]),
    "edited": (1.0, ["Warm-up exercise (1 point): its test cell was changed", "the course's test was run"]),
    "notjson": (0.0, ["not a valid notebook", "0 for the lesson"]),
    "cheat": (0.0, ["redefines a check function", "the visible check passed but a hidden test did not"]),
}


@pytest.fixture(scope="session")
def crafted(tmp_path_factory, released) -> dict:
    base = tmp_path_factory.mktemp("crafted")
    for learner, nb in _crafted(read(released / LESSON00.name)).items():
        (base / "submissions" / learner).mkdir(parents=True)
        target = base / "submissions" / learner / LESSON00.name
        target.write_text(nb if isinstance(nb, str) else nbformat.writes(nb), encoding="utf-8")
    start = time.monotonic()
    proc = make("grade", f"NOTEBOOKS={ROOT / 'notebooks'}", f"SUBMISSIONS={base / 'submissions'}",
                f"COURSE={base / 'course'}", f"GRADES={base / 'grades.csv'}",
                *(f"{k}={v}" for k, v in CRAFTED_LIMITS.items()))
    elapsed = time.monotonic() - start
    with open(base / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {row["learner"]: row for row in csv.DictReader(f)}
    return {"rows": rows, "elapsed": elapsed, "base": base, "stdout": proc.stdout}


def test_crafted_class_is_graded_within_its_time_bound(crafted):
    n = len(EXPECTED)
    bound = n * CRAFTED_LIMITS["SUBMISSION_TIMEOUT"]
    print(f"\ngraded {n} crafted submissions in {crafted['elapsed']:.0f} s "
          f"({crafted['elapsed'] / n:.1f} s each; bound {bound} s)")
    assert crafted["elapsed"] < bound
    assert sorted(crafted["rows"]) == sorted(EXPECTED)


@pytest.mark.parametrize("learner", list(EXPECTED))
def test_crafted_submission_scored_with_a_reason(learner, crafted):
    row = crafted["rows"][learner]
    score, words = EXPECTED[learner]
    assert float(row["auto_score"]) == score and float(row["score"]) == score, row
    assert float(row["max_score"]) == 1.0, row
    for word in words:
        assert word in row["reason"], f"{learner}: {word!r} not in reason {row['reason']!r}"


def test_csv_has_the_documented_columns(crafted):
    with open(crafted["base"] / "grades.csv", newline="", encoding="utf-8") as f:
        header = next(csv.reader(f))
    assert header == ["learner", "lesson", "score", "max_score", "auto_score", "auto_max_score",
                      "to_grade_by_hand", "reason", "isolation"]


def test_scores_are_those_in_the_gradebook(crafted):
    with CourseFolder(crafted["base"] / "course").gradebook() as gb:
        for learner, row in crafted["rows"].items():
            sub = gb.find_submission_notebook("00_roadmap", "00_roadmap", learner)
            assert float(sub.score) == float(row["score"]), learner


def test_no_kernel_outlives_the_grading(crafted):
    psutil = pytest.importorskip("psutil")
    root = str(crafted["base"])
    left = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        try:
            if proc.cwd().startswith(root):
                left.append(proc.info)
        except (psutil.Error, OSError):
            continue
    assert not left, f"processes still running in the grading folders: {left}"


@pytest.fixture(scope="session")
def too_slow(tmp_path_factory, released) -> tuple[GradeRow, float]:
    """Each cell within the cell limit, the whole notebook well past the submission limit."""
    base = tmp_path_factory.mktemp("slow")
    nb = _crafted(read(released / LESSON00.name))["correct"]
    at = next(i for i, c in enumerate(nb.cells) if lessons.is_answer(c))
    nb.cells[at:at] = [nbformat.v4.new_code_cell("import time\ntime.sleep(6)") for _ in range(5)]
    (base / "submissions" / "slow").mkdir(parents=True)
    nbformat.write(nb, base / "submissions" / "slow" / LESSON00.name)
    start = time.monotonic()
    policy = RunPolicy(cell_timeout=10, submission_timeout=20)
    [row] = grade_all(ROOT / "notebooks", base / "submissions", base / "course", base / "grades.csv",
                      policy, say=lambda line: None)
    return row, time.monotonic() - start


def test_submission_time_limit_stops_a_notebook_that_never_finishes(too_slow):
    row, elapsed = too_slow
    assert row.score == 0 and row.auto_score == 0 and row.max_score == 1
    assert "grading stopped after 20 s (the limit per submission)" in row.reason
    # 30 s of sleeping never completed; what remains is starting nbgrader and the bookkeeping
    assert elapsed < 20 + 120 + 60, elapsed
