"""Spring rigs for glTF characters, read from TOML and checked against the skeleton.

A rig names the spring chains by joint names, adds procedural strands parented to joints,
attaches colliders to joints and, optionally, IK constraints. ``load_rig(path, skeleton)``
returns a :class:`Rig`; :mod:`gpu_jiggle.character.pipeline` runs it. Lengths are in the model's
unit, times in seconds, frequencies in Hz, angles in degrees where the key ends in ``_deg``.

```toml
[solver]                      # optional
substep = 0.008333333         # fixed substep h in seconds (default 1/120)
max_substeps = 8              # per frame (default 8)
integrator = "semi-implicit"  # or "exact": the closed-form spring step, no stability bound (SPEC 1)

[wind]                        # optional: the wind every chain feels (SPEC 4.1), world space
direction = [1.0, 0.0, 0.0]   # where it blows to (default +x)
strength = 200.0              # steady acceleration along direction, length/s² (default 0)
gust_amplitude = 100.0        # gusts add this much, rising and falling (length/s², default 0)
gust_frequency = 0.5          # Hz
gust_wavelength = 300.0       # length: gusts travel along direction (default 0: everywhere at once)

[[chain]]                     # springs on skeleton joints
name = "tail"
# group = "tails"             # optional: chains tuned together (play's sliders, set_parameters(groups=True))
joints = ["b_Tail01_012", "b_Tail02_013", "b_Tail03_014"]  # pivot first, each the parent of the next
tip_length = 20.0             # the last joint's virtual tip (default: the previous segment's length)
tip_axis = [1.0, 0.0, 0.0]    # its direction in the last joint's space (default: the last joint's
                              # offset from its parent, i.e. the bone axis the chain runs along)
frequency = 3.0               # Hz: one value, one per segment (joints count segments: the tip adds one),
                              # or a curve along the chain: { root = 3.0, tip = 2.0 } (see below)
damping_ratio = 0.5           # one value, one per segment or a curve
gravity = [0.0, -980.0, 0.0]  # world, length/s² (default 0)
particle_radius = 2.0         # default 0 (this and the next two: also one per segment or a curve)
max_distance = 30.0           # how far a particle may leave its animated place (default: no limit)
air_drag = 0.5                # 1/s: damps motion in the world, as air does (default 0; damping_ratio
                              # damps motion relative to the animated pose, SPEC 4)
angle_limit_deg = 60.0        # each segment stays within this cone about its target direction
                              # (default: none; also one per segment or a curve)
# hinge_limit_deg = [-30.0, 45.0]   # or a hinge about limit_axis, least and greatest angle
# spherical_limit_deg = [20.0, 40.0] # or an elliptical cone: pitch (about limit_axis), yaw
# limit_axis = [1.0, 0.0, 0.0]      # in each base joint's space (these three: per chain, or a row per segment)
world_influence = 1.0         # [0, 1] (default 1)
colliders = ["body"]          # the colliders it collides with (default: all)

[[strands]]                   # procedural strands on a joint (ears, tufts, a mane)
name = "mane"
joint = "b_Neck_04"
count = 5                     # strands in this group
segments = 3                  # per strand
length = 10.0                 # per strand
root = [2.0, 4.0, 0.0]        # first root, in the joint's space
root_end = [14.0, 4.0, 0.0]   # optional: roots evenly spaced from root to root_end
direction = [0.0, 1.0, 0.0]   # rest direction, in the joint's space
spread_deg = 30.0             # directions fanned over this angle about fan_axis
fan_axis = [1.0, 0.0, 0.0]    # optional (default: root_end - root, else a perpendicular of direction)
draw = "ribbons"              # "lines" or "ribbons" (a hint for renderers)
width = 1.5                   # ribbon width
# and frequency, damping_ratio, gravity, particle_radius, max_distance, air_drag, angle_limit_deg,
# world_influence, colliders

[[collider]]
name = "body"
joint = "b_Spine01_02"
shape = "capsule"             # or "sphere", or "plane"
offset = [0.0, 0.0, 0.0]      # centre (sphere), first end (capsule) or a point (plane), in the joint's space
end = [20.0, 0.0, 0.0]        # capsule only: second end, in the joint's space
# normal = [0.0, 1.0, 0.0]    # plane only: its normal in the joint's space; particles stay on its side
radius = 9.0
inside = false                # true: keeps particles inside it (a skirt's cage; default false)

[[look_at]]                   # a constraint: turn a joint toward a (moving) world point
joint = "b_Head_05"
aim_axis = [1.0, 0.0, 0.0]    # the looking direction in the joint's space
target = [0.0, 60.0, 120.0]   # world
sweep = [80.0, 0.0, 0.0]      # the target moves by sweep·sin(2π·sweep_hz·t)
sweep_hz = 0.5
max_angle_deg = 80.0
weight = 1.0
enabled = true                # false keeps it in the file but off by default

[[two_bone_ik]]               # a constraint: reach a (moving) world point with a limb
root = "b_LeftLeg01_015"
mid = "b_LeftLeg02_016"
end = "b_LeftFoot01_017"
target = [...]; sweep = [...]; sweep_hz = ...; pole = [...] (optional, world); enabled = true
```

The per-segment values (``frequency``, ``damping_ratio``, ``particle_radius``,
``max_distance``, ``air_drag``, ``angle_limit_deg``, of chains and strands alike) take one number, a list of one
number per segment, or a curve over the normalised depth along the chain
(:mod:`gpu_jiggle.character.rig.curves`)::

    frequency = { root = 6.0, tip = 3.0 }                    # curve = "linear", the default
    frequency = { root = 6.0, tip = 3.0, curve = "smooth" }  # smoothstep
    frequency = { root = 6.0, tip = 3.0, curve = [[0.0, 0.0], [0.5, 0.8], [1.0, 1.0]] }

Segment i of n has depth ``s = i/(n − 1)`` (0 at the first segment, 1 at the last; a chain of
one segment has depth 0) and the value ``root + w·(tip − root)``, where the weight ``w`` is
``s`` (``"linear"``), ``3s² − 2s³`` (``"smooth"``), or piecewise linear in ``s`` through the
``[depth, weight]`` points of a list (at least two; depths finite, strictly increasing, the
first 0 and the last 1; weights finite, 0 meaning root and 1 tip). A linear curve from 6 to
3 Hz over 4 segments gives 6, 5, 4, 3. A joint chain's depths count its joints as listed
(as its lists do, zero-length segments included). ``Pipeline.set_parameters`` takes curves
too, as dicts (``frequency={"root": 6.0, "tip": 3.0}``), over the segments the chain swings.
The values a curve gives are checked as a list's are, a refusal naming the segment
(``frequency[3] = 0.0``).

A chain segment whose two joints lie at one place in the rest pose (a zero-length bone) has
no direction to swing: it is carried rigidly with its parent (``ChainSpec.springy``), the
loader saying so once in a logged warning, and its per-segment values are dropped.

Errors are :class:`RigError` s (``ValueError``) that name the rig file, the table
(``chain 'tail'``) and the key: a chain whose joints all lie at one place; unknown keys; values of the wrong type (a string for a
number, a table that is not one); unknown joints (listing the skeleton's joints); joints
that are not parent and child; a joint repeated in a chain (a cycle) or used by two chains;
integers beyond their bounds and numbers beyond float32 range; bad curves (unknown keys or
curve names, with the closest valid one, a missing root or tip, non-numbers, bools, NaN or
inf, points that are malformed, outside [0, 1], not strictly increasing, fewer than two, or
not from 0 to 1); and the numbers of SPEC
section 7 (f > 0, ζ ≥ 0, ρ ≥ 0, D > 0, w in [0, 1], finite values, and f/ζ stable for the
substep, with the largest stable f in the message). The spring values of all chains become
one :class:`~gpu_jiggle.PointChainSet` (``rig.chain_set``, gravity per chain), validated
once, at load; the pipeline runs it in one solver.

Bounds on what a small file may ask for: ``max_substeps`` ≤
:data:`gpu_jiggle.sim.clock.MAX_SUBSTEPS`, at most :data:`MAX_COLLIDERS` colliders in at most
:data:`MAX_COLLIDER_GROUPS` sets of chains that use them, and at
most :data:`MAX_RIG_SEGMENTS` segments over all chains and strands.
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

    The spring values are read from the rig's chain set (one store, changed by
    ``Pipeline.set_parameters``): ``frequency``, ``damping_ratio``, ``particle_radius``,
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
    """A checked rig (see the module docstring).

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
