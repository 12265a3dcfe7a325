"""The root's acceleration in the stability check of angle chains (SPEC section 1, "Stability of
the whole step"): a declared ``max_root_acceleration`` refuses segments too short for it, naming
the largest root acceleration and the shortest length that run; and a frame whose root
accelerates past what a chain stays stable under warns, once, naming the chain."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, InputError, Solver
from gpu_jiggle.sim.backends.reference import angle_chains as reference_angle
from gpu_jiggle.sim.root_motion import RootAccelerationWarning
from gpu_jiggle.sim.spring import UnstableSpringError

H = 1.0 / 120.0
GRAVITY = 9.81
#: A hanging chain with a 1 cm segment between two of 10 cm (8 Hz, ζ 0.5).
LENGTHS = [0.1, 0.01, 0.1]
F, ZETA = 8.0, 0.5


def tiny_chain(max_root_acceleration=0.0, inertia=1.0):
    return AngleChainSet([3], LENGTHS, F, ZETA, inertia=inertia, gravity=(0.0, -GRAVITY),
                         max_root_acceleration=max_root_acceleration)


def largest_root_acceleration(length, inertia=1.0):
    """The semi-implicit step's bound h²(ω0² + K) + 4ζω0h < 4 solved for the root's share of
    K = (|g| + μ·a)/L (SPEC 1), written out here on its own."""
    x = 2.0 * math.pi * F * H
    stiffness = (4.0 - x * x - 4.0 * ZETA * x) / (H * H)
    return (stiffness * length - GRAVITY) / inertia


def test_a_declared_root_acceleration_refuses_a_segment_too_short_for_it_naming_what_runs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Solver(tiny_chain(30.0), backend="cpu")  # the 1 cm segment runs under 30 length/s²
        with pytest.raises(UnstableSpringError, match=r"lengths\[1\] = 0.01 is too short") as refused:
            Solver(tiny_chain(1000.0, inertia=1.5), backend="cpu")
    error = refused.value
    assert error.argument == "lengths" and error.index == 1
    assert "max_root_acceleration = 1000" in str(error) and "inertia 1.5" in str(error)
    assert error.largest_root_acceleration == pytest.approx(largest_root_acceleration(0.01, 1.5), rel=1e-9)
    assert f"the largest it runs under is {error.largest_root_acceleration:.4g}" in str(error)
    shortest = error.limit  # the shortest the 1 cm segment may be under 1000
    assert shortest == pytest.approx((GRAVITY + 1.5 * 1000.0) / (largest_root_acceleration(1.0) + GRAVITY), rel=1e-9)
    largest = error.largest_root_acceleration
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Solver(tiny_chain(largest * (1 - 1e-9), inertia=1.5), backend="cpu")
        with pytest.raises(UnstableSpringError):
            Solver(tiny_chain(largest * (1 + 1e-9), inertia=1.5), backend="cpu")
        Solver(AngleChainSet([3], [0.1, shortest * (1 + 1e-9), 0.1], F, ZETA, inertia=1.5, gravity=(0, -GRAVITY),
                             max_root_acceleration=1000.0), backend="cpu")


def test_set_parameters_checks_a_new_root_acceleration_and_a_refusal_changes_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = Solver(tiny_chain(), backend="cpu")
    before = solver.chain_set
    with pytest.raises(UnstableSpringError, match="max_root_acceleration = 1000"):
        solver.set_parameters(max_root_acceleration=1000.0)
    assert solver.chain_set is before
    solver.set_lod("half")
    with pytest.raises(UnstableSpringError, match="at level of detail 'half'"):  # the substep 2h
        solver.set_parameters(max_root_acceleration=200.0)
    solver.set_lod("full")
    solver.set_parameters(max_root_acceleration=200.0)
    assert solver.chain_set.max_root_acceleration.tolist() == [200.0]
    with pytest.raises(InputError, match=r"max_root_acceleration\[1\] = -1.0"):
        AngleChainSet([1, 1], 0.1, 2.0, 0.5, max_root_acceleration=[0.0, -1.0])
    with pytest.raises(InputError, match=r"max_root_acceleration"):
        AngleChainSet([1], 0.1, 2.0, 0.5, max_root_acceleration=np.nan)


def _shake(solver, roots, fps, seconds, start=0.0, jump=None):
    """Advances ``solver`` at ``fps``: chain c's root at ``roots(t)[c]``; returns the
    RootAccelerationWarnings' messages."""
    n = solver.chain_set.chain_count
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(int(round(seconds * fps))):
            t = start + k / fps
            solver.set_pose(roots(t), np.full(n, -math.pi / 2), np.zeros(solver.chain_set.segment_count))
            if jump is not None:
                jump(solver, k)
            solver.advance(1.0 / fps)
    return [str(w.message) for w in caught if w.category is RootAccelerationWarning]


