# fairarena: `make demo` and `make test` set everything up from a fresh clone.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean setup

setup: $(STAMP)

# pip keeps its wheel cache (~/.cache/pip), so compiled wheels are reused across venvs.
$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install -e ".[all,test]"
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/fairarena demo

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache
