// SPEC 9, "Near and far chains": the far pass's broad phase (NEAR_FAR 1). The far pass walks
// each segment through a batch of substeps with its state in registers (walk_batches). Each
// segment adds the balls that the contact broad phase (contact_possible) tests for it in each
// substep to that substep's box (ContactBox), and the frame-time output's segments to the
// output's box; after the walk the boxes, moved into the anchor's frame, make the chain's box
// for the frame (frame_box). Once per chain and frame it is tested against each collider's
// bound over the frame (the host's, gpu_jiggle/sim/collider_bounds.py: every placement of the
// collider in any substep, with its move, lies inside it): the chain is near where a bound
// comes within reach of the box, or where a collider may move fast enough for contact
// sub-steps and its bound comes within the chain's reach of the pivot's path. A box holds
// every ball the broad phase would test, and a bound every collider it would test them
// against, so a chain found clear is one the broad phase finds clear in every substep: its
// contact stages are no-ops. Included by point_chains.comp after its globals and
// point_paths.glsl.

// A chain in one substep, relative to the pivot: the box (`lo`, `hi`) of the broad phase's
// balls: collide_near's about each particle after the spring, of its travel over the substep
// as radius; settle_contact's about the middle of each segment, of half its length and its
// ends' travel (its base's is its parent's or the pivot's move, `base_travel` as the walk
// reaches it). `x_lo`, `x_hi`: the box of the particles alone (planes look at the particle);
// `radius`: the largest particle radius ρ.
struct ContactBox {
    vec3 lo;
    vec3 hi;
    vec3 x_lo;
    vec3 x_hi;
    float radius;
    float base_travel;
};

// The box of the substep the segment walk is in (walk_batches keeps one per substep).
ContactBox far_box;

// The box of a substep whose pivot moved by `moved` before any segment is added.
ContactBox empty_box(vec3 moved) {
    vec3 far = vec3(uintBitsToFloat(0x7f800000u));
    return ContactBox(far, -far, far, -far, 0.0, length(moved));
}

// The frame-time output's box (output_segment adds push_out_of_frame's balls to it).
ContactBox output_box;

void box_ball(inout ContactBox box, vec3 centre, float radius) {
    box.lo = min(box.lo, centre - radius);
    box.hi = max(box.hi, centre + radius);
}

void box_particle(inout ContactBox box, vec3 x) {
    if (PLANE_SLOTS != 0) {
        box.x_lo = min(box.x_lo, x);
        box.x_hi = max(box.x_hi, x);
    }
}

// collide_near's ball: the particle x after the spring, `start` where the substep began.
void bound_particle(vec3 start, vec3 x) {
    box_ball(far_box, x, length(x - start));
    box_particle(far_box, x);
}

// settle_contact's ball: the segment from base to x, `start` where x began, its particle
// radius rho.
void bound_segment(vec3 start, vec3 base, vec3 x, float rho) {
    float travel = length(x - start);
    box_ball(far_box, 0.5 * (base + x), 0.5 * length(x - base) + max(far_box.base_travel, travel));
    box_particle(far_box, x);
    far_box.radius = max(far_box.radius, rho);
    far_box.base_travel = travel;
}

// push_out_of_frame's ball: the output segment from base to x (nothing moves at frame time).
void bound_output(vec3 base, vec3 x, float rho) {
    box_ball(output_box, 0.5 * (base + x), 0.5 * length(x - base));
    box_particle(output_box, x);
    output_box.radius = max(output_box.radius, rho);
}

// Whether a ball inside a box whose points are at most `extent` from the pivot and each other
// (its corner's distance plus its diagonal) is clear of a collider `distance` away from the
// box, with `reach` its radius with ρ and its move: a margin of 4e-3 of those covers the broad
// phase's own (1e-3 of the ball's reach, distance and place) and float32 rounding.
bool box_clear(float distance, float reach, float extent) {
    return distance > reach + 4e-3 * (reach + extent);
}

// How far segment [a, b] lies from the box about `centre` of half sizes `half_size` along the
// three axes across both the segment and an axis of the box (with the box's own axes, the
// separating axes of a segment and a box): the largest gap between their extents along one.
// A lower bound of their distance; 0 or less where none separates them.
float cross_gap(vec3 a, vec3 b, vec3 centre, vec3 half_size) {
    vec3 u = b - a;
    float gap = -1.0;
    for (int i = 0; i < 3; ++i) {
        vec3 n = i == 0 ? vec3(0.0, u.z, -u.y) : (i == 1 ? vec3(-u.z, 0.0, u.x) : vec3(u.y, -u.x, 0.0));
        float ln = length(n);
        if (ln > 0.0) {
            n = n / ln;
            float box_centre = dot(n, centre);
            float box_half = dot(abs(n), half_size);
            float along_a = dot(n, a);  // the segment lies across n: a and b project alike
            gap = max(gap, abs(along_a - box_centre) - box_half);
        }
    }
    return gap;
}

