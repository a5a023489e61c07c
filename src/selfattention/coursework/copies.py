"""The learner's working copies: student versions in ``work/``, never overwritten once changed.

``work/.copies.json`` remembers, for every copy, a fingerprint of the lesson it was made from and
of the copy as it was written. On every run:

- a missing copy is made;
- a copy the learner has not touched is remade when its lesson has changed;
- a copy the learner has changed is kept, and one line says so. With ``refresh`` it is first
  saved to ``work/backups/NN_topic.YYYYmmdd-HHMMSS.ipynb`` (never deleted), then remade.

When nothing needs making this reads a few files and returns, without importing nbgrader.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from . import find_lessons

__all__ = ["Plan", "plan_copies", "update_working_copies"]

MANIFEST = ".copies.json"
BACKUPS = "backups"
RISE_CSS = "rise.css"  # notebooks/rise.css: how the lessons look as live slides (RISE)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Plan:
    """What to do with one lesson's working copy: "make", "keep", "backup-and-make" or "none"."""

    lesson: Path
    copy: Path
    action: str
    note: str = ""


def _wants_refresh(name: str, refresh: Iterable[str]) -> bool:
    return any(r in ("all", "1", "yes") or name.startswith(r) for r in refresh)


def plan_copies(lessons: list[Path], work: Path, refresh: Iterable[str] = ()) -> list[Plan]:
    """Decide, for every lesson, what happens to its copy in ``work`` (nothing is written).

    Inputs:
        refresh: lesson names or number prefixes ("02", "02_basic_self_attention") whose changed
            copies are backed up and replaced; "all" for every lesson.
    """
    refresh = list(refresh)
    manifest = _read_manifest(work)
    plans = []
    for lesson in lessons:
        copy = work / lesson.name
        entry = manifest.get(lesson.name, {})
        lesson_changed = entry.get("lesson") != _digest(lesson)
        if not copy.exists():
            plans.append(Plan(lesson, copy, "make", f"made your copy of {lesson.name}"))
        elif entry.get("copy") == _digest(copy):  # exactly as we wrote it: the learner has not started
            action = "make" if lesson_changed else "none"
            plans.append(Plan(lesson, copy, action, f"updated {lesson.name} (the lesson changed)"))
        elif _wants_refresh(lesson.stem, refresh):
            plans.append(Plan(lesson, copy, "backup-and-make", ""))
        else:
            note = f"kept your copy of {lesson.name} (you changed it)."
            if lesson_changed:
                note += (f" The lesson has changed since: `make lab REFRESH={lesson.stem[:2]}` gets the"
                         " new version and keeps yours in work/backups/.")
            plans.append(Plan(lesson, copy, "keep", note))
    return plans


def _read_manifest(work: Path) -> dict[str, dict[str, str]]:
    try:
        return json.loads((work / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _backup(copy: Path, work: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = work / BACKUPS / f"{copy.stem}.{stamp}{copy.suffix}"
    n = 1
    while target.exists():  # two refreshes within a second: never overwrite a backup
        target = work / BACKUPS / f"{copy.stem}.{stamp}-{n}{copy.suffix}"
        n += 1
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(copy, target)
    return target


def _student_versions(build: Path, lessons: list[Path]) -> dict[str, Path]:
    """Student versions of ``lessons``: made once per version of a lesson, then reused.

    ``build/release/NN_topic/.lesson`` holds the fingerprint of the lesson its student version was
    made from, written only after nbgrader succeeded.
    """
    made = {}
    for lesson in lessons:
        version = build / "release" / lesson.stem / lesson.name
        stamp = version.parent / ".lesson"
        if version.exists() and stamp.exists() and stamp.read_text().strip() == _digest(lesson):
            made[lesson.stem] = version
    missing = [lesson for lesson in lessons if lesson.stem not in made]
    if missing:
        from .course import generate_student_versions  # imports nbgrader (seconds): only when needed

        for lesson, version in zip(missing, generate_student_versions(build, missing).values(), strict=True):
            (version.parent / ".lesson").write_text(_digest(lesson) + "\n")
            made[lesson.stem] = version
    return made


def update_working_copies(
    notebooks: Path,
    work: Path,
    build: Path,
    refresh: Iterable[str] = (),
    say: Callable[[str], None] = print,
) -> list[Plan]:
    """Bring the working copies in ``work`` up to date with the lessons in ``notebooks``.

    Inputs:
        build: a scratch nbgrader course directory for making student versions.
        refresh: see :func:`plan_copies`.
        say: where the one-line messages go.
    Returns the plans carried out.
    """
    work, build = Path(work), Path(build)
    lessons = find_lessons(Path(notebooks))
    plans = plan_copies(lessons, work, refresh)
    todo = [p for p in plans if p.action in ("make", "backup-and-make")]
    manifest = _read_manifest(work)
    if todo:
        made = _student_versions(build, [p.lesson for p in todo])
        work.mkdir(parents=True, exist_ok=True)
        for plan in todo:
            if plan.action == "backup-and-make":
                saved = _backup(plan.copy, work)
                plan.note = (f"saved your copy of {plan.lesson.name} as {saved.relative_to(work)};"
                             " made a fresh one")
            shutil.copyfile(made[plan.lesson.stem], plan.copy)
            manifest[plan.lesson.name] = {"lesson": _digest(plan.lesson), "copy": _digest(plan.copy)}
        (work / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    style = Path(notebooks) / RISE_CSS
    if style.exists():  # the live slides' style sheet, read by RISE next to a notebook; always the course's
        work.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(style, work / RISE_CSS)
    for plan in plans:
        if plan.action != "none":
            say(plan.note)
    return plans
