#version 430
#extension GL_ARB_gpu_shader_int64 : enable
// One frame of angle chains (SPEC sections 2, 3 and 5): one invocation per chain walks its
// segments root to tip, for every substep of the frame, inside this one dispatch.
// Stages, named as in gpu_jiggle/sim/backends/reference/angle_chains.py: shift_anchor,
// apply_teleport (begin_teleport, teleport_segment), start_moving (begin_moving, start_moving_segment),
// resume_path (begin_resume, resume_segment), interpolate_root, wind_at, integrate_segment, limit_angle,
// end_path (end_segment_path), write_output (begin_output, output_segment), watch_root.
#define LOCAL_SIZE 64
#define WORDS_AS_DOUBLES 0  // 1: the 64-bit words as doubles (words64.glsl)
#define BUFFER_IMAGES 0  // 1: some buffers read through image views of them (buffer_views.glsl)
// Feature switches (gpu_jiggle/sim/backends/gpu_angle.py compiles a variant per frame's needs): a
// switch at 0 leaves the feature's code out, for frames that cannot use it (no exact
// integrator, no wind); the results are the same bits. Mesa's llvmpipe runs a branch's body for
// all 8 lanes of a vector where any of them takes it (Mesa 22.3 even where none does:
// benchmarks/bench_branches.py), so code left in costs there; on a GPU it costs registers.
#define EXACT_STEPS 1
#define WIND 1
// The solver's target path kind (PATH_* in common.glsl) and damping frame (1 relative), fixed when
// it is made; -1: read from the frame's options (frame_path_kind, frame_relative_damping).
#define TARGET_PATH -1
#define RELATIVE_DAMPING -1
// Substeps a segment runs with its state in registers before it is written back (the batch's
// per-substep arrays have this many entries): the host picks 2, 4 or 8 by the frame's
// substeps (variants.py fused_substeps); any size gives the same bits.
#define FUSED_SUBSTEPS 8
// 1 where a dispatch's substeps fit in one batch (the host's FUSED_SUBSTEPS holds the frame's):
// the batch then runs without a loop around it, which llvmpipe would run once more than it
// goes round (docs/PERFORMANCE.md). 0: a loop over as many batches as the dispatch needs.
#define ONE_BATCH 0

layout(local_size_x = LOCAL_SIZE) in;

#include "common.glsl"
#include "words64.glsl"
#include "buffer_views.glsl"
#include "dispatch.glsl"
#include "record_texture.glsl"
#include "angle_common.glsl"

// The schedule of this invocation's chain (its level of detail) and the solver's options, set
// first thing in main().
Schedule sch;
uint target_path;
bool relative_damping;
bool exact_integrator;
uint schedule_index;  // 0 at full rate, 1 at half rate: which of the segment's two ExactSteps

// Positions are kept relative to the chain's anchor, which the host moves to this frame's
// root: the state follows it (SPEC 3.4).
void shift_anchor(inout AngleChainState cs, vec2 shift) {
    cs.prev_root_position += shift;
    cs.last_root_position += shift;
}

// SPEC section 5, a teleport, in two parts: the chain's (its root's path; begin_teleport) and
// each segment's (teleport_segment), so that a kernel may take the segments' parts in its own
// walk of them (ONE_BATCH) or in a walk of their own (teleport_segments). What a segment's part
// needs of the chain's: the flags, the keep_shape turn, and a snap's parent angle, root to tip.
struct SegmentJump {
    uint flags;
    float turn;
    float phi_parent;
};