// The chain's frame in the anchor's frame (begin_frame_box, add_substep_box, add_output_box):
// its box over every substep and the output; the box of the pivot's path's middles (where
// contact_substeps centres the ball that holds the chain in a substep) and the pivot's longest
// move over a substep; the chain's reach (chain_reach's, summed in the walk) and smallest
// particle radius; its anchor and collider mask.
ContactBox frame_box;
vec3 middles_lo;
vec3 middles_hi;
float longest_move;
float far_reach;
float far_smallest_radius;
dvec3 far_anchor;
uint far_mask;

void begin_frame_box() {
    frame_box = empty_box(vec3(0.0));
    middles_lo = frame_box.lo;
    middles_hi = frame_box.hi;
    longest_move = 0.0;
    far_reach = 0.0;
    far_smallest_radius = 0.0;
    far_anchor = dvec3(0.0);
    far_mask = 0u;
}

void add_box(ContactBox box, vec3 shift) {
    frame_box.lo = min(frame_box.lo, box.lo + shift);
    frame_box.hi = max(frame_box.hi, box.hi + shift);
    if (PLANE_SLOTS != 0) {
        frame_box.x_lo = min(frame_box.x_lo, box.x_lo + shift);
        frame_box.x_hi = max(frame_box.x_hi, box.x_hi + shift);
    }
    frame_box.radius = max(frame_box.radius, box.radius);
}

// A substep's box (relative to its pivot, at `pivot` relative to the anchor, which moved by
// `moved` over the substep).
void add_substep_box(ContactBox box, vec3 pivot, vec3 moved) {
    add_box(box, pivot);
    vec3 middle = pivot - 0.5 * moved;
    middles_lo = min(middles_lo, middle);
    middles_hi = max(middles_hi, middle);
    longest_move = max(longest_move, length(moved));
}

// The output's box (relative to this frame's pivot, the anchor).
void add_output_box() {
    add_box(output_box, vec3(0.0));
}

