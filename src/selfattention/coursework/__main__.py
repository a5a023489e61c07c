"""Command line: ``python -m selfattention.coursework {lab,present,release,grade,feedback} [options]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .policy import RunPolicy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m selfattention.coursework", description=__doc__)
    parser.add_argument("--notebooks", type=Path, default=Path("notebooks"), help="the lesson sources")
    sub = parser.add_subparsers(dest="command", required=True)

    lab = sub.add_parser("lab", help="make or update the learner's working copies")
    lab.add_argument("--work", type=Path, default=Path("work"))
    lab.add_argument("--build", type=Path, default=Path("build/lab"))
    lab.add_argument("--refresh", nargs="*", default=[], metavar="LESSON",
                     help="replace these changed copies (NN, a lesson name, or all), backing them up first")

    present = sub.add_parser("present",
                             help="make or update the presenter's copies (slides in, no solutions)")
    present.add_argument("--work", type=Path, default=Path("present"))
    present.add_argument("--build", type=Path, default=Path("build/present"))
    present.add_argument("--refresh", nargs="*", default=[], metavar="LESSON",
                         help="replace these changed copies (NN, a lesson name, or all), backing them up")

    release = sub.add_parser(
        "release", help="student versions of every lesson, into student/ (committed: the lessons link to it)"
    )
    release.add_argument("--out", type=Path, default=Path("student"))
    release.add_argument("--build", type=Path, default=Path("build/course"))

    grade = sub.add_parser("grade", help="autograde everything under the submissions folder")
    grade.add_argument("--submissions", type=Path, default=Path("submissions"))
    grade.add_argument("--build", type=Path, default=Path("build/course"))
    grade.add_argument("--out", type=Path, default=Path("grades/grades.csv"))
    grade.add_argument("--jobs", type=int, default=1, help="submissions graded at the same time")
    RunPolicy.add_arguments(grade)
    grade.add_argument("--replace", action="store_true",
                       help="write the CSV even if it has fewer rows than the one it replaces")

    feedback = sub.add_parser("feedback", help="one HTML page per learner and lesson from the last grading")
    feedback.add_argument("--build", type=Path, default=Path("build/course"))
    feedback.add_argument("--out", type=Path, default=Path("feedback"))

    args = parser.parse_args(argv)
    if args.command == "lab":
        from .copies import update_working_copies

        update_working_copies(args.notebooks, args.work, args.build, args.refresh)
    elif args.command == "present":
        from .copies import update_working_copies

        update_working_copies(args.notebooks, args.work, args.build, args.refresh, room=True)
    elif args.command == "release":
        from .publish import release

        release(args.notebooks, args.out, args.build)
    elif args.command == "grade":
        try:
            policy = RunPolicy.from_arguments(args)
        except ValueError as exc:
            print(f"make grade: {exc}", file=sys.stderr)
            return 2
        from .grading import GradingRefused, IsolationUnavailable, LessonBroken, grade_all

        try:
            grade_all(args.notebooks, args.submissions, args.build, args.out, policy, jobs=args.jobs,
                      replace=args.replace)
        except (GradingRefused, IsolationUnavailable, LessonBroken, ValueError) as exc:
            print(f"make grade: {exc}", file=sys.stderr)
            return 2
    elif args.command == "feedback":
        from .feedback import write_feedback

        try:
            write_feedback(args.build, args.out)
        except (FileNotFoundError, ValueError) as exc:
            print(f"make feedback: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
