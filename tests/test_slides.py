"""The lecture decks: built offline from the lessons, opened in headless Chromium.

The session fixture runs ``slides/build.py`` once (what ``make slides`` runs). Each deck is
then opened from disk at 1280x720 with every request that leaves file:// aborted and recorded,
walked slide by slide (sizes, on-screen font sizes, code blocks, the controls' corner), stepped
through with ArrowRight, PageDown and Space alone, and its report is checked test by test.
A screenshot of a typical slide of each deck (text and code) goes to ``test-artifacts/slides/``.
"""

from __future__ import annotations

import json
import re
import time
import warnings
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import NOTEBOOKS, ROOT, load_notebook, load_script

from labdriver import allow_only, js_true
from selfattention.coursework import lessons

pytestmark = pytest.mark.needs_chromium  # and Node.js/npm, for the build

SLIDES = ROOT / "slides"
ARTIFACTS = ROOT / "test-artifacts" / "slides"
JS = Path(__file__).resolve().parent / "js"  # the scripts the tests run in a deck
SCREEN = (1280, 720)  # the projector the decks must fit
# Smallest sizes on that screen, in pixels: text of the markdown cells, and code (cells, outputs, widgets).
MIN_BODY_PX, MIN_CODE_PX = 24, 20
MAX_CODE_LINES = 15  # a code cell shown on a slide; longer ones are slides-output-only or skip
NEXT_KEYS = ("ArrowRight", "PageDown", "Space")  # what a presenter (or a clicker) presses for "next"
# Slides that do not fit the canvas because one cell alone is taller than a slide (a long
# code cell with its output): splitting slides cannot fix them, shortening the cell can.
# Keyed by lesson, then by how the slide's first cell begins. Any other slide must fit.
KNOWN_OVERFLOW: dict[str, set[str]] = {}  # every slide fits; cells too tall are tagged slides-output-only
# Requests a deck may make: its own files, and inline data.
LOCAL = re.compile(r"^(file|data|blob|about):|^https?://(127\.0\.0\.1|localhost|\[::1\])(:\d+)?/")
# TeX in a markdown cell, once code spans are removed (inline maths may run over a line break, not over
# a blank line).
MATH = re.compile(r"\$\$.+?\$\$|\$(?:[^$\n]|\n(?![ \t]*\n))+?\$", re.S)
CODE_SPAN = re.compile(r"`[^`]*`")
# A stylesheet's remote references: url(https://...) (imports, web fonts) and @import "https://...".
REMOTE_IMPORT = re.compile(r"""url\(\s*['"]?((?:https?:)?//[^)'"]+)|@import\s+['"]((?:https?:)?//[^'"]+)""")


build = load_script(SLIDES / "build.py")
IDS = [p.stem for p in NOTEBOOKS]


# --- what the notebook says the deck must contain ------------------------------------------


