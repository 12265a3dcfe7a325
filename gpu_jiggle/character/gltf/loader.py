"""glTF 2.0 characters: nodes, skins, skinned meshes, textures and animation clips.

``Character.load(path)`` reads a ``.loader`` (JSON, with embedded ``data:`` or external
buffers and images) or a ``.glb`` (binary) file with the standard ``json`` module and our
own checked reading (:mod:`.io`, :mod:`.access`, :mod:`.check`), and gives
numpy arrays:

- ``character.skeleton``: a :class:`~gpu_jiggle.character.pose.skeleton.Skeleton` of every node (names,
  parents, rest transforms); ``skeleton.index("b_Head_05")`` finds a node.
- ``character.skins``: :class:`Skin` s, each with ``joints`` (J,) node indices and
  ``inverse_bind_matrices`` (J, 4, 4) float64.
- ``character.meshes``: :class:`MeshPrimitive` s with ``positions`` (V, 3) float32,
  ``normals`` (V, 3) float32 (computed from the triangles when the file has none), ``uvs``
  (V, 2) float32 or None, ``joints`` (V, 4) uint16 and ``weights`` (V, 4) float32 (rows
  summing to 1) or None, ``indices`` (I,) uint32, ``base_color_texture`` (H, W, 4) uint8
  RGBA (row 0 is the image's top row, the glTF UV origin) or None, ``base_color_factor``
  (4,), ``node`` and ``skin`` indices; ``material`` (a :class:`~.material.Material`:
  alpha mode, sides, unlit, texture transform, sampler), ``colors`` (V, 4) float32 RGBA
  (``COLOR_0``) or None, ``uv_sets`` (every ``TEXCOORD_n``, n = 0, 1, …, each (V, 2)
  float32), and the morph targets (:mod:`.morph`): ``morph_positions`` and ``morph_normals``
  (T, V, 3) float32 offsets or None, ``morph_weights`` (T,) float64 default weights.
- ``character.clip_names`` and ``character.clip(name)``: :class:`~gpu_jiggle.character.pose.animation.Clip` s.

For skinning, glTF ignores the mesh node's own transform: a vertex goes to world space by
``Σ weight_i · world(joint_i) · inverse_bind_i · v`` (see
:meth:`Skin.skinning_matrices`).

Files from anywhere can be loaded: what the loader guarantees (URIs confined to the
model's folder, bounded reads, every index, length and type checked before an array is
made, resource limits in :class:`GltfLimits`) is listed in :mod:`.io`. Errors name the
file: a missing file (the model, or a buffer or image in its folder) raises
``FileNotFoundError``; anything else a :class:`GltfError` (a ``ValueError``) with the JSON
pointer of the offending value.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...sim.validation import name_hint
from ..pose import quat
from ..pose.animation import Channel, Clip, Sampler
from .access import (COMPONENT_DTYPES, NORMALIZED_SCALE, TYPE_WIDTHS, check_accessors,  # noqa: F401
                          check_views, read_accessor)
from .check import check_document
from .draco import decode_draco
from .image import IMAGE_FORMATS, decode_image, image_bytes  # noqa: F401
from .io import (CHUNK_BIN, CHUNK_JSON, GLB_MAGIC, Budget, GltfError, GltfLimits,  # noqa: F401
                      fail, pointer, read_buffers, read_container, show)
from .material import DEFAULT_MATERIAL, Material, read_material, vertex_colours
from .morph import default_weights, read_targets
from ..pose.skeleton import Pose, Skeleton

@dataclass
class Skin:
    """A glTF skin.

    Attributes:
        name: str. joints: (J,) int64 node indices. inverse_bind_matrices: (J, 4, 4)
        float64 (identity where the file gives none). skeleton: the root node index or None.
    """

    name: str
    joints: np.ndarray
    inverse_bind_matrices: np.ndarray
    skeleton: int | None = None

    def skinning_matrices(self, world_matrices) -> np.ndarray:
        """(J, 4, 4) float64 ``world(joint) · inverse_bind`` from (N, 4, 4) node world
        matrices: they take bind-pose vertices to world space."""
        return np.asarray(world_matrices)[self.joints] @ self.inverse_bind_matrices


@dataclass
class MeshPrimitive:
    """One drawable primitive of a mesh node (arrays described in the module docstring)."""

    name: str
    node: int
    skin: int | None
    mode: int
    positions: np.ndarray
    normals: np.ndarray
    uvs: np.ndarray | None
    joints: np.ndarray | None
    weights: np.ndarray | None
    indices: np.ndarray
    base_color_factor: np.ndarray
    base_color_texture: np.ndarray | None
    material: Material = field(default_factory=Material)
    colors: np.ndarray | None = None
    uv_sets: tuple = ()
    morph_positions: np.ndarray | None = None
    morph_normals: np.ndarray | None = None
    morph_weights: np.ndarray = field(default_factory=lambda: np.zeros(0))


class Character:
    """A loaded glTF file; see the module docstring. Use :meth:`load`.

    Args:
        path: the file (names it in errors; relative URIs are read from its folder).
        raw_json: the parsed JSON document. buffers: each buffer's bytes, ``byteLength`` long.
        limits: :class:`GltfLimits` (the defaults when None).

    Attributes:
        path: Path. json: the file's JSON as a dict, exactly as read (for writing a
        modified copy). buffers: list of bytes, each buffer's data. image_data: {image
        index: bytes} of the images textures use, as read (checked URIs, capped sizes).
        decoded: {accessor index: array} decoded from Draco-compressed primitives
        (:mod:`.draco`).
        accessor_layouts, buffer_views: the checked accessors and buffer views (Layout, View).
        limits: the GltfLimits of the load. skeleton, skins, meshes, clips.

    Raises:
        GltfError: see :mod:`.check` and :mod:`.access`.
    """

    def __init__(self, path, raw_json, buffers, limits: GltfLimits | None = None, _budget: Budget | None = None):
        self.path = Path(path)
        self.json = raw_json
        self.buffers = buffers
        self.limits = limits or GltfLimits()
        self._budget = _budget or Budget(self.limits)
        self.buffer_views = check_views(self.path, raw_json, buffers)
        self.accessor_layouts = check_accessors(self.path, raw_json, self.buffer_views, self.limits)
        used_images = check_document(self.path, raw_json, self.accessor_layouts, self.buffer_views, self.limits)
        self.image_data = {i: image_bytes(self, i) for i in sorted(used_images)}
        self.decoded = decode_draco(self)  # Draco-compressed accessors, read by read_accessor
        self.skeleton = _skeleton(self)
        self.skins = [_skin(self, i, s) for i, s in enumerate(raw_json.get("skins", []))]
        self.clips = [_clip(self, i, a) for i, a in enumerate(raw_json.get("animations", []))]
        self._images = {}
        self.meshes = _meshes(self)
        # the budget is for loading; later reads are the caller's, except decoded images
        # (Character.image): what a file's textures decode to counts against what the load left
        self._image_budget, self._budget = self._budget, None

    @classmethod
    def load(cls, path, *, limits: GltfLimits | None = None) -> "Character":
        """Read a ``.loader`` or ``.glb`` file; ``limits`` raises or lowers the resource
        limits (see the module docstring for the errors)."""
        path = Path(path)
        limits = limits or GltfLimits()
        budget = Budget(limits)
        raw, blob = read_container(path, limits, budget)
        buffers = read_buffers(path, raw, blob, budget)
        try:
            return cls(path, raw, buffers, limits, budget)
        except (IndexError, KeyError, TypeError, AttributeError, OverflowError, RecursionError) as exc:
            raise GltfError(f"{path}: malformed glTF: {type(exc).__name__}: {exc}", path) from None

    # -- names ------------------------------------------------------------------------------
    @property
    def clip_names(self) -> list[str]:
        return [c.name for c in self.clips]

    def clip(self, name: str) -> Clip:
        """The animation called ``name``; ValueError naming the closest clip (``'run'``: did
        you mean ``'Run'``?), or else listing the file's clips, otherwise."""
        for c in self.clips:
            if c.name == name:
                return c
        hint = name_hint(name, self.clip_names, "the file's animations are:")
        raise ValueError(f"{self.path.name}: no animation called {name!r}{hint}")

    def clip_index(self, name: str) -> int:
        return self.clips.index(self.clip(name))

    @property
    def skin(self) -> Skin | None:
        """The first skin (most characters have one)."""
        return self.skins[0] if self.skins else None

    # -- data -------------------------------------------------------------------------------
    def accessor(self, index: int) -> np.ndarray:
        """Accessor ``index`` as a numpy array: (count,) for SCALAR, (count, n) for VECn,
        (count, n, n) for MATn (row-major, converted from glTF's column-major), in its
        component type, or float32 when the accessor is normalised. Sparse accessors are
        applied."""
        return read_accessor(self, index)

    def image(self, index: int) -> np.ndarray:
        """Image ``index`` decoded to (H, W, 4) uint8 RGBA (Pillow; PNG, JPEG or WebP, at
        most ``limits.max_image_pixels`` pixels)."""
        if index not in self._images:
            self._images[index] = decode_image(self, index)
        return self._images[index]

    def __repr__(self):
        return (f"Character({self.path.name!r}, nodes={self.skeleton.node_count}, skins={len(self.skins)}, "
                f"meshes={len(self.meshes)}, clips={self.clip_names})")


