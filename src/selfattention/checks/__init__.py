"""Exercise feedback: one ``check_*`` function per graded exercise.

Each lesson's checks live in their own module (``lesson00``, ``lesson01``, ...) and are
re-exported here, so a test cell reads ``checks.check_weighted_sum(z)``. The shared engine
(:mod:`._engine`) recognises the typical mistakes and words them for a learner. Every function a lesson
exports runs under :func:`._engine.refusing_references`: an answer that calls a reference of this package fails.
"""

from . import (
    lesson00,
    lesson01,
    lesson02,
    lesson03,
    lesson04,
    lesson05,
    lesson06,
    lesson07,
    lesson08,
    lesson09,
    lesson10,
    lesson11,
    lesson12,
    lesson13,
    lesson14,
    lesson15,
)
from ._engine import ExerciseError, check_array, check_function, check_value, passed, refuse_references_in
from .lesson00 import *  # noqa: F403
from .lesson01 import *  # noqa: F403
from .lesson02 import *  # noqa: F403
from .lesson03 import *  # noqa: F403
from .lesson04 import *  # noqa: F403
from .lesson05 import *  # noqa: F403
from .lesson06 import *  # noqa: F403
from .lesson07 import *  # noqa: F403
from .lesson08 import *  # noqa: F403
from .lesson09 import *  # noqa: F403
from .lesson10 import *  # noqa: F403
from .lesson11 import *  # noqa: F403
from .lesson12 import *  # noqa: F403
from .lesson13 import *  # noqa: F403
from .lesson14 import *  # noqa: F403
from .lesson15 import *  # noqa: F403

for _lesson in (
    lesson00,
    lesson01,
    lesson02,
    lesson03,
    lesson04,
    lesson05,
    lesson06,
    lesson07,
    lesson08,
    lesson09,
    lesson10,
    lesson11,
    lesson12,
    lesson13,
    lesson14,
    lesson15,
):
    globals().update(refuse_references_in(_lesson))
del _lesson

__all__ = ["ExerciseError", "check_array", "check_function", "check_value", "passed"]
