"""Lesson 06's figures and widget (selfattention.plots.scaling, selfattention.widgets.scaling): text legible
on a slide, bad input refused by name, the widget redrawing one figure with the right numbers."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import selfattention as sa  # noqa: E402
from selfattention import tasks, widgets  # noqa: E402
from selfattention.plots import scaling as plots  # noqa: E402
from selfattention.widgets import scaling as scaling_widgets  # noqa: E402

SLIDE_PX = 1200  # a figure shown across a 1280 px slide is drawn about this wide
MIN_PX = 20

D_KS = [2, 4, 8, 16]
NAMES = ("none", "sqrt(d_k)", "d_k")


def smallest_text_px(fig: plt.Figure) -> float:
    """The smallest visible text of ``fig`` in pixels when the figure is drawn SLIDE_PX wide."""
    fig.canvas.draw()
    px_per_point = SLIDE_PX / fig.get_figwidth() / 72
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert sizes, "the figure has no text"
    return min(sizes) * px_per_point


def _saturation_measures():
    rng = np.random.default_rng(0)
    keys = ("entropy", "largest weight", "|dL/domega|")
    return {name: {key: list(rng.uniform(0.1, 1, len(D_KS))) for key in keys} for name in NAMES}


def _runs(d_ks=(4, 16), seeds=(0, 1)):
    return {(name, d, s): [(step, 0.1 + step / 200, 1.0 + step / 10) for step in (0, 10, 20)]
            for name in NAMES for d in d_ks for s in seeds}


def _figures():
    yield "score_variance", plots.score_variance(D_KS, [2.0, 4.1, 7.9, 16.2])
    yield "saturation", plots.saturation(D_KS, _saturation_measures(), T=16)
    yield "training", plots.training(_runs(), (4, 16), (0, 1), d_k=16)
    explore = scaling_widgets.divided_scores(T=16)
    yield "widget", explore.figure


@pytest.mark.parametrize("name", ["score_variance", "saturation", "training", "widget"])
def test_figure_text_is_legible_on_a_slide(name, monkeypatch):
    monkeypatch.setattr(widgets, "display", lambda image: None)
    fig = dict(_figures())[name]
    if name == "widget":  # its titles are written by the callback
        explore = scaling_widgets.divided_scores(T=16)
        explore(d_k=64)
        fig = explore.figure
    assert fig.get_figwidth() == pytest.approx(plots.WIDTH)
    assert smallest_text_px(fig) >= MIN_PX
    plt.close("all")


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match=r"variances has shape \(3,\); expected \(4,\)"):
        plots.score_variance(D_KS, [1, 2, 3])
    with pytest.raises(ValueError, match="divisor 'half' is not one of"):
        plots.saturation(D_KS, {"half": _saturation_measures()["none"]}, T=16)
    with pytest.raises(ValueError, match="T must be at least 2"):
        plots.saturation(D_KS, _saturation_measures(), T=1)
    with pytest.raises(ValueError, match=r"has no 'entropy'"):
        plots.saturation(D_KS, {"none": {"largest weight": [1] * 4, "|dL/domega|": [1] * 4}}, T=16)
    with pytest.raises(ValueError, match=r"d_k=64 is not one of the trained lengths \[4, 16\]"):
        plots.training(_runs(), (4, 16), (0, 1), d_k=64)
    with pytest.raises(ValueError, match=r"runs has no entry \('none', 16, 2\)"):
        plots.training(_runs(), (4, 16), (0, 1, 2), d_k=16)
    with pytest.raises(ValueError, match="T must be an integer of at least 2"):
        scaling_widgets.divided_scores(T=1)
    explore = scaling_widgets.divided_scores()
    with pytest.raises(ValueError, match="d_k must be a positive integer"):
        explore(d_k=0)
    with pytest.raises(ValueError, match="c must be positive"):
        explore(d_k=4, c=0.0)
    with pytest.raises(ValueError, match=r"weights has shape \(2, 2\); expected \(T,\)"):
        scaling_widgets.entropy(np.eye(2))
    plt.close("all")


def test_entropy_of_uniform_and_one_hot_weights():
    assert scaling_widgets.entropy(np.full(8, 1 / 8)) == pytest.approx(math.log(8))
    assert scaling_widgets.entropy(np.eye(8)[3]) == 0.0


def test_widget_redraws_one_figure_and_prints_its_numbers(monkeypatch, capsys):
    shown = []
    monkeypatch.setattr(widgets, "display", shown.append)
    explore = scaling_widgets.divided_scores(T=16)
    before = plt.get_fignums()
    explore(d_k=1024, c=1.0)
    explore(d_k=1024, standard=True)
    assert plt.get_fignums() == before, "a redraw must not open a new figure"
    assert len(shown) == 2 and all(image.format == "png" for image in shown)
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("d_k = 1024, c = 1.00: score std 3")  # about sqrt(1024) = 32
    assert second.startswith("d_k = 1024, c = 32.00: score std 1.0")


@pytest.mark.parametrize(("d_k", "c"), [(4, 1.0), (256, 1.0), (256, 16.0)])
def test_widget_gradient_matches_the_softmax_chain_rule(d_k, c):
    """The widget's |dL/domega| (autograd) equals alpha * (u - alpha . u) with u = dL/dalpha, by hand."""
    T, d_v = 16, 8
    omega, alpha, grad = scaling_widgets._draw(d_k, c, T, 500, d_v)
    rng = np.random.default_rng(d_k)
    K, Q = rng.standard_normal((T, d_k)), rng.standard_normal((500, d_k))
    V, y = rng.standard_normal((T, d_v)), rng.standard_normal(d_v)
    np.testing.assert_allclose(omega, Q @ K.T / c)
    e = np.exp(omega[0] - omega[0].max())
    a = e / e.sum()
    np.testing.assert_allclose(alpha, a, atol=1e-12)
    u = V @ (a @ V - y)
    assert grad == pytest.approx(np.linalg.norm(a * (u - a @ u)), rel=1e-9, abs=1e-15)


