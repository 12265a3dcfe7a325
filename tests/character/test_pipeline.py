"""The per-frame pipeline on the Fox: keyframes → IK/constraints → springs → skinning.

The Run: the skinned tail leaves its animated place and comes back once the clip holds its
last frame; lengths are kept; very stiff critically damped springs follow the animation.
The order: with a look-at on the head, the head's strands follow the constrained head.
Plus the 3D IK functions themselves, and what a renderer reads from a frame."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from gpu_jiggle.character.pose import quat
from gpu_jiggle.character.pose.ik3d import look_at, two_bone_ik_3d
from gpu_jiggle.character.pipeline import STAGES, Pipeline
from gpu_jiggle.character.rig.model import TwoBoneIKSpec
from gpu_jiggle.character.rig.reader import load_rig, rig_from_dict
from demo_support import FOX_RIG

FPS = 30


def _tail_tips(frame, tail, index):
    """(animated tip, simulated tip from the final skinned skeleton, tail length)."""
    target = frame.chain_targets[index]
    tip = frame.world_matrices[tail.nodes[-1]] @ np.append(tail.local_points[0], 1.0)
    return target[-1], tip[:3], np.linalg.norm(np.diff(target, axis=0), axis=1).sum()


def test_run_tail_swings_then_settles_with_lengths_kept(fox, rig, backend):
    tail = rig.joint_chains[0]
    index = rig.chains.index(tail)
    clip = fox.clip("Run")
    deviation, settled = [], None
    with Pipeline(fox, rig, clip, loop=False, backend=backend) as pipeline:
        for frame in pipeline.play(FPS, clip.duration + 3.0):
            animated, simulated, length = _tail_tips(frame, tail, index)
            deviation.append(np.linalg.norm(simulated - animated) / length)
            # the skinned skeleton's chain joints are where the solver put the particles
            joints = np.vstack([frame.world_matrices[tail.nodes, :3, 3], simulated])
            np.testing.assert_allclose(joints, frame.chain_positions[index], atol=1e-3 * length)
            # segment lengths: skeleton bones as animated, solver chains at their rest lengths
            bones = np.linalg.norm(np.diff(joints, axis=0), axis=1)
            animated_bones = np.linalg.norm(np.diff(frame.chain_targets[index], axis=0), axis=1)
            np.testing.assert_allclose(bones, animated_bones, rtol=1e-4)
            for chain, positions, targets in zip(rig.chains, frame.chain_positions, frame.chain_targets):
                np.testing.assert_allclose(np.linalg.norm(np.diff(positions, axis=0), axis=1),
                                           np.linalg.norm(np.diff(targets, axis=0), axis=1), rtol=1e-4,
                                           err_msg=chain.name)
                assert np.isfinite(positions).all()
            settled = deviation[-1]
    during = max(deviation[: int(clip.duration * FPS)])
    print(f"Run tail tip: up to {100 * during:.1f}% of the tail's length from the animated one; "
          f"{100 * settled:.2f}% 3 s after the clip holds its last frame")
    assert during > 0.05
    assert settled < 0.01


def test_very_stiff_critically_damped_tail_follows_the_run(fox, rig_data, backend):
    # Damping acts on world velocity (SPEC 4), so a tail moving at speed v lags by about
    # 2ζ·v/ω0: following a running tail to 1% needs a stiff spring, hence f = 400 Hz and a
    # substep of 1/3600 s (stable up to 474 Hz at ζ = 1).
    data = {"solver": {"substep": 1 / 3600, "max_substeps": 121},
            "chain": [dict(rig_data["chain"][0], frequency=400.0, damping_ratio=1.0, colliders=[],
                           gravity=[0.0, -980.0, 0.0])]}
    stiff = rig_from_dict(data, fox.skeleton)
    tail = stiff.chains[0]
    worst = 0.0
    with Pipeline(fox, stiff, "Run", backend=backend) as pipeline:
        for frame in pipeline.play(FPS, 1.5):
            animated, simulated, length = _tail_tips(frame, tail, 0)
            worst = max(worst, np.linalg.norm(simulated - animated) / length)
    print(f"stiff critically damped tail: at most {100 * worst:.2f}% of its length from the animated tip")
    assert worst < 0.01


def test_look_at_comes_before_springs(fox, rig_data, backend):
    data = copy.deepcopy(rig_data)
    data["chain"] = []
    data["strands"] = [s for s in data["strands"] if s["joint"] == "b_Head_05"]
    data["look_at"][0]["enabled"] = True
    look = rig_from_dict(data, fox.skeleton)
    spec = look.constraints[0]
    head = spec.node
    shift, near_constrained, near_keyed = 0.0, [], []
    with Pipeline(fox, look, "Run", backend=backend) as pipeline:
        assert pipeline.constraints == [spec]
        for frame in pipeline.play(FPS, 2.0):
            keyed, constrained = frame.keyframe_world_matrices[head], frame.constrained_world_matrices[head]
            aim = constrained[:3, :3] @ spec.aim_axis
            to_target = spec.target_at(frame.time) - constrained[:3, 3]
            cos = aim @ to_target / np.linalg.norm(aim) / np.linalg.norm(to_target)
            assert math.acos(min(cos, 1.0)) < 1e-6  # the head looks at the target
            for chain, targets, positions in zip(look.chains, frame.chain_targets, frame.chain_positions):
                on_constrained = chain.local_points @ constrained[:3, :3].T + constrained[:3, 3]
                on_keyed = chain.local_points @ keyed[:3, :3].T + keyed[:3, 3]
                np.testing.assert_allclose(targets, on_constrained, atol=1e-9)
                np.testing.assert_allclose(positions[0], on_constrained[0], atol=1e-6)  # pivot on the constrained head
                shift = max(shift, np.linalg.norm(on_constrained[0] - on_keyed[0]))
                near_constrained.append(np.linalg.norm(positions - on_constrained, axis=1).mean())
                near_keyed.append(np.linalg.norm(positions - on_keyed, axis=1).mean())
    assert shift > 10.0  # the look-at moves the ear tips far from where the keyframes put them
    assert np.mean(near_constrained) < 0.25 * np.mean(near_keyed)


def test_frame_holds_what_a_renderer_needs(fox, rig, backend):
    assert STAGES == ("keyframes", "constraints", "springs", "skinning")
    with Pipeline(fox, rig, "Walk", backend=backend) as pipeline:
        frames = list(pipeline.play(FPS, 0.2))
        assert pipeline.backend == backend
    frame = frames[-1]
    sk = fox.skeleton
    assert frame.world_matrices.shape == (sk.node_count, 4, 4)
    (skinning,) = frame.skinning_matrices
    assert skinning.shape == (24, 4, 4) and skinning.dtype == np.float32
    np.testing.assert_allclose(skinning, (frame.world_matrices[fox.skin.joints] @ fox.skin.inverse_bind_matrices),
                               rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(frame.world_matrices, sk.world_matrices(frame.pose), atol=1e-9)
    assert len(frame.strands) == len(rig.strand_chains) == 10
    assert all(s.shape == (c.segments + 1, 3) for s, c in zip(frame.strands, rig.strand_chains))
    assert frame.colliders.spheres.shape == (2, 4) and frame.colliders.capsules.shape == (3, 7)
    assert frame.colliders.sphere_names == ["hips", "head"]
    # springs change the chain joints' rotations only: every other node is as keyed
    keyed = pipeline.sample_keyframes(frame.time)
    others = np.setdiff1d(np.arange(sk.node_count), rig.chain_joints)
    np.testing.assert_array_equal(frame.pose.rotation[others], keyed.rotation[others])
    np.testing.assert_array_equal(frame.pose.translation, keyed.translation)
    assert not np.allclose(frame.pose.rotation[rig.chain_joints], keyed.rotation[rig.chain_joints], atol=1e-4)


def test_springs_off_gives_the_animated_pose(fox, rig):
    pipeline = Pipeline(fox, rig, "Run", springs=False)
    frame = pipeline.step(0.4, 1 / FPS)
    np.testing.assert_array_equal(frame.world_matrices, frame.keyframe_world_matrices)
    assert len(frame.strands) == 10


def test_two_bone_ik_stage_on_the_fox_leg(fox):
    sk = fox.skeleton
    names = ("b_LeftLeg01_015", "b_LeftLeg02_016", "b_LeftFoot01_017")
    root, mid, end = (sk.index(n) for n in names)
    pipeline = Pipeline(fox, None, "Walk")
    keyed = pipeline.sample_keyframes(0.3)
    world = sk.world_matrices(keyed)
    target = world[end, :3, 3] + np.array([0.0, 6.0, 5.0])
    pipeline.constraints = [TwoBoneIKSpec("leg", root, mid, end, target, np.zeros(3), 0.0,
                                          pole=world[mid, :3, 3] + np.array([0.0, 0.0, 30.0]))]
    solved = sk.world_matrices(pipeline.apply_constraints(keyed, 0.3))
    np.testing.assert_allclose(solved[end, :3, 3], target, atol=1e-6)
    for a, b in ((root, mid), (mid, end)):
        assert np.linalg.norm(solved[b, :3, 3] - solved[a, :3, 3]) == pytest.approx(
            np.linalg.norm(world[b, :3, 3] - world[a, :3, 3]), rel=1e-9)
    np.testing.assert_allclose(solved[root, :3, 3], world[root, :3, 3], atol=1e-9)


# -- the IK functions --------------------------------------------------------------------------
def test_two_bone_ik_3d_reaches_keeps_lengths_and_bends_toward_the_pole():
    rng = np.random.default_rng(3)
    for _ in range(50):
        root = rng.normal(size=3)
        mid = root + rng.normal(size=3)
        end = mid + rng.normal(size=3)
        a, b = np.linalg.norm(mid - root), np.linalg.norm(end - mid)
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        target = root + direction * rng.uniform(abs(a - b) + 1e-3, a + b - 1e-3)
        pole = root + rng.normal(size=3) * 3
        ik = two_bone_ik_3d(root, mid, end, target, pole)
        assert ik.reachable
        np.testing.assert_allclose(ik.end, target, atol=1e-9)
        assert np.linalg.norm(ik.mid - root) == pytest.approx(a, rel=1e-9)
        assert np.linalg.norm(ik.end - ik.mid) == pytest.approx(b, rel=1e-9)
        # the returned rotations move the bones where the positions say
        np.testing.assert_allclose(root + quat.rotate(ik.root_rotation, mid - root), ik.mid, atol=1e-9)
        np.testing.assert_allclose(ik.mid + quat.rotate(ik.mid_rotation, end - mid), ik.end, atol=1e-9)
        # the knee lies in the plane of root, target and pole, on the pole's side
        k = (target - root) / np.linalg.norm(target - root)
        knee = (ik.mid - root) - ((ik.mid - root) @ k) * k
        side = (pole - root) - ((pole - root) @ k) * k
        assert knee @ side > 0
        assert np.linalg.norm(np.cross(knee, side)) < 1e-6 * np.linalg.norm(knee) * np.linalg.norm(side)


def test_two_bone_ik_3d_out_of_reach_points_at_the_target():
    ik = two_bone_ik_3d([0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 10, 0])
    assert not ik.reachable
    np.testing.assert_allclose(ik.end, [0, 2, 0], atol=1e-9)
    np.testing.assert_allclose(ik.mid, [0, 1, 0], atol=1e-9)
    with pytest.raises(ValueError, match="mid: coincides with root"):
        two_bone_ik_3d([0, 0, 0], [0, 0, 0], [1, 1, 0], [0, 1, 0])
    with pytest.raises(ValueError, match=r"target\[1\] = nan"):
        two_bone_ik_3d([0, 0, 0], [1, 0, 0], [1, 1, 0], [0, math.nan, 0])


def test_look_at_limits_and_weight():
    r = quat.IDENTITY
    new = look_at([0, 0, 0], r, [0, 5, 0], aim_axis=[1, 0, 0])
    np.testing.assert_allclose(quat.rotate(new, [1, 0, 0]), [0, 1, 0], atol=1e-12)
    half = look_at([0, 0, 0], r, [0, 5, 0], aim_axis=[1, 0, 0], weight=0.5)
    np.testing.assert_allclose(quat.rotate(half, [1, 0, 0]), [math.cos(math.pi / 4), math.sin(math.pi / 4), 0],
                               atol=1e-12)
    limited = look_at([0, 0, 0], r, [0, 5, 0], aim_axis=[1, 0, 0], max_angle=math.radians(30))
    np.testing.assert_allclose(quat.rotate(limited, [1, 0, 0]), [math.cos(math.pi / 6), math.sin(math.pi / 6), 0],
                               atol=1e-12)
    np.testing.assert_array_equal(look_at([0, 0, 0], r, [0, 5, 0], weight=0.0), r)
    with pytest.raises(ValueError, match=r"weight = 1.5: expected a value in \[0, 1\]"):
        look_at([0, 0, 0], r, [0, 5, 0], weight=1.5)
    with pytest.raises(ValueError, match="aim_axis"):
        look_at([0, 0, 0], r, [0, 5, 0], aim_axis=[0, 0, 0])


def test_bad_pipeline_input(fox, rig):
    with pytest.raises(ValueError, match="no animation called 'Gallop'; the file's animations are: Survey, Walk, Run"):
        Pipeline(fox, rig, "Gallop")
    pipeline = Pipeline(fox, rig, "Run", backend="cpu")
    with pytest.raises(ValueError, match="time = nan"):
        pipeline.step(math.nan, 1 / FPS)
    with pytest.raises(ValueError, match="dt = -1.0"):
        pipeline.step(0.0, -1.0)
    with pytest.raises(ValueError, match="fps = 0.0"):
        next(pipeline.play(0.0, 1.0))


# -- live changes between steps: solvers, set_parameters, teleport -----------------------------------
def _solver_values(pipeline):
    """Every live solver's spring values, copied."""
    return [{k: np.array(getattr(s.chain_set, k)) for k in ("frequency", "damping_ratio", "particle_radius",
                                                              "max_distance", "world_influence")}
            for s in pipeline.solvers()]


