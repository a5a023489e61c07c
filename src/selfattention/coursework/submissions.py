"""What learners handed in: found under ``submissions/LEARNER/NN_topic.ipynb``, read, checked, and put
where nbgrader looks for it (the course folder's ``submitted/``).

The checks here need no kernel: a file that is not a regular file or not a notebook (0 for the lesson, with
the reason), a test cell deleted (0 for it) or edited (the course's own test runs instead), a graded cell
pasted twice (the last copy is graded), a graded cell the lesson no longer has (run as an ordinary cell),
an answer cell that redefines a check function (noted; the hidden tests decide).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from . import lessons
from .folder import CourseFolder

__all__ = ["Submission", "RECEIPTS", "find_submissions", "read_notebook", "prepare", "first_line"]

_LEARNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: What ``nbgrader collect`` writes beside a collected notebook; ``nbgrader release_feedback``
#: needs both (the secret names the learner's feedback file in the exchange).
RECEIPTS = ("timestamp.txt", "submission_secret.txt")


@dataclass
class Submission:
    """One learner's file for one lesson, and what the checks found in it.

    ``notes``: what the grader says of it (the CSV's reason); ``zero``: grade ids scored 0 whatever runs
    (their cells were deleted); ``valid``: False when there is nothing to run (not a regular file, not a
    notebook): 0 for the lesson.
    """

    learner: str
    lesson: Path
    path: Path
    notes: list[str] = field(default_factory=list)
    zero: set[str] = field(default_factory=set)
    valid: bool = True

    @property
    def name(self) -> str:
        """The lesson's name: ``NN_topic``."""
        return self.lesson.stem


def first_line(text: str, limit: int = 160) -> str:
    """The first line of ``text``, without colour codes, cut to ``limit`` characters."""
    line = _ANSI.sub("", str(text)).strip().splitlines()[0] if str(text).strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def find_submissions(submissions: Path, lessons_: list[Path]) -> tuple[list[Submission], list[str]]:
    """The submissions under ``submissions/LEARNER/NN_topic.ipynb``, and one line for every entry skipped.

    A learner's entry named like a lesson that is not a regular file (a folder, a link, a FIFO, a device)
    is never opened; it is a submission with nothing to run (``valid`` False, 0 for the lesson, the reason
    in its notes), so that the learner keeps a row. Skipped, with a line: a folder whose name cannot be a
    learner id, a learner folder that is a link, a file that is not named like a lesson.
    """
    by_name = {lesson.name: lesson for lesson in lessons_}
    found: list[Submission] = []
    skipped: list[str] = []
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
            if path.name not in by_name:
                skipped.append(f"skipped {folder.name}/{path.name}: not the name of a lesson")
            elif path.is_symlink() or not path.is_file():  # a FIFO would hang the run, a link read elsewhere
                kind = "a link" if path.is_symlink() else "a folder" if path.is_dir() else "a FIFO or device"
                skipped.append(f"skipped {folder.name}/{path.name}: not a regular file ({kind}), not read: "
                               "0 for the lesson")
                found.append(Submission(folder.name, by_name[path.name], path, valid=False, notes=[
                    f"{path.name} is not a regular file ({kind}): not read, 0 for the lesson"]))
            else:
                found.append(Submission(folder.name, by_name[path.name], path))
    return found, skipped


def read_notebook(path: Path) -> NotebookNode:
    """A submitted notebook, read as tolerantly as its content allows: a UTF-8 byte order mark
    and Windows line ends are fine. Raises ValueError/OSError if it is not a notebook."""
    text = Path(path).read_bytes().decode("utf-8-sig")
    nb = nbformat.reads(text, as_version=4)
    for cell in nb.cells:
        cell.source = cell.source.replace("\r\n", "\n")
    nbformat.validate(nb)
    return nb


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


def _deduplicate(submitted: NotebookNode) -> list[str]:
    """Keep the grading marks of the last copy of a cell pasted more than once; earlier copies run
    as ordinary cells. (nbgrader's own DeduplicateIds leaves them empty marks, which its metadata
    check then rejects, failing the whole notebook.) Returns one note per duplicated cell."""
    seen: dict[str, int] = {}
    for cell in reversed(submitted.cells):
        gid = lessons.grade_id(cell)
        if gid:
            seen[gid] = seen.get(gid, 0) + 1
            if seen[gid] > 1:
                lessons.unmark(cell)
    return [f"cell {gid} appears {n} times: the last copy was graded" for gid, n in seen.items() if n > 1]


def _not_in_lesson(submitted: NotebookNode, released: NotebookNode) -> list[str]:
    """Run the cells whose grading marks the lesson does not have (a copy of an older version of a
    lesson that lost an exercise) as ordinary cells: nbgrader rejects the whole notebook otherwise.
    Returns one note per graded cell so treated."""
    known, notes = set(lessons.grade_cells(released)), []
    for cell in submitted.cells:
        gid = lessons.grade_id(cell)
        if gid and gid not in known:
            if lessons.is_graded(cell):
                notes.append(f"cell {gid} is not in the lesson any more: not graded")
            lessons.unmark(cell)
    return notes


def _tampering(submitted: NotebookNode, released: NotebookNode, labels: dict[str, str]
               ) -> tuple[dict[str, str], list[str]]:
    """Graded cells of the student version missing or changed in the submission.

    Returns ``({grade_id: note} of cells deleted (0 for them), [notes on test cells changed])``.
    A changed test cell costs nothing: the course's current version of it is what runs.
    """
    mine = lessons.grade_cells(submitted)
    deleted, changed = {}, []
    for gid, cell in lessons.grade_cells(released).items():
        if not lessons.is_graded(cell):
            continue
        if gid not in mine:
            deleted[gid] = f"{labels[gid]}: its cell was deleted, 0 for it"
        elif lessons.is_locked(cell) and lessons.is_test(cell) and (
            mine[gid].source.strip() != cell.source.strip()
        ):
            changed.append(f"{labels[gid]}: its test cell was changed in this copy; the course's "
                           "test was run instead")
    return deleted, changed


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


def _redefinitions(submitted: NotebookNode) -> list[str]:
    pattern, notes = _redefines_pattern(), []
    for cell in submitted.cells:
        if lessons.is_code_answer(cell) and pattern.search(cell.source):
            notes.append(f"answer cell {lessons.grade_id(cell)} redefines a check function "
                         "(the hidden tests do not use it)")
    return notes


def prepare(folder: CourseFolder, sub: Submission, released: NotebookNode, labels: dict[str, str]) -> None:
    """Check one submission and put it where nbgrader looks for it (unless there is nothing to run).

    ``labels``: the exercises' names by grade id (:func:`.lessons.exercise_labels`), for the notes.
    """
    target = folder.submitted(sub.learner, sub.name)
    _clear_keeping_receipts(target.parent)
    if not sub.valid:
        return
    try:
        submitted = read_notebook(sub.path)
    except Exception as exc:  # not JSON, not a notebook, a future format...
        sub.valid = False
        sub.notes.append(f"not a valid notebook ({first_line(f'{type(exc).__name__}: {exc}', 120)}): "
                         "0 for the lesson")
        return
    duplicated = _deduplicate(submitted) + _not_in_lesson(submitted, released)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(submitted, target)  # normalised: no byte order mark, one kind of line end
    deleted, changed = _tampering(submitted, released, labels)
    sub.notes += [*deleted.values(), *changed, *duplicated, *_redefinitions(submitted)]
    sub.zero |= set(deleted)
