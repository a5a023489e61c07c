"""The spawner of the course's hub (``labdriver/hub.py``, for ``tests/test_hub.py`` and
``benchmarks/hub_load.py``): JupyterHub's LocalProcessSpawner, each server run as its own local user.

The difference from LocalProcessSpawner is how the server becomes its user. LocalProcessSpawner switches
user in the child before it runs ``jupyterhub-singleuser``; that needs the hub's Python to be readable by
every user, which it is on a hub's machine (The Littlest JupyterHub installs it under ``/opt``) but need
not be on a developer's or CI machine (a Python under ``/root``, mode 0700). So the server is started by
bubblewrap as root, with the whole file system as it is (``--dev-bind / /``) except that a folder the users
cannot enter on the way to the Python is replaced by an empty one holding only the Python, and then
``setpriv`` switches to the user (uid, gid, the user's groups) before ``jupyterhub-singleuser`` runs, in the
user's home, with the environment LocalProcessSpawner gives it (``HOME``, ``USER``, the hub's token, ...).
Nothing else is hidden or changed: file permissions decide what each user can read.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import sys
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import List, Unicode


def _closed_ancestor(path: Path) -> Path | None:
    """The topmost folder above ``path`` that other users cannot enter, or None."""
    for parent in reversed(path.parents):
        if parent != Path("/") and not os.stat(parent).st_mode & stat.S_IXOTH:
            return parent
    return None


def python_mounts(dirs: list[Path]) -> list[str]:
    """bwrap arguments that make ``dirs`` reachable by any user: each closed folder above one becomes an
    empty tmpfs (mode 0755) holding only the needed folders, bound read-only at their own paths."""
    args: list[str] = []
    hidden: set[Path] = set()
    for d in dirs:
        closed = _closed_ancestor(d)
        if closed is None:
            continue
        if closed not in hidden:
            hidden.add(closed)
            args += ["--perms", "0755", "--tmpfs", str(closed)]
        for parent in reversed(d.parents):
            if parent.is_relative_to(closed) and parent != closed:
                args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", str(d), str(d)]
    return args


class CourseSpawner(LocalProcessSpawner):
    """LocalProcessSpawner through bwrap + setpriv (see the module)."""

    server_cmd = List(Unicode(), help="The single-user server's command.").tag(config=True)
    readable = List(Unicode(), help="More folders every user's server must reach (the learner "
                    "configuration).").tag(config=True)

    def make_preexec_fn(self, name: str):  # noqa: ANN201 (JupyterHub's signature)
        return None  # the user is switched by setpriv, inside bwrap (started as root)

    async def start(self):  # noqa: ANN201
        user = pwd.getpwnam(self.user.name)
        dirs = sorted({Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(),
                       *(Path(p).resolve() for p in self.readable)})
        self.cmd = [
            shutil.which("bwrap") or "bwrap", "--dev-bind", "/", "/", *python_mounts(dirs),
            "--die-with-parent", "--chdir", user.pw_dir, "--",
            shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
            "--init-groups", "--", *self.server_cmd,
        ]
        return await super().start()
