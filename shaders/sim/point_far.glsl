// SPEC 9, "Near and far chains": the far pass's broad phase (NEAR_FAR 1). The far pass walks
// each segment through a batch of substeps with its state in registers (walk_batches), so it
// does not place the colliders for every particle. Each segment instead adds the balls that
// the contact broad phase (contact_possible) tests for it in each substep to that substep's
// box (ContactBox). After the batch the colliders are placed for each substep as the near pass
// places them, and the chain is near where a box comes within reach of one (box_near) or the
// colliders' motion asks for contact sub-steps. A box holds every ball the broad phase would
// test, so a chain the box finds clear of every collider is one the broad phase finds clear
// everywhere: its contact stages are no-ops. Included by point_chains.comp after its globals
// and point_paths.glsl.

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

// Whether the placed colliders (place_colliders, place_collider_moves) come near the box of
// one substep: a sphere within reach of the balls' box; a capsule within reach by every lower
// bound of its distance from the box (their boxes' gap, cross_gap, the ball about the box's
// centre, the capsule about its longest axis, the box's side facing it); a plane within ρ of
// the particles' box (the plane stages look at the particle alone).
bool box_near(ContactBox box) {
    if (always_near) {
        return true;
    }
    float rho = box.radius;
    vec3 lo = box.lo;
    vec3 hi = box.hi;
    vec3 half_size = 0.5 * (hi - lo);
    vec3 centre = lo + half_size;
    float half_diagonal = length(half_size);
    float extent = length(max(abs(lo), abs(hi))) + 2.0 * half_diagonal;
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
        vec4 s = placed_sphere[k];
        float reach = s.w + rho + length(placed_sphere_move[k]);
        if (sphere_keeps_out[k] && !box_clear(length(s.xyz - clamp(s.xyz, lo, hi)), reach, extent)) {
            return true;
        }
    }
    for (uint k = 0u; k < CAPSULE_LOOP; ++k) {
        if (!capsule_slot(k)) {
            continue;
        }
        vec4 a = placed_capsule_a[k];
        vec3 b = placed_capsule_b[k];
        float reach = a.w + rho + max(length(placed_capsule_move_a[k]), length(placed_capsule_move_b[k]));
        vec3 gaps = max(min(a.xyz, b) - hi, lo - max(a.xyz, b));
        float gap = max(max(max(gaps.x, gaps.y), gaps.z), cross_gap(a.xyz, b, centre, half_size));
        vec3 u = b - a.xyz;
        vec3 q = closest_on_segment(a.xyz, b, centre);
        float to_centre = length(centre - q) - half_diagonal;
        // across the segment (it projects to a point there) towards the box's point nearest to
        // it, found by two rounds of nearest points: the box's extent that way
        q = closest_on_segment(a.xyz, b, clamp(q, lo, hi));
        vec3 across = clamp(q, lo, hi) - q;
        across = across - dot(across, u) / max(dot(u, u), 1e-30) * u;
        float across_length = length(across);
        float to_side = across_length > 0.0 ? (dot(across, centre - q) - dot(abs(across), half_size)) / across_length
                                            : -1.0;
        vec3 q_axis = closest_to_segment(a.xyz, b, axis_start, axis_end);
        float to_axis = length(q_axis - closest_on_segment(axis_start, axis_end, q_axis)) - axis_radius;
        if (capsule_keeps_out[k] && !box_clear(max(max(gap, to_centre), max(to_axis, to_side)), reach, extent)) {
            return true;
        }
    }
    if (PLANE_SLOTS == 0) {
        return false;
    }
    vec3 x_half = 0.5 * (box.x_hi - box.x_lo);
    vec3 x_centre = box.x_lo + x_half;
    float x_extent = length(max(abs(box.x_lo), abs(box.x_hi)));
    for (uint k = 0u; k < PLANE_LOOP; ++k) {
        if (!plane_slot(k)) {
            continue;
        }
        vec4 p = placed_plane[k];
        float lowest = dot(p.xyz, x_centre) - dot(abs(p.xyz), x_half) - p.w;
        if (plane_applies[k] && !box_clear(lowest, rho, x_extent + abs(p.w))) {
            return true;
        }
    }
    return false;
}

// The far pass, after the batch that held substep j (its pivot on its path, relative to the
// anchor, and `moved`, the pivot's move over it; `box`, the chain's), places the colliders as
// walk_substeps does: whether the chain is near in it (contact sub-steps wanted, or its box near
// a collider). reach and smallest_radius: chain_reach's.
bool near_in_substep(PointChainRig chain, dvec3 anchor, uint first_alpha, uint j, vec3 pivot, vec3 moved,
                     ContactBox box, float reach, float smallest_radius) {
    float alpha_start, alpha_end, collider_begin, collider_end;
    substep_fractions(first_alpha, j, alpha_start, alpha_end, collider_begin, collider_end);
    Contact contact = Contact(chain.collider_mask, anchor, collider_end, path_weights(collider_end, target_path),
                              pivot, 0.0, sch.substep, vec3(0.0));
    place_colliders(contact);
    Contact start_contact = contact;
    start_contact.alpha = collider_begin;
    start_contact.w = path_weights(collider_begin, target_path);
    place_collider_moves(start_contact);
    return contact_substeps(contact, moved, reach, smallest_radius) > 1u || box_near(box);
}
