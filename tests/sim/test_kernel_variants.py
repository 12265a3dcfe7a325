"""The GPU backend compiles its kernel with a feature left out where a frame cannot use it (no
colliders of a shape, no inside collider, no plane whose normal turns, no exact integrator, no
wind, no angle limit, no max distance), and the point kernel with its colliders of each shape
in a fixed number of slots. Each variant runs the same operations as the kernel with every feature compiled in, but the shader compiler may
fuse multiply-adds differently in a different program (GLSL allows it), so the two agree to
float32 rounding, not always bit for bit: measured on llvmpipe, 0 to 13 values of 804 differ
after one frame (by at most 3e-8), and the chains' rounding grows to 7e-6 units after 40
frames. The bound below is 1e-4 units on chains 0.4-0.6 long, a hundredth of what the
GPU/numpy cross-check allows."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, PointChainSet, Solver
from gpu_jiggle.gl import glsl
from gpu_jiggle.sim.backends import gpu, gpu_angle, gpu_point
from gpu_jiggle.sim.backends import variants

POINT_SWITCHES = ("INSIDE_COLLIDERS", "EXACT_STEPS", "WIND", "MAX_DISTANCE")
POINT_SLOTS = ("SPHERE_SLOTS", "CAPSULE_SLOTS", "PLANE_SLOTS")
#: The point kernel with everything in: each shape's loop to the frame's count (-1).
FULL_POINT = {**{name: 1 for name in POINT_SWITCHES}, **{name: -1 for name in POINT_SLOTS}, "ANGLE_LIMITS": 7,
              "TURNING_PLANES": 1}
ANGLE_SWITCHES = ("EXACT_STEPS", "WIND")


@pytest.mark.parametrize("shader, names", [("sim/point_chains.comp", POINT_SWITCHES),
                                           ("sim/angle_chains.comp", ANGLE_SWITCHES)])
def test_every_variant_compiles(gl, shader, names):
    for values in itertools.product((0, 1), repeat=len(names)):
        glsl.compute_shader(gl, shader, dict(zip(names, values))).release()


@pytest.mark.parametrize("shape", POINT_SLOTS)
def test_every_bucket_of_collider_slots_compiles(gl, shape):
    for slots in (*variants.COLLIDER_SLOT_BUCKETS, -1):
        glsl.compute_shader(gl, "sim/point_chains.comp", {**FULL_POINT, shape: slots}).release()


def test_every_set_of_angle_limit_kinds_compiles(gl):
    for kinds in range(8):
        glsl.compute_shader(gl, "sim/point_chains.comp", {**FULL_POINT, "ANGLE_LIMITS": kinds}).release()


def test_collider_counts_round_up_to_their_bucket():
    assert [variants.collider_slots(n) for n in range(11)] == [0, 1, 2, 4, 4, 8, 8, 8, 8, -1, -1]


@pytest.mark.parametrize("fused", [1, 2, 4, 8])
@pytest.mark.parametrize("one_batch", [0, 1])
def test_every_batch_of_fused_substeps_compiles(gl, fused, one_batch):
    glsl.compute_shader(gl, "sim/angle_chains.comp", {"FUSED_SUBSTEPS": fused, "ONE_BATCH": one_batch}).release()


def all_features(monkeypatch, backend_class, switches):
    """Make ``backend_class`` compile every feature in, whatever the frame."""
    monkeypatch.setattr(backend_class, "switches", lambda self, header: dict(switches))


def run_point(integrator, limits, colliders, inside, wind, frames=40, **options):
    """``colliders``: False, True (a sphere, a capsule and a plane), "many" (3 spheres, 5
    capsules, 9 planes: slots of 4 and 8 with some empty, and a loop over the planes) or
    "turning" (a sphere and a plane that tilts, then stays, then tilts back);
    ``options``: the Solver's target_path and damping_frame."""
    chain_set = PointChainSet([5, 4, 6], 3.0, 0.3, rest_lengths=0.1, particle_radius=0.01, gravity=(0, -9.8, 0),
                              air_drag=0.2, angle_limit=0.5 if limits else np.inf,
                              max_distance=0.35 if limits else np.inf)
    solver = Solver(chain_set, backend="gpu", integrator=integrator, **options)
    if wind:
        solver.set_wind((0.4, 0.0, 0.1), 1.5, (3.0, 0.0, 1.0), 0.8)
    chains = [(0.0, 5), (0.3, 4), (0.6, 6)]
    for frame in range(frames):
        sway = 0.15 * np.sin(0.3 * frame)
        joints = np.array([[x + sway, -0.1 * k, 0.05 * np.cos(0.2 * frame)] for x, n in chains for k in range(n + 1)])
        if colliders == "many":
            solver.set_colliders(spheres=[[0.3, -0.3, 0.0, 0.12], [0.0, -0.45, 0.05, 0.08], [0.6, -0.2, 0.1, 0.06]],
                                 capsules=[[-0.2, -0.2 - 0.05 * j, -0.1, 0.9, -0.25, 0.1, 0.03] for j in range(5)],
                                 planes=[[0, 1, 0, -0.55 - 0.01 * j] for j in range(9)])
        elif colliders == "turning":
            tilt = 0.4 * np.sin(0.15 * min(frame, 12) - 0.15 * max(frame - 24, 0))
            solver.set_colliders(spheres=[[0.3, -0.3, 0.0, 0.12]], planes=[[np.sin(tilt), np.cos(tilt), 0, -0.45]])
        elif colliders:
            solver.set_colliders(spheres=[[0.3, -0.3, 0.0, 0.12 if not inside else 0.5]], sphere_inside=[inside],
                                 capsules=[[-0.2, -0.2, -0.1, 0.9, -0.25, 0.1, 0.05]], planes=[[0, 1, 0, -0.55]])
        solver.set_pose(joints)
        solver.advance(1 / 60 if frame % 3 else 1 / 30)
    out = solver.state()
    return np.concatenate([out["segment_state"]["position"].ravel(), out["segment_state"]["velocity"].ravel() / 30,
                           out["joint_output"]["position"].ravel(), out["segment_output"]["world_rotation"].ravel()])


