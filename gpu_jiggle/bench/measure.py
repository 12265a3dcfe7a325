"""Measuring one case on one path: the solver's GPU dispatch, its whole frame, its read-back,
its memory and uploads, and the numpy path's frame, in segment-substeps per second.

A frame is ``set_pose`` (the next pose of the case) + ``advance(substeps·h)``, as in a game;
the read-back is ``positions()`` after it, timed apart. The dispatch is timed on its own by
:meth:`gpu_jiggle.Solver.measure_dispatch` (a timer query where the context has one, else
between two glFinish calls). Each figure is the median over the timed frames, after
:data:`WARM_UP_FRAMES` (the shaders are compiled when the solver is made, before them).
"""
from __future__ import annotations

import time

import numpy as np

from ..sim import Solver, layouts

#: Frames a solver runs before its frames are timed: the first snaps every chain onto its pose,
#: the second clears those teleport flags (point chains upload them only when they change).
WARM_UP_FRAMES = 2

#: The buffers a frame's dispatch must read once and write once (state), read once (rig and
#: per-frame inputs) or write once (outputs), at the least: the compulsory traffic of a
#: kernel that keeps a chain's state in registers over the frame's substeps.
READ_WRITE_BUFFERS = ("chain_state", "segment_state")
READ_BUFFERS = ("chain_rig", "segment_rig", "chain_target", "chain_control", "local_angle", "joint_offset",
                "joint_rotation")
WRITE_BUFFERS = ("joint_output", "segment_output", "chain_output")


def compulsory_bytes(buffer_sizes: dict) -> int:
    """The bytes one frame's dispatch moves at the least (see the buffer lists above), from
    ``{buffer name: bytes}``."""
    return int(sum(2 * buffer_sizes.get(name, 0) for name in READ_WRITE_BUFFERS)
               + sum(buffer_sizes.get(name, 0) for name in READ_BUFFERS + WRITE_BUFFERS))


def rate(case, seconds: float) -> float:
    """Segment-substeps per second of a frame of ``case`` that took ``seconds``."""
    return case.segment_count * case.substeps / seconds if seconds > 0 else float("inf")


def time_solver(case, backend: str, rng, budget_seconds: float, max_frames: int, context=None) -> dict:
    """Frames of ``case`` on a new Solver(backend) until ``budget_seconds`` or ``max_frames``
    (at least one timed frame after :data:`WARM_UP_FRAMES`).

    Returns a dict of medians in seconds: ``frame_s`` (set_pose + advance, the dispatch
    finished), ``dispatch_s`` (its dispatch alone), ``readback_s`` (``positions()``), with
    ``how`` (how the dispatch was timed), ``frames``, the rates ``frame_rate``,
    ``dispatch_rate``, ``frame_readback_rate`` (segment-substeps/s), and on the GPU
    ``memory_bytes`` (all the solver's GPU buffers and textures), ``memory_per_segment``,
    ``compulsory_bytes`` (what a frame's dispatch must move, :func:`compulsory_bytes`) and
    ``frame_bytes_per_segment`` (that over the segments),
    ``upload_bytes`` (per frame), ``upload_per_joint``, ``buffer_bytes`` ({name: bytes}) and,
    where frames ran as near and far chains, ``near_chains`` (the fraction run as near).

    Raises: what the Solver raises for a case this backend cannot hold (e.g. a buffer over
    the context's storage-block size: ValueError).
    """
    if context is not None:
        check_storage_block(case, context)  # before the rig and poses of a case too large are made
    chain_set = case.chain_set(rng)
    poses = case.poses(rng)
    solver = Solver(chain_set, backend=backend, context=context, **case.solver_options())
    try:
        case.prepare(solver)
        solver.measure_dispatch()
        frame, dispatch, readback, uploads, near = [], [], [], [], []
        spent = 0.0
        for i in range(max_frames + WARM_UP_FRAMES):
            started = time.perf_counter()
            solver.set_pose(**poses[i % len(poses)])
            solver.advance(case.frame_seconds)
            between = time.perf_counter()
            solver.positions()
            ended = time.perf_counter()
            if i < WARM_UP_FRAMES:
                continue
            timing = solver.dispatch_timing
            frame.append(between - started)
            dispatch.append(timing.seconds)
            readback.append(ended - between)
            uploads.append(timing.uploaded_bytes)
            near.append(timing.near_chains)
            spent += ended - started
            if spent >= budget_seconds:
                break
        out = {"frames": len(frame), "frame_s": float(np.median(frame)), "dispatch_s": float(np.median(dispatch)),
               "readback_s": float(np.median(readback)), "how": solver.dispatch_timing.how}
        out["frame_rate"] = rate(case, out["frame_s"])
        out["dispatch_rate"] = rate(case, out["dispatch_s"])
        out["frame_readback_rate"] = rate(case, out["frame_s"] + out["readback_s"])
        if solver.backend == "gpu":
            sizes = {name: int(buffer.size) for name, buffer in solver.gpu_buffers().items()}
            sizes.update({name: texture.width * texture.height * texture.components * np.dtype(texture.dtype).itemsize
                          for name, texture in solver.gpu_textures().items()})
            out.update(buffer_bytes=sizes, memory_bytes=sum(sizes.values()),
                       memory_per_segment=sum(sizes.values()) / case.segment_count,
                       upload_bytes=int(np.median(uploads)),
                       upload_per_joint=float(np.median(uploads)) / case.joint_count,
                       compulsory_bytes=compulsory_bytes(sizes))
            out["frame_bytes_per_segment"] = out["compulsory_bytes"] / case.segment_count
            if near and near[-1] is not None:
                out["near_chains"] = float(np.median(near)) / case.chains
        return out
    finally:
        solver.release()


def check_storage_block(case, ctx) -> None:
    """Refuse (ValueError) a case whose per-segment state the context's storage blocks cannot
    hold, as the Solver would, but before its chain set and poses take the host's memory."""
    limit = int(ctx.info.get("GL_MAX_SHADER_STORAGE_BLOCK_SIZE") or 0)
    record = layouts.ANGLE_SEGMENT_STATE if case.kind == "angle" else layouts.POINT_SEGMENT_STATE
    need = case.segment_count * record.itemsize
    if limit and need > limit:
        raise ValueError(f"{case.segment_count:,} {case.kind} segments need a {need / 2 ** 20:.0f} MiB segment_state "
                         f"buffer; this OpenGL context's storage blocks hold at most {limit / 2 ** 20:.0f} MiB")


def time_peer(case, library: str, rng, budget_seconds: float, max_frames: int, device=None) -> dict:
    """Frames of ``case`` on a peer (:mod:`gpu_jiggle.bench.peers`): set_pose + advance +
    synchronize, median seconds as ``frame_s``, with ``frame_rate``, ``frames`` and the
    peer's ``name``."""
    from .peers import case_from_chain_set, make_peer

    chain_set = case.chain_set(rng)
    poses = case.poses(rng)
    peer = make_peer(library, case.kind, case_from_chain_set(chain_set, case), device)
    frames, spent = [], 0.0
    for i in range(max_frames + 1):
        started = time.perf_counter()
        peer.set_pose(**poses[i % len(poses)])
        peer.advance(case.frame_seconds)
        peer.synchronize()
        took = time.perf_counter() - started
        if i == 0:
            continue  # warm-up (and the JIT)
        frames.append(took)
        spent += took
        if spent >= budget_seconds:
            break
    frame_s = float(np.median(frames))
    return {"name": peer.name, "frames": len(frames), "frame_s": frame_s, "frame_rate": rate(case, frame_s)}
