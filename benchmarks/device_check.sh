#!/usr/bin/env bash
# The checks for a machine with an NVIDIA GPU, in one run of under 6 minutes there (each step
# has a time cap, 8 minutes in all, for slower machines), installing
# nothing from the network: the GPU tests (the cross-checks against numpy, the loop and
# property tests, the benchmark's own), the full benchmark up to 4M segments (and the Warp
# peer on CUDA when warp-lang is importable), and the grass demo headless at 1M blades.
# Everything it finds goes under OUT_DIR: info.txt, tests.log, bench.json, bench.png,
# bench.txt, work_groups.txt (the dispatch at 32-256 chains per work group), occupancy.txt
# (the dispatch from 10k to 1M segments at 32-128 chains per group), grass.txt and summary.txt.
#
#   benchmarks/device_check.sh OUT_DIR
#
# PYTHON (default: .venv/bin/python when present, else python3) must import gpu_jiggle and its
# [app,test] extras. SIZES, SIZES_4 and BLADES shrink the run for a try on a machine without a
# GPU (defaults "100000 1000000 4000000", 4000000 and 1000000). A step that fails or runs out of its time is reported in summary.txt and
# the next one still runs; the exit status is that of the tests.
set -uo pipefail
out=${1:?usage: benchmarks/device_check.sh OUT_DIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)   # the caller's folder, before the cd below
case "${PYTHON:-}" in */*) PYTHON=$(realpath "$PYTHON") ;; esac
cd "$(dirname "$0")/.."
if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=$PWD/.venv/bin/python; else PYTHON=python3; fi
fi
export PYTHONUNBUFFERED=1
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
started=$(date +%s)
elapsed() { echo $(( $(date +%s) - started )); }

note "device check of $(git rev-parse --short HEAD 2>/dev/null || echo 'this tree') on $(date -u +%FT%TZ)"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || echo "no nvidia-smi"
  "$PYTHON" -m gpu_jiggle info 2>&1; } >"$out/info.txt"
note "$(grep -m1 -i 'renderer' "$out/info.txt" | sed 's/^ *//' || echo 'renderer unknown')"

# 1. The GPU tests: the benchmark's, the dispatch timing, both backends against each other.
timeout 150 "$PYTHON" -m pytest -v -x -p no:cacheprovider tests/bench tests/sim/test_dispatch_timing.py \
  tests/sim/test_cross_check.py tests/sim/test_point_cross_check.py >"$out/tests.log" 2>&1
tests=$?
if [ "$tests" = 124 ]; then
  note "tests: TIMED OUT after 150 s at $(elapsed) s ($(grep -c . "$out/tests.log") lines in tests.log)"
else
  note "tests: exit $tests ($(tail -n 1 "$out/tests.log")) at $(elapsed) s"
fi

# 2. The full benchmark: both kinds, 100k to 4M segments, chains of 8 and 32, 2 and 8 substeps,
#    v2 (point chains: a sphere and a capsule) and v1; numpy up to 1M; the Warp peer on CUDA.
#    Then point chains with 4 colliders at 4M, appended to bench.txt.
peers=()
if "$PYTHON" -c "import sys, warp; warp.config.quiet = True; warp.init(); sys.exit(not warp.is_cuda_available())" \
    >/dev/null 2>&1; then
  peers=(--peers warp --peer-device cuda:0)
fi
timeout 130 "$PYTHON" -m gpu_jiggle bench --sizes ${SIZES:-100000 1000000 4000000} --seconds 0.3 --frames 5 \
  --numpy-max-segments 1000000 --no-progress "${peers[@]}" --json "$out/bench.json" --plot "$out/bench.png" \
  >"$out/bench.txt" 2>&1
note "bench: exit $? at $(elapsed) s (bench.txt, bench.json, bench.png)"
timeout 30 "$PYTHON" -m gpu_jiggle bench --kind point --sizes ${SIZES_4:-4000000} --chain-lengths 8 --substeps 2 \
  --features v2 --colliders 4 --seconds 0.3 --frames 5 --numpy-max-segments 0 --no-progress >>"$out/bench.txt" 2>&1
note "bench, 4 colliders: exit $? at $(elapsed) s (end of bench.txt)"
timeout 40 "$PYTHON" -m gpu_jiggle bench --sizes ${SIZES_4:-4000000} --chain-lengths 8 --substeps 2 --features v2 \
  --work-group-sizes 32 64 128 256 --seconds 0.2 --frames 3 --numpy-max-segments 0 --no-progress \
  >"$out/work_groups.txt" 2>&1
note "work-group sizes: exit $? at $(elapsed) s (work_groups.txt)"

# 2b. Occupancy: the dispatch from 10k to 1M segments (1,250 to 125,000 chains of 8, one thread
#     each) at 32, 64 and 128 chains per work group: the size where the rate stops growing is
#     where the GPU is saturated, and whether a warp-sized group (32) helps the small sets.
timeout 45 "$PYTHON" -m gpu_jiggle bench --sizes ${SIZES_OCCUPANCY:-10000 30000 100000 300000 1000000} \
  --chain-lengths 8 --substeps 2 --features v2 none --work-group-sizes 32 64 128 --seconds 0.2 --frames 3 \
  --numpy-max-segments 0 --no-progress >"$out/occupancy.txt" 2>&1
note "occupancy: exit $? at $(elapsed) s (occupancy.txt)"

# 3. The grass demo's field at 1M blades, headless: solver alone and with drawing, frames per second.
timeout 60 "$PYTHON" benchmarks/bench_grass.py --blades "${BLADES:-1000000}" --frames 10 >"$out/grass.txt" 2>&1
note "grass: exit $? at $(elapsed) s (grass.txt)"

note ""
note "what the benchmark found:"
grep -m1 -E "^case" "$out/bench.txt" >>"$summary"
grep -E "^(angle|point) (1,000,000|999,9..|4,000,000|3,999,9..) segs" "$out/bench.txt" >>"$summary"
grep -E "^  (angle|point) (1,000,000|4,000,000) segs.*warp \(" "$out/bench.txt" >>"$summary"
sed -n '/^cost exponent/,/^$/p' "$out/bench.txt" >>"$summary"
grep -E "^copy shader|^renderer" "$out/bench.txt" | head -2 >>"$summary"
sed -n '/^work-group size/,/^$/p' "$out/work_groups.txt" >>"$summary"
note "occupancy (dispatch segment-substeps/s by size and chains per work group):"
sed -n '/^work-group size/,/^$/p' "$out/occupancy.txt" >>"$summary"
note "done in $(elapsed) s"
exit "$tests"