def slide_types(nb: dict) -> list[str]:
    return [cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-") for cell in nb["cells"]]


def deck_types(nb: dict) -> list[str]:
    """The slide type of each cell as the default deck sees it: a written answer (a markdown
    solution cell) is left out of the deck, like a ``skip`` cell."""
    return [
        "skip" if cell["cell_type"] == "markdown" and is_solution(cell) else kind
        for cell, kind in zip(nb["cells"], slide_types(nb), strict=True)
    ]


def is_solution(cell: dict) -> bool:
    return lessons.is_answer(cell)


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def expected_slides(nb: dict) -> list[list[dict]]:
    """The visible cells of each slide (reveal.js counts slides and sub-slides alike).

    A ``slide`` or ``subslide`` cell opens a new one; ``skip`` and ``notes`` cells show
    nothing; the first visible cell opens the first slide whatever its type.
    """
    slides: list[list[dict]] = []
    for cell, kind in zip(nb["cells"], deck_types(nb), strict=True):
        if kind in ("skip", "notes"):
            continue
        if kind in ("slide", "subslide") or not slides:
            slides.append([])
        slides[-1].append(cell)
    return slides


def first_line(cell: dict) -> str:
    return source(cell).strip().split("\n")[0]


def sections(nb: dict) -> list[tuple[str, list[dict]]]:
    """The lesson's sections: (title, cells up to the next section) for each ``slide`` markdown
    cell whose first line is a ``## `` heading. Cells before the first section are left out."""
    found: list[tuple[str, list[dict]]] = []
    for cell, kind in zip(nb["cells"], slide_types(nb), strict=True):
        if cell["cell_type"] == "markdown" and kind == "slide" and first_line(cell).startswith("## "):
            found.append((first_line(cell), []))
        if found:
            found[-1][1].append(cell)
    return found


def notes_cells(cells: list[dict]) -> list[dict]:
    """The ``notes`` cells among ``cells`` that say something."""
    return [c for c in cells if c.get("metadata", {}).get("slideshow", {}).get("slide_type") == "notes"
            and source(c).strip()]


# A line of a solution or hidden test says nothing on its own when it is only punctuation,
# a stub, or a keyword (blank, "...", "pass", "else:", ")" and the like).
TRIVIAL_LINE = re.compile(r"^[\W_]*$|^(\.\.\.|pass|else:|try:|finally:|return|break|continue)$")
MARKER = re.compile(r"#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)")


def secret_lines(nb: dict) -> list[str]:
    """The lines a learner must not see: those between ``### BEGIN SOLUTION`` / ``### END
    SOLUTION`` and ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS`` (the markers too), and
    every line of a written answer (a markdown solution cell), stripped.

    Left out: trivial lines (TRIVIAL_LINE) and lines that the lesson also shows outside any
    solution or hidden test (an ``import numpy as np`` in a solution gives nothing away).
    """
    secret: set[str] = set()
    public: set[str] = set()
    for cell in nb["cells"]:
        lines = source(cell).split("\n")
        if cell["cell_type"] == "markdown" and is_solution(cell):
            secret.update(line.strip() for line in lines)
            continue
        inside = False
        for line in lines:
            marker = MARKER.search(line)
            if marker:
                secret.add(line.strip())
                inside = marker.group(1) == "BEGIN"
                continue
            (secret if inside else public).add(line.strip())
    return sorted(line for line in secret - public if not TRIVIAL_LINE.match(line))


class _Text(HTMLParser):
    """The text of a page, line by line, as a browser would show it with everything visible
    (scripts' text included: the saved widget state is a script)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def deck_text(deck: Path) -> str:
    parser = _Text()
    parser.feed(deck.read_text(encoding="utf-8"))
    return "".join(parser.parts)


def leaked(nb: dict, deck: Path) -> list[str]:
    """The secret lines of ``nb`` that its deck contains (as a whole line, or inside saved
    widget state, where a line's text sits inside JSON strings)."""
    text = deck_text(deck)
    lines = {line.strip() for line in text.split("\n")}
    # a JSON string: "    e = np.exp(x)\n", with its escaped newline
    lines |= {line.strip().strip('",').strip() for line in text.replace("\\n", "\n").split("\n")}
    return [line for line in secret_lines(nb) if line in lines]


def typical_slide(nb: dict) -> int:
    """Index of a typical content slide: the first with a markdown cell and a code cell that
    shows its code and an output, past the title; else the middle slide."""
    slides = expected_slides(nb)
    for index, cells in enumerate(slides[1:], start=1):
        kinds = {c["cell_type"] for c in cells}
        shows_code = any(
            c["cell_type"] == "code" and c.get("outputs") and source(c).strip()
            and "slides-output-only" not in c.get("metadata", {}).get("tags", [])
            for c in cells
        )
        if "markdown" in kinds and shows_code:
            return index
    return len(slides) // 2


def has_math(cell: dict) -> bool:
    if cell["cell_type"] != "markdown":
        return False
    text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    return bool(MATH.search(CODE_SPAN.sub("", text)))


def remote_imports(css: Path) -> list[str]:
    """The remote URLs a stylesheet imports (a theme's web fonts, say)."""
    return remote_css_urls(css.read_text(encoding="utf-8"))


def remote_css_urls(css: str) -> list[str]:
    return [a or b for a, b in REMOTE_IMPORT.findall(css)]


# --- building and opening the decks --------------------------------------------------------


@pytest.fixture(scope="session")
def decks() -> dict[str, Path]:
    """Build every deck once (npm ci first if slides/node_modules is stale)."""
    start = time.perf_counter()
    paths = build.build(NOTEBOOKS)
    print(f"\nslides: built {len(paths)} decks in {time.perf_counter() - start:.1f} s")
    return {path.name.removesuffix(".slides.html"): path for path in paths}


@dataclass
class SlideMeasure:
    """One slide with all its fragments shown, measured at 1280x720 (sizes in screen pixels)."""

    size: tuple[int, int]  # scrollWidth, scrollHeight of the slide, canvas pixels
    min_body: float  # smallest text of markdown cells (inf: none)
    min_code: float  # smallest code, output or widget text (inf: none)
    small: list[str]  # a few texts below the minimum, with their size
    code_lines: list[int]  # lines of each code block shown
    under_controls: list[str]  # what lies under the controls or the slide number
    figures: list[dict]  # each output image: width, height, available width, max height
    text: str  # the slide's first words


@dataclass
class DeckReport:
    ready: bool = False
    total_slides: int = -1
    leaf_slides: int = -1
    math_per_slide: list[int] = field(default_factory=list)
    math_errors: int = -1
    widget_views: int = -1
    speaker_notes: int = -1
    notes_html: list[str] = field(default_factory=list)  # each aside.notes once MathJax is done
    notes_plugin: bool = False
    widgets_rendered: int = -1
    canvas: tuple[int, int] = (0, 0)
    canvas_fits_screen: bool = False
    scale: float = 0.0
    slides: list[SlideMeasure] = field(default_factory=list)
    expected_steps: list[tuple[int, int, int]] = field(default_factory=list)  # every (h, v, fragment)
    steps: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)  # key -> states visited
    console_errors: list[str] = field(default_factory=list)
    outside_requests: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)

    @property
    def sizes(self) -> list[tuple[int, int]]:
        return [slide.size for slide in self.slides]


