"""The lesson format, in one place: what a lesson notebook is made of and what a learner reads of it.

A lesson is ``notebooks/NN_topic.ipynb`` (nbformat 4, the instructor source). Its cells are plain
markdown and code, plus these kinds, told apart by metadata:

==================  ================================================================================
kind                how it is marked
==================  ================================================================================
answer cell         ``metadata.nbgrader.solution``; code between ``### BEGIN SOLUTION`` and
                    ``### END SOLUTION`` (a code answer) or a markdown model answer (a written answer,
                    also ``grade``, graded by hand)
test cell           ``metadata.nbgrader.grade`` (not ``solution``): a visible check, then hidden tests
                    between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``
slide-only cell     tag ``slide-only``: the deck's short version of a section (title, bullets,
                    formula). The learner's view leaves it out; the lesson text is in the other cells.
notes cell          ``slideshow.slide_type == "notes"``: in the deck, the speaker notes; in the
                    learner's view, ordinary lesson text
links, setup        tags ``course-links`` and ``course-setup``: the Colab/Binder links and the Colab
                    install cell (written by ``tools/lesson_links.py``)
==================  ================================================================================

The **learner's view** of a lesson is what a learner reads, the same wherever they read it (a
working copy from ``make lab``, ``student/``, the website): every cell but the slide-only ones, each
solution replaced by its stub, hidden tests removed. The **room view** (decks, live slides) keeps
the slide-only cells. :func:`learner_cells` builds either; nbgrader's release, the decks and the
site are checked against it (``tests/test_lesson_views.py``).

Cells may be nbformat ``NotebookNode`` objects or plain dicts from ``json.load``; this module needs
neither nbgrader nor nbformat.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "LESSON_GLOB", "CODE_STUB", "ANSWER_STUB", "SLIDE_ONLY", "LINKS_TAG", "SETUP_TAG",
    "Exercise", "find_lessons", "read_lesson", "lesson_number", "source", "tags", "slide_type",
    "is_answer", "is_written_answer", "is_code_answer", "is_test", "is_graded", "is_hand_graded",
    "is_slide_only", "is_notes", "grade_id", "points", "is_locked", "unmark", "grade_cells",
    "autograded_tests", "hand_graded", "exercise_labels", "marked_regions", "solution_parts",
    "without_hidden_tests", "hidden_test_lines", "learner_source", "learner_cells", "learner_notebook",
    "mark_tests_may_fail", "exercises", "stated_times",
]

#: A lesson's file name: two digits, an underscore, a topic.
LESSON_GLOB = "[0-9][0-9]_*.ipynb"
_LESSON_NAME = re.compile(r"^(\d\d)_\w+$")

BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
#: What a code solution becomes in a learner's copy: it runs without error, so the test cell
#: right after it can say what to do. ``pass``, not ``...``: a blank cell ending in ``...`` would
#: print "Ellipsis" when run.
CODE_STUB = "# YOUR CODE HERE\npass"
#: nbgrader's placeholder for a written answer.
ANSWER_STUB = "YOUR ANSWER HERE"

SLIDE_ONLY = "slide-only"
LINKS_TAG = "course-links"
SETUP_TAG = "course-setup"
#: A test cell in a learner's copy carries this tag, so that "Run All" goes on past a check that
#: fails on a blank answer (JupyterLab and nbclient both honour it).
RAISES = "raises-exception"


# --- files --------------------------------------------------------------------------------------


def find_lessons(notebooks: Path | str) -> list[Path]:
    """The lesson notebooks ``NN_topic.ipynb`` in ``notebooks``, in order.

    Raises FileNotFoundError when there is none.
    """
    lessons = sorted(Path(notebooks).glob(LESSON_GLOB))
    if not lessons:
        raise FileNotFoundError(f"no lesson notebooks ({LESSON_GLOB}) in {notebooks}")
    return lessons


def read_lesson(path: Path | str) -> dict[str, Any]:
    """A lesson notebook as a plain dict (``json.load``)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def lesson_number(name: str | Path) -> str:
    """``"02"`` for ``02_basic_self_attention`` (a name, a stem or a path).

    Raises ValueError for a name that is not a lesson's.
    """
    stem = Path(name).stem if str(name).endswith(".ipynb") else Path(name).name
    match = _LESSON_NAME.match(stem)
    if not match:
        raise ValueError(f"not a lesson name: {name!r} (expected NN_topic, e.g. 02_basic_self_attention)")
    return match.group(1)


