"""Checks for lesson 05 (training attention): predict two cross-entropy losses, take one gradient step by hand,
design the lookup query that attends to the letter before its own.

Every check's own inputs make each named mistake give a result different from the right answer and from
every other named mistake: no square weight matrix where a transpose could hide (one square case on purpose,
where it runs), and logits in the hundreds, where a softmax without max-subtraction overflows.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._engine import ExerciseError, _fmt, _to_array, check_function, passed, reference_softmax

__all__ = ["check_loss_predictions", "check_sgd_step", "check_letter_before"]

_N_SYM = 8  # letters, and digits: the readout has 8 logits


# ----------------------------------------------------------------- Exercise 1: two losses, predicted

def _number(got: Any, name: str) -> float:
    if got is None or got is Ellipsis:
        raise ExerciseError(f"{name} has no value yet: work it out by hand and write it there (an expression "
                            f"such as np.log(2) is fine).")
    try:
        value = float(np.asarray(got.detach() if hasattr(got, "detach") else got, dtype=float))
    except (TypeError, ValueError):
        raise ExerciseError(f"{name} should be a number, but it is a {type(got).__name__}.") from None
    if not math.isfinite(value):
        raise ExerciseError(f"{name} is {value}: a loss of 8 logits is a finite number.")
    return value


def _near(a: float, b: float) -> bool:
    """Within half a percent of ``b`` (so 2.08 is ln 8 and 10 is ln(e^10 + 7)); tiny values keep their own
    scale, so that 4.5e-5 and 3.2e-4 are told apart."""
    return abs(a - b) <= 0.005 * max(abs(b), 1e-3)


def check_loss_predictions(loss_equal_logits: Any, loss_sure_and_wrong: Any) -> None:
    """Exercise 1: the cross-entropy of 8 equal logits (ln 8), and of logits 10 on one wrong digit and 0 on
    the other seven (ln(e^10 + 7))."""
    equal = _number(loss_equal_logits, "loss_equal_logits")
    right_equal = math.log(_N_SYM)
    hints_equal = {
        "that is log base 2 of 8; the cross-entropy uses the natural logarithm (np.log).": math.log2(8),
        "that is log base 10 of 8; the cross-entropy uses the natural logarithm (np.log).": math.log10(8),
        "that is -log(1/4): the softmax runs over all 8 logits of the readout, not over the 4 digits in the "
        "sequence.": math.log(4),
        "that is p_y, the probability of the right digit; the loss is -log p_y.": 1 / 8,
        "the sign is wrong: p_y is below 1, so log p_y is negative and the loss -log p_y is positive.":
            -math.log(8),
        "equal logits do not give a loss of 0: a loss of 0 needs p_y = 1.": 0.0,
    }
    if not _near(equal, right_equal):
        for why, wrong in hints_equal.items():
            if _near(equal, wrong):
                raise ExerciseError(f"loss_equal_logits = {_fmt(equal)} is not right yet: {why}")
        raise ExerciseError(f"loss_equal_logits = {_fmt(equal)} is not right yet. With 8 equal logits the "
                            f"softmax gives each digit the same probability; the loss is -log of it.")
    sure = _number(loss_sure_and_wrong, "loss_sure_and_wrong")
    right_sure = math.log(math.exp(10) + 7)
    p_y = 1 / (math.exp(10) + 7)
    hints_sure = {
        "that is the loss if the logit 10 were on the right digit; here it is on a wrong one, and the right "
        "digit has logit 0.": math.log(1 + 7 * math.exp(-10)),
        "that is p_y, the probability of the right digit; the loss is -log p_y.": p_y,
        "that is 1/p_y; the loss is -log p_y.": 1 / p_y,
        "the sign is wrong: the loss -log p_y is positive.": -right_sure,
        "that is the loss of equal logits; these logits are not equal (10 on one wrong digit).": right_equal,
        "that is the loss in log base 2; the cross-entropy uses the natural logarithm (np.log).":
            right_sure / math.log(2),
    }
    if not _near(sure, right_sure):
        for why, wrong in hints_sure.items():
            if _near(sure, wrong):
                raise ExerciseError(f"loss_sure_and_wrong = {_fmt(sure)} is not right yet: {why}")
        raise ExerciseError(f"loss_sure_and_wrong = {_fmt(sure)} is not right yet. The right digit has logit 0, "
                            f"so p_y = e^0 / (e^10 + 7 e^0); the loss is -log p_y.")
    passed(f"equal logits cost ln 8 = {right_equal:.3f}; a sure wrong answer costs {right_sure:.3f}, about the "
           f"logit gap of 10.")


# ----------------------------------------------------------------- Exercise 2: one gradient step by hand

def _sgd_reference(W: np.ndarray, h: np.ndarray, y: int, lr: float) -> np.ndarray:
    p = reference_softmax(W @ h)
    onehot = np.eye(W.shape[0])[y]
    return W - lr * np.outer(p - onehot, h)


def _sgd_cases() -> list[tuple[np.ndarray, np.ndarray, int, float]]:
    """(W, h, y, lr): a square W (4, 4), where an outer product in the wrong order runs; W (8, 3) with 8
    logits as in the lesson; and W (5, 3) with logits in the hundreds, where np.exp overflows unless each
    row's maximum is subtracted."""
    rng = np.random.default_rng(5)
    return [
        (rng.normal(size=(4, 4)), rng.normal(size=4), 2, 0.5),
        (rng.normal(size=(8, 3)), rng.normal(size=3), 5, 0.1),
        (rng.normal(size=(5, 3)) * 600, rng.normal(size=3), 1, 0.01),
    ]


