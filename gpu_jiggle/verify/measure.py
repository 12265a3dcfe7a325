"""Measuring helpers the SPEC section 8 checks share: angle wrapping and half-cycle peaks, the
joints and lengths of chain sets, tip paths at several frame rates, the force variants of the
point checks, and whether the GPU backend can run.

Arrays: ``S`` segments, ``C`` chains, ``J`` joints (point chains: S + C; angle chains' joint
arrays have the same S + C entries, the root first in each chain). Angles in rad, lengths in
units, times in s.
"""
from __future__ import annotations

import math

import numpy as np

from ..sim.solver import Solver
from .scenarios import (FORCE_VARIANTS, MOTION_AMPLITUDE, POINT_GRAVITY, POINT_GUST, POINT_WIND, SUBSTEP, TWO_PI,
                        variant_name)

#: The frame rates the frame-rate checks compare, fps; every one is a multiple of 6, so all
#: have frames at the multiples of 1/6 s.
FRAME_RATES = (30, 60, 144)
#: The frame-rate checks' limit: tip paths agree within 3 % of the motion's amplitude.
FRAME_RATE_LIMIT = 0.03
#: The point checks run all of ``FORCE_VARIANTS`` on the GPU by default; the numpy reference
#: (about 2.5 ms a substep for the standard set, against 0.05 ms on llvmpipe) runs these, which
#: between them take every path (no force; gravity and wind together). The tests run all four
#: on both.
REFERENCE_VARIANTS = ((False, False), (True, True))
#: The solver options of the model versions (SPEC "What changed from v1"): v2's defaults, and
#: v1's target path and damping, kept for comparison.
V2 = {"target_path": "monotone", "damping_frame": "relative"}
V1 = {"target_path": "linear", "damping_frame": "world"}
#: v2 with the exact integrator of SPEC 1 instead of the semi-implicit step.
EXACT = {**V2, "integrator": "exact"}


# -- angles and peaks --------------------------------------------------------------------------
def wrap(a):
    """``a - 2π·floor((a + π)/2π)`` in float64: a value in [-π, π) (SPEC section 0)."""
    a = np.asarray(a, np.float64)
    return a - TWO_PI * np.floor((a + math.pi) / TWO_PI)


