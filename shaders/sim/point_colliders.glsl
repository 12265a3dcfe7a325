// The colliders of the point-chain kernel (SPEC 2 and 4.2) as one chain sees them in one
// substep: on their path relative to its pivot (their double world coordinates taken relative
// to its anchor, SPEC 4.4), placed once per chain and substep, which of them it collides with,
// and the broad phase that leaves out the contact stages (point_contact.glsl) where no collider
// is near. As gpu_jiggle/sim/backends/reference/point_contact.py (Contact, contact_possible). Include
// after point_common.glsl, before point_contact.glsl.

// What the contact stages of one chain and substep share: the chain's collider mask and
// anchor, the colliders' path fraction and weights, the pivot (relative to the anchor), the
// particle radius ρ of the segment at hand and the substep h.
struct Contact {
    uint mask;
    dvec3 anchor;
    float alpha;
    PathWeights w;
    vec3 pivot;
    float radius;
    float substep;
    vec3 carriage;
};

// A collider's velocity over the substep (it moved by `move`, relative to the pivot held) in
// the frame of the particles' velocities, which are relative to the chain's carriage (SPEC 4,
// world influence; SPEC 9, "Push-out velocity").
vec3 collider_rate(Contact ct, vec3 move) {
    return move / ct.substep - ct.carriage;
}

// The frame's colliders of each shape in slots (variants.py collider_slots): SPHERE_SLOTS,
// CAPSULE_SLOTS and PLANE_SLOTS at 0, 1, 2, 4 or 8, the frame's count rounded up, compile that
// many (constant loops that the compiler unrolls, an empty one gone; the buffers hold a record
// for every slot, those past the frame's count skipped); at -1, for more than
// PLACED_COLLIDERS, the loops run to the frame's count.
#if SPHERE_SLOTS < 0
#define SPHERE_LOOP params.sphere_count
#else
#define SPHERE_LOOP uint(SPHERE_SLOTS)
#endif
#if CAPSULE_SLOTS < 0
#define CAPSULE_LOOP params.capsule_count
#else
#define CAPSULE_LOOP uint(CAPSULE_SLOTS)
#endif
#if PLANE_SLOTS < 0
#define PLANE_LOOP params.plane_count
#else
#define PLANE_LOOP uint(PLANE_SLOTS)
#endif

// Whether slot k holds one of the frame's colliders. A slot in the lower half of its bucket
// always does (the count is over half the bucket), which an unrolled loop sees at compile
// time: a frame whose counts are the buckets tests nothing.
bool sphere_slot(uint k) {
    return SPHERE_SLOTS < 0 || k <= uint(max(SPHERE_SLOTS, 0)) / 2u || k < params.sphere_count;
}

bool capsule_slot(uint k) {
    return CAPSULE_SLOTS < 0 || k <= uint(max(CAPSULE_SLOTS, 0)) / 2u || k < params.capsule_count;
}

bool plane_slot(uint k) {
    return PLANE_SLOTS < 0 || k <= uint(max(PLANE_SLOTS, 0)) / 2u || k < params.plane_count;
}

bool in_mask(uint mask, uint group) {
    return ((mask >> group) & 1u) != 0u;
}

// SPEC 4.4: the colliders' double world coordinates are taken relative to the chain's anchor
// (this frame's pivot). relate_colliders does that once per chain and dispatch for the first
// PLACED_COLLIDERS of each shape, so that placing them in a substep is float arithmetic (no
// double in the substep loop, where a GPU without fast doubles pays 1/32 to 1/64 of its float
// rate): the same values as taking them relative in every substep. A plane whose normal turns
// over the frame (its delta.xyz not zero) still takes its offset's double dot per substep.
#define PLACED_COLLIDERS 8
vec3 sphere_start[PLACED_COLLIDERS];     // start.xyz - anchor
vec3 capsule_start_a[PLACED_COLLIDERS];  // start_a.xyz - anchor
vec3 capsule_start_b[PLACED_COLLIDERS];
vec4 plane_start[PLACED_COLLIDERS];      // the unit normal at its start, and its offset relative to the anchor

