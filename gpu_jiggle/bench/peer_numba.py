"""The numba peer (see :mod:`gpu_jiggle.bench.peers`): one ``prange`` iteration per chain walks
it root to tip through every substep of a frame, in float32 world coordinates.

Every float is float32 (module constants are ``np.float32``, frame scalars arrive as
``np.float32``), so nothing is promoted to float64 on the way. The kernels take the arrays of
:data:`~gpu_jiggle.bench.peers.ANGLE_ARRAYS` / ``POINT_ARRAYS`` in that order, then the frame's
scalars. Compiled on first use and cached on disk (``cache=True``).
"""
from __future__ import annotations

import math

import numpy as np

from ..extras import require

numba = require("numba", "the numba peer")

F = np.float32
ZERO, ONE, TWO, THREE, FOUR, NINE = F(0), F(1), F(2), F(3), F(4), F(9)
PI = F(np.pi)
TWO_PI = F(2.0 * np.pi)
INV_TWO_PI = F(1.0 / (2.0 * np.pi))
MIN_LENGTH = F(1e-6)       # below it a direction is undefined (SPEC 4)
HALF_TURN_COSINE = F(-0.9999)  # u·w below it: the half-turn branch of R(u → w) (SPEC 4)
NEAR_ZERO = F(1e-12)
PERPENDICULAR_SWITCH = F(0.9)

jit = numba.njit(cache=True)


class NumbaEngine:
    """Holds the peer's arrays as numpy arrays and runs the numba kernel of its kind."""

    library = "numba"

    def __init__(self, kind: str, device=None):
        if device not in (None, "cpu"):
            raise ValueError(f"device = {device!r}: the numba peer runs on the CPU")
        self.kernel = angle_frame if kind == "angle" else point_frame
        self.name = f"numba (parallel CPU, {numba.get_num_threads()} threads)"
        self.arrays = {}
        self.order = ()

    def load(self, names, values: dict) -> None:
        """Set the arrays ``names`` from ``values`` (float32 numpy); the first call gives them all."""
        for name in names:
            self.arrays[name] = np.ascontiguousarray(values[name], F)
        if not self.order:
            self.order = tuple(names)

    def run(self, scalars) -> None:
        """One frame: the kernel over all chains."""
        self.kernel(*(self.arrays[name] for name in self.order), *scalars)

    def read(self, name) -> np.ndarray:
        return self.arrays[name].copy()

    def synchronize(self) -> None:
        """Nothing to wait for: the kernel returns when the frame is done."""


@jit
def wrap(a):
    """SPEC 0: ``a - 2π·floor((a + π)/2π)``, in [-π, π)."""
    return a - TWO_PI * np.floor((a + PI) * INV_TWO_PI)


@jit
def path_weights(alpha):
    """(p, q, dp, dq) of the target path at ``alpha`` (SPEC 2): x(α) = x0 + p·d + q·m,
    its velocity (dp·d + dq·m)/span, with d = x1 - x0 and m the start velocity × span
    (:func:`start_tangent`)."""
    u = ONE - alpha
    return alpha * alpha * (TWO - alpha), alpha * u * u, alpha * (FOUR - THREE * alpha), u * (ONE - THREE * alpha)


@jit
def start_tangent(d, m):
    """The monotone path's start velocity × span (SPEC 2) toward the move ``d`` of an angle:
    span·m0 clamped to [0, 3]·d (none where the motion stopped or turned back)."""
    if d * m <= ZERO:
        return ZERO
    return THREE * d if abs(m) > THREE * abs(d) else m


@jit
def start_tangent2(dx, dy, mx, my):
    """:func:`start_tangent` of a 2-vector move (dx, dy): the part of span·m0 (mx, my) along
    it clamped to [0, 3]·d, the part across it to the length 3|d|."""
    dd = dx * dx + dy * dy
    if dd == ZERO:
        return ZERO, ZERO
    along = (mx * dx + my * dy) / dd
    ax, ay = mx - along * dx, my - along * dy
    aa = ax * ax + ay * ay
    if aa > NINE * dd:
        shrink = np.sqrt(NINE * dd / aa)
        ax, ay = ax * shrink, ay * shrink
    along = min(max(along, ZERO), THREE)
    return along * dx + ax, along * dy + ay


