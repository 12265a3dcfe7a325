#version 430
#extension GL_ARB_gpu_shader_int64 : enable
// One frame of point chains (SPEC sections 2, 4 and 5): one invocation per chain walks its
// particles root to tip, for every substep of the frame, inside this one dispatch.
// Stages, named as in gpu_jiggle/sim/backends/reference/point_chains.py: shift_anchor, apply_teleport
// (begin_teleport, teleport_segment), start_moving (begin_moving, start_moving_segment), resume_path
// (begin_resume, resume_segment), contact_substeps (each substep as k sub-steps, SPEC 9),
// interpolate_pivot, follow_parent, integrate_particle, collide_near (sweep_particle,
// collide), limit_distance, enforce_length, limit_angle (point_limits.glsl), settle_contact
// (sweep_segment, keep_outside, collide), end_path (end_pivot_path, end_segment_path, in the
// output's walk), write_output.
#define LOCAL_SIZE 64
#define WORDS_AS_DOUBLES 0  // 1: the 64-bit words as doubles (words64.glsl)
#define BUFFER_IMAGES 0  // 1: some buffers read through image views of them (buffer_views.glsl)
// Feature switches (gpu_jiggle/sim/backends/gpu_point.py compiles a variant for what the chain set
// and the frame use): a switch at 0 leaves the feature's code out, for frames that cannot use
// it (no collider that keeps particles inside, no exact integrator, no wind, no segment with
// a max distance; ANGLE_LIMITS: a bit for each kind of angle limit some segment has, 1 cone,
// 2 hinge, 4 spherical; TURNING_PLANES: a plane's normal turns over the frame, placing it takes
// a normalisation and a double dot product per chain and substep). Mesa's llvmpipe runs a
// branch's body for all 8 lanes of a vector where any of them takes it (Mesa 22.3 even where
// none does: benchmarks/bench_branches.py), so code left in costs there; on a GPU it costs
// registers. The colliders of each shape come in slots (point_colliders.glsl): their count
// rounded up to 0, 1, 2, 4 or 8, or -1 for the frame's count, whatever it is.
#define SPHERE_SLOTS -1
#define CAPSULE_SLOTS -1
#define PLANE_SLOTS -1
#define INSIDE_COLLIDERS 1
#define TURNING_PLANES 1
#define EXACT_STEPS 1
#define WIND 1
#define ANGLE_LIMITS 7
#define MAX_DISTANCE 1
// 0 for a solver made with rotation_outputs=False (OPTION_NO_ROTATION_OUTPUTS): the output leaves
// out the segments' rotations, their world rotations' carried axes and their stores
// (point_output.glsl).
#define ROTATION_OUTPUTS 1
// The solver's target path kind (PATH_* in common.glsl) and damping frame (1 relative), fixed when
// it is made; -1: read from the frame's options (frame_path_kind, frame_relative_damping).
#define TARGET_PATH -1
#define RELATIVE_DAMPING -1
#define COLLIDERS ((SPHERE_SLOTS != 0 || CAPSULE_SLOTS != 0 || PLANE_SLOTS != 0) ? 1 : 0)
// SPEC 9, "Near and far chains" (gpu_jiggle/sim/backends/near_far.py): 0 runs every stage for
// every chain; 1 is the far pass, every chain without the contact stages, each marking its
// chain near (contact_near) where a stage could act; 2 is the near pass, every stage for the
// chains near_chains.comp listed, from the state the frame started with.
#define NEAR_FAR 0
// Frames whose substeps have no contact sub-steps (no colliders) walk each segment through a
// batch of up to FUSED_SUBSTEPS substeps with its state in registers (walk_batches; the host
// picks 2, 4 or 8 by the frame's substeps, variants.py fused_substeps); the others one substep at a
// time (walk_substeps). Either gives the same operations in the same order.
#define FUSED_SUBSTEPS 2
// The far pass walks them so too, in batches of 2 (gpu_point.py far_switches), its broad phase a
// box per substep (point_far.glsl).
// ONE_BATCH 1 where a dispatch's substeps fit in one batch (the host's FUSED_SUBSTEPS holds the
// frame's): the batch then runs without a loop around it, which llvmpipe would run once more
// than it goes round (docs/PERFORMANCE.md). 0: a loop over as many batches as the dispatch needs.
#define ONE_BATCH 0
#define SEGMENT_MAJOR ((SPHERE_SLOTS == 0 && CAPSULE_SLOTS == 0 && PLANE_SLOTS == 0) || NEAR_FAR == 1)
// The segments' state read through its image view (buffer_views.glsl) only where a segment's
// state is read once a dispatch, the batch's walk of a frame of one batch: where a kernel read
// it again after writing it (one substep at a time, loops of batches), the view changed the
// last bit of some outputs against the same kernel reading the buffer (measured: every byte
// of the state the same, so no stale read, but the compiled arithmetic differs), and the
// variants must give the same bits (docs/SPEC.md section 9). Those read the buffer.
#define SEGMENT_STATE_VIEW (BUFFER_IMAGES && SEGMENT_MAJOR && ONE_BATCH)

