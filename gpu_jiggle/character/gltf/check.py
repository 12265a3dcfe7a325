"""The structure of a glTF 2.0 document, checked before anything is built from it.

:func:`check_document` walks every section once (linear in the size of the JSON) and
refuses, with a :class:`~.io.GltfError` naming the file, the JSON pointer and the
value:

- an index that is not an integer (``true`` and ``2.5`` are not indices) or not in range:
  ``node.children``/``mesh``/``skin``/``camera``, ``scene``/``scenes[].nodes``,
  ``skin.joints``/``skeleton``/``inverseBindMatrices``, primitive ``attributes``/
  ``indices``/``material``/``targets``, material texture references, ``texture.source``/
  ``sampler`` (and an extension's ``source``), ``image.bufferView``, animation
  ``sampler``/``target.node``/``input``/``output`` (section 3.3 "Indices and Names");
- node transforms that are not finite numbers of the right length: translation 3,
  rotation 4, scale 3, matrix 16 (section 3.5.3 "Transformations"), and more than
  ``GltfLimits.max_nodes`` nodes;
- accessors of the wrong type for their use: the attribute table of section 3.7.2.1
  ("Meshes", :data:`ATTRIBUTES`, morph :data:`TARGETS`; widened by KHR_mesh_quantization when
  the file uses it),
  ``indices`` SCALAR of UNSIGNED_BYTE/SHORT/INT, inverse bind matrices MAT4 FLOAT, one per
  joint (section 3.7.3), animation inputs SCALAR FLOAT and outputs per path
  (section 3.11 "Animations", :data:`OUTPUTS`), output counts equal to the input count
  (× 3 for CUBICSPLINE, × the morph target count for weights);
- an ``extensionsRequired`` entry other than :data:`SUPPORTED_REQUIRED` (section 3.12), and
  ``KHR_draco_mesh_compression`` when DracoPy (the ``[draco]`` extra) is not installed.

What needs the data (JOINTS values below the skin's joint count, key times) is checked
where the data is read, in :mod:`.loader`.
"""
from __future__ import annotations

import math

from ..pose.animation import INTERPOLATIONS, PATHS
from .access import COMPONENT_NAMES
from .draco import DRACO, require_draco
from .io import escape, fail, is_index, pointer, show

FLOAT, BYTE, UBYTE, SHORT, USHORT, UINT = 5126, 5120, 5121, 5122, 5123, 5125
#: Extensions a file may require: the accessors and Draco are read here, the material ones drawn
#: by the renderer (gltf_material.MATERIAL_EXTENSIONS).
SUPPORTED_REQUIRED = ("KHR_mesh_quantization", DRACO, "KHR_materials_unlit", "KHR_texture_transform")

_F = (FLOAT, False)
_NORM_U = {(UBYTE, True), (USHORT, True)}
_NORM_ALL = {(BYTE, True), (UBYTE, True), (SHORT, True), (USHORT, True)}
ATTRIBUTES = {
    "POSITION": ({"VEC3"}, {_F}),
    "NORMAL": ({"VEC3"}, {_F}),
    "TANGENT": ({"VEC4"}, {_F}),
    "TEXCOORD": ({"VEC2"}, {_F} | _NORM_U),
    "COLOR": ({"VEC3", "VEC4"}, {_F} | _NORM_U),
    "JOINTS": ({"VEC4"}, {(UBYTE, False), (USHORT, False)}),
    "WEIGHTS": ({"VEC4"}, {_F} | _NORM_U),
}
"""Semantic → (accessor types, (componentType, normalized) pairs), glTF 2.0 section 3.7.2.1."""
_ANY_INT = {(c, n) for c in (BYTE, UBYTE, SHORT, USHORT) for n in (False, True)}
QUANTIZED = {"POSITION": _ANY_INT, "NORMAL": {(BYTE, True), (SHORT, True)}, "TANGENT": {(BYTE, True), (SHORT, True)},
             "TEXCOORD": _ANY_INT}
