"""Coursework: learners' working copies, student versions and headless autograding, on nbgrader.

The lesson notebooks in ``notebooks/`` are the instructor source (solutions and hidden tests in).
Everything here is generated from them::

    python -m selfattention.coursework lab [--refresh all|NN ...]  # work/: the learner's own copies
    python -m selfattention.coursework present [--refresh ...]     # present/: copies for live slides
    python -m selfattention.coursework release                     # student/: student versions (committed)
    python -m selfattention.coursework grade                       # grades/grades.csv from submissions/
    python -m selfattention.coursework feedback                    # feedback/: a page per learner and lesson

Modules (``docs/architecture.md`` draws the data flow):

- the lesson format: :mod:`.lessons` (cells, regions, the learner's and room views, exercise names);
- the course folder: :mod:`.folder` (every path, the gradebook, verdict files);
- copies: :mod:`.course` (nbgrader's student version), :mod:`.publish` (``student/`` and the one cache of
  student versions), :mod:`.copies` (working and presenter copies, never overwritten once changed);
- grading, one module a step: :mod:`.grading` (``make grade``), :mod:`.submissions`, :mod:`.verdicts`,
  :mod:`.gradebook`, :mod:`.results` (what a hidden test hands over); :mod:`.runner` (the only module that
  runs learner code, under a :mod:`.policy` ``RunPolicy``) and :mod:`.sandbox` (how it seals a kernel off);
- :mod:`.feedback` (``make feedback``) and :mod:`.mathml` (maths without MathJax).
"""

from __future__ import annotations

from .lessons import LESSON_GLOB, find_lessons

__all__ = ["find_lessons", "LESSON_GLOB"]
