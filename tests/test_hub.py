"""A real JupyterHub with real users: an instructor and three learners as distinct local accounts.

The hub (``pip install '.[hub]'``), its proxy (configurable-http-proxy, from ``tools/hub/package.json``,
installed by ``npm ci`` into ``tools/hub/node_modules``) and every single-user server listen on 127.0.0.1
only. Users log in with a password (JupyterHub's DummyAuthenticator, one shared password: a test
authenticator, never for a real class). The spawner is LocalProcessSpawner, each server run as its own user
(``tests/hub_spawner.py``); learners' servers get the course's learner configuration
(``src/selfattention/coursework/learner_config``: no nbgrader instructor tools), the instructor's does not.

The second test hands out the lessons as docs/instructors.md's section 3 does, with nbgitpuller's link (the
repository served by ``git daemon`` on 127.0.0.1), and checks that an instructor's fix reaches the class while
a learner's answer is kept. The graded round of section 4 (nbgrader's exchange, the course's sealed grader and
feedback pages) is ``tests/test_hub_browser.py``: in Chromium, on this module's fixtures and helpers.

The tests create the accounts (``useradd``, homes of mode 0700 as The Littlest JupyterHub makes them) and
removes them, their homes and their processes afterwards, also when it fails; it needs root (skipped
otherwise, with the reason); each takes under 90 s.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.cookiejar
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import ROOT
from tiny_lesson import COURSE_ID

HUB_TOOLS = ROOT / "tools" / "hub"
LEARNER_CONFIG = ROOT / "src" / "selfattention" / "coursework" / "learner_config"
DEADLINE_S = 90  # the whole test, hub start to cleanup
PASSWORD = secrets.token_urlsafe(12)


def _why_not() -> str | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "the hub test creates local users: it needs root"
    for tool in ("useradd", "userdel", "bwrap", "setpriv", "npm", "node"):
        if shutil.which(tool) is None:
            return f"the hub test needs {tool} (tools/system-deps.sh)"
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        return "JupyterHub is not installed: pip install -e '.[hub]' (make test installs it)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _proxy_command() -> Path:
    """configurable-http-proxy from tools/hub's lock file (``npm ci`` when it is missing or stale)."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import npm_files
    finally:
        sys.path.pop(0)
    npm_files.ensure_node_modules(HUB_TOOLS, "the hub test")
    return HUB_TOOLS / "node_modules" / ".bin" / "configurable-http-proxy"


