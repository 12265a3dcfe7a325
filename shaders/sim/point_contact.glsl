// Geometry and contact for the point-chain kernel (SPEC 4 and 4.2): directions and rotations,
// and the contact stages against the colliders placed by point_colliders.glsl: particles
// pushed out (collide), slid back out along their length sphere (keep_outside), segments
// turned about their base off a collider (segment_out_of_sphere), particles and segments swept
// along their paths and the colliders' over the substep (sweep_particle, sweep_segment), all
// behind the broad phase (collide_near, settle_contact), and the frame-time push-out. Stage names as in
// gpu_jiggle/sim/backends/reference_contact.py (with reference_geometry.py and reference_sweep.py). Include after point_colliders.glsl.

const float MIN_LENGTH = 1e-6;
// Each contact stage runs over all the colliders this many times, so that a particle between
// overlapping colliders (a head sphere over a neck capsule) ends outside both.
#define CONTACT_PASSES 2

// A unit vector perpendicular to u (u unit).
vec3 perpendicular(vec3 u) {
    vec3 axis = abs(u.x) < 0.9 ? vec3(1.0, 0.0, 0.0) : vec3(0.0, 1.0, 0.0);
    return normalize(cross(u, axis));
}

// Within this sine of antiparallel (|u × w| < TURN_AXIS_BLEND with u·w < 0) the half turn of
// R(u → w) leans on the axis carried over from an earlier evaluation (SPEC 4, step 2).
const float TURN_AXIS_BLEND = 0.014142;
// Below this u·w (where |u × w| = TURN_AXIS_BLEND) R(u → w) is built on the half turn (SPEC 4,
// step 2); above it (u × w, 1 + u·w) keeps its digits (to about 2e-7/|u × w| rad).
const float HALF_TURN_COSINE = -0.9999;

// The axis, unit and perpendicular to u, of the half turn that R(u → w) is built on near
// antiparallel (SPEC 4, step 2): u × w where |u × w| >= TURN_AXIS_BLEND; nearer antiparallel,
// where u × w loses its digits, u × w plus the carried axis (its sign taken along u × w) times
// TURN_AXIS_BLEND - |u × w|; perpendicular(u) where both vanish. carried stays (its sign taken
// along u × w) where |u × w| <= TURN_AXIS_BLEND, so that within the blend it does not drift; it
// turns towards u × w (unit) by (|u × w|/TURN_AXIS_BLEND - 1) of the way, normalised, up to
// twice that, is u × w beyond, and past a right angle where none was carried yet (0). Where
// u·w >= 0 or a direction has no length: the carried axis, which stays.
vec3 turn_axis(vec3 u, vec3 w, inout vec3 carried) {
    float lu = length(u);
    float lw = length(w);
    if (lu < MIN_LENGTH || lw < MIN_LENGTH) {
        return carried;
    }
    u = u / lu;
    w = w / lw;
    if (dot(u, w) >= 0.0) {  // short of a right angle nothing is carried on
        return carried;
    }
    vec3 v = cross(u, w);
    float lv = length(v);
    float along = dot(carried, v) < 0.0 ? -1.0 : 1.0;
    vec3 n = v + (along * max(TURN_AXIS_BLEND - lv, 0.0)) * carried;
    n = n - dot(n, u) * u;
    float ln = length(n);
    // carried on: from the carried axis (its sign along u × w) to u × w as |u × w| goes from
    // TURN_AXIS_BLEND to twice it; u × w past a right angle where none was carried yet
    float renew = clamp(lv / TURN_AXIS_BLEND - 1.0, 0.0, 1.0);
    if (dot(u, w) < 0.0 && dot(carried, carried) == 0.0 && lv >= MIN_LENGTH) {
        renew = 1.0;
    }
    vec3 k = renew * (lv > 0.0 ? v / lv : v) + ((1.0 - renew) * along) * carried;
    float lk = length(k);
    carried = lk > 0.0 ? k / lk : k;
    return ln < MIN_LENGTH ? perpendicular(u) : n / ln;
}

// A carried axis (unit, or 0 for none carried yet) is stored as two floats in the w of two
// segment-state vec4s (SPEC 9, "Swings"): its octahedral code (the axis over |x| + |y| + |z|,
// the lower half folded out onto the square's corners), the first component plus
// AXIS_CODE_SHIFT, so that a valid code has it in [1, 3]; (0, 0), a zeroed record, for none.
const float AXIS_CODE_SHIFT = 2.0;

