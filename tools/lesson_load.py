"""How long a lesson takes a careful first-time learner, by one rule for every lesson.

``python tools/lesson_load.py notebooks/*.ipynb`` prints, per lesson: the stated time, the load, the cells and
the load of the optional "Going deeper" sections apart.

The rule (the reviewers' rule of thumb): prose at 120 words a minute, code at 6 lines a minute, 6 minutes per
graded code exercise and 4 per written answer. Counted:

- words: whitespace-separated tokens of every markdown cell (speaker notes included: the notebook shows them
  as lesson text), except written-answer cells (their 4 minutes cover them);
- code lines: non-blank lines of code cells, except lines between ``### BEGIN SOLUTION`` and
  ``### END SOLUTION`` (the learner writes those: the exercise's 6 minutes) and nbgrader test cells;
- exercises: answer cells (``nbgrader.solution``), code or markdown;
- the Colab/Binder links cell and the Colab setup cell (tags ``course-links``, ``course-setup``) are left out.

A section whose ``##``/``###``/``####`` heading contains "Going deeper" (up to the next heading of the same or
a higher level) is optional: never graded, never needed later. Its load is reported apart, not in the
stated time; the first cell says how long it adds.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

WORDS_PER_MIN = 120
CODE_LINES_PER_MIN = 6
MIN_PER_EXERCISE = 6
MIN_PER_WRITTEN = 4
MAX_MINUTES = 75
MAX_CELLS = 70
SKIPPED_TAGS = {"course-links", "course-setup"}

_HEADING = re.compile(r"^(#{2,4})\s+(.*)$", re.M)
_SOLUTION = re.compile(r"### BEGIN SOLUTION.*?### END SOLUTION", re.S)


@dataclass
class Load:
    """Counts for the core of a lesson or for its Going deeper sections."""

    words: int = 0
    code_lines: int = 0
    exercises: int = 0
    written: int = 0

    @property
    def minutes(self) -> float:
        return (self.words / WORDS_PER_MIN + self.code_lines / CODE_LINES_PER_MIN
                + MIN_PER_EXERCISE * self.exercises + MIN_PER_WRITTEN * self.written)


@dataclass
class LessonLoad:
    """A lesson's stated minutes, its cell count, the load of its core and of its optional sections."""

    name: str
    stated: int | None
    cells: int
    core: Load
    deeper: Load


def stated_minutes(first_cell: str) -> int | None:
    """The N of ``**Time.** About N min`` in a lesson's first cell, or None."""
    found = re.search(r"\*\*Time\.\*\*\D*(\d+)\s*min", first_cell)
    return int(found.group(1)) if found else None


def lesson_load(path: Path) -> LessonLoad:
    """Count ``path`` (a lesson notebook) by the rule in the module docstring."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    cells = nb["cells"]
    core, deeper = Load(), Load()
    deeper_level = 0  # heading level of the open Going deeper section, 0 when none is open
    for cell in cells:
        source = "".join(cell["source"])
        meta = cell.get("metadata", {})
        if SKIPPED_TAGS & set(meta.get("tags", [])):
            continue
        if cell["cell_type"] == "markdown":
            for hashes, title in _HEADING.findall(source):
                level = len(hashes)
                if deeper_level and level <= deeper_level:
                    deeper_level = 0
                if not deeper_level and "going deeper" in title.lower():
                    deeper_level = level
        into = deeper if deeper_level else core
        grader = meta.get("nbgrader", {})
        if grader.get("solution"):
            if cell["cell_type"] == "markdown":
                into.written += 1
                continue
            into.exercises += 1
        if cell["cell_type"] == "markdown":
            into.words += len(source.split())
        elif cell["cell_type"] == "code":
            if grader.get("grade") and not grader.get("solution"):
                continue
            code = _SOLUTION.sub("", source)
            into.code_lines += sum(1 for line in code.splitlines() if line.strip())
    first = "".join(cells[0]["source"]) if cells else ""
    return LessonLoad(Path(path).stem, stated_minutes(first), len(cells), core, deeper)


def main(paths: list[str]) -> int:
    print(f"{'lesson':28} {'stated':>6} {'load':>5} {'deeper':>6} {'cells':>5}  words/code/ex/written")
    for p in paths:
        r = lesson_load(Path(p))
        c = r.core
        print(f"{r.name:28} {r.stated or '-':>6} {c.minutes:5.0f} {r.deeper.minutes:6.0f} {r.cells:5d}"
              f"  {c.words}/{c.code_lines}/{c.exercises}/{c.written}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
