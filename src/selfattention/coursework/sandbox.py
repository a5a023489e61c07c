"""Run a submission's Python kernel sealed off with bubblewrap (``bwrap``), limits enforced outside.

The grader (nbgrader, the gradebook, the CSV) stays in the grader's own processes; only the
kernel that executes the learner's code runs in the sandbox. Inside it sees:

- a read-only view of the system (``/usr``, ``/etc``), of Python and of the course's virtualenv
  and package source (nothing else of the course folder: no lessons, no gradebook, no other
  submission);
- one writable folder, ``/tmp`` (also its HOME and working folder): a tmpfs of ``disk`` bytes,
  gone when the kernel ends;
- no network (its own empty network namespace), its own PID namespace (no other process of the
  machine; everything it starts is killed when the kernel ends), a clean environment;
- a user id of its own (not root), so the process limit counts only its processes.

The kernel talks to the grader over Unix sockets in a folder of its own that is made read-only
for it once the sockets exist. Its standard streams go nowhere: it inherits no pipe of the grader.

Limits (a :class:`.policy.RunPolicy`'s): memory and processes by a cgroup (v1 or v2) made for the kernel
where the machine allows it, else by ``RLIMIT_AS``/``RLIMIT_NPROC``; file size by ``RLIMIT_FSIZE``; disk by
the tmpfs size; time by the runner (cell and submission time limits).

Only :mod:`.runner` uses this module: it is how the runner seals a kernel off, not an interface of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager

from .policy import RunPolicy
from .results import GRADING_ENV

__all__ = ["KernelWatch", "SandboxedKernelManager", "bwrap_command", "kernel_manager_class", "run_sandboxed",
           "unavailable"]

BWRAP = "bwrap"
#: Kernels run as uid BASE_UID + a slot: not root, and not any account of the machine.
BASE_UID = 61000
#: Environment variables a kernel keeps from the grader (settings, never secrets).
KEEP_ENV = ("LANG", "LC_ALL", "TZ", "PYTHONHASHSEED", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
            "OPENBLAS_NUM_THREADS", "MPLBACKEND")
_CGROUP_V1 = Path("/sys/fs/cgroup")
_CGROUP_V2 = Path("/sys/fs/cgroup/unified")


def _bind_ro(path: Path) -> list[str]:
    """Arguments mounting ``path`` read-only at the same place, with readable parent folders
    (bwrap makes missing parents with mode 0700, which a non-root kernel could not cross). ``/tmp`` is
    left as the kernel's tmpfs made it (mode 1777)."""
    args: list[str] = []
    for parent in reversed(path.parents):
        if str(parent) not in ("/", "/tmp") and not str(parent).startswith(("/usr", "/etc")):
            args += ["--perms", "0755", "--dir", str(parent)]
    return [*args, "--ro-bind", str(path), str(path)]


def _python_dirs() -> list[Path]:
    """What the kernel's Python needs: the base install, the virtualenv, our package source."""
    dirs = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    import selfattention

    package = Path(selfattention.__file__).resolve().parent.parent
    if not any(package.is_relative_to(d) for d in dirs):  # an editable install: its src/ folder
        dirs.add(package)
    return sorted(d for d in dirs if not str(d).startswith("/usr"))


def bwrap_command(iso: RunPolicy, share: Path, uid: int, command: list[str]) -> list[str]:
    """``command`` sealed off by bwrap, run as ``uid`` with rlimits; ``share`` (the kernel's
    socket folder) is the one host folder it sees, at the same path."""
    args = [BWRAP, "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("bin", "sbin", "lib", "lib64", "lib32"):
        link = Path("/") / name
        if link.is_symlink():
            args += ["--symlink", os.readlink(link), str(link)]
        elif link.is_dir():
            args += ["--ro-bind", str(link), str(link)]
    args += ["--proc", "/proc", "--dev", "/dev",
             "--perms", "1777", "--size", str(iso.disk), "--tmpfs", "/tmp"]
    # Mounted after the kernel's own /tmp, so that a course checked out under /tmp (a CI clone) stays
    # visible: bwrap applies mounts in order, and a later bind shows through the tmpfs.
    for path in _python_dirs():
        args += _bind_ro(path)
    args += [
        "--bind", str(share), str(share),
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--hostname", "grading", "--die-with-parent", "--new-session", "--clearenv",
        "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp",
        "--setenv", "PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "--setenv", "MPLCONFIGDIR", "/tmp/.matplotlib", "--setenv", GRADING_ENV, "1",
        "--chdir", "/tmp",
    ]
    for name in KEEP_ENV:
        if name in os.environ:
            args += ["--setenv", name, os.environ[name]]
    limits = [f"--nproc={iso.processes}", f"--fsize={iso.disk}", "--core=0", "--nofile=1024"]
    if not _cgroup_root("memory"):
        limits.append(f"--as={iso.memory}")
    return [*args, "--", shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}",
            "--clear-groups", "--", shutil.which("prlimit") or "/usr/bin/prlimit", *limits, "--", *command]


