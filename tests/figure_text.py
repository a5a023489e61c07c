"""How large a figure's text is on a slide: a deck draws an output figure across the slide's inner width
(1280 px less 2 x 24 px of padding) and at most 0.86 x 720 px high, keeping its aspect ratio."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.text import Text

SLIDE_WIDTH_PX = 1280 - 2 * 24
FIGURE_MAX_HEIGHT_PX = int(0.86 * 720)
MIN_TEXT_PX = 20


def pixels_per_inch_on_a_slide(fig: Figure) -> float:
    """The scale at which a deck draws ``fig``: as wide as the slide, unless that makes it too tall."""
    width, height = fig.get_size_inches()
    return min(SLIDE_WIDTH_PX / width, FIGURE_MAX_HEIGHT_PX / height)


def small_texts(fig: Figure, minimum_px: float = MIN_TEXT_PX) -> list[str]:
    """The visible, non-empty texts of ``fig`` smaller than ``minimum_px`` on a slide, as "text (n px)"."""
    fig.canvas.draw()  # tick labels exist once drawn
    scale = pixels_per_inch_on_a_slide(fig) / 72.0
    found = []
    for text in fig.findobj(Text):
        if text.get_visible() and text.get_text().strip() and text.get_figure() is not None:
            px = text.get_fontsize() * scale
            if px < minimum_px - 1e-9:
                found.append(f"{text.get_text()!r} ({px:.1f} px)")
    return found
