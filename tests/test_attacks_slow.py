"""Attacks on `make grade`, one crafted submission per attack class, graded in one run.

Slow (a grading run of a few minutes; markers ``grading`` and ``slow``): run by ``make test``, where a
missing sandbox fails instead of skipping (``--strict-system``), and alone by ``make test-attacks``.
Limits are small (memory 512 MiB, 64 processes, 64 MiB of disk) and every attack is
bounded by itself, so a limit that failed could not harm the machine.

Classes (the issue's): integrity (reach the instructor's data or a classmate's, forge a verdict),
availability (memory, processes, disk, daemons, output), honest learners' noise (warnings,
duplicated cells, BOM/CRLF, long names, an older release), the instructor's data (the gradebook,
a killed run, a concurrent run, a run without isolation).
"""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

from selfattention.coursework import lessons
from selfattention.coursework.folder import CourseFolder
from selfattention.coursework.results import MIME
from selfattention.coursework.sandbox import BASE_UID

pytestmark = pytest.mark.needs_sandbox

LESSON00 = ROOT / "notebooks" / "00_roadmap.ipynb"
LESSON03 = ROOT / "notebooks" / "03_matrix_form.ipynb"
LIMITS = {"MEMORY_LIMIT": "1G", "MAX_PROCESSES": 64, "DISK_LIMIT": "64M", "CELL_TIMEOUT": 30,
          "SUBMISSION_TIMEOUT": 180, "JOBS": 2}
RIGHT = "apple_weights = [0.1, 0.4, 0.5]"
DAEMON = f"sa-attack-daemon-{os.getpid()}"


def student_copy(lesson: Path, tmp: Path):
    from selfattention.coursework.course import generate_student_versions

    return nbformat.read(generate_student_versions(tmp, [lesson])[lesson.stem], as_version=4)


def lesson00(student, answer: str = "apple_weights = None", test_prefix: str = "", cells_before_test=()):
    """Lesson 00's student copy with ``answer`` in its answer cell (and code run before the test)."""
    nb = nbformat.from_dict(json.loads(json.dumps(student)))
    for cell in nb.cells:
        if lessons.grade_id(cell) == "warmup-answer":
            cell.source = answer
        if lessons.grade_id(cell) == "warmup-test" and test_prefix:
            cell.source = test_prefix + cell.source
    at = next(i for i, c in enumerate(nb.cells) if lessons.grade_id(c) == "warmup-test")
    nb.cells[at:at] = [nbformat.v4.new_code_cell(code) for code in cells_before_test]
    return nb


FIND_AND_USE = """
import os
found = []
for folder, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(folder, d) not in ("/proc", "/sys", "/dev", "/usr")]
    found += [os.path.join(folder, f) for f in files if f.endswith((".ipynb", ".db", ".json"))]
print("FOUND", len(found))
for path in found:
    try:
        text = open(path, encoding="utf-8", errors="ignore").read()
    except OSError:
        continue
    if ANSWER in text:                     # the instructor's solution, or a classmate's answer
        exec(ANSWER)
        print("USED", path)
""".replace("ANSWER", repr(RIGHT))

GRADEBOOK = """
import os, sqlite3
for folder, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(folder, d) not in ("/proc", "/sys", "/dev", "/usr")]
    for f in files:
        if f == "gradebook.db":
            db = sqlite3.connect(os.path.join(folder, f))
            db.execute("UPDATE grade SET auto_score = 6")
            db.commit()
            print("UPDATED", folder)
"""

PATCH_EVERYTHING = f"""
apple_weights = None
import builtins, numpy
numpy.allclose = lambda *a, **k: True
numpy.asarray = lambda *a, **k: numpy.array([0.46, 0.8])
builtins.abs = lambda x: 0
checks.check_warmup_weights = lambda *a, **k: print("Correct: patched")
from selfattention.coursework import results
results.record = lambda *a, **k: None
from IPython.display import display
display({{"{MIME}": {{"grade_id": "warmup-test", "value": [0.46, 0.8], "atol": 1.0, "rtol": 1.0}}}}, raw=True)
"""

TRANSFORMER = """
apple_weights = None
get_ipython().input_transformers_post.append(
    lambda lines: ["print('Correct: skipped')\\n"]
    if any("check_warmup_weights" in l for l in lines) else lines)
"""