def _sgd_mistakes(W: np.ndarray, h: np.ndarray, y: int, lr: float) -> dict[str, np.ndarray]:
    logits = W @ h
    p = reference_softmax(logits)
    onehot = np.eye(W.shape[0])[y]
    g = np.outer(p - onehot, h)
    found = {
        "the step goes uphill: subtract lr times the gradient (the gradient of the logits is p - onehot(y), "
        "not onehot(y) - p).": W + lr * g,
        "the learning rate is missing: the step is lr times the gradient.": W - g,
        "the softmax is missing: the gradient of the logits is p - onehot(y), with p = softmax(W @ h), not "
        "the logits themselves.": W - lr * np.outer(logits - onehot, h),
        "the -1 of the right digit is missing: the gradient of the logits is p - onehot(y), not p.":
            W - lr * np.outer(p, h),
        "only the right digit's row moved. Every logit has a gradient, p_c - [c = y], so every row of W "
        "moves.": W - lr * np.outer(onehot * (p - onehot), h),
        "h is missing: the gradient of the loss with respect to W[c, k] is (p_c - [c = y]) * h[k], an outer "
        "product.": W - lr * (p - onehot)[:, None],
    }
    found["that is the gradient itself; sgd_step returns W after the step, W - lr * gradient."] = g
    found["the gradient was divided by 2, as in the primer's batch of two examples; here there is one example, "
          "so nothing is divided."] = W - lr * g / 2
    if W.shape[0] == W.shape[1]:
        found["the outer product is in the wrong order: the gradient has W's shape, row c for logit c, so it "
              "is np.outer(p - onehot(y), h), not np.outer(h, p - onehot(y))."] = W - lr * g.T
    return found


