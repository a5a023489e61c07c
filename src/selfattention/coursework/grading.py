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
import hashlib
import json
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
from .course import CUT_MARK, carried_marks, course_config, generate_student_versions
from .results import MIME, compare, judge
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


def exercise_names(released: NotebookNode) -> dict[str, str]:
    """``{grade_id: name as a learner sees it}``: "Exercise 3 (2 points)" for the autograded tests
    in the order of the lesson, "Written answer 1 (1 point)" for answers graded by hand."""
    names, tests, written = {}, 0, 0
    for grade_id, cell in _grade_cells(released).items():
        meta = cell.metadata["nbgrader"]
        if not meta.get("grade"):
            continue
        points = float(meta.get("points", 0))
        unit = f"{points:g} point{'' if points == 1 else 's'}"
        if meta.get("solution"):
            written += 1
            names[grade_id] = f"Written answer {written} ({unit})"
        else:
            tests += 1
            names[grade_id] = f"Exercise {tests} ({unit})"
    return names


def _autograded_tests(released: NotebookNode) -> list[str]:
    return [gid for gid, c in _grade_cells(released).items()
            if c.metadata["nbgrader"].get("grade") and not c.metadata["nbgrader"].get("solution")]


def _tampering(submitted: NotebookNode, released: NotebookNode, names: dict[str, str]
               ) -> tuple[dict[str, str], list[str]]:
    """Grade cells of the student version missing or changed in the submission.

    Returns ``({grade_id: note} of cells deleted (0 for them), [notes on test cells changed])``.
    A changed test cell costs nothing: the course's current version of it is what runs.
    """
    mine = _grade_cells(submitted)
    deleted, changed = {}, []
    for grade_id, cell in _grade_cells(released).items():
        meta = cell.metadata["nbgrader"]
        if not meta.get("grade"):
            continue
        if grade_id not in mine:
            deleted[grade_id] = f"{names[grade_id]}: its cell was deleted, 0 for it"
        elif meta.get("locked") and not meta.get("solution") and (
            mine[grade_id].source.strip() != cell.source.strip()
        ):
            changed.append(f"{names[grade_id]}: its test cell was changed in this copy; the course's "
                           "test was run instead")
    return deleted, changed


def _deduplicate(submitted: NotebookNode) -> list[str]:
    """Keep the grading marks of the last copy of a cell pasted more than once; earlier copies run
    as ordinary cells. (nbgrader's own DeduplicateIds leaves them empty marks, which its metadata
    check then rejects, failing the whole notebook.) Returns one note per duplicated cell."""
    seen: dict[str, int] = {}
    for cell in reversed(submitted.cells):
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid:
            seen[gid] = seen.get(gid, 0) + 1
            if seen[gid] > 1:
                del cell.metadata["nbgrader"]
    return [f"cell {gid} appears {n} times: the last copy was graded" for gid, n in seen.items() if n > 1]


def _not_in_lesson(submitted: NotebookNode, released: NotebookNode) -> list[str]:
    """Run the cells whose grading marks the lesson does not have (a copy of an older version of a
    lesson that lost an exercise) as ordinary cells: nbgrader rejects the whole notebook otherwise.
    Returns one note per graded cell so treated."""
    known, notes = set(_grade_cells(released)), []
    for cell in submitted.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") and meta["grade_id"] not in known:
            if meta.get("grade"):
                notes.append(f"cell {meta['grade_id']} is not in the lesson any more: not graded")
            del cell.metadata["nbgrader"]
    return notes


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


def _one_line(text: str) -> str:
    """All of ``text`` on one line (no colour codes): a check's message is kept whole."""
    return " ".join(_ANSI.sub("", str(text)).split())


def _records(cell: NotebookNode, grade_id: str) -> list[dict]:
    """The results a cell handed to the grader for ``grade_id`` (see :mod:`.results`)."""
    found = []
    for out in cell.get("outputs", []):
        data = out.get("data", {}) if out.get("output_type") in ("display_data", "execute_result") else {}
        payload = data.get(MIME)
        if isinstance(payload, dict) and payload.get("grade_id") == grade_id:
            found.append(payload)
    return found


