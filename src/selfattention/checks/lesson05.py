"""Checks for lesson 05 (training attention): predict two cross-entropy losses, take one gradient step by hand,
build attention with d_k = 2 by hand.

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

__all__ = ["check_hand_built", "check_loss_predictions", "check_sgd_step"]

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
    row's maximum is subtracted. No lr is 1, 0.5 or 2: with those, a missing lr, a step twice too large and a
    halved step would give the right answer or each other's."""
    rng = np.random.default_rng(5)
    return [
        (rng.normal(size=(4, 4)), rng.normal(size=4), 2, 0.3),
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
        "the step is twice too large: W moves by lr times the gradient, np.outer(p - onehot(y), h), with no "
        "factor 2 (cross-entropy has no square to differentiate).": W - 2 * lr * g,
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


# ----------------------------------------------------------------- Exercise 3: d_k = 2 by hand

_D_IN, _FLAG = 2 * _N_SYM + 1, 2 * _N_SYM   # 17 features: letters 0-7, digits 8-15, the question flag 16
_MIN_WEIGHT = 0.9                            # mean weight the question token must give the target


def _held_out() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lesson's 500 held-out sequences (seed 2) as NumPy: X (500, 5, 17), y (500,), the target's place."""
    from selfattention import tasks

    X, y = tasks.make_lookup_data(500, seed=2)
    target = tasks.item_roles(X)["target"].float().argmax(-1)
    return X.numpy().astype(float), y.numpy(), target.numpy()


def _question_weights(W_q: np.ndarray, W_k: np.ndarray, X: np.ndarray) -> np.ndarray:
    """The question token's weights over the five tokens, softmax(q_? K^T / sqrt(2)), (n, 5)."""
    q = X[:, -1] @ W_q                                         # (n, 2)
    scores = np.einsum("nd,ntd->nt", q, X @ W_k) / math.sqrt(W_q.shape[1])
    return reference_softmax(scores)


def check_hand_built(W_Q2: Any, W_K2: Any) -> None:
    """Exercise 3: W_Q2, W_K2 (17, 2) with which the question token gives the target the top weight in all 500
    held-out sequences, and on average at least 0.9 of its attention (scores divided by sqrt(2), as in
    sa.SelfAttention); the values are the items' digits, the answer the digit with the most weight."""
    mats = []
    for name, got in (("W_Q2", W_Q2), ("W_K2", W_K2)):
        if got is None or got is Ellipsis:
            raise ExerciseError(f"{name} has no value yet: write your (17, 2) matrix in the answer cell above.")
        W = np.asarray(got.detach() if hasattr(got, "detach") else got, dtype=float)
        if W.shape == (2, _D_IN):
            raise ExerciseError(f"{name} has shape (2, 17): its rows and columns are swapped. One row per "
                                f"feature, (d_in, d_k) = (17, 2), used as X @ {name}.")
        if W.shape != (_D_IN, 2):
            raise ExerciseError(f"{name} has shape {W.shape}; it should be (d_in, d_k) = (17, 2).")
        if not np.all(np.isfinite(W)):
            raise ExerciseError(f"{name} contains NaN or infinite values.")
        mats.append(W)
    W_q, W_k = mats
    X, y, target = _held_out()
    A = _question_weights(W_q, W_k, X)                         # (500, 5)
    digits = X[:, :-1, _N_SYM:_FLAG].argmax(-1)                # (500, 4)
    logits = np.zeros((len(X), _N_SYM))
    np.add.at(logits, (np.arange(len(X))[:, None], digits), A[:, :-1])
    acc = float((logits.argmax(-1) == y).mean())
    on_target = float(A[np.arange(len(X)), target].mean())
    if acc == 1.0 and on_target >= _MIN_WEIGHT:
        passed(f"held-out accuracy {acc:.3f} on 500 sequences; the question token gives the target {on_target:.3f} "
               f"of its attention on average. Eight directions in a plane are enough.")
        return
    head = f"held-out accuracy {acc:.3f}, mean weight on the target {on_target:.3f}"
    on_self = float(A[:, -1].mean())
    if on_self > 0.05 and on_self > 1 - on_target - on_self:   # more weight on itself than on the other items
        queries = W_q[:_N_SYM] + W_q[_FLAG]                    # the question token ?s: letter s plus the flag
        flag_up = np.clip(queries @ W_k[_FLAG], 0, None).sum()                       # raises ?s's own score
        digit_down = np.clip(-(queries @ W_k[_N_SYM:_FLAG].T).mean(1), 0, None).sum()  # lowers the items'
        if flag_up >= digit_down:
            raise ExerciseError(f"{head}: the question token gives itself {on_self:.2f} of its attention, more "
                                f"than the three other items together. Its key is its letter's row plus the "
                                f"flag's row of W_K2: the flag's key row shifts its own score against the "
                                f"items'. Keep the flag's key row small.")
        raise ExerciseError(f"{head}: the question token gives itself {on_self:.2f} of its attention, more than "
                            f"the three other items together. An item's key is its letter's row plus its "
                            f"digit's row of W_K2, but the question token has no digit: the digit rows shift "
                            f"the items' scores against its own. Keep the digit rows zero.")
    if acc == 1.0:
        raise ExerciseError(f"{head}: every query points the right way, but the scores are too close together "
                            f"to give the target at least {_MIN_WEIGHT}. Lengthen the queries or the keys: a "
                            f"score grows with both lengths.")
    keys = W_k[:_N_SYM]                                        # the letters' keys, (8, 2)
    if np.linalg.matrix_rank(keys - keys.mean(0), tol=1e-6) < 2:
        raise ExerciseError(f"{head}: the eight letters' keys lie on one line, so each query's top key is one of "
                            f"the two ends. Spread the keys in both directions, round a circle.")
    queries = W_q[:_N_SYM] + W_q[_FLAG]                        # the question token ?s: letter s plus the flag
    scores = queries @ keys.T                                  # (8, 8): query ?s against letter t's key
    letter = lambda k: chr(ord("A") + int(k))  # noqa: E731
    for k in range(_N_SYM):                    # a tie at the top: argmax would pick the first letter, by chance
        top = scores[k].max()
        tied = np.flatnonzero(scores[k] >= top - 1e-9 * max(1.0, abs(top)))
        if len(tied) < 2:
            continue
        nxt = (k + 1) % _N_SYM
        wrap = " (wrap around)" if nxt == 0 else ""
        if len(tied) == _N_SYM:
            raise ExerciseError(f"{head}: ?{letter(k)}'s query gives every letter the same score: aim it at "
                                f"{letter(nxt)}, the letter after {letter(k)}{wrap}. Query ?s is letter s's row of "
                                f"W_Q2 plus the flag's row.")
        same = [(a, b) for i, a in enumerate(tied) for b in tied[i + 1:] if np.allclose(keys[a], keys[b])]
        if same:
            same = [(a, b) for a in range(_N_SYM) for b in range(a + 1, _N_SYM) if np.allclose(keys[a], keys[b])]
            pairs = ", ".join(f"{letter(a)} and {letter(b)}" for a, b in same)
            raise ExerciseError(f"{head}: the keys of {pairs} coincide, so a query that scores one of a pair "
                                f"highest scores the other just as high (?{letter(k)}'s does) and cannot pick one. Give "
                                f"each of the eight letters a key of its own, round a circle.")
        names = " and ".join(letter(t) for t in tied)
        raise ExerciseError(f"{head}: ?{letter(k)}'s query scores {names} the same ({top:.3g}), so it cannot pick "
                            f"one. Aim it at {letter(nxt)}'s key, the letter after {letter(k)}{wrap}.")
    best = scores.argmax(1)                                    # the letter each query scores highest
    s = np.arange(_N_SYM)
    own, prev = int((best == s).sum()), int((best == (s - 1) % _N_SYM).sum())
    if own >= _N_SYM // 2:
        raise ExerciseError(f"{head}: {own} of the 8 queries score the asked letter's own key highest, so "
                            f"the distractor wins. Aim query ?s at the key of the letter after s.")
    if prev >= _N_SYM // 2:
        raise ExerciseError(f"{head}: {prev} of the 8 queries score the letter before the asked one highest; "
                            f"the answer is under the letter after it (after H comes A).")
    wrong = [chr(ord("A") + k) for k in s if best[k] != (k + 1) % _N_SYM]
    if wrong:
        raise ExerciseError(f"{head}: the queries of ?{', ?'.join(wrong)} do not score the next letter's key "
                            f"highest. Query ?s is letter s's row of W_Q2 plus the flag's row.")
    raise ExerciseError(f"{head}: each query finds the next letter, but an item's key is its letter's row plus "
                        f"its digit's row of W_K2: the digit rows move the keys. Keep them zero.")
