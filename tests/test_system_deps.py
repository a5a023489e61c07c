"""tools/system-deps.sh, the set-up step `make test` runs first: what it installs, and when it refuses.

The script runs with PATH restricted to a folder of stand-ins (``id``, ``apt-get``, ``sudo``, ``npm``,
``bwrap``, a Chromium) that record how they were called, so no test installs anything or needs a missing
package.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT

SCRIPT = ROOT / "tools" / "system-deps.sh"
BASH = "/bin/bash"


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    calls: list[str]  # one line per call of a stand-in: "apt-get update -q", "sudo -n ..."


class FakeMachine:
    """A folder of stand-in commands; ``run()`` calls the script with only them on PATH."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir()
        self.log = root / "calls.log"
        self.venv = root / "venv"  # made (with bin/python) unless a test removes it
        (self.venv / "bin").mkdir(parents=True)
        self.tool("python", "exit 0", directory=self.venv / "bin")
        self.chromium: Path | None = None

    def tool(self, name: str, body: str = "exit 0", directory: Path | None = None) -> Path:
        """An executable shell script ``name`` that logs its arguments, then runs ``body``."""
        path = (directory or self.bin) / name
        path.write_text(f'#!/bin/sh\necho "{name} $*" >> "{self.log}"\n{body}\n')
        path.chmod(0o755)
        return path

    def present(self, *names: str) -> None:
        for name in names:
            if name == "chromium":
                self.chromium = self.tool("chromium", directory=self.root)
            else:
                self.tool(name)

    def user(self, uid: int) -> None:
        self.tool("id", f'[ "$1" = -u ] && echo {uid}')

    def run(self, *args: str, python: str = sys.executable) -> Run:
        env = {
            "PATH": str(self.bin),
            "PYTHON": python,
            "VENV": str(self.venv),
            # Only the stand-in counts as an installed Chromium (this machine has a real one).
            "CHROMIUM_CANDIDATES": str(self.chromium or self.root / "no-chromium"),
        }
        proc = subprocess.run(
            [BASH, str(SCRIPT), *args], env=env, cwd=self.root, capture_output=True, text=True, timeout=60
        )
        calls = self.log.read_text().splitlines() if self.log.exists() else []
        return Run(proc.returncode, proc.stdout, proc.stderr, calls)


@pytest.fixture
def machine(tmp_path: Path) -> FakeMachine:
    m = FakeMachine(tmp_path)
    m.tool("apt-get")
    return m


def installs(run: Run) -> list[str]:
    return [c for c in run.calls if "apt-get" in c]


def test_everything_present_installs_nothing_and_prints_nothing(machine: FakeMachine) -> None:
    machine.present("chromium", "npm", "bwrap")
    machine.user(1000)  # not root, no sudo: it must not even try
    run = machine.run()
    assert run.returncode == 0, run.stderr
    assert run.stdout == run.stderr == ""
    assert installs(run) == []


def test_missing_as_root_installs_the_missing_packages(machine: FakeMachine) -> None:
    machine.present("npm")
    machine.user(0)
    run = machine.run()
    assert run.returncode == 0, run.stderr
    assert installs(run) == [
        "apt-get update -q",
        "apt-get install -y -q --no-install-recommends chromium bubblewrap",
    ]


def test_missing_npm_installs_nodejs_and_npm(machine: FakeMachine) -> None:
    machine.present("chromium", "bwrap")
    machine.user(0)
    run = machine.run()
    assert run.returncode == 0, run.stderr
    assert installs(run)[-1] == "apt-get install -y -q --no-install-recommends nodejs npm"


def test_missing_without_root_or_sudo_says_what_to_run_in_one_line(machine: FakeMachine) -> None:
    machine.present("npm")
    machine.user(1000)
    run = machine.run()
    assert run.returncode != 0
    assert installs(run) == []
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert "sudo apt-get install -y chromium bubblewrap" in lines[0]


def test_sudo_that_wants_a_password_is_not_waited_for(machine: FakeMachine) -> None:
    machine.present("chromium", "npm")
    machine.user(1000)
    machine.tool("sudo", "exit 1")  # sudo -n fails when a password would be needed
    run = machine.run()
    assert run.returncode != 0
    assert [c for c in run.calls if c.startswith("sudo")] == ["sudo -n true"], "only its probe may run"
    assert len(run.stderr.splitlines()) == 1
    assert "sudo apt-get install -y bubblewrap" in run.stderr


def test_passwordless_sudo_installs_through_sudo(machine: FakeMachine) -> None:
    machine.present("chromium", "npm")
    machine.user(1000)
    # A passwordless sudo: drop its options and VAR=value words, then run the command.
    machine.tool("sudo", 'while [ "${1#-}" != "$1" ] || [ "${1#*=}" != "$1" ]; do shift; done; exec "$@"')
    machine.tool("true")  # what the script asks sudo to run to see whether it needs a password
    run = machine.run()
    assert run.returncode == 0, run.stderr
    assert "sudo -n DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends bubblewrap" \
        in run.calls
    assert installs(run)[-1] == "apt-get install -y -q --no-install-recommends bubblewrap"


def test_a_python_without_venv_gets_its_venv_package_before_dot_venv_exists(machine: FakeMachine) -> None:
    """Debian's python3 has no ensurepip until python3.X-venv is installed; `python -m venv` needs it."""
    machine.present("chromium", "npm", "bwrap")
    machine.user(0)
    (machine.venv / "bin" / "python").unlink()
    python = machine.tool("python3", 'case "$*" in *ensurepip*) exit 1;; *) echo 3.11;; esac')
    run = machine.run(python=str(python))
    assert run.returncode == 0, run.stderr
    assert installs(run)[-1] == "apt-get install -y -q --no-install-recommends python3.11-venv"


def test_lab_needs_no_browser(machine: FakeMachine) -> None:
    machine.user(1000)
    run = machine.run("lab")
    assert (run.returncode, run.stderr, installs(run)) == (0, "", [])


def test_bad_argument_is_named(machine: FakeMachine) -> None:
    run = machine.run("tests")
    assert run.returncode == 2
    assert "unknown argument 'tests'; expected 'test' or 'lab'" in run.stderr


def test_make_test_stops_before_any_test_when_the_step_fails(machine: FakeMachine) -> None:
    """The real Makefile: the failed step ends `make test` with a non-zero status before ruff or pytest."""
    machine.user(1000)
    machine.tool("sudo", "exit 1")
    machine.tool("python", "exit 1", directory=machine.venv / "bin")  # setup would call it: it must not run
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "CHROMIUM"))}
    env.update(PATH=f"{machine.bin}:/usr/bin:/bin", CHROMIUM_CANDIDATES=str(machine.root / "no-chromium"))
    proc = subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), "test", f"VENV={machine.venv}"],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode != 0
    assert "sudo apt-get install -y chromium" in proc.stderr
    assert "ruff" not in proc.stdout + proc.stderr and "pytest" not in proc.stdout + proc.stderr
    calls = machine.log.read_text().splitlines()
    assert not [c for c in calls if c.startswith(("python", "apt-get"))], calls
