"""Feedback for exercises: compare a learner's answer with the right one and say, in words,
what is wrong.

A failed check raises :class:`ExerciseError`. It is an ``AssertionError`` (so the autograder
counts the test as failed) whose traceback IPython replaces with the message alone: a
learner reads one paragraph, not a stack of frames. A passed check prints one line that
starts with "Correct".
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import os
import re
import signal
import sys
import sysconfig
import threading
import traceback
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "ExerciseError",
    "call_with_time_limit",
    "check_array",
    "check_function",
    "check_value",
    "passed",
    "refuses_references",
]


class ExerciseError(AssertionError):
    """An exercise answer is wrong; the message says why, in plain words."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return ["\033[1;31mNot yet:\033[0m " + str(self).replace("\n", "\n  ")]


def reference_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """The checks' own softmax along ``axis`` (same shape as ``x``), independent of the learner's code."""
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def passed(message: str) -> None:
    """Print the one success line of a check (unless the learner's code called a reference on the way, and
    caught what that raised: then the check fails, see :func:`refusing_references`)."""
    if _calls:
        raise _ReferenceCalled
    print(f"Correct: {message}")


def _fmt(x: Any) -> str:
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.4g}"
    arr = np.asarray(x)
    if arr.ndim == 0:
        return f"{arr.item():.4g}" if np.issubdtype(arr.dtype, np.number) else repr(x)
    with np.printoptions(precision=3, suppress=True, threshold=20, edgeitems=2):
        return np.array2string(arr, separator=", ")


def _to_array(got: Any, name: str, *, empty: str | None = None, not_numbers: str | None = None) -> np.ndarray:
    """``got`` as a float array, or an ExerciseError that names ``name``. A check with its own words passes
    ``empty`` (the message for None or ``...``) and ``not_numbers`` (for a function or anything else that is
    not numbers); otherwise the general messages below are used."""
    if empty is not None and (got is None or got is Ellipsis):
        raise ExerciseError(empty)
    if got is None:
        raise ExerciseError(
            f"{name} is None: write your code in the answer cell above "
            f"(and, in a function, `return` the result)."
        )
    if got is Ellipsis:
        raise ExerciseError(f"{name} is still `...`: replace it with your code.")
    if callable(got) and not hasattr(got, "__array__"):
        raise ExerciseError(not_numbers or
            f"{name} is a function, not an array of numbers: call it and store what it returns."
        )
    if hasattr(got, "detach"):  # a torch tensor
        got = got.detach().cpu().numpy()
    try:
        arr = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise ExerciseError(not_numbers or
            f"{name} should be an array of numbers, but it is a {type(got).__name__}: {got!r:.80}"
        ) from None
    return arr


def _bad_values(arr: np.ndarray, name: str) -> str | None:
    bad = ~np.isfinite(arr)
    if not bad.any():
        return None
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    kind = "NaN" if np.isnan(arr[where]) else "infinite"
    return (
        f"{name} contains {int(bad.sum())} NaN or infinite value(s); the first, at index {where}, "
        f"is {kind}. If you take exponentials, large scores overflow: subtract each row's maximum "
        f"before calling np.exp (softmax is unchanged by that shift). A division by zero gives "
        f"inf or NaN too."
    )


def _scale_factor(got: np.ndarray, expected: np.ndarray) -> float | None:
    """The scalar c with got ~= c * expected, if there is one (and c != 1)."""
    denom = float(np.sum(expected * expected))
    if denom == 0.0:
        return None
    c = float(np.sum(got * expected)) / denom
    if abs(c - 1.0) < 1e-3 or not np.allclose(got, c * expected, rtol=1e-4, atol=1e-8):
        return None
    return c


def _shape_problem(arr: np.ndarray, expected: np.ndarray, name: str) -> str:
    """Words for a shape mismatch: transposed, an axis reduced away, an extra axis, reshaped."""
    got, want = arr.shape, expected.shape
    if arr.ndim >= 2 and arr.ndim == expected.ndim and got[:-2] + got[-2:][::-1] == want:
        return (f"{name} has shape {got}, but the answer has shape {want}: it looks transposed "
                f"(rows and columns swapped).")
    if arr.ndim == expected.ndim - 1:
        axes = [axis for axis in range(expected.ndim) if want[:axis] + want[axis + 1:] == got]
        if axes:
            which = f"the axis {axes[0]}" if len(axes) == 1 else "one axis"
            return (f"{name} has shape {got}, but it should have shape {want}: {which} "
                    f"(length {want[axes[0]]}) is missing. Did you sum, average or take the maximum "
                    f"over an axis that should stay?")
    if arr.ndim == expected.ndim + 1 and 1 in got:
        for axis in range(arr.ndim):
            if got[axis] == 1 and got[:axis] + got[axis + 1:] == want:
                return (f"{name} has shape {got}, but it should have shape {want}: it has an extra "
                        f"axis of length 1 at position {axis} (keepdims=True, or a [None] too many?).")
    if arr.size == expected.size:
        return (f"{name} has shape {got}, but it should have shape {want}. It has the right number "
                f"of entries, so check the order of the axes (a transpose or reshape too many or few).")
    return f"{name} has shape {got}, but it should have shape {want}."


def _slice_factors(arr: np.ndarray, expected: np.ndarray, axis: int) -> np.ndarray | None:
    """If every slice along ``axis`` of ``arr`` is a multiple of the same slice of ``expected``,
    the factors (one per slice); else None."""
    num = np.sum(arr * expected, axis=axis, keepdims=True)
    den = np.sum(expected * expected, axis=axis, keepdims=True)
    if np.any(den == 0):
        return None
    factors = num / den
    if not np.allclose(arr, factors * expected, rtol=1e-4, atol=1e-8):
        return None
    return np.squeeze(factors, axis=axis)


def _name_factor(c: float) -> str:
    """``2.0`` -> "2 (= sqrt(4))", ``0.5`` -> "0.5 (= 1/sqrt(4))": a missing or doubled 1/sqrt(d_k)
    shows up as such a factor."""
    for value, template in ((c, "sqrt({k})"), (1.0 / c if c else 0.0, "1/sqrt({k})")):
        k = round(value * value)
        if value > 1 and 2 <= k <= 4096 and np.isclose(value * value, k, rtol=1e-4):
            return f"{_fmt(c)} (= {template.format(k=k)})"
    return _fmt(c)


def _learner_line(exc: BaseException) -> str:
    """" in line 3 of your code (`return x / y`)" for the deepest frame in a notebook cell."""
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__)
        if "ipykernel_" in f.filename or f.filename.startswith("<ipython-input") or f.filename == "<string>"
    ]
    if not frames:
        return ""
    frame = frames[-1]
    code = f" (`{frame.line.strip()}`)" if frame.line else ""
    return f" in line {frame.lineno} of your code{code}"