// The chain's part: a mirror (the chain reflected about the vertical through its root) first;
// then a snap puts the root's path at rest on the targets, or keep_shape carries it across the
// jump (P_prev and the path with the body; V_prev and the path velocities stay); TELEPORT_MOVING
// marks the chain to start moving with its targets. Flags TELEPORT_NONE change nothing.
SegmentJump begin_teleport(inout AngleChainState cs, AngleChainTarget target, uint flags) {
    uint mode = flags & TELEPORT_MODE_MASK;
    if ((flags & TELEPORT_MIRROR) != 0u) {
        vec2 root = target.root_position;
        cs.prev_root_position.x = 2.0 * root.x - cs.prev_root_position.x;
        cs.last_root_position.x = 2.0 * root.x - cs.last_root_position.x;
        cs.prev_root_velocity.x = -cs.prev_root_velocity.x;
        cs.root_position_rate.x = -cs.root_position_rate.x;
        cs.last_root_angle = wrap_angle(PI - cs.last_root_angle);
        cs.root_angle_rate = -cs.root_angle_rate;
    }
    // keep_shape carries the jump: how far the pose is from where the root's path would have
    // taken it this frame (last target + span·m0), so the body's own motion stays on the path.
    AngleChainState carried = cs;
    float turn = wrap_angle(target.root_angle - (carried.last_root_angle + sch.span * carried.root_angle_rate));
    vec2 jump = target.root_position - (carried.last_root_position + sch.span * carried.root_position_rate);
    if (mode == TELEPORT_SNAP) {
        cs.prev_root_position = target.root_position;
        cs.prev_root_velocity = vec2(0.0);
        cs.last_root_position = target.root_position;
        cs.root_position_rate = vec2(0.0);
        cs.last_root_angle = target.root_angle;
        cs.root_angle_rate = 0.0;
    } else if (mode == TELEPORT_KEEP_SHAPE) {
        cs.prev_root_position += jump;
        cs.last_root_position += jump;
        cs.last_root_angle = wrap_angle(cs.last_root_angle + turn);
    }
    if ((flags & TELEPORT_MOVING) != 0u) {
        cs.flags |= CHAIN_START_MOVING;
    }
    return SegmentJump(flags, turn, target.root_angle);
}

// A segment's part, root to tip: mirrored (φ → π - φ, ω → -ω, its target's path likewise);
// snapped onto its target (the path at rest), or turned with the root (angles turned; velocities
// and path velocities kept).
void teleport_segment(inout SegmentJump jump, float local_target, inout AngleSegmentState st) {
    uint mode = jump.flags & TELEPORT_MODE_MASK;
    if ((jump.flags & TELEPORT_MIRROR) != 0u) {
        st.angle = wrap_angle(PI - st.angle);
        st.prev_angle = wrap_angle(PI - st.prev_angle);
        st.target_angle = wrap_angle(PI - st.target_angle);
        st.angular_velocity = -st.angular_velocity;
        st.prev_angular_velocity = -st.prev_angular_velocity;
        st.last_local_angle = -st.last_local_angle;
        st.local_angle_rate = -st.local_angle_rate;
    }
    if (mode == TELEPORT_SNAP) {
        float phi = wrap_angle(jump.phi_parent + local_target);
        st.angle = phi;
        st.angular_velocity = 0.0;
        st.prev_angle = phi;
        st.prev_angular_velocity = 0.0;
        st.target_angle = phi;
        st.last_local_angle = local_target;
        st.local_angle_rate = 0.0;
        jump.phi_parent = phi;
    } else if (mode == TELEPORT_KEEP_SHAPE) {
        st.angle = wrap_angle(st.angle + jump.turn);
        st.prev_angle = wrap_angle(st.prev_angle + jump.turn);
        st.target_angle = wrap_angle(st.target_angle + jump.turn);
    }
}

// SPEC section 5: the segments' parts of a teleport in a walk of their own.
void teleport_segments(AngleChainRig chain, SegmentJump jump) {
    for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
        uint s = chain.first_segment + i;
        AngleSegmentState st = load_segment_state(s);
        teleport_segment(jump, local_target_angle(s), st);
        store_segment_state(s, st);
        if (++i == chain.segment_count) {
            break;
        }
    }
    WROTE_VIEWED();  // the walk's stores seen by a later read through a view (buffer_views.glsl)
}

