"""The README is a landing page: short, its first screen for a newcomer, its figures true."""

from __future__ import annotations

import re

from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| \d\d \| `\d\d_\w+\.ipynb` \| .* \| (\d+) min \|$", re.M)


def test_readme_is_a_landing_page_of_at_most_120_lines():
    assert len(README.splitlines()) <= 120, "README.md: move details to docs/ (architecture.md says where)"


def test_first_screen_says_what_it_is_how_to_start_and_how_long_it_takes():
    first = "\n".join(README.splitlines()[:30])
    for needed in ("git clone", "Python 3.10", "make lab", "make test", "hours"):
        assert needed in first, f"README.md's first 30 lines lack {needed!r}"


def test_stated_total_time_is_the_sum_of_the_lessons():
    minutes = sum(int(m) for m in ROW.findall(README))
    stated = re.search(r"About ([\d.]+) hours in all", README)
    assert stated, "README.md: say 'About N hours in all' (the sum of the lesson table's times)"
    assert abs(float(stated.group(1)) * 60 - minutes) <= 30, (
        f"README.md says about {stated.group(1)} hours; its lesson table sums to {minutes} min "
        f"({minutes / 60:.1f} h): update the line")


def test_where_next_names_files_that_exist():
    for path in re.findall(r"`((?:docs|slides|benchmarks)/[\w./-]+\.md|CONTRIBUTING\.md)`", README):
        assert (ROOT / path).is_file(), f"README.md points at {path}, which does not exist"
