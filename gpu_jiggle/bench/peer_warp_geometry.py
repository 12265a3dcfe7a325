"""3-vector geometry of the Warp peer (see :mod:`gpu_jiggle.bench.peer_warp`), as ``@wp.func``
helpers on ``wp.vec3`` and quaternions ``wp.vec4`` (x, y, z, w), all float32: the monotone
target path's weights and limited start tangent (SPEC 2), closest points of segments (for
contact, SPEC 4.2 and 9), the rotation between two directions (a :class:`Bend`) and the turn
axis carried near antiparallel with its two-float code (SPEC 4 step 2; SPEC 9, "Swings").

Warp divides by zero without an exception (inf or nan); the helpers guard the divisions whose
result they use.
"""
from __future__ import annotations

import numpy as np

from ..extras import require

wp = require("warp", "the Warp peer")

PI = wp.constant(float(np.float32(np.pi)))
TWO_PI = wp.constant(float(np.float32(2.0 * np.pi)))
INV_TWO_PI = wp.constant(float(np.float32(1.0 / (2.0 * np.pi))))
MIN_LENGTH = wp.constant(1e-6)           # below it a direction is undefined (SPEC 4)
HALF_TURN_COSINE = wp.constant(-0.9999)  # u·w below it: the half-turn branch of R(u → w) (SPEC 4)
NEAR_ZERO = wp.constant(1e-12)
PERPENDICULAR_SWITCH = wp.constant(0.9)
#: SPEC 4 step 2: within this sine of antiparallel the half turn of R(u → w) leans on the axis
#: carried from the last evaluation.
TURN_AXIS_BLEND = wp.constant(0.014142)
#: SPEC 9, "Swings": a carried axis code's first component is stored plus this; (0, 0) is
#: "none carried yet".
AXIS_CODE_SHIFT = wp.constant(2.0)
TINY_QUATERNION = wp.constant(1e-30)
#: Larger than any limit given (an infinite max distance or cone half-angle is none).
NO_LIMIT = wp.constant(3.0e38)


@wp.struct
class Bend:
    """The pair of directions u → w a turn is built on (SPEC 4 step 2), worked out once:
    ``ok`` (both have a length), unit u and w, c = u·w and v = u × w of the unit ones (where
    not ok: u and w as given, c = 0, v = u)."""

    ok: int
    u: wp.vec3
    w: wp.vec3
    c: float
    v: wp.vec3


@wp.func
def wrap(a: float):
    """SPEC 0: ``a - 2π·floor((a + π)/2π)``, in [-π, π)."""
    return a - TWO_PI * wp.floor((a + PI) * INV_TWO_PI)


@wp.func
def path_weights(alpha: float):
    """(p, q, dp, dq) of the target path at ``alpha`` (SPEC 2): x(α) = x0 + p·d + q·m,
    its velocity (dp·d + dq·m)/span, with d = x1 - x0 and m the start velocity × span
    (``start_tangent``)."""
    u = 1.0 - alpha
    return alpha * alpha * (2.0 - alpha), alpha * u * u, alpha * (4.0 - 3.0 * alpha), u * (1.0 - 3.0 * alpha)


@wp.func
def start_tangent(d: float, m: float):
    """The monotone path's start velocity × span (SPEC 2) toward the move ``d`` of an angle:
    span·m0 clamped to [0, 3]·d (none where the motion stopped or turned back)."""
    if d * m <= 0.0:
        return 0.0
    if wp.abs(m) > 3.0 * wp.abs(d):
        return 3.0 * d
    return m


@wp.func
def start_tangent(d: wp.vec2, m: wp.vec2):
    """Of a 2-vector move: the part of span·m0 along d clamped to [0, 3]·d, the part across
    it to the length 3|d|."""
    dd = wp.dot(d, d)
    if dd == 0.0:
        return wp.vec2(0.0)
    along = wp.dot(m, d) / dd
    across = m - along * d
    aa = wp.dot(across, across)
    if aa > 9.0 * dd:
        across = across * wp.sqrt(9.0 * dd / aa)
    return wp.clamp(along, 0.0, 3.0) * d + across


@wp.func
def start_tangent(d: wp.vec3, m: wp.vec3):
    """Of a 3-vector move, as for a 2-vector one."""
    dd = wp.dot(d, d)
    if dd == 0.0:
        return wp.vec3(0.0)
    along = wp.dot(m, d) / dd
    across = m - d * along
    aa = wp.dot(across, across)
    if aa > 9.0 * dd:
        across = across * wp.sqrt(9.0 * dd / aa)
    return d * wp.min(wp.max(along, 0.0), 3.0) + across


