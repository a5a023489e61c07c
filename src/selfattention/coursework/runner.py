"""The submission runner: the one module that starts, limits, watches and kills learner code.

Everything that executes a notebook for grading goes through here, under one :class:`RunPolicy` (time per
cell and per submission, output kept per cell, the sandbox and its memory, process and disk limits):

- :func:`run_batch` grades learners' submissions to one lesson with nbgrader's autograde, in a worker
  process it watches (``python -m selfattention.coursework.runner``, given the batch as one JSON
  argument). The worker reports each submission as a JSON line; the supervisor turns what it saw into one
  :class:`Outcome` per learner (graded, or why not), kills a worker past the submission time limit and
  starts another for the rest;
- :func:`run_notebook` executes one notebook in this process the same way (the instructor's reference run);
- :func:`run_sandboxed` runs any command sealed off as a kernel would be (the attack tests, the benchmark).

Each kernel runs sealed off by bubblewrap (:mod:`.sandbox`, which only this module uses) unless the policy
says ``isolation="none"``. Limits are enforced from outside: the cell time limit by interrupting the cell,
the output limit by dropping output as it arrives (:class:`BoundedExecute`), memory, processes and disk by
the sandbox's cgroup and rlimits, the submission time limit by killing the worker and the sandbox.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from queue import Empty
from typing import Any

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode
from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import Execute
from nbgrader.utils import capture_log
from traitlets import Integer
from traitlets.config import Config

from . import lessons, sandbox
from .folder import CourseFolder
from .policy import RunPolicy, human_size

__all__ = ["RunPolicy", "Outcome", "KernelWatch", "BoundedExecute", "CUT_MARK", "KERNEL_STOPPED", "NOT_RUN",
           "execution_config",
           "run_batch", "run_notebook", "run_sandboxed", "unavailable", "kill_tree"]

#: Marks an output the runner cut short (the grading report looks for it).
CUT_MARK = "[output cut by the grader:"
#: The error name given to the cell in which the kernel stopped (died, was killed, or hung past the
#: interrupt), and to each code cell after it, which was not run. Verdicts already given are kept.
KERNEL_STOPPED, NOT_RUN = "KernelStopped", "NotRun"
#: Seconds a worker may take to import nbgrader on a busy machine, before its first submission's clock.
STARTUP = 120


# --- outcomes --------------------------------------------------------------------------------------

_FAILURES = {
    "stuck": "a cell kept running after it was interrupted at the {limit} s limit, so the notebook "
             "never finished: 0 for the lesson",
    "memory": "the notebook used more memory than the limit ({memory}) and was stopped: 0 for the lesson",
    "died": "the Python kernel died while running the notebook (it exited or crashed): 0 for the lesson",
    "error": "the autograder could not run this notebook (see {log}): 0 for the lesson",
    "timeout": "grading stopped after {total} s (the limit per submission): the notebook never finished, "
               "0 for the lesson",
    "crashed": "the autograder stopped on this notebook: 0 for the lesson",
}


@dataclass(frozen=True)
class Outcome:
    """What became of one submission's run: ``status`` is ``"graded"`` (nbgrader autograded it; its tests
    are judged next) or why not: ``stuck`` (a cell ignored the interrupt), ``memory`` (killed at the memory
    limit), ``died`` (the kernel died), ``error`` (nbgrader failed), ``timeout`` (past the submission time
    limit) or ``crashed`` (the worker died on it)."""

    learner: str
    status: str

    def __post_init__(self) -> None:
        if self.status != "graded" and self.status not in _FAILURES:
            raise ValueError(f"outcome: got {self.status!r}, expected graded or one of {sorted(_FAILURES)}")

    def failure(self, policy: RunPolicy, lesson: str) -> str | None:
        """None for a graded submission, else what went wrong, as the CSV says it."""
        if self.status == "graded":
            return None
        return _FAILURES[self.status].format(
            limit=policy.cell_timeout, total=policy.submission_timeout, memory=human_size(policy.memory),
            log=f"logs/{lesson}/{self.learner}.log")


# --- executing notebooks with limits ---------------------------------------------------------------


def _content_size(content: dict[str, Any]) -> int:
    if "text" in content:
        return len(content["text"])
    return sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in content.get("data", {}).values())

def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"

def _error(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def wait_in_steps(kc: Any, step: float = 1.0) -> None:
    """Make ``kc``'s shell channel wait for a reply in steps of ``step`` seconds.

    One long wait (nbclient waits with no timeout unless told one) can miss a reply that arrived after a
    widget cell and sit there for good, or for the whole cell time limit (jupyter/nbclient#312, still open);
    polling again each second picks the reply up. Every notebook this project executes goes through it:
    the grader here, and ``tools/execute_lesson.py`` for a maintainer re-running a lesson.
    """
    channel = kc.shell_channel
    long_wait = channel.get_msg

    async def get_msg(timeout: float | None = None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = step if deadline is None else min(step, max(0.0, deadline - time.monotonic()))
            try:
                return await long_wait(timeout=wait)
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    channel.get_msg = get_msg


class BoundedExecute(Execute):
    """nbgrader's Execute, keeping at most ``max_output_bytes`` of output per cell, and keeping what
    was run when the kernel stops.

    Output beyond the limit is dropped as it arrives (so a cell printing megabytes cannot fill
    memory) and replaced by one line saying how much the cell printed. Errors are always kept.
    If the kernel stops in a cell (it dies, is killed at the memory limit, keeps running past the
    interrupt, or its messages cannot be read), that cell gets a ``KernelStopped`` error saying why
    and every later code cell a ``NotRun`` error instead of running: the tests already run keep
    their results, and nbgrader still saves the notebook (plain nbclient would give up on it).
    """

    max_output_bytes = Integer(1_000_000, help="Output kept per cell, in characters.").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: Any = None, km: Any = None) -> Any:
        self._printed: dict[int, int] = {}
        self._comm_bytes = 0
        self._stopped: str | None = None  # why the kernel stopped, and in which cell
        return super().preprocess(nb, resources, km)

    def preprocess_cell(self, cell: NotebookNode, resources: Any, index: int) -> Any:
        if cell.cell_type != "code":
            return super().preprocess_cell(cell, resources, index)
        if self._stopped is not None:
            cell.outputs = [_error(NOT_RUN, f"not run: {self._stopped}")]
            return cell, resources
        try:
            return super().preprocess_cell(cell, resources, index)
        except Exception as exc:  # the kernel, not the learner's code (allow_errors keeps those)
            why = self._why_stopped(exc)
            self.log.error("the kernel stopped in cell %d: %s", index + 1, why, exc_info=True)
            cell.outputs = [*cell.get("outputs", []), _error(KERNEL_STOPPED, why)]
            answer = lessons.is_answer(cell)
            where = f"answer cell {lessons.grade_id(cell)}" if answer else f"cell {index + 1}"
            self._stopped = f"{why} in {where}"
            return cell, resources

    def _why_stopped(self, exc: Exception) -> str:
        """What stopped the kernel, in words (the sandbox's cgroup tells a kill at the memory limit)."""
        policy = getattr(self.km, "policy", None)
        if isinstance(exc, CellTimeoutError):
            return f"a cell kept running after it was interrupted at the {self.timeout} s limit"
        if isinstance(exc, DeadKernelError):
            if policy is not None and getattr(self.km, "killed_for_memory", lambda: False)():
                return f"the notebook used more memory than the limit ({human_size(policy.memory)})"
            return "the Python kernel died (it exited or crashed)"
        return f"the kernel stopped answering ({type(exc).__name__}: {str(exc)[:200]})"

    async def async_start_new_kernel_client(self) -> Any:
        kc = await super().async_start_new_kernel_client()
        wait_in_steps(kc)
        if isinstance(self.km, sandbox.SandboxedKernelManager):
            self.km.seal()  # its sockets exist: its socket folder turns read-only for it
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
        """``update_display`` replaces an output already kept: the new one obeys the limit too.
        (nbclient's private method: tests/test_grading.py pins its name and signature.)"""
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


KernelWatch = sandbox.KernelWatch


def execution_config(folder: CourseFolder, policy: RunPolicy, watch: KernelWatch | None = None) -> Any:
    """nbgrader's configuration to autograde in ``folder`` under ``policy``: the course's own
    (:func:`.course.course_config`), with :class:`BoundedExecute` in place of nbgrader's Execute, the time
    and output limits, and kernels started by the sandbox's kernel manager (which reports to ``watch``),
    with standard streams that reach no pipe of the grader either way."""
    from .course import course_config

    c: Config = course_config(folder.root)
    defaults = Autograde.class_traits()["autograde_preprocessors"].default()
    c.Autograde.autograde_preprocessors = [BoundedExecute if pp is Execute else pp for pp in defaults]
    c.Execute.timeout = policy.cell_timeout
    c.BoundedExecute.timeout = policy.cell_timeout
    c.BoundedExecute.max_output_bytes = policy.max_output_bytes
    c.BoundedExecute.kernel_manager_class = sandbox.kernel_manager_class(policy, watch or KernelWatch())
    c.LimitOutput.max_lines = 200
    c.LimitOutput.max_traceback = 40
    return c


def run_notebook(nb: Any, cwd: Path, policy: RunPolicy, folder: CourseFolder | None = None) -> Any:
    """Execute notebook ``nb`` (an nbformat NotebookNode, changed in place and returned) in a fresh kernel
    started in ``cwd``, under ``policy``, as a submission is executed (the instructor's reference run).
    A failing cell does not stop it: its error is in its outputs."""
    config = execution_config(folder or CourseFolder(cwd), policy)
    BoundedExecute(config=config).preprocess(nb, {"metadata": {"path": str(cwd)}})
    return nb


def run_sandboxed(policy: RunPolicy, argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``argv`` sealed off and limited as a kernel would be; its output is captured and
    ``.out_of_memory`` says whether it was killed for its memory. Raises subprocess.TimeoutExpired after
    ``timeout`` seconds (the sandbox is killed first)."""
    return sandbox.run_sandboxed(policy, argv, timeout)


def unavailable(policy: RunPolicy) -> str | None:
    """Why ``policy``'s sandbox cannot be made on this machine (None if it can, or if it needs none)."""
    return sandbox.unavailable(policy) if policy.sealed else None


# --- the worker and its supervisor -----------------------------------------------------------------


def kill_tree(pid: int) -> None:
    """Kill a process and everything it started (a sandbox's kernel runs in a session of its own)."""
    import psutil

    try:
        parent = psutil.Process(pid)
        procs = [*parent.children(recursive=True), parent]
    except psutil.Error:  # already gone
        return
    kill_and_wait(procs)


def kill_and_wait(procs: list[Any]) -> None:
    """Kill each of ``procs`` (psutil processes; any already gone is skipped); wait up to 10 s for them."""
    import psutil

    for proc in procs:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(procs, timeout=10)


def _pump(stream: Any, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def _report(line: str) -> dict[str, Any]:
    """One line of the worker's report ({} for anything else it printed)."""
    try:
        data = json.loads(line)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def run_batch(folder: CourseFolder, lesson: str, learners: list[str], policy: RunPolicy,
              on_done: Callable[[Outcome], None]) -> None:
    """Autograde the submissions of ``learners`` to ``lesson`` (already in ``folder``'s ``submitted/``).

    One worker process grades them one after the other (nbgrader is imported once). The clock of each
    submission starts when the previous one is done; a submission that runs past
    ``policy.submission_timeout`` gets its worker and kernel killed, and a new worker carries on with the
    rest. ``on_done(outcome)`` is called as soon as each submission is done (so its row can be written).
    """
    folder.log(lesson).parent.mkdir(parents=True, exist_ok=True)  # logs/LESSON/LEARNER.log
    pending = list(learners)
    while pending:
        batch = json.dumps({"root": str(folder.root), "lesson": lesson, "learners": pending,
                            "policy": json.loads(policy.to_json())})
        with open(folder.log(lesson), "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "selfattention.coursework.runner", batch], stdout=subprocess.PIPE,
                stderr=log, stdin=subprocess.DEVNULL, text=True, start_new_session=True,
            )
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
        deadline = time.monotonic() + STARTUP + policy.submission_timeout
        while pending:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                kill_tree(proc.pid)
                on_done(Outcome(pending.pop(0), "timeout"))
                break
            if line is None:  # the worker died without a word: blame the submission it was on
                on_done(Outcome(pending.pop(0), "crashed"))
                break
            report = _report(line)
            if report.get("ready"):
                deadline = time.monotonic() + policy.submission_timeout
            elif report.get("learner") == pending[0] and report.get("status"):
                pending.pop(0)
                on_done(Outcome(report["learner"], report["status"]))
                deadline = time.monotonic() + policy.submission_timeout
        kill_tree(proc.pid)
        proc.wait()


def _worker(root: str, lesson: str, learners: list[str], policy: RunPolicy) -> int:
    """The worker: nbgrader's autograde of each learner's submission already in ``root``'s ``submitted/``.

    Reports ``{"ready": true}`` once set up, then ``{"learner": ..., "status": ...}`` after each one (the
    :class:`Outcome` statuses it can tell: graded, stuck, memory, died, error); nbgrader's log of each goes
    to ``logs/LESSON/LEARNER.log``.
    """
    folder = CourseFolder(Path(root))
    print(json.dumps({"ready": True}), flush=True)
    for learner in learners:
        watch = KernelWatch()
        config = execution_config(folder, policy, watch)
        for _attempt in range(3):  # a kernel dying as it starts (its port taken meanwhile): not the learner's
            coursedir = CourseDirectory(config=config)
            coursedir.assignment_id, coursedir.student_id = lesson, learner
            app = Autograde(coursedir=coursedir, config=config)
            app.force = True
            app.create_student = True
            result = capture_log(app)
            text = result.get("log", "") + result.get("error", "")
            if result["success"] or "before replying to kernel_info" not in text:
                break
        text = result.get("log", "") + result.get("error", "")
        folder.log(lesson, learner).write_text(text, encoding="utf-8")
        if result["success"]:
            status = "graded"
        else:
            text = result.get("error", "") + result.get("log", "")
            status = ("memory" if watch.out_of_memory
                      else "stuck" if "CellTimeoutError" in text
                      else "died" if "DeadKernelError" in text or "Kernel died" in text else "error")
        print(json.dumps({"learner": learner, "status": status}), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m selfattention.coursework.runner BATCH``: the worker (:func:`run_batch` starts it)."""
    [batch] = sys.argv[1:] if argv is None else argv
    job = json.loads(batch)
    return _worker(job["root"], job["lesson"], list(job["learners"]), RunPolicy(**job["policy"]))


if __name__ == "__main__":
    sys.exit(main())