# --- cells --------------------------------------------------------------------------------------


def source(cell: Mapping[str, Any]) -> str:
    """A cell's source as one string (nbformat allows a list of lines)."""
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def _meta(cell: Mapping[str, Any]) -> Mapping[str, Any]:
    return cell.get("metadata", {}) or {}


def tags(cell: Mapping[str, Any]) -> set[str]:
    """The cell's tags."""
    return set(_meta(cell).get("tags", []) or [])


def slide_type(cell: Mapping[str, Any]) -> str:
    """``slideshow.slide_type`` (``"-"`` when unset)."""
    return (_meta(cell).get("slideshow", {}) or {}).get("slide_type", "-") or "-"


def _grader(cell: Mapping[str, Any]) -> Mapping[str, Any]:
    return _meta(cell).get("nbgrader", {}) or {}


def is_answer(cell: Mapping[str, Any]) -> bool:
    """An answer cell: the learner writes in it (code or a written answer)."""
    return bool(_grader(cell).get("solution"))


def is_code_answer(cell: Mapping[str, Any]) -> bool:
    return is_answer(cell) and cell.get("cell_type") == "code"


def is_written_answer(cell: Mapping[str, Any]) -> bool:
    """A written answer (markdown, graded by hand)."""
    return is_answer(cell) and cell.get("cell_type") == "markdown"


def is_test(cell: Mapping[str, Any]) -> bool:
    """A test cell: graded, not an answer (the visible check and the hidden tests)."""
    grader = _grader(cell)
    return bool(grader.get("grade")) and not grader.get("solution")


def is_graded(cell: Mapping[str, Any]) -> bool:
    """Worth points: a test cell or a written answer."""
    return bool(_grader(cell).get("grade"))


def is_hand_graded(cell: Mapping[str, Any]) -> bool:
    """Graded by a person (a written answer, or an answer cell worth points itself): graded and an answer."""
    return is_graded(cell) and is_answer(cell)


def grade_id(cell: Mapping[str, Any]) -> str | None:
    """The cell's ``grade_id`` (None for a cell that is no part of an exercise)."""
    return _grader(cell).get("grade_id")


def points(cell: Mapping[str, Any]) -> float:
    """The points a graded cell is worth (0 for any other cell)."""
    return float(_grader(cell).get("points", 0) or 0)


def is_locked(cell: Mapping[str, Any]) -> bool:
    """A cell a learner may not edit (nbgrader's ``locked``: the test cells)."""
    return bool(_grader(cell).get("locked"))


def unmark(cell: Any) -> None:
    """Make ``cell`` an ordinary cell: drop its grading marks (``metadata.nbgrader``)."""
    (cell.get("metadata") or {}).pop("nbgrader", None)


def grade_cells(nb: Mapping[str, Any]) -> dict[str, Any]:
    """``{grade_id: cell}`` of every cell of ``nb`` with a grade id, in order (a later copy wins)."""
    return {gid: cell for cell in nb["cells"] if (gid := grade_id(cell))}


def autograded_tests(nb: Mapping[str, Any]) -> list[str]:
    """The grade ids of the test cells of ``nb``, in order: what the autograder scores."""
    return [gid for gid, cell in grade_cells(nb).items() if is_test(cell)]


