// One substep of one segment of a point chain (SPEC 4, step 2): its target on the path, the
// spring (integrate_particle), contact (collide_near, settle_contact), the max distance, the
// length step and the angle limit, in step_segment; and what the segments of a chain share in
// a substep (SubstepMotion) and what each passes its child (ParentStep). Included by
// point_chains.comp after its globals (sch, the options, the chain's influence); names as in
// gpu_jiggle/sim/backends/reference/point_chains.py.

// The frame's wind (SPEC 4.1: w0 and A in wind, κ and 2π·f_w in gust, u in gust_direction),
// read once per invocation (main) rather than per segment and substep.
vec4 frame_wind;
vec4 frame_gust;
vec3 frame_gust_direction;

// W(x, t) of SPEC 4.1 at a position relative to the anchor, `elapsed` seconds into the frame.
vec3 wind_at(vec3 x, float chain_phase, float elapsed) {
    float phase = dot(frame_gust.xyz, x) + chain_phase + sch.gust_phase - frame_gust.w * elapsed;
    return frame_wind.xyz + frame_wind.w * frame_gust_direction * sin(phase);
}

// SPEC 4, step 2, the particle of segment s. The spring compares x with a reference that moves
// at `rate` over the substep: v2 the target at the start of the substep (t_prev) moving at v_t,
// damping relative to it; v1 (world damping) this substep's target t, at rest; air drag damps
// the world velocity v + carry (carry: the velocity of the carriage that v is taken relative
// to, SPEC 4, world influence). Semi-implicit Euler, velocity first, or the exact step (SPEC 1).
void integrate_particle(uint s, PointSegmentRig rig, vec3 t, vec3 t_prev, vec3 v_t, vec3 carry, vec3 gravity,
                        vec3 wind, inout vec3 x, inout vec3 v) {
    vec3 reference = relative_damping ? t_prev : t;
    vec3 rate = relative_damping ? v_t : vec3(0.0);
    if (exact_integrator) {
        ExactStep step = load_exact_step(2u * s + schedule_index);
        vec3 d = x - reference;
        vec3 d_rate = v - rate;
        vec3 b = gravity + wind - rig.air_drag * (rate + carry);
        vec3 change_x = step.d_d * d + step.d_v * d_rate + step.d_b * b;
        vec3 change_v = step.v_d * d + step.v_v * d_rate + step.v_b * b;
        if (exact_share != 1.0) {
            change_x = change_x * exact_share;
            change_v = change_v * exact_share;
        }
        x = x + (rate * sch.substep + change_x);
        v = v + change_v;
        return;
    }
    vec3 acc = -rig.stiffness * (x - reference) - rig.damping * (v - rate) - rig.air_drag * (v + carry) + gravity + wind;
    v = v + acc * sch.substep;
    x = x + v * sch.substep;
}

// SPEC 4, step 2, max distance from the target.
void limit_distance(float max_distance, vec3 t, inout vec3 x, inout vec3 v) {
    vec3 e = x - t;
    float d = length(e);
    if (d > max_distance) {
        vec3 n = e / d;
        x = t + n * max_distance;
        v = v - max(dot(v, n), 0.0) * n;
    }
}

// SPEC 4, step 2, the length step (docs/SPEC.md section 9): x projected onto the sphere of
// its rest length about its base. v2 with the semi-implicit step: the velocity takes the
// displacement (v += Δx/h, position-based) of the same projection made without what contact
// moved x and its base without velocity this substep (`pushed`, `pushed_base`), so a base
// pushed out of a collider carries its tip without flinging it ("Push-out velocity"); `pushed`
// then becomes what x was moved without velocity, the projection's position less the
// velocity's. v1 (world damping), which adds energy to a segment standing up under gravity
// with the Euler step, and the exact integrator, whose displacement is not v·h: the velocity
// along the segment relative to its base removed.
void enforce_length(float rest_length, vec3 base, vec3 v_base, vec3 pushed_base, inout vec3 pushed, inout vec3 x,
                    inout vec3 v) {
    vec3 d = x - base;
    vec3 n = d / max(length(d), MIN_LENGTH);
    precise vec3 projected = base + n * rest_length;
    if (relative_damping && !exact_integrator) {
        vec3 moving_x = x - pushed;
        vec3 moving_base = base - pushed_base;
        vec3 moving_d = moving_x - moving_base;
        precise vec3 moving_projected = moving_base + moving_d / max(length(moving_d), MIN_LENGTH) * rest_length;
        v = v + (moving_projected - moving_x) / sch.substep;
        pushed = projected - moving_projected;
    } else {
        v = v - dot(v - v_base, n) * n;
    }
    x = projected;
}


// What every segment of a chain shares in one substep (or contact sub-step, SPEC 9): its path
// fraction and weights, the pivot's motion Δp over it and where it ends (relative to the
// anchor), the carriage's velocity at its start and end (SPEC 4, world influence), the
// seconds into the frame at its start (the gusts), whether it is the first substep of a chain
// starting to move, and whether it starts a substep (the state one substep back is kept).
struct SubstepMotion {
    float alpha;
    PathWeights w;
    vec3 moved;
    vec3 pivot;
    vec3 carry_before;
    vec3 carry;
    float elapsed;
    bool first_moving;
    bool first_sub;
};

