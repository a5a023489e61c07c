"""A real JupyterHub with real users: an instructor and three learners as distinct local accounts.

The hub, its proxy and the servers are :mod:`labdriver.hub`'s (shared with ``benchmarks/hub_load.py``): on
127.0.0.1 only, a test authenticator (one shared password), LocalProcessSpawner with each server run as its
own user (``labdriver/hub_spawner.py``); learners' servers get the course's learner configuration
(``src/selfattention/coursework/learner_config``: no nbgrader instructor tools), the instructor's does not.

The second test hands out the lessons as docs/instructors.md's section 3 does, with nbgitpuller's link (the
repository served by ``git daemon`` on 127.0.0.1), and checks that an instructor's fix reaches the class while
a learner's answer is kept. The graded round of section 4 (nbgrader's exchange, the course's sealed grader and
feedback pages) is ``tests/test_hub_browser.py``: in Chromium, on this module's fixtures and helpers.

The tests create the accounts (``useradd``, homes of mode 0700 as The Littlest JupyterHub makes them; names
start with ``$HUB_USER_PREFIX``, default ``sa``) and remove them, their homes and their processes afterwards,
also when a test fails; they need root (skipped otherwise, with the reason); each takes under 90 s.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import ROOT
from tiny_lesson import COURSE_ID

from labdriver.hub import (
    LEARNER_CONFIG,
    Hub,
    account_names,
    free_port,
    local_accounts,
    login,
    run_code,
    running_hub,
    start_servers,
    why_not,
)


@pytest.fixture
def accounts(request: pytest.FixtureRequest) -> Iterator[dict[str, pwd.struct_passwd]]:
    """An instructor and three learners, made for this test and removed after it, whatever happens."""
    if why := why_not():
        if request.config.getoption("--strict-system") and os.geteuid() == 0:
            pytest.fail(f"{why} (--strict-system: make test installs it first)")
        pytest.skip(why)
    with local_accounts(account_names(["teach", "learn1", "learn2", "learn3"])) as made:
        yield made


@pytest.fixture
def hub(accounts: dict[str, pwd.struct_passwd], tmp_path: Path) -> Iterator[Hub]:
    """JupyterHub on 127.0.0.1 with its proxy, the accounts allowed (the first the instructor), a service
    token for the test."""
    instructor, *_learners = accounts
    with running_hub(accounts, [instructor], tmp_path, course_id=COURSE_ID) as running:
        yield running


WHOAMI = """
import json, os, pwd
other = {other!r}
try:
    os.listdir(other)
    seen = "listed"
except PermissionError:
    seen = "denied"
print(json.dumps({{"user": pwd.getpwuid(os.getuid()).pw_name, "cwd": os.getcwd(), "other_home": seen,
                  "config_path": os.environ.get("JUPYTER_CONFIG_PATH", "")}}))
