"""The baked copy of a glTF document: the source's JSON and bytes with new rotation keyframes,
kept valid glTF 2.0 (the Khronos validator reports no error on it when the source has none
besides those fixed here).

:func:`with_keyframes` copies ``character.json`` and ``character.buffers[0]`` and:

- appends the key times and each baked joint's rotations as new float32 accessors and
  buffer views after the old bytes (every old byte stays where it was), and points the
  joints' rotation channels at them (a channel is added where a joint had none); a replaced
  rotation output that nothing else reads gives its accessor index (and its view's, when
  nothing else reads that view) to the new one, and so do key times that only the rewritten
  samplers read (the baked key times take each such place, one copy each, and are appended
  once for the channels left); any other accessor or buffer view the bake leaves unread (a
  skin's inverse bind matrices rewritten for strand joints, a strided view repacked) takes
  one the bake appended, so that the copy has no unused accessor or view;
- rewrites a baked joint defined by ``matrix`` as ``translation``/``rotation``/``scale``
  (glTF 2.0 section 3.5.3: an animated node has no ``matrix``), from the loader's own
  decomposition, and refuses a matrix with shear or a projective row, naming the node;
- drops a ``byteStride`` from buffer views that only animation samplers and inverse bind
  matrices use when it equals their element size (the same bytes, tightly packed: section
  3.6.2.4 forbids the stride there), and gives such an accessor in an interleaved view a
  tightly packed copy of its elements appended to the buffer;
- embeds other buffers and the external images the loader read as ``data:`` URIs (in a
  ``.glb``, the images textures use as buffer views of the binary chunk instead), each
  image (and each used image in a buffer view) with the ``mimeType`` its bytes show (PNG,
  JPEG, WebP or KTX2 magic numbers, section 3.8.3; the declared one for other bytes), dropping external images no texture uses (the loader never read them) and
  renumbering texture sources.

- marks the copy as baked (:func:`mark_baked`): ``asset.extras.gpu_jiggle_baked`` (the clip
  and the gpu_jiggle version) and ``asset.generator`` (``gpu_jiggle <version> bake``, after the
  source's own generator), so that a bake of a baked file (springs on springs) is refused
  unless forced (:func:`baked_mark`).

With ``strands`` (a :class:`~gpu_jiggle.character.baking.strands.StrandJoints`) it also adds
the procedural strands as new joint nodes in a skin, a skinned ribbon mesh with its material,
and the joints' channels (see :mod:`.strands`), all after the existing objects.

:func:`glb` packs the result as a binary glTF (section 4).
"""
from __future__ import annotations

import base64
import copy
import json
import struct

import numpy as np

from ..pose import quat
from ..gltf.access import COMPONENT_DTYPES, TYPE_WIDTHS
from ... import __version__
from ..gltf.io import CHUNK_BIN, CHUNK_JSON, GLB_MAGIC, GltfError, is_data_uri, resolve_uri

FLOAT = 5126
#: A matrix counts as translation · rotation · scale when T·R·S rebuilds it to this fraction
#: of its largest column (float32 data is orthogonal to about 1e-7).
TRS_TOLERANCE = 1e-5
IMAGE_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"),
               (b"\xabKTX 20\xbb\r\n\x1a\n", "image/ktx2"))


class BakeError(ValueError):
    """A source file the bake cannot turn into a valid copy (names the node or image)."""


def data_uri(data: bytes, mime: str = "application/octet-stream") -> str:
    return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")


def pad(data: bytes, fill: bytes = b"\0") -> bytes:
    return data + fill * (-len(data) % 4)


def image_mime(data: bytes, index: int, declared=None) -> str:
    """The MIME type image ``index``'s bytes show: PNG or JPEG (glTF 2.0 section 3.8.3),
    WebP (EXT_texture_webp) or KTX2 (KHR_texture_basisu); for other bytes the ``declared``
    one. Raises BakeError for other bytes without a declared type."""
    for magic, mime in IMAGE_MAGIC:
        if data[:len(magic)] == magic:
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if isinstance(declared, str) and declared:
        return declared
    raise BakeError(f"image {index}: its bytes start {data[:8].hex(' ')}, which is neither PNG, JPEG, WebP nor KTX2, "
                    f"and it declares no mimeType: it cannot be embedded with one (glTF 2.0 section 3.8.3)")


