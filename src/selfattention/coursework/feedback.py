"""One readable HTML page per learner and lesson, from the last `make grade`.

Each page has the learner's score, then per exercise (named as the lesson names it: "Warm-up exercise
(1 point)", "Exercise 3 (2 points)"; :func:`.lessons.exercises`) the task as the learner read it, the
learner's own answer, the points and the check's message; written answers with the points and comment a
grader gave. Never a test cell (no hidden test, not even the visible one): the messages say what
went wrong. Maths is MathML made here
(latex2mathml), so the page needs no script and no network.

Pages go to ``OUT/LEARNER/NN_topic.html`` (to hand back as files) and to nbgrader's own
``COURSE/feedback/LEARNER/NN_topic/NN_topic.html`` (for ``nbgrader release_feedback`` on a hub).
"""

from __future__ import annotations

import html
import shutil
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from . import gradebook, lessons
from .folder import CourseFolder, Verdict
from .mathml import render_markdown
from .submissions import RECEIPTS

__all__ = ["render_markdown", "write_feedback"]

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


def _answers(submitted: NotebookNode) -> dict[str, str]:
    """The learner's answer cells' sources, by grade id."""
    return {gid: lessons.source(cell) for gid, cell in lessons.grade_cells(submitted).items()
            if lessons.is_answer(cell)}


def _section(exercise: lessons.Exercise, grades: dict[str, dict], messages: dict[str, str | None],
             answers: dict[str, str]) -> tuple[str, str]:
    """(the exercise's row of the table, its section): task, answer, points, result, comments."""
    parts = [grades.get(gid, {"score": 0.0, "max": 0.0, "waiting": False, "comment": ""})
             for gid in exercise.grade_ids]
    score, total = sum(g["score"] for g in parts), sum(g["max"] for g in parts)
    if any(g["waiting"] for g in parts):
        status, css = "to be graded by hand", "wait"
    elif score >= total:
        status, css = "graded" if exercise.written else "correct", "ok"
    else:
        why = [messages[gid] for gid in exercise.grade_ids if messages.get(gid)]
        status, css = "; ".join(why) or "not correct", "ko"
    label = html.escape(exercise.label)
    row = (f"<tr><td>{label}</td><td>{score:g} / {total:g}</td>"
           f"<td class='{css}'>{html.escape(status)}</td></tr>")
    mine = [answers[gid] for gid in exercise.answer_ids if answers.get(gid, "").strip()]
    if exercise.written:
        shown = "".join(render_markdown(text) for text in mine)
    else:
        shown = "".join(f"<pre>{html.escape(text)}</pre>" for text in mine)
    comments = "".join(f"<p><b>Grader's comment:</b> {html.escape(g['comment'])}</p>" for g in parts
                       if g["comment"])
    section = (f"<section><h2>{label}: {score:g} / {total:g}</h2>"
               f"<div class='task'>{render_markdown(exercise.task)}</div>"
               f"<h3>Your answer</h3>{shown or '<p><i>(no answer)</i></p>'}"
               f"<p class='{css}'><b>Result:</b> {html.escape(status)}</p>{comments}</section>")
    return row, section


def _page(learner: str, lesson: str, released: NotebookNode, submitted: NotebookNode | None,
          grades: dict[str, dict], verdict: Verdict) -> str:
    score = sum(g["score"] for g in grades.values())
    total = sum(g["max"] for g in grades.values())
    title = f"{lesson}: feedback for {learner}"
    answers = _answers(submitted) if submitted is not None else {}
    labels = lessons.exercise_labels(released)
    rows, sections = [], []
    for exercise in lessons.exercises(released):
        row, section = _section(exercise, grades, verdict.messages, answers)
        rows.append(row)
        sections.append(section)
    other = [n for n in verdict.notes if not any(n.startswith(f"{label}: ") for label in labels.values())]
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
    folder = CourseFolder(Path(build))
    graded = folder.graded()
    if not graded:
        raise FileNotFoundError(f"nothing graded in {build} yet: run make grade first")
    written = []
    for learner, lesson in graded:
        released = nbformat.read(folder.release(lesson), as_version=4)
        submitted_path = folder.submitted(learner, lesson)
        submitted = nbformat.read(submitted_path, as_version=4) if submitted_path.exists() else None
        page = _page(learner, lesson, released, submitted, gradebook.grades(folder, lesson, learner),
                     folder.read_verdict(learner, lesson))
        target = Path(out) / learner / f"{lesson}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")
        exchange = folder.feedback_page(learner, lesson)
        exchange.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, exchange)
        for receipt in RECEIPTS:  # release_feedback reads them beside the page (absent: not collected)
            if (submitted_path.parent / receipt).is_file():
                shutil.copyfile(submitted_path.parent / receipt, exchange.parent / receipt)
        written.append(target)
    say(f"wrote {len(written)} feedback pages to {out}/LEARNER/NN_topic.html "
        f"(and to {build}/feedback/ for nbgrader release_feedback)")
    return written
