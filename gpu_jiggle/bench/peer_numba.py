"""The numba peer (see :mod:`gpu_jiggle.bench.peers`): one ``prange`` iteration per chain walks
it root to tip through every substep of a frame, in float32 world coordinates.

Every float is float32 (module constants are ``np.float32``, frame scalars arrive as
``np.float32``), so nothing is promoted to float64 on the way. The kernels take the arrays of
:data:`~gpu_jiggle.bench.peer_host.ANGLE_ARRAYS` / ``POINT_ARRAYS`` in that order, then the frame's
scalars. The point chains' vector geometry, collider paths, contact stages, limits and
frame-time output are in :mod:`.peer_numba_geometry`, :mod:`.peer_numba_colliders`,
:mod:`.peer_numba_contact`, :mod:`.peer_numba_limits` and :mod:`.peer_numba_output`; the point
functions compile with ``error_model="numpy"`` (a division by zero gives inf or nan, no
exception).

Compiled on first use and cached on disk (``cache=True``). Numba keys a function's cache on
its own source file alone: after editing one of those modules, remove the cached kernels
(``gpu_jiggle/bench/__pycache__/peer_numba*.nb[ic]``), or the old code runs.
"""
from __future__ import annotations

import math

import numpy as np

from ..extras import require
from .peer_numba_colliders import PLACED_WIDTH, collider_paths, end_collider_paths, place
from .peer_numba_contact import collide_near, contact_substeps, settle_contact
from .peer_numba_geometry import (MIN_LENGTH, NINE, ONE, THREE, TWO, ZERO, add, axis_code, axis_from_code, bend,
                                  bend_axis, div, dot, load, norm, path_weights, scale, start_tangent3, store, sub,
                                  turn_by_bend)
from .peer_numba_geometry import jit as point_jit
from .peer_numba_limits import limit_angle, limit_distance
from .peer_numba_output import write_output

numba = require("numba", "the numba peer")

F = np.float32
PI = F(np.pi)
TWO_PI = F(2.0 * np.pi)
INV_TWO_PI = F(1.0 / (2.0 * np.pi))

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


# -- point chains (SPEC 4, 9) ------------------------------------------------------------------
@point_jit
def on_path(last, rate, pose, p, q, span):
    """SPEC 2, the monotone path: x0 + p·d + q·m, d = x1 - x0, m = span·m0 limited."""
    d = sub(pose, last)
    return add(add(last, scale(d, p)), scale(start_tangent3(d, scale(rate, span)), q))