def load(path, *, limits: GltfLimits | None = None) -> Character:
    """Shorthand for :meth:`Character.load`."""
    return Character.load(path, limits=limits)


# -- nodes, skins, clips ----------------------------------------------------------------------
def _skeleton(character) -> Skeleton:
    """All nodes (their fields checked by :mod:`.check`): names, one parent each, and
    rest transforms (a ``matrix`` decomposed into finite T, R, S, section 3.5.3)."""
    path = character.path
    nodes = character.json.get("nodes", [])
    n = len(nodes)
    names = [node.get("name") or f"node{i}" for i, node in enumerate(nodes)]
    parents = [-1] * n
    for i, node in enumerate(nodes):
        for k, c in enumerate(node.get("children") or []):
            if parents[c] >= 0:
                raise fail(path, pointer("nodes", i, "children", k), f"node {c} ({names[c]!r}) has two parents, "
                                                                    f"{parents[c]} and {i}")
            parents[c] = i
    translation = np.zeros((n, 3))
    rotation = np.tile(quat.IDENTITY, (n, 1))
    scale = np.ones((n, 3))
    with_matrix = [i for i, node in enumerate(nodes) if node.get("matrix") is not None]
    if with_matrix:
        m = np.asarray([nodes[i]["matrix"] for i in with_matrix], np.float64).reshape(-1, 4, 4)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            t, r, s = quat.decompose(np.swapaxes(m, 1, 2))  # column-major in the file
        bad = ~(np.isfinite(t).all(1) & np.isfinite(r).all(1) & np.isfinite(s).all(1))
        if bad.any():
            i = with_matrix[int(np.flatnonzero(bad)[0])]
            raise fail(path, pointer("nodes", i, "matrix"), f"node {i} matrix {show(nodes[i]['matrix'])} has no "
                                                            f"finite translation, rotation and scale")
        translation[with_matrix], rotation[with_matrix], scale[with_matrix] = t, r, s
    for key, out in (("translation", translation), ("rotation", rotation), ("scale", scale)):
        which = [i for i, node in enumerate(nodes) if node.get(key) is not None and node.get("matrix") is None]
        if which:
            out[which] = np.asarray([nodes[i][key] for i in which], np.float64)
    which = [i for i, node in enumerate(nodes) if node.get("rotation") is not None and node.get("matrix") is None]
    if which:
        with np.errstate(over="ignore", invalid="ignore"):
            length = np.linalg.norm(rotation[which], axis=1)
        if not np.isfinite(length).all():
            i = which[int(np.flatnonzero(~np.isfinite(length))[0])]
            raise fail(path, pointer("nodes", i, "rotation"), f"node {i} rotation {show(nodes[i]['rotation'])} "
                                                              f"is too large to be a unit quaternion")
        rotation[which] = quat.normalize(rotation[which])
    try:
        return Skeleton(names, np.asarray(parents, np.int64), Pose(translation, rotation, scale))
    except ValueError as exc:
        raise GltfError(f"{path}: {exc} (at /nodes)", path, "/nodes") from None


