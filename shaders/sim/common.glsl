// Shared declarations for every gpu_jiggle compute shader: constants, wrap().
// Its numpy twin: gpu_jiggle/sim/backends/reference/common.py (the path weights, start_tangent).
// Source of the conventions: SPEC.md section 0.

const float PI = 3.14159265358979;
const float TWO_PI = 6.28318530717959;
const float INV_TWO_PI = 0.159154943091895;

// wrap(a) = a - 2π·floor((a + π) / 2π), a value in [-π, π). The division is written as a
// multiplication by 1/2π so that GLSL and the numpy reference round the same way.
float wrap_angle(float a) {
    return a - TWO_PI * floor((a + PI) * INV_TWO_PI);
}

// Loops. Mesa's llvmpipe runs a loop with its lanes under a mask: a `for` tests at its top,
// and where the last lane leaves there it runs the body once more with every lane masked off
// before it sees that none is left (a loop that no lane enters runs its body once). A loop
// that also tests at its end, `for (i = 0; i < n;) { ...; if (++i == n) break; }`, leaves as
// the last lane does: its body runs as many times as the most any lane needs, and not at all
// where no lane enters it (docs/PERFORMANCE.md, "Loops tested at their end"). The walks of a
// chain's segments and the loops over substeps are written so; loops of a constant trip count
// are unrolled and need nothing. The same operations in the same order either way.

// Teleport flag per chain (per frame, SPEC section 5): bits 0-1 the mode (none, snap onto the
// targets, or carry the chain's shape across the jump); TELEPORT_MOVING: the body is already
// moving (no kick: SPEC 5); TELEPORT_MIRROR: angle chains reflected about the vertical
// through their root.
#define TELEPORT_NONE 0u
#define TELEPORT_SNAP 1u
#define TELEPORT_KEEP_SHAPE 2u
#define TELEPORT_MODE_MASK 3u
#define TELEPORT_MOVING 4u
#define TELEPORT_MIRROR 8u
// Point chains, keep_shape: this pose and the last gave joint rotations, so the jump's turn is
// taken from the pivot joint's rotation (SPEC 5).
#define TELEPORT_TURN_FROM_JOINTS 16u

// Per chain, dynamic (chain state flags): the next frame that runs substeps starts the chain
// moving with its targets (set by TELEPORT_MOVING, cleared once used).
#define CHAIN_START_MOVING 1u

// Solver options (the frame buffer's options): the C1 target path (SPEC 2, v2; else v1's
// linear path) and damping relative to the target (SPEC 3 and 4, v2; else v1's world damping
// with the spring toward the end-of-substep target).
#define OPTION_HERMITE_PATH 1u
#define OPTION_RELATIVE_DAMPING 2u
// The exact integrator (SPEC 1) instead of the semi-implicit Euler step.
#define OPTION_EXACT_INTEGRATOR 4u
// With OPTION_HERMITE_PATH: the monotone path of SPEC 2 (target_path="monotone").
#define OPTION_MONOTONE_PATH 8u
// Point chains made with rotation_outputs=False: no rotations in the frame-time output (SPEC 9,
// "Frame-time output"; compiled in as ROTATION_OUTPUTS 0, point_output.glsl).
#define OPTION_NO_ROTATION_OUTPUTS 16u

// The target path's kind (SPEC 2): v1's linear path, the chord-tangent Hermite, the monotone path.
#define PATH_LINEAR 0u
#define PATH_HERMITE 1u
#define PATH_MONOTONE 2u

uint path_kind(uint options) {
    if ((options & OPTION_HERMITE_PATH) == 0u) {
        return PATH_LINEAR;
    }
    return (options & OPTION_MONOTONE_PATH) != 0u ? PATH_MONOTONE : PATH_HERMITE;
}

// The solver's target path and damping frame, fixed when it is made (Solver's target_path and
// damping_frame): compiled in where the including kernel defines TARGET_PATH (a PATH_* kind) and
// RELATIVE_DAMPING (0 or 1), so that the branches of the other kinds are left out (Mesa 22.3's
// llvmpipe runs a branch's body even where no lane takes it); at -1, read from the frame's
// options.
#ifndef TARGET_PATH
#define TARGET_PATH -1
#endif
#ifndef RELATIVE_DAMPING
#define RELATIVE_DAMPING -1
#endif

uint frame_path_kind(uint options) {
    return TARGET_PATH >= 0 ? uint(TARGET_PATH) : path_kind(options);
}

bool frame_relative_damping(uint options) {
    return RELATIVE_DAMPING >= 0 ? RELATIVE_DAMPING != 0 : (options & OPTION_RELATIVE_DAMPING) != 0u;
}

// Level of detail per chain (per frame): every frame at the substep h, every second frame at
// 2h with both frames' time (so the motion keeps its speed at half the cost), or frozen on
// its animated targets.
#define LOD_FULL 0u
#define LOD_HALF 1u
#define LOD_FROZEN 2u

// The substeps one level of detail runs in this frame (see gpu_jiggle.sim.clock.StepPlan).
// substep: h in seconds; inv_path_step: 1 / seconds of target path per substep; blend: σ of
// the frame-time output; gust_phase: the wind's time phase -2π·f_w·t at the first substep
// (each chain adds its own κ·anchor); collider_time_scale: this schedule's span over the
// full-rate span, which the colliders' interpolation covers (1 at full rate, about 2 at half
// rate); span: seconds of target path this frame (the Hermite path's time scale);
// inv_span: its reciprocal (0 when the span is 0); start_lag, end_lag: seconds from this
// schedule's clock's last substep (where its paths start) to the last frame's time, before
// and after this frame; frame_time: the frame's time in seconds.
struct Schedule {
    uint substep_count;
    float substep;
    float inv_path_step;
    float blend;
    float gust_phase;
    float collider_time_scale;
    float span;
    float inv_span;
    float start_lag;
    float end_lag;
    float frame_time;
    float pad0;
};