@pytest.mark.parametrize("integrator, limits, colliders, inside, wind", [
    ("semi-implicit", False, False, False, False),
    ("semi-implicit", False, True, False, True),
    ("semi-implicit", True, True, True, False),
    ("exact", False, False, False, True),
    ("exact", True, True, False, False),
    ("semi-implicit", False, "many", False, True),
    ("exact", False, "turning", False, True),
])
def test_point_variants_give_the_bits_of_the_full_kernel(gl, monkeypatch, integrator, limits, colliders, inside, wind):
    specialised = run_point(integrator, limits, colliders, inside, wind)
    all_features(monkeypatch, gpu_point.GpuPointBackend, FULL_POINT)
    assert np.abs(run_point(integrator, limits, colliders, inside, wind) - specialised).max() <= 1e-4


def test_planes_are_placed_as_turning_only_in_frames_where_one_turns(gl, monkeypatch):
    """TURNING_PLANES: the kernel leaves the turning normal's placement out of frames whose
    planes all keep their normal, and each frame runs the variant its colliders' records ask for."""
    turned = []
    original = gpu_point.GpuPointBackend.program_for
    monkeypatch.setattr(gpu_point.GpuPointBackend, "program_for", lambda self, header: turned.append(
        self.switches(header)["TURNING_PLANES"]) or original(self, header))
    run_point("exact", False, "turning", False, True)
    # the plane tilts over frames 1-12, holds its tilt over 13-24 and tilts back from 25 on
    assert turned == [0] + [1] * 12 + [0] * 12 + [1] * 15


def run_angle(integrator, wind, frames=40, **options):
    solver = Solver(AngleChainSet([6, 3], 0.1, [2.0, 4.0], 0.3, gravity=(0, -9.8), air_drag=0.1), backend="gpu",
                    integrator=integrator, **options)
    if wind:
        solver.set_wind((0.3, 0.1), 0.8, (2.0, 1.0), 0.6)
    for frame in range(frames):
        solver.set_pose(root_position=[[0.1 * np.sin(0.2 * frame), 0.0], [1.0, 0.05 * frame]],
                        root_angle=[0.3 * np.sin(0.25 * frame), 1.0], local_angle=np.full(9, 0.1))
        solver.advance(1 / 60)
    out = solver.state()
    return np.concatenate([out["segment_state"]["angle"] / 10, out["joint_output"]["position"].ravel()])


