"""Attacks on grading that run in seconds: the sandbox itself, and the instructor's data.

Each test plays one hostile (or hurried) move and asserts the outcome. The sandbox is exercised
directly (``run_sandboxed``: the same bwrap command and limits as a grading kernel) with small
limits, so a limit that failed could not harm the machine: memory 256 MiB, 32 processes, 16 MiB of
disk. Whole grading runs with crafted submissions are in ``test_attacks_slow.py`` (make test-attacks).
Network probes only ever target a listener this test starts on 127.0.0.1.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT, STUDENT_CACHE

from selfattention.coursework import grading, sandbox
from selfattention.coursework.grading import GradingRefused, IsolationUnavailable, find_submissions, grade_all
from selfattention.coursework.results import GRADING_ENV
from selfattention.coursework.runner import RunPolicy, run_sandboxed

SMALL = RunPolicy(memory=256 << 20, processes=32, disk=16 << 20)
NONE = RunPolicy(isolation="none")
LESSON00 = ROOT / "notebooks" / "00_roadmap.ipynb"

# Skipped without bubblewrap; under `make test` (--strict-system, bubblewrap installed first) failed instead.
needs_sandbox = pytest.mark.needs_sandbox


def inside(code: str, iso: RunPolicy = SMALL, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run Python ``code`` in the sandbox; fail the test if the sandbox itself did not start."""
    result = run_sandboxed(iso, [sys.executable, "-c", textwrap.dedent(code)], timeout=timeout)
    assert "bwrap:" not in result.stderr, result.stderr
    return result


@needs_sandbox
def test_a_course_checked_out_under_tmp_is_visible_read_only_inside(tmp_path, monkeypatch):
    # CI clones the course under /tmp, which the sandbox replaces with the kernel's own tmpfs: the
    # virtualenv and the package source must still be mounted (read-only) on top of it.
    course = Path(tempfile.mkdtemp(prefix="sa-course-", dir="/tmp"))
    try:
        (course / "src").mkdir()
        (course / "src" / "marker.py").write_text("print('course visible')\n")
        os.chmod(course, 0o755)
        real = sandbox._python_dirs
        monkeypatch.setattr(sandbox, "_python_dirs", lambda: [*real(), course / "src"])
        result = run_sandboxed(SMALL, [sys.executable, str(course / "src" / "marker.py")])
        assert "bwrap:" not in result.stderr, result.stderr
        assert result.stdout.strip() == "course visible", result.stderr
        written = inside(f"open({str(course / 'src' / 'x')!r}, 'w')")
        assert "Read-only file system" in written.stderr, written.stderr
        assert inside("open('/tmp/own', 'w').write('ok')").returncode == 0, "its own /tmp stays writable"
    finally:
        shutil.rmtree(course)


# --- integrity: what a submission can see and reach -------------------------------------------


@needs_sandbox
def test_sandbox_sees_no_course_file_gradebook_or_grader_home(tmp_path):
    secret = tmp_path / "course" / "gradebook.db"
    secret.parent.mkdir()
    secret.write_text("grades")
    result = inside(f"""
        import os
        seen = []
        for top in ("/work", "/root", "/home", "/tmp", "/var", "/srv", "/opt", "/mnt"):
            for folder, dirs, files in os.walk(top):
                seen += [os.path.join(folder, f) for f in files]
        print("EXISTS", os.path.exists({str(secret)!r}), os.path.exists({str(ROOT / 'notebooks')!r}))
        allowed = tuple(p + "/" for p in {sorted(str(d) for d in sandbox._python_dirs())!r})
        print("FILES", [f for f in seen if not f.startswith(allowed)][:20])
        print("UID", os.getuid())
    """)
    assert result.returncode == 0, result.stderr
    assert "EXISTS False False" in result.stdout
    assert "FILES []" in result.stdout
    assert "UID 0" not in result.stdout


@needs_sandbox
def test_system_and_python_are_read_only():
    result = inside(f"""
        import os
        for path in ("/usr/x", "/etc/x", {str(Path(sys.prefix) / 'x')!r}, {str(ROOT / 'src' / 'x')!r}):
            try:
                open(path, "w").close()
                print("WROTE", path)
            except OSError as exc:
                print("refused", path, exc.errno)
    """)
    assert "WROTE" not in result.stdout and result.stdout.count("refused") == 4, result.stdout


@needs_sandbox
def test_no_network_even_to_a_listener_on_this_machine():
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(15)
    port = server.getsockname()[1]
    got: list[object] = []

    def accept() -> None:
        try:
            got.append(server.accept())
        except OSError:
            pass

    thread = threading.Thread(target=accept)
    thread.start()
    result = inside(f"""
        import os, socket
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=5).sendall(b"grade me")
            print("CONNECTED")
        except OSError as exc:
            print("refused", exc)
    """)
    server.close()
    thread.join()
    assert "CONNECTED" not in result.stdout and "refused" in result.stdout, result.stdout
    assert not got, "the sandbox reached a listener of the host"