@numba.njit(parallel=True, cache=True)
def angle_frame(length, stiffness, damping, air_drag, inertia, gravity,
                root_position, root_angle, local_angle,
                root_last, root_rate, heading_last, heading_rate, root_prev, root_velocity_prev,
                angle, angular_velocity, angular_velocity_before, target_angle, local_last, local_rate,
                joint_output,
                alphas, substep_count, segments, h, span, inv_span, inv_path_step, blend,
                wind, gust_amplitude, gust_direction, gust_wave_vector, gust_angular_frequency, gust_phase):
    """One frame of angle chains (SPEC 3): substeps, the path's end (SPEC 2), frame-time output."""
    windy = wind[0] != ZERO or wind[1] != ZERO or gust_amplitude != ZERO
    gust_x, gust_y = gust_amplitude * gust_direction[0], gust_amplitude * gust_direction[1]
    for c in numba.prange(root_position.shape[0]):
        first = c * segments
        px, py, heading_pose = root_position[c, 0], root_position[c, 1], root_angle[c]
        lx, ly, heading0 = root_last[c, 0], root_last[c, 1], heading_last[c]
        # SPEC 2: the moves this frame and the monotone path's start velocities (× span).
        dx, dy = px - lx, py - ly
        mx, my = start_tangent2(dx, dy, span * root_rate[c, 0], span * root_rate[c, 1])
        dh = wrap(heading_pose - heading0)
        mh = start_tangent(dh, span * heading_rate[c])
        for j in range(substep_count):
            p, q, _, _ = path_weights(alphas[j])
            elapsed = F(j) * h
            tip_x, tip_y = root_prev[c, 0], root_prev[c, 1]  # the tips of the last substep, for the wind
            # SPEC 3 step 1: the root on its path, its velocity and acceleration.
            rx = lx + p * dx + q * mx
            ry = ly + p * dy + q * my
            heading = heading0 + p * dh + q * mh
            vx = (rx - root_prev[c, 0]) * inv_path_step
            vy = (ry - root_prev[c, 1]) * inv_path_step
            ax = (vx - root_velocity_prev[c, 0]) * inv_path_step
            ay = (vy - root_velocity_prev[c, 1]) * inv_path_step
            root_prev[c, 0], root_prev[c, 1] = rx, ry
            root_velocity_prev[c, 0], root_velocity_prev[c, 1] = vx, vy
            # SPEC 3 step 2: root to tip.
            phi_parent = heading
            for i in range(segments):
                s = first + i
                last = local_last[s]
                dl = wrap(local_angle[s] - last)
                target = phi_parent + (last + p * dl + q * start_tangent(dl, span * local_rate[s]))
                target_rate = wrap(target - target_angle[s]) * inv_path_step
                phi = angle[s]
                omega = angular_velocity[s]
                ex, ey = math.cos(phi), math.sin(phi)
                gx = gravity[c, 0] - inertia[s] * ax
                gy = gravity[c, 1] - inertia[s] * ay
                if windy:  # SPEC 3 and 4.1, 2D, at the segment's tip from the last substep
                    tip_x = tip_x + length[s] * ex
                    tip_y = tip_y + length[s] * ey
                    gust = math.sin(gust_wave_vector[0] * tip_x + gust_wave_vector[1] * tip_y + gust_phase
                                    - gust_angular_frequency * elapsed)
                    gx = gx + (wind[0] + gust_x * gust)
                    gy = gy + (wind[1] + gust_y * gust)
                torque = (ex * gy - ey * gx) / length[s]
                d = wrap(phi - target_angle[s])
                acc = -stiffness[s] * d - damping[s] * (omega - target_rate) - air_drag[s] * omega + torque
                omega = omega + acc * h
                phi_new = wrap(phi + omega * h)
                angular_velocity_before[s] = angular_velocity[s]
                angular_velocity[s] = omega
                target_angle[s] = wrap(target)
                angle[s] = phi_new
                phi_parent = phi_new
        if substep_count > 0:  # SPEC 2: x0, m0 become the path's value and velocity at α_n
            p, q, dp, dq = path_weights(alphas[substep_count - 1])
            root_last[c, 0] = lx + p * dx + q * mx
            root_last[c, 1] = ly + p * dy + q * my
            root_rate[c, 0] = (dp * dx + dq * mx) * inv_span
            root_rate[c, 1] = (dp * dy + dq * my) * inv_span
            heading_last[c] = wrap(heading0 + p * dh + q * mh)
            heading_rate[c] = (dp * dh + dq * mh) * inv_span
            for s in range(first, first + segments):
                d = wrap(local_angle[s] - local_last[s])
                m = start_tangent(d, span * local_rate[s])
                local_last[s] = wrap(local_last[s] + p * d + q * m)
                local_rate[s] = (dp * d + dq * m) * inv_span
        # SPEC 2 and 9, output at frame time, σ·h after the last substep: each angle carried
        # there at its angular velocity extrapolated from the last two substeps, 2ω - ω_prev,
        # then laid out from this frame's root.
        ahead = blend * h
        joint = c * (segments + 1)
        bx, by = px, py
        joint_output[joint, 0], joint_output[joint, 1] = bx, by
        for i in range(segments):
            s = first + i
            a = wrap(angle[s] + ahead * (TWO * angular_velocity[s] - angular_velocity_before[s]))
            bx = bx + length[s] * math.cos(a)
            by = by + length[s] * math.sin(a)
            joint_output[joint + 1 + i, 0], joint_output[joint + 1 + i, 1] = bx, by


