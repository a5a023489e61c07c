"""Checks for lesson 03 (the matrix form of basic self-attention).

Every check builds its own inputs (the lesson's toy vectors, seeded random arrays with large values, or the
real static embedding table) and its own reference answer, and names the typical mistakes of its exercise in
words.
"""

from __future__ import annotations

import contextlib
import io
import re
import textwrap
import tokenize
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._engine import (
    ExerciseError,
    body_lines,
    check_function,
    learners_functions,
    passed,
    reference_softmax,
    source,
)
from ._engine import (
    lines_run as count_lines,
)
from ._ready_made import ReadyMadeCalled, ready_made, ready_made_blocked

__all__ = ["check_padding_share", "check_self_attention_batch", "check_padded_batch", "check_masked_row",
           "check_layer_costs"]

# The lesson's toy vectors; axes: (finance, nature, food, tech).
_TOY: dict[str, np.ndarray] = {
    "money": np.array([1.0, 0.1, 0.0, 0.0]),
    "bank": np.array([0.7, 0.7, 0.0, 0.0]),
    "grows": np.array([0.5, 0.3, 0.1, 0.0]),
    "river": np.array([0.1, 1.0, 0.0, 0.0]),
    "flows": np.array([0.2, 0.8, 0.0, 0.0]),
}

#: The sense words of lesson 03's experiment: never in its sentences, they measure where "bank" points.
SENSE_WORDS: dict[str, tuple[str, ...]] = {"nature": ("water", "shore", "lake"),
                                           "finance": ("finance", "loan", "cash")}


def _sentence(words: str) -> np.ndarray:
    """(T, 4) toy vectors of a space-separated sentence."""
    return np.stack([_TOY[w] for w in words.split()])


