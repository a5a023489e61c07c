"""Checks for lesson 05 (training attention): predict two cross-entropy losses, take one gradient step by hand,
design attention with d_k = 2 and the shortest keys by hand.

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
    if isinstance(got, (str, bytes)):
        raise ExerciseError(f"{name} is the text {got!r}, not a number: write the number or an expression "
                            f"such as np.log(2), without quotes.")
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
        "that is 1 - p_y; the loss is -log p_y, the logarithm of the right digit's probability.": 1 - 1 / 8,
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
        "that is 1 - p_y; the loss is -log p_y, the logarithm of the right digit's probability.": 1 - p_y,
        "that is the loss in log base 10; the cross-entropy uses the natural logarithm (np.log).":
            math.log10(math.exp(2) + 7),
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
    row's maximum is subtracted; last, logits near 1e12 (:func:`_sgd_offset_case`), out of reach of a
    finite-difference gradient. No lr is 1, 0.5 or 2: with those, a missing lr, a step twice too large and a
    halved step would give the right answer or each other's."""
    rng = np.random.default_rng(5)
    return [
        (rng.normal(size=(4, 4)), rng.normal(size=4), 2, 0.3),
        (rng.normal(size=(8, 3)), rng.normal(size=3), 5, 0.1),
        (rng.normal(size=(5, 3)) * 600, rng.normal(size=3), 1, 0.01),
        _sgd_offset_case(),
    ]


def _sgd_offset_case() -> tuple[np.ndarray, np.ndarray, int, float]:
    """(W (4, 3), h (3,), y, lr) whose logits are 1e12 plus small gaps: p - onehot(y) from a stable softmax is
    exact, but a loss evaluated at W + eps moves only in steps of about 1e-4 (the spacing of floats near 1e12),
    so every finite-difference gradient, forward or central, eps from 1e-8 to 1, is off by 5e-4 or more of
    the gradient. Every entry is a multiple of 1/64, so W @ h is exact whatever the order of the sum."""
    W = np.array([[1e12, 0.0, 0.25], [1e12, 0.5, -0.5], [1e12, 1.0, 0.5], [1e12, 0.25, 0.0]])
    return W, np.array([1.0, 0.75, -0.5]), 2, 0.3


def _gradient_error(case: tuple[np.ndarray, np.ndarray, int, float], got: Any) -> float:
    """The largest error of the gradient that ``got`` implies, (W - got) / lr, over the largest right entry,
    in the columns of W below 1e6 (the offset case's first column is 1e12); inf where ``got`` cannot be read."""
    W, h, y, lr = case
    try:
        got = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return math.inf
    if got.shape != W.shape or not np.all(np.isfinite(got)):
        return math.inf
    cols = np.abs(W).max(0) < 1e6
    G, right = ((W - v)[:, cols] / lr for v in (got, _sgd_reference(*case)))
    return float(np.abs(G - right).max() / np.abs(right).max())


def _lost_the_gaps(case: tuple[np.ndarray, np.ndarray, int, float], got: Any) -> bool:
    """True if ``got`` on the offset case is the step with p uniform, as when float32 rounds the logits'
    gaps away: its gradient within 1e-3 of (1/C - onehot(y)) h^T in the columns below 1e6."""
    W, h, y, lr = case
    uniform = W - lr * np.outer(np.full(len(W), 1 / len(W)) - np.eye(len(W))[y], h)
    try:
        return bool(_gradient_error((W, h, y, lr), got) > 1e-3
                    and np.allclose(np.asarray(got, dtype=float)[:, 1:], uniform[:, 1:], rtol=1e-3, atol=1e-6))
    except (TypeError, ValueError):
        return False


