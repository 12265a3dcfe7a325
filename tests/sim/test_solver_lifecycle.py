"""Solvers that are safe to hold: freed when dropped, released once, right on any of several
contexts, refused from a foreign thread, bounded inputs, and saved and restored bit for bit."""
from __future__ import annotations

import gc
import math
import re
import threading

import moderngl
import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, InputError, PointChainSet, Solver
from gpu_jiggle.gl import current

HANG = np.array([[0.0, -0.1 * k, 0.0] for k in range(4)])


def point_solver(backend, **kwargs):
    return Solver(PointChainSet([3, 3], 3.0, 0.4, gravity=(0.0, -9.8, 0.0)), backend=backend, **kwargs)


def point_frame(s, f):
    """One frame of a swaying pair of strands with a collider and wind; returns the frame's
    read-back bytes."""
    base = np.concatenate([HANG, HANG + [1.0, 0.0, 0.0]]) + [0.3 * np.sin(f / 12), 0.0, 0.0]
    s.set_pose(base)
    s.set_colliders(spheres=[[0.2, -0.2, 0.0, 0.1]], planes=[[0.0, 1.0, 0.0004, -0.35]])
    s.set_wind((0.5, 0.0, 0.0), 0.4, (2.0, 0.0, 0.0), 0.7)
    s.advance(0.2 if f % 97 == 0 else 1 / 60)  # now and then a hitch
    return s.positions().tobytes() + s.velocities().tobytes() + s.segment_rotations().tobytes()


def angle_frame(s, f):
    s.set_pose([[np.sin(f / 9), 0.0], [0.0, 1.0]], [0.05 * f, 0.0], np.full(5, 0.1))
    s.advance(1 / 50)
    return s.positions().tobytes() + s.angular_velocities().tobytes()


# -- freeing -----------------------------------------------------------------------------------------------
def released(buffer) -> bool:
    return type(buffer.mglo).__name__ == "InvalidObject"


def test_a_dropped_solver_frees_its_gpu_buffers(gl):
    s = point_solver("gpu")
    point_frame(s, 0)
    buffers = list(s.gpu_buffers().values())
    del s
    gc.collect()
    assert all(released(b) for b in buffers)


def test_a_dropped_angle_solver_frees_its_buffers_and_rig_texture(gl):
    s = Solver(AngleChainSet([3, 2], 0.5, 2.0, 0.5), backend="gpu")
    angle_frame(s, 0)
    textures = s.gpu_textures()
    assert set(textures) == {"segment_rig"} and "segment_rig" not in s.gpu_buffers()
    held = list(s.gpu_buffers().values()) + list(textures.values())
    del s
    gc.collect()
    assert all(released(b) for b in held)


def test_gpu_textures_needs_the_gpu_backend():
    with pytest.raises(TypeError, match=r"gpu_textures\(\) needs the GPU backend"):
        Solver(AngleChainSet([3], 0.5, 2.0, 0.5), backend="cpu").gpu_textures()


def test_a_solver_dropped_on_another_thread_is_freed_by_the_next_use(gl):
    holder = [point_solver("gpu")]
    buffers = list(holder[0].gpu_buffers().values())
    worker = threading.Thread(target=lambda: (holder.clear(), gc.collect()))
    worker.start()
    worker.join()
    assert not any(released(b) for b in buffers), "another thread must not touch the context"
    other = point_solver("gpu")  # the next use of the context, from its own thread
    assert all(released(b) for b in buffers)
    other.release()


def test_release_twice_is_harmless(backend):
    s = point_solver(backend)
    point_frame(s, 0)
    s.release()
    s.release()
    with pytest.raises(RuntimeError, match="released"):
        s.advance(1 / 60)


# -- contexts and threads ------------------------------------------------------------------------------------
def test_solvers_on_two_contexts_each_run_on_their_own(gl):
    own = moderngl.create_standalone_context(require=430, backend="egl")  # a caller's context, now current
    current.remember(own)
    try:
        on_own = point_solver("gpu", context=own)
        on_shared = point_solver("gpu")
        reference = point_solver("cpu")
        for f in range(40):  # interleaved: each call must find its own buffers
            point_frame(on_own, f)
            point_frame(on_shared, f)
            point_frame(reference, f)
        # The same device and inputs give bit-identical runs (SPEC 2, determinism), whichever
        # context holds the buffers; the reference agrees as the cross-check bounds it (1e-2:
        # contacts decided differently by float32 rounding grow).
        np.testing.assert_array_equal(on_own.positions(), on_shared.positions())
        np.testing.assert_allclose(on_own.positions(), reference.positions(), atol=1e-2)
        assert current.current().context == current.binding_of(own).context, "the caller's context stays current"
        on_own.release()
        on_shared.release()
    finally:
        own.release()
        with current.use(current.binding_of(gl)):  # the shared context current again for the tests after
            pass


