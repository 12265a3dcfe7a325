"""The frame-time output of the Warp peer's point chains (see :mod:`gpu_jiggle.bench.peer_warp`;
SPEC 2, "Output at frame time", and SPEC 9, "Frame-time output" and "Swings"): each segment's
direction carried σ·h past the last substep (``turn_ahead``), the chain rebuilt with its rest
lengths from this frame's pivot, kept within its cone angle limit about this frame's target
direction and taken out of this frame's colliders (``push_out_of_frame``), and each segment's
rotations: the swing, the smallest rotation taking its animated direction onto its output one,
and its world rotation, its target frame turned onto the output direction, each half turn
leaning on the axis carried from the last frame as a code (``swing_code``, ``world_code``).
The joints' animated rotations are the identity (the peers take joint positions only), so a
segment's target frame is its parent's bend R(parent animated → parent output).
"""
from __future__ import annotations

from .peer_warp_colliders import Placement
from .peer_warp_contact import Paths
from .peer_warp_geometry import (MIN_LENGTH, axis_code, axis_from_code, bend, bend_axis, bend_rotation,
                                 quat_multiply, turn_by_bend, wp)
from .peer_warp_limits import limit_angle
from .peer_warp_segment_contact import push_out_of_frame

Vectors = wp.array(dtype=wp.vec3)
Floats = wp.array(dtype=float)
Codes = wp.array(dtype=wp.vec2)
Quaternions = wp.array(dtype=wp.vec4)


@wp.func
def turn_ahead(dir_before: wp.vec3, dir_now: wp.vec3, change: wp.vec3, h: float, ahead: float):
    """SPEC 9, frame-time output: the direction at the last substep turned ``ahead`` seconds
    further at its angular velocity extrapolated from the last two substeps, 2Ω - Ω_prev
    (Ω = d × ḋ / |d|², ḋ = (dir_now - dir_before)/h now and ḋ - ``change`` a substep back),
    across the direction by Rodrigues' formula, keeping its length."""
    rate = (dir_now - dir_before) / h
    lc = wp.max(wp.length(dir_now), MIN_LENGTH)
    lp = wp.max(wp.length(dir_before), MIN_LENGTH)
    u = dir_now / lc
    omega = wp.cross(u, rate) / lc
    omega_prev = wp.cross(dir_before / lp, rate - change) / lp
    turn = (omega * 2.0 - omega_prev) * ahead
    turn = turn - u * wp.dot(turn, u)
    angle = wp.length(turn)
    sinc = float(1.0)
    if angle > 0.0:
        sinc = wp.sin(angle) / angle
    return dir_now * wp.cos(angle) + wp.cross(turn, dir_now) * sinc


@wp.func
def write_output(c: int, segments: int, h: float, ahead: float, paths: Paths, spheres: int, colliders: int,
                 at_pose: Placement, rest_length: Floats, particle_radius: Floats, angle_limit: Floats,
                 joint_target: Vectors, joint_rate: Vectors, pivot_rate_before: Vectors, pivot: Vectors,
                 pivot_before: Vectors, position: Vectors, velocity: Vectors, position_before: Vectors,
                 velocity_before: Vectors, swing_code: Codes, world_code: Codes, joint_output: Vectors,
                 swing: Quaternions, world_rotation: Quaternions):
    """SPEC 2 and 9, output of chain ``c`` at frame time, ``ahead`` = σ·h seconds after its last
    substep of h seconds: ``joint_output`` (J, 3) world joints, per segment ``swing`` and
    ``world_rotation`` (S, 4) quaternions (x, y, z, w); the colliders at this frame's pose
    (``at_pose``, at rest). Reads the last substep's state and its start (``*_before``)."""
    first = c * segments
    first_joint = c * (segments + 1)
    zero = wp.vec3(0.0)
    base = joint_target[first_joint]
    base_before = pivot_before[c]
    base_now = pivot[c]
    base_change = joint_rate[first_joint] - pivot_rate_before[c]
    joint_output[first_joint] = base
    animated_base = zero
    parent = bend(zero, zero)  # the parent's bend, animated → output
    parent_axis = zero
    for i in range(segments):
        s = first + i
        J = first_joint + 1 + i
        before = position_before[s]
        now = position[s]
        dir_before = before - base_before
        dir_now = now - base_now
        change = (velocity[s] - velocity_before[s]) - base_change
        direction = turn_ahead(dir_before, dir_now, change, h, ahead)
        ld = wp.length(direction)
        if ld < MIN_LENGTH:
            direction = dir_now / wp.max(wp.length(dir_now), MIN_LENGTH)
        else:
            direction = direction / ld
        x = base + direction * rest_length[s]
        animated = joint_target[J] - animated_base  # this frame's target direction
        t = base + animated
        if i > 0:
            t = base + turn_by_bend(parent, animated, parent_axis)  # follow_parent
        frame = bend_rotation(parent, parent_axis)  # the target frame, R(parent animated → output)
        x, unused = limit_angle(angle_limit[s], base, t, zero, x, zero)
        if colliders > 0:
            x = push_out_of_frame(paths, spheres, colliders, at_pose, particle_radius[s], base, rest_length[s], x)
        out = x - base
        # the swing and the world rotation's turn, each leaning on the axis of its last frame
        swung = bend(animated, out)
        swing_axis, swing_carried = bend_axis(swung, axis_from_code(swing_code[s]))
        swing[s] = bend_rotation(swung, swing_axis)
        turned = bend(t - base, out)
        world_axis, world_carried = bend_axis(turned, axis_from_code(world_code[s]))
        world_rotation[s] = quat_multiply(bend_rotation(turned, world_axis), frame)
        swing_code[s] = axis_code(swing_carried)
        world_code[s] = axis_code(world_carried)
        joint_output[J] = x
        parent = swung
        parent_axis = swing_axis
        base = x
        base_before = before
        base_now = now
        base_change = velocity[s] - velocity_before[s]
        animated_base = joint_target[J]