"""The extra (componentType, normalized) pairs KHR_mesh_quantization allows."""
_SIGNED = {(c, n) for c in (BYTE, SHORT) for n in (False, True)}
QUANTIZED_TARGETS = {"POSITION": _SIGNED, "NORMAL": {(BYTE, True), (SHORT, True)},
                     "TANGENT": {(BYTE, True), (SHORT, True)}}
"""The extra pairs KHR_mesh_quantization allows in morph targets (signed: they are offsets)."""
TARGETS = {"POSITION": ({"VEC3"}, {_F}), "NORMAL": ({"VEC3"}, {_F}), "TANGENT": ({"VEC3"}, {_F})}
INDICES = ({"SCALAR"}, {(UBYTE, False), (USHORT, False), (UINT, False)})
INVERSE_BIND = ({"MAT4"}, {_F})
INPUT = ({"SCALAR"}, {_F})
OUTPUTS = {"translation": ({"VEC3"}, {_F}), "scale": ({"VEC3"}, {_F}),
           "rotation": ({"VEC4"}, {_F} | _NORM_ALL), "weights": ({"SCALAR"}, {_F} | _NORM_ALL)}
"""Animation path → allowed output accessors, glTF 2.0 section 3.11."""
TEXTURE_SLOTS = (("pbrMetallicRoughness", "baseColorTexture"), ("pbrMetallicRoughness", "metallicRoughnessTexture"),
                 (None, "normalTexture"), (None, "occlusionTexture"), (None, "emissiveTexture"))


def _finite(x) -> bool:
    if type(x) not in (int, float):
        return False
    try:
        return math.isfinite(float(x))
    except OverflowError:
        return False


def numbers(file, value, where: str, length, what: str) -> None:
    """``value`` must be a list of finite numbers, ``length`` long (None: any length)."""
    if (not isinstance(value, list) or (length is not None and len(value) != length)
            or not all(_finite(x) for x in value)):
        size = "" if length is None else f"{length} "
        raise fail(file, where, f"{what} = {show(value)}: expected a list of {size}finite numbers")


def ref(file, obj: dict, key: str, where: str, count: int, what: str, required: bool = False):
    """``obj[key]`` as an index below ``count`` (None when absent and not required)."""
    value = obj.get(key)
    if value is None and not required:
        return None
    if not is_index(value) or not 0 <= value < count:
        raise fail(file, f"{where}/{escape(key)}", f"{key} = {show(value)} is not the index of one of the file's "
                                           f"{count} {what}")
    return value


def _obj(file, value, where, what, optional=True):
    if value is None and optional:
        return {}
    if not isinstance(value, dict):
        raise fail(file, where, f"{what} = {show(value)}: expected an object")
    return value


def _list(file, value, where, what):
    if value is None:
        return []
    if not isinstance(value, list):
        raise fail(file, where, f"{what} = {show(value)}: expected a list")
    return value


def _name(file, obj, where):
    name = obj.get("name")
    if name is not None and not isinstance(name, str):
        raise fail(file, where + "/name", f"name = {show(name)}: expected a string")


def check_type(file, where: str, layout, rule, what: str) -> None:
    """Accessor ``layout`` must have one of the rule's types and component pairs."""
    types, pairs = rule
    if layout.type in types and (layout.component, layout.normalized) in pairs:
        return
    allowed = ", ".join(f"{'normalized ' if n else ''}{COMPONENT_NAMES[c]}" for c, n in sorted(pairs))
    raise fail(file, where, f"{what} uses accessor {layout.index}, a {layout.describe}; glTF 2.0 requires "
                            f"{' or '.join(sorted(types))} of {allowed}")


