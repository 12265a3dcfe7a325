"""A pose with the springs' result in it: each spring-driven joint's local rotation replaced so
that its world rotation is its segment's (docs/SPEC.md section 9, "Joint frames"), shared by
:class:`~gpu_jiggle.character.pipeline.Pipeline` and :class:`~gpu_jiggle.character.crowd.Crowd`.
"""
from __future__ import annotations

import numpy as np

from . import quat


def posed_with_springs(rig, skeleton, pose, world_rotations, segment_rotations):
    """A copy of ``pose`` whose chain joints take the solver's segment rotations.

    Args:
        rig: the :class:`~gpu_jiggle.character.rig.model.Rig`. skeleton: its
            :class:`~gpu_jiggle.character.pose.skeleton.Skeleton`. pose: the pose the springs
            followed (local TRS). world_rotations: (N, 4) that pose's world rotations
            (x, y, z, w). segment_rotations: per rig chain, (segments, 4) world rotations from
            the solver (``segment_rotations()`` cut by chain). Leading batch axes (copies of
            the character, :class:`~gpu_jiggle.character.crowd.Crowd`) are kept: a pose of
            (B, N, 4) rotations with (B, N, 4) world rotations and (B, segments, 4) bends.

    A joint on a zero-length segment (``ChainSpec.springy`` False) keeps its local rotation:
    it is carried rigidly with its parent. Strands drive no joint.
    """
    final = pose.copy()
    for chain, bends in zip(rig.chains, segment_rotations):
        if chain.kind != "joints":
            continue
        parent = skeleton.parents[chain.nodes[0]]
        parent_world = quat.IDENTITY if parent < 0 else world_rotations[..., parent, :]
        bends = np.asarray(bends)
        springy = np.ones(len(chain.nodes), bool) if chain.springy is None else chain.springy
        k = 0
        for node, swings in zip(chain.nodes, springy):
            if not swings:
                parent_world = quat.multiply(parent_world, pose.rotation[..., node, :])
                continue
            new_world = quat.normalize(bends[..., k, :].astype(np.float64))  # world, the joint's twist kept
            k += 1
            final.rotation[..., node, :] = quat.local_from_world(parent_world, new_world, pose.rotation[..., node, :])
            parent_world = new_world
    return final