def _attention(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reference basic self-attention for (..., T, d_model) inputs: returns Z (..., T, d_model), A (..., T, T)."""
    A = reference_softmax(X @ np.swapaxes(X, -1, -2))
    return A @ X, A


def _fmt(x: Any) -> str:
    return str(np.round(np.asarray(x, dtype=float), 3).tolist())


# --------------------------------------------------------------------------- exercise 1
def _padded(sentences: Sequence[np.ndarray], T: int) -> tuple[np.ndarray, np.ndarray]:
    """Sentences (T_b, d) padded with zero rows to (B, T, d_model), and their lengths (B,)."""
    X = np.zeros((len(sentences), T, sentences[0].shape[1]))
    for b, S in enumerate(sentences):
        X[b, : len(S)] = S
    return X, np.array([len(S) for S in sentences])


def _real(lengths: np.ndarray, T: int) -> np.ndarray:
    """(B, T) True where a row is a real word."""
    return np.arange(T) < np.asarray(lengths)[:, None]


def _masked_attention(X: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Reference: each sentence alone, its padding rows of Z set to 0. X (B, T, d_model), lengths (B,)."""
    Z = np.zeros_like(X)
    for b, n in enumerate(lengths):
        Z[b, :n] = _attention(X[b, :n])[0]
    return Z


#: Loops that may run no line of Python per item (map over a NumPy function, np.vectorize, apply_along_axis),
#: so :func:`lines_run` cannot see them; a for, while or comprehension is judged by behaviour alone, so one over
#: something that does not grow with the batch (``for n in X.shape``) is no loop over sentences.
LOOP = re.compile(r"\b(star)?map\s*\(|\bvectorize\b|\bapply_along_axis\b")


def calls_itself(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` calls itself (a recursion, a loop by another name): its own name among the global names
    that its code, or a function defined inside it, looks up."""
    name, code = getattr(fn, "__name__", None), getattr(fn, "__code__", None)
    todo = [code] if code is not None else []
    while todo:
        c = todo.pop()
        if name in c.co_names or name in c.co_freevars:
            return True
        todo += [k for k in c.co_consts if hasattr(k, "co_names")]
    return False


def code_lines(fn: Callable[..., Any]) -> list[str]:
    """The lines of ``fn``'s source with every comment and string (its docstring too) blanked out, so that words
    such as "for every sentence" in a docstring are not read as code; :func:`body_lines` where Python cannot
    tokenize the source."""
    text = textwrap.dedent(source(fn))
    if not text:
        return []
    lines = text.split("\n")
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return body_lines(fn)
    for tok in tokens:
        if tok.type in (tokenize.STRING, tokenize.COMMENT):
            (r0, c0), (r1, c1) = tok.start, tok.end
            for r in range(r0, r1 + 1):
                line = lines[r - 1]
                a, b = (c0 if r == r0 else 0), (c1 if r == r1 else len(line))
                lines[r - 1] = line[:a] + " " * (b - a) + line[b:]
    return lines


#: The batch shapes (B, T) on which :func:`lines_run` runs a learner's function: more sentences, longer ones.
SIZES = ((2, 4), (6, 4), (2, 7))


def lines_run(fn: Callable[..., Any]) -> list[int] | None:
    """How many lines of Python code run when ``fn`` is called on each batch shape of :data:`SIZES`
    (:func:`~selfattention.checks._engine.lines_run` counts them, after one warm-up call); None when ``fn``
    raises. Whole-batch array code runs the same lines whatever B and T; a loop by any name (for, a
    comprehension, map with a lambda, functools.reduce, recursion) runs more lines for more sentences or
    words."""
    rng = np.random.default_rng(5)
    calls = []
    for B, T in SIZES:
        X = rng.normal(size=(B, T, 3))
        lengths = np.maximum(1, T - np.arange(B) % T)
        X[~_real(lengths, T)] = 0.0
        calls.append((X, lengths))

    def guard() -> contextlib.AbstractContextManager[None]:
        stack = contextlib.ExitStack()
        stack.enter_context(np.errstate(all="ignore"))
        stack.enter_context(ready_made_blocked())
        return stack

    try:
        return [n for _, n in count_lines(fn, calls, guard)]
    except Exception:   # noqa: BLE001 - the check itself reports what went wrong
        return None


def loops_in(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` loops in Python: by behaviour, more lines of Python run for a larger batch
    (:func:`lines_run`); or by its code (comments and strings left out), a loop (:data:`LOOP`) or a call to
    itself, in ``fn`` or in a function the learner wrote that ``fn`` reaches (a helper)."""
    if any(any(LOOP.search(line) for line in code_lines(f)) or calls_itself(f) for f in learners_functions(fn)):
        return True
    counts = lines_run(fn)
    return counts is not None and len(set(counts)) > 1


_READY_MADE_CALLED = (
    "self_attention_batch reached a ready-made attention or mask (of sa or PyTorch) while it ran, by a route "
    "its code does not name: building the (B, T) length mask from lengths and applying it to the scores is the "
    "exercise. Write it yourself; sa.softmax is allowed.")


_ZEROED_AFTER = (
    "your padding weights were zeroed after the softmax, so each real row of weights sums to less than 1: the "
    "padding's share is lost, not shared out. Set the padding columns' scores to -inf before the softmax (or "
    "divide each row by its new sum).")


def _zeroed_after_softmax(self_attention_batch: Callable[..., Any], case: Sequence[np.ndarray]) -> None:
    """Raise :data:`_ZEROED_AFTER` when the learner's answer on ``case`` (padding rows that are not zeros) is
    softmax over all T words with the padding weights then set to 0 and not renormalised. On padding rows of
    zeros that mistake gives the same Z as no mask at all, so only such a case tells the two apart."""
    X, lengths = case
    real = _real(lengths, X.shape[1])
    omega = X @ np.swapaxes(X, -1, -2)
    zeroed = (reference_softmax(omega) * real[:, None, :]) @ X
    try:
        with np.errstate(all="ignore"), ready_made_blocked():
            got = np.asarray(self_attention_batch(X.copy(), lengths.copy()), dtype=float)
    except Exception:   # noqa: BLE001 - the main check reports whatever went wrong
        return
    if got.shape == X.shape and np.allclose(got[real], zeroed[real]) and not np.allclose(
            got[real], _masked_attention(X, lengths)[real]):
        raise ExerciseError(f"the result of self_attention_batch is not right yet: {_ZEROED_AFTER}")


def _run_quietly(fn: Callable[..., Any], case: Sequence[np.ndarray], **errstate: str) -> np.ndarray | None:
    """``fn`` on a copy of ``case`` as an array of X's shape, or None where it raises or returns another shape."""
    X, lengths = case
    try:
        with np.errstate(**({"all": "ignore"} | errstate)), ready_made_blocked():
            got = np.asarray(fn(X.copy(), lengths.copy()), dtype=float)
    except Exception:   # noqa: BLE001 - the main check reports whatever went wrong
        return None
    return got if got.shape == X.shape else None


_ZERO_TIMES_INF = (
    "on a batch with no padding at all ({where}), your rows of Z are all {what}, and a mask must leave such a batch "
    "unchanged. The first invalid step of your code is a multiplication that gives NaN: "
    "0 x (-inf) is NaN, not 0, so a 0/1 mask times -inf (such as (1 - mask) * -np.inf) turns every real score "
    "into NaN{zeros}. Put -inf only where the mask is False: np.where(mask[:, None, :], omega, -np.inf).")


def _all_masked(fn: Callable[..., Any], case: Sequence[np.ndarray], toy: Sequence[np.ndarray]) -> None:
    """When, on ``case`` (no padding), every row of the learner's Z is NaN or 0: raise :data:`_ZERO_TIMES_INF`
    if the first invalid operation of their code is a multiplication (0 x inf), or name a mask the wrong way
    round if on ``toy`` the real words attend only to the padding."""
    got = _run_quietly(fn, case)
    if got is None or not (np.isnan(got).all() or np.all(got == 0)):
        return
    X, lengths = case
    try:
        with np.errstate(all="ignore", invalid="raise"), ready_made_blocked():
            fn(X.copy(), lengths.copy())
    except FloatingPointError as exc:
        if "multiply" in str(exc):
            what = "NaN" if np.isnan(got).all() else "0"
            zeros = "" if what == "NaN" else " (sa.softmax returns zeros for a row with a NaN score, where NumPy's exp gives NaN)"
            raise ExerciseError(f"the result of self_attention_batch is not right yet: "
                                f"{_ZERO_TIMES_INF.format(where=f'X of shape {X.shape}', what=what, zeros=zeros)}"
                                ) from None
    except Exception:   # noqa: BLE001 - the main check reports whatever went wrong
        return
    X, lengths = toy
    real = _real(lengths, X.shape[1])
    swapped = reference_softmax(np.where(real[:, None, :], -np.inf, X @ np.swapaxes(X, -1, -2))) @ X
    on_toy = _run_quietly(fn, toy)
    if on_toy is not None and np.allclose(np.nan_to_num(on_toy[real]), np.nan_to_num(swapped[real])):
        raise ExerciseError(
            "the result of self_attention_batch is not right yet: your mask is the wrong way round: on a batch "
            "with no padding your rows of Z are all " + ("NaN" if np.isnan(got).all() else "0") + ", and with "
            "padding each real word attends only to the padding. It sets the real words' scores to -inf and "
            "keeps the padding's: np.where(condition, a, b) takes a where the condition is True, so "
            "np.where(mask[:, None, :], omega, -np.inf) keeps the real words.")


def _padding_mistake(fn: Any, toy: Sequence[np.ndarray], junk: Sequence[np.ndarray]) -> str:
    """What the learner's answer does to the padding when its real rows equal attention with no mask, judged
    by behaviour on ``junk`` (padding rows that are not zeros) and ``toy`` (padding rows of zeros): the message
    for that mistake."""
    tail = ("set the scores of the padding columns (the words attended to, mask[:, None, :]) to -inf, or a very "
            "negative number, before the softmax.")
    generic = ("your real words give weight to the padding. A padding row of zeros scores 0 with every word, and "
               f"e^0 = 1, so each padding column takes a share of the row. Use the lengths: {tail}")
    got = _run_quietly(fn, junk) if callable(fn) else None
    if got is None:
        return generic
    X, lengths = junk
    real = _real(lengths, X.shape[1])
    omega = X @ np.swapaxes(X, -1, -2)
    cleared = X * real[..., None]
    same = {
        "unmasked": reference_softmax(omega) @ X,
        "zero scores": reference_softmax(np.where(real[:, None, :], omega, 0.0)) @ X,
        "cleared X": reference_softmax(cleared @ np.swapaxes(cleared, -1, -2)) @ cleared,
    }
    fits = [k for k, v in same.items() if np.allclose(got[real], v[real])]
    if "cleared X" in fits:
        return ("your real words give weight to the padding: you set the padding rows of X to zeros, but a row "
                "of zeros still scores 0 with every word, and e^0 = 1, so each padding word still takes a share "
                f"of every real row. Zeroing X is not a mask: {tail}")
    if "zero scores" in fits:
        return ("your real words give weight to the padding: your mask sets the padding scores to 0 rather "
                "than removing them, and a score of 0 still gets e^0 = 1 in the softmax. Set the padding "
                "columns' scores to -inf (or a very negative number) before the softmax.")
    if "unmasked" in fits:
        pad = got[~real]
        if not np.isfinite(pad).all() or np.allclose(pad, 0):
            return ("you masked the queries, not the keys: your padding rows of Z come out "
                    f"{'NaN' if np.isnan(pad).any() else 'as zeros'}, so the mask hid the padding words as the "
                    "rows that attend (a (B, T, 1) mask), but your real words still give weight to the padding "
                    "columns, each scoring 0, so e^0 = 1. Mask the words attended to instead: mask[:, None, :] "
                    "on the scores, set to -inf before the softmax.")
        on_zeros, toy_real = _run_quietly(fn, toy), _real(toy[1], toy[0].shape[1])
        if on_zeros is not None and np.allclose(on_zeros[toy_real], _masked_attention(*toy)[toy_real]):
            return ("your real words give weight to the padding: you found the padding from rows of zeros, but "
                    "padding may hold anything (here it is not zeros). Use `lengths`: "
                    "np.arange(T) < lengths[:, None] is the (B, T) mask of real words.")
    return generic


SHARE_ROUNDED = 0.003   # Exercise 1 (a): tight enough to tell river's row (0.379) from bank's (0.383)
PAD_WORDS, PAD_T = ("river", "bank"), 5   # Exercise 1 (a): river bank padded with rows of zeros to T = 5


def padding_facts(n_pad: int = PAD_T - 2) -> tuple[float, float]:
    """(total weight of ``n_pad`` padding rows in river's unmasked row of "river bank" + padding, the weight of
    the one padding row of section 4), from the toy vectors: river (0.1, 1.0, 0, 0), bank (0.7, 0.7, 0, 0).
    A padding row of zeros scores 0 with every word, so each takes e^0 = 1 against e^omega of the real words."""
    real = float(np.exp(1.01) + np.exp(0.77))   # river . river = 1.01, river . bank = 0.77
    return n_pad / (real + n_pad), 1 / (real + 1)


def check_padding_share(padding_share: Any) -> None:
    """Exercise 1 (a), predicted by hand: with no mask, the total weight river's row gives the PAD_T - 2 = 3
    padding rows of "river bank" padded to T = PAD_T; from section 4's unmasked row (0.465, 0.366, 0.169):
    3 x 0.169 / (0.465 + 0.366 + 3 x 0.169) = 0.379. Refuses anything but one number; names the typical
    mistakes (one padding row's weight, three of them not renormalised, each row's share, 0, 3/5, two rows)."""
    if padding_share is None or padding_share is Ellipsis:
        raise ExerciseError("padding_share has no value yet: replace None with your prediction, one number.")
    if isinstance(padding_share, (str, bytes)):
        raise ExerciseError(f"padding_share = {padding_share!r:.40} is text: give a number, not a string in quotes.")
    try:
        x = np.asarray(padding_share, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(f"padding_share should be one number, but it is a {type(padding_share).__name__}.") \
            from None
    if x.size != 1 or not np.isfinite(x).all():
        raise ExerciseError(f"padding_share should be one finite number; it has shape {x.shape}.")
    got = float(x.reshape(()))
    share, one = padding_facts()
    if abs(got - share) <= SHARE_ROUNDED:   # 0.003: bank's row (0.383) is 0.004 away
        passed(f"three padding rows take {share:.3f} of river's row without a mask (one took {one:.3f}): each "
               f"scores 0 with every word, e^0 = 1, so the more padding a sentence gets in its batch, the more "
               f"weight goes to it. Your mask must make a sentence's rows independent of that.")
        return
    bank_row = 3 / (float(np.exp(0.98) + np.exp(0.77)) + 3)   # bank . bank = 0.98, bank . river = 0.77
    mistakes = [
        (bank_row, f"{bank_row:.3f} is bank's row: padding_share asks for river's row, where river scores itself "
                   "1.01, not 0.98."),
        (one, f"{one:.3f} is the weight of section 4's one padding row; with three, each still scores 0 (e^0 = 1) "
              "against the same real scores, so together they take more."),
        (3 * one, f"you tripled {one:.3f} without renormalising: with three padding rows the row's sum grows, and "
                  "every weight, the padding's included, is divided by the new sum."),
        (share / 3, "that is each padding row's weight; padding_share asks for the three together."),
        (0.0, "without a mask the padding is not ignored: a row of zeros scores 0, and e^0 = 1."),
        (3 / 5, "3/5 assumes equal weights, but river scores itself 1.01 and bank 0.77, the padding 0."),
        (padding_facts(2)[0], "that is two padding rows: river bank padded to T = 5 has three."),
        (1 - share, "that is what the real words keep; padding_share is the padding's part."),
    ]
    for value, said in mistakes:
        if abs(got - value) <= SHARE_ROUNDED:
            raise ExerciseError(f"padding_share = {got:.3f}: {said}")
    raise ExerciseError(f"padding_share = {got:.3f} is not it. Each padding row takes e^0 = 1 against e^1.01 (river) "
                        "and e^0.77 (bank); or start from section 4's row (0.465, 0.366, 0.169) and add two more "
                        "rows like the padding's, then renormalise.")


def check_self_attention_batch(self_attention_batch: Callable[[np.ndarray, np.ndarray], Any]) -> None:
    """Exercise 1: the matrix form on a padded batch, X (B, T, d_model) and lengths (B,) -> Z (B, T, d_model), whose real
    rows equal each sentence's attention computed alone; padding rows need only be finite. No loop over the batch,
    no library attention."""
    if callable(self_attention_batch):
        shortcut = ready_made(self_attention_batch)
        if shortcut is not None and shortcut.startswith("sa.basic_self_attention"):
            raise ExerciseError(
                f"self_attention_batch calls {shortcut}: the exercise asks you to write the three "
                "steps (scores, softmax, weighted sum) for a whole batch yourself.")
        if shortcut is not None:
            what = ("builds a ready-made mask for you" if re.search(r"(padding|causal)_mask", shortcut)
                    else "is a ready-made attention: scores, softmax and weighted sum in one call")
            raise ExerciseError(
                f"self_attention_batch calls {shortcut}, which {what}: building the (B, T) length mask "
                "from lengths and applying it to the scores is the exercise. Write it yourself.")
        if calls_itself(self_attention_batch):
            raise ExerciseError(
                "self_attention_batch calls itself: a recursion over the batch loops in Python by another name, "
                "one sentence at a time. The exercise asks for the matrix form on the whole batch at once, "
                "padding and all. `@` multiplies the last two axes of (B, T, d_model) arrays sentence by sentence.")
        if loops_in(self_attention_batch):
            counts = lines_run(self_attention_batch)
            mapped = next((line.strip() for f in learners_functions(self_attention_batch)
                           for line in code_lines(f) if LOOP.search(line)), None)
            seen = ((f": `{mapped}` calls a function once per item" if mapped else "")
                    if counts is None or len(set(counts)) == 1 else
                    f": run on {SIZES[0][0]} sentences of {SIZES[0][1]} words, then {SIZES[1][0]} sentences of "
                    f"{SIZES[1][1]} and {SIZES[2][0]} of {SIZES[2][1]}, it ran {counts[0]}, {counts[1]} and "
                    f"{counts[2]} lines of Python, so some of its work repeats once per sentence or per word")
            raise ExerciseError(
                f"self_attention_batch loops in Python{seen} (a for or while, a comprehension, map, "
                "functools.reduce, recursion or np.vectorize, in its own body or in a function it calls). "
                "The exercise asks for the matrix form on the whole batch at once, padding and all. `@` "
                "multiplies the last two axes of (B, T, d_model) arrays sentence by sentence.")
    rng = np.random.default_rng(3)
    toy = _padded([_sentence("money bank grows"), _sentence("river bank")], 3)
    big = _padded([20.0 * rng.normal(size=(3, 3)), 20.0 * rng.normal(size=(5, 3))], 5)
    full = _padded([rng.normal(size=(4, 3)), rng.normal(size=(4, 3))], 4)
    junk = _padded([rng.normal(size=(n, 3)) for n in (2, 4)], 4)
    junk[0][~_real(junk[1], 4)] = rng.normal(size=(2, 3))    # padding that is not zeros: only lengths tells
    if callable(self_attention_batch):
        _all_masked(self_attention_batch, full, toy)
    padding = _padding_mistake(self_attention_batch, toy, junk)
    cases = [
        full,                                                  # no padding: (2, 4, 3), lengths [4, 4]
        _padded([rng.normal(size=(n, 2)) for n in (5, 2, 4)], 5),   # before toy: there <= looks like no mask
        toy,                                                   # (2, 3, 4), lengths [3, 2]
        big,                                                   # scores in the hundreds
        junk,                                                  # padding rows that are not zeros
    ]

    def describe(case: Sequence[np.ndarray]) -> str:
        X, lengths = case
        what = f"X of shape {X.shape}, lengths {lengths.tolist()}"
        if case is toy:
            return f"the toy sentences 'money bank grows' and 'river bank' (padded with a row of zeros): {what}"
        if case is full:
            return f"{what} (no padding)"
        if case is big:
            return f"{what}, with large values (scores in the hundreds)"
        if case is junk:
            return (f"{what}, with padding rows that are not zeros (padding may hold anything: only lengths says "
                    "where a sentence ends)")
        return what

    def real_rows(X: np.ndarray, lengths: np.ndarray, Z: Any) -> np.ndarray:
        Z = np.asarray(Z, dtype=float)
        if Z.shape != X.shape:
            return Z
        return np.where(_real(lengths, X.shape[1])[..., None], Z, 0.0)

    def mistakes(case: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
        X, lengths = case
        real = _real(lengths, X.shape[1])[:, None, :]           # (B, 1, T): the columns to keep
        omega = X @ np.swapaxes(X, -1, -2)
        masked = np.where(real, omega, -np.inf)
        A = reference_softmax(masked)
        one_more = np.arange(X.shape[1])[None, None, :] <= np.asarray(lengths)[:, None, None]   # off by one
        off_by_one = reference_softmax(np.where(one_more, omega, -np.inf)) @ X
        unmasked = reference_softmax(omega) @ X
        with np.errstate(invalid="ignore"):                    # a column masked in every sentence: NaN
            over_batch = reference_softmax(masked, axis=0) @ X
        found = {k: real_rows(X, lengths, v) for k, v in {
            padding: unmasked,
            "you multiplied the raw scores X X^T by X. Turn the scores into weights with softmax over the "
            "last axis first.": np.where(real, omega, 0.0) @ X,
            "your weights are transposed: either the softmax went down the columns (use axis=-1, so each "
            "word's weights over the T words sum to 1) or you multiplied by A^T. Z = A @ X, with A[b, i, j] "
            "the weight word i gives to word j.": np.swapaxes(A, -1, -2) @ X,
            "your softmax ran over axis 0, across the sentences of the batch: each word's weights must sum to 1 "
            "over the T words of its own sentence, the last axis (axis=-1).": over_batch,
            "you divided the scores by sqrt(d_model), as scaled dot-product attention does: that scaling belongs "
            "to lesson 06. Basic self-attention takes softmax of the raw scores X X^T.":
                reference_softmax(masked / np.sqrt(X.shape[-1])) @ X,
        }.items()}
        found["your mask adds a finite number such as -10 to the padding's scores: e^(score - 10) is small but "
              "not 0, so the padding keeps a little weight. An additive mask uses -np.inf (or "
              "np.where(mask, scores, -np.inf))."] = real_rows(
            X, lengths, reference_softmax(np.where(real, omega, omega - 10.0)) @ X)
        one_less = np.arange(X.shape[1])[None, None, :] < np.asarray(lengths)[:, None, None] - 1
        found["your mask hides each sentence's last real word too: a sentence of length n has real words 0 to "
              "n - 1, so the mask is np.arange(T) < lengths[:, None], without subtracting 1."] = real_rows(
            X, lengths, reference_softmax(np.where(one_less, omega, -np.inf)) @ X)
        if not np.allclose(real_rows(X, lengths, off_by_one), found[padding]):   # else the two look alike
            found["your mask keeps one padding column: a sentence of length n has real words 0 to n - 1, so the "
                  "mask is np.arange(T) < lengths, with <, not <=."] = real_rows(X, lengths, off_by_one)
        return found

    nonfinite_padding: list[tuple[str, str]] = []   # cases whose padding rows of Z hold NaN or inf, and which

    def wrapped(X: np.ndarray, lengths: np.ndarray) -> Any:
        try:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"), ready_made_blocked():
                out = self_attention_batch(X.copy(), lengths.copy())
        except ReadyMadeCalled:
            raise ExerciseError(_READY_MADE_CALLED) from None
        except ValueError as exc:
            text = str(exc)
            if "matmul" in text or "remapped" in text:
                raise ExerciseError(
                    f"self_attention_batch raised ValueError on {describe((X, lengths))}: {exc}. For a batch, "
                    "X.T reverses all three axes; swap only the last two with np.swapaxes(X, -1, -2) (or "
                    "X.transpose(0, 2, 1))."
                ) from None
            shapes = {tuple(int(n) for n in re.findall(r"\d+", m)) for m in re.findall(r"\(([\d,\s]*)\)", text)}
            if "broadcast" in text and shapes == {(X.shape[1],), (len(lengths),)} and X.shape[1] != len(lengths):
                raise ExerciseError(
                    f"self_attention_batch raised ValueError on {describe((X, lengths))}: {exc}. That is "
                    f"np.arange(T), shape ({X.shape[1]},), compared with lengths, shape ({len(lengths)},): "
                    "two 1-D arrays line up entry by entry, not into a table. Give lengths a new axis, "
                    "lengths[:, None], shape (B, 1), so that np.arange(T) < lengths[:, None] broadcasts to the "
                    "(B, T) mask of real words."
                ) from None
            B, T = len(lengths), X.shape[1]
            if "broadcast" in text and B != T and shapes & {(T, B), (T, 1, B)}:
                raise ExerciseError(
                    f"self_attention_batch raised ValueError on {describe((X, lengths))}: {exc}. Your mask has "
                    f"shape ({T}, {B}), (T, B): one row per word, one column per sentence. The (B, T) mask of "
                    "real words puts the sentences first: np.arange(T) < lengths[:, None]."
                ) from None
            if "broadcast" in text:
                raise ExerciseError(
                    f"self_attention_batch raised ValueError on {describe((X, lengths))}: {exc}. Two arrays' "
                    "shapes do not line up: an array lost or lacks an axis. A max or sum over the last axis "
                    "needs keepdims=True to stay (B, T, 1); a (B, T) mask of real words needs a new axis, "
                    "mask[:, None, :], to line up with the (B, T, T) scores."
                ) from None
            raise
        if out is None or out is Ellipsis:
            raise ExerciseError("self_attention_batch returns None: write your code between the marked lines "
                                "and end it with `return Z`, an array of shape (B, T, d_model).")
        if isinstance(out, tuple):
            raise ExerciseError("self_attention_batch returned a tuple; return only Z, the array of shape "
                                "(B, T, d_model).")
        Z = np.asarray(out, dtype=float)
        padding_rows = Z[~_real(lengths, X.shape[1])] if Z.shape == X.shape else Z[:0]
        if not np.isfinite(padding_rows).all():
            nonfinite_padding.append((describe((X, lengths)), "NaN" if np.isnan(padding_rows).any() else "inf"))
        return real_rows(X, lengths, out)

    _zeroed_after_softmax(self_attention_batch, junk)
    check_function(wrapped, _masked_attention, cases, "self_attention_batch", describe=describe,
                   mistakes=mistakes)
    if nonfinite_padding:   # judged after the real rows, which are right by now
        where, what = nonfinite_padding[0]
        cause = ("The usual cause: the mask hid the padding words as queries too (a (B, T, T) mask with both "
                 "axes), so a padding row's scores are all -inf, and np.exp over its sum is 0 / 0 = NaN "
                 "(sa.softmax returns zeros for such a row, by design; PyTorch's softmax gives NaN). Hide only "
                 "the words attended to, mask[:, None, :]." if what == "NaN" else
                 "Some step divided by 0 or overflowed on a padding row; hide only the words attended to, "
                 "mask[:, None, :], and shift each row by its largest score before np.exp.")
        raise ExerciseError(
            f"your real rows are right, but the padding rows of Z hold {what}, on {where}. Padding rows may "
            f"hold any finite numbers, not {what}: it spreads through every later layer (even NaN times 0 is "
            f"NaN). {cause}")
    passed("your batched self-attention matches each sentence computed alone, padding ignored, on scores in "
           "the hundreds too.")


def check_padded_batch(padding_share: Any, self_attention_batch: Callable[[np.ndarray, np.ndarray], Any]) -> None:
    """Exercise 1, both parts: :func:`check_padding_share` on (a) and :func:`check_self_attention_batch` on (b),
    each run whatever the other finds, so that (b) gets its feedback while (a) is still wrong. Prints each part
    that passes; raises one ExerciseError naming every part that does not."""
    wrong = []
    for part, check, answer in (("(a)", check_padding_share, padding_share),
                                ("(b)", check_self_attention_batch, self_attention_batch)):
        try:
            check(answer)
        except ExerciseError as error:
            wrong.append(f"{part} {error}")
    if wrong:
        raise ExerciseError("\n".join(wrong))


# --------------------------------------------------------------------------- exercise 2
#: Exercise 2's sentence and the row read: flows' row in "a river bank flows" when no word may attend to itself.
ROW_SENTENCE, ROW_WORD = ("a", "river", "bank", "flows"), "flows"
_A_TOY = np.array([0.1, 0.1, 0.1, 0.1])


#: How far each of the four weights may be from the exact row: rounding to 2 decimals stays within it.
ROUNDED = 0.005


def _masked_facts() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The scores of the sentence (T, T), its weights without a mask and with the diagonal masked (T, T)."""
    vec = {**_TOY, "a": _A_TOY}
    X = np.stack([vec[w] for w in ROW_SENTENCE])
    omega = X @ X.T
    hidden = np.where(np.eye(len(X), dtype=bool), -np.inf, omega)
    return omega, reference_softmax(omega), reference_softmax(hidden)


_UNSET = object()


def check_masked_row(flows_row: Any, growth: Any = _UNSET) -> None:
    """Exercise 2, derived by hand from flows' unmasked row (0.150, 0.308, 0.273, 0.268): flows' row of weights in
    "a river bank flows" (toy vectors) when every score on the diagonal of Omega is set to -inf: softmax of (0.10, 0.82, 0.70, -inf) = (0.205, 0.421, 0.374, 0), the
    unmasked row's other weights divided by 1 - 0.268; and, when given, ``growth``: that factor,
    1 / (1 - 0.268) = 1.366, by which every other weight grows. Refuses anything but 4 numbers (and one number
    for growth); names the typical mistakes."""
    omega, plain, masked = _masked_facts()
    k = ROW_SENTENCE.index(ROW_WORD)
    right = masked[k]
    scores = ", ".join(f"{w} {s:.2f}" for w, s in zip(ROW_SENTENCE, omega[k], strict=True))
    if flows_row is None or flows_row is Ellipsis:
        raise ExerciseError("flows_row has no value yet: write flows' four weights (a, river, bank, flows) "
                            "under the mask.")
    if isinstance(flows_row, str) or (isinstance(flows_row, (list, tuple))
                                      and any(isinstance(v, str) for v in flows_row)):
        raise ExerciseError(f"flows_row = {flows_row!r:.60} holds text: write numbers, not strings in quotes.")
    try:
        got = np.asarray(flows_row, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(f"flows_row should be 4 numbers, but it is a {type(flows_row).__name__}.") from None
    if got.dtype.kind not in "fi" or got.shape != (4,):
        raise ExerciseError(f"flows_row has shape {got.shape}: give 4 numbers, the weights flows gives a, river, "
                            "bank and flows, in that order.")
    if not np.isfinite(got).all():
        raise ExerciseError(f"flows_row = {_fmt(got)} is not finite: e^-inf is 0, so the masked weight is 0; "
                            "did a row hold only -inf, or -inf minus -inf?")
    # The task gives the unmasked row to 3 decimals; dividing those numbers by 1 - 0.268 and rounding to 2
    # decimals can land 0.0051 from the exact row (0.150 / 0.732 = 0.2049 -> 0.20; exactly 0.2051): accept both.
    given = plain[k].round(3)
    by_hand = given * (np.arange(4) != k) / (1 - given[k])
    if np.allclose(got, right, rtol=0, atol=ROUNDED) or np.allclose(got, by_hand, rtol=0, atol=ROUNDED):
        if growth is not _UNSET:
            _check_growth(growth, float(plain[k, k]))
        passed(f"flows' scores are {scores}; with its own score at -inf its weights are {_fmt(right)}. Masking "
               f"one score takes its weight ({plain[k, k]:.3f} without the mask) and shares it out in "
               f"proportion: every other weight is divided by 1 - {plain[k, k]:.3f}, so grows "
               f"{1 / (1 - plain[k, k]):.3f} times, and river now takes {right[1]:.3f}.")
        return
    zeroed = plain[k] * (np.arange(4) != k)
    hide_a = reference_softmax(np.where(np.arange(4) == 0, -np.inf, omega[k]))
    near = [
        (plain[k], f"flows_row = {_fmt(got)} is flows' row without the mask: its own weight, {plain[k, k]:.3f}, "
         "is still there: under the mask it is 0, and the other three grow to fill the row."),
        (reference_softmax(np.where(np.arange(4) == k, 0.0, omega[k])),
         "flows_row gives flows a weight: you set its own score to 0, and e^0 = 1. A masked score is -inf, "
         "so that e^-inf = 0."),
        (zeroed, f"flows_row sums to {got.sum():.3f}, not 1: you set flows' own weight to 0 "
         "without sharing it out among the other three."),
        (masked[:, k], f"flows_row = {_fmt(got)} is flows' column: the weights the other words give flows. "
         "Asked: flows' row, the weights flows gives each word."),
        (hide_a, "flows_row hides a, not flows: the mask is on the diagonal, and flows' diagonal score is its "
         "score with itself."),
        (plain[k] + plain[k, k] / 3 * (np.arange(4) != k) - plain[k, k] * (np.arange(4) == k),
         f"flows_row shares flows' unmasked weight, {plain[k, k]:.3f}, out equally, adding {plain[k, k] / 3:.3f} "
         f"to each other weight: the mask shares it out in proportion, each other weight divided by "
         f"1 - {plain[k, k]:.3f}."),
    ]
    d = len(_A_TOY)
    halved = np.where(np.arange(4) == k, -np.inf, omega[k] / np.sqrt(d))
    near += [
        (reference_softmax(halved), f"flows_row = {_fmt(got)} comes from flows' scores divided by sqrt(d_model) "
         f"= {np.sqrt(d):g}, as scaled attention does (lesson 06): basic self-attention, and this exercise, "
         "take the softmax of the raw dot products."),
        (reference_softmax(omega[k] / np.sqrt(d)), f"flows_row = {_fmt(got)} is flows' unmasked row with the "
         f"scores divided by sqrt(d_model) = {np.sqrt(d):g}: use the raw dot products, and set flows' own score "
         "to -inf."),
        (reference_softmax(np.where(np.arange(4) == 1, -np.inf, omega[k])), f"flows_row = {_fmt(got)} masks "
         "river, flows' largest score, not flows itself: the mask is on the diagonal, flows' score with itself."),
        (np.append(0.0, reference_softmax(np.where(np.arange(3) == 2, -np.inf, omega[k, 1:]))),
         f"flows_row = {_fmt(got)} leaves out the word a: the sentence is {' '.join(ROW_SENTENCE)}, and a's "
         "score (0.10) gets a weight too."),
    ]
    unit = np.stack([_TOY.get(w, _A_TOY) for w in ROW_SENTENCE])
    unit = unit / np.linalg.norm(unit, axis=1, keepdims=True)
    near.append((reference_softmax(np.where(np.arange(4) == k, -np.inf, unit @ unit[k])),
                 f"flows_row = {_fmt(got)} comes from cosines, not dot products: the scores are x_i . x_j, "
                 "lengths included."))
    for other, word in enumerate(ROW_SENTENCE):
        if other != k:
            near.append((masked[other], f"flows_row = {_fmt(got)} is the masked row of {word}, not of flows: "
                         f"its 0 is at {word}'s own place. Asked: the row of flows, the last word, whose scores "
                         f"are {scores}."))
    for value, text in near:
        if np.allclose(got, value, atol=2e-3):
            raise ExerciseError(text)
    if np.allclose(got, np.array([1, 1, 1, 0]) / 3, rtol=0, atol=ROUNDED):   # 0.33 each, rounded
        raise ExerciseError("flows_row gives the three other words equal weights: the mask removes one weight, "
                            f"but the scores ({scores}) still decide the rest.")
    if np.allclose(np.sort(got), np.sort(right), rtol=0, atol=ROUNDED):
        raise ExerciseError(f"flows_row = {_fmt(got)} holds the right weights in the wrong order: write them "
                            f"in the sentence's order: {', '.join(ROW_SENTENCE)}.")
    if np.allclose(got, np.round(right, 1), rtol=0, atol=1e-6):
        raise ExerciseError(f"flows_row = {_fmt(got)} is the right row rounded to one decimal, up to 0.05 off "
                            "each weight: keep 2 decimals.")
    for places in (1, 2):
        cut = np.floor(right * 10**places) / 10**places
        if np.allclose(got, cut, rtol=0, atol=1e-6):
            off = int(np.argmax(right - cut))
            raise ExerciseError(
                f"flows_row = {_fmt(got)} is the right row cut off after {places} decimal{'s' * (places > 1)} "
                f"(truncated), not rounded: {ROW_SENTENCE[off]}'s weight, {right[off]:.4f}, became "
                f"{cut[off]:.{places}f}, where rounding to 2 decimals gives {np.round(right[off], 2):.2f}.")
    if np.allclose(got, 100 * right, rtol=0, atol=100 * ROUNDED):
        raise ExerciseError(f"flows_row = {_fmt(got)} is the right row in percent: write the weights "
                            "themselves, numbers between 0 and 1 that sum to 1.")
    exps = np.where(np.arange(4) == k, 0.0, np.exp(omega[k]))
    if np.allclose(got, exps, rtol=0, atol=ROUNDED):
        raise ExerciseError(f"flows_row = {_fmt(got)} holds e^score for each word, summing to {got.sum():.3f}: "
                            "divide each by that sum to finish the softmax.")
    if np.allclose(got, np.where(np.arange(4) == k, 0.0, omega[k]), rtol=0, atol=ROUNDED):
        raise ExerciseError(f"flows_row = {_fmt(got)} is flows' scores with its own set to 0, not weights: "
                            "the softmax of the masked scores turns them into weights.")
    off = (np.abs(got - right) > ROUNDED) & (np.abs(got - by_hand) > ROUNDED)   # outside both roundings
    if np.all(np.abs(got - right) <= 0.02) and not off.any():
        raise ExerciseError(f"flows_row = {_fmt(got)}: each weight is within rounding of flows' masked row, "
                            "but some follow the exact row and some the 3-decimal one: work all four from the "
                            "same numbers.")
    if np.all(np.abs(got - right) <= 0.02):
        words = " and ".join(f"{w} ({got[i]:g})" for i, w in enumerate(ROW_SENTENCE) if off[i])
        raise ExerciseError(f"flows_row = {_fmt(got)} is close, but the weight of {words} is further from flows' "
                            "masked row than rounding to 2 decimals allows: work it out with more digits, then "
                            "round.")
    if abs(got.sum() - 1) > 1e-3:
        raise ExerciseError(f"flows_row sums to {got.sum():.3f}: a row of weights sums to 1.")
    raise ExerciseError(f"flows_row = {_fmt(got)}, not flows' masked row. Its unmasked weights are "
                        f"{_fmt(plain[k])}: with flows' own score at -inf, its weight goes to 0 and the other "
                        "three share the row in proportion to their unmasked weights.")


def _check_growth(growth: Any, taken: float) -> None:
    """Exercise 2's factor: every weight but the masked one is divided by 1 - ``taken`` (0.268), so grows
    1 / (1 - taken) = 1.366 times; ``growth`` may be rounded to 2 decimals."""
    if growth is None or growth is Ellipsis:
        raise ExerciseError("flows_row is right; growth has no value yet: write the factor by which each of "
                            "the other three weights grows over the row without the mask.")
    if isinstance(growth, str) or np.size(growth) != 1:
        raise ExerciseError(f"growth = {growth!r:.60} should be one number: the factor by which each of the "
                            "other three weights grows.")
    try:
        g = float(np.asarray(growth, dtype=float).reshape(()))
    except (TypeError, ValueError):
        raise ExerciseError(f"growth should be one number, but it is a {type(growth).__name__}.") from None
    right = 1 / (1 - taken)
    if abs(g - right) <= ROUNDED:
        return
    near = [(1 - taken, f"growth = {g:.3f} is 1 - {taken:.3f}, what each weight is divided by: dividing by "
             "a number below 1 makes a weight larger, by the inverse of that number."),
            (1 + taken, f"growth = {g:.3f} adds flows' unmasked weight, {taken:.3f}, to 1: the weights grow "
             "in proportion, each divided by the new row sum, not by a fixed amount."),
            (taken, f"growth = {g:.3f} is the weight the mask takes away from flows, not the factor by which "
             "the other weights grow."),
            (100 * (right - 1), f"growth = {g:.3f} is the increase as a percentage: give the factor itself, by "
             "which each weight is multiplied (a number near 1, not a percentage).")]
    for value, text in near:
        if abs(g - value) <= ROUNDED * max(1.0, value):
            raise ExerciseError(f"flows_row is right, but {text}")
    raise ExerciseError(f"flows_row is right, but growth = {g:.3f} is not the factor: compare a weight of "
                        "flows_row with the same weight in flows' row without the mask.")


# --------------------------------------------------------------------------- exercise 3
#: Exercise 3's layer: a sentence of COST_T words, vectors of COST_D numbers (d = d_model).
COST_T, COST_D = 300, 48


def _count(name: str, value: Any) -> float:
    """``value`` as one whole number (a count), or an ExerciseError that says what it is instead."""
    if value is None or value is Ellipsis:
        raise ExerciseError(f"{name} has no value yet: replace None with a number.")
    if isinstance(value, (str, bytes)):
        raise ExerciseError(f"{name} = {value!r:.40} is text: give a number, not a string in quotes.")
    try:
        x = np.asarray(value.detach().cpu().numpy() if hasattr(value, "detach") else value, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(f"{name} should be one number, but it is a {type(value).__name__}.") from None
    if x.size != 1:
        raise ExerciseError(f"{name} has shape {x.shape}; it should be one number.")
    v = float(x.reshape(()))
    if not np.isfinite(v):
        raise ExerciseError(f"{name} is not finite ({v}); give an ordinary number.")
    if abs(v - round(v)) > 1e-9 * max(1.0, abs(v)):
        raise ExerciseError(
            f"{name} = {v:g} is not a whole number: a count of multiply-adds (or of words) is a whole number, "
            "which a timing, or a ratio of timings, cannot give. Count from the shapes instead.")
    return float(round(v))


def check_layer_costs(attention_madds: Any, recurrent_madds: Any, T_equal: Any) -> None:
    """Exercise 3: one layer's multiply-adds for T = COST_T words of d = COST_D numbers, and the break-even T.

    attention_madds: those of X X^T (T x T dot products of length d) and A X (T rows, each a sum of T vectors of
    length d): 2 T^2 d; the softmax has exponentials and divisions, no multiply-adds. recurrent_madds: T steps, each
    h_{t-1} W_h with W_h of shape (d, d): T d^2. T_equal: where 2 T^2 d = T d^2, T = d / 2. Each known mistake
    (one product only, T d for T^2 d, T and d swapped, the softmax counted, one step only, an input projection
    x_t W_x counted, the factor 2 dropped) is named.
    """
    T, d = COST_T, COST_D
    a = _count("attention_madds", attention_madds)
    r = _count("recurrent_madds", recurrent_madds)
    t = _count("T_equal", T_equal)
    given = f"(T = {T}, d = {d})"
    attention = {
        T * T * d: "you counted only one of the two products: X X^T costs T^2 d multiply-adds, and A X, "
                   "T rows each summing T vectors of length d, costs as much again.",
        T * d: "you counted T d instead of T^2 d: X X^T has T x T entries, not T, each a dot product of length d.",
        2 * T * d: "you counted T d instead of T^2 d for each product: X X^T has T x T entries, not T, each a "
                   "dot product of length d.",
        T * d * d: "you mixed up T and d: T d^2 is the recurrent layer's count; attention's entries are T x T "
                   "dot products of length d.",
        2 * T * d * d: "you mixed up T and d: attention's score matrix is T x T, with dot products of length d, "
                       "not d x d.",
        2 * T * T * d + T * T: "you counted the softmax: its T^2 exponentials and divisions are not "
                               "multiply-adds; count only the two matrix products.",
        T * T * d + T * T: "you counted the softmax, and only one of the two products: count the multiply-adds "
                           "of X X^T and of A X.",
        4 * T * T * d: "you counted FLOPs, 2 per multiply-add (one multiply, one add): the exercise counts "
                       "multiply-adds, 2 T^2 d.",
    }
    if a != 2 * T * T * d:
        raise ExerciseError(f"attention_madds = {a:,.0f} {given}: " + attention.get(
            a, "that is not the count. X X^T: how many entries, and how many multiply-adds each? Then A X: "
               "how many rows, each a sum of how many vectors of which length?"))
    recurrent = {
        d * d: "you counted one step: the layer takes T steps, each multiplying h_{t-1} by W_h.",
        T * d: "each step multiplies h_{t-1} (d numbers) by W_h, a d x d matrix: d^2 multiply-adds per "
               "step, not d.",
        T * T * d: "you mixed up T and d: the recurrent layer does T products of a d-vector with a d x d "
                   "matrix.",
        T * d * d + T * d: "you counted the additions of x_t: adding x_t is T d additions, not multiply-adds; "
                           "count the T products h_{t-1} W_h.",
        2 * T * d * d: "that counts an input projection x_t W_x too: this exercise counts h_{t-1} W_h only, as "
                       "the table does.",
        (T - 1) * d * d: "you counted T - 1 products, as the lesson's recurrent() runs (it skips the product at "
                         "t = 0, where h_{-1} = 0): the table counts one product h_{t-1} W_h per step, T of them.",
    }
    if r != T * d * d:
        raise ExerciseError(f"recurrent_madds = {r:,.0f} {given}: " + recurrent.get(
            r, "that is not the count. How many steps, and how many multiply-adds in one product h_{t-1} W_h?"))
    equal = {
        d: "you dropped the factor 2: T = d is where T^2 d = T d^2, the table's O(.) comparison, but the count "
           "is 2 T^2 d (two products).",
        2 * d: "the factor 2 is on the wrong side: solve 2 T^2 d = T d^2 for T.",
        T: "T_equal is the length at which the two counts are equal, not the T of the first two answers.",
        d * d / 2: "divide both sides of 2 T^2 d = T d^2 by T d, not by T^2: T is left on one side.",
    }
    if t != d / 2:
        raise ExerciseError(f"T_equal = {t:g}: " + equal.get(
            t, f"that is not where the counts meet. Write both counts for a general T with d = {d}, set them "
               "equal and solve for T."))
    passed(f"attention {a:,.0f} against recurrent {r:,.0f} multiply-adds at T = {T}: {a / r:.1f} times as many. "
           f"Counting these products only, they are equal at T = d / 2 = {t:g}; above it attention does more "
           f"work, in one sequential step instead of T.")