def _rig_values(rig):
    return [(c.frequency.copy(), c.damping_ratio.copy(), c.particle_radius.copy(), c.max_distance.copy(),
             c.world_influence) for c in rig.chains]


def test_one_solver_runs_every_chain(fox, rig):
    pipeline = Pipeline(fox, rig, "Run", backend="cpu")
    assert pipeline.solvers() == [] and pipeline.solver is None and pipeline.solver_of("tail") is None
    pipeline.step(0.0, 1 / FPS)
    solver = pipeline.solver
    assert pipeline.solvers() == [solver]  # one solver per character, gravity per chain
    assert solver.chain_set.chain_count == len(rig.chains)
    np.testing.assert_array_equal(solver.chain_set.gravity, [c.gravity for c in rig.chains])
    assert len({tuple(g) for g in solver.chain_set.gravity}) > 1  # the tail's gravity differs from the strands'
    for name in ("tail", "mane[2]", "ear_tuft_right[1]"):
        found, index = pipeline.solver_of(name)
        assert found is solver and rig.chains[index].name == name
        np.testing.assert_array_equal(solver.chain_set.frequency[solver.chain_set.chain_slices()[index]],
                                      rig.chains[index].frequency)
    with pytest.raises(ValueError, match=r"chain_name = 'mane': no such chain in the rig; did you mean 'mane\[0\]'\?$"):
        pipeline.solver_of("mane")  # a group name is not one chain
    pipeline.solvers().clear()  # a copy: the pipeline keeps its own
    assert pipeline.solvers() == [solver]
    pipeline.reset()
    assert pipeline.solvers() == [] and pipeline.solver is None


