"""The course's JupyterLab driven in Chromium: the one driver the browser tests and the widget benchmark use.

``tests/test_browser.py``, ``tests/test_rise.py``, ``tests/test_formgrader.py`` and ``benchmarks/widgets.py``
start JupyterLab the way ``make lab`` starts it (working copies made by ``selfattention.coursework lab`` and
``present``, then ``jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=<work>``), on a random free port
with a token, in temporary folders so nothing touches a learner's real ``work/``; then open a notebook, Run
All, find a cell, open the live slideshow (RISE), as a learner or a presenter would, through Playwright.

Waits that run out raise :class:`DriverTimeout` (an AssertionError: a test fails, naming what it waited for).
Playwright is imported only by the functions that need it.
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"  # screenshots, the server's log, blocked requests
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


class DriverTimeout(AssertionError):
    """A wait of the driver ran out (the message says what it waited for)."""


def launch_chromium(pw: object) -> object:
    """A headless Chromium from playwright ``pw`` (the installed one). Raises DriverTimeout, saying how to
    get one, when there is none."""
    found = find_chromium()
    if found is None:
        raise DriverTimeout("no Chromium found: install it (apt-get install chromium) or set CHROMIUM=/path")
    return pw.chromium.launch(executable_path=found, args=CHROMIUM_ARGS)


def js_true(page: object, expression: str, timeout: float = 30_000) -> bool:
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


def prepare_root(tmp: Path, student_versions: Path | None = None) -> Path:
    """Learners' working copies in ``tmp/work`` (as ``make lab``: exercises blank, no outputs) and the
    presenter copies in ``tmp/work/present/`` (as ``make present``: the deck's slides in, no solutions).

    ``student_versions``: the course folder whose student versions ``make lab`` may reuse (its ``build/lab``;
    default a new one under ``tmp``). Returns the folder to serve: ``tmp/work``.
    """
    work = tmp / "work"
    builds = {"lab": student_versions or tmp / "build" / "lab", "present": tmp / "build" / "present"}
    for command, folder in (("lab", work), ("present", work / PRESENT_DIR)):
        subprocess.run(
            [sys.executable, "-m", "selfattention.coursework", "--notebooks", str(ROOT / "notebooks"),
             command, "--work", str(folder), "--build", str(builds[command])],
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


# --- a notebook in the page ---------------------------------------------------------------------


RUN_ALL_TIMEOUT = 600.0  # s; lesson 11 loads a pretrained model, and the cores may be shared
RISE_FRAME = "iframe[src*='/rise/']"


def wait_until(page: object, condition: Callable[[], bool], timeout: float, what: str,
               times: int = 2) -> None:
    """Poll ``condition`` until it holds ``times`` polls in a row (0.5 s apart); DriverTimeout after
    ``timeout`` s."""
    deadline, hits = time.monotonic() + timeout, 0
    while time.monotonic() < deadline:
        hits = hits + 1 if condition() else 0
        if hits >= times:
            return
        page.wait_for_timeout(500)
    raise DriverTimeout(f"timed out after {timeout:.0f} s waiting for {what}")


def kernel_status(page: object) -> str:
    """The status the notebook toolbar shows for the kernel ("idle", "busy", "starting", ...)."""
    return page.evaluate(
        "() => { const e = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) "
        ".jp-Notebook-ExecutionIndicator'); return e ? e.getAttribute('data-status') : ''; }"
    ) or ""


def prompts(page: object) -> list[str]:
    """The input prompts of the code cells, e.g. ["[1]:", "[*]:", "[ ]:"]."""
    return page.locator(".jp-Notebook .jp-CodeCell .jp-InputArea-prompt").all_inner_texts()


def open_notebook(context: object, lab: LabServer, path: str, workspace: str) -> object:
    """A new page showing the notebook ``path`` (relative to the server's root) with its kernel idle."""
    page = context.new_page()
    page.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/{path}?reset&token={lab.token}")
    page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(state="visible")
    wait_until(page, lambda: kernel_status(page) == "idle" and lab.kernel_state(path) == "idle", 120,
               f"the kernel of {path} to start", times=3)
    return page


def wait_for_idle(page: object, timeout: float) -> None:
    """Wait until no cell is queued or running and the kernel is idle."""
    wait_until(
        page,
        lambda: kernel_status(page) == "idle" and not any("*" in p for p in prompts(page)),
        timeout,
        "the kernel to finish running the cells",
    )


def run_all(page: object) -> None:
    """Run > Run All Cells, as a learner would, and wait until every cell has run (or one failed)."""
    # The cells start with blank prompts "[ ]:"; run-all has started once one of them is "[*]:" or "[n]:".
    for _attempt in range(3):  # a click that lands while the page is still settling is lost: click again
        page.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})
        page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
        page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(p.strip("[ ]:") for p in prompts(page)):
            page.wait_for_timeout(500)
        if any(p.strip("[ ]:") for p in prompts(page)):
            break
    else:
        raise DriverTimeout("Run > Run All Cells did not start the cells (3 attempts)")
    wait_for_idle(page, RUN_ALL_TIMEOUT)


def run_cells(page: object, first: int, count: int) -> None:
    """Shift+Enter from cell ``first``, ``count`` times, then wait for the kernel."""
    cell(page, first).locator(".jp-InputArea-prompt").click()
    for _ in range(count):
        page.keyboard.press("Shift+Enter")
    wait_for_idle(page, 120)


def save(page: object, path: Path) -> dict:
    """File > Save; returns the notebook as written to ``path``."""
    before = path.stat().st_mtime_ns
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^File$")).click()
    page.locator('.lm-Menu-item[data-command="docmanager:save"]').click()
    wait_until(page, lambda: path.stat().st_mtime_ns != before, 60, f"{path.name} to be saved")
    return saved_notebook(path)


def cell(page: object, index: int) -> object:
    """The cell at ``index`` in the open notebook (every cell is in the page: windowing is off)."""
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def type_into_cell(page: object, index: int, text: str) -> None:
    """Replace the code of cell ``index`` by ``text``, typing in its editor as a learner would."""
    editor = cell(page, index).locator(".cm-content")
    editor.scroll_into_view_if_needed()
    editor.click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(text)


# --- the live slideshow (jupyterlab-rise) -------------------------------------------------------


def rise_frame(page: object) -> object:
    """The slideshow's page (jupyterlab-rise renders it in an iframe next to the notebook)."""
    from urllib.parse import urlparse

    for frame in page.frames:
        if urlparse(frame.url).path.startswith("/rise/"):
            return frame
    raise AssertionError(f"no RISE slideshow among the page's frames: {[f.url for f in page.frames]}")


def show_cell_in_rise(page: object, index: int, timeout: float = 120.0) -> object:
    """The slideshow's current slide, once it shows the widget of the notebook's cell ``index``.

    The slideshow follows the cell selected in the notebook, but a selection made while it is still starting
    can be lost: select the cell again until its slide, with its widget, is shown.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    slide = page.frame_locator(RISE_FRAME).locator(".reveal .slides section.present").last
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cell(page, max(index - 1, 0)).locator(".jp-Cell-inputWrapper").first.click()
        cell(page, index).locator(".jp-InputArea-prompt").click()
        try:
            slide.locator(".jp-OutputArea-output > .jupyter-widgets").first.wait_for(timeout=5_000)
            return slide
        except PlaywrightTimeout:
            continue
    raise DriverTimeout(f"the slideshow did not show the widget of cell {index} within {timeout:.0f} s")
