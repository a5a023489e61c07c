"""selfattention.plots.pretrained and selfattention.widgets.pretrained: the figures of lessons 11 and 12 show
what they are given, with text large enough for a slide, and the widgets redraw one figure in place."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from selfattention import data  # noqa: E402
from selfattention.plots import pretrained as pictures  # noqa: E402
from selfattention.widgets import pretrained as explorers  # noqa: E402

SLIDE_PX = 1200  # about the width a figure is drawn at across a 1280 px slide


def smallest_text_px(fig: plt.Figure, width_px: float) -> float:
    """The smallest visible text of ``fig`` in pixels when the figure is drawn ``width_px`` wide."""
    fig.canvas.draw()
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert sizes, "the figure has no text"
    return min(sizes) / 72 * width_px / fig.get_figwidth()


@pytest.fixture(scope="module")
def model() -> data.PretrainedModel:
    torch.set_num_threads(1)
    return data.load_pretrained()


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> list:
    figures: list = []
    monkeypatch.setattr(explorers, "show", figures.append)
    return figures


# ----------------------------------------------------------------------------------------------- plots
def test_layer_curves_draw_each_mean_and_range() -> None:
    values = {"a": np.array([[0.9, 1.0], [0.5, 0.7]]), "b": np.array([[0.2, 0.4], [0.1, 0.3]])}
    ax = pictures.layer_curves(values)
    means = [line.get_ydata() for line in ax.get_lines()]
    np.testing.assert_allclose(means, [[0.95, 0.6], [0.3, 0.2]])
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == pytest.approx(0.5) and band.max() == pytest.approx(1.0)
    assert "(mean of 2)" in ax.get_legend().get_texts()[0].get_text()
    assert smallest_text_px(ax.figure, SLIDE_PX) >= 20
    with pytest.raises(ValueError, match=r"same number of hidden states, got \[2, 3\]"):
        pictures.layer_curves({"a": np.ones((2, 2)), "b": np.ones((3, 2))})
    with pytest.raises(ValueError, match=r"values\['a'\] must be a non-empty 2-D array, got shape \(3,\)"):
        pictures.layer_curves({"a": np.ones(3)})
    plt.close("all")


def test_strips_draw_every_value_and_each_mean() -> None:
    groups = {"g1": {"s": np.array([1.0, 2.0, 3.0]), "t": np.array([0.0, 0.5])},
              "g2": {"s": np.array([-1.0])}}
    ax = pictures.strips(groups, ylabel="value")
    dots = [c.get_offsets()[:, 1] for c in ax.collections]
    assert sorted(map(len, dots)) == [1, 2, 3]
    np.testing.assert_allclose(sorted(np.concatenate(dots)), [-1, 0, 0.5, 1, 2, 3])
    mean_bars = sorted(line.get_ydata()[0] for line in ax.get_lines() if len(line.get_ydata()) == 2
                       and line.get_ydata()[0] == line.get_ydata()[1] and line.get_linewidth() == 3)
    np.testing.assert_allclose(mean_bars, [-1.0, 0.25, 2.0])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["g1", "g2"]
    assert smallest_text_px(ax.figure, SLIDE_PX) >= 20
    plt.close("all")


def test_layer_head_maps_share_one_colour_scale() -> None:
    fig, panels = pictures.layer_head_maps([np.full((6, 12), 0.1), np.eye(6, 12)], ["flat", "sharp"],
                                           label="mean weight")
    assert {ax.images[0].get_clim() for ax in panels} == {(0.0, 1.0)}
    assert len(fig.axes) == 3                      # two panels and one colour bar
    assert smallest_text_px(fig, SLIDE_PX) >= 20
    with pytest.raises(ValueError, match="one title per map"):
        pictures.layer_head_maps([np.ones((6, 12))], ["a", "b"], label="x")
    plt.close("all")


def test_removal_against_yardstick_places_every_head_and_pair() -> None:
    changes = np.arange(1, 13, dtype=float).reshape(2, 6) / 1000
    marked = changes > 0.004
    ax = pictures.removal_against_yardstick(changes, marked, {"edits": np.array([0.1, 0.2])},
                                            marked_label="parked", other_label="others")
    assert ax.get_xscale() == "log"
    xs = np.concatenate([c.get_offsets()[:, 0] for c in ax.collections])
    np.testing.assert_allclose(sorted(xs), sorted([*changes.ravel(), 0.1, 0.2]))
    assert [t.get_text() for t in ax.get_yticklabels()][-1] == "edits"
    assert smallest_text_px(ax.figure, SLIDE_PX) >= 20
    with pytest.raises(ValueError, match=r"marked has shape \(3,\); expected \(2, 6\)"):
        pictures.removal_against_yardstick(changes, [True] * 3, {}, marked_label="a", other_label="b")
    with pytest.raises(ValueError, match="positive"):
        pictures.removal_against_yardstick(np.zeros((2, 6)), marked, {}, marked_label="a", other_label="b")
    plt.close("all")


def test_encoder_layer_diagram_names_its_parts_legibly() -> None:
    ax = pictures.encoder_layer()
    texts = " ".join(t.get_text() for t in ax.figure.findobj(Text))
    for part in ("multi-head attention, 12 heads", "add x, LayerNorm", "(T, 1536)", "sqrt(32)", "residual"):
        assert part in texts
    assert smallest_text_px(ax.figure, SLIDE_PX) >= 20
    plt.close("all")


# ----------------------------------------------------------------------------------------------- widgets
def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def test_lean_explorer_draws_each_tokens_lean_in_one_figure(model, shown, capsys) -> None:
    rng = np.random.default_rng(0)
    tech, fruit = rng.normal(size=384), rng.normal(size=384)
    widget = explorers.lean_explorer(model, tech, fruit, sentence="i love apple phones", band=(-0.2, 0.0))
    box = widget.children[0]
    assert box.description == "sentence"
    for sentence in ["my macbook crashed", "she ate an apple"]:
        box.value = sentence
    assert len(shown) == 3 and all(fig is shown[0] for fig in shown)   # one figure, redrawn
    ax = shown[-1].axes[0]
    run = model.run("she ate an apple")
    H = run["hidden"][-1].numpy().astype(float)
    want = [_unit(h) @ _unit(tech) - _unit(h) @ _unit(fruit) for h in H]
    bars = [b for b in ax.patches if b.get_visible() and hasattr(b, "get_height")][: len(want)]
    np.testing.assert_allclose([b.get_height() for b in bars], want, atol=1e-6)
    assert [t.get_text() for t in ax.get_xticklabels()] == run["tokens"]
    out = capsys.readouterr().out
    assert "'apple' is not in this sentence" in out and "'apple' (apple): lean" in out
    assert smallest_text_px(shown[-1], shown[-1].get_figwidth() * shown[-1].dpi) >= 20
    box.value = "   "
    assert "Type a sentence" in capsys.readouterr().out
    with pytest.raises(ValueError, match=r"tech must have shape \(384,\)"):
        explorers.lean_explorer(model, np.ones(3), fruit, sentence="x")


def test_lean_explorer_band_follows_the_typed_word(model, shown, capsys) -> None:
    """With neutral sentences, the band is the typed word's own range there, "star" put in apple's place."""
    rng = np.random.default_rng(1)
    tech, fruit = rng.normal(size=384), rng.normal(size=384)
    neutral = ["i said apple twice", "she wrote apple down"]
    widget = explorers.lean_explorer(model, tech, fruit, sentence="i love apple phones", neutral=neutral)
    word_box = widget.children[1]
    assert word_box.description == "word"
    widget.children[0].value = "i love star phones"
    word_box.value = "star"
    H = model.contextual_vectors([s.replace("apple", "star") for s in neutral], "star").numpy().astype(float)
    lean = np.array([_unit(h) @ _unit(tech) - _unit(h) @ _unit(fruit) for h in H])
    out = capsys.readouterr().out.splitlines()[-1]
    assert out.startswith("'star' (star): lean") and f"{lean.min():+.3f} to {lean.max():+.3f}" in out
    assert "not in this sentence" not in out
    with pytest.raises(ValueError, match="must hold"):
        explorers.lean_explorer(model, tech, fruit, sentence="x", neutral=["no such word"])


def test_lean_explorer_colours_the_pieces_of_a_cut_word(model, shown) -> None:
    explorers.lean_explorer(model, np.ones(384), -np.ones(384), sentence="my macbook crashed", word="macbook")
    ax = shown[-1].axes[0]
    colours = [matplotlib.colors.to_hex(b.get_facecolor()) for b in ax.patches[:6]]
    orange, blue = matplotlib.colors.to_hex("tab:orange"), matplotlib.colors.to_hex("tab:blue")
    assert colours == [blue, blue, orange, orange, blue, blue]      # [CLS] my mac ##book crashed [SEP]


def test_value_norms_are_the_norms_of_each_heads_v_times_its_block_of_W_O(model) -> None:
    """Checked through the model's own W_O module: the head's v_j alone in the context, the bias taken off."""
    result = model.run("the river bank flooded")
    norms = explorers.value_norms(model, result, 3)
    block = model.model.encoder.layer[3].attention
    with torch.no_grad():
        v = block.self.value(result["hidden"][3])                        # (T, 384), heads side by side
        for h in (0, 7):
            context = torch.zeros_like(v)
            context[:, h * 32:(h + 1) * 32] = v[:, h * 32:(h + 1) * 32]
            sent = block.output.dense(context) - block.output.dense.bias
            np.testing.assert_allclose(norms[h], sent.norm(dim=-1).numpy(), rtol=1e-5)
    assert norms.shape == (12, len(result["tokens"]))


def test_head_explorer_shows_the_heads_weights_and_shares(model, shown, capsys) -> None:
    sentences = ["i love apple phones.", "the river bank flooded"]
    widget = explorers.head_explorer(model, sentences, layer=2, head=5)
    menu, layer, head = widget.children[:3]
    assert (menu.description, layer.description, head.description) == ("sentence", "layer", "head")
    assert (layer.max, head.max) == (5, 11)
    head.value = 6
    fig = shown[-1]
    assert fig is shown[0]                                               # the same figure, redrawn
    weights, shares = (ax.images[0].get_array() for ax in fig.axes[:2])
    run = model.run(sentences[0])
    np.testing.assert_allclose(weights, run["attentions"][2][6].numpy(), atol=1e-6)
    np.testing.assert_allclose(np.asarray(shares).sum(axis=1), 1.0, atol=1e-6)
    added = run["attentions"][2][6].numpy() * explorers.value_norms(model, run, 2)[6]
    np.testing.assert_allclose(shares, added / added.sum(axis=1, keepdims=True), atol=1e-6)
    assert "layer 2, head 6" in capsys.readouterr().out
    menu.value = sentences[1]
    assert shown[-1] is not fig                                          # each sentence has its own figure
    assert smallest_text_px(shown[-1], shown[-1].get_figwidth() * shown[-1].dpi) >= 20
    with pytest.raises(ValueError, match="sentences must be a non-empty list of strings"):
        explorers.head_explorer(model, "one sentence")


# ------------------------------------------------------------------ lesson 11's statistics and head map
def test_attention_map_shows_each_weight_on_a_fixed_scale() -> None:
    w = np.array([[0.9, 0.1, 0.0], [0.2, 0.3, 0.5], [0.0, 0.0, 1.0]])
    ax = pictures.attention_map(w, ["a", "b", "c"], title="one head")
    assert ax.images[0].get_clim() == (0.0, 1.0)
    np.testing.assert_allclose(ax.images[0].get_array(), w)
    assert {t.get_text() for t in ax.texts} >= {"0.90", "0.50", "1.00"}
    assert smallest_text_px(ax.figure, SLIDE_PX) >= 20
    with pytest.raises(ValueError, match=r"weights has shape \(3, 3\); expected \(2, 2\)"):
        pictures.attention_map(w, ["a", "b"])
    plt.close("all")


def test_cosines_and_pair_masks_match_a_direct_count() -> None:
    from selfattention import pretrained_stats as stats
    rng = np.random.default_rng(0)
    v = rng.normal(size=(5, 2, 4))
    cos = stats.cosines(v)
    u = v[1, 1] / np.linalg.norm(v[1, 1])
    assert cos.shape == (2, 5, 5)
    assert cos[1, 1, 3] == pytest.approx(u @ v[3, 1] / np.linalg.norm(v[3, 1]))
    masks = stats.pair_masks([0, 0, 1, 1, 1], ("a", "b"))
    assert {k: int(m.sum()) for k, m in masks.items()} == {"a-a": 1, "b-b": 3, "a-b": 6}
    with pytest.raises(ValueError, match="labels must be a 1-D array of 0s and 1s"):
        stats.pair_masks([0, 2], ("a", "b"))
    with pytest.raises(ValueError, match=r"vectors must have shape \(n, L, d\)"):
        stats.cosines(np.ones((3, 4)))


def test_permutation_p_counts_every_relabelling() -> None:
    from selfattention import pretrained_stats as stats
    values = np.array([5.0, 4.0, 1.0, 0.0])
    p, n = stats.permutation_p(lambda y: values[y == 0].mean() - values[y == 1].mean(), np.repeat([0, 1], 2))
    assert n == 6 and p == pytest.approx(1 / 6)      # only the true split reaches the largest gap
    p, n = stats.permutation_p(lambda y: 0.0, np.array([0, 1, 0, 1]))
    assert p == 1.0


def test_strongest_other_reads_one_row_of_one_head(model: data.PretrainedModel) -> None:
    from selfattention import pretrained_stats as stats
    weight, token, on_cls = stats.strongest_other(model, "i love apple phones", "apple", 0, 1)
    row = model.run("i love apple phones")["attentions"][0][1, 3].numpy()
    assert token == "phones" and weight == pytest.approx(row[4]) and on_cls == pytest.approx(row[0])
    with pytest.raises(ValueError, match="'pear' is not a whole token"):
        stats.strongest_other(model, "i love apple phones", "pear", 0, 1)


# ------------------------------------------------------------------ lesson 12's measurements (inside)
def test_head_outputs_and_constant_part_add_up_to_the_attention_output(model: data.PretrainedModel) -> None:
    """sum_h alpha v W_O^h + b_O is the block's output (recorded by hooks), and the constant part
    b_O + sum_h b_V^h W_O^h is what a token gets when every value vector is its bias alone."""
    from selfattention import inside
    s = "the keys to the old cabinet are on the table."
    parts = inside.layer_parts(model, s)
    x, A = parts["hidden"][2], parts["attentions"][2].numpy()
    vW = inside.head_vectors(model, x, 2)                                   # (12, T, 384)
    b_O = model.model.encoder.layer[2].attention.output.dense.bias.detach().numpy()
    np.testing.assert_allclose((A @ vW).sum(0) + b_O, parts["attention"][2].numpy(), atol=1e-4)
    added = inside.what_heads_add(model, [s])
    rows = slice(1, len(parts["tokens"]) - 1) if "tokens" in parts else slice(1, x.shape[0] - 1)
    want = np.linalg.norm((A @ vW)[:, rows], axis=-1).mean(-1)
    np.testing.assert_allclose(added["out_norm"][0, 2], want, rtol=1e-5)
    assert ((added["cls_share"] >= 0) & (added["cls_share"] <= 1)).all()
    ratio, constant_share = inside.attention_ratios(model, [s])
    a = parts["attention"][2].numpy()[rows]
    np.testing.assert_allclose(ratio[2], np.linalg.norm(a, axis=1) / np.linalg.norm(x.numpy()[rows], axis=1),
                               rtol=1e-5)
    assert len(constant_share) == 6 and len(constant_share[2]) == a.shape[0]


def test_where_weight_goes_matches_the_maps(model: data.PretrainedModel) -> None:
    from selfattention import inside
    s = "i love apple phones, but i drink apple juice."
    w = inside.where_weight_goes(model, [s])
    A = model.run(s)["attentions"][3][7].numpy()                           # layer 3, head 7: (T, T)
    T = A.shape[0]
    assert w["[CLS]"][0, 3, 7] == pytest.approx(A[1:T - 1, 0].mean(), rel=1e-5)
    previous = np.mean([A[i, i - 1] for i in range(1, T - 1)])
    assert w["previous token"][0, 3, 7] == pytest.approx(previous, rel=1e-5)


def test_removal_changes_match_one_head_at_a_time(model: data.PretrainedModel) -> None:
    from selfattention import inside
    s = ["the dog chased the ball across the park."]
    before = model.sentence_embeddings(s).numpy()
    means = inside.head_means(model, ["the cat sat on the mat", "she drank a cup of tea"])
    assert means.shape == (6, 384)
    for how in ("zero", "mean", "dataset"):
        batched = inside.removal_changes(model, s, how=how, means=means)
        for layer, head in [(0, 2), (4, 9)]:
            handle = inside.remove_head(model, layer, head, how=how, means=means)
            after = model.sentence_embeddings(s).numpy()
            handle.remove()
            assert batched[layer, head, 0] == pytest.approx(1 - float((after * before).sum()), abs=1e-5)
    with pytest.raises(ValueError, match="how must be 'zero', 'mean' or 'dataset'"):
        inside.remove_head(model, 0, 0, how="half")
    with pytest.raises(ValueError, match="needs means"):
        inside.removal_changes(model, s, how="dataset")


def test_head_means_are_the_mean_of_what_enters_w_o(model: data.PretrainedModel) -> None:
    """head_means averages the input of W_O over every position of every sentence, each run alone."""
    from selfattention import inside
    sentences = ["the cat sat on the mat", "she drank a cup of tea"]
    seen = []
    dense = model.model.encoder.layer[3].attention.output.dense
    handle = dense.register_forward_pre_hook(lambda mod, args: seen.append(args[0][0].detach().numpy()))
    for s in sentences:
        model.run(s)
    handle.remove()
    want = np.concatenate(seen).mean(axis=0)
    assert np.abs(inside.head_means(model, sentences)[3] - want).max() < 1e-6


def test_rank_tests_match_scipy_and_refuse_bad_input():
    from scipy.stats import mannwhitneyu, spearmanr

    from selfattention import inside

    rng = np.random.default_rng(0)
    weight, change = rng.random((6, 12)), rng.random((6, 12))
    parked = weight >= 0.5
    rho, p, mw = inside.rank_tests(weight, change, parked)
    ref = spearmanr(weight[1:5].ravel(), change[1:5].ravel())
    assert np.isclose(rho, ref.statistic) and np.isclose(p, ref.pvalue)
    assert np.isclose(mw, mannwhitneyu(change[1:5][parked[1:5]], change[1:5][~parked[1:5]]).pvalue)
    with pytest.raises(ValueError, match="parked"):
        inside.rank_tests(weight, change, np.ones((6, 12), dtype=bool))
    with pytest.raises(ValueError, match="one shape"):
        inside.rank_tests(weight, change[:, :5], parked)


def test_apple_tech_move_is_lesson_11s_move_and_checks_centres():
    from selfattention import pretrained_stats as stats

    model = data.load_pretrained()
    tech, fruit = stats.lean_centres(model)
    assert np.isclose(np.linalg.norm(tech), 1) and np.isclose(np.linalg.norm(fruit), 1)
    assert round(stats.apple_tech_move(model, (tech, fruit)), 3) == 0.131      # lesson 11's +0.131
    with pytest.raises(ValueError, match="centres"):
        stats.apple_tech_move(model, (tech, fruit[:10]))


def test_move_strips_subtract_each_words_own_baseline() -> None:
    word = {"tech": np.array([1.0, 3.0]), "neutral": np.array([0.0, 2.0])}
    controls = {"nouns": {"tech": np.array([[5.0, 5.0], [1.0, 1.0]]),
                          "neutral": np.array([[4.0, 4.0], [0.0, 0.0]])}}
    ax = pictures.move_strips(word, controls)
    values = [c.get_offsets()[:, 1] for c in ax.collections]
    assert np.allclose(values[0], [0.0, 2.0])          # apple, tech: minus apple's neutral mean 1
    assert np.allclose(values[1], [1.0, 1.0])          # each noun's mean minus its own neutral mean
    assert np.allclose(values[2], [-1.0, 1.0])
    plt.close("all")
    with pytest.raises(ValueError, match="baseline"):
        pictures.move_strips({"tech": np.zeros(2)}, {})


def test_apple_tech_moves_are_per_sentence_and_average_to_the_move():
    from selfattention import pretrained_stats as stats

    model = data.load_pretrained()
    centres = stats.lean_centres(model)
    moves = stats.apple_tech_moves(model, centres)
    assert moves.shape == (8,)
    assert np.isclose(moves.mean(), stats.apple_tech_move(model, centres))
    assert len(set(stats.PLAIN_NOUNS)) == len(stats.PLAIN_NOUNS)
    assert all(len(model.tokenizer.tokenize(w)) == 1 for w in stats.PLAIN_NOUNS)


def test_gap_test_and_difference_p_match_a_direct_count() -> None:
    from itertools import combinations

    from selfattention import pretrained_stats as stats

    rng = np.random.default_rng(0)
    v = rng.normal(size=(8, 1, 5))
    cos = stats.cosines(v)[0]
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    upper = np.triu(np.ones((8, 8), dtype=bool), k=1)

    def direct_gap(labels):
        same = labels[:, None] == labels
        return cos[upper & same].mean() - cos[upper & ~same].mean()

    found = []
    for chosen in combinations(range(8), 4):
        labels = np.ones(8, dtype=int)
        labels[list(chosen)] = 0
        found.append(direct_gap(labels))
    gap, p, n = stats.gap_test(cos, y)
    assert n == 70 and np.isclose(gap, direct_gap(y))
    assert np.isclose(p, np.mean(np.array(found) >= direct_gap(y) - 1e-12))
    a, b = np.array([3.0, 4.0, 5.0]), np.array([0.0, 1.0, 2.0])
    assert np.isclose(stats.difference_p(a, b), 1 / 20)          # only the true split reaches 3
    with pytest.raises(ValueError, match="cos must have shape"):
        stats.gap(cos[:4], y)


def test_bank_cells_put_bank_at_one_position_per_sentence_and_differ_only_in_cue_and_end(
        model: data.PretrainedModel) -> None:
    from selfattention import pretrained_stats as stats
    cells = stats.BANK_CELLS
    assert sorted(cells) == sorted((s, t) for s in ("river", "money") for t in ("nature", "finance"))
    assert all(len(S) == 8 for S in cells.values())
    for i in range(8):
        positions = {model.run(S[i])["tokens"].index("bank") for S in cells.values()}
        assert len(positions) == 1, (i, positions)
        starts = {S[i].split(" bank ")[0].split()[:-1].__len__() for S in cells.values()}
        assert len(starts) == 1                                          # the same start, then the cue word
        for topic in ("nature", "finance"):
            river, money = cells["river", topic][i], cells["money", topic][i]
            assert river.split(" bank ")[1] == money.split(" bank ")[1]   # the same words after "bank"


def test_cell_table_prints_each_cells_mean_and_range_and_refuses_a_missing_cell() -> None:
    from selfattention import pretrained_stats as stats
    leans = {("river", "nature"): [-0.2, 0.0], ("river", "finance"): [0.1, 0.3],
             ("money", "nature"): [0.0, 0.2], ("money", "finance"): [0.4, 0.6]}
    text = stats.cell_table(leans)
    rows = text.splitlines()
    assert "-0.100 (-0.200 to +0.000)" in rows[1] and "+0.500 (+0.400 to +0.600)" in rows[2]
    del leans["money", "finance"]
    with pytest.raises(ValueError, match="leans"):
        stats.cell_table(leans)


def test_unit_gives_unit_rows_and_refuses_a_scalar() -> None:
    from selfattention import pretrained_stats as stats
    v = stats.unit(np.array([[3.0, 4.0], [0.0, 2.0]]))
    np.testing.assert_allclose(v, [[0.6, 0.8], [0.0, 1.0]])
    with pytest.raises(ValueError, match="vectors"):
        stats.unit(3.0)


def test_parking_controls_match_the_maps_and_shuffle_only_the_words(model: data.PretrainedModel) -> None:
    from selfattention import inside
    s = "the dog chased the ball across the park."
    held = inside.parking_controls(model, [s], seed=3)
    assert set(held) == {"on [CLS]", "words shuffled", "a random word"}
    assert all(v.shape == (1, model.num_layers, model.num_heads) for v in held.values())
    np.testing.assert_allclose(held["on [CLS]"], inside.where_weight_goes(model, [s])["[CLS]"])
    rng = np.random.default_rng(3)
    shuffled = " ".join(rng.permutation(s.split()))
    np.testing.assert_allclose(held["words shuffled"], inside.where_weight_goes(model, [shuffled])["[CLS]"])
    r = model.run(s)
    T = len(r["tokens"])
    j = int(rng.integers(1, T - 1))
    A = r["attentions"][2].numpy()
    np.testing.assert_allclose(held["a random word"][0, 2], A[:, 1:T - 1, j].mean(-1), rtol=1e-6)
    with pytest.raises(ValueError, match="sentences"):
        inside.parking_controls(model, [])


def test_position_zero_controls_match_the_maps_and_move_only_cls(model: data.PretrainedModel) -> None:
    from selfattention import inside
    s = "the dog chased the ball across the park."
    got = inside.position_zero_controls(model, [s])
    assert set(got) == {"intact", "[CLS] removed", "[CLS] at the end", "[CLS] at the end, on [CLS]"}
    assert all(v.shape == (1, model.num_layers, model.num_heads) for v in got.values())
    np.testing.assert_allclose(got["intact"], inside.where_weight_goes(model, [s])["[CLS]"], rtol=1e-5)
    ids = model.tokenizer(s)["input_ids"]
    with torch.no_grad():
        run = model.model(input_ids=torch.tensor([ids[1:] + ids[:1]]), output_attentions=True)
    A = run.attentions[3][0].numpy()                       # words, [SEP], [CLS]
    k = len(ids) - 2
    np.testing.assert_allclose(got["[CLS] at the end, on [CLS]"][0, 3], A[:, 1:k, -1].mean(-1), rtol=1e-5)
    np.testing.assert_allclose(got["[CLS] at the end"][0, 3], A[:, 1:k, 0].mean(-1), rtol=1e-5)
    with pytest.raises(ValueError, match="sentences"):
        inside.position_zero_controls(model, [])


def test_sign_flip_p_and_sense_topic_effects() -> None:
    from selfattention import pretrained_stats as stats
    assert stats.sign_flip_p([1.0, 2.0, 3.0]) == 2 / 8             # all positive, or all negative
    assert stats.sign_flip_p([1.0, -1.0]) == 1.0
    with pytest.raises(ValueError, match="differences"):
        stats.sign_flip_p(np.zeros(21))
    leans = {("river", "nature"): [0.0], ("river", "finance"): [1.0],
             ("money", "nature"): [2.0], ("money", "finance"): [5.0]}
    sense, topic = stats.sense_topic_effects(leans)
    assert sense.tolist() == [3.0] and topic.tolist() == [2.0]


def test_link_weights_are_the_models_own_attention_weights(model) -> None:
    from selfattention import pretrained_stats as stats

    w = stats.link_weights(model, ["i love apple phones"], "apple", {"phones"})
    run = model.run("i love apple phones")
    i, j = run["tokens"].index("apple"), run["tokens"].index("phones")
    assert w.shape == (1, 6, 12)
    np.testing.assert_allclose(w[0, 2], run["attentions"][2].numpy()[:, i, j], atol=1e-7)


def test_held_out_centre_leans_leave_each_word_out_of_its_own_centre(model) -> None:
    """Lesson 11's yardstick: each centre word against a centre of the other 7; all 16 on their own side."""
    from selfattention import pretrained_stats as stats

    tech, fruit = stats.held_out_centre_leans(model)
    assert tech.shape == fruit.shape == (8,)
    assert tech.min() > 0.17 and fruit.max() < -0.2
    full_tech, full_fruit = stats.lean_centres(model)
    v = model.contextual_vector("the phone was on the table", "phone").numpy().astype(float)
    v = v / np.linalg.norm(v)
    assert v @ full_tech - v @ full_fruit > tech[0] + 0.1       # a centre holding the word flatters it
