"""One click to a running copy: every lesson links to its student version on Colab and on Binder.

- the links (a markdown cell right after the title) open ``student/NN_topic.ipynb`` of the repository
  named once, in pyproject's ``[project.urls] Repository``, and every file a link names exists;
- the setup cell after them installs the course on Colab only (run here with a stand-in
  ``google.colab`` module and a recording ``subprocess.run``), never touching torch;
- ``student/`` holds nbgrader's student versions, byte for byte as ``make release`` makes them now.
"""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from conftest import NOTEBOOKS, ROOT, STUDENT_CACHE, load_notebook

from selfattention.coursework import course, lessons, publish
from selfattention.coursework.publish import RELEASE_COMMAND, STUDENT_DIR, out_of_step, release

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
REPOSITORY = PROJECT["urls"]["Repository"]
STUDENT = ROOT / STUDENT_DIR
STUDENT_VERSIONS = sorted(STUDENT.glob(lessons.LESSON_GLOB))
EVERY_NOTEBOOK = NOTEBOOKS + STUDENT_VERSIONS
IDS = [f"{p.parent.name}/{p.stem}" for p in EVERY_NOTEBOOK]
#: Where the in-step test keeps the student versions it makes (reused while nothing changed).
CHECK_BUILD = STUDENT_CACHE
MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


def slug() -> str:
    match = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+)", REPOSITORY)
    assert match, f"pyproject.toml: [project.urls] Repository is {REPOSITORY!r}, not https://github.com/OWNER/REPO"
    return match.group(1)


def expected_links(name: str) -> dict[str, str]:
    path = f"{STUDENT_DIR}/{name}"
    return {
        "Open in Colab": f"https://colab.research.google.com/github/{slug()}/blob/main/{path}",
        "Launch Binder": f"https://mybinder.org/v2/gh/{slug()}/main?urlpath=lab/tree/{path}",
    }


def slide_type(cell: dict) -> str | None:
    return cell["metadata"].get("slideshow", {}).get("slide_type")


def tagged(nb: dict, tag: str) -> list[int]:
    return [i for i, c in enumerate(nb["cells"]) if tag in c.get("metadata", {}).get("tags", [])]


def setup_cell_source(path: Path = NOTEBOOKS[0]) -> str:
    nb = load_notebook(path)
    [index] = tagged(nb, "course-setup")
    return "".join(nb["cells"][index]["source"])


def test_repository_is_named_once_in_pyproject():
    slug()
    assert STUDENT_VERSIONS, f"no student versions in {STUDENT_DIR}/: run `{RELEASE_COMMAND}` and commit them"


# --- the links cell -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", EVERY_NOTEBOOK, ids=IDS)
def test_links_cell_opens_this_lessons_student_version(path):
    nb = load_notebook(path)
    assert tagged(nb, "course-links") == [1], f"{path.name}: one 'course-links' cell, right after the title"
    cell = nb["cells"][1]
    source = "".join(cell["source"])
    assert cell["cell_type"] == "markdown", f"{path.name}: the links cell is not markdown"
    assert slide_type(cell) == "skip", f"{path.name}: the links cell shows in the deck"
    assert dict(MARKDOWN_LINK.findall(source)) == expected_links(path.name), source
    assert len(MARKDOWN_LINK.findall(source)) == 2, source
    assert "![" not in source and "<img" not in source, f"{path.name}: a remote image breaks offline pages"


def link_targets(text: str) -> list[tuple[str, str]]:
    """(branch, path) of every link in ``text`` to a file of the course's repository."""
    s = re.escape(slug())
    forms = (
        rf"https://colab\.research\.google\.com/github/{s}/blob/([^/]+)/([^)\s?#]+)",
        rf"https://mybinder\.org/v2/gh/{s}/([^/?]+)\?urlpath=lab/tree/([^)\s&#]+)",
        rf"https://github\.com/{s}/(?:blob|tree)/([^/]+)/([^)\s?#]+)",
    )
    return [m.groups() for form in forms for m in re.finditer(form, text)]