FAKE_RECORD_THEN_FAIL = f"""
apple_weights = None
from IPython.display import display
def _before(info):
    fake = {{"grade_id": "warmup-test", "value": [0.5, 0.5], "atol": 10, "rtol": 10}}
    display({{"{MIME}": fake}}, raw=True)
    print("Correct: surely")
get_ipython().events.register("pre_run_cell", _before)
"""

REPORT_PIPE = """
apple_weights = None
import os
lines = b"GRADED report_pipe\\nGRADED zz_victim\\nFAILED correct error\\nREADY\\n"
print("STDOUT IS", os.readlink("/proc/self/fd/1"), "STDERR IS", os.readlink("/proc/self/fd/2"))
for fd in (1, 2):                           # what the kernel inherited as its standard streams
    os.write(fd, lines)
for path in ("/proc/1/fd/1", "/proc/1/fd/2", "/proc/1/fd/3", "/dev/stdout"):  # its parent's
    try:
        with open(path, "wb") as f:
            f.write(lines)
    except OSError:
        pass
"""

PLANT = """
apple_weights = None
import os
code = "apple_weights = [0.1, 0.4, 0.5]"
hook = f"get_ipython().events.register('pre_run_cell', lambda info: exec({code!r}, get_ipython().user_ns))\\n"
for home in (os.path.expanduser("~"), "/root", "/home"):
    try:
        os.makedirs(f"{home}/.ipython/profile_default/startup", exist_ok=True)
        with open(f"{home}/.ipython/profile_default/startup/00-plant.py", "w") as f:
            f.write(hook)
    except OSError:
        pass
"""

KILL_OTHERS = """
apple_weights = None
import os, signal
for pid in range(1, 40000):
    if pid != os.getpid():
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
"""

MEMORY = """
apple_weights = None
chunks = []
for _ in range(32):                       # 2 GiB at most, twice the limit
    chunks.append(bytearray(64 << 20))
"""

FORK_BOMB = """
apple_weights = None
import os, time
made = 0
for _ in range(500):                      # bounded
    try:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        made += 1
    except OSError:
        break
print("FORKED", made)
"""

DISK = f"""
import os
written = 0
try:
    with open(os.path.expanduser("~/filler"), "wb") as f:
        for _ in range(1024):                 # 1 GiB at most
            f.write(b"x" * (1 << 20)); f.flush(); written += 1 << 20
except OSError as exc:
    print("STOPPED", exc.errno)
print("WRITTEN", written)
{RIGHT}
"""

DAEMON_CODE = f"""
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sh", ["/bin/sh", "-c", "exec -a {DAEMON} sleep 600"])
    os._exit(0)
{RIGHT}
"""

HUGE_OUTPUT = """
from IPython.display import display
handle = display("small", display_id=True)
handle.update("y" * 10_000_000)           # an update 10 times the output limit
raise ValueError("z" * 10_000_000)         # an error message of 10 MB
"""

WARNS = f"""
import sys, warnings, logging
print("a note on stderr", file=sys.stderr)
warnings.warn("something is deprecated")
logging.getLogger("mine").warning("a logged warning")
{RIGHT}
"""