def hand_graded(nb: Mapping[str, Any]) -> set[str]:
    """The grade ids of the cells of ``nb`` a grader marks by hand (:func:`is_hand_graded`)."""
    return {gid for gid, cell in grade_cells(nb).items() if is_hand_graded(cell)}


def is_slide_only(cell: Mapping[str, Any]) -> bool:
    """The deck's short version of a section: left out of the learner's view."""
    return SLIDE_ONLY in tags(cell)


def is_notes(cell: Mapping[str, Any]) -> bool:
    """Speaker notes in the deck; ordinary lesson text in the learner's view."""
    return slide_type(cell) == "notes"


# --- marked regions -----------------------------------------------------------------------------


def marked_regions(text: str, begin: str, end: str, where: str = "cell") -> list[tuple[int, int]]:
    """(first, last) line index of each ``begin`` ... ``end`` region of ``text``, markers included.

    Raises ValueError naming ``where`` when a region is not closed or markers are nested.
    """
    regions, start = [], None
    for number, line in enumerate(text.split("\n")):
        if line.strip() == begin:
            if start is not None:
                raise ValueError(f"{where}: {begin!r} at line {number + 1} inside another {begin!r}")
            start = number
        elif line.strip() == end:
            if start is None:
                raise ValueError(f"{where}: {end!r} at line {number + 1} without {begin!r}")
            regions.append((start, number))
            start = None
    if start is not None:
        raise ValueError(f"{where}: {begin!r} at line {start + 1} is never closed by {end!r}")
    return regions


def without_hidden_tests(text: str, where: str = "cell") -> str:
    """``text`` with every hidden-test region (markers included) removed, trailing space trimmed."""
    lines = text.split("\n")
    drop = {i for first, last in marked_regions(text, BEGIN_HIDDEN, END_HIDDEN, where)
            for i in range(first, last + 1)}
    return "\n".join(line for i, line in enumerate(lines) if i not in drop).rstrip()


def hidden_test_lines(cells: Iterable[Mapping[str, Any]]) -> list[str]:
    """The non-blank lines inside the hidden-test regions of ``cells``, stripped."""
    found = []
    for index, cell in enumerate(cells):
        text = source(cell)
        lines = text.split("\n")
        for first, last in marked_regions(text, BEGIN_HIDDEN, END_HIDDEN, f"cell {index}"):
            found += [line.strip() for line in lines[first + 1:last] if line.strip()]
    return found


def solution_parts(text: str, stub: str, where: str = "cell") -> tuple[str, str]:
    """(what a learner's copy shows, the model answer) of an answer cell's source.

    Each solution region becomes ``stub`` at the region's indentation (as nbgrader's
    ``ClearSolutions`` writes it); the model answer is the whole source without the marker lines.
    Raises ValueError when the cell has no solution region.
    """
    lines = text.split("\n")
    regions = marked_regions(text, BEGIN_SOLUTION, END_SOLUTION, where)
    if not regions:
        raise ValueError(f"{where}: an answer cell without {BEGIN_SOLUTION!r}")
    ends = dict(regions)
    markers = {i for region in regions for i in region}
    learner, skip_to = [], -1
    for number, line in enumerate(lines):
        if number <= skip_to:
            continue
        if number in ends:
            indent = line[: len(line) - len(line.lstrip())]
            learner += [indent + stub_line for stub_line in stub.split("\n") if stub_line]
            skip_to = ends[number]
        else:
            learner.append(line)
    answer = [line for number, line in enumerate(lines) if number not in markers]
    return "\n".join(learner).strip("\n"), "\n".join(answer).strip("\n")


def solution_lines(cell: Mapping[str, Any]) -> list[str]:
    """The lines a learner writes in an answer cell (inside its solution regions)."""
    text = source(cell)
    lines = text.split("\n")
    return [line for first, last in marked_regions(text, BEGIN_SOLUTION, END_SOLUTION)
            for line in lines[first + 1:last]]


