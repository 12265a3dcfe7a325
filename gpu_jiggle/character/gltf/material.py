"""glTF 2.0 materials as drawn: base colour, alpha, sides, unlit, texture transform, samplers.

:func:`read_material` turns ``materials[i]`` into a :class:`Material` holding what the
renderer (:mod:`gpu_jiggle.render.meshes`) uses, each value checked:

- ``pbrMetallicRoughness.baseColorFactor`` (four numbers in [0, 1], default all 1) and
  ``baseColorTexture`` (its image decoded, its ``texCoord`` set, its sampler), glTF 2.0
  section 3.9.2 "Metallic-Roughness Material";
- ``alphaMode`` (``OPAQUE``, ``MASK`` or ``BLEND``, default ``OPAQUE``) and ``alphaCutoff``
  (≥ 0, default 0.5, used by ``MASK`` only), section 3.9.4 "Alpha Coverage";
- ``doubleSided`` (a bool, default false: back faces are culled), section 3.9.5;
- ``KHR_materials_unlit``: the base colour shown as it is, without lighting;
- ``KHR_texture_transform`` on the base colour texture: ``offset`` (2,), ``rotation``
  (radians, counter-clockwise in UV space), ``scale`` (2,) and a ``texCoord`` that replaces
  the texture info's; ``uv' = T · R · S · (u, v, 1)`` with the matrices of the extension's
  specification (:func:`uv_transform`);
- the texture's sampler (section 3.8.4 "Samplers"): ``wrapS``/``wrapT`` (REPEAT,
  CLAMP_TO_EDGE, MIRRORED_REPEAT; default REPEAT), ``magFilter`` and ``minFilter`` (the GL
  enums; by default linear, and trilinear with mipmaps).

A primitive without a material gets :data:`DEFAULT_MATERIAL` (section 3.9.6: white, opaque,
single-sided). :func:`vertex_colours` reads ``COLOR_0`` (section 3.7.2.1), which multiplies
the base colour.

Errors are :class:`~.io.GltfError` s naming the file and the JSON pointer of the value.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .io import fail, is_index, pointer, show

__all__ = ["Material", "DEFAULT_MATERIAL", "read_material", "uv_transform", "vertex_colours", "ALPHA_MODES",
           "MATERIAL_EXTENSIONS", "REPEAT", "CLAMP_TO_EDGE", "MIRRORED_REPEAT"]

ALPHA_MODES = ("OPAQUE", "MASK", "BLEND")
DEFAULT_ALPHA_CUTOFF = 0.5
UNLIT = "KHR_materials_unlit"
TEXTURE_TRANSFORM = "KHR_texture_transform"
MATERIAL_EXTENSIONS = (UNLIT, TEXTURE_TRANSFORM)
"""The material extensions drawn (a file may list them in ``extensionsRequired``)."""
NEAREST, LINEAR = 9728, 9729
MIPMAP_FILTERS = (9984, 9985, 9986, 9987)  # NEAREST_MIPMAP_NEAREST .. LINEAR_MIPMAP_LINEAR
MIN_FILTERS = (NEAREST, LINEAR) + MIPMAP_FILTERS
MAG_FILTERS = (NEAREST, LINEAR)
REPEAT, CLAMP_TO_EDGE, MIRRORED_REPEAT = 10497, 33071, 33648
WRAPS = (REPEAT, CLAMP_TO_EDGE, MIRRORED_REPEAT)
DEFAULT_MIN_FILTER, DEFAULT_MAG_FILTER = 9987, LINEAR  # "auto filtering": trilinear


@dataclass
class Material:
    """What a primitive's surface looks like (module docstring).

    Attributes:
        name: str or None. base_color_factor: (4,) float32 RGBA in [0, 1].
        base_color_texture: (H, W, 4) uint8 RGBA, row 0 the image's top (the glTF UV origin),
            or None. texcoord: the ``TEXCOORD_n`` set the texture reads.
        uv_transform: (3, 3) float64, UV → texture coordinates (identity without
            KHR_texture_transform). wrap: (wrapS, wrapT) GL enums. min_filter, mag_filter: GL enums.
        alpha_mode: one of :data:`ALPHA_MODES`. alpha_cutoff: ≥ 0 (MASK: alpha below it is not drawn).
        double_sided: False culls back faces. unlit: KHR_materials_unlit (no lighting).
    """

    name: str | None = None
    base_color_factor: np.ndarray = field(default_factory=lambda: np.ones(4, np.float32))
    base_color_texture: np.ndarray | None = None
    texcoord: int = 0
    uv_transform: np.ndarray = field(default_factory=lambda: np.eye(3))
    wrap: tuple = (REPEAT, REPEAT)
    min_filter: int = DEFAULT_MIN_FILTER
    mag_filter: int = DEFAULT_MAG_FILTER
    alpha_mode: str = "OPAQUE"
    alpha_cutoff: float = DEFAULT_ALPHA_CUTOFF
    double_sided: bool = False
    unlit: bool = False

    @property
    def mipmaps(self) -> bool:
        """Whether the minification filter reads mipmaps."""
        return self.min_filter in MIPMAP_FILTERS


DEFAULT_MATERIAL = Material(name="default")
"""The material of a primitive without one (glTF 2.0 section 3.9.6)."""


def uv_transform(offset=(0.0, 0.0), rotation: float = 0.0, scale=(1.0, 1.0)) -> np.ndarray:
    """(3, 3) float64 ``T · R · S`` of KHR_texture_transform: ``T`` moves by ``offset`` (2,),
    ``R = [[cos r, sin r, 0], [-sin r, cos r, 0], [0, 0, 1]]`` turns by ``rotation`` radians,
    ``S`` scales by ``scale`` (2,); a UV (u, v) reads the texture at ``M · (u, v, 1)``."""
    c, s = math.cos(rotation), math.sin(rotation)
    t = np.array([[1.0, 0.0, offset[0]], [0.0, 1.0, offset[1]], [0.0, 0.0, 1.0]])
    r = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
    return t @ r @ np.diag([float(scale[0]), float(scale[1]), 1.0])


def _finite_list(file, value, where, length, what, low=-math.inf, high=math.inf) -> list:
    ok = (isinstance(value, list) and len(value) == length
          and all(type(x) in (int, float) and math.isfinite(x) and low <= x <= high for x in value))
    if not ok:
        bounds = "" if low == -math.inf else f" in [{low:g}, {high:g}]"
        raise fail(file, where, f"{what} = {show(value)}: expected a list of {length} finite numbers{bounds}")
    return [float(x) for x in value]


def _number(file, obj, key, where, default, what, low=-math.inf) -> float:
    value = obj.get(key, default)
    if type(value) not in (int, float) or not math.isfinite(value) or value < low:
        bound = "" if low == -math.inf else f" >= {low:g}"
        raise fail(file, f"{where}/{key}", f"{what} = {show(value)}: expected a finite number{bound}")
    return float(value)


def _object(file, value, where, what) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail(file, where, f"{what} = {show(value)}: expected an object")
    return value


def _texcoord(file, obj, where) -> int:
    value = obj.get("texCoord", 0)
    if not is_index(value):
        raise fail(file, where + "/texCoord", f"texCoord = {show(value)}: expected an integer >= 0")
    return int(value)


def read_material(character, index: int) -> Material:
    """``materials[index]`` of ``character`` (a :class:`~.loader.Character` being loaded) as a
    :class:`Material`; its texture images are decoded (``character.image``).

    Raises:
        GltfError: an alpha mode other than OPAQUE/MASK/BLEND, a negative or non-numeric
        alpha cutoff, a ``doubleSided`` that is not a bool, a base colour factor outside
        [0, 1], a bad texCoord, texture transform, sampler wrap or filter (each naming its
        JSON pointer).
    """
    file = character.path
    where = pointer("materials", index)
    material = character.json["materials"][index]
    extensions = _object(file, material.get("extensions"), where + "/extensions", "extensions")
    pbr = _object(file, material.get("pbrMetallicRoughness"), where + "/pbrMetallicRoughness", "pbrMetallicRoughness")
    out = Material(name=material.get("name"))
    if "baseColorFactor" in pbr:
        out.base_color_factor = np.asarray(_finite_list(file, pbr["baseColorFactor"], where +
                                                        "/pbrMetallicRoughness/baseColorFactor", 4,
                                                        "baseColorFactor", 0.0, 1.0), np.float32)
    mode = material.get("alphaMode", "OPAQUE")
    if mode not in ALPHA_MODES:
        raise fail(file, where + "/alphaMode", f"alphaMode = {show(mode)}: expected one of {', '.join(ALPHA_MODES)}")
    out.alpha_mode = mode
    out.alpha_cutoff = _number(file, material, "alphaCutoff", where, DEFAULT_ALPHA_CUTOFF, "alphaCutoff", low=0.0)
    sides = material.get("doubleSided", False)
    if not isinstance(sides, bool):
        raise fail(file, where + "/doubleSided", f"doubleSided = {show(sides)}: expected true or false")
    out.double_sided = sides
    out.unlit = UNLIT in extensions
    info = _object(file, pbr.get("baseColorTexture"), where + "/pbrMetallicRoughness/baseColorTexture",
                   "baseColorTexture")
    if info.get("index") is not None:
        _read_texture(character, out, info, where + "/pbrMetallicRoughness/baseColorTexture")
    return out


def _read_texture(character, out: Material, info: dict, where: str) -> None:
    """The base colour texture's image, texCoord, KHR_texture_transform and sampler into ``out``."""
    file = character.path
    texture = character.json["textures"][info["index"]]
    source = texture.get("source")
    if source is not None:
        out.base_color_texture = character.image(source)
    out.texcoord = _texcoord(file, info, where)
    ext = _object(file, _object(file, info.get("extensions"), where + "/extensions", "extensions")
                  .get(TEXTURE_TRANSFORM), f"{where}/extensions/{TEXTURE_TRANSFORM}", TEXTURE_TRANSFORM)
    if ext:
        w = f"{where}/extensions/{TEXTURE_TRANSFORM}"
        offset = _finite_list(file, ext.get("offset", [0.0, 0.0]), w + "/offset", 2, "offset")
        rotation = _number(file, ext, "rotation", w, 0.0, "rotation")
        scale = _finite_list(file, ext.get("scale", [1.0, 1.0]), w + "/scale", 2, "scale")
        out.uv_transform = uv_transform(offset, rotation, scale)
        if "texCoord" in ext:
            out.texcoord = _texcoord(file, ext, w)
    if texture.get("sampler") is None:
        return
    s = texture["sampler"]
    sampler = _object(file, character.json["samplers"][s], pointer("samplers", s), "sampler")
    sw = pointer("samplers", s)
    wraps = []
    for key in ("wrapS", "wrapT"):
        value = sampler.get(key, REPEAT)
        if value not in WRAPS or type(value) is not int:
            raise fail(file, f"{sw}/{key}", f"{key} = {show(value)}: expected 10497 (REPEAT), 33071 "
                                            f"(CLAMP_TO_EDGE) or 33648 (MIRRORED_REPEAT)")
        wraps.append(value)
    out.wrap = tuple(wraps)
    for key, allowed, default in (("magFilter", MAG_FILTERS, DEFAULT_MAG_FILTER),
                                  ("minFilter", MIN_FILTERS, DEFAULT_MIN_FILTER)):
        value = sampler.get(key, default)
        if value not in allowed or type(value) is not int:
            raise fail(file, f"{sw}/{key}", f"{key} = {show(value)}: expected one of "
                                            f"{', '.join(map(str, allowed))}")
        setattr(out, "mag_filter" if key == "magFilter" else "min_filter", value)


def vertex_colours(values, file, where: str) -> np.ndarray:
    """``COLOR_0`` values (V, 3) or (V, 4), float or normalised (already in [0, 1]), as
    (V, 4) float32 RGBA (alpha 1 for VEC3). GltfError for values that are not finite."""
    v = np.asarray(values, np.float32)
    if not np.isfinite(v).all():
        bad = int(np.flatnonzero(~np.isfinite(v).all(axis=1))[0])
        raise fail(file, where, f"COLOR_0 of vertex {bad} is {v[bad].tolist()}: expected finite colours")
    if v.shape[1] == 3:
        v = np.concatenate([v, np.ones((len(v), 1), np.float32)], axis=1)
    return np.ascontiguousarray(v)