def shaken(peak):
    """Two chains, the second's root shaken sideways at 2 Hz with ``peak`` length/s²."""
    omega = 2.0 * math.pi * 2.0
    return lambda t: np.array([[0.0, 0.0], [peak / omega ** 2 * (1.0 - math.cos(omega * t)), 0.0]])


def test_a_frame_past_a_chains_bound_warns_once_naming_the_chain_until_it_is_quiet_again(backend):
    cs = AngleChainSet([3, 3], [0.1, 0.1, 0.1] + LENGTHS, F, ZETA, gravity=(0.0, -GRAVITY))
    solver = Solver(cs, backend=backend)
    bound = largest_root_acceleration(0.01)
    assert _shake(solver, shaken(0.5 * bound), 60, 1.0) == []
    said = _shake(solver, shaken(3.0 * bound), 60, 1.0, start=1.0)  # past it twice a period: said once
    assert len(said) == 1 and said[0].startswith("chain 1: its root accelerates at ")
    assert f"more than the {bound:.4g} length/s²" in said[0]
    assert _shake(solver, lambda t: shaken(0.0)(t) + [0.0, 0.0], 60, 1.5, start=2.0) == []  # quiet 1.5 s
    assert len(_shake(solver, shaken(3.0 * bound), 60, 0.5, start=3.5)) == 1


def test_a_teleport_is_not_judged_but_an_unflagged_jump_is(backend):
    solver = Solver(tiny_chain(), backend=backend)
    still = lambda t: np.zeros((1, 2))  # noqa: E731
    _shake(solver, still, 60, 0.2)
    far = lambda t: np.array([[10.0, 0.0]])  # noqa: E731
    flagged = _shake(solver, far, 60, 0.5, jump=lambda s, k: s.teleport() if k == 0 else None)
    assert flagged == []
    back = _shake(solver, still, 60, 0.5)
    assert len(back) == 1 and back[0].startswith("chain 0:")


def _estimates(solver):
    """(C,) float32: the largest |A| of each chain's substeps on the last frame that the
    backend's watch_root stage gave, NaN where the frame was not judged."""
    watched = solver._backend.read_field("chain_output", "root_acceleration")
    return np.where(watched < 0, np.nan, watched)