void relate_colliders(dvec3 anchor) {
    for (uint k = 0u; k < min(SPHERE_LOOP, uint(PLACED_COLLIDERS)); ++k) {
        if (sphere_slot(k)) {
            sphere_start[k] = vec3(spheres[k].start.xyz - anchor);
        }
    }
    for (uint k = 0u; k < min(CAPSULE_LOOP, uint(PLACED_COLLIDERS)); ++k) {
        if (capsule_slot(k)) {
            capsule_start_a[k] = vec3(capsules[k].start_a.xyz - anchor);
            capsule_start_b[k] = vec3(capsules[k].start_b.xyz - anchor);
        }
    }
    for (uint k = 0u; k < min(PLANE_LOOP, uint(PLACED_COLLIDERS)); ++k) {
        if (plane_slot(k)) {
            vec3 n = normalize(vec3(planes[k].start.xyz));
            plane_start[k] = vec4(n, float(planes[k].start.w - dot(dvec3(n), anchor)));
        }
    }
}

// Collider shapes on their path at the contact's fraction, relative to the pivot, from their
// start relative to the anchor (relate_colliders; a plane: its normal at the start and its
// offset).
vec4 sphere_on_path(uint k, Contact ct, vec3 start) {
    SphereCollider sc = spheres[k];
    vec3 centre = start + ct.w.p * sc.delta.xyz + ct.w.q * sc.start_rate.xyz;
    return vec4(centre - ct.pivot, float(sc.start.w) + ct.alpha * sc.delta.w);
}

void capsule_on_path(uint k, Contact ct, vec3 start_a, vec3 start_b, out vec3 a, out vec3 b, out float r) {
    CapsuleCollider cap = capsules[k];
    a = start_a + ct.w.p * cap.delta_a.xyz + ct.w.q * cap.rate_a.xyz - ct.pivot;
    b = start_b + ct.w.p * cap.delta_b.xyz + ct.w.q * cap.rate_b.xyz - ct.pivot;
    r = float(cap.start_a.w) + ct.alpha * cap.delta_a.w;
}

vec4 plane_on_path(uint k, Contact ct, vec4 start) {
    PlaneCollider pl = planes[k];
    vec3 n;
    float offset;
    if (TURNING_PLANES == 0 || all(equal(pl.delta.xyz, vec3(0.0)))) {  // its normal stays (TURNING_PLANES 0: every plane's)
        n = start.xyz;
        offset = start.w;
    } else {
        n = normalize(vec3(pl.start.xyz) + ct.alpha * pl.delta.xyz);
        offset = float(pl.start.w - dot(dvec3(n), ct.anchor));
    }
    offset = offset + ct.alpha * pl.delta.w;
    return vec4(n, offset - dot(n, ct.pivot));
}

// Those past the PLACED_COLLIDERS related ones, placed in double where used.
vec4 sphere_on_path(uint k, Contact ct) {
    return sphere_on_path(k, ct, vec3(spheres[k].start.xyz - ct.anchor));
}

void capsule_on_path(uint k, Contact ct, out vec3 a, out vec3 b, out float r) {
    capsule_on_path(k, ct, vec3(capsules[k].start_a.xyz - ct.anchor), vec3(capsules[k].start_b.xyz - ct.anchor), a, b, r);
}

vec4 plane_on_path(uint k, Contact ct) {
    vec3 n = normalize(vec3(planes[k].start.xyz));
    return plane_on_path(k, ct, vec4(n, float(planes[k].start.w - dot(dvec3(n), ct.anchor))));
}

// The first PLACED_COLLIDERS colliders of each shape, placed once per chain and substep (and
// once for the frame-time output) by place_colliders: every contact stage of every particle
// and pass reads them there instead of placing them again. The rest are placed where used.
vec4 placed_sphere[PLACED_COLLIDERS];
vec4 placed_capsule_a[PLACED_COLLIDERS];  // end a, radius in w
vec3 placed_capsule_b[PLACED_COLLIDERS];
vec4 placed_plane[PLACED_COLLIDERS];

// For the broad phase (contact_possible): which placed colliders keep this chain's particles
// out, and whether some collider escapes the test (one that keeps particles in, or one past
// the placed ones), so that every particle counts as near.
bool sphere_keeps_out[PLACED_COLLIDERS];
bool capsule_keeps_out[PLACED_COLLIDERS];
bool plane_applies[PLACED_COLLIDERS];
bool always_near;

