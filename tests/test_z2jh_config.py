"""The instructors' guide's Zero to JupyterHub ``config.yaml`` (``docs/z2jh/config.yaml``).

The guide quotes the file verbatim, and the file holds what the guide's sections 2 and 4 say it holds. The
chart's own values schema is not in the repository, so the file is not validated against it here: the guide
tells the instructor to let ``helm`` do that (``helm upgrade --install --dry-run`` validates the values
against the chart's ``values.schema.json``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "docs" / "z2jh" / "config.yaml"
GUIDE = ROOT / "docs" / "instructors.md"


def load_config() -> Any:
    return yaml.safe_load(CONFIG.read_text(encoding="utf-8"))


def test_the_guide_quotes_the_config_file_verbatim():
    blocks = re.findall(r"```yaml\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)
    config = CONFIG.read_text(encoding="utf-8")
    assert config in blocks, "docs/instructors.md must quote docs/z2jh/config.yaml as it is, in a yaml block"


def test_the_config_holds_the_guides_memory_and_exchange():
    single = load_config()["singleuser"]
    assert single["memory"] == {"limit": "2.75G", "guarantee": "1.5G"}  # section 2's figures
    nbgrader = single["extraFiles"]["nbgrader-config"]
    assert nbgrader["mountPath"] == "/etc/jupyter/nbgrader_config.py"
    assert re.search(r'c\.CourseDirectory\.course_id = "[^"]+"', nbgrader["stringData"])
    root = re.search(r'c\.Exchange\.root = "([^"]+)"', nbgrader["stringData"]).group(1)
    volumes = {v["name"] for v in single["storage"]["extraVolumes"]}
    mounts = {m["mountPath"]: m["name"] for m in single["storage"]["extraVolumeMounts"]}
    assert root in mounts and mounts[root] in volumes  # the exchange folder is the shared volume


def test_the_guide_tells_how_to_validate_it_against_the_chart():
    text = GUIDE.read_text(encoding="utf-8")
    assert "--dry-run" in text and "values.schema.json" in text
