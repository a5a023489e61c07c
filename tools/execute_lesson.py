"""Execute lessons in place from a fresh kernel, as they are committed (execution counts 1, 2, 3, ...).

``.venv/bin/python tools/execute_lesson.py notebooks/03_matrix_form.ipynb [more.ipynb ...]``

This is ``jupyter nbconvert --to notebook --execute --inplace`` with one difference: the client waits for
each reply in steps of a second (:func:`selfattention.coursework.runner.wait_in_steps`). nbconvert waits
once with no time limit, and after a widget cell that wait can miss the reply and hang for good
(jupyter/nbclient#312). Each cell may run for at most ``--timeout`` seconds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from selfattention.coursework.runner import wait_in_steps


class SteppedClient(NotebookClient):
    """nbclient's client whose shell channel waits in steps (see the module docstring)."""

    async def async_start_new_kernel_client(self) -> Any:
        kc = await super().async_start_new_kernel_client()
        wait_in_steps(kc)
        return kc


def execute(path: Path, timeout: int) -> None:
    """Run every cell of the notebook at ``path`` in a new kernel started in its folder; write it back."""
    nb = nbformat.read(path, as_version=4)
    SteppedClient(nb, timeout=timeout, kernel_name="python3",
                  resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--timeout", type=int, default=600, help="seconds a cell may run (default 600)")
    args = parser.parse_args(argv)
    for path in args.notebooks:
        if not path.is_file():
            parser.error(f"notebooks: {path} is not a file; expected a lesson's .ipynb file")
        print(f"executing {path}", flush=True)
        execute(path, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
