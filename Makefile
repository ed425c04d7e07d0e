# Two entry points: `make demo` and `make test`. Both create .venv if it is missing and install dfst.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-browser bench api tutorial lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# torch first, from the pinned CPU build, so that nothing resolves `torch>=2.4` to a CUDA wheel.
$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt torch
	$(BIN)/pip install -q -c constraints.txt -e '.[dev,docs,ray]'
	touch $(STAMP)

demo: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" bash scripts/demo.sh

# The suite on every core up to four (pytest-xdist); a test file stays on one worker, so a file's
# module-scoped fixtures (one small training run shared by its tests) are computed once.
test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/pytest -n auto --maxprocesses 4 --dist loadfile

# Opt-in: the HTML report (dfst report --html) in headless Chromium, driven by Playwright: no console
# error, the tables' numbers, the animation plays. Needs Chromium from the system's packages
# (Debian/Ubuntu: apt-get install chromium) or DFST_CHROMIUM=/path/to/chrome (docs/report.md).
test-browser: $(STAMP)
	$(BIN)/pip install -q -c constraints.txt -e '.[browser]'
	$(BIN)/pytest -m browser

# The API reference from the docstrings (pdoc): build/api/index.html. Any pdoc warning fails it.
api: $(STAMP)
	$(BIN)/python scripts/build_api.py build/api

# The tutorial notebook executed in a Jupyter kernel (nbclient), cell by cell, in build/tutorial/; the
# executed copy lands there too. `make test` runs the same cells without Jupyter (tests/test_tutorial.py).
tutorial: $(STAMP)
	$(BIN)/pip install -q -c constraints.txt -e '.[notebook]'
	$(BIN)/python scripts/run_tutorial.py build/tutorial

# Opt-in: the checks of figures at scale (the `slow` marker: long operands, the README tour as written, the
# full mutation bench, ...) and the rollout bench.
bench: $(STAMP)
	$(BIN)/pytest -m slow
	$(BIN)/dfst bench rollout

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
