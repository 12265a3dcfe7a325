"""The teleport stages of the point chains' numpy reference (SPEC section 5), named as in
``shaders/sim/point_chains.comp``: snap onto the targets, and keep_shape's carry of a chain by
the body's rigid jump (its translation and its rotation, ``jump_turn``). A base of
:class:`~.point_chains.ReferencePointBackend`, which supplies the depth walk and the frame's
scratch ``f``.
"""
from __future__ import annotations

import numpy as np

from ... import layouts
from .point_geometry import (MIN_LENGTH, axis_code, axis_from_code, cross, dot, length, rotation_between,
                                 safe_divide, turn_axis)
from .point_limits import quat_multiply, quat_rotate

F = np.float32
#: The point state's vec4 fields of which the numpy path keeps xyz (a segment's w are kept
#: apart, as AXIS_CODES): per segment, positions and velocities relative to the pivot that a
#: teleport moves and turns; per chain, the pivot's path.
SEGMENT_XYZ = ("position", "velocity", "prev_position", "prev_velocity", "last_offset", "offset_rate", "target")
CHAIN_XYZ = ("prev_pivot", "last_pivot", "pivot_rate", "prev_pivot_rate")
#: The codes (S, 2) of the axes each segment carries (SPEC 9 "Swings"), in the w of the
#: fields of layouts.AXIS_CODE_FIELDS: its bend's, its swing's and its world rotation's.
AXIS_CODES = {name + "_code": fields for name, fields in layouts.AXIS_CODE_FIELDS.items()}


class PointTeleports:
    """SPEC 5 for point chains: ``apply_teleport`` and the keep_shape stages it runs."""

    def apply_teleport(self, f, flags, spans):
        """SPEC section 5: snap flagged chains onto their targets, the path at rest (flags (C,),
        sorted chains); keep_shape carries the chain by the body's rigid jump: the pivot's path
        moves by it and the pivot-relative state and paths turn by its rotation (``spans``
        (C,): each chain's span this frame); MOVING marks them."""
        if not flags.any():
            return
        keep = (flags & layouts.TELEPORT_MODE_MASK) == layouts.TELEPORT_KEEP_SHAPE
        if keep.any():  # before the joints' rotations jump: the turn is measured with them
            self.carry_across_jump(f, np.flatnonzero(keep), flags, spans)
        snap_chain = (flags & layouts.TELEPORT_MODE_MASK) == layouts.TELEPORT_SNAP
        snap = snap_chain[self.order.chain_of_position]
        for name in ("position", "prev_position", "last_offset", "target"):
            getattr(f, name)[snap] = f.offset_now[snap]
        for name in ("velocity", "prev_velocity", "offset_rate"):
            getattr(f, name)[snap] = 0
        for name in CHAIN_XYZ:
            getattr(f, name)[snap_chain] = 0
        jumped = snap | keep[self.order.chain_of_position]
        f.last_rotation[jumped] = f.rotation_now[jumped]  # the joints' rotations jump too
        f.flags = np.where((flags & layouts.TELEPORT_MOVING) != 0, f.flags | layouts.CHAIN_START_MOVING, f.flags)

    def jump_turn(self, f, chains, flags, spans):
        """SPEC 5, keep_shape: the rotation (C', 4) of the body's jump for the sorted chains
        ``chains`` (as ``jump_turn`` in the shader). TELEPORT_TURN_FROM_JOINTS (this pose and
        the last gave joint rotations): the pivot joint's rotation now times the inverse of the
        one at the last substep. Otherwise from the targets: the smallest rotation taking the
        first segment's expected direction (where its path would have taken it, x0 + span·m0)
        onto its direction now, then the twist about that direction that takes the second
        segment's likewise (none where a chain has one segment, or its second is parallel)."""
        from_joints = (flags[chains] & layouts.TELEPORT_TURN_FROM_JOINTS) != 0
        depth = self.depth_lists(chains)
        rank = self.chain_ranks(chains)
        span = spans[:, None]
        ch, seg = depth[0]
        expected_first = f.last_offset[seg] + span[ch] * f.offset_rate[seg]
        first_now = f.offset_now[seg]
        axis, _ = turn_axis(expected_first, first_now, np.zeros_like(first_now))
        turn = rotation_between(expected_first, first_now, axis)
        if len(depth) > 1:
            ch2, seg2 = depth[1]
            row = rank[ch2]
            expected = f.last_offset[seg2] + span[ch2] * f.offset_rate[seg2] - expected_first[row]
            now = f.offset_now[seg2] - first_now[row]
            axis = first_now[row]
            axis = safe_divide(axis, length(axis))
            swung = quat_rotate(turn[row], expected)
            pe, pn = swung - dot(swung, axis)[:, None] * axis, now - dot(now, axis)[:, None] * axis
            clear = (length(pe) >= MIN_LENGTH) & (length(pn) >= MIN_LENGTH) & (length(axis) > 0)
            half = F(0.5) * np.arctan2(dot(axis, cross(pe, pn)), dot(pe, pn))
            twist = np.concatenate([axis * np.sin(half)[:, None], np.cos(half)[:, None]], axis=1)
            twist = np.where(clear[:, None], twist, np.array([0, 0, 0, 1], F))
            turn[row] = quat_multiply(twist, turn[row])
        joints = quat_multiply(f.rotation_now[seg], f.last_rotation[seg] * np.array([-1, -1, -1, 1], F))
        return np.where(from_joints[:, None], joints, turn).astype(F)

    def carry_across_jump(self, f, chains, flags, spans):
        """SPEC 5, keep_shape, for the sorted chains ``chains``: the pivot's path jumps with the
        body by how far this frame's pivot (the anchor, 0) is from where its path would have
        taken it (last + span·m0), so that its own motion stays on the path; that path, the
        particles, velocities, last targets and target offset paths (all relative to the
        pivot) turn by the jump's rotation (``jump_turn``), and so do the axes carried for the
        rotations from two directions."""
        turn = self.jump_turn(f, chains, flags, spans)
        end = f.last_pivot[chains] + spans[chains, None] * f.pivot_rate[chains]
        f.prev_pivot[chains] = quat_rotate(turn, f.prev_pivot[chains] - end)
        f.last_pivot[chains] = quat_rotate(turn, f.last_pivot[chains] - end)
        f.pivot_rate[chains] = quat_rotate(turn, f.pivot_rate[chains])
        f.prev_pivot_rate[chains] = quat_rotate(turn, f.prev_pivot_rate[chains])
        rank = self.chain_ranks(chains)
        for ch, seg in self.depth_lists(chains):
            segment_turn = turn[rank[ch]]
            for name in SEGMENT_XYZ:
                values = getattr(f, name)
                values[seg] = quat_rotate(segment_turn, values[seg])
            for name in AXIS_CODES:  # the carried turn axes turn too (none carried stays none)
                codes = getattr(f, name)
                codes[seg] = axis_code(quat_rotate(segment_turn, axis_from_code(codes[seg])))
