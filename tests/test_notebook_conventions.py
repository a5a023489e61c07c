"""Every lesson notebook follows the course's conventions (COURSE_DESIGN.md, CONTRIBUTING.md).

The lesson format itself (cells, regions, the learner's view, exercises) is
``selfattention.coursework.lessons``; the time rule is ``tools/lesson_load.py``.
"""

from __future__ import annotations

import builtins
import importlib.util
import keyword
import re
import sys
from datetime import datetime

import pytest
from conftest import NOTEBOOKS, ROOT, load_notebook

from selfattention.coursework import lessons
from selfattention.coursework.policy import RunPolicy

sys.path.insert(0, str(ROOT / "tools"))
from lesson_load import MAX_MINUTES, lesson_load  # noqa: E402
from lesson_load import main as lesson_load_main  # noqa: E402


def test_lessons_exist_in_order():
    names = [p.name for p in NOTEBOOKS]
    assert names, "no lesson notebooks found in notebooks/"
    numbers = [int(n[:2]) for n in names]
    assert numbers == list(range(len(names))), f"lessons not numbered 00, 01, ... without gaps: {names}"


def test_executed_in_order_from_a_fresh_kernel(notebook):
    path, nb = notebook
    counts = [c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: execution counts are {counts}; re-run it with "
        "'Restart Kernel and Run All Cells' (or nbconvert --execute) before committing"
    )


def test_no_error_outputs(notebook):
    path, nb = notebook
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", f"{path.name}: cell {i} has an error output"
            if out.get("output_type") == "stream":
                assert out.get("name") != "stderr" or not "".join(out["text"]).strip(), (
                    f"{path.name}: cell {i} writes to stderr: {''.join(out['text'])[:200]}"
                )


def test_python3_kernel(notebook):
    path, nb = notebook
    assert nb["metadata"]["kernelspec"]["name"] == "python3", path.name


def test_first_cell_states_objectives_prerequisites_and_time(notebook):
    path, nb = notebook
    first = nb["cells"][0]
    text = "".join(first["source"])
    assert first["cell_type"] == "markdown", f"{path.name}: the first cell must be markdown"
    assert text.lstrip().startswith("# "), f"{path.name}: the first cell must open with a title"
    assert re.search(r"learning objectives", text, re.I), f"{path.name}: no learning objectives"
    assert re.search(r"prerequisites", text, re.I), f"{path.name}: no prerequisites"
    assert re.search(r"\btime\b.*\d+\s*min", text, re.I), f"{path.name}: no time estimate in minutes"


def test_lesson_template_sections(notebook):
    path, nb = notebook
    md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for heading in ("Key takeaways", "What comes next"):
        assert re.search(rf"^#+ .*{heading}", md, re.I | re.M), f"{path.name}: no '{heading}' section"


def test_imports_package_by_name_only(notebook):
    path, nb = notebook
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "sys.path" not in code, f"{path.name}: edits sys.path; import selfattention by name"
    assert "%run" not in code, f"{path.name}: uses %run; import selfattention by name"
    if not path.name.startswith("00_"):
        assert re.search(r"^\s*(import selfattention|from selfattention)", code, re.M), path.name


def test_nothing_machine_specific_in_outputs(notebook):
    path, nb = notebook
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            text = "".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", ""))
            for pattern in (r"/tmp/", r"/root/", r"/home/\w+", r"0x[0-9a-f]{8,}", str(ROOT)):
                assert not re.search(pattern, text), f"{path.name}: cell {i} output matches {pattern}"


def _cell_seconds(cell: dict) -> float | None:
    """Seconds the cell took when the notebook was last executed (nbclient records it), or None."""
    stamps = cell.get("metadata", {}).get("execution", {})
    if "iopub.execute_input" not in stamps or "shell.execute_reply" not in stamps:
        return None
    start, end = (datetime.fromisoformat(stamps[k].replace("Z", "+00:00"))
                  for k in ("iopub.execute_input", "shell.execute_reply"))
    return (end - start).total_seconds()


def test_every_cell_fits_the_graders_default_time_limits(notebook):
    """``make grade`` runs a learner's whole lesson under ``RunPolicy``'s default limits; the instructor's
    copy, as last executed (often on a busy machine), uses at most half of each, so a correct submission is
    not cut off on a grader that is slower or busier than that."""
    path, nb = notebook
    policy = RunPolicy()
    seconds = {i: s for i, c in enumerate(nb["cells"])
               if c["cell_type"] == "code" and (s := _cell_seconds(c)) is not None}
    assert seconds, f"{path.name}: no cell records its execution time (execute it with nbconvert or nbclient)"
    slowest = max(seconds, key=seconds.get)
    assert seconds[slowest] <= policy.cell_timeout / 2, (
        f"{path.name}: cell {slowest} took {seconds[slowest]:.0f} s; the grader stops a cell at "
        f"{policy.cell_timeout} s: make it faster or raise the default"
    )
    total = sum(seconds.values())
    assert total <= policy.submission_timeout / 2, (
        f"{path.name}: {total:.0f} s in all; the grader stops a lesson at {policy.submission_timeout} s"
    )


