// Swept contact for the point-chain kernel (SPEC 9, "Swept contact"): a particle's, or a
// segment's nearest point's, straight path over the substep in the frame of each collider it
// comes near, stopped where it enters (sweep_particle, sweep_segment), and how many contact
// sub-steps a chain's substep takes (contact_substeps). Names as in
// gpu_jiggle/sim/backends/reference/point_sweep.py. Include after point_colliders.glsl and
// point_geometry.glsl, before point_contact.glsl.

// SPEC 9, swept contact, in the frame of a collider that moved by `move` over the substep h
// and ends as the sphere (q, r): a point whose path from `start` (already in that frame) to x
// (longer than r/2) enters the sphere, having started outside it or on it, ends on the near side of the tangent plane at the
// point where it entered, and its velocity into the collider, relative to the collider's own
// (move/h), is removed. The first root of |start - q + τ·(x - start)| = r is taken as
// c / (-b + √(b² - a·c)): no cancellation, no division by a path of no length. True if it acted.
bool sweep_past(vec3 q, float r, vec3 start, vec3 rate, inout vec3 x, inout vec3 v) {
    vec3 e = start - q;
    vec3 d = x - start;
    float b = dot(e, d);
    float c = dot(e, e) - r * r;
    float disc = b * b - dot(d, d) * c;
    // Only a path longer than half the radius (shorter ones cannot pass through; a particle
    // resting on the surface stays the particle stage's, never decided by rounding), started
    // outside or on the surface (to 1e-3 of r).
    bool fast = dot(d, d) > (0.5 * r) * (0.5 * r);
    if (!fast || c < -2e-3 * r * r || b >= 0.0 || disc <= 0.0) {
        return false;
    }
    float tau = c / (-b + sqrt(disc));
    if (tau > 1.0) {
        return false;
    }
    vec3 n = e + max(tau, 0.0) * d;
    float ln = length(n);
    n = ln > 0.0 ? n / ln : n;
    vec3 xq = x - q;
    float depth = r - dot(xq, n);
    // An end inside on the side it came in from is left to the particle stage's push-out (so a
    // particle resting on the surface is never decided by rounding between the two).
    if (depth <= 0.0 || (dot(xq, xq) < r * r && dot(xq, n) >= 0.0)) {
        return false;
    }
    x = x + depth * n;
    v = v - min(dot(v - rate, n), 0.0) * n;
    return true;
}

// SPEC 9, swept contact of a particle that moved from `start` to x over the substep: spheres,
// then capsules (a capsule as the sphere about the point of its axis nearest the path, which
// the path enters exactly when it enters the capsule).
void sweep_particle(Contact ct, vec3 start, inout vec3 x, inout vec3 v) {
    for (uint k = 0u; k < SPHERE_LOOP; ++k) {
        if (!sphere_slot(k)) {
            continue;
        }
        if (keeps_out(ct, spheres[k].group, spheres[k].inside)) {
            vec4 s = sphere_at(k, ct);
            vec3 move = sphere_move(k, ct);
            sweep_past(s.xyz, s.w + ct.radius, start + move, collider_rate(ct, move), x, v);
        }
    }
    for (uint k = 0u; k < CAPSULE_LOOP; ++k) {
        if (!capsule_slot(k)) {
            continue;
        }
        if (keeps_out(ct, capsules[k].group, capsules[k].inside)) {
            vec3 a, b, move_a, move_b;
            float r;
            capsule_at(k, ct, a, b, r);
            capsule_move(k, ct, move_a, move_b);
            float f = segment_fraction(a - move_a, b - move_b, start);
            vec3 move = move_a + f * (move_b - move_a);
            vec3 moved_start = start + move;
            sweep_past(closest_to_segment(a, b, moved_start, x), r + ct.radius, moved_start, collider_rate(ct, move), x,
                       v);
        }
    }
}

// SPEC 9, swept contact of a segment, in the collider's frame (it ends as the sphere (q, r),
// having moved by `move`): the segment's point that passes nearest q (the one nearest q at the
// middle of the substep, at fraction f) is swept as a particle from base_start + f·(start -
// base_start); where it went through, the segment turns about its base onto the side it came
// from (towards x moved by the point's push-out over f), its length kept, and the tip's velocity
// into the collider, relative to the collider's, is removed.
void sweep_segment_past(vec3 q, float r, vec3 base_start, vec3 start, vec3 rate, vec3 base, inout vec3 x,
                        inout vec3 v) {
    vec3 mid_base = 0.5 * (base_start + base);
    vec3 mid_x = 0.5 * (start + x);
    float f = max(segment_fraction(mid_base, mid_x, q), 1e-3);
    vec3 point = base + f * (x - base);
    vec3 swept_point = point;
    vec3 unused = vec3(0.0);
    if (!sweep_past(q, r, base_start + f * (start - base_start), rate, swept_point, unused)) {
        return;
    }
    vec3 u = x + (swept_point - point) / f - base;
    float lu = length(x - base);
    float l = length(u);
    vec3 turned = base + (l > 0.0 ? u / l : u) * lu;
    vec3 push = swept_point - point;
    float lp = length(push);
    vec3 n = lp > 0.0 ? push / lp : push;
    v = v - min(dot(v - rate, n), 0.0) * n;
    x = turned;
}

