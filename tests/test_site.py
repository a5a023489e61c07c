"""The course website: built once from the committed notebooks, every page opened in headless Chromium.

The session fixture runs ``docs/build.py`` (what ``make site`` runs) into a temporary folder. Each page is
then opened from disk with every request that is not file:// (or inline data) aborted and recorded; its
report (console errors, maths, figures, widgets, the solutions' toggles) is checked test by test. The
built files themselves are searched for hidden tests.
"""

from __future__ import annotations

import html
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import NOTEBOOKS, ROOT, load_notebook, load_script

from labdriver import WIDGET_FALLBACKS, allow_only, js_true
from selfattention.coursework import lessons

pytestmark = pytest.mark.needs_chromium  # and Node.js/npm, for the build

DOCS = ROOT / "docs"
IDS = [p.stem for p in NOTEBOOKS]
# Requests a page may make: its own files and inline data. Everything else is aborted and recorded.
LOCAL = re.compile(r"^(file|data|blob|about):")
# Inline TeX in a markdown cell, once code spans are removed.
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)
CODE_SPAN = re.compile(r"`[^`]*`")
TAG = re.compile(r"<[^>]+>")


build = load_script(DOCS / "build.py")


def guide_pages() -> list[Path]:
    """The pages of docs/ besides the front page (the instructors' guide and any other)."""
    return [page for page in sorted(DOCS.glob("*.md")) if page.name != "index.md"]


# --- what the notebooks say the pages must contain ---------------------------------------------


def expected_math(nb: dict) -> int:
    """How many TeX spans the markdown of a lesson holds (as the site shows it)."""
    site = build.site_notebook(nb)
    return sum(
        len(MATH.findall(CODE_SPAN.sub("", build.source_of(cell))))
        for cell in site["cells"] if cell["cell_type"] == "markdown"
    )


def outputs_with(nb: dict, mime: str) -> int:
    return sum(mime in out.get("data", {}) for cell in nb["cells"] for out in cell.get("outputs", []))


def plain(markdown: str) -> str:
    """A line of Markdown as a page reads it: no code marks or emphasis, quotes straightened
    (the site typesets the README's straight quotes as curly ones)."""
    return re.sub(r"[`*]", "", markdown).translate(str.maketrans("\u201c\u201d\u2018\u2019", "\"\"''"))


def shown_text(nb: dict) -> str:
    """Everything a lesson shows openly: its sources outside hidden tests and its text outputs."""
    shown: list[str] = []
    for cell in nb["cells"]:
        source = build.source_of(cell)
        hidden = set(build.marked_lines(source, build.BEGIN_HIDDEN, build.END_HIDDEN))
        shown += [line.strip() for line in source.split("\n") if line not in hidden]
        for out in cell.get("outputs", []):
            text = out.get("text", out.get("data", {}).get("text/plain", ""))
            text = "".join(text) if isinstance(text, list) else text
            shown += [line.strip() for line in text.split("\n")]
    return "\n".join(shown)


def secret_lines(nb: dict) -> set[str]:
    """The hidden-test lines of a lesson that no lesson shows openly, not even inside a longer line.

    A fragment such as ``try:`` or ``requires_grad=True)`` that some lesson prints in plain sight is
    no secret when a page shows it; a line found nowhere else is.
    """
    course = "\n".join(shown_text(load_notebook(path)) for path in NOTEBOOKS)
    return {line for line in build.hidden_test_lines(nb) if line not in course and not _BARE.match(line)}


#: A bare statement (``try:``, ``else:``, ``pass``) gives nothing away; pages' scripts hold them too.
_BARE = re.compile(r"^\s*(try|else|finally|pass|break|continue|return|except(\s+\w+(\s+as\s+\w+)?)?)"
                   r"\s*:?\s*$")


def solution_texts(nb: dict) -> list[tuple[str, list[str]]]:
    """(kind, pieces) for each answer cell, in order: the text its model answer must show.

    A code answer gives the lines of its solution region; a written answer the runs of plain words of
    its solution (no maths, markup or quotes, which the page typesets or curls).
    """
    texts = []
    for index, cell in enumerate(nb["cells"]):
        if not lessons.is_answer(cell):
            continue
        source = build.source_of(cell)
        region = build.marked_lines(source, build.BEGIN_SOLUTION, build.END_SOLUTION, f"cell {index}")
        if cell["cell_type"] == "code":
            pieces = [line.strip() for line in region]
        else:
            plain = MATH.sub("|", CODE_SPAN.sub("|", "\n".join(region)))  # runs stop at maths and code
            pieces = [run.strip() for run in re.findall(r"[A-Za-z0-9 ,;:.()]+", plain)]
        texts.append((cell["cell_type"], [" ".join(p.split()) for p in pieces if len(p.strip()) >= 3]))
    return texts