"""


def test_the_learner_configuration_is_in_the_package() -> None:
    """A learner's server on a hub reads it from the installed package (not editable in the hub image):
    every file the package holds besides its Python modules is declared package data."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["setuptools"]["package-data"]["selfattention"]
    package = ROOT / "src" / "selfattention"
    tracked = subprocess.run(["git", "ls-files", str(package)], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    data = [Path(f).relative_to("src/selfattention") for f in tracked if not f.endswith(".py")]
    assert any(LEARNER_CONFIG.relative_to(package) in d.parents for d in data)
    undeclared = [str(d) for d in data if not any(d.match(pattern) for pattern in declared)]
    assert not undeclared, f"not in [tool.setuptools.package-data]: {undeclared}"


@pytest.mark.slow
def test_a_hub_with_an_instructor_and_three_learners_as_distinct_users(
        hub: Hub, accounts: dict[str, pwd.struct_passwd]) -> None:
    start = time.monotonic()
    instructor, *learners = accounts

    # Logging in: the right password lets a learner in, a wrong one does not.
    status, location, _ = login(hub.url, learners[0], hub.password)
    assert status == 302 and "/hub/login" not in location, (status, location)
    assert login(hub.url, learners[0], hub.password + "x")[0] == 403

    # Every server, started through the hub's REST API, becomes ready.
    for name in accounts:
        assert hub.api("POST", f"/hub/api/users/{name}/server")[0] in (201, 202)
    for name in accounts:
        while not hub.json("GET", f"/hub/api/users/{name}")["servers"].get("", {}).get("ready"):
            assert time.monotonic() - start < 180, f"{name}'s server did not start within 180 s"
            time.sleep(0.5)

    # Each server runs as its own user, in that user's home, and cannot list another's home.
    for i, name in enumerate(accounts):
        other = accounts[list(accounts)[(i + 1) % len(accounts)]].pw_dir
        seen = json.loads(run_code(hub, name, WHOAMI.format(other=other)).strip().splitlines()[-1])
        assert seen["user"] == name, seen
        assert seen["cwd"] == accounts[name].pw_dir, seen
        assert seen["other_home"] == "denied", f"{name} can list {other}"
        # A file the server writes through its contents API belongs to its user.
        hub.json("PUT", f"/user/{name}/api/contents/mine.txt",
                 {"type": "file", "format": "text", "content": name})
        mine = Path(accounts[name].pw_dir) / "mine.txt"
        assert mine.stat().st_uid == accounts[name].pw_uid
        shared_config = str(hub.shared / "config")
        assert seen["config_path"] == (shared_config if name == instructor
                                       else f"{LEARNER_CONFIG}:{shared_config}"), seen

    # The learner configuration: no nbgrader instructor tools in a learner's server or lab.
    for name in accounts:
        status, _ = hub.api("GET", f"/user/{name}/formgrader")
        status_page, page = hub.api("GET", f"/user/{name}/lab")
        assert status_page == 200
        if name == instructor:
            assert status != 404, "the instructor's server lacks the formgrader"
            assert b"@jupyter/nbgrader:formgrader" not in page
        else:
            assert status == 404, f"{name}'s server serves the formgrader ({status})"
            assert b"@jupyter/nbgrader:formgrader" in page  # listed among the disabled extensions
    print(f"\nthe round took {time.monotonic() - start:.0f} s")


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=Instructor", "-c", "user.email=instructor@course.invalid",
                           *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


Publish = Callable[[Callable[[Path], object], str], None]


@pytest.fixture
def course_repository(tmp_path: Path) -> Iterator[tuple[str, Publish]]:
    """The course's learner notebooks in a git repository named ``self-attention``, served on 127.0.0.1 by
    ``git daemon`` (nbgitpuller clones shallow, which git's plain-file HTTP cannot serve), and a function with
    which the instructor changes the work tree, commits and publishes. Yields (the repository's URL,
    publish)."""
    work, served = tmp_path / "instructor-work", tmp_path / "served"
    (work / "student").mkdir(parents=True)
    served.mkdir()
    for lesson in ("00_roadmap.ipynb", "02_basic_self_attention.ipynb"):
        shutil.copy(ROOT / "student" / lesson, work / "student" / lesson)
    _git(work, "init", "--quiet", "--initial-branch=main")
    _git(served, "init", "--quiet", "--bare", "--initial-branch=main", "self-attention")
    _git(work, "remote", "add", "origin", str(served / "self-attention"))

    def publish(change: Callable[[Path], object], message: str) -> None:
        change(work)
        _git(work, "add", "--all")
        _git(work, "commit", "--quiet", "-m", message)
        _git(work, "push", "--quiet", "origin", "main")

    publish(lambda w: (w / "README.md").write_text("The course's lessons, learner copies.\n"), "The lessons")
    port = free_port()
    daemon = subprocess.Popen(["git", "daemon", "--reuseaddr", "--export-all", f"--base-path={served}",
                               "--listen=127.0.0.1", f"--port={port}", str(served)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while subprocess.run(["git", "ls-remote", f"git://127.0.0.1:{port}/self-attention"],
                             capture_output=True).returncode != 0:
            assert daemon.poll() is None and time.monotonic() < deadline, "git daemon did not start"
            time.sleep(0.2)
        yield f"git://127.0.0.1:{port}/self-attention", publish
    finally:
        os.killpg(daemon.pid, signal.SIGTERM)
        daemon.wait(timeout=10)


def _click_pull_link(hub: Hub, user: str, repo: str) -> list[dict]:
    """What a click on the guide's nbgitpuller link does in ``user``'s server: its page, then the pull that
    the page runs (nbgitpuller's event stream, read to the end). Returns the stream's events."""
    query = urllib.parse.urlencode({"repo": repo, "branch": "main",
                                    "urlpath": "lab/tree/self-attention/student/00_roadmap.ipynb"})
    status, page = hub.api("GET", f"/user/{user}/git-pull?{query}")
    assert status == 200 and b"nbgitpuller" in page.lower(), (user, status, page[:300])
    status, stream = hub.api("GET", f"/user/{user}/git-pull/api?{query}")
    assert status == 200, (user, status, stream[:300])
    events = [json.loads(line[len("data: "):]) for line in stream.decode().splitlines()
              if line.startswith("data: ")]
    assert events and events[-1].get("phase") == "finished", (user, events[-3:])
    return events


@pytest.mark.slow
def test_an_instructors_fix_reaches_the_class_and_no_learners_edit_is_lost(
        hub: Hub, accounts: dict[str, pwd.struct_passwd], course_repository: tuple) -> None:
    """docs/instructors.md, section 3: the first click clones, a later click merges the instructor's changes
    and keeps every change the learner made (nbgitpuller's rules)."""
    start = time.monotonic()
    repo, publish = course_repository
    _instructor, editor, untouched, *_ = accounts
    start_servers(hub, [editor, untouched])
    lesson = "self-attention/student/00_roadmap.ipynb"

    # First click: each learner gets the lesson in their home, as their own file.
    for name in (editor, untouched):
        _click_pull_link(hub, name, repo)
        path = Path(accounts[name].pw_dir) / lesson
        assert path.stat().st_uid == accounts[name].pw_uid, f"{name}'s copy is not theirs"

    # The editor answers the warm-up exercise and saves, as JupyterLab saves (the contents API).
    model = hub.json("GET", f"/user/{editor}/api/contents/{lesson}")
    answer = next(cell for cell in model["content"]["cells"]
                  if cell["metadata"].get("nbgrader", {}).get("solution"))
    answer["source"] = "# my answer, kept\n" + answer["source"]
    hub.json("PUT", f"/user/{editor}/api/contents/{lesson}",
             {"type": "notebook", "format": "json", "content": model["content"]})

    # The instructor fixes a sentence of the lesson's first cell and publishes the fix.
    def fix(work: Path) -> None:
        path = work / "student" / "00_roadmap.ipynb"
        nb = json.loads(path.read_text(encoding="utf-8"))
        nb["cells"][0]["source"] = nb["cells"][0]["source"] + ["\n", "A sentence the instructor fixed."]
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

    publish(fix, "00: fix a sentence")

    # Second click: the learner who changed nothing gets the fix; the editor keeps the answer.
    for name in (editor, untouched):
        _click_pull_link(hub, name, repo)
    untouched_nb = json.loads((Path(accounts[untouched].pw_dir) / lesson).read_text(encoding="utf-8"))
    assert "A sentence the instructor fixed." in "".join(untouched_nb["cells"][0]["source"])
    editor_nb = json.loads((Path(accounts[editor].pw_dir) / lesson).read_text(encoding="utf-8"))
    sources = ["".join(cell["source"]) for cell in editor_nb["cells"]]
    assert any(s.startswith("# my answer, kept") for s in sources), "the learner's answer was lost"
    print(f"editor {editor}: answer kept; the instructor's fix merged too: "
          f"{'A sentence the instructor fixed.' in sources[0]}")
    print(f"\nthe round took {time.monotonic() - start:.0f} s")