// SPEC 5, moving: the path starts at the speed it is seen to have (m0 = m1), over the chain's
// own time from its path's start to this frame's pose (resume_path then carries it to the
// schedule's start). The chain's part returns 1 / that time, which each segment's part takes.
float begin_moving(inout AngleChainState cs, AngleChainTarget target) {
    float inv_span = own_inv_span(sch, cs.path_lag);
    cs.root_position_rate = (target.root_position - cs.last_root_position) * inv_span;
    cs.root_angle_rate = wrap_angle(target.root_angle - cs.last_root_angle) * inv_span;
    cs.flags &= ~CHAIN_START_MOVING;
    return inv_span;
}

void start_moving_segment(float local_target, float inv_span, inout AngleSegmentState st) {
    st.local_angle_rate = wrap_angle(local_target - st.last_local_angle) * inv_span;
}

void start_moving_segments(AngleChainRig chain, float inv_span) {
    for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
        uint s = chain.first_segment + i;
        AngleSegmentState st = load_segment_state(s);
        start_moving_segment(local_target_angle(s), inv_span, st);
        store_segment_state(s, st);
        if (++i == chain.segment_count) {
            break;
        }
    }
    WROTE_VIEWED();  // the walk's stores seen by a later read through a view (buffer_views.glsl)
}

// SPEC 2, "Levels of detail": the paths, which start at the chain's own last substep (its
// path_lag before the last frame's time), carried along their velocity to the schedule's
// start (its start_lag), shift = path_lag - start_lag seconds: the root's position path and
// P_prev together, its heading's path (the chain's part) and each local angle's path (the
// segment's), x0 += shift·m0.
void begin_resume(inout AngleChainState cs, float shift) {
    vec2 moved = shift * cs.root_position_rate;
    cs.last_root_position = cs.last_root_position + moved;
    cs.prev_root_position = cs.prev_root_position + moved;
    cs.last_root_angle = wrap_angle(cs.last_root_angle + shift * cs.root_angle_rate);
}

void resume_segment(float shift, inout AngleSegmentState st) {
    st.last_local_angle = wrap_angle(st.last_local_angle + shift * st.local_angle_rate);
}

void resume_segments(AngleChainRig chain, float shift) {
    for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
        uint s = chain.first_segment + i;
        AngleSegmentState st = load_segment_state(s);
        resume_segment(shift, st);
        store_segment_state(s, st);
        if (++i == chain.segment_count) {
            break;
        }
    }
    WROTE_VIEWED();  // the walk's stores seen by a later read through a view (buffer_views.glsl)
}

// SPEC section 3, step 1. Returns the root acceleration A; sets P (root_position) and Θ.
// V and A are measured per second of target path (inv_path_step), see sim/clock.py StepPlan;
// a chain starting to move measures no acceleration on its first substep.
vec2 interpolate_root(inout AngleChainState cs, AngleChainTarget target, PathWeights w, bool first_moving,
                      out vec2 root_position, out float root_angle) {
    vec2 d_position = target.root_position - cs.last_root_position;
    float d_angle = wrap_angle(target.root_angle - cs.last_root_angle);
    vec2 m_position = start_tangent(d_position, sch.span * cs.root_position_rate, target_path);
    float m_angle = start_tangent(d_angle, sch.span * cs.root_angle_rate, target_path);
    root_position = cs.last_root_position + w.p * d_position + w.q * m_position;
    root_angle = cs.last_root_angle + w.p * d_angle + w.q * m_angle;
    vec2 velocity = (root_position - cs.prev_root_position) * sch.inv_path_step;
    vec2 previous = first_moving ? velocity : cs.prev_root_velocity;
    vec2 acceleration = (velocity - previous) * sch.inv_path_step;
    cs.prev_root_position = root_position;
    cs.prev_root_velocity = velocity;
    return acceleration;
}

// The 2D wind W(x, t) of SPEC 3 at x relative to the anchor, `elapsed` seconds into the frame;
// chain_phase: κ·anchor (mod 2π) of the chain.
vec2 wind_at(vec2 x, float chain_phase, float elapsed) {
    float phase = dot(params.gust.xy, x) + chain_phase + sch.gust_phase - params.gust.z * elapsed;
    return params.wind.xy + params.wind.z * params.gust_direction.xy * sin(phase);
}