@pytest.mark.parametrize("path", [*EVERY_NOTEBOOK, ROOT / "README.md"], ids=[*IDS, "README"])
def test_every_link_into_the_repository_names_a_file_that_exists(path):
    if path.suffix == ".ipynb":
        cells = load_notebook(path)["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = path.read_text(encoding="utf-8")
    targets = link_targets(text)
    if path.suffix == ".ipynb":
        assert len(targets) >= 2, f"{path.name}: no Colab and Binder links found"
    for branch, target in targets:
        assert branch == "main", f"{path.name}: a link into branch {branch!r}; the course publishes main"
        assert (ROOT / target).is_file(), f"{path.name}: links to {target}, which is not in the repository"


# --- the setup cell -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", EVERY_NOTEBOOK, ids=IDS)
def test_setup_cell_follows_the_links_and_is_the_same_everywhere(path):
    nb = load_notebook(path)
    assert tagged(nb, "course-setup") == [2], f"{path.name}: one 'course-setup' cell, right after the links"
    cell = nb["cells"][2]
    assert cell["cell_type"] == "code" and not cell.get("outputs"), f"{path.name}: the setup cell printed"
    assert slide_type(cell) == "skip", f"{path.name}: the setup cell shows in the deck"
    assert "".join(cell["source"]) == setup_cell_source(), f"{path.name}: setup cell differs from lesson 00's"


def forbid(*args, **kwargs):
    pytest.fail(f"the setup cell started a process outside Colab: {args}")


def test_setup_cell_does_nothing_outside_colab(monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    for name in ("run", "call", "check_call", "check_output", "Popen"):
        monkeypatch.setattr(subprocess, name, forbid)
    monkeypatch.setattr("os.system", forbid)
    scope: dict = {"__name__": "lesson"}
    exec(setup_cell_source(), scope)
    assert capsys.readouterr() == ("", "")
    assert set(scope) - {"__name__", "__builtins__"} == {"sys"}, "the setup cell defined names outside Colab"


def test_setup_cell_is_short():
    lines = [line for line in setup_cell_source().splitlines() if line.strip()]
    assert len(lines) <= 10, f"the setup cell, every learner's first code cell, has {len(lines)} lines"


class Colab:
    """A stand-in for Colab: ``google.colab`` imported, pip recorded, some distributions absent."""

    def __init__(self, monkeypatch, absent: set[str] = frozenset(), ipywidgets_version: str | None = None):
        self.pip: list[list[str]] = []
        self.widget_manager = 0
        output = types.ModuleType("google.colab.output")
        output.enable_custom_widget_manager = self._enable
        colab = types.ModuleType("google.colab")
        colab.output = output
        google = types.ModuleType("google")
        google.colab = colab
        for name, module in (("google", google), ("google.colab", colab), ("google.colab.output", output)):
            monkeypatch.setitem(sys.modules, name, module)
        monkeypatch.setattr(subprocess, "run", self._run)
        real = importlib.metadata.version

        def version(name: str) -> str:
            if requirement_name(name) in absent:
                raise importlib.metadata.PackageNotFoundError(name)
            return real(name)

        monkeypatch.setattr(importlib.metadata, "version", version)
        if ipywidgets_version:
            stub = types.ModuleType("ipywidgets")
            stub.__version__ = ipywidgets_version
            stub.__spec__ = importlib.machinery.ModuleSpec("ipywidgets", None)
            monkeypatch.setitem(sys.modules, "ipywidgets", stub)

    def _enable(self) -> None:
        self.widget_manager += 1

    def _run(self, cmd, *args, **kwargs):
        self.pip.append([str(a) for a in cmd])
        return subprocess.CompletedProcess(cmd, 0)


def requirement_name(req: str) -> str:
    return re.match(r"[A-Za-z0-9._-]+", req).group(0).lower().replace("_", "-")


def normal(requirement: str) -> tuple[str, frozenset]:
    """A requirement as (name, its specifiers), so that ">=1,<2" equals "<2,>=1"."""
    from packaging.requirements import Requirement

    req = Requirement(requirement)
    return requirement_name(req.name), frozenset(str(s) for s in req.specifier)


def test_setup_cell_on_colab_installs_the_course_without_its_dependencies_then_sets_up(monkeypatch):
    colab = Colab(monkeypatch)
    calls = []
    monkeypatch.setattr("selfattention.colab.setup", lambda: calls.append("setup"))
    exec(setup_cell_source(), {"__name__": "lesson"})
    install = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", f"git+{REPOSITORY}@main"]
    assert colab.pip == [install]
    assert calls == ["setup"]


def test_colab_setup_on_a_bare_colab_installs_every_requirement_but_torch(monkeypatch, capsys):
    from selfattention import colab as colab_setup

    names = {requirement_name(r) for r in PROJECT["dependencies"]}
    colab = Colab(monkeypatch, absent=names - {"torch"})
    colab_setup.setup()
    [cmd] = colab.pip
    assert cmd[:4] == [sys.executable, "-m", "pip", "install"], cmd
    assert not {"-U", "--upgrade", "--force-reinstall", "--upgrade-strategy"} & set(cmd), cmd
    installed = {normal(a) for a in cmd[4:] if not a.startswith("-")}
    wanted = {normal(r) for r in PROJECT["dependencies"] if requirement_name(r) != "torch"}
    assert installed == wanted, f"installed {sorted(installed)}; the course needs {sorted(wanted)}"
    assert colab.widget_manager == 1, "ipywidgets 8 on Colab needs its custom widget manager"
    assert capsys.readouterr().out.startswith("Ready: ")


def test_colab_setup_with_everything_installed_runs_no_pip(monkeypatch, capsys):
    from selfattention import colab as colab_setup

    colab = Colab(monkeypatch, ipywidgets_version="7.7.1")
    colab_setup.setup()
    assert colab.pip == []
    assert colab.widget_manager == 0, "Colab's own widget manager serves ipywidgets 7"
    assert capsys.readouterr().out == "Ready: everything was installed already\n"


# --- the committed student versions ---------------------------------------------------------------


@pytest.mark.parametrize("path", STUDENT_VERSIONS, ids=[p.stem for p in STUDENT_VERSIONS])
def test_student_version_holds_no_solution_no_hidden_test_no_output(path):
    nb = load_notebook(path)
    text = json.dumps(nb)
    for marker in MARKERS:
        assert marker not in text, f"{STUDENT_DIR}/{path.name} contains {marker!r}"
    assert "widgets" not in nb["metadata"], f"{STUDENT_DIR}/{path.name}: saved widget state left in"
    answers = 0
    for cell in nb["cells"]:
        assert not cell.get("outputs") and not cell.get("execution_count"), f"{path.name}: outputs left in"
        if lessons.is_answer(cell):
            answers += 1
            stub = "# YOUR CODE HERE" if cell["cell_type"] == "code" else "YOUR ANSWER HERE"
            assert stub in lessons.source(cell), f"{path.name}: answer {lessons.grade_id(cell)} is not blank"
    assert answers, f"{path.name}: no exercise found: is this a student version?"


def test_student_folder_is_in_step_with_the_lessons():
    names = sorted(p.name for p in STUDENT.iterdir()) if STUDENT.is_dir() else []
    problems = out_of_step(ROOT / "notebooks", STUDENT, CHECK_BUILD)
    assert names == [p.name for p in NOTEBOOKS] and not problems, (
        f"{STUDENT_DIR}/ is out of step with notebooks/ ({'; '.join(problems) or names}): "
        f"run `{RELEASE_COMMAND}` and commit {STUDENT_DIR}/"
    )


def test_a_kept_student_version_is_made_again_when_its_lesson_or_the_converter_changes(tmp_path, monkeypatch):
    """The cache behind the in-step test cannot hide a change (nbgrader replaced by a recorder)."""
    made: list[str] = []

    def convert(build: Path, lessons: list[Path], **_: object) -> dict[str, Path]:
        out = {}
        for lesson in lessons:
            made.append(lesson.name)
            out[lesson.stem] = build / "release" / lesson.stem / lesson.name
            out[lesson.stem].parent.mkdir(parents=True, exist_ok=True)
            out[lesson.stem].write_bytes(b"student version of " + lesson.read_bytes())
        return out

    monkeypatch.setattr(course, "generate_student_versions", convert)
    notebooks, published, build = tmp_path / "notebooks", tmp_path / "published", tmp_path / "build"
    notebooks.mkdir()
    published.mkdir()
    lesson = notebooks / NOTEBOOKS[0].name
    shutil.copyfile(NOTEBOOKS[0], lesson)
    release(notebooks, published, build, say=lambda line: None)
    assert out_of_step(notebooks, published, build) == []
    assert made == [lesson.name], "an unchanged lesson was converted again"

    lesson.write_bytes(lesson.read_bytes().replace(b"# 00", b"# 00 (changed)", 1))
    assert out_of_step(notebooks, published, build) == [f"{lesson.name} differs"]
    assert made == [lesson.name] * 2

    release(notebooks, published, build, say=lambda line: None)  # the version just made, reused
    assert out_of_step(notebooks, published, build) == [] and made == [lesson.name] * 2
    monkeypatch.setattr(publish, "_generator_fingerprint", lambda: "another nbgrader")
    assert out_of_step(notebooks, published, build) == [] and made == [lesson.name] * 3
    (published / "99_gone.ipynb").write_text("{}")
    assert out_of_step(notebooks, published, build) == ["99_gone.ipynb has no lesson"]


def test_release_writes_every_lesson_and_removes_only_stale_lessons(tmp_path):
    notebooks, out = tmp_path / "notebooks", tmp_path / "out"
    notebooks.mkdir()
    out.mkdir()
    shutil.copyfile(NOTEBOOKS[0], notebooks / NOTEBOOKS[0].name)
    (out / "99_gone.ipynb").write_text("{}")
    (out / "notes.txt").write_text("mine")
    said: list[str] = []
    release(notebooks, out, CHECK_BUILD, say=said.append)
    assert sorted(p.name for p in out.iterdir()) == [NOTEBOOKS[0].name, "notes.txt"]
    assert (out / NOTEBOOKS[0].name).read_bytes() == (STUDENT / NOTEBOOKS[0].name).read_bytes()
    assert any("99_gone.ipynb" in line for line in said), said


def test_make_release_writes_the_student_folder():
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    proc = subprocess.run(["make", "-n", "--no-print-directory", "-o", ".venv/.installed", "release"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert re.search(rf"release .*--out {STUDENT_DIR}\b", proc.stdout), proc.stdout