# -- 3-vectors as tuples of float32 ----------------------------------------------------------
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


@jit
def on_path(last, rate, pose, p, q, span):
    """SPEC 2, the monotone path: x0 + p·d + q·m, d = x1 - x0, m = span·m0 limited."""
    d = sub(pose, last)
    return add(add(last, scale(d, p)), scale(start_tangent3(d, scale(rate, span)), q))


@jit
def follow_parent(u, w, a):
    """SPEC 4 step 2: ``a`` turned by the smallest rotation taking direction u onto w."""
    lu, lw = norm(u), norm(w)
    if lu < MIN_LENGTH or lw < MIN_LENGTH:
        return a
    u, w = div(u, lu), div(w, lw)
    c = dot(u, w)
    if c < HALF_TURN_COSINE:  # a half turn about an axis perpendicular to u
        side = (ONE, ZERO, ZERO) if abs(u[0]) < PERPENDICULAR_SWITCH else (ZERO, ONE, ZERO)
        axis = cross(u, side)
        axis = div(axis, norm(axis))
        return sub(scale(axis, TWO * dot(axis, a)), a)
    v = cross(u, w)
    return add(add(scale(a, c), cross(v, a)), scale(v, dot(v, a) / (ONE + c)))


@jit
def push_out(q, r, x, v):
    """SPEC 4 step 2, colliders: x out of the ball (q, r), the inward velocity removed."""
    delta = sub(x, q)
    d = norm(delta)
    if d < r:
        n = (ZERO, ONE, ZERO) if d < MIN_LENGTH else div(delta, d)
        x = add(q, scale(n, r))
        vn = dot(v, n)
        if vn < ZERO:
            v = sub(v, scale(n, vn))
    return x, v


@jit
def collide(sphere_centre, sphere_radius, capsule_a, capsule_b, capsule_radius, rho, x, v):
    """SPEC 4.2: spheres, then capsules (the point of the axis closest to x), one pass."""
    for k in range(sphere_radius.shape[0]):
        x, v = push_out(load(sphere_centre, k), sphere_radius[k] + rho, x, v)
    for k in range(capsule_radius.shape[0]):
        a = load(capsule_a, k)
        ab = sub(load(capsule_b, k), a)
        t = min(max(dot(sub(x, a), ab) / max(dot(ab, ab), NEAR_ZERO), ZERO), ONE)
        x, v = push_out(add(a, scale(ab, t)), capsule_radius[k] + rho, x, v)
    return x, v


@jit
def turn_ahead(dir_before, dir_now, change, h, ahead):
    """SPEC 9, frame-time output: the direction at the last substep turned ``ahead`` seconds
    further at its angular velocity extrapolated from the last two substeps, 2Ω - Ω_prev
    (Ω = d × ḋ / |d|², ḋ = (dir_now - dir_before)/h now and ḋ - ``change`` a substep back),
    across the direction by Rodrigues' formula, keeping its length."""
    rate = div(sub(dir_now, dir_before), h)
    lc = max(norm(dir_now), MIN_LENGTH)
    lp = max(norm(dir_before), MIN_LENGTH)
    u = div(dir_now, lc)
    omega = div(cross(u, rate), lc)
    omega_prev = div(cross(div(dir_before, lp), sub(rate, change)), lp)
    turn = scale(sub(scale(omega, TWO), omega_prev), ahead)
    turn = sub(turn, scale(u, dot(turn, u)))
    angle = norm(turn)
    sinc = math.sin(angle) / angle if angle > ZERO else ONE
    return add(scale(dir_now, F(math.cos(angle))), scale(cross(turn, dir_now), F(sinc)))