def embed_images(character, doc: dict, append=None) -> None:
    """External images that textures use become ``data:`` URIs of the bytes the loader read
    (``character.image_data``) with the ``mimeType`` of those bytes, or with ``append``
    (``append(bytes) -> buffer view index``, for a binary glTF, which should hold no URI)
    buffer views of the binary chunk, as do the ``data:`` URI images textures use. External
    images no texture uses are dropped and texture ``source`` indices (and texture
    extensions' ``source``) renumbered."""
    images = doc.get("images")
    if not images:
        return
    kept, renumber = [], {}
    for i, img in enumerate(images):
        uri = img.get("uri")
        data = character.image_data.get(i)
        if data is not None and img.get("bufferView") is not None:
            img["mimeType"] = image_mime(data, i, img.get("mimeType"))
        elif uri is not None:
            if data is None and not is_data_uri(uri):
                continue  # unused and never read: nothing of it goes into the copy
            if data is not None and (append is not None or not is_data_uri(uri)):
                img["mimeType"] = image_mime(data, i, img.get("mimeType"))
                if append is None:
                    img["uri"] = data_uri(data, img["mimeType"])
                else:
                    del img["uri"]
                    img["bufferView"] = append(data)
        renumber[i] = len(kept)
        kept.append(img)
    if len(kept) == len(images):
        return
    if kept:
        doc["images"] = kept
    else:
        del doc["images"]
    for texture in doc.get("textures", []):
        if texture.get("source") is not None:
            texture["source"] = renumber[texture["source"]]
        for ext in (texture.get("extensions") or {}).values():
            if isinstance(ext, dict) and ext.get("source") is not None:
                ext["source"] = renumber[ext["source"]]


def matrix_as_trs(character, node: int) -> dict:
    """``{"translation", "rotation", "scale"}`` of node ``node``'s ``matrix``: the loader's
    decomposition (``character.skeleton.rest``), checked to rebuild the matrix.

    Raises: BakeError naming the node when the matrix has shear or a bottom row other than
    (0, 0, 0, 1), so that no translation, rotation and scale give it (section 3.5.3)."""
    m = np.asarray(character.json["nodes"][node]["matrix"], np.float64).reshape(4, 4).T  # column-major
    rest = character.skeleton.rest
    t, r, s = rest.translation[node], quat.normalize(rest.rotation[node]), rest.scale[node]
    rebuilt = quat.compose(t, r, s)
    size = max(float(np.abs(m[:3, :3]).max()), np.finfo(np.float64).tiny)
    error = float(np.abs(rebuilt[:3, :3] - m[:3, :3]).max()) / size
    name = character.skeleton.names[node]
    if not np.array_equal(m[3], [0.0, 0.0, 0.0, 1.0]) or not error <= TRS_TOLERANCE or not np.all(s != 0):
        raise BakeError(f"node {node} ({name!r}) is defined by a matrix with shear, zero scale or a bottom row "
                        f"{m[3].tolist()} other than [0, 0, 0, 1] (T·R·S rebuilds it to {error:.3g} of its size): "
                        f"it cannot be rewritten as translation, rotation and scale for its baked rotation "
                        f"channel (glTF 2.0 section 3.5.3: an animated node has no matrix)")
    return {"translation": t.tolist(), "rotation": r.tolist(), "scale": s.tolist()}


def _packed_accessors(doc: dict) -> set:
    """Accessors glTF requires tightly packed: animation sampler inputs and outputs and
    inverse bind matrices (section 3.6.2.4)."""
    out = {s.get("input") for a in doc.get("animations", []) for s in a.get("samplers", [])}
    out |= {s.get("output") for a in doc.get("animations", []) for s in a.get("samplers", [])}
    out |= {s.get("inverseBindMatrices") for s in doc.get("skins", [])}
    out.discard(None)
    return out


def _element_bytes(accessor: dict) -> int:
    return np.dtype(COMPONENT_DTYPES[accessor["componentType"]]).itemsize * TYPE_WIDTHS[accessor["type"]]


