"""Lesson 05's checks name each typical mistake, and only that one.

Every wrong answer below is written the way a learner would write it. Each test asserts that the message names
its own mistake and none of the others (``tests/mistakes.py``), that two different right answers pass, and
that a shortcut which skips what the exercise teaches does not.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from mistakes import hidden_test_passes, message, names_only, right_answer_passes

import selfattention as sa
from selfattention import checks

LESSON = "05_training_attention"
NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / f"{LESSON}.ipynb"


def run_hidden_test(grade_id: str, **names) -> None:
    """Runs the hidden tests of the notebook's test cell ``grade_id`` with ``names`` defined (raises if they
    fail)."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    [source] = ["".join(c["source"]) for c in cells
                if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id]
    hidden = source.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
    exec(hidden, {"sa": sa, "checks": checks, **names})  # noqa: S102 - the notebook's own test code


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


# ------------------------------------------------------------------ Exercise 1: two losses
def check_losses(answer):
    checks.check_loss_predictions(*answer)


LN8, LEAN = math.log(8), math.log(math.exp(2) + 7)

LOSSES = {
    "log2": "log base 2",
    "log10": "log base 10",
    "four digits": "not over the 4 digits in the sequence",
    "probability": "that is p_y",
    "sign": "the sign is wrong",
    "zero": "equal logits do not give a loss of 0",
    "equal: other": "With 8 equal logits",
    "blank": "has no value yet",
    "right digit": "if the logit 2 were on the right digit",
    "inverse": "that is 1/p_y",
    "not equal": "these logits are not equal",
    "nine logits": "counts 8 logits of 0 besides the 2",
    "sum of logs": "the log of a sum is not the sum of the logs",
    "gap": "that is only the logit gap of 2",
    "lean: other": "then take -log of it",
    "all seven": "gives logit 2 to all seven wrong digits",
    "no exp": "the softmax exponentiates each logit",
    "right left out": "leaves the right digit's own term out",
    "one minus": "that is 1 - p_y",
    "text": "not a number",
}


def test_loss_right_answers(capsys):
    right_answer_passes(check_losses, (np.log(8), np.log(np.exp(2) + 7)), capsys)
    right_answer_passes(check_losses, (2.08, 2.67), capsys)  # rounded, as a learner works it out by hand


@pytest.mark.parametrize("answer", [(LN8 - 0.0103, LEAN - 0.0133), (LN8 + 0.0103, LEAN + 0.0133),
                                    (2.08, 2.6533)])
def test_the_hidden_test_accepts_what_the_check_accepts(answer, capsys):
    """The visible check allows half a percent (0.0104 of ln 8, 0.0133 of ln(e^2 + 7) = 2.6665): what it
    passes, such as 2.6533, the hidden test must pass too."""
    right_answer_passes(check_losses, answer, capsys)
    run_hidden_test("l05-loss-test", loss_equal_logits=answer[0], loss_leaning_wrong=answer[1])


