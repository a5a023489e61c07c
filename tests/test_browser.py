"""The course as a learner sees it: every lesson in JupyterLab in a real browser (Debian's Chromium).

For every lesson, in a learner's working copy with every exercise blank: Run All, wait for the kernel to go
idle, then check that every cell ran (a blank answer's check fails with its message, and Run All goes on),
that no other cell failed, that every figure is drawn and every widget is shown as a widget; then drive
one widget and check that what it shows changes. In a learner's working copy (exercises blank), a wrong then a
right answer to an exercise must show the feedback a learner reads. Screenshots go to ``test-artifacts/``,
with the server's log and the list of blocked requests (the page may only talk to 127.0.0.1).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import pytest
from conftest import NOTEBOOKS
from playwright import sync_api  # a test dependency: installed by `make test`

from labdriver import (
    ARTIFACTS,
    WIDGET_FALLBACKS,
    LabServer,
    cell,
    cell_index,
    open_notebook,
    output_summary,
    run_all,
    run_cells,
    save,
    saved_notebook,
    type_into_cell,
)
from selfattention.coursework import lessons

# `make test` installs Chromium first (tools/system-deps.sh). Run directly with pytest on a machine without
# it, the suite is skipped (with -ra saying why); under make test (--strict-system) it fails instead.
pytestmark = pytest.mark.needs_chromium

sync_api.expect.set_options(timeout=30_000)  # ms, for every expect() below

LESSONS = [p.stem for p in NOTEBOOKS]
PAGE_TIMEOUT = 120_000  # ms, for loading JupyterLab and the notebook
WIDGET_TIMEOUT = 60_000  # ms, for a widget's output to change after a move


@dataclass(frozen=True)
class Drive:
    """One widget move: in the cell containing ``marker``, the control labelled ``label`` is moved.

    ``kind`` is "slider" (one step right with the keyboard), "select" (choose ``value``) or "text" (type
    ``value`` and press Enter). ``expect`` is a text the widget's output must show afterwards ("" for none).
    """

    marker: str
    label: str
    kind: str
    value: str = ""
    expect: str = ""


DRIVES = {
    # 0.8 -> 0.9 on "neighbour" (juice): weights love/apple/juice 1/60, 5/60, 0.9
    # give apple' = [0.963, 0.153].
    "00_roadmap": Drive("roadmap_widgets.mix_explorer(", "neighbour", "slider",
                        expect="apple' = [0.963, 0.153]"),
    # "other word" juice -> phones: the red line moves to cos(apple, phones) = 0.173.
    "01_static_embeddings": Drive("embedding_widgets.pair_explorer(", "other word", "text", "phones",
                                  expect="apple ~ phones: cosine 0.173"),
    # "money bank grows" -> "river bank flows": bank's row becomes 0.18 river + 0.68 bank + 0.14 flows.
    "02_basic_self_attention": Drive("explorers.one_word(", "sentence", "text", "river bank flows",
                                     expect="bank' = 0.18*river"),
    "03_matrix_form": Drive("explorers.sentence_map(", "sentence", "text", "river bank flows",
                            expect="z_bank = 0.18*river"),
    "04_learnable_projections": Drive("query_designer(", "person", "slider",
                                      expect="q = [1.5, 0, 2]: z = sum_j alpha_j v_j = [0.32, 0.53]"),
    "05_training_attention": Drive("training_viewer(", "step", "slider",
                                   expect="step   2: held-out accuracy"),
    # 64 -> 128 on "d_k": the line under the figure names the new length.
    "06_scaling": Drive("scaling_widgets.explore_divisor(", "d_k", "slider", expect="d_k = 128, c = 1.00"),
    # Next to "juice" head 2's largest weight of "apple" stays on "apple" itself: 0.42.
    "07_multi_head_attention": Drive("head_widgets.sentence_heads_explorer(", "sentence", "select",
                                     "I love apple juice", expect="head 2: apple -> apple (0.42)"),
    # Held-out sequence 3 (A:1 B:0 E:2 C:6 ?B asks for [6, 1]): the two-head model of seed 0 gives both
    # digits, where the one head of the opening view answers 1 and 1.
    "08_why_several_heads": Drive("widgets.interact(show_query", "model", "select", "two heads, d_k = 16",
                                  expect="the model answers [6, 1]"),
    # Opened on "none"; "causal + left padding", fill -inf: 14 of 36 weights 0, the 2 padding rows NaN.
    "09_positions_and_masks": Drive("mask_widgets.mask_explorer(", "mask", "select", "causal + left padding",
                                    expect="14 of 36 weights are exactly 0; 2 rows are NaN."),
    # log2 T 10 -> 11 at margin 5: the planted key's weight among 2,048 keys.
    "10_cost_and_memory": Drive("cost_widgets.dilution_explorer(", "log2 T", "slider",
                                expect="T = 2,048, margin 5"),
    # A word WordPiece cuts ("mac", "##book") and no "apple": every token's lean is drawn, no traceback.
    "11_real_transformer": Drive("explorers.lean_explorer(", "sentence", "text", "my macbook crashed",
                                 expect="'apple' is not in this sentence"),
    # The most parked head is layer 4, head 5 (section 1); one step right shows head 6 of layer 4.
    "12_inside_a_real_transformer": Drive("explorers.head_explorer(", "head", "slider",
                                          expect="layer 4, head 6,"),
    # 1 -> 2 key/value heads: 80 layers x 2 heads x 128 x 2 (K and V) x 2 bytes = 81,920 bytes per token.
    "13_generation_and_memory": Drive("llm_widgets.decode_explorer(", "kv heads", "slider",
                                      expect="g = 2: 81,920 bytes per token"),
    # factor 8 -> 16 with no scaling: the line names the new factor.
    "14_long_context": Drive("llm_widgets.rope_explorer(", "factor", "slider", expect="none x16:"),
    # fast memory 65,536 -> 262,144 numbers at d = 64: the largest b with 4bd + b^2 <= M is 399.
    "15_io_aware_attention": Drive("llm_widgets.io_explorer(", "fast memory M", "slider",
                                   expect="M = 262,144, d = 64: tiles of 399"),
}


def visible_output(widget_cell: object) -> tuple[str, tuple[str, ...]]:
    """What a widget's output area shows: its text and the sources of its images."""
    out = widget_cell.locator(".widget-output").first
    images = out.locator("img").evaluate_all("els => els.map(e => e.src)")
    return out.inner_text(), tuple(images)