def check_array(
    got: Any,
    expected: Any,
    name: str,
    *,
    mistakes: Mapping[str, Any] | None = None,
    scale_hints: Mapping[str, float] | None = None,
    any_scale: bool = False,
    rows_sum_to_one: bool = False,
    rtol: float = 1e-5,
    atol: float = 1e-8,
) -> None:
    """Raise :class:`ExerciseError` with a plain-words diagnosis unless ``got`` matches.

    Inputs:
        got: the learner's answer (array-like or tensor).
        expected: the right answer, same shape.
        name: how to call the answer in messages ("your weights A").
        mistakes: known wrong answers for these inputs, ``{explanation: wrong_array}``;
            if ``got`` equals one of them, that explanation is the message.
        scale_hints: ``{explanation: factor}``; if ``got == factor * expected``, say so.
        any_scale: an answer that is some other multiple of the right one (two or more numbers) is
            named as such ("exactly 2 (= sqrt(4)) times the right answer"). Opt in only where a missing
            or wrong factor is the likely slip: a single wrong number is always a multiple of the
            right one, and most wrong arrays are not one by chance.
        rows_sum_to_one: the answer is a matrix of attention weights.
    """
    expected = np.asarray(expected, dtype=float)
    arr = _to_array(got, name)
    if arr.shape != expected.shape:
        raise ExerciseError(_shape_problem(arr, expected, name))
    problem = _bad_values(arr, name)
    if problem:
        raise ExerciseError(problem)
    if np.allclose(arr, expected, rtol=rtol, atol=atol):
        return
    for explanation, wrong in (mistakes or {}).items():
        wrong = np.asarray(wrong, dtype=float)
        if wrong.shape == arr.shape and np.allclose(arr, wrong, rtol=rtol, atol=atol):
            raise ExerciseError(f"{name} is not right yet: {explanation}")
    if arr.ndim >= 2 and arr.shape[-1] == arr.shape[-2]:
        if np.allclose(np.swapaxes(arr, -1, -2), expected, rtol=rtol, atol=atol):
            raise ExerciseError(
                f"{name} is the transpose of the right answer: check the order of your matrix "
                f"product (for example Q @ K.T, not K @ Q.T)."
            )
    if rows_sum_to_one and arr.ndim >= 1:
        sums = arr.sum(axis=-1)
        off = np.abs(sums - 1.0) > 1e-6
        if off.any():
            i = tuple(int(j) for j in np.argwhere(off)[0])
            row = i if len(i) > 1 else i[0]
            cols = arr.sum(axis=-2) if arr.ndim >= 2 else None
            if cols is not None and np.allclose(cols, 1.0, atol=1e-6):
                raise ExerciseError(
                    f"the columns of {name} sum to 1 but its rows do not (row {row} sums to "
                    f"{_fmt(sums[i])}): softmax was taken over the wrong axis; use axis=-1, so "
                    f"that each query's weights over the keys sum to 1."
                )
            raise ExerciseError(
                f"row {row} of {name} sums to {_fmt(sums[i])}; each row of attention weights must "
                f"sum to 1. Did you normalise (divide by the row's sum of exponentials)?"
            )
        if (arr < 0).any():
            raise ExerciseError(f"{name} has negative entries; softmax weights are never negative.")
    if (arr.ndim >= 2 and np.allclose(expected.sum(axis=-1), 1.0, atol=1e-6)
            and np.allclose(arr.sum(axis=-2), 1.0, atol=1e-6)):
        raise ExerciseError(
            f"the columns of {name} sum to 1, but in the right answer the rows do: the normalisation "
            f"(softmax) was taken over the wrong axis; use axis=-1."
        )
    c = _scale_factor(arr, expected)
    if c is not None:
        for explanation, factor in (scale_hints or {}).items():
            if np.isclose(c, factor, rtol=1e-4):
                raise ExerciseError(f"{name} is {_fmt(c)} times the right answer: {explanation}")
        if any_scale and arr.size > 1:
            raise ExerciseError(
                f"{name} is exactly {_name_factor(c)} times the right answer: a scale factor is missing "
                f"or wrong."
            )
    if arr.ndim >= 2:
        for axis, what in ((-1, "row"), (-2, "column")):
            factors = _slice_factors(arr, expected, axis)
            if factors is not None and not np.allclose(factors, factors.flat[0], rtol=1e-4):
                where = "each row" if what == "row" else "each column"
                raise ExerciseError(
                    f"{where} of {name} is a multiple of the right one, by a different factor each "
                    f"time (from {_fmt(factors.min())} to {_fmt(factors.max())}): a normalisation is "
                    f"missing or taken over the wrong axis (softmax divides each row by that row's "
                    f"sum of exponentials)."
                )
    diff = np.abs(arr - expected)
    where = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape))
    raise ExerciseError(
        f"{name} differs from the right answer. The largest difference is at index {where}: "
        f"you have {_fmt(arr[where])}, the right value is {_fmt(expected[where])}."
    )


