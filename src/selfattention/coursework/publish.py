"""The published student versions: ``student/NN_topic.ipynb``, written by ``make release``.

Every lesson links ("Open in Colab", "Launch Binder") to its student version in the course's public
repository, so the student versions are committed next to the lessons. They are nbgrader's output
(:func:`.course.generate_student_versions`), byte for byte: ``tests/test_publish.py`` makes them
again and fails, naming ``make release``, when the committed ones differ.

Making them takes nbgrader a few seconds per lesson, so each one is kept in the course directory
with a fingerprint of what it was made from (the lesson, the code that converts it, nbgrader's and
nbformat's versions) and made again only when one of those changes. ``make lab`` uses the same
cache (:func:`student_versions`) for the learners' working copies.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

from . import LESSON_GLOB, find_lessons
from .folder import CourseFolder

__all__ = ["STUDENT_DIR", "RELEASE_COMMAND", "fingerprint", "student_versions", "release", "out_of_step"]

#: Where ``make release`` writes the student versions (the links in every lesson point there).
STUDENT_DIR = "student"
#: What to run when ``student/`` is out of step with ``notebooks/``.
RELEASE_COMMAND = "make release"


def _generator_fingerprint() -> str:
    """What, besides the lesson, decides a student version's bytes."""
    code = b"".join(Path(__file__).with_name(name).read_bytes() for name in ("course.py", "lessons.py"))
    versions = f"nbgrader {version('nbgrader')}; nbformat {version('nbformat')}".encode()
    return hashlib.sha256(code + b"\0" + versions).hexdigest()


def _fingerprint(lesson: Path, generator: str) -> str:
    return hashlib.sha256(lesson.read_bytes() + b"\0" + generator.encode()).hexdigest()


def fingerprint(lesson: Path) -> str:
    """What the student version of ``lesson`` is made from: the lesson, the code that converts it,
    nbgrader's and nbformat's versions. Equal fingerprints, equal student versions."""
    return _fingerprint(lesson, _generator_fingerprint())


def student_versions(build: Path, lessons: list[Path]) -> dict[str, Path]:
    """Student versions of ``lessons``, made in the nbgrader course directory ``build``.

    Returns ``{"NN_topic": path of its student version}`` (inside ``build/release/``). A version
    made earlier from the same lesson with the same code and versions is reused.
    """
    folder = CourseFolder(Path(build))
    with folder.release_lock():  # another make lab or make release on the same folder: wait for it
        return _cached_versions(folder, lessons)


def _cached_versions(folder: CourseFolder, lessons: list[Path]) -> dict[str, Path]:
    generator = _generator_fingerprint()
    made: dict[str, Path] = {}
    for lesson in lessons:
        path, stamp = folder.release(lesson.stem), folder.release_stamp(lesson.stem)
        fresh = stamp.is_file() and stamp.read_text().strip() == _fingerprint(lesson, generator)
        if path.is_file() and fresh:
            made[lesson.stem] = path
    missing = [lesson for lesson in lessons if lesson.stem not in made]
    if missing:
        from .course import generate_student_versions  # imports nbgrader (seconds): only when needed

        fresh = generate_student_versions(folder.root, missing, lock=False)
        for lesson in missing:
            folder.release_stamp(lesson.stem).write_text(_fingerprint(lesson, generator) + "\n")
            made[lesson.stem] = fresh[lesson.stem]
    return made


def release(notebooks: Path, out: Path, build: Path, say: Callable[[str], None] = print) -> list[Path]:
    """Write the student version of every lesson in ``notebooks`` to ``out/NN_topic.ipynb``.

    A notebook in ``out`` named like a lesson (``NN_topic.ipynb``) whose lesson no longer exists
    is removed, so ``out`` holds exactly one student version per lesson; other files are left alone.
    Returns the paths written.
    """
    out = Path(out)
    lessons = find_lessons(Path(notebooks))
    made = student_versions(build, lessons)
    out.mkdir(parents=True, exist_ok=True)
    names = {lesson.name for lesson in lessons}
    for stale in sorted(out.glob(LESSON_GLOB)):
        if stale.name not in names:
            stale.unlink()
            say(f"removed {out / stale.name} (no lesson of that name any more)")
    written = []
    for lesson in lessons:
        target = out / lesson.name
        shutil.copyfile(made[lesson.stem], target)
        written.append(target)
    say(f"wrote {len(written)} student versions to {out}/: no solutions, hidden tests or outputs")
    return written


def out_of_step(notebooks: Path, published: Path, build: Path) -> list[str]:
    """What differs between ``published`` and the student versions of the lessons in ``notebooks``.

    Returns one line per difference ("02_basic_self_attention.ipynb differs", "... is missing",
    "... has no lesson"); an empty list when ``published`` is in step.
    """
    published = Path(published)
    lessons = find_lessons(Path(notebooks))
    made = student_versions(build, lessons)
    problems = []
    for lesson in lessons:
        target = published / lesson.name
        if not target.is_file():
            problems.append(f"{lesson.name} is missing")
        elif target.read_bytes() != made[lesson.stem].read_bytes():
            problems.append(f"{lesson.name} differs")
    names = {lesson.name for lesson in lessons}
    extra = [p.name for p in sorted(published.glob(LESSON_GLOB)) if p.name not in names]
    problems += [f"{name} has no lesson" for name in extra]
    return problems