@wp.func
def on_path(last: wp.vec3, rate: wp.vec3, pose: wp.vec3, p: float, q: float, span: float):
    """SPEC 2, the monotone path: x0 + p·d + q·m, d = x1 - x0, m = span·m0 limited."""
    d = pose - last
    return last + d * p + start_tangent(d, rate * span) * q


@wp.func
def safe_divide(a: wp.vec3, d: float):
    """a/d where d > 0, else a (the caller does not use it there)."""
    if d > 0.0:
        return a / d
    return a


@wp.func
def unit(a: wp.vec3):
    """a/|a|, or a where it has no length."""
    return safe_divide(a, wp.length(a))


@wp.func
def clamp01(s: float):
    return wp.min(wp.max(s, 0.0), 1.0)


@wp.func
def perpendicular(u: wp.vec3):
    """A unit vector perpendicular to the unit vector u."""
    side = wp.vec3(0.0, 1.0, 0.0)
    if wp.abs(u[0]) < PERPENDICULAR_SWITCH:
        side = wp.vec3(1.0, 0.0, 0.0)
    return unit(wp.cross(u, side))


@wp.func
def ring_point(centre: wp.vec3, axis: wp.vec3, radius: float, x: wp.vec3):
    """The point nearest x on the circle of ``radius`` about ``centre`` square to the unit
    ``axis`` (any point of it where x is on the axis): where a sphere meets a sphere."""
    xc = x - centre
    radial = xc - axis * wp.dot(xc, axis)
    lr = wp.length(radial)
    direction = wp.vec3(0.0)
    if lr < MIN_LENGTH:
        direction = perpendicular(axis)
    else:
        direction = safe_divide(radial, lr)
    return centre + direction * radius


@wp.func
def segment_fraction(a: wp.vec3, b: wp.vec3, x: wp.vec3):
    """Where on the segment [a, b] the point closest to x lies, in [0, 1]."""
    ab = b - a
    return clamp01(wp.dot(x - a, ab) / wp.max(wp.dot(ab, ab), NEAR_ZERO))


@wp.func
def closest_on_segment(a: wp.vec3, b: wp.vec3, x: wp.vec3):
    return a + (b - a) * segment_fraction(a, b, x)


@wp.func
def closest_to_segment(a: wp.vec3, b: wp.vec3, p: wp.vec3, x: wp.vec3):
    """The point of the segment [a, b] closest to the segment [p, x]."""
    d1 = b - a
    d2 = x - p
    r = a - p
    aa = wp.dot(d1, d1)
    ee = wp.dot(d2, d2)
    f = wp.dot(d2, r)
    cc = wp.dot(d1, r)
    bb = wp.dot(d1, d2)
    s = float(0.0)
    if aa < NEAR_ZERO:
        s = 0.0
    elif ee < NEAR_ZERO:
        s = clamp01(-cc / aa)
    else:
        denom = aa * ee - bb * bb
        if denom > NEAR_ZERO:
            s = clamp01((bb * f - cc * ee) / denom)
        t = (bb * s + f) / ee
        if t < 0.0:
            s = clamp01(-cc / aa)
        elif t > 1.0:
            s = clamp01((bb - cc) / aa)
    return a + d1 * s


@wp.func
def bend(u: wp.vec3, w: wp.vec3):
    """The :class:`Bend` u → w (SPEC 4 step 2)."""
    b = Bend()
    lu = wp.length(u)
    lw = wp.length(w)
    if lu < MIN_LENGTH or lw < MIN_LENGTH:
        b.ok = 0
        b.u = u
        b.w = w
        b.c = 0.0
        b.v = u
        return b
    b.ok = 1
    b.u = u / lu
    b.w = w / lw
    b.c = wp.dot(b.u, b.w)
    b.v = wp.cross(b.u, b.w)
    return b


@wp.func
def bend_axis(b: Bend, carried: wp.vec3):
    """SPEC 4 step 2 and SPEC 9 "Swings": the axis of the half turn that the bend ``b`` is built
    on near antiparallel, and the axis to carry to the next evaluation. The axis: u × w where
    |u × w| >= TURN_AXIS_BLEND; nearer antiparallel u × w plus the carried axis (its sign along
    u × w) times (TURN_AXIS_BLEND - |u × w|), made perpendicular to u and unit; a perpendicular
    of u where that vanishes. Carried on, where u·w < 0: from the carried axis to u × w (unit)
    as |u × w| goes from TURN_AXIS_BLEND to twice it (at once where none was carried yet); the
    one given where u·w >= 0 or a direction has no length. Returns (axis, carried)."""
    if b.ok == 0:
        return carried, carried
    lv = wp.length(b.v)
    along = float(1.0)
    if wp.dot(carried, b.v) < 0.0:
        along = -1.0
    n = b.v + carried * (along * wp.max(TURN_AXIS_BLEND - lv, 0.0))
    n = n - b.u * wp.dot(n, b.u)
    ln = wp.length(n)
    axis = wp.vec3(0.0)
    if ln < MIN_LENGTH:
        axis = perpendicular(b.u)
    else:
        axis = safe_divide(n, ln)
    if b.c >= 0.0:
        return axis, carried
    renew = clamp01(lv / TURN_AXIS_BLEND - 1.0)
    if wp.dot(carried, carried) == 0.0 and lv >= MIN_LENGTH:
        renew = 1.0
    k = safe_divide(b.v, lv) * renew + carried * ((1.0 - renew) * along)
    return axis, unit(k)


