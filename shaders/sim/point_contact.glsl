// Contact for the point-chain kernel (SPEC 4.2) against the colliders placed by
// point_colliders.glsl: particles pushed out (collide), slid back out along their length sphere
// (keep_outside), segments turned about their base off a collider (segment_out_of_sphere), the
// swept stages of point_sweep.glsl, all behind the broad phase (collide_near, settle_contact),
// and the frame-time push-out. Stage names as in gpu_jiggle/sim/backends/reference/point_contact.py.
// Include after point_colliders.glsl, point_geometry.glsl and point_sweep.glsl.

// Each contact stage runs over all the colliders this many times, so that a particle between
// overlapping colliders (a head sphere over a neck capsule) ends outside both.
#define CONTACT_PASSES 2

// Push x out of a sphere (centre q, radius r) and remove the inward velocity.
void push_out(vec3 q, float r, inout vec3 x, inout vec3 v) {
    vec3 delta = x - q;
    float d = length(delta);
    if (d < r) {
        vec3 n = d < MIN_LENGTH ? vec3(0.0, 1.0, 0.0) : delta / d;
        x = q + n * r;
        v = v - min(dot(v, n), 0.0) * n;
    }
}

// SPEC 4.2, inside colliders: x kept within distance r of q (the collider's radius less ρ;
// at its centre when that is not positive), the outward velocity removed.
void pull_in(vec3 q, float r, inout vec3 x, inout vec3 v) {
    vec3 delta = x - q;
    float d = length(delta);
    float room = max(r, 0.0);
    if (d > room) {
        vec3 n = delta / d;
        x = q + n * room;
        v = v - max(dot(v, n), 0.0) * n;
    }
}

// Slot k of the spheres' and then the capsules' (k - SPHERE_LOOP), as a sphere near x: its
// centre (a capsule's: the closest point of its axis) and its radius with ρ, relative to the
// pivot. False when the slot is empty or the chain does not collide with its collider.
bool local_sphere(uint k, Contact ct, vec3 x, out vec3 q, out float r) {
    q = vec3(0.0);
    r = 0.0;
    if (k < SPHERE_LOOP) {
        if (!sphere_slot(k)) {
            return false;
        }
        vec4 s = sphere_at(k, ct);
        q = s.xyz;
        r = s.w + ct.radius;
        return keeps_out(ct, spheres[k].group, spheres[k].inside);
    }
    uint j = k - SPHERE_LOOP;
    if (!capsule_slot(j)) {
        return false;
    }
    vec3 a, b;
    float rc;
    capsule_at(j, ct, a, b, rc);
    q = closest_on_segment(a, b, x);
    r = rc + ct.radius;
    return keeps_out(ct, capsules[j].group, capsules[j].inside);
}

// The sphere or capsule x lies deepest inside, other than `skip`: its index, or -1 for none.
int deepest_round(Contact ct, vec3 x, int skip, out vec3 q, out float r) {
    int found = -1;
    float depth = 0.0;
    for (uint k = 0u; k < SPHERE_LOOP + CAPSULE_LOOP; ++k) {
        vec3 qk;
        float rk;
        if (int(k) != skip && local_sphere(k, ct, x, qk, rk) && rk - length(x - qk) > depth) {
            depth = rk - length(x - qk);
            found = int(k);
            q = qk;
            r = rk;
        }
    }
    return found;
}

// SPEC 4.2, overlapping colliders (resolved together): a particle that leaving the collider
// it is deepest in would put inside another (a crevice between a head and a neck) goes to the
// nearest point outside both, on the circle where their surfaces meet; its inward velocity
// against both is removed. Pushing out of one after the other only ping-pongs there.
void leave_crevice(Contact ct, inout vec3 x, inout vec3 v) {
    vec3 qa, qb;
    float ra, rb;
    int a = deepest_round(ct, x, -1, qa, ra);
    if (a < 0) {
        return;
    }
    vec3 da = x - qa;
    vec3 na = length(da) < MIN_LENGTH ? vec3(0.0, 1.0, 0.0) : normalize(da);
    vec3 out_a = qa + na * ra;
    int b = deepest_round(ct, out_a, a, qb, rb);
    vec3 ab = qb - qa;
    float d = length(ab);
    if (b < 0 || d < MIN_LENGTH || d >= ra + rb || d <= abs(ra - rb)) {
        x = out_a;
        v = v - min(dot(v, na), 0.0) * na;
        return;
    }
    vec3 axis = ab / d;
    float h = (d * d + ra * ra - rb * rb) / (2.0 * d);
    vec3 centre = qa + axis * h;
    vec3 radial = (x - centre) - dot(x - centre, axis) * axis;
    float lr = length(radial);
    vec3 dir = lr < MIN_LENGTH ? perpendicular(axis) : radial / lr;
    x = centre + dir * sqrt(max(ra * ra - h * h, 0.0));
    vec3 n1 = normalize(x - qa);
    vec3 n2 = normalize(x - qb);
    v = v - min(dot(v, n1), 0.0) * n1;
    v = v - min(dot(v, n2), 0.0) * n2;
}

