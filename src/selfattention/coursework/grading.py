"""``make grade``: autograde every submission, headless, and write one CSV row per learner and lesson.

The pipeline, one module a step::

    submissions.find_submissions  what was handed in (submissions/LEARNER/NN_topic.ipynb)
    course.generate_student_versions  the lessons as learners got them (names of exercises, cells)
    verdicts.reference_records    the instructor's own run: the results each test must reproduce
    submissions.prepare           read, checked (tampering, duplicates), put in the course folder
    runner.run_batch              each submission executed under the RunPolicy, sealed off
    verdicts.judge_tests          each test passed or not, and why, in words
    gradebook.record_scores       the points in nbgrader's gradebook; hand marks reviewed
    folder.write_verdict          what make feedback shows; the row goes to the CSV

The CSV is written whole at the end (a temporary file renamed over it); rows also go one by one to
``grades.partial.csv`` as they are graded. A run that would lose the instructor's data (nothing to
grade, fewer rows than the last CSV, another run on the same course folder) is refused.
"""

from __future__ import annotations

import csv
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from . import gradebook, lessons
from .course import generate_student_versions
from .folder import CourseFolder, Verdict
from .runner import Outcome, RunPolicy, run_batch, unavailable
from .submissions import Submission, find_submissions, prepare, read_notebook
from .verdicts import LessonBroken, execution_notes, judge_tests, reference_records

__all__ = ["GradeRow", "GradingRefused", "IsolationUnavailable", "LessonBroken", "RunPolicy",
           "find_submissions", "grade_all", "write_csv", "partial_csv"]


class GradingRefused(RuntimeError):
    """A run that would lose the instructor's data (fewer rows, a concurrent run) is refused."""


class IsolationUnavailable(RuntimeError):
    """A sandbox was asked for and this machine cannot make one."""


@dataclass
class GradeRow:
    """One line of ``grades.csv``.

    ``score``/``max_score`` are nbgrader's totals (autograded tests plus written answers as graded
    by hand so far); ``auto_score``/``auto_max_score`` the autograded tests alone;
    ``to_grade_by_hand`` the points of written answers still waiting for a grader.
    """

    learner: str
    lesson: str
    score: float
    max_score: float
    auto_score: float
    auto_max_score: float
    to_grade_by_hand: float
    reason: str
    isolation: str = ""


# --- the CSV ----------------------------------------------------------------------------------------


def _csv_line(row: GradeRow) -> list[str]:
    return [f"{v:g}" if isinstance(v, float) else str(v) for v in astuple(row)]


def write_csv(rows: list[GradeRow], path: Path) -> None:
    """Write ``rows`` to ``path`` all at once: a temporary file beside it, then renamed over it,
    so a run killed while writing leaves the previous CSV whole."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([f.name for f in fields(GradeRow)])
        writer.writerows(_csv_line(row) for row in rows)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def partial_csv(out: Path) -> Path:
    """Where the rows of a run are written one by one as they are graded (kept if it is killed)."""
    return Path(out).with_name(Path(out).stem + ".partial.csv")


def _existing_rows(out: Path) -> set[tuple[str, str]]:
    """``(learner, lesson)`` of every row of the CSV already at ``out`` (none if there is none)."""
    try:
        with open(out, newline="", encoding="utf-8") as f:
            return {(r.get("learner", ""), r.get("lesson", "")) for r in csv.DictReader(f)}
    except FileNotFoundError:
        return set()


@contextmanager
def _course_lock(folder: CourseFolder) -> Iterator[None]:
    """Hold the folder's ``.grading.lock`` (flock) for the whole run; a second run on the same course
    folder is refused at once. The lock goes with the process, even if it is killed."""
    folder.root.mkdir(parents=True, exist_ok=True)
    with open(folder.lock_file, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            raise GradingRefused(
                f"another grading run is using {folder.root} ({f.read().strip() or 'pid unknown'}); "
                "wait for it to finish (two runs on one course folder would corrupt its gradebook)"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        f.flush()
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# --- one lesson, as the grader sees it --------------------------------------------------------------


@dataclass
class _Lesson:
    """A lesson's student version and what grading needs of it."""

    path: Path
    released: NotebookNode
    labels: dict[str, str]  # grade id -> "Exercise 3 (2 points)"
    hand_graded: set[str]
    references: dict[str, list[dict]]