def learner_source(cell: Mapping[str, Any], where: str = "cell") -> str:
    """What a learner reads of ``cell``: solutions as stubs, hidden tests removed."""
    text = source(cell)
    if is_answer(cell):
        stub = CODE_STUB if cell.get("cell_type") == "code" else ANSWER_STUB
        return solution_parts(text, stub, where)[0]
    if BEGIN_HIDDEN in text:
        return without_hidden_tests(text, where)
    return text


# --- views --------------------------------------------------------------------------------------


def learner_cells(nb: Mapping[str, Any], *, room: bool = False) -> list[dict[str, Any]]:
    """The cells of the learner's view of lesson ``nb`` (the room view with ``room=True``).

    Copies: slide-only cells dropped (kept in the room view), each source as the learner reads it
    (:func:`learner_source`). Outputs are kept as they are; a view that has none clears them.
    """
    cells = []
    for index, cell in enumerate(nb["cells"]):
        if is_slide_only(cell) and not room:
            continue
        out = copy.deepcopy(dict(cell))
        out["source"] = learner_source(cell, f"cell {index}")
        cells.append(out)
    return cells


def mark_tests_may_fail(cells: Iterable[dict[str, Any]]) -> None:
    """Tag every test cell of a copy to run ``raises-exception``: "Run All" goes on past a check that fails
    on a blank answer (JupyterLab and nbclient honour the tag; the grader runs every cell anyway)."""
    for cell in cells:
        if is_test(cell):
            cell_tags = cell.setdefault("metadata", {}).setdefault("tags", [])
            if RAISES not in cell_tags:
                cell_tags.append(RAISES)


def learner_notebook(nb: Mapping[str, Any], *, room: bool = False, outputs: bool = True) -> dict[str, Any]:
    """A copy of ``nb`` holding :func:`learner_cells`; with ``outputs=False``, a copy to run afresh: no
    outputs, execution counts, run timestamps or saved widget state, and test cells that may fail
    (:func:`mark_tests_may_fail`)."""
    out = copy.deepcopy(dict(nb))
    out["cells"] = learner_cells(nb, room=room)
    if not outputs:
        out.get("metadata", {}).pop("widgets", None)
        for cell in out["cells"]:
            cell.get("metadata", {}).pop("execution", None)
            if cell["cell_type"] == "code":
                cell["outputs"], cell["execution_count"] = [], None
        mark_tests_may_fail(out["cells"])
    return out


# --- exercises ----------------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$", re.M)
_EXERCISE_TITLE = re.compile(r"^(?P<name>(?:[\w-]+\s+)*?(?:exercise|question)\b[^:(]*?)\s*"
                             r"(?:\((?P<points>[^)]*points?[^)]*)\))?\s*(?::\s*(?P<task>.*))?$", re.I)


@dataclass
class Exercise:
    """One graded exercise as a learner sees it.

    ``name`` is the heading's name ("Exercise 3", "Warm-up exercise"); ``title`` the whole heading
    ("Exercise 3 (2 points): make apple look for ate"); ``task`` the markdown a learner reads from the
    heading up to the answer cell (learner's view); ``grade_ids`` the graded cells that belong to it
    (its test cells, or its written answer).
    """

    name: str
    title: str
    task: str
    written: bool
    grade_ids: list[str] = field(default_factory=list)
    answer_ids: list[str] = field(default_factory=list)
    points: float = 0.0

    @property
    def label(self) -> str:
        """``"Exercise 3 (2 points)"``: how grades and feedback name it."""
        unit = f"{self.points:g} point{'' if self.points == 1 else 's'}"
        return f"{self.name} ({unit})"


