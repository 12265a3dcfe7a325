"""Spring rigs for glTF characters, read from TOML and checked against the skeleton.

A rig names the spring chains by joint names, adds procedural strands parented to joints,
attaches colliders to joints and, optionally, IK constraints. ``load_rig(path, skeleton)``
returns a :class:`Rig`; :mod:`gpu_jiggle.character.pipeline` runs it. Lengths are in the model's
unit, times in seconds, frequencies in Hz, angles in degrees where the key ends in ``_deg``.

```toml
[solver]                      # optional
substep = 0.008333333         # fixed substep h in seconds (default 1/120)
max_substeps = 8              # per frame (default 8)

[[chain]]                     # springs on skeleton joints
name = "tail"
joints = ["b_Tail01_012", "b_Tail02_013", "b_Tail03_014"]  # pivot first, each the parent of the next
tip_length = 20.0             # the last joint's virtual tip (default: the previous segment's length)
tip_axis = [1.0, 0.0, 0.0]    # its direction in the last joint's space (default: the last joint's
                              # offset from its parent, i.e. the bone axis the chain runs along)
frequency = 3.0               # Hz: one value, or one per segment (joints count segments: the tip adds one)
damping_ratio = 0.5           # one value or one per segment
gravity = [0.0, -980.0, 0.0]  # world, length/s² (default 0)
particle_radius = 2.0         # default 0
max_distance = 30.0           # how far a particle may leave its animated place (default: no limit)
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
# and frequency, damping_ratio, gravity, particle_radius, max_distance, world_influence, colliders

[[collider]]
name = "body"
joint = "b_Spine01_02"
shape = "capsule"             # or "sphere"
offset = [0.0, 0.0, 0.0]      # centre (sphere) or first end (capsule), in the joint's space
end = [20.0, 0.0, 0.0]        # capsule only: second end, in the joint's space
radius = 9.0

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

Errors are ``ValueError`` s that name the rig file, the table (``chain 'tail'``) and the key:
unknown keys; unknown joints (listing the skeleton's joints); joints that are not parent
and child; a joint repeated in a chain (a cycle) or used by two chains; and the numbers of
SPEC section 7 (f > 0, ζ ≥ 0, ρ ≥ 0, D > 0, w in [0, 1], finite values, and f/ζ stable
for the substep, with the largest stable f in the message).
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import quat
from ..sim.chains import PointChainSet
from .skeleton import Skeleton
from ..sim.spring import is_stable, stable_frequency

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SPRING_KEYS = ("frequency", "damping_ratio", "gravity", "particle_radius", "max_distance", "world_influence",
               "colliders")
CHAIN_KEYS = ("name", "joints", "tip_length", "tip_axis") + SPRING_KEYS
STRAND_KEYS = ("name", "joint", "count", "segments", "length", "root", "root_end", "direction", "spread_deg",
               "fan_axis", "draw", "width") + SPRING_KEYS
COLLIDER_KEYS = ("name", "joint", "shape", "offset", "end", "radius")
LOOK_AT_KEYS = ("name", "joint", "aim_axis", "target", "sweep", "sweep_hz", "max_angle_deg", "weight", "enabled")
TWO_BONE_KEYS = ("name", "root", "mid", "end", "target", "sweep", "sweep_hz", "pole", "enabled")
SOLVER_KEYS = ("substep", "max_substeps")
TOP_KEYS = ("solver", "chain", "strands", "collider", "look_at", "two_bone_ik")
DRAW_STYLES = ("lines", "ribbons")
MAX_COLLIDERS = 32


class RigError(ValueError):
    """A rig that cannot run on this skeleton (a ``ValueError`` naming file, table and key)."""


@dataclass
class ChainSpec:
    """One spring chain as the solver sees it: a pivot and ``segments`` particles.

    Attributes:
        name: str (``"tail"``, or ``"mane[2]"`` for the third strand of a group).
        kind: ``"joints"`` (skeleton joints, rotations written back) or ``"strand"``.
        nodes: joints: (n,) node indices, pivot first; strands: (1,) the parent joint.
        segments: number of segments (joints: n, the last one ending at the virtual tip).
        local_points: strands: (segments + 1, 3) rest points in the parent joint's space;
            joints: (1, 3) the virtual tip in the last joint's space.
        frequency, damping_ratio, particle_radius, max_distance: (segments,) float64.
        gravity: (3,) float64 world. world_influence: float. collider_mask: int (32 bits).
        group: the strand group's name (strands), else the chain's name.
        draw, width: drawing hints for strands.
    """

    name: str
    kind: str
    nodes: np.ndarray
    segments: int
    local_points: np.ndarray
    frequency: np.ndarray
    damping_ratio: np.ndarray
    particle_radius: np.ndarray
    max_distance: np.ndarray
    gravity: np.ndarray
    world_influence: float
    collider_mask: int
    group: str = ""
    draw: str = "lines"
    width: float = 1.0


@dataclass
class ColliderSpec:
    """A sphere or capsule attached to a joint: ``offset`` (and ``end``, capsules) (3,) in
    the joint's space, ``radius`` in world length units, ``group`` its collider group."""

    name: str
    node: int
    shape: str
    offset: np.ndarray
    end: np.ndarray
    radius: float
    group: int


