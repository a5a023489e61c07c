"""A class on a JupyterHub at once: as many learners as this machine holds log in, start their servers and run
a lesson's cells together; the hub's page loads while loaded, whether any kernel died, and each learner's
peak memory, measured.

The hub is :mod:`labdriver.hub`'s (the one ``tests/test_hub.py`` starts: JupyterHub on 127.0.0.1 with its
proxy, each learner a local account with a server run as that user, the course's learner configuration).
Each learner logs in through the hub's login form; their servers are started through the hub's REST API, all
at once; then every learner, at the same time, opens a kernel and runs the lesson's code cells one after the
other over the kernel's websocket, as JupyterLab does. The lesson is the student version handed out
(``student/``) with every answer cell holding the lesson's model answer (a learner who works it through).

While the lesson runs, one learner's hub page (``/hub/home``, with the session cookie of their login) and the
learners' JupyterLab pages (``/user/NAME/lab``, through the proxy, in turn) are loaded one after the other;
each load's wall time is kept (p50/p95, and the same before the lesson starts, with the servers idle). A
kernel died if a cell raised, its websocket closed, it reported ``restarting`` or ``dead``, or its process
id differs at the end from the one at the start.

Memory per learner: every 0.5 s, the sum of the resident memory (RSS) of all the learner's processes (their
server, its kernel and whatever the server starts), from ``psutil``; the learner's peak is the largest sum,
kept apart for the server's start, the server alone once started, and the lesson. Shared pages count once per
process, so a sum overstates a little what a container's memory cgroup would be charged. As a bound on what
sampling may miss, the sum of each process's own peak (``VmHWM``) is read at the end.

How many learners: :data:`TARGET_LEARNERS`, fewer where half the machine's available memory does not hold
:data:`PLANNED_PER_LEARNER` each. Quick mode (``tests/test_bench_hub_load.py``): 2 learners, lesson 00.
"""

from __future__ import annotations

import asyncio
import math
import os
import statistics
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .common import ROOT, Config, Log, Results, load_average
from .memory import PEAKS

NAME, TITLE = "hubload", "## A class on a JupyterHub: learners at once"

TARGET_LEARNERS = 20
PLANNED_PER_LEARNER = 2**29  # 0.5 GiB: a server and one kernel of an early lesson (section 1's figures)
LESSON, QUICK_LESSON = "02_basic_self_attention", "00_roadmap"
SAMPLE_S = 0.5
CLASS_RUN_S = 1200  # all learners at once; each learner's own run is bounded at 900 s (_learner_run)
#: The guide's figures: headroom on the measured peak, and a second kernel (a learner who leaves one
#: lesson's kernel running and opens the next).
HEADROOM = 1.5
KERNELS_OPEN = 2
GIB, MIB = 2**30, 2**20
PID_CODE = "import os; print(os.getpid())"


