"""Learners' working copies, as ``make lab`` makes them: never overwritten once changed, followed when not,
backed up before a refresh, and a second start that needs no nbgrader and takes seconds."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT, make

LESSON00 = ROOT / "notebooks" / "00_roadmap.ipynb"


def read(path: Path):
    return nbformat.read(path, as_version=4)


@pytest.fixture(scope="session")
def lab_build(tmp_path_factory) -> Path:
    """Where student versions are made; shared, as a learner's build/lab is between runs."""
    return tmp_path_factory.mktemp("lab-build")


@pytest.fixture
def copies(tmp_path, lab_build) -> dict:
    """A course of one lesson (a copy of lesson 00) and an empty work folder."""
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    shutil.copyfile(LESSON00, notebooks / LESSON00.name)
    env = {"notebooks": notebooks, "work": tmp_path / "work", "build": lab_build}

    def run(*extra: str) -> str:
        return make("lab", f"NOTEBOOKS={notebooks}", f"WORK={env['work']}", f"LAB_BUILD={env['build']}",
                    "JUPYTER_LAB=true", *extra).stdout

    env["run"] = run
    return env


def learner_edits(path: Path) -> None:
    nb = read(path)
    nb.cells.append(nbformat.v4.new_markdown_cell("My own note."))
    nbformat.write(nb, path)


def test_make_lab_twice_does_not_touch_an_edited_copy(copies):
    out = copies["run"]()
    copy = copies["work"] / LESSON00.name
    assert "made your copy of 00_roadmap.ipynb" in out and copy.exists()
    assert "# YOUR CODE HERE" in copy.read_text() and "BEGIN SOLUTION" not in copy.read_text()
    learner_edits(copy)
    before = (copy.read_bytes(), copy.stat().st_mtime_ns)
    for _ in range(2):
        out = copies["run"]()
        assert "kept your copy of 00_roadmap.ipynb (you changed it)." in out
        assert (copy.read_bytes(), copy.stat().st_mtime_ns) == before
    assert sorted(p.name for p in copies["work"].iterdir()) == [".copies.json", LESSON00.name]


def test_untouched_copy_follows_the_lesson_and_edited_copy_is_kept_with_a_hint(copies, tmp_path):
    copies["build"] = tmp_path / "build"  # this lesson changes: keep the shared student versions as they are
    copies["run"]()
    copy = copies["work"] / LESSON00.name
    lesson = read(copies["notebooks"] / LESSON00.name)
    lesson.cells.insert(1, nbformat.v4.new_markdown_cell("A sentence added to the lesson."))
    nbformat.write(lesson, copies["notebooks"] / LESSON00.name)
    out = copies["run"]()
    assert "updated 00_roadmap.ipynb (the lesson changed)" in out
    assert "A sentence added to the lesson." in copy.read_text()

    learner_edits(copy)
    lesson.cells.insert(1, nbformat.v4.new_markdown_cell("A second sentence."))
    nbformat.write(lesson, copies["notebooks"] / LESSON00.name)
    before = copy.read_bytes()
    out = copies["run"]()
    assert "kept your copy" in out and "make lab REFRESH=00" in out
    assert copy.read_bytes() == before


def test_refresh_backs_up_the_learners_copy_and_never_deletes_a_backup(copies):
    copies["run"]()
    copy = copies["work"] / LESSON00.name
    learner_edits(copy)
    mine = copy.read_bytes()
    out = copies["run"]("REFRESH=00")
    [backup] = (copies["work"] / "backups").iterdir()
    assert re.fullmatch(r"00_roadmap\.\d{8}-\d{6}(-\d+)?\.ipynb", backup.name), backup.name
    assert backup.read_bytes() == mine and "My own note." not in copy.read_text()
    assert f"saved your copy of 00_roadmap.ipynb as backups/{backup.name}" in out
    learner_edits(copy)
    copies["run"]("REFRESH=all")
    backups = sorted((copies["work"] / "backups").iterdir())
    assert len(backups) == 2 and backup in backups and backup.read_bytes() == mine


@pytest.mark.parametrize("remove_copy", [False, True], ids=["nothing-to-do", "copy-deleted"])
def test_second_start_needs_no_nbgrader_and_takes_seconds(copies, remove_copy):
    copies["run"]()
    if remove_copy:  # the student version of this lesson is already built: copied, not remade
        shutil.rmtree(copies["work"])
    code = (
        "import sys, time; t = time.monotonic()\n"
        "from selfattention.coursework.__main__ import main\n"
        f"main(['--notebooks', {str(copies['notebooks'])!r}, 'lab', '--work', {str(copies['work'])!r},"
        f" '--build', {str(copies['build'])!r}])\n"
        "assert 'nbgrader' not in sys.modules, 'nbgrader imported'\n"
        "print(f'took {time.monotonic() - t:.2f} s')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    seconds = float(re.search(r"took ([\d.]+) s", proc.stdout).group(1))
    # A bound that only a rebuild breaks: about 1 s on an idle machine, and it must not flake on a busy one.
    assert seconds < 30, proc.stdout
    assert (copies["work"] / LESSON00.name).exists()
    assert ("made your copy" in proc.stdout) == remove_copy


def test_make_lab_leaves_a_folder_in_a_copys_place_alone_with_one_line(copies):
    """A folder where a working copy goes: one line saying so, no traceback, nothing in it touched."""
    taken = copies["work"] / LESSON00.name
    taken.mkdir(parents=True)
    (taken / "mine.txt").write_text("keep me")
    out = copies["run"]()
    lines = [line for line in out.splitlines() if LESSON00.name in line]
    assert len(lines) == 1 and "left" in lines[0] and "not a notebook file" in lines[0], out
    assert "Traceback" not in out
    assert sorted(p.name for p in taken.iterdir()) == ["mine.txt"]
    assert (taken / "mine.txt").read_text() == "keep me"