def test_gravity_changes_live_for_one_chain(fox):
    rig = load_rig(FOX_RIG, fox.skeleton)
    with Pipeline(fox, rig, "Run", backend="cpu") as pipeline:
        pipeline.step(0.0, 1 / FPS)
        pipeline.set_parameters("tail", gravity=[0.0, -980.0, 0.0])
        np.testing.assert_array_equal(pipeline.solver.chain_set.gravity[0], [0.0, -980.0, 0.0])
        np.testing.assert_array_equal(pipeline.rig.chains[0].gravity, [0.0, -980.0, 0.0])
        assert rig.chains[0].gravity[1] != -980.0  # the Rig it was made from is as authored
        mane = rig.chain_indices("mane", groups=True)
        np.testing.assert_array_equal(pipeline.solver.chain_set.gravity[mane], [[0.0, -300.0, 0.0]] * len(mane))
        with pytest.raises(ValueError, match=r"tail: gravity: expected shape \(3,\)"):
            pipeline.set_parameters("tail", gravity=[0.0, -9.8])


def test_set_parameters_live_on_a_chain_and_a_strand_group(fox, backend):
    rig = load_rig(FOX_RIG, fox.skeleton)
    with Pipeline(fox, rig, "Run", backend=backend) as pipeline:
        for frame in pipeline.play(FPS, 0.3):
            pass
        tail_solver, tail = pipeline.solver_of("tail")
        time = tail_solver.sim_time
        pipeline.set_parameters("tail", frequency=[3.5, 2.5, 2.0], damping_ratio=0.25, air_drag=[0.5, 1.0, 2.0])
        pipeline.set_parameters("mane", damping_ratio=[0.2, 0.3, 0.4], world_influence=0.5)
        assert pipeline.solver_of("tail") == (tail_solver, tail), "a change must not rebuild the solver"
        segments = tail_solver.chain_set.chain_slices()[tail]
        np.testing.assert_array_equal(tail_solver.chain_set.frequency[segments], [3.5, 2.5, 2.0])
        np.testing.assert_array_equal(tail_solver.chain_set.air_drag[segments], [0.5, 1.0, 2.0])
        np.testing.assert_array_equal(pipeline.rig.chains[0].air_drag, [0.5, 1.0, 2.0])
        np.testing.assert_array_equal(tail_solver.chain_set.damping_ratio[segments], [0.25] * 3)
        np.testing.assert_array_equal(pipeline.rig.chains[0].frequency, [3.5, 2.5, 2.0])
        assert not np.array_equal(rig.chains[0].frequency, [3.5, 2.5, 2.0])  # the Rig given is as authored
        manes = [c for c in pipeline.rig.chains if c.group == "mane"]
        assert len(manes) == 6
        for chain in manes:
            np.testing.assert_array_equal(chain.damping_ratio, [0.2, 0.3, 0.4])
            assert chain.world_influence == 0.5
            solver, index = pipeline.solver_of(chain.name)
            np.testing.assert_array_equal(solver.chain_set.damping_ratio[solver.chain_set.chain_slices()[index]],
                                          [0.2, 0.3, 0.4])
            assert solver.chain_set.world_influence[index] == 0.5
        ears = [c for c in pipeline.rig.chains if c.group.startswith("ear_tuft")]
        assert all(np.all(c.damping_ratio == 0.3) and c.world_influence == 1.0 for c in ears)  # others untouched
        frame = pipeline.step(frame.time + 1 / FPS, 1 / FPS)
        assert tail_solver.sim_time > time, "the motion goes on from where it was"
        assert all(np.isfinite(p).all() for p in frame.chain_positions)
    # the pipeline's rig keeps the change: a pipeline made from it starts with it, one made
    # from the Rig as authored does not
    for made_from, tail_frequency in ((pipeline.rig, [3.5, 2.5, 2.0]), (rig, list(rig.chains[0].frequency))):
        with Pipeline(fox, made_from, "Run", backend=backend) as again:
            again.step(0.0, 1 / FPS)
            solver, index = again.solver_of("tail")
            np.testing.assert_array_equal(solver.chain_set.frequency[solver.chain_set.chain_slices()[index]],
                                          tail_frequency)


