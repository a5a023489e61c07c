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


def test_item_roles_find_the_target_the_distractor_and_the_others():
    X, y = tasks.make_lookup_data(200, seed=3)
    roles = tasks.item_roles(X)
    assert {k: tuple(v.shape) for k, v in roles.items()} == {k: (200, tasks.N_ITEMS) for k in roles}
    assert (roles["target"].sum(1) == 1).all() and (roles["distractor"].sum(1) == 1).all()
    assert (roles["other"].sum(1) == tasks.N_ITEMS - 2).all()
    digits = X[:, : tasks.N_ITEMS, tasks.N_SYM : 2 * tasks.N_SYM].argmax(-1)
    assert torch.equal(digits[roles["target"]], y), "the target holds the answer"
    X2, y2 = tasks.make_lookup_data(50, seed=3, offsets=(-1, 2))
    for k, offset in enumerate((-1, 2)):
        d = X2[:, : tasks.N_ITEMS, tasks.N_SYM : 2 * tasks.N_SYM].argmax(-1)
        assert torch.equal(d[tasks.item_roles(X2, offset)["target"]], y2[:, k])


@pytest.mark.parametrize(("X", "offset", "match"), [
    (torch.zeros(3, 4, 17), 1, "X must be a tensor of shape"),
    ("sequences", 1, "X must be a tensor of shape"),
    (torch.zeros(3, 5, 17), 8, "offset must be"),
    (torch.zeros(3, 5, 17), True, "offset must be"),
])
def test_item_roles_refuse_bad_input_by_name(X, offset, match):
    with pytest.raises(ValueError, match=match):
        tasks.item_roles(X, offset)


def test_uniform_attention_gives_equal_weights_and_trains_only_w_v():
    torch.manual_seed(0)
    layer = tasks.UniformAttention(tasks.D_IN, 16)
    X = tasks.make_lookup_data(6, seed=0)[0]
    Z, A = layer(X)
    assert A.shape == (6, 5, 5) and torch.allclose(A, torch.full_like(A, 0.2))
    mean_value = (X @ layer.W_value.weight.T).mean(dim=1, keepdim=True)
    assert torch.allclose(Z, mean_value.expand(-1, 5, -1), atol=1e-6)
    assert [name for name, _ in layer.named_parameters()] == ["W_value.weight"]
    with pytest.raises(ValueError, match="d_v must be a positive integer"):
        tasks.UniformAttention(17, 0)
    with pytest.raises(ValueError, match=r"X must have shape \(batch, T, d_in\)"):
        layer(X[0])


def test_spread_gives_mean_and_range():
    assert tasks.spread([0.25, 0.5, 0.75]) == "0.500 (0.250..0.750)"
    assert tasks.spread([1], digits=1) == "1.0 (1.0..1.0)"
    with pytest.raises(ValueError, match="values is empty"):
        tasks.spread([])
