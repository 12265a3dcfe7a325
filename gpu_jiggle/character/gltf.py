"""glTF 2.0 characters: nodes, skins, skinned meshes, textures and animation clips.

``Character.load(path)`` reads a ``.gltf`` (JSON, with embedded ``data:`` or external
buffers and images) or a ``.glb`` (binary) file through pygltflib's object model and gives
numpy arrays:

- ``character.skeleton``: a :class:`~gpu_jiggle.character.skeleton.Skeleton` of every node (names,
  parents, rest transforms); ``skeleton.index("b_Head_05")`` finds a node.
- ``character.skins``: :class:`Skin` s, each with ``joints`` (J,) node indices and
  ``inverse_bind_matrices`` (J, 4, 4) float64.
- ``character.meshes``: :class:`MeshPrimitive` s with ``positions`` (V, 3) float32,
  ``normals`` (V, 3) float32 (computed from the triangles when the file has none), ``uvs``
  (V, 2) float32 or None, ``joints`` (V, 4) uint16 and ``weights`` (V, 4) float32 (rows
  summing to 1) or None, ``indices`` (I,) uint32, ``base_color_texture`` (H, W, 4) uint8
  RGBA (row 0 is the image's top row, the glTF UV origin) or None, ``base_color_factor``
  (4,), ``node`` and ``skin`` indices.
- ``character.clip_names`` and ``character.clip(name)``: :class:`~gpu_jiggle.character.animation.Clip` s.

For skinning, glTF ignores the mesh node's own transform: a vertex goes to world space by
``Σ weight_i · world(joint_i) · inverse_bind_i · v`` (see
:meth:`Skin.skinning_matrices`).

Errors name the file: a missing file or external buffer raises ``FileNotFoundError``; a
truncated, malformed or non-glTF file, a buffer shorter than its declared length, or an
accessor reaching past its buffer view raises ``ValueError``.
"""
from __future__ import annotations

import base64
import io
import json
import struct
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pygltflib

from . import quat
from .animation import INTERPOLATIONS, PATHS, Channel, Clip, Sampler
from .skeleton import Pose, Skeleton

GLB_MAGIC = b"glTF"
CHUNK_JSON = 0x4E4F534A
CHUNK_BIN = 0x004E4942

COMPONENT_DTYPES = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32,
                    5126: np.float32}
TYPE_WIDTHS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
NORMALIZED_SCALE = {5120: 127.0, 5121: 255.0, 5122: 32767.0, 5123: 65535.0}


class GltfError(ValueError):
    """A file that is not valid glTF 2.0 (a ``ValueError`` naming the file)."""


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


class Character:
    """A loaded glTF file; see the module docstring. Use :meth:`load`.

    Attributes:
        path: Path. document: the pygltflib ``GLTF2`` object. json: the file's JSON as a
        dict, exactly as read (for writing a modified copy). buffers: list of bytes, each
        buffer's data. skeleton, skins, meshes, clips (list of Clip).
    """

    def __init__(self, path, document, raw_json, buffers):
        self.path = Path(path)
        self.document = document
        self.json = raw_json
        self.buffers = buffers
        self.skeleton = _skeleton(self)
        self.skins = [_skin(self, i, s) for i, s in enumerate(document.skins or [])]
        self.clips = [_clip(self, i, a) for i, a in enumerate(document.animations or [])]
        self._images = {}
        self.meshes = _meshes(self)

    @classmethod
    def load(cls, path) -> "Character":
        """Read a ``.gltf`` or ``.glb`` file (see the module docstring for the errors)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such glTF file")
        data = path.read_bytes()
        if data[:4] == GLB_MAGIC:
            text, blob = _split_glb(path, data)
        else:
            blob = None
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError:
                raise GltfError(f"{path}: not a glTF file (neither glTF JSON nor binary glTF with the "
                                f"'glTF' magic)") from None
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            kind = "the JSON chunk of this binary glTF" if blob is not None else "this file"
            raise GltfError(f"{path}: not a glTF file: {kind} is not valid JSON ({exc}); "
                            f"a truncated or damaged file?") from None
        _check_json(path, raw)
        try:
            document = pygltflib.GLTF2.from_json(text, infer_missing=True)
        except (AttributeError, TypeError, KeyError, ValueError) as exc:
            raise GltfError(f"{path}: malformed glTF: {type(exc).__name__}: {exc}") from None
        buffers = [_buffer_bytes(path, i, b, blob) for i, b in enumerate(document.buffers or [])]
        try:
            return cls(path, document, raw, buffers)
        except (IndexError, KeyError, TypeError, AttributeError) as exc:
            raise GltfError(f"{path}: malformed glTF: {type(exc).__name__}: {exc}") from None

    # -- names ------------------------------------------------------------------------------
    @property
    def clip_names(self) -> list[str]:
        return [c.name for c in self.clips]

    def clip(self, name: str) -> Clip:
        """The animation called ``name``; ValueError listing the file's clips otherwise."""
        for c in self.clips:
            if c.name == name:
                return c
        have = ", ".join(self.clip_names) if self.clips else "none"
        raise ValueError(f"{self.path.name}: no animation called {name!r}; the file's animations are: {have}")

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
        """Image ``index`` decoded to (H, W, 4) uint8 RGBA (Pillow)."""
        if index not in self._images:
            self._images[index] = _decode_image(self, index)
        return self._images[index]

    def __repr__(self):
        return (f"Character({self.path.name!r}, nodes={self.skeleton.node_count}, skins={len(self.skins)}, "
                f"meshes={len(self.meshes)}, clips={self.clip_names})")