def _cgroup_root(controller: str) -> Path | None:
    """A writable cgroup hierarchy for ``controller`` (v1 ``memory``/``pids`` or v2), else None."""
    v1 = _CGROUP_V1 / controller
    if (v1 / "cgroup.procs").exists() and os.access(v1, os.W_OK):
        return v1
    v2 = _CGROUP_V2 if (_CGROUP_V2 / "cgroup.controllers").exists() else _CGROUP_V1
    try:
        if controller in (v2 / "cgroup.subtree_control").read_text().split() and os.access(v2, os.W_OK):
            return v2
    except OSError:
        pass
    return None


class Cgroup:
    """A memory and process cgroup for one kernel; ``enter()`` runs in the child before exec."""

    def __init__(self, iso: RunPolicy) -> None:
        name = f"selfattention-grade-{uuid.uuid4().hex[:12]}"
        self.dirs: list[Path] = []
        for controller, files in (
            ("memory", {"memory.limit_in_bytes": iso.memory, "memory.max": iso.memory,
                        "memory.swap.max": 0}),
            ("pids", {"pids.max": iso.processes}),
        ):
            root = _cgroup_root(controller)
            if root is None:
                continue
            folder = root / name
            folder.mkdir(exist_ok=True)
            for file, value in files.items():
                if (folder / file).exists():
                    (folder / file).write_text(str(value))
            if (folder / "memory.memsw.limit_in_bytes").exists():  # no escape into swap
                try:
                    (folder / "memory.memsw.limit_in_bytes").write_text(str(iso.memory))
                except OSError:
                    pass
            self.dirs.append(folder)
        self.procs = [str(d / "cgroup.procs") for d in dict.fromkeys(self.dirs)]

    def enter(self) -> None:
        for procs in self.procs:
            with open(procs, "w") as f:
                f.write("0")

    def out_of_memory(self) -> bool:
        """Whether the kernel (or something it started) was killed for using too much memory."""
        for folder in self.dirs:
            for name in ("memory.oom_control", "memory.events"):
                try:
                    text = (folder / name).read_text()
                except OSError:
                    continue
                counts = dict(line.split()[:2] for line in text.splitlines() if len(line.split()) >= 2)
                if int(counts.get("oom_kill", 0)):
                    return True
        return False

    def remove(self) -> None:
        """Remove the cgroups (retrying while the PID namespace's last processes die)."""
        for folder in dict.fromkeys(self.dirs):
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)


