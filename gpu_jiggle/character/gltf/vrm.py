"""VRM spring bones, read from a loaded VRM file: VRM 0.x ``extensions.VRM.secondaryAnimation``
and VRM 1.0 ``VRMC_springBone`` with ``VRMC_springBone_extended_collider`` and
``VRMC_springBone_limit``. :mod:`gpu_jiggle.character.rig.from_vrm` turns what is read here into a :class:`~gpu_jiggle.character.rig.model.Rig`.

What the files say, as the specifications and their reference implementations read them
(docs/VRM.md):

- VRM 0.x: every node of a bone group's root's subtree is a joint whose tail is its first
  child; a node without children gets a virtual tail :data:`VIRTUAL_TAIL` (0.07) along its
  bone, in its own space. The subtree becomes chains: from the root along first children to
  a leaf, and a chain from each further child. Parameters are per bone group. Collider
  offsets are in a left-handed frame: their z is negated (the schema says "left-handed Y-up";
  the VRM 0.x exporters flip z). gravityDir is taken as given.
- VRM 1.0: a spring's joints are listed root to tail, each the child of the one before; the
  segment from joint k to joint k + 1 takes joint k's parameters, and the last joint is the
  tail (no virtual tail). Collider shapes: sphere and capsule, and the extended collider's
  inside sphere, inside capsule and plane when that extension is present on the collider.

Errors are :class:`VrmError` s (``ValueError``) naming the file, the JSON place
(``springs[2].joints[1]``), the key and the value.
"""
from __future__ import annotations

import logging
import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from .io import show

log = logging.getLogger(__name__)

#: The most colliders read from a file's spring bones: as many as a rig takes
#: (:data:`gpu_jiggle.character.rig.model.MAX_COLLIDERS`; the reader sits below the rig wing
#: and does not import it, so a test holds the two equal).
MAX_COLLIDERS = 1024

#: VRM 0.x: the length of the virtual tail of a joint without children, along its bone, in the
#: joint's own space (three-vrm and UniVRM use 7 cm).
VIRTUAL_TAIL = 0.07
#: VRM 1.0 joint defaults (VRMC_springBone.joint schema).
JOINT_DEFAULTS = {"hitRadius": 0.0, "stiffness": 1.0, "gravityPower": 0.0, "gravityDir": (0.0, -1.0, 0.0),
                  "dragForce": 0.5}
#: VRM 0.x bone group defaults (as three-vrm reads a group without the key).
GROUP_DEFAULTS = {"hitRadius": 0.0, "stiffiness": 1.0, "gravityPower": 0.0, "gravityDir": (0.0, -1.0, 0.0),
                  "dragForce": 0.5}
LIMIT_KINDS = ("cone", "hinge", "spherical")


class VrmError(ValueError):
    """A VRM file whose spring bones cannot be read (names the file, the JSON place and key)."""


@dataclass
class VrmJoint:
    """One spring joint: the segment from ``node`` to its tail, with VRM's parameters.

    stiffness (≥ 0), gravity_power (≥ 0), drag_force ([0, 1]), hit_radius (≥ 0, metres):
    floats, VRM's per-frame units. gravity_dir: (3,) float64, as given. limit: None, or
    ``(kind, angles, rotation)``: kind one of :data:`LIMIT_KINDS`, angles radians (cone and
    hinge: (angle,); spherical: (pitch, yaw)), rotation (4,) x, y, z, w in the joint's space.
    """

    node: int
    stiffness: float
    gravity_power: float
    gravity_dir: np.ndarray
    drag_force: float
    hit_radius: float
    limit: tuple | None = None


@dataclass
class VrmCollider:
    """A collider on ``node``: shape ``"sphere"``, ``"capsule"`` or ``"plane"``; offset (3,) and,
    for capsules, tail (3,), for planes, normal (3,), in the node's space; radius (metres);
    inside: keeps joints inside (extended collider). name: its JSON place."""

    name: str
    node: int
    shape: str
    offset: np.ndarray
    radius: float = 0.0
    tail: np.ndarray | None = None
    normal: np.ndarray | None = None
    inside: bool = False


