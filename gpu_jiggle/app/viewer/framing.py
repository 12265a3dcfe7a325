"""Framing around the panel: the part of a window a panel leaves free, and a 2D view that
shows its world rectangle there.

Areas are ``(x0, y0, x1, y1)`` fractions of the framebuffer's width and height from its
top-left corner, as :class:`~gpu_jiggle.render.draw3d.Camera`'s ``area``; the panel's
rectangle is ``(x, y, width, height)`` in framebuffer pixels from the top-left. Without a
panel the area is the whole framebuffer (:data:`FULL_AREA`), which leaves every picture as
it was.
"""
from __future__ import annotations

from ...render.draw3d import FULL_AREA

__all__ = ["FULL_AREA", "free_area", "fitted", "view_2d", "MIN_FREE_SCALE"]

#: A free part smaller than this (as a scale of the whole picture) is not worth framing in:
#: the picture stays whole, under the panel.
MIN_FREE_SCALE = 0.3


def free_area(size, rect) -> tuple:
    """The largest part of a framebuffer of ``size`` (width, height) px beside the panel's
    ``rect`` (x, y, width, height) px: the strip left, right, above or below it, whichever
    holds the whole picture scaled down the least (the larger one when two hold it alike).
    :data:`FULL_AREA` without a panel (None), or when the panel leaves no strip that holds
    the picture at :data:`MIN_FREE_SCALE` or more."""
    if rect is None:
        return FULL_AREA
    width, height = (float(v) for v in size)
    x, y, w, h = (float(v) for v in rect)
    left, right = max(0.0, min(x, width)), max(0.0, min(x + w, width))
    top, bottom = max(0.0, min(y, height)), max(0.0, min(y + h, height))
    if right <= left or bottom <= top:  # the panel is off the framebuffer
        return FULL_AREA
    strips = [(0.0, 0.0, left, height), (right, 0.0, width, height),   # left of it, right of it
              (0.0, 0.0, width, top), (0.0, bottom, width, height)]    # above it, below it
    best, best_key = None, (MIN_FREE_SCALE, 0.0)
    for x0, y0, x1, y1 in strips:
        key = (min((x1 - x0) / width, (y1 - y0) / height), (x1 - x0) * (y1 - y0))
        if key >= best_key:
            best, best_key = (x0 / width, y0 / height, x1 / width, y1 / height), key
    return FULL_AREA if best is None else best


def fitted(area, aspect: float, size) -> tuple:
    """The largest part of ``area`` with the picture's ``aspect`` (width / height), centred
    in it, for a framebuffer of ``size`` (width, height) px: the whole picture, shrunk
    into the area (:data:`FULL_AREA` itself for the whole framebuffer)."""
    if tuple(area) == FULL_AREA:
        return FULL_AREA
    width, height = (float(v) for v in size)
    x0, y0, x1, y1 = (float(v) for v in area)
    w, h = (x1 - x0) * width, (y1 - y0) * height
    if w > aspect * h:
        w = aspect * h
    else:
        h = w / aspect
    cx, cy = (x0 + x1) / 2 * width, (y0 + y1) / 2 * height
    return ((cx - w / 2) / width, (cy - h / 2) / height, (cx + w / 2) / width, (cy + h / 2) / height)


def view_2d(view, area, size) -> tuple:
    """The world rectangle (x_min, y_min, x_max, y_max; y up) a framebuffer of ``size``
    (width, height) px shows so that the world rectangle ``view``, which fills the whole
    framebuffer, lands in ``area`` instead, shrunk alike on both axes (:func:`fitted`).
    ``view`` itself for the whole framebuffer."""
    if tuple(area) == FULL_AREA:
        return tuple(view)
    vx0, vy0, vx1, vy1 = (float(v) for v in view)
    x0, y0, x1, y1 = fitted(area, size[0] / size[1], size)
    per_x, per_y = (vx1 - vx0) / (x1 - x0), (vy1 - vy0) / (y1 - y0)  # world units per framebuffer width, height
    left, top = vx0 - x0 * per_x, vy1 + y0 * per_y
    return (left, top - per_y, left + per_x, top)