# --- building and opening the site -------------------------------------------------------------


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """Build the site once (npm ci first if docs/node_modules is stale); returns its folder."""
    tmp = tmp_path_factory.mktemp("site")
    start = time.perf_counter()
    index = build.build(tmp / "site", tmp / "src")
    pages = list(index.parent.rglob("*.html"))
    print(f"\nsite: built {len(pages)} pages in {time.perf_counter() - start:.1f} s")
    return index.parent


@dataclass
class PageReport:
    loaded: bool = False
    console_errors: list[str] = field(default_factory=list)
    outside_requests: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    math_nodes: int = -1  # Sphinx's math elements in the page's text
    math_untypeset: int = -1  # ... of which MathJax did not typeset
    math_errors: int = -1
    raw_tex: list[str] = field(default_factory=list)  # text outside code still holding $$ or \( \[
    images: list[tuple[str, int]] = field(default_factory=list)  # (src, naturalWidth) of every <img>
    output_images: int = -1  # <img> in cell outputs outside widgets
    widget_views: int = -1
    widgets_rendered: int = -1
    text: str = ""  # the page's visible text
    links: list[str] = field(default_factory=list)  # hrefs in the page's main text, in order
    rows: list[list[str]] = field(default_factory=list)  # the text of each table row's cells
    wide_code: list[int] = field(default_factory=list)  # px hidden sideways, per code block that scrolls
    solutions: list[dict] = field(default_factory=list)  # the "Show solution" toggles, as first shown
    opened: dict[str, dict] = field(default_factory=dict)  # kind -> the first of that kind, once opened


RENDERED_WIDGETS = ".widget-subarea > .jupyter-widgets"

PAGE_FACTS = """() => {
  const main = document.querySelector('article') || document.body;
  const maths = [...main.querySelectorAll('.math')];
  const raw = [];
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode());) {
    if (node.parentElement.closest('pre, code, script, style, .highlight')) continue;
    if (/\\$\\$|\\\\\\(|\\\\\\[/.test(node.textContent)) raw.push(node.textContent.slice(0, 80));
  }
  return {
    math_nodes: maths.length,
    math_untypeset: maths.filter(m => !m.querySelector('.MathJax_CHTML')).length,
    math_errors: document.querySelectorAll('.mjx-merror, .MathJax_Error, .mjx-noError').length,
    raw_tex: raw,
    images: [...document.images].map(img => [img.getAttribute('src').slice(0, 80), img.naturalWidth]),
    output_images: [...main.querySelectorAll('.cell_output img')]
      .filter(img => !img.closest('.jupyter-widgets')).length,
    widget_views: document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length,
    widgets_rendered: document.querySelectorAll('.widget-subarea > .jupyter-widgets').length,
    text: main.innerText,
    links: [...main.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
    rows: [...main.querySelectorAll('tr')].map(row => [...row.cells].map(cell => cell.innerText.trim())),
    wide_code: [...main.querySelectorAll('pre')].map(pre => pre.scrollWidth - pre.clientWidth)
      .filter(hidden => hidden > 1),
  };
}"""

# The "Show solution" toggles of the page, in order (numbered in data-toggle for OPEN_TOGGLE): open
# or closed, their text, whether any of their content (all but the summary) is shown.
SOLUTION_TOGGLES = """() => [...document.querySelectorAll('article details')]
  .filter(d => d.querySelector('summary').innerText.trim() === 'Show solution')
  .map((d, i) => { d.dataset.toggle = i; return {open: d.open, text: d.textContent.replace(/\\s+/g, ' '),
    visible: [...d.children].some(c => c.tagName !== 'SUMMARY' && c.checkVisibility())}; })"""

# Open the i-th toggle with a click on its summary, as a reader does; then report it as above.
OPEN_TOGGLE = """i => {
  const d = document.querySelector(`details[data-toggle="${i}"]`);
  d.querySelector('summary').click();
  return new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(() => ok({open: d.open,
    visible: [...d.children].some(c => c.tagName !== 'SUMMARY' && c.checkVisibility())}))));
}"""