@needs_sandbox
def test_nothing_inherited_no_descriptor_no_environment(monkeypatch):
    monkeypatch.setenv("GRADER_SECRET", "s3cret")
    read_end, write_end = os.pipe()  # a pipe the grader holds open: the sandbox must not have it
    try:
        result = inside("""
            import os
            print("FDS", sorted(int(fd) for fd in os.listdir("/proc/self/fd")))
            print("ENV", sorted(os.environ))
        """)
    finally:
        os.close(read_end)
        os.close(write_end)
    fds = eval(result.stdout.split("FDS ")[1].splitlines()[0])  # noqa: S307 (our own list)
    assert set(fds) <= {0, 1, 2, 3}, fds  # 3: the folder listing itself
    assert "GRADER_SECRET" not in result.stdout
    env = eval(result.stdout.split("ENV ")[1].splitlines()[0])  # noqa: S307
    assert set(env) <= {"HOME", "TMPDIR", "PATH", "MPLCONFIGDIR", "PWD", GRADING_ENV, *sandbox.KEEP_ENV}, env


@needs_sandbox
def test_cannot_see_or_signal_other_processes():
    sentinel = subprocess.Popen(["sleep", "60"])
    try:
        result = inside("""
            import os, signal
            pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
            print("PIDS", len(pids))
            for pid in range(2, 40000):
                try:
                    os.kill(pid, signal.SIGKILL if pid != os.getpid() else 0)
                except OSError:
                    pass
        """)
        assert sentinel.poll() is None, "a process of the host was killed from the sandbox"
        assert int(result.stdout.split("PIDS ")[1].split()[0]) <= 3, result.stdout
    finally:
        sentinel.kill()
        sentinel.wait()


# --- availability: limits enforced from outside ------------------------------------------------


@needs_sandbox
def test_memory_limit_stops_a_hog():
    result = inside("""
        chunks = []
        for _ in range(8):                      # at most 512 MiB, twice the limit
            chunks.append(bytearray(64 << 20))
        print("ALLOCATED", len(chunks) * 64, "MiB")
    """)
    assert "ALLOCATED 512" not in result.stdout
    assert result.out_of_memory or "MemoryError" in result.stderr, (result.returncode, result.stderr)


@needs_sandbox
def test_process_limit_stops_a_fork_bomb():
    result = inside("""
        import os, time
        made = 0
        for _ in range(200):                    # bounded: 200 children at most
            try:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                made += 1
            except OSError:
                break
        print("FORKED", made)
    """, timeout=90)
    forked = int(result.stdout.split("FORKED ")[1].split()[0])
    assert forked < SMALL.processes, result.stdout


@needs_sandbox
def test_disk_limit_stops_a_filler():
    result = inside("""
        import os
        written = 0
        for target in ("/tmp/big", os.path.expanduser("~/big2")):
            try:
                with open(target, "wb") as f:
                    for _ in range(64):                # at most 64 MiB, four times the limit
                        f.write(b"x" * (1 << 20))
                        f.flush()
                        written += 1 << 20
            except OSError as exc:
                print("stopped", exc.errno)
        print("WRITTEN", written)
    """)
    written = int(result.stdout.split("WRITTEN ")[1].split()[0])
    assert written <= SMALL.disk, result.stdout


@needs_sandbox
def test_a_double_forked_daemon_dies_with_the_sandbox():
    psutil = pytest.importorskip("psutil")
    marker = f"sa-daemon-{os.getpid()}"
    result = inside(f"""
        import os, subprocess
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/bin/sh", ["/bin/sh", "-c", "exec -a {marker} sleep 300"])
            os._exit(0)
        print("STARTED")
    """)
    assert "STARTED" in result.stdout
    left = []
    for _ in range(50):
        left = [p.pid for p in psutil.process_iter(["cmdline"])
                if marker in " ".join(p.info["cmdline"] or [])]
        if not left:
            break
        time.sleep(0.1)
    assert not left, f"processes outlived the sandbox: {left}"


# --- the instructor's data ---------------------------------------------------------------------


def _old_csv(path: Path, learners: list[str]) -> bytes:
    rows = [grading.GradeRow(name, "00_roadmap", 1, 1, 1, 1, 0, "all tests pass") for name in learners]
    grading.write_csv(rows, path)
    return path.read_bytes()


