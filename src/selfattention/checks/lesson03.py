"""Checks for lesson 03 (the matrix form of basic self-attention).

Every check builds its own inputs (the lesson's toy vectors, seeded random arrays with large values, or the
real static embedding table) and its own reference answer, and names the typical mistakes of its exercise in
words.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import textwrap
import tokenize
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._engine import (
    ExerciseError,
    body_lines,
    check_function,
    code_names,
    is_learners,
    learners_functions,
    passed,
    reference_softmax,
    source,
    stand_ins,
    used_objects,
)
from ._engine import (
    lines_run as count_lines,
)

__all__ = ["check_self_attention_batch", "check_masked_row", "check_grows_attends"]

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


#: Exercise 1's shortcuts: any function the learner did not write whose name says attention, or the packaged mask.
_READY_MADE = re.compile(r"attention|^padding_mask$|^causal_mask$", re.I)


def ready_made(fn: Callable[..., Any]) -> str | None:
    """The ready-made attention or mask that ``fn``, or a function of the learner's that it reaches, uses, named
    as the learner would know it (``sa.scaled_dot_product_attention``, ``torch's scaled_dot_product_attention``),
    or None. Seen by name in the code (``sa.f(...)``, ``F.f(...)``, ``torch.nn.functional.f(...)``) and by
    object, also when kept under another name first (``f = sa.scaled_dot_product_attention`` in another cell, a
    ``functools.partial`` of it). The learner's own functions are not shortcuts, whatever their names, nor is a
    module (``selfattention.softmax`` is allowed)."""
    home = getattr(fn, "__module__", None)

    def label(name: str, obj: Any = None) -> str:
        module = getattr(obj, "__module__", None) or ""
        if module.startswith("selfattention") or (obj is None and name in ("basic_self_attention",
                                                                           "scaled_dot_product_attention",
                                                                           "padding_mask", "causal_mask")):
            return f"sa.{name}"
        return f"{module.split('.')[0] or 'a library'}'s {name}"

    for f in learners_functions(fn):
        code = getattr(f, "__code__", None)
        if code is None:
            continue
        if any(name.startswith("selfattention.checks") for name in code_names(code)):
            continue  # it imports from the checks: the engine refuses a call of theirs, naming it
        scope = getattr(f, "__globals__", {})
        torch_used = "torch" in code_names(code) or any(
            (getattr(g, "__name__", "") or "").startswith("torch") for g in used_objects(f).values())
        for name in sorted(code_names(code) - {f.__name__}, key=lambda n: ("mask" in n, n)):   # attention first
            bound = scope.get(name)
            if _READY_MADE.search(name) and not is_learners(bound, home) and not isinstance(bound, type(np)):
                return f"torch's {name}" if torch_used and name != "basic_self_attention" else label(name)
        for alias, g in sorted(used_objects(f).items(), key=lambda kv: ("mask" in kv[0], kv[0])):
            g = getattr(g, "func", g)                        # a functools.partial: the function inside
            name = getattr(g, "__name__", "")
            if callable(g) and not is_learners(g, home) and isinstance(name, str) and _READY_MADE.search(name):
                shown = label(name, g)
                return shown if alias == name else f"{shown} (as {alias})"
    return None


class ReadyMadeCalled(Exception):
    """Raised by the stand-ins of ready-made attentions and masks while a learner's self_attention_batch runs."""


#: Where the ready-made attentions and masks live: module name -> attribute names.
_READY_MADE_PLACES = {
    "torch": ("scaled_dot_product_attention",),
    "torch.nn.functional": ("scaled_dot_product_attention", "multi_head_attention_forward"),
}
_SA_READY_MADE = ("basic_self_attention", "scaled_dot_product_attention", "padding_mask", "causal_mask")


def ready_made_blocked() -> contextlib.AbstractContextManager[None]:
    """While the block runs, the ready-made attentions and masks of selfattention (in every module of the
    package that holds them) and of PyTorch raise ReadyMadeCalled, however the learner's code reached them
    (``getattr(importlib.import_module(...), "scaled_dot_" + "product_attention")`` included);
    :func:`~selfattention.checks._engine.stand_ins` does the replacing and puts everything back."""
    places = [(sys.modules.get(name), attrs) for name, attrs in _READY_MADE_PLACES.items()]
    places += [(module, _SA_READY_MADE) for name, module in list(sys.modules.items())
               if (name == "selfattention" or name.startswith("selfattention."))
               and not name.startswith("selfattention.checks")]
    return stand_ins(places, ReadyMadeCalled)


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
        (np.array([1, 1, 1, 0]) / 3, "flows_row gives the three other words equal weights: the mask removes "
         f"one weight, but the scores ({scores}) still decide the rest."),
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
    if np.allclose(np.sort(got), np.sort(right), rtol=0, atol=ROUNDED):
        raise ExerciseError(f"flows_row = {_fmt(got)} holds the right weights in the wrong order: write them "
                            f"in the sentence's order, a, river, bank, flows ({', '.join(ROW_SENTENCE)}).")
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
    off = np.abs(got - right) > ROUNDED
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
#: Exercise 3's sentence: "money grows" and then the learner's word; the row read is that of "grows", a short
#: vector (|grows| = 0.592) that already gives money more weight than itself.
DESIGN_SENTENCE, DESIGN_WORD = ("money", "grows"), "grows"
#: How far above the shortest vector that takes half of grows' row a right answer may be.
SHORTEST_TOLERANCE = 0.005
#: The least cosine with grows' direction a right answer may have: the shortest vector points along grows.
ALONG = 0.999
#: The weight that counts as half of the row: 0.5 to three decimals, so a vector rounded to 3 decimals passes.
HALF = 0.4995


def _apart(a: float, b: float) -> str:
    """'a > b' with enough decimals (3 to 8) that the two numbers printed differ."""
    for places in range(3, 9):
        if f"{a:.{places}f}" != f"{b:.{places}f}":
            break
    return f"{a:.{places}f} > {b:.{places}f}"


def check_grows_attends(x_new: Any) -> None:
    """Exercise 3: the shortest toy vector x_new (4,) after "money grows" that gets at least half of grows' weight.

    The row of "grows" in the sentence (money, grows, new word) depends only on the three scores
    grows . money = 0.53, grows . grows = 0.35 and omega = grows . x_new; half the row needs e^omega >= e^0.53 + e^0.35,
    omega = 1.137, and the shortest such x_new points along grows with length omega / |grows| = 1.922, over three times
    |grows| = 0.592. A right answer takes half the row (HALF = 0.4995 or more), points along grows
    (cos theta >= ALONG) and is at most SHORTEST_TOLERANCE longer than that; the message says what is wrong.
    """
    if x_new is None or x_new is Ellipsis:
        raise ExerciseError("x_new has no value yet: replace `...`/None with an array of 4 numbers.")
    if isinstance(x_new, str) or (isinstance(x_new, (list, tuple, np.ndarray)) and any(
            isinstance(v, str) for v in np.ravel(np.asarray(x_new, dtype=object)))):
        raise ExerciseError(f"x_new = {x_new!r:.60} holds text: x_new should be 4 numbers (finance, nature, food, "
                            "tech), not strings in quotes.")
    try:
        v = np.asarray(x_new.detach().cpu().numpy() if hasattr(x_new, "detach") else x_new, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(
            f"x_new should be 4 numbers (finance, nature, food, tech), but it is a {type(x_new).__name__}: "
            f"{x_new!r:.80}"
        ) from None
    if v.shape != (4,):
        raise ExerciseError(
            f"x_new has shape {v.shape}; it should be one toy vector of shape (4,): finance, nature, food, tech."
        )
    if not np.isfinite(v).all():
        raise ExerciseError("x_new contains NaN or infinite values; use ordinary finite numbers.")
    other, word = DESIGN_SENTENCE
    focus = _TOY[word]
    pos = word + ("'" if word.endswith("s") else "'s")    # grows'
    X = np.vstack([_TOY[other], focus, v])                 # (3, 4)
    with np.errstate(over="ignore", invalid="ignore"):
        scores = X @ focus                                 # (3,): grows . money, grows . grows, grows . x_new
        length = float(np.linalg.norm(v))
    if not np.isfinite(scores).all() or not np.isfinite(length):
        raise ExerciseError(
            f"x_new is so long that {word} . x_new overflows ({scores[2]}); numbers below 10 are plenty."
        )
    weights = reference_softmax(scores)
    lead, own, score = float(scores[0]), float(scores[1]), float(scores[2])
    norm = float(np.linalg.norm(focus))                    # 0.592
    needed = float(np.logaddexp(lead, own))                # the score that takes exactly half: 1.137
    shortest = needed / norm                               # its length along grows: 1.922
    said = (f"{pos} scores are {_fmt(scores)} ({other}, {word}, your word), so its weights are "
            f"{_fmt(weights)}.")
    cos = score / (length * norm) if length > 0 else 0.0
    if weights[2] >= HALF and cos >= ALONG and length <= shortest * (1 + SHORTEST_TOLERANCE):
        passed(f"{said} Your word takes {weights[2]:.3f} of {pos} weight with |x_new| = {length:.3f}. "
               f"Half the row needs e^omega = e^{lead:.2f} + e^{own:.2f}, omega = {needed:.3f}; along {word} that "
               f"is a length omega / |{word}| = {shortest:.3f}, {shortest / norm:.1f} times {pos} own length "
               f"({norm:.3f}): a short word's scores are small, so the word it looks at must be long.")
        return
    if cos > ALONG:                                        # along grows: which wrong number was used?
        summed = lead + own                                # 0.88: the scores added, not their e^score
        exps = float(np.exp(lead) + np.exp(own))           # 3.118: e^omega itself, the log forgotten
        then = f"Then find the length along {word} that gives that score."
        if abs(score - exps) <= 0.005 * exps or abs(length - exps) <= 0.003 * exps:
            which = (f"your word's score is {score:.3f}" if abs(score - exps) <= 0.005 * exps
                     else f"x_new's length is {length:.3f}")
            raise ExerciseError(
                f"you forgot the log: {which}, the value of e^omega itself. e^omega must equal e^{lead:.2f} + "
                f"e^{own:.2f} = {exps:.3f}, so omega is the log of that sum, not the sum itself. "
                f"{said} {then}")
        if any(abs(x - summed) <= 0.005 * summed for x in (score, length)):
            raise ExerciseError(
                f"you added the scores, {lead:.2f} + {own:.2f} = {summed:.2f}: weights go by e^score, not by the "
                f"score, so adding scores does not add their shares of the row. {said}")
        three = float(np.logaddexp.reduce([lead, own, float(_TOY["bank"] @ focus)]))   # bank counted too
        if abs(length - three / norm) <= 0.004 * three / norm:
            raise ExerciseError(
                f"x_new has length {length:.3f}, the length that takes half of {pos} row in \"money bank grows\": "
                f"you counted bank's score too. The sentence is \"{other} {word}\" and then your word, so half "
                f"the row needs e^omega = e^{lead:.2f} + e^{own:.2f} only. {said}")
        if abs(length - needed) <= 0.004 * needed:
            raise ExerciseError(
                f"x_new points along {word} with length {length:.3f}, the score omega = {needed:.3f} itself: you "
                f"took the score for the length. {said} The score is a dot product, x_{word} . x_new = "
                f"|x_{word}| |x_new| cos theta = {norm:.3f} |x_new| along {word}, so the length must be omega "
                f"divided by |x_{word}|.")
        if abs(length - needed * norm) <= 0.004 * needed * norm:
            raise ExerciseError(
                f"x_new is {pos} own vector times omega = {needed:.3f} (length {length:.3f}): you scaled "
                f"x_{word}, whose length is {norm:.3f}, not its unit vector, so the score is omega |x_{word}|^2 = "
                f"{score:.3f}, not omega. {said} Along {pos} direction the score is |x_{word}| |x_new|, so "
                f"|x_new| must be omega divided by |x_{word}|.")
    if weights[2] >= HALF:
        if cos < ALONG:
            raise ExerciseError(
                f"x_new takes half of {pos} row, but it is not along {pos} direction (cos theta = "
                f"{cos:.3f}, below {ALONG}): the part off {pos} direction adds length and no score. {said} "
                f"The shortest vector for a given score x_{word} . x_new points along {word}.")
        raise ExerciseError(
            f"x_new takes half of {pos} row, but it is longer than it needs to be: |x_new| = {length:.3f}, "
            f"more than {SHORTEST_TOLERANCE:.1%} above the shortest vector that does it. {said} Work out the "
            "score omega that gives your word exactly half (its e^omega against the other two), then the "
            f"length along {word} that gives that score; if you round, keep 3 decimals and round up.")
    if np.allclose(v, focus):
        raise ExerciseError(
            f"x_new is {pos} own vector: a tie with {pos} own score ({own:.3f}), and {other}'s "
            f"{lead:.3f} is higher still. {said} Your word needs a projection on {pos} direction, "
            "|x_new| cos(theta), much longer than that.")
    if score <= 0:
        raise ExerciseError(
            f"x_new points away from {word} or across it ({word} . x_new = {score:.3f} <= 0). {said} Point "
            f"it along {word}: the shortest vector for a given score does.")
    if cos < ALONG:
        raise ExerciseError(
            f"x_new is not along {pos} direction (cos theta = {cos:.3f}) and takes {weights[2]:.3f} of "
            f"{pos} row, less than half. {said} Fix the direction first: the part across {word} adds length "
            f"and no score, so the shortest vector for a given score x_{word} . x_new points along {word}; "
            "then find the length that gives the score you need.")
    if score <= lead:
        raise ExerciseError(
            f"x_new is too short: {word} . x_new = {score:.3f} is not above the row's "
            f"largest score, {other}'s {lead:.3f}. {said} Its projection on {pos} direction, |x_new| "
            f"cos(theta) = {score / norm:.3f}, is not even as long as {other}'s ({lead / norm:.3f}), which "
            f"already beats {pos} own length ({norm:.3f}).")
    if weights[2] >= 0.49:
        raise ExerciseError(
            f"x_new is just short: it takes {weights[2]:.5f} of {pos} weight, below one half (0.4995 "
            f"counts). {said} The length along {word} must reach omega / |{word}|, with omega the score that takes "
            "exactly half: if you rounded, round up.")
    raise ExerciseError(
        f"x_new now has {pos} largest score ({_apart(score, lead)}) but only {weights[2]:.4f} of its "
        f"weight, below one half: the other two words still share the rest. {said} Its score omega must make e^omega "
        "as large as the other two words' e^score together.")
