"""The graded round of docs/instructors.md, section 4, in Chromium, as each person does it, on the hub of
``tests/test_hub.py`` (its fixtures: the accounts, the hub, the course repository served by git daemon)
and with :mod:`labdriver.hub`'s helpers.

Each of three learners opens the guide's nbgitpuller link for lesson 00 (section 3), logs in on the hub's
login page it leads to, starts their server and lands in the lesson of their clone; opens the Assignments
tab from the Nbgrader menu (whose only item is Assignment List: no instructor tool), fetches ``00_roadmap``,
opens it, runs it (Run All), answers the warm-up exercise (right, wrong, blank), runs the answer and its
check, reads the check's message, saves and submits. The instructor's commands run in the instructor's own
server, as in a terminal there: ``nbgrader release_assignment`` and ``collect``, the course's sealed grader
(``make grade``'s code: 1, 0 and 0 points), the course's feedback pages (``make feedback``'s code) and
``nbgrader release_feedback``. Each learner then clicks Fetch Feedback and "(view feedback)", opens the page
the file browser shows and reads it: their score, the message their check gave, their answer, no test cell
and no other learner's name. No learner's kernel can list the submissions, the feedback, the instructor's
home or another learner's home, and their server's contents API (what the file browser reads) refuses the
instructor's source and the submissions.

When it fails, what each person saw is printed, and each learner's page is saved in ``test-artifacts/``.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import subprocess
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import pytest
import test_hub
from conftest import ROOT
from playwright import sync_api
from tiny_lesson import COURSE_ID

from labdriver import (
    ARTIFACTS,
    allow_only,
    cell,
    cell_index,
    kernel_status,
    launch_chromium,
    run_all,
    run_cells,
    save,
    saved_notebook,
    type_into_cell,
    wait_until,
)
from labdriver.hub import Hub, listed, nbgrader, start_servers

pytestmark = [pytest.mark.slow, pytest.mark.needs_chromium]
# tests/test_hub.py's fixtures, shared: the accounts, the hub and the course repository on git daemon.
accounts, hub, course_repository = test_hub.accounts, test_hub.hub, test_hub.course_repository

LESSON = "00_roadmap"
# Per learner: what they type in the warm-up's answer cell (None: nothing), the message its check then
# shows, and the points the grader gives.
ANSWERS = (
    ("apple_weights = [0.1, 0.4, 0.5]", "Correct: apple' = [0.36, 0.81]", 1),
    ("apple_weights = [0.2, 0.5, 0.3]", "leans towards technology by 0.27 only", 0),
    (None, "apple_weights is None", 0),
)
BLANK_MESSAGE = ANSWERS[2][1]
LOCAL = re.compile(r"^(http://127\.0\.0\.1[:/]|data:|blob:|about:)")
STEP_MS = 120_000  # the longest a page may take for one step (a server's start, a lesson's run)


def _guide_link(hub: Hub, repo: str) -> str:
    """docs/instructors.md, section 3: the nbgitpuller link for lesson 00."""
    query = urllib.parse.urlencode({"repo": repo, "branch": "main",
                                    "urlpath": f"lab/tree/self-attention/student/{LESSON}.ipynb"})
    return f"{hub.url}/hub/user-redirect/git-pull?{query}"


def _first_line(locator: sync_api.Locator) -> str:
    text = locator.inner_text().strip()
    return text.splitlines()[0][:140] if text else "(nothing)"


def _log_in_through_the_link(page: sync_api.Page, name: str, password: str, link: str,
                             saw: Callable[[str], None]) -> None:
    """The guide's link, the hub's login page, the server's start, and the lesson from the learner's clone."""
    page.goto(link)
    page.locator("#username_input").wait_for()
    saw(f"the link led to the hub's login page ({urllib.parse.urlparse(page.url).path})")
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.click("#login_submit")
    # The hub starts the server (user-redirect leads to /hub/spawn); nbgitpuller clones, JupyterLab opens.
    sync_api.expect(page.locator(".jp-NotebookPanel .jp-Cell").first).to_be_visible(timeout=STEP_MS)
    tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current").inner_text().strip()
    saw(f"JupyterLab opened the tab {tab!r} at {urllib.parse.urlparse(page.url).path}")
    assert tab == f"{LESSON}.ipynb", tab


def _close_all_tabs(page: sync_api.Page, saw: Callable[[str], None]) -> None:
    """File > Close All Tabs; asked whether to save the lesson they did not change, the learner discards."""
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^File$")).click()
    page.locator('.lm-Menu-item[data-command="application:close-all"]').click()
    dialog, panels = page.locator(".jp-Dialog"), page.locator(".jp-NotebookPanel")
    wait_until(page, lambda: dialog.count() > 0 or panels.count() == 0, STEP_MS / 1000, "the tabs to close",
               times=1)
    if dialog.count():
        saw(f"closing the lesson: {' '.join(dialog.inner_text().split())!r}: Discard")
        dialog.locator("button", has_text="Discard").click()
    sync_api.expect(panels).to_have_count(0)


def _open_the_assignments_tab(page: sync_api.Page, saw: Callable[[str], None]) -> list[str]:
    """Nbgrader > Assignment List; returns the items the Nbgrader menu listed."""
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Nbgrader$")).click()
    items = [t.strip() for t in page.locator(".lm-Menu-content .lm-Menu-item:visible").all_inner_texts()]
    saw(f"the Nbgrader menu lists {items}")
    page.locator('.lm-Menu-item[data-command="nbgrader:open-assignment-list"]').click()
    sync_api.expect(page.locator("#released_assignments_list")).to_be_visible()
    return items


def _answer_and_submit(page: sync_api.Page, home: Path, answer: str | None, message: str,
                       saw: Callable[[str], None]) -> None:
    """Fetch the lesson in the Assignments tab, open it, Run All, answer, run the check, save, submit."""
    released = page.locator("#released_assignments_list .list_item", has_text=LESSON).first
    sync_api.expect(released).to_be_visible()
    saw(f"Released assignments: {' '.join(released.inner_text().split())!r}")
    released.locator("button", has_text="Fetch").click()
    fetched = page.locator("#fetched_assignments_list")
    fetched.locator("a.assignment-notebooks-link", has_text=LESSON).click()  # shows its notebooks
    fetched.locator(".nested_list_item a", has_text=LESSON).click()
    path = home / LESSON / f"{LESSON}.ipynb"
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
    wait_until(page, lambda: kernel_status(page) == "idle", STEP_MS / 1000, "the lesson's kernel", times=3)
    notebook = saved_notebook(path)
    answer_cell = cell_index(notebook, "apple_weights = None")
    check = cell(page, cell_index(notebook, "checks.check_warmup_weights(apple_weights)"))
    run_all(page)
    sync_api.expect(check.locator(".jp-OutputArea")).to_contain_text(BLANK_MESSAGE)
    if answer is not None:
        type_into_cell(page, answer_cell, answer)
        run_cells(page, answer_cell, 2)
    check.scroll_into_view_if_needed()  # where the learner reads it (JupyterLab draws only what is in view)
    sync_api.expect(check.locator(".jp-OutputArea")).to_contain_text(message, use_inner_text=True)
    saw(f"answered {answer!r}; the check says {_first_line(check.locator('.jp-OutputArea'))!r}")
    save(page, path)
    page.locator(".lm-TabBar-tab", has_text="Assignments").click()
    page.locator("#fetched_assignments_list button", has_text="Submit").click()
    submitted = page.locator("#submitted_assignments_list .list_item", has_text=LESSON).first
    sync_api.expect(submitted).to_be_visible()
    saw(f"Submitted assignments: {' '.join(submitted.inner_text().split())!r}")


def _read_feedback(page: sync_api.Page, saw: Callable[[str], None]) -> str:
    """Fetch Feedback in the Assignments tab, "(view feedback)", open the page; returns its text."""
    page.locator(".lm-TabBar-tab", has_text="Assignments").click()
    page.locator("#refresh_assignments_list").click()
    submitted = page.locator("#submitted_assignments_list")
    sync_api.expect(submitted).to_contain_text("(feedback available to fetch)")
    submitted.locator("button", has_text="Fetch Feedback").click()
    submitted.locator("a", has_text="(view feedback)").click()  # the file browser shows the page's folder
    sync_api.expect(page.locator(".jp-FileBrowser-crumbs")).to_contain_text("feedback")
    page.locator(".jp-DirListing-item", has_text=f"{LESSON}.html").dblclick()
    body = page.frame_locator(".jp-HTMLViewer iframe").locator("body")
    sync_api.expect(body).to_contain_text("Score:")
    text = body.inner_text()
    shown = [line for line in text.splitlines() if line.startswith(("Score:", "Result:", f"{LESSON}:"))]
    saw(f"the feedback page reads {' | '.join(shown)[:300]!r}")
    return text


def _through_the_file_browser(page: sync_api.Page, hub: Hub, name: str, home: Path,
                              paths: list[Path]) -> list[int]:
    """What the learner's browser gets from their server's contents API (what the file browser reads) for
    each of ``paths``, named from their home ("../.."); their own lesson, the control, must be 200."""

    def status(relative: str) -> int:  # one URL segment ("/" encoded): no ".." for the URL parser to fold
        url = f"{hub.url}/user/{name}/api/contents/{urllib.parse.quote(relative, safe='')}"
        return page.request.get(url).status

    assert status(f"{LESSON}/{LESSON}.ipynb") == 200
    return [status(os.path.relpath(path, home)) for path in paths]


@pytest.mark.slow
def test_a_graded_round_in_chromium_as_each_person_does_it(
        hub: Hub, accounts: dict[str, pwd.struct_passwd], course_repository: tuple, pw: object) -> None:
    from selfattention.coursework.course import generate_student_versions
    from selfattention.coursework.feedback import write_feedback
    from selfattention.coursework.grading import RunPolicy, grade_all

    start = time.monotonic()
    repo, _publish = course_repository
    instructor, *learners = accounts
    seen: list[str] = []

    def saw(who: str) -> Callable[[str], None]:
        return lambda what: seen.append(f"{time.monotonic() - start:5.0f} s  {who}: {what}")

    # The instructor's private copy: the lesson, `make release`, their nbgrader settings; then the release.
    home = Path(accounts[instructor].pw_dir)
    course, build = home / "course", home / "course" / "build"
    (course / "notebooks").mkdir(parents=True)
    shutil.copyfile(ROOT / "notebooks" / f"{LESSON}.ipynb", course / "notebooks" / f"{LESSON}.ipynb")
    generate_student_versions(build, [course / "notebooks" / f"{LESSON}.ipynb"])
    (home / ".jupyter").mkdir()
    (home / ".jupyter" / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(build)!r}\n", encoding="utf-8")
    subprocess.run(["chown", "-R", f"{instructor}:", str(course), str(home / ".jupyter")], check=True)
    start_servers(hub, [instructor])
    nbgrader(hub, instructor, build, "release_assignment", LESSON)
    saw(instructor)(f"nbgrader release_assignment {LESSON}")

    browser = launch_chromium(pw)
    pages: dict[str, sync_api.Page] = {}
    refused: list[str] = []
    try:
        for name, (answer, message, _points) in zip(learners, ANSWERS, strict=True):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.set_default_timeout(STEP_MS)
            pages[name] = page = context.new_page()
            allow_only(page, LOCAL, refused)
            _log_in_through_the_link(page, name, hub.password, _guide_link(hub, repo), saw(name))
            clone = Path(accounts[name].pw_dir) / "self-attention" / "student" / f"{LESSON}.ipynb"
            assert clone.stat().st_uid == accounts[name].pw_uid, f"{name}'s clone is not theirs"
            _close_all_tabs(page, saw(name))
            assert _open_the_assignments_tab(page, saw(name)) == ["Assignment List"], "instructor tools"
            _answer_and_submit(page, Path(accounts[name].pw_dir), answer, message, saw(name))

        exchange = hub.shared / "exchange" / COURSE_ID
        private = {"the submissions": str(exchange / "inbound"), "the instructor's home": str(home),
                   "another learner's home": accounts[learners[1]].pw_dir}
        assert listed(hub, learners[0], private) == dict.fromkeys(private, "denied")
        source = course / "notebooks" / f"{LESSON}.ipynb"
        first = learners[0]
        statuses = _through_the_file_browser(pages[first], hub, first, Path(accounts[first].pw_dir),
                                             [source, exchange / "inbound"])
        saw(first)(f"the contents API (the file browser) answers {statuses} for the instructor's source and "
                   "the submissions")
        assert statuses == [404, 404]

        # The instructor collects; the course's grader grades what was collected, sealed (make grade).
        nbgrader(hub, instructor, build, "collect", LESSON)
        for name in learners:
            collected = build / "submitted" / name / LESSON / f"{LESSON}.ipynb"
            assert collected.exists(), f"nothing collected from {name}"
            (course / "submissions" / name).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(collected, course / "submissions" / name / f"{LESSON}.ipynb")
        graded = grade_all(course / "notebooks", course / "submissions", build, course / "grades.csv",
                           RunPolicy(), say=saw(instructor))
        rows = {row.learner: row for row in graded}
        scores = [rows[name].auto_score for name in learners]
        saw(instructor)(f"nbgrader collect; make grade: {dict(zip(learners, scores, strict=True))}")
        assert scores == [points for _answer, _message, points in ANSWERS], rows
        write_feedback(build, course / "feedback", say=lambda line: None)
        subprocess.run(["chown", "-R", f"{instructor}:", str(course)], check=True)
        nbgrader(hub, instructor, build, "release_feedback", LESSON)
        saw(instructor)(f"make feedback; nbgrader release_feedback {LESSON}")

        for name, (answer, message, points) in zip(learners, ANSWERS, strict=True):
            text = _read_feedback(pages[name], saw(name))
            [fetched] = (Path(accounts[name].pw_dir) / LESSON / "feedback").glob(f"*/{LESSON}.html")
            assert fetched.stat().st_uid == accounts[name].pw_uid, f"{name}'s page is not theirs"
            assert f"Score: {points} / 1" in text, (name, text[:300])
            [result] = [line for line in text.splitlines() if line.startswith("Result:")]
            assert result == "Result: correct" if points else message in result, (name, result)
            assert answer is None or answer in text, (name, answer, text)
            assert "HIDDEN TESTS" not in text and "check_warmup_weights" not in text, f"{name}'s page"
            assert name in text and all(other not in text for other in learners if other != name), name
        assert listed(hub, learners[0], {"the feedback": str(exchange / "feedback")}) == {
            "the feedback": "denied"}
        assert not refused, f"the pages asked for outside addresses: {refused[:5]}"
    except BaseException:
        ARTIFACTS.mkdir(exist_ok=True)
        for name, page in pages.items():
            with contextlib.suppress(sync_api.Error):  # the test's own error is the one to report
                page.screenshot(path=str(ARTIFACTS / f"hub-{name.rsplit('-', 1)[-1]}-failure.png"))
        raise
    finally:
        print("What each person saw:\n" + "\n".join(seen))
        browser.close()
