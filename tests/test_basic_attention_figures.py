"""The figures and widgets of lessons 02 and 03 (selfattention.plots.basic_attention,
selfattention.widgets.basic_attention): what they draw, that their text is legible on a slide, that the
widgets redraw one figure in place, and that bad input is named."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from selfattention import core, data  # noqa: E402
from selfattention.plots import basic_attention as figures  # noqa: E402
from selfattention.widgets import basic_attention as explorers  # noqa: E402

WORDS = ["a", "bank", "near", "the", "river"]
X = np.array([[0.1, 0.1, 0.1, 0.1], [0.7, 0.7, 0.0, 0.0], [0.0, 0.3, 0.0, 0.1], [0.2, 0.1, 0.0, 0.1],
              [0.1, 1.0, 0.0, 0.0]])


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def texts(fig) -> list:
    """Every visible text of ``fig`` that says something (titles, labels, ticks, annotations)."""
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]


def assert_legible(fig) -> None:
    """Every text at FONT points: at least 20 px on a 1280 px slide for figures up to 13 inches wide."""
    small = [(t.get_text(), t.get_fontsize()) for t in texts(fig) if t.get_fontsize() < figures.FONT]
    assert not small, f"texts below {figures.FONT} pt: {small[:5]}"
    width, height = fig.get_size_inches()
    assert width <= 13.0 and height <= 6.5, (width, height)


def test_plane_draws_each_vector_from_the_origin_in_the_chosen_coordinates():
    ax = figures.plane({"bank": [0.7, 0.7, 0.0, 0.0], "river": [0.1, 1.0, 0.0, 0.0]})
    tips = sorted(tuple(np.round(a.xy, 3)) for a in ax.texts if hasattr(a, "xy"))
    assert tips == [(0.1, 1.0), (0.7, 0.7)]
    assert {t.get_text().strip() for t in ax.texts if t.get_text().strip()} == {"bank", "river"}
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("finance", "nature")
    assert_legible(ax.figure)


def test_plane_names_a_vector_too_short_for_its_dims():
    with pytest.raises(ValueError, match=r"vectors\['x'\] has shape \(1,\); dims \(0, 1\) need more"):
        figures.plane({"x": [1.0]})


def test_score_weight_bars_show_the_row_and_redraw_a_shorter_one_in_place():
    scores = X @ X[1]
    _, A = core.basic_self_attention(X)
    fig, score_bars, weight_bars = figures.score_weight_bars(WORDS, scores, A[1], max_words=8)
    assert len(score_bars) == len(weight_bars) == 8
    np.testing.assert_allclose([b.get_height() for b in score_bars][:5], scores)
    np.testing.assert_allclose([b.get_height() for b in weight_bars][:5], A[1])
    assert_legible(fig)
    figures.update_score_weight_bars(fig, score_bars, weight_bars, ["river", "bank"], [1.0, 0.77],
                                     [0.56, 0.44])
    assert [b.get_height() for b in weight_bars] == pytest.approx([0.56, 0.44] + [0.0] * 6)
    assert [t.get_text() for t in fig.axes[1].texts] == ["0.56", "0.44"]
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()][:3] == ["river", "bank", ""]


def test_score_bars_keep_a_fixed_span_when_asked():
    """The explorer's slider scales the scores by c; with score_range the panel does not rescale."""
    scores = X @ X[1]
    fig, score_bars, weight_bars = figures.score_weight_bars(WORDS, scores, np.ones(5) / 5, max_words=8)
    spans = []
    for c in (0.0, 1.0, 4.0):
        figures.update_score_weight_bars(fig, score_bars, weight_bars, WORDS, c * scores, np.ones(5) / 5,
                                         score_range=(4 * scores.min(), 4 * scores.max()))
        spans.append(fig.axes[0].get_ylim())
    assert spans[0] == spans[1] == spans[2] and spans[0][1] >= 4 * scores.max()


def test_the_scale_sweep_takes_the_word_colours_and_a_title():
    fig, (left, _) = figures.score_scale_sweep(WORDS, X, 1, colors=figures.WORD_COLORS, title="real table")
    assert fig._suptitle.get_text() == "real table"
    for line, w in zip(left.lines, WORDS, strict=False):
        if w in figures.WORD_COLORS:
            assert matplotlib.colors.same_color(line.get_color(), figures.WORD_COLORS[w])


def test_score_weight_bars_name_mismatched_lengths():
    with pytest.raises(ValueError, match="expected one score and one weight per word"):
        figures.score_weight_bars(WORDS, np.zeros(5), np.zeros(4))
    fig, s, w = figures.score_weight_bars(WORDS[:2], np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match=r"at most 2 \(the bars drawn\)"):
        figures.update_score_weight_bars(fig, s, w, WORDS, np.zeros(5), np.zeros(5))


