// The paths of a point chain's pivot and targets through a frame (SPEC 2, SPEC 5): how a chain
// starts moving, resumes its paths after another level of detail, places its pivot on its path
// in a substep, maps a substep onto the colliders' path, and ends the paths at its last
// substep. Included by point_chains.comp after its globals (sch, target_path, chain_held).
// Names as in gpu_jiggle/sim/backends/reference/point_chains.py.

// SPEC 5, moving: the path starts at the speed it is seen to have (m0 = m1), over the chain's
// own time from its path's start to this frame's pose (resume_path then carries it to the
// schedule's start). The chain's part (the pivot's path) returns 1 / that time, which each
// segment's part (its target offset's path) takes.
float begin_moving() {
    float inv_span = own_inv_span(sch, chain_held.path_lag);
    chain_held.pivot_rate = vec4(-chain_held.last_pivot.xyz * inv_span, 0.0);
    chain_held.flags &= ~CHAIN_START_MOVING;
    return inv_span;
}

void start_moving_segment(vec3 offset, float inv_span, inout PointSegmentState st) {
    st.offset_rate.xyz = (offset - st.last_offset.xyz) * inv_span;
}

void start_moving_segments(PointChainRig chain, float inv_span) {
    for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
        uint s = chain.first_segment + i;
        PointSegmentState st = load_segment_state(s);
        start_moving_segment(target_offset(s), inv_span, st);
        store_segment_state(s, st);
        if (++i == chain.segment_count) {
            break;
        }
    }
    WROTE_VIEWED();  // the walk's stores seen by a later read through a view (buffer_views.glsl)
}

// SPEC 2, "Levels of detail": the paths, which start at the chain's own last substep (its
// path_lag before the last frame's time), carried along their velocity to the schedule's
// start (its start_lag), shift = path_lag - start_lag seconds: the pivot's path and p_prev
// (so the particles, relative to the pivot, go with it; the chain's part) and each target
// offset's path (the segment's), x0 += shift·m0.
void begin_resume(float shift) {
    vec3 moved = shift * chain_held.pivot_rate.xyz;
    chain_held.last_pivot.xyz = chain_held.last_pivot.xyz + moved;
    chain_held.prev_pivot.xyz = chain_held.prev_pivot.xyz + moved;
}

void resume_segment(float shift, inout PointSegmentState st) {
    st.last_offset.xyz = st.last_offset.xyz + shift * st.offset_rate.xyz;
}

void resume_segments(PointChainRig chain, float shift) {
    for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
        uint s = chain.first_segment + i;
        PointSegmentState st = load_segment_state(s);
        resume_segment(shift, st);
        store_segment_state(s, st);
        if (++i == chain.segment_count) {
            break;
        }
    }
    WROTE_VIEWED();  // the walk's stores seen by a later read through a view (buffer_views.glsl)
}

// The pivot's path velocity (length/s) at the path weights w, as interpolate_pivot and end_pivot_path
// work it out.
vec3 pivot_path_velocity(PathWeights w) {
    PointChainState cs = chain_held;
    vec3 d = -cs.last_pivot.xyz;
    vec3 m = start_tangent(d, sch.span * cs.pivot_rate.xyz, target_path);
    return (w.dp * d + w.dq * m) * sch.inv_span;
}

// The pivot on its target path at the path weights w, as interpolate_pivot places it.
vec3 pivot_on_path(PathWeights w) {
    PointChainState cs = chain_held;
    vec3 d = -cs.last_pivot.xyz;
    vec3 m = start_tangent(d, sch.span * cs.pivot_rate.xyz, target_path);
    return cs.last_pivot.xyz + w.p * d + w.q * m;
}

// SPEC section 4, step 1: the pivot on its target path (this frame's pivot is the anchor, 0)
// and its path velocity (length/s, as end_pivot_path leaves pivot_rate); returns its motion Δp this
// substep.
vec3 interpolate_pivot(PathWeights w, out vec3 pivot, out vec3 velocity) {
    PointChainState cs = chain_held;
    vec3 d = -cs.last_pivot.xyz;
    vec3 m = start_tangent(d, sch.span * cs.pivot_rate.xyz, target_path);
    pivot = cs.last_pivot.xyz + w.p * d + w.q * m;
    velocity = (w.dp * d + w.dq * m) * sch.inv_span;
    vec3 moved = pivot - cs.prev_pivot.xyz;
    chain_held.prev_pivot = vec4(pivot, 0.0);
    return moved;
}

// Substep j's path fractions at its start and end, and the colliders': their path covers the
// full-rate span, so this substep's time is mapped onto it. Where they were at the start of the
// substep, for the swept contact (SPEC 9): before this frame's path (a half-rate substep started
// a frame earlier) the path is extended backwards, not held at its start, so the sweep sees the
// whole move.
void substep_fractions(uint first_alpha, uint j, out float alpha_start, out float alpha_end, out float collider_begin,
                       out float collider_end) {
    alpha_end = alphas[first_alpha + j];
    alpha_start = j > 0u ? alphas[first_alpha + j - 1u] : 0.0;
    collider_end = clamp(1.0 - (1.0 - alpha_end) * sch.collider_time_scale, 0.0, 1.0);
    collider_begin = min(1.0 - (1.0 - alpha_start) * sch.collider_time_scale, 1.0);
}

// SPEC 2: the paths end at the chain's last substep (path fraction alpha, weights w): the next
// frame's paths start where they are there, at their velocity there. The pivot's:
void end_pivot_path(PathWeights w) {
    PointChainState cs = chain_held;
    vec3 d_pivot = -cs.last_pivot.xyz;
    vec3 m_pivot = start_tangent(d_pivot, sch.span * cs.pivot_rate.xyz, target_path);
    chain_held.last_pivot = vec4(cs.last_pivot.xyz + w.p * d_pivot + w.q * m_pivot, 0.0);
    chain_held.pivot_rate = vec4((w.dp * d_pivot + w.dq * m_pivot) * sch.inv_span, 0.0);
}

// A segment's target offset path (its tip's `offset` in this frame's pose) and its base
// joint's rotation (`rotation`), likewise.
void end_segment_path(vec3 offset, vec4 rotation, PathWeights w, float alpha, inout PointSegmentState st) {
    vec3 last = st.last_offset.xyz;
    vec3 d = offset - last;
    vec3 m = start_tangent(d, sch.span * st.offset_rate.xyz, target_path);
    st.last_offset.xyz = last + w.p * d + w.q * m;
    st.offset_rate.xyz = (w.dp * d + w.dq * m) * sch.inv_span;
    st.last_rotation = nlerp(st.last_rotation, rotation, alpha);
}