def attribute_rule(name: str, quantized: bool, table=ATTRIBUTES):
    """The rule for attribute ``name`` (``TEXCOORD_0`` → TEXCOORD) of ``table``
    (:data:`ATTRIBUTES` or :data:`TARGETS`), widened by KHR_mesh_quantization when
    ``quantized``, or None for names outside the table (``_NAME`` attributes)."""
    base, _, n = name.rpartition("_")
    key = base if base in ("TEXCOORD", "COLOR", "JOINTS", "WEIGHTS") and n.isdigit() else name
    rule = table.get(key)
    extra = (QUANTIZED if table is ATTRIBUTES else QUANTIZED_TARGETS).get(key)
    if rule is not None and quantized and extra:
        rule = (rule[0], rule[1] | extra)
    return rule


def check_document(file, raw: dict, layouts: list, views: list, limits) -> set:
    """Check ``raw`` (see the module docstring); returns the image indices that textures
    use (``source`` and any texture extension's ``source``)."""
    n = {key: len(raw.get(key, [])) for key in ("nodes", "meshes", "skins", "cameras", "materials", "textures",
                                                "images", "samplers", "scenes", "accessors")}
    required = _list(file, raw.get("extensionsRequired"), "/extensionsRequired", "extensionsRequired")
    for k, name in enumerate(required):
        if name not in SUPPORTED_REQUIRED:
            raise fail(file, f"/extensionsRequired/{k}", f"the file requires extension {show(name)} "
                                                         f"(extensionsRequired), which this loader does not support "
                                                         f"(it supports {', '.join(SUPPORTED_REQUIRED)})")
        if name == DRACO:
            require_draco(file, f"/extensionsRequired/{k}")
    used = _list(file, raw.get("extensionsUsed"), "/extensionsUsed", "extensionsUsed")
    quantized = "KHR_mesh_quantization" in used
    _check_nodes(file, raw, n, limits)
    for s, scene in enumerate(raw.get("scenes", [])):
        for k, node in enumerate(_list(file, scene.get("nodes"), pointer("scenes", s, "nodes"), "nodes")):
            if not is_index(node) or not 0 <= node < n["nodes"]:
                raise fail(file, pointer("scenes", s, "nodes", k), f"scene {s} lists node {show(node)}, "
                                                                    f"which is not a node")
    ref(file, raw, "scene", "", n["scenes"], "scenes")
    _check_meshes(file, raw, layouts, n, quantized)
    for s, skin in enumerate(raw.get("skins", [])):
        where = pointer("skins", s)
        _name(file, skin, where)
        joints = skin.get("joints")
        if not isinstance(joints, list) or not joints:
            raise fail(file, where + "/joints", f"skin {s} has joints {show(joints)}; expected a non-empty list")
        seen = set()
        for k, j in enumerate(joints):
            if not is_index(j) or not 0 <= j < n["nodes"] or j in seen:
                why = "is not a node" if not is_index(j) or not 0 <= j < n["nodes"] else "is named twice"
                raise fail(file, f"{where}/joints/{k}", f"skin {s} names joint {show(j)}, which {why}")
            seen.add(j)
        ibm = ref(file, skin, "inverseBindMatrices", where, n["accessors"], "accessors")
        if ibm is not None:
            check_type(file, where + "/inverseBindMatrices", layouts[ibm], INVERSE_BIND, f"skin {s}")
            if layouts[ibm].count != len(joints):
                raise fail(file, where + "/inverseBindMatrices", f"skin {s} has {len(joints)} joints but "
                                                                 f"{layouts[ibm].count} inverse bind matrices")
        ref(file, skin, "skeleton", where, n["nodes"], "nodes")
    for m, material in enumerate(raw.get("materials", [])):
        where = pointer("materials", m)
        pbr = _obj(file, material.get("pbrMetallicRoughness"), where + "/pbrMetallicRoughness", "pbrMetallicRoughness")
        if "baseColorFactor" in pbr:
            numbers(file, pbr["baseColorFactor"], where + "/pbrMetallicRoughness/baseColorFactor", 4,
                    "baseColorFactor")
        for parent, slot in TEXTURE_SLOTS:
            holder, w = (pbr, f"{where}/{parent}") if parent else (material, where)
            info = _obj(file, holder.get(slot), f"{w}/{slot}", slot)
            if info:
                ref(file, info, "index", f"{w}/{slot}", n["textures"], "textures", required=True)
    images = set()
    for t, texture in enumerate(raw.get("textures", [])):
        where = pointer("textures", t)
        source = ref(file, texture, "source", where, n["images"], "images")
        ref(file, texture, "sampler", where, n["samplers"], "samplers")
        images.update([] if source is None else [source])
        for name, ext in _obj(file, texture.get("extensions"), where + "/extensions", "extensions").items():
            if isinstance(ext, dict):
                found = ref(file, ext, "source", pointer("textures", t, "extensions", name), n["images"], "images")
                images.update([] if found is None else [found])
    for i, image in enumerate(raw.get("images", [])):
        where = pointer("images", i)
        ref(file, image, "bufferView", where, len(views), "bufferViews")
        if image.get("uri") is not None and not isinstance(image["uri"], str):
            raise fail(file, where + "/uri", f"image {i} has uri {show(image['uri'])}; expected a string")
    _check_animations(file, raw, layouts, n)
    return images


