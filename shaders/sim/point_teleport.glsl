// Teleports for the point-chain kernel (SPEC 5): jump_turn, the rotation of a keep_shape jump,
// and apply_teleport, the snap onto the targets or the carry of the shape across the jump.
// Names as in gpu_jiggle/sim/backends/reference_point_teleport.py. Included by point_chains.comp
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

// SPEC section 5: snap onto the current targets (the path at rest), or carry the shape across
// the jump (positions, velocities and path velocities are relative to the pivot: they stay,
// and the pivot's path jumps with the body); TELEPORT_MOVING marks the chain to start moving
// with its targets.
void apply_teleport(PointChainRig chain, uint flags) {
    if ((flags & TELEPORT_MODE_MASK) == TELEPORT_SNAP) {
        for (uint i = 0u; i < chain.segment_count; ++i) {
            uint s = chain.first_segment + i;
            vec3 offset = target_offset(s);
            PointSegmentState st = load_segment_state(s);  // the carried turn axes (the w) stay
            store_segment_state(s, PointSegmentState(
                vec4(offset, st.position.w), vec4(vec3(0.0), st.velocity.w), vec4(offset, st.prev_position.w),
                vec4(vec3(0.0), st.prev_velocity.w), vec4(offset, st.last_offset.w), vec4(vec3(0.0), st.offset_rate.w),
                vec4(offset, st.target.w), joint_rotation(s)));
        }
        chain_held.prev_pivot = vec4(0.0);
        chain_held.last_pivot = vec4(0.0);
        chain_held.pivot_rate = vec4(0.0);
        chain_held.prev_pivot_rate = vec4(0.0);
    } else if ((flags & TELEPORT_MODE_MASK) == TELEPORT_KEEP_SHAPE) {
        // The pivot's path jumps with the body by how far this frame's pivot (the anchor, 0) is
        // from where its path would have taken it (end = last + span·m0): its own motion stays
        // on the path, so a moving body is not kicked. That path, and the particles, their
        // velocities, last targets and target offset paths (all relative to the pivot), turn by
        // the jump's rotation.
        vec4 turn = jump_turn(chain, flags);
        PointChainState cs = chain_held;
        vec3 end = cs.last_pivot.xyz + sch.span * cs.pivot_rate.xyz;
        chain_held.prev_pivot = vec4(quat_rotate(turn, cs.prev_pivot.xyz - end), 0.0);
        chain_held.last_pivot = vec4(quat_rotate(turn, cs.last_pivot.xyz - end), 0.0);
        chain_held.pivot_rate = vec4(quat_rotate(turn, cs.pivot_rate.xyz), 0.0);
        chain_held.prev_pivot_rate = vec4(quat_rotate(turn, cs.prev_pivot_rate.xyz), 0.0);
        for (uint i = 0u; i < chain.segment_count; ++i) {
            uint s = chain.first_segment + i;
            PointSegmentState st = load_segment_state(s);
            // the carried turn axes turn too (none carried stays none)
            vec2 bend = axis_code(quat_rotate(turn, carried_axis(st.position, st.velocity)));
            vec2 swing = axis_code(quat_rotate(turn, carried_axis(st.last_offset, st.offset_rate)));
            vec2 world = axis_code(quat_rotate(turn, carried_axis(st.prev_position, st.prev_velocity)));
            // The joints' rotations jump with the body too: their path starts at this frame's.
            store_segment_state(s, PointSegmentState(
                vec4(quat_rotate(turn, st.position.xyz), bend.x), vec4(quat_rotate(turn, st.velocity.xyz), bend.y),
                vec4(quat_rotate(turn, st.prev_position.xyz), world.x),
                vec4(quat_rotate(turn, st.prev_velocity.xyz), world.y),
                vec4(quat_rotate(turn, st.last_offset.xyz), swing.x), vec4(quat_rotate(turn, st.offset_rate.xyz), swing.y),
                vec4(quat_rotate(turn, st.target.xyz), st.target.w), joint_rotation(s)));
        }
    }
    if ((flags & TELEPORT_MOVING) != 0u) {
        chain_held.flags |= CHAIN_START_MOVING;
    }
}