def check_value(got: Any, expected: float, name: str, *, hints: Mapping[str, float] | None = None,
                rtol: float = 1e-5, atol: float = 1e-8) -> None:
    """Check a single number; ``hints`` maps an explanation to a known wrong value."""
    if got is None or got is Ellipsis:
        raise ExerciseError(f"{name} has no value yet: replace `...`/None with your answer.")
    try:
        value = float(np.asarray(got).item()) if hasattr(got, "__array__") else float(got)
    except (TypeError, ValueError):
        raise ExerciseError(f"{name} should be a number, but it is a {type(got).__name__}: {got!r:.80}") from None
    if np.isclose(value, expected, rtol=rtol, atol=atol):
        return
    for explanation, wrong in (hints or {}).items():
        if np.isclose(value, wrong, rtol=rtol, atol=atol):
            raise ExerciseError(f"{name} = {_fmt(value)} is not right yet: {explanation}")
    raise ExerciseError(f"{name} = {_fmt(value)}, but the right value is not that. Recheck your working.")


def as_word_list(name: str, value: Any, example: str, *, wanted: str = "a list of words") -> list[Any]:
    """The learner's list of words ``value`` (named ``name``) as a list, its items not yet checked; or an
    ExerciseError for no value (None or ``...``: replace it with ``wanted``), one string instead of a list (make it
    a list, such as ``example``) and something that is not a list at all."""
    if value is None or value is Ellipsis:
        raise ExerciseError(f"{name} has no value yet: replace None with {wanted}.")
    if isinstance(value, (str, bytes)):
        raise ExerciseError(f"{name} is one string, {value!r:.60}: make it a list of words, such as {example}.")
    try:
        return list(value)
    except TypeError:
        raise ExerciseError(f"{name} should be a list of words, but it is a {type(value).__name__}.") from None


