"""glTF 2.0 buffer views and accessors: every number checked before any array is made.

:func:`check_views` and :func:`check_accessors` run once per load over the whole file and
turn each buffer view and accessor into a :class:`View` / :class:`Layout` whose byte ranges
are proven to lie inside their buffer (glTF 2.0 specification, sections 3.6.1 "Buffers
and Buffer Views" and 3.6.2 "Accessors", and the JSON schema of both):

- ``bufferView``: ``buffer`` an index, ``byteOffset`` >= 0, ``byteLength`` >= 1, the two
  together inside the buffer, ``byteStride`` (when given) a multiple of 4 in 4..252.
- ``accessor``: a known ``componentType`` and ``type``, ``count`` an integer >= 1,
  ``byteOffset`` >= 0, ``normalized`` a boolean and not on FLOAT or UNSIGNED_INT data,
  rows not overlapping (stride >= element size) and the last element inside the view;
  ``sparse`` likewise (its index and value views tightly packed, as section 3.6.2.3
  requires). An accessor without a ``bufferView`` is zeros and capped at
  ``GltfLimits.max_viewless_accessor_bytes``.

:func:`read_accessor` then copies rows out with ``np.frombuffer`` over those proven ranges
(no ``as_strided``). Errors are :class:`~.io.GltfError` naming the file, the JSON
pointer and the value.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .io import GltfError, fail, is_index, pointer, show

COMPONENT_DTYPES = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32,
                    5126: np.float32}
COMPONENT_NAMES = {5120: "BYTE", 5121: "UNSIGNED_BYTE", 5122: "SHORT", 5123: "UNSIGNED_SHORT",
                   5125: "UNSIGNED_INT", 5126: "FLOAT"}
TYPE_WIDTHS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
NORMALIZED_SCALE = {5120: 127.0, 5121: 255.0, 5122: 32767.0, 5123: 65535.0}
SPARSE_INDEX_TYPES = (5121, 5123, 5125)


@dataclass(frozen=True)
class View:
    """A checked buffer view: bytes ``start .. start + length`` of buffer ``buffer``;
    ``stride`` in bytes or None (tightly packed)."""

    buffer: int
    start: int
    length: int
    stride: int | None


@dataclass(frozen=True)
class Rows:
    """``count`` elements of ``element`` bytes, ``stride`` bytes apart, from byte ``start``
    of buffer ``buffer``; ``start + stride·(count-1) + element`` is within the buffer."""

    buffer: int
    start: int
    stride: int
    count: int
    element: int


@dataclass(frozen=True)
class Layout:
    """A checked accessor. ``type`` (``"VEC3"`` …), ``component`` (5126 …), ``normalized``,
    ``count``, ``width`` (numbers per element) and ``rows`` (None: all zeros); ``sparse``
    is None or ``(count, index component, index Rows, value Rows)``."""

    index: int
    type: str
    component: int
    normalized: bool
    count: int
    width: int
    rows: Rows | None
    sparse: tuple | None

    @property
    def describe(self) -> str:
        norm = "normalized " if self.normalized else ""
        return f"{self.type} of {norm}{COMPONENT_NAMES[self.component]}"


def natural(file, obj: dict, key: str, where: str, what: str, default=None, minimum: int = 0) -> int:
    """``obj[key]`` as an integer >= ``minimum`` (``default`` when absent; required when
    ``default`` is None); GltfError at ``where/key`` otherwise."""
    value = obj.get(key, default)
    if value is None:
        raise fail(file, f"{where}/{key}", f"{what} has no {key}")
    if not is_index(value) or value < minimum:
        raise fail(file, f"{where}/{key}", f"{what} has {key} {show(value)}; expected an integer >= {minimum}")
    return value


def check_views(file, raw: dict, buffers: list) -> list:
    """A :class:`View` per ``bufferViews`` entry (see the module docstring)."""
    out = []
    for j, v in enumerate(raw.get("bufferViews", [])):
        where = pointer("bufferViews", j)
        what = f"bufferView {j}"
        b = v.get("buffer")
        if not is_index(b) or not 0 <= b < len(buffers):
            raise fail(file, where + "/buffer", f"{what} refers to buffer {show(b)}, which does not exist")
        start = natural(file, v, "byteOffset", where, what, default=0)
        length = natural(file, v, "byteLength", where, what, minimum=1)
        stride = v.get("byteStride")
        if stride is not None and not (is_index(stride) and 4 <= stride <= 252 and stride % 4 == 0):
            raise fail(file, where + "/byteStride", f"{what} has byteStride {show(stride)}; glTF 2.0 allows a "
                                                    f"multiple of 4 in 4..252")
        if start + length > len(buffers[b]):
            raise fail(file, where, f"{what} (bytes {start}..{start + length}) runs past the end of buffer {b} "
                                    f"({len(buffers[b])} bytes)")
        out.append(View(b, start, length, stride))
    return out


def _rows(file, where, what, views, view_index, offset, count, element, strided) -> Rows:
    view = views[view_index]
    stride = view.stride if strided and view.stride else element
    if stride < element:
        raise fail(file, pointer("bufferViews", view_index, "byteStride"),
                   f"{what} has {element}-byte elements but bufferView {view_index} has byteStride {stride}: "
                   f"its rows would overlap")
    need = offset + stride * (count - 1) + element
    if need > view.length:
        raise fail(file, where, f"{what} needs {need} bytes of bufferView {view_index}, which has {view.length}")
    return Rows(view.buffer, view.start + offset, stride, count, element)


def _view_ref(file, obj, where, what, views) -> int:
    v = obj.get("bufferView")
    if not is_index(v) or not 0 <= v < len(views):
        raise GltfError(f"{file}: {what} refers to bufferView {show(v)}, which does not exist (at {where}/bufferView)",
                        file, where + "/bufferView")
    return v


def check_accessors(file, raw: dict, views: list, limits) -> list:
    """A :class:`Layout` per ``accessors`` entry (see the module docstring)."""
    out = []
    for i, a in enumerate(raw.get("accessors", [])):
        where = pointer("accessors", i)
        what = f"accessor {i}"
        component, kind = a.get("componentType"), a.get("type")
        if not is_index(component) or component not in COMPONENT_DTYPES:
            raise fail(file, where + "/componentType", f"{what} has componentType {show(component)}, which glTF 2.0 "
                                                       f"does not define")
        if not isinstance(kind, str) or kind not in TYPE_WIDTHS:
            raise fail(file, where + "/type", f"{what} has type {show(kind)}, which glTF 2.0 does not define")
        normalized = a.get("normalized", False)
        if not isinstance(normalized, bool) or (normalized and component in (5125, 5126)):
            raise fail(file, where + "/normalized", f"{what} has normalized {show(normalized)}; expected a boolean, "
                                                    f"false for FLOAT and UNSIGNED_INT")
        count = natural(file, a, "count", where, what, minimum=1)
        width = TYPE_WIDTHS[kind]
        size = np.dtype(COMPONENT_DTYPES[component]).itemsize
        element = size * width
        if kind.startswith("MAT") and size < 4:
            raise fail(file, where + "/type", f"{what}: matrices of 1- and 2-byte components (column padding) are "
                                              f"not supported")
        offset = natural(file, a, "byteOffset", where, what, default=0)
        rows = None
        if a.get("bufferView") is None:
            if count * element > limits.max_viewless_accessor_bytes:
                raise fail(file, where + "/count", f"{what} without a bufferView is {count} × {element} bytes of "
                                                   f"zeros, more than {limits.max_viewless_accessor_bytes} "
                                                   f"(GltfLimits.max_viewless_accessor_bytes)")
        else:
            v = _view_ref(file, a, where, what, views)
            rows = _rows(file, where, what, views, v, offset, count, element, strided=True)
        sparse = None if a.get("sparse") is None else _sparse(file, a["sparse"], where + "/sparse", what, count,
                                                              element, views)
        out.append(Layout(i, kind, component, normalized, count, width, rows, sparse))
    return out


def _sparse(file, sparse, where, what, count, element, views) -> tuple:
    if not isinstance(sparse, dict):
        raise fail(file, where, f"{what}: sparse must be an object")
    n = natural(file, sparse, "count", where, f"{what} (sparse)", minimum=1)
    if n > count:
        raise fail(file, where + "/count", f"{what} has {n} sparse values but only {count} elements")
    parts = []
    for key in ("indices", "values"):
        part = sparse.get(key)
        w = f"{where}/{key}"
        if not isinstance(part, dict):
            raise fail(file, w, f"{what}: sparse {key} must be an object")
        v = _view_ref(file, part, w, f"{what} (sparse {key})", views)
        if views[v].stride is not None:
            raise fail(file, pointer("bufferViews", v, "byteStride"), f"{what}: bufferView {v} holds sparse {key} "
                                                                     f"and must not have a byteStride")
        offset = natural(file, part, "byteOffset", w, f"{what} (sparse {key})", default=0)
        size = element
        if key == "indices":
            component = part.get("componentType")
            if component not in SPARSE_INDEX_TYPES or not is_index(component):
                raise fail(file, w + "/componentType", f"{what}: sparse indices of componentType {show(component)}; "
                                                       f"expected 5121, 5123 or 5125")
            size = np.dtype(COMPONENT_DTYPES[component]).itemsize
            parts.append(component)
        parts.append(_rows(file, w, f"{what} (sparse {key})", views, v, offset, n, size, strided=False))
    return (n, *parts)


def _copy_rows(buffers, rows: Rows, dtype, width) -> np.ndarray:
    """(count, width) ``dtype`` copy of ``rows`` (bounds proven by :func:`check_accessors`;
    ``np.frombuffer`` checks them again)."""
    data = buffers[rows.buffer]
    span = rows.stride * (rows.count - 1) + rows.element
    if rows.stride == rows.element:
        return np.frombuffer(data, dtype, count=rows.count * width, offset=rows.start).reshape(rows.count, width).copy()
    raw = np.frombuffer(data, np.uint8, count=span, offset=rows.start)
    whole = np.zeros(rows.count * rows.stride, np.uint8)
    whole[:span] = raw
    picked = np.ascontiguousarray(whole.reshape(rows.count, rows.stride)[:, :rows.element])
    return picked.view(dtype).reshape(rows.count, width)


def read_accessor(character, index: int) -> np.ndarray:
    """Accessor ``index`` of a :class:`~.loader.Character` as a numpy array: (count,) for
    SCALAR, (count, n) for VECn, (count, n, n) for MATn (row-major, converted from glTF's
    column-major), in its component type, or float32 (``max(c / (2^(b-1)-1), -1)`` for
    signed, ``c / (2^b-1)`` for unsigned, section 3.11 "Animations") when normalised. Sparse values
    replace those at their indices, which must strictly increase (section 3.6.2.3). An accessor
    that a Draco-compressed primitive decodes (``character.decoded``, :mod:`.draco`)
    reads those values instead of its own."""
    layouts = character.accessor_layouts
    path = character.path
    if not is_index(index) or not 0 <= index < len(layouts):
        raise GltfError(f"{path}: accessor {show(index)} does not exist (the file has {len(layouts)})", path)
    a = layouts[index]
    where = pointer("accessors", index)
    dtype = COMPONENT_DTYPES[a.component]
    budget = getattr(character, "_budget", None)
    if budget is not None:
        budget.charge(a.count * a.width * 8, path, where, f"accessor {index} ({a.count} × {a.describe})")
    decoded = getattr(character, "decoded", None) or {}
    if index in decoded:  # a Draco-compressed attribute or index list (gltf_draco.py), checked to fit
        values = decoded[index].copy()
    elif a.rows is None:
        values = np.zeros((a.count, a.width), dtype)
    else:
        values = _copy_rows(character.buffers, a.rows, dtype, a.width)
    if a.sparse is not None:
        _, index_component, index_rows, value_rows = a.sparse
        where_sparse = _copy_rows(character.buffers, index_rows, COMPONENT_DTYPES[index_component], 1)[:, 0]
        where_sparse = where_sparse.astype(np.int64)
        if where_sparse.size > 1 and not np.all(np.diff(where_sparse) > 0):
            raise fail(path, where + "/sparse/indices", f"accessor {index}: sparse indices must strictly increase")
        if where_sparse.max() >= a.count:
            raise fail(path, where + "/sparse/indices", f"accessor {index}: sparse index {int(where_sparse.max())} "
                                                        f"lies outside 0..{a.count - 1}")
        values[where_sparse] = _copy_rows(character.buffers, value_rows, dtype, a.width)
    if a.normalized and a.component in NORMALIZED_SCALE:
        values = np.maximum(values.astype(np.float32) / np.float32(NORMALIZED_SCALE[a.component]), -1.0)
    if a.type == "SCALAR":
        return values[:, 0]
    if a.type.startswith("MAT"):
        n = int(round(a.width ** 0.5))
        return np.swapaxes(values.reshape(a.count, n, n), 1, 2)
    return values
