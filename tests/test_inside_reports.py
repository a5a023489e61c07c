"""Lesson 12's report functions in ``selfattention.inside``: the yardstick of one-word edits and the two
printed tables, checked against direct counts."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import inside


def test_each_edit_changes_one_word_of_its_sentence_and_the_pool_is_apart() -> None:
    tested = inside.PROBES + inside.FRESH
    assert len(inside.EDITS) == len(tested) == 24
    for sentence, edit in zip(tested, inside.EDITS, strict=True):
        a, b = sentence.split(), edit.split()
        assert len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) == 1, (sentence, edit)
    assert len(inside.POOL) == 32 and not set(inside.POOL) & set(tested + inside.EDITS)


def test_yardstick_is_one_minus_cos_of_each_pair() -> None:
    class Fake:
        def sentence_embeddings(self, sentences):
            import torch

            rows = np.array([[len(s), s.count("e") + 1.0] for s in sentences])
            return torch.as_tensor(rows / np.linalg.norm(rows, axis=1, keepdims=True))

    s, e = ["ab", "eee", "c", "de"], ["abe", "ee", "cc", "d"]
    got = inside.yardstick(Fake(), s, e)
    emb = Fake().sentence_embeddings
    want_edit = 1 - (emb(s).numpy() * emb(e).numpy()).sum(-1)
    want_other = 1 - (emb(s[:2]).numpy() * emb(s[2:]).numpy()).sum(-1)
    np.testing.assert_allclose(got["one-word edit (4 pairs)"], want_edit)
    np.testing.assert_allclose(got["unrelated (2 pairs)"], want_other)
    with pytest.raises(ValueError, match="one even length"):
        inside.yardstick(Fake(), s, e[:3])


def test_removal_table_counts_sentences_above_their_own_edit() -> None:
    rng = np.random.default_rng(0)
    delta = rng.uniform(0.001, 0.01, size=(6, 12, 24))
    delta[5, 3, [2, 7]] = 0.5                               # one last-layer head beats two sentences' edits
    parked = np.zeros((6, 12), dtype=bool)
    parked[1:5, :5] = True
    weight = np.where(parked, 0.7, 0.2) + rng.uniform(0, 0.1, size=(6, 12))
    text = inside.removal_table(delta, parked, np.full(24, 0.1), weight)
    assert "layers 0-4: largest removal" in text and "above the edit in 0 of 24 sentences" in text
    assert "layer 5: largest removal" in text and "above the edit in 2 of 24 sentences" in text
    assert "the 12 new sentences only: Spearman" in text


def test_parking_table_has_one_row_per_layer_after_the_first() -> None:
    held = {name: np.full((3, 6, 12), value) for name, value in
            (("on [CLS]", 0.7), ("words shuffled", 0.6), ("a random word", 0.03))}
    parked = np.zeros((6, 12), dtype=bool)
    parked[1:, :2] = True
    lines = inside.parking_table(held, parked).splitlines()
    assert len(lines) == 1 + 5 + 1 and lines[1].split()[:3] == ["1", "2", "of"]
    assert "0.70 (0.70 to 0.70)" in lines[1] and lines[-1].endswith("a random word 0.03 to 0.03")


def test_removal_figure_says_what_its_dots_and_lines_are_and_draws_marked_heads_on_top() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from selfattention.plots import pretrained as pictures

    spread = np.random.default_rng(1).uniform(0.001, 0.01, size=(2, 6, 24))
    marked = np.zeros((2, 6), dtype=bool)
    marked[:, :2] = True
    ax = pictures.removal_against_yardstick(spread.mean(-1), marked, {"edits": np.array([0.1, 0.2])},
                                            marked_label="parked on position 0", other_label="other heads",
                                            spread=spread)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "parked on position 0 (dot: mean)" in labels
    assert "line: range over 24 sentences, parked on position 0" in labels
    assert "line: range over 24 sentences, other heads" in labels
    z = {c.get_label(): c.get_zorder() for c in ax.collections if not c.get_label().startswith("_")}
    dots = " (dot: mean)"
    assert z["parked on position 0" + dots] > z["other heads" + dots]
    plt.close("all")


def test_course_attention_holds_the_layers_weights_and_reproduces_its_attention() -> None:
    """The course's MultiHeadAttention with a layer's weights copied in gives the layer's own weights and
    attention output (section 1 of lesson 12 compares them on a real input too)."""
    import torch

    from selfattention import data

    model = data.load_pretrained()
    bert_layer = model.model.encoder.layer[1]
    ours = inside.course_attention(bert_layer)
    assert torch.equal(ours.W_key.weight, bert_layer.attention.self.key.weight)
    assert torch.equal(ours.W_out.bias, bert_layer.attention.output.dense.bias)
    parts = inside.layer_parts(model, "the cat sat on the mat.")
    with torch.no_grad():
        out, weights = ours(parts["hidden"][1])
    assert (weights - parts["attentions"][1]).abs().max() < 1e-5
    assert (out - parts["attention"][1]).abs().max() < 1e-5