def load(path) -> Character:
    """Shorthand for :meth:`Character.load`."""
    return Character.load(path)


# -- file level ------------------------------------------------------------------------------
def _split_glb(path, data: bytes):
    """(JSON text, BIN chunk bytes or None) of a binary glTF, checking every length."""
    if len(data) < 12:
        raise GltfError(f"{path}: truncated binary glTF: {len(data)} bytes, shorter than the 12-byte header")
    _, version, length = struct.unpack_from("<4sII", data, 0)
    if version != 2:
        raise GltfError(f"{path}: binary glTF version {version}; only version 2 is supported")
    if length > len(data):
        raise GltfError(f"{path}: truncated binary glTF: the header says {length} bytes, the file has {len(data)}")
    offset, text, blob = 12, None, None
    while offset < length:
        if offset + 8 > length:
            raise GltfError(f"{path}: truncated binary glTF: a chunk header at byte {offset} is cut off")
        chunk_length, chunk_type = struct.unpack_from("<II", data, offset)
        start = offset + 8
        if start + chunk_length > length:
            raise GltfError(f"{path}: truncated binary glTF: a chunk of {chunk_length} bytes at byte {start} "
                            f"runs past the end ({length} bytes)")
        chunk = data[start:start + chunk_length]
        if chunk_type == CHUNK_JSON and text is None:
            try:
                text = chunk.decode("utf-8")
            except UnicodeDecodeError:
                raise GltfError(f"{path}: the JSON chunk of this binary glTF is not UTF-8") from None
        elif chunk_type == CHUNK_BIN and blob is None and text is not None:
            blob = chunk
        offset = start + chunk_length
    if text is None:
        raise GltfError(f"{path}: binary glTF without a JSON chunk")
    return text, blob


def _check_json(path, raw):
    if not isinstance(raw, dict) or not isinstance(raw.get("asset"), dict):
        raise GltfError(f"{path}: not a glTF file: the JSON has no 'asset' object")
    version = str(raw["asset"].get("version", ""))
    if not version.startswith("2."):
        raise GltfError(f"{path}: glTF asset version {version!r}; only glTF 2.x is supported")
    for key in ("nodes", "meshes", "skins", "animations", "accessors", "bufferViews", "buffers", "images",
                "materials", "textures", "scenes"):
        if key in raw and not (isinstance(raw[key], list) and all(isinstance(x, dict) for x in raw[key])):
            raise GltfError(f"{path}: malformed glTF: '{key}' must be a list of objects")


def _data_uri(uri: str) -> bytes:
    header, _, payload = uri.partition(",")
    if ";base64" in header:
        return base64.b64decode(payload, validate=False)
    return urllib.parse.unquote_to_bytes(payload)


def _external(path: Path, uri: str, what: str) -> bytes:
    target = path.parent / urllib.parse.unquote(uri)
    if not target.is_file():
        raise FileNotFoundError(f"{path}: {what} refers to {uri!r}, but {target} does not exist")
    return target.read_bytes()