class _MovingTarget:
    """What the constraints share: a world target that sweeps, ``target + sweep·sin(2π·
    sweep_hz·t)``, or ``target_fn(t)`` when that is set (attributes of the dataclasses below)."""

    def target_at(self, t: float) -> np.ndarray:
        """(3,) world target at playing time t: ``target_fn(t)`` when set, else the sweep."""
        if self.target_fn is not None:
            return np.asarray(self.target_fn(t), np.float64)
        return self.target + self.sweep * math.sin(2.0 * math.pi * self.sweep_hz * t)


@dataclass
class LookAtSpec(_MovingTarget):
    """Turn ``node`` so that its local ``aim_axis`` points at ``target + sweep·sin(2π·sweep_hz·t)``
    (or at ``target_fn(t)``, a callable returning a (3,) world point), by at most
    ``max_angle`` radians, blended by ``weight``."""

    name: str
    node: int
    aim_axis: np.ndarray
    target: np.ndarray
    sweep: np.ndarray
    sweep_hz: float
    max_angle: float
    weight: float
    enabled: bool = True
    target_fn: object = None


@dataclass
class TwoBoneIKSpec(_MovingTarget):
    """Reach ``target + sweep·sin(2π·sweep_hz·t)`` (or ``target_fn(t)``) with the limb
    root → mid → end (node indices), the mid joint bending toward ``pole`` (world) if given."""

    name: str
    root: int
    mid: int
    end: int
    target: np.ndarray
    sweep: np.ndarray
    sweep_hz: float
    pole: np.ndarray | None
    enabled: bool = True
    target_fn: object = None


@dataclass
class Rig:
    """A checked rig (see the module docstring).

    Attributes:
        source: where it came from (a path or ``"<dict>"``).
        substep, max_substeps: the solver's clock.
        chains: list of :class:`ChainSpec` (joint chains first, in file order, then strands).
        colliders: list of :class:`ColliderSpec`.
        constraints: list of :class:`LookAtSpec` / :class:`TwoBoneIKSpec`, in file order.
    """

    source: str
    substep: float
    max_substeps: int
    chains: list = field(default_factory=list)
    colliders: list = field(default_factory=list)
    constraints: list = field(default_factory=list)

    @property
    def joint_chains(self):
        return [c for c in self.chains if c.kind == "joints"]

    @property
    def strand_chains(self):
        return [c for c in self.chains if c.kind == "strand"]

    @property
    def chain_joints(self) -> list[int]:
        """Node indices whose rotations the springs drive."""
        return [int(n) for c in self.joint_chains for n in c.nodes]

    def enabled_constraints(self):
        return [c for c in self.constraints if c.enabled]

    def solver_groups(self):
        """Chains grouped by gravity (the solver's gravity is one vector per solver):
        a list of ``(PointChainSet, chain indices)``."""
        groups = {}
        for i, c in enumerate(self.chains):
            groups.setdefault(tuple(c.gravity.tolist()), []).append(i)
        out = []
        for gravity, members in groups.items():
            cs = [self.chains[i] for i in members]
            out.append((PointChainSet(
                segment_counts=[c.segments for c in cs],
                frequency=np.concatenate([c.frequency for c in cs]),
                damping_ratio=np.concatenate([c.damping_ratio for c in cs]),
                particle_radius=np.concatenate([c.particle_radius for c in cs]),
                max_distance=np.concatenate([c.max_distance for c in cs]),
                world_influence=[c.world_influence for c in cs],
                collider_mask=[c.collider_mask for c in cs],
                gravity=gravity), members))
        return out