RENDERED_WIDGETS = ".widget-subarea > .jupyter-widgets"


STATE = "() => { const i = Reveal.getIndices(); return [i.h, i.v, i.f ?? -1]; }"


def js(name: str) -> str:
    """The function in tests/js/NAME.js (its comment lines left out), to evaluate in the page."""
    lines = (JS / f"{name}.js").read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.startswith("//"))



def new_page(browser, report: DeckReport | None = None):
    """A 1280x720 page that lets through file:// and loopback only (others aborted, and recorded
    in ``report``)."""
    page = browser.new_page(viewport={"width": SCREEN[0], "height": SCREEN[1]})

    allow_only(page, LOCAL, None if report is None else report.outside_requests)
    return page


def load_reveal(page, deck: Path) -> bool:
    """Open ``deck`` and bind its reveal.js to ``window.Reveal``; whether reveal.js got ready."""
    page.goto(deck.as_uri(), wait_until="load")
    if not js_true(page, "window.require && window.MathJax && window.MathJax.Hub"):
        return False
    page.evaluate(
        "url => new Promise(ok => require([url], R => { window.Reveal = R; ok(); }))",
        f"{build.URLS['reveal_url_prefix']}/dist/reveal.js",
    )
    return js_true(page, "Reveal.isReady()")


def wait_for_mathjax(page) -> None:
    # (the hook must not return the queued callback: MathJax would wait on it and deadlock)
    page.evaluate(
        "new Promise((ok, fail) => { setTimeout(() => fail(new Error('MathJax still busy')), 60000);"
        " MathJax.Hub.Register.StartupHook('End', () => { MathJax.Hub.Queue(ok); }); })"
    )


def press_through(page, key: str, presses: int) -> list[tuple[int, int, int]]:
    """Press ``key`` ``presses`` times from the first slide; the state (h, v, fragment) before
    the first press and after each press (read on the key's release, once reveal.js has moved)."""
    page.evaluate(
        "() => { Reveal.slide(0, 0, -1); window.visited = [];"
        " if (!window.recording) { window.recording = true;"
        "   document.addEventListener('keyup', () => visited.push((" + STATE + ")())); } }"
    )
    page.focus("body")
    first = tuple(page.evaluate(STATE))
    for _ in range(presses):
        page.keyboard.press(key)
    return [first, *(tuple(state) for state in page.evaluate("window.visited"))]