// SPEC 2, "Levels of detail": a chain's path_lag after this frame, from its value before
// (lag): 0 for a chain snapped this frame (frozen ones included: its paths start at this
// frame's pose); the clock's end_lag for one that ran substeps (resume_path has put it in
// step) or is in step with its level's clock; else it waits a frame longer.
float next_path_lag(Schedule sch, float lag, bool snapped) {
    if (snapped) {
        return 0.0;
    }
    return sch.substep_count > 0u || lag == sch.start_lag ? sch.end_lag : lag + sch.frame_time;
}

// 1 / the seconds from the paths' start of a chain whose path_lag is lag to this frame's
// pose (lag + frame_time; 0 for none), or the schedule's inv_span where the chain is in step.
float own_inv_span(Schedule sch, float lag) {
    if (lag == sch.start_lag) {
        return sch.inv_span;
    }
    float own = lag + sch.frame_time;
    return own > 0.0 ? 1.0 / own : 0.0;
}

// The target path of SPEC 2 at fraction alpha of the frame's span: every interpolated quantity
// is x(α) = x0 + p·d + q·m0s, with d = x1 - x0 (angles: wrap(x1 - x0)) and m0s = span·m0 (m0:
// its path velocity per second of target path, kept per quantity), and its velocity along the
// path x'(α)/span = (dp·d + dq·m0s)/span. Hermite and monotone (v2): p = α²(2 - α),
// q = α(1 - α)², the cubic whose end velocity is d/span (the monotone path's m0s limited first
// by start_tangent); linear (v1): p = α, q = 0.
struct PathWeights {
    float p;
    float q;
    float dp;
    float dq;
};

PathWeights path_weights(float alpha, uint path) {
    if (path == PATH_LINEAR) {
        return PathWeights(alpha, 0.0, 1.0, 0.0);
    }
    float u = 1.0 - alpha;
    return PathWeights(alpha * alpha * (2.0 - alpha), alpha * u * u, alpha * (4.0 - 3.0 * alpha),
                       u * (1.0 - 3.0 * alpha));
}

// The start velocity m0s (span units) the monotone path takes toward a move d this frame
// (SPEC 2): its part along d clamped to [0, 3]·d (none where the motion stopped or turned
// back, so the path stays between x0 and x1 along d: Fritsch & Carlson 1980, "Monotone
// piecewise cubic interpolation", SIAM J. Numer. Anal. 17(2)), its part across d no longer
// than 3|d|; continuous in d and m0s. Other paths keep m0s.
float start_tangent(float d, float m0s, uint path) {
    if (path != PATH_MONOTONE) {
        return m0s;
    }
    if (d * m0s <= 0.0) {
        return 0.0;
    }
    return abs(m0s) > 3.0 * abs(d) ? 3.0 * d : m0s;
}

vec2 start_tangent(vec2 d, vec2 m0s, uint path) {
    if (path != PATH_MONOTONE) {
        return m0s;
    }
    float dd = dot(d, d);
    if (dd == 0.0) {
        return vec2(0.0);
    }
    float along = dot(m0s, d) / dd;
    vec2 across = m0s - along * d;
    float aa = dot(across, across);
    if (aa > 9.0 * dd) {
        across = across * sqrt(9.0 * dd / aa);
    }
    return clamp(along, 0.0, 3.0) * d + across;
}

vec3 start_tangent(vec3 d, vec3 m0s, uint path) {
    if (path != PATH_MONOTONE) {
        return m0s;
    }
    float dd = dot(d, d);
    if (dd == 0.0) {
        return vec3(0.0);
    }
    float along = dot(m0s, d) / dd;
    vec3 across = m0s - along * d;
    float aa = dot(across, across);
    if (aa > 9.0 * dd) {
        across = across * sqrt(9.0 * dd / aa);
    }
    return clamp(along, 0.0, 3.0) * d + across;
}

// The exact step of one damped spring over one substep (SPEC section 1; the coefficients come
// from gpu_jiggle/sim/integrator.py in float64): the offset d from the target (moving at its
// path velocity) and its rate d' change by d_d·d + d_v·d' + d_b·b and v_d·d + v_v·d' + v_b·b,
// b the external acceleration held over the substep. Two per segment: 2s at the substep h,
// 2s + 1 at the half rate's 2h.
struct ExactStep {
    float d_d;
    float d_v;
    float d_b;
    float v_d;
    float v_v;
    float v_b;
    float pad0;
    float pad1;
};

// An ExactStep from its two vec4s (as a kind's load_exact_step reads them).
ExactStep exact_step_of(vec4 a, vec4 b) {
    return ExactStep(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}

// The substeps this dispatch runs (gpu_jiggle/sim/layouts.py ALL_SUBSTEPS): a frame may run
// over several dispatches, each the substeps begin <= j < end of every schedule. The first
// dispatch (begin 0) also shifts the anchor, teleports and starts chains moving; the one that
// reaches a chain's last substep (the first, in a frame without substeps) ends its path and
// writes its output; a chain whose substeps all ran in earlier dispatches is idle.
struct SubstepRange {
    uint begin;
    uint end;
    bool first;
    bool last;
    bool idle;
};

SubstepRange substep_range(uint begin, uint end, uint count) {
    bool first = begin == 0u;
    bool idle = !first && begin >= count;
    return SubstepRange(begin, min(end, count), first, end >= count && !idle, idle);
}
