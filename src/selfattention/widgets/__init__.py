"""Widgets: redrawing a figure in place from a widget callback, fast enough for a live lecture.

The widget builders of one lesson or topic live in a module of this package named for the topic (for
example ``selfattention.widgets.embeddings``); this module holds the redraw helpers they share.


A callback that builds a new figure on every move of a slider pays for the figure, its axes, ``tight_layout``
and then the inline backend's PNG, which is made with ``bbox_inches="tight"`` (the figure is drawn twice).
Here the lesson builds its figure once, its callback only changes the artists' data (``set_heights``,
``set_histogram``, ``Line2D.set_data``, ``Text.set_text``) and :func:`show` draws that one figure once, as a
PNG.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from IPython.display import Image, display
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

__all__ = ["show", "set_heights", "set_histogram"]


def show(fig: Figure) -> None:
    """Display ``fig`` as a PNG, drawn once at the figure's own size and dpi (no tight bounding box)."""
    if not isinstance(fig, Figure):
        raise TypeError(f"fig is a {type(fig).__name__}; expected a matplotlib Figure")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    display(Image(data=buffer.getvalue(), format="png"))


def set_heights(bars: BarContainer | Sequence, heights: Sequence[float] | np.ndarray) -> None:
    """Set the heights of the bars of ``ax.bar(...)`` (one height per bar, shape ``(n_bars,)``)."""
    heights = np.asarray(heights, dtype=float)
    if heights.shape != (len(bars),):
        raise ValueError(f"heights has shape {heights.shape}; expected ({len(bars)},), one per bar")
    for bar, height in zip(bars, heights, strict=True):
        bar.set_height(height)


def set_histogram(patches: BarContainer | Sequence, counts: np.ndarray, edges: np.ndarray) -> None:
    """Move the ``n`` bars of ``ax.hist(..., bins=n)`` to ``counts`` ``(n,)`` and ``edges`` ``(n + 1,)``
    (what ``np.histogram`` returns)."""
    counts, edges = np.asarray(counts, dtype=float), np.asarray(edges, dtype=float)
    if counts.shape != (len(patches),) or edges.shape != (len(patches) + 1,):
        raise ValueError(f"counts {counts.shape} and edges {edges.shape}; expected ({len(patches)},) and "
                         f"({len(patches) + 1},) for {len(patches)} bars")
    for bar, count, left, right in zip(patches, counts, edges[:-1], edges[1:], strict=True):
        bar.set_x(left)
        bar.set_width(right - left)
        bar.set_height(count)