def test_saturation_draws_the_query_gradient_dashed_when_given():
    measures = _saturation_measures()
    for values in measures.values():
        values["|dL/dq|"] = [0.5] * len(D_KS)
    fig = plots.saturation(D_KS, measures, T=16)
    dashed = [line for line in fig.axes[2].get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == len(NAMES)
    plt.close("all")


def test_tables_print_counts_and_the_predicted_growth(capsys):
    divisor = {"none": lambda d: 1.0, "sqrt(d_k)": math.sqrt, "d_k": float}
    runs = {(name, d, s): [(0, 0.1, 1.0), (10, 0.5, 2.0), (20, 1.0, 1.0 + d / divisor[name](d))]
            for name in NAMES for d in (4, 16) for s in (0, 1)}
    plots.training_table(runs, (4, 16), (0, 1))
    out = capsys.readouterr().out
    assert "none        16   1.000 (1.00-1.00)  2 of 2" in out
    assert "none 4.0 (4), sqrt(d_k) 2.0 (2), d_k 1.0 (1)" in out
    final = {0: 1.0, 1: 0.5}
    control = {(arm, 256, s): [(0, 0.1, 1.0), (10, 0.5, 2.0), (20, final[s], 3.0), (80, final[s], 3.0)]
               for arm in ("none", "d_k") for s in (0, 1)}
    plots.control_table(control, ["d_k", "none"], 256)
    out = capsys.readouterr().out
    assert "  1 of  2    0.50      1.00     3.00" in out
    with pytest.raises(ValueError, match="no run of arm 'folded'"):
        plots.control_table(control, ["folded"], 256)
    sweep = {**control, **{(f"{arm}, lr 0.01", 256, s): [(80, 1.0, 1.0)]
                           for arm in ("none", "d_k") for s in (0, 1)}}
    plots.sweep_table(sweep, ["none", "d_k"], (0.01, 0.05), 256)
    out = capsys.readouterr().out
    assert "none                     2 of 2      1 of 2" in out, out
    none_row = next(line for line in out.splitlines() if line.startswith("none"))
    assert none_row.split()[-3:] == ["0.50", "1.00", "3.00"], none_row   # at lr 0.05: lowest, spreads
    with pytest.raises(ValueError, match="no run of arm 'none' at lr 0.02"):
        plots.sweep_table(sweep, ["none"], (0.02,), 256)


def test_stall_table_tells_stalled_runs_from_the_others(capsys):
    data = {s: (*tasks.make_lookup_data(50, 100 + s), *tasks.make_lookup_data(80, 200 + s)) for s in (0, 1)}
    models = {("a", 8, s): _lookup_model(s) for s in (0, 1)}
    runs = {("a", 8, 0): [(0, 0.1, 1.0), (10, 0.5, 2.0), (20, 0.6, 3.0)],
            ("a", 8, 1): [(0, 0.1, 1.0), (10, 0.5, 2.0), (20, 1.0, 5.0)]}
    plots.stall_table(runs, models, data, "a", 8, (0, 1))
    out = capsys.readouterr().out
    assert "stalled (1)                 3.00 (3.00-3.00)" in out, out
    assert "reached 1.0 (1)             5.00 (5.00-5.00)" in out, out
    assert "seed 0, by the query's letter A to H: accuracy" in out


def _lookup_model(seed, d_k=8):
    torch.manual_seed(seed)
    return tasks.ReadoutModel(sa.SelfAttention(tasks.D_IN, d_k, d_v=4, scale=0.5), 4)


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_train_seeds_gives_each_model_its_own_run(optimizer):
    """Trained side by side, each model follows the run tasks.train (or the same loop with SGD) gives it."""
    datas = [(*tasks.make_lookup_data(200, 10 + s), *tasks.make_lookup_data(50, 20 + s)) for s in (0, 1)]
    together = [_lookup_model(s) for s in (0, 1)]
    got = plots.train_seeds(together, datas, steps=6, lr=0.05, every=3, optimizer=optimizer, batch=50,
                            snapshot=lambda m: plots.score_spread(m, datas[0][2]))
    for s, model in zip((0, 1), together, strict=True):
        alone = _lookup_model(s)
        if optimizer == "adam":
            want = tasks.train(alone, datas[s], steps=6, lr=0.05, every=3, batch=50,
                               snapshot=lambda m: plots.score_spread(m, datas[0][2]))
            assert [(a, round(b, 6), round(c, 4)) for a, b, c in got[s]] == \
                [(a, round(b, 6), round(c, 4)) for a, b, c in want]
        else:
            opt = torch.optim.SGD(alone.parameters(), lr=0.05)
            for step in range(6):
                start = step * 50 % 200  # the batches wrap around
                X, y = datas[s][0][start:start + 50], datas[s][1][start:start + 50]
                loss = torch.nn.functional.cross_entropy(alone(X)[0], y.reshape(-1))
                opt.zero_grad()
                loss.backward()
                opt.step()
        for p, q in zip(model.parameters(), alone.parameters(), strict=True):
            torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)