layout(local_size_x = LOCAL_SIZE) in;

#include "common.glsl"
#include "words64.glsl"
#include "buffer_views.glsl"
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
// The chain's own: SPEC 4, world influence: it feels the fraction `felt` of its pivot's
// motion; the rest carries it. v2: its velocity relative to that carriage (the carriage moving
// at `carried` times the pivot's path velocity) is what the spring and the damping see; v1
// kept the velocity as it was (felt 1 for the target, carried 0). Its gravity and wind phase.
float influence;
float felt;
float carried;
vec3 chain_gravity;
float chain_gust_phase;

// The chain's state (chain_state), held in registers from the dispatch's start to its end: read
// once by step_chain and written once, where every stage before read and wrote its fields.
PointChainState chain_held;

#include "point_teleport.glsl"
// FIRST_FRAME_IN_WALK (the one batch of a segment-major walk): the first dispatch's snap, start
// of moving and resumed paths take their chain's part in step_chain and each segment's part in
// walk_batches (llvmpipe would run each of their own walks once for every chain, none entering
// it); a frozen chain, a snap of a moving body, runs no substeps and writes its output in that
// walk too; keep_shape keeps a walk of its own. What the segments' parts take of the chain's:
#define FIRST_FRAME_IN_WALK (SEGMENT_MAJOR && ONE_BATCH)
bool frozen;
SegmentJump first_jump;
float moving_inv_span;
bool resuming;
float resume_shift;

// The state follows the chain's anchor, moved to this frame's pivot (SPEC 4.4).
void shift_anchor(vec3 shift) {
    chain_held.prev_pivot.xyz += shift;
    chain_held.last_pivot.xyz += shift;
}

#include "point_paths.glsl"
#if NEAR_FAR == 1
#include "point_far.glsl"
#endif
#include "point_step.glsl"
#include "point_output.glsl"

// SPEC 4, step 1 for a substep (or contact sub-step) ending at path fraction alpha, `elapsed`
// seconds into the frame at its start: the pivot on its path, and what the chain's segments
// share in it. pivot_velocity: the pivot's path velocity at the end of the substep before, then
// of this one; prev_pivot_velocity, a substep back, taken where a substep starts.
SubstepMotion move_pivot(float alpha, float elapsed, bool first_moving, bool first_sub,
                         inout vec3 pivot_velocity, inout vec3 prev_pivot_velocity) {
    SubstepMotion m;
    m.alpha = alpha;
    m.w = path_weights(alpha, target_path);
    m.carry_before = carried * pivot_velocity;
    if (first_sub) {
        prev_pivot_velocity = pivot_velocity;
    }
    m.moved = interpolate_pivot(m.w, m.pivot, pivot_velocity);
    m.carry = carried * pivot_velocity;
    m.elapsed = elapsed;
    m.first_moving = first_moving;
    m.first_sub = first_sub;
    return m;
}

