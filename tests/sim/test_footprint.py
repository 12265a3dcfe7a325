"""Chain sets too large for the machine are refused before anything is allocated, from an
estimate of their bytes (gpu_jiggle.sim.footprint), naming the memory and the GPU's storage block."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, PointChainSet
from gpu_jiggle.sim import footprint

MIB = 2 ** 20


def make(kind, counts):
    return PointChainSet(counts, 2.0, 0.5) if kind == "point" else AngleChainSet(counts, 0.1, 2.0, 0.5)


@pytest.mark.parametrize("kind", ["point", "angle"])
def test_a_set_beyond_a_tiny_memory_is_refused_and_one_within_it_is_made(kind, monkeypatch):
    monkeypatch.setattr(footprint, "machine_memory", lambda: 1 * MIB)
    per_chain, per_segment = footprint.HOST_BYTES[kind]
    fits = MIB // (per_chain + 3 * per_segment)  # chains of 3 segments
    assert make(kind, [3] * fits).chain_count == fits
    with pytest.raises(ValueError) as refused:
        make(kind, [3] * (fits + 1))
    message = str(refused.value)
    for words in (f"{fits + 1} {kind} chains of {3 * (fits + 1)} segments", "machine's memory (0.000977 GiB)",
                  "GL_MAX_SHADER_STORAGE_BLOCK_SIZE", "Split the chains"):
        assert words in message


def test_an_enormous_set_is_refused_before_its_counts_are_read():
    """10^12 chains (a range: no array of counts exists) are refused on any machine at once:
    the estimate is checked from the sequence's length before it is copied."""
    with pytest.raises(ValueError, match=re.escape("segment_counts: 1000000000000 point chains of 1000000000000 "
                                                   "segments need about")):
        PointChainSet(range(1, 10 ** 12 + 1), 2.0, 0.5)


def test_the_estimate_is_checked_against_the_bytes_it_names():
    need = footprint.host_bytes("point", 10, 30)
    footprint.check_fits("point", 10, 30, memory=need)
    with pytest.raises(ValueError, match="more than this machine's memory"):
        footprint.check_fits("point", 10, 30, memory=need - 1)


PEAK = """
import sys, tracemalloc
import numpy as np
from gpu_jiggle import AngleChainSet, PointChainSet, Solver
kind, chains, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
counts = np.full(chains, per)
tracemalloc.start()  # numpy's arrays are traced too: the peak of what this run allocates
cs = PointChainSet(counts, 2.0, 0.5) if kind == "point" else AngleChainSet(counts, 0.1, 2.0, 0.5)
s = Solver(cs, backend="cpu")
if kind == "point":
    s.set_pose(joint_positions=np.arange(cs.joint_count)[:, None] * np.array([0.0, -0.1, 0.0]))
else:
    s.set_pose(np.zeros((chains, 2)), np.zeros(chains), np.zeros(cs.segment_count))
s.advance(1 / 60)
s.positions()
print(tracemalloc.get_traced_memory()[1])
"""


@pytest.mark.parametrize("kind, chains, per", [("point", 100000, 1), ("point", 10000, 10), ("angle", 100000, 1),
                                               ("angle", 10000, 10)])
def test_the_estimate_covers_the_real_peak(kind, chains, per):
    """The peak of what a chain set and a numpy-reference solver allocate through one frame
    (tracemalloc, in a fresh process) is within the estimate, and the estimate not 4 times it (sets that fit
    are not refused for a careless estimate)."""
    out = subprocess.run([sys.executable, "-c", PEAK, kind, str(chains), str(per)], capture_output=True, text=True,
                         check=True, timeout=120)
    peak = int(out.stdout.split()[-1])
    estimate = footprint.host_bytes(kind, chains, chains * per)
    print(f"{kind} {chains} x {per}: peak {peak / MIB:.1f} MiB, estimate {estimate / MIB:.1f} MiB")
    assert peak <= estimate < 4 * peak