def unstride(character, doc: dict, append) -> None:
    """Make every accessor in :func:`_packed_accessors` read a buffer view without a
    ``byteStride``: drop the stride where it equals the element size of every accessor on
    the view and only such accessors use it (the bytes are already tightly packed), else
    copy the accessor's elements tightly into a new view (``append(bytes) -> view index``)."""
    packed = _packed_accessors(doc)
    accessors, views = doc.get("accessors", []), doc.get("bufferViews", [])
    users = {}
    for i, a in enumerate(accessors):
        if a.get("bufferView") is not None:
            users.setdefault(a["bufferView"], []).append(i)
    for v, view in enumerate(views):
        if view.get("byteStride") is None or not packed & set(users.get(v, [])):
            continue
        mine = users[v]
        if all(i in packed and _element_bytes(accessors[i]) == view["byteStride"] for i in mine):
            del view["byteStride"]
            continue
        for i in (i for i in mine if i in packed):
            rows = character.accessor_layouts[i].rows
            data = character.buffers[rows.buffer]
            parts = [data[rows.start + k * rows.stride:rows.start + k * rows.stride + rows.element]
                     for k in range(rows.count)]
            accessors[i]["bufferView"] = append(b"".join(parts))
            accessors[i].pop("byteOffset", None)


def with_keyframes(character, anim_index: int, times, rotations: dict, binary: bool = False, strands=None):
    """(the new JSON dict, buffer 0's new bytes) for ``times`` (n,) float32 seconds and
    ``rotations`` {node: (n, 4) float32 (x, y, z, w)}: see the module docstring; ``binary``:
    for a ``.glb``, the images textures use go into buffer 0 (the binary chunk); ``strands``:
    a :class:`~gpu_jiggle.character.baking.strands.StrandJoints` whose joints, skin, mesh and
    channels are added too (its ``write``), or None.

    Raises: BakeError for a baked node's matrix that is not a TRS, or an embedded image
    whose bytes are no known format."""
    doc = copy.deepcopy(character.json)
    buffers = doc.setdefault("buffers", [])
    if not buffers:
        buffers.append({"byteLength": 0})
    blob = bytearray(character.buffers[0] if character.buffers else b"")
    for i, b in enumerate(buffers):  # other buffers and external images travel inside the copy, bytes unchanged
        if i:
            b["uri"] = data_uri(character.buffers[i])
        else:
            b.pop("uri", None)
    accessors = doc.setdefault("accessors", [])
    views = doc.setdefault("bufferViews", [])
    first_view, view_readers = len(views), _view_reader_counts(doc)  # the bake's own views start here

    def append_view(data: bytes, target=None) -> int:
        blob.extend(b"\0" * (-len(blob) % 4))
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(data)})
        if target is not None:
            views[-1]["target"] = target
        blob.extend(data)
        return len(views) - 1

    embed_images(character, doc, append_view if binary else None)

    def append(array: np.ndarray, kind: str, with_bounds: bool, replacing: int | None = None) -> int:
        """A new accessor of ``array``; in the place of accessor ``replacing`` when given (one
        nothing else reads), and in the place of its view too when nothing else reads that, so
        that the copy keeps no unused objects."""
        acc = {"bufferView": append_view(array.tobytes()), "componentType": FLOAT, "count": int(len(array)),
               "type": kind}
        if with_bounds:
            acc["min"], acc["max"] = [float(array.min())], [float(array.max())]
        if replacing is None:
            accessors.append(acc)
            return len(accessors) - 1
        old_view = accessors[replacing].get("bufferView")
        accessors[replacing] = acc
        if old_view is not None and not _view_readers(doc, old_view):
            views[old_view] = views.pop()
            acc["bufferView"] = old_view
        return replacing

    unstride(character, doc, append_view)
    first_new = len(accessors)  # what the bake appends starts here
    nodes = doc.get("nodes", [])
    for node in rotations:
        if nodes[node].get("matrix") is not None:
            trs = matrix_as_trs(character, node)
            del nodes[node]["matrix"]
            nodes[node].update(trs)
    key_times = np.ascontiguousarray(times, np.float32)
    anim = doc["animations"][anim_index]
    samplers = anim.setdefault("samplers", [])
    channels = anim.setdefault("channels", [])
    users = {}
    for ch in channels:
        users[ch.get("sampler")] = users.get(ch.get("sampler"), 0) + 1
    readers = _accessor_readers(doc)
    baked_channels = {node: next((c for c in channels if c.get("target", {}).get("node") == node
                                  and c.get("target", {}).get("path") == "rotation"), None) for node in rotations}
    # The key times of the samplers the bake rewrites: an accessor read only by them is left
    # unread, so the baked key times take its place (one copy each) instead of being appended.
    rewritten = {}
    for channel in baked_channels.values():
        if channel is not None and users.get(channel["sampler"], 0) <= 1:
            old_input = samplers[channel["sampler"]].get("input")
            rewritten[old_input] = rewritten.get(old_input, 0) + 1
    times_at = {}  # old key-times accessor → the baked key times in its place

    def time_accessor_for(old_input=None) -> int:
        if old_input is not None and rewritten.get(old_input) == readers.get(old_input):
            key = old_input
        else:
            key = None  # one shared accessor of the baked key times, appended
        if key not in times_at:
            times_at[key] = append(key_times, "SCALAR", True, key)
        return times_at[key]

    for node, values in rotations.items():
        channel = baked_channels[node]
        replaced = None  # the output of a sampler this channel alone uses, read by nothing else
        old_input = None
        if channel is not None and users.get(channel["sampler"], 0) <= 1:
            replaced = samplers[channel["sampler"]].get("output")
            replaced = replaced if readers.get(replaced) == 1 else None
            old_input = samplers[channel["sampler"]].get("input")
        output = append(np.ascontiguousarray(values, np.float32), "VEC4", False, replaced)
        sampler = {"input": time_accessor_for(old_input), "output": output, "interpolation": "LINEAR"}
        if channel is None:
            samplers.append(sampler)
            channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": "rotation"}})
        elif users.get(channel["sampler"], 0) > 1:  # shared with another channel: leave it for that one
            samplers.append(sampler)
            channel["sampler"] = len(samplers) - 1
        else:
            old = samplers[channel["sampler"]]
            for key in ("input", "output", "interpolation"):
                old[key] = sampler[key]
    if strands is not None:
        strands.write(doc, append_view, time_accessor_for(), anim, character)
    _fill_unread(accessors, first_new, readers, _accessor_readers(doc), lambda: _accessor_slots(doc))
    _fill_unread(views, first_view, view_readers, _view_reader_counts(doc), lambda: _view_slots(doc))
    blob = bytes(blob)
    buffers[0]["byteLength"] = len(blob)
    mark_baked(doc, character.clips[anim_index].name)
    return doc, blob


