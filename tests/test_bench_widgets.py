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


def test_every_widget_the_benchmark_drives_is_in_its_lesson() -> None:
    """Each lesson's widget cell is found by a marker in its source; a lesson that rewrites the cell must
    not leave the benchmark looking for code that is gone."""
    import json

    root = Path(__file__).resolve().parents[1] / "notebooks"
    for lesson, cells in bench.WIDGETS.items():
        nb = json.loads((root / f"{lesson}.ipynb").read_text(encoding="utf-8"))
        sources = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
        for marker, _ in cells:
            assert any(marker in s for s in sources), f"{lesson}: no code cell contains {marker!r}"