@pytest.fixture(scope="session")
def attacked(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("attacks")
    student = student_copy(LESSON00, base / "release-course")
    test_cell = next(c for c in student.cells if lessons.grade_id(c) == "warmup-test")
    subs: dict[str, object] = {
        "correct": lesson00(student, RIGHT),
        # integrity
        "read_source": lesson00(student, "apple_weights = None\n" + FIND_AND_USE),
        "copy_classmate": lesson00(student, "apple_weights = None\n" + FIND_AND_USE),
        "gradebook": lesson00(student, "apple_weights = None\n" + GRADEBOOK),
        "patch_everything": lesson00(student, PATCH_EVERYTHING),
        "transformer": lesson00(student, TRANSFORMER),
        "fake_record": lesson00(student, FAKE_RECORD_THEN_FAIL),
        "report_pipe": lesson00(student, REPORT_PIPE),
        "plant": lesson00(student, PLANT),
        "zz_after_plant": lesson00(student),
        "kill_others": lesson00(student, KILL_OTHERS),
        "zz_victim": lesson00(student, RIGHT),
        # availability
        "memory": lesson00(student, MEMORY),
        "fork_bomb": lesson00(student, FORK_BOMB),
        "disk": lesson00(student, DISK),
        "daemon": lesson00(student, DAEMON_CODE),
        "huge_output": lesson00(student, RIGHT, cells_before_test=[HUGE_OUTPUT]),
        # honest learners
        "warns": lesson00(student, WARNS),
        "old_release": lesson00(student, RIGHT, test_prefix="# the wording of an older release\n"),
        "a" * 245: lesson00(student, RIGHT),
    }
    dup_answer = lesson00(student, RIGHT)
    at = next(i for i, c in enumerate(dup_answer.cells) if lessons.grade_id(c) == "warmup-answer")
    dup_answer.cells.insert(at, nbformat.from_dict(json.loads(json.dumps(dup_answer.cells[at]))))
    subs["dup_answer"] = dup_answer
    dup_test = lesson00(student, RIGHT)
    dup_test.cells.append(nbformat.from_dict(json.loads(json.dumps(test_cell))))
    subs["dup_test"] = dup_test
    right_text = nbformat.writes(lesson00(student, RIGHT))
    subs["bom"] = "\ufeff" + right_text
    subs["crlf"] = right_text.replace("\n", "\r\n")
    for learner, nb in subs.items():
        folder = base / "submissions" / learner
        folder.mkdir(parents=True)
        text = nb if isinstance(nb, str) else nbformat.writes(nb)
        (folder / LESSON00.name).write_bytes(text.encode("utf-8"))
    (base / "submissions" / "fifo").mkdir()
    os.mkfifo(base / "submissions" / "fifo" / LESSON00.name)

    # lesson 03, right answers, with a warning printed by the learner's own function in the test cell
    source03 = nbformat.read(LESSON03, as_version=4)
    warn03 = nbformat.from_dict(json.loads(json.dumps(source03)))
    wrapped = 0
    for cell in warn03.cells:
        if lessons.is_code_answer(cell) and "def self_attention_batch" in cell.source:
            cell.source += ("\n_mine = self_attention_batch\n\ndef self_attention_batch(*args, **kwargs):\n"
                            "    import warnings, sys\n    warnings.warn('my attention is slow')\n"
                            "    print('debug', file=sys.stderr)\n    return _mine(*args, **kwargs)\n")
            wrapped += 1
    assert wrapped == 1, "lesson 03 no longer has the answer cell this attack wraps"
    nbformat.write(warn03, base / "submissions" / "warns" / LESSON03.name)

    start = time.monotonic()
    home_startup = Path.home() / ".ipython" / "profile_default" / "startup" / "00-plant.py"
    env = {**os.environ}
    proc = subprocess.run(
        ["make", "--no-print-directory", "-o", ".venv/.installed", "grade", f"NOTEBOOKS={ROOT / 'notebooks'}",
         f"SUBMISSIONS={base / 'submissions'}", f"COURSE={base / 'course'}", f"GRADES={base / 'grades.csv'}",
         *(f"{k}={v}" for k, v in LIMITS.items())],
        cwd=ROOT, capture_output=True, text=True, timeout=3000, env=env,
    )
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    with open(base / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {(r["learner"], r["lesson"]): r for r in csv.DictReader(f)}
    return {"rows": rows, "base": base, "stdout": proc.stdout, "elapsed": time.monotonic() - start,
            "home_planted": home_startup.exists()}


def row(attacked, learner: str, lesson: str = "00_roadmap") -> dict:
    return attacked["rows"][(learner, lesson)]


# learner: (auto score, words its reason must contain)
EXPECTED = {
    "correct": (1, ["all tests pass"]),
    "read_source": (0, ["Warm-up exercise (1 point): "]),
    "copy_classmate": (0, ["Warm-up exercise (1 point): "]),
    "gradebook": (0, ["Warm-up exercise (1 point): "]),
    "patch_everything": (0, ["Warm-up exercise (1 point): "]),
    "transformer": (0, ["Warm-up exercise (1 point): the hidden tests did not finish"]),
    "fake_record": (0, ["Warm-up exercise (1 point): "]),
    "report_pipe": (0, ["Warm-up exercise (1 point): apple_weights is None"]),
    "plant": (0, ["Warm-up exercise (1 point): "]),
    "zz_after_plant": (0, ["apple_weights is None"]),
    "kill_others": (0, ["in answer cell warmup-answer", "Warm-up exercise (1 point): not run: "]),  # it dies
    "zz_victim": (1, ["all tests pass"]),
    "memory": (0, ["more memory than the limit (1G) in answer cell warmup-answer",
                   "Warm-up exercise (1 point): not run: "]),
    "fork_bomb": (0, ["Warm-up exercise (1 point): apple_weights is None"]),  # the verdict is kept
    "disk": (1, ["all tests pass"]),
    "daemon": (1, ["all tests pass"]),
    "huge_output": (1, ["all tests pass", "raised ValueError"]),
    "warns": (1, ["all tests pass"]),
    "old_release": (1, ["all tests pass", "its test cell was changed"]),
    "a" * 245: (1, ["all tests pass"]),
    "dup_answer": (1, ["all tests pass", "appears 2 times"]),
    "dup_test": (1, ["all tests pass", "appears 2 times"]),
    "bom": (1, ["all tests pass"]),
    "crlf": (1, ["all tests pass"]),
}


@pytest.mark.parametrize("learner", list(EXPECTED), ids=[n[:20] for n in EXPECTED])
def test_attack_outcome(attacked, learner):
    score, words = EXPECTED[learner]
    got = row(attacked, learner)
    assert float(got["auto_score"]) == score, got
    assert float(got["score"]) <= float(got["max_score"]) == 1.0, got
    for word in words:
        assert word in got["reason"], f"{learner}: {word!r} not in {got['reason']!r}"
    assert "no error" not in got["reason"]
    assert got["isolation"].startswith("bwrap (memory 1G, 64 processes, disk 64M)"), got


def test_every_learner_graded_once_and_the_fifo_never_read(attacked):
    learners = {learner for learner, _ in attacked["rows"]}
    assert learners == {*EXPECTED, "fifo"}, learners ^ {*EXPECTED, "fifo"}
    assert "skipped fifo/00_roadmap.ipynb: not a regular file" in attacked["stdout"]
    fifo = row(attacked, "fifo")  # not read, yet the learner keeps a row: 0, with the reason
    assert float(fifo["score"]) == 0 and "not a regular file (a FIFO or device): not read" in fifo["reason"]


def test_a_warning_inside_the_learners_function_costs_nothing(attacked):
    got = row(attacked, "warns", "03_matrix_form")
    assert float(got["auto_score"]) == float(got["auto_max_score"]) > 0, got
    assert got["reason"].startswith("all tests pass"), got


def test_gradebook_holds_the_verdicts_not_the_attackers_update(attacked):
    with CourseFolder(attacked["base"] / "course").gradebook() as gb:
        for (learner, lesson), r in attacked["rows"].items():
            sub = gb.find_submission_notebook(lesson, lesson, learner)
            assert float(sub.score) == float(r["score"]) <= float(sub.max_score), (learner, lesson)


def _sandbox_processes(psutil) -> dict[tuple[int, float], tuple[str, list[str]]]:
    """Processes of ended sandboxes (or the attacker's daemon): (status, command line), keyed by
    (pid, start time)."""
    found = {}
    for proc in psutil.process_iter(["cmdline", "uids", "create_time", "status"]):
        uid = proc.info["uids"].real if proc.info["uids"] else 0
        cmdline = proc.info["cmdline"] or []
        # a sandboxed process whose kernel's folder is gone (its grading ended); a kernel whose
        # folder still exists belongs to a grading still running (another test, in parallel)
        share = next((Path(a).parent for a in cmdline if a.endswith("kernel.json")), None)
        ended = share is None or not share.exists()
        if (BASE_UID <= uid < BASE_UID + 4000 and ended) or DAEMON in " ".join(cmdline):
            found[(proc.pid, proc.info["create_time"])] = (proc.info["status"], cmdline)
    return found


def test_nothing_planted_in_the_graders_home_and_nothing_left_running(attacked):
    psutil = pytest.importorskip("psutil")
    assert not attacked["home_planted"]
    assert not (Path.home() / ".ipython" / "profile_default" / "startup" / "00-plant.py").exists()
    # A grading another test runs in parallel starts and ends sandboxed processes too (one that is
    # exiting shows no command line). A leak is a process that stays: it must be there at every scan
    # for 20 s. The attacker's daemon sleeps 600 s, so a daemon the grader failed to kill still fails.
    left = _sandbox_processes(psutil)
    deadline = time.monotonic() + 20
    while left and time.monotonic() < deadline:
        time.sleep(1)
        now = _sandbox_processes(psutil)
        left = {key: cmd for key, cmd in left.items() if key in now}
    assert not left, f"processes of the sandboxes outlived grading: {left}"


def test_disk_filler_left_nothing_behind_and_outputs_stay_small(attacked):
    sizes = [p.stat().st_size for p in attacked["base"].rglob("*") if p.is_file() and not p.is_fifo()]
    assert max(sizes) < 20_000_000, max(sizes)
    autograded = attacked["base"] / "course" / "autograded" / "huge_output" / "00_roadmap" / LESSON00.name
    assert autograded.stat().st_size < 5_000_000


# --- the instructor's data: a killed run, a concurrent run, a run without isolation ------------


def _grade_cmd(base: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "selfattention.coursework", "--notebooks", str(ROOT / "notebooks"), "grade",
            "--submissions", str(base / "submissions"), "--build", str(base / "course"),
            "--out", str(base / "grades.csv"), "--cell-timeout", "30", *extra]


def test_killed_run_keeps_the_last_csv_and_the_rows_done_a_second_run_is_refused(tmp_path):
    student = student_copy(LESSON00, tmp_path / "release-course")
    done = tmp_path / "first-run-killed"
    for i in range(4):
        folder = tmp_path / "submissions" / f"learner{i}"
        folder.mkdir(parents=True)
        # 25 s each while the first run (sealed off: it cannot see the marker) is to be killed; no wait in
        # the third run, not isolated, which sees the marker the test leaves once the first one is killed
        extra = [] if i == 0 else [f"import os, time\ntime.sleep(0 if os.path.exists({str(done)!r}) else 25)"]
        nbformat.write(lesson00(student, RIGHT, cells_before_test=extra), folder / LESSON00.name)
    previous = b"learner,lesson\nlearner0,00_roadmap\nlearner1,00_roadmap\nlearner2,00_roadmap\n"
    (tmp_path / "grades.csv").write_bytes(previous)
    first = subprocess.Popen(_grade_cmd(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
    partial = tmp_path / "grades.partial.csv"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and first.poll() is None:
        if partial.exists() and len(partial.read_text().splitlines()) >= 2:
            break
        time.sleep(1)
    assert first.poll() is None, first.stdout.read()
    second = subprocess.run(_grade_cmd(tmp_path), capture_output=True, text=True, timeout=300)
    assert second.returncode == 2 and "another grading run is using" in second.stderr, second
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    done.touch()
    assert (tmp_path / "grades.csv").read_bytes() == previous  # the last CSV, whole
    with open(partial, newline="", encoding="utf-8") as f:
        done = list(csv.DictReader(f))
    assert done and done[0]["learner"] == "learner0" and done[0]["auto_score"] == "1", done

    # the lock went with the killed process; without isolation, on purpose, every row says so
    third = subprocess.run(_grade_cmd(tmp_path, "--isolation", "none", "--submission-timeout", "300"),
                           capture_output=True, text=True, timeout=900)
    assert third.returncode == 0, third.stderr
    assert "WARNING: grading without isolation" in third.stdout
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4 and all(r["isolation"] == "none (not isolated)" for r in rows), rows
    assert all(r["auto_score"] == "1" for r in rows), rows
    assert not partial.exists()
    assert re.search(r"wrote 4 rows", third.stdout)


# --- feedback for the learners ------------------------------------------------------------------


def test_feedback_pages_show_scores_and_messages_without_hidden_tests_or_network(attacked, tmp_path):
    from selfattention.coursework.feedback import write_feedback

    pages = write_feedback(attacked["base"] / "course", tmp_path / "feedback", say=lambda line: None)
    assert len(pages) == len(attacked["rows"])
    hidden = []
    for lesson in (LESSON00, LESSON03):
        for cell in nbformat.read(lesson, as_version=4).cells:
            if "### BEGIN HIDDEN TESTS" in cell.source:
                region = cell.source.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
                hidden += [line.strip() for line in region.splitlines() if len(line.strip()) > 12]
    assert hidden
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "<script" not in text and "http://" not in text and "https://" not in text, page
        assert "HIDDEN TESTS" not in text and not [h for h in hidden if h in text], page
    blank = (tmp_path / "feedback" / "zz_after_plant" / "00_roadmap.html").read_text(encoding="utf-8")
    assert "Score: 0 / 1" in blank and "Warm-up exercise (1 point)" in blank
    assert "apple_weights is None" in blank
    right = (tmp_path / "feedback" / "correct" / "00_roadmap.html").read_text(encoding="utf-8")
    assert "Score: 1 / 1" in right and "correct" in right and RIGHT.split(" = ")[1] in right
    lesson03 = (tmp_path / "feedback" / "warns" / "03_matrix_form.html").read_text(encoding="utf-8")
    assert "<math" in lesson03 and "to be graded by hand" in lesson03
    nbgrader_copy = attacked["base"] / "course" / "feedback" / "correct" / "00_roadmap" / "00_roadmap.html"
    assert nbgrader_copy.read_text(encoding="utf-8") == right