def test_weight_maps_share_one_scale_from_0_to_1_and_write_every_weight():
    _, A = core.basic_self_attention(X)
    flat = np.full((3, 3), 1 / 3)
    fig, axes = figures.weight_maps([A, flat], [WORDS, ["x", "y", "z"]], ["sharp", "flat"])
    assert {ax.images[0].get_clim() for ax in axes} == {(0.0, 1.0)}
    assert [len(ax.texts) for ax in axes] == [25, 9]
    assert axes[0].texts[6].get_text() == f"{A[1, 1]:.2f}"       # row 1, column 1
    assert "query" not in " ".join(t.get_text() for t in texts(fig)).lower()   # lesson 04's words
    assert_legible(fig)


def test_toy_and_real_maps_put_toy_first_and_refuse_different_sentences():
    toy_out = {"a b c": core.basic_self_attention(X[:3]), "c d e": core.basic_self_attention(X[2:])}
    real_out = {s: (Z, np.full((3, 3), 1 / 3)) for s, (Z, _) in toy_out.items()}
    fig, axes = figures.toy_and_real_maps(toy_out, real_out)
    assert [ax.get_title() for ax in axes] == ["toy:\na b c", "toy:\nc d e", "real:\na b c", "real:\nc d e"]
    assert np.allclose(axes[0].images[0].get_array(), toy_out["a b c"][1])
    assert np.allclose(axes[3].images[0].get_array(), 1 / 3)
    with pytest.raises(ValueError, match="toy_out has sentences"):
        figures.toy_and_real_maps(toy_out, {"c d e": real_out["c d e"]})


def test_weight_map_labels_rows_as_attending_and_names_a_bad_shape():
    ax = figures.weight_map(np.eye(2), ["a", "b"])
    assert (ax.get_ylabel(), ax.get_xlabel()) == (figures.ROW_LABEL, figures.COLUMN_LABEL)
    with pytest.raises(ValueError, match=r"weights has shape \(2, 2\); expected \(3, 3\)"):
        figures.weight_map(np.eye(2), ["a", "b", "c"])
    with pytest.raises(ValueError, match="expected the same number, at least 1"):
        figures.weight_maps([np.eye(2)], [["a", "b"]], [])


def test_matrix_flow_draws_each_matrix_to_scale():
    Omega = X @ X.T
    _, A = core.basic_self_attention(X)
    features = ["finance", "nature", "food", "tech"]
    fig, axes = figures.matrix_flow([("X", X), ("Omega", Omega), ("A", A), ("Z", A @ X)], WORDS,
                                    columns=[features, WORDS, WORDS, features])
    assert [ax.images[0].get_array().shape for ax in axes] == [(5, 4), (5, 5), (5, 5), (5, 4)]
    assert [t.get_text() for t in axes[0].get_yticklabels()] == WORDS
    assert [t.get_text() for t in axes[2].get_xticklabels()] == WORDS
    assert [t.get_text() for t in axes[3].get_xticklabels()] == features
    bars = [a for a in fig.axes if a not in axes]      # one labelled colour bar per matrix
    assert len(bars) == 4
    assert [t.get_text() for t in bars[2].get_xticklabels()] == [f"{A.min():.2f}", f"{A.max():.2f}"]
    assert_legible(fig)
    with pytest.raises(ValueError, match="columns needs one label per column"):
        figures.matrix_flow([("X", X)], WORDS, columns=[WORDS])
    with pytest.raises(ValueError, match="every matrix needs 5 rows"):
        figures.matrix_flow([("X", X[:3])], WORDS)


def test_matrix_flow_takes_a_fixed_colour_range_and_writes_the_entries():
    _, A = core.basic_self_attention(X)
    fig, axes = figures.matrix_flow([("X", X), ("A", A)], WORDS, limits=[None, (0, 1)])
    assert axes[1].images[0].get_clim() == (0.0, 1.0)
    assert axes[0].images[0].get_clim() == (pytest.approx(X.min()), pytest.approx(X.max()))
    entries = [t.get_text() for t in axes[1].texts if t.get_text()]   # the arrow is an empty text
    assert len(entries) == A.size and f"{A[0, 0]:.2f}".lstrip("0") in entries
    bars = [a for a in fig.axes if a not in axes]
    assert [t.get_text() for t in bars[1].get_xticklabels()] == ["0.00", "1.00"]
    assert_legible(fig)
    with pytest.raises(ValueError, match="limits needs one"):
        figures.matrix_flow([("X", X)], WORDS, limits=[None, None])


