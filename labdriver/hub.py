"""A JupyterHub with real local users on 127.0.0.1, driven through its REST API and its servers' kernels: what
``tests/test_hub.py`` and ``benchmarks/hub_load.py`` share.

The hub (``pip install '.[hub]'``), its proxy (configurable-http-proxy, from ``tools/hub/package.json``,
installed by ``npm ci`` into ``tools/hub/node_modules``) and every single-user server listen on 127.0.0.1
only. Users log in with a password (JupyterHub's DummyAuthenticator, one shared password: a test
authenticator, never for a real class). The spawner is LocalProcessSpawner, each server run as its own user
(:mod:`labdriver.hub_spawner`); learners' servers get the course's learner configuration
(``src/selfattention/coursework/learner_config``: no nbgrader instructor tools), the instructors' do not, as
``docs/instructors.md`` section 4 sets it up.

:func:`local_accounts` makes the accounts (``useradd``, homes of mode 0700 as The Littlest JupyterHub makes
them; names start with ``$HUB_USER_PREFIX``, default ``sa``) and removes them, their homes and their
processes afterwards, also when what runs inside fails; :func:`running_hub` starts and stops the hub. Both
need root (:func:`why_not` says what is missing).
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
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from . import free_port

ROOT = Path(__file__).resolve().parent.parent
HUB_TOOLS = ROOT / "tools" / "hub"
LEARNER_CONFIG = ROOT / "src" / "selfattention" / "coursework" / "learner_config"
COURSE_ID = "selfattention-hub"  # the nbgrader course every server's shared configuration names


def why_not() -> str | None:
    """Why a hub with local users cannot run here, or None."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "the hub creates local users: it needs root"
    for tool in ("useradd", "userdel", "bwrap", "setpriv", "npm", "node"):
        if shutil.which(tool) is None:
            return f"the hub needs {tool} (tools/system-deps.sh)"
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        return "JupyterHub is not installed: pip install -e '.[hub]' (make test installs it)"
    return None