@pytest.mark.parametrize("name, changes, error, message", [
    ("tail", dict(frequency=[3.0, 2.5, 80.0]), ValueError,
     r"tail: frequency\[2\] = 80.0 Hz with damping_ratio\[2\] = 0.2 is unstable .*largest stable frequency"),
    ("tail", dict(air_drag=[1.0, -0.5, 1.0]), ValueError, r"tail: air_drag\[1\] = -0.5: expected a finite value >= 0"),
    ("tail", dict(damping_ratio=0.2, frequency=-1.0), ValueError,
     r"tail: frequency\[0\] = -1.0: expected a finite value > 0"),
    ("mane", dict(frequency=4.0, world_influence=1.5), ValueError,
     r"mane\[0\]: world_influence = 1.5: expected a value in \[0, 1\]"),
    ("mane", dict(particle_radius=[0.1, 0.2]), ValueError, r"mane\[0\]: particle_radius: expected a scalar"),
    ("tail", dict(damping_ratio="stiff"), TypeError, r"tail: damping_ratio: expected real numbers"),
    ("tail", dict(frequency=3.0, stiffness=2.0), TypeError,
     r"unknown parameter 'stiffness'; expected one of frequency, damping_ratio"),
    ("tial", dict(frequency=3.0), ValueError, r"chain_name = 'tial': no such chain or strand group in the rig; "
                                               r"did you mean 'tail'\?$"),
    ("fur", dict(frequency=3.0), ValueError, r"chain_name = 'fur': no such chain or strand group in the rig; "
                                              r"it has: tail, ear_tuft_left, ear_tuft_left\[0\]"),
    ("tail", dict(frequncy=3.0), TypeError, r"unknown parameter 'frequncy'; did you mean 'frequency'\?$"),
])
def test_refused_set_parameters_changes_nothing(fox, name, changes, error, message):
    rig = load_rig(FOX_RIG, fox.skeleton)
    control = Pipeline(fox, load_rig(FOX_RIG, fox.skeleton), "Run", backend="cpu")
    pipeline = Pipeline(fox, rig, "Run", backend="cpu")
    for k in range(6):
        control.step(k / FPS, 1 / FPS)
        pipeline.step(k / FPS, 1 / FPS)
    rig_before, solvers_before = _rig_values(rig), _solver_values(pipeline)
    with pytest.raises(error, match=message):
        pipeline.set_parameters(name, **changes)
    for a, b in zip(_rig_values(rig), rig_before):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    for a, b in zip(_solver_values(pipeline), solvers_before):
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    for k in range(6, 12):  # and the motion is the one it would have been
        expected, got = control.step(k / FPS, 1 / FPS), pipeline.step(k / FPS, 1 / FPS)
        for p, q in zip(got.chain_positions, expected.chain_positions):
            np.testing.assert_array_equal(p, q)
    control.release()
    pipeline.release()


