"""Drawing from the solver's buffers: the vertex shader sees exactly what positions() reads."""
from __future__ import annotations

import numpy as np
import pytest

from gpu_jiggle import AngleChainSet, PointChainSet, Solver
from gpu_jiggle.gl import glsl


def test_vertex_shader_reads_the_read_back_positions(gl):
    rng = np.random.default_rng(4)
    counts = np.array([3, 8, 1, 5])
    cs = PointChainSet(counts, 2.0, 0.4, gravity=(0, -9.8, 0))
    s = Solver(cs, backend="gpu", context=gl)
    local = np.concatenate([[[i, -0.1 * k, 0.0] for k in range(n + 1)] for i, n in enumerate(counts)])
    far = np.array([500.0, 20.0, -300.0])
    for f in range(20):
        s.set_pose(joint_positions=local + far + [0.1 * np.sin(f / 5), 0, 0.02 * f])
        s.set_lod(rng.integers(0, 3, len(counts)))
        s.advance(1 / 60 + 0.003 * (f % 3))
    program = glsl.program(gl, "draw/strand_lines.vert", None, varyings=["world_position"])
    program["view_projection"].write(np.eye(4, dtype="f4").tobytes())
    buffers = s.gpu_buffers()
    for name, binding in (("chain_rig", 1), ("chain_output", 14), ("joint_output", 7)):
        buffers[name].bind_to_storage_buffer(binding)
    longest = int(counts.max()) + 1
    captured = gl.buffer(reserve=len(counts) * longest * 12)
    vao = gl.vertex_array(program, [])
    target = gl.simple_framebuffer((1, 1))  # a headless context has no default framebuffer
    target.use()
    vao.transform(captured, mode=gl.POINTS, vertices=longest, instances=len(counts))
    gl.detect_framebuffer(0).use()  # bind the default again before releasing ours
    drawn = np.frombuffer(captured.read(), "f4").reshape(len(counts), longest, 3)
    expected = s.positions() - s.origin
    for c, sl in enumerate(cs.joint_slices()):
        np.testing.assert_allclose(drawn[c, : counts[c] + 1], expected[sl], rtol=0, atol=1e-4)
    for b in (captured, vao, program, target):
        b.release()


def test_gpu_buffers_need_the_gpu_backend():
    s = Solver(AngleChainSet([2], 1.0, 2.0, 0.5), backend="cpu")
    with pytest.raises(TypeError, match="GPU backend"):
        s.gpu_buffers()