def test_train_seeds_slows_only_the_parameters_named():
    datas = [(*tasks.make_lookup_data(100, 1), *tasks.make_lookup_data(20, 2))]
    model, start = _lookup_model(0), _lookup_model(0)
    plots.train_seeds([model], datas, steps=1, lr=0.1, every=1, batch=100,
                      lr_factor={"attention.W_query.weight": 0.0})
    assert torch.equal(model.attention.W_query.weight, start.attention.W_query.weight)
    assert not torch.equal(model.attention.W_key.weight, start.attention.W_key.weight)
    with pytest.raises(ValueError, match="lr_factor names"):
        plots.train_seeds([model], datas, lr_factor={"W_Q": 0.5})
    with pytest.raises(ValueError, match="optimizer="):
        plots.train_seeds([model], datas, optimizer="rmsprop")


def test_widget_speaks_the_lessons_notation():
    """The lesson calls the divisor c (omega = q . k / c); the widget's axis says the same."""
    explore = scaling_widgets.divided_scores(T=16)
    label = explore.figure.axes[0].get_xlabel()
    assert "q·k / c" in label and "τ" not in label, label
    plt.close("all")


def test_widget_histogram_shows_the_shape_of_a_narrow_spread(monkeypatch):
    """At c = sqrt(d_k) the scores spread by about 1: the bars cover them in many bins, not one."""
    monkeypatch.setattr(widgets, "display", lambda image: None)
    explore = scaling_widgets.divided_scores(T=16)
    explore(d_k=1024, standard=True)
    bars = [p for p in explore.figure.axes[0].patches if p.get_height() > 0]
    assert len(bars) >= 10
    assert explore.figure.axes[0].get_xlim() == (-100.0, 100.0)   # the axis stays fixed
    plt.close("all")


