"""Reading a rig (:func:`load_rig` from a TOML file, :func:`rig_from_dict` from its tables): every value
type-checked and bounded with the file, the table and the key in the message, the spring
values of all chains collected into one :class:`~gpu_jiggle.PointChainSet` and validated
once, by the chain set and the stability check (SPEC sections 1 and 7), whose refusals are
told in the rig's own terms (``chain 'tail': frequency[1] = 0.0``)."""
from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np

from ..pose import quat
from .model import (MAX_COLLIDER_GROUPS, MAX_COLLIDERS, MAX_RIG_SEGMENTS, ChainSpec, ColliderSpec, LookAtSpec, Rig,
                    RigError, TwoBoneIKSpec)
from .specs import WIND_DEFAULTS, WindSpec
from .limits import CHAIN_SET_ARGUMENT, LIMIT_KEYS, read_limits
from .toml import read_toml
from .curves import short as _short
from .values import PER_SEGMENT_DEFAULTS, RigValues
from ...sim.chains import PointChainSet
from ...sim.clock import MAX_SUBSTEP, MAX_SUBSTEPS, MIN_SUBSTEP
from ...sim.integrator import INTEGRATORS
from ...sim.levels import check_runs_stable
from ...sim.spring import UnstableSpringError
from ...sim.validation import COORDINATE_LIMIT, InputError, choice, unknown_name
from ..gltf.io import no_such_file
from ..pose.skeleton import Skeleton

#: The largest rig file read (bytes).
MAX_RIG_FILE_BYTES = 16 * 1024 * 1024

SPRING_KEYS = ("frequency", "damping_ratio", "gravity", "particle_radius", "max_distance", "air_drag",
               "angle_limit_deg", "hinge_limit_deg", "spherical_limit_deg", "limit_axis", "world_influence",
               "colliders")
CHAIN_KEYS = ("name", "group", "joints", "tip_length", "tip_axis") + SPRING_KEYS
STRAND_KEYS = ("name", "joint", "count", "segments", "length", "root", "root_end", "direction", "spread_deg",
               "fan_axis", "draw", "width") + SPRING_KEYS
COLLIDER_KEYS = ("name", "joint", "shape", "offset", "end", "radius", "inside", "normal")
LOOK_AT_KEYS = ("name", "joint", "aim_axis", "target", "sweep", "sweep_hz", "max_angle_deg", "weight", "enabled")
TWO_BONE_KEYS = ("name", "root", "mid", "end", "target", "sweep", "sweep_hz", "pole", "enabled")
SOLVER_KEYS = ("substep", "max_substeps", "integrator")
TOP_KEYS = ("solver", "wind", "chain", "strands", "collider", "look_at", "two_bone_ik")
DRAW_STYLES = ("lines", "ribbons")
#: A chain segment is of zero length when its joints are this fraction of the chain's longest
#: segment apart, or closer, in the rest pose (two joints at the same place).
ZERO_SEGMENT = 1e-6
LENGTH_EXPECTED = f"a value > 0 and at most {COORDINATE_LIMIT:.3g} (the solver's coordinate range)"

log = logging.getLogger(__name__)


