"""One readable HTML page per learner and lesson, from the last `make grade`.

Each page has the learner's score, then per exercise (as the learner sees it: "Exercise 3
(2 points)") the task's text, the learner's own answer, the points and the check's message;
written answers with the points and comment a grader gave. Never a test cell (no hidden test,
not even the visible one): the messages say what went wrong. Maths is MathML made here
(latex2mathml), so the page needs no script and no network.

Pages go to ``OUT/LEARNER/NN_topic.html`` (to hand back as files) and to nbgrader's own
``COURSE/feedback/LEARNER/NN_topic/NN_topic.html`` (for ``nbgrader release_feedback`` on a hub).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import warnings
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from .grading import RECEIPTS

__all__ = ["render_markdown", "write_feedback"]

_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<!\\)\$")


def _mathml(latex: str, display: bool) -> str:
    from latex2mathml.converter import convert

    try:
        mathml = convert(latex.strip(), display="block" if display else "inline")
        return mathml.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "", 1)  # HTML needs none
    except Exception:  # maths it cannot convert stays readable as its source
        return f"<code>{html.escape(latex)}</code>"


def render_markdown(text: str) -> str:
    """Markdown to HTML with ``$...$`` and ``$$...$$`` as MathML (no script needed to show it)."""
    import mistune

    maths: list[str] = []

    def keep(match: re.Match, display: bool) -> str:
        maths.append(_mathml(match.group(1), display))
        return f"MATHPLACEHOLDER{len(maths) - 1}X"

    text = _DISPLAY.sub(lambda m: keep(m, True), text)
    text = _INLINE.sub(lambda m: keep(m, False), text)
    out = mistune.html(text)
    return re.sub(r"MATHPLACEHOLDER(\d+)X", lambda m: maths[int(m.group(1))], out)


_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.5; color: #1a1a1a; }
table { border-collapse: collapse; margin: 1rem 0; }
td, th { border: 1px solid #bbb; padding: .3rem .7rem; text-align: left; }
section { border-top: 1px solid #ddd; margin-top: 1.5rem; }
pre { background: #f5f5f5; padding: .7rem; overflow-x: auto; }
.ok { color: #17692c; } .ko { color: #a4161a; } .wait { color: #7a5b00; }
.task { background: #f8f8fc; padding: .2rem 1rem; border-left: 3px solid #99c; }
"""


def _statements(released: NotebookNode) -> dict[str, str]:
    """``{grade_id of a graded cell: markdown of the task}``: the last lesson text before the
    exercise's first answer cell (or, for a written answer, before the answer itself)."""
    tasks, last_text, pending = {}, "", None
    for cell in released.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown" and not meta.get("grade_id"):
            last_text = cell.source
        elif meta.get("solution") and not meta.get("grade"):
            pending = pending if pending is not None else last_text
        elif meta.get("grade"):
            tasks[meta["grade_id"]] = pending if pending is not None else last_text
            pending = None
    return tasks


def _answers(submitted: NotebookNode, released: NotebookNode) -> dict[str, list[str]]:
    """``{grade_id: [the learner's answer cells]}`` for every graded cell, test cells excluded."""
    graded = [c.metadata["nbgrader"]["grade_id"] for c in released.cells
              if c.metadata.get("nbgrader", {}).get("grade")]
    answers: dict[str, list[str]] = {gid: [] for gid in graded}
    pending: list[str] = []
    for cell in submitted.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            pending.append(cell.source)
        if meta.get("grade") and meta.get("grade_id") in answers:
            answers[meta["grade_id"]] = pending
            pending = []
    return answers


def _grades(root: Path, lesson: str, learner: str) -> dict[str, dict]:
    from nbgrader.api import Gradebook

    with warnings.catch_warnings(), Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        warnings.simplefilter("ignore")
        nb = gb.find_submission_notebook(lesson, lesson, learner)
        comments = {c.name: (c.manual_comment or c.auto_comment or "") for c in nb.comments}
        return {g.name: {"score": float(g.score), "max": float(g.max_score),
                         "waiting": bool(g.needs_manual_grade and g.manual_score is None),
                         "comment": comments.get(g.name, "")} for g in nb.grades}


