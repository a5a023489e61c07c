"""How a submission may run: :class:`RunPolicy`, every limit of a grading run in one value.

``make grade``'s variables (``CELL_TIMEOUT``, ``MEMORY_LIMIT``, ``ISOLATION`` ...) become one ``RunPolicy``
(:meth:`RunPolicy.add_arguments` declares the command line once); the runner (:mod:`.runner`) enforces it
and hands it to its worker as JSON. Importing this module imports neither nbgrader nor jupyter.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass, fields

from ..validation import positive_int

__all__ = ["RunPolicy", "parse_size", "human_size"]


def parse_size(text: str | int, name: str = "size") -> int:
    """Bytes from ``"512M"``, ``"2G"``, ``"1.5G"``, ``"1000000"`` (K/M/G are powers of 1024)."""
    if isinstance(text, int) and not isinstance(text, bool):
        return positive_int(name, text)
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    raw = str(text).strip().upper().removesuffix("B").removesuffix("I")
    number, unit = raw.rstrip("KMGT"), raw[len(raw.rstrip("KMGT")):]
    try:
        value = float(number) * units[unit]
    except (ValueError, KeyError):
        expected = "a size such as 512M, 2G or a number of bytes"
        raise ValueError(f"{name}: got {text!r}, expected {expected}") from None
    if value <= 0:
        raise ValueError(f"{name}: got {text!r}, expected a positive size")
    return int(value)


def human_size(n: int) -> str:
    """``2G``, ``512M``, ``1.5G`` (powers of 1024), or bytes."""
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size:
            return f"{round(n / size, 2):g}{unit}"
    return str(n)


@dataclass(frozen=True)
class RunPolicy:
    """How a submission may run: its time, its output, and how it is sealed off.

    ``isolation`` is ``"bwrap"`` (each kernel sealed off, with ``memory``, ``processes`` and ``disk``) or
    ``"none"`` (not isolated: the kernel runs with the grader's rights; every CSV row says so).
    """

    cell_timeout: int = 180  #: seconds per cell before it is interrupted
    submission_timeout: int = 600  #: seconds per submission before its worker and kernel are killed
    max_output_bytes: int = 1_000_000  #: output kept per cell (characters; a figure is ~50 kB)
    isolation: str = "bwrap"
    memory: int = 2 << 30  #: bytes of memory for the kernel and all it starts
    processes: int = 256  #: processes and threads it may run at once
    disk: int = 512 << 20  #: bytes it may write (its tmpfs; also the largest file)

    def __post_init__(self) -> None:
        if self.isolation not in ("bwrap", "none"):
            raise ValueError(f"isolation: got {self.isolation!r}, expected 'bwrap' or 'none'")
        for name in ("cell_timeout", "submission_timeout", "max_output_bytes"):
            positive_int(name, getattr(self, name))
        object.__setattr__(self, "memory", parse_size(self.memory, "memory"))
        object.__setattr__(self, "disk", parse_size(self.disk, "disk"))
        if positive_int("processes", self.processes) < 8:
            raise ValueError(f"max processes: got {self.processes}, expected at least 8 "
                             "(the kernel's own threads)")

    @property
    def sealed(self) -> bool:
        return self.isolation == "bwrap"

    @property
    def label(self) -> str:
        """What the CSV's ``isolation`` column says about the run."""
        if not self.sealed:
            return "none (not isolated)"
        return (f"bwrap (memory {human_size(self.memory)}, {self.processes} processes, "
                f"disk {human_size(self.disk)})")

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> RunPolicy:
        return cls(**json.loads(text))

    # The command line (``make grade``'s variables): declared once, here.
    _FLAGS = {"cell_timeout": ("--cell-timeout", "seconds per cell"),
              "submission_timeout": ("--submission-timeout", "seconds per submission"),
              "max_output_bytes": ("--max-output-bytes", "output kept per cell"),
              "isolation": ("--isolation", "seal each submission off with bubblewrap, or not (none)"),
              "memory": ("--memory-limit", "memory per submission (512M, 2G...)"),
              "processes": ("--max-processes", "processes and threads per submission"),
              "disk": ("--disk-limit", "disk a submission may write (512M...)")}

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """One option per field (``--cell-timeout``, ``--memory-limit`` ...), defaults from the fields."""
        for f in fields(cls):
            flag, what = cls._FLAGS[f.name]
            kind = {"memory": str, "disk": str, "isolation": str}.get(f.name, int)
            extra = {"choices": ["bwrap", "none"]} if f.name == "isolation" else {}
            default = human_size(f.default) if f.name in ("memory", "disk") else f.default
            parser.add_argument(flag, dest=f"policy_{f.name}", type=kind, default=default, help=what, **extra)

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> RunPolicy:
        """The policy the options of :meth:`add_arguments` describe. Raises ValueError for a bad value."""
        values = {f.name: getattr(args, f"policy_{f.name}") for f in fields(cls)}
        values["memory"] = parse_size(values["memory"], "--memory-limit")
        values["disk"] = parse_size(values["disk"], "--disk-limit")
        return cls(**values)
