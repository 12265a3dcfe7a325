#version 430
// One frame of point chains (SPEC sections 2, 4 and 5): one invocation per chain walks its
// particles root to tip, for every substep of the frame, inside this one dispatch.
// Stages, named as in gpu_jiggle/sim/backends/reference_point.py: shift_anchor, apply_teleport,
// start_moving, resume_path, contact_substeps (each substep as k sub-steps, SPEC 9),
// interpolate_pivot, follow_parent, integrate_particle, collide_near (sweep_particle,
// collide), limit_distance, enforce_length, limit_angle (point_limits.glsl), settle_contact
// (sweep_segment, keep_outside, collide), end_path, write_output.
#define LOCAL_SIZE 64
// Feature switches (gpu_jiggle/sim/backends/gpu.py compiles a variant for what the chain set
// and the frame use): a switch at 0 leaves the feature's code out, for frames that cannot use
// it (no collider that keeps particles inside, no exact integrator, no wind, no segment with
// a max distance; ANGLE_LIMITS: a bit for each kind of angle limit some segment has, 1 cone,
// 2 hinge, 4 spherical). Mesa's llvmpipe runs both sides of a branch, so code
// left in costs there even when unused; on a GPU it costs registers. The colliders of each
// shape come in slots (point_colliders.glsl): their count rounded up to 0, 1, 2, 4 or 8, or
// -1 for the frame's count, whatever it is.
#define SPHERE_SLOTS -1
#define CAPSULE_SLOTS -1
#define PLANE_SLOTS -1
#define INSIDE_COLLIDERS 1
#define EXACT_STEPS 1
#define WIND 1
#define ANGLE_LIMITS 7
#define MAX_DISTANCE 1
#define COLLIDERS ((SPHERE_SLOTS != 0 || CAPSULE_SLOTS != 0 || PLANE_SLOTS != 0) ? 1 : 0)
// SPEC 9, "Near and far chains" (gpu_jiggle/sim/backends/near_far.py): 0 runs every stage for
// every chain; 1 is the far pass, every chain without the contact stages, each marking its
// chain near (contact_near) where a stage could act; 2 is the near pass, every stage for the
// chains near_chains.comp listed, from the state the frame started with.
#define NEAR_FAR 0

layout(local_size_x = LOCAL_SIZE) in;

#include "common.glsl"
#include "dispatch.glsl"
#include "point_common.glsl"
#if NEAR_FAR == 2
#include "near_chains.glsl"
#endif
#include "point_colliders.glsl"
#include "point_geometry.glsl"
#include "point_sweep.glsl"
#include "point_contact.glsl"
#include "point_limits.glsl"

// The schedule of this invocation's chain (its level of detail) and the solver's options, set
// first thing in main().
Schedule sch;
uint target_path;
bool relative_damping;
bool exact_integrator;
uint schedule_index;  // 0 at full rate, 1 at half rate: which of the segment's two ExactSteps
float exact_share = 1.0;  // in a contact sub-step of h/k (SPEC 9): 1/k, the exact step's share of its substep's

// The state follows the chain's anchor, moved to this frame's pivot (SPEC 4.4).
void shift_anchor(uint c, vec3 shift) {
    chain_state[c].prev_pivot.xyz += shift;
    chain_state[c].last_pivot.xyz += shift;
}

#include "point_teleport.glsl"

// SPEC 5, moving: the path starts at the speed it is seen to have (m0 = m1), over the chain's
// own time from its path's start to this frame's pose (resume_path then carries it to the
// schedule's start).
void start_moving(PointChainRig chain, uint c) {
    float inv_span = own_inv_span(sch, chain_state[c].path_lag);
    chain_state[c].pivot_rate = vec4(-chain_state[c].last_pivot.xyz * inv_span, 0.0);
    chain_state[c].flags &= ~CHAIN_START_MOVING;
    for (uint i = 0u; i < chain.segment_count; ++i) {
        uint s = chain.first_segment + i;
        segment_state[s].offset_rate.xyz = (target_offset(s) - segment_state[s].last_offset.xyz) * inv_span;
    }
}

