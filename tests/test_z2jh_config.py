"""The instructors' guide's Zero to JupyterHub ``config.yaml`` (``docs/z2jh/config.yaml``), checked against
the chart's own values schema.

The guide quotes the file verbatim, and the file holds what the guide's sections 2 and 4 say it holds. The
chart's ``values.schema.json`` and its default ``values.yaml`` are vendored, with their version, in
``docs/z2jh/jupyterhub-chart-VERSION/`` (``docs/z2jh/README.md`` says where they come from). As ``helm``
does before it renders the chart, the file is merged over the chart's defaults and the result validated
against the schema; then every key of the file, and every chart key the guide names, must be one the schema
describes (not one it merely lets through).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
Z2JH = ROOT / "docs" / "z2jh"
CONFIG = Z2JH / "config.yaml"
GUIDE = ROOT / "docs" / "instructors.md"
[CHART] = Z2JH.glob("jupyterhub-chart-*")
CHART_VERSION = CHART.name.removeprefix("jupyterhub-chart-")
SCHEMA = json.loads((CHART / "values.schema.json").read_text(encoding="utf-8"))
DEFAULTS = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))


def load_config() -> Any:
    return yaml.safe_load(CONFIG.read_text(encoding="utf-8"))


def helm_merge(defaults: Any, values: Any) -> Any:
    """``values`` over ``defaults`` as helm coalesces them: mappings merge key by key, a null removes the
    default's key, anything else replaces the default."""
    if not (isinstance(defaults, dict) and isinstance(values, dict)):
        return values
    merged = dict(defaults)
    for key, value in values.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = helm_merge(defaults.get(key), value)
    return merged


def described(schema: dict, key: str) -> dict | None:
    """The schema of ``key`` inside an object of ``schema`` when the schema describes it (a named property,
    or a pattern or additionalProperties schema for names the user chooses), else None."""
    if key in schema.get("properties", {}):
        return schema["properties"][key]
    for pattern, sub in schema.get("patternProperties", {}).items():
        if re.search(pattern, key):
            return sub
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def undescribed_keys(values: Any, schema: dict, path: str = "") -> list[str]:
    """Every key of ``values`` (a mapping) that ``schema`` does not describe, as dotted paths. Below a key
    whose schema is free-form (no properties of its own, e.g. a Kubernetes object) nothing is checked."""
    if not isinstance(values, dict) or not ("properties" in schema or "patternProperties" in schema):
        return []
    missing = []
    for key, value in values.items():
        sub = described(schema, key)
        if sub is None:
            missing.append(path + key)
        else:
            missing += undescribed_keys(value, sub, f"{path}{key}.")
    return missing


def guide_keys() -> set[str]:
    """The chart keys the guide and docs/z2jh/README.md name in backticks (``singleuser.memory.limit``)."""
    text = GUIDE.read_text(encoding="utf-8") + (Z2JH / "README.md").read_text(encoding="utf-8")
    return set(re.findall(r"`((?:singleuser|hub|proxy|scheduling|cull)(?:\.\w+)+)(?::[^`]*)?`", text))


def test_the_guide_quotes_the_config_file_verbatim():
    blocks = re.findall(r"```yaml\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)
    config = CONFIG.read_text(encoding="utf-8")
    assert config in blocks, "docs/instructors.md must quote docs/z2jh/config.yaml as it is, in a yaml block"


def test_the_config_holds_the_guides_memory_and_exchange():
    single = load_config()["singleuser"]
    assert single["memory"] == {"limit": "2.75G", "guarantee": "1.5G"}  # section 2's figures
    # ... which are make bench's, measured on a hub (benchmarks/hub_load.py).
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    measured = re.search(r"on a hub, for every lesson: guarantee ([\d.]+) GiB, limit ([\d.]+) GiB", results)
    assert measured and single["memory"] == {"limit": f"{measured[2]}G", "guarantee": f"{measured[1]}G"}
    nbgrader = single["extraFiles"]["nbgrader-config"]
    assert nbgrader["mountPath"] == "/etc/jupyter/nbgrader_config.py"
    assert re.search(r'c\.CourseDirectory\.course_id = "[^"]+"', nbgrader["stringData"])
    root = re.search(r'c\.Exchange\.root = "([^"]+)"', nbgrader["stringData"]).group(1)
    volumes = {v["name"] for v in single["storage"]["extraVolumes"]}
    mounts = {m["mountPath"]: m["name"] for m in single["storage"]["extraVolumeMounts"]}
    assert root in mounts and mounts[root] in volumes  # the exchange folder is the shared volume


def test_the_config_over_the_charts_defaults_validates_against_the_charts_schema():
    jsonschema.validate(helm_merge(DEFAULTS, load_config()), SCHEMA)
    jsonschema.validate(DEFAULTS, SCHEMA)  # the vendored pair belongs together


def test_the_schema_check_catches_a_misspelt_key_and_a_wrong_type():
    config = load_config()
    misspelt = {**config, "singleuser": {**config["singleuser"], "memmory": config["singleuser"]["memory"]}}
    with pytest.raises(jsonschema.ValidationError, match="memmory"):
        jsonschema.validate(helm_merge(DEFAULTS, misspelt), SCHEMA)
    assert undescribed_keys(misspelt, SCHEMA) == ["singleuser.memmory"]
    wrong = {**config, "singleuser": {**config["singleuser"], "uid": "jovyan"}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(helm_merge(DEFAULTS, wrong), SCHEMA)


def test_every_key_of_the_config_and_of_the_guide_is_one_the_schema_describes():
    assert undescribed_keys(load_config(), SCHEMA) == []
    named = guide_keys()
    assert {"singleuser.image.name", "singleuser.memory.limit", "singleuser.memory.guarantee",
            "singleuser.extraFiles", "singleuser.uid"} <= named, named
    for key in sorted(named):
        schema: dict | None = SCHEMA
        for part in key.split("."):
            schema = described(schema, part) if schema is not None else None
        assert schema is not None, f"the guide names {key}, which chart {CHART_VERSION}'s schema lacks"
    assert DEFAULTS["singleuser"]["uid"] == 1000  # what the guide says every learner's server runs as


def test_the_guide_names_the_chart_version_it_was_checked_against():
    text = GUIDE.read_text(encoding="utf-8")
    assert f"chart {CHART_VERSION}" in text, f"docs/instructors.md should name chart {CHART_VERSION}"
    assert CHART_VERSION in (Z2JH / "README.md").read_text(encoding="utf-8")


def test_the_spawner_options_the_guide_names_are_jupyterhubs():
    """``c.Spawner.mem_limit`` and ``mem_guarantee`` (section 2), ``c.Spawner.environment`` (section 4)."""
    spawner = pytest.importorskip("jupyterhub.spawner", reason="the hub extra is not installed").Spawner
    named = set(re.findall(r"c\.Spawner\.(\w+)", GUIDE.read_text(encoding="utf-8")))
    assert {"mem_limit", "mem_guarantee", "environment"} <= named, named
    assert named <= set(spawner.class_trait_names(config=True)), named
