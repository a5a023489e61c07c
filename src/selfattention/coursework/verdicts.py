"""Verdicts: whether each test of an autograded submission passed, and why not, in words.

A test passes when the results its hidden test handed over (:mod:`.results`) match the instructor's own
(the reference records of the lesson, from one run of the instructor's notebook as a submission is run),
compared with the tolerances of the instructor's run; a design exercise's record is judged by its lesson
check instead. Errors and printed output only explain a failure: a warning on stderr costs nothing, a faked
"Correct:" earns nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from . import lessons
from .folder import CourseFolder
from .results import MIME, compare, judge
from .runner import CUT_MARK, KERNEL_STOPPED, NOT_RUN, RunPolicy, run_notebook
from .submissions import first_line

__all__ = ["LessonBroken", "records", "reference_records", "judge_tests", "execution_notes", "one_line"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class LessonBroken(RuntimeError):
    """The instructor's lesson cannot be graded as it is (a hidden test that records nothing, a design its
    own check rejects): the message is one line naming the cell and the fix."""


def one_line(text: str) -> str:
    """All of ``text`` on one line (no colour codes): a check's message is kept whole."""
    return " ".join(_ANSI.sub("", str(text)).split())


def records(cell: NotebookNode, grade_id: str) -> list[dict]:
    """The results a cell handed to the grader for ``grade_id`` (see :mod:`.results`)."""
    found = []
    for out in cell.get("outputs", []):
        data = out.get("data", {}) if out.get("output_type") in ("display_data", "execute_result") else {}
        payload = data.get(MIME)
        if isinstance(payload, dict) and payload.get("grade_id") == grade_id:
            found.append(payload)
    return found


def reference_records(folder: CourseFolder, lesson: Path, policy: RunPolicy) -> dict[str, list[dict]]:
    """``{grade_id: [records]}`` of the instructor's own notebook (the folder's ``source/`` copy), run as a
    submission would be (:func:`.runner.run_notebook`).

    Cached in the folder's ``references/NN_topic.json`` until the lesson changes. Raises
    :class:`LessonBroken` if a test of the lesson hands over no result (its hidden test must end with
    ``_record(grade_id, value)``) or the lesson's own check rejects the instructor's design.
    """
    source = folder.source(lesson.stem)
    digest = hashlib.sha256(source.read_bytes() + policy.isolation.encode()).hexdigest()
    cache = folder.reference(lesson.stem)
    if cache.exists():
        saved = json.loads(cache.read_text(encoding="utf-8"))
        if saved.get("digest") == digest:
            return saved["records"]
    nb = run_notebook(nbformat.read(source, as_version=4), source.parent, policy, folder)
    cells = lessons.grade_cells(nb)
    found = {gid: records(cells[gid], gid) for gid in lessons.autograded_tests(nb)}
    for gid, mine in found.items():
        if not mine:
            errors = [f"{o.get('ename')}: {first_line(o.get('evalue', ''), 100)}"
                      for o in cells[gid].get("outputs", []) if o.get("output_type") == "error"]
            raise LessonBroken(
                f"{lesson.name}: the instructor's test cell {gid} hands the grader no result"
                + (f" (it raised {errors[-1]})" if errors else "")
                + f": end its hidden test with _record({gid!r}, value), and make it pass on the model answer "
                "(CONTRIBUTING.md, Exercises)")
    rejected = [f"{gid}: {why}" for gid, mine in found.items() for r in mine
                if r.get("judge") and (why := judge(r["judge"], r.get("value")))]
    if rejected:
        raise LessonBroken(f"{lesson.name}: the lesson's own checks reject the instructor's answers: "
                           + "; ".join(rejected))
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"digest": digest, "records": found}), encoding="utf-8")
    return found


def _outputs(cell: NotebookNode, kind: str) -> list[dict]:
    return [o for o in cell.get("outputs", []) if o.get("output_type") == kind]


def judge_tests(autograded: NotebookNode, released: NotebookNode, references: dict[str, list[dict]],
                skip: set[str]) -> dict[str, str | None]:
    """``{grade_id: None if the test passed, else why not}`` for every autograded test of ``released``.

    ``skip``: tests whose cells were deleted (they fail). The results a test handed over are compared
    with ``references``; when they differ, the cell's error or printed output says why in words.
    """
    cells = lessons.grade_cells(autograded)
    verdicts: dict[str, str | None] = {}
    for gid in lessons.autograded_tests(released):
        if gid in skip or gid not in cells:
            verdicts[gid] = "its cell was deleted"
            continue
        cell, expected = cells[gid], references.get(gid, [])
        got = records(cell, gid)
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
        errors = _outputs(cell, "error")
        text = "".join(o.get("text", "") for o in _outputs(cell, "stream"))
        if errors:
            ename, evalue = errors[-1].get("ename", "Error"), one_line(errors[-1].get("evalue", ""))
            if ename in ("ExerciseError", NOT_RUN):
                mismatch = evalue
            elif ename == KERNEL_STOPPED:
                mismatch = f"{evalue} in its test cell"
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


def execution_notes(autograded: NotebookNode, cell_timeout: int) -> list[str]:
    """What went wrong outside the tests while the submission ran, one short phrase per problem."""
    notes, other_errors = [], []
    for number, cell in enumerate(autograded.cells, start=1):
        if cell.cell_type != "code":
            continue
        text = "".join(o.get("text", "") for o in _outputs(cell, "stream"))
        if CUT_MARK in text:
            cut = first_line(text[text.index(CUT_MARK):]).rstrip("]")
            notes.append(cut.replace(CUT_MARK, f"cell {number}:", 1))
        errors = _outputs(cell, "error")
        if not errors:
            continue
        ename, evalue = errors[-1].get("ename", "Error"), one_line(errors[-1].get("evalue", ""))
        answer = lessons.is_answer(cell)
        what = f"answer cell {lessons.grade_id(cell)}" if answer else f"cell {number}"
        if ename == KERNEL_STOPPED:  # said once, here; each test after it says "not run"
            notes.append(f"{evalue} in {what}; the cells after it were not run, their tests got 0")
            continue
        if lessons.is_test(cell) or ename == NOT_RUN:  # tests: see judge_tests
            continue
        if ename == "CellTimeoutError":
            notes.append(f"{what} ran longer than {cell_timeout} s and was stopped")
        elif answer:
            notes.append(f"{what} raised {ename}" + (f": {evalue}" if evalue else ""))
        else:
            other_errors.append(f"{what} raised {ename}" + (f": {first_line(evalue)}" if evalue else ""))
    if other_errors:
        more = f" (and {len(other_errors) - 1} more lesson cells)" if len(other_errors) > 1 else ""
        notes.append(other_errors[0] + more)
    return notes