@point_jit
def chain_substep(c, segments, p, q, span, h, inv_path_step, elapsed, first_of_substep, placed, spheres,
                  rest_length, stiffness, damping, air_drag, particle_radius, max_distance, angle_limit, gravity,
                  joint_target, joint_last, joint_rate, pivot, pivot_before, position, velocity, position_before,
                  velocity_before, target, bend_code, w0, gust, kappa, gust_phase, gust_angular_frequency):
    """One substep (or contact sub-step, SPEC 9) of h seconds of chain ``c`` at the path
    weights (p, q), its colliders ``placed``: the pivot on its path (SPEC 4 step 1), then root
    to tip: the target turned with the parent's bend (its half-turn axis carried as a code in
    ``bend_code``, SPEC 4 step 2 and 9), the spring, damping relative to the target, air drag,
    gravity and wind (SPEC 4.1) in a semi-implicit Euler step, the particle stage
    (``collide_near``), the max distance, the length step with v += Δx/h less what contact
    moved without velocity (SPEC 9, "Push-out velocity"), the cone angle limit (SPEC 9), then
    ``settle_contact``. ``first_of_substep``: the first sub-step of a substep, whose start the
    frame-time output blends from."""
    first, first_joint = c * segments, c * (segments + 1)
    zero = (ZERO, ZERO, ZERO)
    g = load(gravity, c)
    base = on_path(load(joint_last, first_joint), load(joint_rate, first_joint), load(joint_target, first_joint),
                   p, q, span)
    base_start = load(pivot, c)  # each segment's base at the start of the substep
    if first_of_substep:
        store(pivot_before, c, base_start)
    store(pivot, c, base)
    offset_before = zero  # the tips' targets go as offsets from the pivot on its path
    parent, parent_axis = bend(zero, zero), zero  # the parent's bend, animated → simulated
    pushed_base = zero  # how far contact moved the base without velocity this substep
    for i in range(segments):
        s, J = first + i, first_joint + 1 + i
        offset = on_path(load(joint_last, J), load(joint_rate, J), load(joint_target, J), p, q, span)
        animated = sub(offset, offset_before)
        if i == 0:
            t = add(base, animated)
        else:
            t = add(base, turn_by_bend(parent, animated, parent_axis))  # follow_parent
        start, v, t_prev = load(position, s), load(velocity, s), load(target, s)
        v_t = scale(sub(t, t_prev), inv_path_step)
        # SPEC 4.1, at the particle at the start of the substep.
        w = add(w0, scale(gust, math.sin(dot(kappa, start) + gust_phase - gust_angular_frequency * elapsed)))
        acc = sub(scale(sub(start, t_prev), -stiffness[s]), scale(sub(v, v_t), damping[s]))
        acc = add(add(sub(acc, scale(v, air_drag[s])), g), w)
        v = add(v, scale(acc, h))
        x = add(start, scale(v, h))
        rho, rest = particle_radius[s], rest_length[s]
        free_x, free_v = x, v
        if placed.shape[0] > 0:  # (no call, whose array argument costs, without colliders)
            x, v = collide_near(placed, spheres, rho, h, start, x, v)
        pushed = sub(sub(x, free_x), scale(sub(v, free_v), h))  # what contact moved x without velocity
        x, v = limit_distance(max_distance[s], t, x, v)
        # The length step (SPEC 9): onto the rest-length sphere about the base; v += Δx/h of the
        # same projection made without what contact moved x and its base without velocity.
        d = sub(x, base)
        projected = add(base, scale(div(d, max(norm(d), MIN_LENGTH)), rest))
        moving_x, moving_base = sub(x, pushed), sub(base, pushed_base)
        d = sub(moving_x, moving_base)
        moving_projected = add(moving_base, scale(div(d, max(norm(d), MIN_LENGTH)), rest))
        v = add(v, div(sub(moving_projected, moving_x), h))
        pushed = sub(projected, moving_projected)
        x = projected
        x, v = limit_angle(angle_limit[s], base, t, v_t, x, v)
        settled_x, settled_v = x, v
        if placed.shape[0] > 0:
            x, v = settle_contact(placed, spheres, rho, base, rest, h, base_start, start, x, v)
        pushed_base = add(pushed, sub(sub(x, settled_x), scale(sub(v, settled_v), h)))
        if first_of_substep:
            store(position_before, s, start)
            store(velocity_before, s, load(velocity, s))
        store(position, s, x)
        store(velocity, s, v)
        store(target, s, t)
        # the axis of this segment's bend, carried to the next substep (SPEC 4 step 2, 9)
        parent = bend(animated, sub(x, base))
        parent_axis, carried = bend_axis(parent, axis_from_code(bend_code[s, 0], bend_code[s, 1]))  # turn_axis
        bend_code[s, 0], bend_code[s, 1] = axis_code(carried)
        base, base_start, offset_before = x, start, offset