def open_deck(browser, deck: Path, screenshot: Path, typical: int) -> DeckReport:
    report = DeckReport()
    page = new_page(browser, report)
    page.on("console", lambda msg: msg.type == "error" and report.console_errors.append(msg.text))
    page.on("pageerror", lambda exc: report.console_errors.append(f"uncaught: {exc}"))
    page.on("requestfailed", lambda req: report.failed_requests.append(f"{req.url} ({req.failure})"))
    try:
        report.ready = load_reveal(page, deck)
        if not report.ready:
            return report
        wait_for_mathjax(page)
        report.math_per_slide = page.evaluate(js("math_per_slide"))
        report.total_slides = page.evaluate("Reveal.getTotalSlides()")
        report.speaker_notes = page.evaluate("document.querySelectorAll('.slides aside.notes').length")
        report.notes_html = page.evaluate(js("notes_html"))
        report.notes_plugin = page.evaluate("Reveal.hasPlugin('notes')")
        report.leaf_slides = page.evaluate(
            "document.querySelectorAll('.reveal .slides > section > section').length"
        )
        report.math_errors = page.evaluate(
            "document.querySelectorAll('.mjx-merror, .MathJax_Error, .mjx-noError').length"
        )
        report.widget_views = page.evaluate(
            "document.querySelectorAll('script[type=\"application/vnd.jupyter.widget-view+json\"]').length"
        )
        # the widget manager renders each saved view into a subarea
        js_true(page, f"document.querySelectorAll({RENDERED_WIDGETS!r}).length >= {report.widget_views}")
        report.widgets_rendered = page.evaluate(f"document.querySelectorAll({RENDERED_WIDGETS!r}).length")
        walk = page.evaluate(js("walk_slides"), {"minBody": MIN_BODY_PX, "minCode": MIN_CODE_PX})
        report.canvas = (walk["width"], walk["height"])
        report.canvas_fits_screen = walk["fits"]
        report.scale = walk["scale"]
        report.slides = [
            SlideMeasure(
                size=tuple(s["size"]), min_body=s["minBody"] or float("inf"),
                min_code=s["minCode"] or float("inf"), small=s["small"], code_lines=s["codeLines"],
                under_controls=s["underControls"], figures=s["figures"], text=s["text"],
            )
            for s in walk["slides"]
        ]
        report.expected_steps = [tuple(step) for step in page.evaluate(js("expected_steps"))]
        for key in NEXT_KEYS:  # one press fewer than the states: the last press reaches the end
            report.steps[key] = press_through(page, key, presses=len(report.expected_steps) - 1)
        page.evaluate(
            "i => { const s = document.querySelectorAll('.reveal .slides > section > section')[i];"
            " const at = Reveal.getIndices(s); Reveal.slide(at.h, at.v, Number.MAX_SAFE_INTEGER); }",
            typical,
        )
        page.evaluate("new Promise(ok => MathJax.Hub.Queue(ok))")
        page.screenshot(path=str(screenshot))
    finally:
        page.close()
    return report


def summary(report: DeckReport) -> dict[str, object]:
    """The deck's numbers, as the report of the test run prints them."""
    finite = lambda xs: [x for x in xs if x != float("inf")]  # noqa: E731
    return {
        "slides": report.total_slides,
        "min_body_px": round(min(finite([s.min_body for s in report.slides]), default=0), 1),
        "min_code_px": round(min(finite([s.min_code for s in report.slides]), default=0), 1),
        "longest_code_block": max((n for s in report.slides for n in s.code_lines), default=0),
        "arrowright_reach": len({step[:2] for step in report.steps.get("ArrowRight", [])}),
    }


_reports: dict[str, DeckReport] = {}


@pytest.fixture(params=NOTEBOOKS, ids=IDS)
def deck(request, decks, browser) -> tuple[dict, Path, DeckReport]:
    """(notebook, deck path, report of the deck opened in Chromium), opened once per deck."""
    nb_path: Path = request.param
    path = decks[nb_path.stem]
    if nb_path.stem not in _reports:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        nb = load_notebook(nb_path)
        report = open_deck(browser, path, ARTIFACTS / f"{nb_path.stem}.png", typical_slide(nb))
        _reports[nb_path.stem] = report
        figures = summary(report) | notes_summary(nb)
        print(f"\n{nb_path.stem}: {json.dumps(figures)}")
        record = ARTIFACTS / "summary.json"  # every deck's figures, for the record (not compared)
        known = json.loads(record.read_text(encoding="utf-8")) if record.exists() else {}
        record.write_text(json.dumps(known | {nb_path.stem: figures}, indent=1), encoding="utf-8")
    return load_notebook(nb_path), path, _reports[nb_path.stem]


# --- the deck files --------------------------------------------------------------------------


