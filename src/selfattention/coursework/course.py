"""The nbgrader course directory: configuration, student versions, and bounded execution.

A course directory (under ``build/``) holds nbgrader's usual layout::

    source/NN_topic/NN_topic.ipynb         a copy of the lesson (instructor version)
    release/NN_topic/NN_topic.ipynb        its student version
    submitted/LEARNER/NN_topic/...         what a learner handed in
    autograded/LEARNER/NN_topic/...        the same, executed with the hidden tests restored
    gradebook.db                           the sqlite gradebook
    feedback/LEARNER/NN_topic/...          the feedback pages for nbgrader release_feedback
    handmarks/NN_topic/LEARNER.json        which answer each hand mark was given to
    handmarks/NN_topic/carried/LEARNER.json  hand marks kept aside while a changed lesson is regraded

Importing this module imports nbgrader (a few seconds): the working copies' fast path avoids it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from queue import Empty
from typing import Any

from nbformat import NotebookNode
from nbgrader.converters import Autograde, GenerateAssignment
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Integer
from traitlets.config import Config

from . import lessons

__all__ = [
    "CODE_STUB",
    "BoundedExecute",
    "LearnerView",
    "StripNotebookState",
    "course_config",
    "generate_student_versions",
]

CODE_STUB = lessons.CODE_STUB
#: Marks an output the grader cut short (the grading report looks for it).
CUT_MARK = "[output cut by the grader:"


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


def _content_size(content: dict[str, Any]) -> int:
    if "text" in content:
        return len(content["text"])
    return sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in content.get("data", {}).values())


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


class BoundedExecute(Execute):
    """nbgrader's Execute, keeping at most ``max_output_bytes`` of output per cell.

    Output beyond the limit is dropped as it arrives (so a cell printing megabytes cannot fill
    memory) and replaced by one line saying how much the cell printed. Errors are always kept.
    """

    max_output_bytes = Integer(1_000_000, help="Output kept per cell, in characters.").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: Any = None, km: Any = None) -> Any:
        self._printed: dict[int, int] = {}
        self._comm_bytes = 0
        return super().preprocess(nb, resources, km)

    async def async_start_new_kernel_client(self) -> Any:
        """Wait for replies in steps of a second: one long wait can miss a reply that arrived
        after a widget cell and sit out the whole cell time limit (jupyter/nbclient#312)."""
        kc = await super().async_start_new_kernel_client()
        channel = kc.shell_channel
        long_wait = channel.get_msg

        async def get_msg(timeout: float | None = None) -> dict:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                step = 1.0 if deadline is None else min(1.0, max(0.0, deadline - time.monotonic()))
                try:
                    return await long_wait(timeout=step)
                except Empty:
                    if deadline is not None and time.monotonic() >= deadline:
                        raise

        channel.get_msg = get_msg
        seal = getattr(self.km, "seal", None)
        if seal is not None:  # a sandboxed kernel: its sockets exist, its socket folder turns read-only
            seal()
        return kc

    def clear_output(self, outs: list, msg: dict, cell_index: int) -> None:
        self._printed[cell_index] = 0
        super().clear_output(outs, msg, cell_index)

    def handle_comm_msg(self, outs: list, msg: dict, cell_index: int) -> None:
        """Widget messages (their state is saved in the notebook) obey the output limit too, counted
        over the whole notebook: past it, new widget traffic is dropped."""
        self._comm_bytes = getattr(self, "_comm_bytes", 0) + len(json.dumps(msg["content"], default=str))
        if self._comm_bytes <= self.max_output_bytes:
            super().handle_comm_msg(outs, msg, cell_index)

    def _update_display_id(self, display_id: str, msg: dict) -> None:
        """``update_display`` replaces an output already kept: the new one obeys the limit too."""
        size = _content_size(msg["content"])
        if size > self.max_output_bytes:
            note = f"{CUT_MARK} an updated display of {_size(size)} was dropped]"
            msg = {**msg, "content": {**msg["content"], "data": {"text/plain": note}, "metadata": {}}}
        super()._update_display_id(display_id, msg)

    def output(self, outs: list, msg: dict, display_id: str | None, cell_index: int) -> Any:
        if msg["msg_type"] == "error":  # kept always, but bounded: a message of a gigabyte is an attack
            content = dict(msg["content"])
            content["evalue"] = str(content.get("evalue", ""))[:10_000]
            lines, room = [], self.max_output_bytes
            for line in content.get("traceback", [])[:200]:
                lines.append(str(line)[:room])
                room -= len(lines[-1])
                if room <= 0:
                    break
            content["traceback"] = lines
            return super().output(outs, {**msg, "content": content}, display_id, cell_index)
        before = self._printed.get(cell_index, 0)
        size = _content_size(msg["content"])
        self._printed[cell_index] = before + size
        room = self.max_output_bytes - before
        if size <= room:
            return super().output(outs, msg, display_id, cell_index)
        if room > 0 and msg["msg_type"] == "stream":
            msg = {**msg, "content": {**msg["content"], "text": msg["content"]["text"][:room]}}
            super().output(outs, msg, display_id, cell_index)
        if before <= self.max_output_bytes:
            outs.append(NotebookNode(output_type="stream", name="stdout", text=""))
        return None

    def on_cell_executed(self, **kwargs: Any) -> None:
        super().on_cell_executed(**kwargs)
        cell, index = kwargs["cell"], kwargs["cell_index"]
        printed = self._printed.get(index, 0)
        if printed > self.max_output_bytes:
            for out in cell.outputs:  # the placeholder appended when the limit was crossed
                if out.get("output_type") == "stream" and out.get("text") == "":
                    out.text = (
                        f"\n{CUT_MARK} this cell printed {_size(printed)}; "
                        f"the first {_size(self.max_output_bytes)} are kept]\n"
                    )
                    break


def course_config(root: Path, *, cell_timeout: int = 60, max_output_bytes: int = 1_000_000,
                  isolation: Any = None) -> Config:
    """nbgrader's configuration for a course directory at ``root``.

    Inputs:
        cell_timeout: seconds one cell may run during autograding before it is interrupted.
        max_output_bytes: output kept per cell during autograding.
        isolation: a :class:`.sandbox.Isolation`; its kernels start sealed off (or not, mode
            ``"none"``), with standard streams that reach no pipe of the grader either way.
    """
    c = Config()
    c.CourseDirectory.root = str(Path(root).resolve())
    c.ClearSolutions.code_stub = {"python": CODE_STUB}
    c.GenerateAssignment.preprocessors = [
        *GenerateAssignment.class_traits()["preprocessors"].default(),
        StripNotebookState,
        LearnerView,
    ]
    c.Autograde.autograde_preprocessors = [
        BoundedExecute if pp is Execute else pp
        for pp in Autograde.class_traits()["autograde_preprocessors"].default()
    ]
    c.Execute.timeout = cell_timeout
    c.BoundedExecute.timeout = cell_timeout
    c.BoundedExecute.max_output_bytes = max_output_bytes
    c.LimitOutput.max_lines = 200
    c.LimitOutput.max_traceback = 40
    if isolation is not None:
        from .sandbox import sandboxed_kernel_manager_class

        manager = sandboxed_kernel_manager_class()
        c.BoundedExecute.kernel_manager_class = manager
        c[manager.__name__].isolation = isolation.mode
        c[manager.__name__].memory = isolation.memory
        c[manager.__name__].processes = isolation.processes
        c[manager.__name__].disk = isolation.disk
    return c


def generate_student_versions(
    root: Path, lessons: list[Path], config: Config | None = None
) -> dict[str, Path]:
    """Student versions of ``lessons``, made by nbgrader's generate_assignment in course ``root``.

    Each lesson ``NN_topic.ipynb`` becomes an assignment ``NN_topic`` with one notebook. Returns
    ``{"NN_topic": path of its student version}``. Raises RuntimeError with nbgrader's log if a
    lesson cannot be converted (for example a solution region that is never closed).
    """
    _use_this_environment()
    root = Path(root).resolve()
    config = config or course_config(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(_NBGRADER_CONFIG, encoding="utf-8")
    out: dict[str, Path] = {}
    for lesson in lessons:
        name = lesson.stem
        source = root / "source" / name / lesson.name
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
            carry_hand_marks(root, name)
            app = GenerateAssignment(coursedir=coursedir, config=config)
            app.force = True
            app.create_assignment = True
            _run_quietly(app, f"could not make the student version of {lesson.name}")
        out[name] = root / "release" / name / lesson.name
    return out


def carried_marks(root: Path, lesson: str) -> Path:
    """The folder of hand marks kept aside while a changed lesson's submissions are graded anew."""
    return Path(root) / "handmarks" / lesson / "carried"


def carry_hand_marks(root: Path, lesson: str) -> None:
    """Write every hand mark and grader's comment of ``lesson`` to ``carried_marks(root, lesson)/
    LEARNER.json`` (``{"marks": {grade_id: points}, "comments": {grade_id: text}}``), then remove
    the lesson's submissions from the gradebook, which nbgrader requires before a graded cell is
    added to or removed from a lesson. The next grading of each learner puts the marks back."""
    import warnings

    from nbgrader.api import Gradebook, MissingEntry

    folder = carried_marks(root, lesson)
    folder.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gb:
        warnings.simplefilter("ignore")
        try:
            submissions = list(gb.find_assignment(lesson).submissions)
        except MissingEntry:
            return
        for submission in submissions:
            learner = submission.student.id
            path = folder / f"{learner}.json"
            kept = (json.loads(path.read_text(encoding="utf-8")) if path.exists()
                    else {"marks": {}, "comments": {}})
            for nb in submission.notebooks:
                kept["marks"].update({g.name: g.manual_score for g in nb.grades
                                      if g.manual_score is not None})
                kept["comments"].update({c.name: c.manual_comment for c in nb.comments if c.manual_comment})
            path.write_text(json.dumps(kept), encoding="utf-8")  # on disk before the gradebook forgets
        for submission in submissions:
            gb.remove_submission(lesson, submission.student.id)


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