def open_page(browser, path: Path, kinds: list[str] = ()) -> PageReport:
    """Open a page and report on it; ``kinds`` (code or markdown, one per solution) says which
    solution toggles to open: the first of each kind."""
    report = PageReport()
    page = browser.new_page(viewport={"width": 1280, "height": 900})

    allow_only(page, LOCAL, report.outside_requests)
    page.on("console", lambda msg: msg.type == "error" and report.console_errors.append(msg.text))
    page.on("pageerror", lambda exc: report.console_errors.append(f"uncaught: {exc}"))
    page.on("requestfailed", lambda req: report.failed_requests.append(f"{req.url} ({req.failure})"))
    try:
        page.goto(path.as_uri(), wait_until="load")
        report.loaded = js_true(page, "window.MathJax && window.MathJax.isReady")
        if not report.loaded:
            return report
        page.evaluate(
            "new Promise((ok, fail) => { setTimeout(() => fail(new Error('MathJax still busy')), 60000);"
            " MathJax.Hub.Queue(() => { ok(); }); })"
        )
        views = page.evaluate(
            "document.querySelectorAll('script[type=\"application/vnd.jupyter.widget-view+json\"]').length"
        )
        js_true(page, f"document.querySelectorAll({RENDERED_WIDGETS!r}).length >= {views}")
        page.evaluate("Promise.all([...document.images].map(img => img.decode().catch(() => null)))")
        for key, value in page.evaluate(PAGE_FACTS).items():
            setattr(report, key, value if key != "images" else [tuple(v) for v in value])
        report.solutions = page.evaluate(SOLUTION_TOGGLES)
        for index, kind in enumerate(kinds):
            if kind not in report.opened and index < len(report.solutions):
                report.opened[kind] = page.evaluate(OPEN_TOGGLE, index)
    finally:
        page.close()
    return report


_reports: dict[str, PageReport] = {}


def page_report(browser, site: Path, relative: str) -> PageReport:
    """The report of one page, opened once; a lesson's page is also searched for its solutions."""
    if relative not in _reports:
        lesson = ROOT / "notebooks" / f"{Path(relative).stem}.ipynb"
        solutions = solution_texts(load_notebook(lesson)) if lesson in NOTEBOOKS else []
        _reports[relative] = open_page(browser, site / relative, [kind for kind, _ in solutions])
    return _reports[relative]


@pytest.fixture(params=NOTEBOOKS, ids=IDS)
def lesson(request, site, browser) -> tuple[dict, PageReport]:
    """(notebook, report of its page opened in Chromium), opened once per lesson."""
    relative = f"{build.LESSONS}/{request.param.stem}.html"
    return load_notebook(request.param), page_report(browser, site, relative)


# --- the transform, on crafted cells -----------------------------------------------------------


def test_answer_cell_becomes_the_learners_version_and_a_folded_model_answer():
    code = "def f(x):\n    '''x: (T,)'''\n    ### BEGIN SOLUTION\n    return x * 2\n    ### END SOLUTION"
    written = "YOUR ANSWER HERE\n\n### BEGIN SOLUTION\nBecause $a = b$.\n### END SOLUTION"
    test = "check(f)\n### BEGIN HIDDEN TESTS\nassert f(1) == 2\n### END HIDDEN TESTS"
    nb = {"metadata": {}, "cells": [
        {"cell_type": "code", "source": code, "outputs": [], "execution_count": 1,
         "metadata": {"nbgrader": {"solution": True}}},
        {"cell_type": "markdown", "source": written, "metadata": {"nbgrader": {"solution": True}}},
        {"cell_type": "code", "source": test, "outputs": [], "execution_count": 2,
         "metadata": {"nbgrader": {"grade": True}}},
    ]}
    cells = build.site_notebook(nb)["cells"]
    assert [build.source_of(c) for c in cells[:2]] == [
        "def f(x):\n    '''x: (T,)'''\n    # YOUR CODE HERE\n    pass",
        "def f(x):\n    '''x: (T,)'''\n    return x * 2",
    ]
    assert {"hide-cell", "solution"} <= set(cells[1]["metadata"]["tags"])
    assert cells[1]["metadata"]["mystnb"]["code_prompt_show"] == "Show solution"
    folded = build.source_of(cells[2])
    assert folded.startswith('<details class="solution">\n<summary>Show solution</summary>')
    assert "Because $a = b$." in folded and "YOUR ANSWER" not in folded
    assert build.source_of(cells[3]) == "check(f)"
    assert build.source_of(nb["cells"][0]) == code, "the lesson itself is not changed"