@pytest.mark.parametrize("integrator, wind", [("semi-implicit", False), ("semi-implicit", True), ("exact", False),
                                              ("exact", True)])
def test_angle_variants_give_the_bits_of_the_full_kernel(gl, monkeypatch, integrator, wind):
    specialised = run_angle(integrator, wind)
    all_features(monkeypatch, gpu_angle.GpuAngleBackend, {name: 1 for name in ANGLE_SWITCHES})
    assert np.abs(run_angle(integrator, wind) - specialised).max() <= 1e-4


@pytest.mark.parametrize("target_path, damping_frame", [("linear", "world"), ("hermite", "relative"),
                                                        ("monotone", "relative"), ("monotone", "world")])
def test_compiled_options_give_the_bits_of_options_read_per_frame(gl, monkeypatch, target_path, damping_frame):
    """The target path and damping frame, fixed when a solver is made, are compiled into its
    kernels (TARGET_PATH, RELATIVE_DAMPING); at -1 the kernel reads them from each frame."""
    options = dict(target_path=target_path, damping_frame=damping_frame)
    point, angle = run_point("semi-implicit", True, True, False, True, **options), run_angle("semi-implicit", True,
                                                                                           **options)
    for module in (gpu_point, gpu_angle):
        monkeypatch.setattr(module, "option_switches", lambda options: {"TARGET_PATH": -1, "RELATIVE_DAMPING": -1})
    assert np.abs(run_point("semi-implicit", True, True, False, True, **options) - point).max() <= 1e-4
    assert np.abs(run_angle("semi-implicit", True, **options) - angle).max() <= 1e-4


def words_as_doubles(monkeypatch, backend_class):
    """Make ``backend_class`` compile its kernel with the 64-bit words of its buffers as doubles
    (shaders/sim/words64.glsl: the fallback for a context without 64-bit integers)."""
    switches = backend_class.__dict__["switches"]  # a function or a staticmethod
    monkeypatch.setattr(backend_class, "switches",
                        lambda self, header: {**switches.__get__(self, type(self))(header), "WORDS_AS_DOUBLES": 1})


def test_words_as_doubles_move_the_same_bits(gl, monkeypatch):
    """The buffers read and written per segment are moved as 64-bit words, integers where the
    context has them (llvmpipe does), else doubles: either moves the floats bit for bit, so the
    two kernels give the same results. Every stage that reads or writes a segment's state runs:
    colliders (near and far chains), limits, the exact steps, wind."""
    point = run_point("exact", True, True, False, True)
    angle = run_angle("exact", True)
    words_as_doubles(monkeypatch, gpu_point.GpuPointBackend)
    words_as_doubles(monkeypatch, gpu_angle.GpuAngleBackend)
    np.testing.assert_array_equal(run_point("exact", True, True, False, True), point)
    np.testing.assert_array_equal(run_angle("exact", True), angle)


def test_reads_through_image_views_give_the_bits_of_the_buffers(gl, monkeypatch):
    """Where the context has buffer textures the kernels read some buffers through image views
    of their own memory (BUFFER_IMAGES, gpu_jiggle/gl/buffer_image.py), else the buffers
    themselves: the same bits either way, through every stage (colliders as near and far
    chains, limits, the exact steps, wind) and frames of one batch and of several."""
    made = []
    original = gpu.BufferViews.bind
    monkeypatch.setattr(gpu.BufferViews, "bind", lambda self, unit, buffer, fmt: made.append(unit) or
                        original(self, unit, buffer, fmt))
    viewed = [run_point("exact", True, True, False, True), run_point("semi-implicit", False, False, False, True),
              run_angle("exact", True), run_point_substeps()]
    assert set(made) == set(range(8))  # every view of the point kernel was bound, and the angle kernel's
    monkeypatch.setattr(gpu, "views_unavailable", lambda texels, units: "no buffer textures (test)")
    made.clear()
    read = [run_point("exact", True, True, False, True), run_point("semi-implicit", False, False, False, True),
            run_angle("exact", True), run_point_substeps()]
    assert made == []
    for a, b in zip(viewed, read):
        np.testing.assert_array_equal(a, b)


