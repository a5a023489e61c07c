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
#   make release          student versions of every lesson in student/ (committed: every lesson's Colab and
#                         Binder links open them); rerun and commit student/ whenever a lesson changes
#   make grade            autograde submissions/LEARNER/NN_topic.ipynb into grades/grades.csv
NOTEBOOKS          ?= notebooks
WORK               ?= work
LAB_BUILD          ?= build/lab
COURSE             ?= build/course
RELEASE            ?= student
SUBMISSIONS        ?= submissions
GRADES             ?= grades/grades.csv
CELL_TIMEOUT       ?= 60
SUBMISSION_TIMEOUT ?= 300
JOBS               ?= 1
JUPYTER_LAB        ?= $(BIN)/jupyter lab
COURSEWORK          = $(BIN)/python -m selfattention.coursework --notebooks $(NOTEBOOKS)

.PHONY: setup lab test lint clean system system-lab

setup: $(STAMP)

# Reinstall only when the package's requirements change.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[lab,test,site]'
	@touch $@

# The learner's lab hides nbgrader's instructor tools (Formgrader, Create Assignment, course list,
# the nbgrader menu): a Jupyter config folder that disables them, ahead of the virtualenv's.
LEARNER_CONFIG := $(abspath src/selfattention/coursework/learner_config)
lab: system-lab setup
	@$(COURSEWORK) lab --work $(WORK) --build $(LAB_BUILD) $(if $(REFRESH),--refresh $(REFRESH))
	JUPYTER_CONFIG_PATH=$(LEARNER_CONFIG)$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH)) \
	  $(JUPYTER_LAB) $(LAB_FLAGS) --ServerApp.root_dir=$(WORK)

# Live slides (RISE) from JupyterLab: presenter copies in present/, each lesson with its deck's slide
# cells and no solutions (a learner's copy leaves the slide cells out: the lesson text says it all).
#   make present REFRESH=02   replace your changed presenter copy of lesson 02 (kept in present/backups/)
PRESENT ?= present
.PHONY: present
present: system-lab setup
	@$(COURSEWORK) present --work $(PRESENT) --build build/present $(if $(REFRESH),--refresh $(REFRESH))
	JUPYTER_CONFIG_PATH=$(LEARNER_CONFIG)$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH)) \
	  $(JUPYTER_LAB) $(LAB_FLAGS) --ServerApp.root_dir=$(PRESENT)

.PHONY: release grade feedback
release: setup
	$(COURSEWORK) release --build $(COURSE) --out $(RELEASE)

# Each submission's kernel runs sealed off by bubblewrap with these limits (README "For graders").
#   make grade ISOLATION=none   grade without a sandbox, on purpose (the CSV says so)
#   make grade REPLACE=1        write grades.csv even if it has fewer rows than the last one
ISOLATION          ?= bwrap
MEMORY_LIMIT       ?= 2G
MAX_PROCESSES      ?= 256
DISK_LIMIT         ?= 512M
grade: setup
	$(COURSEWORK) grade --build $(COURSE) --submissions $(SUBMISSIONS) --out $(GRADES) \
	  --cell-timeout $(CELL_TIMEOUT) --submission-timeout $(SUBMISSION_TIMEOUT) --jobs $(JOBS) \
	  --isolation $(ISOLATION) --memory-limit $(MEMORY_LIMIT) --max-processes $(MAX_PROCESSES) \
	  --disk-limit $(DISK_LIMIT) $(if $(REPLACE),--replace)

# One HTML page per learner and lesson (score, messages, maths as MathML) from the last make grade.
FEEDBACK ?= feedback
feedback: setup
	$(COURSEWORK) feedback --build $(COURSE) --out $(FEEDBACK)

# The Debian packages the tests need (Chromium, Node.js/npm, bubblewrap; python3.X-venv before .venv exists),
# installed when missing (as root, or with passwordless sudo); otherwise one line saying what to run.
SYSTEM_DEPS = PYTHON=$(PYTHON) VENV=$(VENV) bash tools/system-deps.sh
system:
	@$(SYSTEM_DEPS) test
system-lab:
	@$(SYSTEM_DEPS) lab

lint: setup
	$(BIN)/ruff check .

# Two pytest workers (pytest-xdist); each test file, and each notebook, stays on one worker in order.
#   make test TEST_JOBS=1   everything in one process
TEST_JOBS ?= 2
test: system lint
	$(BIN)/python -m pytest $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadfile)

# The attack suite's slow half: whole grading runs with crafted submissions (several minutes).
#   (its fast half, tests/test_attacks.py, is part of make test)
.PHONY: test-attacks
test-attacks: setup
	SLOW_ATTACKS=1 $(BIN)/python -m pytest -p no:xdist tests/test_attacks.py tests/test_attacks_slow.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis

# The course website: build/site/index.html and its pages, from the committed notebooks (not re-run);
# npm ci into docs/node_modules first when docs/package-lock.json changed.
.PHONY: site
site: setup
	$(BIN)/python docs/build.py

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
