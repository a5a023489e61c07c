"""Coursework: learners' working copies, student versions and headless autograding, on nbgrader.

The lesson notebooks in ``notebooks/`` are the instructor source (solutions and hidden tests in).
Everything here is generated from them::

    python -m selfattention.coursework lab [--refresh all|NN ...]  # work/: the learner's own copies
    python -m selfattention.coursework present [--refresh ...]     # present/: copies for live slides
    python -m selfattention.coursework release                     # student/: student versions (committed)
    python -m selfattention.coursework grade                       # grades/grades.csv from submissions/

Modules: :mod:`.lessons` (the lesson format: cells, regions, the learner's view, exercises),
:mod:`.course` (the nbgrader course directory and the student version),
:mod:`.publish` (the committed student versions in ``student/`` that every lesson links to),
:mod:`.copies` (working copies that are never overwritten once a learner changed them),
:mod:`.grading` (autograding with time and output limits, and the CSV).
"""

from __future__ import annotations

from .lessons import LESSON_GLOB, find_lessons

__all__ = ["find_lessons", "LESSON_GLOB"]
