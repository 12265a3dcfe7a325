"""The frame-time output of the point chains' numpy reference (SPEC section 2, "Output at frame
time"; SPEC section 9, "Frame-time output"), named as in ``shaders/sim/point_output.glsl``: each
segment's direction carried σ·h past the last substep at its own extrapolated angular velocity
(``turn_ahead``), the chain rebuilt from this frame's pivot (``write_output``). A base of
:class:`~.point_chains.ReferencePointBackend`, which supplies the depth walk, the colliders
and the frame's scratch ``f``.
"""
from __future__ import annotations

import numpy as np

from .point_contact import Contact, push_out_of_frame
from .point_geometry import (MIN_LENGTH, axis_code, axis_from_code, cross, dot, follow_parent, length,
                                 rotation_between, safe_divide, turn_axis)
from .point_limits import limit_angle, quat_multiply, target_frame

F = np.float32


class PointOutput:
    """The frame-time output stage of :class:`~.point_chains.ReferencePointBackend`."""

    def write_output(self, f, sigma, substep):
        """SPEC section 2, "Output at frame time", relative to this frame's pivot: each segment's
        direction carried from the last substep to the frame, σ·h later, at its angular velocity
        extrapolated from the last two substeps (``turn_ahead``), the chain rebuilt with its rest
        lengths, kept within its angle limit about this frame's target direction and frame, each
        particle taken out of this frame's colliders; the velocity read back is the blend of the
        last two substeps'; the world rotation is the target frame turned onto the output
        direction (as ``write_output``); without rotation outputs (``rotation_outputs``), no
        rotations, and the world axis is not carried on. ``f``: the frame's scratch, ``sigma`` and ``substep``
        (C,): the sorted chains' blends σ and substeps h (s)."""
        order, rig = self.order, self.sorted_segment_rig
        position = np.zeros((self.segment_count, 3), F)
        velocity = np.zeros((self.segment_count, 3), F)
        rotation = np.zeros((self.segment_count, 4), F)
        world_rotation = np.zeros((self.segment_count, 4), F)
        base = np.zeros((self.chain_count, 3), F)
        base_change = f.pivot_rate - f.prev_pivot_rate  # how each segment's base sped up over the last substep
        prev_base = np.zeros((self.chain_count, 3), F)
        cur_base = np.zeros((self.chain_count, 3), F)
        animated_base = np.zeros((self.chain_count, 3), F)
        parent_animated = np.zeros((self.chain_count, 3), F)
        parent_output = np.zeros((self.chain_count, 3), F)
        parent_axis = np.zeros((self.chain_count, 3), F)
        contact = Contact(self.live_colliders(), self.sorted_chain_rig["collider_mask"], f.anchor,
                          np.zeros((self.chain_count, 3), F), F(1), (F(1), F(0), F(0), F(0)))
        for d, (ch, seg) in enumerate(self.depth_lists()):
            blend = sigma[ch][:, None]
            prev, cur = f.prev_position[seg], f.position[seg]
            prev_dir = prev - prev_base[ch]
            cur_dir = cur - cur_base[ch]
            change = (f.velocity[seg] - f.prev_velocity[seg]) - base_change[ch]
            direction = turn_ahead(prev_dir, cur_dir, change, substep[ch][:, None], blend * substep[ch][:, None])
            ld = length(direction)
            fallback = cur_dir / np.maximum(length(cur_dir), MIN_LENGTH)[:, None]
            direction = np.where((ld < MIN_LENGTH)[:, None], fallback, safe_divide(direction, ld))
            x = base[ch] + direction * rig["rest_length"][seg][:, None]
            animated_offset = f.offset_now[seg] - animated_base[ch]  # this frame's target direction
            target = base[ch] + (follow_parent(parent_animated[ch], parent_output[ch], animated_offset, parent_axis[ch])
                                 if d else animated_offset)
            frame = target_frame(parent_animated[ch], parent_output[ch], f.rotation_now[seg], parent_axis[ch])
            x, _ = limit_angle(rig[seg], frame, base[ch], target, np.zeros_like(x), x, np.zeros_like(x))
            ct = contact.rows(ch)
            x = push_out_of_frame(ct, rig["particle_radius"][seg], base[ch], rig["rest_length"][seg], x)
            pv, cv = f.prev_velocity[seg], f.velocity[seg]
            velocity[seg] = pv + blend * (cv - pv)
            animated = f.offset_now[seg]
            # the swing and the world rotation's turn, each leaning on the axis of its last frame
            # (the swing's also the child's parent bend, which its target and frame lean on)
            swing_axis, swing = turn_axis(animated - animated_base[ch], x - base[ch], axis_from_code(f.swing_code[seg]))
            f.swing_code[seg] = axis_code(swing)
            if self.rotation_outputs:  # else no rotations, and the world axis is not carried on (SPEC 9)
                rotation[seg] = rotation_between(animated - animated_base[ch], x - base[ch], swing_axis)
                world_axis, world = turn_axis(target - base[ch], x - base[ch], axis_from_code(f.world_code[seg]))
                world_rotation[seg] = quat_multiply(rotation_between(target - base[ch], x - base[ch], world_axis),
                                                    frame)
                f.world_code[seg] = axis_code(world)
            position[seg] = x
            parent_animated[ch] = animated_offset
            parent_output[ch] = x - base[ch]
            parent_axis[ch] = swing_axis  # the child's parent bend is this swing
            base[ch] = x
            prev_base[ch] = prev
            cur_base[ch] = cur
            base_change[ch] = f.velocity[seg] - f.prev_velocity[seg]
            animated_base[ch] = animated
        joint, segment = order.joint_of_position, order.segment_order  # pivots: 0, as their rows are
        self.output.put("joint_output", "position", (joint, position))
        self.output.put("joint_output", "raw_position", (joint, f.position.copy()))
        self.output.put("segment_output", "velocity", (segment, velocity))
        if self.rotation_outputs:
            self.output.put("segment_output", "rotation", (segment, rotation))
            self.output.put("segment_output", "world_rotation", (segment, world_rotation))


