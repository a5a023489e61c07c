"""The grading pipeline's parts, one by one, without running a notebook (seconds in all).

The run policy and its command line, the runner's outcomes, the course folder's files, the hand-mark state
machine, the exercise names; and the private methods of nbclient and jupyter_client the runner overrides,
pinned, so that an upgrade that renames one fails here rather than silently dropping a limit.
"""

from __future__ import annotations

import argparse
import inspect
import json

import pytest
from conftest import ROOT

from selfattention.coursework import lessons
from selfattention.coursework.folder import CourseFolder, Verdict
from selfattention.coursework.gradebook import HandMark
from selfattention.coursework.policy import RunPolicy, human_size, parse_size


def test_policy_round_trips_through_json_and_says_how_it_ran():
    policy = RunPolicy(cell_timeout=8, memory="512M", processes=64, disk="64M")
    assert RunPolicy.from_json(policy.to_json()) == policy
    assert policy.memory == 512 << 20 and policy.label == "bwrap (memory 512M, 64 processes, disk 64M)"
    assert RunPolicy(isolation="none").label == "none (not isolated)"


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"isolation": "docker"}, "expected 'bwrap' or 'none'"),
    ({"processes": 4}, "expected at least 8"),
    ({"cell_timeout": 0}, "cell_timeout must be a positive integer"),
    ({"memory": "lots"}, "memory: got 'lots'"),
])
def test_policy_refuses_what_it_cannot_enforce(kwargs, words):
    with pytest.raises(ValueError, match=words):
        RunPolicy(**kwargs)


def test_policy_command_line_is_declared_once_with_the_fields_defaults():
    parser = argparse.ArgumentParser()
    RunPolicy.add_arguments(parser)
    assert RunPolicy.from_arguments(parser.parse_args([])) == RunPolicy()
    args = parser.parse_args(["--cell-timeout", "30", "--memory-limit", "1.5G", "--isolation", "none",
                              "--max-processes", "64", "--disk-limit", "64M", "--submission-timeout", "99"])
    assert RunPolicy.from_arguments(args) == RunPolicy(30, 99, 1_000_000, "none", 3 << 29, 64, 64 << 20)


def test_sizes_read_and_written_in_powers_of_1024():
    assert parse_size("512M") == 512 << 20 and parse_size("1.5g") == 3 << 29 and parse_size(4096) == 4096
    assert human_size(2 << 30) == "2G" and human_size(3 << 29) == "1.5G" and human_size(100) == "100"
    with pytest.raises(ValueError, match="a positive size"):
        parse_size("0M")


def test_outcomes_say_what_went_wrong_with_the_policys_figures():
    from selfattention.coursework.runner import Outcome

    policy = RunPolicy(cell_timeout=8, submission_timeout=20, memory="512M")
    assert Outcome("ann", "graded").failure(policy, "00_roadmap") is None
    assert "interrupted at the 8 s limit" in Outcome("ann", "stuck").failure(policy, "00_roadmap")
    assert "grading stopped after 20 s" in Outcome("ann", "timeout").failure(policy, "00_roadmap")
    assert "limit (512M)" in Outcome("ann", "memory").failure(policy, "00_roadmap")
    assert "logs/00_roadmap/ann.log" in Outcome("ann", "error").failure(policy, "00_roadmap")
    with pytest.raises(ValueError, match="outcome"):
        Outcome("ann", "fine")


def test_the_overridden_private_methods_are_still_what_the_libraries_call():
    """BoundedExecute overrides nbclient's private ``_update_display_id``; the sandbox's kernel manager
    overrides jupyter_client's ``_async_pre_start_kernel``, ``_async_launch_kernel`` and
    ``_async_cleanup_resources`` (and points ``cleanup_resources``, which nbclient calls, at its own). Each
    must still exist with the arguments the override takes, and be called by the library under that name."""
    import re

    from jupyter_client import manager
    from nbclient import NotebookClient

    from selfattention.coursework.runner import BoundedExecute
    from selfattention.coursework.sandbox import SandboxedKernelManager

    def params(method) -> list[str]:
        return [p.name for p in inspect.signature(method).parameters.values() if p.kind != p.KEYWORD_ONLY]

    calls = {NotebookClient: inspect.getsource(NotebookClient),
             manager.KernelManager: inspect.getsource(manager)}
    for library, name, ours in (
        (NotebookClient, "_update_display_id", BoundedExecute),
        (manager.KernelManager, "_async_pre_start_kernel", SandboxedKernelManager),
        (manager.KernelManager, "_async_launch_kernel", SandboxedKernelManager),
        (manager.KernelManager, "_async_cleanup_resources", SandboxedKernelManager),
    ):
        assert params(getattr(library, name)) == params(getattr(ours, name)), name
        assert re.search(rf"self\.{name}\(", calls[library]), f"{library.__name__} no longer calls {name}"
    assert "cleanup_resources: t.Callable" in calls[manager.KernelManager]  # AsyncKernelManager's rebinding
    assert SandboxedKernelManager.cleanup_resources is SandboxedKernelManager._async_cleanup_resources