class _LoadedUrls(HTMLParser):
    """Every URL a page loads as a script or stylesheet (src of scripts, href of links)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("src"):
            self.urls.append(attrs["src"])
        if tag == "link" and attrs.get("href"):
            self.urls.append(attrs["href"])


def test_every_lesson_has_a_deck(decks):
    assert sorted(decks) == IDS
    for path in decks.values():
        assert path.stat().st_size > 0, path


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_deck_loads_no_remote_script_or_stylesheet(decks, nb_path):
    html = decks[nb_path.stem].read_text(encoding="utf-8")
    parser = _LoadedUrls()
    parser.feed(html)
    remote = [url for url in parser.urls if re.match(r"(https?:)?//", url)]
    assert parser.urls and not remote, f"remote scripts or stylesheets: {remote}"
    # URLs a script builds at run time (the widget manager, MathJax) are set in the page's code.
    inline_code = "".join(re.findall(r"<script>(.*?)</script>", html, re.S))
    in_code = re.findall(r"""['"](https?://[^'"]+)['"]""", inline_code)
    assert not in_code, f"remote URLs in the deck's scripts: {in_code}"
    inline_css = remote_css_urls("".join(re.findall(r"<style[^>]*>(.*?)</style>", html, re.S)))
    assert not inline_css, f"remote URLs in the deck's inline styles: {inline_css}"
    # The stylesheets those URLs point to import nothing remote either (a theme's web fonts).
    for url in parser.urls:
        file = decks[nb_path.stem].parent / url.split("?")[0]
        if file.suffix == ".css":
            imports = remote_imports(file)
            assert not imports, f"{url} imports {imports}"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_rise_theme_needs_no_web_fonts(decks, nb_path):
    theme = load_notebook(nb_path)["metadata"].get("rise", {}).get("theme")
    css = SLIDES / "node_modules" / "reveal.js" / "dist" / "theme" / f"{theme}.css"
    assert css.is_file(), f"metadata.rise.theme is {theme!r}, not a reveal.js theme"
    remote = remote_imports(css)
    assert not remote, f"theme {theme!r} loads web fonts {remote}; use a theme without them, e.g. 'serif'"


# --- the decks in the browser ----------------------------------------------------------------


def test_deck_initialises_reveal(deck):
    _, _, report = deck
    assert report.ready


def test_deck_has_one_slide_per_slide_or_subslide_cell(deck):
    nb, _, report = deck
    expected = len(expected_slides(nb))
    assert (report.total_slides, report.leaf_slides) == (expected, expected)


def test_deck_carries_the_speaker_notes(deck):
    nb, _, report = deck
    assert report.notes_plugin, "reveal.js's notes plugin (speaker view, key S) is not loaded"
    assert report.speaker_notes == slide_types(nb).count("notes")


def test_deck_renders_its_maths(deck):
    nb, _, report = deck
    with_math = [i for i, cells in enumerate(expected_slides(nb)) if any(map(has_math, cells))]
    assert with_math, "a lesson shows at least one formula"
    unrendered = [i for i in with_math if report.math_per_slide[i] == 0]
    assert not unrendered, f"slides {unrendered} have TeX in their markdown but no MathJax output"
    assert report.math_errors == 0, f"{report.math_errors} formulas failed to typeset"


def test_deck_shows_its_widgets(deck):
    _, _, report = deck
    assert report.widgets_rendered >= report.widget_views, (
        f"{report.widget_views} widget views saved, {report.widgets_rendered} rendered"
    )


def test_deck_makes_no_request_outside_loopback(deck):
    _, _, report = deck
    assert report.outside_requests == []


def test_deck_has_no_console_error_or_failed_request(deck):
    _, _, report = deck
    assert report.console_errors == [] and report.failed_requests == []


def test_canvas_is_16_9_and_fits_the_screen(deck):
    _, _, report = deck
    assert report.canvas == (build.WIDTH, build.HEIGHT)
    assert report.canvas[0] * SCREEN[1] == report.canvas[1] * SCREEN[0], "canvas and screen are both 16:9"
    assert report.canvas_fits_screen


def test_no_slide_overflows_1280x720(deck):
    nb, path, report = deck
    lesson = path.name.removesuffix(".slides.html")
    width, height = report.canvas
    slides = expected_slides(nb)
    assert len(report.sizes) == len(slides)
    too_big = {
        first_line(cells[0]): f"slide {i + 1}: {w}x{h}"
        for i, (cells, (w, h)) in enumerate(zip(slides, report.sizes, strict=True))
        if w > width + 1 or h > height + 1
    }
    known = KNOWN_OVERFLOW.get(lesson, set())
    new = {key: size for key, size in too_big.items() if not any(key.startswith(k) for k in known)}
    assert not new, f"slides larger than the {width}x{height} canvas (1280x720 on screen): {new}"
    fixed = sorted(k for k in known if not any(key.startswith(k) for key in too_big))
    if fixed:
        warnings.warn(f"{lesson}: {fixed} fit now; drop them from KNOWN_OVERFLOW", stacklevel=1)


def test_typical_slide_screenshot_is_kept(deck):
    nb, path, report = deck
    shot = ARTIFACTS / f"{path.name.removesuffix('.slides.html')}.png"
    assert shot.is_file() and shot.stat().st_size > 5_000


# --- a lecture room: every slide reached by "next", readable from the back, no solutions ------


@pytest.mark.parametrize("key", NEXT_KEYS)
def test_next_key_alone_visits_every_slide_and_fragment_in_order(deck, key):
    """What a clicker sends (PageDown, or ArrowRight) and Space step through the whole deck."""
    _, _, report = deck
    steps = report.steps[key]
    reached = len({step[:2] for step in steps})
    assert reached == report.total_slides, f"{key} reaches {reached} of {report.total_slides} slides"
    expected = report.expected_steps
    differ = next((i for i, (a, b) in enumerate(zip(steps, expected, strict=False)) if a != b), None)
    assert steps == expected, (
        f"{key} visits {len(steps)} of {len(expected)} slides and fragments (h, v, fragment); "
        f"first difference at step {differ}: {steps[differ:differ + 3] if differ is not None else steps[-3:]}"
    )


def test_text_is_readable_on_a_1280x720_screen(deck):
    """Every visible text at least 24 px (markdown) or 20 px (code, outputs, widgets) on screen:
    its computed font size times reveal.js's scale of the canvas."""
    _, _, report = deck
    assert report.slides, "the walk measured no slide"
    small = {
        f"slide {i + 1} ({slide.text[:30]!r})": slide.small
        for i, slide in enumerate(report.slides)
        if slide.min_body < MIN_BODY_PX - 0.05 or slide.min_code < MIN_CODE_PX - 0.05
    }
    assert not small, f"{len(small)} slides have text below {MIN_BODY_PX}/{MIN_CODE_PX} px: {small}"