def turn_ahead(prev_dir, cur_dir, change, h, ahead):
    """SPEC section 9, "Frame-time output": segment directions (n, 3) at the last substep,
    ``cur_dir``, turned ``ahead`` seconds (n, 1: σ·h) further at their angular velocity
    extrapolated from the last two substeps, 2Ω - Ω_prev, as the angle chains' angles are. Ω
    = d × ḋ / |d|² (rad/s) with ḋ the direction's rate over the last substep, (cur_dir -
    prev_dir) / h (``h`` (n, 1), the substep, s), and Ω_prev the same at the substep before,
    from ``prev_dir`` and ḋ less ``change`` (n, 3), how much that rate grew over the last
    substep (the joint's velocity change less its base's). The turn is taken across the
    direction (its part along it turns nothing) by Rodrigues' formula. Returns the turned
    cur_dir (n, 3), of its length (the caller normalises it); ahead = 0 gives cur_dir itself."""
    rate = (cur_dir - prev_dir) / h
    lc = np.maximum(length(cur_dir), MIN_LENGTH)[:, None]
    lp = np.maximum(length(prev_dir), MIN_LENGTH)[:, None]
    u = cur_dir / lc
    omega = cross(u, rate) / lc
    omega_prev = cross(prev_dir / lp, rate - change) / lp
    turn = ahead * (F(2) * omega - omega_prev)
    turn = turn - dot(turn, u)[:, None] * u
    angle = length(turn)
    sinc = np.where(angle > 0, np.sin(angle) / np.where(angle > 0, angle, F(1)), F(1))
    return cur_dir * np.cos(angle)[:, None] + cross(turn, cur_dir) * sinc[:, None]
