"""The gradebook (nbgrader's sqlite ``gradebook.db``): the grader's verdicts in, the scores out, and the
marks graders give by hand kept honest.

A hand mark belongs to the answer the grader read. Each hand-graded answer of a learner's lesson has a
:class:`HandMark` record (``handmarks/NN_topic/LEARNER.json``), a small state machine run once a grading:

- **waiting**: no mark in the gradebook. The answer graded now is what the formgrader shows (``seen``).
- **marked**: a mark appeared in the gradebook (or changed) since the last run: a grader gave it to the answer
  the formgrader showed, ``seen``; the record keeps that answer as ``marked``, with the mark.
- **set aside**: the answer graded now is not the one ``marked``: the mark is taken out of the gradebook (the
  cell waits for a grader again, the comment stays), a note says what it was; back to waiting.

A mark found on the first run that keeps this record is taken to be for the answer as it is: nothing older
is known. When a changed lesson gains or loses a graded cell, nbgrader requires its submissions to leave the
gradebook: :func:`carry_hand_marks` keeps their marks and comments aside first, and the next grading of each
learner puts them back (:func:`restore_carried_marks`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from . import lessons
from .folder import CourseFolder

__all__ = ["HandMark", "Totals", "add_learners", "record_scores", "review_hand_marks", "carry_hand_marks",
           "restore_carried_marks", "grades"]


@dataclass
class HandMark:
    """What is known of one hand-graded answer: digests of the answer the formgrader showed last (``seen``)
    and of the answer the current mark was given to (``marked``), with that mark (``score``)."""

    seen: str | None = None
    marked: str | None = None
    score: float | None = None

    def step(self, mark: float | None, answer: str) -> float | None:
        """One grading run: ``mark`` is the gradebook's hand mark now (None: waiting), ``answer`` the digest
        of the answer graded now. Returns the mark to set aside, or None when it stands (or there is none)."""
        aside = None
        if mark is not None and (self.score != mark or self.marked is None):
            self.marked, self.score = self.seen or answer, mark  # given since the last run, to what it showed
        if mark is not None and self.marked != answer:
            aside, self.marked, self.score = mark, None, None
        self.seen = answer
        return aside

    def to_dict(self) -> dict[str, object]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True)
class Totals:
    """A learner's lesson as the CSV shows it (points)."""

    score: float  #: everything: autograded tests plus hand marks so far
    max_score: float
    auto_score: float  #: the autograded tests alone
    auto_max_score: float
    to_grade_by_hand: float  #: hand-graded answers still waiting for a grader


def add_learners(folder: CourseFolder, learners: list[str]) -> None:
    """Make sure every learner is in the gradebook (before workers race to add them)."""
    with folder.gradebook() as gb:
        for learner in learners:
            gb.update_or_create_student(learner)


def record_scores(folder: CourseFolder, lesson: str, learner: str, hand_graded: set[str],
                  auto: dict[str, float] | None = None, zero_all: bool = False) -> Totals:
    """Write the grader's points ``{grade_id: points}`` for the autograded tests (or 0 for every graded
    cell: ``zero_all``) to the gradebook, then read the totals. ``hand_graded``: the lesson's hand-graded
    grade ids (:func:`.lessons.hand_graded`)."""
    auto = auto or {}
    with folder.gradebook() as gb:
        gb.update_or_create_student(learner)
        gb.update_or_create_submission(lesson, learner)
        nb = gb.find_submission_notebook(lesson, lesson, learner)
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
    auto_rows = [r for r in rows if r[0] not in hand_graded]
    return Totals(
        score=sum(r[1] for r in rows), max_score=sum(r[2] for r in rows),
        auto_score=sum(r[1] for r in auto_rows), auto_max_score=sum(r[2] for r in auto_rows),
        to_grade_by_hand=sum(r[2] for r in rows if r[0] in hand_graded and r[3]),
    )


