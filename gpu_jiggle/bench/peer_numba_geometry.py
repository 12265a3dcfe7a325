"""3-vector geometry of the numba peer (see :mod:`gpu_jiggle.bench.peer_numba`): vectors are
tuples of three float32, quaternions tuples (x, y, z, w) of four; scalar float32 math, as a
numba user writes it. The rotation between two directions and the turn axis carried near
antiparallel (SPEC 4 step 2; SPEC 9, "Swings", with its two-float axis code), a child's target
turned with its parent's bend, the closest points of segments that contact needs, and the
monotone target path's weights and limited start tangent (SPEC 2).

Every float is float32 (constants ``np.float32``). Compiled with ``error_model="numpy"``:
a division by zero gives inf or nan, as in numpy, never an exception; the functions guard
the divisions whose result they use.
"""
from __future__ import annotations

import math

import numpy as np

from ..extras import require

numba = require("numba", "the numba peer")

F = np.float32
ZERO, HALF, ONE, TWO, THREE, FOUR, NINE = F(0), F(0.5), F(1), F(2), F(3), F(4), F(9)
MIN_LENGTH = F(1e-6)           # below it a direction is undefined (SPEC 4)
HALF_TURN_COSINE = F(-0.9999)  # u·w below it: the half-turn branch of R(u → w) (SPEC 4)
NEAR_ZERO = F(1e-12)
PERPENDICULAR_SWITCH = F(0.9)
#: SPEC 4 step 2: within this sine of antiparallel the half turn of R(u → w) leans on the axis
#: carried from the last evaluation.
TURN_AXIS_BLEND = F(0.014142)
#: SPEC 9, "Swings": a carried axis code's first component is stored plus this; (0, 0) is
#: "none carried yet".
AXIS_CODE_SHIFT = F(2)
TINY_QUATERNION = F(1e-30)
UP = (ZERO, ONE, ZERO)

jit = numba.njit(cache=True, error_model="numpy")
#: For the broad phase's checks, in every segment's step: inlined where called, so that a far
#: segment costs no call (whose array arguments cost reference counts).
inline_jit = numba.njit(cache=True, error_model="numpy", inline="always")


@jit
def load(a, i):
    return (a[i, 0], a[i, 1], a[i, 2])


@jit
def store(a, i, v):
    a[i, 0], a[i, 1], a[i, 2] = v[0], v[1], v[2]


@jit
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@jit
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@jit
def scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@jit
def div(a, s):
    return (a[0] / s, a[1] / s, a[2] / s)


@jit
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@jit
def norm(a):
    return math.sqrt(dot(a, a))


@jit
def safe_divide(a, d):
    """a/d where d > 0, else a (the caller does not use it there)."""
    return div(a, d) if d > ZERO else a


@jit
def unit(a):
    """a/|a|, or a where it has no length."""
    return safe_divide(a, norm(a))


@jit
def ring_point(centre, axis, radius, x):
    """The point nearest x on the circle of ``radius`` about ``centre`` square to the unit
    ``axis`` (any point of it where x is on the axis): where a sphere meets a sphere."""
    xc = sub(x, centre)
    radial = sub(xc, scale(axis, dot(xc, axis)))
    lr = norm(radial)
    direction = perpendicular(axis) if lr < MIN_LENGTH else safe_divide(radial, lr)
    return add(centre, scale(direction, radius))


@jit
def clamp01(s):
    return min(max(s, ZERO), ONE)


@jit
def perpendicular(u):
    """A unit vector perpendicular to the unit vector u."""
    side = (ONE, ZERO, ZERO) if abs(u[0]) < PERPENDICULAR_SWITCH else (ZERO, ONE, ZERO)
    return unit(cross(u, side))


@jit
def segment_fraction(a, b, x):
    """Where on the segment [a, b] the point closest to x lies, in [0, 1]."""
    ab = sub(b, a)
    return clamp01(dot(sub(x, a), ab) / max(dot(ab, ab), NEAR_ZERO))


@jit
def closest_on_segment(a, b, x):
    return add(a, scale(sub(b, a), segment_fraction(a, b, x)))


