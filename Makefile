# The course's verbs. Each sets up .venv on first use; later runs reuse it.
#   make lab      open the course in JupyterLab
#   make test     run every check (what CI runs)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LAB_FLAGS := --ServerApp.ip=127.0.0.1 $(if $(DISPLAY),,--no-browser) \
             $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: setup lab test lint clean

setup: $(STAMP)

# Reinstall only when the package's requirements change.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[lab,test]'
	@touch $@

lab: setup
	$(BIN)/jupyter lab $(LAB_FLAGS) --ServerApp.root_dir=notebooks

lint: setup
	$(BIN)/ruff check .

test: lint
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