def _verdicts(autograded: NotebookNode, released: NotebookNode, references: dict[str, list[dict]],
              skip: set[str]) -> dict[str, str | None]:
    """``{grade_id: None if the test passed, else why not}`` for every autograded test.

    A test passes when the results its hidden test handed over match the instructor's, compared
    here with the tolerances of the instructor's run. Errors and printed output only explain a
    failure: a warning on stderr costs nothing, a faked "Correct:" earns nothing.
    """
    cells = _grade_cells(autograded)
    verdicts: dict[str, str | None] = {}
    for gid in _autograded_tests(released):
        if gid in skip or gid not in cells:
            verdicts[gid] = "its cell was deleted"
            continue
        cell, expected = cells[gid], references.get(gid, [])
        got = _records(cell, gid)
        mismatch = None
        if len(got) != len(expected):
            mismatch = "the hidden tests did not finish" if len(got) < len(expected) else "too many results"
        else:
            for ref, mine in zip(expected, got, strict=True):
                if ref.get("judge"):  # a design exercise: the lesson's check decides, here
                    mismatch = judge(ref["judge"], mine.get("value"))
                    if mismatch:
                        mismatch = f"a hidden test did not accept the answer ({mismatch})"
                        break
                    continue
                mismatch = compare(ref["value"], mine.get("value"), ref["atol"], ref["rtol"])
                if mismatch:
                    mismatch = f"a hidden test got a different result ({mismatch})"
                    break
        if mismatch is None:
            verdicts[gid] = None
            continue
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
        if errors:
            ename, evalue = errors[-1].get("ename", "Error"), _one_line(errors[-1].get("evalue", ""))
            if ename == "ExerciseError":
                mismatch = evalue
            elif ename == "CellTimeoutError":
                mismatch = "the test ran too long and was stopped"
            elif ename == "AssertionError" and "Correct:" in text:
                mismatch = "the visible check passed but a hidden test did not"
            else:
                mismatch = f"{ename}" + (f": {evalue}" if evalue else "")
        elif "Correct:" in text and mismatch.startswith("a hidden test"):
            mismatch = "the visible check passed but " + mismatch
        verdicts[gid] = mismatch
    return verdicts


def _execution_notes(autograded: NotebookNode, cell_timeout: int, names: dict[str, str]) -> list[str]:
    """What went wrong outside the tests while the submission ran, one short phrase per problem."""
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
        if not errors or (meta.get("grade") and not meta.get("solution")):  # tests: see _verdicts
            continue
        err = errors[-1]
        ename, evalue = err.get("ename", "Error"), _one_line(err.get("evalue", ""))
        what = f"answer cell {grade_id}" if meta.get("solution") else f"cell {number}"
        if ename == "CellTimeoutError":
            notes.append(f"{what} ran longer than {cell_timeout} s and was stopped")
        elif meta.get("solution"):
            notes.append(f"{what} raised {ename}" + (f": {evalue}" if evalue else ""))
        else:
            other_errors.append(f"{what} raised {ename}" + (f": {_first_line(evalue)}" if evalue else ""))
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
                     isolation: Isolation, on_done: Callable[[str, str | None], None]) -> None:
    """Autograde the submissions of ``learners`` to ``lesson``, in a worker process.

    One worker grades them one after the other (nbgrader is imported once). The clock of each
    submission starts when the previous one is done; a submission that runs past
    ``limits.submission_timeout`` gets its worker and kernel killed, and a new worker carries on
    with the rest. ``on_done(learner, None if graded else what went wrong)`` is called as soon as
    each submission is done (so its row can be written at once).
    """
    logs = root / "logs" / lesson  # logs/LESSON/LEARNER.log: a 245-character learner name fits
    logs.mkdir(parents=True, exist_ok=True)
    pending = list(learners)
    while pending:
        cmd = [
            sys.executable, "-m", "selfattention.coursework", "_autograde", str(root), lesson, *pending,
            "--cell-timeout", str(limits.cell_timeout), "--max-output-bytes", str(limits.max_output_bytes),
            "--isolation", isolation.mode, "--memory-limit", str(isolation.memory),
            "--max-processes", str(isolation.processes), "--disk-limit", str(isolation.disk),
        ]
        with open(logs / "_worker.log", "ab") as log:  # "_": no learner name starts so
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
                on_done(pending.pop(0), f"grading stopped after {limits.submission_timeout} s (the limit per "
                        "submission): the notebook never finished, 0 for the lesson")
                break
            if line is None:  # the worker died without a word: blame the submission it was on
                on_done(pending.pop(0), "the autograder stopped on this notebook: 0 for the lesson")
                break
            word, learner, cause = (line.split() + ["", ""])[:3]
            if word == "READY":
                deadline = time.monotonic() + limits.submission_timeout
            elif word in ("GRADED", "FAILED") and learner == pending[0]:
                pending.pop(0)
                failure = _FAILURES.get(cause, _FAILURES["error"])
                on_done(learner, None if word == "GRADED" else failure.format(
                    limit=limits.cell_timeout, log=f"logs/{lesson}/{learner}.log",
                    memory=sandbox.human_size(isolation.memory),
                ))
                deadline = time.monotonic() + limits.submission_timeout
        _kill_tree(proc.pid)
        proc.wait()


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
    nbgrader's log of each goes to ``root/logs/lesson/learner.log``.
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
        log = Path(root) / "logs" / lesson / f"{learner}.log"
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
            auto: dict[str, float] | None = None, zero_all: bool = False) -> tuple[float, ...]:
    """Write the grader's verdicts ``{grade_id: points}`` of the autograded tests (or 0 for every
    grade cell: ``zero_all``) to the gradebook, then read ``(score, max_score, auto_score,
    auto_max_score, to_grade_by_hand)`` from it."""
    from nbgrader.api import Gradebook

    written = _hand_marked(released)
    auto = auto or {}
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        warnings.simplefilter("ignore")  # nbgrader's own SQLAlchemy warnings say nothing to a grader
        gb.update_or_create_student(learner)
        gb.update_or_create_submission(lesson.stem, learner)
        nb = gb.find_submission_notebook(lesson.stem, lesson.stem, learner)
        for grade in nb.grades:
            if zero_all:
                grade.auto_score = 0.0
                grade.needs_manual_grade = False
            elif grade.name in auto:
                grade.auto_score = auto[grade.name]
                grade.needs_manual_grade = False
        gb.db.commit()
        rows = [(g.name, float(g.score), float(g.max_score), g.needs_manual_grade and g.manual_score is None)
                for g in nb.grades]
    score = sum(r[1] for r in rows)
    max_score = sum(r[2] for r in rows)
    auto_rows = [r for r in rows if r[0] not in written]
    by_hand = sum(r[2] for r in rows if r[0] in written and r[3])  # not graded by hand yet
    return score, max_score, sum(r[1] for r in auto_rows), sum(r[2] for r in auto_rows), by_hand