// Whether each collider's bound over the frame (relative to the anchor) comes near the box,
// of largest particle radius ρ (box.radius), the chain colliding with the groups of `mask`: a
// sphere's ball within reach of the box; a capsule within reach by every lower bound of its
// distance from the box (their boxes' gap, cross_gap, the ball about the box's centre, the
// capsule about its longest axis, the box's side facing it); a plane within ρ of the
// particles' box (the plane stages look at the particle alone). The box's extent counts four
// half diagonals: a substep's box about its own pivot, which lies inside this one, is no
// further out.
bool box_near(ContactBox box, dvec3 anchor, uint mask) {
    float rho = box.radius;
    vec3 lo = box.lo;
    vec3 hi = box.hi;
    vec3 half_size = 0.5 * (hi - lo);
    vec3 centre = lo + half_size;
    float half_diagonal = length(half_size);
    float extent = length(max(abs(lo), abs(hi))) + 4.0 * half_diagonal;
    // the box inside a capsule: its longest axis through the centre, the rest as the radius
    vec3 axis = half_size.x >= max(half_size.y, half_size.z) ? vec3(half_size.x, 0.0, 0.0)
              : (half_size.y >= half_size.z ? vec3(0.0, half_size.y, 0.0) : vec3(0.0, 0.0, half_size.z));
    vec3 axis_start = centre - axis;
    vec3 axis_end = centre + axis;
    float axis_radius = length(half_size - axis);
    for (uint k = 0u; k < SPHERE_LOOP; ++k) {
        if (!sphere_slot(k)) {
            continue;
        }
        vec3 s = vec3(spheres[k].frame_bound.xyz - anchor);
        float reach = float(spheres[k].frame_bound.w) + rho;
        if (keeps_out(mask, spheres[k].group, spheres[k].inside)
            && !box_clear(length(s - clamp(s, lo, hi)), reach, extent)) {
            return true;
        }
    }
    for (uint k = 0u; k < CAPSULE_LOOP; ++k) {
        if (!capsule_slot(k)) {
            continue;
        }
        vec3 a = vec3(capsules[k].frame_a.xyz - anchor);
        vec3 b = vec3(capsules[k].frame_b.xyz - anchor);
        float reach = float(capsules[k].frame_a.w) + rho;
        vec3 gaps = max(min(a, b) - hi, lo - max(a, b));
        float gap = max(max(max(gaps.x, gaps.y), gaps.z), cross_gap(a, b, centre, half_size));
        vec3 u = b - a;
        vec3 q = closest_on_segment(a, b, centre);
        float to_centre = length(centre - q) - half_diagonal;
        // across the segment (it projects to a point there) towards the box's point nearest to
        // it, found by two rounds of nearest points: the box's extent that way
        q = closest_on_segment(a, b, clamp(q, lo, hi));
        vec3 across = clamp(q, lo, hi) - q;
        across = across - dot(across, u) / max(dot(u, u), 1e-30) * u;
        float across_length = length(across);
        float to_side = across_length > 0.0 ? (dot(across, centre - q) - dot(abs(across), half_size)) / across_length
                                            : -1.0;
        vec3 q_axis = closest_to_segment(a, b, axis_start, axis_end);
        float to_axis = length(q_axis - closest_on_segment(axis_start, axis_end, q_axis)) - axis_radius;
        if (keeps_out(mask, capsules[k].group, capsules[k].inside)
            && !box_clear(max(max(gap, to_centre), max(to_axis, to_side)), reach, extent)) {
            return true;
        }
    }
    if (PLANE_SLOTS == 0) {
        return false;
    }
    vec3 x_half = 0.5 * (box.x_hi - box.x_lo);
    vec3 x_centre = box.x_lo + x_half;
    for (uint k = 0u; k < PLANE_LOOP; ++k) {
        if (!plane_slot(k)) {
            continue;
        }
        vec3 n = normalize(vec3(planes[k].start.xyz));  // (it does not turn: TURNING_PLANES runs one pass)
        float offset = float(planes[k].frame_offset - dot(dvec3(n), anchor));
        float lowest = dot(n, x_centre) - dot(abs(n), x_half) - offset;
        if (in_mask(mask, planes[k].group) && !box_clear(lowest, rho, extent + abs(offset))) {
            return true;
        }
    }
    return false;
}

// contact_substeps takes more than one sub-step only for a collider whose move relative to the
// pivot over a substep passes CONTACT_SUBSTEP_TRIGGER times its radius with ρ (the chain's
// smallest): no collider does where its longest move and the pivot's together stay under
// FAST_SHARE of that, with its smallest radius. The spare 1e-3 covers float32 rounding: a
// collider whose contact sub-steps the test could decide is within the chain's reach, where
// its placement's rounding is of the order of 1e-7 of its radius, the reach and the moves.
#define FAST_SHARE (1.0 - 1e-3)

bool may_move_fast(uint mask, uint group, uint inside, float frame_move, float frame_radius) {
    return keeps_out(mask, group, inside)
           && frame_move + longest_move >= FAST_SHARE * CONTACT_SUBSTEP_TRIGGER * (frame_radius + far_smallest_radius);
}

// Whether the chain (colliding with the groups of far_mask, its anchor far_anchor) is near a
// collider this frame: its frame box near a collider's bound; or a collider that may move fast
// (may_move_fast) within the chain's reach of the pivot's path (contact_substeps' ball about
// the middle of each substep's path, of the reach and half the move as radius: the middles'
// box grown by the largest, added to the box the bounds are tested against).
bool frame_near() {
    uint mask = far_mask;
    if (frame_box.lo.x > frame_box.hi.x) {  // nothing walked: no substep and no output
        return false;
    }
    bool fast = false;
    for (uint k = 0u; k < SPHERE_LOOP; ++k) {
        if (sphere_slot(k)) {
            fast = fast || may_move_fast(mask, spheres[k].group, spheres[k].inside, spheres[k].frame_move,
                                         spheres[k].frame_radius);
        }
    }
    for (uint k = 0u; k < CAPSULE_LOOP; ++k) {
        if (capsule_slot(k)) {
            fast = fast || may_move_fast(mask, capsules[k].group, capsules[k].inside, capsules[k].frame_move,
                                         capsules[k].frame_radius);
        }
    }
    ContactBox box = frame_box;
    float grow = far_reach + 0.5 * longest_move;
    box.lo = fast ? min(box.lo, middles_lo - grow) : box.lo;
    box.hi = fast ? max(box.hi, middles_hi + grow) : box.hi;
    return box_near(box, far_anchor, mask);
}