def test_the_dashed_gradient_line_stays_visible_on_the_solid_one():
    """Where both gradients are equal (sqrt(d_k)), the dashed line is drawn on top, with a white edge."""
    measures = _saturation_measures()
    for values in measures.values():
        values["|dL/dq|"] = list(values["|dL/domega|"])
    fig = plots.saturation(D_KS, measures, T=16)
    solid = [line for line in fig.axes[2].get_lines() if line.get_linestyle() == "-"]
    dashed = [line for line in fig.axes[2].get_lines() if line.get_linestyle() == "--"]
    assert all(d.get_zorder() > s.get_zorder() and d.get_path_effects() for d in dashed for s in solid)
    plt.close("all")


def test_lookup_runs_store_each_seed_under_its_variant():
    lab = plots.LookupRuns(n_seeds=2)
    lab.train("sqrt(d_k)", 2.0, 4, seeds=range(2), steps=20)
    assert sorted(lab.runs) == [("sqrt(d_k)", 4, 0), ("sqrt(d_k)", 4, 1)]
    assert [c[0] for c in lab.runs["sqrt(d_k)", 4, 0]] == [0, 10, 20]
    folded = lab.make_model(1.0, 4, 0, fold=2.0).attention.W_query.weight
    assert torch.allclose(folded * 2, lab.make_model(1.0, 4, 0).attention.W_query.weight)


def test_saturation_measures_give_500_values_per_d_k():
    sat = plots.saturation_measures([2, 4], T=16)
    assert set(sat) == set(NAMES) and all(len(v) == 2 and v[0].shape == (500,) for v in sat["none"].values())


def test_train_rates_names_runs_as_the_sweep_table_reads_them(capsys):
    lab = plots.LookupRuns(n_seeds=2)
    lab.train_rates("d_k", 4.0, 4, range(2), (0.05, 0.01), steps=20)
    assert sorted({key[0] for key in lab.runs}) == ["d_k", "d_k, lr 0.01"]
    plots.sweep_table(lab.runs, ["d_k"], (0.01, 0.05), 4)
    assert "of 2" in capsys.readouterr().out


def test_more_steps_trains_copies_of_the_stalled_runs_only():
    lab = plots.LookupRuns(n_seeds=2)
    lab.train("none", 1.0, 4, seeds=range(2), steps=10)
    before = {key: [p.detach().clone() for p in model.parameters()] for key, model in lab.models.items()}
    change = lab.more_steps("none", 4, range(2), steps=10)
    assert change.shape == (len(lab.stalled("none", 4, range(2))),)
    for key, model in lab.models.items():  # the stored runs stay as they are
        assert all(torch.equal(p, q) for p, q in zip(model.parameters(), before[key], strict=True))


def test_q_gradient_line_prints_one_median_per_d_k(capsys):
    sat = plots.saturation_measures([2, 4], T=16)
    plots.q_gradient_line(sat, [2, 4])
    lines = capsys.readouterr().out.splitlines()
    medians = [f"{np.median(g):.2g}" for g in sat["none"]["|dL/dq|"]]
    assert len(lines) == 3 and lines[1].split()[-2:] == medians


def test_explore_divisor_builds_the_three_controls():
    shown = scaling_widgets.explore_divisor([2, 64], T=16)
    kinds = sorted(type(w).__name__ for w in shown.widget.children[:3])
    assert kinds == ["Checkbox", "FloatLogSlider", "SelectionSlider"]
    plt.close("all")
    with pytest.raises(ValueError, match="d_ks"):
        scaling_widgets.explore_divisor([])