def run_sandboxed(iso: RunPolicy, argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``argv`` sealed off and limited as a kernel would be; its output is captured.

    Raises subprocess.TimeoutExpired after ``timeout`` seconds (the sandbox is killed first).
    """
    with tempfile.TemporaryDirectory(prefix="sa-run-") as share:
        os.chmod(share, 0o755)
        cgroup = Cgroup(iso)
        try:
            proc = subprocess.Popen(
                bwrap_command(iso, Path(share), _slot_uid(), argv), stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={"PATH": "/usr/bin:/bin"},
                preexec_fn=cgroup.enter, start_new_session=True,
            )
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()  # bwrap dies; --die-with-parent and the PID namespace take the rest
                proc.communicate()
                raise
            result = subprocess.CompletedProcess(argv, proc.returncode, out, err)
            result.out_of_memory = cgroup.out_of_memory()  # type: ignore[attr-defined]
            return result
        finally:
            cgroup.remove()


def unavailable(iso: RunPolicy) -> str | None:
    """Why a sandbox like ``iso`` cannot be made on this machine (None if it can)."""
    if shutil.which(BWRAP) is None:
        return "bwrap (bubblewrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    if os.geteuid() != 0:
        return "grading in a sandbox needs root (the kernel runs as a user of its own)"
    try:
        proc = run_sandboxed(iso, [sys.executable, "-c", "import os; print(os.getuid())"])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not be run: {exc}"
    if proc.returncode != 0 or not proc.stdout.strip().isdigit() or proc.stdout.strip() == "0":
        return f"bwrap is not permitted here: {(proc.stderr or proc.stdout).strip()[:300]}"
    return None


def _slot_uid() -> int:
    """A uid for this kernel: one per grading worker process, so limits per uid are its own."""
    return BASE_UID + os.getpid() % 4000


class KernelWatch:
    """What a run's kernels went through, read by the runner once the run is over."""

    def __init__(self) -> None:
        self.out_of_memory = False  #: a kernel (or something it started) was killed for its memory


class SandboxedKernelManager(AsyncKernelManager):
    """Starts the kernel inside bwrap (``policy.isolation == "bwrap"``), talking over Unix sockets in a
    folder of its own, or as a plain process with standard streams that reach no pipe of the grader
    (``"none"``). Use :func:`kernel_manager_class`, which binds a policy and a watch to it."""

    policy: RunPolicy = RunPolicy()
    watch: KernelWatch = KernelWatch()

    _share: Path | None = None
    _cgroup: Cgroup | None = None

    async def _async_pre_start_kernel(self, **kw: Any) -> tuple[list[str], dict[str, Any]]:
        if self.policy.sealed:
            self._share = Path(tempfile.mkdtemp(prefix="sa-k-"))  # short: Unix socket paths
            self.transport = "ipc"
            self.ip = str(self._share / "ipc")
            self.connection_file = str(self._share / "kernel.json")
        return await super()._async_pre_start_kernel(**kw)

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
        kw["stdin"] = subprocess.DEVNULL
        kw["stdout"] = kw["stderr"] = subprocess.DEVNULL
        if not self.policy.sealed:
            kw["env"] = {**(kw.get("env") or os.environ), GRADING_ENV: "1"}
            return await super()._async_launch_kernel(kernel_cmd, **kw)
        uid = _slot_uid()
        assert self._share is not None
        os.chown(self._share, uid, uid)
        os.chmod(self._share, 0o700)
        os.chmod(self.connection_file, 0o444)
        self._cgroup = Cgroup(self.policy)
        kw["preexec_fn"] = self._cgroup.enter
        kw["env"] = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        kw["cwd"] = str(self._share)
        spec = self.kernel_spec
        if spec is not None:
            spec.interrupt_mode = "message"  # a signal would reach bwrap, not the kernel
        await super()._async_launch_kernel(bwrap_command(self.policy, self._share, uid, kernel_cmd), **kw)

    def killed_for_memory(self) -> bool:
        """Whether the kernel (or something it started) has been killed at the memory limit so far."""
        killed = self._cgroup is not None and self._cgroup.out_of_memory()
        if killed:
            self.watch.out_of_memory = True
        return killed

    def seal(self) -> None:
        """Once the kernel's sockets exist: its socket folder becomes read-only for it (the runner's
        executor calls this when its client is connected)."""
        if self._share is not None:
            os.chown(self._share, 0, 0)
            os.chmod(self._share, 0o755)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if self._cgroup is not None:
            if self._cgroup.out_of_memory():
                self.watch.out_of_memory = True
            self._cgroup.remove()
            self._cgroup = None
        if self._share is not None and not restart:
            shutil.rmtree(self._share, ignore_errors=True)
            self._share = None

    # nbclient calls the public name, which AsyncKernelManager binds to the base class's method
    # (jupyter_client's private method: tests/test_grading.py pins its name)
    cleanup_resources = _async_cleanup_resources


def kernel_manager_class(policy: RunPolicy, watch: KernelWatch) -> type[SandboxedKernelManager]:
    """A :class:`SandboxedKernelManager` whose kernels run under ``policy`` and report to ``watch`` (a
    class, as nbclient's ``kernel_manager_class`` setting wants one)."""
    return type("SandboxedKernelManager", (SandboxedKernelManager,), {"policy": policy, "watch": watch})
