"""What the lessons' mistake tests (tests/test_mistakes_lessonNN.py) share: run a check on a wrong answer and
read its message; assert the message names one mistake and no other; assert a right answer passes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from selfattention.checks import ExerciseError


def message(check: Callable[[Any], None], answer: Any) -> str:
    """The message of the ExerciseError ``check(answer)`` must raise (overflow warnings of a wrong answer
    written on purpose, e.g. a softmax without max-subtraction, are silenced)."""
    with pytest.raises(ExerciseError) as err, np.errstate(all="ignore"):
        check(answer)
    return str(err.value)


def names_only(message: str, key: str, phrases: dict[str, str]) -> None:
    """``message`` holds the phrase of mistake ``key`` and the phrase of no other mistake in ``phrases``."""
    assert phrases[key] in message, f"expected {key!r}: {message}"
    others = [k for k, phrase in phrases.items() if k != key and phrase in message]
    assert not others, f"{key!r} also named {others}: {message}"


def right_answer_passes(check: Callable[[Any], None], answer: Any,
                        capsys: pytest.CaptureFixture[str]) -> None:
    """``check(answer)`` prints its ``Correct:`` line."""
    check(answer)
    assert capsys.readouterr().out.startswith("Correct:")
