// The frame-time output of the point-chain kernel (SPEC section 2, "Output at frame time";
// SPEC section 9, "Frame-time output"): each segment's direction carried σ·h past the last
// substep (turn_ahead), the chain rebuilt from this frame's pivot (write_output). Included by
// point_chains.comp after its globals (sch, the schedule of this frame). Names as in
// gpu_jiggle/sim/backends/reference/point_output.py.

// SPEC section 9, "Frame-time output": the segment direction at the last substep, cur_dir,
// turned `ahead` seconds (σ·h) further at its angular velocity extrapolated from the last two
// substeps, 2Ω - Ω_prev, as the angle chains' angles are: Ω = d × ḋ / |d|² with ḋ the
// direction's rate over the last substep, (cur_dir - prev_dir) / h, and Ω_prev the same at the
// substep before, from prev_dir and ḋ less `change` (how much that rate grew over the last
// substep: the joint's velocity change less its base's). The turn is taken across the
// direction, by Rodrigues' formula, keeping cur_dir's length (the caller normalises); ahead = 0
// gives cur_dir itself.
vec3 turn_ahead(vec3 prev_dir, vec3 cur_dir, vec3 change, float h, float ahead) {
    vec3 rate = (cur_dir - prev_dir) / h;
    float lc = max(length(cur_dir), MIN_LENGTH);
    float lp = max(length(prev_dir), MIN_LENGTH);
    vec3 u = cur_dir / lc;
    vec3 omega = cross(u, rate) / lc;
    vec3 omega_prev = cross(prev_dir / lp, rate - change) / lp;
    vec3 turn = ahead * (2.0 * omega - omega_prev);
    turn = turn - dot(turn, u) * u;
    float angle = length(turn);
    float sinc = angle > 0.0 ? sin(angle) / angle : 1.0;
    return cur_dir * cos(angle) + cross(turn, cur_dir) * sinc;
}

// SPEC section 2, "Output at frame time", relative to this frame's pivot: each segment's
// direction carried from the last substep to the frame, σ·h later (turn_ahead), the chain
// rebuilt with its rest lengths, kept within its angle limit about this frame's target
// direction and frame, each particle taken out of this frame's colliders (push_out_of_frame);
// the velocity read back is the blend of the last two substeps'; the world rotation is the
// target frame turned onto the output direction. The walk root to tip: what a segment passes
// the next (its output tip, its tips at the last two substeps, its animated tip, its animated
// and output directions, its swing's axis, how its tip sped up over the last substep).
struct OutputWalk {
    vec3 base;
    vec3 prev_base;
    vec3 cur_base;
    vec3 animated_base;
    vec3 parent_animated;
    vec3 parent_output;
    vec3 parent_axis;
    vec3 base_change;
};

// The walk's start at the pivot (how it sped up over the last substep: its path's velocity
// change), with this frame's colliders placed, and the pivot's joint written.
OutputWalk begin_output(PointChainRig chain, dvec3 anchor) {
    vec3 base_change = chain_held.pivot_rate.xyz - chain_held.prev_pivot_rate.xyz;
    if (COLLIDERS != 0 && NEAR_FAR != 1) {  // where push_out_of_frame finds them: this frame's colliders
        place_colliders(Contact(chain.collider_mask, anchor, 1.0, PathWeights(1.0, 0.0, 0.0, 0.0), vec3(0.0), 0.0, 1.0,
                                vec3(0.0)));
    }
#if NEAR_FAR == 1
    output_box = empty_box(vec3(0.0));
#endif
    store_joint_output(chain.first_joint, PointJointOutput(vec4(0.0), vec4(0.0)));
    vec3 none = vec3(0.0);
    return OutputWalk(none, none, none, none, none, none, none, base_change);
}