def as_predicted_number(value: Any, empty: str, not_a_number: str) -> float:
    """A number the learner predicted, as a float; an ExerciseError with ``empty`` when it has no value yet (None
    or ``...``), with ``not_a_number`` when ``float`` refuses it."""
    if value is None or value is Ellipsis:
        raise ExerciseError(empty)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ExerciseError(not_a_number) from None


def _copied(case: Sequence[Any]) -> tuple[Any, ...]:
    try:
        return tuple(copy.deepcopy(tuple(case)))
    except Exception:  # something that cannot be copied (a generator, a lock): pass it as it is
        return tuple(case)


def check_function(
    fn: Callable[..., Any],
    reference: Callable[..., Any],
    cases: Iterable[Sequence[Any]],
    name: str,
    *,
    describe: Callable[[Sequence[Any]], str] | None = None,
    **check_kwargs: Any,
) -> None:
    """Call ``fn`` and ``reference`` on every case and compare with :func:`check_array`.

    Inputs:
        fn: the learner's function. reference: the right one (same signature).
        cases: argument tuples to try, simplest first.
        name: the function's name in messages.
        describe: turns a case into words for the message (default: the argument shapes).
        check_kwargs: passed on to :func:`check_array` (``rows_sum_to_one``, ``scale_hints``...);
            ``mistakes`` may be a callable ``case -> {explanation: wrong_array}``.
    """
    if fn is None or fn is Ellipsis:
        raise ExerciseError(f"{name} is not defined yet: write the function in the answer cell above.")
    if not callable(fn):
        raise ExerciseError(f"{name} should be a function, but it is a {type(fn).__name__}.")
    mistakes = check_kwargs.pop("mistakes", None)
    for case in cases:
        what = describe(case) if describe else "inputs of shape " + ", ".join(
            str(np.shape(a)) for a in case
        )
        try:
            got = fn(*_copied(case))  # a function that changes its inputs changes a copy
        except NotImplementedError:
            raise ExerciseError(
                f"{name} still raises NotImplementedError: replace that line with your code."
            ) from None
        except ExerciseError:
            raise
        except Exception as exc:  # the learner's code crashed: say where, in one line
            raise ExerciseError(
                f"{name} raised {type(exc).__name__}{_learner_line(exc)} on {what}: {exc}"
            ) from None
        expected = reference(*case)
        known = mistakes(case) if callable(mistakes) else mistakes
        try:
            check_array(got, expected, f"the result of {name}", mistakes=known, **check_kwargs)
        except ExerciseError as err:
            raise ExerciseError(f"{err} (on {what})") from None


# --------------------------------------------------------------------------- the learner's code
# Some checks refuse a shortcut (a library softmax, a loop over the batch, autograd) by reading the code an answer
# runs. An answer may hide the shortcut in a helper it wrote, kept under any name, so each such check looks at the
# answer and at every function of the learner's that it reaches. One walker serves them all.
def code_names(code: Any) -> set[str]:
    """The global and attribute names a code object and the functions nested in it look up."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= code_names(const)
    return names


def used_objects(fn: Callable[..., Any]) -> dict[str, Any]:
    """What ``fn`` refers to by name: its global names (those of nested functions too) that are bound in its
    module, and its closure variables, each under its name. Empty for a function without Python code."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return {}
    scope = getattr(fn, "__globals__", {})
    used = {name: scope[name] for name in code_names(code) if name in scope}
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or (), strict=False):
        try:
            used[name] = cell.cell_contents
        except ValueError:  # an empty closure cell
            pass
    return used


def is_learners(f: Any, home: str | None) -> bool:
    """Whether ``f`` is a function the learner wrote: Python code defined in module ``home``."""
    return callable(f) and hasattr(f, "__code__") and getattr(f, "__module__", None) == home