def proxy_command() -> Path:
    """configurable-http-proxy from tools/hub's lock file (``npm ci`` when it is missing or stale)."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import npm_files
    finally:
        sys.path.pop(0)
    npm_files.ensure_node_modules(HUB_TOOLS, "the hub")
    return HUB_TOOLS / "node_modules" / ".bin" / "configurable-http-proxy"


class Hub:
    """A running hub: its URL, the service token, the shared folder (``exchange/``, ``config/``), the
    users' password, and calls to its REST API and the servers'."""

    def __init__(self, url: str, token: str, shared: Path, password: str, pid: int) -> None:
        self.url, self.token, self.shared, self.password, self.pid = url, token, shared, password, pid

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


CONNECT_S = 300  # the longest a kernel's websocket may take to open


class KernelError(AssertionError):
    """A cell raised in the kernel (its name and value), or the kernel went away."""


async def execute(hub: Hub, user: str, kernel: str, codes: Sequence[str]) -> list[str]:
    """Run ``codes`` one after the other in ``user``'s kernel ``kernel`` over its websocket (through the
    proxy), as JupyterLab does; returns what each printed. A cell that raises, or a kernel that restarts or
    dies, raises :class:`KernelError`."""
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    ws_url = hub.url.replace("http://", "ws://") + f"/user/{user}/api/kernels/{kernel}/channels"
    # Tornado's 20 s defaults are too short on a busy machine: the server answers the upgrade only once the
    # kernel has replied to its first request. The caller's own deadline (``in_own_loop``) still bounds it.
    request = HTTPRequest(ws_url, headers={"Authorization": f"token {hub.token}"},
                          connect_timeout=CONNECT_S, request_timeout=CONNECT_S)
    conn = await websocket_connect(request, max_message_size=64 * 2**20)
    session, printed = uuid.uuid4().hex, []
    try:
        for code in codes:
            msg_id = uuid.uuid4().hex
            conn.write_message(json.dumps({
                "header": {"msg_id": msg_id, "username": user, "session": session,
                           "msg_type": "execute_request", "version": "5.3"},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                            "allow_stdin": False, "stop_on_error": True},
            }))
            out, replied, idle = [], False, False
            while not (replied and idle):  # the reply (shell) and the outputs (iopub) come in either order
                raw = await conn.read_message()
                if raw is None:
                    raise KernelError(f"{user}'s kernel: its websocket closed")
                if isinstance(raw, bytes):  # a binary message (buffers): never a reply of ours
                    continue
                msg = json.loads(raw)
                state = msg["content"].get("execution_state") if msg["msg_type"] == "status" else None
                if state in ("restarting", "dead"):
                    raise KernelError(f"{user}'s kernel: {state}")
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "stream":
                    out.append(msg["content"]["text"])
                elif msg["msg_type"] == "error":
                    content = msg["content"]
                    raise KernelError(f"{user}'s kernel: {content['ename']}: {content['evalue']}")
                elif msg["msg_type"] == "execute_reply":
                    replied = True
                elif state == "idle":
                    idle = True
            printed.append("".join(out))
    finally:
        conn.close()
    return printed


def in_own_loop(coroutine: object, timeout_s: float) -> object:
    """Run ``coroutine`` to its end in a thread with an event loop of its own, at most ``timeout_s``. (In a
    test process that has started Chromium, Playwright's sync API owns this thread's event loop, and running
    or stopping it here breaks both.)"""
    def run() -> object:
        return asyncio.run(asyncio.wait_for(coroutine, timeout=timeout_s))

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def run_code(hub: Hub, user: str, code: str, timeout_s: float = 30) -> str:
    """Run ``code`` in a new kernel of ``user``'s server (its REST and websocket API, through the proxy);
    returns what it printed."""
    kernel = hub.json("POST", f"/user/{user}/api/kernels", {"name": "python3"})["id"]
    try:
        return in_own_loop(execute(hub, user, kernel, [code]), timeout_s)[0]
    finally:
        hub.api("DELETE", f"/user/{user}/api/kernels/{kernel}")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def login(hub_url: str, user: str, password: str) -> tuple[int, str, urllib.request.OpenerDirector]:
    """Log in through the hub's form as a person would: (status of the form's POST, where it sent them, an
    opener that carries the session's cookies and follows no redirect)."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), _NoRedirect)
    with opener.open(hub_url + "/hub/login", timeout=30) as page:
        page.read()
    xsrf = next(c.value for c in jar if c.name == "_xsrf")
    form = urllib.parse.urlencode({"username": user, "password": password, "_xsrf": xsrf}).encode()
    try:
        with opener.open(hub_url + "/hub/login", data=form, timeout=30) as response:
            return response.status, response.headers.get("Location", ""), opener
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location", ""), opener


def kill_users_processes(uids: Iterable[int]) -> None:
    """Kill every process of these users and wait (at most 10 s) for them to end."""
    import psutil

    from selfattention.coursework.runner import kill_and_wait

    uids = set(uids)
    kill_and_wait([p for p in psutil.process_iter(["uids"])
                   if p.info["uids"] and p.info["uids"].real in uids])


def account_names(roles: Sequence[str]) -> list[str]:
    """A fresh local account name per role: ``$HUB_USER_PREFIX`` (default ``sa``), a random tag, the role."""
    prefix = os.environ.get("HUB_USER_PREFIX", "sa").lower()  # JupyterHub lower-cases names
    tag = secrets.token_hex(3)
    return [f"{prefix}{tag}-{role}" for role in roles]


@contextmanager
def local_accounts(names: Sequence[str]) -> Iterator[dict[str, pwd.struct_passwd]]:
    """The accounts ``names`` (homes of mode 0700), made for the block and removed after it with their homes
    and processes, whatever happens."""
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
        kill_users_processes(uids)
        for name in made:
            subprocess.run(["userdel", "--remove", name], capture_output=True)