def test_figures_fill_the_slide_width(deck):
    """A figure is drawn across the slide's width, or as tall as the slide allows."""
    _, _, report = deck
    narrow = [
        f"slide {i + 1}: {fig['drawnWidth']:.0f} of {fig['room']:.0f} px wide, {fig['drawnHeight']:.0f} high"
        for i, slide in enumerate(report.slides)
        for fig in slide.figures
        if not fig["inWidget"]
        and fig["drawnWidth"] < 0.95 * fig["room"]
        and fig["drawnHeight"] < fig["maxHeight"] - 2
    ]
    assert not narrow, f"figures narrower than the slide: {narrow}"


def test_nothing_under_the_controls(deck):
    """No text, figure or widget under the navigation arrows or the slide number."""
    _, _, report = deck
    under = {f"slide {i + 1}": s.under_controls for i, s in enumerate(report.slides) if s.under_controls}
    assert not under, f"under the controls: {under}"


def test_code_on_a_slide_has_at_most_15_lines(deck):
    _, _, report = deck
    long = {
        f"slide {i + 1} ({slide.text[:30]!r})": [n for n in slide.code_lines if n > MAX_CODE_LINES]
        for i, slide in enumerate(report.slides)
        if any(n > MAX_CODE_LINES for n in slide.code_lines)
    }
    assert not long, (
        f"code blocks over {MAX_CODE_LINES} lines (tag the cell slides-output-only, or skip it): {long}"
    )


def notes_summary(nb: dict) -> dict[str, object]:
    found = sections(nb)
    return {
        "sections": len(found),
        "notes_per_section": [len(notes_cells(cells)) for _, cells in found],
        "sections_without_notes": sum(not notes_cells(cells) for _, cells in found),
    }


