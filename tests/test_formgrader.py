"""Written answers, graded by hand in nbgrader's formgrader, as the README tells an instructor to.

One learner submits lesson 02 with its written answer; `make grade`'s code grades it (the written points
wait); JupyterLab is started in the course folder (`cd build/course && jupyter lab`); through the
formgrader's own web API the submission is listed as needing a hand grade, its manual-grading page opens
and a mark is given; grading again keeps that mark, and the CSV's `score` counts it.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest
from browser_helpers import free_port
from conftest import ROOT

from selfattention.coursework.grading import GradeRow, Limits, grade_all

LESSON = ROOT / "notebooks" / "02_basic_self_attention.ipynb"
LIMITS = Limits(cell_timeout=120, submission_timeout=600)


def written_answers(path: Path) -> dict[str, float]:
    """grade_id -> points of the written answers (graded, solution, markdown cells) of a lesson."""
    nb = nbformat.read(path, as_version=4)
    return {
        c.metadata["nbgrader"]["grade_id"]: float(c.metadata["nbgrader"]["points"])
        for c in nb.cells
        if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("grade")
        and c.metadata["nbgrader"].get("solution")
    }


class Formgrader:
    """JupyterLab running in a course folder, and calls to the formgrader's web API with its token."""

    def __init__(self, course: Path, log: Path) -> None:
        self.token = secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{free_port()}"
        lab = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={self.url.rsplit(':', 1)[1]}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={course}"]
        if os.geteuid() == 0:
            lab.append("--allow-root")
        self.log = log.open("w", encoding="utf-8")
        # nbgrader finds the course through nbgrader_config.py in the folder it is started in.
        self.proc = subprocess.Popen(lab, cwd=course, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while True:
            try:
                self.get("/api/status")
                break
            except (urllib.error.URLError, ConnectionError):
                assert self.proc.poll() is None, f"JupyterLab exited: see {log}"
                assert time.monotonic() < deadline, f"JupyterLab did not answer in 90 s: see {log}"
                time.sleep(0.5)

    def request(self, path: str, method: str = "GET", body: dict | None = None) -> tuple[int, bytes]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"token {self.token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as response:
            return response.status, response.read()

    def get(self, path: str):
        return json.loads(self.request(path)[1])

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture(scope="module")
def graded_by_hand(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("formgrader")
    (base / "submissions" / "ann").mkdir(parents=True)
    shutil.copyfile(LESSON, base / "submissions" / "ann" / LESSON.name)

    def grade() -> GradeRow:
        [row] = grade_all(ROOT / "notebooks", base / "submissions", base / "course", base / "grades.csv",
                          LIMITS, say=lambda line: None)
        return row

    before = grade()
    server = Formgrader(base / "course", base / "jupyterlab.log")
    try:
        lesson = LESSON.stem
        [listed] = server.get(f"/formgrader/api/submitted_notebooks/{lesson}/{lesson}")
        status, page = server.request(f"/formgrader/submissions/{listed['id']}/")
        grades = server.get(f"/formgrader/api/grades?submission_id={listed['id']}")
        marks = {}
        for grade_ in grades:
            if grade_["needs_manual_grade"]:
                marks[grade_["name"]] = grade_["max_score"] - 0.5  # the instructor takes half a point off
                server.request(f"/formgrader/api/grade/{grade_['id']}", "PUT",
                               {"manual_score": marks[grade_["name"]]})
        after_marking = server.get(f"/formgrader/api/submitted_notebooks/{lesson}/{lesson}")[0]
    finally:
        server.close()
    return {"before": before, "listed": listed, "page": (status, page.decode()), "marks": marks,
            "after_marking": after_marking, "after": grade()}


def test_submission_waits_for_its_written_answers(graded_by_hand):
    written = written_answers(LESSON)
    assert written, f"{LESSON.name} has no written answer to grade by hand"
    before, listed = graded_by_hand["before"], graded_by_hand["listed"]
    assert before.to_grade_by_hand == sum(written.values())
    assert before.score == before.auto_score == before.auto_max_score
    assert listed["student"] == "ann" and listed["needs_manual_grade"]
    assert listed["max_written_score"] == sum(written.values()) and listed["written_score"] == 0


def test_manual_grading_page_shows_each_written_answer(graded_by_hand):
    status, page = graded_by_hand["page"]
    assert status == 200
    for grade_id in written_answers(LESSON):
        assert grade_id in page, f"{grade_id} not on the manual grading page"


def test_hand_marks_count_and_survive_grading_again(graded_by_hand):
    marks, after = graded_by_hand["marks"], graded_by_hand["after"]
    assert set(marks) == set(written_answers(LESSON))
    assert not graded_by_hand["after_marking"]["needs_manual_grade"]
    assert after.auto_score == after.auto_max_score
    assert after.score == after.auto_score + sum(marks.values())
    assert after.to_grade_by_hand == 0
