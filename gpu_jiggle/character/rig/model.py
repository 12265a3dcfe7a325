"""The checked rig's data classes and the bounds on what a rig file may ask for.

A rig names spring chains by joint, adds procedural strands parented to joints, attaches
colliders to joints and, optionally, IK constraints (the format, with every key, default and
refusal: docs/RIG.md). :func:`~gpu_jiggle.character.rig.reader.load_rig` reads a TOML file
into a :class:`Rig` of :class:`ChainSpec` s and the collider, wind and constraint specs
(:mod:`.specs`), with every chain's springs in one :class:`~gpu_jiggle.PointChainSet`;
:mod:`gpu_jiggle.character.pipeline` runs it. A bad rig is a :class:`RigError`. The bounds:
:data:`MAX_COLLIDERS`, :data:`MAX_COLLIDER_GROUPS`, :data:`MAX_RIG_SEGMENTS` (and
``max_substeps`` ≤ :data:`gpu_jiggle.sim.clock.MAX_SUBSTEPS`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ...sim import validation
from ...sim.chains import PointChainSet
from .live import LIVE_PARAMETERS  # noqa: F401  (re-exported)
from .specs import ColliderShapes, ColliderSpec, LookAtSpec, TwoBoneIKSpec, WindSpec  # noqa: F401  (re-exported)

#: The most colliders a rig may attach.
MAX_COLLIDERS = 1024
#: The most collider groups (bits of a chain's 32-bit mask): colliders the same chains use share one.
MAX_COLLIDER_GROUPS = 32
#: The most segments over all of a rig's chains and strands (raise it for a bigger rig).
MAX_RIG_SEGMENTS = 1_000_000


class RigError(ValueError):
    """A rig that cannot run on this skeleton (a ``ValueError`` naming file, table and key)."""


@dataclass
class ChainSpec:
    """One spring chain as the solver sees it: a pivot and ``segments`` particles.

    Attributes:
        name: str (``"tail"``, or ``"mane[2]"`` for the third strand of a group).
        kind: ``"joints"`` (skeleton joints, rotations written back) or ``"strand"``.
        nodes: joints: (n,) node indices, pivot first; strands: (1,) the parent joint.
        segments: number of segments the springs swing (joints: n, the last one ending at
            the virtual tip, less the zero-length ones, see ``springy``).
        local_points: strands: (segments + 1, 3) rest points in the parent joint's space;
            joints: (1, 3) the virtual tip in the last joint's space.
        springy: joints: (n,) bool, False where the segment to the next joint has zero
            length: carried rigidly (animated local rotation kept), not in the solver's
            chain. None: all swing (strands).
        group: the strand group's name (strands), or the chain's ``group`` (default its name).
        draw, width: drawing hints for strands.
        index: the chain's index in ``rig.chain_set`` (and in ``rig.chains``).

    The spring values are read from its rig's chain set (one store; a pipeline's own copy
    of the rig takes its live changes, ``Pipeline.set_parameters``): ``frequency``, ``damping_ratio``, ``particle_radius``,
    ``max_distance``, ``air_drag`` ((segments,) float64), ``gravity`` ((3,) float64, world),
    ``world_influence`` (float) and ``collider_mask`` (int, 32 bits).
    """

    name: str
    kind: str
    nodes: np.ndarray
    segments: int
    local_points: np.ndarray
    group: str = ""
    draw: str = "lines"
    width: float = 1.0
    index: int = 0
    rig: "Rig" = field(default=None, repr=False, compare=False)
    springy: np.ndarray | None = None

    @property
    def driven_nodes(self) -> np.ndarray:
        """The nodes whose rotations the springs drive, one per segment (strands: none)."""
        if self.kind != "joints":
            return np.zeros(0, np.int64)
        return self.nodes if self.springy is None else self.nodes[self.springy]

    def _segments(self, name):
        cs = self.rig.chain_set
        first = int(cs.first_segment[self.index])
        return np.array(getattr(cs, name)[first:first + self.segments])

    frequency = property(lambda self: self._segments("frequency"))
    damping_ratio = property(lambda self: self._segments("damping_ratio"))
    particle_radius = property(lambda self: self._segments("particle_radius"))
    max_distance = property(lambda self: self._segments("max_distance"))
    air_drag = property(lambda self: self._segments("air_drag"))
    gravity = property(lambda self: np.array(self.rig.chain_set.gravity[self.index]))
    world_influence = property(lambda self: float(self.rig.chain_set.world_influence[self.index]))
    collider_mask = property(lambda self: int(self.rig.chain_set.collider_mask[self.index]))

@dataclass
class Rig:
    """A checked rig (the format: docs/RIG.md).

    Attributes:
        source: where it came from (a path or ``"<dict>"``).
        substep, max_substeps: the solver's clock. integrator: ``"semi-implicit"`` or
            ``"exact"`` (SPEC 1).
        chains: list of :class:`ChainSpec` (joint chains first, in file order, then strands).
        chain_set: the :class:`~gpu_jiggle.PointChainSet` of every chain's springs, in the
            order of ``chains`` (gravity per chain).
        colliders: list of :class:`ColliderSpec`.
        constraints: list of :class:`LookAtSpec` / :class:`TwoBoneIKSpec`, in file order.
        wind: the ``[wind]`` table (:class:`WindSpec`), or None for no wind.
    """

    source: str
    substep: float
    max_substeps: int
    chains: list = field(default_factory=list)
    chain_set: PointChainSet = None
    colliders: list = field(default_factory=list)
    constraints: list = field(default_factory=list)
    integrator: str = "semi-implicit"
    wind: WindSpec | None = None

    @property
    def joint_chains(self):
        return [c for c in self.chains if c.kind == "joints"]

    @property
    def strand_chains(self):
        return [c for c in self.chains if c.kind == "strand"]

    @property
    def chain_joints(self) -> list[int]:
        """Node indices whose rotations the springs drive (a joint on a zero-length segment,
        carried rigidly, is not one)."""
        return [int(n) for c in self.joint_chains for n in c.driven_nodes]

    def enabled_constraints(self):
        return [c for c in self.constraints if c.enabled]

    def chain_indices(self, name: str, groups: bool = False) -> list[int]:
        """Indices into ``chains`` of the chain ``name`` (with ``groups``: also every strand
        of the strand group of that name).

        Raises: ValueError naming the closest chain (or group), or else the rig's chains, when there is none."""
        found = [i for i, c in enumerate(self.chains) if c.name == name or (groups and c.group == name)]
        if not found:
            names = list(dict.fromkeys([n for c in self.chains for n in ((c.group, c.name) if groups else (c.name,))]))
            raise ValueError(f"chain_name = {name!r}: no such chain{' or strand group' if groups else ''} in the "
                             f"rig{validation.name_hint(name, names, 'it has:')}")
        return found

    # -- on a pose -------------------------------------------------------------------------
    def chain_targets(self, world) -> list:
        """Each rig chain's joints in world space (pivot first) from node world matrices:
        the spring-driven skeleton joints plus the virtual tip, or a strand's rest points on
        its joint. ``world`` (N, 4, 4), or (B, N, 4, 4) for B copies: (B, n + 1, 3) each."""
        out = []
        for c in self.chains:
            if c.kind == "joints":
                pts = world[..., c.driven_nodes, :, :][..., :3, 3]
                tip = world[..., c.nodes[-1], :, :] @ np.append(c.local_points[0], 1.0)
                out.append(np.concatenate([pts, tip[..., None, :3]], axis=-2))
            else:
                m = world[..., c.nodes[0], :, :]
                out.append(c.local_points @ np.swapaxes(m[..., :3, :3], -1, -2) + m[..., None, :3, 3])
        return out

    def chain_rotations(self, world_rotations) -> list:
        """Each rig chain's joint rotations (world quaternions (x, y, z, w), float64), in the
        order of :meth:`chain_targets`: a skeleton chain's driven joints' and, for its virtual
        tip, the last joint's; every point of a strand its joint's. ``world_rotations``: (N, 4),
        ``Skeleton.world_rotations`` (or (B, N, 4) for B copies)."""
        out = []
        for c in self.chains:
            if c.kind == "joints":
                out.append(np.concatenate([world_rotations[..., c.driven_nodes, :],
                                           world_rotations[..., c.nodes[-1], None, :]], axis=-2))
            else:
                q = world_rotations[..., c.nodes[0], None, :]
                out.append(np.repeat(q, len(c.local_points), axis=-2))
        return out

    def collider_shapes(self, world) -> ColliderShapes:
        """The rig's colliders placed on their joints' world matrices (a sphere's or capsule's
        radius scaled by the joint's mean scale; a plane's normal by the inverse transpose)."""
        spheres, sphere_names, capsules, capsule_names, planes, plane_names = [], [], [], [], [], []
        for c in self.colliders:
            m = world[c.node]
            scale = float(np.mean(np.linalg.norm(m[:3, :3], axis=0)))
            a = m[:3, :3] @ c.offset + m[:3, 3]
            if c.shape == "sphere":
                spheres.append([*a, c.radius * scale])
                sphere_names.append(c.name)
            elif c.shape == "plane":
                n = np.linalg.solve(m[:3, :3].T, c.normal)
                n = n / np.linalg.norm(n)
                planes.append([*n, float(n @ a)])
                plane_names.append(c.name)
            else:
                b = m[:3, :3] @ c.end + m[:3, 3]
                capsules.append([*a, *b, c.radius * scale])
                capsule_names.append(c.name)
        return ColliderShapes(np.asarray(spheres, np.float64).reshape(-1, 4), sphere_names,
                              np.asarray(capsules, np.float64).reshape(-1, 7), capsule_names,
                              np.asarray(planes, np.float64).reshape(-1, 4), plane_names)

    def collider_groups(self) -> dict:
        """Collider name → its collider group (0..31)."""
        return {c.name: c.group for c in self.colliders}

    def collider_inside(self) -> dict:
        """Collider name → whether it keeps particles inside it."""
        return {c.name: c.inside for c in self.colliders}

    # -- live changes ------------------------------------------------------------------------
    def copy(self) -> "Rig":
        """A copy to play and change live (a pipeline's own rig): its own lists of chains
        (pointing back to the copy), colliders and constraints; the chain set, the wind and
        each spec are values, replaced rather than changed, so they are shared until then."""
        new = dataclasses.replace(self, chains=[], colliders=list(self.colliders),
                                  constraints=list(self.constraints))
        new.chains = [dataclasses.replace(c, rig=new) for c in self.chains]
        return new

    def refusal(self, exc) -> str:
        """Words for the chain set's refusal ``exc`` (an InputError), naming the chain and the
        index within it: ``"tail: frequency[2] = 80.0 Hz ... is unstable ..."``."""
        chain, local = self.chain_set.locate(exc.argument, exc.index)
        return f"{self.chains[chain].name}: {exc.describe('' if local is None else f'[{local}]')}"