// What a segment passes its child in a substep: its tip (the child's base) at the end and the
// start of the substep, its velocity (relative to the carriage), what contact moved it without
// velocity (`pushed`), its animated offset from the pivot, its animated and simulated
// directions, and the turn axis of its bend (turn_axis).
struct ParentStep {
    vec3 base;
    vec3 base_start;
    vec3 v_base;
    vec3 pushed;
    vec3 offset;
    vec3 animated;
    vec3 simulated;
    vec3 axis;
};

// The pivot as the first segment's parent in a substep: where it is (the origin), where it was
// (-Δp), its velocity felt by the chain (SPEC 4, world influence).
ParentStep pivot_parent(SubstepMotion m) {
    vec3 none = vec3(0.0);
    return ParentStep(none, -m.moved, (felt * m.moved) * sch.inv_path_step, none, none, none, none, none);
}

// SPEC 4, step 2: segment i (index s) of the chain through one substep, its state st (xyz of
// position, velocity, target; prev_position and prev_velocity where the substep starts)
// updated in place from its parent's step, which it then replaces with its own for its child.
// `offset`: the segment's tip target offset from the pivot in this frame's pose.
void step_segment(uint s, uint i, PointSegmentRig rig, vec3 offset, SubstepMotion m, Contact contact,
                  inout PointSegmentState st, inout ParentStep parent) {
    vec3 last = st.last_offset.xyz;
    vec3 d = offset - last;
    vec3 on_path = last + m.w.p * d + m.w.q * start_tangent(d, sch.span * st.offset_rate.xyz, target_path);
    vec3 animated = on_path - parent.offset;
    vec3 base = parent.base;
    vec3 t = base + (i == 0u ? animated : follow_parent(parent.animated, parent.simulated, animated, parent.axis));
    // Positions are kept relative to the pivot, which moved: a particle that stays put in the
    // world moves by -Δp; world influence w keeps the fraction w of that. The target moves
    // with the body: its last value, relative to the new pivot, less the carriage's part (v2).
    vec3 x = st.position.xyz - influence * m.moved;
    vec3 t_prev = st.target.xyz - felt * m.moved;
    vec3 v_t = (t - t_prev) * sch.inv_path_step;
    vec3 v = m.first_moving ? v_t : st.velocity.xyz - m.carry_before;
    vec3 wind = WIND != 0 ? wind_at(m.pivot + x, chain_gust_phase, m.elapsed) : vec3(0.0);
    vec3 start = x;  // where the particle was at the start of the substep (swept contact)
    integrate_particle(s, rig, t, t_prev, v_t, m.carry, chain_gravity, wind, x, v);
    contact.radius = rig.particle_radius;
    vec3 pushed = vec3(0.0);  // what contact moved x without velocity
#if NEAR_FAR == 1  // the far pass: the broad phase's balls in the substep's box (point_far.glsl)
    bound_particle(start, x);
#else
    if (COLLIDERS != 0) {
        vec3 free_x = x;
        vec3 free_v = v;
        collide_near(contact, start, x, v);
        pushed = (x - free_x) - (v - free_v) * sch.substep;
    }
#endif
    if (MAX_DISTANCE != 0) {
        limit_distance(rig.max_distance, t, x, v);
    }
    enforce_length(rig.rest_length, base, parent.v_base, parent.pushed, pushed, x, v);
    if (ANGLE_LIMITS != 0) {
        vec4 frame = vec4(0.0, 0.0, 0.0, 1.0);
        if ((HAS_ANGLE_LIMIT(LIMIT_HINGE) || HAS_ANGLE_LIMIT(LIMIT_SPHERICAL))
            && rig.limit_kind >= LIMIT_HINGE) {  // the base joint's rotation on its path (nlerp)
            frame = target_frame(parent.animated, parent.simulated, nlerp(st.last_rotation, joint_rotation(s), m.alpha),
                                 parent.axis);
        }
        limit_angle(rig, frame, base, t, v_t, x, v);
    }
#if NEAR_FAR == 1
    bound_segment(start, base, x, rig.particle_radius);
#else
    if (COLLIDERS != 0) {
        vec3 settled_x = x;
        vec3 settled_v = v;
        settle_contact(contact, parent.base_start, start, base, rig.rest_length, x, v);
        pushed += (x - settled_x) - (v - settled_v) * sch.substep;
    }
#endif
    // the axis of this segment's bend, carried to the next substep (SPEC 4, step 2)
    vec3 bend_carried = carried_axis(st.position, st.velocity);
    vec3 axis = turn_axis(animated, x - base, bend_carried);
    vec2 bend_code = axis_code(bend_carried);
    if (m.first_sub) {  // relative to the previous substep's pivot; their w stay
        st.prev_position.xyz = st.position.xyz;
        // A chain starting to move had the velocity it starts with (for the frame-time output).
        st.prev_velocity.xyz = m.first_moving ? v_t + m.carry_before : st.velocity.xyz;
    }
    st.position = vec4(x, bend_code.x);
    st.velocity = vec4(v + m.carry, bend_code.y);  // the world velocity
    st.target.xyz = t;
    parent = ParentStep(x, start, v, pushed, on_path, animated, x - base, axis);
}
