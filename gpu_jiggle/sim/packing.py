"""What both chain kinds pack alike: the chain rig's topology, the frame buffer's header of
schedules and the interpolation fractions (alphas) after it, and each chain's anchor shift.

Each kind's rig and pose records are packed in its own module (:mod:`.angle`,
:mod:`.point_records`) into the std430 records of :mod:`.layouts`. Both backends hold their data in those records,
so the GPU buffers and the reference's arrays are byte-for-byte comparable.
"""
from __future__ import annotations

import numpy as np

from . import layouts


def copy_records(records: np.ndarray) -> np.ndarray:
    """A copy of the structured ``records``, made as one copy of their bytes: numpy copies a
    structured array field by field (1.5 ms for 125,000 angle chain targets, against 0.07 ms
    for their bytes)."""
    return records.view(np.uint8).copy().view(records.dtype)


def schedule(plan, substep: float, gust_phase: float = 0.0, full_plan=None, lags=(0.0, 0.0),
             frame_time: float = 0.0) -> np.ndarray:
    """One SCHEDULE record from a :class:`~gpu_jiggle.sim.clock.StepPlan` (``full_plan``: the
    full-rate plan of the same frame, whose span the colliders' interpolation covers; ``lags``:
    the (start, end) lag of its clock's path in seconds, ``frame_time``: the frame's, s; see
    :class:`~gpu_jiggle.sim.clock.FramePlan`)."""
    record = np.zeros(1, layouts.SCHEDULE)
    record["start_lag"], record["end_lag"] = lags
    record["frame_time"] = frame_time
    full_span = (full_plan or plan).span
    record["collider_time_scale"] = plan.span / full_span if full_span > 0 else 1.0
    record["substep_count"] = plan.substep_count
    record["substep"] = substep
    record["inv_path_step"] = 1.0 / plan.path_step
    record["blend"] = plan.blend
    record["gust_phase"] = gust_phase
    record["span"] = plan.span
    record["inv_span"] = 1.0 / plan.span if plan.span > 0 else 0.0
    return record[0]


def chain_rig(dtype, chain_set) -> np.ndarray:
    """(C,) zeroed chain rig records of ``dtype`` (``layouts.ANGLE_CHAIN_RIG`` or
    ``POINT_CHAIN_RIG``) with the topology both kinds share: each chain's first segment, its
    segment count and its first joint (its pivot), uint32. The kind fills in the rest."""
    rig = np.zeros(chain_set.chain_count, dtype)
    rig["first_segment"] = chain_set.first_segment
    rig["segment_count"] = chain_set.segment_counts
    rig["first_joint"] = chain_set.first_joint
    return rig


def alphas_block(plans) -> tuple[int, np.ndarray]:
    """The alphas of each plan, one after the other at a common stride (≥ 1)."""
    stride = max(1, max(p.substep_count for p in plans))
    block = np.zeros(stride * len(plans), np.float32)
    for i, p in enumerate(plans):
        block[i * stride: i * stride + p.substep_count] = p.alphas
    return stride, block


def frame_buffer(dtype, frame_plan, substeps, chain_count: int, gust_phases=(0.0, 0.0)) -> tuple:
    """A frame buffer header of ``dtype`` (ANGLE_ or POINT_FRAME_PARAMS) with the chain count
    and both schedules filled in, and the (n,) float32 alphas that follow it.

    Args:
        frame_plan: a :class:`~gpu_jiggle.sim.clock.FramePlan`. substeps: (h, 2h) seconds.
        gust_phases: point chains' wind phase at each schedule's first substep (radians).

    Returns: ``(header, alphas)``: a (1,) record array to finish, and the alphas.
    """
    header = np.zeros(1, dtype)
    stride, alphas = alphas_block(frame_plan.plans)
    header["chain_count"] = chain_count
    header["alpha_stride"] = stride
    header["substep_begin"], header["substep_end"] = layouts.ALL_SUBSTEPS
    lags = tuple(zip(frame_plan.start_lags, frame_plan.end_lags))
    header["full_rate"] = schedule(frame_plan.full, substeps[0], gust_phases[0], lags=lags[0],
                                   frame_time=frame_plan.frame_time)
    header["half_rate"] = schedule(frame_plan.half, substeps[1], gust_phases[1], frame_plan.full, lags[1],
                                   frame_plan.frame_time)
    return header, alphas


def as_bytes(header, alphas) -> np.ndarray:
    """The frame buffer as one uint8 array: the header, then the alphas."""
    return np.concatenate([header.view(np.uint8), alphas.view(np.uint8)])


def anchor_shift(state_anchor, anchor, teleport, out=None) -> np.ndarray:
    """(C, dim) float32: how far each chain's anchor moved since its state was last relative to
    it (old - new, float64 then rounded), zero for chains that jump (a snap resets them; a
    keep_shape jump carries the state along with the anchor) and before the first frame.
    ``out``: a (C, dim) float32 array to write it into (e.g. a record field), returned."""
    shift = np.empty(anchor.shape, np.float32) if out is None else out
    if state_anchor is None:
        shift[...] = 0.0
        return shift
    np.subtract(state_anchor, anchor, out=shift, casting="same_kind")  # float64, each rounded once
    jumps = (teleport & layouts.TELEPORT_MODE_MASK) != layouts.TELEPORT_NONE
    if jumps.any():
        shift[jumps] = 0.0
    return shift