@dataclass
class _Submission:
    learner: str
    lesson: Path
    path: Path
    notes: list[str]
    zero: set[str]
    valid: bool = True


def read_notebook(path: Path) -> NotebookNode:
    """A submitted notebook, read as tolerantly as its content allows: a UTF-8 byte order mark
    and Windows line ends are fine. Raises ValueError/OSError if it is not a notebook."""
    text = Path(path).read_bytes().decode("utf-8-sig")
    nb = nbformat.reads(text, as_version=4)
    for cell in nb.cells:
        cell.source = cell.source.replace("\r\n", "\n")
    nbformat.validate(nb)
    return nb


#: What ``nbgrader collect`` writes beside a collected notebook; ``nbgrader release_feedback``
#: needs both (the secret names the learner's feedback file in the exchange).
RECEIPTS = ("timestamp.txt", "submission_secret.txt")


def _clear_keeping_receipts(folder: Path) -> None:
    """Empty ``folder`` (a learner's ``submitted/LEARNER/NN_topic``) of an earlier run's files,
    keeping the :data:`RECEIPTS` that ``nbgrader collect`` left there."""
    kept = {name: (folder / name).read_bytes() for name in RECEIPTS
            if (folder / name).is_file() and not (folder / name).is_symlink()}
    shutil.rmtree(folder, ignore_errors=True)
    if kept:
        folder.mkdir(parents=True)
        for name, data in kept.items():
            (folder / name).write_bytes(data)


def _prepare(root: Path, sub: _Submission, released: NotebookNode, names: dict[str, str]) -> None:
    """Check one submission and put it where nbgrader looks for it (unless it is unreadable)."""
    target = root / "submitted" / sub.learner / sub.lesson.stem / sub.lesson.name
    _clear_keeping_receipts(target.parent)
    try:
        submitted = read_notebook(sub.path)
    except Exception as exc:  # not JSON, not a notebook, a future format...
        first = _first_line(f"{type(exc).__name__}: {exc}", 120)
        sub.valid = False
        sub.notes.append(f"not a valid notebook ({first}): 0 for the lesson")
        return
    duplicated = _deduplicate(submitted) + _not_in_lesson(submitted, released)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(submitted, target)  # normalised: no byte order mark, one kind of line end
    deleted, changed = _tampering(submitted, released, names)
    sub.notes += [*deleted.values(), *changed, *duplicated, *_redefinitions(submitted)]
    sub.zero |= set(deleted)