@numba.njit(parallel=True, cache=True, error_model="numpy")
def point_frame(rest_length, stiffness, damping, air_drag, particle_radius, max_distance, angle_limit, gravity,
                sphere_centre, sphere_radius, capsule_a, capsule_b, capsule_radius,
                joint_target,
                sphere_last, sphere_rate, sphere_radius_last, capsule_a_last, capsule_b_last, capsule_a_rate,
                capsule_b_rate, capsule_radius_last,
                joint_last, joint_rate, pivot_rate_before, pivot, pivot_before, position, velocity,
                position_before, velocity_before, target, bend_code, swing_code, world_code,
                joint_output, swing, world_rotation,
                alphas, substep_count, segments, h, span, inv_span, inv_path_step, blend,
                wind, gust_amplitude, gust_direction, gust_wave_vector, gust_angular_frequency, gust_phase):
    """One frame of point chains (SPEC 4, 9), the arrays of
    :data:`~gpu_jiggle.bench.peer_host.POINT_ARRAYS` (shapes and units in :mod:`.peer_host`) changed in
    place: this frame's collider paths (SPEC 2, 9); per chain and substep the contact sub-steps
    the colliders' motion asks for (SPEC 9), each a :func:`chain_substep`; the joints' paths'
    end (SPEC 2); the frame-time output (:func:`~.peer_numba_output.write_output`); then the
    colliders' paths' end."""
    w0 = (wind[0], wind[1], wind[2])
    gust = scale((gust_direction[0], gust_direction[1], gust_direction[2]), gust_amplitude)
    kappa = (gust_wave_vector[0], gust_wave_vector[1], gust_wave_vector[2])
    spheres = sphere_radius.shape[0]
    paths = collider_paths(sphere_centre, sphere_radius, capsule_a, capsule_b, capsule_radius, sphere_last,
                           sphere_rate, sphere_radius_last, capsule_a_last, capsule_b_last, capsule_a_rate,
                           capsule_b_rate, capsule_radius_last, span)
    colliders = paths.shape[0]
    at_pose = np.empty((colliders, PLACED_WIDTH), F)  # the colliders at frame time, for the output
    place(at_pose, paths, spheres, (ONE, ZERO), (ONE, ZERO), ONE)
    for c in numba.prange(pivot.shape[0]):
        first, first_joint = c * segments, c * (segments + 1)
        placed = np.empty((colliders, PLACED_WIDTH), F)
        # SPEC 9, contact sub-steps: the chain's reach and smallest particle radius.
        reach, largest, smallest = ZERO, ZERO, np.float32(np.inf)
        for s in range(first, first + segments):
            reach += rest_length[s]
            largest, smallest = max(largest, particle_radius[s]), min(smallest, particle_radius[s])
        reach += largest
        for j in range(substep_count):
            alpha = alphas[j]
            alpha_start = alphas[j - 1] if j > 0 else ZERO
            collider_alpha = min(max(ONE - (ONE - alpha), ZERO), ONE)
            collider_start = min(ONE - (ONE - alpha_start), ONE)
            p, q, _, _ = path_weights(alpha)
            k = 1
            if colliders > 0:
                cp, cq, _, _ = path_weights(collider_alpha)
                sp, sq, _, _ = path_weights(collider_start)
                place(placed, paths, spheres, (cp, cq), (sp, sq), collider_alpha)
                end = on_path(load(joint_last, first_joint), load(joint_rate, first_joint),
                              load(joint_target, first_joint), p, q, span)
                k = contact_substeps(placed, spheres, end, sub(end, load(pivot, c)), reach, smallest)
            for part in range(k):
                h_part, rate, elapsed = h, inv_path_step, F(j) * h
                if k > 1:  # sub-step part of k: its path fractions, the last one's end exact
                    a, a_collider = alpha, collider_alpha
                    if part < k - 1:
                        a = alpha_start + F(part + 1) / F(k) * (alpha - alpha_start)
                        a_collider = collider_start + F(part + 1) / F(k) * (collider_alpha - collider_start)
                    a_start = collider_start + F(part) / F(k) * (collider_alpha - collider_start)
                    h_part, rate = h / F(k), inv_path_step * F(k)
                    elapsed = elapsed + F(part) * h_part
                    p, q, _, _ = path_weights(a)
                    cp, cq, _, _ = path_weights(a_collider)
                    sp, sq, _, _ = path_weights(a_start)
                    place(placed, paths, spheres, (cp, cq), (sp, sq), a_collider)
                chain_substep(c, segments, p, q, span, h_part, rate, elapsed, part == 0, placed, spheres,
                              rest_length, stiffness, damping, air_drag, particle_radius, max_distance, angle_limit,
                              gravity, joint_target,
                              joint_last, joint_rate, pivot, pivot_before, position, velocity, position_before,
                              velocity_before, target, bend_code, w0, gust, kappa, gust_phase,
                              gust_angular_frequency)
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
        write_output(c, segments, h, blend * h, at_pose, spheres, rest_length, particle_radius, angle_limit,
                     joint_target, joint_rate, pivot_rate_before, pivot, pivot_before, position, velocity,
                     position_before, velocity_before, swing_code, world_code, joint_output, swing, world_rotation)
    if substep_count > 0:
        end_collider_paths(paths, spheres, alphas[substep_count - 1], inv_span, sphere_last, sphere_rate,
                           sphere_radius_last, capsule_a_last, capsule_b_last, capsule_a_rate, capsule_b_rate,
                           capsule_radius_last)