def learners_functions(fn: Callable[..., Any]) -> list[Callable[..., Any]]:
    """``fn`` first, then every function the learner wrote that ``fn`` reaches through the names it uses
    (:func:`used_objects`), followed in turn; each once."""
    home = getattr(fn, "__module__", None)
    found: list[Callable[..., Any]] = []
    todo = [fn]
    while todo:
        f = todo.pop(0)
        if any(f is g for g in found):
            continue
        found.append(f)
        todo += [g for g in used_objects(f).values() if is_learners(g, home)]
    return found


def source(fn: Callable[..., Any]) -> str:
    """The source of ``fn``, or "" when Python cannot find it (a builtin, code typed at a bare prompt)."""
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""


def body_lines(fn: Callable[..., Any]) -> list[str]:
    """The lines of ``fn``'s body (its ``def`` header removed) without comments, or [] when Python cannot find
    its source."""
    text = re.sub(r"^\s*def\s+\w+\s*\(.*?\)\s*(->[^:]*)?:", "", source(fn), count=1, flags=re.S)
    return [re.sub(r"#.*$", "", line) for line in text.split("\n")] if text else []


class _StandIn:
    """Takes a function's place: calling it, or anything on it (``np.logaddexp.reduce``), raises ``error``."""

    def __init__(self, error: type[Exception]) -> None:
        self._error = error

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self._error("a blocked function was called")

    def __getattr__(self, name: str) -> Any:
        return self


@contextlib.contextmanager
def stand_ins(places: Iterable[tuple[Any, Iterable[str]]], error: type[Exception]) -> Iterator[None]:
    """While the block runs, each attribute ``attr`` of each ``(owner, attrs)`` in ``places`` (owners that are
    None, and attributes an owner lacks, are skipped) is replaced by a stand-in that raises ``error`` when
    called, so a call reached by any route (``getattr(owner, "na" + "me")`` included) is seen. Everything is
    put back afterwards."""
    saved: list[tuple[Any, str, Any]] = []
    missing = object()
    try:
        for owner, attrs in places:
            for attr in attrs if owner is not None else ():
                if hasattr(owner, attr):
                    saved.append((owner, attr, vars(owner).get(attr, missing)))
                    setattr(owner, attr, _StandIn(error))
        yield
    finally:
        for owner, attr, original in reversed(saved):
            if original is missing:
                delattr(owner, attr)                        # it was inherited (or made on demand): let it be again
            else:
                setattr(owner, attr, original)


# --------------------------------------------------------------------------- a learner's call, under a time limit
class _TimeUp(BaseException):
    """Raised inside a learner's code when its time is up; a BaseException, so ``except Exception`` in the
    learner's code does not swallow it."""


