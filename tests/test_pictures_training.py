"""Lesson 05's figures and widget (selfattention.plots.training, selfattention.widgets.training): what they
draw, legible on a slide, and a viewer that redraws its one figure at each checkpoint, chosen by step."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from selfattention import tasks  # noqa: E402
from selfattention.plots import projections, training  # noqa: E402
from selfattention.widgets import training as viewer  # noqa: E402


def smallest_text_pt(fig) -> float:
    fig.canvas.draw()
    return min(t.get_fontsize() for t in fig.findobj(Text) if t.get_text() and t.get_visible())


def history(final: float, n: int = 5) -> list[tuple[int, float, np.ndarray]]:
    maps = [np.full((3, 3), 1 / 3), np.eye(3)[[1, 1, 1]]]
    return [(2 * i, final * i / (n - 1), maps[i == n - 1]) for i in range(n)]


def test_accuracy_curves_draw_one_line_per_run_and_the_chance_level():
    runs = {"learned": [history(1.0), history(0.9)], "free": [history(0.1)]}
    fig = training.accuracy_curves(runs, chance={"guess": 0.25})
    ax = fig.axes[0]
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) == 5]
    assert len(lines) == 3
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["learned (2 starts)", "free (1 starts)", "guess"]
    assert smallest_text_pt(fig) >= projections.deck_font_pt(fig.get_figwidth()) - 1e-9
    with pytest.raises(ValueError, match="runs is empty"):
        training.accuracy_curves({})
    with pytest.raises(ValueError, match="has no run"):
        training.accuracy_curves({"x": []})
    plt.close("all")


def test_accuracy_curves_with_losses_draw_a_loss_panel_first():
    runs = {"learned": [history(1.0), history(0.9)], "free": [history(0.1)]}
    losses = {"learned": [[2.1, 1.0, 0.5, 0.1, 0.0]] * 2, "free": [[2.1, 2.1, 2.08, 2.07, 2.06]]}
    fig = training.accuracy_curves(runs, chance={"guess": 0.25}, losses=losses, loss_levels={"ln 8": 2.079})
    loss_ax, acc_ax = fig.axes[:2]
    assert loss_ax.get_ylabel() == "held-out loss" and acc_ax.get_ylabel() == "held-out accuracy"
    assert len([line for line in loss_ax.get_lines() if len(line.get_xdata()) == 5]) == 3
    assert smallest_text_pt(fig) >= projections.deck_font_pt(fig.get_figwidth()) - 1e-9
    with pytest.raises(ValueError, match="losses has models"):
        training.accuracy_curves(runs, losses={"learned": losses["learned"]})
    plt.close("all")


def test_learned_matrices_centre_each_colour_scale_at_zero():
    rng = np.random.default_rng(0)
    fig = training.learned_matrices(rng.normal(size=(8, 8)), rng.normal(size=(17, 8)) * 5, "ABCDEFGH",
                                    "01234567")
    panels = [ax for ax in fig.axes if ax.images]
    for ax in panels:
        low, high = ax.images[0].get_clim()
        assert high > 0 and low == -high
    assert [t.get_text() for t in panels[1].get_yticklabels()][-1] == "flag"
    assert smallest_text_pt(fig) >= projections.deck_font_pt(fig.get_figwidth()) - 1e-9
    with pytest.raises(ValueError, match=r"expected \(8, 8\) and \(17, 8\)"):
        training.learned_matrices(np.zeros((8, 8)), np.zeros((16, 8)), "ABCDEFGH", "01234567")
    plt.close("all")


def test_training_viewer_moves_the_map_and_the_marker(monkeypatch, capsys):
    shown = []
    monkeypatch.setattr(viewer, "show", shown.append)
    h = history(1.0)
    widget = viewer.training_viewer(h, ["a:1", "b:2", "?a"], target=1)
    slider = widget.children[0]
    assert slider.description == "step" and slider.max == h[-1][0] and slider.step == 2
    slider.value = h[-1][0]
    fig = shown[-1]
    assert all(f is fig for f in shown), "one figure, redrawn"
    smallest = projections.deck_font_pt(fig.get_figwidth(), shown_px=viewer.WIDGET_PX)
    assert smallest_text_pt(fig) >= smallest - 1e-9
    ax_map = [ax for ax in fig.axes if ax.images][0]
    np.testing.assert_allclose(ax_map.images[0].get_array(), h[-1][2])
    out = capsys.readouterr().out
    assert "step   8: held-out accuracy 1.000; the question token gives 1.00 of its attention" in out
    with pytest.raises(ValueError, match="history is empty"):
        viewer.training_viewer([], ["a"], 0)
    with pytest.raises(ValueError, match=r"each map must be \(2, 2\)"):
        viewer.training_viewer(h, ["a", "b"], 0)
    plt.close("all")


def test_the_reports_read_tasks_train_checkpoints(capsys):
    import torch

    import selfattention as sa
    from selfattention import tasks

    data = (*tasks.make_lookup_data(60, seed=1), *tasks.make_lookup_data(40, seed=2))
    torch.manual_seed(0)
    model = tasks.ReadoutModel(sa.SelfAttention(tasks.D_IN, 4), 4)
    snapshot = training.checkpoint_on(data[2], data[3], 0)
    runs = {"learned": [tasks.train(model, data, steps=2, batch=30, snapshot=snapshot)]}
    A, loss = runs["learned"][0][-1][2]
    assert A.shape == (5, 5) and loss > 0
    training.report_runs({"learned": [model]}, runs, data)
    assert "learned, " in capsys.readouterr().out
    fig = training.runs_figure(runs)
    assert any("ln 8" in t.get_text() for t in fig.findobj(Text))
    plt.close(fig)
    assert 0.0 <= training.next_letter_weight(model, data[2]) <= 1.0
    block, to_logits = np.arange(64.0).reshape(8, 8), np.ones((17, 8))
    training.report_learned([(block, to_logits)], before=[block])
    assert "next letter first" in capsys.readouterr().out
    viewer.training_viewer(runs["learned"][0], tasks.token_labels(data[2][0]), 1)   # (A, loss) snapshots
    with pytest.raises(ValueError, match="example"):
        training.checkpoint_on(data[2], data[3], 40)


def test_start_model_report_question_weights_and_letter_scores_and_values(capsys):
    import torch

    import selfattention as sa
    from selfattention import tasks

    model = tasks.start_model(0, lambda: sa.SelfAttention(tasks.D_IN, 4, d_v=6), 6)
    again = tasks.start_model(0, lambda: sa.SelfAttention(tasks.D_IN, 4, d_v=6), 6)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), again.parameters(), strict=True))
    X = tasks.make_lookup_data(20, seed=3)[0]
    training.report_question_weights([model, again], X, tasks.item_roles(X))
    assert "weight on the target" in capsys.readouterr().out
    block, to_logits = training.letter_scores_and_values(model)
    att = model.attention
    M = (att.W_query.weight.T @ att.W_key.weight).detach().numpy() / 2.0     # sqrt(d_k) = 2
    assert block.shape == (8, 8) and to_logits.shape == (17, 8)
    assert np.allclose(block, M[:8, :8] + M[16, :8], atol=1e-6)


def test_line_bound_matches_hand_counts():
    # every letter present: a line has two ends, so at most two of the n asked letters find their next one
    assert training.line_bound(4, 4) == pytest.approx(2 / 4)
    assert training.line_bound(3, 3) == pytest.approx(2 / 3)
    assert 0.5 < training.line_bound() < 0.6
    with pytest.raises(ValueError, match="n_items"):
        training.line_bound(3, 4)


def test_line_orders_on_lands_around_the_bound():
    """The best orders' share on a finite set brackets the average share, and a bad shape is refused."""
    X, _ = tasks.make_lookup_data(200, seed=3)
    lo, hi = training.line_orders_on(X)
    assert 0 <= lo <= hi <= 1 and lo < training.line_bound() < hi
    with pytest.raises(ValueError, match="X"):
        training.line_orders_on(X[:, :3])
