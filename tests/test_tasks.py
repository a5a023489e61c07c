"""The lookup task (selfattention.tasks): the data says what its docstring says, and the loop trains."""

from __future__ import annotations

import pytest
import torch

import selfattention as sa
from selfattention import tasks


def letter(token: torch.Tensor) -> int:
    return int(token[: tasks.N_SYM].argmax())


def digit(token: torch.Tensor) -> int:
    return int(token[tasks.N_SYM : 2 * tasks.N_SYM].argmax())


@pytest.mark.parametrize("offsets", [(1,), (1, -1), (2, -1, 3)])
def test_each_answer_is_the_digit_under_the_letter_at_its_offset(offsets):
    X, y = tasks.make_lookup_data(300, seed=5, offsets=offsets)
    assert X.shape == (300, tasks.N_ITEMS + 1, tasks.D_IN)
    y = y.view(300, -1)
    assert y.shape == (300, len(offsets))
    for seq, answers in zip(X, y, strict=True):
        query, items = seq[-1], seq[:-1]
        assert query[-1] == 1 and (items[:, -1] == 0).all(), "the query token comes last, flagged"
        s = letter(query)
        under = {letter(t): digit(t) for t in items}
        assert len(under) == tasks.N_ITEMS, "each item has its own letter"
        assert s in under, "one item has the query's own letter: the distractor"
        assert [under[(s + o) % tasks.N_SYM] for o in offsets] == answers.tolist()


def test_the_same_seed_gives_the_same_data_and_another_seed_other_data():
    a, b, c = (tasks.make_lookup_data(50, seed) for seed in (1, 1, 2))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) and not torch.equal(a[0], c[0])
    assert tasks.token_labels(tasks.make_lookup_data(1, 2)[0][0])[-1].startswith("?")


@pytest.mark.parametrize("offsets", [(), (0,), (1, 9), (1, 2, 3, 4)])
def test_bad_offsets_are_refused_by_name(offsets):
    with pytest.raises(ValueError, match="offsets must be"):
        tasks.make_lookup_data(5, 0, offsets)


def test_learned_projections_learn_the_task_and_the_history_records_it(one_torch_thread):
    data = (*tasks.make_lookup_data(2000, 1), *tasks.make_lookup_data(500, 2))
    torch.manual_seed(0)
    model = tasks.ReadoutModel(sa.SelfAttention(tasks.D_IN, 16), 16)
    history = tasks.train(model, data, steps=160, snapshot=lambda m: "seen")
    steps = [h[0] for h in history]
    assert steps == list(range(0, 161, 2)) and history[-1][2] == "seen"
    assert history[0][1] < 0.4 and history[-1][1] > 0.95, (history[0][1], history[-1][1])