def ramp(t, t0, t1):
    """0 before t0, 1 after t1, a smooth (C¹) step between."""
    x = np.clip((np.asarray(t, np.float64) - t0) / (t1 - t0), 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def half_cycle_peaks(deviation):
    """Split a deviation trace (T,) at its sign changes; return (index (P,) int, |peak| (P,))
    of every complete half-cycle (the stretch before the first and after the last sign change
    are left out, except that the first stretch counts when it starts at its peak, as a
    released spring does).
    """
    x = np.asarray(deviation, np.float64)
    sign = np.sign(x)
    change = np.flatnonzero(sign[1:] * sign[:-1] < 0) + 1
    bounds = np.concatenate([[0], change])
    index, peak = [], []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        i = lo + int(np.argmax(np.abs(x[lo:hi])))
        if lo == 0 and i != 0:
            continue  # the first stretch rose to its peak: no full half-cycle seen
        index.append(i)
        peak.append(abs(x[i]))
    return np.asarray(index, int), np.asarray(peak)


def peak_ratios(peak_index, peak_value):
    """Per chain, from its half-cycle peaks (:func:`half_cycle_peaks`): the largest ratio of
    a peak to the one before (inf with fewer than two peaks), how many peaks, and the substep
    of the last one (0 without); and whether every chain's peaks strictly decrease.
    Returns ``(ratios, strictly, counts, last_peak_steps)``."""
    ratios, counts, last = [], [], []
    strictly = True
    for idx, pk in zip(peak_index, peak_value):
        counts.append(len(pk))
        last.append(int(idx[-1]) if len(idx) else 0)
        if len(pk) >= 2:
            ratios.append(float(np.max(pk[1:] / pk[:-1])))
            strictly &= bool(np.all(np.diff(pk) < 0))
        else:
            ratios.append(math.inf)
            strictly = False
    return ratios, strictly, counts, last


# -- chain sets --------------------------------------------------------------------------------
def chain_lengths(cs) -> np.ndarray:
    """(C,) each angle chain's total length."""
    return np.add.reduceat(cs.lengths, cs.first_segment) if cs.chain_count else np.zeros(0)


def tip_joints(cs) -> np.ndarray:
    """(S,) index of each angle segment's tip in the (S + C) joint array."""
    return np.arange(cs.segment_count) + cs.chain_of_segment + 1


def cumulative(cs, root_angle, local_angle) -> np.ndarray:
    """(S,) each segment's world target angle on the pose: Θ (C,) + Σ λ (S,) down its chain
    (unwrapped)."""
    total = np.cumsum(local_angle)
    start = (total - local_angle)[cs.first_segment]
    return total - np.repeat(start, cs.segment_counts) + np.repeat(root_angle, cs.segment_counts)


def parent_angle(cs, angles, root_angle) -> np.ndarray:
    """(S,) the angle each segment's target hangs from: its parent's φ, or the root's Θ."""
    parent = np.empty(cs.segment_count)
    parent[1:] = angles[:-1]
    parent[cs.first_segment] = root_angle
    return parent


def point_chain_lengths(cs) -> np.ndarray:
    """(C,) each point chain's length (sum of its rest lengths)."""
    return np.add.reduceat(np.asarray(cs.rest_lengths, np.float64), cs.first_segment)


def point_tip_joints(cs) -> np.ndarray:
    """(S,) each point segment's tip in the (J,) joint arrays."""
    return np.arange(cs.segment_count) + np.repeat(np.arange(cs.chain_count), cs.segment_counts) + 1


def gpu_available() -> tuple[bool, str]:
    """(True, "") when an OpenGL 4.3 context can be made, else (False, the reason)."""
    from ..gl.context import get_context

    try:
        get_context()
    except RuntimeError as exc:
        return False, str(exc)
    return True, ""


# -- frame rates -------------------------------------------------------------------------------
def tip_paths(make_solver, pose, tips, duration: float, fps_list):
    """Run the same motion at each frame rate of ``fps_list``: a solver from
    ``make_solver()`` gets ``pose(solver, t)`` at every frame time t = k/fps, then
    ``advance(1/fps)`` (``advance(0)`` for the first pose, which snaps). Returns ``(paths,
    compared)``, per fps the frame-time positions of the joints ``tips`` at every frame,
    (frames + 1, len(tips), D), and at the multiples of 1/6 s that every rate shares."""
    paths, compared = {}, {}
    for fps in fps_list:
        frames = int(round(duration * fps))
        path = None
        with make_solver() as solver:
            for k in range(frames + 1):
                pose(solver, k / fps)
                solver.advance(0.0 if k == 0 else 1.0 / fps)
                tip = solver.positions()[tips]
                if path is None:
                    path = np.empty((frames + 1, *tip.shape))
                path[k] = tip
        paths[fps] = path
        compared[fps] = path[::fps // 6]
    return paths, compared


def frame_rate_differences(compared, fps_list):
    """Tip distances between frame rates at the shared times, / ``MOTION_AMPLITUDE``:
    ``(largest over every pair, {"A vs B fps": largest}, (T,) largest against the last rate
    per shared time)``."""
    worst, pair_worst = 0.0, {}
    for i, a in enumerate(fps_list):
        for b in fps_list[i + 1:]:
            diff = float(np.linalg.norm(compared[a] - compared[b], axis=2).max()) / MOTION_AMPLITUDE
            pair_worst[f"{a} vs {b} fps"] = diff
            worst = max(worst, diff)
    difference = np.max([np.linalg.norm(compared[a] - compared[fps_list[-1]], axis=2).max(axis=1)
                         for a in fps_list[:-1]], axis=0) / MOTION_AMPLITUDE
    return worst, pair_worst, difference


# -- point chains' force variants --------------------------------------------------------------
def set_forces(solver, wind: bool, gusts: bool) -> None:
    """Turn on ``POINT_WIND`` (with ``POINT_GUST`` when ``gusts``) where ``wind``."""
    if wind:
        solver.set_wind(POINT_WIND, **(POINT_GUST if gusts else {}))


def force_vector(gravity: bool, wind: bool) -> np.ndarray:
    """(3,) the uniform acceleration g + w0 of a variant (gusts left out), units/s²."""
    return (np.asarray(POINT_GRAVITY) if gravity else np.zeros(3)) + (np.asarray(POINT_WIND) if wind else np.zeros(3))


def new_solver(chain_set, backend: str, options=None):
    """A :class:`~gpu_jiggle.Solver` of ``chain_set`` at the checks' substep, with the solver
    ``options`` given (a dict such as ``V1``; ``None``: the defaults, v2)."""
    return Solver(chain_set, backend=backend, substep=SUBSTEP, **(options or {}))


def settle(solver, seconds: float) -> None:
    """Run ``seconds`` in frames of ``max_substeps`` substeps (the pose held)."""
    step = solver.max_substeps * solver.substep
    for _ in range(int(round(seconds / step))):
        solver.advance(step)


def run_variants(run, variants, backend, reference_default=REFERENCE_VARIANTS):
    """{variant name: run(gravity, wind)} for every (gravity, wind) of ``variants``; ``None``
    means ``FORCE_VARIANTS`` on the GPU and ``reference_default`` on the reference."""
    if variants is None:
        variants = FORCE_VARIANTS if backend == "gpu" else reference_default
    return {variant_name(g, w): run(bool(g), bool(w)) for g, w in variants}
