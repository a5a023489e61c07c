"""Widget redraw latency of every lesson, in JupyterLab and in its live slideshow (jupyterlab-rise).

``python -m benchmarks.widgets`` (also run by ``make bench``) starts JupyterLab on 127.0.0.1 as the browser
tests do (the one driver both use, ``labdriver``), runs each lesson in headless Chromium, then changes every
control of every widget ``--changes`` times in the notebook. One change is timed from the browser's input
event (``event.timeStamp``: a key press, a menu choice, Enter in a text box) to the last change of the
widget's output area (a MutationObserver) once it has been quiet for ``QUIET_MS`` and its images are decoded:
what a presenter waits for. Then the same in the live slideshow (Alt+R; each widget's cell re-run there, as
``tests/test_rise.py`` does), view "RISE". The median and the maximum per control go into the section
"Widget redraw latency" of ``benchmarks/RESULTS.md`` (replaced in place), met or not met against 200 ms.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from labdriver import (
    CHROMIUM_ARGS,
    PRESENT_DIR,
    RISE_FRAME,
    cell,
    cell_index,
    find_chromium,
    open_notebook,
    prepare_root,
    rise_frame,
    run_all,
    saved_notebook,
    show_cell_in_rise,
    start_lab,
)

from . import report
from .common import HERE, Config, Log, Results

NAME = "widgets"
TARGET_MS = 200.0
QUIET_MS = 400.0  # an output that has not changed for this long is finished
CHANGE_TIMEOUT_S = 60.0
SECTION = TITLE = "## 4. Widget redraw latency"
CHANGES = 6  # changes per control and view


@dataclass(frozen=True)
class Control:
    """One control of a widget: its label and how it is changed.

    ``kind``: "slider" (ArrowRight / ArrowLeft in turn, with the keyboard), "select" (the next option, in
    turn), "check" (a click) or "text" (type ``values[i % 2]`` and press Enter).
    """

    label: str
    kind: str
    values: tuple[str, ...] = ()


# lesson -> [(a line of the widget's cell, its controls)]
WIDGETS: dict[str, list[tuple[str, list[Control]]]] = {
    "00_roadmap": [("roadmap_widgets.mix_explorer(", [Control("neighbour", "slider"),
                                                       Control("sentence", "select")])],
    "01_static_embeddings": [
        ("embedding_widgets.pair_explorer(", [Control("word", "text", ("bank", "apple")),
                                              Control("other word", "text", ("phones", "juice"))]),
        ("embedding_widgets.word_explorer(", [Control("word", "text", ("banana", "apple")),
                                              Control("neighbours", "slider")])],
    "02_basic_self_attention": [("explorers.one_word(", [
        Control("sentence", "text", ("river bank flows", "money bank grows")),
        Control("focus word", "select")])],
    "03_matrix_form": [("explorers.sentence_map(", [
        Control("sentence", "text", ("river bank flows", "money bank grows")),
        Control("focus word", "select")])],
    "04_learnable_projections": [("query_designer(", [
        Control("person", "slider"), Control("action", "slider"), Control("food", "slider")])],
    "05_training_attention": [("training_viewer(", [Control("step", "slider")])],
    "06_scaling": [("scaling_widgets.explore_divisor(", [Control("d_k", "slider"), Control("c", "slider"),
                                                    Control("c = sqrt(d_k)", "check")])],
    "07_multi_head_attention": [("head_widgets.sentence_heads_explorer(", [Control("sentence", "select"),
                                                              Control("W_Q x", "slider")])],
    "08_why_several_heads": [("widgets.interact(show_query", [Control("model", "select"),
                                                               Control("sequence", "slider")])],
    "09_positions_and_masks": [("mask_widgets.mask_explorer(", [Control("mask", "select"),
                                                                 Control("fill", "select")])],
    "10_cost_and_memory": [("cost_widgets.dilution_explorer(", [Control("margin", "slider"),
                                                                 Control("log2 T", "slider")])],
    "11_real_transformer": [("explorers.lean_explorer(", [
        Control("sentence", "text", ("my macbook crashed", "i love apple phones"))])],
    "12_inside_a_real_transformer": [("explorers.head_explorer(", [
        Control("sentence", "select"), Control("layer", "slider"), Control("head", "slider")])],
    "13_generation_and_memory": [("llm_widgets.decode_explorer(", [Control("kv heads", "slider"),
                                                                    Control("context T", "slider")])],
    "14_long_context": [("llm_widgets.rope_explorer(", [Control("scaling", "select"),
                                                         Control("factor", "slider")])],
    "15_io_aware_attention": [("llm_widgets.io_explorer(", [Control("fast memory M", "slider"),
                                                             Control("d", "slider")])],
}

# Arms a timer on a cell: t0 = the first input event (key, pointer, change, click) after arming, last = the
# time of the last mutation of the widget's output area(s) after t0.
ARM = """cell => {
  const st = {t0: null, last: null, mutations: 0};
  const outs = [...cell.querySelectorAll('.widget-output')];
  const onEvent = e => {
    if (st.t0 !== null) return;
    if (e.type === 'keydown' && !['ArrowRight', 'ArrowLeft', 'Enter'].includes(e.key)) return;
    st.t0 = e.timeStamp;
  };
  const kinds = ['keydown', 'pointerdown', 'change', 'click'];
  kinds.forEach(k => cell.addEventListener(k, onEvent, true));
  const observer = new MutationObserver(() => {
    if (st.t0 !== null) { st.last = performance.now(); st.mutations++; }
  });
  const what = {childList: true, subtree: true, characterData: true, attributes: true};
  outs.forEach(o => observer.observe(o, what));
  st.stop = () => { observer.disconnect(); kinds.forEach(k => cell.removeEventListener(k, onEvent, true)); };
  window.__widgetBench = st;
  return outs.length;
}"""
POLL = """() => {
  const st = window.__widgetBench;
  const images = [...document.querySelectorAll('.widget-output img')].every(i => i.complete);
  return {t0: st.t0, last: st.last, now: performance.now(), mutations: st.mutations, images};
}"""


@dataclass
class Timing:
    """The redraw latencies (ms) of one control in one view; ``failed`` counts changes that never redrew."""

    lesson: str
    control: str
    view: str
    samples: list[float] = field(default_factory=list)
    failed: int = 0

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def worst(self) -> float | None:
        return max(self.samples) if self.samples else None


def change(frame: object, cell: object, control: Control, i: int, mouse: bool = False) -> None:
    """Change ``control`` in ``cell`` once (the ``i``-th time), as a presenter would.

    ``mouse``: move a slider with the mouse, not the keyboard. In the live slideshow the arrow keys also move
    the slides (reveal.js reads them even when a slider has the focus), so a presenter clicks or drags there.
    """
    label = frame.locator("label.widget-label", has_text=re.compile(rf"^{re.escape(control.label)}$"))
    box = cell.locator(".widget-inline-hbox").filter(has=label).first  # the control's row
    if control.kind == "slider" and mouse:  # click the track a quarter from one end, then the other
        track = box.locator(".noUi-target").first
        area = track.bounding_box()
        track.click(position={"x": area["width"] * (0.75 if i % 2 == 0 else 0.25), "y": area["height"] / 2})
    elif control.kind == "slider":
        handle = box.locator(".noUi-handle").first
        handle.focus()
        handle.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
    elif control.kind == "select":
        select = box.locator("select")
        options = select.locator("option").all_inner_texts()
        current = select.evaluate("s => s.selectedIndex")
        select.select_option(index=(current + 1) % len(options))
    elif control.kind == "check":  # a checkbox's description is in its own label, next to the box
        cell.locator(".widget-checkbox", has_text=control.label).locator("input[type=checkbox]").click()
    elif control.kind == "text":
        field_ = box.locator("input").first
        field_.fill(control.values[i % len(control.values)])
        field_.press("Enter")
    else:
        raise ValueError(f"control.kind is {control.kind!r}; expected slider, select, check or text")


def time_changes(frame: object, cell: object, control: Control, changes: int, timing: Timing,
                 mouse: bool = False) -> None:
    """Change ``control`` ``changes`` times; add each redraw latency (ms) to ``timing``."""
    for i in range(changes):
        cell.evaluate(ARM)
        change(frame, cell, control, i, mouse)
        deadline = time.monotonic() + CHANGE_TIMEOUT_S
        while time.monotonic() < deadline:
            state = frame.evaluate(POLL)
            if state["last"] is not None and state["now"] - state["last"] >= QUIET_MS and state["images"]:
                timing.samples.append(state["last"] - state["t0"])
                break
            time.sleep(0.05)
        else:
            timing.failed += 1
        frame.evaluate("() => window.__widgetBench.stop()")


def bench_lesson(context: object, lab: object, lesson: str, changes: int, log: object) -> list[Timing]:
    """Run ``lesson`` in JupyterLab, time its widgets there, then in the slideshow."""
    path = f"{PRESENT_DIR}/{lesson}.ipynb"
    page = open_notebook(context, lab, path, f"bench{lesson[:2]}")
    timings: list[Timing] = []
    try:
        run_all(page)
        notebook = saved_notebook(lab.root / path)
        cells = [(cell_index(notebook, marker), controls) for marker, controls in WIDGETS[lesson]]
        for index, controls in cells:
            widget_cell = cell(page, index)
            widget_cell.scroll_into_view_if_needed()
            for control in controls:
                timings.append(Timing(lesson, control.label, "lab"))
                time_changes(page, widget_cell, control, changes, timings[-1])
                log(f"{lesson} lab  {control.label}: {_fmt(timings[-1])}")
    finally:
        page.close()
        lab.shutdown_kernels()
    # The slideshow on a page of its own, as tests/test_rise.py opens it (after the notebook's widgets were
    # driven, the slideshow can follow the notebook's selection away from the widget's slide).
    page = open_notebook(context, lab, path, f"rise{lesson[:2]}")
    try:
        run_all(page)
        timings += bench_rise(page, lesson, cells, changes, log)
    finally:
        page.close()
        lab.shutdown_kernels()
    return timings


def bench_rise(page: object, lesson: str, cells: list[tuple[int, list[Control]]], changes: int,
               log: object) -> list[Timing]:
    """Time the same widgets in the live slideshow (jupyterlab-rise), as ``tests/test_rise.py`` opens it.

    Alt+R on the first widget's cell opens the slideshow; each widget's cell is re-run inside it (Ctrl+Enter),
    so the slideshow's own widget manager draws it, and its controls are changed there.
    """
    timings: list[Timing] = []
    cell(page, cells[0][0]).locator(".jp-InputArea-prompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Alt+r")
    page.locator(RISE_FRAME).wait_for()
    for index, controls in cells:
        show_cell_in_rise(page, index)
        frame = rise_frame(page)  # a locator of the slideshow's own frame (``change`` filters within it)
        slide = frame.locator(".reveal .slides section.present").last
        prompt = slide.locator(".jp-InputArea-prompt").first
        count = prompt.inner_text()
        prompt.click()
        page.keyboard.press("Escape")
        page.keyboard.press("Control+Enter")  # re-run in the slideshow (Shift+Enter would move on)
        deadline = time.monotonic() + CHANGE_TIMEOUT_S
        while prompt.inner_text() in (count, "[*]:") and time.monotonic() < deadline:
            time.sleep(0.1)
        widget = slide.locator(".jp-OutputArea-output > .jupyter-widgets").first
        widget.locator(".widget-output img").first.wait_for(timeout=CHANGE_TIMEOUT_S * 1000)
        time.sleep(QUIET_MS / 1000)
        for control in controls:
            timings.append(Timing(lesson, control.label, "RISE"))
            time_changes(frame, slide, control, changes, timings[-1], mouse=True)
            log(f"{lesson} RISE {control.label}: {_fmt(timings[-1])}")
    return timings


def _fmt(t: Timing) -> str:
    if t.median is None:
        return f"no redraw in {t.failed} changes"
    extra = f", {t.failed} without redraw" if t.failed else ""
    return f"median {t.median:.0f} ms, max {t.worst:.0f} ms ({len(t.samples)} changes{extra})"


def run_lessons(lessons: list[str], changes: int, log: object = print) -> list[Timing]:
    """Time every widget of ``lessons`` in a fresh JupyterLab on 127.0.0.1 (the outside web blocked)."""
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        raise RuntimeError("the widget benchmark needs Chromium (apt-get install chromium)")
    timings: list[Timing] = []
    with tempfile.TemporaryDirectory(prefix="widget-bench-") as tmp_name, sync_playwright() as pw:
        tmp = Path(tmp_name)
        lab = start_lab(tmp, prepare_root(tmp), tmp / "jupyter-server.log")
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.set_default_timeout(120_000)
            local = ("http://127.0.0.1", "data:", "blob:")  # nothing else is asked for
            context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(local) else r.abort())
            for lesson in lessons:
                timings += bench_lesson(context, lab, lesson, changes, log)
        finally:
            browser.close()
            lab.stop()
    return timings


def section(timings: list[Timing], changes: int) -> list[str]:
    """The RESULTS.md section: one row per lesson, control and view."""
    slowest = max((t.median for t in timings if t.median is not None), default=None)
    met = all(t.median is not None and t.median <= TARGET_MS and not t.failed for t in timings)
    lines = [
        SECTION,
        "",
        f"Each control of each lesson's widgets changed {changes} times in JupyterLab and again in its live "
        "slideshow (jupyterlab-rise, the cell re-run there),",
        "timed in Chromium from the input event to the last change of the widget's output (quiet for "
        f"{QUIET_MS:.0f} ms, images decoded). Target: median at most {TARGET_MS:.0f} ms for every widget: "
        f"**{'met' if met else 'not met'}** (slowest median "
        f"{'-' if slowest is None else f'{slowest:.0f} ms'}). "
        "`python -m benchmarks.widgets` redoes this section.",
        "",
        "| lesson | control | view | median (ms) | max (ms) | changes | target |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for t in timings:
        ok = t.median is not None and t.median <= TARGET_MS and not t.failed
        median = "-" if t.median is None else f"{t.median:.0f}"
        worst = "-" if t.worst is None else f"{t.worst:.0f}"
        lines.append(f"| {t.lesson} | {t.control} | {t.view} | {median} | {worst} | "
                     f"{len(t.samples)}/{len(t.samples) + t.failed} | {'met' if ok else 'not met'} |")
    return lines + [""]


def run(cfg: Config, res: Results, log: Log) -> None:
    """Section 4 of ``make bench`` (not in quick mode: it needs Chromium and minutes)."""
    if cfg.quick:
        return
    timings = run_lessons(sorted(WIDGETS), CHANGES, log)
    res.widget_lines = section(timings, CHANGES)


def lines(cfg: Config, res: Results) -> list[str]:
    return res.widget_lines or [SECTION, "", "Not measured in this run (`python -m benchmarks.widgets`).", ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lessons", nargs="*", default=sorted(WIDGETS),
                        help="e.g. 06_scaling (default: all)")
    parser.add_argument("--changes", type=int, default=CHANGES, help=f"changes per control and view "
                        f"(default {CHANGES})")
    parser.add_argument("--results", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--json", type=Path, help="also write the raw latencies here")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.lessons) - set(WIDGETS))
    if unknown:
        parser.error(f"--lessons got {unknown}; expected some of {sorted(WIDGETS)}")
    if args.changes < 1:
        parser.error(f"--changes got {args.changes}; expected at least 1")
    timings = run_lessons(args.lessons, args.changes)
    if args.json:
        args.json.write_text(json.dumps([t.__dict__ for t in timings], indent=1), encoding="utf-8")
    report.replace_sections(args.results, [section(timings, args.changes)])
    print(f"wrote the widget section of {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