// SPEC 4.2, inside colliders: spheres, then capsules, each pulling the particle back in.
void keep_inside(Contact ct, inout vec3 x, inout vec3 v) {
    for (uint k = 0u; k < SPHERE_LOOP; ++k) {
        if (!sphere_slot(k)) {
            continue;
        }
        if (keeps_in(ct, spheres[k].group, spheres[k].inside)) {
            vec4 s = sphere_at(k, ct);
            pull_in(s.xyz, s.w - ct.radius, x, v);
        }
    }
    for (uint k = 0u; k < CAPSULE_LOOP; ++k) {
        if (!capsule_slot(k)) {
            continue;
        }
        if (keeps_in(ct, capsules[k].group, capsules[k].inside)) {
            vec3 a, b;
            float r;
            capsule_at(k, ct, a, b, r);
            pull_in(closest_on_segment(a, b, x), r - ct.radius, x, v);
        }
    }
}

// SPEC 4.2: spheres, then capsules, then planes, each pushing the particle out, then the
// inside colliders pulling it in; then the crevices between overlapping outside ones.
void collide(Contact ct, inout vec3 x, inout vec3 v) {
    for (int pass = 0; pass < CONTACT_PASSES; ++pass) {
        for (uint k = 0u; k < SPHERE_LOOP; ++k) {
            if (!sphere_slot(k)) {
                continue;
            }
            if (keeps_out(ct, spheres[k].group, spheres[k].inside)) {
                vec4 s = sphere_at(k, ct);
                push_out(s.xyz, s.w + ct.radius, x, v);
            }
        }
        for (uint k = 0u; k < CAPSULE_LOOP; ++k) {
            if (!capsule_slot(k)) {
                continue;
            }
            if (keeps_out(ct, capsules[k].group, capsules[k].inside)) {
                vec3 a, b;
                float r;
                capsule_at(k, ct, a, b, r);
                push_out(closest_on_segment(a, b, x), r + ct.radius, x, v);
            }
        }
        for (uint k = 0u; k < PLANE_LOOP; ++k) {
            if (!plane_slot(k)) {
                continue;
            }
            if (in_mask(ct.mask, planes[k].group)) {
                vec4 p = plane_at(k, ct);
                float depth = dot(p.xyz, x) - (p.w + ct.radius);
                if (depth < 0.0) {
                    x = x - depth * p.xyz;
                    v = v - min(dot(v, p.xyz), 0.0) * p.xyz;
                }
            }
        }
        if (INSIDE_COLLIDERS != 0) {
            keep_inside(ct, x, v);
        }
    }
    for (int pass = 0; pass < CONTACT_PASSES; ++pass) {  // a capsule's nearest point moves with x
        leave_crevice(ct, x, v);
    }
}

// The length step can pull a particle back into a collider it was pushed out of. Move it
// along the sphere of its rest length around its base to the nearest point outside a
// sphere of radius r at q (the circle where the two spheres meet). Nothing to do when the
// two spheres do not meet. (No test of whether the base is inside: a base resting on the
// surface must not switch this on and off with rounding.)
void slide_out(vec3 base, float rest_length, vec3 q, float r, inout vec3 x, inout vec3 v) {
    vec3 delta = x - q;
    if (dot(delta, delta) >= r * r) {
        return;
    }
    vec3 bq = q - base;
    float d = length(bq);
    if (d < MIN_LENGTH) {
        return;
    }
    vec3 axis = bq / d;
    float h = (d * d + rest_length * rest_length - r * r) / (2.0 * d);
    float ring2 = rest_length * rest_length - h * h;
    if (ring2 <= 0.0) {
        return;
    }
    vec3 centre = base + axis * h;
    vec3 radial = (x - centre) - dot(x - centre, axis) * axis;
    float lr = length(radial);
    vec3 dir = lr < MIN_LENGTH ? perpendicular(axis) : radial / lr;
    x = centre + dir * sqrt(ring2);
    vec3 n = normalize(x - q);
    v = v - min(dot(v, n), 0.0) * n;
}