@wp.func
def signum(a: float):
    """1 for a >= 0, else -1."""
    if a >= 0.0:
        return 1.0
    return -1.0


@wp.func
def axis_code(n: wp.vec3):
    """SPEC 9, "Swings": the two-float code of a carried axis n (unit or 0): the octahedral
    code, n over |x| + |y| + |z| with the lower half (z < 0) folded onto the square's corners,
    its first component plus AXIS_CODE_SHIFT; (0, 0) for n = 0."""
    l1 = wp.abs(n[0]) + wp.abs(n[1]) + wp.abs(n[2])
    if l1 == 0.0:
        return wp.vec2(0.0)
    px = n[0] / l1
    py = n[1] / l1
    if n[2] < 0.0:
        fx = (1.0 - wp.abs(py)) * signum(px)
        fy = (1.0 - wp.abs(px)) * signum(py)
        px = fx
        py = fy
    return wp.vec2(px + AXIS_CODE_SHIFT, py)


@wp.func
def axis_from_code(code: wp.vec2):
    """The unit axis of the code made by :func:`axis_code`; 0 for none carried."""
    if code[0] < AXIS_CODE_SHIFT - 1.0:
        return wp.vec3(0.0)
    px = code[0] - AXIS_CODE_SHIFT
    py = code[1]
    z = 1.0 - wp.abs(px) - wp.abs(py)
    if z < 0.0:
        fx = (1.0 - wp.abs(py)) * signum(px)
        fy = (1.0 - wp.abs(px)) * signum(py)
        px = fx
        py = fy
    n = wp.vec3(px, py, z)
    return n / wp.length(n)


@wp.func
def turn_by_bend(b: Bend, a: wp.vec3, axis: wp.vec3):
    """SPEC 4 step 2: a turned by R(u → w) of the bend ``b``: for u·w >= HALF_TURN_COSINE the
    smallest rotation taking u onto w; below, the half turn about ``axis`` (:func:`bend_axis`),
    then the smallest rotation taking -u onto w. a itself where a direction has no length."""
    if b.ok == 0:
        return a
    c = b.c
    v = b.v
    turned = a
    if c < HALF_TURN_COSINE:
        turned = axis * (2.0 * wp.dot(axis, a)) - a
        c = -c
        v = wp.cross(-b.u, b.w)
    return turned * c + wp.cross(v, turned) + v * (wp.dot(v, turned) / (1.0 + c))


@wp.func
def bend_rotation(b: Bend, axis: wp.vec3):
    """The quaternion (x, y, z, w) of R(u → w) of the bend ``b``, as :func:`turn_by_bend` turns
    vectors: (u × w, 1 + u·w) normalised for u·w >= HALF_TURN_COSINE; below, the smallest
    rotation taking -u onto w times the half turn (axis, 0). Identity where a direction has no
    length."""
    if b.ok == 0:
        return wp.vec4(0.0, 0.0, 0.0, 1.0)
    c = b.c
    v = b.v
    wide = c < HALF_TURN_COSINE
    if wide:
        c = -c
        v = wp.cross(-b.u, b.w)
    qw = 1.0 + c
    size = wp.max(wp.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + qw * qw), TINY_QUATERNION)
    v = v / size
    qw = qw / size
    if wide:
        turned = axis * qw + wp.cross(v, axis)
        return wp.vec4(turned[0], turned[1], turned[2], -wp.dot(v, axis))
    return wp.vec4(v[0], v[1], v[2], qw)


@wp.func
def quat_multiply(a: wp.vec4, b: wp.vec4):
    """The quaternion product a·b, (x, y, z, w)."""
    av = wp.vec3(a[0], a[1], a[2])
    bv = wp.vec3(b[0], b[1], b[2])
    v = bv * a[3] + av * b[3] + wp.cross(av, bv)
    return wp.vec4(v[0], v[1], v[2], a[3] * b[3] - wp.dot(av, bv))
