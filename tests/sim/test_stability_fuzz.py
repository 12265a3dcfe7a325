"""Every parameter set the solver accepts runs (SPEC section 1, "Stability"): fuzzed sets of
springs, damping, air drag, lengths, gravity, wind and inertia, each value pushed to just
inside what the solver accepts (a refusal's named limit, a hair inside it), give finite output
for 20 s simulated, on both kinds and both integrators, under poses that stay within ±10
lengths of the chain and move at most 100 lengths/s. The fuzz runs on the numpy reference
(derandomised, so it cannot flake); a few fixed worst cases run on both backends."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_jiggle import AngleChainSet, PointChainSet, Solver
from gpu_jiggle.sim.spring import UnstableSpringError

SECONDS = 20.0
FPS = 15
#: The fuzz's substep: 1/30 s, two a frame, so that 20 s runs in a few seconds (the bound is the
#: substep's, so any substep tests it); the worst cases run at the default 1/120 s.
FUZZ_SUBSTEP = 1.0 / 30.0
SEGMENTS = 2
INTEGRATORS = ("semi-implicit", "exact")
#: The most the root acceleration on the path rebuilt between frames at 15 fps exceeds the
#: shaking's own, x = X·(1 - cos ωt) at 0.2-1.5 Hz (measured 1.55: the monotone path's start
#: velocity is limited at the turning points); the shaking is scaled by it so that the root's
#: acceleration reaches up to, and not past, the declared bound.
PATH_OVERSHOOT = 1.6

def _from_worst(worst, best, log=True):
    """A value drawn between ``worst`` (the simplest draw, 0, gives it) and ``best``."""
    if log:
        return st.floats(0.0, 1.0).map(lambda u: 10 ** (np.log10(worst) + u * (np.log10(best) - np.log10(worst))))
    return st.floats(0.0, 1.0).map(lambda u: worst + u * (best - worst))


@st.composite
def chain_values(draw):
    """One chain's values over wide ranges, the simplest draw the hardest (each value is then
    pushed inside the bound by :func:`_accepted`)."""
    return {"frequency": draw(_from_worst(300.0, 0.1)), "damping_ratio": draw(st.sampled_from([0.0, 0.01, 0.3, 1.0, 5.0])),
            "air_drag": draw(_from_worst(3000.0, 0.1)) * draw(st.sampled_from([1.0, 0.0])),
            "length": draw(_from_worst(1e-7, 3.0)), "gravity": draw(_from_worst(1e4, 0.1)),
            "gravity_angle": draw(_from_worst(0.0, np.pi, log=False)), "inertia": draw(_from_worst(2.0, 0.0, log=False)),
            "amplitude": draw(_from_worst(10.0, 0.0, log=False)), "speed": draw(_from_worst(100.0, 0.0, log=False)),
            "local_angle": draw(_from_worst(1.0, -1.0, log=False))}


def _accepted(kind, values, integrator, wind, substep, root_acceleration=0.0):
    """``values`` moved just inside what a one-chain solver accepts (angle chains: with the
    declared ``root_acceleration``): each refusal's named limit, a hair inside (f and c_air
    times 0.999, L times 1.001); None where a refusal names no limit that runs."""
    v = dict(values)
    for _ in range(4):
        try:
            solver = _solver(kind, [v], integrator, wind, "cpu", substep)
            if root_acceleration:
                solver.set_parameters(max_root_acceleration=root_acceleration)
            return v
        except UnstableSpringError as exc:
            if exc.argument == "lengths" and 0 < exc.limit < 1e3:
                v["length"] = exc.limit * 1.001
            elif exc.argument in ("frequency", "air_drag") and exc.limit > 0:
                v[exc.argument] = exc.limit * 0.999
            else:
                return None
        except ValueError:  # e.g. a length beyond what the solver takes at all
            return None
    return None


def _chain_set(kind, chains):
    n = len(chains)
    per = {k: np.array([c[k] for c in chains]) for k in chains[0]}
    down = np.stack([np.sin(per["gravity_angle"]), -np.cos(per["gravity_angle"])], 1) * per["gravity"][:, None]
    common = dict(frequency=per["frequency"], damping_ratio=per["damping_ratio"], air_drag=per["air_drag"])
    if kind == "angle":
        return AngleChainSet([SEGMENTS] * n, per["length"], inertia=per["inertia"], gravity=down, **common)
    return PointChainSet([SEGMENTS] * n, rest_lengths=per["length"], gravity=np.insert(down, 2, 0.0, axis=1),
                         **common)


def _solver(kind, chains, integrator, wind, backend, substep=1.0 / 120.0):
    solver = Solver(_chain_set(kind, chains), backend=backend, integrator=integrator, substep=substep, max_substeps=8)
    dim = 2 if kind == "angle" else 3
    solver.set_wind(np.resize(wind[:dim], dim), gust_amplitude=wind[3], gust_wave_vector=np.resize(wind[4:], dim),
                    gust_frequency=1.0)
    return solver


def _run(kind, chains, integrator, wind, backend, substep, seconds=SECONDS):
    """Runs the chains for ``seconds`` under their motion: the root swings ``amplitude``
    chain lengths (≤ 10) at ``speed`` chain lengths/s at most (≤ 100); returns every frame's
    positions, relative to the roots, in chain lengths."""
    solver = _solver(kind, chains, integrator, wind, backend, substep)
    n = len(chains)
    chain_length = np.array([c["length"] for c in chains]) * SEGMENTS
    amplitude = np.array([c["amplitude"] for c in chains]) * chain_length
    rate = np.array([c["speed"] for c in chains]) * chain_length / np.maximum(amplitude, 1e-300)
    local = np.repeat([c["local_angle"] for c in chains], SEGMENTS)
    worst = 0.0
    for frame in range(int(seconds * FPS)):
        t = frame / FPS
        x = amplitude * np.sin(np.minimum(rate, 1e6) * t)
        if kind == "angle":
            roots = np.stack([x, 0.5 * x], 1)
            solver.set_pose(roots, np.full(n, -np.pi / 2), local)
        else:
            step = np.arange(SEGMENTS + 1)[None, :, None] * np.array([0.0, -1.0, 0.0]) * chain_length[:, None, None] / SEGMENTS
            roots = np.stack([x, 0.5 * x, 0 * x], 1)
            solver.set_pose((roots[:, None] + step).reshape(-1, 3))
        solver.advance(1.0 / FPS)
        out = solver.positions()
        assert np.all(np.isfinite(out)), f"non-finite output at {t:.2f} s"
        pivots = np.repeat(roots, SEGMENTS + 1, axis=0)
        worst = max(worst, float(np.max(np.abs(out - pivots) / np.repeat(chain_length, SEGMENTS + 1)[:, None])))
    return worst


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("kind", ["angle", "point"])
@settings(derandomize=True, max_examples=3, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(chains=st.lists(chain_values(), min_size=12, max_size=12),
       wind=st.tuples(*[st.floats(-20.0, 20.0)] * 3, st.floats(0.0, 20.0), *[st.floats(-2.0, 2.0)] * 3))
def test_every_accepted_set_gives_finite_output(kind, integrator, chains, wind):
    wind = np.array(wind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the numpy backend's "no GPU" notice
        accepted = [v for v in (_accepted(kind, c, integrator, wind, FUZZ_SUBSTEP) for c in chains) if v is not None]
        if not accepted:
            return
        worst = _run(kind, accepted, integrator, wind, "cpu", FUZZ_SUBSTEP)
    if kind == "point":
        assert worst < 1.0 + 1e-3  # lengths held: no joint further than its chain's length from the pivot


#: Values just inside the bound that a fuzz found or the field reported (f Hz, ζ, c_air 1/s, L, |g|).
WORST_CASES = [
    (32.5, 0.0, 527.0, 2e-5, 16.0),     # refused: air drag named, then a length
    (0.206, 4.6, 588.0, 0.18, 6.4e3),   # refused: air drag
    (2.0, 0.3, 241.0, 0.1, 9.81),       # c_air·h > 2
    (2.0, 0.3, 0.0, 1e-7, 9.81),        # a segment far too short for the substep
    (2.0, 0.0, 0.0, 1e-3, 9.81),        # undamped: the exact step's gravity grows
]


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("kind", ["angle", "point"])
def test_the_worst_cases_just_inside_the_bound_run_on_both_backends(backend, kind, integrator):
    chains = []
    for f, zeta, drag, length, gravity in WORST_CASES:
        values = {"frequency": f, "damping_ratio": zeta, "air_drag": drag, "length": length, "gravity": gravity,
                  "gravity_angle": 0.3, "inertia": 1.0, "amplitude": 10.0, "speed": 100.0, "local_angle": 0.5}
        accepted = _accepted(kind, values, integrator, np.zeros(7), 1.0 / 120.0)
        if accepted is not None:
            chains.append(accepted)
    assert len(chains) >= 3  # most are brought inside the bound by the limit the refusal names
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run(kind, chains, integrator, np.zeros(7), backend, 1.0 / 120.0, seconds=5.0 if backend == "cpu" else 2.0)


def test_a_refusal_names_a_limit_that_runs_and_one_past_it_that_does_not():
    """The limits the refusals name are the bounds: a hair inside is accepted, a hair outside
    refused, for each argument the check names."""
    for kind in ("angle", "point"):
        base = {"frequency": 2.0, "damping_ratio": 0.3, "air_drag": 300.0, "length": 0.1, "gravity": 9.81,
                "gravity_angle": 0.0, "inertia": 1.0, "amplitude": 0.0, "speed": 0.0, "local_angle": 0.0}
        with pytest.raises(UnstableSpringError) as refused:
            _solver(kind, [base], "semi-implicit", np.zeros(7), "cpu")
        assert refused.value.argument == "air_drag" and "the largest stable air drag" in str(refused.value)
        limit = refused.value.limit
        _solver(kind, [dict(base, air_drag=limit * (1 - 1e-9))], "semi-implicit", np.zeros(7), "cpu")
        with pytest.raises(UnstableSpringError):
            _solver(kind, [dict(base, air_drag=limit * (1 + 1e-9))], "semi-implicit", np.zeros(7), "cpu")
    for integrator in INTEGRATORS:
        short = {"frequency": 2.0, "damping_ratio": 0.3, "air_drag": 0.0, "length": 1e-6, "gravity": 9.81,
                 "gravity_angle": 0.0, "inertia": 1.0, "amplitude": 0.0, "speed": 0.0, "local_angle": 0.0}
        with pytest.raises(UnstableSpringError, match=r"lengths\[0\] = 1e-06 is too short") as refused:
            _solver("angle", [short], integrator, np.zeros(7), "cpu")
        shortest = refused.value.limit
        assert 1e-6 < shortest < 0.1
        _solver("angle", [dict(short, length=shortest * (1 + 1e-9))], integrator, np.zeros(7), "cpu")
        with pytest.raises(UnstableSpringError):
            _solver("angle", [dict(short, length=shortest * (1 - 1e-9))], integrator, np.zeros(7), "cpu")


@st.composite
def shaken_chain_values(draw):
    """An angle chain's values (:func:`chain_values`) with a declared root acceleration a_max
    (0.1 to 1e4 length/s², or none) and how fast its root is shaken (0.2 to 1.5 Hz)."""
    values = draw(chain_values())
    values.update(max_root_acceleration=draw(_from_worst(1e4, 0.1)) * draw(st.sampled_from([1.0, 0.0])),
                  shake=draw(_from_worst(1.5, 0.2)))
    return values


def _run_shaken(chains, integrator, wind, substep):
    """Runs the angle chains for SECONDS with each root shaken at up to its declared root
    acceleration (x = X·(1 - cos ωt), y = x/2, scaled by PATH_OVERSHOOT; X at most 10 chain
    lengths); returns the RootAccelerationWarnings said."""
    n = len(chains)
    cs = _chain_set("angle", chains)
    cs = cs.replace(max_root_acceleration=[c["max_root_acceleration"] for c in chains])
    solver = Solver(cs, backend="cpu", integrator=integrator, substep=substep, max_substeps=8)
    solver.set_wind(wind[:2], gust_amplitude=wind[3], gust_wave_vector=wind[4:6], gust_frequency=1.0)
    omega = 2.0 * np.pi * np.array([c["shake"] for c in chains])
    reach = 10.0 * SEGMENTS * np.array([c["length"] for c in chains])
    peak = np.array([c["max_root_acceleration"] for c in chains]) / (PATH_OVERSHOOT * np.hypot(1.0, 0.5))
    amplitude = np.minimum(peak / omega ** 2, reach)
    local = np.repeat([c["local_angle"] for c in chains], SEGMENTS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for frame in range(int(SECONDS * FPS)):
            x = amplitude * (1.0 - np.cos(omega * frame / FPS))
            solver.set_pose(np.stack([x, 0.5 * x], 1), np.full(n, -np.pi / 2), local)
            solver.advance(1.0 / FPS)
            assert np.all(np.isfinite(solver.positions())), f"non-finite output at {frame / FPS:.2f} s"
    return [str(w.message) for w in caught if "root accelerates" in str(w.message)]


@pytest.mark.parametrize("integrator", INTEGRATORS)
@settings(derandomize=True, max_examples=3, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(chains=st.lists(shaken_chain_values(), min_size=12, max_size=12),
       wind=st.tuples(*[st.floats(-20.0, 20.0)] * 3, st.floats(0.0, 20.0), *[st.floats(-2.0, 2.0)] * 3))
def test_every_set_accepted_under_its_declared_root_acceleration_runs_shaken_up_to_it(integrator, chains, wind):
    """Angle chains accepted with a declared max_root_acceleration (segments pushed to just the
    shortest length that runs under it) run finite when their root is shaken that hard, and
    the solver, which follows the root's path as the kernel does, says nothing: the shaking
    stays within what each chain was accepted for."""
    wind = np.array(wind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        accepted = []
        for c in chains:
            v = _accepted("angle", {k: c[k] for k in c if k not in ("max_root_acceleration", "shake")}, integrator,
                          wind, FUZZ_SUBSTEP, root_acceleration=c["max_root_acceleration"])
            if v is not None:
                accepted.append(dict(v, max_root_acceleration=c["max_root_acceleration"], shake=c["shake"]))
    if accepted:
        assert _run_shaken(accepted, integrator, wind, FUZZ_SUBSTEP) == []