vec2 axis_code(vec3 n) {
    float l1 = abs(n.x) + abs(n.y) + abs(n.z);
    if (l1 == 0.0) {
        return vec2(0.0);
    }
    vec2 p = n.xy / l1;
    if (n.z < 0.0) {
        p = (1.0 - abs(p.yx)) * vec2(p.x >= 0.0 ? 1.0 : -1.0, p.y >= 0.0 ? 1.0 : -1.0);
    }
    return vec2(p.x + AXIS_CODE_SHIFT, p.y);
}

// The unit axis of a code made by axis_code; 0 for none carried (a first component below
// AXIS_CODE_SHIFT - 1).
vec3 axis_from_code(vec2 code) {
    if (code.x < AXIS_CODE_SHIFT - 1.0) {
        return vec3(0.0);
    }
    vec2 p = vec2(code.x - AXIS_CODE_SHIFT, code.y);
    vec3 n = vec3(p, 1.0 - abs(p.x) - abs(p.y));
    if (n.z < 0.0) {
        n.xy = (1.0 - abs(p.yx)) * vec2(p.x >= 0.0 ? 1.0 : -1.0, p.y >= 0.0 ? 1.0 : -1.0);
    }
    return n / length(n);
}

// The axis carried in the w of a and b (a.w, b.w its code).
vec3 carried_axis(vec4 a, vec4 b) {
    return axis_from_code(vec2(a.w, b.w));
}

// a turned by R(u → w) (SPEC 4, step 2): for u·w >= HALF_TURN_COSINE the smallest rotation
// taking u onto w; below, the half turn about axis (turn_axis) followed by the smallest
// rotation taking -u onto w; a itself when either direction has no length.
vec3 follow_parent(vec3 u, vec3 w, vec3 a, vec3 axis) {
    float lu = length(u);
    float lw = length(w);
    if (lu < MIN_LENGTH || lw < MIN_LENGTH) {
        return a;
    }
    u = u / lu;
    w = w / lw;
    float c = dot(u, w);
    if (c < HALF_TURN_COSINE) {  // near antiparallel: the half turn about the axis, then the turn from -u onto w
        vec3 b = 2.0 * dot(axis, a) * axis - a;
        vec3 vb = cross(-u, w);
        return b * -c + cross(vb, b) + vb * (dot(vb, b) / (1.0 - c));
    }
    vec3 v = cross(u, w);
    return a * c + cross(v, a) + v * (dot(v, a) / (1.0 + c));
}

// The quaternion (x, y, z, w) of R(u → w), as follow_parent turns vectors: for u·w >=
// HALF_TURN_COSINE the smallest rotation taking u onto w, (u × w, 1 + u·w) normalised; below,
// the smallest rotation taking -u onto w times the half turn (axis, 0) about axis (turn_axis),
// which is the smallest rotation taking u onto w where the axis is u × w and keeps its digits
// up to antiparallel; identity for a zero-length direction.
vec4 rotation_between(vec3 u, vec3 w, vec3 axis) {
    float lu = length(u);
    float lw = length(w);
    if (lu < MIN_LENGTH || lw < MIN_LENGTH) {
        return vec4(0.0, 0.0, 0.0, 1.0);
    }
    u = u / lu;
    w = w / lw;
    float c = dot(u, w);
    if (c < HALF_TURN_COSINE) {
        vec4 q = normalize(vec4(cross(-u, w), 1.0 - c));
        return vec4(q.w * axis + cross(q.xyz, axis), -dot(q.xyz, axis));
    }
    return normalize(vec4(cross(u, w), 1.0 + c));
}

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

