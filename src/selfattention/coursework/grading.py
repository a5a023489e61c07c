"""Autograde every submission, headless, and write one CSV row per learner and lesson.

Submissions are laid out as ``submissions/LEARNER/NN_topic.ipynb``. Each one is autograded by
nbgrader in its own process, in the course directory ``build/course`` (sqlite gradebook), with:

- a per-cell time limit (a cell still running is interrupted and counts as an error);
- a per-cell output limit (output beyond it is dropped as it arrives);
- a per-submission time limit (the process and its kernel are killed; the lesson scores 0).

Scores are read from the gradebook. What the grader noticed goes into the ``reason`` column:
a notebook that is not valid JSON (0 for the lesson), a test cell deleted or edited (0 for that
test; nbgrader grades it as authored otherwise), answer cells redefining the check functions
(the hidden tests still decide), errors, timeouts, output cut short.
"""

from __future__ import annotations

import csv
import fcntl
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from . import find_lessons, sandbox
from .course import CUT_MARK, course_config, generate_student_versions
from .sandbox import Isolation, unavailable

__all__ = ["GradeRow", "GradingRefused", "IsolationUnavailable", "Limits", "find_submissions", "grade_all"]

_LEARNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _redefines_pattern() -> re.Pattern[str]:
    """Lines that define or assign one of the check functions, or replace the checks module."""
    try:
        from selfattention import checks

        names = "|".join(sorted(n for n in dir(checks) if n.startswith("check_"))) or r"check_\w+"
    except Exception:  # a lesson's checks module that does not import: fall back to the naming rule
        names = r"check_\w+"
    return re.compile(
        rf"^\s*(def\s+({names})\b|(\w+\.)*({names})\s*=(?!=)|(\w+\.)*checks\s*=(?!=)|setattr\s*\(\s*\w*checks)",
        re.M,
    )


class IsolationUnavailable(RuntimeError):
    """A sandbox was asked for and this machine cannot make one."""


@dataclass
class Limits:
    """How long and how loud a submission may be."""

    cell_timeout: int = 60  #: seconds per cell before it is interrupted
    submission_timeout: int = 300  #: seconds per submission before everything is killed
    max_output_bytes: int = 1_000_000  #: output kept per cell (characters; a figure is ~50 kB)


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


def find_submissions(
    submissions: Path, lessons: list[Path]
) -> tuple[list[tuple[str, Path, Path]], list[str]]:
    """``[(learner, lesson, submitted file)]`` under ``submissions/LEARNER/NN_topic.ipynb``, and
    one line for every file that was skipped (an unknown lesson name, a folder name that cannot be
    a learner id)."""
    by_name = {lesson.name: lesson for lesson in lessons}
    found, skipped = [], []
    if not Path(submissions).is_dir():
        return found, [f"no submissions folder at {submissions}"]
    for folder in sorted(p for p in Path(submissions).iterdir() if p.is_dir()):
        if folder.is_symlink():
            skipped.append(f"skipped {folder.name}/: a symbolic link, not a folder of its own")
            continue
        if not _LEARNER.match(folder.name):
            skipped.append(f"skipped {folder.name}/: a learner folder name uses letters, digits, _ . @ -")
            continue
        for path in sorted(folder.glob("*.ipynb")):
            if path.is_symlink() or not path.is_file():  # a FIFO would hang the run, a link read elsewhere
                skipped.append(f"skipped {folder.name}/{path.name}: not a regular file, not graded")
            elif path.name in by_name:
                found.append((folder.name, by_name[path.name], path))
            else:
                skipped.append(f"skipped {folder.name}/{path.name}: not the name of a lesson")
    return found, skipped


def _first_line(text: str, limit: int = 160) -> str:
    line = _ANSI.sub("", str(text)).strip().splitlines()[0] if str(text).strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _grade_cells(nb: NotebookNode) -> dict[str, NotebookNode]:
    return {
        c.metadata["nbgrader"]["grade_id"]: c
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade_id")
    }


