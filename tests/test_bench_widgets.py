"""benchmarks/widgets.py writes its table into RESULTS.md in place (structure only: no timing is asserted)."""

from __future__ import annotations

from pathlib import Path

from benchmarks import report
from benchmarks import widgets as bench


def test_widget_section_replaces_itself_and_keeps_the_rest(tmp_path: Path) -> None:
    fast = bench.Timing("06_scaling", "d_k", "lab", [120.0, 150.0, 130.0])
    slow = bench.Timing("07_multi_head_attention", "head", "lab", [250.0, 260.0], failed=1)
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmarks\n\n## 1. Lessons, cold\n\nrow\n", encoding="utf-8")
    report.replace_sections(results, [bench.section([fast, slow], changes=3)])
    report.replace_sections(results, [bench.section([fast], changes=3)])  # a second run replaces the first
    text = results.read_text(encoding="utf-8")
    assert text.count(bench.SECTION) == 1 and "## 1. Lessons, cold\n\nrow" in text
    assert "| 06_scaling | d_k | lab | 130 | 150 | 3/3 | met |" in text
    assert "07_multi_head_attention" not in text and "**met**" in text
    report.replace_sections(results, [bench.section([fast, slow], changes=3)])
    text = results.read_text(encoding="utf-8")
    assert "| 07_multi_head_attention | head | lab | 255 | 260 | 2/3 | not met |" in text
    assert "**not met**" in text