def _buffer_bytes(path, index, buffer, blob) -> bytes:
    uri = buffer.uri
    what = f"buffer {index}"
    if uri is None:
        if index != 0 or blob is None:
            raise GltfError(f"{path}: {what} has no uri and there is no binary chunk to take it from")
        data = blob
    elif uri.startswith("data:"):
        try:
            data = _data_uri(uri)
        except (ValueError, TypeError) as exc:
            raise GltfError(f"{path}: {what}: bad data URI ({exc})") from None
    else:
        data = _external(path, uri, what)
    length = buffer.byteLength
    if not isinstance(length, int) or length < 0:
        raise GltfError(f"{path}: {what} has no valid byteLength ({length!r})")
    if len(data) < length:
        raise GltfError(f"{path}: {what} holds {len(data)} bytes but declares byteLength {length}: "
                        f"a truncated file or buffer?")
    return data[:length]


# -- accessors --------------------------------------------------------------------------------
def _view_bytes(character, view_index, what):
    doc = character.document
    path = character.path
    views = doc.bufferViews or []
    if not isinstance(view_index, int) or not 0 <= view_index < len(views):
        raise GltfError(f"{path}: {what} refers to bufferView {view_index!r}, which does not exist")
    view = views[view_index]
    if not isinstance(view.buffer, int) or not 0 <= view.buffer < len(character.buffers):
        raise GltfError(f"{path}: bufferView {view_index} refers to buffer {view.buffer!r}, which does not exist")
    data = character.buffers[view.buffer]
    start = view.byteOffset or 0
    end = start + (view.byteLength or 0)
    if end > len(data):
        raise GltfError(f"{path}: bufferView {view_index} (bytes {start}..{end}) runs past the end of buffer "
                        f"{view.buffer} ({len(data)} bytes)")
    return data[start:end], view.byteStride


def _strided(character, view_index, offset, count, dtype, width, what):
    raw, stride = _view_bytes(character, view_index, what)
    item = np.dtype(dtype).itemsize * width
    stride = stride or item
    need = offset + stride * (count - 1) + item if count else 0
    if need > len(raw):
        raise GltfError(f"{character.path}: {what} needs {need} bytes of bufferView {view_index}, "
                        f"which has {len(raw)}")
    if count == 0:
        return np.zeros((0, width), dtype)
    buf = np.frombuffer(raw, np.uint8, count=need - offset, offset=offset)
    rows = np.lib.stride_tricks.as_strided(buf, shape=(count, item), strides=(stride, 1))
    return np.ascontiguousarray(rows).view(dtype).reshape(count, width)


def read_accessor(character, index: int) -> np.ndarray:
    """See :meth:`Character.accessor`."""
    doc = character.document
    path = character.path
    accessors = doc.accessors or []
    if not isinstance(index, int) or not 0 <= index < len(accessors):
        raise GltfError(f"{path}: accessor {index!r} does not exist (the file has {len(accessors)})")
    a = accessors[index]
    what = f"accessor {index}"
    if a.componentType not in COMPONENT_DTYPES or a.type not in TYPE_WIDTHS:
        raise GltfError(f"{path}: {what} has componentType {a.componentType!r} and type {a.type!r}, "
                        f"which glTF 2.0 does not define")
    dtype = COMPONENT_DTYPES[a.componentType]
    width = TYPE_WIDTHS[a.type]
    count = a.count if isinstance(a.count, int) and a.count >= 0 else None
    if count is None:
        raise GltfError(f"{path}: {what} has no valid count ({a.count!r})")
    if a.type.startswith("MAT") and np.dtype(dtype).itemsize < 4:
        raise GltfError(f"{path}: {what}: matrices of 1- and 2-byte components (column padding) are not supported")
    if a.bufferView is None:
        values = np.zeros((count, width), dtype)
    else:
        values = _strided(character, a.bufferView, a.byteOffset or 0, count, dtype, width, what)
    if a.sparse is not None and a.sparse.count:
        values = values.copy()
        sp = a.sparse
        index_dtype = COMPONENT_DTYPES.get(sp.indices.componentType)
        if index_dtype is None:
            raise GltfError(f"{path}: {what}: sparse indices of componentType {sp.indices.componentType!r}")
        where = _strided(character, sp.indices.bufferView, sp.indices.byteOffset or 0, sp.count, index_dtype, 1,
                         f"{what} (sparse indices)")[:, 0].astype(np.int64)
        if where.size and (where.min() < 0 or where.max() >= count):
            raise GltfError(f"{path}: {what}: a sparse index lies outside 0..{count - 1}")
        values[where] = _strided(character, sp.values.bufferView, sp.values.byteOffset or 0, sp.count, dtype,
                                 width, f"{what} (sparse values)")
    if a.normalized and a.componentType in NORMALIZED_SCALE:
        values = np.maximum(values.astype(np.float32) / np.float32(NORMALIZED_SCALE[a.componentType]), -1.0)
    if a.type == "SCALAR":
        return values[:, 0]
    if a.type.startswith("MAT"):
        n = int(round(width ** 0.5))
        return np.swapaxes(values.reshape(count, n, n), 1, 2)
    return values