def _check_nodes(file, raw, n, limits) -> None:
    nodes = raw.get("nodes", [])
    if len(nodes) > limits.max_nodes:
        raise fail(file, "/nodes", f"the file has {len(nodes)} nodes, more than {limits.max_nodes} "
                                   f"(GltfLimits.max_nodes)")
    count = len(nodes)
    for i, node in enumerate(nodes):
        where = pointer("nodes", i)
        _name(file, node, where)
        for k, c in enumerate(_list(file, node.get("children"), where + "/children", "children")):
            if not is_index(c) or not 0 <= c < count:
                raise fail(file, f"{where}/children/{k}", f"node {i} has child {show(c)}, which is not a node")
        for key, what in (("mesh", "meshes"), ("skin", "skins"), ("camera", "cameras")):
            if key in node:
                ref(file, node, key, where, n[what], what)
        for key, length in (("translation", 3), ("rotation", 4), ("scale", 3), ("matrix", 16), ("weights", None)):
            if node.get(key) is not None:
                numbers(file, node[key], f"{where}/{key}", length, f"node {i} {key}")


def _check_meshes(file, raw, layouts, n, quantized) -> None:
    for m, mesh in enumerate(raw.get("meshes", [])):
        where = pointer("meshes", m)
        _name(file, mesh, where)
        primitives = mesh.get("primitives")
        if not isinstance(primitives, list) or not primitives or not all(isinstance(p, dict) for p in primitives):
            raise fail(file, where + "/primitives", f"mesh {m} has primitives {show(primitives)}; expected a "
                                                    f"non-empty list of objects")
        if "weights" in mesh:
            numbers(file, mesh["weights"], where + "/weights", None, f"mesh {m} weights")
        for p, prim in enumerate(primitives):
            w = f"{where}/primitives/{p}"
            attributes = _obj(file, prim.get("attributes"), w + "/attributes", "attributes", optional=False)
            vertices = _check_attributes(file, attributes, w + "/attributes", layouts, n, quantized, ATTRIBUTES, None)
            indices = ref(file, prim, "indices", w, n["accessors"], "accessors")
            if indices is not None:
                check_type(file, w + "/indices", layouts[indices], INDICES, f"mesh {m} primitive {p} indices")
            ref(file, prim, "material", w, n["materials"], "materials")
            mode = prim.get("mode", 4)
            if not is_index(mode) or not 0 <= mode <= 6:
                raise fail(file, w + "/mode", f"mode = {show(mode)}: expected a primitive mode 0..6")
            for k, target in enumerate(_list(file, prim.get("targets"), w + "/targets", "targets")):
                target = _obj(file, target, f"{w}/targets/{k}", "target", optional=False)
                _check_attributes(file, target, f"{w}/targets/{k}", layouts, n, quantized, TARGETS, vertices)


