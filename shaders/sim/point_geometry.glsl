// Vector geometry for the point-chain kernel (SPEC 4, steps 2 and 3; SPEC 9 "Swings"): a
// perpendicular, the axis of a turn between two directions carried near antiparallel and its
// two-float code in a state vector's w, a child's target following its parent, the smallest
// rotation between two directions, and the closest points of two segments; used by the step,
// the contact and sweep stages and the limits. Names as in
// gpu_jiggle/sim/backends/reference/point_geometry.py. Include after point_common.glsl.

const float MIN_LENGTH = 1e-6;

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
