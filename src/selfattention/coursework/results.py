"""Hidden tests hand the learner's results to the grader as plain data; the grader judges them.

A hidden test ends with ``record("grade-id", value)``: ``value`` is what the learner's code
produced on the test's inputs (arrays, numbers, strings, nested lists). While a notebook is
graded, ``record`` emits it as one display output of type :data:`MIME`; anywhere else (the lab,
nbval) it does nothing, so the lessons' saved outputs do not change.

The grader runs the instructor's own notebook the same way to get the reference records, then
compares each learner's records with them in its own process (:func:`compare`). Nothing the
learner's code does in its kernel (patching numpy, builtins, the checks or the display) can make
a wrong result equal to the reference: to forge a record, it has to compute the right values.

A design exercise has many right answers (set W_Q so that "apple" attends to "ate"): its hidden test records
the learner's design itself with ``judge="check_..."``, and the grader runs that lesson check, its own copy,
in its own process on the recorded design (:func:`judge`) instead of comparing it with the instructor's.
The judge is taken from the instructor's record, never from the learner's.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
from typing import Any

__all__ = ["MIME", "GRADING_ENV", "record", "to_plain", "compare", "judge"]

MIME = "application/vnd.selfattention.result+json"
#: Set (to "1") in the kernel's environment while grading.
GRADING_ENV = "SELFATTENTION_GRADING"


def to_plain(value: Any) -> Any:
    """``value`` as JSON data: arrays and tensors become nested lists, numpy scalars Python ones.

    Anything else becomes ``{"unsupported": "type name"}``, which matches no reference.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu().numpy()
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # a numpy array or scalar
        return to_plain(value.tolist())
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    return {"unsupported": type(value).__name__}


def record(grade_id: str, value: Any, *, atol: float = 1e-8, rtol: float = 1e-5,
           judge: str | None = None) -> None:
    """Hand ``value`` (what the learner's code produced) to the grader for test ``grade_id``.

    ``atol``/``rtol`` say how close a number must be to the reference; ``judge`` (the name of a
    ``selfattention.checks`` function) makes the grader run that check on ``value``, the list of its
    arguments, instead. The grader takes all three from the instructor's own run, never from the learner's.
    """
    if os.environ.get(GRADING_ENV) != "1":
        return
    from IPython.display import display

    payload = {"grade_id": grade_id, "value": to_plain(value), "atol": atol, "rtol": rtol, "judge": judge}
    display({MIME: payload}, raw=True)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def compare(expected: Any, got: Any, atol: float, rtol: float, where: str = "result") -> str | None:
    """None if ``got`` matches ``expected`` (numbers within ``atol + rtol * |expected|``), else
    a short phrase saying where they differ (never the expected value itself)."""
    if _is_number(expected):
        if not _is_number(got):
            return f"{where} is {type(got).__name__ if got is not None else 'None'}, not a number"
        if not math.isclose(float(got), float(expected), rel_tol=rtol, abs_tol=atol):
            return f"{where} differs"
        return None
    if isinstance(expected, list):
        if not isinstance(got, list):
            return f"{where} is {'a number' if _is_number(got) else type(got).__name__}, not an array/list"
        if len(got) != len(expected):
            return f"{where} has length {len(got)}, not {len(expected)}"
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            if (why := compare(e, g, atol, rtol, f"{where}[{i}]")) is not None:
                return why
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            return f"{where} does not have the expected keys"
        for key in expected:
            if (why := compare(expected[key], got[key], atol, rtol, f"{where}[{key!r}]")) is not None:
                return why
        return None
    return None if got == expected and type(got) is type(expected) else f"{where} differs"


#: The most numbers a judged record may hold (a design is a few small matrices); more is refused unread.
MAX_JUDGED_NUMBERS = 10_000


def _numbers(x: Any) -> int:
    if isinstance(x, list):
        return sum(_numbers(v) for v in x)
    if isinstance(x, dict):
        return sum(_numbers(v) for v in x.values())
    return 1


def judge(name: str, value: Any) -> str | None:
    """None if the lesson check ``selfattention.checks.<name>`` accepts ``value`` (the list of its
    arguments, plain data as :func:`to_plain` made it), else why not, in the check's own words.

    Runs in the grader's process, on data only: the check is the grader's copy, the learner's kernel
    never runs it. Its "Correct:" line is swallowed.
    """
    from .. import checks

    check = getattr(checks, name, None) if name.startswith("check_") else None
    if not callable(check):
        raise ValueError(f"judge is {name!r}; expected the name of a selfattention.checks function")
    if not isinstance(value, list):
        return "the recorded answer is not a list of the check's arguments"
    if _numbers(value) > MAX_JUDGED_NUMBERS:
        return f"the recorded answer holds more than {MAX_JUDGED_NUMBERS} numbers"
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            check(*value)
    except checks.ExerciseError as wrong:
        return str(wrong).splitlines()[0] if str(wrong) else "the check did not accept it"
    except Exception as error:  # noqa: BLE001  (any other failure of a check on odd data is a fail, not a crash)
        return f"the check could not read the recorded answer ({type(error).__name__})"
    return None
