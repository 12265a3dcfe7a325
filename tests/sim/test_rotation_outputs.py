"""Point solvers made with ``rotation_outputs=False`` (docs/SPEC.md section 9, "Frame-time
output"): the output holds the joints' positions and the segments' velocities alone, the same
bits as a solver with rotations, on both backends; reading rotations is refused, and a saved
state keeps the choice."""
from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from gpu_jiggle import PointChainSet, Solver
from gpu_jiggle.sim import layouts

ANCHOR = np.array([-310.2, 4.5, 77.7])  # away from the origin: the colliders' double path
WORLD_CODE = ("prev_position", "prev_velocity")  # the state fields whose w hold the world axis's code


def scene(backend: str, rotation_outputs: bool, integrator: str):
    rng = np.random.default_rng(11)
    chains = 12
    counts = rng.integers(2, 6, chains)
    limit = np.where(np.arange(counts.sum()) % 3 == 0, 0.5, np.inf)  # cones on a third of the segments
    chain_set = PointChainSet(counts, rng.uniform(1.0, 4.0, chains), 0.3, rest_lengths=0.06, particle_radius=0.01,
                              gravity=(0, -9.8, 0), angle_limit=limit)
    solver = Solver(chain_set, backend=backend, integrator=integrator, rotation_outputs=rotation_outputs)
    solver.set_wind((1.5, 0, 0), 3.0, (2.0, 0, 1.0), 1.3)
    pivots = ANCHOR + np.stack([np.arange(chains) % 4 * 0.1, np.zeros(chains), np.arange(chains) // 4 * 0.1], 1)
    return solver, counts, pivots


def run(backend: str, rotation_outputs: bool, integrator: str = "semi-implicit", frames: int = 45):
    """Every frame's positions and velocities (frame time and raw) as bits, and the solver."""
    solver, counts, pivots = scene(backend, rotation_outputs, integrator)
    out = []
    for frame in range(frames):
        t = frame / 60
        # the pose whips round (segments bend far from their animated direction) and turns its joints
        sway = np.array([0.25 * np.sin(9 * t), 0.1 * np.sin(5 * t), 0.2 * np.cos(7 * t)])
        joints = np.concatenate([p + sway - np.outer(np.arange(n + 1), [0, 0.06, 0]) for p, n in zip(pivots, counts)])
        half = 0.5 * np.sin(3 * t)
        rotations = np.tile([np.sin(half), 0.0, 0.0, np.cos(half)], (len(joints), 1))
        solver.set_pose(joints, joint_rotations=rotations)
        if frame == 15:
            solver.set_lod(np.where(np.arange(len(counts)) % 3 == 0, "half", "full"))
        if frame == 25:
            solver.set_lod(np.where(np.arange(len(counts)) % 4 == 1, "frozen", "full"))
        if frame == 35:
            solver.teleport([0, 4], keep_shape=True)
        solver.set_colliders(spheres=[[*(ANCHOR + [0.15 + 0.3 * np.sin(4 * t), -0.15, 0.1]), 0.05]],
                             planes=[[0, 1, 0, ANCHOR[1] - 0.3]])
        solver.advance(1 / 60)
        out.append(np.concatenate([solver.positions().ravel(), solver.positions(raw=True).ravel(),
                                   solver.velocities().astype(np.float64).ravel(),
                                   solver.velocities(raw=True).astype(np.float64).ravel()]))
    return np.array(out).view(np.uint64), solver


@pytest.mark.parametrize("backend, integrator", [("cpu", "semi-implicit"), ("cpu", "exact"), ("gpu", "semi-implicit")],
                         indirect=["backend"])
def test_without_rotation_outputs_positions_and_velocities_are_the_same_bits(backend, integrator):
    """Limits, colliders, wind, levels of detail and a keep_shape teleport: every frame's
    positions and velocities, and the state but the world axis it no longer carries, are the
    bits of the same solver with rotations; the swing's axis, which the limits' targets lean
    on, is carried alike, and was carried (the scene bends segments past a right angle). (The
    output stage is the integrator's alike: on the GPU, whose kernel variants take a minute to
    compile, one of them.)"""
    with_bits, with_rotations = run(backend, True, integrator)
    without_bits, without = run(backend, False, integrator)
    assert with_bits.tolist() == without_bits.tolist()
    full, lean = (s._backend.read("segment_state").copy() for s in (with_rotations, without))
    assert (full["last_offset"][:, 3] != 0).any()  # a swing axis was carried on
    assert (full["prev_position"][:, 3] != 0).any()  # and a world axis, which the lean solver does not carry
    assert (lean["prev_position"][:, 3] == 0).all() and (lean["prev_velocity"][:, 3] == 0).all()
    for name in WORLD_CODE:
        full[name][:, 3] = lean[name][:, 3] = 0
    assert full.tobytes() == lean.tobytes()
    assert with_rotations._backend.read("chain_state").tobytes() == without._backend.read("chain_state").tobytes()


def test_rotations_are_refused_and_never_written(backend):
    solver, counts, pivots = scene(backend, False, "semi-implicit")
    solver.set_pose(np.concatenate([p - np.outer(np.arange(n + 1), [0, 0.06, 0]) for p, n in zip(pivots, counts)]))
    solver.advance(1 / 60)
    for read in (solver.segment_rotations, solver.segment_swings):
        with pytest.raises(RuntimeError, match="rotation_outputs=False"):
            read()
    out = solver._backend.read("segment_output")
    assert (out["rotation"] == 0).all() and (out["world_rotation"] == 0).all()
    assert (out["velocity"][:, :3] != 0).any()  # the velocities are written (gravity pulls)


@pytest.mark.parametrize("bad", ["no", 0, None, 1.0])
def test_rotation_outputs_must_be_a_bool(bad):
    with pytest.raises(TypeError, match="rotation_outputs: expected a bool"):
        Solver(PointChainSet([2], 1.0, 0.5), backend="cpu", rotation_outputs=bad)


def _members(blob: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def _blob(members: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _npy(value) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.array(value))
    return buffer.getvalue()


def test_a_saved_state_keeps_the_choice():
    chain_set = PointChainSet([3, 2], 1.5, 0.5)
    joints = np.array([[0, 0, 0], [0, -0.1, 0], [0, -0.2, 0], [0, -0.3, 0], [1, 0, 0], [1, -0.1, 0], [1, -0.2, 0]],
                      float)
    lean = Solver(chain_set, backend="cpu", rotation_outputs=False)
    lean.set_pose(joints)
    lean.advance(1 / 60)
    blob = lean.save_state()
    assert Solver.load_state(blob, backend="cpu").rotation_outputs is False
    with pytest.raises(ValueError, match="rotation_outputs=False; this solver has rotation_outputs=True"):
        Solver(chain_set, backend="cpu").restore(blob)
    members = _members(blob)
    members["option.rotation_outputs.npy"] = _npy("maybe")
    with pytest.raises(ValueError, match="option rotation_outputs is unreadable"):
        Solver.load_state(_blob(members), backend="cpu")
    # older blobs, saved before the option: rotations on
    del members["option.rotation_outputs.npy"]
    old = Solver.load_state(_blob(members), backend="cpu")
    assert old.rotation_outputs is True
    old.advance(1 / 60)
    assert np.isfinite(old.segment_rotations()).all()


def test_an_angle_state_with_a_point_option_is_refused():
    from gpu_jiggle import AngleChainSet

    solver = Solver(AngleChainSet([2], 0.1, 1.0, 0.5), backend="cpu")
    solver.set_pose(np.zeros((1, 2)), np.zeros(1), np.zeros(2))
    solver.advance(1 / 60)
    members = _members(solver.save_state())
    members["option.rotation_outputs.npy"] = _npy("False")
    with pytest.raises(ValueError, match="option rotation_outputs is not an option of angle solvers"):
        Solver.load_state(_blob(members), backend="cpu")


def test_the_option_is_compiled_in():
    from gpu_jiggle.gl import glsl

    source, _ = glsl.source("sim/point_chains.comp", {"ROTATION_OUTPUTS": 0})
    assert "#define ROTATION_OUTPUTS 0" in source
    others = (layouts.OPTION_HERMITE_PATH | layouts.OPTION_RELATIVE_DAMPING | layouts.OPTION_EXACT_INTEGRATOR
              | layouts.OPTION_MONOTONE_PATH)
    bit = layouts.OPTION_NO_ROTATION_OUTPUTS
    assert bit & (bit - 1) == 0 and not bit & others  # a bit of its own, beside the other options
