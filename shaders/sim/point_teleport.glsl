// Teleports for the point-chain kernel (SPEC 5): jump_turn, the rotation of a keep_shape jump,
// and apply_teleport (begin_teleport, teleport_segment), the snap onto the targets or the carry of
// the shape across the jump.
// Names as in gpu_jiggle/sim/backends/reference/point_teleport.py. Included by point_chains.comp
// after its globals (sch, target_path, ...).

// SPEC 5, keep_shape: the rotation of the body's jump. TELEPORT_TURN_FROM_JOINTS (this pose and
// the last gave joint rotations): the pivot joint's rotation now times the inverse of the one
// at the last substep. Otherwise from the targets: the smallest rotation taking the first
// segment's expected direction (where its path would have taken it, x0 + span·m0) onto its
// direction now, then the twist about that direction that takes the second segment's likewise
// (none where the chain has one segment, or its second is parallel).
vec4 jump_turn(PointChainRig chain, uint flags) {
    uint s = chain.first_segment;
    PointSegmentState st = load_segment_state(s);
    if ((flags & TELEPORT_TURN_FROM_JOINTS) != 0u) {
        return quat_multiply(joint_rotation(s), st.last_rotation * vec4(-1.0, -1.0, -1.0, 1.0));
    }
    vec3 expected_first = st.last_offset.xyz + sch.span * st.offset_rate.xyz;
    vec3 first_now = target_offset(s);
    vec3 none = vec3(0.0);
    vec4 turn = rotation_between(expected_first, first_now, turn_axis(expected_first, first_now, none));
    if (chain.segment_count > 1u) {
        PointSegmentState second = load_segment_state(s + 1u);
        vec3 expected = second.last_offset.xyz + sch.span * second.offset_rate.xyz - expected_first;
        vec3 now = target_offset(s + 1u) - first_now;
        float la = length(first_now);
        vec3 axis = la > 0.0 ? first_now / la : first_now;
        vec3 swung = quat_rotate(turn, expected);
        vec3 pe = swung - dot(swung, axis) * axis;
        vec3 pn = now - dot(now, axis) * axis;
        if (length(pe) >= MIN_LENGTH && length(pn) >= MIN_LENGTH && la > 0.0) {
            float half_angle = 0.5 * atan(dot(axis, cross(pe, pn)), dot(pe, pn));
            turn = quat_multiply(vec4(axis * sin(half_angle), cos(half_angle)), turn);
        }
    }
    return turn;
}

// SPEC section 5, a teleport, in two parts: the chain's (the pivot's path; begin_teleport) and
// each segment's (teleport_segment), so that the kernel may take the segments' parts in its own
// walk of them (ONE_BATCH) or in a walk of their own (teleport_segments). What a segment's part
// needs of the chain's: the flags and the keep_shape jump's rotation.
struct SegmentJump {
    uint flags;
    vec4 turn;
};

// The chain's part: a snap puts the pivot's path at rest on this frame's pivot; keep_shape
// jumps it with the body by how far this frame's pivot (the anchor, 0) is from where its path
// would have taken it (end = last + span·m0), so that a moving body's own motion stays on the
// path and it is not kicked, the path turned by the jump's rotation; TELEPORT_MOVING marks the
// chain to start moving with its targets. Flags TELEPORT_NONE change nothing.
SegmentJump begin_teleport(PointChainRig chain, uint flags) {
    vec4 turn = vec4(0.0, 0.0, 0.0, 1.0);
    if ((flags & TELEPORT_MODE_MASK) == TELEPORT_SNAP) {
        chain_held.prev_pivot = vec4(0.0);
        chain_held.last_pivot = vec4(0.0);
        chain_held.pivot_rate = vec4(0.0);
        chain_held.prev_pivot_rate = vec4(0.0);
    } else if ((flags & TELEPORT_MODE_MASK) == TELEPORT_KEEP_SHAPE) {
        turn = jump_turn(chain, flags);
        PointChainState cs = chain_held;
        vec3 end = cs.last_pivot.xyz + sch.span * cs.pivot_rate.xyz;
        chain_held.prev_pivot = vec4(quat_rotate(turn, cs.prev_pivot.xyz - end), 0.0);
        chain_held.last_pivot = vec4(quat_rotate(turn, cs.last_pivot.xyz - end), 0.0);
        chain_held.pivot_rate = vec4(quat_rotate(turn, cs.pivot_rate.xyz), 0.0);
        chain_held.prev_pivot_rate = vec4(quat_rotate(turn, cs.prev_pivot_rate.xyz), 0.0);
    }
    if ((flags & TELEPORT_MOVING) != 0u) {
        chain_held.flags |= CHAIN_START_MOVING;
    }
    return SegmentJump(flags, turn);
}