def call_with_time_limit(fn: Callable[..., Any], args: Sequence[Any], seconds: float, message: str) -> Any:
    """``fn(*args)``, or :class:`ExerciseError` with ``message`` if it runs longer than ``seconds`` (a loop that
    never stops must not hang the check). In the main thread a timer signal (``signal.setitimer``) interrupts
    the call; elsewhere (signals reach the main thread only) the call runs in a daemon thread that is waited
    for ``seconds`` and then left behind. Exceptions of ``fn`` propagate unchanged."""
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        def _ring(signum: int, frame: Any) -> None:
            raise _TimeUp

        previous = signal.signal(signal.SIGALRM, _ring)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return fn(*args)
        except _TimeUp:
            raise ExerciseError(message) from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    outcome: dict[str, Any] = {}

    def _run() -> None:
        try:
            outcome["value"] = fn(*args)
        except BaseException as exc:  # handed back to the caller's thread below
            outcome["error"] = exc

    worker = threading.Thread(target=_run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise ExerciseError(message)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def lines_run(fn: Callable[..., Any], calls: Sequence[Sequence[Any]],
              guard: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext,
              learner_only: bool = False) -> list[tuple[Any, int]]:
    """``fn(*args)`` for each ``args`` of ``calls``, with how many lines of Python code ran in it (in any
    function: the learner's, a lambda, a library's own Python), after one untraced warm-up call with the first
    ``args`` (first calls may import or cache): a list of (result, lines). Each call runs inside ``guard()``;
    an exception of ``fn`` propagates. Array code that handles a whole batch or every head in one operation runs
    the same lines whatever the sizes; a loop by any name (for, a comprehension, map with a lambda,
    functools.reduce, recursion, einsum or torch in a loop) runs more lines when the loop has more to do. This
    is how the checks tell a loop in Python by what it does, not by how it is written. With ``learner_only``,
    only lines of the learner's own code count (a notebook cell, a file of theirs: not NumPy's or PyTorch's
    Python, whose np.split runs lines once per piece though the learner wrote no loop)."""
    out: list[tuple[Any, int]] = []
    for i, args in enumerate((calls[0], *calls)):
        n = 0

        def local(frame: Any, event: str, arg: Any) -> Any:
            nonlocal n
            n += event == "line"
            return local

        old = sys.gettrace()
        with guard():
            if i:
                sys.settrace(lambda frame, event, arg: local if not learner_only
                             or _file_kind(frame.f_code.co_filename) == _LEARNER else None)
            try:
                got = fn(*args)
            finally:
                sys.settrace(old)
        if i:
            out.append((got, n))
    return out


# --------------------------------------------------------------------------- the checks' own code, off limits
# The reference answers live in this package, so an answer could call them (``from selfattention.checks.lesson12
# import _ablated``) and pass. Every module-level function of the package is therefore gated (its code is swapped
# for a gate that calls the original): while a check runs, a call made from the learner's code (the nearest
# caller that is not a library's is the learner's, not the check's) fails the check. The gate is on the function
# object itself, so aliases, re-exports, ``getattr`` and imports made before the check are all seen, and nothing
# else is slowed (no profile hook). Methods and nested functions (a stand-in, a callback the check hands over)
# are not references and stay open; a check itself, called from an answer, is refused too.
_CHECKS, _LIBRARY, _LEARNER = 0, 1, 2
_CHECKS_DIRS = tuple(
    {os.path.join(os.path.dirname(p), "") for p in (os.path.abspath(__file__), os.path.realpath(__file__))}
)
_LIBRARY_DIRS = tuple(
    {
        os.path.join(p, "")
        for base in (
            sys.prefix,
            sys.base_prefix,
            sys.exec_prefix,
            *sysconfig.get_paths().values(),
            os.path.dirname(_CHECKS_DIRS[0][:-1]),
        )
        for p in (os.path.abspath(base), os.path.realpath(base))
    }
)
_GATE = "__checks_gate__"  # the global name, in each module of the package, of the gates' way back
_kinds: dict[str, int] = {}
_originals: dict[str, Callable[..., Any]] = {}  # "module.name" -> a copy of the gated function as it was
_stand_ins: set[Any] = set()  # code of this package that a check hands to the learner's code (a stand-in)
_calls: list[str] = []  # the references the learner's code called while the outermost check ran
_depth = 0  # how many checks are running (a check may call another)


class _ReferenceCalled(BaseException):
    """Raised into the learner's code when it calls a reference; a BaseException, so ``except Exception`` in the
    learner's code or around a check's call of it lets it through to :func:`refusing_references`."""


def _file_kind(filename: str) -> int:
    """Whether code of ``filename`` is this package's (_CHECKS), a library's or the course's (_LIBRARY), or the
    learner's (_LEARNER: a notebook cell, a file of their own, ``exec``'d text)."""
    kind = _kinds.get(filename)
    if kind is None:
        path = filename if filename.startswith("<") else os.path.abspath(filename)
        if path.startswith(_CHECKS_DIRS):
            kind = _CHECKS
        elif filename.startswith("<frozen") or path.startswith(_LIBRARY_DIRS):
            kind = _LIBRARY
        else:
            kind = _LEARNER
        _kinds[filename] = kind
    return kind


def _refuse_if_learners(caller: Any, name: str) -> None:
    """Called on entry to ``name`` (a reference, or a check) while a check runs: if the nearest frame from
    ``caller`` on that is not a library's belongs to the learner's code, note ``name`` and stop the answer."""
    while caller is not None:
        kind = _file_kind(caller.f_code.co_filename)
        if kind == _CHECKS:
            return
        if kind == _LEARNER:
            _calls.append(name)
            raise _ReferenceCalled
        caller = caller.f_back


def __checks_gate__(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:  # noqa: N807
    """The gated function ``name``: refused when the learner's code calls it under a check, else the original."""
    if _depth:
        _refuse_if_learners(sys._getframe(2), name)
    return _originals[name](*args, **kwargs)


def _gate(fn: Any) -> None:
    """Swap the code of ``fn``, a module-level function of the package, for a gate to a copy of it, which
    ``fn.__wrapped__`` names (so ``inspect.signature`` and ``inspect.getsource`` see the function as written)."""
    code = fn.__code__
    name = f"{fn.__module__}.{fn.__qualname__}"
    original = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    original.__kwdefaults__ = fn.__kwdefaults__
    original.__dict__.update(fn.__dict__)
    _originals[name] = original
    text = "\n" * (code.co_firstlineno - 1) + f"def {fn.__name__}(*args, **kwargs):\n"
    text += f"    return {_GATE}({name!r}, args, kwargs)\n"
    scope: dict[str, Any] = {}
    exec(compile(text, code.co_filename, "exec"), scope)  # noqa: S102
    fn.__globals__[_GATE] = __checks_gate__
    fn.__code__ = scope[fn.__name__].__code__
    fn.__wrapped__ = original  # type: ignore[attr-defined]  # inspect.signature and getsource read the original


def gate_references(module: Any, *, keep: Iterable[str] = ()) -> None:
    """Gate every module-level function that ``module`` (of this package) defines, but those named in
    ``keep``, stand-ins and functions with closures; a decorated one (``lru_cache``, ``contextmanager``) is
    gated inside its decorator."""
    for attr, value in list(vars(module).items()):
        fn = value
        while not isinstance(fn, types.FunctionType) and hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        if (
            attr in keep
            or not isinstance(fn, types.FunctionType)
            or fn.__module__ != module.__name__
            or "." in fn.__qualname__
            or fn.__code__.co_freevars
            or fn.__code__ in _stand_ins
            or f"{fn.__module__}.{fn.__qualname__}" in _originals
            or _file_kind(fn.__code__.co_filename) != _CHECKS
        ):
            continue
        _gate(fn)


def not_a_reference(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``fn``, a module-level function of a check that the learner's code is meant to reach (a stand-in
    that raises the check's own message), as no reference: it is not gated."""
    _stand_ins.add(fn.__code__)
    return fn


def reference_called_message(name: str) -> str:
    """The learner's words for an answer that called the check's reference ``name``."""
    return f"your answer calls the check's own reference `{name}`; write it from the lesson's steps."


@contextlib.contextmanager
def refusing_references() -> Iterator[None]:
    """While the block runs, a call from the learner's code into a gated function of ``selfattention.checks``
    fails it with :class:`ExerciseError` (:func:`reference_called_message`), whatever the block did with the
    call (an answer that catches what the gate raises still fails)."""
    global _depth
    if _depth:  # a check inside a check: the outer one decides
        _depth += 1
        try:
            yield
        finally:
            _depth -= 1
        return
    _calls.clear()
    _depth = 1
    try:
        yield
    except _ReferenceCalled:
        pass
    except Exception:
        if not _calls:
            raise
    finally:
        _depth = 0
    if _calls:
        name = _calls[0]
        _calls.clear()
        raise ExerciseError(reference_called_message(name))


def refuses_references(check: Callable[..., Any]) -> Callable[..., Any]:
    """``check``, run under :func:`refusing_references`; called from the learner's code under another check, it
    is refused like a reference."""
    name = f"{check.__module__}.{check.__qualname__}"

    @functools.wraps(check)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _depth:
            _refuse_if_learners(sys._getframe(1), name)
        with refusing_references():
            return check(*args, **kwargs)

    guarded.refuses_references = True  # type: ignore[attr-defined]
    return guarded


def refuse_references_in(module: Any) -> dict[str, Callable[..., Any]]:
    """Gate the functions of ``module`` (:func:`gate_references`) and wrap each function of its ``__all__`` (its
    checks, and the helpers its hidden tests call) in :func:`refuses_references`, in the module itself: returns
    ``{name: wrapped}`` for the package to re-export."""
    public = [name for name in getattr(module, "__all__", ()) if inspect.isfunction(getattr(module, name, None))]
    gate_references(module, keep=public)
    wrapped = {}
    for name in public:
        fn = getattr(module, name)
        if fn.__module__ == module.__name__ and not hasattr(fn, "refuses_references"):
            wrapped[name] = refuses_references(fn)
            setattr(module, name, wrapped[name])
    return wrapped


# The engine's own functions are gated too (``reference_softmax`` is a reference), but for the gates' machinery.
gate_references(
    sys.modules[__name__],
    keep=(
        "__checks_gate__",
        "_file_kind",
        "_gate",
        "_refuse_if_learners",
        "gate_references",
        "not_a_reference",
        "reference_called_message",
        "refuse_references_in",
        "refuses_references",
        "refusing_references",
    ),
)