#if SEGMENT_MAJOR
// The dispatch's substeps in batches of up to FUSED_SUBSTEPS: the pivot through the batch
// first, then each segment, root to tip, through all of the batch's substeps with its state
// in registers (in each substep it needs only its parent's step, which it replaces with its
// own for its child), so that a segment's state is read and written once per batch. Where
// the batch ends the frame, the same walk ends each segment's paths and writes its output
// (end_path, write_output); returns whether it did.
bool walk_batches(PointChainRig chain, dvec3 anchor, SubstepRange range, uint first_alpha, bool moving,
                  inout vec3 pivot_velocity, inout vec3 prev_pivot_velocity) {
    float h = sch.substep;
    SubstepMotion motion[FUSED_SUBSTEPS];
    ParentStep parent[FUSED_SUBSTEPS];
    Contact none = Contact(0u, dvec3(0.0), 1.0, PathWeights(1.0, 0.0, 0.0, 0.0), vec3(0.0), 0.0, h, vec3(0.0));
    bool ends_frame = range.last && sch.substep_count > 0u && !frozen;
    float last_alpha = alphas[first_alpha + max(sch.substep_count, 1u) - 1u];
    PathWeights last_weights = path_weights(last_alpha, target_path);
    bool finished = false;
#if NEAR_FAR == 1
    // chain_reach's reach and smallest particle radius, summed in the batch's walk (reach_segment,
    // root to tip) where a walk of their own would cost one more walk of the chain
    float largest_radius = 0.0;
    ContactBox boxes[FUSED_SUBSTEPS];
#endif
#if ONE_BATCH
    {
        uint batch = range.begin;
        uint count = range.end > batch && !frozen ? min(uint(FUSED_SUBSTEPS), range.end - batch) : 0u;
#else
    for (uint batch = range.begin; batch < range.end;) {  // tested at its end too (common.glsl, "Loops")
        uint count = min(uint(FUSED_SUBSTEPS), range.end - batch);
#endif
        for (uint k = 0u; k < uint(FUSED_SUBSTEPS); ++k) {  // constant trip counts: the arrays stay in registers
            if (k < count) {
                uint j = batch + k;
                motion[k] = move_pivot(alphas[first_alpha + j], float(j) * h, moving && j == 0u, true,
                                       pivot_velocity, prev_pivot_velocity);
                parent[k] = pivot_parent(motion[k]);
#if NEAR_FAR == 1
                boxes[k] = empty_box(motion[k].moved);
#endif
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
            chain_held.prev_pivot_rate = vec4(prev_pivot_velocity, 0.0);
            if (ends_frame) {
                end_pivot_path(last_weights);
            }
            walk = begin_output(chain, anchor);
            finished = true;
        }
        for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
            uint s = chain.first_segment + i;
            PointSegmentRig rig = load_segment_rig(s);
            PointSegmentState st = load_segment_state(s);
            vec3 offset = target_offset(s);
#if NEAR_FAR == 1
            reach_segment(i, rig, far_reach, largest_radius, far_smallest_radius);
#endif
#if FIRST_FRAME_IN_WALK
            vec4 rotation = joint_rotation(s);
            if (range.first) {  // this segment's part of the chain's first-frame work (keep_shape's done)
                if ((first_jump.flags & TELEPORT_MODE_MASK) == TELEPORT_SNAP) {
                    snap_segment(offset, rotation, st);
                }
                if (moving) {
                    start_moving_segment(offset, moving_inv_span, st);
                }
                if (resuming) {
                    resume_segment(resume_shift, st);
                }
            }
#endif
            for (uint k = 0u; k < uint(FUSED_SUBSTEPS); ++k) {
                if (k < count) {
#if NEAR_FAR == 1
                    far_box = boxes[k];  // step_segment adds the segment's balls to it
#endif
                    step_segment(s, i, rig, offset, motion[k], none, st, parent[k]);
#if NEAR_FAR == 1
                    boxes[k] = far_box;
#endif
                }
            }
            if (finishing) {
#if !FIRST_FRAME_IN_WALK
                vec4 rotation = joint_rotation(s);
#endif
                if (ends_frame) {
                    end_segment_path(offset, rotation, last_weights, last_alpha, st);
                }
                output_segment(walk, chain, i, s, rig, offset, rotation, anchor, st);
            }
            store_segment_state(s, st);  // whole: stores under an if run for every lane of its vector
            if (++i == chain.segment_count) {
                break;
            }
        }
        WROTE_VIEWED();  // the walk's stores seen by a later read through a view (buffer_views.glsl)
#if NEAR_FAR == 1
        far_reach += largest_radius;
        for (uint k = 0u; k < uint(FUSED_SUBSTEPS); ++k) {  // the batch's boxes into the frame's (point_far.glsl)
            if (k < count) {
                add_substep_box(boxes[k], motion[k].pivot, motion[k].moved);
            }
        }
        if (finishing) {
            add_output_box();
        }
#endif
#if !ONE_BATCH
        batch += uint(FUSED_SUBSTEPS);
        if (batch >= range.end) {
            break;
        }
#endif
    }
    return finished;
}
#else
// With colliders, the dispatch's substeps one at a time, each a walk of the chain's segments
// root to tip.
// SPEC 9, contact sub-steps: the first pass places the colliders at the substep's end and
// counts the sub-steps; where there is more than one it starts again with h/k. (One place that
// places the colliders: a second copy of that double-precision code doubled the kernel's
// compile time on llvmpipe.)
// One loop goes through every sub-step of every substep: llvmpipe runs a loop's body once more
// than the loop goes round where it tests only at its top (common.glsl, "Loops"), and a loop
// of sub-steps inside a loop of substeps so tested ran the walk (substeps + 1) x (sub-steps + 1)
// times, 6 where a frame of 2 substeps needs 2.
void walk_substeps(PointChainRig chain, dvec3 anchor, SubstepRange range, uint first_alpha, bool moving,
                   inout vec3 pivot_velocity, inout vec3 prev_pivot_velocity) {
    float reach, smallest_radius;  // SPEC 9, contact sub-steps
    chain_reach(chain, reach, smallest_radius);
    float h = sch.substep;
    float inv_path_step = sch.inv_path_step;
    uint j = range.begin;  // the substep
    uint sub = 0u;         // its sub-step, of k
    uint k = 1u;
    bool counted = false;  // whether substep j's sub-steps are counted
    float alpha_start, alpha_end, collider_begin, collider_end;
    while (j < range.end) {  // tested at its end too (common.glsl, "Loops")
        if (!counted) {
            substep_fractions(first_alpha, j, alpha_start, alpha_end, collider_begin, collider_end);
        }
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
        Contact contact = Contact(chain.collider_mask, anchor, collider_alpha,
                                  path_weights(collider_alpha, target_path),
                                  pivot_on_path(path_weights(alpha, target_path)), 0.0, sch.substep, vec3(0.0));
        place_colliders(contact);
        Contact start_contact = contact;
        start_contact.alpha = start_alpha;
        start_contact.w = path_weights(start_alpha, target_path);
        place_collider_moves(start_contact);
        if (!counted) {
            counted = true;
            k = contact_substeps(contact, contact.pivot - chain_held.prev_pivot.xyz, reach, smallest_radius);
            if (k > 1u) {
                continue;  // again from the first, now of h/k
            }
        }
        SubstepMotion m = move_pivot(alpha, elapsed, moving && j == 0u && sub == 0u, sub == 0u, pivot_velocity,
                                     prev_pivot_velocity);
        contact.carriage = m.carry;
        ParentStep parent = pivot_parent(m);
        for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
            uint s = chain.first_segment + i;
            PointSegmentState st = load_segment_state(s);
            step_segment(s, i, load_segment_rig(s), target_offset(s), m, contact, st, parent);
            store_segment_state(s, st);  // whole: what the step left alone as it was
            if (++i == chain.segment_count) {
                break;
            }
        }
        WROTE_VIEWED();  // the walk's stores seen by a later read through a view (buffer_views.glsl)
        ++sub;
        if (sub == k) {  // the substep's last sub-step: on to the next substep
            sch.substep = h;
            sch.inv_path_step = inv_path_step;
            exact_share = 1.0;
            ++j;
            sub = 0u;
            k = 1u;
            counted = false;
            if (j == range.end) {
                break;
            }
        }
    }
}
#endif

