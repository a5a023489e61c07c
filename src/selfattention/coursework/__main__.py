"""Command line: ``python -m selfattention.coursework {lab,present,release,grade,feedback} [options]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


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
    grade.add_argument("--cell-timeout", type=int, default=60, help="seconds per cell")
    grade.add_argument("--submission-timeout", type=int, default=300, help="seconds per submission")
    grade.add_argument("--max-output-bytes", type=int, default=1_000_000, help="output kept per cell")
    grade.add_argument("--jobs", type=int, default=1, help="submissions graded at the same time")
    _isolation_arguments(grade)
    grade.add_argument("--replace", action="store_true",
                       help="write the CSV even if it has fewer rows than the one it replaces")

    feedback = sub.add_parser("feedback", help="one HTML page per learner and lesson from the last grading")
    feedback.add_argument("--build", type=Path, default=Path("build/course"))
    feedback.add_argument("--out", type=Path, default=Path("feedback"))

    worker = sub.add_parser("_autograde", help=argparse.SUPPRESS)
    worker.add_argument("root")
    worker.add_argument("lesson")
    worker.add_argument("learners", nargs="+")
    worker.add_argument("--cell-timeout", type=int, default=60)
    worker.add_argument("--max-output-bytes", type=int, default=1_000_000)
    _isolation_arguments(worker)

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
        from .grading import GradingRefused, IsolationUnavailable, Limits, grade_all

        limits = Limits(args.cell_timeout, args.submission_timeout, args.max_output_bytes)
        try:
            grade_all(args.notebooks, args.submissions, args.build, args.out, limits, jobs=args.jobs,
                      isolation=_isolation(args), replace=args.replace)
        except (GradingRefused, IsolationUnavailable, ValueError) as exc:
            print(f"make grade: {exc}", file=sys.stderr)
            return 2
    elif args.command == "feedback":
        from .feedback import write_feedback

        try:
            write_feedback(args.build, args.out)
        except FileNotFoundError as exc:
            print(f"make feedback: {exc}", file=sys.stderr)
            return 2
    else:
        from .grading import autograde_worker

        return autograde_worker(
            args.root, args.lesson, args.learners, args.cell_timeout, args.max_output_bytes,
            _isolation(args),
        )
    return 0


def _isolation_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--isolation", choices=["bwrap", "none"], default="bwrap",
                        help="seal each submission off with bubblewrap, or not (none)")
    parser.add_argument("--memory-limit", default="2G", help="memory per submission (512M, 2G...)")
    parser.add_argument("--max-processes", type=int, default=256,
                        help="processes and threads per submission")
    parser.add_argument("--disk-limit", default="512M", help="disk a submission may write")


def _isolation(args: argparse.Namespace):  # -> Isolation (imported lazily: the lab's fast path)
    from .sandbox import Isolation, parse_size

    return Isolation(args.isolation, parse_size(args.memory_limit, "--memory-limit"),
                     args.max_processes, parse_size(args.disk_limit, "--disk-limit"))


if __name__ == "__main__":
    sys.exit(main())