# -- nodes, skins, clips ----------------------------------------------------------------------
def _skeleton(character) -> Skeleton:
    nodes = character.document.nodes or []
    n = len(nodes)
    names = [node.name if node.name else f"node{i}" for i, node in enumerate(nodes)]
    parents = np.full(n, -1, np.int64)
    for i, node in enumerate(nodes):
        for c in node.children or []:
            if not isinstance(c, int) or not 0 <= c < n:
                raise GltfError(f"{character.path}: node {i} ({names[i]!r}) has child {c!r}, which is not a node")
            if parents[c] >= 0:
                raise GltfError(f"{character.path}: node {c} ({names[c]!r}) has two parents, "
                                f"{parents[c]} and {i}")
            parents[c] = i
    translation = np.zeros((n, 3))
    rotation = np.tile(quat.IDENTITY, (n, 1))
    scale = np.ones((n, 3))
    for i, node in enumerate(nodes):
        if node.matrix is not None:
            m = np.asarray(node.matrix, np.float64).reshape(4, 4).T  # column-major in the file
            translation[i], rotation[i], scale[i] = quat.decompose(m)
            continue
        if node.translation is not None:
            translation[i] = node.translation
        if node.rotation is not None:
            rotation[i] = quat.normalize(np.asarray(node.rotation, np.float64))
        if node.scale is not None:
            scale[i] = node.scale
    try:
        return Skeleton(names, parents, Pose(translation, rotation, scale))
    except ValueError as exc:
        raise GltfError(f"{character.path}: {exc}") from None


def _skin(character, index, skin) -> Skin:
    n = character.skeleton.node_count
    joints = np.asarray(skin.joints or [], np.int64)
    bad = (joints < 0) | (joints >= n)
    if bad.any():
        raise GltfError(f"{character.path}: skin {index} names joint {int(joints[bad][0])}, which is not a node")
    if skin.inverseBindMatrices is None:
        ibm = np.tile(np.eye(4), (len(joints), 1, 1))
    else:
        ibm = read_accessor(character, skin.inverseBindMatrices).astype(np.float64)
        if ibm.shape != (len(joints), 4, 4):
            raise GltfError(f"{character.path}: skin {index} has {len(joints)} joints but "
                            f"{ibm.shape[0]} inverse bind matrices")
    return Skin(skin.name or f"skin{index}", joints, ibm, skin.skeleton)


def _clip(character, index, animation) -> Clip:
    path = character.path
    name = animation.name if animation.name else f"animation{index}"
    samplers = animation.samplers or []
    cache = {}
    channels = []
    for k, ch in enumerate(animation.channels or []):
        target = ch.target
        where = f"animation {name!r} channel {k}"
        if target is None or target.node is None:
            continue  # a channel without a node targets an extension; nothing to play here
        if target.path not in PATHS:
            raise GltfError(f"{path}: {where} animates {target.path!r}; glTF 2.0 paths are {', '.join(PATHS)}")
        if not 0 <= target.node < character.skeleton.node_count:
            raise GltfError(f"{path}: {where} targets node {target.node}, which does not exist")
        if not isinstance(ch.sampler, int) or not 0 <= ch.sampler < len(samplers):
            raise GltfError(f"{path}: {where} uses sampler {ch.sampler!r}, which does not exist")
        if ch.sampler not in cache:
            s = samplers[ch.sampler]
            interpolation = s.interpolation or "LINEAR"
            if interpolation not in INTERPOLATIONS:
                raise GltfError(f"{path}: {where}: interpolation {interpolation!r}; expected one of "
                                f"{', '.join(INTERPOLATIONS)}")
            times = read_accessor(character, s.input).astype(np.float64)
            values = read_accessor(character, s.output).astype(np.float64)
            try:
                cache[ch.sampler] = Sampler(times, values, interpolation)
            except ValueError as exc:
                raise GltfError(f"{path}: {where}: {exc}") from None
        channels.append(Channel(int(target.node), target.path, cache[ch.sampler]))
    return Clip(name, channels)


