"""Small glTF files built in the tests: :class:`Builder` packs arrays into one buffer (a
``data:`` URI) with a buffer view and an accessor each, and :func:`skinned_strip` makes a
skinned strip of three joints with a rotation clip on top of which a test changes what it
tests (accessor types, sparse data, node matrices, images)."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np

FLOAT, BYTE, UBYTE, SHORT, USHORT, UINT = 5126, 5120, 5121, 5122, 5123, 5125
DTYPES = {FLOAT: np.float32, BYTE: np.int8, UBYTE: np.uint8, SHORT: np.int16, USHORT: np.uint16, UINT: np.uint32}
KINDS = {1: "SCALAR", 2: "VEC2", 3: "VEC3", 4: "VEC4", 16: "MAT4"}


class Builder:
    """One buffer of views and accessors."""

    def __init__(self):
        self.blob = bytearray()
        self.views, self.accessors = [], []

    def view(self, data: bytes, stride: int | None = None, target: int | None = None) -> int:
        self.blob.extend(b"\0" * (-len(self.blob) % 4))
        view = {"buffer": 0, "byteOffset": len(self.blob), "byteLength": len(data)}
        if stride is not None:
            view["byteStride"] = stride
        if target is not None:
            view["target"] = target
        self.views.append(view)
        self.blob.extend(data)
        return len(self.views) - 1

    def accessor(self, values, component: int = FLOAT, kind: str | None = None, normalized: bool = False,
                 view: int | None = None, offset: int = 0, bounds: bool = False, target: int | None = None,
                 stride: int | None = None, **extra) -> int:
        """An accessor of ``values`` ((count,) or (count, n), cast to the component type), in
        a view of its own unless ``view`` is given (``values`` then only give the count and
        type), each element padded to ``stride`` bytes when given; ``bounds``: min and max
        (what positions and key times need)."""
        a = np.asarray(values)
        array = a.astype(DTYPES[component]).reshape(len(a), -1)
        if view is None:
            rows = array.view(np.uint8).reshape(len(array), -1)
            if stride is not None:
                rows = np.pad(rows, ((0, 0), (0, stride - rows.shape[1])))
            view = self.view(rows.tobytes(), stride=stride, target=target)
        accessor = {"bufferView": view, "componentType": component, "count": len(array),
                    "type": kind or KINDS[array.shape[1]], **extra}
        if offset:
            accessor["byteOffset"] = offset
        if normalized:
            accessor["normalized"] = True
        if bounds:
            accessor["min"] = array.min(axis=0).tolist()
            accessor["max"] = array.max(axis=0).tolist()
        self.accessors.append(accessor)
        return len(self.accessors) - 1

    def document(self, **sections) -> dict:
        doc = {"asset": {"version": "2.0"}, **sections, "accessors": self.accessors, "bufferViews": self.views,
               "buffers": [{"byteLength": len(self.blob), "uri": "data:application/octet-stream;base64,"
                            + base64.b64encode(bytes(self.blob)).decode("ascii")}]}
        return doc


def skinned_strip(builder: Builder | None = None, positions=None, attributes=None, translations=None,
                  weights=None, rotations=None) -> dict:
    """A strip of 6 vertices skinned to three joints ``a`` → ``b`` → ``c`` (translations,
    default 1 apart along y) under a root ``body`` mesh node, and a 1-second clip ``wave``
    turning ``a`` (5 keys, 0 to 1 s). ``positions``, ``weights``, ``rotations`` (the keys'
    values) and ``attributes`` (name → index) are accessor indices replacing the defaults."""
    b = builder or Builder()
    if positions is None:
        positions = b.accessor([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 2, 0], [1, 2, 0]], bounds=True,
                               target=34962)
    joints = b.accessor(np.array([[0, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0], [2, 0, 0, 0],
                                  [2, 0, 0, 0]]), UBYTE, target=34962)
    if weights is None:
        weights = b.accessor(np.tile([1.0, 0, 0, 0], (6, 1)), target=34962)
    indices = b.accessor(np.array([0, 1, 2, 1, 3, 2, 2, 3, 4, 3, 5, 4]), USHORT, "SCALAR", target=34963)
    translations = translations if translations is not None else [[0, 0, 0], [0, 1, 0], [0, 1, 0]]
    world = np.cumsum(np.asarray(translations, np.float64), axis=0)
    ibm = np.tile(np.eye(4), (3, 1, 1))
    ibm[:, 3, :3] = -world  # column-major: the translation is the last column, i.e. the 4th row here
    inverse_binds = b.accessor(ibm.reshape(3, 16), kind="MAT4")
    times = b.accessor(np.linspace(0.0, 1.0, 5), kind="SCALAR", bounds=True)
    if rotations is None:
        angles = np.sin(np.linspace(0, 2 * np.pi, 5)) * 0.4
        rotations = b.accessor(np.stack([np.zeros(5), np.zeros(5), np.sin(angles / 2), np.cos(angles / 2)], axis=1))
    attrs = {"POSITION": positions, "JOINTS_0": joints, "WEIGHTS_0": weights}
    attrs.update(attributes or {})
    nodes = [{"name": "body", "mesh": 0, "skin": 0},
             {"name": "a", "translation": list(translations[0]), "children": [2]},
             {"name": "b", "translation": list(translations[1]), "children": [3]},
             {"name": "c", "translation": list(translations[2])}]
    return b.document(scene=0, scenes=[{"nodes": [0, 1]}], nodes=nodes,
                      meshes=[{"name": "strip", "primitives": [{"attributes": attrs, "indices": indices}]}],
                      skins=[{"joints": [1, 2, 3], "inverseBindMatrices": inverse_binds, "skeleton": 1}],
                      animations=[{"name": "wave", "samplers": [{"input": times, "output": rotations}],
                                   "channels": [{"sampler": 0, "target": {"node": 1, "path": "rotation"}}]}])


def write(folder: Path, doc: dict, name: str = "model.gltf") -> Path:
    path = Path(folder) / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def strip_rig(joints=("a", "b", "c"), **keys) -> dict:
    """A rig of one chain on the strip's joints (a dict for ``rig_from_dict``)."""
    return {"chain": [{"name": "strip", "joints": list(joints), "frequency": 3.0, "damping_ratio": 0.5, **keys}]}
