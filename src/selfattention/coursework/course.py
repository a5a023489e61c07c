"""nbgrader's configuration of a course folder, and the student versions it makes.

The student version of a lesson is nbgrader's ``generate_assignment`` output (solutions cleared to the
course's stub, hidden tests removed, test cells locked), then the course's own two steps:
:class:`StripNotebookState` and :class:`LearnerView` (the learner's view of :mod:`.lessons`). The course
folder's layout is :mod:`.folder`'s; running submissions is :mod:`.runner`'s.

Importing this module imports nbgrader (a few seconds): the working copies' fast path avoids it.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

from nbformat import NotebookNode
from nbgrader.converters import GenerateAssignment
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets.config import Config

from . import lessons
from .folder import CourseFolder

__all__ = ["CODE_STUB", "LearnerView", "StripNotebookState", "course_config", "generate_student_versions"]

CODE_STUB = lessons.CODE_STUB


def _use_this_environment() -> None:
    """nbgrader runs the ``alembic`` script to create a gradebook: find it next to this Python."""
    bindir = os.path.dirname(sys.executable)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")


class StripNotebookState(NbGraderPreprocessor):
    """Drop what ClearOutput leaves behind in a student version.

    Saved widget state (``metadata.widgets``) holds the outputs of interactive cells, which can
    show an exercise's answer; ``execution`` timestamps say nothing to a learner.
    """

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        nb.metadata.pop("widgets", None)
        for cell in nb.cells:
            cell.metadata.pop("execution", None)
        return nb, resources


class LearnerView(NbGraderPreprocessor):
    """The learner's view of a student version (:mod:`.lessons`): slide-only cells are left out (the
    lesson text says it all), and each test cell is tagged ``raises-exception``, so that "Run All" in a
    learner's copy goes on past a check that fails on a blank answer. Grading is unchanged: the
    autograder runs every cell anyway and a failing check still costs its points."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        nb.cells = [cell for cell in nb.cells if not lessons.is_slide_only(cell)]
        lessons.mark_tests_may_fail(nb.cells)
        return nb, resources


def course_config(root: Path) -> Config:
    """nbgrader's configuration for the course folder at ``root``: the course's code stub, and the student
    version's preprocessors (nbgrader's, then :class:`StripNotebookState` and :class:`LearnerView`). The
    runner adds the limits it grades under (:func:`.runner.execution_config`)."""
    c = Config()
    c.CourseDirectory.root = str(Path(root).resolve())
    c.ClearSolutions.code_stub = {"python": CODE_STUB}
    c.GenerateAssignment.preprocessors = [
        *GenerateAssignment.class_traits()["preprocessors"].default(),
        StripNotebookState,
        LearnerView,
    ]
    return c


def generate_student_versions(root: Path, lessons: list[Path], config: Config | None = None,
                              lock: bool = True) -> dict[str, Path]:
    """Student versions of ``lessons``, made by nbgrader's generate_assignment in course ``root``.

    Each lesson ``NN_topic.ipynb`` becomes an assignment ``NN_topic`` with one notebook. Returns
    ``{"NN_topic": path of its student version}``. Raises RuntimeError with nbgrader's log if a
    lesson cannot be converted (for example a solution region that is never closed).

    nbgrader refuses to add or remove a graded cell of a lesson already graded; then the lesson's hand
    marks are kept aside and its submissions cleared from the gradebook (:func:`.gradebook.carry_hand_marks`)
    and the version is made again. Holds the folder's release lock (``lock``: unless the caller holds it).
    """
    folder = CourseFolder(root)
    if lock:
        with folder.release_lock():
            return generate_student_versions(root, lessons, config, lock=False)
    _use_this_environment()
    config = config or course_config(folder.root)
    folder.root.mkdir(parents=True, exist_ok=True)
    folder.config_file.write_text(_NBGRADER_CONFIG, encoding="utf-8")
    out: dict[str, Path] = {}
    for lesson in lessons:
        name = lesson.stem
        source = folder.source(name)
        source.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lesson, source)
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id = name
        app = GenerateAssignment(coursedir=coursedir, config=config)
        app.force = True
        app.create_assignment = True
        try:
            _run_quietly(app, f"could not make the student version of {lesson.name}")
        except RuntimeError as exc:
            # nbgrader refuses to add or remove a graded cell of a lesson already graded: keep the
            # hand marks aside (grading puts them back), clear its submissions, and make it again.
            if "Cannot add or remove cells" not in str(exc):
                raise
            from .gradebook import carry_hand_marks  # imports nbgrader's gradebook: only when needed

            carry_hand_marks(folder, name)
            app = GenerateAssignment(coursedir=coursedir, config=config)
            app.force = True
            app.create_assignment = True
            _run_quietly(app, f"could not make the student version of {lesson.name}")
        out[name] = folder.release(name)
    return out


# So that nbgrader's own tools (the formgrader for written answers, `nbgrader export`) can be run
# in the course directory, with the same code stub.
_NBGRADER_CONFIG = f"""# Written by selfattention.coursework (make release / make grade) on every run.
c = get_config()  # noqa: F821
c.ClearSolutions.code_stub = {{"python": {CODE_STUB!r}}}
"""


def _run_quietly(app: Any, what: str) -> None:
    """Run an nbgrader converter; on failure raise RuntimeError carrying its log."""
    from nbgrader.utils import capture_log

    result = capture_log(app)
    if not result["success"]:
        raise RuntimeError(f"{what}:\n{result.get('log', '')}\n{result.get('error', '')}")
