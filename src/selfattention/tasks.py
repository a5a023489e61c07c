"""The lookup task and its training loop: taught in lesson 05, reused by lessons 06 and 08.

A sequence holds ``N_ITEMS`` items, each a letter A-H with a digit 0-7 under it, and last a query token
naming a letter ``s``. The answer is the digit under the letter at a given offset from ``s``: with offset
+1, the letter after ``s`` (after H comes A). One item always has the letter ``s`` itself, a distractor:
a query that looks for its own letter finds the wrong item. A token is ``D_IN = 17`` numbers: a one-hot
letter, a one-hot digit and a query flag.

Several offsets ask for several digits at once, in order: ``offsets=(1, -1)`` asks for the digit under
the next letter and the one under the previous letter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor, nn

from .validation import positive_int

__all__ = ["LETTERS", "N_SYM", "N_ITEMS", "D_IN", "make_lookup_data", "token_labels", "item_roles",
           "ParameterFree", "UniformAttention", "ReadoutModel", "start_model", "accuracy", "spread", "train"]

LETTERS = "ABCDEFGH"
N_SYM = len(LETTERS)  # letters, and digits
N_ITEMS = 4  # items per sequence; the query token comes after them
D_IN = 2 * N_SYM + 1  # letter one-hot, digit one-hot, query flag


def _check_offsets(offsets: Sequence[int]) -> tuple[int, ...]:
    offsets = tuple(offsets)
    targets = {o % N_SYM for o in offsets}
    if not offsets or len(targets) != len(offsets) or 0 in targets or len(offsets) + 1 > N_ITEMS:
        raise ValueError(f"offsets must be 1 to {N_ITEMS - 1} distinct non-zero letter offsets, "
                         f"got {offsets!r}")
    return offsets


def make_lookup_data(n: int, seed: int, offsets: Sequence[int] = (1,)) -> tuple[Tensor, Tensor]:
    """``n`` random lookup sequences, from ``torch.Generator().manual_seed(seed)``.

    Returns ``X`` of shape (n, N_ITEMS + 1, D_IN) (the query token last) and the answers ``y``: shape (n,)
    for one offset, (n, len(offsets)) for several (the digit under letter ``s + offset``, in order).
    """
    positive_int("n", n)
    offsets = _check_offsets(offsets)
    gen = torch.Generator().manual_seed(seed)
    X, y = torch.zeros(n, N_ITEMS + 1, D_IN), torch.zeros(n, len(offsets), dtype=torch.long)
    for b in range(n):
        s = int(torch.randint(N_SYM, (1,), generator=gen))
        targets = [(s + o) % N_SYM for o in offsets]
        others = [k for k in range(N_SYM) if k not in (s, *targets)]
        extra = N_ITEMS - len(targets) - 1
        keys = [*targets, s] + [others[i] for i in torch.randperm(len(others), generator=gen)[:extra]]
        digits = torch.randperm(N_SYM, generator=gen)[:N_ITEMS].tolist()
        for pos, i in enumerate(torch.randperm(N_ITEMS, generator=gen).tolist()):
            X[b, pos, keys[i]] = X[b, pos, N_SYM + digits[i]] = 1.0
        X[b, -1, s] = X[b, -1, -1] = 1.0  # the query token, last
        y[b] = torch.tensor(digits[: len(targets)])
    return X, (y[:, 0] if len(offsets) == 1 else y)


def token_labels(seq: Tensor) -> list[str]:
    """``'D:3'`` for an item (letter D, digit 3), ``'?C'`` for the query token; seq: (T, D_IN)."""
    return [f"?{LETTERS[int(t[:N_SYM].argmax())]}" if t[-1] > 0
            else f"{LETTERS[int(t[:N_SYM].argmax())]}:{int(t[N_SYM:-1].argmax())}" for t in seq]


def item_roles(X: Tensor, offset: int = 1) -> dict[str, Tensor]:
    """Which item of each sequence is which, as boolean masks of shape (n, N_ITEMS) (one True per row for
    "target" and "distractor", two for "other" with the default ``N_ITEMS = 4``).

    ``X`` is (n, N_ITEMS + 1, D_IN) as :func:`make_lookup_data` makes it; "target" is the item under letter
    ``s + offset``, "distractor" the item under the query's own letter ``s``, "other" the rest.
    """
    if not isinstance(X, Tensor) or X.dim() != 3 or X.shape[1:] != (N_ITEMS + 1, D_IN):
        got = tuple(X.shape) if isinstance(X, Tensor) else type(X).__name__
        raise ValueError(f"X must be a tensor of shape (n, {N_ITEMS + 1}, {D_IN}), got {got}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset % N_SYM == 0:
        raise ValueError(f"offset must be an integer letter offset that is not a multiple of {N_SYM}, "
                         f"got {offset!r}")
    letters = X[:, :N_ITEMS, :N_SYM].argmax(-1)  # (n, N_ITEMS)
    s = X[:, -1, :N_SYM].argmax(-1, keepdim=True)  # (n, 1): the query's letter
    target, distractor = letters == (s + offset) % N_SYM, letters == s
    return {"target": target, "distractor": distractor, "other": ~(target | distractor)}


class ParameterFree(nn.Module):
    """Lesson 03's parameter-free attention, nothing to train: ``forward(X)`` takes X (batch, T, d_in) and
    returns Z = A X, shape (batch, T, d_in), and A = softmax(X X^T) row-wise, shape (batch, T, T)."""

    def forward(self, X: Tensor) -> tuple[Tensor, Tensor]:
        if X.ndim != 3:
            raise ValueError(f"X must have shape (batch, T, d_in), got shape {tuple(X.shape)}")
        A = torch.softmax(X @ X.transpose(-2, -1), dim=-1)
        return A @ X, A


class UniformAttention(nn.Module):
    """The control of lesson 05: equal weights 1/T on every token and a trained value matrix, no scores.

    ``forward(X)`` takes X (batch, T, d_in) and returns Z = A (X W_V), shape (batch, T, d_v), and A, the
    weights (batch, T, T), all 1/T.
    """

    def __init__(self, d_in: int, d_v: int) -> None:
        super().__init__()
        for name, value in (("d_in", d_in), ("d_v", d_v)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        self.W_value = nn.Linear(d_in, d_v, bias=False)

    def forward(self, X: Tensor) -> tuple[Tensor, Tensor]:
        if X.ndim != 3:
            raise ValueError(f"X must have shape (batch, T, d_in), got shape {tuple(X.shape)}")
        T = X.shape[1]
        A = torch.full((X.shape[0], T, T), 1.0 / T, dtype=X.dtype)
        return A @ self.W_value(X), A


class ReadoutModel(nn.Module):
    """An attention layer, then a linear readout of the query token's output to the digit logits.

    ``attention(X)`` must return ``(Z, A)`` with Z (batch, T, d_out); the model returns logits of shape
    (batch, N_SYM), or (batch, answers, N_SYM) for ``answers > 1``, and the attention weights A.
    """

    def __init__(self, attention: nn.Module, d_out: int, answers: int = 1) -> None:
        super().__init__()
        self.attention, self.answers = attention, answers
        self.readout = nn.Linear(d_out, answers * N_SYM)

    def forward(self, X: Tensor) -> tuple[Tensor, Tensor]:
        Z, A = self.attention(X)
        logits = self.readout(Z[:, -1])
        return (logits if self.answers == 1 else logits.view(-1, self.answers, N_SYM)), A


def start_model(seed: int, make_attention: Callable[[], nn.Module], d_out: int) -> ReadoutModel:
    """``ReadoutModel(make_attention(), d_out)`` from the random start ``seed``: the same seed, the same
    initial weights."""
    torch.manual_seed(seed)
    return ReadoutModel(make_attention(), d_out)


def spread(values: Sequence[float], digits: int = 3) -> str:
    """``'mean (min..max)'`` of ``values`` (a non-empty sequence of numbers), rounded to ``digits``."""
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("values is empty; expected at least one number")
    return f"{sum(vals) / len(vals):.{digits}f} ({min(vals):.{digits}f}..{max(vals):.{digits}f})"


def accuracy(logits: Tensor, y: Tensor) -> float:
    """The fraction of answers right: logits (n, N_SYM) or (n, answers, N_SYM), y (n,) or (n, answers)."""
    return (logits.argmax(-1) == y).float().mean().item()


def train(
    model: nn.Module,
    data: tuple[Tensor, Tensor, Tensor, Tensor],
    steps: int = 160,
    batch: int = 100,
    lr: float = 0.05,
    every: int = 2,
    snapshot: Callable[[nn.Module], Any] | None = None,
) -> list[tuple[int, float, Any]]:
    """Train ``model`` with Adam on cross-entropy, ``batch`` training sequences a step, in order.

    ``data`` is (X_train, y_train, X_test, y_test). Every ``every`` steps, and after the last, a
    checkpoint records ``(step, held-out accuracy, snapshot(model))`` (snapshot None when not given).
    Returns the checkpoints.
    """
    X_train, y_train, X_test, y_test = data
    opt, history = torch.optim.Adam(model.parameters(), lr=lr), []
    for step in range(steps + 1):
        if step % every == 0 or step == steps:
            with torch.no_grad():
                logits = model(X_test)[0]
                history.append((step, accuracy(logits, y_test), snapshot(model) if snapshot else None))
        if step == steps:
            break
        start = (step * batch) % len(X_train)
        logits = model(X_train[start:start + batch])[0]
        target = y_train[start:start + batch]
        loss = nn.functional.cross_entropy(logits.reshape(-1, N_SYM), target.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return history