def _skin(character, index, skin) -> Skin:
    joints = np.asarray(skin["joints"], np.int64)
    if skin.get("inverseBindMatrices") is None:
        ibm = np.tile(np.eye(4), (len(joints), 1, 1))
    else:
        ibm = read_accessor(character, skin["inverseBindMatrices"]).astype(np.float64)
        if not np.isfinite(ibm).all():
            raise fail(character.path, pointer("skins", index, "inverseBindMatrices"),
                       f"skin {index} has inverse bind matrices that are not finite")
    return Skin(skin.get("name") or f"skin{index}", joints, ibm, skin.get("skeleton"))


def _clip(character, index, animation) -> Clip:
    path = character.path
    name = animation.get("name") or f"animation{index}"
    samplers = animation.get("samplers") or []
    longest = float(character.limits.max_clip_seconds)
    cache = {}
    channels = []
    for ch in animation.get("channels") or []:
        target = ch["target"]
        if target.get("node") is None:
            continue  # a channel without a node targets an extension; nothing to play here
        s = ch["sampler"]
        if s not in cache:
            sampler = samplers[s]
            where = pointer("animations", index, "samplers", s)
            times = read_accessor(character, sampler["input"]).astype(np.float64)
            bad = ~(np.isfinite(times) & (times >= 0) & (times <= longest))
            if bad.any():
                raise fail(path, where + "/input", f"animation {name!r} sampler {s}: accessor {sampler['input']} has "
                                                   f"key time {float(times[bad][0])!r} s; glTF 2.0 requires times "
                                                   f">= 0 and this loader at most {longest:g} s "
                                                   f"(GltfLimits.max_clip_seconds)")
            values = read_accessor(character, sampler["output"]).astype(np.float64)
            try:
                cache[s] = Sampler(times, values, sampler.get("interpolation", "LINEAR"))
            except ValueError as exc:
                raise fail(path, where, f"animation {name!r} sampler {s}: {exc}") from None
        channels.append(Channel(int(target["node"]), target["path"], cache[s]))
    return Clip(name, channels)


