"""Draco-compressed meshes (the glTF extension ``KHR_draco_mesh_compression``), decoded with
the DracoPy package (the ``[draco]`` extra).

A compressed primitive keeps its ``attributes`` and ``indices`` accessors (their type and
count, but usually no ``bufferView``) and adds ``extensions.KHR_draco_mesh_compression``:
a ``bufferView`` holding the Draco data and ``attributes``, the Draco unique id of each
attribute. :func:`decode_draco` decodes every primitive whose accessors have no data of
their own (a file may also carry uncompressed fallback data, which is then read as usual)
and gives the decoded arrays per accessor index; :func:`~.access.read_accessor` reads
those instead of the accessors' zeros. Everything decoded is checked against the accessor
before it is used: the element count and width, the component type (integers within the
accessor's range), finite floats, and the indices' count. The decoded bytes count against
the load's byte budget. A file that requires the extension without DracoPy installed is
refused (:func:`require_draco`), naming the extension and the extra to install.

The decoder runs in a child process (:mod:`.draco_child`) whose memory is capped at the
load's remaining byte budget: Draco data may decode to far more than it holds (a 12 KB file
to 574 MB), and its size is known only once decoded.
"""
from __future__ import annotations

import importlib.util
import io
import subprocess
import sys

import numpy as np

from ...extras import missing, require
from .access import COMPONENT_DTYPES
from .io import fail, is_index, pointer, show

DRACO = "KHR_draco_mesh_compression"


def draco_installed() -> bool:
    """Whether DracoPy can be imported."""
    return importlib.util.find_spec("DracoPy") is not None


def require_draco(file, where: str) -> None:
    """GltfError at ``where`` (the ``extensionsRequired`` entry) when DracoPy is missing."""
    if not draco_installed():
        raise fail(file, where, f"the file requires extension {DRACO} (extensionsRequired): "
                                f"{missing('DracoPy', 'decoding Draco-compressed meshes')}")


def _compressed(character):
    """(mesh, primitive, its extension object) of every primitive to decode."""
    layouts = character.accessor_layouts
    for m, mesh in enumerate(character.json.get("meshes", [])):
        for p, prim in enumerate(mesh["primitives"]):
            ext = (prim.get("extensions") or {}).get(DRACO)
            if ext is None:
                continue
            used = list(prim["attributes"].values()) + ([prim["indices"]] if prim.get("indices") is not None else [])
            if any(layouts[a].rows is None for a in used):
                yield m, p, prim, ext


def decode_draco(character) -> dict:
    """{accessor index: (count, width) array in the accessor's component type} of every
    Draco-compressed primitive of ``character`` (module docstring).

    Raises:
        GltfError: a malformed extension object (naming its pointer), Draco data that does
        not decode, decoded data that does not fit its accessor, or DracoPy not installed.
    """
    out = {}
    path = character.path
    for m, p, prim, ext in _compressed(character):
        where = pointer("meshes", m, "primitives", p, "extensions", DRACO)
        if not isinstance(ext, dict):
            raise fail(path, where, f"{DRACO} = {show(ext)}: expected an object")
        view = ext.get("bufferView")
        if not is_index(view) or not 0 <= view < len(character.buffer_views):
            raise fail(path, where + "/bufferView", f"bufferView = {show(view)} is not the index of one of the "
                                                    f"file's {len(character.buffer_views)} bufferViews")
        ids = ext.get("attributes")
        if not isinstance(ids, dict) or not all(is_index(v) and v >= 0 for v in ids.values()):
            raise fail(path, where + "/attributes", f"attributes = {show(ids)}: expected an object of attribute "
                                                    f"names and Draco unique ids (integers >= 0)")
        if not draco_installed():
            raise fail(path, where, f"mesh {m} primitive {p} is compressed with {DRACO}: "
                                    f"{missing('DracoPy', 'decoding Draco-compressed meshes')}")
        require("DracoPy", "decoding Draco-compressed meshes")
        v = character.buffer_views[view]
        data = bytes(character.buffers[v.buffer][v.start:v.start + v.length])
        for name in ids:
            if prim["attributes"].get(name) is None:
                raise fail(path, f"{where}/attributes", f"the Draco data's attribute {show(name)} is not among the "
                                                        f"primitive's attributes")
        *attributes, faces = _decode(character, data, list(ids.values()), where, f"mesh {m} primitive {p}")
        for (name, uid), values in zip(ids.items(), attributes):
            accessor = prim["attributes"][name]
            if values.ndim == 0:
                raise fail(path, f"{where}/attributes", f"attribute {name}: the Draco data has no attribute with "
                                                        f"unique id {uid}")
            out[accessor] = _fit(character, accessor, values, f"{where}/attributes", name)
        if prim.get("indices") is not None:
            out[prim["indices"]] = _fit(character, prim["indices"], faces.reshape(-1, 1), where, "indices")
    return out


def _decode(character, data: bytes, uids: list, where: str, what: str) -> list:
    """The decoded attributes of ``uids`` (a 0-d array where there is none) and the faces, from
    :mod:`.draco_child` run with the load's remaining budget as its memory cap."""
    budget = character._budget
    left = (budget.limit - budget.used) if budget is not None else character.limits.max_total_bytes
    command = [sys.executable, "-m", "gpu_jiggle.character.gltf.draco_child", str(max(left, 0)), *map(str, uids)]
    done = subprocess.run(command, input=data, capture_output=True)
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = reason[-1] if reason else f"the decoder ended with status {done.returncode}"
        if done.returncode != 3 or "MemoryError" in reason or "bad_alloc" in reason:
            reason = (f"decoding it needs more than the {max(left, 0)} bytes left of the load's budget "
                      f"(GltfLimits.max_total_bytes): {reason}")
        raise fail(character.path, where + "/bufferView", f"{what}: its Draco data does not decode ({reason})")
    stream = io.BytesIO(done.stdout)
    return [np.load(stream, allow_pickle=False) for _ in range(len(uids) + 1)]


def _fit(character, index: int, values: np.ndarray, where: str, what: str) -> np.ndarray:
    """``values`` as accessor ``index``'s (count, width) array in its component type."""
    layout = character.accessor_layouts[index]
    path = character.path
    values = values.reshape(len(values), -1) if values.ndim > 1 else values.reshape(-1, 1)
    if values.shape != (layout.count, layout.width):
        raise fail(path, where, f"{what}: the Draco data decodes to {values.shape[0]} × {values.shape[1]} numbers, "
                                f"but accessor {index} is {layout.count} × {layout.describe}")
    dtype = np.dtype(COMPONENT_DTYPES[layout.component])
    if dtype.kind == "f":
        if values.dtype.kind != "f" or not np.isfinite(values).all():
            raise fail(path, where, f"{what}: the Draco data is not finite floats, as accessor {index} "
                                    f"({layout.describe}) needs")
    else:
        info = np.iinfo(dtype)
        if values.dtype.kind not in "iu" or (values.size and (values.min() < info.min or values.max() > info.max)):
            raise fail(path, where, f"{what}: the Draco data holds {values.dtype} values, not integers within the "
                                    f"{layout.describe} of accessor {index}")
    budget = character._budget
    if budget is not None:
        budget.charge(values.size * dtype.itemsize, path, where, f"the decoded {what}")
    return np.ascontiguousarray(values, dtype)

