"""How an angle chain's response depends on how finely it is cut, and :func:`~gpu_jiggle.sim.
spring.recut`, which keeps it (docs/SPEC.md section 9, "Cutting a chain finer").

One scenario: a 0.48-unit cape hanging under gravity from a root that hops 0.1 units sideways
and 0.05 up in 0.4 s (a swing of about 0.2 rad, where the chain's response is near linear:
``recut`` is derived for small bends), cut into 2, 6 or 12 equal segments; the tip swing is the largest turn of
the root-to-tip direction away from where it was just before the hop (rad).
"""
from __future__ import annotations

import math

import numpy as np

from ..sim.chains import AngleChainSet
from ..sim.spring import recut
from .measure import V1, new_solver
from .result import CheckResult

CAPE_LENGTH = 0.48
CUTS = (2, 6, 12)
#: The cut the cape is tuned with, and its tuning (Hz, ζ).
TUNED_CUT, TUNED_FREQUENCY, TUNED_DAMPING = 6, 3.0, 0.6
HOP_START, HOP_DURATION, HOP_SIDE, HOP_UP = 0.3, 0.4, 0.1, 0.05
FPS, DURATION = 60, 2.0
#: The recut swings agree with the tuned cut's within this fraction.
CUT_LIMIT = 0.25


def _root(t):
    u = min(max((t - HOP_START) / HOP_DURATION, 0.0), 1.0)
    return [HOP_SIDE * u * u * (3.0 - 2.0 * u), HOP_UP * 4.0 * u * (1.0 - u)]


def tip_swing(backend, segments, frequency, damping_ratio, options=None) -> float:
    """The cape cut into ``segments`` with (f, ζ) per segment: its tip swing, rad."""
    cs = AngleChainSet([segments], CAPE_LENGTH / segments, frequency, damping_ratio, gravity=(0.0, -9.81))
    heading = []
    with new_solver(cs, backend, options) as solver:
        for k in range(int(DURATION * FPS) + 1):
            solver.set_pose([_root(k / FPS)], [-math.pi / 2], np.zeros(segments))
            solver.advance(0.0 if k == 0 else 1.0 / FPS)
            tip = solver.positions()
            heading.append(math.atan2(tip[-1, 1] - tip[0, 1], tip[-1, 0] - tip[0, 0]))
    heading = np.unwrap(heading)
    before = int(HOP_START * FPS) - 1
    return float(np.max(np.abs(heading[before:] - heading[before])))


def cut_response(backend: str) -> CheckResult:
    """The tip swings of the three cuts with the tuned (f, ζ) on every segment, and with the
    values :func:`recut` gives for each cut; passes when the recut swings are within
    ``CUT_LIMIT`` of the tuned cut's (the figure: the worst relative difference)."""
    same, kept, v1 = {}, {}, {}
    for n in CUTS:
        same[n] = tip_swing(backend, n, TUNED_FREQUENCY, TUNED_DAMPING)
        v1[n] = tip_swing(backend, n, TUNED_FREQUENCY, TUNED_DAMPING, V1)
        kept[n] = tip_swing(backend, n, *recut(TUNED_FREQUENCY, TUNED_DAMPING, TUNED_CUT, n))
    worst = max(abs(kept[n] / kept[TUNED_CUT] - 1.0) for n in CUTS)
    details = {}
    cuts = "/".join(map(str, CUTS))
    for label, swings in (("recut", kept), ("same f, ζ (not held)", same), ("same f, ζ, v1 (not held)", v1)):
        details[f"{label}: tip swing at {cuts} segments, rad"] = " / ".join(f"{swings[n]:.3f}" for n in CUTS)
    for n in CUTS:
        f, z = recut(TUNED_FREQUENCY, TUNED_DAMPING, TUNED_CUT, n)
        details[f"recut to {n} segments: f, Hz / ζ (not held)"] = f"{f:.2f} / {z:.3f}"
    return CheckResult("cut_response", "cut 2/6/12", worst, CUT_LIMIT, worst <= CUT_LIMIT,
                       f"worst |swing / swing at {TUNED_CUT} segments - 1| with recut values",
                       details=details, bound="<=")