@jit
def closest_to_segment(a, b, p, x):
    """The point of the segment [a, b] closest to the segment [p, x]."""
    d1, d2, r = sub(b, a), sub(x, p), sub(a, p)
    aa, ee, f, cc, bb = dot(d1, d1), dot(d2, d2), dot(d2, r), dot(d1, r), dot(d1, d2)
    if aa < NEAR_ZERO:
        s = ZERO
    elif ee < NEAR_ZERO:
        s = clamp01(-cc / aa)
    else:
        denom = aa * ee - bb * bb
        s = clamp01((bb * f - cc * ee) / denom) if denom > NEAR_ZERO else ZERO
        t = (bb * s + f) / ee
        if t < ZERO:
            s = clamp01(-cc / aa)
        elif t > ONE:
            s = clamp01((bb - cc) / aa)
    return add(a, scale(d1, s))


@jit
def bend(u, w):
    """The pair of directions u → w that a turn is built on (SPEC 4 step 2), worked out once
    for :func:`bend_axis`, :func:`turn_by_bend` and :func:`bend_rotation`: (whether both have a
    length, u/|u|, w/|w|, u·w and u × w of the unit ones)."""
    lu, lw = norm(u), norm(w)
    if lu < MIN_LENGTH or lw < MIN_LENGTH:
        return False, u, w, ZERO, u
    u, w = div(u, lu), div(w, lw)
    return True, u, w, dot(u, w), cross(u, w)


@jit
def turn_axis(u, w, carried):
    """:func:`bend_axis` of the bend u → w."""
    return bend_axis(bend(u, w), carried)


@jit
def bend_axis(b, carried):
    """SPEC 4 step 2 and SPEC 9 "Swings": the axis of the half turn that the bend ``b`` =
    :func:`bend` (u, w) is built on near antiparallel, and the axis to carry to the next
    evaluation. The axis: u × w where |u × w| >= TURN_AXIS_BLEND; nearer antiparallel u × w
    plus the carried axis (its sign along u × w) times (TURN_AXIS_BLEND - |u × w|), made
    perpendicular to u and unit; a perpendicular of u where that vanishes. Carried on, where
    u·w < 0: from the carried axis to u × w (unit) as |u × w| goes from TURN_AXIS_BLEND to
    twice it (at once where none was carried yet); the one given where u·w >= 0 or a
    direction has no length. Returns (axis, carried)."""
    ok, u, w, c, v = b
    if not ok:
        return carried, carried
    lv = norm(v)
    along = -ONE if dot(carried, v) < ZERO else ONE
    n = add(v, scale(carried, along * max(TURN_AXIS_BLEND - lv, ZERO)))
    n = sub(n, scale(u, dot(n, u)))
    ln = norm(n)
    axis = perpendicular(u) if ln < MIN_LENGTH else safe_divide(n, ln)
    if c >= ZERO:
        return axis, carried
    renew = clamp01(lv / TURN_AXIS_BLEND - ONE)
    if dot(carried, carried) == ZERO and lv >= MIN_LENGTH:
        renew = ONE
    k = add(scale(safe_divide(v, lv), renew), scale(carried, (ONE - renew) * along))
    return axis, unit(k)


@jit
def axis_code(n):
    """SPEC 9, "Swings": the two-float code of a carried axis n (unit or 0): the octahedral
    code, n over |x| + |y| + |z| with the lower half (z < 0) folded onto the square's corners,
    its first component plus AXIS_CODE_SHIFT; (0, 0) for n = 0."""
    l1 = abs(n[0]) + abs(n[1]) + abs(n[2])
    if l1 == ZERO:
        return ZERO, ZERO
    px, py = n[0] / l1, n[1] / l1
    if n[2] < ZERO:
        px, py = (ONE - abs(py)) * (ONE if px >= ZERO else -ONE), (ONE - abs(px)) * (ONE if py >= ZERO else -ONE)
    return px + AXIS_CODE_SHIFT, py