// SPEC 9, swept contact of the segment from base to x (from base_start to start at the start of
// the substep): spheres, then capsules (each as the sphere about the point of its axis nearest
// the segment, moved as that point moved).
void sweep_segment(Contact ct, vec3 base_start, vec3 start, vec3 base, inout vec3 x, inout vec3 v) {
    for (uint k = 0u; k < SPHERE_LOOP; ++k) {
        if (!sphere_slot(k)) {
            continue;
        }
        if (keeps_out(ct, spheres[k].group, spheres[k].inside)) {
            vec4 s = sphere_at(k, ct);
            vec3 move = sphere_move(k, ct);
            sweep_segment_past(s.xyz, s.w + ct.radius, base_start + move, start + move, collider_rate(ct, move), base, x,
                               v);
        }
    }
    for (uint k = 0u; k < CAPSULE_LOOP; ++k) {
        if (!capsule_slot(k)) {
            continue;
        }
        if (keeps_out(ct, capsules[k].group, capsules[k].inside)) {
            vec3 a, b, move_a, move_b;
            float r;
            capsule_at(k, ct, a, b, r);
            capsule_move(k, ct, move_a, move_b);
            float f = segment_fraction(a - move_a, b - move_b, 0.5 * (base_start + start));
            vec3 move = move_a + f * (move_b - move_a);
            vec3 q = closest_to_segment(a, b, base, x);
            sweep_segment_past(q, r + ct.radius, base_start + move, start + move, collider_rate(ct, move), base, x, v);
        }
    }
}

// One segment of chain_reach's walk, root to tip (i: its index in the chain): its rest length
// added to `reach`, its particle radius to the largest and smallest so far, each starting
// afresh at the root (the far pass calls it from the walk it runs anyway, walk_batches, which
// walks the chain once per batch).
void reach_segment(uint i, PointSegmentRig rig, inout float reach, inout float largest_radius,
                   inout float smallest_radius) {
    reach = i == 0u ? rig.rest_length : reach + rig.rest_length;
    largest_radius = i == 0u ? rig.particle_radius : max(largest_radius, rig.particle_radius);
    smallest_radius = i == 0u ? rig.particle_radius : min(smallest_radius, rig.particle_radius);
}

// SPEC 9, contact sub-steps: the chain's reach (its rest lengths root to tip, then its largest
// particle radius: it lies within that of its pivot) and its smallest particle radius.
void chain_reach(PointChainRig chain, out float reach, out float smallest_radius) {
    reach = 0.0;
    smallest_radius = 0.0;
    float largest_radius = 0.0;
    for (uint i = 0u; i < chain.segment_count;) {  // tested at its end too (common.glsl, "Loops")
        reach_segment(i, load_segment_rig(chain.first_segment + i), reach, largest_radius, smallest_radius);
        if (++i == chain.segment_count) {
            break;
        }
    }
    reach += largest_radius;
}

// SPEC 9, contact sub-steps (as contact_substeps in gpu_jiggle/sim/backends/reference/point_sweep.py):
// how many equal sub-steps the chain's substep takes, from the colliders placed for the contact
// ct at the substep's end with their moves (place_colliders, place_collider_moves), the pivot's
// move over the substep, the chain's reach (chain_reach) and its smallest particle radius ρ. A
// sphere or capsule counts where its move relative to the pivot is over CONTACT_SUBSTEP_TRIGGER
// times its radius with ρ (the regime where it can pass through the chain between two substeps;
// tested first: it is cheap, and false for nearly every chain and substep) and its path passes
// within its radius of the ball about the middle of the pivot's path that holds the chain over
// the substep: then ceil(|move| / (fraction·(r + ρ))), the largest over the colliders, at most
// the frame's contact_substep_cap.
#define CONTACT_SUBSTEP_TRIGGER 0.6
#define CONTACT_STEP_FRACTION (1.0 / 2.0)

bool moves_fast(float relative, float radius, float rho) {
    return relative > CONTACT_SUBSTEP_TRIGGER * (radius + rho);
}

float substeps_for(bool applies, float distance, float radius, float relative, float ball, float rho) {
    float size = CONTACT_STEP_FRACTION * (radius + rho);
    return applies && size > 0.0 && distance <= ball + radius ? ceil(relative / size) : 1.0;
}

uint contact_substeps(Contact ct, vec3 moved, float reach, float rho) {
    float need = 1.0;
    vec3 middle = -0.5 * moved;
    float ball = reach + 0.5 * length(moved);
    for (uint k = 0u; k < SPHERE_LOOP; ++k) {
        if (!sphere_slot(k)) {
            continue;
        }
        vec4 s = sphere_at(k, ct);
        vec3 move = sphere_move(k, ct);
        float relative = length(move - moved);
        if (moves_fast(relative, s.w, rho)) {
            vec3 path = closest_on_segment(s.xyz - move, s.xyz, middle);
            need = max(need, substeps_for(keeps_out(ct, spheres[k].group, spheres[k].inside), length(middle - path),
                                          s.w, relative, ball, rho));
        }
    }
    for (uint k = 0u; k < CAPSULE_LOOP; ++k) {
        if (!capsule_slot(k)) {
            continue;
        }
        vec3 a, b, move_a, move_b;
        float r;
        capsule_at(k, ct, a, b, r);
        capsule_move(k, ct, move_a, move_b);
        float relative = max(length(move_a - moved), length(move_b - moved));
        if (moves_fast(relative, r, rho)) {
            float distance = length(middle - closest_on_segment(a, b, middle)) - max(length(move_a), length(move_b));
            need = max(need, substeps_for(keeps_out(ct, capsules[k].group, capsules[k].inside), distance, r, relative,
                                          ball, rho));
        }
    }
    return uint(min(need, float(max(params.contact_substep_cap, 1u))));
}