@contextlib.contextmanager
def _no_autograd() -> Iterator[None]:
    """While active, torch's backward() and autograd.grad raise ExerciseError: the gradient is to be derived."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency of the course
        yield
        return

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise ExerciseError("your sgd_step lets PyTorch compute the gradient (backward(), autograd or torch.func): this exercise asks you to derive the "
                            "gradient yourself, as p - onehot(y) times h, and take the step with NumPy.")

    import torch.func

    saved = (torch.autograd.backward, torch.autograd.grad, torch.func.grad, torch.func.vjp)
    torch.autograd.backward = torch.autograd.grad = torch.func.grad = torch.func.vjp = refuse
    try:
        yield
    finally:
        torch.autograd.backward, torch.autograd.grad, torch.func.grad, torch.func.vjp = saved


def check_sgd_step(sgd_step: Callable[..., Any]) -> None:
    """Exercise 2: sgd_step(W, h, y, lr) -> W - lr * outer(softmax(W h) - onehot(y), h)."""
    with _no_autograd(), np.errstate(over="ignore", invalid="ignore"):
        check_function(
            sgd_step, _sgd_reference, _sgd_cases(), "sgd_step",
            describe=lambda c: f"W of shape {c[0].shape}, h of shape {c[1].shape}, y = {c[2]}, lr = {c[3]}",
            mistakes=lambda c: _sgd_mistakes(*c), rtol=1e-6, atol=1e-9,
        )
    W, h, y, lr = _sgd_cases()[1]
    before = -math.log(reference_softmax(W @ h)[y])
    after = -math.log(reference_softmax(_sgd_reference(W, h, y, lr) @ h)[y])
    passed(f"one step of lr = {lr} takes this example's loss from {before:.3f} to {after:.3f}.")



# The lookup task: 8 letters, 8 digits, a query flag (D_IN = 17); the query token is letter s + flag.
_N_SYM = 8
_D_IN = 2 * _N_SYM + 1
_LETTERS = "ABCDEFGH"


def _hand_sequences() -> tuple[np.ndarray, np.ndarray]:
    """For each query letter s: items with keys s-1 (the target), s, s+1 and s+3, fixed digits; the query
    token last. Returns X (8, 5, 17) and the position of the target item in each sequence (8,)."""
    rng = np.random.default_rng(7)
    X = np.zeros((_N_SYM, 5, _D_IN))
    target = np.zeros(_N_SYM, dtype=int)
    for s in range(_N_SYM):
        keys = [(s - 1) % _N_SYM, s, (s + 1) % _N_SYM, (s + 3) % _N_SYM]
        order = rng.permutation(4)
        digits = rng.permutation(_N_SYM)[:4]
        for pos, i in enumerate(order):
            X[s, pos, keys[i]] = 1.0
            X[s, pos, _N_SYM + digits[i]] = 1.0
        target[s] = int(np.flatnonzero(order == 0)[0])
        X[s, 4, s] = X[s, 4, -1] = 1.0
    return X, target


def _before_sequences() -> tuple[np.ndarray, np.ndarray]:
    """One hand-made sequence per query letter (items s-1, s, s+1, s+3), then 500 of the task's own,
    ``tasks.make_lookup_data(500, seed=3, offsets=(-1,))`` (their other items include s-2, s+1, ...).
    Returns X (508, 5, 17) and the position of the item under the letter before s in each (508,)."""
    from ..tasks import make_lookup_data

    Xh, th = _hand_sequences()
    Xt = make_lookup_data(500, seed=3, offsets=(-1,))[0].numpy().astype(float)
    s = Xt[:, -1, :_N_SYM].argmax(-1)
    tt = (Xt[:, :4, :_N_SYM].argmax(-1) == ((s - 1) % _N_SYM)[:, None]).argmax(-1)
    return np.concatenate([Xh, Xt]), np.concatenate([th, tt])


def check_letter_before(W_q_before: Any, W_k_before: Any) -> None:
    """Exercise 3: W_q_before, W_k_before of shape (17, d_k) with which the query ?s gives at least 0.9 of
    its attention (softmax of raw scores over the 5 tokens) to the item whose letter comes before s."""
    Wq, Wk = _to_array(W_q_before, "W_q_before"), _to_array(W_k_before, "W_k_before")
    for name, W in (("W_q_before", Wq), ("W_k_before", Wk)):
        if W.ndim != 2 or _D_IN not in W.shape:
            raise ExerciseError(f"{name} has shape {W.shape}; it should be (D_IN, d_k) = (17, d_k).")
        if W.shape[0] != _D_IN:
            raise ExerciseError(
                f"{name} has shape {W.shape}: that is PyTorch's nn.Linear layout (out, in). Here a "
                f"projection is (d_in, d_k) = (17, d_k), used as x @ {name}."
            )
        if not np.all(np.isfinite(W)):
            raise ExerciseError(f"{name} contains NaN or infinite values.")
    if Wq.shape[1] != Wk.shape[1]:
        raise ExerciseError(
            f"W_q_before gives queries of size {Wq.shape[1]} and W_k_before keys of size {Wk.shape[1]}: "
            f"a dot product needs the same d_k for both."
        )
    X, target = _before_sequences()
    failed = []
    for n in range(len(X)):
        q, K = X[n, 4] @ Wq, X[n] @ Wk
        with np.errstate(over="ignore", invalid="ignore"):
            sc = q @ K.T
            w = reference_softmax(sc)
        if not w[target[n]] >= 0.9:
            failed.append((n, sc, w))
    if not failed:
        passed(f"in all {len(X)} sequences (8 made by hand, 500 of the task's own), the query ?s gives at least "
               f"0.9 of its attention to the item under the letter before s (?A to H).")
        return
    n, sc, w = failed[0]
    s = int(X[n, 4, :_N_SYM].argmax())
    letters = [_LETTERS[int(X[n, p, :_N_SYM].argmax())] for p in range(4)]
    t = int(target[n])
    count = f"{len(failed)} of {len(X)} sequences fail"
    seq = " ".join(f"{letters[p]}:{int(X[n, p, _N_SYM:2 * _N_SYM].argmax())}" for p in range(4)) + f" ?{_LETTERS[s]}"
    failing_letters = {int(X[m, 4, :_N_SYM].argmax()) for m, _, _ in failed}
    if failing_letters == {0}:
        raise ExerciseError(f"{count}, all with the query ?A. Only ?A fails: before A comes H (the alphabet "
                            f"wraps around, like the task's H -> A); np.eye(8, k=...) does not wrap, np.roll "
                            f"does.")
    q = X[n, 4] @ Wq
    if np.allclose(q, 0.0):
        raise ExerciseError(
            f"{count}. In {seq}, the query of ?{_LETTERS[s]} is all zeros, so it spreads its attention evenly "
            f"(0.20 on each token), and a bigger scale cannot change that. The query token has only its letter "
            f"(entries 0-7) and its flag (16): only those rows of W_q_before reach its query.")
    if np.ptp(sc) < 1e-9:
        raise ExerciseError(
            f"{count}. In {seq}, the query ?{_LETTERS[s]} scores every token the same, so it spreads its "
            f"attention evenly (0.20 on each): its query and the keys do not meet.")
    top = int(w.argmax())
    who = "the query token itself" if top == 4 else f"the item {letters[top]}"
    where = (f"{count}. In {seq}, the query ?{_LETTERS[s]} gives the item {_LETTERS[(s - 1) % _N_SYM]} (the "
             f"letter before) {w[t]:.2f} of its attention and most to {who} ({w[top]:.2f})")
    wanted = {(s + 1) % _N_SYM: "the letter after: your shift goes the wrong way (roll the other way).",
              s: "its own letter, the distractor: the query and key letters match one to one; shift one of them."}
    if top < 4 and letters[top] in {_LETTERS[k] for k in wanted}:
        reason = wanted[_LETTERS.index(letters[top])]
        raise ExerciseError(f"{where}: it attends to {reason}")
    if top == 4:
        raise ExerciseError(f"{where}. The query token matches its own key: the flag row or the letter rows "
                            f"make q . k largest for the query itself.")
    others = np.delete(sc, t)
    if sc[t] > others.max() + 1e-9 and all(np.delete(sc_, int(target[m])).max() < sc_[int(target[m])] - 1e-9
                                           for m, sc_, _ in failed):
        raise ExerciseError(f"{where}: the right item scores highest in every failing sequence, but not by "
                            f"enough for 0.9. Make the scores larger (multiply W_q_before by a bigger number).")
    raise ExerciseError(
        f"{where}. Its scores are {np.round(sc, 2).tolist()}: some other letter's key scores at least as high as "
        f"the letter before, and a bigger scale cannot fix that. Every letter's key must lie below the target's "
        f"on the query's direction, the two letters after s and before s - 1 included.")