# -- meshes -----------------------------------------------------------------------------------
def _meshes(character) -> list[MeshPrimitive]:
    meshes = character.json.get("meshes", [])
    out = []
    for node_index, node in enumerate(character.json.get("nodes", [])):
        if node.get("mesh") is None:
            continue
        mesh = meshes[node["mesh"]]
        for p_index, prim in enumerate(mesh["primitives"]):
            out.append(_primitive(character, node_index, node, node["mesh"], mesh, p_index, prim))
    return out


def _primitive(character, node_index, node, m, mesh, p_index, prim) -> MeshPrimitive:
    path = character.path
    where = pointer("meshes", m, "primitives", p_index)
    label = mesh.get("name")
    attributes = prim["attributes"]

    def attribute(name):
        index = attributes.get(name)
        return None if index is None else read_accessor(character, index)

    positions = attribute("POSITION")
    if positions is None:
        raise fail(path, where + "/attributes", f"mesh {label!r} primitive {p_index} has no POSITION")
    positions = positions.astype(np.float32)
    count = len(positions)
    indices = (np.arange(count, dtype=np.uint32) if prim.get("indices") is None
               else read_accessor(character, prim["indices"]).astype(np.uint32))
    if indices.size and indices.max() >= count:
        raise fail(path, where + "/indices", f"mesh {label!r} primitive {p_index} has an index "
                                             f"{int(indices.max())} past its {count} vertices")
    mode = prim.get("mode", 4)
    normals = attribute("NORMAL")
    computed = normals is None and mode == 4
    if normals is None:
        normals = vertex_normals(positions, indices if mode == 4 else np.zeros(0, np.uint32))
    normals = normals.astype(np.float32)
    uv_sets = []
    while f"TEXCOORD_{len(uv_sets)}" in attributes:
        uv_sets.append(attribute(f"TEXCOORD_{len(uv_sets)}").astype(np.float32))
    uvs = uv_sets[0] if uv_sets else None
    joints = attribute("JOINTS_0")
    skin = node.get("skin")
    if joints is not None and skin is not None and joints.size:
        have = len(character.skins[skin].joints)
        if int(joints.max()) >= have:
            raise fail(path, where + "/attributes/JOINTS_0", f"JOINTS_0 holds joint {int(joints.max())}, but node "
                                                             f"{node_index}'s skin {skin} has {have} joints")
    weights = attribute("WEIGHTS_0")
    if weights is not None:
        weights = weights.astype(np.float32)
        total = weights.sum(axis=1, keepdims=True)
        weights = np.where(total > 0, weights / np.where(total > 0, total, 1.0), weights)
    material = DEFAULT_MATERIAL if prim.get("material") is None else read_material(character, prim["material"])
    if material.base_color_texture is not None and material.texcoord >= len(uv_sets):
        raise fail(path, pointer("materials", prim["material"]), f"the base colour texture reads TEXCOORD_"
                                                                 f"{material.texcoord}, which mesh {m} primitive "
                                                                 f"{p_index} does not have")
    colors = attribute("COLOR_0")
    if colors is not None:
        colors = vertex_colours(colors, path, where + "/attributes/COLOR_0")
    morph_positions, morph_normals = read_targets(character, where, prim, positions, indices,
                                                  vertex_normals if computed else None)
    counts = {len(p.get("targets") or []) for p in mesh["primitives"]}
    if len(counts) > 1:  # section 3.7.2.2: every primitive of a mesh has the same targets
        raise fail(path, pointer("meshes", m, "primitives"), f"mesh {label!r} has primitives with "
                                                             f"{' and '.join(map(str, sorted(counts)))} morph targets; "
                                                             f"glTF 2.0 requires the same number in each")
    targets = 0 if morph_positions is None else len(morph_positions)
    return MeshPrimitive(name=f"{label or 'mesh'}[{p_index}]", node=node_index, skin=skin, mode=mode,
                         positions=positions, normals=normals, uvs=uvs,
                         joints=None if joints is None else joints.astype(np.uint16),
                         weights=weights, indices=indices, base_color_factor=material.base_color_factor,
                         base_color_texture=material.base_color_texture, material=material, colors=colors,
                         uv_sets=tuple(uv_sets), morph_positions=morph_positions, morph_normals=morph_normals,
                         morph_weights=default_weights(character, node_index, m, targets))


def vertex_normals(positions, indices) -> np.ndarray:
    """(V, 3) float32 unit normals: the area-weighted sum of the normals of the triangles
    (``indices`` (3T,)) around each vertex; +y for a vertex in no triangle."""
    p = np.asarray(positions, np.float64)
    tri = np.asarray(indices, np.int64)[: len(indices) // 3 * 3].reshape(-1, 3)
    face = np.cross(p[tri[:, 1]] - p[tri[:, 0]], p[tri[:, 2]] - p[tri[:, 0]])
    acc = np.zeros_like(p)
    for k in range(3):
        np.add.at(acc, tri[:, k], face)
    n = np.linalg.norm(acc, axis=1, keepdims=True)
    out = np.where(n > 1e-20, acc / np.where(n > 1e-20, n, 1.0), [[0.0, 1.0, 0.0]])
    return out.astype(np.float32)