// The point of segment [a, b] closest to segment [p, x] (closest points of two segments).
vec3 closest_to_segment(vec3 a, vec3 b, vec3 p, vec3 x) {
    vec3 d1 = b - a;
    vec3 d2 = x - p;
    vec3 r = a - p;
    float aa = dot(d1, d1);
    float ee = dot(d2, d2);
    float f = dot(d2, r);
    float cc = dot(d1, r);
    if (aa < 1e-12) {
        return a;
    }
    if (ee < 1e-12) {
        return a + clamp(-cc / aa, 0.0, 1.0) * d1;
    }
    float bb = dot(d1, d2);
    float denom = aa * ee - bb * bb;
    float s = denom > 1e-12 ? clamp((bb * f - cc * ee) / denom, 0.0, 1.0) : 0.0;
    float t = (bb * s + f) / ee;
    if (t < 0.0) {
        s = clamp(-cc / aa, 0.0, 1.0);
    } else if (t > 1.0) {
        s = clamp((bb - cc) / aa, 0.0, 1.0);
    }
    return a + s * d1;
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

// Collider k, a sphere (k < sphere_count) or a capsule (k - sphere_count), as a sphere near x:
// its centre (a capsule's: the closest point of its axis) and its radius with ρ, relative to
// the pivot. False when the chain does not collide with it.
bool local_sphere(uint k, Contact ct, vec3 x, out vec3 q, out float r) {
    if (k < params.sphere_count) {
        vec4 s = sphere_at(k, ct);
        q = s.xyz;
        r = s.w + ct.radius;
        return keeps_out(ct, spheres[k].group, spheres[k].inside);
    }
    vec3 a, b;
    float rc;
    capsule_at(k - params.sphere_count, ct, a, b, rc);
    q = closest_on_segment(a, b, x);
    r = rc + ct.radius;
    return keeps_out(ct, capsules[k - params.sphere_count].group, capsules[k - params.sphere_count].inside);
}

// The sphere or capsule x lies deepest inside, other than `skip`: its index, or -1 for none.
int deepest_round(Contact ct, vec3 x, int skip, out vec3 q, out float r) {
    int found = -1;
    float depth = 0.0;
    for (uint k = 0u; k < params.sphere_count + params.capsule_count; ++k) {
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
    for (uint k = 0u; k < params.sphere_count; ++k) {
        if (keeps_in(ct, spheres[k].group, spheres[k].inside)) {
            vec4 s = sphere_at(k, ct);
            pull_in(s.xyz, s.w - ct.radius, x, v);
        }
    }
    for (uint k = 0u; k < params.capsule_count; ++k) {
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
        for (uint k = 0u; k < params.sphere_count; ++k) {
            if (keeps_out(ct, spheres[k].group, spheres[k].inside)) {
                vec4 s = sphere_at(k, ct);
                push_out(s.xyz, s.w + ct.radius, x, v);
            }
        }
        for (uint k = 0u; k < params.capsule_count; ++k) {
            if (keeps_out(ct, capsules[k].group, capsules[k].inside)) {
                vec3 a, b;
                float r;
                capsule_at(k, ct, a, b, r);
                push_out(closest_on_segment(a, b, x), r + ct.radius, x, v);
            }
        }
        for (uint k = 0u; k < params.plane_count; ++k) {
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
void segment_out_of_sphere(vec3 base, vec3 q, float r, float h, vec3 move, inout vec3 x, inout vec3 v) {
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
    vec3 v_c = move / h;
    float excess = dot(new_v - v_c, n) - max(dot(v - v_c, n), 0.0);
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
    for (uint k = 0u; k < params.sphere_count + params.capsule_count; ++k) {
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
        for (uint k = 0u; k < params.sphere_count; ++k) {
            if (keeps_out(ct, spheres[k].group, spheres[k].inside)) {
                vec4 s = sphere_at(k, ct);
                slide_out(base, rest_length, s.xyz, s.w + ct.radius, x, v);
                segment_out_of_sphere(base, s.xyz, s.w + ct.radius, ct.substep, sphere_move(k, ct), x, v);
            }
        }
        for (uint k = 0u; k < params.capsule_count; ++k) {
            if (keeps_out(ct, capsules[k].group, capsules[k].inside)) {
                vec3 a, b, move_a, move_b;
                float r;
                capsule_at(k, ct, a, b, r);
                capsule_move(k, ct, move_a, move_b);
                for (int iteration = 0; iteration < 2; ++iteration) {  // the closest point moves with x
                    slide_out(base, rest_length, closest_on_segment(a, b, x), r + ct.radius, x, v);
                    vec3 q = closest_to_segment(a, b, base, x);
                    vec3 move = move_a + segment_fraction(a, b, q) * (move_b - move_a);
                    segment_out_of_sphere(base, q, r + ct.radius, ct.substep, move, x, v);
                }
            }
        }
        for (uint k = 0u; k < params.plane_count; ++k) {
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

void collide_near(Contact ct, inout vec3 x, inout vec3 v) {
    if (contact_possible(ct, x, x)) {
        collide(ct, x, v);
    }
}

// In a substep (`start`: where the particle was at its start), sweep_particle runs first.
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
    if (contact_possible(ct, base, x, max(length(base - base_start), length(x - start)))) {
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
    Contact ct = Contact(mask, anchor, 1.0, PathWeights(1.0, 0.0, 0.0, 0.0), vec3(0.0), rho, 1.0);
    vec3 v = vec3(0.0);
    settle_contact(ct, base, rest_length, x, v);
}