// A segment's part, its target offset and joint rotation this frame given (teleport_segment):
// snapped onto the target (the path at rest; the carried turn axes, the w, stay), or,
// keep_shape, its particle, velocity, last target and target offset path (all relative to the
// pivot) and its carried turn axes turned by the jump's rotation (none carried stays none).
// Either way the joint's rotation path starts at this frame's.
void snap_segment(vec3 offset, vec4 rotation, inout PointSegmentState st) {
    st = PointSegmentState(
        vec4(offset, st.position.w), vec4(vec3(0.0), st.velocity.w), vec4(offset, st.prev_position.w),
        vec4(vec3(0.0), st.prev_velocity.w), vec4(offset, st.last_offset.w), vec4(vec3(0.0), st.offset_rate.w),
        vec4(offset, st.target.w), rotation);
}

void keep_shape_segment(vec4 turn, vec4 rotation, inout PointSegmentState st) {
    vec2 bend = axis_code(quat_rotate(turn, carried_axis(st.position, st.velocity)));
    vec2 swing = axis_code(quat_rotate(turn, carried_axis(st.last_offset, st.offset_rate)));
    vec2 world = axis_code(quat_rotate(turn, carried_axis(st.prev_position, st.prev_velocity)));
    st = PointSegmentState(
        vec4(quat_rotate(turn, st.position.xyz), bend.x), vec4(quat_rotate(turn, st.velocity.xyz), bend.y),
        vec4(quat_rotate(turn, st.prev_position.xyz), world.x), vec4(quat_rotate(turn, st.prev_velocity.xyz), world.y),
        vec4(quat_rotate(turn, st.last_offset.xyz), swing.x), vec4(quat_rotate(turn, st.offset_rate.xyz), swing.y),
        vec4(quat_rotate(turn, st.target.xyz), st.target.w), rotation);
}

void teleport_segment(SegmentJump jump, vec3 offset, vec4 rotation, inout PointSegmentState st) {
    if ((jump.flags & TELEPORT_MODE_MASK) == TELEPORT_SNAP) {
        snap_segment(offset, rotation, st);
    } else if ((jump.flags & TELEPORT_MODE_MASK) == TELEPORT_KEEP_SHAPE) {
        keep_shape_segment(jump.turn, rotation, st);
    }
}

// keep_shape's segment parts in a walk of their own (its rotations are too much code to run,
// masked, in every walk of the segments).
void keep_shape_segments(PointChainRig chain, SegmentJump jump) {
    for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
        uint s = chain.first_segment + i;
        PointSegmentState st = load_segment_state(s);
        keep_shape_segment(jump.turn, joint_rotation(s), st);
        store_segment_state(s, st);
        if (++i == chain.segment_count) {
            break;
        }
    }
    WROTE_VIEWED();  // the walk's stores seen by a later read through a view (buffer_views.glsl)
}

// SPEC section 5: the segments' parts of a teleport in a walk of their own.
void teleport_segments(PointChainRig chain, SegmentJump jump) {
    for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
        uint s = chain.first_segment + i;
        PointSegmentState st = load_segment_state(s);
        teleport_segment(jump, target_offset(s), joint_rotation(s), st);
        store_segment_state(s, st);  // whole: what the teleport left alone as it was
        if (++i == chain.segment_count) {
            break;
        }
    }
    WROTE_VIEWED();  // the walk's stores seen by a later read through a view (buffer_views.glsl)
}
