"""Every lesson's check functions reach `selfattention.checks` under their own, unique names."""

from __future__ import annotations

import importlib
import re
from collections import Counter

from conftest import NOTEBOOKS, load_notebook

import selfattention.checks as checks


def _lesson_modules():
    for nb in NOTEBOOKS:
        name = f"selfattention.checks.lesson{nb.name[:2]}"
        try:
            yield nb, importlib.import_module(name)
        except ModuleNotFoundError:
            continue


def test_no_two_lessons_export_the_same_check_name():
    counts = Counter(n for _, mod in _lesson_modules() for n in mod.__all__)
    clashes = sorted(n for n, c in counts.items() if c > 1)
    assert not clashes, f"check names exported by more than one lesson module (the later wins): {clashes}"


def test_each_lesson_check_is_re_exported_unchanged():
    for _, mod in _lesson_modules():
        for name in mod.__all__:
            assert getattr(checks, name) is getattr(mod, name), f"checks.{name} is not {mod.__name__}.{name}"


def test_every_check_a_notebook_calls_exists():
    for path in NOTEBOOKS:
        cells = load_notebook(path)["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        for name in set(re.findall(r"checks\.(check_\w+)\(", code)):
            assert hasattr(checks, name), f"{path.name} calls checks.{name}, which does not exist"