// One frame of chain c (its dispatch's range of substeps).
void step_chain(uint c) {
    PointChainRig chain = load_chain_rig(c);
    PointChainTarget target = load_chain_target(c);
    PointChainControl control = load_chain_control(c);
    sch = control.lod == LOD_HALF ? params.half_rate : params.full_rate;
    target_path = frame_path_kind(params.options);
    relative_damping = frame_relative_damping(params.options);
    exact_integrator = EXACT_STEPS != 0 && (params.options & OPTION_EXACT_INTEGRATOR) != 0u;
    schedule_index = control.lod == LOD_HALF ? 1u : 0u;
    dvec3 anchor = dvec3(target.anchor[0], target.anchor[1], target.anchor[2]);
    SubstepRange range = substep_range(params.substep_begin, params.substep_end, sch.substep_count);
    if (range.idle || (control.lod == LOD_FROZEN && !range.first)) {
        return;
    }
    chain_held = load_chain_state(c);
#if NEAR_FAR == 1
    far_anchor = anchor;  // the far pass places no collider: it tests the frame's bounds (point_far.glsl)
    far_mask = chain.collider_mask;
#else
    if (COLLIDERS != 0) {
        relate_colliders(anchor);
    }
#endif
    bool moving = false;
    frozen = control.lod == LOD_FROZEN;
    if (range.first) {
#if NEAR_FAR != 2  // (the far pass wrote it)
        // For drawing from the GPU: the pivot in the drawing origin's frame (double, then float).
        chain_output[c] = PointChainOutput(vec3(anchor - params.origin.xyz),
                                           control.lod);
#endif
        shift_anchor(vec3(target.anchor_shift[0], target.anchor_shift[1], target.anchor_shift[2]));
        // A teleport (a frozen chain sits on its animated targets, as a snap of a moving body every
        // frame, SPEC 5: back at a level that runs, it starts moving with them), a chain declared
        // moving starting to move (on the first frame after its snap that runs substeps: on the
        // snap frame its path starts at the pose just given and shows no speed yet), and the paths
        // resumed where the chain's own last substep ended (back from another level or a snap),
        // carried to this schedule's start. Their chain's parts run here; their segments' parts
        // in walks of their own, or in walk_batches' walk (FIRST_FRAME_IN_WALK, above).
        uint flags = frozen ? TELEPORT_SNAP | TELEPORT_MOVING : control.teleport;
        first_jump = begin_teleport(chain, flags);
#if FIRST_FRAME_IN_WALK
        if ((flags & TELEPORT_MODE_MASK) == TELEPORT_KEEP_SHAPE) {
            keep_shape_segments(chain, first_jump);
        }
#else
        if (flags != TELEPORT_NONE) {
            teleport_segments(chain, first_jump);
        }
        if (frozen) {
            chain_held.path_lag = next_path_lag(sch, chain_held.path_lag, true);
            write_output(chain, anchor, false, 1.0);
            store_chain_state(c, chain_held);
            return;
        }
#endif
        bool snapped_now = (flags & TELEPORT_MODE_MASK) == TELEPORT_SNAP;
        moving = !frozen && sch.substep_count > 0u && (chain_held.flags & CHAIN_START_MOVING) != 0u && !snapped_now;
        if (moving) {
            moving_inv_span = begin_moving();
#if !FIRST_FRAME_IN_WALK
            start_moving_segments(chain, moving_inv_span);
#endif
        }
        float lag = chain_held.path_lag;
        resuming = !frozen && sch.substep_count > 0u && !snapped_now && lag != sch.start_lag;
        if (resuming) {
            resume_shift = lag - sch.start_lag;
            begin_resume(resume_shift);
#if !FIRST_FRAME_IN_WALK
            resume_segments(chain, resume_shift);
#endif
        }
        chain_held.path_lag = next_path_lag(sch, lag, snapped_now);
    }
    uint first_alpha = min(control.lod, LOD_HALF) * params.alpha_stride;  // (frozen: the full rate's, unused)
    if (WIND != 0) {
        frame_wind = params.wind;
        frame_gust = params.gust;
        frame_gust_direction = params.gust_direction.xyz;
    }
    influence = chain.world_influence;
    felt = relative_damping ? influence : 1.0;
    carried = relative_damping ? 1.0 - influence : 0.0;
    chain_gravity = chain.gravity.xyz;
    chain_gust_phase = target.gust_phase;
    // The pivot's path velocity at the last substep (of this frame, where a dispatch before ran some).
    vec3 pivot_velocity = range.begin == 0u ? chain_held.pivot_rate.xyz
                                            : pivot_path_velocity(path_weights(alphas[first_alpha + range.begin - 1u], target_path));
    vec3 prev_pivot_velocity = chain_held.prev_pivot_rate.xyz;  // the pivot's path velocity a substep back
#if SEGMENT_MAJOR
    bool finished = walk_batches(chain, anchor, range, first_alpha, moving, pivot_velocity, prev_pivot_velocity);
#else
    bool finished = false;
    walk_substeps(chain, anchor, range, first_alpha, moving, pivot_velocity, prev_pivot_velocity);
#endif
    chain_held.prev_pivot_rate = vec4(prev_pivot_velocity, 0.0);
#if !(SEGMENT_MAJOR && ONE_BATCH)
    if (range.last && !finished) {
        // the paths end at the last substep, in the output's walk
        write_output(chain, anchor, sch.substep_count > 0u, alphas[first_alpha + max(sch.substep_count, 1u) - 1u]);
    }
#endif
    store_chain_state(c, chain_held);
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
#if NEAR_FAR == 1
    begin_frame_box();
#endif
    step_chain(c);
#if NEAR_FAR == 1
    // SPEC 9, "Near and far chains": the far pass runs no contact stage; where one could act
    // (point_far.glsl), it marks the chain near, for the near pass to run again
    chain_state_words[5u * c + 4u].z = frame_near() ? 1u : 0u;  // PointChainState.contact_near
#endif
}
