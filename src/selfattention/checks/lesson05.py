"""Checks for lesson 05 (training attention): predict two cross-entropy losses, take one gradient step by hand,
predict how small d_k can be, then train to see.

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

from ._engine import ExerciseError, _fmt, check_function, passed, reference_softmax

__all__ = ["check_loss_predictions", "check_sgd_step", "check_smallest_d_k"]

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
    """Within half a percent of ``b`` (so 2.08 is ln 8 and 2.67 is ln(e^2 + 7), while ln(e^2 + 8) = 2.73 is
    not); tiny values keep their own scale."""
    return abs(a - b) <= 0.005 * max(abs(b), 1e-3)


def check_loss_predictions(loss_equal_logits: Any, loss_leaning_wrong: Any) -> None:
    """Exercise 1: the cross-entropy of 8 equal logits (ln 8), and of logit 2 on one wrong digit and 0 on
    the other seven, the right digit's among them (ln(e^2 + 7))."""
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
    lean = _number(loss_leaning_wrong, "loss_leaning_wrong")
    right_lean = math.log(math.exp(2) + 7)
    p_y = 1 / (math.exp(2) + 7)
    hints_lean = {
        "that is the loss if the logit 2 were on the right digit; here it is on a wrong one, and the right "
        "digit has logit 0.": math.log(1 + 7 * math.exp(-2)),
        "that is p_y, the probability of the right digit; the loss is -log p_y.": p_y,
        "that is 1/p_y; the loss is -log p_y.": 1 / p_y,
        "the sign is wrong: the loss -log p_y is positive.": -right_lean,
        "that is the loss of equal logits; these logits are not equal (2 on one wrong digit).": right_equal,
        "that is the loss in log base 2; the cross-entropy uses the natural logarithm (np.log).":
            right_lean / math.log(2),
        "that counts 8 logits of 0 besides the 2: there are 8 logits in all, one of 2 and seven of 0, the right "
        "digit's among the seven.": math.log(math.exp(2) + 8),
        "that is 2 + ln 7: the log of a sum is not the sum of the logs; the loss is ln(e^2 + 7 e^0).":
            2 + math.log(7),
        "that is only the logit gap of 2; the seven logits of 0 also share the probability.": 2.0,
        "that gives logit 2 to all seven wrong digits; here only one wrong digit has logit 2, and the other "
        "seven logits, the right digit's among them, are 0.": math.log(1 + 7 * math.exp(2)),
        "that is ln(2 + 7): the softmax exponentiates each logit before it adds them, so logit 0 counts e^0 = 1 "
        "and logit 2 counts e^2.": math.log(9),
        "that leaves the right digit's own term out of the sum: the softmax divides by the exponentials of all "
        "8 logits, the right digit's included.": math.log(math.exp(2) + 6),
    }
    if not _near(lean, right_lean):
        close = [(abs(lean - wrong), why) for why, wrong in hints_lean.items() if _near(lean, wrong)]
        if close:  # the nearest, where two named values lie close together (2 + ln 7 and ln(1 + 7 e^2))
            raise ExerciseError(f"loss_leaning_wrong = {_fmt(lean)} is not right yet: {min(close)[1]}")
        raise ExerciseError(f"loss_leaning_wrong = {_fmt(lean)} is not right yet. Write the softmax probability "
                            f"p_y of the right digit from the 8 logits (2 on one wrong digit, 0 on the other "
                            f"seven), then take -log of it.")
    passed(f"equal logits cost ln 8 = {right_equal:.3f}; logit 2 on one wrong digit costs ln(e^2 + 7) = "
           f"{right_lean:.3f}, more than ln 8: the right digit's probability fell from 1/8 to {p_y:.3f}.")


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
    C, d = W.shape
    sizes = [(C, "logits and of features")] if C == d else [(C, "logits"), (d, "features")]
    for size, what in sizes:
        found.setdefault(f"the gradient was divided by {size}, the number of {what}; there is one example, so "
                         f"nothing is averaged.", W - lr * g / size)
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

    def refusal(name: str) -> Callable[..., None]:
        def refuse(*args: Any, **kwargs: Any) -> None:  # one function per name: torch keeps them apart
            raise ExerciseError(f"your sgd_step lets PyTorch compute the gradient ({name}): this exercise asks "
                                f"you to derive the gradient yourself, as p - onehot(y) times h, and take the "
                                f"step with NumPy.")
        refuse.__name__ = refuse.__qualname__ = f"refused_{name.replace('.', '_')}"
        return refuse

    import torch.func

    blocked = [(torch.autograd, "backward"), (torch.autograd, "grad"), (torch.Tensor, "backward")]
    blocked += [(torch.func, name) for name in ("grad", "grad_and_value", "vjp", "jacrev", "jacfwd", "hessian",
                                                 "jvp")]
    saved = [(owner, name, getattr(owner, name)) for owner, name in blocked]
    for owner, name in blocked:
        setattr(owner, name, refusal(f"{getattr(owner, '__name__', 'torch')}.{name}"))
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


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


# ----------------------------------------------------------------- Exercise 3: how small can d_k be?

def check_smallest_d_k(predicted_smallest_d_k: Any) -> None:
    """Exercise 3: the smallest d_k among 1, 2 and 4 with which some W_Q, W_K, W_V and readout solve the lookup
    (2: lesson 04's Exercises 2 and 3). The lesson's next cell trains d_k = 1 and 2 from eight starts."""
    if predicted_smallest_d_k is None or predicted_smallest_d_k is Ellipsis:
        raise ExerciseError("predicted_smallest_d_k has no value yet: write 1, 2 or 4, the smallest d_k you expect "
                            "to solve the task.")
    if isinstance(predicted_smallest_d_k, (bool, str)) or predicted_smallest_d_k not in (1, 2, 4):
        raise ExerciseError(f"predicted_smallest_d_k is {predicted_smallest_d_k!r}: write the number 1, 2 or 4.")
    if predicted_smallest_d_k == 1:
        raise ExerciseError("d_k = 1 cannot do it: with one number per query and key, a question token scores "
                            "highest the largest key present (or the smallest, if its query is negative), so at most "
                            "two letters are found in every sequence where they are the target (lesson 04's "
                            "Exercise 3); the task needs all eight.")
    if predicted_smallest_d_k == 4:
        raise ExerciseError("fewer suffice: as in lesson 04's Exercise 2, two numbers let the eight letters' keys "
                            "sit round a circle, with each asked letter's query aimed at the next letter's key.")
    passed("d_k = 2 can solve it. The next cell trains d_k = 1 and d_k = 2 to see whether training finds such "
           "matrices.")