def _page(learner: str, lesson: str, released: NotebookNode, submitted: NotebookNode | None,
          grades: dict[str, dict], messages: dict[str, str | None], notes: list[str]) -> str:
    from .grading import exercise_names

    names = exercise_names(released)
    tasks = _statements(released)
    answers = _answers(submitted, released) if submitted is not None else {}
    score = sum(g["score"] for g in grades.values())
    total = sum(g["max"] for g in grades.values())
    title = f"{lesson}: feedback for {learner}"
    rows, sections = [], []
    for gid, name in names.items():
        g = grades.get(gid, {"score": 0.0, "max": 0.0, "waiting": False, "comment": ""})
        if g["waiting"]:
            status, css = "to be graded by hand", "wait"
        elif g["score"] >= g["max"]:
            status, css = "correct" if not name.startswith("Written") else "graded", "ok"
        else:
            status, css = messages.get(gid) or "not correct", "ko"
        rows.append(f"<tr><td>{html.escape(name)}</td><td>{g['score']:g} / {g['max']:g}</td>"
                    f"<td class='{css}'>{html.escape(status)}</td></tr>")
        code = "".join(f"<pre>{html.escape(src)}</pre>" for src in answers.get(gid, []))
        if name.startswith("Written") and answers.get(gid):
            code = render_markdown(answers[gid][-1])
        comment = f"<p><b>Grader's comment:</b> {html.escape(g['comment'])}</p>" if g["comment"] else ""
        sections.append(
            f"<section><h2>{html.escape(name)}: {g['score']:g} / {g['max']:g}</h2>"
            f"<div class='task'>{render_markdown(tasks.get(gid, ''))}</div>"
            f"<h3>Your answer</h3>{code or '<p><i>(no answer)</i></p>'}"
            f"<p class='{css}'><b>Result:</b> {html.escape(status)}</p>{comment}</section>"
        )
    other = [n for n in notes if not any(n.startswith(f"{nm}: ") for nm in names.values())]
    notes_html = "".join(f"<li>{html.escape(n)}</li>" for n in other)
    return (
        f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
        f"<p><b>Score: {score:g} / {total:g}</b></p><table><tr><th>Exercise</th><th>Points</th>"
        f"<th>Result</th></tr>{''.join(rows)}</table>"
        + (f"<h3>Notes from the grader</h3><ul>{notes_html}</ul>" if notes_html else "")
        + "".join(sections) + "</body></html>\n"
    )


def write_feedback(build: Path, out: Path, say=print) -> list[Path]:
    """Write a page for every submission graded in course folder ``build`` (see the module).

    Beside each page in ``COURSE/feedback/LEARNER/NN_topic/`` go the ``timestamp.txt`` and
    ``submission_secret.txt`` that ``nbgrader collect`` wrote, which ``nbgrader release_feedback``
    needs; the pages there are these, not nbgrader's (whose pages show the hidden tests).

    Raises FileNotFoundError if nothing was graded there yet.
    """
    root = Path(build).resolve()
    verdicts = sorted((root / "verdicts").glob("*/*.json"))
    if not verdicts:
        raise FileNotFoundError(f"nothing graded in {build} yet: run make grade first")
    written = []
    for path in verdicts:
        lesson, learner = path.parent.name, path.stem
        data = json.loads(path.read_text(encoding="utf-8"))
        released = nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        submitted_path = root / "submitted" / learner / lesson / f"{lesson}.ipynb"
        submitted = nbformat.read(submitted_path, as_version=4) if submitted_path.exists() else None
        page = _page(learner, lesson, released, submitted, _grades(root, lesson, learner),
                     data["messages"], data["notes"])
        target = Path(out) / learner / f"{lesson}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")
        exchange = root / "feedback" / learner / lesson / f"{lesson}.html"
        exchange.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, exchange)
        for receipt in RECEIPTS:  # release_feedback reads them beside the page (absent: not collected)
            if (submitted_path.parent / receipt).is_file():
                shutil.copyfile(submitted_path.parent / receipt, exchange.parent / receipt)
        written.append(target)
    say(f"wrote {len(written)} feedback pages to {out}/LEARNER/NN_topic.html "
        f"(and to {build}/feedback/ for nbgrader release_feedback)")
    return written
