"""Lesson 05's checks name each typical mistake, and only that one.

Every wrong answer below is written the way a learner would write it. Each test asserts that the message names
its own mistake and none of the others (``tests/mistakes.py``), that two different right answers pass, and
that a shortcut which skips what the exercise teaches does not.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from mistakes import message, names_only, right_answer_passes

from selfattention import checks


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


# ------------------------------------------------------------------ Exercise 1: two losses
def check_losses(answer):
    checks.check_loss_predictions(*answer)


LN8, SURE = math.log(8), math.log(math.exp(10) + 7)

LOSSES = {
    "log2": "log base 2",
    "log10": "log base 10",
    "four digits": "not over the 4 digits in the sequence",
    "probability": "that is p_y",
    "sign": "the sign is wrong",
    "zero": "equal logits do not give a loss of 0",
    "equal: other": "With 8 equal logits",
    "blank": "has no value yet",
    "right digit": "if the logit 10 were on the right digit",
    "inverse": "that is 1/p_y",
    "not equal": "these logits are not equal",
    "sure: other": "so p_y = e^0 / (e^10 + 7 e^0)",
}


def test_loss_right_answers(capsys):
    right_answer_passes(check_losses, (np.log(8), np.log(np.exp(10) + 7)), capsys)
    right_answer_passes(check_losses, (2.08, 10), capsys)  # rounded, as a learner works it out by hand


@pytest.mark.parametrize(
    ("answer", "mistake"),
    [
        ((3.0, SURE), "log2"),
        ((math.log10(8), SURE), "log10"),
        ((math.log(4), SURE), "four digits"),
        ((1 / 8, SURE), "probability"),
        ((-LN8, SURE), "sign"),
        ((0.0, SURE), "zero"),
        ((2.0334, SURE), "equal: other"),  # the shortcut: a loss printed earlier in the lesson, not ln 8
        ((None, SURE), "blank"),
        ((LN8, math.log(1 + 7 * math.exp(-10))), "right digit"),
        ((LN8, 1 / (math.exp(10) + 7)), "probability"),
        ((LN8, math.exp(10) + 7), "inverse"),
        ((LN8, -SURE), "sign"),
        ((LN8, LN8), "not equal"),
        ((LN8, 9.0), "sure: other"),
        ((LN8, SURE / math.log(2)), "log2"),
        ((LN8, None), "blank"),
    ],
)
def test_loss_mistakes_are_named(answer, mistake):
    names_only(message(check_losses, answer), mistake, LOSSES)


# ------------------------------------------------------------------ Exercise 2: one gradient step
def right_step(W, h, y, lr):
    g = softmax(W @ h)
    g[y] -= 1.0
    return W - lr * np.outer(g, h)


def right_step_by_rows(W, h, y, lr):
    """Another right answer: row by row, p_c - [c = y] times h."""
    p = softmax(W @ h)
    out = W.copy()
    for c in range(W.shape[0]):
        out[c] -= lr * (p[c] - (c == y)) * h
    return out


def uphill(W, h, y, lr):
    p = softmax(W @ h)
    onehot = np.eye(W.shape[0])[y]
    return W - lr * np.outer(onehot - p, h)


def no_lr(W, h, y, lr):
    p = softmax(W @ h)
    p[y] -= 1
    return W - np.outer(p, h)


def no_softmax(W, h, y, lr):
    g = W @ h
    g[y] -= 1
    return W - lr * np.outer(g, h)


def no_minus_one(W, h, y, lr):
    return W - lr * np.outer(softmax(W @ h), h)


def only_right_row(W, h, y, lr):
    p = softmax(W @ h)
    out = W.copy()
    out[y] -= lr * (p[y] - 1) * h
    return out


def no_h(W, h, y, lr):
    p = softmax(W @ h)
    p[y] -= 1
    return W - lr * p[:, None]


def outer_reversed(W, h, y, lr):
    p = softmax(W @ h)
    p[y] -= 1
    return W - lr * np.outer(h, p)


def naive_softmax(W, h, y, lr):
    e = np.exp(W @ h)
    p = e / e.sum()
    p[y] -= 1
    return W - lr * np.outer(p, h)


def with_backward(W, h, y, lr):
    """The shortcut: let PyTorch compute the gradient."""
    import torch

    Wt = torch.tensor(W, requires_grad=True)
    loss = torch.nn.functional.cross_entropy((Wt @ torch.tensor(h))[None], torch.tensor([y]))
    loss.backward()
    return (Wt - lr * Wt.grad).detach().numpy()


def gradient_only(W, h, y, lr):
    p = softmax(W @ h)
    p[y] -= 1
    return np.outer(p, h)


def halved(W, h, y, lr):
    """Divides by 2, as the primer's batch of two did."""
    p = softmax(W @ h)
    p[y] -= 1
    return W - lr * np.outer(p, h) / 2


def with_torch_func(W, h, y, lr):
    """Another shortcut: torch.func.grad."""
    import torch
    import torch.func

    def loss(Wt):
        return torch.nn.functional.cross_entropy((Wt @ torch.tensor(h))[None], torch.tensor([y]))

    Wt = torch.tensor(W)
    return (Wt - lr * torch.func.grad(loss)(Wt)).numpy()


STEP = {
    "uphill": "the step goes uphill",
    "no lr": "the learning rate is missing",
    "no softmax": "the softmax is missing",
    "no minus one": "the -1 of the right digit is missing",
    "one row": "only the right digit's row moved",
    "no h": "h is missing",
    "outer reversed": "the outer product is in the wrong order",
    "overflow": "subtract each row's maximum",
    "backward": "lets PyTorch compute the gradient",
    "gradient": "that is the gradient itself",
    "halved": "the gradient was divided by 2",
}


