"""Sphinx configuration of the course website. Build it with ``make site`` (``python docs/build.py``).

``docs/build.py`` assembles the pages Sphinx reads (this folder's ``*.md`` and the lessons, solutions
folded and hidden tests removed) into a source folder next to the output and passes this folder
as the configuration folder (``sphinx-build -c docs``). The notebooks are not executed.
"""

from __future__ import annotations

project = "Self-Attention in Transformers"
author = "the course's authors"
copyright = "the course's authors"

extensions = ["myst_nb"]

# The lessons are rendered as committed (outputs, figures and saved widget state), never re-run.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
exclude_patterns = [".doctrees", "**.ipynb_checkpoints", "_contents.md"]  # _contents.md: included by index.md

html_theme = "furo"  # no web fonts, no CDN: everything it loads is in _static
html_title = project
html_static_path = ["_static"]
html_css_files = ["site.css"]
html_copy_source = False  # the pages are the course; the notebooks are in the repository
html_show_sourcelink = False
html_last_updated_fmt = None

# Nothing is loaded from the web: MathJax 2, require.js and the widget manager are copied into the
# site's _static/vendor/ by docs/build.py (from docs/node_modules, installed by npm ci).
# Relative paths here are relative to _static/. MathJax 2, not 3: the widget manager typesets
# widget labels through MathJax 2's API.
mathjax_path = "vendor/mathjax/MathJax.js?config=TeX-AMS_CHTML-full"
mathjax2_config = {
    "messageStyle": "none",  # no "Loading [MathJax]..." box in the corner
}
myst_update_mathjax = False  # myst's MathJax 3 settings do not apply to MathJax 2
nb_ipywidgets_js = {
    "vendor/requirejs/require.js": {},
    "vendor/@jupyter-widgets/html-manager/dist/embed-amd.js": {},
}


def setup(app):
    # MathJax on every page, not only those with a formula: the sidebar lists lesson titles with TeX.
    app.set_html_assets_policy("always")