@pytest.mark.parametrize("what", ["empty", "missing"])
def test_empty_or_mistyped_submissions_refused_and_csv_kept(tmp_path, what):
    out = tmp_path / "grades.csv"
    before = _old_csv(out, ["ada", "bob"])
    folder = tmp_path / "submissions"
    if what == "empty":
        folder.mkdir()
    with pytest.raises(GradingRefused, match="no submission to grade"):
        grade_all(ROOT / "notebooks", folder, tmp_path / "course", out, NONE, say=lambda line: None)
    assert out.read_bytes() == before


def test_make_grade_with_a_mistyped_folder_exits_nonzero_and_keeps_the_csv(tmp_path):
    out = tmp_path / "grades.csv"
    before = _old_csv(out, ["ada"])
    proc = subprocess.run(
        [sys.executable, "-m", "selfattention.coursework", "--notebooks", str(ROOT / "notebooks"), "grade",
         "--submissions", str(tmp_path / "submisions"), "--build", str(tmp_path / "course"),
         "--out", str(out), "--isolation", "none"], capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2 and "no submission to grade" in proc.stderr, proc
    assert out.read_bytes() == before


def test_a_run_that_would_drop_rows_is_refused(tmp_path):
    out = tmp_path / "grades.csv"
    before = _old_csv(out, ["ada", "bob", "cy"])
    (tmp_path / "submissions" / "ada").mkdir(parents=True)
    (tmp_path / "submissions" / "ada" / LESSON00.name).write_bytes(LESSON00.read_bytes())
    with pytest.raises(GradingRefused, match=r"2 rows that this run would not write \(bob/00_roadmap, cy/"):
        grade_all(ROOT / "notebooks", tmp_path / "submissions", tmp_path / "course", out, NONE,
                  say=lambda line: None)
    assert out.read_bytes() == before


def test_a_second_run_on_the_same_course_folder_is_refused(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    (tmp_path / "submissions" / "ada").mkdir(parents=True)
    (tmp_path / "submissions" / "ada" / LESSON00.name).write_bytes(LESSON00.read_bytes())
    with open(course / ".grading.lock", "a+") as held:  # as the first run holds it
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(GradingRefused, match="another grading run is using"):
            grade_all(ROOT / "notebooks", tmp_path / "submissions", course, tmp_path / "grades.csv", NONE,
                      say=lambda line: None)
    assert not (tmp_path / "grades.csv").exists() and not (course / "gradebook.db").exists()


def test_csv_written_whole_or_not_at_all(tmp_path, monkeypatch):
    out = tmp_path / "grades.csv"
    before = _old_csv(out, ["ada", "bob"])
    rows = [grading.GradeRow("ada", "00_roadmap", 0, 1, 0, 1, 0, "x")] * 3
    original, calls = grading._csv_line, []

    def line(row):  # the disk fills (or the process is killed) after the first row
        calls.append(row)
        if len(calls) == 2:
            raise OSError("No space left on device")
        return original(row)

    monkeypatch.setattr(grading, "_csv_line", line)
    with pytest.raises(OSError, match="No space left"):
        grading.write_csv(rows, out)
    assert out.read_bytes() == before


def test_isolation_unavailable_refuses_with_a_clear_message(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "BWRAP", "bwrap-not-installed")
    (tmp_path / "submissions" / "ada").mkdir(parents=True)
    (tmp_path / "submissions" / "ada" / LESSON00.name).write_bytes(LESSON00.read_bytes())
    with pytest.raises(IsolationUnavailable, match=r"bubblewrap.*ISOLATION=none"):
        grade_all(ROOT / "notebooks", tmp_path / "submissions", tmp_path / "course", tmp_path / "g.csv",
                  say=lambda line: None)
    assert not (tmp_path / "g.csv").exists()


def _not_regular_files(submissions: Path) -> None:
    """ada hands in a FIFO, bob a link to the instructor's source, dan a folder named like the lesson;
    cy's learner folder is a link."""
    (submissions / "ada").mkdir(parents=True)
    os.mkfifo(submissions / "ada" / LESSON00.name)
    (submissions / "bob").mkdir()
    (submissions / "bob" / LESSON00.name).symlink_to(LESSON00)  # the instructor's source
    (submissions / "cy").symlink_to(ROOT / "notebooks", target_is_directory=True)
    (submissions / "dan" / LESSON00.name).mkdir(parents=True)


def test_fifo_and_links_are_skipped_not_read(tmp_path):
    _not_regular_files(tmp_path / "submissions")
    found, skipped = find_submissions(tmp_path / "submissions", [LESSON00])
    assert [(sub.learner, sub.valid) for sub in found] == [("ada", False), ("bob", False), ("dan", False)]
    assert all("not a regular file" in sub.notes[0] for sub in found), found
    assert any("ada/00_roadmap.ipynb: not a regular file" in s for s in skipped), skipped
    assert any("bob/00_roadmap.ipynb: not a regular file" in s for s in skipped), skipped
    assert any("cy/: a symbolic link" in s for s in skipped), skipped


def test_a_submission_that_is_not_a_regular_file_keeps_its_learners_row(tmp_path):
    """The learner does not vanish from the class list: a row, 0 for the lesson, with the reason."""
    _not_regular_files(tmp_path / "submissions")
    rows = grade_all(ROOT / "notebooks", tmp_path / "submissions", tmp_path / "course", tmp_path / "g.csv",
                     NONE, say=lambda line: None)
    assert [(r.learner, r.score, r.max_score) for r in rows] == [("ada", 0, 1), ("bob", 0, 1), ("dan", 0, 1)]
    kinds = {"ada": "a FIFO or device", "bob": "a link", "dan": "a folder"}
    for row in rows:
        assert f"00_roadmap.ipynb is not a regular file ({kinds[row.learner]}): not read" in row.reason, row


# --- the learner's lab: nbgrader's instructor tools are not there ------------------------------


@pytest.mark.browser
@pytest.mark.needs_chromium
def test_learners_lab_hides_formgrader_and_create_assignment(tmp_path, pw):
    """``make lab`` as a learner runs it: no Formgrader (server or page), no Create Assignment, no Course
    List, in the page config and in the browser; nbgrader's menu stays, holding only the Assignment List (the
    learners' one way to the Assignments tab: nbgrader's own Assignments plugin adds no menu entry)."""
    import urllib.error
    import urllib.request

    from labdriver import find_chromium, free_port

    chromium = find_chromium()
    port, token = free_port(), os.urandom(8).hex()
    flags = (f"--ServerApp.ip=127.0.0.1 --no-browser --allow-root --ServerApp.port={port} "
             f"--ServerApp.port_retries=0 --IdentityProvider.token={token} "
             f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}")
    lab = subprocess.Popen(
        ["make", "--no-print-directory", "-o", ".venv/.installed", "lab", f"WORK={tmp_path / 'work'}",
         f"LAB_BUILD={STUDENT_CACHE}", f"LAB_FLAGS={flags}",
         f"JUPYTER_LAB={Path(sys.executable).parent / 'jupyter'} lab"],
        cwd=ROOT, stdout=open(tmp_path / "lab.log", "w"), stderr=subprocess.STDOUT, start_new_session=True,
        env={k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        page = ""
        for _ in range(240):
            try:
                page = urllib.request.urlopen(f"{base}/lab?token={token}", timeout=10).read().decode()
                break
            except OSError:
                time.sleep(0.5)
        assert page, (tmp_path / "lab.log").read_text()[-2000:]
        found = re.search(r'<script id="jupyter-config-data"[^>]*>(.*?)</script>', page, re.S)
        assert found, page[:2000]
        config = json.loads(found.group(1))
        for plugin in ("formgrader", "create-assignment", "course-list"):
            assert f"@jupyter/nbgrader:{plugin}" in config["disabledExtensions"], config["disabledExtensions"]
        assert "@jupyter/nbgrader:menu" not in config["disabledExtensions"], config["disabledExtensions"]
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"{base}/formgrader?token={token}", timeout=10)
        assert missing.value.code == 404

        browser = pw.chromium.launch(executable_path=chromium)
        try:
            tab = browser.new_page()
            outside: list[str] = []
            tab.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base)
                      or route.request.url.startswith("data:") else (outside.append(route.request.url),
                                                                      route.abort()))
            tab.goto(f"{base}/lab?token={token}")
            tab.wait_for_selector(".lm-MenuBar-itemLabel", timeout=120_000)
            tab.wait_for_timeout(3000)  # every extension activated
            menus = tab.locator(".lm-MenuBar-itemLabel").all_inner_texts()
            assert "File" in menus, menus
            [nbgrader] = [m for m in menus if "nbgrader" in m.lower()]
            tab.locator(".lm-MenuBar-itemLabel", has_text=nbgrader).click()
            tab.wait_for_selector(".lm-Menu-itemLabel", timeout=30_000)
            items = [i for i in tab.locator(".lm-Menu-itemLabel").all_inner_texts() if i.strip()]
            assert items == ["Assignment List"], items
            tab.keyboard.press("Escape")
            tab.keyboard.press("Control+Shift+C")  # the command palette lists every command
            tab.wait_for_timeout(1000)
            palette = " ".join(tab.locator(".lm-CommandPalette-itemLabel").all_inner_texts()).lower()
            assert palette and "formgrader" not in palette and "create assignment" not in palette
        finally:
            browser.close()
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        lab.wait(timeout=60)