def move(page: object, widget_cell: object, drive: Drive) -> None:
    """Move the control labelled ``drive.label`` as a learner would."""
    label = page.locator("label.widget-label", has_text=re.compile(rf"^{re.escape(drive.label)}$"))
    control = widget_cell.locator(".widget-inline-hbox").filter(has=label).first
    control.scroll_into_view_if_needed()
    if drive.kind == "slider":
        handle = control.locator(".noUi-handle").first
        before = handle.get_attribute("aria-valuenow")
        handle.focus()
        page.keyboard.press("ArrowRight")
        sync_api.expect(handle).not_to_have_attribute("aria-valuenow", before or "")
    elif drive.kind == "select":
        control.locator("select").select_option(label=drive.value)
    elif drive.kind == "text":
        box = control.locator("input").first
        box.fill(drive.value)
        box.press("Enter")
    else:
        raise ValueError(f"drive.kind is {drive.kind!r}; expected 'slider', 'select' or 'text'")


def assert_rendered(page: object, summary: dict[str, object], lesson: str, checks_failed: int = 0) -> None:
    """Every figure drawn, every widget a widget, no text fallback and no traceback on the page but the
    ``checks_failed`` messages of blank exercises ("Not yet: ...")."""
    images = page.locator(".jp-Notebook .jp-OutputArea-output img").evaluate_all(
        "els => els.map(e => [e.src.slice(0, 22), e.complete && e.naturalWidth > 0 && e.naturalHeight > 0])"
    )
    png = [ok for src, ok in images if src == "data:image/png;base64,"]
    assert all(png), f"{lesson}: {png.count(False)} of {len(png)} figures are not drawn"
    assert len(png) >= max(1, summary["figures"]), (
        f"{lesson}: {len(png)} figures drawn on the page, the notebook has {summary['figures']}"
    )
    # The widgets a cell displays (not the ones nested in them), each drawn with a size.
    top_level = ".jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output > .jupyter-widgets"
    widgets = page.locator(top_level)
    sizes = widgets.evaluate_all("els => els.map(e => e.offsetWidth * e.offsetHeight)")
    assert len(sizes) == summary["widgets"] >= 1, (
        f"{lesson}: {len(sizes)} widgets on the page, the notebook displays {summary['widgets']}"
    )
    assert all(sizes), f"{lesson}: widgets drawn with no size: {sizes}"
    texts = page.locator(".jp-Notebook .jp-OutputArea-output").all_inner_texts()
    fallbacks = [t[:120] for t in texts if any(f in t for f in WIDGET_FALLBACKS)]
    assert not fallbacks, f"{lesson}: widgets shown as text instead of widgets: {fallbacks}"
    stderr = page.locator('.jp-Notebook [data-mime-type="application/vnd.jupyter.stderr"]').all_inner_texts()
    tracebacks = [t[:300] for t in stderr if any(m in t for m in ("Traceback", "Error", "Not yet:"))]
    feedback = [t for t in tracebacks if t.startswith("Not yet:")]
    assert len(feedback) == checks_failed and len(tracebacks) == len(feedback), (
        f"{lesson}: errors on the page other than {checks_failed} blank exercises' messages: {tracebacks}"
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_blank_copy_runs_to_the_end_and_its_widget_responds(
    lab: LabServer, browser_context: object, blocked_requests: list[str], lesson: str
) -> None:
    """Run All in a learner's blank copy of a lesson, check what is shown, then drive one widget."""
    drive = DRIVES.get(lesson)
    assert drive is not None, f"{lesson} has no widget to drive in DRIVES"
    path = lab.root / f"{lesson}.ipynb"
    page = open_notebook(browser_context, lab, f"{lesson}.ipynb", f"lesson{lesson[:2]}")
    try:
        run_all(page)
        notebook = save(page, path)
        summary = output_summary(notebook)
        tests = {i for i, c in enumerate(notebook["cells"]) if lessons.is_test(c)}
        assert not summary["unexecuted"], (
            f"{lesson}: Run All stopped before the end; code cells that did not run: {summary['unexecuted']}"
        )
        others = [e for e in summary["errors"] if int(e.split(":")[0].split()[1]) not in tests
                  or not e.split(": ")[1].startswith("ExerciseError")]
        assert not others, f"{lesson}: cells failed with every exercise blank: {others}"
        assert_rendered(page, summary, lesson, checks_failed=len(summary["errors"]))

        widget_cell = cell(page, cell_index(notebook, drive.marker))
        output = widget_cell.locator(".widget-output").first
        sync_api.expect(output).not_to_be_empty()
        widget_cell.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"{lesson}-run-all.png"))
        before = visible_output(widget_cell)
        move(page, widget_cell, drive)
        def redrawn(now: tuple[str, tuple[str, ...]]) -> bool:  # changed, and not caught half-way
            return now != before and drive.expect in now[0] and (bool(now[1]) or not before[1])

        deadline = time.monotonic() + WIDGET_TIMEOUT / 1000
        while not redrawn(visible_output(widget_cell)) and time.monotonic() < deadline:
            page.wait_for_timeout(300)
        page.wait_for_timeout(500)
        after = visible_output(widget_cell)
        widget_cell.locator(".jp-OutputArea").first.screenshot(path=str(ARTIFACTS / f"{lesson}-widget.png"))
        assert after != before, f"{lesson}: moving {drive.label!r} did not change the widget's output"
        if drive.expect:
            sync_api.expect(output).to_contain_text(drive.expect, timeout=WIDGET_TIMEOUT)
        if before[1]:
            assert after[1] and after[1] != before[1], f"{lesson}: the widget's figure did not change"
        assert not blocked_requests, f"the pages asked for outside addresses: {blocked_requests[:5]}"
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / f"{lesson}-failure.png"))
        raise
    finally:
        page.close()
        lab.shutdown_kernels()