// SPEC 2, "Levels of detail": the paths, which start at the chain's own last substep (its
// path_lag before the last frame's time), carried along their velocity to the schedule's
// start (its start_lag), shift = path_lag - start_lag seconds: the pivot's path and p_prev
// (so the particles, relative to the pivot, go with it) and each target offset's path,
// x0 += shift·m0.
void resume_path(PointChainRig chain, uint c, float shift) {
    vec3 moved = shift * chain_state[c].pivot_rate.xyz;
    chain_state[c].last_pivot.xyz = chain_state[c].last_pivot.xyz + moved;
    chain_state[c].prev_pivot.xyz = chain_state[c].prev_pivot.xyz + moved;
    for (uint i = 0u; i < chain.segment_count; ++i) {
        uint s = chain.first_segment + i;
        segment_state[s].last_offset.xyz = segment_state[s].last_offset.xyz + shift * segment_state[s].offset_rate.xyz;
    }
}

// The pivot's path velocity (length/s) at the path weights w, as interpolate_pivot and end_path
// work it out.
vec3 pivot_path_velocity(uint c, PathWeights w) {
    PointChainState cs = chain_state[c];
    vec3 d = -cs.last_pivot.xyz;
    vec3 m = start_tangent(d, sch.span * cs.pivot_rate.xyz, target_path);
    return (w.dp * d + w.dq * m) * sch.inv_span;
}

// The pivot on its target path at the path weights w, as interpolate_pivot places it.
vec3 pivot_on_path(uint c, PathWeights w) {
    PointChainState cs = chain_state[c];
    vec3 d = -cs.last_pivot.xyz;
    vec3 m = start_tangent(d, sch.span * cs.pivot_rate.xyz, target_path);
    return cs.last_pivot.xyz + w.p * d + w.q * m;
}

// SPEC section 4, step 1: the pivot on its target path (this frame's pivot is the anchor, 0)
// and its path velocity (length/s, as end_path leaves pivot_rate); returns its motion Δp this
// substep.
vec3 interpolate_pivot(uint c, PathWeights w, out vec3 pivot, out vec3 velocity) {
    PointChainState cs = chain_state[c];
    vec3 d = -cs.last_pivot.xyz;
    vec3 m = start_tangent(d, sch.span * cs.pivot_rate.xyz, target_path);
    pivot = cs.last_pivot.xyz + w.p * d + w.q * m;
    velocity = (w.dp * d + w.dq * m) * sch.inv_span;
    vec3 moved = pivot - cs.prev_pivot.xyz;
    chain_state[c].prev_pivot = vec4(pivot, 0.0);
    return moved;
}

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
        ExactStep step = exact_step[2u * s + schedule_index];
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

// SPEC 2 and 4.2: the colliders' path, at fraction alpha, starts where they were at the last
// substep; their positions are taken relative to the chain's anchor in double precision.
void end_path(PointChainRig chain, uint c, float alpha) {
    PathWeights w = path_weights(alpha, target_path);
    PointChainState cs = chain_state[c];
    vec3 d_pivot = -cs.last_pivot.xyz;
    vec3 m_pivot = start_tangent(d_pivot, sch.span * cs.pivot_rate.xyz, target_path);
    chain_state[c].last_pivot = vec4(cs.last_pivot.xyz + w.p * d_pivot + w.q * m_pivot, 0.0);
    chain_state[c].pivot_rate = vec4((w.dp * d_pivot + w.dq * m_pivot) * sch.inv_span, 0.0);
    for (uint i = 0u; i < chain.segment_count; ++i) {
        uint s = chain.first_segment + i;
        vec3 last = segment_state[s].last_offset.xyz;
        vec3 d = target_offset(s) - last;
        vec3 m = start_tangent(d, sch.span * segment_state[s].offset_rate.xyz, target_path);
        segment_state[s].last_offset.xyz = last + w.p * d + w.q * m;
        segment_state[s].offset_rate.xyz = (w.dp * d + w.dq * m) * sch.inv_span;
        segment_state[s].last_rotation = nlerp(segment_state[s].last_rotation, joint_rotation[s], alpha);
    }
}

#include "point_output.glsl"

