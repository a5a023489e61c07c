"""Lesson 15's causal tiled loop (exercise 1's answer), kept in the tests only: the package a learner imports
holds no answer to it."""

from __future__ import annotations

from typing import Any

import numpy as np


def causal_loop(memory: Any, b: int) -> None:
    """Exact causal attention through ``memory`` (a SlowMemory or a counter like it), tile by tile."""
    T, d = memory.arrays["Q"].shape
    for i in range(0, T, b):
        q = memory.read("Q", i, i + b)
        rows = np.arange(i, i + len(q))[:, None]
        m, total, acc = np.full((len(q), 1), -np.inf), np.zeros((len(q), 1)), 0.0
        for j in range(0, rows[-1, 0] + 1, b):
            k, v = memory.read("K", j, j + b), memory.read("V", j, j + b)
            s = np.where(np.arange(j, j + len(k))[None, :] <= rows, q @ k.T / np.sqrt(d), -np.inf)
            new_m = np.maximum(m, s.max(axis=1, keepdims=True))
            total = total * np.exp(m - new_m) + np.exp(s - new_m).sum(axis=1, keepdims=True)
            acc = acc * np.exp(m - new_m) + np.exp(s - new_m) @ v
            m = new_m
        memory.write("O", acc / total, i)