WARMUP = "00_roadmap.ipynb"
WRONG = "apple_weights = [0.2, 0.5, 0.3]"
RIGHT = "apple_weights = [0.1, 0.4, 0.5]"


def test_exercise_feedback_in_a_working_copy(lab: LabServer, browser_context: object) -> None:
    """A learner's copy of lesson 00: a wrong answer gets the hint for its mistake, a right one 'Correct'."""
    path = lab.root / WARMUP
    notebook = saved_notebook(path)
    answer = cell_index(notebook, "apple_weights = None")
    test = cell_index(notebook, "checks.check_warmup_weights(apple_weights)")
    blank = "".join(notebook["cells"][answer]["source"])
    assert "# YOUR CODE HERE" in blank, f"the working copy's answer cell is not blank: {blank!r}"
    page = open_notebook(browser_context, lab, WARMUP, "exercise")
    try:
        run_all(page)  # the exercise's test cell fails on the blank answer; the cells after it run
        feedback = cell(page, test).locator(".jp-OutputArea")
        sync_api.expect(feedback).to_contain_text("apple_weights is None")

        type_into_cell(page, answer, WRONG)
        run_cells(page, answer, 2)
        sync_api.expect(feedback).to_contain_text("leans towards technology by 0.27 only")
        cell(page, test).screenshot(path=str(ARTIFACTS / "exercise-wrong-answer.png"))

        type_into_cell(page, answer, RIGHT)
        run_cells(page, answer, 2)
        sync_api.expect(feedback).to_contain_text("Correct: apple' = [0.36, 0.81]")
        sync_api.expect(feedback).not_to_contain_text("only")
        cell(page, test).screenshot(path=str(ARTIFACTS / "exercise-right-answer.png"))
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "exercise-failure.png"))
        raise
    finally:
        page.close()
        lab.shutdown_kernels()
