"""The frame-time output of the numba peer's point chains (see
:mod:`gpu_jiggle.bench.peer_numba`; SPEC 2, "Output at frame time", and SPEC 9, "Frame-time
output" and "Swings"): each segment's direction carried σ·h past the last substep
(``turn_ahead``), the chain rebuilt with its rest lengths from this frame's pivot, kept
within its cone angle limit about this frame's target direction and taken out of this
frame's colliders (``push_out_of_frame``), and each segment's rotations: the
swing, the smallest rotation taking its animated direction onto its output one, and its world
rotation, its target frame turned onto the output direction, each half turn leaning on the
axis carried from the last frame as a code (``swing_code``, ``world_code``). The joints'
animated rotations are the identity (the peers take joint positions only), so a segment's
target frame is its parent's bend R(parent animated → parent output).
"""
from __future__ import annotations

import math

import numpy as np

from .peer_numba_contact import push_out_of_frame
from .peer_numba_limits import limit_angle
from .peer_numba_geometry import (MIN_LENGTH, ONE, TWO, ZERO, add, axis_code, axis_from_code, bend, bend_axis,
                                  bend_rotation, cross, div, dot, jit, load, norm, quat_multiply, scale, store, sub,
                                  turn_by_bend)

F = np.float32


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


@jit
def store4(a, i, q):
    a[i, 0], a[i, 1], a[i, 2], a[i, 3] = q[0], q[1], q[2], q[3]


@jit
def write_output(c, segments, h, ahead, placed, spheres, rest_length, particle_radius, angle_limit, joint_target,
                 joint_rate, pivot_rate_before, pivot, pivot_before, position, velocity, position_before,
                 velocity_before, swing_code, world_code, joint_output, swing, world_rotation):
    """SPEC 2 and 9, output of chain ``c`` at frame time, ``ahead`` = σ·h seconds after its
    last substep of h seconds: ``joint_output`` (J, 3) world joints, per segment ``swing`` and
    ``world_rotation`` (S, 4) quaternions (x, y, z, w); the colliders ``placed`` at this
    frame's pose (at rest). Reads the last substep's state and its start (``*_before``)."""
    first, first_joint = c * segments, c * (segments + 1)
    zero = (ZERO, ZERO, ZERO)
    base = load(joint_target, first_joint)
    base_before, base_now = load(pivot_before, c), load(pivot, c)
    base_change = sub(load(joint_rate, first_joint), load(pivot_rate_before, c))
    store(joint_output, first_joint, base)
    animated_base, parent, parent_axis = zero, bend(zero, zero), zero  # parent: its bend, animated → output
    for i in range(segments):
        s, J = first + i, first_joint + 1 + i
        before, now = load(position_before, s), load(position, s)
        dir_before, dir_now = sub(before, base_before), sub(now, base_now)
        change = sub(sub(load(velocity, s), load(velocity_before, s)), base_change)
        direction = turn_ahead(dir_before, dir_now, change, h, ahead)
        ld = norm(direction)
        if ld < MIN_LENGTH:
            direction = div(dir_now, max(norm(dir_now), MIN_LENGTH))
        else:
            direction = div(direction, ld)
        x = add(base, scale(direction, rest_length[s]))
        animated = sub(load(joint_target, J), animated_base)  # this frame's target direction
        if i == 0:
            t = add(base, animated)
        else:
            t = add(base, turn_by_bend(parent, animated, parent_axis))  # follow_parent
        frame = bend_rotation(parent, parent_axis)  # the target frame, R(parent animated → output)
        x, _ = limit_angle(angle_limit[s], base, t, zero, x, zero)
        if placed.shape[0] > 0:
            x = push_out_of_frame(placed, spheres, particle_radius[s], base, rest_length[s], x)
        out = sub(x, base)
        # the swing and the world rotation's turn, each leaning on the axis of its last frame
        swung = bend(animated, out)
        swing_axis, swing_carried = bend_axis(swung, axis_from_code(swing_code[s, 0], swing_code[s, 1]))
        store4(swing, s, bend_rotation(swung, swing_axis))
        turned = bend(sub(t, base), out)
        world_axis, world_carried = bend_axis(turned, axis_from_code(world_code[s, 0], world_code[s, 1]))
        store4(world_rotation, s, quat_multiply(bend_rotation(turned, world_axis), frame))
        swing_code[s, 0], swing_code[s, 1] = axis_code(swing_carried)
        world_code[s, 0], world_code[s, 1] = axis_code(world_carried)
        store(joint_output, J, x)
        parent, parent_axis = swung, swing_axis
        base, base_before, base_now = x, before, now
        base_change = sub(load(velocity, s), load(velocity_before, s))
        animated_base = load(joint_target, J)
