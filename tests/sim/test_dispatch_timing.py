"""Solver.measure_dispatch / dispatch_timing: each frame's dispatch timed on its own, and the
bytes a frame uploads; a pose without rotations uploads none unless the last one had some."""
from __future__ import annotations

import math

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, PointChainSet, Solver
from gpu_jiggle.sim import layouts


def point_pose(chains, segments, shift=0.0):
    joints = []
    for c in range(chains):
        joints += [[0.3 * c + shift, -0.1 * k, 0.0] for k in range(segments + 1)]
    return np.array(joints)


def test_timing_is_off_until_asked_and_says_how_it_was_measured(backend):
    solver = Solver(AngleChainSet([4, 3], 0.1, 2.0, 0.5), backend=backend)
    pose = dict(root_position=[[0, 0], [1, 0]], root_angle=[0.0, 1.0], local_angle=np.zeros(7))
    solver.set_pose(**pose)
    solver.advance(1 / 60)
    assert solver.dispatch_timing is None
    solver.measure_dispatch()
    assert math.isnan(solver.dispatch_timing.seconds)
    solver.advance(1 / 60)
    timing = solver.dispatch_timing
    assert timing.seconds > 0
    expected = ("timer query", "finish-fenced wall time") if backend == "gpu" else ("host wall time",)
    assert timing.how in expected
    if backend == "gpu":  # targets (the pose stays, but teleport flags and shifts go up every frame) and params
        targets = 2 * layouts.ANGLE_CHAIN_TARGET.itemsize + 7 * 4
        assert targets + layouts.ANGLE_FRAME_PARAMS.itemsize <= timing.uploaded_bytes < targets + 4096
    else:
        assert timing.uploaded_bytes == 0
    solver.measure_dispatch(False)
    solver.advance(1 / 60)
    assert solver.dispatch_timing is None
    with pytest.raises(TypeError, match="enabled"):
        solver.measure_dispatch("yes")


def test_rotations_go_up_only_when_a_pose_has_them_or_the_last_one_had(backend):
    chains, segments = 3, 4
    chain_set = PointChainSet([segments] * chains, 3.0, 0.4, gravity=(0, -9.8, 0))
    joints = chains * (segments + 1)
    turned = np.tile([0.0, 0.0, np.sin(0.2), np.cos(0.2)], (joints, 1))
    identity = np.tile([0.0, 0.0, 0.0, 1.0], (joints, 1))
    solvers = [Solver(chain_set, backend=backend) for _ in range(2)]
    uploads = []
    for frame in range(6):
        pose = point_pose(chains, segments, 0.05 * frame)
        for i, solver in enumerate(solvers):
            solver.measure_dispatch()
            if frame < 2:
                solver.set_pose(pose, turned)
            elif i == 0:
                solver.set_pose(pose)  # no rotations: the identity must replace the turned ones
            else:
                solver.set_pose(pose, identity)
            solver.advance(1 / 60)
        uploads.append(solvers[0].dispatch_timing.uploaded_bytes)
    a, b = (s.state()["segment_state"] for s in solvers)
    assert a.tobytes() == b.tobytes()  # last_rotation followed the identity in both
    np.testing.assert_allclose(a["last_rotation"], np.tile([0.0, 0.0, 0.0, 1.0], (chains * segments, 1)), atol=1e-6)
    if backend == "gpu":
        rotations = chains * segments * 16
        # frame 2 uploads the identity (the last pose had rotations), frames 3-5 no rotations
        assert uploads[2] - uploads[3] == rotations
        assert uploads[3] == uploads[4] == uploads[5]
        # frame 1 also clears the first frame's snap in the chain controls; frame 2 has none to send
        assert uploads[1] - uploads[2] == chains * layouts.POINT_CHAIN_CONTROL.itemsize


def test_point_teleport_flags_and_levels_go_up_only_when_they_change(gl):
    chains, segments = 4, 3
    solver = Solver(PointChainSet([segments] * chains, 3.0, 0.4, gravity=(0, -9.8, 0)), backend="gpu", context=gl)
    solver.measure_dispatch()
    controls = chains * layouts.POINT_CHAIN_CONTROL.itemsize
    uploads, read = [], []
    steps = [None, None, None, "lod", None, "teleport", None, None, "same lod"]
    for frame, step in enumerate(steps):
        if step == "lod":
            solver.set_lod([0, 1, 2, 0])
        elif step == "same lod":
            solver.set_lod([0, 1, 2, 0])
        elif step == "teleport":
            solver.teleport(chains=[1])
        solver.set_pose(point_pose(chains, segments, 0.01 * frame))
        solver.advance(1 / 60)
        uploads.append(solver.dispatch_timing.uploaded_bytes)
        read.append(np.frombuffer(solver.gpu_buffers()["chain_control"].read(), layouts.POINT_CHAIN_CONTROL).copy())
    steady = uploads[2]
    # after the first frame (its snap, with what a first frame sends): the snap's clearing, the
    # new levels, the second chain's entry into "half" (set on frame 3, which runs the half
    # rate, it runs a frame later: SPEC 2, Solver.frame_levels), the teleport and its clearing.
    # A frozen chain's every-frame moving snap comes from its level in the kernel, not uploaded.
    assert uploads[0] >= steady + controls
    assert [u - steady for u in uploads[1:]] == [controls, 0, controls, controls, controls, controls, 0, 0]
    assert read[3]["lod"].tolist() == [0, 0, 2, 0] and read[4]["lod"].tolist() == [0, 1, 2, 0]
    assert read[8]["lod"].tolist() == [0, 1, 2, 0]
    assert read[5]["teleport"].tolist() == [0, layouts.TELEPORT_SNAP, 0, 0] and not read[6]["teleport"].any()


def test_a_static_body_with_colliders_at_rest_uploads_only_the_frame_buffer(gl):
    """Grass: the roots never move, the pose is set once, the colliders stay where they are;
    after the first frames each frame uploads the frame buffer alone. A moved collider, or a
    new pose, goes up again."""
    chains, segments = 5, 3
    solver = Solver(PointChainSet([segments] * chains, 3.0, 0.4, gravity=(0, -9.8, 0)), backend="gpu", context=gl)
    solver.measure_dispatch()
    solver.set_pose(point_pose(chains, segments, 0.0))
    uploads = []
    for frame in range(8):
        solver.set_colliders(spheres=[[0.1, -0.1 + 0.01 * (frame == 5), 0.0, 0.05]], planes=[[0, 1, 0, -1.0]])
        if frame == 6:
            solver.set_pose(point_pose(chains, segments, 0.0))
        solver.advance(1 / 60)
        uploads.append(solver.dispatch_timing.uploaded_bytes)
    frame_buffer = solver.gpu_buffers()["params"].size
    assert uploads[3] == uploads[4] <= frame_buffer, (uploads, frame_buffer)
    # frame 5: the sphere moved (its record goes up), frame 6: back on its path to rest, frame 6
    # also a new pose (the targets' offsets; the chains' target records are the same)
    assert uploads[5] > uploads[4] and uploads[6] >= uploads[4] + chains * segments * 12
