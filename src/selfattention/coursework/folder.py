"""The course folder (``build/course``, ``build/lab``): every path in it, its gradebook and its verdict files.

A course folder is nbgrader's course directory plus what this course keeps beside it. This module is the
only place its layout is spelled; everything else asks a :class:`CourseFolder` for a path::

    nbgrader_config.py                       nbgrader's own tools' settings (written by every release)
    source/NN_topic/NN_topic.ipynb           a copy of the lesson (the instructor's version)
    release/NN_topic/NN_topic.ipynb          its student version (make release, make lab)
    release/NN_topic/.published              the fingerprint that student version was made from
    room/NN_topic.ipynb                      its presenter copy (make present)
    submitted/LEARNER/NN_topic/NN_topic.ipynb  what a learner handed in (with nbgrader collect's receipts)
    autograded/LEARNER/NN_topic/NN_topic.ipynb the same, executed with the hidden tests restored
    gradebook.db                             nbgrader's sqlite gradebook (scores, hand marks, comments)
    references/NN_topic.json                 the results of the instructor's own run, by grade id
    verdicts/NN_topic/LEARNER.json           what the grader said of each exercise (read by make feedback)
    handmarks/NN_topic/LEARNER.json          which answer each hand mark was given to
    handmarks/NN_topic/carried/LEARNER.json  hand marks kept aside while a changed lesson is taken in
    logs/NN_topic/LEARNER.log                nbgrader's log of one submission (_worker.log: the worker's)
    feedback/LEARNER/NN_topic/NN_topic.html  the feedback pages, for nbgrader release_feedback
    .grading.lock                            held by the grading run using the folder
    .release.lock                            held while student versions are made (a wait, not a refusal)

Importing this module imports neither nbgrader nor nbformat (``make lab``'s fast path uses it).
"""

from __future__ import annotations

import fcntl
import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CourseFolder", "Verdict"]


@dataclass
class Verdict:
    """What grading said of one learner's lesson: the file ``verdicts/NN_topic/LEARNER.json``.

    ``messages``: for each autograded test (by grade id), None when it passed, else why not, in words;
    ``notes``: every note of the grading run, as the CSV's ``reason`` column has them.
    """

    messages: dict[str, str | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Verdict:
        """Raises ValueError for a file that is not a verdict."""
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("messages"), dict) or not isinstance(
                data.get("notes"), list):
            raise ValueError("not a verdict file: expected {'messages': {...}, 'notes': [...]}")
        return cls(dict(data["messages"]), list(data["notes"]))


@dataclass(frozen=True)
class CourseFolder:
    """One course folder (the module's layout); a ``lesson`` is a name, ``"02_basic_self_attention"``."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).resolve())

    # --- nbgrader's layout ---
    @property
    def config_file(self) -> Path:
        return self.root / "nbgrader_config.py"

    def source(self, lesson: str) -> Path:
        return self.root / "source" / lesson / f"{lesson}.ipynb"

    def release(self, lesson: str) -> Path:
        return self.root / "release" / lesson / f"{lesson}.ipynb"

    def release_stamp(self, lesson: str) -> Path:
        return self.release(lesson).parent / ".published"

    def room(self, lesson: str) -> Path:
        return self.root / "room" / f"{lesson}.ipynb"

    def submitted(self, learner: str, lesson: str) -> Path:
        return self.root / "submitted" / learner / lesson / f"{lesson}.ipynb"

    def autograded(self, learner: str, lesson: str) -> Path:
        return self.root / "autograded" / learner / lesson / f"{lesson}.ipynb"

    def feedback_page(self, learner: str, lesson: str) -> Path:
        return self.root / "feedback" / learner / lesson / f"{lesson}.html"

    @property
    def gradebook_file(self) -> Path:
        return self.root / "gradebook.db"

    # --- this course's own ---
    def reference(self, lesson: str) -> Path:
        return self.root / "references" / f"{lesson}.json"

    def verdict_file(self, learner: str, lesson: str) -> Path:
        return self.root / "verdicts" / lesson / f"{learner}.json"

    def hand_marks(self, learner: str, lesson: str) -> Path:
        return self.root / "handmarks" / lesson / f"{learner}.json"

    def carried_marks(self, lesson: str) -> Path:
        """The folder of ``lesson``'s hand marks kept aside while its changed version is taken in."""
        return self.root / "handmarks" / lesson / "carried"

    def log(self, lesson: str, learner: str = "_worker") -> Path:
        """nbgrader's log of one submission; ``_worker`` (no learner name starts so): the worker's own."""
        return self.root / "logs" / lesson / f"{learner}.log"

    @property
    def lock_file(self) -> Path:
        return self.root / ".grading.lock"

    @contextmanager
    def release_lock(self) -> Iterator[None]:
        """Hold the folder's ``.release.lock`` for the ``with`` block, waiting for another process that holds
        it: nbgrader makes student versions in the folder's gradebook, one process at a time."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".release.lock", "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    # --- the gradebook ---
    @contextmanager
    def gradebook(self) -> Iterator[Any]:
        """nbgrader's ``Gradebook`` of this folder, open for the ``with`` block (its SQLAlchemy warnings,
        which say nothing to a grader, silenced). Commits what was changed on the way out."""
        from nbgrader.api import Gradebook

        with warnings.catch_warnings(), Gradebook(f"sqlite:///{self.gradebook_file}") as gb:
            warnings.simplefilter("ignore")
            yield gb
            gb.db.commit()

    # --- verdicts ---
    def write_verdict(self, learner: str, lesson: str, verdict: Verdict) -> None:
        path = self.verdict_file(learner, lesson)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(verdict.to_json(), encoding="utf-8")

    def read_verdict(self, learner: str, lesson: str) -> Verdict:
        return Verdict.from_json(self.verdict_file(learner, lesson).read_text(encoding="utf-8"))

    def graded(self) -> list[tuple[str, str]]:
        """``(learner, lesson)`` of every submission with a verdict, by lesson then learner."""
        return [(path.stem, path.parent.name) for path in sorted((self.root / "verdicts").glob("*/*.json"))]