class RigReader:
    """Reads one rig (the format: docs/RIG.md) from ``source`` (a path or ``"<dict>"``, named in
    every refusal) on ``skeleton``; its typed values through :class:`RigValues`."""

    def __init__(self, source, skeleton):
        self.source = source
        self.skeleton = skeleton
        self.values = RigValues(source, skeleton)
        self.fail = self.values.fail  # RigError naming the file, the table and the key
        self.segment_total = 0
        self.springs = []   # per chain: (where, table, {key: value as read}) in chain order
        self.rest_world = None  # the skeleton's rest world matrices, computed once
        self.collider_sets = {}  # tuple of collider names → their frozenset (chains share it)

    # -- tables ---------------------------------------------------------------------------
    def read(self, data) -> Rig:
        self.values.keys("top level", data, TOP_KEYS)
        solver = data.get("solver", {})
        self.values.keys("[solver]", solver, SOLVER_KEYS)
        substep = float(self.values.number("[solver]", solver, "substep", 1.0 / 120.0,
                                    lambda x: MIN_SUBSTEP <= x <= MAX_SUBSTEP,
                                    f"a number of seconds in [{MIN_SUBSTEP:g}, {MAX_SUBSTEP:g}]"))
        max_substeps = int(self.values.number("[solver]", solver, "max_substeps", 8, lambda x: 1 <= x <= MAX_SUBSTEPS,
                                       f"an integer in [1, {MAX_SUBSTEPS}]", integer=True))
        try:
            integrator = choice("integrator", solver.get("integrator", INTEGRATORS[0]), INTEGRATORS)
        except (TypeError, ValueError) as exc:
            self.fail("[solver]", str(exc))
        rig = Rig(self.source, substep, max_substeps, integrator=integrator)
        if "wind" in data:
            rig.wind = self.wind(data["wind"])
        colliders = self.tables(data, "collider")
        if len(colliders) > MAX_COLLIDERS:
            self.fail("[[collider]]", f"{len(colliders)} colliders; at most {MAX_COLLIDERS}")
        for i, table in enumerate(colliders):
            rig.colliders.append(self.collider(i, table, rig.colliders))
        collider_names = {c.name: None for c in rig.colliders}  # in order; a lookup is O(1)
        used = {}
        for i, table in enumerate(self.tables(data, "chain")):
            rig.chains.append(self.chain(i, table, collider_names, used))
        for i, table in enumerate(self.tables(data, "strands")):
            rig.chains.extend(self.strands(i, table, collider_names))
        names = [c.name for c in rig.chains]
        seen = set()
        for n in names:
            if n in seen:
                self.fail(f"chain {n!r}", "two chains or strand groups have this name")
            seen.add(n)
        for i, c in enumerate(rig.chains):
            c.index, c.rig = i, rig
        self.collider_groups(rig.colliders)
        rig.chain_set = self.chain_set(rig.chains, substep, integrator, rig.wind)
        for i, table in enumerate(self.tables(data, "look_at")):
            rig.constraints.append(self.look_at(i, table))
        for i, table in enumerate(self.tables(data, "two_bone_ik")):
            rig.constraints.append(self.two_bone(i, table))
        return rig

    def tables(self, data, key):
        v = data.get(key, [])
        if not isinstance(v, list):
            self.fail(f"[[{key}]]", f"expected an array of tables ([[{key}]]), got {type(v).__name__}")
        for i, table in enumerate(v):
            if not isinstance(table, dict):
                self.fail(f"[[{key}]] {i}", f"expected a table, got {type(table).__name__} {_short(table)}")
        return v

    def name(self, kind, i, table):
        n = table.get("name", f"{kind}{i}")
        if not isinstance(n, str) or not n:
            self.fail(f"[[{kind}]] {i}", f"name = {_short(n)}: expected a non-empty string")
        return n

    def count_segments(self, where, segments):
        self.segment_total += segments
        if self.segment_total > MAX_RIG_SEGMENTS:
            self.fail(where, f"the rig's chains and strands have {self.segment_total} segments so far; at most "
                             f"{MAX_RIG_SEGMENTS} (gpu_jiggle.character.rig.model.MAX_RIG_SEGMENTS)")

    def add_springs(self, where, table, specs, collider_names, keep=None):
        """Read a table's spring values (types only) for its chains ``specs``; ``keep``
        ((given,) bool): the table gives one value per joint and only these segments swing."""
        if "frequency" not in table:
            self.fail(where, "missing 'frequency' (Hz)")
        segments = specs[0].segments if keep is None else len(keep)
        values = {key: self.values.per_segment(where, table, key, segments) for key in PER_SEGMENT_DEFAULTS}
        limit = values["angle_limit_deg"]
        bad = np.flatnonzero(~(limit >= 0))  # NaN and negative
        if bad.size:
            index = f"[{bad[0]}]" if isinstance(table.get("angle_limit_deg"), list) else ""
            self.fail(where, f"angle_limit_deg{index} = {float(limit[bad[0]])!r}: expected a cone half-angle >= 0 in "
                             f"degrees (inf or 180 and more for none)")
        values.update(read_limits(self.fail, where, table, segments))
        if keep is not None:
            values = {key: v[keep] for key, v in values.items()}
            values["keep"] = keep
        values["gravity"] = self.values.vector(where, table, "gravity", (0.0, 0.0, 0.0))
        values["world_influence"] = self.values.number(where, table, "world_influence", 1.0)
        names = table.get("colliders")
        if names is not None and (not isinstance(names, list) or not all(isinstance(n, str) for n in names)):
            self.fail(where, f"colliders = {_short(names)}: expected a list of collider names")
        key = tuple(collider_names if names is None else names)  # no list: all of them
        if key not in self.collider_sets:  # chains that list the same colliders share one checked set
            for n in key:
                if n not in collider_names:
                    self.fail(where, unknown_name("collider", n, list(collider_names),
                                                  listing="the rig's colliders are:"))
            self.collider_sets[key] = frozenset(key)
        values["colliders"] = self.collider_sets[key]
        self.springs.extend((where, table, values) for _ in specs)

    def collider_groups(self, colliders) -> None:
        """Give each collider its collider group and each chain its mask: colliders that the
        same chains collide with share a group (one of the mask's 32 bits), so a rig may have
        many colliders as long as they make at most 32 such sets."""
        groups = {}
        users = {c.name: [] for c in colliders}  # linear in the chains' references, not chains × colliders
        for k, (_, _, values) in enumerate(self.springs):
            for n in values["colliders"]:
                users[n].append(k)
        for c in colliders:
            c.group = groups.setdefault(tuple(users[c.name]), len(groups))
        if len(groups) > MAX_COLLIDER_GROUPS:
            self.fail("[[collider]]", f"its {len(colliders)} colliders are used by {len(groups)} different sets of "
                                      f"chains; at most {MAX_COLLIDER_GROUPS} (the bits of a chain's collider mask)")
        group = {c.name: c.group for c in colliders}
        for _, _, values in self.springs:
            values["collider_mask"] = sum({1 << group[n] for n in values["colliders"]})

    def chain_set(self, chains, substep, integrator, wind=None) -> PointChainSet:
        """Every chain's springs as one PointChainSet, validated once (and stable for the
        substep under the rig's ``wind``, a WindSpec or None, as a solver runs it); a refusal
        names the table and key it came from."""
        counts = [c.segments for c in chains]
        per = {key: [v[key] for _, _, v in self.springs] for key in ("gravity", "world_influence", "collider_mask")}
        rows = {name: np.concatenate([v[name] for _, _, v in self.springs]) if chains
                else np.zeros((0, len(LIMIT_KEYS[key][0]))) for key, (name, _) in CHAIN_SET_ARGUMENT.items()}
        per_segment = {key: np.concatenate([v[key] for _, _, v in self.springs]) if chains else np.zeros(0)
                       for key in PER_SEGMENT_DEFAULTS}
        topology = PointChainSet(counts, 1.0, 0.0)  # to locate a refused value's chain
        try:
            chain_set = PointChainSet(counts, per_segment["frequency"], per_segment["damping_ratio"],
                                      particle_radius=per_segment["particle_radius"],
                                      max_distance=per_segment["max_distance"],
                                      air_drag=per_segment["air_drag"],
                                      angle_limit=np.radians(per_segment["angle_limit_deg"]),
                                      **rows,
                                      world_influence=np.asarray(per["world_influence"], np.float64),
                                      collider_mask=per["collider_mask"],
                                      gravity=np.asarray(per["gravity"], np.float64).reshape(len(chains), 3))
            check_runs_stable(chain_set, substep, integrator, None if wind is None else wind.solver_wind())
        except InputError as exc:
            self.refuse(exc, topology)
        return chain_set

    def refuse(self, exc, chain_set):
        """Raise the RigError for the chain set's refusal ``exc``, in the rig's terms: the
        table and key the value came from, its index only where the table gave a list or a curve
        (a limit's row and entry)."""
        chain, local = chain_set.locate(exc.argument, exc.index)
        where, table, values = self.springs[chain]
        if local is not None and "keep" in values:  # the solver's segment → the joint the table counts
            local = int(np.flatnonzero(values["keep"])[local])
        key = next((k for k, (name, _) in CHAIN_SET_ARGUMENT.items() if name == exc.argument), None)
        if key is not None:  # a row: name the key, the row where the table gave one per segment, the entry
            given = exc.value / CHAIN_SET_ARGUMENT[key][1]
            rows = table.get(key)
            row = f"[{local}]" if isinstance(rows, list) and rows and isinstance(rows[0], list) else ""
            entry = exc.index % values[exc.argument].shape[-1]
            self.fail(where, f"{key}{row}[{entry}] = {given:g}: expected {exc.expected} "
                             f"({given:g} in the key's unit is {exc.value:g} in the solver's)")
        given = table.get(exc.argument)
        index = f"[{local}]" if isinstance(given, (list, dict)) and local is not None else ""
        if isinstance(exc, UnstableSpringError):
            self.fail(where, exc.describe(index, remedy="the [solver] substep",
                                                  exact='[solver] integrator = "exact"'))
        self.fail(where, exc.describe(index))

    def chain(self, i, table, collider_names, used) -> ChainSpec:
        name = self.name("chain", i, table)
        where = f"chain {name!r}"
        self.values.keys(where, table, CHAIN_KEYS)
        joints = table.get("joints")
        if not isinstance(joints, list) or not joints:
            self.fail(where, f"joints = {_short(joints)}: expected a list of joint names, pivot first")
        self.count_segments(where, len(joints))
        nodes = [self.values.joint(where, j, "joints") for j in joints]
        sk = self.skeleton
        position = {}
        for k, (j, node) in enumerate(zip(joints, nodes)):
            if j in position:
                self.fail(where, f"joint {j!r} appears twice (positions {position[j]} and {k}): "
                                 f"a chain cannot loop back on itself")
            position[j] = k
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
        if self.rest_world is None:  # once per rig: per chain it made a rig of n chains O(n · nodes)
            self.rest_world = sk.world_matrices(sk.rest_pose())
        rest = self.rest_world
        springy, previous = self.zero_length(where, joints, nodes, rest, "tip_length" in table)
        last = nodes[-1]
        if "tip_axis" in table:
            axis = self.values.vector(where, table, "tip_axis", nonzero=True)
        elif np.linalg.norm(sk.rest.translation[last]) > 0:
            axis = sk.rest.translation[last]
        else:
            self.fail(where, f"tip_axis is needed: the last joint {joints[-1]!r} has no offset from its parent "
                             f"to take the bone axis from")
        axis = axis / np.linalg.norm(axis)
        if "tip_length" in table:
            tip_length = float(self.values.number(where, table, "tip_length", check=lambda x: 0 < x <= COORDINATE_LIMIT,
                                           expected=LENGTH_EXPECTED))
        elif len(nodes) > 1:
            tip_length = previous
            scale = float(np.linalg.norm(rest[last, :3, :3] @ axis))
            tip_length = tip_length / scale if scale > 0 else tip_length
        else:
            self.fail(where, "tip_length is needed for a chain of one joint (there is no previous segment)")
        if not tip_length > 0:
            self.fail(where, f"the previous segment has length {tip_length!r}; give tip_length")
        group = table.get("group", name)
        if not isinstance(group, str) or not group:
            self.fail(where, f"group = {_short(group)}: expected a name (a non-empty string)")
        spec = ChainSpec(name=name, kind="joints", nodes=np.asarray(nodes, np.int64), segments=int(springy.sum()),
                         local_points=(axis * tip_length)[None], group=group, springy=springy)
        self.add_springs(where, table, [spec], collider_names, keep=springy)
        return spec

    def zero_length(self, where, joints, nodes, rest, tip_given):
        """((n,) bool: joints whose segment to the next has a length (the tip's always), the
        last such length). Zero-length segments (:data:`ZERO_SEGMENT`) are said once, in a
        warning; several joints all at one place without ``tip_length`` are refused."""
        lengths = np.linalg.norm(np.diff(rest[nodes, :3, 3], axis=0), axis=1)
        zero = ~(lengths > ZERO_SEGMENT * lengths.max(initial=0.0))
        if len(nodes) > 1 and zero.all() and not tip_given:
            self.fail(where, f"its joints {', '.join(map(repr, joints))} all lie at one place in the rest pose: the "
                             f"chain has no length to swing (give tip_length and tip_axis to swing its last joint "
                             f"alone, or choose joints that lie apart)")
        if zero.any():
            pairs = ", ".join(f"{joints[k]!r} → {joints[k + 1]!r}" for k in np.flatnonzero(zero))
            log.warning("%s: %s: zero-length segment %s (two joints at one place in the rest pose): carried "
                        "rigidly with its parent, without a spring", self.source, where, pairs)
        swinging = lengths[~zero]
        return np.append(~zero, True), float(swinging[-1]) if swinging.size else 0.0

    def strands(self, i, table, collider_names) -> list[ChainSpec]:
        name = self.name("strands", i, table)
        where = f"strands {name!r}"
        self.values.keys(where, table, STRAND_KEYS)
        node = self.values.joint(where, table.get("joint"))
        count = int(self.values.number(where, table, "count", 1, lambda x: 1 <= x <= MAX_RIG_SEGMENTS,
                                f"an integer in [1, {MAX_RIG_SEGMENTS}]", integer=True))
        segments = int(self.values.number(where, table, "segments", None, lambda x: 1 <= x <= MAX_RIG_SEGMENTS,
                                   f"an integer in [1, {MAX_RIG_SEGMENTS}]", integer=True))
        self.count_segments(where, count * segments)
        length = float(self.values.number(where, table, "length", None, lambda x: 0 < x <= COORDINATE_LIMIT, LENGTH_EXPECTED))
        root = self.values.vector(where, table, "root", (0.0, 0.0, 0.0))
        root_end = self.values.vector(where, table, "root_end") if "root_end" in table else None
        direction = self.values.vector(where, table, "direction", nonzero=True)
        direction = direction / np.linalg.norm(direction)
        spread = math.radians(float(self.values.number(where, table, "spread_deg", 0.0, lambda x: 0 <= x <= 360,
                                                "a value in [0, 360] degrees")))
        if "fan_axis" in table:
            fan = self.values.vector(where, table, "fan_axis", nonzero=True)
        elif root_end is not None and np.linalg.norm(root_end - root) > 0:
            fan = root_end - root
        else:
            helper = np.array([1.0, 0.0, 0.0]) if abs(direction[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
            fan = np.cross(direction, helper)
        draw = table.get("draw", "lines")
        if draw not in DRAW_STYLES:
            self.fail(where, f"draw = {_short(draw)}: expected one of {', '.join(DRAW_STYLES)}")
        width = float(self.values.number(where, table, "width", 1.0, lambda x: x > 0, "a value > 0"))
        out = []
        steps = np.arange(segments + 1)[:, None] * (length / segments)
        for k in range(count):
            u = 0.5 if count == 1 else k / (count - 1)
            start = root if root_end is None else root + (root_end - root) * u
            angle = spread * (u - 0.5) if count > 1 else 0.0
            d = quat.rotate(quat.from_axis_angle(fan, angle), direction)
            out.append(ChainSpec(name=f"{name}[{k}]" if count > 1 else name, kind="strand",
                                 nodes=np.asarray([node], np.int64), segments=segments,
                                 local_points=start + steps * d, group=name, draw=draw, width=width))
        self.add_springs(where, table, out, collider_names)
        return out

    def wind(self, table) -> WindSpec:
        """The ``[wind]`` table (keys and defaults: :data:`~.specs.WIND_DEFAULTS`)."""
        if not isinstance(table, dict):
            self.fail("[wind]", f"expected a table, got {type(table).__name__} {_short(table)}")
        self.values.keys("[wind]", table, tuple(WIND_DEFAULTS))
        direction = self.values.vector("[wind]", table, "direction", WIND_DEFAULTS["direction"], nonzero=True)
        values = {key: float(self.values.number("[wind]", table, key, default, lambda x: x >= 0, "a finite value >= 0"))
                  for key, default in WIND_DEFAULTS.items() if key != "direction"}
        try:
            return WindSpec.checked(direction, **values)
        except ValueError as exc:
            self.fail("[wind]", str(exc))

    def collider(self, i, table, existing) -> ColliderSpec:
        name = self.name("collider", i, table)
        where = f"collider {name!r}"
        self.values.keys(where, table, COLLIDER_KEYS)
        if any(c.name == name for c in existing):
            self.fail(where, "two colliders have this name")
        node = self.values.joint(where, table.get("joint"))
        shape = table.get("shape", "sphere")
        if shape not in ("sphere", "capsule", "plane"):
            self.fail(where, f"shape = {_short(shape)}: expected 'sphere', 'capsule' or 'plane'")
        offset = self.values.vector(where, table, "offset", (0.0, 0.0, 0.0))
        for key, only in (("end", "capsule"), ("normal", "plane")):
            if key in table and shape != only:
                self.fail(where, f"{key} is for {only}s, not for a {shape}")
        if shape == "plane":
            for key in ("radius", "inside"):
                if key in table:
                    self.fail(where, f"{key} is not for a plane (it has offset and normal)")
            normal = self.values.vector(where, table, "normal", nonzero=True)
            return ColliderSpec(name, node, shape, offset, offset.copy(), 0.0, len(existing), False,
                                normal / np.linalg.norm(normal))
        end = self.values.vector(where, table, "end") if shape == "capsule" else offset.copy()
        radius = float(self.values.number(where, table, "radius", None, lambda x: x >= 0, "a finite value >= 0"))
        inside = table.get("inside", False)
        if not isinstance(inside, bool):
            self.fail(where, f"inside = {_short(inside)}: expected true or false")
        return ColliderSpec(name, node, shape, offset, end, radius, len(existing), inside)

    def moving_target(self, where, table):
        target = self.values.vector(where, table, "target")
        sweep = self.values.vector(where, table, "sweep", (0.0, 0.0, 0.0))
        hz = float(self.values.number(where, table, "sweep_hz", 0.0, lambda x: x >= 0, "a value >= 0 (Hz)"))
        enabled = table.get("enabled", True)
        if not isinstance(enabled, bool):
            self.fail(where, f"enabled = {_short(enabled)}: expected true or false")
        return target, sweep, hz, enabled

    def look_at(self, i, table) -> LookAtSpec:
        name = self.name("look_at", i, table)
        where = f"look_at {name!r}"
        self.values.keys(where, table, LOOK_AT_KEYS)
        node = self.values.joint(where, table.get("joint"))
        axis = self.values.vector(where, table, "aim_axis", nonzero=True)
        target, sweep, hz, enabled = self.moving_target(where, table)
        limit = float(self.values.number(where, table, "max_angle_deg", 180.0, lambda x: 0 < x <= 180,
                                  "a value in (0, 180] degrees"))
        weight = float(self.values.number(where, table, "weight", 1.0, lambda x: 0 <= x <= 1, "a value in [0, 1]"))
        return LookAtSpec(name, node, axis, target, sweep, hz, math.radians(limit), weight, enabled)

    def two_bone(self, i, table) -> TwoBoneIKSpec:
        name = self.name("two_bone_ik", i, table)
        where = f"two_bone_ik {name!r}"
        self.values.keys(where, table, TWO_BONE_KEYS)
        nodes = [self.values.joint(where, table.get(k), k) for k in ("root", "mid", "end")]
        sk = self.skeleton
        for (a, b), (ka, kb) in zip(((nodes[0], nodes[1]), (nodes[1], nodes[2])), (("root", "mid"), ("mid", "end"))):
            if sk.parents[b] != a:
                self.fail(where, f"{kb} {sk.names[b]!r} is not a child of {ka} {sk.names[a]!r}")
        target, sweep, hz, enabled = self.moving_target(where, table)
        pole = self.values.vector(where, table, "pole") if "pole" in table else None
        return TwoBoneIKSpec(name, nodes[0], nodes[1], nodes[2], target, sweep, hz, pole, enabled)


def load_rig(path, skeleton: Skeleton) -> Rig:
    """Read and check a TOML rig against ``skeleton`` (a
    :class:`~gpu_jiggle.character.pose.skeleton.Skeleton`, e.g. ``character.skeleton``).

    Raises:
        FileNotFoundError: no such file. RigError (a ValueError): bad TOML, a file over
        :data:`MAX_RIG_FILE_BYTES`, or a bad rig.
    """
    path = Path(path)
    if not path.exists() or path.is_dir():
        raise FileNotFoundError(no_such_file(path, "rig file"))
    if not path.is_file():
        raise RigError(f"{path}: not a regular file; a rig is a TOML file")
    return rig_from_dict(read_toml(path, MAX_RIG_FILE_BYTES, RigError, "a rig"), skeleton, str(path))


def rig_from_dict(data: dict, skeleton: Skeleton, source: str = "<dict>") -> Rig:
    """Check a rig given as a dict (the TOML's structure) against ``skeleton``.

    Raises: RigError (a ValueError) naming ``source``, the table and the key."""
    return RigReader(source, skeleton).read(data)
