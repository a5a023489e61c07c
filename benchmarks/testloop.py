"""Section 5: the test loop, timed as a maintainer runs it: ``make check`` (ruff and the unit tests) and
``make test`` (every check, what CI runs), each after ``make setup``.

Each figure is the command's wall time, pytest's own time (its last line), the tests it ran and the machine's
load around it. Only with ``--full`` (``make bench FULL=1``), or alone: ``python -m benchmarks --only tests``.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import time

from .common import CHECK_LIMIT_S, ROOT, TEST_LIMIT_S, Config, Log, Results, load_average, verdict

NAME, TITLE = "tests", "## 5. The test loop"
_SUMMARY = re.compile(r"=+ (?P<counts>.*?) in (?P<seconds>[\d.]+)s")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(target: str) -> dict[str, object]:
    """Run ``make target``; its wall time, the CPU time of everything it ran, pytest's time and counts, exit
    code and the load around it. pytest's 25 slowest tests and the end of the output go to
    ``build/testloop-make-TARGET.log`` (where the time went)."""
    before, cpu = load_average(), _children_cpu()
    start = time.perf_counter()
    env = {**os.environ, "PYTEST_ADDOPTS": f"{os.environ.get('PYTEST_ADDOPTS', '')} --durations=25".strip()}
    proc = subprocess.run(["make", "--no-print-directory", target], cwd=ROOT, capture_output=True, text=True,
                          env=env)
    seconds = time.perf_counter() - start
    log = ROOT / "build" / f"testloop-make-{target}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(proc.stdout[-60_000:] + proc.stderr[-10_000:], encoding="utf-8")
    found = list(_SUMMARY.finditer(proc.stdout))
    return {"seconds": seconds, "cpu_seconds": _children_cpu() - cpu, "returncode": proc.returncode,
            "load_before": before[0], "load_after": load_average()[0],
            "pytest_seconds": float(found[-1]["seconds"]) if found else None,
            "counts": found[-1]["counts"] if found else "no pytest summary"}


def run(cfg: Config, res: Results, log: Log) -> None:
    if not cfg.full:
        return
    subprocess.run(["make", "setup"], cwd=ROOT, capture_output=True, text=True, check=True)
    for target in ("check", "test"):
        figures = measure(target)
        setattr(res, f"make_{target}", figures)
        log(f"  make {target}: {figures['seconds']:.0f} s (pytest {figures['pytest_seconds']} s), "
            f"exit code {figures['returncode']}")


def lines(cfg: Config, res: Results) -> list[str]:
    out = [TITLE, "",
           f"On {os.cpu_count()} cores. `make check`: ruff and the unit tests (`pytest -m unit`), no "
           "Chromium, bubblewrap or apt; target under 2 minutes. `make test`: everything, what CI runs; "
           "target at most 8 minutes of pytest. `tests/conftest.py` says which tests are in which tier.", ""]
    if res.make_check is None and res.make_test is None:
        how = "`make bench FULL=1`, or `python -m benchmarks --only tests`"
        return [*out, f"Not measured in this run ({how}).", ""]
    out += ["| command | wall time | pytest | CPU time (all processes) | tests | 1-min load before, after | "
            "target | verdict |",
            "|---|---|---|---|---|---|---|---|"]
    for target, figures, limit, key in (("make check", res.make_check, CHECK_LIMIT_S, "seconds"),
                                        ("make test", res.make_test, TEST_LIMIT_S, "pytest_seconds")):
        if figures is None:
            continue
        measured = figures[key]
        ok = None if measured is None else (measured <= limit and figures["returncode"] == 0)
        pytest_s = "—" if figures["pytest_seconds"] is None else f"{figures['pytest_seconds']:.0f} s"
        wall = f"{figures['seconds']:.0f} s ({figures['seconds'] / 60:.1f} min)"
        cpu = figures.get("cpu_seconds")
        cpu_s = "—" if cpu is None else f"{cpu:.0f} s"
        out.append(f"| `{target}` | {wall} | {pytest_s} | {cpu_s} "
                   f"| {str(figures['counts']).replace('|', '/')} (exit {figures['returncode']}) | "
                   f"{figures['load_before']:.1f}, {figures['load_after']:.1f} | "
                   f"{'wall' if key == 'seconds' else 'pytest'} ≤ {limit / 60:.0f} min | {verdict(ok)} |")
    busy = max(max(f["load_before"], f["load_after"]) for f in (res.make_check, res.make_test) if f)
    if busy > 1.25 * (os.cpu_count() or 1):
        out += ["", f"**The machine was busy (1-minute load up to {busy:.1f} on {os.cpu_count()} cores): the "
                "wall times are inflated. The CPU time, what every process of the run used, depends far less "
                "on the load: on two otherwise idle cores the run takes at least half of it.**"]
    return [*out, ""]