def load_rig(path, skeleton: Skeleton) -> Rig:
    """Read and check a TOML rig against ``skeleton`` (a :class:`~gpu_jiggle.character.skeleton.Skeleton`,
    e.g. ``character.skeleton``).

    Raises:
        FileNotFoundError: no such file. RigError (a ValueError): bad TOML or a bad rig.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such rig file")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RigError(f"{path}: not valid TOML: {exc}") from None
    return rig_from_dict(data, skeleton, str(path))


def rig_from_dict(data: dict, skeleton: Skeleton, source: str = "<dict>") -> Rig:
    """Check a rig given as a dict (the TOML's structure) against ``skeleton``."""
    return _Reader(source, skeleton).read(data)


class _Reader:
    def __init__(self, source, skeleton):
        self.source = source
        self.skeleton = skeleton

    def fail(self, where, message):
        raise RigError(f"{self.source}: {where}: {message}")

    # -- values ---------------------------------------------------------------------------
    def keys(self, where, table, allowed):
        if not isinstance(table, dict):
            self.fail(where, f"expected a table, got {type(table).__name__}")
        unknown = [k for k in table if k not in allowed]
        if unknown:
            self.fail(where, f"unknown key {unknown[0]!r}; expected one of {', '.join(allowed)}")

    def number(self, where, table, key, default=None, check=None, expected="", integer=False):
        if key not in table:
            if default is None:
                self.fail(where, f"missing {key!r}")
            return default
        v = table[key]
        ok_type = isinstance(v, int) if integer else isinstance(v, (int, float))
        if isinstance(v, bool) or not ok_type:
            self.fail(where, f"{key} = {v!r}: expected {'an integer' if integer else 'a number'}")
        if not math.isfinite(v) or (check is not None and not check(v)):
            self.fail(where, f"{key} = {v!r}: expected {expected or 'a finite number'}")
        return v

    def vector(self, where, table, key, default=None, nonzero=False):
        if key not in table:
            if default is None:
                self.fail(where, f"missing {key!r}")
            return np.asarray(default, np.float64)
        v = table[key]
        if (not isinstance(v, list) or len(v) != 3
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)):
            self.fail(where, f"{key} = {v!r}: expected three numbers [x, y, z]")
        a = np.asarray(v, np.float64)
        if not np.all(np.isfinite(a)):
            self.fail(where, f"{key} = {v!r}: expected finite numbers")
        if nonzero and not np.linalg.norm(a) > 0:
            self.fail(where, f"{key} = {v!r}: expected a direction of length > 0")
        return a

    def per_segment(self, where, table, key, segments, default, check, expected):
        v = table.get(key, default)
        values = v if isinstance(v, list) else [v]
        if isinstance(v, list) and len(v) != segments:
            self.fail(where, f"{key} has {len(v)} values; expected one, or one per segment ({segments})")
        for i, x in enumerate(values):
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                self.fail(where, f"{key}{f'[{i}]' if isinstance(v, list) else ''} = {x!r}: expected a number")
            if math.isnan(x) or not check(x):
                self.fail(where, f"{key}{f'[{i}]' if isinstance(v, list) else ''} = {x!r}: expected {expected}")
        return np.broadcast_to(np.asarray(values, np.float64), (segments,)).copy()

    def joint(self, where, name, key="joint"):
        if not isinstance(name, str):
            self.fail(where, f"{key} = {name!r}: expected a joint name (a string)")
        names = self.skeleton.names
        if name not in names:
            self.fail(where, f"unknown joint {name!r}; the skeleton's joints are: {', '.join(names)}")
        return self.skeleton.index(name)

    # -- tables ---------------------------------------------------------------------------
    def read(self, data) -> Rig:
        self.keys("top level", data, TOP_KEYS)
        solver = data.get("solver", {})
        self.keys("[solver]", solver, SOLVER_KEYS)
        substep = float(self.number("[solver]", solver, "substep", 1.0 / 120.0, lambda x: x > 0, "a number > 0"))
        max_substeps = int(self.number("[solver]", solver, "max_substeps", 8, lambda x: x >= 1,
                                       "an integer >= 1", integer=True))
        rig = Rig(self.source, substep, max_substeps)
        colliders = self.tables(data, "collider")
        if len(colliders) > MAX_COLLIDERS:
            self.fail("[[collider]]", f"{len(colliders)} colliders; at most {MAX_COLLIDERS} (one collider group each)")
        for i, table in enumerate(colliders):
            rig.colliders.append(self.collider(i, table, rig.colliders))
        collider_names = [c.name for c in rig.colliders]
        used = {}
        for i, table in enumerate(self.tables(data, "chain")):
            rig.chains.append(self.chain(i, table, collider_names, substep, used))
        for i, table in enumerate(self.tables(data, "strands")):
            rig.chains.extend(self.strands(i, table, collider_names, substep))
        names = [c.name for c in rig.chains]
        for n in names:
            if names.count(n) > 1:
                self.fail(f"chain {n!r}", "two chains or strand groups have this name")
        for i, table in enumerate(self.tables(data, "look_at")):
            rig.constraints.append(self.look_at(i, table))
        for i, table in enumerate(self.tables(data, "two_bone_ik")):
            rig.constraints.append(self.two_bone(i, table))
        return rig

    def tables(self, data, key):
        v = data.get(key, [])
        if not isinstance(v, list):
            self.fail(f"[[{key}]]", f"expected an array of tables ([[{key}]]), got {type(v).__name__}")
        return v

    def name(self, kind, i, table):
        n = table.get("name", f"{kind}{i}")
        if not isinstance(n, str) or not n:
            self.fail(f"[[{kind}]] {i}", f"name = {n!r}: expected a non-empty string")
        return n

    def springs(self, where, table, segments, collider_names, substep):
        if "frequency" not in table:
            self.fail(where, "missing 'frequency' (Hz)")
        f = self.per_segment(where, table, "frequency", segments, None,
                             lambda x: math.isfinite(x) and x > 0, "a finite value > 0 (Hz)")
        z = self.per_segment(where, table, "damping_ratio", segments, 0.5,
                             lambda x: math.isfinite(x) and x >= 0, "a finite value >= 0")
        ok = is_stable(f, z, substep)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            self.fail(where, f"frequency = {float(f[i])!r} Hz with damping_ratio = {float(z[i])!r} is unstable for the substep "
                             f"{substep!r} s: the largest stable frequency for that damping ratio is "
                             f"{stable_frequency(z[i], substep):.4g} Hz (SPEC section 1); lower the frequency, "
                             f"or the [solver] substep")
        radius = self.per_segment(where, table, "particle_radius", segments, 0.0,
                                  lambda x: math.isfinite(x) and x >= 0, "a finite value >= 0")
        distance = self.per_segment(where, table, "max_distance", segments, math.inf, lambda x: x > 0,
                                    "a value > 0")
        gravity = self.vector(where, table, "gravity", (0.0, 0.0, 0.0))
        influence = float(self.number(where, table, "world_influence", 1.0, lambda x: 0 <= x <= 1,
                                      "a value in [0, 1]"))
        names = table.get("colliders", collider_names)
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            self.fail(where, f"colliders = {names!r}: expected a list of collider names")
        mask = 0
        for n in names:
            if n not in collider_names:
                self.fail(where, f"unknown collider {n!r}; the rig's colliders are: "
                                 f"{', '.join(collider_names) or 'none'}")
            mask |= 1 << collider_names.index(n)
        return dict(frequency=f, damping_ratio=z, particle_radius=radius, max_distance=distance, gravity=gravity,
                    world_influence=influence, collider_mask=mask)

    def chain(self, i, table, collider_names, substep, used) -> ChainSpec:
        name = self.name("chain", i, table)
        where = f"chain {name!r}"
        self.keys(where, table, CHAIN_KEYS)
        joints = table.get("joints")
        if not isinstance(joints, list) or not joints:
            self.fail(where, f"joints = {joints!r}: expected a list of joint names, pivot first")
        nodes = [self.joint(where, j, "joints") for j in joints]
        sk = self.skeleton
        for k, (j, node) in enumerate(zip(joints, nodes)):
            if joints.index(j) != k:
                self.fail(where, f"joint {j!r} appears twice (positions {joints.index(j)} and {k}): "
                                 f"a chain cannot loop back on itself")
            if node in used:
                self.fail(where, f"joint {j!r} is already driven by chain {used[node]!r}")
            if k and sk.parents[node] != nodes[k - 1]:
                parent = sk.parents[node]
                actual = "it is a root" if parent < 0 else f"its parent is {sk.names[parent]!r}"
                children = [sk.names[c] for c in sk.children(nodes[k - 1])]
                self.fail(where, f"joint {j!r} (position {k}) is not a child of {joints[k - 1]!r}: {actual}; "
                                 f"the children of {joints[k - 1]!r} are: {', '.join(children) or 'none'}")
        for node in nodes:
            used[node] = name
        rest = sk.world_matrices(sk.rest_pose())
        last = nodes[-1]
        if "tip_axis" in table:
            axis = self.vector(where, table, "tip_axis", nonzero=True)
        elif np.linalg.norm(sk.rest.translation[last]) > 0:
            axis = sk.rest.translation[last]
        else:
            self.fail(where, f"tip_axis is needed: the last joint {joints[-1]!r} has no offset from its parent "
                             f"to take the bone axis from")
        axis = axis / np.linalg.norm(axis)
        if "tip_length" in table:
            tip_length = float(self.number(where, table, "tip_length", check=lambda x: x > 0, expected="a value > 0"))
        elif len(nodes) > 1:
            tip_length = float(np.linalg.norm(rest[nodes[-1], :3, 3] - rest[nodes[-2], :3, 3]))
            scale = float(np.linalg.norm(rest[last, :3, :3] @ axis))
            tip_length = tip_length / scale if scale > 0 else tip_length
        else:
            self.fail(where, "tip_length is needed for a chain of one joint (there is no previous segment)")
        if not tip_length > 0:
            self.fail(where, f"the previous segment has length {tip_length!r}; give tip_length")
        segments = len(nodes)
        params = self.springs(where, table, segments, collider_names, substep)
        return ChainSpec(name=name, kind="joints", nodes=np.asarray(nodes, np.int64), segments=segments,
                         local_points=(axis * tip_length)[None], group=name, **params)

    def strands(self, i, table, collider_names, substep) -> list[ChainSpec]:
        name = self.name("strands", i, table)
        where = f"strands {name!r}"
        self.keys(where, table, STRAND_KEYS)
        node = self.joint(where, table.get("joint"))
        count = int(self.number(where, table, "count", 1, lambda x: x >= 1, "an integer >= 1", integer=True))
        segments = int(self.number(where, table, "segments", None, lambda x: x >= 1, "an integer >= 1",
                                   integer=True))
        length = float(self.number(where, table, "length", None, lambda x: x > 0, "a value > 0"))
        root = self.vector(where, table, "root", (0.0, 0.0, 0.0))
        root_end = self.vector(where, table, "root_end") if "root_end" in table else None
        direction = self.vector(where, table, "direction", nonzero=True)
        direction = direction / np.linalg.norm(direction)
        spread = math.radians(float(self.number(where, table, "spread_deg", 0.0, lambda x: 0 <= x <= 360,
                                                "a value in [0, 360] degrees")))
        if "fan_axis" in table:
            fan = self.vector(where, table, "fan_axis", nonzero=True)
        elif root_end is not None and np.linalg.norm(root_end - root) > 0:
            fan = root_end - root
        else:
            helper = np.array([1.0, 0.0, 0.0]) if abs(direction[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
            fan = np.cross(direction, helper)
        draw = table.get("draw", "lines")
        if draw not in DRAW_STYLES:
            self.fail(where, f"draw = {draw!r}: expected one of {', '.join(DRAW_STYLES)}")
        width = float(self.number(where, table, "width", 1.0, lambda x: x > 0, "a value > 0"))
        params = self.springs(where, table, segments, collider_names, substep)
        out = []
        steps = np.arange(segments + 1)[:, None] * (length / segments)
        for k in range(count):
            u = 0.5 if count == 1 else k / (count - 1)
            start = root if root_end is None else root + (root_end - root) * u
            angle = spread * (u - 0.5) if count > 1 else 0.0
            d = quat.rotate(quat.from_axis_angle(fan, angle), direction)
            out.append(ChainSpec(name=f"{name}[{k}]" if count > 1 else name, kind="strand",
                                 nodes=np.asarray([node], np.int64), segments=segments,
                                 local_points=start + steps * d, group=name, draw=draw, width=width, **params))
        return out

    def collider(self, i, table, existing) -> ColliderSpec:
        name = self.name("collider", i, table)
        where = f"collider {name!r}"
        self.keys(where, table, COLLIDER_KEYS)
        if any(c.name == name for c in existing):
            self.fail(where, "two colliders have this name")
        node = self.joint(where, table.get("joint"))
        shape = table.get("shape", "sphere")
        if shape not in ("sphere", "capsule"):
            self.fail(where, f"shape = {shape!r}: expected 'sphere' or 'capsule'")
        offset = self.vector(where, table, "offset", (0.0, 0.0, 0.0))
        if shape == "capsule":
            end = self.vector(where, table, "end")
        elif "end" in table:
            self.fail(where, "end is for capsules; a sphere has only offset and radius")
        else:
            end = offset.copy()
        radius = float(self.number(where, table, "radius", None, lambda x: x >= 0, "a finite value >= 0"))
        return ColliderSpec(name, node, shape, offset, end, radius, len(existing))

    def moving_target(self, where, table):
        target = self.vector(where, table, "target")
        sweep = self.vector(where, table, "sweep", (0.0, 0.0, 0.0))
        hz = float(self.number(where, table, "sweep_hz", 0.0, lambda x: x >= 0, "a value >= 0 (Hz)"))
        enabled = table.get("enabled", True)
        if not isinstance(enabled, bool):
            self.fail(where, f"enabled = {enabled!r}: expected true or false")
        return target, sweep, hz, enabled

    def look_at(self, i, table) -> LookAtSpec:
        name = self.name("look_at", i, table)
        where = f"look_at {name!r}"
        self.keys(where, table, LOOK_AT_KEYS)
        node = self.joint(where, table.get("joint"))
        axis = self.vector(where, table, "aim_axis", nonzero=True)
        target, sweep, hz, enabled = self.moving_target(where, table)
        limit = float(self.number(where, table, "max_angle_deg", 180.0, lambda x: 0 < x <= 180,
                                  "a value in (0, 180] degrees"))
        weight = float(self.number(where, table, "weight", 1.0, lambda x: 0 <= x <= 1, "a value in [0, 1]"))
        return LookAtSpec(name, node, axis, target, sweep, hz, math.radians(limit), weight, enabled)

    def two_bone(self, i, table) -> TwoBoneIKSpec:
        name = self.name("two_bone_ik", i, table)
        where = f"two_bone_ik {name!r}"
        self.keys(where, table, TWO_BONE_KEYS)
        nodes = [self.joint(where, table.get(k), k) for k in ("root", "mid", "end")]
        sk = self.skeleton
        for (a, b), (ka, kb) in zip(((nodes[0], nodes[1]), (nodes[1], nodes[2])), (("root", "mid"), ("mid", "end"))):
            if sk.parents[b] != a:
                self.fail(where, f"{kb} {sk.names[b]!r} is not a child of {ka} {sk.names[a]!r}")
        target, sweep, hz, enabled = self.moving_target(where, table)
        pole = self.vector(where, table, "pole") if "pole" in table else None
        return TwoBoneIKSpec(name, nodes[0], nodes[1], nodes[2], target, sweep, hz, pole, enabled)