@numba.njit(parallel=True, cache=True)
def point_frame(rest_length, stiffness, damping, air_drag, particle_radius, gravity,
                sphere_centre, sphere_radius, capsule_a, capsule_b, capsule_radius,
                joint_target,
                joint_last, joint_rate, pivot_rate_before, pivot, pivot_before, position, velocity,
                position_before, velocity_before, target,
                joint_output,
                alphas, substep_count, segments, h, span, inv_span, inv_path_step, blend,
                wind, gust_amplitude, gust_direction, gust_wave_vector, gust_angular_frequency, gust_phase):
    """One frame of point chains (SPEC 4): substeps, the path's end (SPEC 2), frame-time output."""
    w0 = (wind[0], wind[1], wind[2])
    gust = scale((gust_direction[0], gust_direction[1], gust_direction[2]), gust_amplitude)
    kappa = (gust_wave_vector[0], gust_wave_vector[1], gust_wave_vector[2])
    zero = (ZERO, ZERO, ZERO)
    for c in numba.prange(pivot.shape[0]):
        first = c * segments
        first_joint = c * (segments + 1)
        g = load(gravity, c)
        for j in range(substep_count):
            p, q, _, _ = path_weights(alphas[j])
            elapsed = F(j) * h
            # SPEC 4 step 1: the pivot on its path.
            base = on_path(load(joint_last, first_joint), load(joint_rate, first_joint),
                           load(joint_target, first_joint), p, q, span)
            store(pivot_before, c, load(pivot, c))
            store(pivot, c, base)
            offset_before = zero  # the tips' targets go as offsets from the pivot on its path
            parent_animated, parent_simulated = zero, zero
            for i in range(segments):
                s, J = first + i, first_joint + 1 + i
                offset = on_path(load(joint_last, J), load(joint_rate, J), load(joint_target, J), p, q, span)
                animated = sub(offset, offset_before)
                if i == 0:
                    t = add(base, animated)
                else:
                    t = add(base, follow_parent(parent_animated, parent_simulated, animated))
                x, v, t_prev = load(position, s), load(velocity, s), load(target, s)
                v_t = scale(sub(t, t_prev), inv_path_step)
                # SPEC 4.1, at the particle at the start of the substep.
                w = add(w0, scale(gust, math.sin(dot(kappa, x) + gust_phase - gust_angular_frequency * elapsed)))
                acc = sub(scale(sub(x, t_prev), -stiffness[s]), scale(sub(v, v_t), damping[s]))
                acc = add(add(sub(acc, scale(v, air_drag[s])), g), w)
                v = add(v, scale(acc, h))
                x = add(x, scale(v, h))
                x, v = collide(sphere_centre, sphere_radius, capsule_a, capsule_b, capsule_radius,
                               particle_radius[s], x, v)
                # The length step (SPEC 9): onto the rest-length sphere about the base, v += Δx/h.
                d = sub(x, base)
                projected = add(base, scale(div(d, max(norm(d), MIN_LENGTH)), rest_length[s]))
                v = add(v, div(sub(projected, x), h))
                x = projected
                store(position_before, s, load(position, s))
                store(velocity_before, s, load(velocity, s))
                store(position, s, x)
                store(velocity, s, v)
                store(target, s, t)
                parent_animated, parent_simulated = animated, sub(x, base)
                base, offset_before = x, offset
        if substep_count > 0:  # SPEC 2: x0, m0 become the path's value and velocity at α_n
            # The pivot's path velocity a substep back (for the frame-time output).
            if substep_count > 1:
                _, _, dp, dq = path_weights(alphas[substep_count - 2])
                d = sub(load(joint_target, first_joint), load(joint_last, first_joint))
                m = start_tangent3(d, scale(load(joint_rate, first_joint), span))
                store(pivot_rate_before, c, scale(add(scale(d, dp), scale(m, dq)), inv_span))
            else:
                store(pivot_rate_before, c, load(joint_rate, first_joint))
            p, q, dp, dq = path_weights(alphas[substep_count - 1])
            for J in range(first_joint, first_joint + segments + 1):
                d = sub(load(joint_target, J), load(joint_last, J))
                m = start_tangent3(d, scale(load(joint_rate, J), span))
                store(joint_last, J, add(add(load(joint_last, J), scale(d, p)), scale(m, q)))
                store(joint_rate, J, scale(add(scale(d, dp), scale(m, dq)), inv_span))
        # SPEC 2 and 9, output at frame time, σ·h after the last substep: each direction
        # carried there at its angular velocity extrapolated from the last two substeps
        # (turn_ahead), rebuilt with the rest lengths from this frame's pivot, pushed out of
        # the colliders.
        base = load(joint_target, first_joint)
        base_before, base_now = load(pivot_before, c), load(pivot, c)
        base_change = sub(load(joint_rate, first_joint), load(pivot_rate_before, c))
        store(joint_output, first_joint, base)
        for i in range(segments):
            s = first + i
            before, now = load(position_before, s), load(position, s)
            dir_before, dir_now = sub(before, base_before), sub(now, base_now)
            change = sub(sub(load(velocity, s), load(velocity_before, s)), base_change)
            direction = turn_ahead(dir_before, dir_now, change, h, blend * h)
            base_change = sub(load(velocity, s), load(velocity_before, s))
            ld = norm(direction)
            if ld < MIN_LENGTH:
                direction = div(dir_now, max(norm(dir_now), MIN_LENGTH))
            else:
                direction = div(direction, ld)
            x = add(base, scale(direction, rest_length[s]))
            x, _ = collide(sphere_centre, sphere_radius, capsule_a, capsule_b, capsule_radius,
                           particle_radius[s], x, zero)
            store(joint_output, first_joint + 1 + i, x)
            base, base_before, base_now = x, before, now