# -- meshes -----------------------------------------------------------------------------------
def _meshes(character) -> list[MeshPrimitive]:
    doc = character.document
    out = []
    for node_index, node in enumerate(doc.nodes or []):
        if node.mesh is None:
            continue
        if not 0 <= node.mesh < len(doc.meshes or []):
            raise GltfError(f"{character.path}: node {node_index} refers to mesh {node.mesh}, which does not exist")
        mesh = doc.meshes[node.mesh]
        for p_index, prim in enumerate(mesh.primitives or []):
            out.append(_primitive(character, node_index, node, mesh, p_index, prim))
    return out


def _attribute(character, prim, name):
    index = getattr(prim.attributes, name, None)
    return None if index is None else read_accessor(character, index)


def _primitive(character, node_index, node, mesh, p_index, prim) -> MeshPrimitive:
    positions = _attribute(character, prim, "POSITION")
    if positions is None:
        raise GltfError(f"{character.path}: mesh {mesh.name!r} primitive {p_index} has no POSITION")
    positions = positions.astype(np.float32)
    count = len(positions)
    indices = (np.arange(count, dtype=np.uint32) if prim.indices is None
               else read_accessor(character, prim.indices).astype(np.uint32))
    if indices.size and indices.max() >= count:
        raise GltfError(f"{character.path}: mesh {mesh.name!r} primitive {p_index} has an index "
                        f"{int(indices.max())} past its {count} vertices")
    mode = 4 if prim.mode is None else int(prim.mode)
    normals = _attribute(character, prim, "NORMAL")
    if normals is None:
        normals = vertex_normals(positions, indices if mode == 4 else np.zeros(0, np.uint32))
    normals = normals.astype(np.float32)
    uvs = _attribute(character, prim, "TEXCOORD_0")
    joints = _attribute(character, prim, "JOINTS_0")
    weights = _attribute(character, prim, "WEIGHTS_0")
    if weights is not None:
        weights = weights.astype(np.float32)
        total = weights.sum(axis=1, keepdims=True)
        weights = np.where(total > 0, weights / np.where(total > 0, total, 1.0), weights)
    factor = np.ones(4, np.float32)
    texture = None
    materials = character.document.materials or []
    if prim.material is not None and 0 <= prim.material < len(materials):
        pbr = materials[prim.material].pbrMetallicRoughness
        if pbr is not None:
            if pbr.baseColorFactor is not None:
                factor = np.asarray(pbr.baseColorFactor, np.float32)
            if pbr.baseColorTexture is not None:
                textures = character.document.textures or []
                t = pbr.baseColorTexture.index
                if t is not None and 0 <= t < len(textures) and textures[t].source is not None:
                    texture = character.image(textures[t].source)
    return MeshPrimitive(name=f"{mesh.name or 'mesh'}[{p_index}]", node=node_index, skin=node.skin, mode=mode,
                         positions=positions, normals=normals,
                         uvs=None if uvs is None else uvs.astype(np.float32),
                         joints=None if joints is None else joints.astype(np.uint16),
                         weights=weights, indices=indices, base_color_factor=factor,
                         base_color_texture=texture)


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


def _decode_image(character, index) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    images = character.document.images or []
    if not 0 <= index < len(images):
        raise GltfError(f"{character.path}: image {index} does not exist")
    img = images[index]
    what = f"image {index}"
    if img.bufferView is not None:
        data, _ = _view_bytes(character, img.bufferView, what)
    elif img.uri is None:
        raise GltfError(f"{character.path}: {what} has neither a uri nor a bufferView")
    elif img.uri.startswith("data:"):
        data = _data_uri(img.uri)
    else:
        data = _external(character.path, img.uri, what)
    try:
        with Image.open(io.BytesIO(bytes(data))) as im:
            return np.asarray(im.convert("RGBA"), np.uint8).copy()
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise GltfError(f"{character.path}: {what} cannot be decoded ({exc})") from None
