"""JupyterLab in a real browser: the server, the page and the notebook actions the browser tests use.

The server is started the way ``make lab`` starts it (working copies made by ``selfattention.coursework lab``,
then ``jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=<work>``), on a random free port with a
token, in temporary folders so nothing touches a learner's real ``work/``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
# Debian's Chromium first; $CHROMIUM, when set, wins. Names without a slash are looked up on PATH.
CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PRESENT_DIR = "present"  # folder under the server's root holding the presenter copies (make present)

# What a learner would get from JupyterLab's settings, minus the pop-ups that cover the page, and with every
# cell kept in the page (no windowing) so that the tests can see all outputs.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}

# Texts that mean a widget was shown as its plain-text fallback instead of as a widget.
WIDGET_FALLBACKS = ("interactive(children=", "Loading widget...", "Error displaying widget", "VBox(children=")


def find_chromium() -> str | None:
    """Path of $CHROMIUM or of an installed Chromium, or None when there is none."""
    for candidate in (os.environ.get("CHROMIUM", ""), *CHROMIUM_CANDIDATES):
        if not candidate:
            continue
        found = shutil.which(candidate)  # a name on PATH, or an executable path as it is
        if found:
            return found
    return None


def launch_chromium(pw: object) -> object:
    """A headless Chromium from playwright ``pw`` (the installed one); the test fails, saying how to get
    one, when there is none."""
    import pytest

    found = find_chromium()
    if found is None:
        pytest.fail("no Chromium found: install it (apt-get install chromium) or set CHROMIUM=/path/to/it")
    return pw.chromium.launch(executable_path=found, args=CHROMIUM_ARGS)


def wait_until(page: object, expression: str, timeout: float = 30_000) -> bool:
    """Whether the JavaScript ``expression`` becomes true in ``page`` within ``timeout`` ms."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(expression, timeout=timeout)
    except PlaywrightTimeout:
        return False
    return True


def allow_only(page: object, local: re.Pattern[str], refused: list[str] | None = None) -> None:
    """Let ``page`` load only URLs matching ``local``; abort every other request (recorded in ``refused``)."""

    def guard(route: object) -> None:
        url = route.request.url
        if local.match(url):
            route.continue_()
        else:
            if refused is not None:
                refused.append(url)
            route.abort()

    page.route("**/*", guard)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LabServer:
    """A running JupyterLab server: its base URL, token, root folder, process and log file."""

    url: str
    token: str
    root: Path
    process: subprocess.Popen
    log_path: Path

    def request(self, method: str, path: str, body: object = None) -> bytes:
        """Call ``path`` on the server with the token (``body`` sent as JSON); returns the response body."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.url}{path}", data=data, method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.read()

    def api(self, method: str, path: str, body: object = None) -> object:
        """Call a REST API of the server (``/api/...``); returns the decoded JSON or None."""
        answer = self.request(method, path, body)
        return json.loads(answer) if answer else None

    def kernel_state(self, path: str) -> str:
        """Execution state of the kernel of the notebook ``path`` ("" while it has no session)."""
        for session in self.api("GET", "/api/sessions") or []:
            if session.get("path") == path and session.get("kernel"):
                return str(session["kernel"].get("execution_state", ""))
        return ""

    def shutdown_kernels(self) -> None:
        """Stop every running kernel (one lesson's kernel must not slow down the next lesson)."""
        for kernel in self.api("GET", "/api/kernels") or []:
            self.api("DELETE", f"/api/kernels/{kernel['id']}")

    def stop(self) -> None:
        """Stop the server, waiting at most 20 s before killing it."""
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=20)


def jupyter_command() -> list[str]:
    """``jupyter`` of the environment running the tests (as ``make lab`` uses ``.venv/bin/jupyter``)."""
    jupyter = Path(sys.executable).parent / "jupyter"
    return [str(jupyter)] if jupyter.exists() else [sys.executable, "-m", "jupyter"]


def prepare_root(tmp: Path) -> Path:
    """Learners' working copies in ``tmp/work`` (as ``make lab``: exercises blank, no outputs) and the
    presenter copies in ``tmp/work/present/`` (as ``make present``: the deck's slides in, no solutions).

    Returns the folder to serve: ``tmp/work``.
    """
    work, build = tmp / "work", tmp / "build"
    for command, folder in (("lab", work), ("present", work / PRESENT_DIR)):
        subprocess.run(
            [sys.executable, "-m", "selfattention.coursework", "--notebooks", str(ROOT / "notebooks"),
             command, "--work", str(folder), "--build", str(build / command)],
            cwd=ROOT, check=True, capture_output=True, text=True, timeout=300,
        )
    return work


def start_lab(tmp: Path, root: Path, log_path: Path, timeout: float = 120.0, cwd: Path = ROOT) -> LabServer:
    """Start ``jupyter lab`` as ``make lab`` does, serving ``root`` on 127.0.0.1 with a fresh token,
    from the folder ``cwd``.

    Raises RuntimeError (with the end of the server's log) when it does not answer within ``timeout`` s.
    """
    settings = tmp / "lab-settings"
    for name, values in LAB_SETTINGS.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    token = os.urandom(16).hex()
    port = free_port()
    command = jupyter_command() + [
        "lab",
        "--ServerApp.ip=127.0.0.1",
        "--no-browser",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={settings}",
        f"--LabApp.workspaces_dir={tmp / 'lab-workspaces'}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), PYTHONUNBUFFERED="1")
    env.pop("JUPYTER_TOKEN", None)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = log_path.open("w", encoding="utf-8")
    process = subprocess.Popen(command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env=env)
    server = LabServer(f"http://127.0.0.1:{port}", token, root, process, log_path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            server.api("GET", "/api/status")
            return server
        except OSError:
            time.sleep(0.5)
    server.stop()
    tail = log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
    raise RuntimeError(f"JupyterLab did not start within {timeout:.0f} s; its log ends with:\n{tail}")


def saved_notebook(path: Path) -> dict:
    """The notebook file as JupyterLab saved it."""
    return json.loads(path.read_text(encoding="utf-8"))


def cell_index(notebook: dict, marker: str) -> int:
    """Index of the first cell whose source contains ``marker``; ValueError naming it when none does."""
    for index, cell in enumerate(notebook["cells"]):
        if marker in "".join(cell["source"]):
            return index
    raise ValueError(f"no cell contains {marker!r}")


def output_summary(notebook: dict) -> dict[str, object]:
    """What run-all left in a saved notebook: unexecuted code cells, errors, figures and widgets."""
    unexecuted, errors, figures, widgets = [], [], 0, 0
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code" or not "".join(cell["source"]).strip():
            continue
        if cell.get("execution_count") is None:
            unexecuted.append(index)
        for output in cell.get("outputs", []):
            if output["output_type"] == "error":
                errors.append(f"cell {index}: {output['ename']}: {output['evalue']}")
            data = output.get("data", {})
            figures += "image/png" in data
            widgets += "application/vnd.jupyter.widget-view+json" in data
    return {"unexecuted": unexecuted, "errors": errors, "figures": figures, "widgets": widgets}
