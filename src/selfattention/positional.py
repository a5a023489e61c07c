"""Positional encodings: giving attention a sense of order (lesson 09)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from .validation import positive_int

__all__ = ["sinusoidal_positional_encoding", "previous_token_head", "share_peaking_before"]


def sinusoidal_positional_encoding(T: int, d: int, base: float = 10000.0) -> NDArray[np.float64]:
    """The sine/cosine encoding of "Attention Is All You Need".

    ``PE[pos, 2i] = sin(pos / base^(2i/d))`` and ``PE[pos, 2i+1] = cos(pos / base^(2i/d))``.

    Inputs:
        T: number of positions; d: encoding size (odd d drops the last cosine column).
    Returns:
        (T, d) array, added to (T, d) token embeddings.
    """
    for name, value in (("T", T), ("d", d)):
        positive_int(name, value)
    if not np.isfinite(base) or base <= 0:
        raise ValueError(f"base must be a positive finite number, got {base!r}")
    positions = np.arange(T)[:, None]  # (T, 1)
    freqs = base ** (-np.arange(0, d, 2) / d)  # (ceil(d/2),)
    angles = positions * freqs  # (T, ceil(d/2))
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d // 2])
    return pe


def previous_token_head(E: NDArray[np.float64], fitted: int = 40,
                        score_scale: float = 2.0) -> NDArray[np.float64]:
    """(T, T) softmax weights of a head whose ``W_Q W_K^T`` is fitted by least squares on positions
    0 .. ``fitted`` - 1 to map each position's vector (row of ``E``, (T, d)) to the one before it; query i
    scores key j by ``score_scale * E[i] W E[j]``. The scale multiplies the scores (a softmax temperature of
    ``1 / score_scale``): it only sharpens the rows, it moves no peak."""
    E = np.asarray(E, dtype=float)
    if E.ndim != 2 or not 2 <= fitted <= E.shape[0]:
        raise ValueError(f"E must be (T, d) with 2 <= fitted <= T, got shape {E.shape} and fitted={fitted}")
    W, *_ = np.linalg.lstsq(E[1:fitted], E[:fitted - 1], rcond=None)   # (d, d): E[i] -> E[i - 1]
    scores = score_scale * E @ W @ E.T
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    return weights / weights.sum(axis=-1, keepdims=True)


def share_peaking_before(weights: NDArray[np.float64], queries: NDArray[np.int_]) -> float:
    """The share of the rows ``queries`` of (T, T) ``weights`` whose largest weight is on key i - 1."""
    queries = np.asarray(queries)
    return float(np.mean(np.asarray(weights)[queries].argmax(axis=-1) == queries - 1))


def print_reorderings(layer: Callable[[NDArray[np.float64]], NDArray[np.float64]],
                      vectors: Mapping[str, NDArray[np.float64]], words: Sequence[str], prefix: int = 4,
                      depths: Sequence[int] = (1, 2)) -> None:
    """Print a small table: for each number of layers in ``depths`` (``layer`` applied that many times to the
    stacked ``vectors`` of the words, no residual), in how many of the other orders of ``words[:prefix]`` the
    last word's output changes, and by how much (the largest coordinate change, next to the largest coordinate
    of that output)."""
    words = list(words)
    orders = sorted(set(itertools.permutations(words[:prefix])) - {tuple(words[:prefix])})

    def last(ws: Sequence[str], n: int) -> NDArray[np.float64]:
        h = np.stack([vectors[w] for w in ws])
        for _ in range(n):
            h = layer(h)
        return h[-1]

    head = ("layers", f"reorderings that move the last output (of {len(orders)})", "largest change",
            "largest coordinate")
    print(" | ".join(head))
    for n in depths:
        ref = last(words, n)
        changes = [float(np.abs(last([*o, *words[prefix:]], n) - ref).max()) for o in orders]
        moved = [c for c in changes if c > 1e-9]
        size = f"{max(moved):.2g}" if moved else "0"
        print(f"{n:>{len(head[0])}} | {len(moved):>{len(head[1])}} | {size:>{len(head[2])}} | "
              f"{np.abs(ref).max():>{len(head[3])}.2f}")


def first_token_accuracy(positions: str, seed: int, steps: int = 80) -> float:
    """Train one attention layer (``SelfAttention``, d = 16, outputs averaged, then a linear readout) for
    ``steps`` Adam steps to name the FIRST of 5 distinct tokens (V = 5; 80 of their 120 orders for training),
    and return its accuracy on the 40 held-out orders. ``positions`` is what is added to the token vectors:
    "none", "sinusoids", "learned table" (trained with the rest) or "random table" (fixed). Without positions
    every order is the same multiset, so the model cannot beat a constant answer. About 0.1 s on a CPU."""
    import torch

    from .layers import SelfAttention

    T = V = 5
    d = 16
    orders = torch.tensor(list(itertools.permutations(range(V))))           # (120, 5): every order
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    table = {"none": torch.zeros(T, d),
             "sinusoids": torch.tensor(sinusoidal_positional_encoding(T, d), dtype=torch.float32),
             "learned table": torch.nn.Parameter(0.1 * torch.randn(T, d, generator=gen)),
             "random table": torch.randn(T, d, generator=gen)}
    if positions not in table:
        raise ValueError(f"positions must be one of {sorted(table)}, got {positions!r}")
    pos = table[positions]
    emb, attn, head = torch.nn.Embedding(V, d), SelfAttention(d, d), torch.nn.Linear(d, V)
    params = [*emb.parameters(), *attn.parameters(), *head.parameters()]
    params += [pos] if isinstance(pos, torch.nn.Parameter) else []
    opt = torch.optim.Adam(params, lr=3e-2)
    split = torch.randperm(len(orders), generator=gen)
    train, test = orders[split[:80]], orders[split[80:]]

    def logits(x: torch.Tensor) -> torch.Tensor:                           # (n, 5) tokens -> (n, V)
        return head(attn(emb(x) + pos)[0].mean(dim=1))

    threads = torch.get_num_threads()
    torch.set_num_threads(1)                   # tiny matrices: one thread is fastest, and the same everywhere
    try:
        for _ in range(steps):
            loss = torch.nn.functional.cross_entropy(logits(train), train[:, 0])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            return float((logits(test).argmax(dim=-1) == test[:, 0]).float().mean())
    finally:
        torch.set_num_threads(threads)