def learners_this_machine_holds(available: int, target: int = TARGET_LEARNERS) -> int:
    """At most ``target``; at most half of ``available`` bytes at PLANNED_PER_LEARNER each; at least 1."""
    return max(1, min(target, available // 2 // PLANNED_PER_LEARNER))


def lesson_cells(name: str) -> list[str]:
    """The code cells of lesson ``name`` as a learner who worked it through runs them: the student version
    (``student/``) with the model answers of ``notebooks/`` in its answer cells."""
    import nbformat

    from .class_grading import answered_copy

    student = nbformat.read(ROOT / "student" / f"{name}.ipynb", as_version=4)
    instructor = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    return [c.source for c in answered_copy(student, instructor).cells if c.cell_type == "code"]


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, nearest rank."""
    ranked = sorted(values)
    return ranked[min(len(ranked) - 1, max(0, math.ceil(q * len(ranked)) - 1))]


def quarter_gib_up(n: float) -> int:
    return math.ceil(n / (GIB / 4)) * (GIB // 4)


def advice(server: int, kernel: int) -> tuple[int, int]:
    """(guarantee, limit) in bytes for one learner: the server (``server``, measured on the hub) with one
    kernel of ``kernel`` bytes, and with KERNELS_OPEN of them (a learner who leaves one lesson's kernel
    running and opens the next), each times HEADROOM, rounded up to a quarter GiB."""
    return (quarter_gib_up((server + kernel) * HEADROOM),
            quarter_gib_up((server + KERNELS_OPEN * kernel) * HEADROOM))


class MemorySampler(threading.Thread):
    """Every SAMPLE_S, the sum of RSS over each user's processes; keeps each user's peak per phase."""

    def __init__(self, uids: dict[int, str]) -> None:
        super().__init__(daemon=True)
        self.uids, self.phase, self.samples = uids, "start", 0
        self.peaks: dict[str, dict[str, int]] = {"start": {}, "idle": {}, "lesson": {}}
        self.done = threading.Event()
        self.lock = threading.Lock()  # sample() runs here and, at each phase change, on the caller's thread

    def enter(self, phase: str) -> None:
        """Start ``phase`` with one sample of its own, so a phase shorter than SAMPLE_S still has a peak."""
        self.phase = phase
        self.sample()

    def sample(self) -> None:
        with self.lock:
            self._sample()

    def _sample(self) -> None:
        import psutil

        sums: dict[str, int] = dict.fromkeys(self.uids.values(), 0)
        for p in psutil.process_iter(["uids", "memory_info"]):
            uids, mem = p.info["uids"], p.info["memory_info"]
            if uids and mem and uids.real in self.uids:
                sums[self.uids[uids.real]] += mem.rss
        peaks = self.peaks[self.phase]
        for name, total in sums.items():
            peaks[name] = max(peaks.get(name, 0), total)
        self.samples += 1

    def run(self) -> None:
        while not self.done.wait(SAMPLE_S):
            self.sample()


def hwm_sums(uids: dict[int, str]) -> dict[str, int]:
    """Per user, the sum of each of their processes' peak resident memory (VmHWM) so far."""
    import psutil

    from .memory import peak_rss

    sums: dict[str, int] = dict.fromkeys(uids.values(), 0)
    for p in psutil.process_iter(["uids"]):
        if p.info["uids"] and p.info["uids"].real in uids:
            sums[uids[p.info["uids"].real]] += peak_rss(p.pid) or 0
    return sums


def page_loads(pages: list[tuple[str, Callable[[], int]]], stop: threading.Event,
               times: dict[str, list[float]], failures: list[str], count: int | None = None) -> None:
    """Load each page in turn (``count`` rounds, or until ``stop``), keeping each load's seconds; a load
    that does not answer 200 is a failure."""
    rounds = 0
    while not stop.is_set() and (count is None or rounds < count):
        for label, load in pages:
            start = time.perf_counter()
            try:
                status = load()
            except OSError as error:
                status = repr(error)
            times.setdefault(label, []).append(time.perf_counter() - start)
            if status != 200:
                failures.append(f"{label}: {status}")
        rounds += 1


def run(cfg: Config, res: Results, log: Log) -> None:
    """Measure into ``res.hub_load``; only the reason where a hub with local users cannot run here."""
    import psutil

    from labdriver.hub import (
        account_names,
        in_own_loop,
        local_accounts,
        login,
        running_hub,
        start_servers,
        why_not,
    )

    if why := why_not():
        res.hub_load = {"unavailable": why}
        return
    available = psutil.virtual_memory().available
    n = 2 if cfg.quick else learners_this_machine_holds(available)
    lesson = QUICK_LESSON if cfg.quick else LESSON
    cells = lesson_cells(lesson)
    out: dict[str, Any] = {"learners": n, "lesson": lesson, "cells": len(cells), "cores": os.cpu_count() or 1,
                           "available_gib": available / GIB, "load_before": load_average()}
    names = account_names([f"learn{i + 1:02d}" for i in range(n)])
    with tempfile.TemporaryDirectory(prefix="hub-load-") as tmp, local_accounts(names) as accounts, \
            running_hub(accounts, [], Path(tmp), start_timeout_s=600) as hub:
        uids = {accounts[name].pw_uid: name for name in names}
        sessions = {}
        for name in names:
            status, location, opener = login(hub.url, name, hub.password)
            assert status == 302 and "/hub/login" not in location, (name, status, location)
            sessions[name] = opener
        log(f"  {n} learners logged in; starting their servers")
        sampler = MemorySampler(uids)
        sampler.start()
        try:
            out["servers_ready_s"] = start_servers(hub, names, within_s=900)
            sampler.enter("idle")
            log(f"  servers ready in {out['servers_ready_s']:.0f} s; idle page loads")

            def hub_home() -> int:
                with sessions[names[0]].open(hub.url + "/hub/home", timeout=60) as page:
                    page.read()
                    return page.status

            turn = iter(range(10**9))

            def lab_page() -> int:
                name = names[next(turn) % n]
                request = urllib.request.Request(hub.url + f"/user/{name}/lab",
                                                 headers={"Authorization": f"token {hub.token}"})
                with urllib.request.urlopen(request, timeout=60) as page:
                    page.read()
                    return page.status

            pages = [("hub home page (/hub/home)", hub_home), ("JupyterLab page (/user/NAME/lab)", lab_page)]
            idle: dict[str, list[float]] = {}
            failures: list[str] = []
            page_loads(pages, threading.Event(), idle, failures, count=3 if cfg.quick else 20)
            sampler.enter("lesson")
            log(f"  {n} learners run {lesson}'s {len(cells)} code cells at once")
            loaded: dict[str, list[float]] = {}
            stop = threading.Event()
            loader = threading.Thread(target=page_loads, args=(pages, stop, loaded, failures), daemon=True)
            loader.start()
            start = time.perf_counter()
            try:
                results = in_own_loop(_class_runs(hub, names, cells), timeout_s=CLASS_RUN_S)
            finally:
                stop.set()
                loader.join(timeout=120)
            out["lesson_wall_s"] = time.perf_counter() - start
            out["hwm_sum"] = hwm_sums(uids)  # before the kernels are shut down
            for name, (_s, _problem, kernel) in results.items():
                hub.api("DELETE", f"/user/{name}/api/kernels/{kernel}")
        finally:
            sampler.done.set()
            sampler.join(timeout=10)
        out.update(idle=idle, loaded=loaded, page_failures=failures, samples=sampler.samples,
                   start_peak=sampler.peaks["start"], server_peak=sampler.peaks["idle"],
                   peak=sampler.peaks["lesson"],
                   lesson_s={name: r[0] for name, r in results.items()},
                   problems={name: r[1] for name, r in results.items() if r[1]},
                   load_after=load_average())
    res.hub_load = out


async def _class_runs(hub: Any, names: list[str], cells: list[str]) -> dict[str, tuple[float, str, str]]:
    """Every learner's run at once: name -> (seconds, what went wrong or "", the kernel's id)."""
    return dict(zip(names, await asyncio.gather(*(_learner_run(hub, name, cells) for name in names)),
                    strict=True))


async def _learner_run(hub: Any, name: str, cells: list[str]) -> tuple[float, str, str]:
    """One learner: a new kernel, the lesson's cells, then the checks that the kernel lived through it; the
    kernel is left running (its memory is read after every learner is done)."""
    from tornado.httpclient import HTTPClientError

    from labdriver.hub import KernelError, execute

    start = time.perf_counter()
    made = await asyncio.to_thread(hub.json, "POST", f"/user/{name}/api/kernels", {"name": "python3"})
    kernel = made["id"]
    try:
        printed = await asyncio.wait_for(execute(hub, name, kernel, [PID_CODE, *cells, PID_CODE]), 900)
        seconds = time.perf_counter() - start
        if printed[0].strip() != printed[-1].strip():
            before, after = printed[0].strip(), printed[-1].strip()
            return seconds, f"kernel restarted (process {before}, then {after})", kernel
        status, text = await asyncio.to_thread(hub.api, "GET", f"/user/{name}/api/kernels/{kernel}")
        if status != 200 or b'"dead"' in text:
            return seconds, f"kernel gone after the lesson ({status})", kernel
        return seconds, "", kernel
    except (KernelError, HTTPClientError, asyncio.TimeoutError, OSError) as error:  # counted, not raised
        return time.perf_counter() - start, f"{type(error).__name__}: {error}", kernel


def lines(cfg: Config, res: Results) -> list[str]:
    out = [TITLE, ""]
    data = getattr(res, "hub_load", None) or {}
    if "unavailable" in data:
        return [*out, f"Not measured: no hub with local users here ({data['unavailable']}).", ""]
    if not data.get("peak"):
        return [*out, "Not measured in this run.", ""]
    n, lesson = data["learners"], data["lesson"]
    if cfg.quick:
        out += [f"Quick mode, not a measurement: {n} learners, lesson {lesson}.", ""]
    lb, la = data["load_before"], data["load_after"]
    out += [
        f"{n} learners, each a local account, logged in through the hub's form, their servers started "
        f"at once through the hub's REST API (all ready in {data['servers_ready_s']:.0f} s), then all "
        f"ran lesson {lesson}'s {data['cells']} code cells at once, each in a kernel of their own over its "
        f"websocket (the student version with the model answers); {data['cores']} cores, "
        f"{data['available_gib']:.1f} GiB available at the start; load average (1, 5 min) "
        f"{lb[0]:.2f}, {lb[1]:.2f} before and {la[0]:.2f}, {la[1]:.2f} after (`benchmarks/hub_load.py`).",
        "",
        "| page | loads idle | idle p50 / p95 (ms) | loads during the lesson | loaded p50 / p95 (ms) |",
        "| --- | ---: | --- | ---: | --- |",
    ]
    for label, idle in data["idle"].items():
        loaded = data["loaded"].get(label, [])
        during = (f"{percentile(loaded, 0.5) * 1e3:.0f} / {percentile(loaded, 0.95) * 1e3:.0f}" if loaded
                  else "—")
        out.append(f"| {label} | {len(idle)} | {percentile(idle, 0.5) * 1e3:.0f} / "
                   f"{percentile(idle, 0.95) * 1e3:.0f} | {len(loaded)} | {during} |")
    seconds = list(data["lesson_s"].values())
    failures = data["page_failures"]
    out += [
        "",
        f"Page loads that did not answer 200: {len(failures)}"
        + (f" ({'; '.join(failures[:5])})" if failures else "") + ". "
        f"The lesson took {statistics.median(seconds):.1f} s (median over learners; "
        f"slowest {max(seconds):.1f} s), kernel start included.",
        "",
    ]
    problems = data["problems"]
    out.append(f"**Kernels that died: {len(problems)} of {n}**"
               + (": " + "; ".join(f"{k}: {v}" for k, v in sorted(problems.items())) if problems else "")
               + ".")
    out.append("")
    peak, server, hwm, starting = data["peak"], data["server_peak"], data["hwm_sum"], data["start_peak"]
    hungriest = max(peak, key=lambda k: peak[k])
    out += [
        f"Memory per learner (sum of the resident memory of all the learner's processes, sampled every "
        f"{SAMPLE_S} s, {data['samples']} samples), MiB:",
        "",
        "| | median over learners | largest |",
        "| --- | ---: | ---: |",
        f"| while the server starts (JupyterLab's build check runs node briefly) | "
        f"{statistics.median(starting.values()) / MIB:.0f} | {max(starting.values()) / MIB:.0f} |",
        f"| server alone, started, before the lesson | {statistics.median(server.values()) / MIB:.0f} | "
        f"{max(server.values()) / MIB:.0f} |",
        f"| server and the lesson's kernel, peak | {statistics.median(peak.values()) / MIB:.0f} | "
        f"{peak[hungriest] / MIB:.0f} |",
        f"| sum of each process's own peak (VmHWM), a bound | {statistics.median(hwm.values()) / MIB:.0f} | "
        f"{max(hwm.values()) / MIB:.0f} |",
        "",
    ]
    kernel = peak[hungriest] - server[hungriest]
    alone = {name: max(runs) for name, runs in PEAKS.items()}  # section 1 in this run: each kernel alone
    here = f"{lesson}.ipynb"
    out.append(f"The hungriest learner held {peak[hungriest] / MIB:.0f} MiB at peak: "
               f"{server[hungriest] / MIB:.0f} MiB their server, {kernel / MIB:.0f} MiB the lesson's kernel"
               + (f" ({here}'s kernel alone, section 1: {alone[here] / MIB:.0f} MiB)." if here in alone
                  else "."))
    out.append("")
    guarantee, limit = advice(server[hungriest], kernel)
    out += [f"**Per learner on a hub, for {lesson}: guarantee {guarantee / GIB:g} GiB, limit "
            f"{limit / GIB:g} GiB** (the server and one such kernel, and the server and {KERNELS_OPEN}, each "
            f"times {HEADROOM}, rounded up to a quarter GiB).", ""]
    if alone:
        largest = max(alone, key=lambda k: alone[k])
        biggest = max(kernel, alone[largest])
        guarantee, limit = advice(server[hungriest], biggest)
        out += [f"**Per learner on a hub, for every lesson: guarantee {guarantee / GIB:g} GiB, limit "
                f"{limit / GIB:g} GiB**: the same with the largest lesson's kernel, {largest} "
                f"({biggest / MIB:.0f} MiB, section 1), and the server as measured here "
                "(`docs/instructors.md`, section 2).", ""]
    else:
        out += ["Section 1 did not run with this one: a lesson whose kernel is larger than this one's needs "
                "more (`docs/instructors.md`, section 2).", ""]
    return out
