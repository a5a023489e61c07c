"""The pip path (pyproject.toml) and environment.yml name the same packages and versions."""

from __future__ import annotations

import sys

import yaml
from conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _norm(spec: str) -> str:
    return spec.replace(" ", "").lower()


def pip_path() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        specs += extra
    return {_norm(s) for s in specs}


def conda_path() -> set[str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    return {_norm(s) for s in pip_section if not s.startswith("--editable")}


def test_same_packages_same_versions():
    pip, conda = pip_path(), conda_path()
    assert pip == conda, (
        f"only in pyproject.toml: {sorted(pip - conda)}; only in environment.yml: {sorted(conda - pip)}"
    )


def test_torch_is_pinned_to_the_local_cpu_build():
    assert "torch==2.13.0" in pip_path()


def test_environment_installs_the_package_itself():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "--editable ." in pip_section