// For the swept contact (SPEC 9): how far each placed sphere and capsule end moved over the
// substep (zero at rest, as place_colliders leaves them), and, for the colliders past the
// placed ones, where they were at its start (swept: place_collider_moves was called).
vec3 placed_sphere_move[PLACED_COLLIDERS];
vec3 placed_capsule_move_a[PLACED_COLLIDERS];
vec3 placed_capsule_move_b[PLACED_COLLIDERS];
bool swept;
Contact sweep_start;

void place_colliders(Contact ct) {
    swept = false;
    always_near = max(max(params.sphere_count, params.capsule_count), params.plane_count) > uint(PLACED_COLLIDERS);
    for (uint k = 0u; k < min(SPHERE_LOOP, uint(PLACED_COLLIDERS)); ++k) {
        if (!sphere_slot(k)) {
            continue;
        }
        placed_sphere[k] = sphere_on_path(k, ct, sphere_start[k]);
        placed_sphere_move[k] = vec3(0.0);
        bool applies = in_mask(ct.mask, spheres[k].group);
        sphere_keeps_out[k] = applies && spheres[k].inside == 0u;
        always_near = always_near || (applies && spheres[k].inside != 0u);
    }
    for (uint k = 0u; k < min(CAPSULE_LOOP, uint(PLACED_COLLIDERS)); ++k) {
        if (!capsule_slot(k)) {
            continue;
        }
        vec3 a, b;
        float r;
        capsule_on_path(k, ct, capsule_start_a[k], capsule_start_b[k], a, b, r);
        placed_capsule_a[k] = vec4(a, r);
        placed_capsule_b[k] = b;
        placed_capsule_move_a[k] = vec3(0.0);
        placed_capsule_move_b[k] = vec3(0.0);
        bool applies = in_mask(ct.mask, capsules[k].group);
        capsule_keeps_out[k] = applies && capsules[k].inside == 0u;
        always_near = always_near || (applies && capsules[k].inside != 0u);
    }
    for (uint k = 0u; k < min(PLANE_LOOP, uint(PLACED_COLLIDERS)); ++k) {
        if (!plane_slot(k)) {
            continue;
        }
        placed_plane[k] = plane_on_path(k, ct, plane_start[k]);
        plane_applies[k] = in_mask(ct.mask, planes[k].group);
    }
}

// SPEC 9, swept contact: after place_colliders(ct), each sphere's and capsule's move over the
// substep, from where it was at the start (the contact `start`, same pivot) to where ct has it.
void place_collider_moves(Contact start) {
    swept = true;
    sweep_start = start;
    for (uint k = 0u; k < min(SPHERE_LOOP, uint(PLACED_COLLIDERS)); ++k) {
        if (!sphere_slot(k)) {
            continue;
        }
        placed_sphere_move[k] = placed_sphere[k].xyz - sphere_on_path(k, start, sphere_start[k]).xyz;
    }
    for (uint k = 0u; k < min(CAPSULE_LOOP, uint(PLACED_COLLIDERS)); ++k) {
        if (!capsule_slot(k)) {
            continue;
        }
        vec3 a, b;
        float r;
        capsule_on_path(k, start, capsule_start_a[k], capsule_start_b[k], a, b, r);
        placed_capsule_move_a[k] = placed_capsule_a[k].xyz - a;
        placed_capsule_move_b[k] = placed_capsule_b[k] - b;
    }
}

vec3 sphere_move(uint k, Contact ct) {
    if (k < uint(PLACED_COLLIDERS)) {
        return placed_sphere_move[k];
    }
    return swept ? sphere_on_path(k, ct).xyz - sphere_on_path(k, sweep_start).xyz : vec3(0.0);
}

void capsule_move(uint k, Contact ct, out vec3 move_a, out vec3 move_b) {
    if (k < uint(PLACED_COLLIDERS)) {
        move_a = placed_capsule_move_a[k];
        move_b = placed_capsule_move_b[k];
        return;
    }
    move_a = vec3(0.0);
    move_b = vec3(0.0);
    if (swept) {
        vec3 a, b, a0, b0;
        float r;
        capsule_on_path(k, ct, a, b, r);
        capsule_on_path(k, sweep_start, a0, b0, r);
        move_a = a - a0;
        move_b = b - b0;
    }
}

