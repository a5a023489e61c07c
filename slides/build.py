"""Build one offline reveal.js deck per lesson: ``slides/build/NN_topic.slides.html``.

Usage: ``python slides/build.py [notebooks/NN_topic.ipynb ...]`` (default: every lesson).

The decks load nothing from the web. reveal.js 5, MathJax 2, require.js, jQuery and the
widget HTML manager come from the npm registry (``slides/package-lock.json``, installed
with ``npm ci`` into ``slides/node_modules`` when the lock file changes) and are copied
into ``slides/build/lib/``, so ``slides/build/`` is a self-contained folder that opens
from disk. Each deck takes its reveal.js theme and transition from the notebook's ``rise`` metadata,
the same settings JupyterLab's RISE uses.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from nbconvert import SlidesExporter
from traitlets.config import Config

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NODE_MODULES = HERE / "node_modules"
BUILD = HERE / "build"
LIB = "lib"  # the decks' relative URL of the copied libraries

# The slide canvas: 16:9, scaled by reveal.js to the screen (1280x720 in the browser test).
WIDTH, HEIGHT = 1920, 1080

# What each deck loads, relative to the deck; every path is under slides/build/lib/.
URLS = {
    "reveal_url_prefix": f"{LIB}/reveal.js",
    "require_js_url": f"{LIB}/requirejs/require.js",
    "jquery_url": f"{LIB}/jquery/dist/jquery.min.js",
    "mathjax_url": f"{LIB}/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
    "widget_renderer_url": f"{LIB}/@jupyter-widgets/html-manager/dist/embed-amd.js",
}

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
# The widget manager's own fonts and images sit next to embed-amd.js.
WIDGET_ASSETS = (".woff", ".woff2", ".ttf", ".eot", ".svg")


def lessons() -> list[Path]:
    """Every lesson notebook, in course order."""
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def deck_path(notebook: Path) -> Path:
    """Where the deck of ``notebook`` is written."""
    return BUILD / f"{notebook.stem}.slides.html"


def ensure_node_modules() -> None:
    """Run ``npm ci`` in slides/ unless node_modules already matches package-lock.json."""
    lock, installed = HERE / "package-lock.json", NODE_MODULES / ".package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("slides: npm is not installed; install Node.js 18 or newer (it ships npm).")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True)


def copy_libraries() -> None:
    """Copy the needed files of each npm package into slides/build/lib/."""
    for package, parts in LIBRARY_FILES.items():
        source, target = NODE_MODULES / package, BUILD / LIB / package
        for part in parts:
            src, dst = source / part, target / part
            if not src.exists():
                raise SystemExit(f"slides: {src} is missing; delete slides/node_modules and rebuild.")
            if src.is_dir():
                shutil.copytree(src, dst, dirs_exist_ok=True)
            else:
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)
    widget_dist = NODE_MODULES / "@jupyter-widgets/html-manager/dist"
    for asset in widget_dist.iterdir():
        if asset.suffix in WIDGET_ASSETS:
            shutil.copy2(asset, BUILD / LIB / "@jupyter-widgets/html-manager/dist" / asset.name)


def exporter_for(notebook: dict) -> SlidesExporter:
    """A slides exporter with local URLs and the notebook's own RISE settings."""
    rise = notebook.get("metadata", {}).get("rise", {})
    config = Config()
    config.SlidesExporter.update(URLS)
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
    return SlidesExporter(config=config)


def build_deck(notebook_path: Path) -> Path:
    """Write the deck of one lesson and return its path."""
    notebook = json.loads(notebook_path.read_text(encoding="utf-8"))
    body, _ = exporter_for(notebook).from_filename(str(notebook_path))
    out = deck_path(notebook_path)
    out.write_text(body, encoding="utf-8")
    return out


def build(notebooks: list[Path] | None = None) -> list[Path]:
    """Install the npm packages if needed, copy them and build every deck."""
    ensure_node_modules()
    BUILD.mkdir(exist_ok=True)
    copy_libraries()
    return [build_deck(path) for path in (notebooks or lessons())]


def main(argv: list[str]) -> None:
    start = time.perf_counter()
    decks = build([Path(arg).resolve() for arg in argv] or None)
    for deck in decks:
        print(f"  {deck.relative_to(ROOT)}")
    print(f"slides: {len(decks)} decks in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
