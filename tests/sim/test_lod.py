"""Level of detail per chain: every frame, every second frame, or frozen on the targets."""
from __future__ import annotations

import re

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, InputError, PointChainSet, Solver
from gpu_jiggle.verify.scenarios import RigidBodyStrands, body_path, moving_colliders, random_point_chain_set


def strands_solver(backend, levels):
    cs = PointChainSet([8, 8, 8], 2.0, 0.5, particle_radius=0.01, gravity=(0, -9.81, 0))
    local = np.concatenate([[[0.3 * i, -0.06 * k, 0.0] for k in range(9)] for i in range(3)])
    s = Solver(cs, backend=backend)
    s.set_lod(levels)
    return s, local


def sway(t):
    return np.array([0.4 * np.sin(2.0 * t), 0.1 * np.sin(3.0 * t), 0.2 * t])


def test_half_rate_ends_a_motion_near_full_rate(backend):
    """At half rate a chain integrates with twice the substep over both frames' time: it
    moves like a chain whose solver has the substep 2h, and like the full-rate chain up to
    the first-order error of the larger step (a few percent of the motion here, f = 2 Hz)."""
    full, local = strands_solver(backend, "full")
    half, _ = strands_solver(backend, ["half", "half", "half"])
    coarse = Solver(full.chain_set, backend=backend, substep=2 / 120)
    substeps, worst_coarse = [], 0.0
    for f in range(122):  # 2 s at 60 fps; the last frame is one the half-rate chains run on
        t = f / 60
        for s in (full, half, coarse):
            s.set_pose(joint_positions=local + sway(t))
            s.set_colliders(spheres=[[*(sway(t) + [0.3, -0.3, 0.0]), 0.1]])
        substeps.append(half.advance(1 / 60 if f else 0.0))
        full.advance(1 / 60 if f else 0.0)
        coarse.advance(1 / 60 if f else 0.0)
        if f % 2:
            worst_coarse = max(worst_coarse, np.abs(half.positions() - coarse.positions()).max())
    assert half.sim_time == full.sim_time  # the clock of the solver is not slowed
    assert substeps[-1] == 2 and substeps[-2] == 2  # the solver's own substeps go on every frame
    motion = np.abs(sway(121 / 60) - sway(0.0)).max()
    difference = np.abs(half.positions() - full.positions()).max()
    print(f"half rate after 2 s: {difference / motion:.2%} of the motion from full rate, "
          f"{worst_coarse:.2g} at most from a 2h solver")
    # 2.5e-3: the swept contact (SPEC 9) of the half-rate chain's substep, which starts a frame
    # before this frame's collider path, takes the collider's start from that path extended
    # backwards; the 2h solver had the previous frame's own path (6.9e-4 without the sweep)
    assert worst_coarse < 2.5e-3
    assert difference < 0.1 * motion


def test_frozen_chain_sits_on_its_targets(backend):
    s, local = strands_solver(backend, [0, 2, 0])
    for f in range(30):
        joints = local + sway(f / 60)
        s.set_pose(joint_positions=joints)
        s.advance(1 / 60)
    p = s.positions()
    np.testing.assert_allclose(p[9:18], joints[9:18], rtol=0, atol=1e-6)
    assert not s.velocities()[8:16].any()
    assert np.abs(p[:9] - joints[:9]).max() > 1e-3  # the others swing