@dataclass
class VrmSpring:
    """One chain of joints, root first, each the parent of the next. ``tail``: the node of the
    last joint's tail (VRM 1.0), or None for VRM 0.x's virtual tail. ``colliders``: the names
    of the colliders it collides with. ``center``: the center node, or None. ``name``: the
    chain's name (the spring's or bone group's with its root node's name); ``group``: the
    spring's or bone group's (its comment or JSON place), which chains of one group share."""

    name: str
    joints: list
    tail: int | None
    colliders: list = field(default_factory=list)
    center: int | None = None
    group: str = ""


@dataclass
class VrmSprings:
    """What a VRM file's spring bones are: ``version`` ``"0.x"`` or ``"1.0"``, springs and
    colliders."""

    version: str
    springs: list
    colliders: list


def has_springs(json_doc: dict) -> bool:
    """Whether a glTF document carries VRM spring bones (0.x or 1.0)."""
    ext = json_doc.get("extensions") if isinstance(json_doc, dict) else None
    if not isinstance(ext, dict):
        return False
    vrm0 = ext.get("VRM")
    return "VRMC_springBone" in ext or (isinstance(vrm0, dict) and "secondaryAnimation" in vrm0)


def humanoid_bones(json_doc: dict) -> dict:
    """``{humanoid bone name: node index}`` of a VRM 0.x (``extensions.VRM.humanoid``) or
    VRM 1.0 (``extensions.VRMC_vrm.humanoid``) document, or of a VRM animation
    (``extensions.VRMC_vrm_animation.humanoid``); ``{}`` for a file without one. Entries that
    are not a bone name with an integer node are left out."""
    ext = json_doc.get("extensions") if isinstance(json_doc, dict) else None
    if not isinstance(ext, dict):
        return {}
    out = {}
    for key in ("VRMC_vrm", "VRMC_vrm_animation"):
        bones = ((ext.get(key) or {}).get("humanoid") or {}).get("humanBones") if isinstance(ext.get(key), dict) \
            else None
        if isinstance(bones, dict):
            out.update({name: b["node"] for name, b in bones.items()
                        if isinstance(b, dict) and isinstance(b.get("node"), int) and not isinstance(b["node"], bool)})
    vrm0 = ext.get("VRM")
    bones = ((vrm0.get("humanoid") or {}).get("humanBones") if isinstance(vrm0, dict) else None)
    if isinstance(bones, list):
        out.update({b["bone"]: b["node"] for b in bones if isinstance(b, dict) and isinstance(b.get("bone"), str)
                    and isinstance(b.get("node"), int) and not isinstance(b["node"], bool)})
    return out


def read_springs(character) -> VrmSprings:
    """The spring bones of a loaded VRM (:class:`~.loader.Character`), VRM 1.0 when the file has
    ``VRMC_springBone``, else VRM 0.x.

    Raises:
        VrmError: no spring bones, or bad ones (missing nodes, a joint repeated, negative
        radii, unknown shapes, values of the wrong type or range), naming the place and key.
    """
    reader = _Reader(character)
    ext = character.json.get("extensions") or {}
    if "VRMC_springBone" in ext:
        return reader.vrm1(ext["VRMC_springBone"])
    if has_springs(character.json):
        return reader.vrm0(ext["VRM"]["secondaryAnimation"])
    raise VrmError(f"{character.path}: no VRM spring bones (neither extensions.VRMC_springBone nor "
                   f"extensions.VRM.secondaryAnimation)")