def test_a_frame_compiles_only_what_it_uses_and_advance_compiles_nothing(gl):
    solver = Solver(PointChainSet([3], 2.0, 0.5, rest_lengths=0.1), backend="gpu")
    programs = solver._backend.programs
    lean = {"SPHERE_SLOTS": 0, "CAPSULE_SLOTS": 0, "PLANE_SLOTS": 0, "INSIDE_COLLIDERS": 0, "TURNING_PLANES": 0,
            "EXACT_STEPS": 0,
            "WIND": 0, "ANGLE_LIMITS": 0, "MAX_DISTANCE": 0, "NEAR_FAR": 0, "ROTATION_OUTPUTS": 1, "TARGET_PATH": 2,
            "RELATIVE_DAMPING": 1, "BUFFER_IMAGES": 1}  # llvmpipe has buffer textures: the kernels read through image views
    # compiled by the constructor: without colliders, a batch of 2, 4 and 8 fused substeps
    # (frames of up to max_substeps, 8), each frame's substeps in one batch
    assert [dict(key) for key in programs] == [{**lean, "FUSED_SUBSTEPS": n, "ONE_BATCH": 1} for n in (2, 4, 8)]
    solver.set_pose(np.array([[0.0, -0.1 * k, 0.0] for k in range(4)]))
    solver.advance(1 / 60)
    assert len(programs) == 3
    solver.set_colliders(spheres=[[0.0, -1.0, 0.0, 0.1]] * 3)
    # compiled by set_colliders: the far pass (SPEC 9, "Near and far chains") in batches of 2
    # substeps, in one batch and in a loop (frames of up to 8), and the near pass, one substep
    # at a time
    lean.update(FUSED_SUBSTEPS=2, ONE_BATCH=0)
    assert [dict(key) for key in list(programs)[-3:]] == [{**lean, "SPHERE_SLOTS": 4, "NEAR_FAR": 1, "ONE_BATCH": 1},
                                                          {**lean, "SPHERE_SLOTS": 4, "NEAR_FAR": 1},
                                                          {**lean, "SPHERE_SLOTS": 4, "NEAR_FAR": 2}]
    solver.set_parameters(max_distance=0.5)
    assert dict(list(programs)[-1]) == {**lean, "SPHERE_SLOTS": 4, "MAX_DISTANCE": 1, "NEAR_FAR": 2}
    made = list(programs)
    for _ in range(2):
        solver.set_colliders(spheres=[[0.0, -1.0, 0.0, 0.1]] * 3)
        solver.advance(1 / 60)
    assert list(programs) == made


def test_an_angle_solver_compiles_each_batch_of_fused_substeps_at_set_up(gl):
    solver = Solver(AngleChainSet([3], 0.1, 2.0, 0.3), backend="gpu", max_substeps=5)
    assert sorted(dict(key)["FUSED_SUBSTEPS"] for key in solver._backend.programs) == [2, 4, 8]
    solver.set_pose(root_position=[[0.0, 0.0]], root_angle=[0.0], local_angle=np.zeros(3))
    made = list(solver._backend.programs)
    for dt in (1 / 120, 3 / 120, 5 / 120):
        solver.advance(dt)
    assert list(solver._backend.programs) == made


def test_frames_past_the_largest_batch_run_a_loop_of_batches_compiled_at_set_up(gl):
    solver = Solver(AngleChainSet([3], 0.1, 2.0, 0.3), backend="gpu", max_substeps=12)
    batches = sorted((dict(key)["FUSED_SUBSTEPS"], dict(key)["ONE_BATCH"]) for key in solver._backend.programs)
    assert batches == [(2, 1), (4, 1), (8, 0), (8, 1)]
    solver.set_pose(root_position=[[0.0, 0.0]], root_angle=[0.0], local_angle=np.zeros(3))
    made = list(solver._backend.programs)
    for dt in (12 / 120, 1 / 120, 9 / 120):
        solver.advance(dt)
    assert list(solver._backend.programs) == made