def test_slide_only_cells_and_test_outputs_are_left_out():
    """The page is the learner's view: no slide-only cell; no output under a test cell (the instructor's
    "Correct: ..." would give the answer away), while other outputs stay."""
    shown = {"output_type": "stream", "name": "stdout", "text": "0.5\n"}
    nb = {"metadata": {}, "cells": [
        {"cell_type": "markdown", "source": "## 1 · Title", "metadata": {}},
        {"cell_type": "markdown", "source": "- a bullet", "metadata": {"tags": ["slide-only"]}},
        {"cell_type": "code", "source": "print(0.5)", "outputs": [shown], "execution_count": 1,
         "metadata": {}},
        {"cell_type": "code", "source": "check(x)", "execution_count": 2,
         "metadata": {"nbgrader": {"grade": True}},
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "Correct: x = 42\n"}]},
    ]}
    cells = build.site_notebook(nb)["cells"]
    assert [build.source_of(c) for c in cells] == ["## 1 · Title", "print(0.5)", "check(x)"]
    assert cells[1]["outputs"] == [shown] and cells[2]["outputs"] == []


def test_colab_setup_cell_is_left_out_and_the_links_stay():
    nb = {"metadata": {}, "cells": [
        {"cell_type": "markdown", "source": "# 00 · Title", "metadata": {}},
        {"cell_type": "markdown", "source": "[Open in Colab](x)", "metadata": {"tags": ["course-links"]}},
        {"cell_type": "code", "source": "import sys", "outputs": [], "execution_count": 1,
         "metadata": {"tags": ["course-setup"]}},
    ]}
    cells = build.site_notebook(nb)["cells"]
    assert [build.source_of(c) for c in cells] == ["# 00 · Title", "[Open in Colab](x)"]


@pytest.mark.parametrize(("source", "message"), [
    ("x = 1\n### BEGIN HIDDEN TESTS\nassert x", "'### BEGIN HIDDEN TESTS' at line 2 is never closed"),
    ("### END HIDDEN TESTS", "'### END HIDDEN TESTS' at line 1 without '### BEGIN HIDDEN TESTS'"),
])
def test_unbalanced_markers_are_named(source, message):
    nb = {"metadata": {}, "cells": [{"cell_type": "code", "source": source, "metadata": {}, "outputs": []}]}
    with pytest.raises(ValueError, match=re.escape(f"lesson.ipynb, cell 0: {message}")):
        build.site_notebook(nb, "lesson.ipynb")


def test_guide_links_to_lessons_point_at_their_pages():
    page = "See [lesson 02](../notebooks/02_basic_self_attention.ipynb#matrix) and [x](../README.md)."
    assert build.lesson_links(page) == (
        f"See [lesson 02]({build.LESSONS}/02_basic_self_attention.ipynb#matrix) and [x](../README.md)."
    )


# --- the built files ---------------------------------------------------------------------------


def test_every_lesson_and_guide_page_is_built(site):
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    expected = {f"{build.LESSONS}/{p.stem}.html" for p in NOTEBOOKS} | {"index.html"}
    expected |= {f"{p.stem}.html" for p in guide_pages()}
    assert expected <= pages, f"missing pages: {sorted(expected - pages)}"


GUIDE_STEMS = {p.stem for p in guide_pages()}


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_no_hidden_test_anywhere_in_the_site(site, nb_path):
    secrets = secret_lines(load_notebook(nb_path))
    assert secrets, f"{nb_path.name}: a lesson with graded tests has hidden tests"
    for file in site.rglob("*"):
        if file.suffix not in (".html", ".js", ".json", ".txt", ".css", ".ipynb"):
            continue
        raw = file.read_text(encoding="utf-8", errors="replace")
        text = html.unescape(TAG.sub("", raw))
        # The instructors' guide names the markers (where an instructor changes the hidden tests); the
        # lessons' pages and everything else must not hold them. No file may show a hidden-test line.
        if file.suffix == ".html" and file.stem in GUIDE_STEMS and file.parent == site:
            pass
        else:
            marker = any("HIDDEN TESTS" in content for content in (raw, text))
            assert not marker, f"{file.relative_to(site)} holds a hidden-test marker"
        leaked = sorted(line for line in secrets if line in text)
        assert not leaked, f"{file.relative_to(site)} shows hidden-test lines of {nb_path.name}: {leaked[:3]}"


def test_no_page_loads_anything_remote(site):
    """No script, stylesheet, image or font URL in the built pages and styles points off the machine."""
    remote = re.compile(
        r"""(?:src|href)\s*=\s*["']((?:https?:)?//[^"']+)|url\(\s*['"]?((?:https?:)?//[^)'"]+)"""
    )
    found = {}
    for file in [*site.rglob("*.html"), *site.rglob("*.css")]:
        text = file.read_text(encoding="utf-8", errors="replace")
        # <a href> links are for the reader to follow; anything the page itself loads must be local.
        urls = [a or b for a, b in remote.findall(re.sub(r"<a\s[^>]*>", "", text))]
        if urls:
            found[file.relative_to(site).as_posix()] = urls[:3]
    assert not found, f"remote URLs loaded by pages: {found}"


