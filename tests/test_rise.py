"""Live slides: a lesson shown by jupyterlab-rise inside JupyterLab, its widget alive, in headless Chromium.

As an instructor does it: run the lesson in JupyterLab, select the widget's cell, press Alt+R (View ->
"Render as Reveal Slideshow"), then in the slideshow re-run the cell (Shift+Enter) and move its control. The
widget must be drawn as a widget (not as its text, e.g. ``VBox(children=(HBox(...``, which is what a widget
manager that failed to load leaves), its output must change, and JupyterLab's "Click to add a cell." bar must
not be on the slide (``notebooks/rise.css`` hides it). Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import re

import pytest
from playwright import sync_api
from test_browser import DRIVES

from labdriver import (
    ARTIFACTS,
    PRESENT_DIR,
    RISE_FRAME,
    WIDGET_FALLBACKS,
    LabServer,
    cell,
    cell_index,
    open_notebook,
    rise_frame,
    run_all,
    saved_notebook,
    show_cell_in_rise,
)

pytestmark = pytest.mark.needs_chromium

LESSON = "00_roadmap"  # the shortest lesson; its widget: a slider and a menu over a figure and a printed line
MENU, CHOICE = "sentence", "phones"  # the menu moves apple' from near juice to near phones


def visible_texts(frame: object, selector: str) -> list[str]:
    """Texts of the elements matching ``selector`` that take up room on the page."""
    return frame.locator(selector).evaluate_all(
        "els => els.filter(e => e.getClientRects().length && e.offsetWidth * e.offsetHeight > 0)"
        ".map(e => e.innerText)"
    )


def test_widget_lives_in_rise(lab: LabServer, browser_context: object, blocked_requests: list[str]) -> None:
    """Alt+R on the widget's cell, Shift+Enter in the slideshow, choose a menu item: the figure follows."""
    path = f"{PRESENT_DIR}/{LESSON}.ipynb"
    page = open_notebook(browser_context, lab, path, "live-slides")
    try:
        run_all(page)
        index = cell_index(saved_notebook(lab.root / path), DRIVES[LESSON].marker)
        cell(page, index).locator(".jp-InputArea-prompt").click()  # select the widget's cell
        page.keyboard.press("Escape")
        page.keyboard.press("Alt+r")
        page.locator(RISE_FRAME).wait_for()
        slides = page.frame_locator(RISE_FRAME)
        slide = show_cell_in_rise(page, index)
        widget = slide.locator(".jp-OutputArea-output > .jupyter-widgets").first
        sync_api.expect(widget).to_be_visible(timeout=60_000)

        # Re-run the cell inside the slideshow (Ctrl+Enter: Shift+Enter would also move to the next slide);
        # the new widget is drawn as a widget.
        prompt = slide.locator(".jp-InputArea-prompt").first
        count = prompt.inner_text()
        prompt.click()
        page.keyboard.press("Escape")
        page.keyboard.press("Control+Enter")
        sync_api.expect(prompt).not_to_have_text(count)
        sync_api.expect(prompt).to_have_text(re.compile(r"\[\d+\]:"))
        sync_api.expect(widget).to_be_visible(timeout=60_000)
        output = widget.locator(".widget-output").first
        sync_api.expect(output.locator("img")).to_be_visible(timeout=60_000)
        frame = rise_frame(page)
        fallbacks = [t[:120] for t in visible_texts(frame, ".jp-OutputArea-output")
                     if any(f in t for f in WIDGET_FALLBACKS)]
        assert not fallbacks, f"widgets shown as text in RISE: {fallbacks}"
        bars = visible_texts(frame, ".jp-Notebook-footer")
        assert not bars, f"JupyterLab's add-a-cell bar is on the slides: {bars}"
        page.screenshot(path=str(ARTIFACTS / "rise-widget-before.png"))

        before = output.inner_text()
        image_before = output.locator("img").first.get_attribute("src")
        label = slides.locator("label.widget-label", has_text=re.compile(rf"^{MENU}$"))
        widget.locator(".widget-inline-hbox").filter(has=label).locator("select").select_option(label=CHOICE)
        sync_api.expect(output).not_to_have_text(before, timeout=60_000)  # the printed apple' = [...]
        sync_api.expect(output).to_contain_text("apple' = [")
        sync_api.expect(output.locator("img").first).not_to_have_attribute("src", image_before or "")
        page.screenshot(path=str(ARTIFACTS / "rise-widget-after.png"))
        assert not blocked_requests, f"the slideshow asked for outside addresses: {blocked_requests[:5]}"
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "rise-failure.png"))
        raise
    finally:
        page.close()
        lab.shutdown_kernels()