void slide_out_of_plane(vec3 base, float rest_length, vec3 n, float offset, inout vec3 x, inout vec3 v) {
    float depth = dot(n, x) - offset;
    float base_height = dot(n, base) - offset;
    if (depth >= 0.0 || abs(base_height) > rest_length) {
        return;
    }
    // The circle where the length sphere meets the plane n·x = offset.
    vec3 centre = base - base_height * n;
    vec3 radial = (x - centre) - dot(x - centre, n) * n;
    float lr = length(radial);
    vec3 dir = lr < MIN_LENGTH ? perpendicular(n) : radial / lr;
    x = centre + dir * sqrt(max(rest_length * rest_length - base_height * base_height, 0.0));
    v = v - min(dot(v, n), 0.0) * n;
}

// SPEC 4, segments: the segment from base to x (a capsule of radius ρ, folded into r) turned
// about its base until it clears the sphere (q, r), its length kept. The tip's velocity takes
// the turn's displacement (v += Δx/h, as the length step does): the inward motion that made
// the segment touch is removed, in proportion to how far it went in, so a graze changes the
// velocity as little as it changes the position. Only where the segment's closest point to q
// lies between its ends (at an end, the particle stages act). A base on the surface (where the
// previous particle rests) or inside turns the segment onto the tangent plane at the base:
// the limit of the tangent cone as the base reaches the surface, so that rounding on which
// side of the surface the base lies changes nothing.
// The velocity so given leaves the collider (which moved by `move` over the substep) no faster
// than the tip left it before, or than the collider's own motion (SPEC 9): a push-out of a
// segment posed through a collider does not fling it.
void segment_out_of_sphere(vec3 base, vec3 q, float r, float h, vec3 rate, inout vec3 x, inout vec3 v) {
    vec3 d = q - base;
    float dq = length(d);
    vec3 u = x - base;
    float lu = length(u);
    if (dq < MIN_LENGTH || lu < MIN_LENGTH) {
        return;
    }
    u = u / lu;
    float along = dot(d, u);
    if (along <= 0.0 || along >= lu || length(d - along * u) >= r) {
        return;
    }
    vec3 dh = d / dq;
    vec3 side = u - dot(u, dh) * dh;
    float ls = length(side);
    side = ls < MIN_LENGTH ? perpendicular(dh) : side / ls;
    float sine = min(r / dq, 1.0);
    vec3 turned = sqrt(max(1.0 - sine * sine, 0.0)) * dh + sine * side;
    vec3 cleared = base + turned * lu;
    vec3 new_v = v + (cleared - x) / h;
    vec3 push = cleared - x;
    float lp = length(push);
    vec3 n = lp > 0.0 ? push / lp : push;
    float excess = dot(new_v - rate, n) - max(dot(v - rate, n), 0.0);
    v = new_v - max(excess, 0.0) * n;
    x = cleared;
}

// SPEC 9, overlapping colliders: a tip that the passes of keep_outside left inside a sphere or
// capsule (between two, each sliding it into the other) turns about its base, its length kept,
// straight out of every sphere and capsule within its length of the base (along the sum of
// their outward normals at the base, which leads away from each of them), its velocity into
// the one it was in removed. Shallower than CREVICE_DEPTH of r + ρ is rounding, for collide.
const float CREVICE_DEPTH = 1e-5;
void turn_out_of_crevice(Contact ct, vec3 base, float rest_length, inout vec3 x, inout vec3 v) {
    vec3 q_in;
    float r_in;
    int inside = deepest_round(ct, x, -1, q_in, r_in);
    if (inside < 0 || r_in - length(x - q_in) <= CREVICE_DEPTH * r_in) {
        return;
    }
    vec3 direction = vec3(0.0);
    for (uint k = 0u; k < SPHERE_LOOP + CAPSULE_LOOP; ++k) {
        vec3 qk;
        float rk;
        if (local_sphere(k, ct, base, qk, rk)) {
            vec3 out_k = base - qk;
            float d = length(out_k);
            if (d < rk + rest_length) {
                direction += d > 0.0 ? out_k / d : out_k;
            }
        }
    }
    float ld = length(direction);
    if (ld <= MIN_LENGTH) {
        return;
    }
    vec3 turned = base + direction / ld * rest_length;
    vec3 n = turned - q_in;
    float ln = length(n);
    n = ln > 0.0 ? n / ln : n;
    v = v - min(dot(v, n), 0.0) * n;
    x = turned;
}