def test_output_ignored_only_by_exception(notebook):
    path, nb = notebook
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    ignored = [c for c in code if "nbval-ignore-output" in c.get("metadata", {}).get("tags", [])]
    assert len(ignored) <= max(3, len(code) // 5), (
        f"{path.name}: {len(ignored)} of {len(code)} code cells are excluded from comparison"
    )


def test_readme_lists_every_lesson_with_its_time():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in NOTEBOOKS:
        first = "".join(load_notebook(path)["cells"][0]["source"])
        minutes = re.search(r"\*\*Time\.\*\*\D*(\d+)\s*min", first)
        assert minutes, f"{path.name}: no '**Time.** About N min' in the first cell"
        pattern = rf"^\| {path.name[:2]} \| `{re.escape(path.name)}` \|.*\| (\d+) min \|$"
        row = re.search(pattern, readme, re.M)
        assert row, f"README.md has no lesson-table row for {path.name}"
        assert row.group(1) == minutes.group(1), (
            f"README.md gives {path.name} {row.group(1)} min, the notebook says {minutes.group(1)} min"
        )


def test_the_time_tool_names_a_bad_argument(capsys):
    with pytest.raises(SystemExit) as exit_:
        lesson_load_main(["notebooks/no_such_lesson.ipynb"])
    assert exit_.value.code == 2
    assert "LESSON 'notebooks/no_such_lesson.ipynb' is not a notebook file" in capsys.readouterr().err


def test_stated_time_covers_the_load_and_fits_one_sitting(notebook):
    """tools/lesson_load.py's rule, on the learner's view: the first cell states reading and exercise
    times that cover their loads, at most 90 min in all, and how long Going deeper adds."""
    path, nb = notebook
    r = lesson_load(path)
    said = r.stated
    assert said is not None, (
        f"{path.name}: the first cell needs '**Time.** About T min: reading R min + exercises E min'"
    )
    c = r.core
    counts = f"{c.words} words, {c.code_lines} code lines, {c.exercises} exercises, {c.written} written"
    assert said["total"] == said["reading"] + said["exercises"], f"{path.name}: {said} does not add up"
    assert said["reading"] >= round(c.reading), (
        f"{path.name}: states {said['reading']} min of reading; its load is {round(c.reading)} min ({counts})"
    )
    assert said["exercises"] >= round(c.exercise_minutes), (
        f"{path.name}: states {said['exercises']} min of exercises; load {round(c.exercise_minutes)} min"
    )
    assert said["total"] <= MAX_MINUTES, f"{path.name}: {said['total']} min; split it (at most {MAX_MINUTES})"
    if r.deeper.minutes >= 1:
        assert said["deeper"] >= round(r.deeper.minutes), (
            f"{path.name}: says Going deeper adds {said['deeper']} min; load {round(r.deeper.minutes)} min"
        )


# --- one text for the learner ---------------------------------------------------------------------

_STOP = set("""this that with from have what which their there these those into each than then them they
will would when where while only also more most much such some same over under about after before other
being been were does done just like very make makes made your yours here lesson cell cells code""".split())


