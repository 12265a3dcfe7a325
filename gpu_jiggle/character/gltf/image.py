"""glTF 2.0 images: their encoded bytes, read with the checks of :mod:`.io`, and
decoding them to RGBA arrays (glTF 2.0 specification, section 3.8.3 "Images").

An image comes from a buffer view, a ``data:`` URI or a file in the model's folder
(:func:`~.io.read_external`: confined, at most ``GltfLimits.max_image_bytes``
read). Only PNG, JPEG (glTF 2.0) and WebP (EXT_texture_webp) are decoded, by Pillow,
up to ``GltfLimits.max_image_pixels`` pixels; anything else is a :class:`GltfError`.
"""
from __future__ import annotations

import io

import numpy as np

from ...extras import require
from .io import GltfError, decode_data_uri, fail, is_data_uri, pointer, read_external, show

IMAGE_FORMATS = ("PNG", "JPEG", "WEBP")
"""Image formats decoded (PNG and JPEG are glTF 2.0's, section 3.8.3; WebP EXT_texture_webp's)."""


# -- images -----------------------------------------------------------------------------------
def image_bytes(character, index) -> bytes:
    """The encoded bytes of image ``index`` (buffer view, data URI or a file in the model's
    folder), at most ``limits.max_image_bytes``; counted against the load's byte budget
    while loading.

    Raises:
        FileNotFoundError: a uri naming no file in the model's folder. GltfError: no such
        image, a refused uri (see :func:`~.io.resolve_uri`), bad base64, too large.
    """
    images = character.json.get("images", [])
    path = character.path
    if not isinstance(index, int) or not 0 <= index < len(images):
        raise GltfError(f"{path}: image {show(index)} does not exist", path)
    img = images[index]
    where = pointer("images", index)
    what = f"image {index}"
    cap = int(character.limits.max_image_bytes)
    if img.get("bufferView") is not None:
        view = character.buffer_views[img["bufferView"]]
        data = character.buffers[view.buffer][view.start:view.start + view.length]
    elif img.get("uri") is None:
        raise fail(path, where, f"{what} has neither a uri nor a bufferView")
    elif is_data_uri(img["uri"]):
        data = decode_data_uri(path, where + "/uri", img["uri"])
    else:
        data = read_external(path, where + "/uri", img["uri"], what, cap, exact=False)
    if len(data) > cap:
        raise fail(path, where, f"{what} is larger than {cap} bytes (GltfLimits.max_image_bytes)")
    if character._budget is not None:
        character._budget.charge(len(data), path, where, what)
    return bytes(data)


def decode_image(character, index) -> np.ndarray:
    """Image ``index`` of ``character`` as (H, W, 4) uint8 RGBA, row 0 the top row.

    Raises:
        GltfError: not PNG/JPEG/WebP, damaged, or more than ``limits.max_image_pixels``.
    """
    Image = require("PIL.Image", "decoding a glTF texture")
    data = character.image_data.get(index)
    if data is None:
        data = image_bytes(character, index)
    path = character.path
    where = pointer("images", index)
    try:
        with Image.open(io.BytesIO(data), formats=IMAGE_FORMATS) as im:
            width, height = im.size
            if width * height > character.limits.max_image_pixels:
                raise fail(path, where, f"image {index} is {width} × {height} pixels, more than "
                                        f"{character.limits.max_image_pixels} (GltfLimits.max_image_pixels)")
            pixels = width * height
            budget = character._budget or getattr(character, "_image_budget", None)
            if budget is not None:  # kept: 4 bytes a pixel; while decoding: the decoded image
                # (≤ 4), the RGBA one, and the bytes the array is made from (4 each), freed on return
                budget.charge(4 * pixels, path, where, f"image {index} ({width} × {height})", transient=12 * pixels)
            im.load()
            rgba = im if im.mode == "RGBA" else im.convert("RGBA")
            if rgba is not im:
                im.close()  # the decoded image is freed before the array is made
            out = np.empty((height, width, 4), np.uint8)
            out.reshape(-1)[:] = np.frombuffer(rgba.tobytes(), np.uint8)
            return out
    except GltfError:
        raise
    except Exception as exc:  # a decoder meeting damaged bytes may raise almost anything
        raise fail(path, where, f"image {index} cannot be decoded as {', '.join(IMAGE_FORMATS)} "
                                f"({type(exc).__name__}: {exc})") from None
