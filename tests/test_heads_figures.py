"""selfattention.plots.heads and selfattention.widgets.heads (lessons 07 and 08): the figures say what the
lessons say, their text is legible on a slide, the widget views redraw in place, bad input is refused by
name."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from selfattention import core
from selfattention.plots import heads as plots
from selfattention.widgets import heads as views


def smallest_font_px(fig: Figure, slide_px: float = 1280.0) -> float:
    """The smallest text of ``fig``, in pixels, when the figure is drawn ``slide_px`` wide."""
    sizes = [t.get_fontsize() for t in fig.findobj(match=lambda a: hasattr(a, "get_fontsize"))
             if getattr(t, "get_text", lambda: "")() and t.get_visible()]
    return min(sizes) / 72 * slide_px / fig.get_figwidth()


def test_every_figure_is_legible_from_the_back_of_a_room() -> None:
    """At least 20 px on a 1280-px slide, with some room for the slide's margins (1180 px)."""
    figs = [plots.mha_diagram(), plots.split_merge_diagram(),
            plots.head_maps([np.eye(4)] * 2, ["a", "b"], list("wxyz"), list("wxyz"))[0],
            plots.query_bars(2, 5)[0]]
    for fig in figs:
        fig.canvas.draw()
        assert fig.get_figwidth() == plots.WIDTH
        assert smallest_font_px(fig, 1180.0) >= 20.0
        plt.close(fig)


