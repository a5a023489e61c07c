"""Build one offline reveal.js deck per lesson: ``slides/build/NN_topic.slides.html``.

Usage: ``python slides/build.py [--solutions] [notebooks/NN_topic.ipynb ...]`` (default: every lesson).

A deck shows what a learner's copy shows: the solutions are cleared (an answer cell shows the
stub ``# YOUR CODE HERE``, a written answer is left out) and the hidden tests removed, with
nbgrader's own ``ClearSolutions`` and ``ClearHiddenTests``. ``--solutions`` builds the
instructor's decks instead, with the solutions, into ``slides/build/solutions/``.

The decks load nothing from the web. reveal.js 5, MathJax 2, require.js, jQuery and the
widget HTML manager come from the npm registry (``slides/package-lock.json``, installed
with ``npm ci`` into ``slides/node_modules`` when the lock file changes) and are copied
into ``slides/build/lib/``, so ``slides/build/`` is a self-contained folder that opens
from disk. Each deck takes its reveal.js theme and transition from the notebook's ``rise`` metadata,
the same settings JupyterLab's RISE uses.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from nbconvert import SlidesExporter
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets.config import Config

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tools"))
import npm_files  # noqa: E402  (the npm files both builds copy)

from selfattention.coursework import lessons  # noqa: E402
from selfattention.coursework.mathml import with_mathml  # noqa: E402

NODE_MODULES = HERE / "node_modules"
BUILD = HERE / "build"
SOLUTIONS = BUILD / "solutions"  # the instructor's decks, with the solutions (--solutions)
LIB = "lib"  # the decks' relative URL of the copied libraries

# The slide canvas: 16:9, shown at scale 1 on a 1280x720 screen (reveal.js's margin is 0) and
# scaled up on a larger one. Sizes are CSS pixels on that canvas, so on a 1280x720 screen:
WIDTH, HEIGHT = 1280, 720
BODY_PX = 24  # text of the markdown cells
CODE_PX = 20  # code, outputs (text, tables) and widgets
# The bottom strip a figure leaves free, for the navigation arrows and the slide number
# (bottom-right corner, 58 px high with their spacing).
CONTROLS_STRIP_PX = 60


def urls(lib: str = LIB) -> dict[str, str]:
    """What a deck loads, relative to the deck: every path is under slides/build/lib/."""
    return {
        "reveal_url_prefix": f"{lib}/reveal.js",
        "require_js_url": f"{lib}/requirejs/require.js",
        "jquery_url": f"{lib}/jquery/dist/jquery.min.js",
        "mathjax_url": f"{lib}/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
        "widget_renderer_url": f"{lib}/@jupyter-widgets/html-manager/dist/embed-amd.js",
    }


URLS = urls()

# The parts of each npm package a deck needs: (package folder, paths inside it).
LIBRARY_FILES = {
    "reveal.js": ["dist", "plugin/notes", "LICENSE"],
    "requirejs": ["require.js"],
    "jquery": ["dist/jquery.min.js", "LICENSE.txt"],
    "mathjax": [
        "MathJax.js",
        "LICENSE",
        "config/TeX-AMS_CHTML-full.js",
        "config/Safe.js",
        "extensions",
        "jax/input/TeX",
        "jax/element",
        "jax/output/CommonHTML",
        "jax/output/PreviewHTML",
        "fonts/HTML-CSS/TeX/woff",
        "fonts/HTML-CSS/TeX/otf",
    ],
    "@jupyter-widgets/html-manager": ["dist/embed-amd.js", "package.json"],
}


def all_lessons() -> list[Path]:
    """Every lesson notebook, in course order."""
    return lessons.find_lessons(ROOT / "notebooks")


def deck_path(notebook: Path, solutions: bool = False) -> Path:
    """Where the deck of ``notebook`` is written (the instructor's deck under ``solutions/``)."""
    return (SOLUTIONS if solutions else BUILD) / f"{notebook.stem}.slides.html"


class DeckForLearners(Preprocessor):
    """The room view of a lesson (``selfattention.coursework.lessons``: slide-only cells kept), as
    nbgrader's ClearSolutions leaves an answer.

    Runs before ClearSolutions and ClearHiddenTests. A code answer keeps its cell (ClearSolutions
    turns its solution into the stub) but loses its outputs, which the solution produced; a
    written answer (a markdown solution cell) is left out. So are ``skip`` cells (exercise tests,
    hidden content), which a deck never shows: not even hidden, they are not in the file.
    """

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        kept = []
        for cell in nb.cells:
            if lessons.slide_type(cell) == "skip" or lessons.is_written_answer(cell):
                continue
            if lessons.is_code_answer(cell):
                cell.outputs, cell.execution_count = [], None
            kept.append(cell)
        nb.cells = kept
        return nb, resources


class NotesAsMathML(Preprocessor):
    """The maths of the speaker notes as MathML, made here.

    reveal.js's speaker view (key S) copies a slide's notes into its own window as HTML, where no MathJax
    runs: TeX left for the deck's MathJax arrives there half typeset (its CommonHTML and the hidden
    MathML both shown: "hh heads"; or not yet typeset: the formula missing). MathML needs no script, and
    the deck's MathJax (TeX input only) leaves it alone.
    """

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        for cell in nb.cells:
            if lessons.is_notes(cell) and cell.cell_type == "markdown":
                cell.source = with_mathml(cell.source)
        return nb, resources


def exporter_for(notebook: dict, solutions: bool = False) -> SlidesExporter:
    """A slides exporter with local URLs and the notebook's own RISE settings.

    Without ``solutions`` (the default deck) it clears the solutions and hidden tests first.
    """
    rise = notebook.get("metadata", {}).get("rise", {})
    config = Config()
    config.SlidesExporter.update(urls(f"../{LIB}" if solutions else LIB))
    config.SlidesExporter.update(
        template_name="course_reveal",
        extra_template_basedirs=[str(HERE / "templates")],
        reveal_theme=rise.get("theme", "serif"),
        reveal_transition=rise.get("transition", "none"),
        # No scrolling slides: nbconvert's scroll mode clips a tall slide at 95% of the
        # window, which the 16:9 canvas scaled to the screen makes shorter still. The
        # browser test checks instead that every slide fits the canvas.
        reveal_scroll=False,
        reveal_width=str(WIDTH),
        reveal_height=str(HEIGHT),
        reveal_number="c/t",
    )
    # A cell tagged `slides-output-only` shows its output on the slide, not its code: for the
    # few cells (a widget, a long experiment) whose code and output together exceed one slide.
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_input_tags = {"slides-output-only"}
    if not solutions:
        # nbgrader's own preprocessors, as for a learner's copy (imported here: nbgrader takes
        # seconds to import, and only the default decks need it).
        from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

        config.ClearSolutions.code_stub = {"python": lessons.CODE_STUB}
        config.SlidesExporter.preprocessors = [DeckForLearners, ClearSolutions, ClearHiddenTests,
                                               NotesAsMathML]
    else:
        config.SlidesExporter.preprocessors = [NotesAsMathML]
    return SlidesExporter(config=config)


def build_deck(notebook_path: Path, solutions: bool = False) -> Path:
    """Write the deck of one lesson and return its path."""
    if notebook_path.suffix != ".ipynb" or not notebook_path.is_file():
        raise SystemExit(f"slides: notebook should be an existing .ipynb file, got {notebook_path}")
    notebook = json.loads(notebook_path.read_text(encoding="utf-8"))
    resources = {"course": {"body_px": BODY_PX, "code_px": CODE_PX, "controls_strip_px": CONTROLS_STRIP_PX}}
    body, _ = exporter_for(notebook, solutions).from_filename(str(notebook_path), resources=resources)
    out = deck_path(notebook_path, solutions)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(body, encoding="utf-8")
    return out


def build(notebooks: list[Path] | None = None, solutions: bool = False) -> list[Path]:
    """Install the npm packages if needed, copy them and build every deck.

    ``solutions``: the instructor's decks, with the solutions, into slides/build/solutions/.
    """
    npm_files.ensure_node_modules(HERE, "slides")
    BUILD.mkdir(exist_ok=True)
    npm_files.copy_libraries(NODE_MODULES, LIBRARY_FILES, BUILD / LIB, "slides")
    return [build_deck(path, solutions) for path in (notebooks or all_lessons())]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description="Build the lesson decks into slides/build/.")
    parser.add_argument(
        "--solutions", action="store_true",
        help="the instructor's decks, with the solutions, into slides/build/solutions/ (never the default)",
    )
    parser.add_argument("notebooks", nargs="*", type=Path, help="lessons to build (default: every lesson)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    decks = build([path.resolve() for path in args.notebooks] or None, args.solutions)
    for deck in decks:
        print(f"  {deck.relative_to(ROOT)}")
    kind = "instructor's decks, WITH SOLUTIONS," if args.solutions else "decks"
    print(f"slides: {len(decks)} {kind} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
