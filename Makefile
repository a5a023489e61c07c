# The course's verbs. Each sets up .venv on first use; later runs reuse it.
#   make lab      open the course in JupyterLab
#   make test     run every check (what CI runs)
#   make slides   build one offline reveal.js deck per lesson into slides/build/
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LAB_FLAGS := --ServerApp.ip=127.0.0.1 $(if $(DISPLAY),,--no-browser) \
             $(if $(filter 0,$(shell id -u)),--allow-root,)
# Working copies and grading (python -m selfattention.coursework; README "For learners"/"For graders").
#   make lab REFRESH=02   replace your changed copy of lesson 02 (yours is kept in work/backups/)
#   make release          student versions of every lesson in release/
#   make grade            autograde submissions/LEARNER/NN_topic.ipynb into grades/grades.csv
NOTEBOOKS          ?= notebooks
WORK               ?= work
LAB_BUILD          ?= build/lab
COURSE             ?= build/course
RELEASE            ?= release
SUBMISSIONS        ?= submissions
GRADES             ?= grades/grades.csv
CELL_TIMEOUT       ?= 60
SUBMISSION_TIMEOUT ?= 300
JOBS               ?= 1
JUPYTER_LAB        ?= $(BIN)/jupyter lab
COURSEWORK          = $(BIN)/python -m selfattention.coursework --notebooks $(NOTEBOOKS)

.PHONY: setup lab test lint clean

setup: $(STAMP)

# Reinstall only when the package's requirements change.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[lab,test]'
	@touch $@

lab: setup
	@$(COURSEWORK) lab --work $(WORK) --build $(LAB_BUILD) $(if $(REFRESH),--refresh $(REFRESH))
	$(JUPYTER_LAB) $(LAB_FLAGS) --ServerApp.root_dir=$(WORK)

.PHONY: release grade
release: setup
	$(COURSEWORK) release --build $(COURSE) --out $(RELEASE)

grade: setup
	$(COURSEWORK) grade --build $(COURSE) --submissions $(SUBMISSIONS) --out $(GRADES) \
	  --cell-timeout $(CELL_TIMEOUT) --submission-timeout $(SUBMISSION_TIMEOUT) --jobs $(JOBS)

lint: setup
	$(BIN)/ruff check .

# Two pytest workers (pytest-xdist); each test file, and each notebook, stays on one worker in order.
#   make test TEST_JOBS=1   everything in one process
TEST_JOBS ?= 2
test: lint
	$(BIN)/python -m pytest $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadfile)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis

# Timings and memory of the course and of our attention; not part of `make test`.
#   make bench          write benchmarks/RESULTS.md and benchmarks/results.png
#   make bench FULL=1   also time a complete `make test` (several minutes more)
.PHONY: bench
bench: setup
	$(BIN)/python benchmarks/run.py $(if $(FULL),--full)

# npm ci into slides/node_modules (only when slides/package-lock.json changed), then the decks.
#   make slides              slides/build/NN_topic.slides.html: no solutions, no hidden tests
#   make slides SOLUTIONS=1  the instructor's decks, with the solutions: slides/build/solutions/
.PHONY: slides
slides: setup
	$(BIN)/python slides/build.py $(if $(filter 1 yes true,$(SOLUTIONS)),--solutions)
