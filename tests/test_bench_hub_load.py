"""The hub benchmark (``benchmarks/hub_load.py``): how many learners it plans for, the lesson it runs, its
figures and its report from made-up measurements (no hub is started; no timing is checked)."""

from __future__ import annotations

import pytest

from benchmarks import hub_load
from benchmarks.common import Config, Results

GIB, MIB = 2**30, 2**20


def _cfg() -> Config:
    return Config(lesson_paths=[], lesson_repeats=1, attention_T=[], weights_max_T=0, numpy_max_T=0,
                  block_T=[], time_budget_s=0.0, min_repeats=1, max_repeats=1, full=False, quick=False)


def test_learners_fit_half_the_available_memory_and_at_most_the_target() -> None:
    assert hub_load.learners_this_machine_holds(24 * GIB) == 20  # 24 learners would fit: capped at 20
    assert hub_load.learners_this_machine_holds(8 * GIB) == 8  # half of 8 GiB at 0.5 GiB each
    assert hub_load.learners_this_machine_holds(GIB // 4) == 1


def test_the_lesson_is_the_student_version_with_the_model_answers() -> None:
    cells = hub_load.lesson_cells(hub_load.LESSON)
    assert len(cells) > 10
    assert not any("YOUR CODE HERE" in c or "NotImplementedError" in c for c in cells)


def test_percentiles_and_the_guides_figures() -> None:
    loads = [float(i) for i in range(1, 101)]
    assert hub_load.percentile(loads, 0.5) == 50 and hub_load.percentile(loads, 0.95) == 95
    assert hub_load.percentile([3.0], 0.95) == 3.0
    # A server of 200 MiB and a kernel of 400 MiB: guarantee 600 x 1.5 = 900 MiB -> 1 GiB;
    # limit (200 + 2 x 400) x 1.5 = 1500 MiB -> 1.5 GiB.
    assert hub_load.advice(200 * MIB, 400 * MIB) == (GIB, int(1.5 * GIB))
    assert hub_load.advice(200 * MIB, 0) == (GIB // 2, GIB // 2)  # 300 MiB rounded up


def _measured(problems: dict[str, str]) -> dict:
    names = [f"l{i:02d}" for i in range(1, 5)]
    return {
        "learners": 4, "lesson": "02_basic_self_attention", "cells": 23, "cores": 2, "available_gib": 20.0,
        "load_before": (1.0, 1.0, 1.0), "load_after": (3.0, 2.0, 1.0), "servers_ready_s": 41.0,
        "idle": {"hub home page (/hub/home)": [0.01 * i for i in range(1, 21)]},
        "loaded": {"hub home page (/hub/home)": [0.1 * i for i in range(1, 41)]},
        "page_failures": [], "samples": 300, "problems": problems,
        "lesson_s": dict(zip(names, (20.0, 30.0, 40.0, 50.0), strict=True)),
        "start_peak": dict.fromkeys(names, 300 * MIB),
        "server_peak": dict(zip(names, (150 * MIB, 150 * MIB, 160 * MIB, 200 * MIB), strict=True)),
        "peak": dict(zip(names, (500 * MIB, 520 * MIB, 540 * MIB, 600 * MIB), strict=True)),
        "hwm_sum": dict.fromkeys(names, 650 * MIB),
    }


def test_the_report_from_made_up_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_load, "PEAKS", {})  # section 1 did not run
    res = Results()
    res.hub_load = _measured({})
    text = "\n".join(hub_load.lines(_cfg(), res))
    assert text.startswith(hub_load.TITLE)
    # p50 / p95 by nearest rank: idle 10 ms, 20 ms steps -> 100 / 190 ms; loaded 100 ms steps -> 2000 / 3800.
    assert "| hub home page (/hub/home) | 20 | 100 / 190 | 40 | 2000 / 3800 |" in text
    assert "**Kernels that died: 0 of 4**." in text
    assert "The lesson took 35.0 s (median over learners; slowest 50.0 s)" in text
    assert "| server and the lesson's kernel, peak | 530 | 600 |" in text
    # The hungriest learner: 600 MiB, server 200 MiB, kernel 400 MiB -> guarantee 1 GiB, limit 1.5 GiB.
    assert "200 MiB their server, 400 MiB the lesson's kernel." in text
    assert "**Per learner on a hub, for 02_basic_self_attention: guarantee 1 GiB, limit 1.5 GiB**" in text
    assert "for every lesson" not in text and "Section 1 did not run" in text
    # With section 1 in the same run: its largest kernel (800 MiB) gives the figures for every lesson:
    # guarantee (200 + 800) x 1.5 = 1500 MiB -> 1.5 GiB, limit (200 + 1600) x 1.5 = 2700 MiB -> 2.75 GiB.
    monkeypatch.setattr(hub_load, "PEAKS", {"02_basic_self_attention.ipynb": [390 * MIB, 380 * MIB],
                                            "14_long.ipynb": [800 * MIB]})
    text = "\n".join(hub_load.lines(_cfg(), res))
    assert "(02_basic_self_attention.ipynb's kernel alone, section 1: 390 MiB)" in text
    assert "**Per learner on a hub, for every lesson: guarantee 1.5 GiB, limit 2.75 GiB**" in text
    assert "14_long.ipynb (800 MiB, section 1)" in text
    res.hub_load = _measured({"l03": "KernelError: l03's kernel: dead"})
    text = "\n".join(hub_load.lines(_cfg(), res))
    assert "**Kernels that died: 1 of 4**: l03: KernelError: l03's kernel: dead." in text


@pytest.mark.parametrize("data, says", [({"unavailable": "needs root"}, "needs root"), ({}, "Not measured")])
def test_the_report_says_when_nothing_was_measured(data: dict, says: str) -> None:
    res = Results()
    res.hub_load = data
    assert says in "\n".join(hub_load.lines(_cfg(), res))