def run_angle_substeps(frames=12):
    """Angle chains over frames of 1 to 12 substeps (wind, limits and the exact steps off)."""
    chain_set = AngleChainSet([6, 3, 4], 0.1, [2.0, 4.0, 3.0], 0.3, gravity=(0, -9.8), air_drag=0.2,
                              angle_limit=[0.3, np.inf, np.inf, 0.5, np.inf, np.inf, np.inf, np.inf, np.inf, 0.4,
                                           np.inf, np.inf, np.inf])
    solver = Solver(chain_set, backend="gpu", max_substeps=12)
    solver.set_wind((0.3, 0.1), 0.8, (2.0, 1.0), 0.6)
    for frame in range(frames):
        solver.set_pose(root_position=[[0.2 * np.sin(0.5 * frame), 0.0], [1.0, 0.05 * frame], [2.0, 0.0]],
                        root_angle=[0.6 * np.sin(0.7 * frame), 1.0, -0.5], local_angle=np.full(13, 0.1))
        solver.advance((frame % 12 + 1) / 120)
    out = solver.state()
    return np.concatenate([out["segment_state"]["angle"], out["segment_state"]["angular_velocity"],
                           out["joint_output"]["position"].ravel()])


def test_every_batch_of_fused_substeps_gives_the_same_bits(gl, monkeypatch):
    """A segment runs a batch of substeps with its state in registers; how many is a matter of
    speed alone: the same operations run in the same order."""
    chosen = run_angle_substeps()  # batches of 2, 4 or 8 by the frame
    moved = run_angle_substeps(frames=1)
    assert chosen.shape == moved.shape and not np.array_equal(chosen, moved)
    for fused in (1, 3, 8):
        monkeypatch.setattr(gpu_angle, "fused_substeps", lambda substeps, fused=fused: fused)
        np.testing.assert_array_equal(run_angle_substeps(), chosen, err_msg=f"FUSED_SUBSTEPS {fused}")


def run_point_substeps(frames=12, distant_sphere=False):
    """Point chains over frames of 1 to 12 substeps, with wind, limits and a teleport; with
    ``distant_sphere``, a sphere no particle comes near, run in one pass (its kernel walks the
    substeps one at a time, the contact stages no-ops)."""
    chain_set = PointChainSet([6, 3, 4], 3.0, 0.3, rest_lengths=0.1, gravity=(0, -9.8, 0), air_drag=0.2,
                              angle_limit=0.6, max_distance=0.3, world_influence=[1.0, 0.5, 0.8])
    solver = Solver(chain_set, backend="gpu", max_substeps=12)
    solver._backend.split_near_far = False
    solver.set_wind((0.3, 0.1, 0.0), 0.8, (2.0, 1.0, 0.5), 0.6)
    if distant_sphere:
        solver.set_colliders(spheres=[[50.0, 0.0, 0.0, 0.1]])
    for frame in range(frames):
        joints = np.array([[x + 0.2 * np.sin(0.5 * frame), -0.1 * k, 0.05 * frame] for x, n in ((0, 6), (1, 3), (2, 4))
                           for k in range(n + 1)])
        solver.set_pose(joints)
        if frame == 5:
            solver.teleport([1], moving=True)
        solver.advance((frame % 12 + 1) / 120)
    out = solver.state()
    return np.concatenate([out["segment_state"][name].ravel() for name in out["segment_state"].dtype.names]
                          + [out["joint_output"]["position"].ravel(), out["segment_output"]["world_rotation"].ravel()])


def test_point_batches_of_fused_substeps_give_the_bits_of_one_substep_at_a_time(gl, monkeypatch):
    """Without colliders a segment runs a batch of substeps with its state in registers; the
    kernel with colliders walks one substep at a time. The same operations run in the same
    order, so the bits are the same, whatever the batch."""
    one_at_a_time = run_point_substeps(distant_sphere=True)
    moved = run_point_substeps(frames=1)
    assert one_at_a_time.shape == moved.shape and not np.array_equal(one_at_a_time, moved)
    for fused in (None, 1, 3, 8):
        if fused is not None:
            monkeypatch.setattr(gpu_point, "fused_substeps", lambda substeps, fused=fused: fused)
        np.testing.assert_array_equal(run_point_substeps(), one_at_a_time, err_msg=f"FUSED_SUBSTEPS {fused}")


