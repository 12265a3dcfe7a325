"""Point chains' records packed on the host (SPEC section 4; the layouts in
:mod:`gpu_jiggle.sim.layouts`): the rig, once per chain set (:func:`point_chain_rig`,
:func:`point_segment_rig`), and each frame's pose, its tips as float32 offsets from their
pivots (:func:`pack_offsets`, :func:`checked_strands`). :class:`~gpu_jiggle.sim.point.PointSolver`
uploads them."""
from __future__ import annotations

import numpy as np

from . import layouts, packing, validation
from .spring import coefficients


def point_chain_rig(chain_set) -> np.ndarray:
    """(C,) POINT_CHAIN_RIG records: topology, collider mask, world influence, gravity."""
    rig = packing.chain_rig(layouts.POINT_CHAIN_RIG, chain_set)
    rig["collider_mask"] = chain_set.collider_mask
    rig["world_influence"] = chain_set.world_influence
    rig["gravity"][:, :3] = chain_set.gravity
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
    rig["air_drag"] = chain_set.air_drag
    cone = chain_set.angle_limit < np.pi
    hinge = np.isfinite(chain_set.hinge_limit[:, 0])
    spherical = chain_set.needs_rotations & ~hinge
    rig["limit_kind"] = np.select([cone, hinge, spherical], [layouts.LIMIT_CONE, layouts.LIMIT_HINGE,
                                                             layouts.LIMIT_SPHERICAL], layouts.LIMIT_NONE)
    rig["limit_axis"][:, :3] = chain_set.limit_axis
    rig["limit_bounds"][:, 0] = np.select([cone, hinge, spherical], [chain_set.angle_limit, chain_set.hinge_limit[:, 0],
                                                                    chain_set.spherical_limit[:, 0]], 0.0)
    rig["limit_bounds"][:, 1] = np.select([hinge, spherical], [chain_set.hinge_limit[:, 1],
                                                               chain_set.spherical_limit[:, 1]], 0.0)
    return rig


#: Chains of one length a pose is checked, copied and packed in at a time
#: (:func:`checked_strands`): their joints (2,048 chains of 8: 442 KB of float64) stay in the
#: CPU's cache from the copy to the check and the subtraction.
PACK_CHUNK_CHAINS = 2048


def pack_offsets(strands: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Each tip's offset from its chain's pivot, float64 rounded into ``out`` ((C·n, 3) float32,
    returned), of ``strands`` ((C, n + 1, 3) float64: per chain its pivot, then its tips)."""
    offsets = out.reshape(strands.shape[0], strands.shape[1] - 1, 3)
    for axis in range(3):  # float64, rounded into the float32 array: no temporary. By axis, numpy's
        # inner loop runs along the chain (n), not over the 3 coordinates: 1.5x faster
        np.subtract(strands[:, 1:, axis], strands[:, :1, axis], out=offsets[:, :, axis], casting="same_kind")
    return out


def checked_strands(name: str, value, chain_count: int, length: int) -> tuple:
    """``value`` ((C·(n + 1), 3) joint positions of C chains of ``length`` n segments, each
    chain's pivot then its tips) checked as :func:`~gpu_jiggle.sim.validation.coordinates`
    checks it, copied as float64, and each tip's offset from its pivot packed as
    :func:`pack_offsets` packs it: returns ``(joints, offsets)``, (J, 3) float64 and (C·n, 3)
    float32. One pass over the caller's array, :data:`PACK_CHUNK_CHAINS` chains at a time, in
    place of a copy, a check and a subtraction each going through all of it (at a million
    segments, 27 MB of float64 three times over: 24.3 → 18.2 ms for 125,000 chains of 8 on a
    2-core Xeon, the two taking turns). Nothing is kept when the check fails.

    Raises: what :func:`~gpu_jiggle.sim.validation.coordinates` raises (TypeError, ValueError
    naming the argument, index and value)."""
    given = validation.float_array(name, value, (chain_count * (length + 1), 3), finite=False, copy=False)
    joints = np.empty(given.shape)
    offsets = np.empty((chain_count * length, 3), np.float32)
    limit, inside = validation.COORDINATE_LIMIT, True
    rows = PACK_CHUNK_CHAINS * (length + 1)
    with np.errstate(invalid="ignore", over="ignore"):  # a bad coordinate is named below
        for start in range(0, len(joints), rows):
            chunk = joints[start:start + rows]
            np.copyto(chunk, given[start:start + rows])
            inside = inside and bool(chunk.min() >= -limit and chunk.max() <= limit)  # NaN fails
            first = start // (length + 1) * length
            pack_offsets(chunk.reshape(-1, length + 1, 3), offsets[first:first + len(chunk) // (length + 1) * length])
    if not inside:
        validation.coordinates(name, given)  # raises, naming the first bad entry
    return joints, offsets
