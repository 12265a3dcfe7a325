"""Packing of the rig, the per-frame targets and the frame parameters into the std430 records
of :mod:`gpu_jiggle.sim.layouts`. Both backends hold their data in these records, so the GPU
buffers and the reference's arrays are byte-for-byte comparable.
"""
from __future__ import annotations

import numpy as np

from . import layouts
from .spring import coefficients


def chain_rig(chain_set) -> np.ndarray:
    """(C,) CHAIN_RIG records: first segment, segment count, first joint (pivot)."""
    rig = np.zeros(chain_set.chain_count, layouts.CHAIN_RIG)
    rig["first_segment"] = chain_set.first_segment
    rig["segment_count"] = chain_set.segment_counts
    rig["first_joint"] = chain_set.first_segment + np.arange(chain_set.chain_count)
    return rig


def angle_segment_rig(chain_set) -> np.ndarray:
    """(S,) ANGLE_SEGMENT_RIG records with k and c from :func:`gpu_jiggle.sim.spring.coefficients`."""
    rig = np.zeros(chain_set.segment_count, layouts.ANGLE_SEGMENT_RIG)
    k, c = coefficients(chain_set.frequency, chain_set.damping_ratio)
    rig["length"] = chain_set.lengths
    rig["inv_length"] = (1.0 / chain_set.lengths).astype(np.float32)
    rig["stiffness"] = k
    rig["damping"] = c
    rig["inertia"] = chain_set.inertia
    rig["angle_limit"] = chain_set.angle_limit
    return rig


def schedule(plan, substep: float, gust_phase: float = 0.0, full_plan=None) -> np.ndarray:
    """One SCHEDULE record from a :class:`gpu_jiggle.sim.clock.StepPlan` (``full_plan``: the
    full-rate plan of the same frame, whose span the colliders' interpolation covers)."""
    record = np.zeros(1, layouts.SCHEDULE)
    full_span = (full_plan or plan).span
    record["collider_time_scale"] = plan.span / full_span if full_span > 0 else 1.0
    record["substep_count"] = plan.substep_count
    record["substep"] = substep
    record["inv_path_step"] = 1.0 / plan.path_step
    record["blend"] = plan.blend
    record["gust_phase"] = gust_phase
    return record[0]


def alphas_block(plans) -> tuple[int, np.ndarray]:
    """The alphas of each plan, one after the other at a common stride (≥ 1)."""
    stride = max(1, max(p.substep_count for p in plans))
    block = np.zeros(stride * len(plans), np.float32)
    for i, p in enumerate(plans):
        block[i * stride: i * stride + p.substep_count] = p.alphas
    return stride, block


def frame_params(plans, substeps, chain_count: int, gravity) -> np.ndarray:
    """The angle kernel's FrameParams buffer as a uint8 array: the header, then the alphas.

    ``plans`` and ``substeps``: (full-rate, half-rate) step plans and their substeps."""
    header = np.zeros(1, layouts.FRAME_PARAMS)
    stride, alphas = alphas_block(plans)
    header["chain_count"] = chain_count
    header["alpha_stride"] = stride
    header["full_rate"] = schedule(plans[0], substeps[0])
    header["half_rate"] = schedule(plans[1], substeps[1])
    header["gravity"] = gravity
    return np.concatenate([header.view(np.uint8), alphas.view(np.uint8)])


def wrap_angle64(a):
    """``wrap(a)`` in float64 on the host before rounding to float32 (SPEC section 0)."""
    a = np.asarray(a, dtype=np.float64)
    return a - 2.0 * np.pi * np.floor((a + np.pi) / (2.0 * np.pi))


def point_chain_rig(chain_set) -> np.ndarray:
    """(C,) POINT_CHAIN_RIG records."""
    rig = np.zeros(chain_set.chain_count, layouts.POINT_CHAIN_RIG)
    rig["first_segment"] = chain_set.first_segment
    rig["segment_count"] = chain_set.segment_counts
    rig["first_joint"] = chain_set.first_joint
    rig["collider_mask"] = chain_set.collider_mask
    rig["world_influence"] = chain_set.world_influence
    return rig


def point_segment_rig(chain_set, rest_lengths) -> np.ndarray:
    """(S,) POINT_SEGMENT_RIG records with k and c from :func:`gpu_jiggle.sim.spring.coefficients`."""
    rig = np.zeros(chain_set.segment_count, layouts.POINT_SEGMENT_RIG)
    k, c = coefficients(chain_set.frequency, chain_set.damping_ratio)
    rig["rest_length"] = rest_lengths
    rig["stiffness"] = k
    rig["damping"] = c
    rig["particle_radius"] = chain_set.particle_radius
    rig["max_distance"] = chain_set.max_distance
    return rig


def point_frame_params(plans, substeps, chain_count: int, gravity, wind, collider_counts) -> np.ndarray:
    """The point kernel's FrameParams buffer as a uint8 array: the header, then the alphas.

    ``plans``/``substeps``: (full-rate, half-rate); ``wind`` is a
    :class:`gpu_jiggle.sim.inputs.WindPacket` with one gust phase per schedule."""
    header = np.zeros(1, layouts.POINT_FRAME_PARAMS)
    stride, alphas = alphas_block(plans)
    header["chain_count"] = chain_count
    header["alpha_stride"] = stride
    header["full_rate"] = schedule(plans[0], substeps[0], wind.phases[0])
    header["half_rate"] = schedule(plans[1], substeps[1], wind.phases[1], plans[0])
    header["sphere_count"], header["capsule_count"], header["plane_count"] = collider_counts
    header["gravity"][0, :3] = gravity
    header["wind"] = wind.wind
    header["gust"] = wind.gust
    header["gust_direction"] = wind.gust_direction
    return np.concatenate([header.view(np.uint8), alphas.view(np.uint8)])