def reference_records(root: Path, lesson: Path, limits: Limits, isolation: Isolation
                      ) -> dict[str, list[dict]]:
    """``{grade_id: [records]}`` of the instructor's own notebook, run as a submission would be.

    Cached in ``root/references/NN_topic.json`` until the lesson changes. Raises RuntimeError if
    a test of the lesson hands over no result (its hidden test must end with ``record(...)``).
    """
    from .course import BoundedExecute

    source = root / "source" / lesson.stem / lesson.name
    digest = hashlib.sha256(source.read_bytes() + isolation.mode.encode()).hexdigest()
    cache = root / "references" / f"{lesson.stem}.json"
    if cache.exists():
        saved = json.loads(cache.read_text(encoding="utf-8"))
        if saved.get("digest") == digest:
            return saved["records"]
    nb = nbformat.read(source, as_version=4)
    config = course_config(root, cell_timeout=limits.cell_timeout, max_output_bytes=limits.max_output_bytes,
                           isolation=isolation)
    BoundedExecute(config=config).preprocess(nb, {"metadata": {"path": str(source.parent)}})
    cells = _grade_cells(nb)
    records = {gid: _records(cells[gid], gid) for gid in _autograded_tests(nb)}
    missing = [gid for gid, found in records.items() if not found]
    if missing:
        errors = [f"{gid}: {o.get('ename')}: {_first_line(o.get('evalue', ''))}" for gid in missing
                  for o in cells[gid].get("outputs", []) if o.get("output_type") == "error"]
        raise RuntimeError(
            f"{lesson.name}: the instructor's notebook hands the grader no result for {missing} "
            f"(each hidden test must end with record(grade_id, value)){'; ' if errors else ''}"
            + "; ".join(errors)
        )
    rejected = [f"{gid}: {why}" for gid, found in records.items() for r in found
                if r.get("judge") and (why := judge(r["judge"], r.get("value")))]
    if rejected:
        raise RuntimeError(f"{lesson.name}: the lesson's own checks reject the instructor's answers: "
                           + "; ".join(rejected))
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"digest": digest, "records": records}), encoding="utf-8")
    return records


def _hand_marked(released: NotebookNode) -> set[str]:
    """grade_ids of the cells a grader marks by hand (written answers, hand-graded code)."""
    return {gid for gid, c in _grade_cells(released).items()
            if c.metadata["nbgrader"].get("grade") and c.metadata["nbgrader"].get("solution")}


def _restore_carried_marks(root: Path, lesson: str, learner: str) -> None:
    """Put back the hand marks kept aside when ``lesson`` changed (see ``course.carry_hand_marks``),
    for the cells the lesson still has; the answers they were given to are checked next."""
    from nbgrader.api import Gradebook

    path = carried_marks(root, lesson) / f"{learner}.json"
    if not path.exists():
        return
    kept = json.loads(path.read_text(encoding="utf-8"))
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        warnings.simplefilter("ignore")
        gb.update_or_create_submission(lesson, learner)
        nb = gb.find_submission_notebook(lesson, lesson, learner)
        for grade in nb.grades:
            if grade.name in kept["marks"] and grade.manual_score is None:
                grade.manual_score = kept["marks"][grade.name]
                grade.needs_manual_grade = False
        for comment in nb.comments:
            if comment.name in kept["comments"] and not comment.manual_comment:
                comment.manual_comment = kept["comments"][comment.name]
        gb.db.commit()
    path.unlink()


def _set_aside_stale_marks(root: Path, sub: _Submission, released: NotebookNode,
                           names: dict[str, str]) -> list[str]:
    """Set aside each hand mark given to an answer that has changed since it was marked.

    The gradebook keeps a hand mark across runs but not the answer it was given to, so
    ``root/handmarks/NN_topic/LEARNER.json`` does: per cell, ``seen`` (a digest of the answer
    graded by the last run, the one the formgrader showed) and, once marked, ``marked`` (the
    answer the mark was given to) with ``score``. A mark that appeared or changed since the last
    run was given to ``seen``. When the answer graded now is not ``marked``, the mark is taken out
    of the gradebook (the cell waits for a grader again, its comment stays) and a note says what it
    was. A mark found on the first run that keeps this record is taken to be for the answer as it
    is: nothing older is known. Returns the notes.
    """
    from nbgrader.api import Gradebook

    lesson = sub.lesson.stem
    answers = _grade_cells(read_notebook(root / "submitted" / sub.learner / lesson / sub.lesson.name))
    path = root / "handmarks" / lesson / f"{sub.learner}.json"
    state: dict[str, dict] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    by_hand, notes = _hand_marked(released), []
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        warnings.simplefilter("ignore")
        nb = gb.find_submission_notebook(lesson, lesson, sub.learner)
        for grade in nb.grades:
            if grade.name not in by_hand:
                continue
            answer = answers[grade.name].source.strip() if grade.name in answers else ""
            digest = hashlib.sha256(answer.encode()).hexdigest()
            cell = state.setdefault(grade.name, {})
            mark = grade.manual_score
            if mark is not None and (cell.get("score") != mark or "marked" not in cell):
                cell.update(marked=cell.get("seen", digest), score=mark)
            if mark is not None and cell["marked"] != digest:
                notes.append(f"{names.get(grade.name, grade.name)}: the answer changed after it was marked "
                             f"by hand ({mark:g} points): that mark is set aside, grade it by hand again")
                grade.manual_score = None
                grade.needs_manual_grade = True
                cell.pop("marked")
                cell.pop("score")
            cell["seen"] = digest
        gb.db.commit()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state), encoding="utf-8")
    return notes


