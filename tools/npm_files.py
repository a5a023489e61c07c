"""The npm packages a built page loads, copied next to it: shared by ``make slides`` and ``make site``.

Both builds pin their packages in their own ``package-lock.json`` (``slides/``, ``docs/``) and copy only the
files a page loads into their output, so a deck or the site opens from disk with nothing fetched from the web.
(npm has no "copy these files of a package" command; this is the few lines that do it.)
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

# The widget manager's own fonts and images sit next to embed-amd.js.
WIDGET_DIST = "@jupyter-widgets/html-manager/dist"
WIDGET_ASSETS = (".woff", ".woff2", ".ttf", ".eot", ".svg")


def ensure_node_modules(folder: Path, what: str) -> None:
    """Run ``npm ci`` in ``folder`` unless its node_modules already matches its package-lock.json.

    ``what`` ("slides", "site") starts the message when npm is missing.
    """
    lock, installed = folder / "package-lock.json", folder / "node_modules" / ".package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit(f"{what}: npm is not installed; install Node.js 18 or newer (it ships npm).")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=folder, check=True)


def copy_libraries(node_modules: Path, files: Mapping[str, Sequence[str]], target: Path, what: str) -> None:
    """Copy ``files`` (package folder -> paths inside it) from ``node_modules`` into ``target``/package/...,
    and the widget manager's fonts and images when it is one of them."""
    for package, parts in files.items():
        for part in parts:
            src, dst = node_modules / package / part, target / package / part
            if not src.exists():
                raise SystemExit(f"{what}: {src} is missing; delete {node_modules} and rebuild.")
            if src.is_dir():
                shutil.copytree(src, dst, dirs_exist_ok=True)
            else:
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)
    if any(WIDGET_DIST.startswith(package) for package in files):
        for asset in (node_modules / WIDGET_DIST).iterdir():
            if asset.suffix in WIDGET_ASSETS:
                shutil.copy2(asset, target / WIDGET_DIST / asset.name)