def _tampering(submitted: NotebookNode, released: NotebookNode, source: NotebookNode) -> dict[str, str]:
    """Grade cells of the student version that are missing or changed in the submission.

    Returns ``{grade_id: what happened}``. Locked cells (the tests) must come back exactly as
    released (or as in the instructor's source); a written answer only has to come back.
    """
    mine = _grade_cells(submitted)
    authored = _grade_cells(source)
    broken = {}
    for grade_id, cell in _grade_cells(released).items():
        meta = cell.metadata["nbgrader"]
        if not meta.get("grade"):
            continue
        kind = "written answer" if meta.get("solution") else "test cell"
        if grade_id not in mine:
            broken[grade_id] = f"{kind} {grade_id} was deleted: 0 for it"
        elif meta.get("locked"):
            got = (mine[grade_id].cell_type, mine[grade_id].source.strip())
            allowed = {(c.cell_type, c.source.strip()) for c in (cell, authored.get(grade_id, cell))}
            if got not in allowed:
                broken[grade_id] = f"{kind} {grade_id} was edited: 0 for it"
    return broken


def _redefinitions(submitted: NotebookNode) -> list[str]:
    pattern, notes = _redefines_pattern(), []
    for cell in submitted.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution") and pattern.search(cell.source):
            notes.append(
                f"answer cell {meta.get('grade_id')} redefines a check function "
                "(the hidden tests do not use it)"
            )
    return notes


def _execution_notes(autograded: NotebookNode, cell_timeout: int) -> list[str]:
    """What went wrong while the submission ran, one short phrase per problem."""
    notes, other_errors = [], []
    for number, cell in enumerate(autograded.cells, start=1):
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        grade_id = meta.get("grade_id")
        text = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
        if CUT_MARK in text:
            cut = _first_line(text[text.index(CUT_MARK):]).rstrip("]")
            notes.append(cut.replace(CUT_MARK, f"cell {number}:", 1))
        errors = [o for o in cell.outputs if o.get("output_type") == "error"]
        if not errors:
            continue
        err = errors[-1]
        ename, evalue = err.get("ename", "Error"), _first_line(err.get("evalue", ""))
        if ename == "CellTimeoutError":
            kind = "test" if meta.get("grade") and not meta.get("solution") else "answer"
            what = f"{kind} cell {grade_id}" if grade_id else f"cell {number}"
            notes.append(f"{what} ran longer than {cell_timeout} s and was stopped")
        elif meta.get("grade") and not meta.get("solution"):
            if ename == "ExerciseError":
                notes.append(f"{grade_id} failed: {evalue}")
            elif ename == "AssertionError" and "Correct:" in text:
                notes.append(f"{grade_id} failed: the visible check passed but a hidden test did not")
            else:
                notes.append(f"{grade_id} failed: {ename}" + (f": {evalue}" if evalue else ""))
        elif meta.get("solution"):
            notes.append(f"answer cell {grade_id} raised {ename}" + (f": {evalue}" if evalue else ""))
        else:
            other_errors.append(f"cell {number} raised {ename}" + (f": {evalue}" if evalue else ""))
    if other_errors:
        more = f" (and {len(other_errors) - 1} more lesson cells)" if len(other_errors) > 1 else ""
        notes.append(other_errors[0] + more)
    return notes


def _kill_tree(pid: int) -> None:
    """Kill a process and everything it started (the kernel runs in a session of its own)."""
    import psutil

    try:
        parent = psutil.Process(pid)
        procs = [*parent.children(recursive=True), parent]
    except psutil.Error:  # already gone
        return
    for proc in procs:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(procs, timeout=10)


def _autograde_batch(root: Path, lesson: str, learners: list[str], limits: Limits,
                     isolation: Isolation) -> dict[str, str | None]:
    """Autograde the submissions of ``learners`` to ``lesson``, in a worker process.

    One worker grades them one after the other (nbgrader is imported once). The clock of each
    submission starts when the previous one is done; a submission that runs past
    ``limits.submission_timeout`` gets its worker and kernel killed, and a new worker carries on
    with the rest. Returns ``{learner: None if graded, else what went wrong}``.
    """
    logs = root / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    results: dict[str, str | None] = {}
    pending = list(learners)
    while pending:
        cmd = [
            sys.executable, "-m", "selfattention.coursework", "_autograde", str(root), lesson, *pending,
            "--cell-timeout", str(limits.cell_timeout), "--max-output-bytes", str(limits.max_output_bytes),
            "--isolation", isolation.mode, "--memory-limit", str(isolation.memory),
            "--max-processes", str(isolation.processes), "--disk-limit", str(isolation.disk),
        ]
        with open(logs / f"worker.{lesson}.log", "ab") as log:
            proc = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True,
                start_new_session=True,
            )
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
        deadline = time.monotonic() + _STARTUP + limits.submission_timeout
        while pending:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                _kill_tree(proc.pid)
                results[pending.pop(0)] = (
                    f"grading stopped after {limits.submission_timeout} s (the limit per submission): "
                    "the notebook never finished, 0 for the lesson"
                )
                break
            if line is None:  # the worker died without a word: blame the submission it was on
                results[pending.pop(0)] = "the autograder stopped on this notebook: 0 for the lesson"
                break
            word, learner, cause = (line.split() + ["", ""])[:3]
            if word == "READY":
                deadline = time.monotonic() + limits.submission_timeout
            elif word in ("GRADED", "FAILED") and learner == pending[0]:
                pending.pop(0)
                failure = _FAILURES.get(cause, _FAILURES["error"])
                results[learner] = None if word == "GRADED" else failure.format(
                    limit=limits.cell_timeout, log=f"{logs.name}/{learner}.{lesson}.log",
                    memory=sandbox.human_size(isolation.memory),
                )
                deadline = time.monotonic() + limits.submission_timeout
        _kill_tree(proc.pid)
        proc.wait()
    return results