@contextmanager
def running_hub(users: Iterable[str], instructors: Iterable[str], workdir: Path, *,
                start_timeout_s: int = 60, course_id: str = COURSE_ID) -> Iterator[Hub]:
    """JupyterHub on 127.0.0.1 with its proxy, ``users`` allowed (``instructors`` among them get no learner
    configuration), a service token with the admin scopes; its database and log in ``workdir``
    (``jupyterhub.log``). Stopped, with every server it started, when the block ends."""
    users, instructors = set(users), set(instructors)
    port, token, password = free_port(), secrets.token_hex(32), secrets.token_urlsafe(12)
    bin_dir = Path(sys.executable).parent
    # What every server shares, as docs/instructors.md section 4 sets it up: nbgrader's exchange, a folder
    # every user can read and write, and the nbgrader configuration every server reads (on a hub's
    # machine /etc/jupyter; here a folder on every server's JUPYTER_CONFIG_PATH). Under /tmp, which every
    # user can enter.
    shared = Path(tempfile.mkdtemp(prefix="sa-hub-", dir="/tmp"))
    shared.chmod(0o755)
    (shared / "exchange").mkdir()
    (shared / "exchange").chmod(0o777)
    (shared / "config").mkdir(mode=0o755)
    (shared / "config" / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.course_id = {course_id!r}\n"
        f"c.Exchange.root = {str(shared / 'exchange')!r}\n", encoding="utf-8")
    (shared / "config" / "nbgrader_config.py").chmod(0o644)
    config = workdir / "jupyterhub_config.py"
    config.write_text(f"""
c = get_config()  # noqa
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {free_port()}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.command = [{str(proxy_command())!r}]
c.JupyterHub.db_url = "sqlite:///{workdir / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = {str(workdir / 'cookie_secret')!r}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {password!r}
c.Authenticator.allowed_users = {users!r}
c.JupyterHub.spawner_class = "labdriver.hub_spawner.CourseSpawner"
c.CourseSpawner.server_cmd = [{str(bin_dir / 'jupyterhub-singleuser')!r}]
c.CourseSpawner.readable = [{str(ROOT / 'src')!r}]
# As docs/instructors.md gives it: learners' servers read the course's learner configuration.
INSTRUCTORS = {instructors!r}
LEARNER_CONFIG = {str(LEARNER_CONFIG)!r}
SHARED_CONFIG = {str(shared / 'config')!r}
c.Spawner.environment = {{
    "JUPYTER_CONFIG_PATH": lambda spawner: (SHARED_CONFIG if spawner.user.name in INSTRUCTORS
                                            else LEARNER_CONFIG + ":" + SHARED_CONFIG),
}}
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = {start_timeout_s}
c.Spawner.http_timeout = {start_timeout_s}
c.JupyterHub.services = [{{"name": "course-hub", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{"name": "course-hub", "services": ["course-hub"],
    "scopes": ["admin:users", "admin:servers", "access:servers", "read:users"]}}]
""", encoding="utf-8")
    # The servers keep PYTHONPATH (JupyterHub's env_keep): the course's package from this checkout.
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
           "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"}
    log = open(workdir / "jupyterhub.log", "wb")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen([str(bin_dir / "jupyterhub"), "-f", str(config)], cwd=workdir, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    running = Hub(f"http://127.0.0.1:{port}", token, shared, password, proc.pid)
    try:
        deadline = time.monotonic() + 30
        while running.api("GET", "/hub/api/")[0] != 200:
            assert proc.poll() is None, (workdir / "jupyterhub.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the hub did not answer within 30 s"
            time.sleep(0.5)
        yield running
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the hub stops the servers it started (cleanup_servers)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
        shutil.rmtree(shared, ignore_errors=True)


def start_servers(hub: Hub, names: Sequence[str], within_s: float = 60) -> float:
    """Start ``names``' servers through the hub's REST API, all at once, and wait until each is ready;
    returns the seconds it took."""
    start = time.monotonic()
    for name in names:
        status, text = hub.api("POST", f"/hub/api/users/{name}/server")
        assert status in (201, 202), (name, status, text[:300])
    for name in names:
        while not hub.json("GET", f"/hub/api/users/{name}")["servers"].get("", {}).get("ready"):
            assert time.monotonic() - start < within_s, f"{name}'s server did not start within {within_s} s"
            time.sleep(0.5)
    return time.monotonic() - start


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


def nbgrader(hub: Hub, user: str, cwd: str | Path, *args: str) -> str:
    """An nbgrader command run by ``user``, in a kernel of their own server (so as that user, with the
    configuration their server reads); returns its log."""
    out = json.loads(run_code(hub, user, NBGRADER.format(args=list(args), cwd=str(cwd)),
                              timeout_s=120).strip().splitlines()[-1])
    assert out["rc"] == 0, (user, args, out["log"])
    return out["log"]


def listed(hub: Hub, user: str, paths: dict[str, str]) -> dict[str, str]:
    """What ``user``'s own kernel gets when it lists each folder of ``paths`` (named): "listed" or
    "denied"."""
    return json.loads(run_code(hub, user, LISTS.format(paths=paths)).strip().splitlines()[-1])