def _accessor_slots(doc: dict):
    """Every (container, key) that names an accessor: animation samplers, mesh primitives
    (their attributes, indices and morph targets), skins, and EXT_mesh_gpu_instancing on nodes."""
    for anim in doc.get("animations", []):
        for sampler in anim.get("samplers", []):
            yield sampler, "input"
            yield sampler, "output"
    for mesh in doc.get("meshes", []):
        for prim in mesh.get("primitives", []):
            for attributes in [prim.get("attributes") or {}, *(prim.get("targets") or [])]:
                for name in attributes:
                    yield attributes, name
            yield prim, "indices"
    for skin in doc.get("skins", []):
        yield skin, "inverseBindMatrices"
    for node in doc.get("nodes", []):
        attributes = ((node.get("extensions") or {}).get("EXT_mesh_gpu_instancing") or {}).get("attributes") or {}
        for name in attributes:
            yield attributes, name


def _reader_counts(slots) -> dict:
    """{index: how many of ``slots`` ((container, key) pairs) name it}."""
    out = {}
    for container, key in slots:
        index = container.get(key)
        if isinstance(index, int):
            out[index] = out.get(index, 0) + 1
    return out


def _accessor_readers(doc: dict) -> dict:
    """{accessor index: how many places read it} (the places of :func:`_accessor_slots`)."""
    return _reader_counts(_accessor_slots(doc))