def _content_words(text: str) -> set[str]:
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`", " ", text, flags=re.S)
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4 and w not in _STOP}


def repeated_points(nb: dict) -> list[str]:
    """Pairs of markdown cells of one section of the learner's view where one shares at least half of
    its content words (12 or more) with the other: a point read twice."""
    sections: list[list[dict]] = [[]]
    for cell in lessons.learner_cells(nb):
        if cell["cell_type"] != "markdown" or lessons.is_answer(cell):
            continue
        if re.search(r"^#{1,2}\s", lessons.source(cell), re.M) and sections[-1]:
            sections.append([])
        sections[-1].append(cell)
    found = []
    for section in sections:
        for a in section:
            words = _content_words(lessons.source(a))
            if len(words) < 12:
                continue
            for b in section:
                shared = words & _content_words(lessons.source(b))
                if a is not b and len(shared) >= len(words) / 2:
                    found.append(f"{lessons.source(a)[:60]!r} shares {len(shared)} of its {len(words)} "
                                 f"words with {lessons.source(b)[:60]!r}")
    return found


def test_no_point_is_read_twice_in_the_learners_view(notebook):
    path, nb = notebook
    found = repeated_points(nb)
    assert not found, f"{path.name}: the learner's view says these twice: {found[:3]}"


def test_a_slide_only_cell_holds_no_heading(notebook):
    """Headings and exercise titles are in cells both views show: a slide-only cell holds the deck's
    short version of a section (bullets, a formula), nothing the learner's text needs."""
    path, nb = notebook
    bad = [i for i, c in enumerate(nb["cells"])
           if lessons.is_slide_only(c) and re.search(r"^#", lessons.source(c), re.M)]
    assert not bad, f"{path.name}: slide-only cells {bad} hold a heading"


def test_the_repetition_rule_catches_a_slide_and_its_notes():
    slide = ("## 1 · Softmax\n- exponentiate every score, then divide by the total\n- weights positive, rows "
             "summing to exactly one\n- subtracting the maximum first avoids overflow, same result")
    notes = ("Softmax takes every score and will exponentiate each, then divide each exponential by the "
             "total, so the rows end up summing to exactly one and every weight is positive. Subtracting the "
             "row maximum first avoids overflow and gives the same result.")
    nb = {"cells": [{"cell_type": "markdown", "source": slide, "metadata": {}},
                    {"cell_type": "markdown", "source": notes,
                     "metadata": {"slideshow": {"slide_type": "notes"}}}]}
    assert repeated_points(nb)
    nb["cells"][0]["metadata"]["tags"] = ["slide-only"]
    assert not repeated_points(nb)


# --- exercises worth doing ------------------------------------------------------------------------

_KEEP = set(dir(builtins)) | set(keyword.kwlist) | {"np", "sa", "torch", "math", "nn", "F", "checks", "plt"}


def _shape(line: str) -> str:
    """A code line with its own names replaced by ``v`` (calls, attributes, modules kept): lines of the
    same shape with other names compare equal."""
    line = re.sub(r"#.*$", "", line.strip())
    name = re.compile(r"(?<![.\w])([A-Za-z_]\w*)(?!\s*\()")
    line = name.sub(lambda m: m.group(1) if m.group(1) in _KEEP else "v", line)
    return re.sub(r"\s+", "", line)


def copied_lines(nb: dict) -> dict[str, tuple[int, int]]:
    """``{answer grade_id: (solution lines found in the teaching cells, solution lines)}`` counting the
    solution's substantive lines (12 characters or more of shape) that appear, in shape, in code cells
    the learner's view shows outside exercises."""
    teaching = set()
    for cell in lessons.learner_cells(nb):
        if cell["cell_type"] == "code" and not (lessons.is_answer(cell) or lessons.is_test(cell)):
            teaching |= {_shape(line) for line in lessons.source(cell).split("\n")}
    found = {}
    for cell in nb["cells"]:
        if lessons.is_code_answer(cell):
            lines = [s for s in map(_shape, lessons.solution_lines(cell)) if len(s) >= 12]
            found[lessons.grade_id(cell)] = (sum(s in teaching for s in lines), len(lines))
    return found


def test_no_exercise_copies_the_lessons_own_code(notebook):
    path, nb = notebook
    copies = {gid: f"{same} of {n}" for gid, (same, n) in copied_lines(nb).items() if n and same >= n / 2}
    assert not copies, (
        f"{path.name}: these answers are mostly lines the lesson shows above (in shape): {copies}; "
        "ask for a design, a prediction or a derivation instead"
    )


def test_the_copy_rule_sees_a_renamed_copy():
    teach = {"cell_type": "code", "metadata": {},
             "source": "def softmax_1d(s):\n    e = np.exp(s - s.max())\n    return e / e.sum()"}
    answer = {"cell_type": "code", "metadata": {"nbgrader": {"solution": True, "grade_id": "a"}},
              "source": "def f(x):\n    ### BEGIN SOLUTION\n    z = np.exp(x - x.max())\n"
                        "    return z / z.sum()\n    ### END SOLUTION"}
    assert copied_lines({"cells": [teach, answer]}) == {"a": (2, 2)}


def test_every_exercise_is_named_by_a_heading_the_learner_reads(notebook):
    path, nb = notebook
    found = lessons.exercises(nb)
    assert found, f"{path.name}: no graded exercise"
    unnamed = [e.grade_ids for e in found
               if e.title == e.name and e.name.startswith("Exercise ") and not e.task]
    assert not unnamed, f"{path.name}: graded cells {unnamed} follow no exercise heading"


def _answers_in_words(path) -> dict[str, str | tuple[str, ...]]:
    module = ROOT / "tests" / "answers" / f"lesson{lessons.lesson_number(path)}.py"
    if not module.is_file():
        return {}
    spec = importlib.util.spec_from_file_location(module.stem, module)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded.ANSWERS


def test_every_code_exercise_has_an_answer_written_from_the_lessons_words(notebook):
    """tests/answers/lessonNN.py holds, per code answer cell, another right answer that follows the lesson's
    own wording (graded in tests/test_grading.py: it must get full marks, hidden tests included)."""
    path, nb = notebook
    answers = _answers_in_words(path)
    for cell in nb["cells"]:
        if not lessons.is_code_answer(cell):
            continue
        gid = lessons.grade_id(cell)
        assert gid in answers, f"{path.name}: tests/answers/lesson{path.name[:2]}.py has no answer for {gid}"
        given = answers[gid] if isinstance(answers[gid], str) else "\n".join(answers[gid])   # one per stub
        mine = [_shape(line) for line in given.split("\n") if _shape(line)]
        instructor = [_shape(line) for line in lessons.solution_lines(cell) if _shape(line)]
        assert mine != instructor, f"{path.name}: the answer in words for {gid} is the instructor's own"