class Table:
    """A tiny embedding table with the StaticEmbeddings interface."""

    vectors = dict(zip(WORDS + ["money", "grows", "flows"],
                       list(X) + [np.array([1.0, 0.1, 0, 0]), np.array([0.5, 0.3, 0.1, 0]),
                                  np.array([0.2, 0.8, 0, 0])], strict=True))

    def __contains__(self, word: str) -> bool:
        return word in self.vectors

    def vector(self, word: str) -> np.ndarray:
        return self.vectors[word].astype(np.float32)


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> list:
    """The figures the widgets show, one entry per redraw."""
    drawn: list = []
    monkeypatch.setattr(explorers, "show", drawn.append)
    return drawn


@pytest.mark.parametrize("builder", [explorers.one_word, explorers.sentence_map])
def test_a_widget_redraws_one_figure_and_its_menu_follows_the_sentence(builder, shown, capsys):
    box = builder(Table(), ["money bank grows", "a bank near the river"], focus=1)
    sentence, menu, *_ = box.children[0].children
    assert len(shown) == 1 and [label for label, _ in menu.options] == ["1 money", "2 bank", "3 grows"]
    sentence.value = "a bank near the river"
    assert len(shown) == 2, "one redraw per change"
    assert [label for label, _ in menu.options][-1] == "5 river" and menu.value == 1
    menu.value = 4
    assert len(shown) == 3
    if builder is explorers.one_word:
        assert shown[1] is shown[2], "the same figure, redrawn in place"
    out = capsys.readouterr().out
    _, A = core.basic_self_attention(X)
    label = "river' = " if builder is explorers.one_word else "z_river = "   # sentence_map: the course's z_i
    assert label + " + ".join(f"{a:.2f}*{w}" for a, w in zip(A[4], WORDS, strict=True)) in out
    for bad, said in [("river banks", "Not single words of the table's vocabulary: banks"),
                      ("river", "Type 2 to 8 words (this has 1)")]:
        sentence.value = bad
        assert said in capsys.readouterr().out
    assert len(shown) == 3, "nothing drawn for a sentence that cannot be drawn"


@pytest.mark.parametrize("builder", [explorers.one_word, explorers.sentence_map])
def test_the_focus_stays_on_its_word_when_the_sentence_changes(builder, shown):
    """A word added in front shifts every index: the focus follows its word, not its old position; a repeated
    word keeps its occurrence; a word no longer there leaves the index as it was."""
    sentence, menu, *_ = builder(Table(), ["river bank flows"], focus=1).children[0].children
    for new, focus in [("a river bank flows", 2), ("the bank near a bank", 1), ("a bank near the bank", 1),
                       ("money grows", 1)]:
        sentence.value = new
        assert menu.value == focus, (new, menu.value)
    menu.value = 0
    sentence.value = "a bank near a bank"       # money is gone: index 0 stays, now "a"
    menu.value = 3
    sentence.value = "bank a a"                 # the second "a": its second occurrence
    assert menu.value == 2


def test_the_scale_slider_goes_from_the_plain_average_to_the_top_word(shown, capsys):
    """c = 0: every weight 1/T and z_i the plain average; a large c: the top score's word alone; c = 1 is
    basic self-attention."""
    box = explorers.one_word(Table(), ["a bank near the river"], focus=1)
    _, _, scale = box.children[0].children
    _, A = core.basic_self_attention(X)
    at_one = "weights:       " + "  ".join(f"{w} {a:.3f}" for w, a in zip(WORDS, A[1], strict=True))
    assert at_one in capsys.readouterr().out
    scale.value = 0.0
    out = capsys.readouterr().out
    assert "  ".join(f"{w} 0.200" for w in WORDS) in out and "with the plain average 1.000" in out
    scale.value = 4.0
    top = WORDS[int(np.argmax(X @ X[1]))]
    assert f"with {top} (top score)" in capsys.readouterr().out
    assert len(shown) == 3


def test_the_scale_sweep_starts_uniform_and_ends_on_the_top_word():
    fig, (left, right) = figures.score_scale_sweep(WORDS, X, 1)
    first = [line.get_ydata()[0] for line in left.lines[: len(WORDS)]]
    assert first == pytest.approx([1 / len(WORDS)] * len(WORDS))
    assert right.lines[0].get_ydata()[0] == pytest.approx(1.0)          # c = 0: the plain average
    assert right.lines[1].get_ydata()[-1] > right.lines[1].get_ydata()[0]   # towards the top word
    assert_legible(fig)