// Segment i (index s; rig, its tip's target `offset` and base joint's `rotation` in this
// frame's pose, its state st) output; st's fourth components take the axes carried to the
// next frame.
void output_segment(inout OutputWalk walk, PointChainRig chain, uint i, uint s, PointSegmentRig rig, vec3 offset,
                    vec4 rotation, dvec3 anchor, inout PointSegmentState st) {
    float sigma = sch.blend;
    float ahead = sigma * sch.substep;
    vec3 base = walk.base;
    vec3 prev_dir = st.prev_position.xyz - walk.prev_base;
    vec3 cur_dir = st.position.xyz - walk.cur_base;
    vec3 change = (st.velocity.xyz - st.prev_velocity.xyz) - walk.base_change;
    vec3 dir = turn_ahead(prev_dir, cur_dir, change, sch.substep, ahead);
    float ld = length(dir);
    dir = ld < MIN_LENGTH ? cur_dir / max(length(cur_dir), MIN_LENGTH) : dir / ld;
    precise vec3 x = base + dir * rig.rest_length;  // precise: no variant may fold x - base below into dir * rest_length
    vec3 animated_offset = offset - walk.animated_base;  // this frame's target direction
    vec3 target = base + (i == 0u ? animated_offset
                                  : follow_parent(walk.parent_animated, walk.parent_output, animated_offset,
                                                  walk.parent_axis));
    vec3 unused = vec3(0.0);
    vec4 frame = target_frame(walk.parent_animated, walk.parent_output, rotation, walk.parent_axis);
    if (ANGLE_LIMITS != 0) {
        limit_angle(rig, frame, base, target, vec3(0.0), x, unused);
    }
#if NEAR_FAR == 1  // the far pass: the broad phase's ball in the output's box (point_far.glsl)
    bound_output(base, x, rig.particle_radius);
#else
    if (COLLIDERS != 0) {
        push_out_of_frame(chain.collider_mask, rig.particle_radius, anchor, base, rig.rest_length, x);
    }
#endif
    vec3 v = st.prev_velocity.xyz + sigma * (st.velocity.xyz - st.prev_velocity.xyz);
    vec3 animated = offset;
    // the swing and the world rotation's turn, each leaning on the axis of its last frame (the
    // swing's also the child's parent bend, which its target and frame lean on)
    vec3 swing_carried = carried_axis(st.last_offset, st.offset_rate);
    vec3 swing_axis = turn_axis(animated - walk.animated_base, x - base, swing_carried);
    store_joint_output(chain.first_joint + 1u + i, PointJointOutput(vec4(x, 0.0), vec4(st.position.xyz, 0.0)));
#if ROTATION_OUTPUTS
    vec4 q = rotation_between(animated - walk.animated_base, x - base, swing_axis);
    vec3 world_carried = carried_axis(st.prev_position, st.prev_velocity);
    vec3 world_axis = turn_axis(target - base, x - base, world_carried);
    vec4 world = quat_multiply(rotation_between(target - base, x - base, world_axis), frame);
    store_segment_output(s, PointSegmentOutput(vec4(v, 0.0), q, world));
    vec2 world_code = axis_code(world_carried);
    st.prev_position.w = world_code.x;
    st.prev_velocity.w = world_code.y;
#else
    store_segment_velocity(s, v);  // no rotations: the world axis is not carried on (SPEC 9)
#endif
    vec2 swing_code = axis_code(swing_carried);
    st.last_offset.w = swing_code.x;
    st.offset_rate.w = swing_code.y;
    walk.parent_animated = animated_offset;
    walk.parent_output = x - base;
    walk.parent_axis = swing_axis;  // the child's parent bend is this swing
    walk.base = x;
    walk.prev_base = st.prev_position.xyz;
    walk.cur_base = st.position.xyz;
    walk.base_change = st.velocity.xyz - st.prev_velocity.xyz;
    walk.animated_base = animated;
}

// The output of a frame whose walk of the segments (walk_batches) did not write it: the paths
// end at the frame's last substep first where `ends_path` (path fraction `alpha`; SPEC 2), each
// segment's in the same walk (end_pivot_path, end_segment_path), so its state is read and
// written once.
void write_output(PointChainRig chain, dvec3 anchor, bool ends_path, float alpha) {
    PathWeights w = path_weights(alpha, target_path);
    if (ends_path) {
        end_pivot_path(w);
    }
    OutputWalk walk = begin_output(chain, anchor);
    for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
        uint s = chain.first_segment + i;
        PointSegmentState st = load_segment_state(s);
        vec3 offset = target_offset(s);
        vec4 rotation = joint_rotation(s);
        if (ends_path) {
            end_segment_path(offset, rotation, w, alpha, st);
        }
        output_segment(walk, chain, i, s, segment_rig[s], offset, rotation, anchor, st);
        store_segment_state(s, st);  // whole: its position, velocity and target as they were
        if (++i == chain.segment_count) {
            break;
        }
    }
    WROTE_VIEWED();  // the walk's stores seen by a later read through a view (buffer_views.glsl)
#if NEAR_FAR == 1
    add_output_box();  // (point_far.glsl)
#endif
}
