"""Lesson 03's "bank" study on the real static table: does basic self-attention turn z_bank towards a sense?

A vector's **lean** is its mean cosine with one group of sense words minus its mean cosine with another
(lesson 03: *water, shore, lake* minus *finance, loan, cash*; above 0: nearer the first group). For each
sentence with "bank", :func:`bank_leans` gives the lean of z_bank (basic self-attention), of the plain
average of the sentence (weights 1/T), of the context alone (bank's weights on the other words,
renormalised), and bank's own weight. :func:`lean_study` adds the control: the same numbers over
``data.matched_sentences`` draws, in which every word but bank is a random word of about the same length,
score with bank and no lean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from . import core, data

__all__ = ["SENSE", "lean", "BankLeans", "bank_leans", "lean_study", "lean_rows"]

#: Lesson 03's sense words: name -> words; the lean is the first group's mean cosine minus the second's.
SENSE: dict[str, tuple[str, ...]] = {"nature": ("water", "shore", "lake"),
                                    "finance": ("finance", "loan", "cash")}


def _cosine(u: NDArray[np.floating], v: NDArray[np.floating]) -> float:
    """Cosine of two vectors of shape (d,), as in lesson 01."""
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def lean(table: data.StaticEmbeddings, v: NDArray[np.floating],
         sense: Mapping[str, Sequence[str]] = SENSE) -> float:
    """Lean of ``v`` (d,): mean cosine with ``sense``'s first word group minus mean cosine with its second."""
    first, second = list(sense.values())
    return float(np.mean([_cosine(v, table.vector(w)) for w in first])
                 - np.mean([_cosine(v, table.vector(w)) for w in second]))


@dataclass
class BankLeans:
    """Per sentence (n of them), arrays of shape (n,): the leans of z_bank (``attention``), of the plain
    average (``plain``) and of the context alone (``context``), and bank's weight on itself (``own``)."""

    attention: NDArray[np.float64]
    plain: NDArray[np.float64]
    own: NDArray[np.float64]
    context: NDArray[np.float64]


def bank_leans(table: data.StaticEmbeddings, sentences: Sequence[str],
               sense: Mapping[str, Sequence[str]] = SENSE, centre: str = "bank") -> BankLeans:
    """:class:`BankLeans` of ``sentences``, each holding ``centre`` once, with basic self-attention on the
    rows of ``table`` (X: (T, d) per sentence)."""
    rows = []
    for sentence in sentences:
        words = sentence.split()
        if centre not in words:
            raise ValueError(f"sentences: {sentence!r} has no {centre!r}")
        X = np.stack([table[w] for w in words]).astype(float)    # (T, d)
        Z, A = core.basic_self_attention(X)
        k = words.index(centre)
        rest = np.arange(len(X)) != k                               # the other words, with bank's weights
        context = A[k, rest] @ X[rest] / A[k, rest].sum()
        rows.append((lean(table, Z[k], sense), lean(table, X.mean(axis=0), sense), A[k, k],
                     lean(table, context, sense)))
    a = np.array(rows, dtype=float).reshape(len(rows), 4)
    return BankLeans(a[:, 0], a[:, 1], a[:, 2], a[:, 3])


@dataclass
class GroupStudy:
    """One group of sentences: its :class:`BankLeans` and ``matched`` (draws, n), z_bank's lean in each
    matched draw of each sentence."""

    leans: BankLeans
    matched: NDArray[np.float64]


def lean_study(table: data.StaticEmbeddings, groups: Mapping[str, Sequence[str]],
               sense: Mapping[str, Sequence[str]] = SENSE, *, draws: int = 100,
               seed: int = 0) -> dict[str, GroupStudy]:
    """Name -> :class:`GroupStudy` for each group of sentences (name -> sentences), its control drawn by
    ``data.matched_sentences(table, groups, sense, draws=draws, seed=seed)``."""
    drawn = data.matched_sentences(table, groups, sense, draws=draws, seed=seed)
    return {name: GroupStudy(bank_leans(table, g, sense),
                             np.array([bank_leans(table, d, sense).attention for d in drawn[name]]))
            for name, g in groups.items()}


def lean_rows(study: Mapping[str, GroupStudy], static_lean: float) -> dict[str, NDArray[np.float64]]:
    """The rows of lesson 03's table (condition -> values) for ``plots.basic_attention.lean_table``: the
    static bank, then per group attention, plain average, context alone and the means of 8 of each draw."""
    rows = {"static bank, no context": np.array([static_lean])}
    for name, g in study.items():
        rows |= {f"{name}, attention": g.leans.attention, f"{name}, plain average": g.leans.plain,
                 f"{name}, context alone": g.leans.context,
                 f"{name}, matched words (means of 8)": g.matched.mean(axis=1)}
    return rows
