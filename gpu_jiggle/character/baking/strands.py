"""A rig's procedural strands baked as joints of the copy: ``bake(..., strands="joints")``
(``gpu-jiggle bake --strands joints``).

The pipeline simulates a ``[[strands]]`` group as point chains hung from a joint (each
:class:`~gpu_jiggle.character.rig.model.ChainSpec` of kind ``"strand"``: ``nodes[0]`` the joint,
``local_points`` (segments + 1, 3) its rest points in that joint's space); the source file
has no joints for them. :class:`StrandJoints` gives each strand of ``segments`` segments
``segments + 1`` new nodes in the copy:

- **Nodes.** Joint 0 is a child of the strand's joint, at the strand's root (``translation``
  ``local_points[0]``); joint k (1 .. segments) a child of joint k - 1 at the next rest point
  (``translation`` ``local_points[k] - local_points[k - 1]``), lengths in the strand joint's
  unit. Every rest rotation is the identity: at rest each strand joint has the orientation of
  the joint the strand hangs from, and the strand its rest shape. Names ``<strand>_<k>``
  (``mane_2_0``: joint 0 of ``mane[2]``), ``_`` added until no other node has the name.
- **Keys.** At each key, joint k < segments gets a LINEAR rotation key (float32 x, y, z, w):
  its world rotation turns its rest segment onto the simulated one with the least twist,
  ``R(-1)`` the world rotation of the strand's joint after springs, ``R(k) = between(R(k-1)·
  v(k), d(k))·R(k-1)`` (``v(k)`` the rest segment's direction in that joint's space, ``d(k)``
  the simulated segment's, :func:`~gpu_jiggle.character.pose.quat.between`), written as rotations
  local to the parent. The tip joint has no channel. The springs keep each segment's length
  (SPEC section 4; within 1e-3 of it where colliders leave no room), so rotations alone put
  joint k + 1 on simulated point k + 1. Joint 0 gets a translation channel too when the
  strand's joint is moved by the springs (a chain joint or below one): the pipeline hangs a
  strand from the pose the springs follow, not from the one after them.
- **Skin and mesh.** The joints join the first skin that holds every joint the strands hang
  from (the character's: one skeleton for an engine), appended to its ``joints`` with inverse
  bind matrices of their rest pose (the skin's ``inverseBindMatrices`` becomes a new accessor:
  the old matrices' float32 values, then the new ones); where no skin holds them all, a new
  skin ``strands`` of the strand joints alone. A new node ``strands`` at the root of each
  scene holding a strand's joint carries a mesh of one triangle primitive on that skin: per
  strand two crossed ribbons (a ``+`` in section) of the strand's ``width``, each vertex
  weighted 1 to the joint at its point (``JOINTS_0`` unsigned shorts: at most 65536 strand
  joints), with normals, and a new material ``strands`` (double-sided, a plain colour).

Other animations of the file do not move the strand joints: there the strands keep their
rest shape on their joint. The strand joints' world scale must be uniform (a rotation-only
joint cannot follow a sheared parent); the joint they hang from may be scaled uniformly.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..pose import quat

STRAND_MODES = ("none", "joints")
#: JOINTS_0 as unsigned shorts (glTF 2.0 section 3.7.3.1) addresses at most this many joints.
MAX_STRAND_JOINTS = 65536
#: The strands' material: a mid brown, fully rough, drawn from both sides.
STRAND_MATERIAL = {"name": "strands", "doubleSided": True,
                   "pbrMetallicRoughness": {"baseColorFactor": [0.45, 0.3, 0.2, 1.0], "metallicFactor": 0.0,
                                            "roughnessFactor": 1.0}}
FLOAT, UNSIGNED_SHORT, UNSIGNED_INT = 5126, 5123, 5125
ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER = 34962, 34963


def moved_by_springs(rig, skeleton) -> np.ndarray:
    """(N,) bool: the nodes the springs move (the rig's spring-driven chain joints and every
    node below one)."""
    moved = np.zeros(skeleton.node_count, bool)
    moved[rig.chain_joints] = True
    for node in skeleton.order:  # parents first
        parent = skeleton.parents[node]
        moved[node] |= parent >= 0 and moved[parent]
    return moved


@dataclass
class StrandJoints:
    """Every strand of a rig as a chain of new joints, and their keys (module docstring).
    S strands of at most K segments; a strand's entries past its own segments are padding.

    Attributes:
        chains: the rig's strand :class:`~gpu_jiggle.character.rig.model.ChainSpec` s, in
            ``rig.strand_chains`` order (that of ``Frame.strands``).
        offsets: per strand, (segments + 1, 3) float64 rest translations of its joints (the
            strand joint's length unit).
        parents: (S,) int64 the joints the strands hang from. moved: (S,) bool: joint 0's
            translation is keyed (its joint is moved by the springs).
        rotations: (n, S, K, 4) float32 local rotations (x, y, z, w) of joints 0 .. K - 1 per key.
        translations: (n, S, 3) float32 joint 0 translations per key (meaningful where ``moved``).
        rest_parent_world: (S, 4, 4) float64 rest world matrices of the joints the strands hang from.
        host: the skin the strand joints join (None: a new one).
        nodes: per strand, the (segments + 1) node indices in the copy (set by :meth:`write`).
        rest_segments: (S, K, 3) float64 each strand's rest segments in its joint's space.
        rows: (S, K + 1) int64 each strand's points' rows in ``np.concatenate(frame.strands)``.
    """

    chains: list
    offsets: list
    parents: np.ndarray
    moved: np.ndarray
    rotations: np.ndarray
    translations: np.ndarray
    rest_parent_world: np.ndarray
    host: int | None = None
    nodes: list = field(default_factory=list)
    rest_segments: np.ndarray = field(default=None, repr=False)
    rows: np.ndarray = field(default=None, repr=False)

    @classmethod
    def plan(cls, character, rig, keys: int) -> "StrandJoints":
        """Room for ``keys`` keys of every strand of ``rig`` on ``character``.

        Raises: ValueError when the rig has no strands, or their joints would take the skin
        they join past :data:`MAX_STRAND_JOINTS` joints."""
        chains = rig.strand_chains
        if not chains:
            raise ValueError(f"strands = 'joints': {rig.source} has no [[strands]] to bake as joints")
        parents = np.array([int(c.nodes[0]) for c in chains], np.int64)
        skins = character.json.get("skins", [])
        host = next((i for i, skin in enumerate(skins) if set(parents.tolist()) <= set(skin["joints"])), None)
        before = 0 if host is None else len(skins[host]["joints"])
        total = sum(c.segments + 1 for c in chains)
        if before + total > MAX_STRAND_JOINTS:
            raise ValueError(f"strands = 'joints': the rig's strands make {total} joints, {before + total} in their "
                             f"skin; a glTF skin's JOINTS_0 (unsigned shorts) addresses at most {MAX_STRAND_JOINTS}")
        sk = character.skeleton
        offsets = [np.concatenate([c.local_points[:1], np.diff(c.local_points, axis=0)]) for c in chains]
        most = max(c.segments for c in chains)
        out = cls(chains, offsets, parents, moved_by_springs(rig, sk)[parents],
                  np.empty((keys, len(chains), most, 4), np.float32), np.zeros((keys, len(chains), 3), np.float32),
                  sk.world_matrices(sk.rest_pose())[parents], host)
        # each strand's rest segments and its points' rows in np.concatenate(frame.strands), padded
        # past its tip with its last point (a zero segment: a padding rotation of identity)
        out.rest_segments = np.tile([0.0, 1.0, 0.0], (len(chains), most, 1))
        out.rows = np.empty((len(chains), most + 1), np.int64)
        first = 0
        for i, c in enumerate(chains):
            out.rest_segments[i, :c.segments] = offsets[i][1:]
            out.rows[i] = first + np.minimum(np.arange(most + 1), c.segments)
            first += c.segments + 1
        return out

    @property
    def joint_count(self) -> int:
        return sum(c.segments + 1 for c in self.chains)

    @property
    def groups(self) -> list:
        """The strand groups' names, in rig order."""
        return list(dict.fromkeys(c.group or c.name for c in self.chains))

    def record(self, key: int, frame, world_rotations) -> None:
        """Key ``key`` from a pipeline :class:`~gpu_jiggle.character.pipeline.Frame` and the
        (N, 4) world rotations of its final pose, every strand at once."""
        points = np.concatenate(frame.strands).astype(np.float64)[self.rows]  # (S, K + 1, 3) world
        world = quat.normalize(world_rotations[self.parents])
        shape = self.rotations.shape[1:3]
        near = self.rotations[key - 1].astype(np.float64) if key else np.tile(quat.IDENTITY, shape + (1,))
        for k in range(shape[1]):
            bend = quat.between(quat.rotate(world, self.rest_segments[:, k]), points[:, k + 1] - points[:, k])
            turned = quat.normalize(quat.multiply(bend, world))
            self.rotations[key, :, k] = quat.local_from_world(world, turned, near[:, k])
            world = turned
        if self.moved.any():
            m = frame.world_matrices[self.parents[self.moved]]
            offset = points[self.moved, 0] - m[:, :3, 3]
            self.translations[key, self.moved] = np.linalg.solve(m[:, :3, :3], offset[..., None])[..., 0]

    # -- the copy ------------------------------------------------------------------------------
    def write(self, doc: dict, append_view, time_accessor: int, anim: dict, character) -> None:
        """Add the strand joints, their skin joints, mesh, material and channels to ``doc`` (the
        copy's JSON of ``character``'s file; ``append_view(bytes, target=None) -> buffer view
        index`` appends to buffer 0; ``anim`` the baked animation, ``time_accessor`` its key
        times)."""
        nodes = doc.setdefault("nodes", [])
        accessors = doc.setdefault("accessors", [])

        def accessor(array, kind, component=FLOAT, target=None, bounds=False):
            acc = {"bufferView": append_view(np.ascontiguousarray(array).tobytes(), target),
                   "componentType": component, "count": int(len(array)), "type": kind}
            if bounds:
                acc["min"], acc["max"] = np.min(array, axis=0).tolist(), np.max(array, axis=0).tolist()
            accessors.append(acc)
            return len(accessors) - 1

        host = self.host
        base = 0 if host is None else len(doc["skins"][host]["joints"])
        taken = {n.get("name") for n in nodes}
        self.nodes = []
        bind, positions, normals, joints, indices = [], [], [], [], []
        for i, chain in enumerate(self.chains):
            first = len(nodes)
            ids = list(range(first, first + chain.segments + 1))
            self.nodes.append(ids)
            stem = chain.name.replace("[", "_").replace("]", "")
            world = self.rest_parent_world[i]
            for k, node in enumerate(ids):
                name = f"{stem}_{k}"
                while name in taken:
                    name += "_"
                taken.add(name)
                entry = {"name": name, "translation": self.offsets[i][k].tolist()}
                if k < chain.segments:
                    entry["children"] = [node + 1]
                nodes.append(entry)
                world = world @ _translation(self.offsets[i][k])
                bind.append(world)
            nodes[int(chain.nodes[0])].setdefault("children", []).append(first)
            p, n, j, t = _ribbons(chain, self.offsets[i], np.array(bind[-len(ids):]), base + len(bind) - len(ids))
            indices.append(t + sum(len(x) for x in positions))
            positions.append(p)
            normals.append(n)
            joints.append(j)
        skin = self._skin(doc, accessor, character, host, np.array(bind))
        self._add_mesh(doc, accessor, character.skeleton, skin, np.concatenate(positions), np.concatenate(normals),
                       np.concatenate(joints), np.concatenate(indices))
        samplers, channels = anim.setdefault("samplers", []), anim.setdefault("channels", [])
        for i, ids in enumerate(self.nodes):
            keyed = [(ids[k], "rotation", self.rotations[:, i, k], "VEC4") for k in range(self.chains[i].segments)]
            if self.moved[i]:
                keyed.append((ids[0], "translation", self.translations[:, i], "VEC3"))
            for node, path, values, kind in keyed:
                samplers.append({"input": time_accessor, "output": accessor(values, kind), "interpolation": "LINEAR"})
                channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": path}})

    def _skin(self, doc, accessor, character, host, bind) -> int:
        """The skin the strand joints join: ``host`` (the first skin holding every joint the
        strands hang from) with the strand joints appended, its inverse bind matrices
        rewritten as a new accessor (the old ones' float32 values, then the strand joints'),
        or a new skin ``strands`` when no skin holds them all. Returns the skin's index."""
        ibm = np.linalg.inv(bind)
        ibm[:, 3] = (0.0, 0.0, 0.0, 1.0)  # exactly: the validator checks the bottom row
        ibm = np.swapaxes(ibm, 1, 2).reshape(-1, 16)  # column-major
        strand_nodes = [n for ids in self.nodes for n in ids]
        skins = doc.setdefault("skins", [])
        if host is None:
            skins.append({"name": "strands", "joints": strand_nodes, "inverseBindMatrices": accessor(
                ibm.astype(np.float32), "MAT4")})
            return len(skins) - 1
        old = np.swapaxes(character.skins[host].inverse_bind_matrices, 1, 2).reshape(-1, 16)
        skin = skins[host]
        skin["joints"] = skin["joints"] + strand_nodes
        skin["inverseBindMatrices"] = accessor(np.concatenate([old, ibm]).astype(np.float32), "MAT4")
        return host

    def _add_mesh(self, doc, accessor, skeleton, skin, positions, normals, joints, indices) -> None:
        materials = doc.setdefault("materials", [])
        materials.append(dict(STRAND_MATERIAL, pbrMetallicRoughness=dict(STRAND_MATERIAL["pbrMetallicRoughness"])))
        wide = len(positions) > 65535
        attributes = {
            "POSITION": accessor(positions.astype(np.float32), "VEC3", target=ARRAY_BUFFER, bounds=True),
            "NORMAL": accessor(normals.astype(np.float32), "VEC3", target=ARRAY_BUFFER),
            "JOINTS_0": accessor(joints, "VEC4", UNSIGNED_SHORT, ARRAY_BUFFER),
            "WEIGHTS_0": accessor(np.tile(np.float32([1, 0, 0, 0]), (len(joints), 1)), "VEC4", target=ARRAY_BUFFER)}
        meshes = doc.setdefault("meshes", [])
        meshes.append({"name": "strands", "primitives": [{
            "attributes": attributes, "mode": 4, "material": len(materials) - 1,
            "indices": accessor(indices.astype(np.uint32 if wide else np.uint16), "SCALAR",
                                UNSIGNED_INT if wide else UNSIGNED_SHORT, ELEMENT_ARRAY_BUFFER)}]})
        nodes = doc["nodes"]
        nodes.append({"name": "strands", "mesh": len(meshes) - 1, "skin": skin})
        roots = set()
        for chain in self.chains:
            node = int(chain.nodes[0])
            while skeleton.parents[node] >= 0:
                node = int(skeleton.parents[node])
            roots.add(node)
        for scene in doc.get("scenes", []):
            if roots & set(scene.get("nodes", [])):
                scene["nodes"].append(len(nodes) - 1)


def _translation(offset) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = offset
    return m


def _ribbons(chain, offsets, bind, first_joint: int):
    """One strand's crossed ribbons: (positions (V, 3), normals (V, 3), joints (V, 4) uint16,
    triangle indices (T·3,)) in bind space; 4 vertices per joint (±half width along two axes
    across the strand), each on skin joint ``first_joint + k``."""
    count = chain.segments + 1
    along = np.concatenate([offsets[1:], offsets[-1:]])  # each joint's strand direction, the tip the last segment's
    along /= np.linalg.norm(along, axis=1, keepdims=True)
    axis = np.eye(3)[np.argmin(np.abs(along[0]))]  # the joint axis most across the strand's first segment
    across = axis - (along @ axis)[:, None] * along
    across /= np.linalg.norm(across, axis=1, keepdims=True)
    other = np.cross(along, across)
    half = 0.5 * float(chain.width)
    local = np.stack([half * across, -half * across, half * other, -half * other], axis=1)  # (count, 4, 3)
    facing = np.stack([other, other, across, across], axis=1)
    positions = np.einsum("kij,kvj->kvi", bind[:, :3, :3], local) + bind[:, None, :3, 3]
    normals = np.einsum("kij,kvj->kvi", bind[:, :3, :3], facing)
    normals /= np.linalg.norm(normals, axis=2, keepdims=True)
    joints = np.zeros((count * 4, 4), np.uint16)
    joints[:, 0] = first_joint + np.repeat(np.arange(count), 4)
    k = 4 * np.arange(chain.segments)[:, None]
    quads = [k + np.array([0, 1, 4, 1, 5, 4]), k + np.array([2, 3, 6, 3, 7, 6])]
    return positions.reshape(-1, 3), normals.reshape(-1, 3), joints, np.concatenate(quads, axis=1).reshape(-1)
