"""One learner's view of each lesson, whichever way it is built.

``selfattention.coursework.lessons.learner_cells`` defines what a learner reads of a lesson. The three
things built from a lesson agree with it, cell for cell (type and source):

- the student version ``make release`` writes (nbgrader's generate_assignment), committed in ``student/``
  and copied into ``work/`` by ``make lab``: exactly the learner's view;
- the website's page (``docs/build.py``): the learner's view without the Colab setup cell, each model
  answer added after its blank answer (folded, tagged ``solution``);
- the deck (``slides/build.py``): the room view (the learner's view plus the slide-only cells) without the
  cells a deck never shows (``skip``: tests, links, setup; written answers).
"""

from __future__ import annotations

import json

import pytest
from conftest import NOTEBOOKS, ROOT, load_notebook, load_script

from selfattention.coursework import lessons

site = load_script(ROOT / "docs" / "build.py")
slides = load_script(ROOT / "slides" / "build.py")
IDS = [p.stem for p in NOTEBOOKS]


def shape(cells) -> list[tuple[str, str]]:
    return [(c["cell_type"], lessons.source(c).strip()) for c in cells]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_the_student_version_is_the_learners_view(path):
    student = json.loads((ROOT / "student" / path.name).read_text(encoding="utf-8"))
    assert shape(student["cells"]) == shape(lessons.learner_cells(load_notebook(path)))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_the_site_shows_the_learners_view(path):
    nb = load_notebook(path)
    page = [c for c in site.site_notebook(nb, path.name)["cells"]
            if "solution" not in c.get("metadata", {}).get("tags", [])]
    view = [c for c in lessons.learner_cells(nb) if lessons.SETUP_TAG not in lessons.tags(c)]
    # a written answer's page cell holds the question's own text and the folded model answer
    expected = [(t, s) for t, s in shape(view)]
    got = shape(page)
    assert len(got) == len(expected)
    for (kind, text), (want_kind, want_text), cell in zip(got, expected, view, strict=True):
        assert kind == want_kind
        if lessons.is_written_answer(cell):
            assert text.endswith("</details>") and '<details class="solution">' in text
        else:
            assert text == want_text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_the_deck_shows_the_room_view(path):
    import nbformat

    nb = load_notebook(path)
    exporter = slides.exporter_for(nb)
    deck = nbformat.reads(json.dumps(nb), as_version=4)
    mine = {"DeckForLearners", "ClearSolutions", "ClearHiddenTests"}  # the deck's own: what cells it has
    for preprocessor in exporter._preprocessors:
        if type(preprocessor).__name__ in mine:
            deck, _ = preprocessor(deck, {})
    room = [c for c in lessons.learner_cells(nb, room=True)
            if lessons.slide_type(c) != "skip" and not lessons.is_written_answer(c)]
    assert shape(deck.cells) == shape(room)