// One frame of chain c (its dispatch's range of substeps).
void step_chain(uint c) {
    PointChainRig chain = chain_rig[c];
    PointChainTarget target = chain_target[c];
    PointChainControl control = chain_control[c];
    sch = control.lod == LOD_HALF ? params.half_rate : params.full_rate;
    target_path = path_kind(params.options);
    relative_damping = (params.options & OPTION_RELATIVE_DAMPING) != 0u;
    exact_integrator = EXACT_STEPS != 0 && (params.options & OPTION_EXACT_INTEGRATOR) != 0u;
    schedule_index = control.lod == LOD_HALF ? 1u : 0u;
    dvec3 anchor = dvec3(target.anchor[0], target.anchor[1], target.anchor[2]);
    SubstepRange range = substep_range(params.substep_begin, params.substep_end, sch.substep_count);
    if (range.idle || (control.lod == LOD_FROZEN && !range.first)) {
        return;
    }
    bool moving = false;
    if (range.first) {
#if NEAR_FAR != 2  // (the far pass wrote it)
        // For drawing from the GPU: the pivot in the drawing origin's frame (double, then float).
        chain_output[c] = PointChainOutput(vec3(anchor - dvec3(params.origin[0], params.origin[1], params.origin[2])),
                                           control.lod);
#endif
        shift_anchor(c, vec3(target.anchor_shift[0], target.anchor_shift[1], target.anchor_shift[2]));
        if (control.lod == LOD_FROZEN) {
            // Frozen: sits on its animated targets, as a snap teleport every frame, of a body
            // that is moving (SPEC 5): back at a level that runs, it starts moving with them.
            apply_teleport(chain, c, TELEPORT_SNAP | TELEPORT_MOVING);
            chain_state[c].path_lag = next_path_lag(sch, chain_state[c].path_lag, true);
            write_output(chain, c, anchor);
            return;
        }
        if (control.teleport != TELEPORT_NONE) {
            apply_teleport(chain, c, control.teleport);
        }
        // A chain declared moving starts moving on the first frame after its snap that runs
        // substeps: on the snap frame its path starts at the pose just given and shows no speed yet.
        bool snapped_now = (control.teleport & TELEPORT_MODE_MASK) == TELEPORT_SNAP;
        moving = sch.substep_count > 0u && (chain_state[c].flags & CHAIN_START_MOVING) != 0u && !snapped_now;
        if (moving) {
            start_moving(chain, c);
        }
        // Back from another level (or a snap), the paths resume where the chain's own last
        // substep ended, carried to this schedule's start.
        float lag = chain_state[c].path_lag;
        if (sch.substep_count > 0u && !snapped_now && lag != sch.start_lag) {
            resume_path(chain, c, lag - sch.start_lag);
        }
        chain_state[c].path_lag = next_path_lag(sch, lag, snapped_now);
    }
    uint first_alpha = control.lod * params.alpha_stride;
    if (WIND != 0) {
        frame_wind = params.wind;
        frame_gust = params.gust;
        frame_gust_direction = params.gust_direction.xyz;
    }
    float influence = chain.world_influence;
    // SPEC 4, world influence: the chain feels the fraction `felt` of its pivot's motion; the
    // rest carries it. v2: its velocity relative to that carriage (the carriage moving at
    // `carried` times the pivot's path velocity) is what the spring and the damping see; v1
    // kept the velocity as it was (felt 1 for the target, carried 0).
    float felt = relative_damping ? influence : 1.0;
    float carried = relative_damping ? 1.0 - influence : 0.0;
    vec3 pivot = chain_state[c].last_pivot.xyz;
    // The pivot's path velocity at the last substep (of this frame, where a dispatch before ran some).
    vec3 pivot_velocity = range.begin == 0u ? chain_state[c].pivot_rate.xyz
                                            : pivot_path_velocity(c, path_weights(alphas[first_alpha + range.begin - 1u], target_path));
    vec3 prev_pivot_velocity = chain_state[c].prev_pivot_rate.xyz;  // the pivot's path velocity a substep back
    float reach = 0.0;  // SPEC 9, contact sub-steps
    float smallest_radius = uintBitsToFloat(0x7f800000u);
    if (COLLIDERS != 0) {
        chain_reach(chain, reach, smallest_radius);
    }
    float h = sch.substep;
    float inv_path_step = sch.inv_path_step;
    for (uint j = range.begin; j < range.end; ++j) {
        float alpha_end = alphas[first_alpha + j];
        float alpha_start = j > 0u ? alphas[first_alpha + j - 1u] : 0.0;
        // The colliders' path covers the full-rate span; map this substep's time onto it. Where
        // they were at the start of the substep, for the swept contact (SPEC 9): before this
        // frame's path (a half-rate substep started a frame earlier) the path is extended
        // backwards, not held at its start, so the sweep sees the whole move.
        float collider_end = clamp(1.0 - (1.0 - alpha_end) * sch.collider_time_scale, 0.0, 1.0);
        float collider_begin = min(1.0 - (1.0 - alpha_start) * sch.collider_time_scale, 1.0);
        // SPEC 9, contact sub-steps: the first pass places the colliders at the substep's end and
        // counts the sub-steps; where there is more than one it starts again with h/k. (One place
        // that places the colliders: a second copy of that double-precision code doubled the
        // kernel's compile time on llvmpipe.)
        uint k = 1u;
        bool counted = COLLIDERS == 0;
        for (uint sub = 0u; sub < k; ++sub) {
            float alpha = alpha_end;
            float collider_alpha = collider_end;
            float start_alpha = collider_begin;
            float elapsed = float(j) * h;
            if (k > 1u) {  // the sub-step's path fractions (its end exact at the last), h/k, the exact step's share
                if (sub < k - 1u) {
                    alpha = alpha_start + float(sub + 1u) / float(k) * (alpha_end - alpha_start);
                    collider_alpha = collider_begin + float(sub + 1u) / float(k) * (collider_end - collider_begin);
                }
                start_alpha = collider_begin + float(sub) / float(k) * (collider_end - collider_begin);
                sch.substep = h / float(k);
                sch.inv_path_step = inv_path_step * float(k);
                elapsed = elapsed + float(sub) * sch.substep;
                exact_share = 1.0 / float(k);
            }
            PathWeights w = path_weights(alpha, target_path);
            Contact contact = Contact(chain.collider_mask, anchor, collider_alpha,
                                      path_weights(collider_alpha, target_path), pivot_on_path(c, w), 0.0, sch.substep,
                                      vec3(0.0));
            if (COLLIDERS != 0) {
                place_colliders(contact);
                Contact start_contact = contact;
                start_contact.alpha = start_alpha;
                start_contact.w = path_weights(start_alpha, target_path);
                place_collider_moves(start_contact);
                if (!counted) {
                    counted = true;
                    k = contact_substeps(contact, contact.pivot - chain_state[c].prev_pivot.xyz, reach, smallest_radius);
#if NEAR_FAR == 1  // sub-steps are for colliders near: the near pass's
                    contact_near = contact_near || k > 1u;
                    k = 1u;
#endif
                    if (k > 1u) {
                        sub = 0xFFFFFFFFu;  // again from the first, now of h/k
                        continue;
                    }
                }
            }
            vec3 carry_before = carried * pivot_velocity;
            if (sub == 0u) {
                prev_pivot_velocity = pivot_velocity;
            }
            vec3 moved = interpolate_pivot(c, w, pivot, pivot_velocity);
            vec3 carry = carried * pivot_velocity;
            contact.carriage = carry;
            vec3 base_start = -moved;  // where each segment's base was at the start of the substep
            bool first_moving = moving && j == 0u && sub == 0u;
            vec3 base = vec3(0.0);
            vec3 v_base = (felt * moved) * sch.inv_path_step;
            vec3 offset_base = vec3(0.0);
            vec3 parent_animated = vec3(0.0);
            vec3 parent_simulated = vec3(0.0);
            vec3 pushed_base = vec3(0.0);  // how far contact moved the base without velocity this substep
            vec3 parent_axis = vec3(0.0);  // the turn axis of the parent's bend (turn_axis)
            for (uint i = 0u; i < chain.segment_count; ++i) {
                uint s = chain.first_segment + i;
                PointSegmentRig rig = segment_rig[s];
                PointSegmentState st = segment_state[s];
                vec3 last = st.last_offset.xyz;
                vec3 d = target_offset(s) - last;
                vec3 offset = last + w.p * d + w.q * start_tangent(d, sch.span * st.offset_rate.xyz, target_path);
                vec3 animated = offset - offset_base;
                vec3 t = base + (i == 0u ? animated
                                         : follow_parent(parent_animated, parent_simulated, animated, parent_axis));
                // Positions are kept relative to the pivot, which moved: a particle that stays
                // put in the world moves by -Δp; world influence w keeps the fraction w of that.
                // The target moves with the body: its last value, relative to the new pivot, less
                // the carriage's part (v2).
                vec3 x = st.position.xyz - influence * moved;
                vec3 t_prev = st.target.xyz - felt * moved;
                vec3 v_t = (t - t_prev) * sch.inv_path_step;
                vec3 v = first_moving ? v_t : st.velocity.xyz - carry_before;
                vec3 wind = WIND != 0 ? wind_at(pivot + x, target.gust_phase, elapsed) : vec3(0.0);
                vec3 start = x;  // where the particle was at the start of the substep (swept contact)
                integrate_particle(s, rig, t, t_prev, v_t, carry, chain.gravity.xyz, wind, x, v);
                contact.radius = rig.particle_radius;
                vec3 pushed = vec3(0.0);  // what contact moved x without velocity
                if (COLLIDERS != 0) {
                    vec3 free_x = x;
                    vec3 free_v = v;
                    collide_near(contact, start, x, v);
                    pushed = (x - free_x) - (v - free_v) * sch.substep;
                }
                if (MAX_DISTANCE != 0) {
                    limit_distance(rig.max_distance, t, x, v);
                }
                enforce_length(rig.rest_length, base, v_base, pushed_base, pushed, x, v);
                if (ANGLE_LIMITS != 0) {
                    vec4 frame = vec4(0.0, 0.0, 0.0, 1.0);
                    if ((HAS_ANGLE_LIMIT(LIMIT_HINGE) || HAS_ANGLE_LIMIT(LIMIT_SPHERICAL))
                        && rig.limit_kind >= LIMIT_HINGE) {  // the base joint's rotation on its path (nlerp)
                        frame = target_frame(parent_animated, parent_simulated,
                                             nlerp(st.last_rotation, joint_rotation[s], alpha), parent_axis);
                    }
                    limit_angle(rig, frame, base, t, v_t, x, v);
                }
                if (COLLIDERS != 0) {
                    vec3 settled_x = x;
                    vec3 settled_v = v;
                    settle_contact(contact, base_start, start, base, rig.rest_length, x, v);
                    pushed += (x - settled_x) - (v - settled_v) * sch.substep;
                }
                // the axis of this segment's bend, carried to the next substep (SPEC 4, step 2)
                vec3 bend_carried = carried_axis(st.position, st.velocity);
                parent_axis = turn_axis(animated, x - base, bend_carried);
                vec2 bend_code = axis_code(bend_carried);
                // the w of prev_position and prev_velocity (the world rotation's axis) stay
                if (sub == 0u) {  // relative to the previous substep's pivot
                    segment_state[s].prev_position.xyz = st.position.xyz;
                    // A chain starting to move had the velocity it starts with (for the frame-time output).
                    segment_state[s].prev_velocity.xyz = first_moving ? v_t + carry_before : st.velocity.xyz;
                }
                segment_state[s].position = vec4(x, bend_code.x);
                segment_state[s].velocity = vec4(v + carry, bend_code.y);  // the world velocity
                segment_state[s].target.xyz = t;
                parent_animated = animated;
                parent_simulated = x - base;
                offset_base = offset;
                base = x;
                base_start = start;
                v_base = v;
                pushed_base = pushed;
            }
        }
        sch.substep = h;
        sch.inv_path_step = inv_path_step;
        exact_share = 1.0;
    }
    chain_state[c].prev_pivot_rate = vec4(prev_pivot_velocity, 0.0);
    if (range.last) {
        if (sch.substep_count > 0u) {
            end_path(chain, c, alphas[first_alpha + sch.substep_count - 1u]);
        }
        write_output(chain, c, anchor);
    }
}

void main() {
#if NEAR_FAR == 2
    uint c;
    if (!listed_chain(params.chain_count, c)) {
        return;
    }
#else
    uint c = invocation_index();
    if (c >= params.chain_count) {
        return;
    }
#endif
    step_chain(c);
#if NEAR_FAR == 1
    chain_state[c].contact_near = contact_near ? 1u : 0u;
#endif
}
