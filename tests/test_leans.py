"""selfattention.leans: lesson 03's bank study, checked by hand on small cases."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import data, leans


@pytest.fixture(scope="module")
def static():
    return data.load_static_embeddings()


def test_a_sense_word_leans_its_own_way(static):
    assert leans.lean(static, static.vector("water")) > 0 > leans.lean(static, static.vector("loan"))


def test_the_lean_swaps_sign_with_the_groups(static):
    v = static.vector("bank")
    swapped = {"finance": leans.SENSE["finance"], "nature": leans.SENSE["nature"]}
    assert leans.lean(static, v, swapped) == pytest.approx(-leans.lean(static, v))


def test_bank_leans_match_the_formulas(static):
    got = leans.bank_leans(static, ["river bank flows"])
    X = np.stack([static["river"], static["bank"], static["flows"]]).astype(float)   # (3, d)
    omega = X @ X[1]
    a = np.exp(omega - omega.max())
    a /= a.sum()                                          # bank's row of weights
    context = (a[0] * X[0] + a[2] * X[2]) / (a[0] + a[2])
    assert got.own == pytest.approx([a[1]])
    assert got.attention == pytest.approx([leans.lean(static, a @ X)])
    assert got.plain == pytest.approx([leans.lean(static, X.mean(axis=0))])
    assert got.context == pytest.approx([leans.lean(static, context)])


def test_a_sentence_without_bank_is_refused(static):
    with pytest.raises(ValueError, match="has no 'bank'"):
        leans.bank_leans(static, ["the river flows"])


def test_the_study_holds_one_matched_lean_per_draw_and_sentence(static):
    study = leans.lean_study(static, {"nature": ["river bank flows", "the river bank"]}, draws=3)
    assert study["nature"].matched.shape == (3, 2)
    rows = leans.lean_rows(study, 0.0)
    assert list(rows) == ["static bank, no context", "nature, attention", "nature, plain average",
                          "nature, context alone", "nature, matched words (means of 8)"]
    assert rows["nature, matched words (means of 8)"].shape == (3,)