def exercises(nb: Mapping[str, Any]) -> list[Exercise]:
    """The graded exercises of lesson ``nb``, in order, each named by its heading.

    An exercise opens at a markdown heading whose text names an exercise or a question
    ("### Exercise 2 (2 points): ...", "### Warm-up exercise (1 point): ..."); its graded cells are
    those that follow, up to the next such heading. Graded cells before any exercise heading form an
    exercise named after their position ("Exercise N"). Raises ValueError when two exercises have the
    same name.
    """
    found: list[Exercise] = []
    current: Exercise | None = None
    task_lines: list[str] = []
    for index, cell in enumerate(nb["cells"]):
        if is_slide_only(cell):
            continue  # not in the learner's view: names and tasks come from what a learner reads
        if cell.get("cell_type") == "markdown" and not is_answer(cell):
            headings = _HEADING.findall(source(cell))
            titled = [title for _, title in headings if _EXERCISE_TITLE.match(title)]
            if titled:
                title = titled[-1]
                match = _EXERCISE_TITLE.match(title)
                assert match is not None
                current = Exercise(match.group("name").strip(), title, "", written=False)
                found.append(current)
                task_lines = []
            elif headings and current is not None and (current.grade_ids or current.answer_ids):
                current = None  # a new section after the exercise closes it
            if current is not None and not current.answer_ids:
                task_lines.append(source(cell))
                current.task = "\n\n".join(task_lines).strip()
            continue
        if not (is_answer(cell) or is_graded(cell)):
            continue
        if current is None:
            current = Exercise(f"Exercise {len(found) + 1}", f"Exercise {len(found) + 1}", "", False)
            found.append(current)
        gid = grade_id(cell) or f"cell-{index}"
        if is_answer(cell):
            current.answer_ids.append(gid)
        if is_graded(cell):
            current.grade_ids.append(gid)
            current.points += points(cell)
            current.written = current.written or is_written_answer(cell)
    names = [e.name for e in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"two exercises are named {twice[0]!r}: give each its own heading")
    return found


def exercise_labels(nb: Mapping[str, Any]) -> dict[str, str]:
    """``{grade_id: how grades and feedback name it}`` for every graded cell of ``nb``.

    An exercise with one graded cell lends it its :attr:`Exercise.label` ("Warm-up exercise (1 point)");
    the graded cells of an exercise with several are its parts ("Exercise 2, part 1 (1 point)").
    """
    labels: dict[str, str] = {}
    cells = grade_cells(nb)
    for exercise in exercises(nb):
        if len(exercise.grade_ids) == 1:
            labels[exercise.grade_ids[0]] = exercise.label
            continue
        for part, gid in enumerate(exercise.grade_ids, start=1):
            worth = points(cells[gid]) if gid in cells else 0.0
            labels[gid] = f"{exercise.name}, part {part} ({worth:g} point{'' if worth == 1 else 's'})"
    return labels


# --- the stated time ----------------------------------------------------------------------------

_TIME = re.compile(r"\*\*Time\.\*\*\s*About\s+(\d+)\s*min\s*:\s*reading\s+(\d+)\s*min\s*\+\s*"
                   r"exercises\s+(\d+)\s*min", re.I)
_DEEPER = re.compile(r"Going deeper[^\n]*?(\d+)\s*min|(\d+)\s*min[^\n]*?Going deeper", re.I)


def stated_times(nb: Mapping[str, Any]) -> dict[str, int] | None:
    """The times a lesson's first cell states, ``**Time.** About T min: reading R min + exercises E
    min`` and optionally how long its Going deeper sections add: ``{"total", "reading",
    "exercises", "deeper"}`` (``deeper`` 0 when not stated), or None when the line is missing."""
    first = source(nb["cells"][0]) if nb.get("cells") else ""
    match = _TIME.search(first)
    if not match:
        return None
    deeper = _DEEPER.search(first[match.end():])
    return {
        "total": int(match.group(1)),
        "reading": int(match.group(2)),
        "exercises": int(match.group(3)),
        "deeper": int(deeper.group(1) or deeper.group(2)) if deeper else 0,
    }
