"""The learner's working copies: student versions in ``work/``, never overwritten once changed.

``work/.copies.json`` remembers, for every copy, a fingerprint of the lesson it was made from and
of the copy as it was written. On every run:

- a missing copy is made;
- a copy the learner has not touched is remade when its lesson has changed;
- a copy the learner has changed is kept, and one line says so. With ``refresh`` it is first
  saved to ``work/backups/NN_topic.YYYYmmdd-HHMMSS.ipynb`` (never deleted), then remade.

When nothing needs making this reads a few files and returns, without importing nbgrader. The
student versions come from the one cache :func:`.publish.student_versions` (the same as ``make
release``'s); presenter copies (``make present``) are the room view of :mod:`.lessons`.
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
from .folder import CourseFolder
from .publish import fingerprint, student_versions

__all__ = ["Plan", "plan_copies", "update_working_copies"]

MANIFEST = ".copies.json"
BACKUPS = "backups"
RISE_CSS = "rise.css"  # notebooks/rise.css: how the lessons look as live slides (RISE)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Plan:
    """What to do with one lesson's working copy: "make", "keep", "backup-and-make", "none", or
    "blocked" (its path is taken by something that is not a file: nothing is touched)."""

    lesson: Path
    copy: Path
    action: str
    note: str = ""


def _wants_refresh(name: str, refresh: Iterable[str]) -> bool:
    return any(r in ("all", "1", "yes") or name.startswith(r) for r in refresh)


def plan_copies(
    lessons: list[Path], work: Path, refresh: Iterable[str] = (), room: bool = False
) -> list[Plan]:
    """Decide, for every lesson, what happens to its copy in ``work`` (nothing is written).

    Inputs:
        refresh: lesson names or number prefixes ("02", "02_basic_self_attention") whose changed
            copies are backed up and replaced; "all" for every lesson.
        room: presenter copies (``make present``) rather than learners' copies (``make lab``).
    """
    refresh = list(refresh)
    manifest = _read_manifest(work)
    command = "make present" if room else "make lab"
    plans = []
    for lesson in lessons:
        copy = work / lesson.name
        entry = manifest.get(lesson.name, {})
        lesson_changed = entry.get("lesson") != _made_from(lesson, room)
        if copy.is_symlink() or (copy.exists() and not copy.is_file()):
            note = (f"left {copy} alone: it is not a notebook file (a folder or a link?). Move it away and"
                    f" run `{command}` again to get your copy of {lesson.name}.")
            plans.append(Plan(lesson, copy, "blocked", note))
        elif not copy.exists():
            plans.append(Plan(lesson, copy, "make", f"made your copy of {lesson.name}"))
        elif entry.get("copy") == _digest(copy):  # exactly as we wrote it: the learner has not started
            action = "make" if lesson_changed else "none"
            plans.append(Plan(lesson, copy, action, f"updated {lesson.name} (the lesson changed)"))
        elif _wants_refresh(lesson.stem, refresh):
            plans.append(Plan(lesson, copy, "backup-and-make", ""))
        else:
            note = f"kept your copy of {lesson.name} (you changed it)."
            if lesson_changed:
                note += (f" The lesson has changed since: `{command} REFRESH={lesson.stem[:2]}` gets the"
                         f" new version and keeps yours in {work.name}/{BACKUPS}/.")
            plans.append(Plan(lesson, copy, "keep", note))
    return plans


def _made_from(lesson: Path, room: bool) -> str:
    """The fingerprint of what a copy of ``lesson`` is made from: the lesson and the code that makes
    the copy (so a change to either remakes copies nobody has touched)."""
    if room:
        code = Path(__file__).with_name("lessons.py").read_bytes()
        return hashlib.sha256(lesson.read_bytes() + b"\0room\0" + code).hexdigest()
    return fingerprint(lesson)


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


def _room_versions(build: Path, lessons: list[Path]) -> dict[str, Path]:
    """Presenter copies of ``lessons`` in ``build/room/``: the room view (:mod:`.lessons`: slide-only
    cells kept, solutions cleared, hidden tests removed) with no outputs. No nbgrader needed."""
    from .lessons import learner_notebook, read_lesson

    made = {}
    for lesson in lessons:
        path = CourseFolder(build).room(lesson.stem)
        path.parent.mkdir(parents=True, exist_ok=True)
        nb = learner_notebook(read_lesson(lesson), room=True, outputs=False)
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        made[lesson.stem] = path
    return made


def update_working_copies(
    notebooks: Path,
    work: Path,
    build: Path,
    refresh: Iterable[str] = (),
    say: Callable[[str], None] = print,
    room: bool = False,
) -> list[Plan]:
    """Bring the working copies in ``work`` up to date with the lessons in ``notebooks``.

    Inputs:
        build: a scratch nbgrader course directory for making student versions.
        refresh: see :func:`plan_copies`.
        say: where the one-line messages go.
        room: make presenter copies (the room view: the deck's slide-only cells kept, no solutions)
            instead of learners' copies (``make present``).
    Returns the plans carried out.
    """
    work, build = Path(work), Path(build)
    lessons = find_lessons(Path(notebooks))
    plans = plan_copies(lessons, work, refresh, room)
    todo = [p for p in plans if p.action in ("make", "backup-and-make")]
    manifest = _read_manifest(work)
    if todo:
        lessons = [p.lesson for p in todo]
        made = _room_versions(build, lessons) if room else student_versions(build, lessons)
        work.mkdir(parents=True, exist_ok=True)
        for plan in todo:
            if plan.action == "backup-and-make":
                saved = _backup(plan.copy, work)
                plan.note = (f"saved your copy of {plan.lesson.name} as {saved.relative_to(work)};"
                             " made a fresh one")
            shutil.copyfile(made[plan.lesson.stem], plan.copy)
            manifest[plan.lesson.name] = {"lesson": _made_from(plan.lesson, room), "copy": _digest(plan.copy)}
        (work / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    style = Path(notebooks) / RISE_CSS
    if style.exists():  # the live slides' style sheet, read by RISE next to a notebook; always the course's
        work.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(style, work / RISE_CSS)
    for plan in plans:
        if plan.action != "none":
            say(plan.note)
    return plans