@pytest.mark.parametrize(
    ("answer", "mistake"),
    [
        ((3.0, LEAN), "log2"),
        ((math.log10(8), LEAN), "log10"),
        ((math.log(4), LEAN), "four digits"),
        ((1 / 8, LEAN), "probability"),
        ((-LN8, LEAN), "sign"),
        ((0.0, LEAN), "zero"),
        ((2.0334, LEAN), "equal: other"),  # the shortcut: a loss printed earlier in the lesson, not ln 8
        ((None, LEAN), "blank"),
        ((1 - 1 / 8, LEAN), "one minus"),
        (("2.079", LEAN), "text"),
        ((LN8, "2.666"), "text"),
        ((LN8, 1 - 1 / (math.exp(2) + 7)), "one minus"),
        ((LN8, math.log10(math.exp(2) + 7)), "log10"),
        ((LN8, math.log(1 + 7 * math.exp(-2))), "right digit"),
        ((LN8, 1 / (math.exp(2) + 7)), "probability"),
        ((LN8, math.exp(2) + 7), "inverse"),
        ((LN8, -LEAN), "sign"),
        ((LN8, LN8), "not equal"),
        ((LN8, math.log(math.exp(2) + 8)), "nine logits"),  # "the right one included" counted twice
        ((LN8, 2 + math.log(7)), "sum of logs"),
        ((LN8, 2.0), "gap"),
        ((LN8, math.log(1 + 7 * math.exp(2))), "all seven"),  # 3.965, next to 2 + ln 7 = 3.946
        ((LN8, 3.95), "sum of logs"),  # 2 + ln 7 rounded by hand
        ((LN8, 3.97), "all seven"),
        ((LN8, math.log(9)), "no exp"),
        ((LN8, math.log(math.exp(2) + 6)), "right left out"),
        ((LN8, 3.0), "lean: other"),
        ((LN8, LEAN / math.log(2)), "log2"),
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


def doubled(W, h, y, lr):
    """A step twice too large, as from differentiating a square."""
    p = softmax(W @ h)
    p[y] -= 1
    return W - 2 * lr * np.outer(p, h)


def halved(W, h, y, lr):
    """Divides by 2, as the primer's batch of two did."""
    p = softmax(W @ h)
    p[y] -= 1
    return W - lr * np.outer(p, h) / 2


def by_logits(W, h, y, lr):
    """Averages over the C logits, as if they were a batch."""
    p = softmax(W @ h)
    p[y] -= 1
    return W - lr * np.outer(p, h) / len(p)


def by_features(W, h, y, lr):
    p = softmax(W @ h)
    p[y] -= 1
    return W - lr * np.outer(p, h) / len(h)


def with_torch_func(W, h, y, lr):
    """Another shortcut: torch.func.grad."""
    import torch
    import torch.func

    def loss(Wt):
        return torch.nn.functional.cross_entropy((Wt @ torch.tensor(h))[None], torch.tensor([y]))

    Wt = torch.tensor(W)
    return (Wt - lr * torch.func.grad(loss)(Wt)).numpy()


def with_jacrev(W, h, y, lr):
    """The same shortcut through torch.func.jacrev, the first torch.func call of the session."""
    import torch
    import torch.func

    def loss(Wt):
        return -torch.log_softmax(Wt @ torch.tensor(h), -1)[y]

    Wt = torch.tensor(W)
    return (Wt - lr * torch.func.jacrev(loss)(Wt)).numpy()


def finite_difference(eps, central):
    """sgd_step with the gradient estimated from the loss at W nudged by eps, one entry at a time."""
    def step(W, h, y, lr):
        def loss(V):
            return -np.log(softmax(V @ h)[y])

        G = np.zeros_like(W)
        for c in range(W.shape[0]):
            for k in range(W.shape[1]):
                E = np.zeros_like(W)
                E[c, k] = eps
                low, width = (W - E, 2 * eps) if central else (W, eps)
                G[c, k] = (loss(W + E) - loss(low)) / width
        return W - lr * G
    return step


STEP = {
    "numerical": "a numerical (finite-difference) gradient",
    "float32": "your p came out uniform",
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
    "doubled": "the step is twice too large",
    "averaged": "so nothing is averaged",
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
        (with_jacrev, "backward"),
        (gradient_only, "gradient"),
        (halved, "halved"),
        (doubled, "doubled"),
        (by_logits, "averaged"),
        (by_features, "averaged"),
    ],
)
def test_step_mistakes_are_named(answer, mistake):
    names_only(message(checks.check_sgd_step, answer), mistake, STEP)


@pytest.mark.parametrize("central", [False, True])
@pytest.mark.parametrize("eps", [10.0**e for e in range(-8, 1)] + [3e-6, 0.03, 0.3])
def test_a_finite_difference_gradient_is_named(eps, central):
    """Over eps from 1e-8 to 1, forward and central: the offset case's logits near 1e12 give it away."""
    names_only(message(checks.check_sgd_step, finite_difference(eps, central)), "numerical", STEP)


@pytest.mark.parametrize("answer", [right_step, right_step_by_rows])
def test_step_right_answers_pass_the_hidden_test(answer):
    """p - onehot(y), then the chain rule through logit c = sum_k W[c, k] h[k]: the offset case included."""
    assert hidden_test_passes("05_training_attention", "l05-sgd-test", sgd_step=answer)


@pytest.mark.parametrize(("eps", "central"), [(1e-6, False), (1e-4, True), (0.1, True)])
def test_a_finite_difference_gradient_fails_the_hidden_test(eps, central):
    answer = finite_difference(eps, central)
    assert not hidden_test_passes("05_training_attention", "l05-sgd-test", sgd_step=answer)


def in_float32(W, h, y, lr):
    """The right step in float32: the logits' gaps near 1e12 round away, p comes out uniform."""
    return right_step(W.astype(np.float32), h.astype(np.float32), y, lr)


def test_float32_is_named_not_a_finite_difference():
    names_only(message(checks.check_sgd_step, in_float32), "float32", STEP)


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
    # a missing lr (factor 1/lr), a doubled step (2) and a halved one (1/2) differ from 1 and from each other
    for _, _, _, lr in _sgd_cases():
        factors = [1.0, 1 / lr, 2.0, 0.5]
        assert all(abs(a - b) > 0.1 for i, a in enumerate(factors) for b in factors[i + 1:]), lr


@pytest.mark.parametrize("answer", [no_lr, doubled, halved, uphill, gradient_only, naive_softmax])
def test_step_named_mistakes_fail_the_hidden_test(answer):
    assert not hidden_test_passes("05_training_attention", "l05-sgd-test", sgd_step=answer)


# ------------------------------------------------------------------ Exercise 3: d_k = 2 by hand
def circle(aim=1, rq=3.0, rk=3.0, line=False, flag=0.0, digits=0.0, rows_q=None, step=3):
    """W_Q2, W_K2 (17, 2): letter k's key in slot step * k (mod 8) of a ring, at angle 2 pi slot / 8 (on a
    line: its cosine only), query ?k aimed at letter k + aim; the flag's key row (flag, 0); the digits' key
    rows random times ``digits``. step 3 (or 5) puts each letter's key 135 degrees from the next letter's,
    step 1 is the alphabetical ring."""
    W_q, W_k = np.zeros((17, 2)), np.zeros((17, 2))
    angle = [2 * math.pi * (step * k % 8) / 8 for k in range(8)]
    for k in range(8):
        a, b = angle[k], angle[(k + aim) % 8]
        W_k[k] = rk * np.array([math.cos(a), 0.0 if line else math.sin(a)])
        W_q[k] = rq * np.array([math.cos(b), math.sin(b)])
    W_k[16] = [flag, 0.0]
    W_k[8:16] = digits * np.random.default_rng(0).normal(size=(8, 2))
    if rows_q is not None:
        W_q[:8] = rows_q
    return W_q, W_k


CIRCLE = {
    "no answer": "has no value yet",
    "transposed": "rows and columns are swapped",
    "shape": "it should be (d_in, d_k) = (17, 2)",
    "alphabetical": "go round in the alphabet's order",
    "too long": "may be at most 3.2 long",
    "lengthen": "Lengthen keys and queries towards 3.2",
    "too small": "as long as allowed, but the scores are too close",
    "extra row": "only the letter rows should carry keys",
    "digit rows too long": "is over the limit of 3.2",
    "two ahead": "they aim at s+2",
    "line": "lie on one line",
    "itself": "score the asked letter's own key highest",
    "previous": "the letter before the asked one",
    "self": "the flag's key row shifts its own score",
    "digit self": "the question token has no digit",
    "some": "do not score the next letter's key highest",
    "digits": "the digit rows move the keys",
    "zero query": "gives every letter the same score",
    "coincide": "coincide",
    "tie": "the same (",
}


def check_circle(answer):
    """``answer``: (W_Q2, W_K2)."""
    checks.check_hand_built(*answer)


def circle_hidden(W_q, W_k):
    return hidden_test_passes(LESSON, "l05-circle-test", W_Q2=W_q, W_K2=W_k)


def test_circle_right_answers(capsys):
    """Two orders round the ring (3 and 5 letters a slot), at different lengths, and queries longer than
    keys."""
    for answer in (circle(), circle(step=5, rq=3.2, rk=3.2), circle(rq=3.2, rk=2.9), circle(rq=3.1, rk=3.1)):
        right_answer_passes(check_circle, answer, capsys)
        assert circle_hidden(*answer)


def test_the_alphabetical_ring_needs_longer_keys(capsys):
    """The alphabetical ring reaches 0.9 only at radius about 3.84 (refused: too long, and named); the
    3-step ring at 2.9, not at 2.85."""
    right_answer_passes(check_circle, circle(rq=2.9, rk=2.9), capsys)
    message(check_circle, circle(rq=2.85, rk=2.85))                  # mean weight 0.895: refused
    assert not circle_hidden(*circle(rq=2.85, rk=2.85))
    for r in (3.2, 3.84, 5.0):
        names_only(message(check_circle, circle(step=1, rq=r, rk=r)), "alphabetical", CIRCLE)
        assert not circle_hidden(*circle(step=1, rq=r, rk=r))


def test_a_trained_d_k_2_model_fails_the_length_limit():
    """Copying W_Q, W_K of the lesson's trained d_k = 2 model (start 0) skips the design: its keys or
    queries are longer than 3.2, so the check refuses it."""
    import torch

    from selfattention import tasks

    torch.set_num_threads(1)
    data = (*tasks.make_lookup_data(2000, seed=1), *tasks.make_lookup_data(500, seed=2))
    model = tasks.start_model(0, lambda: sa.SelfAttention(tasks.D_IN, 2, d_v=16), 16)
    tasks.train(model, data)
    W_q, W_k = (w.weight.detach().T.numpy() for w in (model.attention.W_query, model.attention.W_key))
    text = message(check_circle, (W_q, W_k))
    assert "at most 3.2 long" in text or "longest key" in text
    assert not circle_hidden(W_q, W_k)


def swapped_pair():
    W_q, W_k = circle()
    W_q[[2, 5]] = W_q[[5, 2]]                         # ?C and ?F aimed at each other's next letter
    return W_q, W_k


def equal_digit_keys():
    """Every digit's key row (6, 0), the flag's key row zero: the question token, which has no digit, keeps
    its own score while every item's score shifts by the same amount, down for queries pointing away from
    (6, 0)."""
    W_q, W_k = circle(step=1, rq=5.0, rk=5.0)   # the alphabetical ring of lesson 04
    W_k[8:16] = [6.0, 0.0]
    return W_q, W_k


def zero_query_h():
    """The wrap-around forgotten: ?H's query left at zero, which scores all eight keys 0 (an argmax would
    pick A, H's next letter, by chance)."""
    W_q, W_k = circle()
    W_q[7] = 0.0
    return W_q, W_k


def four_directions():
    """Only four key directions: A and E, B and F, ... share a key, so ?D scores E (its next letter) and A
    alike."""
    W_q, W_k = circle()
    W_k[4:8] = W_k[0:4]
    return W_q, W_k


def tied_query():
    """?B's query halfway between C's and D's keys: it scores both the same."""
    W_q, W_k = circle()
    W_q[1] = (W_k[2] + W_k[3])
    return W_q, W_k


def squashed_ring():
    """The 3-step ring at the length limit, flattened to half height: the keys crowd together."""
    W_q, W_k = circle(rq=3.2, rk=3.2)
    W_k[:8, 1] *= 0.5
    return W_q, W_k


def one_digit_key():
    """A right ring with digit 1's key row (0.5, 0.3): too long a key, caused by the digit row."""
    W_q, W_k = circle()
    W_k[9] = [0.5, 0.3]
    return W_q, W_k


def constant_digit_rows():
    """The 3-step ring of radius 3 with every digit's key row (0.5, 0): it still works, but an item's key
    reaches 3.5, over the limit; the length is what the check reports, with the digit rows as its cause."""
    W_q, W_k = circle()
    W_k[8:16] = [0.5, 0.0]
    return W_q, W_k


def test_a_short_right_ring_is_not_blamed_on_sqrt_2():
    for answer in (circle(rq=2.8, rk=2.8), circle(rq=3.2, rk=2.6)):
        text = message(check_circle, answer)
        assert "Lengthen keys and queries towards 3.2" in text and "undivided" not in text, text
    assert "W_K2's row 9 (digit 1) is not zero" in message(check_circle, one_digit_key())


@pytest.mark.parametrize("digit_key", [(3.0, 0.0), (-3.0, 0.0), (30.0, 0.0)])
def test_circle_equal_digit_keys_print_the_weight_on_itself(digit_key):
    """All digit key rows equal: the target still gets about 0.6, so the message prints the question token's
    own weight (about 0.35) instead of saying it looks mostly at itself."""
    W_q, W_k = circle(step=1, rq=5.0, rk=5.0)   # the alphabetical ring of lesson 04
    W_k[8:16] = digit_key
    text = message(check_circle, (W_q, W_k))
    assert "the question token has no digit" in text and "mostly" not in text, text
    assert "gives itself 0.3" in text, text


def test_circle_flag_key_prints_the_weight_on_itself():
    W_q, W_k = circle(step=1, rq=5.0, rk=5.0)
    W_k[16] = [5.0, 5.0]
    text = message(check_circle, (W_q, W_k))
    assert "the flag's key row" in text and "mostly" not in text, text
    assert "gives itself 0.3" in text, text


def test_circle_zero_query_names_the_wrap_around():
    text = message(check_circle, zero_query_h())
    wanted = "?H's query gives every letter the same score: aim it at A, the letter after H (wrap around)"
    assert wanted in text, text
    assert "digit rows" not in text, text
    text = message(check_circle, four_directions())
    assert "the keys of A and E, B and F, C and G, D and H coincide" in text, text


@pytest.mark.parametrize(
    ("answer", "mistake"),
    [
        ((None, circle()[1]), "no answer"),
        (circle(step=1, rq=3.83, rk=3.83), "alphabetical"),
        (circle(rq=3.5, rk=3.5), "too long"),
        (circle(rq=2.6, rk=2.6), "lengthen"),
        (circle(rq=2.8, rk=2.8), "lengthen"),             # right layout, short: not a forgotten sqrt 2
        (circle(rq=3.2, rk=2.6), "lengthen"),
        (circle(rq=1.0, rk=1.0), "lengthen"),             # the right directions, scores too close
        (squashed_ring(), "too small"),                   # at the length limit, keys too close together
        (one_digit_key(), "digit rows too long"),         # a digit row makes a right ring's key too long
        (constant_digit_rows(), "digit rows too long"),
        (circle(aim=2), "two ahead"),
        ((circle()[0].T, circle()[1]), "transposed"),
        ((np.zeros((16, 2)), circle()[1]), "shape"),
        (circle(line=True), "line"),                      # keys on a line
        (circle(aim=0), "itself"),                        # each query at its own letter: the distractor
        (circle(aim=-1), "previous"),
        (circle(flag=60.0), "self"),                      # the flag's key row makes ?s look at itself
        (equal_digit_keys(), "digit self"),               # one digit key for all: the items shift against ?s
        (swapped_pair(), "some"),
        (circle(digits=3.0), "digits"),
        (zero_query_h(), "zero query"),
        (four_directions(), "coincide"),
        (tied_query(), "tie"),
    ],
)
def test_circle_mistakes_are_named(answer, mistake):
    names_only(message(check_circle, answer), mistake, CIRCLE)


@pytest.mark.parametrize(
    "answer",
    [constant_digit_rows(), one_digit_key(), circle(step=1, rq=3.83, rk=3.83), circle(rq=3.5, rk=3.5),
     circle(rq=2.6, rk=2.6), circle(rq=1.0, rk=1.0), circle(line=True), circle(aim=0), circle(aim=-1),
     circle(flag=60.0), equal_digit_keys(), swapped_pair(), circle(digits=3.0), (circle()[0].T, circle()[1]),
     zero_query_h(), four_directions(), tied_query()],
)
def test_circle_answers_the_check_refuses_fail_the_hidden_test(answer):
    message(check_circle, answer)
    with np.errstate(all="ignore"):
        try:
            passes = circle_hidden(*answer)
        except (ValueError, TypeError):                   # a wrong shape stops the hidden test too
            passes = False
    assert not passes


def test_circle_answer_cell_comes_before_the_trained_d_k_2_model():
    """Nothing trained with d_k = 2 exists yet when the learner builds theirs: the trainings run after
    (in Going deeper)."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    ids = [c["metadata"].get("nbgrader", {}).get("grade_id") for c in cells]
    test = ids.index("l05-circle-test")
    before = "".join("".join(c["source"]) for c in cells[:test])
    after = "".join("".join(c["source"]) for c in cells[test + 1 :])
    assert "trained[" not in before and "SelfAttention(D_IN, d_k, d_v=16)" in after
