# `make demo` and `make test` set everything up themselves on a fresh machine: system
# packages (Mesa EGL/llvmpipe, Xvfb, node and npm) when missing, then a virtualenv in .venv
# and the Khronos glTF validator (npm) in tools/gltf-validator, which the tests run on every
# file they bake.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup test demo play verify bench clean

setup: $(STAMP)

VALIDATOR := tools/gltf-validator

$(STAMP): pyproject.toml tools/setup-system.sh $(VALIDATOR)/package.json $(VALIDATOR)/package-lock.json
	bash tools/setup-system.sh
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[all,test,bench]'
	npm ci --prefix $(VALIDATOR) --no-audit --no-fund --loglevel=error
	touch $(STAMP)

# One pytest-xdist worker per logical CPU, each with its own EGL context. worksteal hands each
# worker a contiguous half of the tests (module fixtures stay mostly on one worker) and lets
# an idle one take tests from the end of the other's queue.
test: setup
	$(PY) -m pytest -q -n logical --dist worksteal

DEMO_VIDEO := out/demo/fox_run_compare.mp4

# The Fox's Run, keyframes alone (left) beside the springs (right), rendered headless (EGL).
demo: setup
	$(VENV)/bin/gpu-jiggle render data/fox/Fox.gltf --rig rigs/fox.toml --animation Run --seconds 6 --fps 30 \
		--compare --out $(DEMO_VIDEO)
	@echo "demo video: $(abspath $(DEMO_VIDEO))"

# The same in a window (needs a display): orbit, clips, live f/damping sliders, debug view.
play: setup
	$(VENV)/bin/gpu-jiggle play data/fox/Fox.gltf --rig rigs/fox.toml --animation Run

verify: setup
	$(VENV)/bin/gpu-jiggle verify --out out/verify

# Segment-substeps per second of the GPU and numpy paths and their numba/Warp peers, sized for
# llvmpipe (add 4000000 to --sizes on a GPU); table, out/bench/bench.json and out/bench/bench.png.
bench: setup
	mkdir -p out/bench
	$(VENV)/bin/gpu-jiggle bench --sizes 10000 100000 1000000 --chain-lengths 8 --substeps 2 --peers \
		--json out/bench/bench.json --plot out/bench/bench.png

clean:
	rm -rf $(VENV) out build dist *.egg-info
