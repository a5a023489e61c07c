"""Lesson 15's own figures (selfattention.plots.io_aware): what they draw, their text sizes, their errors."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from selfattention.plots import io_aware  # noqa: E402


def test_causal_tile_grid_hatches_the_skipped_and_singles_out_no_row():
    fig = io_aware.causal_tile_grid(256, 32)
    ax = fig.axes[0]
    assert len([p for p in ax.patches if p.get_hatch() == "//"]) == 8 * 7 // 2
    assert not [p for p in ax.patches if not p.get_fill()]          # no outlined row of tiles
    assert ax.get_title() == "T = 256: 8 x 8 tiles, 28 skipped"
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert min(sizes) * 1280 / (fig.get_size_inches()[0] * 72) >= 20
    plt.close(fig)
    with pytest.raises(ValueError, match="T=250"):
        io_aware.causal_tile_grid(250, 32)


def test_memory_levels_label_the_cited_sizes_and_the_counted_arrow():
    fig = io_aware.memory_levels()
    texts = [t.get_text() for t in fig.findobj(Text) if t.get_text().strip()]
    assert "80 GiB,\nread at 3.35 TB/s" in texts and "228 KB in each of\n132 compute units" in texts
    assert any("SlowMemory counts" in t for t in texts)
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert min(sizes) * 1280 / (fig.get_size_inches()[0] * 72) >= 20
    plt.close(fig)