def review_hand_marks(folder: CourseFolder, lesson: str, learner: str, answers: dict[str, str],
                      hand_graded: set[str], labels: dict[str, str]) -> list[str]:
    """Run every hand-graded answer's :class:`HandMark` one step: set aside each mark given to an answer
    that has changed since. ``answers``: the submitted answers' sources by grade id. Returns the notes."""
    path = folder.hand_marks(learner, lesson)
    saved = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    state = {gid: HandMark(**record) for gid, record in saved.items()}
    notes = []
    with folder.gradebook() as gb:
        nb = gb.find_submission_notebook(lesson, lesson, learner)
        for grade in nb.grades:
            if grade.name not in hand_graded:
                continue
            digest = hashlib.sha256(answers.get(grade.name, "").strip().encode()).hexdigest()
            aside = state.setdefault(grade.name, HandMark()).step(grade.manual_score, digest)
            if aside is not None:
                notes.append(f"{labels.get(grade.name, grade.name)}: the answer changed after it was marked "
                             f"by hand ({aside:g} points): that mark is set aside, grade it by hand again")
                grade.manual_score = None
                grade.needs_manual_grade = True
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({gid: mark.to_dict() for gid, mark in state.items()}), encoding="utf-8")
    return notes


def carry_hand_marks(folder: CourseFolder, lesson: str) -> None:
    """Write every hand mark and grader's comment of ``lesson`` to ``handmarks/NN_topic/carried/LEARNER.json``
    (``{"marks": {grade_id: points}, "comments": {grade_id: text}}``), then remove the lesson's submissions
    from the gradebook, which nbgrader requires before a graded cell is added to or removed from a lesson.
    The next grading of each learner puts the marks back."""
    from nbgrader.api import MissingEntry

    carried = folder.carried_marks(lesson)
    carried.mkdir(parents=True, exist_ok=True)
    with folder.gradebook() as gb:
        try:
            submissions = list(gb.find_assignment(lesson).submissions)
        except MissingEntry:
            return
        for submission in submissions:
            path = carried / f"{submission.student.id}.json"
            kept = (json.loads(path.read_text(encoding="utf-8")) if path.exists()
                    else {"marks": {}, "comments": {}})
            for nb in submission.notebooks:
                kept["marks"].update({g.name: g.manual_score for g in nb.grades
                                      if g.manual_score is not None})
                kept["comments"].update({c.name: c.manual_comment for c in nb.comments if c.manual_comment})
            path.write_text(json.dumps(kept), encoding="utf-8")  # on disk before the gradebook forgets
        for submission in submissions:
            gb.remove_submission(lesson, submission.student.id)


def restore_carried_marks(folder: CourseFolder, lesson: str, learner: str) -> None:
    """Put back the hand marks :func:`carry_hand_marks` kept aside, for the cells the lesson still has
    (the answers they were given to are reviewed next)."""
    path = folder.carried_marks(lesson) / f"{learner}.json"
    if not path.exists():
        return
    kept = json.loads(path.read_text(encoding="utf-8"))
    with folder.gradebook() as gb:
        gb.update_or_create_submission(lesson, learner)
        nb = gb.find_submission_notebook(lesson, lesson, learner)
        for grade in nb.grades:
            if grade.name in kept["marks"] and grade.manual_score is None:
                grade.manual_score = kept["marks"][grade.name]
                grade.needs_manual_grade = False
        for comment in nb.comments:
            if comment.name in kept["comments"] and not comment.manual_comment:
                comment.manual_comment = kept["comments"][comment.name]
    path.unlink()


def grades(folder: CourseFolder, lesson: str, learner: str) -> dict[str, dict]:
    """``{grade_id: {"score", "max", "waiting" (for a grader), "comment"}}`` of a learner's lesson."""
    with folder.gradebook() as gb:
        nb = gb.find_submission_notebook(lesson, lesson, learner)
        comments = {c.name: (c.manual_comment or c.auto_comment or "") for c in nb.comments}
        return {g.name: {"score": float(g.score), "max": float(g.max_score),
                         "waiting": bool(g.needs_manual_grade and g.manual_score is None),
                         "comment": comments.get(g.name, "")} for g in nb.grades}


def answers_of(nb: object) -> dict[str, str]:
    """The sources of a submitted notebook's graded cells, by grade id (for :func:`review_hand_marks`)."""
    return {gid: lessons.source(cell) for gid, cell in lessons.grade_cells(nb).items()}