def _finish(folder: CourseFolder, sub: Submission, lesson: _Lesson, failure: str | None,
            policy: RunPolicy) -> GradeRow:
    """Judge the tests from the results they handed over, write the points to the gradebook, keep the
    verdict for the feedback, and make the row."""
    name, notes, auto = sub.name, list(sub.notes), {}
    gradebook.restore_carried_marks(folder, name, sub.learner)
    if failure:
        notes.insert(0, failure)
    elif sub.valid:
        autograded = nbformat.read(folder.autograded(sub.learner, name), as_version=4)
        notes += execution_notes(autograded, policy.cell_timeout)
        points = {gid: lessons.points(cell) for gid, cell in lessons.grade_cells(lesson.released).items()}
        for gid, why in judge_tests(autograded, lesson.released, lesson.references, sub.zero).items():
            auto[gid] = points[gid] if why is None else 0.0
            if why is not None and gid not in sub.zero:
                notes.append(f"{lesson.labels[gid]}: {why}")
        answers = gradebook.answers_of(read_notebook(folder.submitted(sub.learner, name)))
        notes += gradebook.review_hand_marks(folder, name, sub.learner, answers, lesson.hand_graded,
                                             lesson.labels)
    broken = bool(failure) or not sub.valid
    totals = gradebook.record_scores(folder, name, sub.learner, lesson.hand_graded, auto, zero_all=broken)
    messages: dict[str, str | None] = {}
    for gid, label in lesson.labels.items():
        if broken:
            messages[gid] = failure or "the notebook could not be read"
        elif gid in auto:
            messages[gid] = next((n.split(": ", 1)[1] for n in notes if n.startswith(f"{label}: ")), None)
    folder.write_verdict(sub.learner, name, Verdict(messages, notes))
    if totals.auto_score == totals.auto_max_score and not broken:
        notes.insert(0, "all tests pass")
    if totals.to_grade_by_hand:
        notes.append(f"written answers ({totals.to_grade_by_hand:g} points) await grading by hand")
    return GradeRow(sub.learner, name, totals.score, totals.max_score, totals.auto_score,
                    totals.auto_max_score, totals.to_grade_by_hand, "; ".join(notes), policy.label)


# --- the run ----------------------------------------------------------------------------------------


def grade_all(
    notebooks: Path,
    submissions: Path,
    build: Path,
    out: Path,
    policy: RunPolicy | None = None,
    say: Callable[[str], None] = print,
    jobs: int = 1,
    replace: bool = False,
) -> list[GradeRow]:
    """Autograde every submission under ``submissions`` against the lessons in ``notebooks``.

    Inputs:
        build: the course folder (made if missing; its gradebook is kept between runs, so marks given by
            hand to written answers survive a regrade).
        out: the CSV to write (``learner, lesson, score, max_score, auto_score, auto_max_score,
            to_grade_by_hand, reason, isolation``).
        policy: the limits and the sandbox (default :class:`RunPolicy`: bwrap); ``RunPolicy(isolation=
            "none")`` grades without a sandbox, and every row says so.
        jobs: how many submissions run at the same time (one worker per lesson, or per share of
            the learners when there is a single lesson).
        replace: write the CSV even if it loses rows of the one already at ``out``.
    Returns the rows, in the CSV's order.
    Raises GradingRefused (nothing to grade, rows would be lost, another run holds the course folder),
    IsolationUnavailable if a sandbox was asked for and cannot be made here, LessonBroken if a lesson's
    own answers do not pass its hidden tests.
    """
    policy = policy or RunPolicy()
    if why := unavailable(policy):
        raise IsolationUnavailable(
            f"cannot grade sealed off: {why}.\nEach submission's code would run with the grader's "
            "full power (it could read the hidden tests and the gradebook, or change other grades). "
            "Install bubblewrap, or grade without isolation on purpose: make grade ISOLATION=none"
        )
    if not policy.sealed:
        say("WARNING: grading without isolation (ISOLATION=none): submissions run with the grader's "
            "rights; the CSV says so on every row")
    folder = CourseFolder(Path(build))
    found, skipped = find_submissions(Path(submissions), lessons.find_lessons(Path(notebooks)))
    for line in skipped:
        say(line)
    if not found:
        raise GradingRefused(
            f"no submission to grade in {submissions} (expected {Path(submissions)}/LEARNER/NN_topic.ipynb); "
            f"{out} is left as it was"
        )
    dropped = _existing_rows(Path(out)) - {(sub.learner, sub.name) for sub in found}
    if dropped and not replace:
        shown = ", ".join(f"{learner}/{lesson}" for learner, lesson in sorted(dropped)[:5])
        raise GradingRefused(
            f"{out} has {len(dropped)} rows that this run would not write ({shown}"
            f"{', ...' if len(dropped) > 5 else ''}): is SUBMISSIONS={submissions} the right folder? "
            f"{out} is left as it was; to replace it anyway: make grade REPLACE=1"
        )
    with _course_lock(folder):
        partial = partial_csv(Path(out))
        partial.parent.mkdir(parents=True, exist_ok=True)
        with open(partial, "w", newline="", encoding="utf-8") as progress:
            rows = _grade_locked(found, folder, policy, say, jobs, progress)
        write_csv(rows, Path(out))
        partial.unlink()
    say(f"wrote {len(rows)} rows to {out}")
    return rows