def test_a_gpu_solver_refuses_calls_from_another_thread(gl):
    s = point_solver("gpu")
    point_frame(s, 0)
    errors = []

    def drive():
        try:
            s.advance(1 / 60)
        except RuntimeError as exc:
            errors.append(str(exc))

    worker = threading.Thread(target=drive, name="physics")
    worker.start()
    worker.join()
    assert len(errors) == 1 and "current in thread 'MainThread'" in errors[0] and "'physics'" in errors[0]
    point_frame(s, 1)  # its own thread still may
    s.release()


def test_a_cpu_solver_runs_on_any_thread():
    s = point_solver("cpu")
    point_frame(s, 0)
    worker = threading.Thread(target=lambda: point_frame(s, 1))
    worker.start()
    worker.join()
    assert s.sim_time > 0


# -- bounded input -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("frame_dt, message", [
    (1e308, "frame_dt = 1e+308: expected at most 1e+06 seconds"),
    (10 ** 400, "frame_dt = 1000"),
    (-1, "frame_dt = -1: expected a finite number of seconds >= 0"),
    (math.nan, "frame_dt = nan: expected a finite number of seconds >= 0"),
])
def test_frame_times_that_do_not_fit_are_refused(backend, frame_dt, message):
    s = point_solver(backend)
    point_frame(s, 0)
    before = s.save_state()
    with pytest.raises(InputError, match=re.escape(message)) as refused:
        s.advance(frame_dt)
    assert (refused.value.argument, refused.value.index) == ("frame_dt", None)
    assert refused.value.value is frame_dt
    assert s.save_state() == before


def test_poses_beyond_1e15_are_refused(backend):
    point = point_solver(backend)
    point_frame(point, 0)
    before = point.save_state()
    pose = np.concatenate([HANG, HANG + [1.0, 0.0, 0.0]]) * 1e38
    with pytest.raises(ValueError, match=r"joint_positions\[1, 1\] = -1\.0+1e\+37: expected a coordinate within "
                                         r"±1e\+15"):
        point.set_pose(pose)
    pose = np.concatenate([HANG, HANG + [1.0, 0.0, 0.0]]) + [0.0, 0.0, 1.5e16]
    with pytest.raises(ValueError, match=r"joint_positions\[0, 2\] = 1\.5e\+16"):
        point.set_pose(pose)
    assert point.save_state() == before
    angle = Solver(AngleChainSet([3, 2], 0.5, 2.0, 0.3), backend=backend)
    with pytest.raises(ValueError, match=r"root_position\[0, 0\] = 1e\+38: expected a coordinate"):
        angle.set_pose([[1e38, 0.0], [0.0, 0.0]], [0.0, 0.0], np.zeros(5))
    with pytest.raises(ValueError, match=r"spheres\[0, 3\] = 1e\+20"):
        point.set_colliders(spheres=[[0.0, 0.0, 0.0, 1e20]])


def test_large_poses_within_the_limit_stay_finite(backend):
    s = point_solver(backend, origin=np.zeros(3))
    for f in range(30):
        s.set_pose((np.concatenate([HANG, HANG + [1.0, 0.0, 0.0]]) + [np.sin(f / 5), 0.0, 0.0]) * 1e14)
        s.advance(1 / 60)
    assert np.isfinite(s.positions()).all() and np.isfinite(s.velocities()).all()


def test_chain_sets_too_large_to_index_are_refused():
    with pytest.raises(ValueError, match=r"segment_counts\[0\] = 4611686018427387904: expected an integer in \[1, 2147483647\]"):
        PointChainSet([2 ** 62, 2 ** 62], 2.0, 0.5)
    with pytest.raises(ValueError, match=r"segment_counts: 2 chains of 2147483646 segments in all have 2147483648 joints"):
        PointChainSet.__new__(PointChainSet)._set_topology([2 ** 30, 2 ** 30 - 2])


def test_an_absurd_substep_cap_is_refused():
    with pytest.raises(ValueError, match=r"max_substeps = 1000000000000: expected an integer in \[1, 1000\]"):
        point_solver("cpu", max_substeps=10 ** 12)