class _Reader:
    def __init__(self, character):
        self.path = character.path
        self.names = character.skeleton.names
        self.parents = character.skeleton.parents
        self.children = [list(n.get("children", [])) for n in character.json.get("nodes", [])]
        self.chain_names = set()
        self.next_suffix = {}  # chain name → the next " (k)" to try for it
        self.merged = {}  # tuple of collider group indices → their colliders' names (shared, not to be changed)
        self.used = {}  # node → the chain that drives it

    def fail(self, where, message):
        raise VrmError(f"{self.path}: {where}: {message}")

    # -- values -------------------------------------------------------------------------------
    def table(self, where, value):
        if not isinstance(value, dict):
            self.fail(where, f"expected an object, got {show(value)}")
        return value

    def items(self, where, table, key):
        value = table.get(key, [])
        if not isinstance(value, list):
            self.fail(where, f"{key} = {show(value)}: expected a list")
        return value

    def number(self, where, table, key, default, low=-math.inf, high=math.inf):
        v = table.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            self.fail(where, f"{key} = {show(v)}: expected a finite number")
        if not low <= v <= high:
            bounds = f"≥ {low}" if high == math.inf else f"in [{low}, {high}]"
            self.fail(where, f"{key} = {show(v)}: expected a value {bounds}")
        return float(v)

    def vector(self, where, table, key, default, xyz=False):
        v = table.get(key, default)
        if xyz and isinstance(v, dict):
            v = [v.get("x", 0.0), v.get("y", 0.0), v.get("z", 0.0)]
        if (not isinstance(v, (list, tuple)) or len(v) != 3
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v)):
            self.fail(where, f"{key} = {show(v)}: expected three finite numbers")
        return np.asarray(v, np.float64)

    def node(self, where, table, key="node"):
        v = table.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < len(self.names):
            self.fail(where, f"{key} = {show(v)}: expected a node index in [0, {len(self.names) - 1}]")
        return v

    def collider_names(self, where, table, groups):
        """The names of the colliders in ``table``'s colliderGroups (indices into ``groups``, each
        a list of names), each once, in order. Linear in the references and the groups' sizes:
        a group referenced again is merged once, and springs that reference the same groups
        share one list (which is not to be changed)."""
        indices = {}
        for g in self.items(where, table, "colliderGroups"):
            if isinstance(g, bool) or not isinstance(g, int) or not 0 <= g < len(groups):
                self.fail(where, f"colliderGroups = ... {show(g)}: expected a collider group index in "
                                 f"[0, {len(groups) - 1}]")
            indices[g] = None
        key = tuple(indices)
        if key not in self.merged:
            names = {}
            for g in key:
                names.update(dict.fromkeys(groups[g]))
            self.merged[key] = list(names)
        return self.merged[key]

    def check_collider_count(self, where, count):
        """Refuse more than :data:`MAX_COLLIDERS` colliders before any is read."""
        if count > MAX_COLLIDERS:
            self.fail(where, f"{count} colliders; a rig takes at most {MAX_COLLIDERS} "
                             f"(gpu_jiggle.character.rig.model.MAX_COLLIDERS)")

    def chain_name(self, name):
        """A chain name not used before (rig chains are addressed by name): ``name``, else
        ``name (2)``, ``name (3)``, … Each name remembers the next number to try, so n chains of
        one name take O(n) steps, not O(n²)."""
        unique, k = name, self.next_suffix.get(name, 2)
        while unique in self.chain_names:
            unique, k = f"{name} ({k})", k + 1
        self.next_suffix[name] = k
        self.chain_names.add(unique)
        return unique

    # -- VRM 1.0 --------------------------------------------------------------------------------
    def vrm1(self, ext) -> VrmSprings:
        ext = self.table("extensions.VRMC_springBone", ext)
        entries = self.items("extensions.VRMC_springBone", ext, "colliders")
        self.check_collider_count("extensions.VRMC_springBone.colliders", len(entries))
        colliders = [self.collider1(f"colliders[{i}]", c) for i, c in enumerate(entries)]
        groups = []
        for g, group in enumerate(self.items("extensions.VRMC_springBone", ext, "colliderGroups")):
            where = f"colliderGroups[{g}]"
            members = {}  # each collider once, in order (a set of names, not a bag)
            for k in self.items(where, self.table(where, group), "colliders"):
                if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(colliders):
                    self.fail(where, f"colliders = ... {show(k)}: expected a collider index in "
                                     f"[0, {len(colliders) - 1}]")
                members[colliders[k].name] = None
            groups.append(list(members))
        springs = []
        for s, spring in enumerate(self.items("extensions.VRMC_springBone", ext, "springs")):
            where = f"springs[{s}]"
            spring = self.table(where, spring)
            entries = self.items(where, spring, "joints")
            joints = [self.joint1(f"{where}.joints[{j}]", self.table(f"{where}.joints[{j}]", e))
                      for j, e in enumerate(entries)]
            if len(joints) < 2:
                log.warning("%s: %s has %d joint(s): no segment to swing, left out", self.path, where, len(joints))
                continue
            nodes = [j.node for j in joints]
            for k in range(1, len(nodes)):
                if nodes[k] in nodes[:k]:
                    self.fail(f"{where}.joints[{k}]", f"node = {nodes[k]} ({self.names[nodes[k]]!r}) is already "
                                                      f"joint {nodes.index(nodes[k])} of this spring: a cycle")
                if self.parents[nodes[k]] != nodes[k - 1]:
                    self.fail(f"{where}.joints[{k}]", f"node = {nodes[k]} ({self.names[nodes[k]]!r}) is not a "
                                                      f"child of joint {k - 1}'s node {nodes[k - 1]} "
                                                      f"({self.names[nodes[k - 1]]!r})")
            names = self.collider_names(where, spring, groups)
            center = self.node(where, spring, "center") if "center" in spring else None
            label = spring.get("name") if isinstance(spring.get("name"), str) and spring.get("name") else where
            shared = 0  # springs that branch from one bone share their first joints: an earlier spring drives them
            while shared < len(joints) - 1 and nodes[shared] in self.used:
                shared += 1
            if shared:
                log.warning("%s: %s: joints 0-%d (from %r) are already in chain %r: this chain starts after them",
                            self.path, where, shared - 1, self.names[nodes[0]], self.used[nodes[0]])
            if shared == len(joints) - 1:
                continue
            springs.append(self.claim(VrmSpring(self.chain_name(f"{label}: {self.names[nodes[shared]]}"),
                                                joints[shared:-1], nodes[-1], names, center, label)))
        return VrmSprings("1.0", springs, colliders)

    def joint1(self, where, entry) -> VrmJoint:
        limit = None
        ext = entry.get("extensions")
        if isinstance(ext, dict) and "VRMC_springBone_limit" in ext:
            limit = self.limit(f"{where}.extensions.VRMC_springBone_limit",
                               self.table(where, ext["VRMC_springBone_limit"]))
        return VrmJoint(node=self.node(where, entry),
                        stiffness=self.number(where, entry, "stiffness", JOINT_DEFAULTS["stiffness"], 0.0),
                        gravity_power=self.number(where, entry, "gravityPower", JOINT_DEFAULTS["gravityPower"], 0.0),
                        gravity_dir=self.vector(where, entry, "gravityDir", JOINT_DEFAULTS["gravityDir"]),
                        drag_force=self.number(where, entry, "dragForce", JOINT_DEFAULTS["dragForce"], 0.0, 1.0),
                        hit_radius=self.number(where, entry, "hitRadius", JOINT_DEFAULTS["hitRadius"], 0.0),
                        limit=limit)

    def limit(self, where, ext):
        shape = self.table(f"{where}.limit", ext.get("limit"))
        kinds = [k for k in shape if k in LIMIT_KINDS]
        if len(kinds) != 1:
            self.fail(f"{where}.limit", f"keys {show(sorted(shape))}: expected exactly one of "
                                        f"{', '.join(LIMIT_KINDS)}")
        kind = kinds[0]
        body = self.table(f"{where}.limit.{kind}", shape[kind])
        here = f"{where}.limit.{kind}"
        keys = ("pitch", "yaw") if kind == "spherical" else ("angle",)
        angles = tuple(self.number(here, body, k, math.pi / 2, 0.0, math.pi) for k in keys)
        rotation = body.get("rotation", [0.0, 0.0, 0.0, 1.0])
        if (not isinstance(rotation, list) or len(rotation) != 4
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                           for x in rotation) or abs(math.hypot(*rotation) - 1.0) > 1e-3):
            self.fail(here, f"rotation = {show(rotation)}: expected a unit quaternion [x, y, z, w]")
        return kind, angles, np.asarray(rotation, np.float64)

    def collider1(self, where, entry) -> VrmCollider:
        entry = self.table(where, entry)
        node = self.node(where, entry)
        shape = entry.get("shape")
        extended = (entry.get("extensions") or {}).get("VRMC_springBone_extended_collider")
        if isinstance(extended, dict) and "shape" in extended:  # the fallback shape stays unused
            where, shape = f"{where}.extensions.VRMC_springBone_extended_collider", extended["shape"]
        shape = self.table(f"{where}.shape", shape)
        kinds = [k for k in shape if k in ("sphere", "capsule", "plane")]
        if len(kinds) != 1:
            self.fail(f"{where}.shape", f"keys {show(sorted(shape))}: expected exactly one of sphere, capsule"
                                        f"{', plane' if extended else ''}")
        kind = kinds[0]
        here = f"{where}.shape.{kind}"
        body = self.table(here, shape[kind])
        offset = self.vector(here, body, "offset", (0.0, 0.0, 0.0))
        inside = body.get("inside", False)
        if not isinstance(inside, bool):
            self.fail(here, f"inside = {show(inside)}: expected true or false")
        name = where.split(".extensions")[0]
        if kind == "plane":
            normal = self.vector(here, body, "normal", (0.0, 0.0, 1.0))
            if not np.linalg.norm(normal) > 0:
                self.fail(here, f"normal = {show(list(normal))}: expected a non-zero vector")
            return VrmCollider(name, node, "plane", offset, normal=normal)
        radius = self.number(here, body, "radius", 0.0, 0.0)
        tail = self.vector(here, body, "tail", (0.0, 0.0, 0.0)) if kind == "capsule" else None
        return VrmCollider(name, node, kind, offset, radius, tail=tail, inside=inside)

    # -- VRM 0.x ---------------------------------------------------------------------------------
    def vrm0(self, sa) -> VrmSprings:
        sa = self.table("extensions.VRM.secondaryAnimation", sa)
        colliders, groups = [], []
        for g, group in enumerate(self.items("secondaryAnimation", sa, "colliderGroups")):
            where = f"secondaryAnimation.colliderGroups[{g}]"
            group = self.table(where, group)
            node = self.node(where, group)
            members = []
            entries = self.items(where, group, "colliders")
            self.check_collider_count("secondaryAnimation.colliderGroups", len(colliders) + len(entries))
            for k, c in enumerate(entries):
                here = f"{where}.colliders[{k}]"
                c = self.table(here, c)
                offset = self.vector(here, c, "offset", (0.0, 0.0, 0.0), xyz=True) * (1.0, 1.0, -1.0)
                colliders.append(VrmCollider(f"colliderGroups[{g}].colliders[{k}]", node, "sphere", offset,
                                             self.number(here, c, "radius", 0.0, 0.0)))
                members.append(colliders[-1].name)
            groups.append(members)
        springs = []
        for b, group in enumerate(self.items("secondaryAnimation", sa, "boneGroups")):
            where = f"secondaryAnimation.boneGroups[{b}]"
            group = self.table(where, group)
            names = self.collider_names(where, group, groups)
            center = group.get("center", -1)
            center = None if center == -1 else self.node(where, group, "center")

            def joint(node, group=group, where=where):
                return VrmJoint(node=node,
                                stiffness=self.number(where, group, "stiffiness", GROUP_DEFAULTS["stiffiness"], 0.0),
                                gravity_power=self.number(where, group, "gravityPower",
                                                          GROUP_DEFAULTS["gravityPower"], 0.0),
                                gravity_dir=self.vector(where, group, "gravityDir", GROUP_DEFAULTS["gravityDir"],
                                                        xyz=True),
                                drag_force=self.number(where, group, "dragForce", GROUP_DEFAULTS["dragForce"], 0.0,
                                                       1.0),
                                hit_radius=self.number(where, group, "hitRadius", GROUP_DEFAULTS["hitRadius"], 0.0))

            label = group.get("comment") if isinstance(group.get("comment"), str) and group.get("comment") else \
                f"boneGroups[{b}]"
            for r, _ in enumerate(self.items(where, group, "bones")):
                root = self.node(where, {"bones": group["bones"][r]}, "bones")
                if root in self.used:
                    log.warning("%s: %s: bones[%d] = %d (%r) is already in chain %r: left out", self.path, where,
                                r, root, self.names[root], self.used[root])
                    continue
                for nodes in self.subtree_chains(root):
                    springs.append(self.claim(VrmSpring(self.chain_name(f"{label}: {self.names[nodes[0]]}"),
                                                        [joint(n) for n in nodes], None, names, center, label)))
        return VrmSprings("0.x", springs, colliders)

    def subtree_chains(self, root):
        """The chains of a VRM 0.x root's subtree: along first children from the root to a
        leaf, then one from each further child, in the order met. Nodes already in a chain (of
        an earlier root listed inside this subtree) end a chain, their subtree left to it."""
        chains, starts = [], deque([root])
        while starts:
            chain = [starts.popleft()]
            while True:
                children = [c for c in self.children[chain[-1]] if c not in self.used]
                if not children:
                    break
                starts.extend(children[1:])
                chain.append(children[0])
            chains.append(chain)
        return chains

    def claim(self, spring: VrmSpring) -> VrmSpring:
        for j in spring.joints:
            self.used[j.node] = spring.name
        return spring