def test_split_merge_colours_each_head_where_the_lesson_says() -> None:
    """Head m holds the m-th block of d_k columns of X W_Q and of the concatenation, and the m-th block of d_k
    rows of W_O; the control: the other head's blocks have the other colour."""
    from matplotlib.colors import to_hex

    T, h, d_k = 4, 2, 2
    fig = plots.split_merge_diagram(T, h, d_k)
    cells = [(p.get_x(), p.get_y(), to_hex(p.get_facecolor())) for p in fig.axes[0].patches]
    # X W_Q; a (T, d_k) block per head after the reshape, the transpose and as Z^(m); concat; W_O; output
    per_grid = [T * h * d_k] + [T * d_k] * (3 * h) + [T * h * d_k, (h * d_k) ** 2, T * h * d_k]
    assert len(cells) == sum(per_grid)
    first, concat_at = cells[:per_grid[0]], sum(per_grid[:1 + 3 * h])
    concat = cells[concat_at:concat_at + per_grid[1 + 3 * h]]
    w_o = cells[concat_at + per_grid[1 + 3 * h]:][:per_grid[2 + 3 * h]]
    for grid in (first, concat):          # columns: head 1's d_k, then head 2's
        xs = sorted({x for x, _, _ in grid})
        for x, _, colour in grid:
            assert colour == plots._HEAD_COLOURS[xs.index(x) // d_k]
    ys = sorted({y for _, y, _ in w_o}, reverse=True)          # rows from the top
    for _, y, colour in w_o:
        assert colour == plots._HEAD_COLOURS[ys.index(y) // d_k]
    texts = [t.get_text() for t in fig.axes[0].texts]       # the (T, h, d_k) drawing names its axes
    assert texts.count("$d_k$") == h and "$h$ \u2192" in texts and "$T$\u2193" in texts
    plt.close(fig)
    with pytest.raises(ValueError, match="h = 9"):
        plots.split_merge_diagram(4, 9, 2)


def test_head_maps_share_one_colour_scale_and_write_every_weight() -> None:
    a, b = np.full((3, 4), 0.25), np.eye(3, 4)
    fig, panels = plots.head_maps([a, torch.tensor(b)], ["flat", "sharp"], list("abc"), list("wxyz"),
                                  vmax=1.0)
    assert [p.images[0].get_clim() for p in panels] == [(0.0, 1.0), (0.0, 1.0)]
    assert [t.get_text() for t in panels[0].texts] == ["0.25"] * 12
    assert [t.get_text() for t in panels[1].texts][:4] == ["1.00", "0.00", "0.00", "0.00"]
    plt.close(fig)


@pytest.mark.parametrize(("args", "match"), [
    (([np.eye(3)], ["a", "b"], list("abc"), list("abc")), "maps has 1 entries and titles 2"),
    (([np.eye(3), np.eye(2)], ["a", "b"], list("abc"), list("abc")), "maps must all have one shape"),
    (([np.ones(3)], ["a"], list("abc"), list("abc")), r"maps\[0\] must be a 2-D"),
    (([np.eye(3)], ["a"], list("ab"), list("abc")), "row_labels has 2"),
])
def test_head_maps_refuses_bad_input_by_name(args, match) -> None:
    with pytest.raises(ValueError, match=match):
        plots.head_maps(*args)


def test_query_bars_refuses_a_bad_count() -> None:
    with pytest.raises(ValueError, match="num_heads must be a positive integer, got 0"):
        plots.query_bars(0, 5)


# --- the widget views --------------------------------------------------------------------------
X = np.array([[1.0, 0.5, 0.2, 0.1], [0.9, 1.1, 0.1, 0.0], [0.1, 0.2, 1.0, 0.5], [0.0, 0.1, 0.4, 1.2]])
VOCAB = dict(zip(["I", "love", "apple", "phones"], X, strict=True)) | {"juice": [0.0, 0.1, 1.2, 0.1]}
HEAD = tuple(np.eye(4)[:, :2] for _ in range(3))
OTHER = (np.eye(4)[:, 2:] * 2, np.eye(4)[:, [3, 2]], np.eye(4)[:, 2:])


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> list[Figure]:
    figures: list[Figure] = []
    monkeypatch.setattr(views, "show", figures.append)
    return figures


def test_sentence_heads_redraws_one_figure_with_the_weights_of_each_head(shown, capsys) -> None:
    sentences = ["I love apple phones", "I love apple juice"]
    view = views.sentence_heads(VOCAB, {"one": HEAD, "two": OTHER}, sentences)
    view("I love apple juice")
    view("I love apple phones")
    assert len(shown) == 2 and shown[0] is shown[1], "one figure, redrawn"
    Xs = np.stack([VOCAB[w] for w in "I love apple phones".split()])
    _, want = core.scaled_dot_product_attention(Xs @ OTHER[0], Xs @ OTHER[1], Xs @ OTHER[2])
    np.testing.assert_allclose(shown[1].axes[1].images[0].get_array(), want)
    assert [t.get_text() for t in shown[1].axes[1].get_xticklabels()] == "I love apple phones".split()
    last = capsys.readouterr().out.strip().split("\n")[-1]
    assert last.startswith("one: apple -> ") and f"two: apple -> phones ({want[2].max():.2f})" in last


def test_sentence_heads_scale_multiplies_every_W_Q(shown, capsys) -> None:
    view = views.sentence_heads(VOCAB, {"one": HEAD, "two": OTHER}, ["I love apple phones"])
    view("I love apple phones", scale=2.0)
    Xs = np.stack([VOCAB[w] for w in "I love apple phones".split()])
    _, want = core.scaled_dot_product_attention(Xs @ (2 * HEAD[0]), Xs @ HEAD[1], Xs @ HEAD[2])
    np.testing.assert_allclose(shown[0].axes[0].images[0].get_array(), want)
    assert "x 2" in shown[0]._suptitle.get_text()


@pytest.mark.parametrize(("sentences", "match"), [
    ([], "sentences is empty"),
    (["I love apple", "I love apple phones"], "one length"),
    (["I love apple pie"], r"words \['pie'\] are not in vocab"),
    (["I love juice phones"], "does not contain focus='apple'"),
])
def test_sentence_heads_refuses_bad_sentences_by_name(sentences, match) -> None:
    with pytest.raises(ValueError, match=match):
        views.sentence_heads(VOCAB, {"one": HEAD}, sentences)


def test_query_explorer_shows_each_head_and_says_when_a_model_has_fewer(shown, capsys) -> None:
    labels = [["E:2", "A:0", "B:3", "H:7", "?A"], ["C:1", "D:4", "G:5", "F:6", "?E"]]
    weights = {"one": torch.tensor([[[0.1, 0.1, 0.4, 0.3, 0.1]], [[0.2, 0.2, 0.2, 0.2, 0.2]]]),
               "two": torch.tensor([[[0, 0, 1.0, 0, 0], [0, 0, 0, 1.0, 0]]] * 2)}
    said = {"one": [[1, 7], [6, 6]], "two": [[3, 7], [6, 4]]}
    view = views.query_explorer(labels, weights, [[3, 7], [6, 4]], said, [[2, 3], [3, 1]])
    view("two", 0)
    view("one", 1)
    assert len(shown) == 2 and shown[0] is shown[1]
    first, second = shown[1].axes
    assert [b.get_height() for b in first.patches] == pytest.approx([0.2] * 5)
    assert not second.get_visible()     # the one-head model: no empty second panel
    view("two", 0)
    assert second.get_visible() and first.get_title() == "head 1"
    blue = first.patches[0].get_facecolor()[:3]
    view("one", 1)
    marked = {i: b.get_facecolor()[:3] for i, b in enumerate(first.patches) if b.get_facecolor()[:3] != blue}
    assert sorted(marked) == [1, 3] and marked[3] != marked[1]  # each answer's item in its own colour
    out = capsys.readouterr().out.strip().split("\n")
    assert out[:2] == ["?A asks for [3, 7]; the model answers [3, 7]",
                       "?E asks for [6, 4]; the model answers [6, 6]"]


def test_query_explorer_refuses_mismatched_shapes_by_name() -> None:
    labels = [["E:2", "A:0", "B:3", "H:7", "?A"]]
    with pytest.raises(ValueError, match=r"weights\['one'\] has shape \(1, 4\)"):
        views.query_explorer(labels, {"one": np.ones((1, 4))}, [[3, 7]], {"one": [[3, 7]]}, [[2, 3]])
    with pytest.raises(ValueError, match="predictions has no entry for model 'one'"):
        views.query_explorer(labels, {"one": np.ones((1, 1, 5))}, [[3, 7]], {}, [[2, 3]])
    with pytest.raises(ValueError, match="answers"):
        views.query_explorer(labels, {"one": np.ones((1, 1, 5))}, [[3, 7], [1, 2]], {"one": [[3, 7]]},
                             [[2, 3]])


def test_role_positions_match_the_letters():
    import torch

    from selfattention import tasks
    from selfattention.plots.heads import role_positions

    X, _ = tasks.make_lookup_data(64, seed=3, offsets=(1, -1))
    where = role_positions(X, (1, -1))
    letters = X[:, :tasks.N_ITEMS, :tasks.N_SYM].argmax(-1)
    s = X[:, -1, :tasks.N_SYM].argmax(-1)
    for col, o in enumerate((1, -1, 0)):
        assert bool((letters.gather(1, where[:, col:col + 1])[:, 0] == (s + o) % tasks.N_SYM).all())
    assert bool((torch.sort(where[:, :4], dim=1).values == torch.arange(4)).all())
    assert bool((where[:, 4] == tasks.N_ITEMS).all())
    with pytest.raises(ValueError, match="offsets"):
        role_positions(X, ())


def test_sentence_heads_reports_a_tie_as_a_tie(shown, capsys) -> None:
    """At scale 0 every score is 0 and every weight 1/T: no word wins."""
    view = views.sentence_heads(VOCAB, {"one": HEAD}, ["I love apple phones"])
    view("I love apple phones", scale=0.0)
    assert "one: apple -> a tie of I, love, apple, phones (0.25 each)" in capsys.readouterr().out


def test_focus_table_prints_each_heads_top_word_and_output(capsys) -> None:
    views.focus_table(VOCAB, {"one": HEAD, "two": OTHER}, ["I love apple phones"])
    Xs = np.stack([VOCAB[w] for w in "I love apple phones".split()])
    Z, A = core.scaled_dot_product_attention(Xs @ OTHER[0], Xs @ OTHER[1], Xs @ OTHER[2])
    out = capsys.readouterr().out
    assert f"two: apple -> phones ({A[2].max():.2f}), z = {np.round(Z[2], 2).tolist()}" in out
    with pytest.raises(ValueError, match="focus='apple'"):
        views.focus_table(VOCAB, {"one": HEAD}, ["I love juice phones"])


def test_by_role_and_role_table_read_the_query_row():
    from selfattention import tasks

    X, _ = tasks.make_lookup_data(6, seed=0, offsets=(1, -1))
    where = plots.role_positions(X, (1, -1))
    w = torch.zeros(6, 2, 5, 5)
    for i in range(6):                                      # head 0 all on "next", head 1 all on "previous"
        w[i, 0, -1, where[i, 0]] = 1.0
        w[i, 1, -1, where[i, 1]] = 1.0
    got = plots.by_role(w, where)
    assert got.shape == (6, 2, 5)
    assert torch.equal(got[:, 0, 0], torch.ones(6)) and torch.equal(got[:, 1, 1], torch.ones(6))
    table = plots.role_table({"two": [w, w.flip(1)]}, where, ["next", "previous", "own", "other", "query"])
    assert "more on next" in table and "1.00-1.00" in table and table.count("\n") == 2
    with pytest.raises(ValueError, match="weights must be"):
        plots.by_role(w[0], where)


def test_print_rows_puts_each_token_before_its_rows(capsys) -> None:
    plots.print_rows("Q | K", ["I", "love"], np.array([[1.0, 0.5], [0.25, 2.0]]), np.eye(2))
    assert capsys.readouterr().out.splitlines() == ["Q | K", "  I       [1.  0.5] | [1. 0.]",
                                                    "  love    [0.25 2.  ] | [0. 1.]"]
    with pytest.raises(ValueError, match="matrix 0 has 3 rows; expected 2"):
        plots.print_rows("x", ["I", "love"], np.zeros((3, 2)))


def test_cost_table_counts_match_the_formulas(capsys) -> None:
    """3 T d^2 for the projections, 2 T^2 d for the scores and sums, T d^2 for W_O, 4 d^2 parameters."""
    T, d = 10, 8
    plots.cost_table(T, d, (1, 4))
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    want = [f"{3 * T * d * d:,}", f"{2 * T * T * d:,}", f"{T * d * d:,}", f"{4 * d * d:,}"]
    assert rows == [["1", "8", *want, "100"], ["4", "2", *want, "400"]]
    with pytest.raises(ValueError, match="divide d_model=8"):
        plots.cost_table(T, d, (3,))


def test_more_words_have_the_worked_examples_four_features() -> None:
    assert all(len(v) == 4 for v in views.MORE_WORDS.values())


def _weights_on(where, on_next: float, on_previous: float) -> torch.Tensor:
    """One head's weights (n, 1, 5, 5): the query token puts on_next on the next item, on_previous on the
    previous one, the rest on itself."""
    w = torch.zeros(len(where), 1, 5, 5)
    for i in range(len(where)):
        w[i, 0, -1, where[i, 0]], w[i, 0, -1, where[i, 1]] = on_next, on_previous
        w[i, 0, -1, -1] = 1.0 - on_next - on_previous
    return w


def test_summary_and_weight_gaps_follow_the_heavier_item():
    from selfattention import tasks

    X, _ = tasks.make_lookup_data(4, seed=0, offsets=(1, -1))
    where = plots.role_positions(X, (1, -1))
    right = torch.tensor([[True, False], [True, False], [True, True], [False, False]])  # next 3/4, prev. 1/4
    heavier_next = (None, _weights_on(where, 0.6, 0.3), right)
    heavier_previous = (None, _weights_on(where, 0.3, 0.6), right)
    assert plots.summary([heavier_next], where) == \
        "both right 0.250 to 0.250, heavier 0.750 to 0.750, lighter 0.250 to 0.250"
    both = plots.summary([heavier_next, heavier_previous], where)
    assert "heavier 0.250 to 0.750, lighter 0.250 to 0.750" in both
    assert plots.weight_gaps({"g": [heavier_next, heavier_previous]}, where) == \
        "g: mean weights 0.30-0.30 and 0.60-0.60; median gap 0.30 to 0.30;\n    per sequence, the larger " \
        "weight at least 0.60-0.60, the smaller at most 0.30-0.30"
    with pytest.raises(ValueError, match=r"right must be \(n, 2\)"):
        plots.summary([(None, heavier_next[1], right[:, :1])], where)


def test_role_maps_show_each_position_equally_and_lookup_explorer_reads_the_models(shown, capsys):
    from selfattention import tasks

    X, y = tasks.make_lookup_data(40, seed=0, offsets=(1, -1))
    where = plots.role_positions(X, (1, -1))
    w = _weights_on(where, 0.5, 0.4)
    fig, panels = plots.role_maps(X, where, {"one": plots.by_role(w, where)[:, 0]}, ["n", "p", "o", "x", "q"])
    assert len(panels) == 1 and panels[0].images[0].get_array().shape == (8, 5)
    written = {t.get_text() for t in panels[0].texts}
    assert {"0.50", "0.40"} <= written, written          # two decimals: a gap of 0.05 to 0.10 shows
    rows = [t.get_text() for t in panels[0].get_yticklabels()]
    assert rows[0].startswith("n at 0: #") and rows[-1].startswith("n at 3: #"), rows   # labelled by position
    assert fig.get_suptitle() == "the query's weight on each item, by role"
    plt.close(fig)

    class Fixed(torch.nn.Module):  # always answers digits 1 and 2
        def forward(self, X):
            logits = torch.zeros(len(X), 2, 8)
            logits[:, 0, 1] = logits[:, 1, 2] = 1.0
            return logits, w[: len(X)]

    view = views.lookup_explorer(X, y, where, {"fixed": (Fixed(), w)}, first=3)
    view("fixed", 2)
    assert len(shown) == 1
    assert capsys.readouterr().out.strip().endswith("the model answers [1, 2]")
    with pytest.raises(ValueError, match="first must be an integer from 1 to len"):
        views.lookup_explorer(X, y, where, {"fixed": (Fixed(), w)}, first=0)


def test_fit_linear_readout_finds_a_readout_when_one_exists_and_refuses_bad_shapes():
    from torch import nn

    from selfattention import tasks

    torch.manual_seed(0)
    y = torch.randint(0, tasks.N_SYM, (200, 2))
    Z = nn.functional.one_hot(y, tasks.N_SYM).flatten(1).float()      # (200, 16): each answer's one-hot
    readout = nn.Linear(2 * tasks.N_SYM, 2 * tasks.N_SYM)
    assert plots.fit_linear_readout(readout, Z, y) < 0.01          # a one-hot of each answer: readable
    assert (readout(Z).view(-1, 2, tasks.N_SYM).argmax(-1) == y).all()
    blend = Z[:, :tasks.N_SYM] + Z[:, tasks.N_SYM:]                  # symmetric sum: order lost
    assert plots.fit_linear_readout(nn.Linear(tasks.N_SYM, 2 * tasks.N_SYM), blend, y) > 0.5
    with pytest.raises(ValueError, match="Z must be"):
        plots.fit_linear_readout(readout, Z[:10], y)


def test_best_linear_readout_keeps_the_heads_and_refits_only_the_readout():
    import selfattention as sa
    from selfattention import tasks

    data = (*tasks.make_lookup_data(300, seed=1, offsets=(1,)),
            *tasks.make_lookup_data(100, seed=2, offsets=(1,)))
    torch.manual_seed(0)
    core_attention = sa.SelfAttention(tasks.D_IN, 8)
    model = tasks.ReadoutModel(core_attention, 8)
    before = [p.clone() for p in core_attention.parameters()]
    new, weights, right = plots.best_linear_readout(model, data)
    assert all(torch.equal(a, b) for a, b in zip(before, new.attention.parameters(), strict=True))
    assert weights.shape[0] == 100 and right.shape == (100, 1)
    assert new.readout is not model.readout
    with pytest.raises(ValueError, match="ReadoutModel"):
        plots.best_linear_readout(core_attention, data)


def test_silencing_names_each_head_by_its_item_and_breaks_only_that_answer():
    from selfattention import tasks

    class Head(torch.nn.Module):  # output: a one-hot of the digit under `item`; weights all on that item
        def __init__(self, item):
            super().__init__()
            self.item = item

        def forward(self, X):
            out = torch.zeros(len(X), X.shape[1], tasks.N_SYM)
            weights = torch.zeros(len(X), X.shape[1], X.shape[1])
            for n in range(len(X)):
                pos = int(where[n, self.item])
                out[n, -1] = X[n, pos, tasks.N_SYM:2 * tasks.N_SYM]
                weights[n, -1, pos] = 1.0
            return out, weights

    class Model(torch.nn.Module):  # answer a reads head a's one-hot; a silenced head gives digit 0
        def __init__(self, order):
            super().__init__()
            self.attention = torch.nn.Module()
            self.attention.heads = torch.nn.ModuleList(Head(i) for i in order)

        def forward(self, X):
            outs, weights = zip(*(h(X) for h in self.attention.heads), strict=True)
            logits = torch.stack([o[:, -1] for o in outs], 1)
            return logits[:, list(self.order)], torch.stack(weights, 1)

    X, y = tasks.make_lookup_data(40, seed=0, offsets=(1, -1))
    where = plots.role_positions(X, (1, -1))
    models = []
    for order in ((0, 1), (1, 0)):
        m = Model(order)
        m.order = [order.index(0), order.index(1)]
        models.append(m)
    zero = (y == 0).float().mean(0)  # a silenced head's answer: all logits 0, so digit 0
    next_, previous = (f"{z:.3f} to {z:.3f}" for z in zero)
    as_prev, as_next = (f"{z:.3f} to {z:.3f}" for z in zero.flip(0))   # digit 0 where the other answer is 0
    assert plots.silencing(models, X, y, where).splitlines() == [
        f"head on the next letter silenced, 2 seeds: next {next_}, previous 1.000 to 1.000;",
        f"    its answer is the previous digit on {as_prev}",
        f"head on the previous letter silenced, 2 seeds: next 1.000 to 1.000, previous {previous};",
        f"    its answer is the next digit on {as_next}"]


def test_summary_table_and_range_table_give_one_row_per_condition():
    import torch

    from selfattention.plots import heads as plots

    where = torch.tensor([[0, 1, 2, 3, 4]] * 4)
    weights = torch.zeros(4, 1, 5, 5)
    weights[:, 0, 4, 0], weights[:, 0, 4, 1] = 0.6, 0.4                # heavier on the next letter's item
    right = torch.tensor([[True, True], [True, False], [True, False], [True, True]])
    table = plots.summary_table({"one head": [(None, weights, right)] * 3}, where).splitlines()
    assert table[0].split() == ["condition", "seeds", "both", "right", "heavier", "lighter"]
    assert table[1].split() == ["one", "head", "3", "0.500-0.500", "1.000-1.000", "0.500-0.500"]
    ranges = plots.range_table({"a": [0.25, 1.0, 0.5]}, "accuracy").splitlines()
    assert ranges[1].split() == ["a", "3", "0.250-1.000"]


def test_binding_bars_draw_the_blend_of_letters_and_digits():
    """All weight on the next letter's item: its letter and digit bars are 1 and orange; the previous
    item's are not orange."""
    from selfattention import tasks

    X, _ = tasks.make_lookup_data(5, seed=0, offsets=(1, -1))
    where = plots.role_positions(X, (1, -1))
    w = torch.zeros(5, 5)
    w[torch.arange(5), where[:, 0]] = 1.0
    fig, panels = plots.binding_bars(X, 0, {"head": w}, where)
    bars = panels[0].patches
    heights = [b.get_height() for b in bars]
    letter, digit = int(X[0, where[0, 0], :8].argmax()), int(X[0, where[0, 0], 8:16].argmax())
    assert heights[letter] == pytest.approx(1.0) and heights[8 + digit] == pytest.approx(1.0)
    assert sum(heights) == pytest.approx(2.0)
    orange = bars[letter].get_facecolor()
    prev_letter = int(X[0, where[0, 1], :8].argmax())
    assert bars[8 + digit].get_facecolor() == orange and bars[prev_letter].get_facecolor() != orange
    plt.close(fig)


def test_lighter_answer_sources_names_where_the_lighter_answers_digit_comes_from():
    """A stub one-head run that weights the next item 0.6, the previous 0.3, and gives the next item's digit
    for both answers: the lighter (previous) answer comes from the heavier answer's digit everywhere."""
    from selfattention import headstudy, tasks

    X, _ = tasks.make_lookup_data(40, seed=2, offsets=(1, -1))
    where = plots.role_positions(X, (1, -1))
    weights = torch.zeros(len(X), 1, 5, 5)
    weights[torch.arange(len(X)), 0, -1, where[:, 0]] = 0.6
    weights[torch.arange(len(X)), 0, -1, where[:, 1]] = 0.3
    next_digit = X[torch.arange(len(X)), where[:, 0], 8:16].argmax(-1)
    logits = torch.nn.functional.one_hot(next_digit, 8).float()[:, None].expand(-1, 2, -1)

    def stub(x):
        return logits, weights

    text = headstudy.lighter_answer_sources([(stub, weights, None)], X, where)
    assert "1 seed (min-max)" in text and "its own item's digit (right) 0.00-0.00" in text, text
    assert "the heavier answer's digit 1.00-1.00" in text and "the distractor's 0.00-0.00" in text, text