def test_a_set_larger_than_the_storage_blocks_is_refused_before_allocating(gl):
    limit = gl.info["GL_MAX_SHADER_STORAGE_BLOCK_SIZE"]
    chains = limit // (80 * 8) + 1  # 80 bytes of state per segment, 8 segments per chain
    chain_set = PointChainSet(np.full(chains, 8), 2.0, 0.5)
    with pytest.raises(ValueError, match=r"needs a \d+ MiB segment_state buffer; this OpenGL context's storage "
                                         r"blocks hold at most \d+ MiB .*backend='cpu'"):
        Solver(chain_set, backend="gpu")


# -- save and restore ----------------------------------------------------------------------------------------
def test_restore_replays_point_chains_bit_for_bit(backend):
    s = point_solver(backend)
    for f in range(300):
        point_frame(s, f)
    blob, saved_at = s.save_state(), (s.sim_time, s.dropped_time, s.accumulator)
    original = [point_frame(s, f) for f in range(300, 600)]
    again = Solver.load_state(blob, backend=backend)
    assert type(again).__name__ == "PointSolver" and (again.sim_time, again.dropped_time, again.accumulator) == saved_at
    assert [point_frame(again, f) for f in range(300, 600)] == original
    fresh = point_solver(backend)
    fresh.restore(blob)
    assert [point_frame(fresh, f) for f in range(300, 600)] == original


def test_restore_replays_angle_chains_bit_for_bit(backend):
    def make():
        return Solver(AngleChainSet([3, 2], 0.5, 2.0, 0.3, gravity=[(0.0, -9.8), (0.0, 9.8)]), backend=backend)
    s = make()
    s.set_wind((0.5, 0.0), 0.4, (2.0, 0.0), 0.7)  # once: the saved state must carry it
    for f in range(300):
        angle_frame(s, f)
    blob = s.save_state()
    original = [angle_frame(s, f) for f in range(300, 600)]
    again = make()
    again.restore(blob)
    assert [angle_frame(again, f) for f in range(300, 600)] == original
    assert [angle_frame(f_s, f) for f_s in [Solver.load_state(blob, backend=backend)] for f in range(300, 600)] == original
    calm = make()
    calm.restore(blob)
    calm.set_wind((0.0, 0.0))
    assert [angle_frame(calm, f) for f in range(300, 600)] != original  # the wind matters here


def test_restore_refuses_another_chain_set_or_version(backend):
    s = point_solver(backend)
    point_frame(s, 0)
    blob = s.save_state()
    cases = [
        (Solver(PointChainSet([3, 2], 3.0, 0.4), backend=backend), "saved for another chain set"),
        (Solver(PointChainSet([3, 3], 3.5, 0.4, gravity=(0.0, -9.8, 0.0)), backend=backend),
         "whose frequency differs"),
        (Solver(AngleChainSet([3, 3], 1.0, 3.0, 0.4), backend=backend), "saved from a solver of point chains"),
        (point_solver(backend, substep=1 / 240), "saved with substep 0.008333333333333333 s"),
    ]
    for other, message in cases:
        before = other.state()
        with pytest.raises(ValueError, match=message):
            other.restore(blob)
        assert other.state().keys() == before.keys()
    from gpu_jiggle.sim import state
    arrays = state.unpack(blob)
    arrays["spec_version"] = np.array(state.SPEC_VERSION + 1)
    with pytest.raises(ValueError, match=r"saved with model \(SPEC\) version"):
        point_solver(backend).restore(state.pack(arrays))
    with pytest.raises(ValueError, match="not a gpu_jiggle solver state") as refused:
        point_solver(backend).restore(b"not a state")
    assert "pickle" not in str(refused.value)  # numpy's advice to load untrusted bytes with pickles
    with pytest.raises(TypeError, match="expected the bytes"):
        point_solver(backend).restore("state")


def test_a_refused_pose_names_its_entry_per_axis(backend):
    s = point_solver(backend)
    point_frame(s, 0)
    joints = s.positions().copy()
    joints[1, 2] = math.nan
    with pytest.raises(InputError, match=re.escape("joint_positions[1, 2] = nan")) as refused:
        s.set_pose(joint_positions=joints)
    assert refused.value.indices == (1, 2)
    assert refused.value.index == 1 * 3 + 2   # the flat index, as before


def test_a_fractional_segment_count_is_shown_as_a_plain_number():
    with pytest.raises(TypeError, match=re.escape("segment_counts[0] = 2.5: expected an integer")):
        PointChainSet([2.5, 3], 2.0, 0.3)