@jit
def axis_from_code(cx, cy):
    """The unit axis of the code (cx, cy) made by :func:`axis_code`; 0 for none carried."""
    if cx < AXIS_CODE_SHIFT - ONE:
        return (ZERO, ZERO, ZERO)
    px, py = cx - AXIS_CODE_SHIFT, cy
    z = ONE - abs(px) - abs(py)
    if z < ZERO:
        px, py = (ONE - abs(py)) * (ONE if px >= ZERO else -ONE), (ONE - abs(px)) * (ONE if py >= ZERO else -ONE)
    n = (px, py, z)
    return div(n, norm(n))


@jit
def follow_parent(u, w, a, axis):
    """:func:`turn_by_bend` of the bend u → w."""
    return turn_by_bend(bend(u, w), a, axis)


@jit
def turn_by_bend(b, a, axis):
    """SPEC 4 step 2: a turned by R(u → w) of the bend ``b`` = :func:`bend` (u, w): for u·w >=
    HALF_TURN_COSINE the smallest rotation taking u onto w; below, the half turn about ``axis``
    (:func:`bend_axis`), then the smallest rotation taking -u onto w. a itself where a
    direction has no length."""
    ok, u, w, c, v = b
    if not ok:
        return a
    if c < HALF_TURN_COSINE:
        a = sub(scale(axis, TWO * dot(axis, a)), a)
        c = -c
        v = cross(scale(u, -ONE), w)
    return add(add(scale(a, c), cross(v, a)), scale(v, dot(v, a) / (ONE + c)))


@jit
def rotation_between(u, w, axis):
    """:func:`bend_rotation` of the bend u → w."""
    return bend_rotation(bend(u, w), axis)


@jit
def bend_rotation(b, axis):
    """The quaternion (x, y, z, w) of R(u → w) of the bend ``b`` = :func:`bend` (u, w), as
    :func:`turn_by_bend` turns vectors: (u × w, 1 + u·w) normalised for u·w >=
    HALF_TURN_COSINE; below, the smallest rotation taking -u onto w times the half turn
    (axis, 0). Identity where a direction has no length."""
    ok, u, w, c, v = b
    if not ok:
        return (ZERO, ZERO, ZERO, ONE)
    wide = c < HALF_TURN_COSINE
    if wide:
        c = -c
        v = cross(scale(u, -ONE), w)
    qw = ONE + c
    size = max(math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + qw * qw), TINY_QUATERNION)
    v, qw = div(v, size), qw / size
    if wide:
        turned = add(scale(axis, qw), cross(v, axis))
        return (turned[0], turned[1], turned[2], -dot(v, axis))
    return (v[0], v[1], v[2], qw)


@jit
def quat_multiply(a, b):
    """The quaternion product a·b, (x, y, z, w) tuples."""
    av, bv = (a[0], a[1], a[2]), (b[0], b[1], b[2])
    v = add(add(scale(bv, a[3]), scale(av, b[3])), cross(av, bv))
    return (v[0], v[1], v[2], a[3] * b[3] - dot(av, bv))


@jit
def path_weights(alpha):
    """(p, q, dp, dq) of the target path at ``alpha`` (SPEC 2): x(α) = x0 + p·d + q·m,
    its velocity (dp·d + dq·m)/span, with d = x1 - x0 and m the start velocity × span
    (:func:`start_tangent`)."""
    u = ONE - alpha
    return alpha * alpha * (TWO - alpha), alpha * u * u, alpha * (FOUR - THREE * alpha), u * (ONE - THREE * alpha)


@jit
def start_tangent3(d, m):
    """:func:`start_tangent` of a 3-vector move ``d``: the part of span·m0 ``m`` along it
    clamped to [0, 3]·d, the part across it to the length 3|d| (SPEC 2)."""
    dd = dot(d, d)
    if dd == ZERO:
        return (ZERO, ZERO, ZERO)
    along = dot(m, d) / dd
    across = sub(m, scale(d, along))
    aa = dot(across, across)
    if aa > NINE * dd:
        across = scale(across, np.sqrt(NINE * dd / aa))
    return add(scale(d, min(max(along, ZERO), THREE)), across)
