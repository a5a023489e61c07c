"""Shared test fixtures and paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def load_notebook(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(params=NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def notebook(request: pytest.FixtureRequest) -> tuple[Path, dict]:
    return request.param, load_notebook(request.param)


@pytest.fixture(scope="session")
def pw():
    """The one Playwright instance of the run: its sync API allows only one at a time, so the
    browser suites (test_browser.py, test_slides.py) share it and each launches its own Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="module")
def one_torch_thread():
    """Run a module's tests with one torch thread (tiny tensors), then restore the setting."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