def test_course_folder_spells_every_path_and_keeps_typed_verdicts(tmp_path):
    folder = CourseFolder(tmp_path)
    assert folder.submitted("ann", "00_roadmap") == tmp_path / "submitted/ann/00_roadmap/00_roadmap.ipynb"
    assert folder.release("00_roadmap").parent / ".published" == folder.release_stamp("00_roadmap")
    verdict = Verdict({"warmup-test": None, "other": "a hidden test got a different result"}, ["a note"])
    folder.write_verdict("ann", "00_roadmap", verdict)
    assert folder.read_verdict("ann", "00_roadmap") == verdict
    assert folder.graded() == [("ann", "00_roadmap")]
    folder.verdict_file("bob", "00_roadmap").write_text(json.dumps({"messages": []}))
    with pytest.raises(ValueError, match="not a verdict file"):
        folder.read_verdict("bob", "00_roadmap")


def test_layout_in_the_folder_docstring_names_every_path_it_spells():
    import selfattention.coursework.folder as module

    doc = module.__doc__
    for name in ("source/", "release/", ".published", "room/", "submitted/", "autograded/", "gradebook.db",
                 "references/", "verdicts/", "handmarks/", "carried/", "logs/", "feedback/", ".grading.lock",
                 "nbgrader_config.py"):
        assert name in doc, name


def test_hand_mark_states_waiting_marked_set_aside():
    mark = HandMark()
    assert mark.step(None, "a1") is None and mark.seen == "a1"  # waiting: the formgrader shows a1
    assert mark.step(1.5, "a1") is None and (mark.marked, mark.score) == ("a1", 1.5)  # marked, stands
    assert mark.step(1.5, "a1") is None  # the same answer again: nothing to say
    assert mark.step(1.5, "a2") == 1.5 and mark.marked is None and mark.seen == "a2"  # changed: set aside
    assert mark.step(None, "a2") is None  # waiting again, said once
    assert mark.step(2.0, "a2") is None and mark.marked == "a2"  # the grader marked the new answer
    first = HandMark()  # a mark found on the first run with a record is taken for the answer as it is
    assert first.step(1.0, "b1") is None and first.to_dict() == {"seen": "b1", "marked": "b1", "score": 1.0}


def test_exercises_are_named_as_the_learner_reads_them():
    nb = lessons.read_lesson(ROOT / "notebooks" / "00_roadmap.ipynb")
    labels = lessons.exercise_labels(nb)
    assert labels == {"warmup-test": "Warm-up exercise (1 point)"}
    two_parts = {"cells": [
        {"cell_type": "markdown", "source": "### Exercise 1 (3 points): two tests", "metadata": {}},
        *({"cell_type": "code", "source": "", "metadata": {"nbgrader": {
            "grade": True, "solution": False, "grade_id": gid, "points": points}}}
          for gid, points in (("t1", 1), ("t2", 2))),
    ]}
    assert lessons.exercise_labels(two_parts) == {"t1": "Exercise 1, part 1 (1 point)",
                                                  "t2": "Exercise 1, part 2 (2 points)"}


def test_every_coursework_module_is_on_both_maps():
    """coursework/__init__.py and docs/architecture.md each name every module of the package."""
    import selfattention.coursework as coursework

    folder = ROOT / "src" / "selfattention" / "coursework"
    architecture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for path in sorted(folder.glob("*.py")):
        if path.stem in ("__init__", "__main__"):
            continue
        assert f":mod:`.{path.stem}`" in coursework.__doc__, f"coursework/__init__ does not name {path.stem}"
        assert f"| `{path.name}` |" in architecture, f"docs/architecture.md's module table lacks {path.name}"


def test_waits_for_a_reply_in_steps_and_keeps_a_finite_time_limit():
    """jupyter/nbclient#312: one long wait can miss a reply after a widget cell. The wrapper asks in steps
    of at most ``step`` seconds, returns the reply when one comes, and raises Empty at a caller's limit."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor
    from queue import Empty
    from types import SimpleNamespace

    from selfattention.coursework.runner import wait_in_steps

    def run(coroutine):  # in a thread of its own: another test (the browser's) may leave a loop running here
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, coroutine).result()

    asked: list[float | None] = []

    async def get_msg(timeout=None):                  # the reply arrives on the third ask
        asked.append(timeout)
        if len(asked) < 3:
            raise Empty
        return {"msg_type": "execute_reply"}

    kc = SimpleNamespace(shell_channel=SimpleNamespace(get_msg=get_msg))
    wait_in_steps(kc, step=0.01)
    assert run(kc.shell_channel.get_msg(timeout=None)) == {"msg_type": "execute_reply"}
    assert asked == [0.01, 0.01, 0.01]                 # never one wait without a limit

    async def never(timeout=None):                    # waits as long as it is told, then finds nothing
        asked.append(timeout)
        await asyncio.sleep(timeout)
        raise Empty

    kc = SimpleNamespace(shell_channel=SimpleNamespace(get_msg=never))
    wait_in_steps(kc, step=0.01)
    asked.clear()
    with pytest.raises(Empty):
        run(kc.shell_channel.get_msg(timeout=0.05))
    assert 3 <= len(asked) <= 10 and all(t is not None and t <= 0.01 for t in asked)


def test_execute_lesson_refuses_a_path_that_is_not_a_notebook(tmp_path, capsys):
    import runpy

    tool = runpy.run_path(str(ROOT / "tools" / "execute_lesson.py"))
    with pytest.raises(SystemExit):
        tool["main"]([str(tmp_path / "missing.ipynb")])
    err = capsys.readouterr().err
    assert f"notebooks: {tmp_path / 'missing.ipynb'} is not a file" in err
