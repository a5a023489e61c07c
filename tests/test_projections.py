"""selfattention.projections: lesson 04's shares of own-top rows and mutual preferences."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention.projections import mutual, own_top, shared_vs_separate, shared_with_common_direction


def test_own_top_and_mutual_on_hand_made_scores():
    # Sam and ate each score the other above themselves (2 > 0, 1 > 0): one mutual pair of three
    S = np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 5.0]])
    assert own_top(S) == pytest.approx(1 / 3)
    assert mutual(S) == pytest.approx(1 / 3)
    assert mutual(np.eye(3)) == 0 and own_top(np.eye(3)) == 1


def test_shared_projection_never_has_a_mutual_pair():
    rng = np.random.default_rng(0)
    X, W = rng.normal(size=(7, 10)), rng.normal(size=(4, 10, 2))
    S = (X @ W) @ (X @ W).swapaxes(-1, -2)           # (4, 7, 7): one shared W per draw
    assert mutual(S).shape == (4,) and np.all(mutual(S) == 0)


def test_bad_shapes_are_named():
    with pytest.raises(ValueError, match="shape"):
        own_top(np.zeros((3, 4)))


def test_shared_vs_separate_shapes_and_the_shared_rule():
    rng = np.random.default_rng(1)
    Xs = [rng.normal(size=(T, 16)) for T in (4, 6, 7)]
    out = shared_vs_separate(Xs, d_k=2, draws=5, seed=3)
    assert set(out) == {"one shared W", "separate W_Q, W_K"}
    for shares in out.values():
        assert shares["own top"].shape == shares["mutual"].shape == (5,)
        assert np.all((shares["own top"] >= 0) & (shares["own top"] <= 1))
    assert np.all(out["one shared W"]["mutual"] == 0)                 # ||x_i W - x_j W||^2 >= 0
    # d_k = 1: a row's top is the largest- or the smallest-key word: at most 2 own-top words per sentence
    one = shared_vs_separate(Xs, d_k=1, draws=5, seed=3)["one shared W"]["own top"]
    assert np.all(one <= np.mean([2 / len(X) for X in Xs]) + 1e-12)
    # the same seed gives the same draws; a wider d_k puts more words' own score on top with one shared W
    assert np.array_equal(shared_vs_separate(Xs, 2, 5, 3)["separate W_Q, W_K"]["mutual"],
                          out["separate W_Q, W_K"]["mutual"])
    assert shared_vs_separate(Xs, d_k=64, draws=5)["one shared W"]["own top"].mean() > one.mean() + 0.3


def test_shared_vs_separate_names_bad_input():
    with pytest.raises(ValueError, match="d_model"):
        shared_vs_separate([np.zeros((3, 4)), np.zeros((3, 5))], d_k=2)
    with pytest.raises(ValueError, match="d_k"):
        shared_vs_separate([np.zeros((3, 4))], d_k=0)


def test_a_shared_w_reading_the_common_direction_moves_own_scores_off_the_top():
    # words = a large common part + small own parts: a random shared W keeps each own score on top,
    # a shared W with a column along the common direction does not, and neither is ever mutual
    rng = np.random.default_rng(2)
    common = rng.normal(size=64)
    Xs = [common * rng.uniform(0.5, 1.5, size=(T, 1)) * 0.1 + rng.normal(size=(T, 64)) for T in (5, 6, 7)]
    out = shared_with_common_direction(Xs, d_k=16, scale=30.0, draws=4, seed=0)
    assert out["own top"].shape == out["mutual"].shape == (4,)
    assert np.all(out["mutual"] == 0)
    rand = shared_vs_separate(Xs, d_k=16, draws=4, seed=0)["one shared W"]["own top"]
    assert out["own top"].mean() < rand.mean() - 0.3
    with pytest.raises(ValueError, match="zero mean"):
        shared_with_common_direction([np.array([[1.0, 0.0], [-1.0, 0.0]])], d_k=1)