def test_step_right_answers(capsys):
    right_answer_passes(checks.check_sgd_step, right_step, capsys)
    right_answer_passes(checks.check_sgd_step, right_step_by_rows, capsys)


@pytest.mark.parametrize(
    ("answer", "mistake"),
    [
        (uphill, "uphill"),
        (no_lr, "no lr"),
        (no_softmax, "no softmax"),
        (no_minus_one, "no minus one"),
        (only_right_row, "one row"),
        (no_h, "no h"),
        (outer_reversed, "outer reversed"),
        (naive_softmax, "overflow"),
        (with_backward, "backward"),
        (with_torch_func, "backward"),
        (gradient_only, "gradient"),
        (halved, "halved"),
    ],
)
def test_step_mistakes_are_named(answer, mistake):
    names_only(message(checks.check_sgd_step, answer), mistake, STEP)


def test_backward_works_again_after_the_check():
    """The check refuses backward() only while it runs the learner's function."""
    import torch

    with pytest.raises(checks.ExerciseError):
        checks.check_sgd_step(with_backward)
    w = torch.ones(2, requires_grad=True)
    (w * w).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0]


def test_step_cases_keep_the_mistakes_apart():
    """A square W (where np.outer(h, g) runs), a non-square one, and logits that overflow np.exp."""
    from selfattention.checks.lesson05 import _sgd_cases

    shapes = [W.shape for W, *_ in _sgd_cases()]
    assert shapes[0][0] == shapes[0][1] and all(a != b for a, b in shapes[1:])
    W, h, _, _ = _sgd_cases()[-1]
    assert np.abs(W @ h).max() > 710


# ------------------------------------------------------------------ Exercise 3: the letter before
D_IN, N = 17, 8


def before_answer(shift: int = -1, scale: float = 5.0) -> tuple[np.ndarray, np.ndarray]:
    W_k = np.zeros((D_IN, N))
    W_k[:N] = np.eye(N)
    W_q = np.zeros((D_IN, N))
    W_q[:N] = scale * np.roll(np.eye(N), shift, axis=1)
    return W_q, W_k


def check_before(answer):
    checks.check_letter_before(*answer)


BEFORE = {
    "linear layout": "nn.Linear layout",
    "sizes": "a dot product needs the same d_k",
    "after": "the letter after",
    "itself": "its own letter, the distractor",
    "query token": "the query token itself",
    "wrap": "Only ?A fails",
    "too small": "Make the scores larger",
    "zero query": "is all zeros",
    "tie": "a bigger scale cannot fix that",
}


def test_before_right_answers(capsys):
    right_answer_passes(check_before, before_answer(), capsys)
    W_k, W_q = np.zeros((D_IN, N)), np.zeros((D_IN, N))
    for s in range(N):
        W_k[s, s], W_q[s, (s - 1) % N] = 1.0, 6.0
    right_answer_passes(check_before, (W_q, W_k), capsys)


def no_wrap() -> tuple[np.ndarray, np.ndarray]:
    W_q, W_k = before_answer()
    W_q[:N] = 5 * np.eye(N, k=-1)  # row s -> column s - 1, but row A has nothing
    return W_q, W_k


def tied() -> tuple[np.ndarray, np.ndarray]:
    W_q, _ = before_answer()
    W_q[-1, 0] = 3.0  # the flag too
    return W_q, W_q.copy()


def digit_query() -> tuple[np.ndarray, np.ndarray]:
    """The query built from the digit rows, which are zero for the query token."""
    W_q, W_k = before_answer()
    W_q[N:2 * N], W_q[:N] = W_q[:N], 0.0
    return W_q, W_k


def circle(scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Two axes: letter k's key on a circle at angle 2 pi k / 8, the query aimed at letter s - 1's key."""
    W_q, W_k = np.zeros((D_IN, 2)), np.zeros((D_IN, 2))
    for k in range(N):
        W_k[k] = [math.cos(2 * math.pi * k / N), math.sin(2 * math.pi * k / N)]
        W_q[k] = scale * np.array([math.cos(2 * math.pi * (k - 1) / N), math.sin(2 * math.pi * (k - 1) / N)])
    return W_q, W_k


def letter_and_next() -> tuple[np.ndarray, np.ndarray]:
    """The query looks for the letter before and the letter two before equally: a tie in some sequences."""
    W_q, W_k = before_answer()
    W_q[:N] += 5 * np.roll(np.eye(N), -2, axis=1)
    return W_q, W_k


def test_circle_passes_only_when_sharp_enough(capsys):
    """On the task's own sequences a two-axis circle needs a large scale: 10 is not enough (it passed the
    old check, which never showed letter s - 2), 100 is."""
    names_only(message(check_before, circle(10.0)), "too small", BEFORE)
    right_answer_passes(check_before, circle(100.0), capsys)


@pytest.mark.parametrize(
    ("answer", "mistake"),
    [
        (digit_query(), "zero query"),
        (letter_and_next(), "tie"),
        (tuple(W.T for W in before_answer()), "linear layout"),
        ((before_answer()[0], before_answer()[1][:, :5]), "sizes"),
        (before_answer(shift=1), "after"),
        (before_answer(shift=0), "itself"),  # the shortcut: the query looks for its own letter
        (tied(), "query token"),
        (no_wrap(), "wrap"),
        (before_answer(scale=1.0), "too small"),
    ],
)
def test_before_mistakes_are_named(answer, mistake):
    names_only(message(check_before, answer), mistake, BEFORE)
