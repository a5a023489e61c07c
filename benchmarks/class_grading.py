"""Grading a whole class: sealed submissions graded per minute, with ``make grade``'s JOBS = 1 and 2.

The submissions are real learner copies of every lesson: the student version nbgrader's release hands out
(``generate_student_versions``, what ``make grade`` itself compares submissions with), once **answered**
(each answer cell holding the lesson's model answer, as a learner who finished would hand it in) and once
**blank** (handed in untouched). Each learner below submits one of the two to every lesson, so a run grades
(lessons x learners) submissions through the course's own grader (``grade_all``, the code of ``make grade``)
with its default policy: each kernel sealed off (bubblewrap), its limits as ``make grade``'s.

First an untimed run makes the student versions and the instructor's reference results (cached in the
course folder, as they are between two ``make grade`` runs of a term); then the same submissions are graded
with JOBS = 1 and with JOBS = 2, each timed from the start of ``grade_all`` to its CSV. The load average
is read before and after each timed run: the machine's other work slows the figures.

Quick mode (a check that the section works, not a measurement; ``tests/test_bench_class_grading.py``):
lesson 00 only, one answered copy, no untimed run first.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from .common import BUSY_LOAD_PER_CORE, ROOT, Config, Log, Results, load_average

NAME, TITLE = "classgrading", "## Grading a class: sealed submissions per minute"

JOBS = (1, 2)
KINDS = ("answered", "blank")
#: The class the guide plans for: learners, and lessons each hands in.
CLASS_LEARNERS = 300
QUICK_LESSON = "00_roadmap"


def answered_copy(student: Any, instructor: Any) -> Any:
    """``student`` (a student version) with every answer cell holding the instructor's model answer."""
    import copy

    from selfattention.coursework import lessons

    answers = {lessons.grade_id(cell): lessons.solution_parts(lessons.source(cell), "")[1]
               for cell in instructor.cells if lessons.is_answer(cell)}
    out = copy.deepcopy(student)
    for cell in out.cells:
        if lessons.is_answer(cell) and lessons.grade_id(cell) in answers:
            cell.source = answers[lessons.grade_id(cell)]
    return out


def write_submissions(paths: list[Path], releases: dict[str, Path], folder: Path,
                      kinds: tuple[str, ...] = KINDS) -> list[str]:
    """``folder/KIND/NN_topic.ipynb`` for each lesson and kind (the learners are named after their kind);
    returns the learners' names."""
    import nbformat

    for path in paths:
        student = nbformat.read(releases[path.stem], as_version=4)
        copies = {"answered": answered_copy(student, nbformat.read(path, as_version=4)), "blank": student}
        for kind in kinds:
            (folder / kind).mkdir(parents=True, exist_ok=True)
            nbformat.write(copies[kind], folder / kind / path.name)
    return list(kinds)


def run(cfg: Config, res: Results, log: Log) -> None:
    """Measure into ``res.class_grading``; only the reason where submissions cannot be sealed off here."""
    from selfattention.coursework.course import generate_student_versions
    from selfattention.coursework.folder import CourseFolder
    from selfattention.coursework.grading import grade_all
    from selfattention.coursework.lessons import find_lessons
    from selfattention.coursework.runner import RunPolicy, unavailable
    from selfattention.coursework.verdicts import reference_records

    policy = RunPolicy()  # make grade's defaults: sealed off, 60 s a cell, 300 s a submission
    if why := unavailable(policy):
        res.class_grading = {"unavailable": why}
        return
    notebooks = ROOT / "notebooks"
    paths = [p for p in find_lessons(notebooks) if not cfg.quick or p.stem == QUICK_LESSON]
    out: dict[str, Any] = {"lessons": [p.stem for p in paths], "policy": policy.label, "runs": {},
                           "cores": os.cpu_count() or 1, "cell_timeout": policy.cell_timeout}
    with tempfile.TemporaryDirectory(prefix="class-grading-") as tmp:
        root = Path(tmp)
        build, submissions = root / "course", root / "submissions"
        releases = generate_student_versions(build, paths)
        learners = write_submissions(paths, releases, submissions, ("answered",) if cfg.quick else KINDS)
        out["submissions"] = len(paths) * len(learners)
        if not cfg.quick:
            log(f"  untimed: the instructor's reference runs, {len(paths)} lesson(s)")
            for path in paths:
                reference_records(CourseFolder(build), path, policy)
        for jobs in JOBS:
            log(f"  {out['submissions']} submissions with JOBS={jobs}")
            finished: list[tuple[float, str]] = []

            def say(msg: str, finished: list[tuple[float, str]] = finished) -> None:
                if re.match(r"\S+ \d\d_\w+: ", msg):  # a row: "LEARNER LESSON: score ..."
                    finished.append((time.perf_counter(), msg.split(":")[0]))

            load_before = load_average()
            start = time.perf_counter()
            rows = grade_all(notebooks, submissions, build, root / f"jobs{jobs}.csv", policy, say=say,
                             jobs=jobs, replace=True)
            seconds = time.perf_counter() - start
            load_after = load_average()
            run_: dict[str, Any] = {
                "seconds": seconds, "load_before": load_before, "load_after": load_after,
                "scores": {f"{r.learner} {r.lesson}": (r.auto_score, r.auto_max_score, r.reason)
                           for r in rows},
            }
            if jobs == 1:  # one submission after the other: each one's time is the gap between rows
                per_lesson: dict[str, float] = {}
                gaps: list[float] = []
                last = start
                for stamp, who in finished:
                    lesson = who.split()[1]
                    per_lesson[lesson] = per_lesson.get(lesson, 0.0) + stamp - last
                    gaps.append(stamp - last)
                    last = stamp
                run_["per_lesson"] = per_lesson
                run_["slowest"] = max(gaps)
                run_["over_cell_limit"] = sum(gap > policy.cell_timeout for gap in gaps)
            out["runs"][jobs] = run_
    res.class_grading = out


