"""``python -m benchmarks [--quick] [--full] [--only NAME ...] [--skip NAME ...]`` (``benchmarks/__init__``).

``--full`` also times ``make check`` and ``make test`` (several minutes more); ``--quick`` runs tiny sizes
only (a check that the script works, not a measurement). ``--only`` runs the named sections and replaces only
their parts of an existing RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from . import attention, blockwise, class_grading, grading, hub_load, lessons, report, sdpa, testloop, widgets
from .common import HERE, ROOT, Config, Results, load_average, machine_description, target_rows

#: The sections, in the order of RESULTS.md (each: NAME, TITLE, run, lines).
SECTIONS = (lessons, attention, blockwise, sdpa, grading, class_grading, hub_load, widgets, testloop)


def make_config(args: argparse.Namespace) -> Config:
    if args.notebooks:
        paths = [Path(p) for p in args.notebooks]
    else:
        from selfattention.coursework.lessons import find_lessons

        paths = find_lessons(ROOT / "notebooks")
    if args.quick:
        return Config(
            lesson_paths=paths, lesson_repeats=args.lesson_repeats or 1,
            attention_T=[16, 32], weights_max_T=32, numpy_max_T=16, block_T=[64, 128, 256],
            time_budget_s=0.0, min_repeats=1, max_repeats=1, full=args.full, quick=True,
        )
    return Config(
        lesson_paths=paths, lesson_repeats=args.lesson_repeats or 3,
        attention_T=[64, 128, 256, 512, 1024, 2048, 4096], weights_max_T=args.weights_max_t,
        numpy_max_T=args.numpy_max_t, block_T=[256, 512, 1024, 2048, 4096, 8192],
        time_budget_s=args.budget, min_repeats=3, max_repeats=25, full=args.full, quick=False,
    )


def main(argv: Sequence[str] | None = None) -> int:
    names = [section.NAME for section in SECTIONS]
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="directory for RESULTS.md and results.png")
    parser.add_argument("--full", action="store_true", help="also time `make check` and `make test`")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, single runs (a smoke test)")
    parser.add_argument("--notebooks", nargs="*", help="notebooks to time (default: the lessons)")
    parser.add_argument("--lesson-repeats", type=int, default=0, help="cold runs per notebook (default 3)")
    parser.add_argument("--weights-max-t", type=int, default=2048,
                        help="largest T for the methods that return attention weights")
    parser.add_argument("--numpy-max-t", type=int, default=2048,
                        help="largest T for our NumPy scaled_dot_product_attention")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds of repeats per timing")
    parser.add_argument("--skip", nargs="*", default=[], choices=names, help="sections to leave out")
    parser.add_argument("--only", nargs="*", default=[], choices=names,
                        help="run only these sections; replace only their parts of RESULTS.md")
    args = parser.parse_args(argv)

    torch.set_num_threads(2)
    cfg = make_config(args)
    cfg.full = cfg.full or "tests" in args.only
    chosen = [s for s in SECTIONS if (s.NAME in args.only if args.only else s.NAME not in args.skip)]
    args.out.mkdir(parents=True, exist_ok=True)
    res = Results()
    res.started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    res.load_before = load_average()
    start = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - start:6.1f} s] {msg}", flush=True)

    res.machine = machine_description()
    for section in chosen:
        if section is not testloop:
            res.load_samples.append(load_average()[0])
        log(section.TITLE.lstrip("# "))
        section.run(cfg, res, log)
        if section in (widgets, hub_load, testloop):  # the browser, the hub and make test load both cores
            continue
        res.load_after = load_average()
    res.seconds = time.perf_counter() - start
    path = args.out / "RESULTS.md"
    if args.only:
        report.replace_sections(path, [section.lines(cfg, res) for section in chosen])
        report.update_targets(path, target_rows(res))
    else:
        plot = "results.png"
        report.write_plot(cfg, res, args.out / plot)
        report.write(path, [report.header(cfg, res, plot), *(s.lines(cfg, res) for s in SECTIONS
                                                             if s in chosen or s is testloop)])
    log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