def test_the_score_bars_are_labelled_with_their_values():
    fig, score_bars, _ = figures.score_weight_bars(WORDS, X @ X[1] - 0.5, core.softmax(X @ X[1]))
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert labels == [f"{s:.2f}" for s in X @ X[1] - 0.5]
    assert [b.get_height() for b in score_bars] == pytest.approx(X @ X[1] - 0.5)


def test_a_widget_names_a_first_sentence_it_cannot_draw():
    with pytest.raises(ValueError, match="value 'bank': Type 2 to 8 words"):
        explorers.one_word(Table(), ["bank"])
    with pytest.raises(ValueError, match="sentences is empty"):
        explorers.sentence_map(Table(), [], value="money bank")


def test_the_widget_figures_are_legible(shown):
    explorers.one_word(Table(), ["a bank near the river"])
    explorers.sentence_map(Table(), ["a bank near the river"])
    for fig in shown:
        assert_legible(fig)


def test_one_query_pipeline_stacks_the_weighted_vectors_into_z():
    fig, axes = figures.one_query_pipeline(WORDS, X, 1)
    scores = X @ X[1]
    weights = core.softmax(scores)
    assert [p.get_height() for p in axes[0].patches] == pytest.approx(scores)
    assert [p.get_height() for p in axes[1].patches] == pytest.approx(weights)
    tops = np.zeros(4)
    for p in axes[2].patches:
        tops[round(p.get_x() + p.get_width() / 2)] = max(tops[round(p.get_x() + p.get_width() / 2)],
                                                         p.get_y() + p.get_height())
    assert tops == pytest.approx(weights @ X)          # the stacks reach z_2
    assert_legible(fig)


@pytest.mark.parametrize(("args", "said"), [((WORDS[:3], X, 1), "X has shape"), ((WORDS, X, 7), "i is 7"),
                                           ((WORDS, -X, 1), "negative entries")])
def test_one_query_pipeline_names_bad_input(args, said):
    with pytest.raises(ValueError, match=said):
        figures.one_query_pipeline(*args)


def test_plane_shades_the_region_of_a_groups_weighted_averages():
    vectors = {"money": [1.0, 0.1], "bank": [0.7, 0.7], "grows": [0.5, 0.3], "inside": [0.765, 0.53]}
    ax = figures.plane(vectors, shade=[["money", "bank", "grows"]])
    (patch,) = [p for p in ax.patches if p.get_facecolor()[:3] == pytest.approx((0.85, 0.85, 0.85))]
    corners = {tuple(np.round(xy, 3)) for xy in patch.get_xy()}
    assert corners == {(1.0, 0.1), (0.7, 0.7), (0.5, 0.3)}
    assert patch.get_path().contains_point((0.765, 0.53))      # 0.25 money + 0.70 bank + 0.05 grows
    tinted = figures.plane(vectors, shade=[["money", "bank", "grows"]], shade_colors=["tab:red"])
    (patch,) = tinted.patches
    assert patch.get_facecolor()[:3] == pytest.approx(matplotlib.colors.to_rgb("tab:red"))
    with pytest.raises(ValueError, match=r"shade\[0\] is \['money', 'nope'\]"):
        figures.plane(vectors, shade=[["money", "nope"]])


def test_hull_keeps_only_the_outer_corners():
    square = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [0.5, 0.5]], dtype=float)
    assert {tuple(p) for p in figures._hull(square)} == {(0, 0), (1, 0), (0, 1), (1, 1)}


def test_softmax_of_two_draws_the_curve_next_to_the_argmax_step():
    gaps = np.linspace(-6, 6, 121)
    shares = core.softmax(np.stack([np.zeros_like(gaps), gaps], axis=1))[:, 1]
    fig, ax = figures.softmax_of_two(gaps, shares)
    step, curve = ax.lines
    argmax = np.where(gaps == 0, np.nan, (gaps > 0).astype(float))   # broken at the tie s = 0
    assert np.array_equal(step.get_ydata(), argmax, equal_nan=True)
    assert curve.get_ydata()[60] == pytest.approx(0.5) and ax.get_ylabel() and ax.get_xlabel()
    assert any("convention" in t.get_text() for t in ax.get_legend().get_texts())   # the tie's 1/2
    assert_legible(fig)
    with pytest.raises(ValueError, match="gaps has shape"):
        figures.softmax_of_two(gaps, shares[:3])
    fig, ax = figures.softmax_of_two(gaps, shares, band=0.42)   # the shaded band of small gaps
    assert len(ax.patches) == 1
    label = r"gaps within $\pm$0.42: weights at most $e^{0.42}$ = 1.52 times apart"
    assert ax.patches[0].get_label() == label
    assert_legible(fig)
    with pytest.raises(ValueError, match="band is"):
        figures.softmax_of_two(gaps, shares, band=-1)