// SPEC section 3, step 2, the limit: keep the angle within β of its target, removing the
// outward motion relative to the target (v1: the outward angular velocity).
void limit_angle(float target_angle, float target_rate, float limit, inout float phi, inout float omega) {
    float dd = wrap_angle(phi - target_angle);
    if (abs(dd) > limit) {
        phi = target_angle + sign(dd) * limit;
        if (relative_damping) {
            if ((omega - target_rate) * dd > 0.0) {
                omega = target_rate;
            }
        } else if (omega * dd > 0.0) {
            omega = 0.0;
        }
    }
}

// SPEC section 3, step 2, one segment over one substep, its state `st` held by the caller
// across the substeps of a batch (read and written once per batch). The spring compares φ with
// a reference that moves at `rate` over the substep: v2 the target at the start of the substep
// (τ_prev) moving at τ̇, damping relative to it; v1 (world damping) this substep's target τ, at
// rest. Semi-implicit Euler, velocity first, or the exact step (SPEC 1). Returns φ.
float integrate_segment(AngleSegmentRig rig, ExactStep step, float local_target, inout AngleSegmentState st,
                        float phi_parent, PathWeights w, vec2 root_acceleration, vec2 gravity, vec2 wind,
                        bool first_moving) {
    float d_local = wrap_angle(local_target - st.last_local_angle);
    float m_local = start_tangent(d_local, sch.span * st.local_angle_rate, target_path);
    float lambda = st.last_local_angle + w.p * d_local + w.q * m_local;
    float target_angle = phi_parent + lambda;
    float target_rate = wrap_angle(target_angle - st.target_angle) * sch.inv_path_step;
    float phi = st.angle;
    float omega = first_moving ? target_rate : st.angular_velocity;
    vec2 e = vec2(cos(phi), sin(phi));
    vec2 g_eff = gravity - rig.inertia * root_acceleration + wind;
    float alpha_ext = (e.x * g_eff.y - e.y * g_eff.x) * rig.inv_length;
    float reference = relative_damping ? st.target_angle : target_angle;
    float rate = relative_damping ? target_rate : 0.0;
    float d = wrap_angle(phi - reference);
    float phi_new;
    if (exact_integrator) {
        float d_rate = omega - rate;
        float b = alpha_ext - rig.air_drag * rate;
        float change_d = step.d_d * d + step.d_v * d_rate + step.d_b * b;
        float change_rate = step.v_d * d + step.v_v * d_rate + step.v_b * b;
        omega = omega + change_rate;
        phi_new = phi + (rate * sch.substep + change_d);
    } else {
        float acc = -rig.stiffness * d - rig.damping * (omega - rate) - rig.air_drag * omega + alpha_ext;
        omega = omega + acc * sch.substep;
        phi_new = phi + omega * sch.substep;
    }
    limit_angle(target_angle, target_rate, rig.angle_limit, phi_new, omega);
    st.prev_angle = phi;
    st.prev_angular_velocity = st.angular_velocity;
    st.target_angle = wrap_angle(target_angle);
    phi_new = wrap_angle(phi_new);
    st.angle = phi_new;
    st.angular_velocity = omega;
    return phi_new;
}

// SPEC section 2: after the frame's last substep (fraction alpha, weights w), the path's
// start x0 and velocity m0 become its value and velocity there: the root's here, each
// segment's in end_segment_path (run in the segment walk of the frame's last batch).
void end_path(inout AngleChainState cs, AngleChainTarget target, PathWeights w) {
    vec2 d_position = target.root_position - cs.last_root_position;
    vec2 m_position = start_tangent(d_position, sch.span * cs.root_position_rate, target_path);
    float d_angle = wrap_angle(target.root_angle - cs.last_root_angle);
    float m_angle = start_tangent(d_angle, sch.span * cs.root_angle_rate, target_path);
    cs.last_root_position = cs.last_root_position + w.p * d_position + w.q * m_position;
    cs.root_position_rate = (w.dp * d_position + w.dq * m_position) * sch.inv_span;
    cs.last_root_angle = wrap_angle(cs.last_root_angle + w.p * d_angle + w.q * m_angle);
    cs.root_angle_rate = (w.dp * d_angle + w.dq * m_angle) * sch.inv_span;
}

