"""Coursework: learners' working copies, student versions and headless autograding, on nbgrader.

The lesson notebooks in ``notebooks/`` are the instructor source (solutions and hidden tests in).
Everything here is generated from them::

    python -m selfattention.coursework lab [--refresh all|NN ...]  # work/: the learner's own copies
    python -m selfattention.coursework release                     # student/: student versions (committed)
    python -m selfattention.coursework grade                       # grades/grades.csv from submissions/

Modules: :mod:`.course` (the nbgrader course directory and the student version),
:mod:`.publish` (the committed student versions in ``student/`` that every lesson links to),
:mod:`.copies` (working copies that are never overwritten once a learner changed them),
:mod:`.grading` (autograding with time and output limits, and the CSV).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["find_lessons", "LESSON_GLOB"]

LESSON_GLOB = "[0-9][0-9]_*.ipynb"


def find_lessons(notebooks: Path) -> list[Path]:
    """The lesson notebooks ``NN_topic.ipynb`` in ``notebooks``, in order."""
    lessons = sorted(Path(notebooks).glob(LESSON_GLOB))
    if not lessons:
        raise FileNotFoundError(f"no lesson notebooks ({LESSON_GLOB}) in {notebooks}")
    return lessons