def formulas(cell: dict) -> int:
    """How many formulas a markdown cell writes in TeX."""
    return len(MATH.findall(CODE_SPAN.sub("", source(cell)))) if cell["cell_type"] == "markdown" else 0


def mathjax_traces(html: str) -> list[str]:
    """What MathJax leaves in HTML it worked on: typeset output, hidden MathML, TeX waiting in a script."""
    return sorted({t for t in ("MathJax", "MJX", "math/tex", "$") if t in html})


def test_speaker_notes_show_each_formula_once_without_a_script(deck):
    """The speaker view (key S) shows a slide's notes as HTML copied into its own window, where no MathJax
    runs: each formula of a notes cell must be there once, as MathML, with nothing MathJax made or left
    (its typeset output and hidden MathML showed "hh heads"; TeX it had not reached showed nothing)."""
    nb, _, report = deck
    notes = [cell for cell, kind in zip(nb["cells"], slide_types(nb), strict=True) if kind == "notes"]
    assert len(report.notes_html) == len(notes)
    wrong = {}
    for cell, html in zip(notes, report.notes_html, strict=True):
        text = CODE_SPAN.sub("", re.sub(r"<code>.*?</code>", "", html, flags=re.S))
        if (traces := mathjax_traces(text)) or html.count("<math") != formulas(cell):
            wrong[first_line(cell)[:50]] = (traces, html.count("<math"), formulas(cell))
    assert not wrong, f"notes whose maths the speaker view would show wrongly (traces, <math>, TeX): {wrong}"


def test_every_section_has_speaker_notes(deck):
    """Each ``## `` section of the lesson has a notes cell (reveal.js shows it in the speaker view)."""
    nb, _, report = deck
    found = sections(nb)
    assert found, "the lesson has no '## ' section slide"
    without = [title for title, cells in found if not notes_cells(cells)]
    assert not without, f"{len(without)} of {len(found)} sections have no notes cell: {without}"
    assert report.speaker_notes >= len(found)


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_default_deck_has_no_solution_or_hidden_test(decks, nb_path):
    """No line of a solution, hidden test or written answer is in the deck's file, shown or not."""
    nb = load_notebook(nb_path)
    secret = secret_lines(nb)
    assert secret, "every lesson has graded exercises with solutions"
    found = leaked(nb, decks[nb_path.stem])
    assert not found, f"{len(found)} lines of solutions or hidden tests in the deck: {found[:10]}"
    assert "YOUR CODE HERE" in deck_text(decks[nb_path.stem]), "an answer cell shows the learner's stub"


def test_leak_check_finds_solution_lines_in_highlighted_code(tmp_path):
    """The check above sees a solution line split over syntax-highlighting spans, and only then."""
    answer = {"cell_type": "code", "metadata": {"nbgrader": {"solution": True}},
              "source": "x = 1\n### BEGIN SOLUTION\ny = secret_value(x)\n### END SOLUTION\n"}
    nb = {"cells": [answer]}
    assert secret_lines(nb) == ["### BEGIN SOLUTION", "### END SOLUTION", "y = secret_value(x)"]
    deck = tmp_path / "deck.slides.html"
    deck.write_text('<pre><span class="n">y</span> <span class="o">=</span> secret_value(x)\n</pre>')
    assert leaked(nb, deck) == ["y = secret_value(x)"]
    deck.write_text("<pre>x = 1\n# YOUR CODE HERE\n...\n</pre>")
    assert leaked(nb, deck) == []


def test_solutions_deck_is_a_separate_build(decks):
    """``make slides SOLUTIONS=1`` writes the instructor's decks, with the solutions, elsewhere."""
    lesson = NOTEBOOKS[-1]
    (with_solutions,) = build.build([lesson], solutions=True)
    assert with_solutions.parent == build.SOLUTIONS and with_solutions != decks[lesson.stem]
    nb = load_notebook(lesson)
    # the solutions of the answer cells a deck shows (test cells and written answers are `skip`)
    visible = {
        line.strip()
        for cell, kind in zip(nb["cells"], slide_types(nb), strict=True)
        if is_solution(cell) and cell["cell_type"] == "code" and kind not in ("skip", "notes")
        for line in source(cell).split("\n")
    }
    expected = [line for line in secret_lines(nb) if line in visible]
    assert expected, "the lesson has answer cells shown on its slides"
    assert leaked(nb, with_solutions) == expected, "the instructor's deck shows every solution"
    assert not leaked(nb, decks[lesson.stem])