def test_switching_levels_keeps_the_motion_going(backend):
    s, local = strands_solver(backend, "full")
    for f in range(90):
        s.set_lod(["full", "half", "frozen"][f // 30 % 3])
        s.set_pose(joint_positions=local + sway(f / 60))
        s.advance(1 / 60)
        assert np.isfinite(s.positions()).all()
    lengths = np.linalg.norm(np.diff(s.positions()[:9], axis=0), axis=1)
    np.testing.assert_allclose(lengths, s.rest_lengths[:8], rtol=1e-5)


def test_angle_chains_have_levels_too(backend):
    cs = AngleChainSet([5, 5, 5], 0.2, 2.0, 0.5, inertia=1.0, gravity=(0, -9.8))
    solvers = [Solver(cs, backend=backend) for _ in range(2)]
    solvers[1].set_lod(["half", "frozen", "full"])
    for f in range(121):
        t = f / 60
        for s in solvers:
            s.set_pose([[np.sin(2 * t), 0], [2, np.sin(2 * t)], [4, 0]], [0.3 * np.sin(t)] * 3, np.zeros(15))
            s.advance(1 / 60 if f else 0.0)
    a, b = (s.positions() for s in solvers)
    assert np.abs(a[:6] - b[:6]).max() < 0.05  # half rate near full rate
    np.testing.assert_array_equal(a[12:], b[12:])  # the full-rate chain is untouched by the others
    heading, k = 0.3 * np.sin(2.0), np.arange(6)
    frozen = np.stack([2 + 0.2 * k * np.cos(heading), np.sin(4.0) + 0.2 * k * np.sin(heading)], axis=1)
    np.testing.assert_allclose(b[6:12], frozen, atol=1e-5)  # the frozen chain sits on its targets


def test_half_rate_refuses_frequencies_unstable_at_twice_the_substep():
    cs = PointChainSet([2, 2], [2.0, 2.0, 20.0, 20.0], 0.5)
    s = Solver(cs, backend="cpu")
    with pytest.raises(ValueError, match=re.escape("frequency[2] = 20.0 Hz") + ".*at level of detail 'half'"):
        s.set_lod(["full", "half"])
    s.set_lod(["half", "full"])
    with pytest.raises(ValueError, match="at level of detail 'half'"):
        s.set_parameters(frequency=20.0)
    with pytest.raises(InputError, match=re.escape("levels[1] = 'slow'")) as refused:
        s.set_lod(["full", "slow"])
    assert (refused.value.argument, refused.value.index, refused.value.value) == ("levels", 1, "slow")
    assert refused.value.indices == (1,)
    with pytest.raises(InputError, match=re.escape("levels[0] = 'hlaf'")):  # names beside numbers, each as given
        s.set_lod(["hlaf", 0])
    with pytest.raises(TypeError, match=re.escape("levels[1] = True: expected a level name or an integer 0-2")):
        s.set_lod(["full", True])
    with pytest.raises(InputError, match=re.escape("levels[1] = 7")):
        s.set_lod(["full", 7])
    with pytest.raises(InputError, match=re.escape("levels = 'hafl': expected one of 'full', 'half', 'frozen' "
                                                   "(did you mean 'half'?)")) as refused:
        s.set_lod("hafl")
    assert refused.value.index is None
    with pytest.raises(ValueError, match=re.escape("levels[0] = 3")):
        s.set_lod([3, 0])
    np.testing.assert_array_equal(s.lod, [1, 0])  # nothing refused changed the levels
    s.set_lod(["frozen", 0])
    np.testing.assert_array_equal(s.lod, [2, 0])


def test_mixed_levels_agree_across_backends(gl):
    rng = np.random.default_rng(31)
    cs = random_point_chain_set(rng, chains=60, max_segments=12)
    strands = RigidBodyStrands(rng, cs)
    levels = rng.integers(0, 3, cs.chain_count)
    solvers = [Solver(cs, backend=b) for b in ("cpu", "gpu")]
    t = 0.0
    for f in range(120):
        t += 1 / 60
        position, yaw, pitch = body_path(t)
        for s in solvers:
            s.set_lod(levels)
            s.set_pose(joint_positions=strands.pose(position, yaw, pitch))
            s.set_colliders(**moving_colliders(t, position))
            s.set_wind((0.5, 0.0, 0.0), 1.0, (2.0, 0.0, 0.0), 0.5)
            s.advance(1 / 60)
    np.testing.assert_allclose(solvers[1].positions(), solvers[0].positions(), rtol=0, atol=2e-3)


def walking_solvers(backend, kind, count=2):
    """Solvers of one hanging chain (4 segments, 2 Hz, ζ 0.4, gravity) on a body that walks
    from its first frame, and the pose of the body at time t (sways when ``sway``)."""
    if kind == "point":
        cs = PointChainSet([4], 2.0, 0.4, gravity=(0, -9.81, 0))
    else:
        cs = AngleChainSet([4], 0.1, 2.0, 0.4, gravity=(0, -9.81))
    solvers = [Solver(cs, backend=backend) for _ in range(count)]
    for s in solvers:
        s.teleport(moving=True)

    def pose(s, t, sway=0.0):
        x = 1.5 * t + sway * np.sin(5.0 * t)
        if kind == "point":
            s.set_pose(joint_positions=np.array([[x, -0.1 * k, sway * np.sin(3.0 * t)] for k in range(5)]))
        else:
            s.set_pose([[x, 0.0]], [-np.pi / 2], np.zeros(4))
    return solvers, pose


def segment_angles_deg(a, b):
    da, db = (np.diff(p, axis=0) / np.linalg.norm(np.diff(p, axis=0), axis=1, keepdims=True) for p in (a, b))
    return np.degrees(np.arccos(np.clip((da * db).sum(axis=1), -1.0, 1.0))).max()


@pytest.mark.parametrize("kind", ["point", "angle"])
def test_a_chain_back_from_frozen_moves_with_its_body(backend, kind):
    """Frozen for 0.5 s on a body walking at 1.5 units/s, then full again: the chain starts
    moving with its body (as after teleport(moving=True)) instead of being dragged from rest
    (which swung it 42° (point) and 22° (angle) from the chain that never froze)."""
    (steady, switching), pose = walking_solvers(backend, kind)
    worst = 0.0
    for f in range(int(2.0 * 60) + 1):
        switching.set_lod("frozen" if 60 <= f < 90 else "full")
        for s in (steady, switching):
            pose(s, f / 60)
            s.advance(1 / 60 if f else 0.0)
        if f >= 90:
            worst = max(worst, segment_angles_deg(steady.positions(), switching.positions()))
    assert worst < 0.05


@pytest.mark.parametrize("kind", ["point", "angle"])
@pytest.mark.parametrize("leaving", [False, True])
def test_the_half_rate_starts_and_ends_on_either_frame_alike(backend, kind, leaving):
    """A switch into (or out of) "half" asked for before a frame that runs the half rate
    takes effect a frame later, so it is the switch asked for one frame later, exactly: on a
    swaying body the two chains agree to the bit. Asked for on the other frames it is at once."""
    (early, late), pose = walking_solvers(backend, kind)
    before, after = ("half", "full") if leaving else ("full", "half")
    for s in (early, late):
        s.set_lod(before)
    for f in range(80):
        if f == 41:  # the clock's 42nd frame runs the half rate (with the 41st's time)
            early.set_lod(after)
            np.testing.assert_array_equal(early.frame_levels(), [1 if leaving else 0])
        if f == 42:
            late.set_lod(after)
            np.testing.assert_array_equal(late.frame_levels(), [0 if leaving else 1])
        for s in (early, late):
            pose(s, f / 60, sway=0.2)
            s.advance(1 / 60 if f else 0.0)
        np.testing.assert_array_equal(early.positions(), late.positions())
    assert early.lod.tolist() == late.lod.tolist() == [0 if leaving else 1]


def test_a_switch_held_for_a_frame_survives_save_and_load():
    """The levels the last frame ran are part of a saved state: a solver loaded between a
    switch out of "half" and the frame that holds it back goes on bit for bit."""
    (original,), pose = walking_solvers("cpu", "point", count=1)
    original.set_lod("half")
    for f in range(41):
        pose(original, f / 60, sway=0.2)
        original.advance(1 / 60 if f else 0.0)
    original.set_lod("full")  # asked for before a frame that runs the half rate: held a frame
    np.testing.assert_array_equal(original.frame_levels(), [1])
    loaded = Solver.load_state(original.save_state(), backend="cpu")
    np.testing.assert_array_equal(loaded.frame_levels(), original.frame_levels())
    for f in range(41, 50):
        for s in (original, loaded):
            pose(s, f / 60, sway=0.2)
            s.advance(1 / 60)
        np.testing.assert_array_equal(loaded.positions(), original.positions())


def frame_times_of(rate, seconds):
    """Frame times (s): 1/rate each, or for "uneven" drawn in [0.6, 1.4] / 60 s (seeded)."""
    if rate == "uneven":
        return (1.0 + 0.4 * np.random.default_rng(7).uniform(-1.0, 1.0, int(seconds * 60))) / 60.0
    return np.full(int(round(seconds * rate)), 1.0 / rate)


def walk_through_levels(backend, kind, rate, switch_seconds=(0.3, 0.6, 0.9), seconds=1.95, save_at=None):
    """Two solvers on a body walking at 1.5 units/s; the second goes full → half → frozen →
    full at ``switch_seconds``. Returns (the frame times, the switch frames, each frame's
    largest segment angle between the two chains, the switching chain's joint positions per
    frame); with ``save_at`` (a frame) the switching solver is saved after it and a loaded
    copy goes on in its place."""
    (steady, switching), pose = walking_solvers(backend, kind)
    dts = frame_times_of(rate, seconds)
    times = np.concatenate([[0.0], np.cumsum(dts)])
    switches = [int(np.searchsorted(times, s)) for s in switch_seconds]
    angles, positions = [], []
    for f in range(len(times)):
        if f in switches:
            switching.set_lod(("half", "frozen", "full")[switches.index(f)])
        for s in (steady, switching):
            pose(s, times[f])
            s.advance(dts[f - 1] if f else 0.0)
        if f == save_at:
            switching = Solver.load_state(switching.save_state(), backend=backend)
        angles.append(segment_angles_deg(steady.positions(), switching.positions()))
        positions.append(switching.positions().astype(np.float64))
    return times, switches, np.array(angles), np.array(positions)


@pytest.mark.parametrize("kind", ["point", "angle"])
@pytest.mark.parametrize("rate", [75, "uneven"])
def test_switches_at_frame_times_off_the_substeps_are_not_seen(backend, kind, rate):
    """At frame times that are not multiples of two substeps the full and half clocks, and a
    frozen chain's snaps, leave different remainders: each chain's paths resume where its own
    last substep ended (path_lag). On a steady walk through full → half → frozen → full the
    first frame after each switch moves no more than the largest frame before it, and 1 s
    after the return to full rate the chain is where one that never switched is (it was 8.7°
    (point) and 2.4° (angle) off at 75 fps, 18.9° and 5.6° at uneven frame times)."""
    times, switches, angles, positions = walk_through_levels(backend, kind, rate)
    motion = np.linalg.norm(np.diff(positions, axis=0), axis=2).max(axis=1)
    for k in switches:
        assert motion[k - 1] <= 1.001 * motion[:k - 1].max()
    settled = angles[int(np.searchsorted(times, times[switches[-1]] + 1.0)):]
    assert settled.size and settled.max() < 0.05


def test_a_chain_saved_while_its_path_lags_its_clock_goes_on_bit_for_bit(backend):
    """The path lag a switch leaves is part of the saved state: a solver saved while frozen at
    75 fps (its paths on the last pose, the full clock's a remainder behind) and loaded goes on
    through the return to full rate exactly as the one that was not saved."""
    kept = walk_through_levels(backend, "point", 75)[3]
    frozen_frame = int(np.searchsorted(np.arange(200) / 75, 0.7))
    loaded = walk_through_levels(backend, "point", 75, save_at=frozen_frame)[3]
    np.testing.assert_array_equal(loaded, kept)


@pytest.mark.parametrize("kind", ["point", "angle"])
def test_a_moving_teleport_between_substeps_starts_the_chain_with_its_body(kind):
    """teleport(moving=True) on a frame whose clock has a remainder (75 fps): the path's speed
    is taken over the chain's own time since the snap, so a body walking steadily through a
    10 unit jump leaves its chain hanging (it swung 79° (point) and 28° (angle) when the speed
    was taken over the clock's span, remainder included)."""
    (solver,), pose = walking_solvers("cpu", kind, count=1)
    worst = 0.0
    for f in range(150):
        pose(solver, f / 75 + (10.0 / 1.5 if f >= 38 else 0.0))
        solver.advance(1 / 75 if f else 0.0)
        if f == 37:
            solver.teleport(moving=True)
        d = np.diff(solver.positions(), axis=0)
        worst = max(worst, np.degrees(np.arccos(np.clip(-d[:, 1] / np.linalg.norm(d, axis=1), -1, 1))).max())
    assert worst < 0.05


def test_a_saved_state_with_a_negative_path_lag_is_refused_naming_it():
    """A chain's path_lag is a time in seconds (>= 0): a blob with another is refused, naming
    the chain and the value, and the solver is left as it was."""
    from gpu_jiggle.sim import layouts, state

    (solver,), pose = walking_solvers("cpu", "point", count=1)
    for f in range(3):
        pose(solver, f / 75)
        solver.advance(1 / 75 if f else 0.0)
    arrays = state.unpack(solver.save_state())
    records = arrays["record.chain_state"].copy()
    records.view(layouts.POINT_CHAIN_STATE)["path_lag"][0] = -0.004
    before = solver.save_state()
    with pytest.raises(ValueError, match=r"state chain_state\.path_lag\[0\] = -0\.004"):
        solver.restore(state.pack({**arrays, "record.chain_state": records}))
    assert solver.save_state() == before