def _looks_numerical(cases: list[tuple[np.ndarray, np.ndarray, int, float]], got: list[Any]) -> bool:
    """True if the answers ``got`` to the first and the offset (last) case look like W - lr * a
    finite-difference gradient: W moved on the first case, the offset result is wrong but no named mistake
    (nor a softmax that lost the gaps, p uniform), and its gradient is zero (eps lost in rounding), within
    half the right one, or the first case's is within a fifth of the right one."""
    (W1, *_), (W, h, y, lr) = cases[0], cases[-1]
    if np.array_equal(np.asarray(got[0], dtype=float), W1):
        return False
    uniform = W - lr * np.outer(np.full(len(W), 1 / len(W)) - np.eye(len(W))[y], h)
    steps = [_sgd_reference(W, h, y, lr), uniform, *_sgd_mistakes(W, h, y, lr).values()]
    last = _gradient_error(cases[-1], got[-1])
    if not math.isfinite(last) or any(np.allclose(got[-1], s, rtol=1e-6, atol=1e-9) for s in steps):
        return False
    zero = np.array_equal(np.asarray(got[-1], dtype=float)[:, 1:], W[:, 1:])
    return zero or last < 0.5 or _gradient_error(cases[0], got[0]) < 0.2


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
    cases = _sgd_cases()
    with _no_autograd(), np.errstate(over="ignore", invalid="ignore"):
        try:   # first the offset case: a finite-difference answer is named there, however it does elsewhere
            got = [sgd_step(W.copy(), h.copy(), y, lr) for W, h, y, lr in (cases[0], cases[-1])]
            numerical, uniform = _looks_numerical(cases, got), _lost_the_gaps(cases[-1], got[-1])
        except Exception:  # noqa: BLE001 - check_function below words the crash
            numerical = uniform = False
        if uniform:
            raise ExerciseError("on logits near 1e12 (W of shape (4, 3), first column 1e12) your p came out "
                                "uniform: the gaps between the logits were lost in rounding, as in float32 (7 "
                                "digits). Keep W and h in float64, NumPy's default, and take p from sa.softmax.")
        if numerical:
            raise ExerciseError("sgd_step looks like a numerical (finite-difference) gradient: it nudges W and "
                                "measures how the loss changes. On logits near 1e12 (W of shape (4, 3), first "
                                "column 1e12) a nudge small enough to be accurate is lost in rounding, and one "
                                "large enough to register is inaccurate. Derive it: start from p - onehot(y), "
                                "then the chain rule through logit c = sum_k W[c, k] h[k].")
        check_function(
            sgd_step, _sgd_reference, cases, "sgd_step",
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


def _sequences() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lesson's 2000 training sequences (seed 1) as NumPy: X (2000, 5, 17), y (2000,), the target's place.
    Exercise 3's design is judged on them: the held-out 500 stay for judging what was trained."""
    from selfattention import tasks

    X, y = tasks.make_lookup_data(2000, seed=1)
    target = tasks.item_roles(X)["target"].float().argmax(-1)
    return X.numpy().astype(float), y.numpy(), target.numpy()


def _question_weights(W_q: np.ndarray, W_k: np.ndarray, X: np.ndarray) -> np.ndarray:
    """The question token's weights over the five tokens, softmax(q_? K^T / sqrt(2)), (n, 5)."""
    q = X[:, -1] @ W_q                                         # (n, 2)
    scores = np.einsum("nd,ntd->nt", q, X @ W_k) / math.sqrt(W_q.shape[1])
    return reference_softmax(scores)


_MAX_LENGTH = 3.2                            # the longest key or query allowed


def _lengths(W_q: np.ndarray, W_k: np.ndarray, X: np.ndarray) -> tuple[float, float]:
    """The longest key (any token's x_j W_K2) and the longest question query (x_? W_Q2) in X (n, 5, 17)."""
    keys = np.linalg.norm(X @ W_k, axis=-1)                    # (n, 5)
    queries = np.linalg.norm(X[:, -1] @ W_q, axis=-1)          # (n,)
    return float(keys.max()), float(queries.max())


def _alphabetical(keys: np.ndarray) -> bool:
    """The eight letter keys (8, 2) go round the origin in the alphabet's order (either way round)."""
    if np.any(np.linalg.norm(keys, axis=1) < 1e-9):
        return False
    order = np.argsort(np.arctan2(keys[:, 1], keys[:, 0]))     # letters by angle
    steps = {int((b - a) % _N_SYM) for a, b in zip(order, np.roll(order, -1), strict=True)}
    return steps in ({1}, {_N_SYM - 1})


def _alphabetical_radius() -> float:
    """The shortest length (to 0.01, rounded up) at which the alphabetical ring, letter k's key at angle
    2 pi k / 8 and query ?k the key of k + 1, each that long, gives the target 0.9 on the training sequences."""
    X, _, target = _sequences()
    angle = 2 * np.pi * np.arange(_N_SYM) / _N_SYM
    ring = np.zeros((_D_IN, 2))
    ring[:_N_SYM] = np.stack([np.cos(angle), np.sin(angle)], axis=1)   # (8, 2) unit keys
    lo, hi = 0.0, 20.0
    while hi - lo > 1e-4:
        r = (lo + hi) / 2
        W_k = r * ring
        W_q = np.zeros_like(W_k)
        W_q[:_N_SYM] = np.roll(W_k[:_N_SYM], -1, axis=0)
        lo, hi = (lo, r) if _on_target(W_q, W_k, X, target)[1] >= _MIN_WEIGHT else (r, hi)
    return math.ceil(hi * 100) / 100


def _on_target(W_q: np.ndarray, W_k: np.ndarray, X: np.ndarray, target: np.ndarray,
               scale: float = 1.0) -> tuple[int, float, np.ndarray]:
    """Sequences (of n) whose target tops the four items, the mean weight on the target, the weights (n, 5);
    ``scale`` multiplies the scores (sqrt(2): scores not divided by sqrt(2))."""
    A = _question_weights(W_q * scale, W_k, X)
    return int((A[:, :-1].argmax(-1) == target).sum()), float(A[np.arange(len(X)), target].mean()), A


def _extra_key_rows(W_k: np.ndarray) -> str:
    """Names the rows of W_K2 (17, 2) beyond the eight letters' that are not zero ("" if none), with "is"/"are"."""
    rows = [r for r in range(_N_SYM, _D_IN) if np.linalg.norm(W_k[r]) > 1e-9]
    names = [f"{r} (the flag)" if r == _FLAG else f"{r} (digit {r - _N_SYM})" for r in rows]
    if not names:
        return ""
    return f"row {names[0]} is" if len(names) == 1 else f"rows {', '.join(names)} are"


def check_hand_built(W_Q2: Any, W_K2: Any) -> None:
    """Exercise 3: W_Q2, W_K2 (17, 2) with every key and question query at most 3.2 long, with which the
    question token gives the target the top weight among the four items in all 2000 training sequences, and on
    average at least 0.9 of its attention (scores divided by sqrt(2), as in sa.SelfAttention)."""
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
    X, _, target = _sequences()
    n = len(X)
    top, on_target, A = _on_target(W_q, W_k, X, target)
    key_len, query_len = _lengths(W_q, W_k, X)
    longest = max(key_len, query_len)
    short = longest <= _MAX_LENGTH + 1e-9
    if top == n and on_target >= _MIN_WEIGHT and short:
        passed(f"the target tops the items in all {n} sequences and gets {on_target:.3f} of the question token's "
               f"attention on average, with keys at most {key_len:.2f} and queries at most {query_len:.2f} long. "
               f"The alphabetical ring needs {_alphabetical_radius():.2f}: its distractor key sits 45 degrees from the "
               f"target's.")
        return
    head = (f"the target tops the items in {top} of {n} sequences, mean weight on the target {on_target:.4f}, "
            f"longest key {key_len:.2f}, longest query {query_len:.2f}")
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
    keys = W_k[:_N_SYM]                                        # the letters' keys, (8, 2)
    if top == n:
        if _alphabetical(keys):
            raise ExerciseError(f"{head}: your letter keys go round in the alphabet's order, so the distractor's "
                                f"key (the letter before the target) sits next to the target's, 45 degrees away, "
                                f"and a query aimed at the target scores it nearly as high. This ring reaches "
                                f"{_MIN_WEIGHT} only with keys and queries {_alphabetical_radius():.2f} long, above {_MAX_LENGTH}. "
                                f"Reorder the ring so that each letter's key lies far from the next letter's.")
        extra = _extra_key_rows(W_k)
        if not short and extra and query_len <= _MAX_LENGTH + 1e-9:
            raise ExerciseError(f"{head}: the longest key, {key_len:.2f}, is over the limit of {_MAX_LENGTH}. "
                                f"W_K2's {extra} not zero, and a token's key adds those rows to its letter's "
                                f"row: they lengthen it. Set them to zero or shorten the letters' keys.")
        if not short:
            raise ExerciseError(f"{head}: keys and queries may be at most {_MAX_LENGTH} long. Long vectors "
                                f"buy weight for any layout; place the keys so that the distractor's lies far "
                                f"from the target's, then shorten them.")
        if extra:
            raise ExerciseError(f"{head}: W_K2's {extra} not zero: only the letter rows should carry keys.")
        if min(key_len, query_len) < _MAX_LENGTH - 0.05:
            raise ExerciseError(f"{head}: every query points the right way, but the scores are too close "
                                f"together. Lengthen keys and queries towards {_MAX_LENGTH} (now {key_len:.2f} "
                                f"and {query_len:.2f}): the scores are divided by sqrt(2) = sqrt(d_k), so the "
                                f"lengths set how far apart the scores lie.")
        raise ExerciseError(f"{head}: every query points the right way and keys and queries are as long as "
                            f"allowed, but the scores are too close together to give the target at least "
                            f"{_MIN_WEIGHT}. Move each letter's key farther from the next letter's (the "
                            f"distractor's from the target's).")
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
    ahead = int((best == (s + 2) % _N_SYM).sum())
    if ahead >= _N_SYM // 2:
        raise ExerciseError(f"{head}: {ahead} of the 8 queries score the key two letters after the asked one "
                            f"highest: they aim at s+2. Aim query ?s at the key of s+1, the very next letter.")
    if prev >= _N_SYM // 2:
        raise ExerciseError(f"{head}: {prev} of the 8 queries score the letter before the asked one highest; "
                            f"the answer is under the letter after it (after H comes A).")
    wrong = [chr(ord("A") + k) for k in s if best[k] != (k + 1) % _N_SYM]
    if wrong:
        raise ExerciseError(f"{head}: the queries of ?{', ?'.join(wrong)} do not score the next letter's key "
                            f"highest. Query ?s is letter s's row of W_Q2 plus the flag's row.")
    extra = _extra_key_rows(W_k)
    raise ExerciseError(f"{head}: each query finds the next letter, but an item's key is its letter's row plus "
                        f"its digit's row of W_K2, and {extra or 'the digit rows are'} not zero: the digit rows "
                        f"move the keys. Keep them zero.")