def _fill_unread(items: list, first_new: int, readers_before: dict, readers_now: dict, slots) -> None:
    """Objects of ``items`` (the accessors, or the buffer views) below ``first_new`` that were
    read before the bake and that nothing reads now (a skin's inverse bind matrices rewritten
    for the strand joints, say) take the places of objects the bake appended, the last first,
    the places that name them (``slots()``: (container, key) pairs) renumbered, so the copy
    keeps no unused object and every index the source used for what is still read stays."""
    for slot in sorted(i for i in range(first_new) if readers_before.get(i) and not readers_now.get(i)):
        last = len(items) - 1
        if last < first_new:
            return
        items[slot] = items.pop()
        for container, key in slots():
            if container.get(key) == last:
                container[key] = slot


def _view_slots(doc: dict):
    """Every (container, key) that names a buffer view: accessors (their sparse parts
    included), images and Draco primitives."""
    for acc in doc.get("accessors", []):
        sparse = acc.get("sparse") or {}
        for part in (acc, sparse.get("indices"), sparse.get("values")):
            if part:
                yield part, "bufferView"
    for image in doc.get("images", []):
        yield image, "bufferView"
    for mesh in doc.get("meshes", []):
        for prim in mesh.get("primitives", []):
            draco = (prim.get("extensions") or {}).get("KHR_draco_mesh_compression")
            if draco:
                yield draco, "bufferView"


def _view_reader_counts(doc: dict) -> dict:
    """{buffer view index: how many places read it} (the places of :func:`_view_slots`)."""
    return _reader_counts(_view_slots(doc))


def _view_readers(doc: dict, view: int) -> int:
    """How many accessors (sparse parts included), images and Draco primitives read buffer view ``view``."""
    return sum(container.get(key) == view for container, key in _view_slots(doc))


def glb(doc: dict, blob: bytes) -> bytes:
    """A binary glTF: the JSON chunk (space-padded) and ``blob`` as the BIN chunk
    (zero-padded), glTF 2.0 section 4."""
    text = pad(json.dumps(doc, separators=(",", ":")).encode("utf-8"), b" ")
    body = pad(blob)
    parts = [struct.pack("<II", len(text), CHUNK_JSON), text]
    if body:
        parts += [struct.pack("<II", len(body), CHUNK_BIN), body]
    payload = b"".join(parts)
    return GLB_MAGIC + struct.pack("<II", 2, 12 + len(payload)) + payload


#: The key of ``asset.extras`` that marks a file written by a bake.
BAKED_MARK = "gpu_jiggle_baked"


def mark_baked(doc: dict, clip: str) -> None:
    """Mark the JSON ``doc`` as a bake of ``clip``: ``asset.extras[BAKED_MARK]`` = ``{"clip",
    "gpu_jiggle"}`` and ``asset.generator`` naming gpu_jiggle's bake (the source's generator
    kept after it)."""
    asset = doc.setdefault("asset", {"version": "2.0"})
    extras = asset.get("extras") if isinstance(asset.get("extras"), dict) else {}
    asset["extras"] = {**extras, BAKED_MARK: {"clip": clip, "gpu_jiggle": __version__}}
    before = asset.get("generator")
    asset["generator"] = f"gpu_jiggle {__version__} bake" + (f" (source: {before})" if isinstance(before, str) and
                                                             before else "")


def baked_mark(doc) -> dict | None:
    """The bake mark of a glTF JSON document (:func:`mark_baked`), or None for a file no bake
    wrote."""
    asset = doc.get("asset") if isinstance(doc, dict) else None
    extras = asset.get("extras") if isinstance(asset, dict) else None
    mark = extras.get(BAKED_MARK) if isinstance(extras, dict) else None
    return mark if isinstance(mark, dict) else None


def referenced_files(path, doc) -> list:
    """The files a glTF document at ``path`` names by relative URI (its buffers' and images'),
    resolved, in order, each once; a URI that does not resolve is left out (the loader
    refuses it)."""
    from pathlib import Path

    found = []
    for kind in ("buffers", "images"):
        items = doc.get(kind) if isinstance(doc, dict) else None
        for item in items if isinstance(items, list) else []:
            uri = item.get("uri") if isinstance(item, dict) else None
            if not isinstance(uri, str) or is_data_uri(uri):
                continue
            try:
                file = resolve_uri(Path(path), "", uri)
            except (GltfError, OSError, ValueError):
                continue
            if file not in found:
                found.append(file)
    return found
