"""Shared test fixtures and paths, and the test tiers.

Every test belongs to one tier or more, set here by file (a test may add its own marker):

==========  ================================================================  =====================
marker      what its tests do                                                 run by
==========  ================================================================  =====================
unit        no kernel, no nbgrader run, no browser, no system package: seconds  ``make check``
notebooks   execute notebooks (nbval re-runs every lesson; the benchmark's)   ``make test``
grading     run nbgrader: student versions, ``make grade`` on real notebooks ``make test``
browser     Chromium: decks, the site, JupyterLab, the live slides            ``make test``
slow        half a minute or more alone (attack runs, model training)         ``make test``
==========  ================================================================  =====================

``pytest -m unit`` is the fast loop; ``pytest -m "grading and not slow"`` and the like pick a tier. A test
marked ``needs_chromium`` or ``needs_sandbox`` is skipped where Chromium or bubblewrap is missing, except
under ``--strict-system`` (what ``make test`` passes, having installed them), where it fails instead.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from urllib.parse import urlparse

import pytest

from selfattention.coursework.lessons import find_lessons

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = find_lessons(ROOT / "notebooks")
#: The course folder whose student versions the tests share (made once per lesson, kept between runs while
#: the lesson and the converter are unchanged: ``publish.student_versions``; its lock lets workers share it).
STUDENT_CACHE = ROOT / "build" / "student-check"

TIERS = ("unit", "notebooks", "grading", "browser", "slow")
#: The tiers of each test file that is not all unit tests.
FILE_TIERS = {
    "test_attacks.py": ("grading",),
    "test_attacks_slow.py": ("grading", "slow"),
    "test_bench.py": ("notebooks",),
    "test_bench_memory.py": ("notebooks",),
    "test_browser.py": ("browser",),
    "test_copies.py": ("grading",),
    "test_formgrader.py": ("grading",),
    "test_grading.py": ("grading",),
    "test_going_deeper_lesson03.py": ("notebooks",),
    "test_grading_rounds.py": ("grading",),
    "test_hub_browser.py": ("browser",),
    "test_rise.py": ("browser",),
    "test_site.py": ("browser",),
    "test_slides.py": ("browser",),
}
#: Single tests of otherwise unit files that belong to a tier (slow: half a minute or more, measured with
#: ``--durations``; grading: runs the real grader).
TEST_TIERS = {
    "test_llm.py::test_training_script_reproduces_the_committed_weights": ("slow",),  # trains the decoder
    "test_bench_class_grading.py::test_quick_mode_grades_through_the_real_grader": ("grading",),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--strict-system", action="store_true",
                     help="fail, not skip, a test whose Chromium or bubblewrap is missing (make test)")


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, one torch thread per worker: the workers already share the cores, and torch's own
    thread pool on top of them oversubscribes the machine (measured on 2 cores, ``pytest -m unit -n 2``: 137 s
    of CPU with torch's default of 2 threads per worker, 67 s with 1). Only this process is affected: the
    kernels that execute lessons keep their defaults, so their outputs still match the committed ones."""
    import os

    if os.environ.get("PYTEST_XDIST_WORKER"):
        import torch

        torch.set_num_threads(1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Give every test its file's tiers, and ``unit`` to a test with none."""
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker("notebooks")  # nbval: a lesson re-executed, its outputs compared
            continue
        for tier in FILE_TIERS.get(item.path.name, ()) + TEST_TIERS.get(f"{item.path.name}::{item.name}", ()):
            item.add_marker(tier)
        if not any(item.get_closest_marker(tier) for tier in TIERS):
            item.add_marker("unit")


def _missing(marker: str) -> str | None:
    if marker == "needs_chromium":
        from labdriver import find_chromium

        return None if find_chromium() else "the test needs Chromium (apt-get install chromium)"
    from selfattention.coursework.runner import RunPolicy, unavailable

    why = unavailable(RunPolicy(memory="256M", processes=32, disk="16M"))
    return None if why is None else f"no sandbox on this machine: {why}"


_MISSING: dict[str, str | None] = {}


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in ("needs_chromium", "needs_sandbox"):
        if item.get_closest_marker(marker) is None:
            continue
        if marker not in _MISSING:
            _MISSING[marker] = _missing(marker)
        if _MISSING[marker]:
            if item.config.getoption("--strict-system"):
                pytest.fail(f"{_MISSING[marker]} (--strict-system: make test installs it first)")
            pytest.skip(_MISSING[marker])


def make(*args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run a Makefile target as a user would, without reinstalling the environment."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    proc = subprocess.run(
        ["make", "--no-print-directory", "-o", ".venv/.installed", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
    )
    assert proc.returncode == 0, f"make {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@functools.cache
def load_script(path: Path) -> ModuleType:
    """A script that is not in a package (``docs/build.py``, ``slides/build.py``), imported once a session."""
    spec = importlib.util.spec_from_file_location(f"{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_notebook(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(params=NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def notebook(request: pytest.FixtureRequest) -> tuple[Path, dict]:
    return request.param, load_notebook(request.param)


@pytest.fixture(scope="module")
def one_torch_thread():
    """Run a module's tests with one torch thread (tiny tensors), then restore the setting."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --- the browser tier's shared pieces ------------------------------------------------------------


@pytest.fixture(scope="session")
def pw():
    """The one Playwright instance of the run: its sync API allows only one at a time, so the
    browser suites share it and each launches its own Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def browser(pw):
    """One Chromium for the tests that open pages from disk (the decks, the site)."""
    from labdriver import launch_chromium

    chromium = launch_chromium(pw)
    yield chromium
    chromium.close()


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One JupyterLab server for the session, serving learners' working copies and presenter copies."""
    from labdriver import ARTIFACTS, prepare_root, start_lab

    tmp = tmp_path_factory.mktemp("lab")
    server = start_lab(tmp, prepare_root(tmp, STUDENT_CACHE), ARTIFACTS / "jupyter-server.log")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def blocked_requests() -> list[str]:
    """The requests the lab's pages made to anything but the server (all refused)."""
    return []


@pytest.fixture(scope="session")
def browser_context(lab: object, pw: object, blocked_requests: list[str]) -> Iterator[object]:
    """A Chromium context that blocks (and records in test-artifacts/) every request not to 127.0.0.1."""
    from labdriver import ARTIFACTS, launch_chromium

    def only_local(route: object) -> None:
        url = route.request.url
        if urlparse(url).hostname == "127.0.0.1" or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            blocked_requests.append(url)
            route.abort()

    browser = launch_chromium(pw)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(120_000)  # ms, for loading JupyterLab and the notebook
    context.route("**/*", only_local)
    yield context
    context.close()
    browser.close()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "blocked-requests.txt").write_text("".join(f"{u}\n" for u in blocked_requests),
                                                    encoding="utf-8")