class Hub:
    """A running hub: its URL, the test service's token, and calls to its REST API and the servers'."""

    def __init__(self, url: str, token: str, shared: Path) -> None:
        self.url, self.token, self.shared = url, token, shared

    def api(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Authorization": f"token {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()
        except urllib.error.URLError as error:  # not listening (yet)
            return 0, str(error).encode()

    def json(self, method: str, path: str, body: dict | None = None) -> dict:
        status, text = self.api(method, path, body)
        assert 200 <= status < 300, (method, path, status, text[:500])
        return json.loads(text) if text else {}


def _run_code(hub: Hub, user: str, code: str, timeout_s: float = 30) -> str:
    """Run ``code`` in a new kernel of ``user``'s server (its REST and websocket API, through the proxy);
    returns what it printed."""
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    kernel = hub.json("POST", f"/user/{user}/api/kernels", {"name": "python3"})["id"]

    async def execute() -> str:
        ws_url = hub.url.replace("http://", "ws://") + f"/user/{user}/api/kernels/{kernel}/channels"
        conn = await websocket_connect(HTTPRequest(ws_url, headers={"Authorization": f"token {hub.token}"}))
        msg_id = uuid.uuid4().hex
        conn.write_message(json.dumps({
            "header": {"msg_id": msg_id, "username": "test", "session": uuid.uuid4().hex,
                       "msg_type": "execute_request", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True},
        }))
        printed, replied, idle = [], False, False
        while not (replied and idle):  # the reply (shell) and the outputs (iopub) come in either order
            raw = await conn.read_message()
            assert raw is not None, "the kernel's websocket closed"
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                printed.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                content = msg["content"]
                raise AssertionError(f"{user}'s kernel: {content['ename']}: {content['evalue']}")
            elif msg["msg_type"] == "execute_reply":
                replied = True
            elif msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
                idle = True
        conn.close()
        return "".join(printed)

    def run() -> str:
        return asyncio.run(asyncio.wait_for(execute(), timeout=timeout_s))

    try:
        # A thread and an event loop of its own: in a test process that has started Chromium, Playwright's
        # sync API owns this thread's event loop, and running (or stopping) it here breaks both.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(run).result()
    finally:
        hub.api("DELETE", f"/user/{user}/api/kernels/{kernel}")


def _login(hub_url: str, user: str, password: str) -> tuple[int, str]:
    """Log in through the hub's form as a person would: (status of the form's POST, where it sent them)."""
    jar = http.cookiejar.CookieJar()

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
    with opener.open(hub_url + "/hub/login", timeout=30) as page:
        page.read()
    xsrf = next(c.value for c in jar if c.name == "_xsrf")
    form = urllib.parse.urlencode({"username": user, "password": password, "_xsrf": xsrf}).encode()
    try:
        with opener.open(hub_url + "/hub/login", data=form, timeout=30) as response:
            return response.status, response.headers.get("Location", "")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location", "")


def _kill_users_processes(uids: set[int]) -> None:
    import psutil

    procs = [p for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real in uids]
    for p in procs:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(procs, timeout=10)


@pytest.fixture
def accounts(request: pytest.FixtureRequest) -> Iterator[dict[str, pwd.struct_passwd]]:
    """An instructor and three learners, made for this test and removed after it, whatever happens."""
    if why := _why_not():
        if request.config.getoption("--strict-system") and os.geteuid() == 0:
            pytest.fail(f"{why} (--strict-system: make test installs it first)")
        pytest.skip(why)
    # HUB_TEST_USER_PREFIX: the accounts' first letters, to tell apart the accounts of runs sharing a machine.
    tag = os.environ.get("HUB_TEST_USER_PREFIX", "sa") + secrets.token_hex(3)
    names = [f"{tag}-teach", *(f"{tag}-learn{i}" for i in (1, 2, 3))]
    made: list[str] = []
    try:
        for name in names:
            subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--key", "HOME_MODE=0700",
                            name], check=True, capture_output=True)
            made.append(name)
        yield {name: pwd.getpwnam(name) for name in names}
    finally:
        uids = set()
        for name in made:
            try:
                uids.add(pwd.getpwnam(name).pw_uid)
            except KeyError:
                pass
        _kill_users_processes(uids)
        for name in made:
            subprocess.run(["userdel", "--remove", name], capture_output=True)