void end_segment_path(inout AngleSegmentState st, float local_target, PathWeights w) {
    float d_local = wrap_angle(local_target - st.last_local_angle);
    float m_local = start_tangent(d_local, sch.span * st.local_angle_rate, target_path);
    st.last_local_angle = wrap_angle(st.last_local_angle + w.p * d_local + w.q * m_local);
    st.local_angle_rate = (w.dp * d_local + w.dq * m_local) * sch.inv_span;
}

// SPEC section 2, "Output at frame time": each angle carried from the last substep to the frame
// (σ·h later) at its angular velocity extrapolated from the last two substeps, 2ω - ω_prev:
// what the chain is doing, not what its targets did, so a step turn of the root is not drawn
// before the chain has felt it, and a chain tracking a steady turn is drawn on its pose. Then
// forward kinematics from this frame's root position; the raw positions start at P_prev (both
// relative to the anchor). The angular velocity given is the blend of the last two substeps.
// The walk is begun once per chain (the pivot's output) and taken one segment at a time, root
// to tip: in the segment walk of the frame's last batch, or by write_output.
struct OutputWalk {
    float sigma;
    vec2 base;
    vec2 raw_base;
};

OutputWalk begin_output(AngleChainRig chain, AngleChainState cs, AngleChainTarget target) {
    OutputWalk walk = OutputWalk(sch.blend, target.root_position, cs.prev_root_position);
    joint_output_words[chain.first_joint] = vec4_words(vec4(walk.base, walk.raw_base));
    return walk;
}

void output_segment(inout OutputWalk walk, AngleChainRig chain, uint i, AngleSegmentState st, float seg_length) {
    float angle = wrap_angle(st.angle + (walk.sigma * sch.substep) * (2.0 * st.angular_velocity - st.prev_angular_velocity));
    float omega = st.prev_angular_velocity + walk.sigma * (st.angular_velocity - st.prev_angular_velocity);
    walk.base = walk.base + seg_length * vec2(cos(angle), sin(angle));
    walk.raw_base = walk.raw_base + seg_length * vec2(cos(st.angle), sin(st.angle));
    joint_output_words[chain.first_joint + 1u + i] = vec4_words(vec4(walk.base, walk.raw_base));
    segment_output_words[chain.first_segment + i] = vec2_word(vec2(angle, omega));
}

// The output of a frame without substeps for the chain (frozen, or a frame too short).
void write_output(AngleChainRig chain, AngleChainState cs, AngleChainTarget target) {
    OutputWalk walk = begin_output(chain, cs, target);
    for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
        uint s = chain.first_segment + i;
        output_segment(walk, chain, i, load_segment_state(s), load_segment_rig(s).length);
        if (++i == chain.segment_count) {
            break;
        }
    }
}

// SPEC 1, "Stability": the watch of the root. Per frame, the largest |A| of the root's
// acceleration over the chain's substeps, the A integrated with (interpolate_root), for the host
// to hold against the chain's bound (gpu_jiggle/sim/root_motion.py). Not judged
// (ROOT_NOT_JUDGED): a frame on which the chain runs no substeps, jumps (a snap, frozen
// chains' included, or a keep_shape), or starts moving (its first substep measures none). A
// frame over several dispatches starts it in the first and carries it through the others.
float watch_root(float watched, vec2 acceleration) {
    return watched < 0.0 ? watched : max(watched, length(acceleration));
}