// Colliders again, keeping the rest length (spheres, capsules, planes), then the segment, then
// out of a crevice the passes left it in.
void keep_outside(Contact ct, vec3 base, float rest_length, inout vec3 x, inout vec3 v) {
    for (int pass = 0; pass < CONTACT_PASSES; ++pass) {
        for (uint k = 0u; k < SPHERE_LOOP; ++k) {
            if (!sphere_slot(k)) {
                continue;
            }
            if (keeps_out(ct, spheres[k].group, spheres[k].inside)) {
                vec4 s = sphere_at(k, ct);
                slide_out(base, rest_length, s.xyz, s.w + ct.radius, x, v);
                segment_out_of_sphere(base, s.xyz, s.w + ct.radius, ct.substep, collider_rate(ct, sphere_move(k, ct)), x,
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
                for (int iteration = 0; iteration < 2; ++iteration) {  // the closest point moves with x
                    slide_out(base, rest_length, closest_on_segment(a, b, x), r + ct.radius, x, v);
                    vec3 q = closest_to_segment(a, b, base, x);
                    vec3 move = move_a + segment_fraction(a, b, q) * (move_b - move_a);
                    segment_out_of_sphere(base, q, r + ct.radius, ct.substep, collider_rate(ct, move), x, v);
                }
            }
        }
        for (uint k = 0u; k < PLANE_LOOP; ++k) {
            if (!plane_slot(k)) {
                continue;
            }
            if (in_mask(ct.mask, planes[k].group)) {
                vec4 p = plane_at(k, ct);
                slide_out_of_plane(base, rest_length, p.xyz, p.w + ct.radius, x, v);
            }
        }
    }
    turn_out_of_crevice(ct, base, rest_length, x, v);
}

// The broad phase's two uses in a substep: collide for a particle near a collider, and, after
// the length and angle steps, keep_outside then collide again for a segment near one (where
// overlapping colliders leave no room on the length sphere, no penetration wins over the exact
// length: the particle ends outside, the segment stretched). Far ones are left as they are.
// In a substep (`start`: where the particle was at its start), sweep_particle runs first.
// The far pass (NEAR_FAR 1, SPEC 9 "Near and far chains") runs none of them: it adds the
// balls contact_possible tests to a box instead (point_far.glsl).
void collide_near(Contact ct, vec3 start, inout vec3 x, inout vec3 v) {
    if (contact_possible(ct, x, x, length(x - start))) {
        sweep_particle(ct, start, x, v);
        collide(ct, x, v);
    }
}

void settle_contact(Contact ct, vec3 base, float rest_length, inout vec3 x, inout vec3 v) {
    if (contact_possible(ct, base, x)) {
        keep_outside(ct, base, rest_length, x, v);
        collide(ct, x, v);
    }
}

// In a substep (`base_start`, `start`: where base and x were at its start), sweep_segment runs
// first.
void settle_contact(Contact ct, vec3 base_start, vec3 start, vec3 base, float rest_length, inout vec3 x,
                    inout vec3 v) {
    float travel = max(length(base - base_start), length(x - start));
    if (contact_possible(ct, base, x, travel)) {
        sweep_segment(ct, base_start, start, base, x, v);
        keep_outside(ct, base, rest_length, x, v);
        collide(ct, x, v);
    }
}

// SPEC 2, output: a frame-time particle (relative to this frame's pivot, the anchor) taken out
// of this frame's colliders as a substep's contact stages would: slid along its length sphere
// about its (already outside) base and its segment turned off them, then pushed out where that
// leaves no room (no penetration wins over the exact length). Positions only.
void push_out_of_frame(uint mask, float rho, dvec3 anchor, vec3 base, float rest_length, inout vec3 x) {
    Contact ct = Contact(mask, anchor, 1.0, PathWeights(1.0, 0.0, 0.0, 0.0), vec3(0.0), rho, 1.0, vec3(0.0));
    vec3 v = vec3(0.0);
    settle_contact(ct, base, rest_length, x, v);
}
