"""Checks for lesson 05 (training attention): predict two cross-entropy losses, take one gradient step by hand,
write the training loop that tasks.train runs.

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

__all__ = ["check_loss_predictions", "check_sgd_step", "check_train_loop"]

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


# ----------------------------------------------------------------- Exercise 3: the training loop

_LOOP = {"steps": 7, "batch": 80, "lr": 0.03}  # not the defaults: a loop that ignores an argument shows it


def _loop_setup() -> tuple[Any, tuple[Any, ...]]:
    """A small learned model (d_k = 8) and a small lookup (320 training sequences, 100 held out). 80 divides
    320, as 100 divides the lesson's 2000, so every batch is full: steps 0-3 take sequences 0-79, ..., 240-319,
    and steps 4-6 start again from the first (start = step * batch modulo 320). A loop that slices past the end
    instead trains on empty batches there."""
    import torch

    from .. import layers, tasks

    torch.manual_seed(0)
    model = tasks.ReadoutModel(layers.SelfAttention(tasks.D_IN, 8), 8)
    return model, (*tasks.make_lookup_data(320, seed=11), *tasks.make_lookup_data(100, seed=12))


def _reference_loop(model: Any, data: tuple[Any, ...], steps: int, batch: int, lr: float, *,
                    zero_grad: str = "before", optimiser: str = "adam", batches: str = "in order",
                    extra_steps: int = 0, loss_of: str = "mean") -> None:
    """The primer's loop (tasks.train's, without checkpoints), or one of its typical slips."""
    import torch
    import torch.nn.functional as F

    X_train, y_train = data[0], data[1]

    def make_opt() -> Any:
        kind = torch.optim.SGD if optimiser == "sgd" else torch.optim.Adam
        return kind(model.parameters(), lr=lr)

    opt = make_opt()
    for step in range(steps + extra_steps):
        if optimiser == "new each step":
            opt = make_opt()
        start = 0 if batches == "first" else (step * batch) % len(X_train)
        start = step * batch if batches == "no modulo" else start
        stop = len(X_train) if batches == "all" else start + batch
        start = 0 if batches == "all" else start
        logits = model(X_train[start:stop])[0]
        if loss_of == "softmax":
            logits = torch.softmax(logits, dim=-1)
        loss = F.cross_entropy(logits, y_train[start:stop], reduction="sum" if loss_of == "sum" else "mean")
        if zero_grad == "before":
            opt.zero_grad()
        loss.backward()
        if zero_grad == "after backward":
            opt.zero_grad()
        opt.step()


_LOOP_MISTAKES: dict[str, dict[str, Any]] = {
    "the gradients are never cleared: backward() adds to .grad, so each step moved by the sum of all the "
    "gradients so far. Call opt.zero_grad() before loss.backward().": {"zero_grad": "never"},
    "the optimiser is made anew inside the loop, so Adam's running averages restart every step: make it "
    "once, before the loop.": {"optimiser": "new each step"},
    "that is plain gradient descent (torch.optim.SGD); the lesson's loop uses torch.optim.Adam.":
        {"optimiser": "sgd"},
    "every step trains on the same first batch: step number k takes the training sequences from k * batch "
    "on (modulo their number, so that it wraps around).": {"batches": "first"},
    "every step trains on all the training sequences: a step takes one batch of `batch` sequences, the "
    "next ones each time.": {"batches": "all"},
    "the loop takes one step too many: range(steps) runs exactly `steps` times.": {"extra_steps": 1},
    "the batch index runs past the end of the training set: once step * batch reaches their number, the slice "
    "is empty and those steps learn nothing. Start at (step * batch) % len(X_train), so the batches start "
    "again from the first.": {"batches": "no modulo"},
    "the softmax is applied twice: F.cross_entropy takes the logits and applies the softmax itself, so pass it "
    "model(X)[0], not torch.softmax of it.": {"loss_of": "softmax"},
    "the loss is the sum over the batch (reduction='sum'), so every gradient is `batch` times too large: "
    "F.cross_entropy's default, the mean over the batch, is the loss tasks.train uses.": {"loss_of": "sum"},
}


def _same_weights(a: Any, b: Any) -> bool:
    import torch

    return all(torch.allclose(u, v, atol=1e-5, rtol=1e-4) for u, v in zip(a.parameters(), b.parameters(),
                                                                          strict=True))


def borrows_tasks_train(fn: Any) -> str | None:
    """The name under which ``fn`` reaches tasks.train before it runs, or None: a global or closure name bound to
    it (``from selfattention.tasks import train as t``), a default argument, a functools.partial of it, or the
    same in a helper function defined beside ``fn``. ``tasks.train`` looked up while ``fn`` runs is refused
    by :func:`_no_tasks_train` instead."""
    import dis
    import functools
    import types

    from .. import tasks

    def is_train(obj: Any) -> bool:
        return obj is tasks.train or (isinstance(obj, functools.partial) and obj.func is tasks.train)

    seen: set[int] = set()

    def search(f: Any) -> str | None:
        if not isinstance(f, types.FunctionType) or id(f) in seen:
            return None
        seen.add(id(f))
        defaults = [*(f.__defaults__ or ()), *(f.__kwdefaults__ or {}).values()]
        if any(is_train(d) for d in defaults):
            return "a default argument"
        cells = dict(zip(f.__code__.co_freevars, f.__closure__ or (), strict=True))
        codes, helpers = [f.__code__], []
        while codes:
            code = codes.pop()
            codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
            for ins in dis.get_instructions(code):
                if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                    obj = f.__globals__.get(ins.argval)
                elif ins.opname == "LOAD_DEREF" and ins.argval in cells:
                    try:
                        obj = cells[ins.argval].cell_contents
                    except ValueError:  # a cell not filled yet
                        continue
                else:
                    continue
                if is_train(obj):
                    return f"`{ins.argval}`"
                if isinstance(obj, types.FunctionType) and obj.__globals__ is f.__globals__:
                    helpers.append(obj)  # a helper defined beside fn
        for helper in helpers:
            found = search(helper)
            if found:
                return found
        return None

    return search(fn)


@contextlib.contextmanager
def _no_tasks_train() -> Iterator[None]:
    """While active, tasks.train raises ExerciseError: the exercise is to write its loop."""
    from .. import tasks

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise ExerciseError("your train_loop calls tasks.train: this exercise asks you to write its loop "
                            "yourself (optimiser, batch, logits, loss, zero_grad, backward, step).")

    saved, tasks.train = tasks.train, refuse
    try:
        yield
    finally:
        tasks.train = saved


def check_train_loop(train_loop: Callable[..., Any]) -> None:
    """Exercise 3: train_loop(model, data, steps, batch, lr) trains like tasks.train (Adam on the mean
    cross-entropy; step k takes the `batch` training sequences from (k * batch) modulo their number) and
    returns the held-out accuracy. Run on a small model and task with steps, batch and lr other than the
    defaults, from one start, it must end with tasks.train's weights. The batch divides the training set, so
    every batch is full and a loop that wraps a batch around the end gives the same batches as one that cuts
    it there."""
    import copy

    import torch

    from ..tasks import accuracy

    if train_loop is None or train_loop is Ellipsis or not callable(train_loop):
        raise ExerciseError("train_loop is not a function yet: define train_loop(model, data, steps=160, "
                            "batch=100, lr=0.05).")
    alias = borrows_tasks_train(train_loop)
    if alias:
        raise ExerciseError(f"your train_loop calls tasks.train (through {alias}): this exercise asks you to write "
                            f"its loop yourself (optimiser, batch, logits, loss, zero_grad, backward, step).")
    start, data = _loop_setup()
    want = copy.deepcopy(start)
    _reference_loop(want, data, **_LOOP)
    got = copy.deepcopy(start)
    args = ", ".join(f"{k}={v}" for k, v in _LOOP.items())
    with _no_tasks_train():
        try:
            returned = train_loop(got, data, **_LOOP)
        except ExerciseError:
            raise
        except Exception as err:
            raise ExerciseError(f"train_loop(model, data, {args}) raised {type(err).__name__}: {err}") from None
    if _same_weights(got, start) and returned is None:
        raise ExerciseError("train_loop does nothing yet: write its loop (one Adam optimiser; each step the next "
                            "batch, logits, loss, zero_grad, backward, step) and return the held-out accuracy.")
    if _same_weights(got, start):
        if not _same_weights(want, start):
            raise ExerciseError(f"after train_loop(model, data, {args}) the weights have not moved. Each step "
                                f"needs opt.zero_grad() first, then loss.backward(), then opt.step() (zero_grad "
                                f"after backward() clears the gradients before the step uses them), with the "
                                f"optimiser made from model.parameters().")
    if not _same_weights(got, want):
        for why, slip in _LOOP_MISTAKES.items():
            other = copy.deepcopy(start)
            _reference_loop(other, data, **_LOOP, **slip)
            if _same_weights(got, other):
                raise ExerciseError(f"train_loop(model, data, {args}) does not end with tasks.train's weights: "
                                    f"{why}")
        for name, default in (("lr", 0.05), ("batch", 100)):
            other = copy.deepcopy(start)
            _reference_loop(other, data, **{**_LOOP, name: default})
            if _same_weights(got, other):
                raise ExerciseError(f"train_loop(model, data, {args}) trained with {name} = {default}, the "
                                    f"default: use the {name} it is given.")
        gap = max(float((u - v).detach().abs().max()) for u, v in zip(got.parameters(), want.parameters(), strict=True))
        raise ExerciseError(f"train_loop(model, data, {args}) does not end with tasks.train's weights (they "
                            f"differ by up to {gap:.3g}). Use the steps, batch and lr it is given; each step: the next `batch` training sequences "
                            f"(from step * batch, modulo their number), logits = model(X)[0], "
                            f"F.cross_entropy, opt.zero_grad(), loss.backward(), opt.step(); Adam made once.")
    with torch.no_grad():
        held_out = accuracy(got(data[2])[0], data[3])
        trained_on = accuracy(got(data[0])[0], data[1])
    try:
        value = float(returned.detach() if hasattr(returned, "detach") else returned)
    except (TypeError, ValueError):
        raise ExerciseError(f"train_loop trains right, but returns {type(returned).__name__}: return the "
                            f"held-out accuracy, tasks.accuracy(model(X_test)[0], y_test).") from None
    if abs(value - held_out) > 1e-6:
        if abs(value - trained_on) <= 1e-6:
            raise ExerciseError(f"train_loop trains right, but returns the training accuracy {value:.3f}: "
                                f"return the accuracy on the held-out set, X_test and y_test.")
        raise ExerciseError(f"train_loop trains right, but returns {value:.3f}; after training, the held-out "
                            f"accuracy is {held_out:.3f}: tasks.accuracy(model(X_test)[0], y_test).")
    passed(f"after {_LOOP['steps']} steps of {_LOOP['batch']} at lr {_LOOP['lr']}, your loop ends with "
           f"tasks.train's weights, from the same start, and returns the held-out accuracy ({held_out:.3f}).")