def test_each_equation_is_typeset_once_when_advancing_fast(decks, browser):
    """Pressing "next" before MathJax's first pass ends leaves one rendering per equation.

    MathJax's first pass is slowed down (one equation per chunk, 50 ms between chunks, set
    before the page loads), so that the presses always come while it is still running.
    """
    lesson = NOTEBOOKS[2]
    page = new_page(browser)
    page.add_init_script(
        "window.MathJax = {CommonHTML: {EqnChunk: 1, EqnChunkFactor: 1, EqnChunkDelay: 50}};"
    )
    try:
        assert load_reveal(page, decks[lesson.stem])
        busy = page.evaluate("MathJax.Hub.queue.running + MathJax.Hub.queue.pending > 0")
        assert busy, "MathJax had finished before the first key press: the test proves nothing"
        for _ in range(25):
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(40)
        wait_for_mathjax(page)
        page.evaluate("new Promise(ok => MathJax.Hub.Queue(ok))")
        counts = page.evaluate(js("typeset_counts"))
    finally:
        page.close()
    assert counts["equations"] > 0
    assert counts == {
        "equations": counts["equations"], "rendered": counts["equations"], "previews": 0, "without": 0
    }, f"{counts}: a rendering per equation, and no preview left beside it"


def test_speaker_view_shows_a_slides_notes(decks, browser):
    """Key S opens reveal.js's speaker view, which shows the notes of the current slide, maths included.

    Uses the first slide with a notes cell outside a fragment that writes a formula (a notes cell right
    after a fragment belongs to that fragment, and shows while it is the current fragment).
    """
    found = [
        (nb_path, index, notes)
        for nb_path, nb in ((path, load_notebook(path)) for path in NOTEBOOKS)
        for index, cells in enumerate(expected_slides(nb))
        if (notes := notes_of_slide(nb, cells)) and MATH.search(CODE_SPAN.sub("", notes))
    ]
    assert found, "no lesson has a notes cell with maths outside a fragment"
    nb_path, index, notes = found[0]
    page = browser.new_page(viewport={"width": SCREEN[0], "height": SCREEN[1]})
    page.route("**/*", lambda route: route.continue_() if LOCAL.match(route.request.url) else route.abort())
    try:
        page.goto(decks[nb_path.stem].as_uri(), wait_until="load")
        assert js_true(page, "window.require && window.MathJax")
        page.evaluate(
            "url => new Promise(ok => require([url], R => { window.Reveal = R; ok(); }))",
            f"{build.URLS['reveal_url_prefix']}/dist/reveal.js",
        )
        assert js_true(page, "Reveal.isReady()")
        page.evaluate(
            "i => { const s = document.querySelectorAll('.reveal .slides > section > section')[i];"
            " const at = Reveal.getIndices(s); Reveal.slide(at.h, at.v); }",
            index,
        )
        with page.expect_popup() as popup:
            page.keyboard.press("s")
        speaker = popup.value
        speaker.wait_for_selector(".speaker-controls-notes:not(.hidden)", timeout=30_000)
        shown = speaker.inner_text(".speaker-controls-notes .value")
        words = [w for w in CODE_SPAN.sub("", MATH.sub("", notes)).split() if w.isalpha()][:4]
        assert all(w in shown for w in words), (words, shown[:80])
        html = speaker.inner_html(".speaker-controls-notes .value")
        expected = len(MATH.findall(CODE_SPAN.sub("", notes)))
        assert html.count("<math") == expected and not mathjax_traces(html), (expected, html[:300])
        speaker.close()
    finally:
        page.close()


def notes_of_slide(nb: dict, slide_cells: list[dict]) -> str:
    """The text of the notes cells that follow a slide's last visible cell outside a fragment."""
    cells, kinds = nb["cells"], slide_types(nb)
    last = next(i for i, cell in enumerate(cells) if cell is slide_cells[-1])
    if any(kinds[i] == "fragment" for i, cell in enumerate(cells) if any(cell is c for c in slide_cells)):
        return ""
    text = []
    for cell, kind in zip(cells[last + 1 :], kinds[last + 1 :], strict=True):
        if kind != "notes":
            break
        text.append("".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"])
    return "\n".join(text)
