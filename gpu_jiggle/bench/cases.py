"""The benchmark's cases: which chains, how many, how many substeps a frame, which features.

A case is one point of the grid that ``gpu-jiggle bench`` measures: a chain kind, a total
segment count, a chain length, substeps per frame and the model's features. Each case builds
its chain set, a few poses to cycle through (the pose changes every frame, so the upload is
part of the cost, as in a game) and the per-frame inputs (colliders, wind) a solver of it
gets. The same case feeds the GPU path, the numpy path and the peers.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..sim import AngleChainSet, PointChainSet

#: The solver's substep h in every case (s): a frame of n substeps is ``n·h`` long.
SUBSTEP = 1.0 / 120.0
#: The model's features: ``"v2"`` (the defaults: C1 target path, damping relative to the
#: target, air drag, wind; point chains also collide with spheres and capsules) or ``"v1"``
#: (linear target path, world damping, no air drag, no wind, no colliders); and, each on the
#: v2 defaults, ``"none"`` (no air drag, wind, colliders or limits), ``"wind"`` (air drag and
#: wind alone), ``"limits"`` (an angle limit on every segment, and for point chains a max
#: distance, alone) and ``"all"`` (v2 with the limits).
FEATURES = ("v2", "v1", "none", "wind", "limits", "all")
#: What ``gpu-jiggle bench`` times without ``--features``.
DEFAULT_FEATURES = ("v2", "v1")
#: Features with colliders (point chains) and with wind and air drag.
COLLIDING = ("v2", "all")
WINDY = ("v2", "wind", "all")
LIMITED = ("limits", "all")
#: Poses a case cycles through.
POSE_COUNT = 2
#: The most colliders a case takes (``--colliders``), as many as a rig may have
#: (:data:`gpu_jiggle.character.rig.model.MAX_COLLIDERS`).
MAX_COLLIDERS = 1024

#: The full grid (the issue's): total segments, segments per chain, substeps per frame.
FULL_SIZES = (1_000, 10_000, 100_000, 1_000_000, 4_000_000)
FULL_CHAIN_LENGTHS = (8, 32)
FULL_SUBSTEPS = (2, 8)
#: ``--quick``: small enough for a smoke test (seconds on llvmpipe).
QUICK_SIZES = (1_000, 10_000)


@dataclass(frozen=True)
class BenchCase:
    """One point of the grid.

    kind: ``"angle"`` or ``"point"``. segments: total segments S (rounded down to whole chains).
    chain_length: segments per chain. substeps: substeps per frame (the frame is
    ``substeps·SUBSTEP`` s). features: one of :data:`FEATURES`. colliders: point chains with
    features of :data:`COLLIDING`: how many colliders, spheres and capsules alternating (0 for
    none).
    work_group_size: chains per compute work group on the GPU path (None: the solver's default).
    """

    kind: str
    segments: int
    chain_length: int
    substeps: int
    features: str = "v2"
    colliders: int = 2
    work_group_size: int | None = None

    @property
    def chains(self) -> int:
        return max(1, self.segments // self.chain_length)

    @property
    def segment_count(self) -> int:
        """The segments actually simulated (whole chains)."""
        return self.chains * self.chain_length

    @property
    def joint_count(self) -> int:
        return self.segment_count + self.chains

    @property
    def frame_seconds(self) -> float:
        return self.substeps * SUBSTEP

    @property
    def collider_count(self) -> int:
        return self.colliders if (self.kind == "point" and self.features in COLLIDING) else 0

    @property
    def label(self) -> str:
        extra = f", {self.collider_count} colliders" if self.collider_count else ""
        if self.kind == "point" and self.features in COLLIDING and not self.collider_count:
            extra = ", no colliders"
        return (f"{self.kind} {self.segment_count:,} segs ({self.chains:,}×{self.chain_length}), "
                f"{self.substeps} substeps, {self.features}{extra}")

    def solver_options(self) -> dict:
        """The Solver keyword arguments of this case's features (and work-group size)."""
        options = {"work_group_size": self.work_group_size} if self.work_group_size else {}
        if self.features == "v1":
            options.update(target_path="linear", damping_frame="world")
        return options

    def chain_set(self, rng):
        """This case's AngleChainSet or PointChainSet: frequencies spread over 1-5 Hz, ζ 0.4-0.5;
        limits (:data:`LIMITED`): a cone of 0.6 rad on every segment (far from the poses'
        bends, so the limit's test runs and its push seldom) and, point chains, a max distance
        of 0.05."""
        c, n = self.chains, self.chain_length
        drag = 0.5 if self.features in WINDY else 0.0
        limit = 0.6 if self.features in LIMITED else np.inf
        if self.kind == "angle":
            return AngleChainSet(np.full(c, n), 0.1, rng.uniform(1, 5, c), 0.4, inertia=1.0, gravity=(0, -9.8),
                                 air_drag=drag, angle_limit=limit)
        return PointChainSet(np.full(c, n), rng.uniform(1, 5, c), 0.5, rest_lengths=0.02, particle_radius=0.002,
                             gravity=(0, -9.8, 0), air_drag=drag, angle_limit=limit,
                             max_distance=0.05 if self.features in LIMITED else np.inf)

    def poses(self, rng) -> list:
        """:data:`POSE_COUNT` keyword sets for ``set_pose``: the bodies sway between them."""
        c, n = self.chains, self.chain_length
        if self.kind == "angle":
            roots = rng.normal(size=(c, 2))
            headings = rng.uniform(-3, 3, c)
            return [dict(root_position=roots + [0.05 * k, 0.0], root_angle=headings + 0.2 * k,
                         local_angle=rng.uniform(-0.3, 0.3, self.segment_count)) for k in range(POSE_COUNT)]
        i = np.arange(c)
        side = int(np.ceil(np.sqrt(c)))
        pivots = np.stack([(i % side) * 0.01, np.zeros(c), (i // side) * 0.01], 1)
        strand = np.stack([np.zeros(n + 1), -0.02 * np.arange(n + 1), np.zeros(n + 1)], 1)
        rest = (pivots[:, None, :] + strand[None]).reshape(-1, 3)
        return [dict(joint_positions=rest + [0.05 * np.sin(k), 0.0, 0.02 * k]) for k in range(POSE_COUNT)]

    def prepare(self, solver) -> None:
        """Give a solver this case's per-frame inputs that stay: wind (:data:`WINDY`) and
        colliders (:data:`COLLIDING`)."""
        if self.features in WINDY:
            if self.kind == "angle":
                solver.set_wind((0.5, 0.0), 1.0, (2.0, 1.0), 0.7)
            else:
                solver.set_wind((0.5, 0, 0), 1.0, (2.0, 0, 1.0), 0.7)
        if self.collider_count:
            solver.set_colliders(**self.colliders_given())

    def colliders_given(self) -> dict:
        """The ``set_colliders`` arguments of a point case: spheres and capsules alternating,
        over the grid of pivots (the strands hang 0.02·n below them)."""
        k = self.collider_count
        spheres = [[1.5 - 0.4 * j, -0.1, 1.0, 0.3] for j in range(0, k, 2)]
        capsules = [[0, -0.15 - 0.02 * j, 0, 3, -0.15, 3, 0.05] for j in range(1, k, 2)]
        return {"spheres": spheres or None, "capsules": capsules or None}

    def near_fraction(self, rng) -> float | None:
        """The fraction of chains that a collider can touch in the first pose: the ball about
        its pivot holding the chain (its rest lengths and particle radius) meets a collider.
        None without colliders."""
        if not self.collider_count:
            return None
        pivots = self.poses(rng)[0]["joint_positions"][::self.chain_length + 1]
        reach = 0.02 * self.chain_length + 0.002
        given = self.colliders_given()
        near = np.zeros(len(pivots), bool)
        for x, y, z, r in given["spheres"] or ():
            near |= np.linalg.norm(pivots - [x, y, z], axis=1) <= r + reach
        for row in given["capsules"] or ():
            a, b, r = np.array(row[:3]), np.array(row[3:6]), row[6]
            f = np.clip((pivots - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0)
            near |= np.linalg.norm(pivots - (a + f[:, None] * (b - a)), axis=1) <= r + reach
        return float(near.mean())


def grid(kinds=("angle", "point"), sizes=FULL_SIZES, chain_lengths=FULL_CHAIN_LENGTHS, substeps=FULL_SUBSTEPS,
         features=DEFAULT_FEATURES, colliders=(2,)) -> list:
    """Every combination (``colliders``: the counts each point case with colliders takes in
    turn), smallest first within each kind (so a run that is stopped early has measured the
    small sizes of everything)."""
    cases = {BenchCase(kind, size, length, n, feature, count if kind == "point" and feature in COLLIDING else 2)
             for kind, length, n, feature, size, count in itertools.product(kinds, chain_lengths, substeps, features,
                                                                            sizes, colliders)
             if size >= length}
    return sorted(cases, key=lambda case: (case.segments, case.kind, case.chain_length, case.substeps,
                                           FEATURES.index(case.features), case.collider_count))


def quick_grid(kinds=("angle", "point"), features=DEFAULT_FEATURES, colliders=(2,)) -> list:
    """``--quick``: 1k and 10k segments, chains of 8, 2 substeps (by default both kinds, v2 and v1)."""
    return grid(kinds=kinds, sizes=QUICK_SIZES, chain_lengths=(8,), substeps=(2,), features=features,
                colliders=colliders)
