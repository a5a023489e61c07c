"""Build the course website: ``build/site/``, a static HTML site that opens from disk.

Usage: ``python docs/build.py [OUT]`` (what ``make site`` runs; default ``build/site``).

The lessons are rendered from the committed notebooks in ``notebooks/`` as they are, outputs and
saved widget state included: nothing is re-executed (myst-nb, ``nb_execution_mode = "off"``).
Before Sphinx reads them, each notebook is copied into a source folder next to the output
(``build/site-src/``) and changed there, never in ``notebooks/``:

- it is the learner's view (``selfattention.coursework.lessons``): the deck's slide-only cells are left
  out, hidden tests (``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS``) are removed;
- a graded answer cell shows what a learner's copy shows (``# YOUR CODE HERE``), and the model answer
  follows, folded away behind a closed "Show solution" toggle (written answers likewise);
- a test cell shows its check but no output (the instructor's ``Correct: ...`` would give the answer away).

The source folder also gets every ``docs/*.md`` page (the front page and the instructors' guide) and
a generated table of the lessons for the front page. The pages load nothing from the web: MathJax 2,
require.js and the widget HTML manager come from the npm registry (``docs/package-lock.json``,
installed with ``npm ci`` into ``docs/node_modules`` when the lock file changes) and are copied into
the site's ``_static/vendor/``.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tools"))
import npm_files  # noqa: E402  (the npm files both builds copy)

from selfattention.coursework import lessons  # noqa: E402

NOTEBOOKS = ROOT / "notebooks"
NODE_MODULES = HERE / "node_modules"
OUT = ROOT / "build" / "site"
LESSONS = "lessons"  # the lessons' folder in the site
VENDOR = "vendor"  # under the site's _static/: the copied npm files (conf.py's URLs point here)

# The parts of each npm package the pages load: (package folder, paths inside it).
# MathJax 2 loads its fonts, TeX extensions and menu on demand, relative to its own script. It is
# version 2 because the widget manager typesets widget labels with MathJax 2's API (MathJax.Hub).
LIBRARY_FILES = {
    "mathjax": [
        "MathJax.js",
        "LICENSE",
        "config/TeX-AMS_CHTML-full.js",
        "extensions",
        "jax/input/TeX",
        "jax/element",
        "jax/output/CommonHTML",
        "jax/output/PreviewHTML",
        "fonts/HTML-CSS/TeX/woff",
        "fonts/HTML-CSS/TeX/otf",
    ],
    "requirejs": ["require.js"],
    "@jupyter-widgets/html-manager": ["dist/embed-amd.js", "package.json"],
}

BEGIN_SOLUTION, END_SOLUTION = lessons.BEGIN_SOLUTION, lessons.END_SOLUTION
BEGIN_HIDDEN, END_HIDDEN = lessons.BEGIN_HIDDEN, lessons.END_HIDDEN
ANSWER_STUB = lessons.ANSWER_STUB  # nbgrader's placeholder for a written answer
SHOW, HIDE = "Show solution", "Hide solution"
SOLUTION_TAG = "solution"  # myst-nb gives a tagged cell the class tag_solution

# --- the notebooks as the site shows them ------------------------------------------------------
# The lesson format (cells, marked regions, the learner's view) is selfattention.coursework.lessons.
source_of = lessons.source
marked_regions = lessons.marked_regions
without_hidden_tests = lessons.without_hidden_tests
solution_parts = lessons.solution_parts


def lessons_in(notebooks: Path = NOTEBOOKS) -> list[Path]:
    """Every lesson notebook, in course order."""
    try:
        return lessons.find_lessons(notebooks)
    except FileNotFoundError:
        return []


def marked_lines(text: str, begin: str, end: str, where: str = "cell") -> list[str]:
    """The lines of ``text`` inside its ``begin`` ... ``end`` regions, markers left out."""
    lines = text.split("\n")
    regions = marked_regions(text, begin, end, where)
    return [line for first, last in regions for line in lines[first + 1 : last]]


def hidden_test_lines(notebook: dict) -> list[str]:
    """The lines inside the hidden-test regions of a notebook (stripped, blank lines left out)."""
    return lessons.hidden_test_lines(notebook["cells"])


def _folded_markdown(answer: str) -> str:
    """A written model answer in a closed <details> toggle (MyST parses the markdown inside)."""
    return f'<details class="solution">\n<summary>{SHOW}</summary>\n\n{answer}\n\n</details>\n'


def site_notebook(notebook: dict, name: str = "notebook") -> dict:
    """A copy of a lesson notebook as the site shows it: the learner's view (no slide-only cell, hidden
    tests gone), each model answer folded after the blank answer, no output under a test cell (it would
    give the instructor's results away), and no Colab setup cell."""
    CODE_STUB = lessons.CODE_STUB  # the stub of this course's student copies

    notebook = copy.deepcopy(notebook)
    cells = []
    for index, cell in enumerate(notebook["cells"]):
        where = f"{name}, cell {index}"
        if lessons.SETUP_TAG in lessons.tags(cell) or lessons.is_slide_only(cell):
            continue  # the Colab install cell (nothing to run on a page); the deck's own short slides
        text = source_of(cell)
        if BEGIN_HIDDEN in text or END_HIDDEN in text:
            text = without_hidden_tests(text, where)
            cell["source"] = text
        if lessons.is_test(cell):
            cell["outputs"], cell["execution_count"] = [], None
        if not lessons.is_answer(cell):
            cells.append(cell)
            continue
        if cell["cell_type"] == "markdown":
            # A written answer: the question's own text (if any) stays, the model answer is folded.
            # nbgrader's placeholder is what a learner's copy says; the site leaves it out.
            learner, answer = solution_parts(text, "", where)
            learner = "\n".join(line for line in learner.split("\n") if line.strip() != ANSWER_STUB)
            answer = "\n".join(line for line in answer.split("\n") if line.strip() != ANSWER_STUB)
            cell["source"] = (learner.strip() + "\n\n" + _folded_markdown(answer.strip())).lstrip()
            cells.append(cell)
            continue
        # A code answer: the learner's version (not run, so no output), then the model answer folded.
        learner, answer = solution_parts(text, CODE_STUB, where)
        stub = {
            "cell_type": "code",
            "execution_count": None,
            "id": f"{cell.get('id', index)}-stub",
            "metadata": {},
            "outputs": [],
            "source": learner,
        }
        metadata = cell.setdefault("metadata", {})
        metadata["tags"] = [*metadata.get("tags", []), "hide-cell", SOLUTION_TAG]
        prompts = {"code_prompt_show": SHOW, "code_prompt_hide": HIDE}
        metadata["mystnb"] = {**metadata.get("mystnb", {}), **prompts}
        cell["source"] = answer
        cells += [stub, cell]
    notebook["cells"] = cells
    return notebook


# --- the front page's table of lessons ---------------------------------------------------------


def lesson_title(notebook: dict) -> str:
    """The title of a lesson: its first cell's heading, without the number (``Multi-head attention``)."""
    first = source_of(notebook["cells"][0]).strip().split("\n")[0]
    return re.sub(r"^#\s*\d+\s*·\s*", "", first).strip()


def lesson_time(notebook: dict, name: str = "notebook") -> str:
    """The time a lesson states in its first cell (``**Time.** About 45 min ...`` gives ``45 min``)."""
    match = re.search(r"\*\*Time\.?\*\*\.?\s*(?:About\s+)?(\d+\s*min)", source_of(notebook["cells"][0]), re.I)
    if match is None:
        raise ValueError(f"{name}: the first cell states no time ('**Time.** About NN min')")
    return match.group(1)


def readme_ideas(readme: Path = ROOT / "README.md") -> dict[str, str]:
    """The "idea" column of the README's table of lessons, by notebook name."""
    ideas = {}
    for line in readme.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and re.fullmatch(r"`\d\d_\w+\.ipynb`", cells[1]):
            ideas[cells[1].strip("`")] = cells[2]
    return ideas


def contents_table(paths: list[Path], ideas: dict[str, str]) -> str:
    """The MyST table of the lessons (link, the idea, the time) for the front page.

    The link shows the lesson's heading as written (its maths typeset); the idea is the README's line
    for the lesson, or the title for a lesson the README does not list yet.
    """
    rows = ["| lesson | the idea | time |", "|---|---|---|"]
    for path in paths:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        idea = ideas.get(path.name, lesson_title(notebook))
        heading = f"{path.name[:2]} · {lesson_title(notebook)}".replace("|", "\\|")
        time = lesson_time(notebook, path.name).replace(" ", "\u00a0")  # "45 min" on one line
        rows.append(f"| [{heading}]({LESSONS}/{path.name}) | {idea} | {time} |")
    return "\n".join(rows) + "\n"


# --- assembling the source folder and running Sphinx -------------------------------------------


def lesson_links(markdown: str) -> str:
    """A docs/ page's links to the lessons (``../notebooks/NN_topic.ipynb``, right in the repository)
    pointed at the lessons' pages in the site."""
    return re.sub(r"\]\(\.\./notebooks/(\d\d_\w+\.ipynb)", rf"]({LESSONS}/\1", markdown)


def _write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` unless the file holds it already (so Sphinx rereads only what changed)."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def assemble_source(src: Path, notebooks: Path = NOTEBOOKS) -> list[Path]:
    """Fill ``src`` with the pages Sphinx reads; returns the lessons, in order."""
    paths = lessons_in(notebooks)
    if not paths:
        raise SystemExit(f"site: no lesson notebooks (NN_topic.ipynb) in {notebooks}")
    wanted = {f"{LESSONS}/{path.name}" for path in paths} | {"_contents.md"}
    for page in sorted(HERE.glob("*.md")):
        wanted.add(page.name)
        _write_if_changed(src / page.name, lesson_links(page.read_text(encoding="utf-8")))
    _write_if_changed(src / "_contents.md", contents_table(paths, readme_ideas()))
    for path in paths:
        notebook = site_notebook(json.loads(path.read_text(encoding="utf-8")), path.name)
        _write_if_changed(src / LESSONS / path.name, json.dumps(notebook, indent=1, ensure_ascii=False))
    for stale in [*src.glob("*.md"), *src.glob(f"{LESSONS}/*")]:  # pages whose source is gone
        if stale.relative_to(src).as_posix() not in wanted:
            stale.unlink()
    return paths


def build(out: Path = OUT, src: Path | None = None, quiet: bool = True) -> Path:
    """Build the site into ``out`` (sources and Sphinx's cache in ``src``); returns ``out/index.html``."""
    out = Path(out).resolve()
    src = Path(src).resolve() if src else out.with_name(out.name + "-src")
    npm_files.ensure_node_modules(HERE, "site")
    assemble_source(src)
    command = [
        sys.executable, "-m", "sphinx", "-b", "html", "-c", str(HERE), "-d", str(src / ".doctrees"),
        *(["-q"] if quiet else []), str(src), str(out),
    ]
    subprocess.run(command, cwd=ROOT, check=True)
    npm_files.copy_libraries(NODE_MODULES, LIBRARY_FILES, out / "_static" / VENDOR, "site")
    return out / "index.html"


def main(argv: list[str]) -> None:
    start = time.perf_counter()
    out = Path(argv[0]) if argv else OUT
    index = build(out, quiet=False)
    pages = sorted(index.parent.rglob("*.html"))
    print(f"site: {len(pages)} pages in {time.perf_counter() - start:.1f} s; open {index}")


if __name__ == "__main__":
    main(sys.argv[1:])
