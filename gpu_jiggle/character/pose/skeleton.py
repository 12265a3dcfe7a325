"""The node hierarchy of a glTF scene and its poses.

A :class:`Skeleton` holds every node of the file (joints and others) with its parent and its
rest transform; a :class:`Pose` is one local translation/rotation/scale per node. World
matrices follow glTF: ``world(node) = world(parent) · T · R · S``.

Shapes: N nodes; translations (N, 3) float64 in the model's length unit; rotations (N, 4)
float64 unit quaternions (x, y, z, w); scales (N, 3) float64; matrices (N, 4, 4) float64.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...sim.validation import unknown_name
from . import quat


@dataclass
class Pose:
    """Local transforms of every node of a :class:`Skeleton` (each relative to its parent).

    Attributes:
        translation: (N, 3) float64, length unit.
        rotation: (N, 4) float64 unit quaternions (x, y, z, w).
        scale: (N, 3) float64.
    """

    translation: np.ndarray
    rotation: np.ndarray
    scale: np.ndarray

    def copy(self) -> "Pose":
        return Pose(self.translation.copy(), self.rotation.copy(), self.scale.copy())


class Skeleton:
    """The scene's nodes: names, parents, rest transforms and a parent-first order.

    Args:
        names: (N,) node names (unnamed nodes get ``"node<i>"``).
        parents: (N,) int, the parent node of each, -1 for a root.
        rest: the nodes' own transforms in the file (a node given by ``matrix`` is
            decomposed into T, R, S).

    Raises:
        ValueError: a parent index out of range, or a cycle (naming the node).
    """

    def __init__(self, names, parents, rest: Pose):
        self.names = list(names)
        self.parents = np.asarray(parents, np.int64)
        n = len(self.names)
        if self.parents.shape != (n,):
            raise ValueError(f"parents: expected shape ({n},), got {self.parents.shape}")
        bad = (self.parents < -1) | (self.parents >= n)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"node {i} ({self.names[i]!r}) has parent {int(self.parents[i])}, "
                             f"which is not a node index (0..{n - 1})")
        self.rest = rest
        self.order, depth = self._parent_first_order()
        # the nodes of each depth, roots first: a level's world transforms are its parents' (the
        # level before) times its locals, one batched product per level
        self._levels = np.split(self.order, np.cumsum(np.bincount(depth, minlength=1))[:-1]) if len(depth) else []
        self._index = {}
        for i, name in enumerate(self.names):
            self._index.setdefault(name, i)

    def _parent_first_order(self):
        """(node indices sorted by depth (stable), (N,) each node's depth). Each node is walked up to a node of known
        depth once, so this is linear in the node count; a node met twice on one walk is a
        cycle."""
        n = len(self.names)
        parents = self.parents.tolist()
        depth = [-1] * n
        walked_from = [-1] * n
        for start in range(n):
            path = []
            i = start
            while i != -1 and depth[i] < 0:
                if walked_from[i] == start:
                    raise ValueError(f"node {i} ({self.names[i]!r}) is its own ancestor: the node "
                                     f"hierarchy has a cycle")
                walked_from[i] = start
                path.append(i)
                i = parents[i]
            d = -1 if i == -1 else depth[i]
            for j in reversed(path):
                d += 1
                depth[j] = d
        depth = np.asarray(depth, np.int64)
        return np.argsort(depth, kind="stable"), depth

    @property
    def node_count(self) -> int:
        return len(self.names)

    def index(self, name: str, what: str = "joint") -> int:
        """The node index of ``name``; ValueError naming the closest node when there is none
        (or, when none is close, listing the nodes)."""
        if name in self._index:
            return self._index[name]
        raise ValueError(unknown_name(what, name, self.names, listing="the skeleton's nodes are:"))

    def children(self, node: int) -> list[int]:
        return [int(i) for i in np.flatnonzero(self.parents == node)]

    def rest_pose(self) -> Pose:
        """A copy of the rest transforms."""
        return self.rest.copy()

    def local_matrices(self, pose: Pose) -> np.ndarray:
        """(N, 4, 4) float64 local matrices T·R·S."""
        return quat.compose(pose.translation, pose.rotation, pose.scale)

    def world_matrices(self, pose: Pose) -> np.ndarray:
        """(N, 4, 4) float64 world matrices of every node (a pose whose arrays have leading
        batch axes, (..., N, 3) and so on, gives (..., N, 4, 4))."""
        local = self.local_matrices(pose)
        world = np.empty_like(local)
        for d, level in enumerate(self._levels):
            world[..., level, :, :] = local[..., level, :, :] if d == 0 else \
                world[..., self.parents[level], :, :] @ local[..., level, :, :]
        return world

    def world_rotations(self, pose: Pose) -> np.ndarray:
        """(N, 4) float64 world rotations as the product of local rotations root to node
        (exact for uniform positive scales, which is what skeletons use); batched as
        :meth:`world_matrices`."""
        world = np.empty_like(pose.rotation)
        for d, level in enumerate(self._levels):
            world[..., level, :] = pose.rotation[..., level, :] if d == 0 else \
                quat.multiply(world[..., self.parents[level], :], pose.rotation[..., level, :])
        return world

    def __repr__(self):
        return f"Skeleton(nodes={self.node_count})"
