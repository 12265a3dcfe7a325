# `make demo` and `make test` set everything up themselves on a fresh machine: system
# packages (Mesa EGL/llvmpipe, Xvfb) when missing, then a virtualenv in .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup test demo verify bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml tools/setup-system.sh
	bash tools/setup-system.sh
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

test: setup
	$(PY) -m pytest -q

demo: setup
	$(PY) demos/01_tail_2d.py --headless --out out/demo

verify: setup
	$(VENV)/bin/gpu-jiggle verify --out out/verify

bench: setup
	$(PY) benchmarks/bench_solver.py

clean:
	rm -rf $(VENV) out build dist *.egg-info
