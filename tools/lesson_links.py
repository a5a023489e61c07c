#!/usr/bin/env python3
# ruff: noqa: E501  (the setup cell's text, written into every lesson, keeps its own line lengths)
"""Insert or update, in each lesson, the "run it without installing" cells right after the title.

Usage (from the course's root, or anywhere: pyproject.toml is found above the notebooks):

    .venv/bin/python tools/lesson_links.py notebooks/*.ipynb

For every notebook ``NN_topic.ipynb`` given:
1. reads the repository URL from ``[project.urls] Repository`` of the pyproject.toml found in the
   notebook's folder or a parent folder (must be ``https://github.com/OWNER/REPO``);
2. builds two cells:
   - markdown, tag ``course-links``: an "Open in Colab" and a "Launch Binder" link to this lesson's
     student version ``student/NN_topic.ipynb`` on branch ``main``, as plain markdown links;
   - code, tag ``course-setup``: only when ``google.colab`` is imported, installs the course package
     (``--no-deps``, so Colab's own torch is kept) and runs ``selfattention.colab.setup()`` (the
     pretrained model and any other missing requirement, Colab's widget manager). Elsewhere it does
     nothing.
   Both cells have ``slideshow.slide_type = skip``;
3. removes every cell carrying either tag (wherever it is, however many) and puts one of each at
   positions 1 and 2, right after the title cell; a cell that already existed keeps its id and its
   other metadata, and the setup cell keeps its execution count, outputs and nbconvert's execution
   timestamps when its source is unchanged;
4. writes the notebook only if something changed, in nbformat's own layout (indent 1, sorted
   keys, multi-line strings as lists of lines), and prints one line per notebook: unchanged,
   updated or inserted, adding "(setup cell is new: re-execute the notebook)" when it is.

Run it again at any time: it never duplicates the cells. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser under its PyPI name (in the test extra)
    import tomli as tomllib
from pathlib import Path

LINKS_TAG = "course-links"
SETUP_TAG = "course-setup"
BRANCH = "main"
STUDENT_DIR = "student"
LESSON_NAME = re.compile(r"^\d\d_\w+\.ipynb$")
GITHUB = re.compile(r"^https://github\.com/([A-Za-z0-9][\w.-]*)/([\w.-]+?)/?$")


def find_pyproject(start: Path) -> Path:
    for folder in [start, *start.parents]:
        if (folder / "pyproject.toml").is_file():
            return folder / "pyproject.toml"
    raise SystemExit(f"no pyproject.toml in {start} or any folder above it")


def read_project(pyproject: Path) -> str:
    """The repository URL from pyproject.toml."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    url = project.get("urls", {}).get("Repository")
    if not url or not GITHUB.match(url):
        raise SystemExit(
            f"{pyproject}: [project.urls] Repository is {url!r}; expected https://github.com/OWNER/REPO"
        )
    return url.rstrip("/")


def links_source(url: str, name: str) -> str:
    slug = GITHUB.match(url).group(1) + "/" + GITHUB.match(url).group(2)
    path = f"{STUDENT_DIR}/{name}"
    colab = f"https://colab.research.google.com/github/{slug}/blob/{BRANCH}/{path}"
    binder = f"https://mybinder.org/v2/gh/{slug}/{BRANCH}?urlpath=lab/tree/{path}"
    return (
        f"**Run this lesson without installing anything:** [Open in Colab]({colab}) · "
        f"[Launch Binder]({binder})\n"
        "\n"
        "Both open the exercise version of this lesson (answers blank) in your browser. In Colab, run the "
        "code cell below first: it installs the course's package and keeps Colab's own PyTorch, so "
        "printed numbers may differ slightly from the text, most of all where a model is trained. Binder takes a "
        "minute or two to start."
    )


def setup_source(url: str) -> str:
    """The Colab setup cell: the course package without its dependencies (Colab's torch is kept), then
    ``selfattention.colab.setup()`` for the rest (the pretrained model, anything missing, widgets)."""
    return f'''# Google Colab only: install the course's package, keeping Colab's own PyTorch. Elsewhere this does nothing.
import sys

if "google.colab" in sys.modules:
    import importlib
    import subprocess

    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "git+{url}@{BRANCH}"], check=True)
    importlib.invalidate_caches()
    from selfattention import colab

    colab.setup()'''


def cell_id(notebook: Path, tag: str, taken: set[str]) -> str:
    """A stable id for a new cell (the same on every run), not used by another cell."""
    seed = f"{tag}:{notebook.stem}"
    while (new := hashlib.sha1(seed.encode()).hexdigest()[:8]) in taken:
        seed += "+"
    return new


def has_tag(cell: dict, tag: str) -> bool:
    return tag in cell.get("metadata", {}).get("tags", [])


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def edit(path: Path) -> str:
    if not LESSON_NAME.match(path.name):
        raise SystemExit(f"{path}: not a lesson notebook (expected a name like 02_basic_attention.ipynb)")
    url = read_project(find_pyproject(path.resolve().parent))
    raw = path.read_text(encoding="utf-8")
    nb = json.loads(raw)
    cells = nb["cells"]
    old = {tag: next((c for c in cells if has_tag(c, tag)), None) for tag in (LINKS_TAG, SETUP_TAG)}
    rest = [c for c in cells if not (has_tag(c, LINKS_TAG) or has_tag(c, SETUP_TAG))]
    title = rest[0] if rest else {"cell_type": None, "source": []}
    if title["cell_type"] != "markdown" or not "".join(title["source"]).lstrip().startswith("# "):
        raise SystemExit(f"{path}: the first cell is not the title cell ('# NN · Title')")
    taken = {c.get("id") for c in rest}

    def metadata(tag: str, keep: bool = True) -> dict:
        """The old cell's metadata (other keys kept), with slide type skip and the tag."""
        meta = json.loads(json.dumps((old[tag] or {}).get("metadata", {})))
        if not keep:
            meta.pop("execution", None)  # nbconvert's timestamps of a run of the old source
        meta.setdefault("slideshow", {})["slide_type"] = "skip"
        tags = meta.get("tags", [])
        meta["tags"] = tags if tag in tags else [*tags, tag]
        return meta

    links = {
        "cell_type": "markdown",
        "id": (old[LINKS_TAG] or {}).get("id") or cell_id(path, LINKS_TAG, taken),
        "metadata": metadata(LINKS_TAG),
        "source": lines(links_source(url, path.name)),
    }
    source = lines(setup_source(url))
    before = old[SETUP_TAG]
    same = before is not None and "".join(before["source"]) == "".join(source)
    setup = {
        "cell_type": "code",
        "execution_count": before.get("execution_count") if same else None,
        "id": (before or {}).get("id") or cell_id(path, SETUP_TAG, taken | {links["id"]}),
        "metadata": metadata(SETUP_TAG, keep=same),
        "outputs": before.get("outputs", []) if same else [],
        "source": source,
    }
    nb["cells"] = [rest[0], links, setup, *rest[1:]]
    text = json.dumps(nb, indent=1, sort_keys=True, separators=(",", ": "), ensure_ascii=False) + "\n"
    if text == raw:
        return f"{path}: unchanged"
    path.write_text(text, encoding="utf-8")
    verb = "updated" if all(old.values()) else "inserted"
    return f"{path}: {verb}" + ("" if same else " (setup cell is new: re-execute the notebook)")


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    for name in argv:
        print(edit(Path(name)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
