// Swept contact for the point-chain kernel (SPEC 9, "Swept contact"): a particle's, or a
// segment's nearest point's, straight path over the substep in the frame of each collider it
// comes near, stopped where it enters (sweep_particle, sweep_segment). Names as in
// gpu_jiggle/sim/backends/reference_sweep.py. Include after point_colliders.glsl and
// point_geometry.glsl, before point_contact.glsl.

// SPEC 9, swept contact, in the frame of a collider that moved by `move` over the substep h
// and ends as the sphere (q, r): a point whose path from `start` (already in that frame) to x
// (longer than r/2) enters the sphere, having started outside it or on it, ends on the near side of the tangent plane at the
// point where it entered, and its velocity into the collider, relative to the collider's own
// (move/h), is removed. The first root of |start - q + τ·(x - start)| = r is taken as
// c / (-b + √(b² - a·c)): no cancellation, no division by a path of no length. True if it acted.
bool sweep_past(vec3 q, float r, vec3 start, float h, vec3 move, inout vec3 x, inout vec3 v) {
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
    v = v - min(dot(v - move / h, n), 0.0) * n;
    return true;
}

// SPEC 9, swept contact of a particle that moved from `start` to x over the substep: spheres,
// then capsules (a capsule as the sphere about the point of its axis nearest the path, which
// the path enters exactly when it enters the capsule).
void sweep_particle(Contact ct, vec3 start, inout vec3 x, inout vec3 v) {
    for (uint k = 0u; k < params.sphere_count; ++k) {
        if (keeps_out(ct, spheres[k].group, spheres[k].inside)) {
            vec4 s = sphere_at(k, ct);
            vec3 move = sphere_move(k, ct);
            sweep_past(s.xyz, s.w + ct.radius, start + move, ct.substep, move, x, v);
        }
    }
    for (uint k = 0u; k < params.capsule_count; ++k) {
        if (keeps_out(ct, capsules[k].group, capsules[k].inside)) {
            vec3 a, b, move_a, move_b;
            float r;
            capsule_at(k, ct, a, b, r);
            capsule_move(k, ct, move_a, move_b);
            float f = segment_fraction(a - move_a, b - move_b, start);
            vec3 move = move_a + f * (move_b - move_a);
            vec3 moved_start = start + move;
            sweep_past(closest_to_segment(a, b, moved_start, x), r + ct.radius, moved_start, ct.substep, move, x, v);
        }
    }
}

// SPEC 9, swept contact of a segment, in the collider's frame (it ends as the sphere (q, r),
// having moved by `move`): the segment's point that passes nearest q (the one nearest q at the
// middle of the substep, at fraction f) is swept as a particle from base_start + f·(start -
// base_start); where it went through, the segment turns about its base onto the side it came
// from (towards x moved by the point's push-out over f), its length kept, and the tip's velocity
// into the collider, relative to the collider's, is removed.
void sweep_segment_past(vec3 q, float r, vec3 base_start, vec3 start, float h, vec3 move, vec3 base, inout vec3 x,
                        inout vec3 v) {
    vec3 mid_base = 0.5 * (base_start + base);
    vec3 mid_x = 0.5 * (start + x);
    float f = max(segment_fraction(mid_base, mid_x, q), 1e-3);
    vec3 point = base + f * (x - base);
    vec3 swept_point = point;
    vec3 unused = vec3(0.0);
    if (!sweep_past(q, r, base_start + f * (start - base_start), h, move, swept_point, unused)) {
        return;
    }
    vec3 u = x + (swept_point - point) / f - base;
    float lu = length(x - base);
    float l = length(u);
    vec3 turned = base + (l > 0.0 ? u / l : u) * lu;
    vec3 push = swept_point - point;
    float lp = length(push);
    vec3 n = lp > 0.0 ? push / lp : push;
    v = v - min(dot(v - move / h, n), 0.0) * n;
    x = turned;
}

// SPEC 9, swept contact of the segment from base to x (from base_start to start at the start of
// the substep): spheres, then capsules (each as the sphere about the point of its axis nearest
// the segment, moved as that point moved).
void sweep_segment(Contact ct, vec3 base_start, vec3 start, vec3 base, inout vec3 x, inout vec3 v) {
    for (uint k = 0u; k < params.sphere_count; ++k) {
        if (keeps_out(ct, spheres[k].group, spheres[k].inside)) {
            vec4 s = sphere_at(k, ct);
            vec3 move = sphere_move(k, ct);
            sweep_segment_past(s.xyz, s.w + ct.radius, base_start + move, start + move, ct.substep, move, base, x, v);
        }
    }
    for (uint k = 0u; k < params.capsule_count; ++k) {
        if (keeps_out(ct, capsules[k].group, capsules[k].inside)) {
            vec3 a, b, move_a, move_b;
            float r;
            capsule_at(k, ct, a, b, r);
            capsule_move(k, ct, move_a, move_b);
            float f = segment_fraction(a - move_a, b - move_b, 0.5 * (base_start + start));
            vec3 move = move_a + f * (move_b - move_a);
            vec3 q = closest_to_segment(a, b, base, x);
            sweep_segment_past(q, r + ct.radius, base_start + move, start + move, ct.substep, move, base, x, v);
        }
    }
}