void main() {
    uint c = invocation_index();
    if (c >= params.chain_count) {
        return;
    }
    AngleChainRig chain = load_chain_rig(c);
    AngleChainTarget target = load_chain_target(c);
    sch = target.lod == LOD_HALF ? params.half_rate : params.full_rate;
    target_path = frame_path_kind(params.options);
    relative_damping = frame_relative_damping(params.options);
    exact_integrator = EXACT_STEPS != 0 && (params.options & OPTION_EXACT_INTEGRATOR) != 0u;
    schedule_index = target.lod == LOD_HALF ? 1u : 0u;
    SubstepRange range = substep_range(params.substep_begin, params.substep_end, sch.substep_count);
    if (range.idle || (target.lod == LOD_FROZEN && !range.first)) {
        return;
    }
    AngleChainState cs = load_chain_state(c);
    bool moving = false;
    // The first dispatch: a teleport (a frozen chain sits on its animated targets, as a snap of a
    // moving body every frame, SPEC 5: back at a level that runs, it starts moving with them), a
    // chain declared moving starting to move (on the first frame after its snap that runs
    // substeps: on the snap frame its path starts at the pose just given and shows no speed yet),
    // and the paths resumed where the chain's own last substep ended (back from another level or
    // a snap), carried to this schedule's start. Their chain's parts run here; their segments'
    // parts in walks of their own, or, in one batch, in the batch's walk (llvmpipe runs a walk of
    // their own once for every chain, none entering it), which then also writes a frozen chain's
    // output, the chain running no substeps.
    bool frozen = target.lod == LOD_FROZEN;
    SegmentJump jump = SegmentJump(TELEPORT_NONE, 0.0, 0.0);
    float moving_inv_span = 0.0;
    bool resuming = false;
    float resume_shift = 0.0;
    if (range.first) {
        shift_anchor(cs, target.anchor_shift);
        uint flags = frozen ? TELEPORT_SNAP | TELEPORT_MOVING : target.teleport;
        jump = begin_teleport(cs, target, flags);
#if !ONE_BATCH
        if (flags != TELEPORT_NONE) {
            teleport_segments(chain, jump);
        }
        if (frozen) {
            cs.path_lag = next_path_lag(sch, cs.path_lag, true);
            store_chain_state(c, cs);
            chain_output[c].root_acceleration = ROOT_NOT_JUDGED;  // watch_root
            write_output(chain, cs, target);
            return;
        }
#endif
        bool snapped_now = (flags & TELEPORT_MODE_MASK) == TELEPORT_SNAP;
        moving = !frozen && sch.substep_count > 0u && (cs.flags & CHAIN_START_MOVING) != 0u && !snapped_now;
        if (moving) {
            moving_inv_span = begin_moving(cs, target);
#if !ONE_BATCH
            start_moving_segments(chain, moving_inv_span);
#endif
        }
        float lag = cs.path_lag;
        resuming = !frozen && sch.substep_count > 0u && !snapped_now && lag != sch.start_lag;
        if (resuming) {
            resume_shift = lag - sch.start_lag;
            begin_resume(cs, resume_shift);
#if !ONE_BATCH
            resume_segments(chain, resume_shift);
#endif
        }
        cs.path_lag = next_path_lag(sch, lag, snapped_now);
    }
    float watched;  // watch_root's, over the frame's dispatches
    if (range.first) {
        bool jumped = frozen || (target.teleport & TELEPORT_MODE_MASK) != TELEPORT_NONE;
        watched = sch.substep_count == 0u || jumped || moving ? ROOT_NOT_JUDGED : 0.0;
    } else {
        watched = chain_output[c].root_acceleration;
    }
    uint first_alpha = min(target.lod, LOD_HALF) * params.alpha_stride;  // (frozen: the full rate's, unused)
    vec2 root_position = cs.last_root_position;
    float root_angle = cs.last_root_angle;
    bool windy = WIND != 0 && (params.wind.x != 0.0 || params.wind.y != 0.0 || params.wind.z != 0.0);
    // The substeps run in batches of up to FUSED_SUBSTEPS: the root's path through the batch
    // first, then each segment, root to tip, through all of the batch's substeps with its
    // state in registers (a segment needs only its parent's angle after each substep and its
    // parent's tip at the start of each, which it replaces with its own for its child).
    // The frame ends in this dispatch's last batch: its segment walk also ends each segment's
    // path and writes its output, so a segment's state is read and written once per batch.
#if ONE_BATCH
    bool ends_frame = range.last && sch.substep_count > 0u && !frozen;
#else
    bool ends_frame = range.last && sch.substep_count > 0u;
#endif
    PathWeights last_weights = path_weights(alphas[first_alpha + max(sch.substep_count, 1u) - 1u], target_path);
    PathWeights weights[FUSED_SUBSTEPS];
    vec2 root_acceleration[FUSED_SUBSTEPS];
    float parent_angle[FUSED_SUBSTEPS];  // after each substep of the batch
    vec2 parent_tip[FUSED_SUBSTEPS];     // at the start of each substep: the wind's sample point
#if ONE_BATCH
    {
        uint batch = range.begin;
        uint count = range.end > batch && !frozen ? min(uint(FUSED_SUBSTEPS), range.end - batch) : 0u;
#else
    for (uint batch = range.begin; batch < range.end;) {  // tested at its end too (common.glsl, "Loops")
        uint count = min(uint(FUSED_SUBSTEPS), range.end - batch);
#endif
        // (loops of a constant trip count, unrolled, the arrays' indices constants)
        for (uint k = 0u; k < uint(FUSED_SUBSTEPS); ++k) {
            if (k < count) {
                weights[k] = path_weights(alphas[first_alpha + batch + k], target_path);
                parent_tip[k] = cs.prev_root_position;  // the root at the last substep
                root_acceleration[k] = interpolate_root(cs, target, weights[k], moving && batch + k == 0u,
                                                        root_position, root_angle);
                watched = watch_root(watched, root_acceleration[k]);
                parent_angle[k] = root_angle;
            }
        }
#if ONE_BATCH
        // the dispatch's one batch: its walk also writes the output of a chain that ran no
        // substeps (a frozen one in its first dispatch), in place of write_output's own walk
        // after it (llvmpipe would run that loop's body once for every chain, none entering it)
        bool finishing = range.last || frozen;
#else
        bool finishing = ends_frame && batch + count >= range.end;
#endif
        OutputWalk walk;
        if (finishing) {
            if (ends_frame) {
                end_path(cs, target, last_weights);
            }
            walk = begin_output(chain, cs, target);
        }
        for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
            uint s = chain.first_segment + i;
            AngleSegmentRig rig = load_segment_rig(s);
            AngleSegmentState st = load_segment_state(s);
            float local_target = local_target_angle(s);
#if ONE_BATCH
            if (range.first) {  // this segment's part of the chain's first-frame work, as above
                teleport_segment(jump, local_target, st);
                if (moving) {
                    start_moving_segment(local_target, moving_inv_span, st);
                }
                if (resuming) {
                    resume_segment(resume_shift, st);
                }
            }
#endif
            ExactStep step = ExactStep(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
            if (exact_integrator) {
                step = load_exact_step(2u * s + schedule_index);
            }
            for (uint k = 0u; k < uint(FUSED_SUBSTEPS); ++k) {
                if (k < count) {
                    vec2 wind = vec2(0.0);
                    if (windy) {
                        parent_tip[k] += rig.length * vec2(cos(st.angle), sin(st.angle));
                        wind = wind_at(parent_tip[k], target.gust_phase, float(batch + k) * sch.substep);
                    }
                    parent_angle[k] = integrate_segment(rig, step, local_target, st, parent_angle[k], weights[k],
                                                        root_acceleration[k], chain.gravity, wind,
                                                        moving && batch + k == 0u);
                }
            }
            if (finishing) {
                if (ends_frame) {
                    end_segment_path(st, local_target, last_weights);
                }
                output_segment(walk, chain, i, st, rig.length);
            }
            store_segment_state(s, st);
            if (++i == chain.segment_count) {
                break;
            }
        }
        WROTE_VIEWED();  // the walk's stores seen by a later read through a view (buffer_views.glsl)
#if !ONE_BATCH
        batch += uint(FUSED_SUBSTEPS);
        if (batch >= range.end) {
            break;
        }
#endif
    }
    store_chain_state(c, cs);
    chain_output[c].root_acceleration = watched;
#if !ONE_BATCH
    if (range.last && !ends_frame) {
        write_output(chain, cs, target);
    }
#endif
}