def _lessons(folder: CourseFolder, needed: list[Path], policy: RunPolicy, say: Callable[[str], None]
             ) -> dict[Path, _Lesson]:
    """The student versions of ``needed`` (made in the folder) and the instructor's reference runs."""
    releases = generate_student_versions(folder.root, needed)
    out = {}
    for path in needed:
        released = nbformat.read(releases[path.stem], as_version=4)
        say(f"running the instructor's {path.name} for the reference results")
        out[path] = _Lesson(path, released, lessons.exercise_labels(released), lessons.hand_graded(released),
                            reference_records(folder, path, policy))
    return out


def _grade_locked(found: list[Submission], folder: CourseFolder, policy: RunPolicy,
                  say: Callable[[str], None], jobs: int, progress: Any) -> list[GradeRow]:
    """The run itself, holding the course folder's lock; each row also goes to ``progress``."""
    progress_writer = csv.writer(progress)
    progress_writer.writerow([f.name for f in fields(GradeRow)])
    needed = sorted({sub.lesson for sub in found})
    by_path = _lessons(folder, needed, policy, say)
    for sub in found:
        prepare(folder, sub, by_path[sub.lesson].released, by_path[sub.lesson].labels)
    gradebook.add_learners(folder, sorted({sub.learner for sub in found}))  # before workers race to add them
    units = [[sub for sub in found if sub.lesson == path] for path in needed]
    if len(units) == 1 and jobs > 1:
        units = [units[0][i::jobs] for i in range(jobs) if units[0][i::jobs]]
    lock = threading.Lock()

    def grade_unit(unit: list[Submission]) -> list[GradeRow]:
        start, lesson = time.monotonic(), by_path[unit[0].lesson]
        by_learner, rows = {sub.learner: sub for sub in unit}, []

        def finish(outcome: Outcome) -> None:
            with lock:  # one reader/writer of the gradebook in this process at a time
                row = _finish(folder, by_learner[outcome.learner], lesson,
                              outcome.failure(policy, lesson.path.stem), policy)
                progress_writer.writerow(_csv_line(row))
                progress.flush()
                say(f"{row.learner} {row.lesson}: {row.score:g}/{row.max_score:g}  {row.reason}")
                rows.append(row)

        for sub in unit:
            if not sub.valid:
                finish(Outcome(sub.learner, "graded"))  # nothing to run: its notes say why
        runnable = [sub.learner for sub in unit if sub.valid]
        if runnable:
            run_batch(folder, lesson.path.stem, runnable, policy, finish)
        say(f"graded {len(unit)} submissions of {lesson.path.stem} in {time.monotonic() - start:.0f} s")
        return rows

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        rows = [row for unit_rows in pool.map(grade_unit, units) for row in unit_rows]
    rows.sort(key=lambda r: (r.learner, r.lesson))
    return rows