@pytest.fixture
def hub(accounts: dict[str, pwd.struct_passwd], tmp_path: Path) -> Iterator[Hub]:
    """JupyterHub on 127.0.0.1 with its proxy, the accounts allowed, a service token for the test."""
    instructor, *learners = accounts
    port, token = _free_port(), secrets.token_hex(32)
    bin_dir = Path(sys.executable).parent
    # What every server shares, as docs/instructors.md section 4 sets it up: nbgrader's exchange, a folder
    # every user can read and write, and the nbgrader configuration every server reads (on a hub's
    # machine /etc/jupyter; here a folder on every server's JUPYTER_CONFIG_PATH). Under /tmp, not in
    # tmp_path, which only root can enter.
    shared = Path(tempfile.mkdtemp(prefix="sa-hub-", dir="/tmp"))
    shared.chmod(0o755)
    (shared / "exchange").mkdir()
    (shared / "exchange").chmod(0o777)
    (shared / "config").mkdir(mode=0o755)
    (shared / "config" / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.Exchange.root = {str(shared / 'exchange')!r}\n", encoding="utf-8")
    (shared / "config" / "nbgrader_config.py").chmod(0o644)
    config = tmp_path / "jupyterhub_config.py"
    username_map = {name.lower(): name for name in accounts if name != name.lower()}
    config.write_text(f"""
c = get_config()  # noqa
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {_free_port()}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{_free_port()}"
c.ConfigurableHTTPProxy.command = [{str(_proxy_command())!r}]
c.JupyterHub.db_url = "sqlite:///{tmp_path / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = {str(tmp_path / 'cookie_secret')!r}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {PASSWORD!r}
c.Authenticator.allowed_users = {set(accounts)!r}
c.Authenticator.username_map = {username_map!r}  # the hub lowercases names; the accounts keep theirs
c.JupyterHub.spawner_class = "hub_spawner.CourseSpawner"
c.CourseSpawner.server_cmd = [{str(bin_dir / 'jupyterhub-singleuser')!r}]
c.CourseSpawner.readable = [{str(LEARNER_CONFIG)!r}]
# As docs/instructors.md gives it: learners' servers read the course's learner configuration.
INSTRUCTORS = {{{instructor!r}}}
LEARNER_CONFIG = {str(LEARNER_CONFIG)!r}
SHARED_CONFIG = {str(shared / 'config')!r}
c.Spawner.environment = {{
    "JUPYTER_CONFIG_PATH": lambda spawner: (SHARED_CONFIG if spawner.user.name in INSTRUCTORS
                                            else LEARNER_CONFIG + ":" + SHARED_CONFIG),
}}
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 60
c.Spawner.http_timeout = 60
c.JupyterHub.services = [{{"name": "course-test", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{"name": "course-test", "services": ["course-test"],
    "scopes": ["admin:users", "admin:servers", "access:servers", "read:users"]}}]
""", encoding="utf-8")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
           "PYTHONPATH": str(ROOT / "tests")}
    log = open(tmp_path / "jupyterhub.log", "wb")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen([str(bin_dir / "jupyterhub"), "-f", str(config)], cwd=tmp_path, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    running = Hub(f"http://127.0.0.1:{port}", token, shared)
    try:
        deadline = time.monotonic() + 30
        while running.api("GET", "/hub/api/")[0] != 200:
            assert proc.poll() is None, (tmp_path / "jupyterhub.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the hub did not answer within 30 s"
            time.sleep(0.5)
        yield running
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the hub stops the servers it started (cleanup_servers)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
        shutil.rmtree(shared, ignore_errors=True)


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
    status, location = _login(hub.url, learners[0], PASSWORD)
    assert status == 302 and "/hub/login" not in location, (status, location)
    assert _login(hub.url, learners[0], PASSWORD + "x")[0] == 403

    # Every server, started through the hub's REST API, becomes ready.
    for name in accounts:
        assert hub.api("POST", f"/hub/api/users/{name}/server")[0] in (201, 202)
    for name in accounts:
        while not hub.json("GET", f"/hub/api/users/{name}")["servers"].get("", {}).get("ready"):
            assert time.monotonic() - start < 60, f"{name}'s server did not start within 60 s"
            time.sleep(0.5)

    # Each server runs as its own user, in that user's home, and cannot list another's home.
    for i, name in enumerate(accounts):
        other = accounts[list(accounts)[(i + 1) % len(accounts)]].pw_dir
        seen = json.loads(_run_code(hub, name, WHOAMI.format(other=other)).strip().splitlines()[-1])
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
    assert time.monotonic() - start < DEADLINE_S


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
    port = _free_port()
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


def _start_servers(hub: Hub, names: list[str], within_s: float = 60) -> None:
    start = time.monotonic()
    for name in names:
        assert hub.api("POST", f"/hub/api/users/{name}/server")[0] in (201, 202)
    for name in names:
        while not hub.json("GET", f"/hub/api/users/{name}")["servers"].get("", {}).get("ready"):
            assert time.monotonic() - start < within_s, f"{name}'s server did not start within {within_s} s"
            time.sleep(0.5)


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
    _start_servers(hub, [editor, untouched])
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
    assert time.monotonic() - start < DEADLINE_S


NBGRADER = """
import json, subprocess, sys
done = subprocess.run([sys.executable, "-m", "nbgrader", *{args!r}], cwd={cwd!r}, capture_output=True,
                      text=True)
print(json.dumps({{"rc": done.returncode, "log": (done.stdout + done.stderr)[-1500:]}}))
"""

LISTS = """
import json, os
seen = {{}}
for name, path in {paths!r}.items():
    try:
        os.listdir(path)
        seen[name] = "listed"
    except PermissionError:
        seen[name] = "denied"
print(json.dumps(seen))
"""


def _nbgrader(hub: Hub, user: str, cwd: str | Path, *args: str) -> str:
    """An nbgrader command run by ``user``, in a kernel of their own server (so as that user, with the
    configuration their server reads); returns its log."""
    out = json.loads(_run_code(hub, user, NBGRADER.format(args=list(args), cwd=str(cwd)),
                               timeout_s=120).strip().splitlines()[-1])
    assert out["rc"] == 0, (user, args, out["log"])
    return out["log"]