def _finish(root: Path, sub: _Submission, released: NotebookNode, failure: str | None,
            limits: Limits, references: dict[str, list[dict]], names: dict[str, str]) -> GradeRow:
    """Judge the tests from the results they handed over, write the verdicts to the gradebook and
    read the scores into a row."""
    name = sub.lesson.stem
    notes = list(sub.notes)
    auto: dict[str, float] = {}
    _restore_carried_marks(root, name, sub.learner)
    if failure:
        notes.insert(0, failure)
    elif sub.valid:
        autograded = nbformat.read(root / "autograded" / sub.learner / name / sub.lesson.name, as_version=4)
        notes += _execution_notes(autograded, limits.cell_timeout, names)
        points = {gid: float(c.metadata["nbgrader"].get("points", 0))
                  for gid, c in _grade_cells(released).items()}
        for gid, why in _verdicts(autograded, released, references, sub.zero).items():
            auto[gid] = points[gid] if why is None else 0.0
            if why is not None and gid not in sub.zero:
                notes.append(f"{names[gid]}: {why}")
        notes += _set_aside_stale_marks(root, sub, released, names)
    scores = _scores(root, sub.lesson, sub.learner, released, auto=auto,
                     zero_all=bool(failure) or not sub.valid)
    messages: dict[str, str | None] = {}
    for gid, gname in names.items():
        if failure or not sub.valid:
            messages[gid] = failure or "the notebook could not be read"
        elif gid in auto:
            messages[gid] = next((n.split(": ", 1)[1] for n in notes if n.startswith(f"{gname}: ")), None)
    verdicts = root / "verdicts" / name / f"{sub.learner}.json"  # read by make feedback
    verdicts.parent.mkdir(parents=True, exist_ok=True)
    verdicts.write_text(json.dumps({"messages": messages, "notes": notes}), encoding="utf-8")
    if scores[2] == scores[3] and not failure and sub.valid:
        notes.insert(0, "all tests pass")
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
    names = {lesson: exercise_names(released[lesson]) for lesson in needed}
    references = {}
    for lesson in needed:
        say(f"running the instructor's {lesson.name} for the reference results")
        references[lesson] = reference_records(root, lesson, limits, isolation)
    subs = [_Submission(learner, lesson, path, [], set()) for learner, lesson, path in found]
    for sub in subs:
        _prepare(root, sub, released[sub.lesson], names[sub.lesson])
    _add_learners(root, sorted({sub.learner for sub in subs}))  # before workers race to add them
    units = [[s for s in subs if s.lesson == lesson] for lesson in needed]
    if len(units) == 1 and jobs > 1:
        units = [units[0][i::jobs] for i in range(jobs) if units[0][i::jobs]]
    lock = threading.Lock()

    def grade_unit(unit: list[_Submission]) -> list[GradeRow]:
        start, lesson = time.monotonic(), unit[0].lesson
        by_learner, rows = {sub.learner: sub for sub in unit}, []

        def finish(learner: str, failure: str | None) -> None:
            with lock:  # one reader/writer of the gradebook in this process at a time
                row = _finish(root, by_learner[learner], released[lesson], failure, limits,
                              references[lesson], names[lesson])
                row.isolation = isolation.label
                progress_writer.writerow(_csv_line(row))
                progress.flush()
                say(f"{row.learner} {row.lesson}: {row.score:g}/{row.max_score:g}  {row.reason}")
                rows.append(row)

        for sub in unit:
            if not sub.valid:
                finish(sub.learner, None)
        runnable = [sub.learner for sub in unit if sub.valid]
        if runnable:
            _autograde_batch(root, lesson.stem, runnable, limits, isolation, finish)
        say(f"graded {len(unit)} submissions of {lesson.stem} in {time.monotonic() - start:.0f} s")
        return rows

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        rows = [row for unit_rows in pool.map(grade_unit, units) for row in unit_rows]
    rows.sort(key=lambda r: (r.learner, r.lesson))
    return rows