def test_one_query_pipeline_labels_its_axes_and_names_each_colour():
    fig, axes = figures.one_query_pipeline(WORDS, X, 1)
    assert [ax.get_ylabel() for ax in axes] == ["score", "weight", "coordinate of z"]
    assert [t.get_text() for t in axes[2].get_legend().get_texts()] == WORDS
    assert r"\alpha_{2j}" in axes[2].get_title() and r"\omega_{2j}" in axes[1].get_title()


def test_lesson_02_figures_give_each_word_one_colour():
    """river, bank and the rest keep their colour from the plane to the pipeline."""
    toy = {"money": [1.0, 0.1, 0, 0], "grows": [0.5, 0.3, 0.1, 0], "bank": [0.7, 0.7, 0, 0],
           "river": [0.1, 1.0, 0, 0], "flows": [0.2, 0.8, 0, 0]}
    ax = figures.bank_plane(toy, [0.765, 0.53, 0.005, 0], [0.57, 0.762, 0, 0])
    label = {t.get_text().strip(): t.get_color() for t in ax.texts}
    assert len(ax.patches) == 2                                 # the two shaded triangles
    fig, axes = figures.one_query_pipeline(WORDS, X, 1, colors=figures.WORD_COLORS)
    for word, bar in zip(WORDS, axes[1].patches, strict=True):
        assert bar.get_facecolor()[:3] == pytest.approx(matplotlib.colors.to_rgb(figures.WORD_COLORS[word]))
    for word in ("bank", "river"):
        assert matplotlib.colors.to_rgb(label[word]) == matplotlib.colors.to_rgb(figures.WORD_COLORS[word])
    assert_legible(fig)
    assert_legible(ax.figure)


def test_lesson03_matrix_form_flow_draws_four_maps():
    X = np.array([[1.0, 0.1, 0, 0], [0.7, 0.7, 0, 0], [0.1, 1.0, 0, 0]])
    Omega = X @ X.T
    A = np.exp(Omega) / np.exp(Omega).sum(axis=1, keepdims=True)
    fig, axes = figures.matrix_form_flow(X, Omega, A, A @ X, ["money", "bank", "grows"])
    assert len(axes) >= 4


class _Table:   # a tiny embedding table: vocab and vector, as the real one
    def __init__(self, rows: dict):
        self.rows = {w: np.array(v, dtype=float) for w, v in rows.items()}
        self.vocab = list(self.rows)

    def vector(self, w):
        return self.rows[w]


def test_matched_pools_match_length_and_score_and_leave_out_sense_words():
    table = _Table({"bank": [1, 0], "river": [0.5, 0.5], "loans": [0.5, 0.5], "banks": [0.5, 0.5],
                    "near": [0.5, 0.49], "far": [0.4, 0.6], "long": [3, 0], "it": [0.1, 0.7]})
    pools = data.matched_pools(table, ["river"], exclude=["loan"], size=2)
    assert list(pools["river"]) == ["near", "far"]   # not river itself, loans (a sense word), banks, long


def test_matched_pools_can_keep_only_words_without_a_lean():
    table = _Table({"bank": [1, 0], "river": [0.5, 0.5], "near": [0.52, 0.3], "it": [0.45, 0.45],
                    "water": [0, 1], "cash": [1, 0.01]})
    kw = {"exclude": ["water", "cash"], "size": 1, "tol": 1.0}
    assert list(data.matched_pools(table, ["river"], **kw)["river"]) == ["near"]   # nearest score
    pools = data.matched_pools(table, ["river"], sense=(["water"], ["cash"]), max_lean=0.03, **kw)
    assert list(pools["river"]) == ["it"]   # near leans to cash; it is level


def test_without_the_slider_the_explorer_shows_plain_basic_attention(shown, capsys):
    """slider=False (lesson 02's core): no beta control, no beta in the panels, the weights of beta = 1."""
    box = explorers.one_word(Table(), ["a bank near the river"], focus=1, slider=False)
    assert len(box.children[0].children) == 2                      # the sentence and the focus word only
    _, A = core.basic_self_attention(X)
    out = capsys.readouterr().out
    assert "weights:       " + "  ".join(f"{w} {a:.3f}" for w, a in zip(WORDS, A[1], strict=True)) in out
    assert "beta" not in out and all("beta" not in ax.get_title() for ax in shown[-1].axes)