def _check_attributes(file, attributes, where, layouts, n, quantized, table, vertices):
    """Every attribute's accessor index and type; all of them as many elements as
    ``vertices`` (the first one's count when None). Returns that count."""
    for name, index in attributes.items():
        w = f"{where}/{escape(name)}"
        ref(file, attributes, name, where, n["accessors"], "accessors", required=True)
        layout = layouts[index]
        rule = attribute_rule(name, quantized, table)
        if rule is not None:
            check_type(file, w, layout, rule, f"attribute {name}")
        if vertices is None:
            vertices = layout.count
        elif layout.count != vertices:
            raise fail(file, w, f"attribute {name} uses accessor {index} of {layout.count} elements, but the "
                                f"primitive has {vertices} vertices")
    return vertices


def _check_animations(file, raw, layouts, n) -> None:
    nodes, meshes = raw.get("nodes", []), raw.get("meshes", [])
    for a, anim in enumerate(raw.get("animations", [])):
        where = pointer("animations", a)
        _name(file, anim, where)
        samplers = _list(file, anim.get("samplers"), where + "/samplers", "samplers")
        for s, sampler in enumerate(samplers):
            sw = f"{where}/samplers/{s}"
            sampler = _obj(file, sampler, sw, "sampler", optional=False)
            for key in ("input", "output"):
                ref(file, sampler, key, sw, n["accessors"], "accessors", required=True)
            check_type(file, sw + "/input", layouts[sampler["input"]], INPUT, f"animation {a} sampler {s} input")
            interpolation = sampler.get("interpolation", "LINEAR")
            if interpolation not in INTERPOLATIONS:
                raise fail(file, sw + "/interpolation", f"interpolation {show(interpolation)}; expected one of "
                                                        f"{', '.join(INTERPOLATIONS)}")
        for c, channel in enumerate(_list(file, anim.get("channels"), where + "/channels", "channels")):
            cw = f"{where}/channels/{c}"
            channel = _obj(file, channel, cw, "channel", optional=False)
            s = ref(file, channel, "sampler", cw, len(samplers), "samplers of this animation", required=True)
            target = _obj(file, channel.get("target"), cw + "/target", "target", optional=False)
            node = ref(file, target, "node", cw + "/target", n["nodes"], "nodes")
            if node is None:
                continue  # a channel without a node targets an extension; nothing to play here
            path = target.get("path")
            if path not in PATHS:
                raise fail(file, cw + "/target/path", f"channel {c} animates {show(path)}; glTF 2.0 paths are "
                                                      f"{', '.join(PATHS)}")
            sampler = samplers[s]
            sw = f"{where}/samplers/{s}"
            output = layouts[sampler["output"]]
            check_type(file, sw + "/output", output, OUTPUTS[path], f"animation {a} sampler {s} ({path}) output")
            keys = layouts[sampler["input"]].count * (3 if sampler.get("interpolation") == "CUBICSPLINE" else 1)
            expect = keys
            if path == "weights":  # keys × morph targets of the node's mesh (any multiple without a mesh)
                mesh = nodes[node].get("mesh")
                targets = 0 if mesh is None else len(meshes[mesh]["primitives"][0].get("targets") or [])
                expect = keys * targets if targets else None
            if output.count != expect and not (expect is None and output.count % keys == 0):
                raise fail(file, sw + "/output", f"animation {a} sampler {s} has {layouts[sampler['input']].count} "
                                                 f"key times, so its {path} output needs "
                                                 f"{expect if expect else f'a multiple of {keys}'} elements, but "
                                                 f"accessor {output.index} has {output.count}")
