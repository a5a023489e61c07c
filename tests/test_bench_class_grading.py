"""The class-grading benchmark (``benchmarks/class_grading.py``): its learner copies, its report from made-up
figures, and its quick mode run end to end through the real grader (no timing is checked)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

from benchmarks import class_grading
from benchmarks.common import Config, Results
from selfattention.coursework import lessons


def _cfg(quick: bool) -> Config:
    return Config(lesson_paths=[], lesson_repeats=1, attention_T=[], weights_max_T=0, numpy_max_T=0,
                  block_T=[], time_budget_s=0.0, min_repeats=1, max_repeats=1, full=False, quick=quick)


def test_the_answered_copy_holds_the_model_answers_and_nothing_else_changes() -> None:
    instructor = nbformat.read(ROOT / "notebooks" / "02_basic_self_attention.ipynb", as_version=4)
    student = nbformat.from_dict(lessons.learner_notebook(instructor))
    answered = class_grading.answered_copy(student, instructor)
    model = {lessons.grade_id(c): lessons.solution_parts(lessons.source(c), "")[1]
             for c in instructor.cells if lessons.is_answer(c)}
    filled = {lessons.grade_id(c): lessons.source(c) for c in answered.cells if lessons.is_answer(c)}
    assert filled == model and len(model) >= 3
    assert "BEGIN SOLUTION" not in str(answered) and "YOUR CODE HERE" not in str(answered)
    others = [(a.source, b.source) for a, b in zip(student.cells, answered.cells, strict=True)
              if not lessons.is_answer(a)]
    assert all(a == b for a, b in others)
    assert any("YOUR CODE HERE" in lessons.source(c) for c in student.cells)  # the input was left alone


def test_the_report_from_made_up_figures() -> None:
    res = Results()
    scores = {f"{who} {n:02d}_x": ((1.0, 1.0, "") if who == "answered" else (0.0, 1.0, "blank"))
              for who in ("answered", "blank") for n in range(15)}
    res.class_grading = {
        "lessons": [f"{n:02d}_x" for n in range(15)], "policy": "bwrap (memory 2G, 256 processes, disk 512M)",
        "cores": 2, "cell_timeout": 60, "submissions": 30,
        "runs": {
            1: {"seconds": 300.0, "load_before": (1.0, 1.0, 1.0),
                "load_after": (1.5, 1.2, 1.0),
                "scores": scores, "per_lesson": {f"{n:02d}_x": 20.0 for n in range(15)}, "slowest": 70.0,
                "over_cell_limit": 1},
            2: {"seconds": 200.0, "load_before": (1.5, 1.2, 1.0),
                "load_after": (2.5, 1.8, 1.2),
                "scores": scores},
        },
    }
    text = "\n".join(class_grading.lines(_cfg(False), res))
    assert text.startswith(class_grading.TITLE)
    assert "| 1 | 300.0 | 6.0 | 6.0 | 1.00, 1.00 | 1.50, 1.20 |" in text  # 30 in 5 min, one core
    assert "| 2 | 200.0 | 9.0 | 4.5 | 1.50, 1.20 | 2.50, 1.80 |" in text  # 30 in 200 s, two cores
    assert "15 of 15 answered copies got full marks" in text and "busy" not in text
    assert "1 took over 60 s in all (the time limit of a single cell)" in text
    # 300 x 15 = 4500 submissions at 4.5 to 6.0 a minute per core: on 2 cores 6.2 to 8.3 hours.
    assert "4500 submissions" in text and "2 cores 6.2 to 8.3 h" in text
    assert class_grading.class_hours(4.5, 2, 15) == pytest.approx(4500 / 9 / 60)
    res.class_grading["runs"][2]["scores"] = {**scores, "answered 03_x": (0.5, 1.0, "stuck")}
    res.class_grading["runs"][2]["load_after"] = (5.0, 3.0, 2.0)
    text = "\n".join(class_grading.lines(_cfg(False), res))
    assert "14 of 15 answered copies" in text and "answered 03_x, JOBS = 2: 0.5/1 (stuck)" in text
    assert "machine was busy" in text
    unavailable = Results()
    unavailable.class_grading = {"unavailable": "no bwrap"}
    assert "no bwrap" in "\n".join(class_grading.lines(_cfg(False), unavailable))


@pytest.mark.needs_sandbox
def test_quick_mode_grades_through_the_real_grader(tmp_path: Path) -> None:
    from benchmarks.__main__ import main

    assert main(["--quick", "--only", "classgrading", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "RESULTS.md").read_text(encoding="utf-8")
    section = text.split(class_grading.TITLE)[1]
    rows = [line for line in section.splitlines() if line.startswith(("| 1 |", "| 2 |"))]
    assert len(rows) == 2, section
    assert "1 of 1 answered copies got full marks" in section, section
