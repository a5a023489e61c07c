"""selfattention.projections: lesson 04's shares of own-top rows and mutual preferences."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention.projections import mutual, own_top


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