_STARTUP = 120  # seconds a worker may take to import nbgrader on a busy machine
_FAILURES = {
    "stuck": "a cell kept running after it was interrupted at the {limit} s limit, so the notebook "
             "never finished: 0 for the lesson",
    "memory": "the notebook used more memory than the limit ({memory}) and was stopped: 0 for the lesson",
    "died": "the Python kernel died while running the notebook (it exited or crashed): 0 for the lesson",
    "error": "the autograder could not run this notebook (see {log}): 0 for the lesson",
}


def _pump(stream: Any, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def autograde_worker(
    root: str, lesson: str, learners: list[str], cell_timeout: int, max_output_bytes: int,
    isolation: Isolation | None = None,
) -> int:
    """Worker: nbgrader's autograde of each learner's submission already in ``root/submitted``.

    Prints ``READY`` once set up, then ``GRADED learner`` or ``FAILED learner cause`` (stuck, died
    or error) after each one;
    nbgrader's log of each goes to ``root/logs/learner.lesson.log``.
    """
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import capture_log

    config = course_config(Path(root), cell_timeout=cell_timeout, max_output_bytes=max_output_bytes,
                           isolation=isolation or Isolation())
    print("READY", flush=True)
    for learner in learners:
        sandbox.EVENTS.clear()
        for _attempt in range(3):  # a kernel dying as it starts (its port taken meanwhile): not the learner's
            coursedir = CourseDirectory(config=config)
            coursedir.assignment_id, coursedir.student_id = lesson, learner
            app = Autograde(coursedir=coursedir, config=config)
            app.force = True
            app.create_student = True
            result = capture_log(app)
            text = result.get("log", "") + result.get("error", "")
            if result["success"] or "before replying to kernel_info" not in text:
                break
        log = Path(root) / "logs" / f"{learner}.{lesson}.log"
        log.write_text(result.get("log", "") + result.get("error", ""), encoding="utf-8")
        if result["success"]:
            print("GRADED", learner, flush=True)
        else:
            text = result.get("error", "") + result.get("log", "")
            cause = ("memory" if "memory" in sandbox.EVENTS
                     else "stuck" if "CellTimeoutError" in text
                     else "died" if "DeadKernelError" in text or "Kernel died" in text else "error")
            print("FAILED", learner, cause, flush=True)
    return 0


def _scores(root: Path, lesson: Path, learner: str, released: NotebookNode,
            zero: set[str] | None = None, zero_all: bool = False) -> tuple[float, ...]:
    """Set the auto scores of the grade cells named in ``zero`` (or all) to 0 in the gradebook,
    then read ``(score, max_score, auto_score, auto_max_score, to_grade_by_hand)`` from it."""
    from nbgrader.api import Gradebook

    written = {
        gid for gid, c in _grade_cells(released).items()
        if c.metadata["nbgrader"].get("solution") and c.metadata["nbgrader"].get("grade")
    }
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        warnings.simplefilter("ignore")  # nbgrader's own SQLAlchemy warnings say nothing to a grader
        gb.update_or_create_student(learner)
        gb.update_or_create_submission(lesson.stem, learner)
        nb = gb.find_submission_notebook(lesson.stem, lesson.stem, learner)
        for grade in nb.grades:
            if zero_all or grade.name in (zero or set()):
                grade.auto_score = 0.0
                grade.needs_manual_grade = False
        gb.db.commit()
        rows = [(g.name, float(g.score), float(g.max_score), g.needs_manual_grade and g.manual_score is None)
                for g in nb.grades]
    score = sum(r[1] for r in rows)
    max_score = sum(r[2] for r in rows)
    auto = [r for r in rows if r[0] not in written]
    by_hand = sum(r[2] for r in rows if r[0] in written and r[3])  # not graded by hand yet
    return score, max_score, sum(r[1] for r in auto), sum(r[2] for r in auto), by_hand


@dataclass
class _Submission:
    learner: str
    lesson: Path
    path: Path
    notes: list[str]
    zero: set[str]
    valid: bool = True


def _prepare(root: Path, sub: _Submission, released: NotebookNode) -> None:
    source = nbformat.read(root / "source" / sub.lesson.stem / sub.lesson.name, as_version=4)
    """Check one submission and put it where nbgrader looks for it (unless it is unreadable)."""
    target = root / "submitted" / sub.learner / sub.lesson.stem / sub.lesson.name
    shutil.rmtree(target.parent, ignore_errors=True)
    try:
        submitted = nbformat.read(sub.path, as_version=4)
        nbformat.validate(submitted)
    except Exception as exc:  # not JSON, not a notebook, a future format...
        first = _first_line(f"{type(exc).__name__}: {exc}", 120)
        sub.valid = False
        sub.notes.append(f"not a valid notebook ({first}): 0 for the lesson")
        return
    target.parent.mkdir(parents=True)
    shutil.copyfile(sub.path, target)
    broken = _tampering(submitted, released, source)
    sub.notes += broken.values()
    sub.zero |= set(broken)
    sub.notes += _redefinitions(submitted)


def _finish(root: Path, sub: _Submission, released: NotebookNode, failure: str | None,
            limits: Limits) -> GradeRow:
    """Zero what the submission broke in the gradebook, then read its scores into a row."""
    name = sub.lesson.stem
    notes = list(sub.notes)
    if failure:
        notes.insert(0, failure)
    elif sub.valid:
        autograded = nbformat.read(root / "autograded" / sub.learner / name / sub.lesson.name, as_version=4)
        notes += _execution_notes(autograded, limits.cell_timeout)
    scores = _scores(root, sub.lesson, sub.learner, released, zero=sub.zero,
                     zero_all=bool(failure) or not sub.valid)
    if not notes:
        notes.append("all tests pass" if scores[2] == scores[3] else "no error")
    if scores[4]:
        notes.append(f"written answers ({scores[4]:g} points) await grading by hand")
    return GradeRow(sub.learner, name, *scores, "; ".join(notes))


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


class GradingRefused(RuntimeError):
    """A run that would lose the instructor's data (fewer rows, a concurrent run) is refused."""


@contextmanager
def _course_lock(root: Path) -> Iterator[None]:
    """Hold ``root/.grading.lock`` (flock) for the whole run; a second run on the same course
    folder is refused at once. The lock goes with the process, even if it is killed."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".grading.lock", "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            raise GradingRefused(
                f"another grading run is using {root} ({f.read().strip() or 'pid unknown'}); "
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


def _add_learners(root: Path, learners: list[str]) -> None:
    from nbgrader.api import Gradebook

    with warnings.catch_warnings(), Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        warnings.simplefilter("ignore")
        for learner in learners:
            gb.update_or_create_student(learner)


def grade_all(
    notebooks: Path,
    submissions: Path,
    build: Path,
    out: Path,
    limits: Limits | None = None,
    say: Callable[[str], None] = print,
    jobs: int = 1,
    isolation: Isolation | None = None,
    replace: bool = False,
) -> list[GradeRow]:
    """Autograde every submission under ``submissions`` against the lessons in ``notebooks``.

    Inputs:
        build: the nbgrader course directory (made if missing; its gradebook is kept between runs,
            so marks given by hand to written answers survive a regrade).
        out: the CSV to write (``learner, lesson, score, max_score, auto_score, auto_max_score,
            to_grade_by_hand, reason``).
        jobs: how many submissions run at the same time (one worker per lesson, or per share of
            the learners when there is a single lesson).
        isolation: how each submission's kernel is sealed off (default: bwrap with the default
            limits); ``Isolation("none")`` grades without a sandbox, and every row says so.
        replace: write the CSV even if it loses rows of the one already at ``out``.
    Rows are also written one by one to ``grades.partial.csv`` beside ``out`` as they are graded;
    ``out`` itself is replaced whole at the end (a run killed midway leaves it as it was).
    Returns the rows, in the CSV's order.
    Raises GradingRefused (nothing to grade, rows would be lost, another run holds the course
    folder) or IsolationUnavailable if a sandbox was asked for and cannot be made here.
    """
    limits = limits or Limits()
    isolation = isolation or Isolation()
    if isolation.mode != "none" and (why := unavailable(isolation)):
        raise IsolationUnavailable(
            f"cannot grade sealed off: {why}.\nEach submission's code would run with the grader's "
            "full power (it could read the hidden tests and the gradebook, or change other grades). "
            "Install bubblewrap, or grade without isolation on purpose: make grade ISOLATION=none"
        )
    if isolation.mode == "none":
        say("WARNING: grading without isolation (ISOLATION=none): submissions run with the grader's "
            "rights; the CSV says so on every row")
    root = Path(build).resolve()
    lessons = find_lessons(Path(notebooks))
    found, skipped = find_submissions(Path(submissions), lessons)
    for line in skipped:
        say(line)
    if not found:
        raise GradingRefused(
            f"no submission to grade in {submissions} (expected {Path(submissions)}/LEARNER/NN_topic.ipynb); "
            f"{out} is left as it was"
        )
    dropped = _existing_rows(Path(out)) - {(learner, lesson.stem) for learner, lesson, _ in found}
    if dropped and not replace:
        shown = ", ".join(f"{learner}/{lesson}" for learner, lesson in sorted(dropped)[:5])
        raise GradingRefused(
            f"{out} has {len(dropped)} rows that this run would not write ({shown}"
            f"{', ...' if len(dropped) > 5 else ''}): is SUBMISSIONS={submissions} the right folder? "
            f"{out} is left as it was; to replace it anyway: make grade REPLACE=1"
        )
    with _course_lock(root):
        partial = partial_csv(Path(out))
        partial.parent.mkdir(parents=True, exist_ok=True)
        with open(partial, "w", newline="", encoding="utf-8") as progress:
            rows = _grade_locked(found, root, limits, say, jobs, isolation, progress)
        write_csv(rows, Path(out))
        partial.unlink()
    say(f"wrote {len(rows)} rows to {out}")
    return rows


def _grade_locked(found: list[tuple[str, Path, Path]], root: Path, limits: Limits,
                  say: Callable[[str], None], jobs: int, isolation: Isolation, progress: Any
                  ) -> list[GradeRow]:
    """The run itself, holding the course folder's lock; each row also goes to ``progress``."""
    progress_writer = csv.writer(progress)
    progress_writer.writerow([f.name for f in fields(GradeRow)])
    needed = sorted({lesson for _, lesson, _ in found})
    releases = generate_student_versions(root, needed, course_config(root))
    released = {lesson: nbformat.read(releases[lesson.stem], as_version=4) for lesson in needed}
    subs = [_Submission(learner, lesson, path, [], set()) for learner, lesson, path in found]
    for sub in subs:
        _prepare(root, sub, released[sub.lesson])
    _add_learners(root, sorted({sub.learner for sub in subs}))  # before workers race to add them
    units = [[s for s in subs if s.lesson == lesson] for lesson in needed]
    if len(units) == 1 and jobs > 1:
        units = [units[0][i::jobs] for i in range(jobs) if units[0][i::jobs]]
    lock = threading.Lock()

    def grade_unit(unit: list[_Submission]) -> list[GradeRow]:
        start, lesson = time.monotonic(), unit[0].lesson
        runnable = [sub.learner for sub in unit if sub.valid]
        outcome = _autograde_batch(root, lesson.stem, runnable, limits, isolation) if runnable else {}
        rows = []
        with lock:  # one reader/writer of the gradebook in this process at a time
            for sub in unit:
                row = _finish(root, sub, released[lesson], outcome.get(sub.learner), limits)
                row.isolation = isolation.label
                progress_writer.writerow(_csv_line(row))
                progress.flush()
                say(f"{row.learner} {row.lesson}: {row.score:g}/{row.max_score:g}  {row.reason}")
                rows.append(row)
            say(f"graded {len(unit)} submissions of {lesson.stem} in {time.monotonic() - start:.0f} s")
        return rows

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        rows = [row for unit_rows in pool.map(grade_unit, units) for row in unit_rows]
    rows.sort(key=lambda r: (r.learner, r.lesson))
    return rows