def class_hours(per_core_rate: float, cores: int, lessons: int) -> float:
    """Hours to grade ``CLASS_LEARNERS`` x ``lessons`` submissions at ``per_core_rate`` (per minute) on
    ``cores`` cores with JOBS = cores (assuming the throughput grows with the cores as measured)."""
    return CLASS_LEARNERS * lessons / (per_core_rate * cores) / 60


def lines(cfg: Config, res: Results) -> list[str]:
    out = [TITLE, ""]
    data = getattr(res, "class_grading", None) or {}
    if "unavailable" in data:
        return [*out, f"Not measured: cannot seal a submission off here ({data['unavailable']}).", ""]
    if not data.get("runs"):
        return [*out, "Not measured in this run.", ""]
    n, lessons, cores = data["submissions"], data["lessons"], data["cores"]
    if cfg.quick:
        who = (f"Quick mode, not a measurement: lesson {QUICK_LESSON} only, one answered copy, the first run "
               "including the instructor's reference run.")
    else:
        who = (f"Every lesson ({len(lessons)}) handed in by two learners, one with every answer cell holding "
               "the lesson's model answer, one untouched (the student version as released); the instructor's "
               "reference runs made beforehand, untimed (the course folder keeps them between runs).")
    out += [
        f"{n} submission(s) graded by `make grade`'s code with its defaults ({data['policy']}, a kernel per "
        f"submission), on {cores} cores. {who} A submission's time is wall time: with other work on the "
        "machine it grows with the load (below).",
        "",
        "| JOBS | wall time (s) | submissions per minute | per core in use | load average before (1, 5 min) "
        "| after |",
        "| ---: | ---: | ---: | ---: | --- | --- |",
    ]
    wall = {}
    for jobs, run_ in sorted(data["runs"].items()):
        rate = n / (run_["seconds"] / 60)
        wall[jobs] = rate / min(jobs, cores)
        lb, la = run_["load_before"], run_["load_after"]
        out.append(f"| {jobs} | {run_['seconds']:.1f} | {rate:.1f} | {wall[jobs]:.1f} | "
                   f"{lb[0]:.2f}, {lb[1]:.2f} | {la[0]:.2f}, {la[1]:.2f} |")
    out.append("")
    busy = max(max(r["load_before"][0], r["load_after"][0]) for r in data["runs"].values())
    if busy > BUSY_LOAD_PER_CORE * cores:
        out += [f"**The machine was busy (1-minute load average up to {busy:.1f} on {cores} cores, this "
                "benchmark counting for about 1 to 2): the times are inflated, and the hours below are this "
                "busy machine's. Rerun on the machine that will grade.**", ""]
    answered = sorted(s for s in next(iter(data["runs"].values()))["scores"] if s.startswith("answered "))
    missed = sorted({f"{s}, JOBS = {jobs}: {got:g}/{top:g} ({why})" for jobs, run_ in data["runs"].items()
                     for s, (got, top, why) in run_["scores"].items() if s in answered and got < top})
    full = [s for s in answered if all(r["scores"][s][0] == r["scores"][s][1] for r in data["runs"].values())]
    out.append(f"Check of the run: {len(full)} of {len(answered)} answered copies got full marks on the "
               "autograded exercises in every timed run" + (f"; not: {'; '.join(missed)}" if missed else "")
               + ".")
    out.append("")
    one = data["runs"].get(1, {})
    if "over_cell_limit" in one:
        out.append(f"With JOBS = 1 the slowest submission took {one['slowest']:.1f} s; "
                   f"{one['over_cell_limit']} took over {data.get('cell_timeout', 60)} s in all (the time "
                   "limit of a single cell).")
        out.append("")
    per_lesson = one.get("per_lesson")
    if per_lesson and not cfg.quick:
        out += ["Wall seconds per lesson with JOBS = 1 (its two submissions, the grader's worker start "
                "included):", "", "| lesson | s |", "| --- | ---: |"]
        out += [f"| {lesson} | {s:.1f} |" for lesson, s in sorted(per_lesson.items())]
        out.append("")
    if wall and not cfg.quick:
        low, high = min(wall.values()), max(wall.values())
        memory = data["policy"].split("memory ")[1].split(",")[0]
        out.append(f"**A class of {CLASS_LEARNERS} learners x {len(lessons)} lessons** "
                   f"({CLASS_LEARNERS * len(lessons)} submissions) at {low:.1f} to {high:.1f} submissions "
                   "per minute per core (as measured here), on N cores with JOBS = N: "
                   + ", ".join(f"{c} cores {class_hours(high, c, len(lessons)):.1f} to "
                               f"{class_hours(low, c, len(lessons)):.1f} h" for c in (2, 4, 8, 16))
                   + f". Each job may hold {memory} of memory: JOBS at most the cores, and at most the "
                   f"free memory over {memory}.")
        out.append("")
    return out