# --- every page in the browser -----------------------------------------------------------------


def test_every_page_loads_without_error_or_outside_request(site, browser):
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    assert len(pages) >= len(NOTEBOOKS) + 1
    problems = {}
    for relative in pages:
        report = page_report(browser, site, relative)
        issues = {
            "did not load MathJax": not report.loaded,
            "console errors": report.console_errors,
            "requests off the machine": report.outside_requests,
            "failed requests": report.failed_requests,
        }
        issues = {name: value for name, value in issues.items() if value}
        if issues:
            problems[relative] = issues
    assert not problems, problems


def test_contents_page_links_every_lesson_in_order_and_the_guide(site, browser):
    report = page_report(browser, site, "index.html")
    lessons = [f"{build.LESSONS}/{p.stem}.html" for p in NOTEBOOKS]
    linked = [href for href in report.links if href in lessons]
    assert list(dict.fromkeys(linked)) == lessons, "the contents page lists every lesson, in order"
    ideas = build.readme_ideas()
    for nb_path in NOTEBOOKS:
        nb = load_notebook(nb_path)
        rows = [row for row in report.rows if row and row[0].startswith(nb_path.name[:2] + " · ")]
        assert len(rows) == 1, f"{nb_path.name}: {len(rows)} rows in the table of lessons"
        _, idea, time_ = rows[0]
        assert time_ == build.lesson_time(nb).replace(" ", "\u00a0"), f"{nb_path.name}: time {time_!r}"
        expected = ideas.get(nb_path.name, build.lesson_title(nb))
        assert plain(idea) == plain(expected), f"{nb_path.name}: idea {idea!r}"
    for guide in guide_pages():
        assert f"{guide.stem}.html" in report.links, f"the contents page does not link {guide.name}"


def test_lesson_maths_is_typeset(lesson):
    nb, report = lesson
    assert report.loaded
    assert report.math_nodes >= expected_math(nb) > 0, (report.math_nodes, expected_math(nb))
    assert report.math_untypeset == 0, f"{report.math_untypeset} formulas left as TeX"
    assert report.math_errors == 0, f"{report.math_errors} formulas failed to typeset"
    assert report.raw_tex == [], f"raw TeX in the text: {report.raw_tex[:3]}"


def test_lesson_code_needs_no_sideways_scrolling(lesson):
    _, report = lesson
    hidden = report.wide_code
    assert not hidden, f"{len(hidden)} code blocks scroll sideways (px hidden: {hidden})"


def test_lesson_figures_are_images_that_loaded(lesson):
    nb, report = lesson
    # The site drops slide-only cells and the output under a test cell, so count what its view keeps.
    assert report.output_images == outputs_with(build.site_notebook(nb), "image/png") > 0
    broken = [src for src, width in report.images if width == 0]
    assert not broken, f"images that did not load: {broken}"
    assert "<Figure size" not in report.text, "a figure is shown as its text fallback"


def test_lesson_saved_widgets_render(lesson):
    nb, report = lesson
    views = outputs_with(nb, "application/vnd.jupyter.widget-view+json")
    assert report.widget_views == views > 0
    assert report.widgets_rendered >= views, f"{views} widget views saved, {report.widgets_rendered} rendered"
    fallbacks = [text for text in WIDGET_FALLBACKS if text in report.text]
    assert not fallbacks, f"widgets shown as text: {fallbacks}"


def test_lesson_solutions_are_folded_in_closed_toggles(lesson):
    """One closed "Show solution" toggle per answer cell, holding its model answer, shown only once opened."""
    nb, report = lesson
    solutions = solution_texts(nb)
    assert solutions, "every lesson has graded exercises"
    assert len(report.solutions) == len(solutions), (len(report.solutions), len(solutions))
    for number, ((kind, pieces), toggle) in enumerate(zip(solutions, report.solutions, strict=True)):
        missing = [piece for piece in pieces if piece not in toggle["text"]]
        assert pieces and not missing, f"toggle {number} lacks its {kind} answer's {missing[:2]}"
        assert not toggle["open"] and not toggle["visible"], f"toggle {number} ({kind}) shows its answer"
    assert set(report.opened) == {kind for kind, _ in solutions}
    for kind, opened in report.opened.items():
        assert opened == {"open": True, "visible": True}, f"the first {kind} answer, once opened: {opened}"