def test_set_parameters_before_the_first_step_goes_to_the_pipelines_rig(fox):
    rig = load_rig(FOX_RIG, fox.skeleton)
    pipeline = Pipeline(fox, rig, "Run", backend="cpu")
    pipeline.set_parameters("ear_tuft_left[1]", frequency=9.0)
    chains = {c.name: c for c in pipeline.rig.chains}
    assert np.all(rig.chains[[c.name for c in rig.chains].index("ear_tuft_left[1]")].frequency == 8.0)  # as authored
    np.testing.assert_array_equal(chains["ear_tuft_left[1]"].frequency, [9.0] * 3)
    np.testing.assert_array_equal(chains["ear_tuft_left[0]"].frequency, [8.0] * 3)  # its neighbour in the group
    pipeline.step(0.0, 1 / FPS)
    solver, index = pipeline.solver_of("ear_tuft_left[1]")
    np.testing.assert_array_equal(solver.chain_set.frequency[solver.chain_set.chain_slices()[index]], [9.0] * 3)
    pipeline.release()


def test_teleport_carries_or_snaps_the_springs_and_snaps_the_colliders(fox, rig, backend, monkeypatch):
    from gpu_jiggle.character.travel import TravellingPipeline

    jump = np.array([3000.0, 0.0, -2000.0])
    count = 1  # one solver per character
    runs = {}
    for how in ("still", "carried", "snapped", "yanked"):
        with TravellingPipeline(fox, rig, "Run", backend=backend) as pipeline:
            pipeline.teleport(keep_shape=True)  # before the first step: nothing to carry, nothing happens
            frames, calls = [], []
            for k in range(30):
                if k == 20 and how != "still":
                    for solver in pipeline.solvers():  # what the pipeline tells its solvers
                        monkeypatch.setattr(solver, "teleport", lambda *a, _f=solver.teleport, **kw: (
                            calls.append(("teleport", kw)), _f(*a, **kw))[1])
                        monkeypatch.setattr(solver, "set_colliders", lambda *a, _f=solver.set_colliders, **kw: (
                            calls.append(("colliders", kw["snap"])), _f(*a, **kw))[1])
                    if how == "yanked":
                        pipeline.offset = pipeline.offset + jump  # moved without saying so
                    else:
                        pipeline.teleport(jump, keep_shape=how == "carried")
                frames.append(pipeline.step(k / FPS, 1 / FPS))
                if k == 21 and how != "still":
                    break
        runs[how] = frames
        if how == "carried":
            assert calls[:2 * count] == [("teleport", {"keep_shape": True}), ("colliders", True)] * count
            assert calls[2 * count:] == [("colliders", False)] * count, "only the step after the teleport snaps"
        if how == "snapped":
            assert calls[:2 * count] == [("teleport", {"keep_shape": False}), ("colliders", True)] * count
        if how == "yanked":
            assert calls == [("colliders", False)] * 2 * count

    def off_course(how):  # the chains against the still run's moved by the jump, after the jump
        return max(np.abs(p - q - jump).max() for f, g in zip(runs[how][20:], runs["still"][20:22])
                   for p, q in zip(f.chain_positions, g.chain_positions))

    def off_pose(frame):
        return max(np.abs(p - t).max() for p, t in zip(frame.chain_positions, frame.chain_targets))

    print(f"after a jump of {np.linalg.norm(jump):.0f}: carried {off_course('carried'):.2f}, yanked "
          f"{off_course('yanked'):.1f} off the still run; snapped {off_pose(runs['snapped'][20]):.2f}, still "
          f"{off_pose(runs['still'][20]):.2f} off the pose")
    assert off_course("carried") < 0.1 * off_course("yanked")
    assert off_pose(runs["snapped"][20]) < 0.2 * off_pose(runs["still"][20])
    with pytest.raises(TypeError, match="keep_shape: expected a bool, got str"):
        Pipeline(fox, rig, "Run").teleport(keep_shape="yes")


def test_a_frame_time_in_milliseconds_warns_at_the_callers_line(fox, rig):
    """Pipeline.step(t, 33) after frames of 1/30 s: the solver's FrameTimeWarning names this
    file (the first caller outside the package), once."""
    from gpu_jiggle.sim.clock import FrameTimeWarning

    pipeline = Pipeline(fox, rig, "Run", backend="cpu")
    with pipeline:
        pipeline.step(0.0, 1 / FPS)
        with pytest.warns(FrameTimeWarning, match=r"^advance\(33\): a frame time of 33 s after frames of at most "
                                                  r"0\.0333 s") as hint:
            pipeline.step(1 / FPS, 33.0)
        assert len(hint) == 1 and hint[0].filename == __file__
