"""selfattention.widgets: a figure built once, its bars moved in place, drawn once as a PNG."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from selfattention import widgets


def test_set_histogram_matches_a_fresh_hist() -> None:
    data = np.random.default_rng(0).standard_normal(500) * 3
    fig, (ax_live, ax_ref) = plt.subplots(1, 2)
    _, _, live = ax_live.hist(np.zeros(1), bins=20)
    counts, edges = np.histogram(data, bins=20)
    widgets.set_histogram(live, counts, edges)
    _, _, ref = ax_ref.hist(data, bins=20)
    got = [(b.get_x(), b.get_width(), b.get_height()) for b in live]
    want = [(b.get_x(), b.get_width(), b.get_height()) for b in ref]
    np.testing.assert_allclose(got, want)
    plt.close(fig)


def test_set_heights_and_bad_shapes_name_the_argument() -> None:
    fig, ax = plt.subplots()
    bars = ax.bar(range(4), np.zeros(4))
    widgets.set_heights(bars, [0.1, 0.2, 0.3, 0.4])
    assert [b.get_height() for b in bars] == pytest.approx([0.1, 0.2, 0.3, 0.4])
    with pytest.raises(ValueError, match=r"heights has shape \(3,\); expected \(4,\)"):
        widgets.set_heights(bars, [1, 2, 3])
    with pytest.raises(ValueError, match="counts"):
        widgets.set_histogram(bars, np.ones(4), np.arange(4))
    with pytest.raises(TypeError, match="fig is a list; expected a matplotlib Figure"):
        widgets.show([])
    plt.close(fig)


def test_show_displays_one_png_of_the_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = []
    monkeypatch.setattr(widgets, "display", shown.append)
    fig, ax = plt.subplots(figsize=(2, 1), dpi=50)
    widgets.show(fig)
    [image] = shown
    assert image.format == "png" and image.data.startswith(b"\x89PNG")
    assert int.from_bytes(image.data[16:20], "big") == 100  # width in pixels: 2 in x 50 dpi
    plt.close(fig)


def test_heatmaps_share_one_colour_scale_and_bar():
    import matplotlib

    matplotlib.use("Agg")
    from selfattention.plots import heatmaps

    flat = np.full((3, 3), 1 / 3)
    sharp = np.eye(3)
    fig, axes = heatmaps([flat, sharp], ["flat", "sharp"], ["a", "b", "c"])
    limits = {ax.images[0].get_clim() for ax in axes}
    assert limits == {(0.0, 1.0)}, limits  # the flat map is not stretched to full contrast
    assert len(fig.axes) == 3  # two panels and one colour bar
    fig2, axes2 = heatmaps([flat], ["flat"], vmax=0.5)
    assert axes2[0].images[0].get_clim() == (0.0, 0.5)
    with pytest.raises(ValueError, match="one title per matrix"):
        heatmaps([flat, sharp], ["only one"])