def _varied_frames(solver, fps, rng, frames=40, seen=None):
    """Runs ``frames`` frames of 4 swaying roots at about ``fps`` (frame times 0.7-1.3 of 1/fps,
    so some are not whole substeps): chain 2 jumps unflagged now and then, a keep_shape jump
    on frame 12, chain 3 teleports moving on frame 15, the levels switch on frame 20. After
    each frame ``seen(k)`` is called."""
    for k in range(frames):
        t = k / fps
        roots = np.stack([0.3 * np.sin(3 * t + np.arange(4)), 0.2 * np.cos(5 * t) + np.arange(4)], 1)
        roots[2] += 1.0 if k % 13 == 5 else 0.0
        solver.set_pose(roots, np.zeros(4), np.zeros(8))
        if k == 12:
            solver.teleport([2], keep_shape=True)
        if k == 15:
            solver.teleport([3], moving=True)
        if k == 20:
            solver.set_lod(["half", "full", "frozen", "full"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RootAccelerationWarning)
            solver.advance(1.0 / fps * (1.0 + 0.3 * rng.uniform(-1.0, 1.0)))
        if seen is not None:
            seen(k)


def _new_solver(backend, path="monotone"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = Solver(AngleChainSet([2] * 4, 0.1, 3.0, 0.5, gravity=(0, -GRAVITY)), backend=backend,
                        target_path=path)
    solver.set_lod(["full", "half", "full", "full"])
    return solver


def test_the_watch_judges_the_root_acceleration_the_kernel_integrates_with(monkeypatch):
    """The estimate is the largest |A| of the kernel's substeps (SPEC 3, step 1) on every frame
    it judges: each target path, frame times that are and are not whole substeps, capped
    frames, levels of detail switching; and no judgement where the chain jumps (a snap, a
    keep_shape, frozen), starts moving or runs no substeps."""
    kernel = {}
    interpolate = reference_angle.ReferenceAngleBackend.interpolate_root

    def spy(self, s, w, span, inv_path_step, chains, first_moving):
        acceleration = interpolate(self, s, w, span, inv_path_step, chains, first_moving)
        for c, a in zip(self.order.chain_order[chains], np.linalg.norm(acceleration.astype(np.float64), axis=1)):
            kernel[int(c)] = max(kernel.get(int(c), 0.0), float(a))
        return acceleration

    monkeypatch.setattr(reference_angle.ReferenceAngleBackend, "interpolate_root", spy)
    rng = np.random.default_rng(3)
    judged, unjudged = 0, set()
    for path in ("monotone", "hermite", "linear"):
        for fps in (60.0, 144.0, 24.0, 3.0):
            solver = _new_solver("cpu", path)

            def seen(k):
                nonlocal judged
                estimate = _estimates(solver)
                for c in range(4):
                    if np.isnan(estimate[c]):
                        unjudged.add((fps, k, c))
                    else:
                        assert estimate[c] == pytest.approx(kernel[c], rel=1e-5, abs=1e-5), (path, fps, k, c)
                        judged += 1
                kernel.clear()

            kernel.clear()
            _varied_frames(solver, fps, rng, seen=seen)
    assert judged > 300
    # the keep_shape jump, the moving teleport's snap and its first moving frame, the frozen
    # chain; at 144 fps the half-rate chain's frames without substeps
    assert {(60.0, 12, 2), (60.0, 15, 3), (60.0, 16, 3), (60.0, 25, 2)} <= unjudged
    assert any(fps == 144.0 and c == 1 and k < 20 for fps, k, c in unjudged)
    # at 60, 24 and 3 fps every frame runs substeps: chains 0 and 3 go unjudged only on the
    # first pose (a snap) before frame 12
    early = {(fps, k, c) for fps, k, c in unjudged if fps != 144.0 and k < 12 and c in (0, 3)}
    assert early == {(fps, 0, c) for fps in (60.0, 24.0, 3.0) for c in (0, 3)}


def test_both_backends_judge_alike():
    """The GPU path's watch_root gives what the numpy path's does, frame by frame."""
    seen = {}
    for backend in ("cpu", "gpu"):
        solver = _new_solver(backend)
        frames = seen.setdefault(backend, [])
        _varied_frames(solver, 50.0, np.random.default_rng(5), seen=lambda k: frames.append(_estimates(solver)))
    cpu, gpu = np.array(seen["cpu"]), np.array(seen["gpu"])
    np.testing.assert_array_equal(np.isnan(cpu), np.isnan(gpu))
    np.testing.assert_allclose(gpu, cpu, rtol=1e-5, atol=1e-5)
    assert np.isnan(cpu).any() and (~np.isnan(cpu)).sum() > 100


def test_a_restored_solver_remembers_what_it_has_said():
    cs = AngleChainSet([3, 3], [0.1, 0.1, 0.1] + LENGTHS, F, ZETA, gravity=(0.0, -GRAVITY))
    bound = largest_root_acceleration(0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = Solver(cs, backend="cpu")
        fresh = Solver(cs, backend="cpu")
    assert len(_shake(solver, shaken(3.0 * bound), 60, 0.5)) == 1
    blob = solver.save_state()
    restored = Solver.load_state(blob, backend="cpu")
    fresh.restore(blob)
    for s in (solver, restored, fresh):  # still past it: nothing more is said
        assert _shake(s, shaken(3.0 * bound), 60, 0.5, start=0.5) == []


def test_a_state_saved_when_the_watch_followed_the_path_on_the_host_restores_what_it_had_said():
    """A blob from before the kernel judged the root holds the root's path as the host followed
    it (start, rate, velocity, path_lag) beside what the watch said: the path is the kernel's
    state's, so only what was said is taken; a blob from before the watch was kept has said
    nothing."""
    from gpu_jiggle.sim import state

    cs = AngleChainSet([3, 3], [0.1, 0.1, 0.1] + LENGTHS, F, ZETA, gravity=(0.0, -GRAVITY))
    bound = largest_root_acceleration(0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = Solver(cs, backend="cpu")
    assert len(_shake(solver, shaken(3.0 * bound), 60, 0.5)) == 1
    arrays = state.unpack(solver.save_state())
    older = {**arrays, **{"input.root_watch." + k: np.zeros((2, 2) if k != "path_lag" else 2, dtype)
                          for k, dtype in (("start", np.float64), ("rate", np.float64), ("velocity", np.float64),
                                           ("path_lag", np.float32))}}
    oldest = {k: v for k, v in arrays.items() if not k.startswith("input.root_watch.")}
    restored = Solver.load_state(state.pack(older), backend="cpu")
    np.testing.assert_array_equal(restored._root_watch.over, solver._root_watch.over)
    assert _shake(restored, shaken(3.0 * bound), 60, 0.5, start=0.5) == []  # still past it: nothing more
    fresh = Solver.load_state(state.pack(oldest), backend="cpu")
    assert len(_shake(fresh, shaken(3.0 * bound), 60, 0.5, start=0.5)) == 1


def test_the_warning_points_at_the_programs_call():
    cs = AngleChainSet([3, 3], [0.1, 0.1, 0.1] + LENGTHS, F, ZETA, gravity=(0.0, -GRAVITY))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = Solver(cs, backend="cpu")
    roots = shaken(3.0 * largest_root_acceleration(0.01))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(30):
            solver.set_pose(roots(k / 60), np.full(2, -math.pi / 2), np.zeros(6))
            solver.advance(1.0 / 60)
    said = [w for w in caught if w.category is RootAccelerationWarning]
    assert len(said) == 1 and said[0].filename == __file__


def test_a_restored_solver_judges_the_next_frames_as_the_one_that_ran_on(backend):
    """At 50 fps (frames that are not whole substeps) with a chain back from frozen and one
    switched to half rate, a restored solver's kernel judges the next frames as the one that
    ran on: the root's path and each chain's path time are in the state it saved."""
    cs = AngleChainSet([2] * 3, 0.1, 3.0, 0.5, gravity=(0.0, -GRAVITY))

    def roots(t):
        return np.stack([0.3 * np.sin(3 * t + np.arange(3)), 0.2 * np.cos(5 * t) + np.arange(3)], 1)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = Solver(cs, backend=backend)
        for k in range(12):
            solver.set_pose(roots(k / 50), np.zeros(3), np.zeros(6))
            if k == 3:
                solver.set_lod(["full", "frozen", "full"])
            if k == 7:
                solver.set_lod(["full", "full", "half"])
            solver.advance(1.0 / 50)
        restored = Solver.load_state(solver.save_state(), backend=backend)
    seen = {}
    for s in (solver, restored):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k in range(12, 20):
                s.set_pose(roots(k / 50), np.zeros(3), np.zeros(6))
                s.advance(1.0 / 50)
                seen.setdefault(id(s), []).append(_estimates(s))
    kept, again = np.array(seen[id(solver)]), np.array(seen[id(restored)])
    assert (~np.isnan(kept)).sum() > 15
    np.testing.assert_array_equal(again, kept)


def test_a_warning_said_again_shows_under_pythons_default_filter():
    """The second warning, after the chain was quiet for a second, is another text (the
    simulated time is in it), so Python's default filter, which shows a text once per place,
    shows it too."""
    cs = AngleChainSet([3, 3], [0.1, 0.1, 0.1] + LENGTHS, F, ZETA, gravity=(0.0, -GRAVITY))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = Solver(cs, backend="cpu")
    bound = largest_root_acceleration(0.01)
    n = solver.chain_set.chain_count
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for start, seconds, peak in ((0.0, 1.0, 3.0 * bound), (1.0, 1.5, 0.0), (2.5, 1.0, 3.0 * bound)):
            for k in range(int(round(seconds * 60))):
                solver.set_pose(shaken(peak)(start + k / 60), np.full(n, -math.pi / 2), np.zeros(cs.segment_count))
                solver.advance(1.0 / 60)
    said = [str(w.message) for w in caught if w.category is RootAccelerationWarning]
    assert len(said) == 2 and said[0] != said[1] and " s of simulated time" in said[1]