// Collider k on its path for the contact ct that place_colliders was last given.
vec4 sphere_at(uint k, Contact ct) {
    return k < uint(PLACED_COLLIDERS) ? placed_sphere[k] : sphere_on_path(k, ct);
}

void capsule_at(uint k, Contact ct, out vec3 a, out vec3 b, out float r) {
    if (k < uint(PLACED_COLLIDERS)) {
        a = placed_capsule_a[k].xyz;
        b = placed_capsule_b[k];
        r = placed_capsule_a[k].w;
    } else {
        capsule_on_path(k, ct, a, b, r);
    }
}

vec4 plane_at(uint k, Contact ct) {
    return k < uint(PLACED_COLLIDERS) ? placed_plane[k] : plane_on_path(k, ct);
}

// Whether the chain collides with a collider of `group` that keeps particles out (inside 0)
// or in (inside 1).
bool keeps_out(uint mask, uint group, uint inside) {
    return inside == 0u && in_mask(mask, group);
}

bool keeps_out(Contact ct, uint group, uint inside) {
    return keeps_out(ct.mask, group, inside);
}

bool keeps_in(Contact ct, uint group, uint inside) {
    return inside != 0u && in_mask(ct.mask, group);
}

// Where on segment [a, b] the point closest to x lies, as a fraction in [0, 1].
float segment_fraction(vec3 a, vec3 b, vec3 x) {
    vec3 ab = b - a;
    return clamp(dot(x - a, ab) / max(dot(ab, ab), 1e-12), 0.0, 1.0);
}

vec3 closest_on_segment(vec3 a, vec3 b, vec3 x) {
    return a + segment_fraction(a, b, x) * (b - a);
}

// SPEC 4.2, broad phase: whether a contact stage can act on the segment from base to x (x
// alone when base is x). The segment lies in the ball about its midpoint m with half its
// length as radius; every contact stage is an exact no-op while that ball stays clear of each
// sphere and capsule the chain collides with (by its radius with ρ, and a margin over float32
// rounding), and x clear of each plane (the plane stages look at x alone), so leaving them out
// changes nothing. Inside colliders, which act on particles far from them, always count as near.
// Swept (`travel`: how far base and x moved over the substep): the ball grows by that travel
// and by each collider's own move, so that it holds the whole path the swept stages look at.
bool clear_of(float distance, float reach, vec3 m) {
    return distance > reach + 1e-3 * (reach + abs(distance) + length(m));
}

bool contact_possible(Contact ct, vec3 base, vec3 x, float travel) {
    if (always_near) {
        return true;
    }
    vec3 m = 0.5 * (base + x);
    float half_length = 0.5 * length(x - base);
    for (uint k = 0u; k < SPHERE_LOOP; ++k) {
        if (!sphere_slot(k)) {
            continue;
        }
        vec4 s = placed_sphere[k];
        float sweep = travel + length(placed_sphere_move[k]);
        if (sphere_keeps_out[k] && !clear_of(length(m - s.xyz), s.w + ct.radius + half_length + sweep, m)) {
            return true;
        }
    }
    for (uint k = 0u; k < CAPSULE_LOOP; ++k) {
        if (!capsule_slot(k)) {
            continue;
        }
        vec4 a = placed_capsule_a[k];
        float d = length(m - closest_on_segment(a.xyz, placed_capsule_b[k], m));
        float sweep = travel + max(length(placed_capsule_move_a[k]), length(placed_capsule_move_b[k]));
        if (capsule_keeps_out[k] && !clear_of(d, a.w + ct.radius + half_length + sweep, m)) {
            return true;
        }
    }
    for (uint k = 0u; k < PLANE_LOOP; ++k) {
        if (!plane_slot(k)) {
            continue;
        }
        vec4 p = placed_plane[k];
        if (plane_applies[k] && !clear_of(dot(p.xyz, x) - p.w, ct.radius, x)) {
            return true;
        }
    }
    return false;
}

bool contact_possible(Contact ct, vec3 base, vec3 x) {
    return contact_possible(ct, base, x, 0.0);
}