def run_through_jumps_and_levels(kind, frames=24):
    """Chains of each kind through every first-frame path: snaps, keep_shape jumps (mirrored
    for angle chains), chains declared moving, and levels of detail changing between full,
    half and frozen, over frames of 1 to 4 substeps. "point near far": point chains with a
    sphere, a capsule and a plane, the sphere coming near one chain and going (near and far
    chains). Returns each frame's state and outputs (bytes) and its near chains (or None)."""
    if kind == "angle":
        solver = Solver(AngleChainSet([4, 2, 3], 0.1, [2.0, 4.0, 3.0], 0.3, gravity=(0, -9.8), air_drag=0.2),
                        backend="gpu")
        solver.set_wind((0.3, 0.1), 0.8, (2.0, 1.0), 0.6)
    else:
        solver = Solver(PointChainSet([4, 2, 3], 3.0, 0.3, rest_lengths=0.1, gravity=(0, -9.8, 0), air_drag=0.2,
                                      world_influence=[1.0, 0.5, 0.8]), backend="gpu")
        solver.set_wind((0.3, 0.1, 0.0), 0.8, (2.0, 1.0, 0.5), 0.6)
    levels = [["full", "full", "full"], ["half", "frozen", "full"], ["frozen", "half", "half"],
              ["full", "full", "frozen"]]
    jumps = {3: dict(chains=[0], keep_shape=True, moving=True), 7: dict(chains=[1, 2]),
             11: dict(chains=[2], moving=True), 15: dict(chains=[0, 1], keep_shape=True)}
    out, near = [], []
    for frame in range(frames):
        sway = 0.2 * np.sin(0.5 * frame)
        if kind == "angle":
            solver.set_pose(root_position=[[sway, 0.0], [1.0, 0.05 * frame], [2.0, 0.0]],
                            root_angle=[0.6 * sway, 1.0 + 0.1 * frame, -0.5], local_angle=np.full(9, 0.1 + sway))
        else:
            bend = 0.4 * np.sin(0.7 * frame + np.arange(3))  # the chains turn: their targets' offsets move
            solver.set_pose(np.array([[x + sway, -0.1 * k * np.cos(b), 0.1 * k * np.sin(b) + 0.05 * frame]
                                      for (x, n), b in zip(((0, 4), (1, 2), (2, 3)), bend) for k in range(n + 1)]))
        if kind == "point near far":
            solver.set_colliders(spheres=[[1.0 + sway + 0.3 * np.sin(1.3 * frame), -0.2, 0.05 * frame, 0.05]],
                                 capsules=[[3.0, -1.0, 0.0, 3.0, 1.0, 0.0, 0.05]], planes=[[0.0, 1.0, 0.0, -3.0]])
        solver.set_lod(levels[frame // 3 % len(levels)])
        if frame in jumps:
            if kind == "angle" and frame == 15:
                solver.teleport(**jumps[frame], mirror=True)
            else:
                solver.teleport(**jumps[frame])
        solver.advance((frame % 4 + 1) / 120)
        state = solver.state()
        out.append(np.concatenate([np.ascontiguousarray(state[name]).view(np.uint8).ravel()
                                   for name in ("chain_state", "segment_state", "joint_output", "segment_output")]))
        near.append(None if kind == "angle" else solver._backend.near_chain_count())
    return np.stack(out), near


@pytest.mark.parametrize("kind", ["angle", "point", "point near far"])
def test_one_batch_gives_the_bits_of_a_loop_of_batches(gl, monkeypatch, kind):
    """Where a frame's substeps fit in one batch, the kernel (or the far pass) walks it without
    a loop and takes the teleports, the moving starts, the resumed paths and the frozen chains'
    outputs in that walk: the same operations in the same order as the loop of batches and the
    walks of their own."""
    one_batch, near = run_through_jumps_and_levels(kind)
    module = gpu_angle if kind == "angle" else gpu_point
    monkeypatch.setattr(module, "batch_switches",
                        lambda fused, substeps: {"FUSED_SUBSTEPS": fused, "ONE_BATCH": 0})
    looped, near_looped = run_through_jumps_and_levels(kind)
    assert not np.array_equal(one_batch[5], one_batch[6])
    if kind == "point near far":  # near chains in frames of one batch (1 or 2 substeps) and of a loop (3, 4)
        one, loop = [near[f] for f in range(24) if f % 4 < 2], [near[f] for f in range(24) if f % 4 >= 2]
        assert near == near_looped and max(one) > 0 and max(loop) > 0 and min(near) == 0
    np.testing.assert_array_equal(one_batch, looped)
