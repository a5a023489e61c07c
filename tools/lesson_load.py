"""How long a lesson takes a careful first-time learner, by one rule for every lesson.

``python tools/lesson_load.py [notebooks/*.ipynb]`` prints, per lesson: the stated times, the load
(reading and exercises), and the load of the optional "Going deeper" sections apart.

The rule, calibrated on expert reviewers' estimates: prose at 110 words a minute, code at 4.5 lines
a minute, 10 minutes per graded code exercise and 6 per written answer. It is counted on the
learner's view (``selfattention.coursework.lessons.learner_cells``: slide-only cells left out, so
a point the deck repeats is not read twice):

- words: whitespace-separated tokens of every markdown cell (notes included), except written-answer
  cells (their 6 minutes cover them);
- code lines: non-blank lines of code cells as a learner sees them, except the stub of an answer
  cell (the learner writes that part: the exercise's 10 minutes) and test cells;
- exercises: answer cells, code (10 min) or written (6 min);
- the Colab/Binder links cell and the Colab setup cell (tags ``course-links``, ``course-setup``)
  are left out.

A section whose ``##``/``###``/``####`` heading contains "Going deeper" (up to the next heading of
the same or a higher level) is optional: never graded, never needed later. Its load is reported
apart; the first cell says how long it adds.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from selfattention.coursework import lessons

WORDS_PER_MIN = 110
CODE_LINES_PER_MIN = 4.5
MIN_PER_EXERCISE = 10
MIN_PER_WRITTEN = 6
MAX_MINUTES = 90
SKIPPED_TAGS = {lessons.LINKS_TAG, lessons.SETUP_TAG}
_STUB_LINES = {line.strip() for line in lessons.CODE_STUB.split("\n")}
_HEADING = re.compile(r"^(#{2,4})\s+(.*)$", re.M)


@dataclass
class Load:
    """Counts for the core of a lesson or for its Going deeper sections."""

    words: int = 0
    code_lines: int = 0
    exercises: int = 0
    written: int = 0

    @property
    def reading(self) -> float:
        """Minutes of reading and running."""
        return self.words / WORDS_PER_MIN + self.code_lines / CODE_LINES_PER_MIN

    @property
    def exercise_minutes(self) -> float:
        return MIN_PER_EXERCISE * self.exercises + MIN_PER_WRITTEN * self.written

    @property
    def minutes(self) -> float:
        return self.reading + self.exercise_minutes


@dataclass
class LessonLoad:
    """A lesson's stated times (None when it states none), the load of its core and of its optional
    sections."""

    name: str
    stated: dict[str, int] | None
    core: Load
    deeper: Load


def lesson_load(path: Path) -> LessonLoad:
    """Count ``path`` (a lesson notebook) by the rule in the module docstring."""
    nb = lessons.read_lesson(path)
    core, deeper = Load(), Load()
    deeper_level = 0  # heading level of the open Going deeper section, 0 when none is open
    for cell in lessons.learner_cells(nb):
        if SKIPPED_TAGS & lessons.tags(cell):
            continue
        text = lessons.source(cell)
        if cell["cell_type"] == "markdown":
            for hashes, title in _HEADING.findall(text):
                level = len(hashes)
                if deeper_level and level <= deeper_level:
                    deeper_level = 0
                if not deeper_level and "going deeper" in title.lower():
                    deeper_level = level
        into = deeper if deeper_level else core
        if lessons.is_written_answer(cell):
            into.written += 1
            continue
        if lessons.is_code_answer(cell):
            into.exercises += 1
        if cell["cell_type"] == "markdown":
            into.words += len(text.split())
        elif cell["cell_type"] == "code" and not lessons.is_test(cell):
            into.code_lines += sum(1 for line in text.splitlines()
                                   if line.strip() and line.strip() not in _STUB_LINES)
    return LessonLoad(Path(path).stem, lessons.stated_times(nb), core, deeper)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Stated time and load (reading + exercises) of each lesson.")
    parser.add_argument("paths", nargs="*", metavar="LESSON",
                        help="lesson notebooks (default: every lesson in this checkout's notebooks/)")
    paths = parser.parse_args(argv).paths
    for p in paths:
        if not (Path(p).is_file() and p.endswith(".ipynb")):
            parser.error(f"LESSON {p!r} is not a notebook file; expected e.g. notebooks/02_topic.ipynb")
    paths = paths or [str(p) for p in lessons.find_lessons(Path(__file__).resolve().parents[1] / "notebooks")]
    print(f"{'lesson':28} {'stated':>14} {'load':>14} {'deeper':>6}  words/code/exercises/written")
    for p in paths:
        r = lesson_load(Path(p))
        c, s = r.core, r.stated
        said = f"{s['reading']}+{s['exercises']}={s['total']}" if s else "-"
        print(f"{r.name:28} {said:>14} {c.reading:5.0f}+{c.exercise_minutes:3.0f}={c.minutes:3.0f}"
              f" {r.deeper.minutes:6.0f}  {c.words}/{c.code_lines}/{c.exercises}/{c.written}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
