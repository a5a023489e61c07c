# The course's verbs: `make help` lists them. Each sets up .venv on first use; later runs reuse it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HUB_STAMP := $(VENV)/.installed-hub
LAB_FLAGS := --ServerApp.ip=127.0.0.1 $(if $(DISPLAY),,--no-browser) \
             $(if $(filter 0,$(shell id -u)),--allow-root,)
# Where things are (python -m selfattention.coursework; docs/grading.md for the grading variables).
NOTEBOOKS          ?= notebooks
WORK               ?= work
PRESENT            ?= present
LAB_BUILD          ?= build/lab
COURSE             ?= build/course
RELEASE            ?= student
SUBMISSIONS        ?= submissions
GRADES             ?= grades/grades.csv
FEEDBACK           ?= feedback
# make grade's run policy: time, output, and the sandbox each submission's kernel runs in.
CELL_TIMEOUT       ?= 180
SUBMISSION_TIMEOUT ?= 600
JOBS               ?= 1
ISOLATION          ?= bwrap
MEMORY_LIMIT       ?= 2G
MAX_PROCESSES      ?= 256
DISK_LIMIT         ?= 512M
JUPYTER_LAB        ?= $(BIN)/jupyter lab
COURSEWORK          = $(BIN)/python -m selfattention.coursework --notebooks $(NOTEBOOKS)
# The learner's lab hides nbgrader's instructor tools (Formgrader, Create Assignment, course list); its
# Nbgrader menu keeps one item, Assignment List, the one way to the Assignments tab.
LEARNER_CONFIG     := $(abspath src/selfattention/coursework/learner_config)
LAB_ENV             = JUPYTER_CONFIG_PATH=$(LEARNER_CONFIG)$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH))
# Two pytest workers (pytest-xdist), each test file and notebook on one worker; TEST_JOBS=1: one process.
TEST_JOBS          ?= 2
PYTEST              = $(BIN)/python -m pytest $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadfile)
# The Debian packages the tests need (Chromium, Node.js/npm, bubblewrap; python3.X-venv before .venv exists),
# installed when missing (as root, or with passwordless sudo); otherwise one line saying what to run.
SYSTEM_DEPS         = PYTHON=$(PYTHON) VENV=$(VENV) bash tools/system-deps.sh

.DEFAULT_GOAL := help
.PHONY: help setup lab present release grade feedback slides site check test test-attacks bench lint \
        system system-lab clean

help: ## this list
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-13s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo "  Variables: make lab REFRESH=02, make grade ISOLATION=none JOBS=2, make slides SOLUTIONS=1,"
	@echo "  make bench FULL=1, make test TEST_JOBS=1 (README.md, docs/grading.md, slides/README.md)."

setup: $(STAMP) ## create .venv and install the course (done by every other verb)
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[lab,test,site]'
	@touch $@
# The hub extra (JupyterHub, for tests/test_hub.py and test_hub_browser.py), added by make test only.
$(HUB_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[hub]'
	@touch $@

lab: system-lab setup ## your copies of the lessons in work/, opened in JupyterLab (REFRESH=02 renews one)
	@$(COURSEWORK) lab --work $(WORK) --build $(LAB_BUILD) $(if $(REFRESH),--refresh $(REFRESH))
	$(LAB_ENV) $(JUPYTER_LAB) $(LAB_FLAGS) --ServerApp.root_dir=$(WORK)

present: system-lab setup ## presenter copies in present/ (slides in, no solutions), opened in JupyterLab
	@$(COURSEWORK) present --work $(PRESENT) --build build/present $(if $(REFRESH),--refresh $(REFRESH))
	$(LAB_ENV) $(JUPYTER_LAB) $(LAB_FLAGS) --ServerApp.root_dir=$(PRESENT)

release: setup ## student versions of every lesson into student/ (commit them with the lesson)
	$(COURSEWORK) release --build $(COURSE) --out $(RELEASE)

grade: setup ## autograde submissions/LEARNER/NN_topic.ipynb into grades/grades.csv (docs/grading.md)
	$(COURSEWORK) grade --build $(COURSE) --submissions $(SUBMISSIONS) --out $(GRADES) \
	  --cell-timeout $(CELL_TIMEOUT) --submission-timeout $(SUBMISSION_TIMEOUT) --jobs $(JOBS) \
	  --isolation $(ISOLATION) --memory-limit $(MEMORY_LIMIT) --max-processes $(MAX_PROCESSES) \
	  --disk-limit $(DISK_LIMIT) $(if $(REPLACE),--replace)

feedback: setup ## one HTML page per learner and lesson from the last make grade, into feedback/
	$(COURSEWORK) feedback --build $(COURSE) --out $(FEEDBACK)

slides: setup ## offline reveal.js decks into slides/build/ (SOLUTIONS=1: the instructor's)
	$(BIN)/python slides/build.py $(if $(filter 1 yes true,$(SOLUTIONS)),--solutions)

site: setup ## the course website into build/site/ (from the committed notebooks, not re-run)
	$(BIN)/python docs/build.py

check: lint ## the fast loop: ruff and the unit tests (no Chromium, bubblewrap or apt; under 2 min)
	$(PYTEST) -m unit

test: system lint $(HUB_STAMP) ## every check, what CI runs: unit, notebooks, grading, browser and slow tests
	$(PYTEST) --strict-system

test-attacks: system setup ## the grading attack suite alone (fast and slow halves, several minutes)
	$(BIN)/python -m pytest -p no:xdist --strict-system tests/test_attacks.py tests/test_attacks_slow.py

bench: setup ## timings and memory into benchmarks/RESULTS.md (FULL=1: make check and make test too)
	$(BIN)/python -m benchmarks $(if $(FULL),--full)

lint: setup ## ruff
	$(BIN)/ruff check .

system: ## the Debian packages make test needs, installed when missing
	@$(SYSTEM_DEPS) test
system-lab:
	@$(SYSTEM_DEPS) lab

clean: ## remove .venv and the caches
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
