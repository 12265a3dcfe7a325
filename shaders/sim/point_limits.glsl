// Angle limits of point segments (docs/SPEC.md section 9, "Angle limits") and the joint
// frames they are measured in: quaternions (x, y, z, w), the target frame of a segment (its
// base joint's animated rotation turned with its parent's simulated bend), and the stage
// limit_angle with its cone, hinge and spherical forms. Names as in
// gpu_jiggle/sim/backends/reference/point_limits.py. Include after point_contact.glsl.

// A hinge leaves a segment alone when it is within its range and this close to the hinge
// plane (the sine of its angle off it), so that a chain resting inside its limits is not
// touched by rounding.
const float HINGE_PLANE_TOLERANCE = 1e-6;
// Bisections of the angle that finds the nearest point of a spherical limit's ellipse.
#define ELLIPSE_BISECTIONS 24u

vec4 quat_multiply(vec4 a, vec4 b) {
    return vec4(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}

vec3 quat_rotate(vec4 q, vec3 u) {
    vec3 t = 2.0 * cross(q.xyz, u);
    return u + q.w * t + cross(q.xyz, t);
}

// The normalised linear blend from a to b by f on the shorter arc (b's sign flipped when
// a·b < 0).
vec4 nlerp(vec4 a, vec4 b, float f) {
    vec4 to = dot(a, b) < 0.0 ? -b : b;
    vec4 q = a + f * (to - a);
    return q / length(q);
}

// The frame a segment's limit is measured in: its base joint's animated world rotation
// turned by its parent's bend (R(u → w) taking the parent's animated direction onto its
// simulated one, its half turn about axis; none for a chain's first segment, whose parent
// directions are 0).
vec4 target_frame(vec3 parent_animated, vec3 parent_simulated, vec4 joint_rotation, vec3 axis) {
    return quat_multiply(rotation_between(parent_animated, parent_simulated, axis), joint_rotation);
}

// Cone of half-angle beta about the unit target direction a; un the unit direction of the
// segment (length lu) from base. Outside the cone: turned onto it, and the part of the tip's
// velocity relative to v_t that leaves the cone removed (beta = 0: all of it across a).
void limit_cone(float beta, vec3 base, vec3 a, vec3 un, float lu, vec3 v_t, inout vec3 x, inout vec3 v) {
    if (atan(length(cross(un, a)), dot(un, a)) <= beta) {
        return;
    }
    vec3 side = un - dot(un, a) * a;
    float ls = length(side);
    side = ls < MIN_LENGTH ? perpendicular(a) : side / ls;
    x = base + (cos(beta) * a + sin(beta) * side) * lu;
    vec3 relative = v - v_t;
    if (beta == 0.0) {
        v = v - (relative - dot(relative, a) * a);
    } else {
        vec3 outward = cos(beta) * side - sin(beta) * a;
        v = v - max(dot(relative, outward), 0.0) * outward;
    }
}

// Hinge about the unit axis n (perpendicular to a): the angle θ about n from a (positive
// toward n × a) is kept in [lo, hi], the nearer bound taken across ±π, and the segment is
// kept in the plane through a perpendicular to n. The velocity relative to v_t loses its
// part along n, and at a bound its part leaving the range (lo = hi: all of it along the arc).
void limit_hinge(float lo, float hi, vec3 n, vec3 base, vec3 a, vec3 un, float lu, vec3 v_t,
                 inout vec3 x, inout vec3 v) {
    vec3 side = cross(n, a);
    float along = dot(un, a);
    float across = dot(un, side);
    float off = dot(un, n);
    float theta = length(vec2(along, across)) < MIN_LENGTH ? 0.0 : atan(across, along);
    float bounded = theta;
    if (theta > hi || theta < lo) {
        float to_hi = theta > hi ? theta - hi : theta + TWO_PI - hi;
        float to_lo = theta < lo ? lo - theta : lo + TWO_PI - theta;
        bounded = to_hi <= to_lo ? hi : lo;
    }
    if (bounded == theta && abs(off) <= HINGE_PLANE_TOLERANCE) {
        return;
    }
    x = base + (cos(bounded) * a + sin(bounded) * side) * lu;
    vec3 relative = v - v_t;
    v = v - dot(relative, n) * n;
    vec3 tangent = cos(bounded) * side - sin(bounded) * a;  // the direction of growing θ
    if (lo == hi) {
        v = v - dot(relative, tangent) * tangent;
    } else if (bounded != theta) {
        vec3 outward = bounded == hi ? tangent : -tangent;
        v = v - max(dot(relative, outward), 0.0) * outward;
    }
}

// The signed distance-like function of the nearest point (P cos ψ, Y sin ψ) of an ellipse to
// q (first quadrant): zero at the nearest point, ≥ 0 at ψ = 0 and ≤ 0 at ψ = π/2.
float ellipse_normal_gap(float psi, vec2 q, float pitch, float yaw) {
    float c = cos(psi);
    float s = sin(psi);
    return (pitch * pitch - yaw * yaw) * c * s - q.x * pitch * s + q.y * yaw * c;
}

// Spherical limit about a: the swing vector σ = θ·(u·side, u·n)/|(u·side, u·n)| (θ the angle
// from a, side = n × a) kept in the ellipse (σx/pitch)² + (σy/yaw)² ≤ 1; outside, moved to
// the ellipse's nearest point, and the velocity's part along the ellipse's outward normal
// (taken onto the sphere) removed. Both limits > 0 here.
void limit_ellipse(float pitch, float yaw, vec3 n, vec3 base, vec3 a, vec3 un, float lu, vec3 v_t,
                   inout vec3 x, inout vec3 v) {
    vec3 side = cross(n, a);
    vec2 across = vec2(dot(un, side), dot(un, n));
    float la = length(across);
    vec2 heading = la < MIN_LENGTH ? vec2(1.0, 0.0) : across / la;
    vec2 swing = atan(la, dot(un, a)) * heading;
    vec2 scaled = swing / vec2(pitch, yaw);
    if (dot(scaled, scaled) <= 1.0) {
        return;
    }
    vec2 q = abs(swing);
    float psi_lo = 0.0;
    float psi_hi = 0.5 * PI;
    for (uint i = 0u; i < ELLIPSE_BISECTIONS; ++i) {
        float mid = 0.5 * (psi_lo + psi_hi);
        if (ellipse_normal_gap(mid, q, pitch, yaw) > 0.0) {
            psi_lo = mid;
        } else {
            psi_hi = mid;
        }
    }
    float psi = 0.5 * (psi_lo + psi_hi);
    vec2 signs = vec2(swing.x < 0.0 ? -1.0 : 1.0, swing.y < 0.0 ? -1.0 : 1.0);
    vec2 boundary = vec2(pitch * cos(psi), yaw * sin(psi)) * signs;
    float angle = length(boundary);
    vec2 d = boundary / angle;
    vec3 radial = d.x * side + d.y * n;
    x = base + (cos(angle) * a + sin(angle) * radial) * lu;
    vec2 normal = normalize(boundary / vec2(pitch * pitch, yaw * yaw));
    vec3 e_theta = cos(angle) * radial - sin(angle) * a;
    vec3 e_phi = d.x * n - d.y * side;
    vec3 outward = normalize(dot(normal, d) * e_theta
                             + dot(normal, vec2(-d.y, d.x)) * (angle / max(sin(angle), MIN_LENGTH)) * e_phi);
    v = v - max(dot(v - v_t, outward), 0.0) * outward;
}

// SPEC 4 (docs/SPEC.md section 9, "Angle limits"), after the length step: the segment from
// base to x measured from its target direction t - base, in its target frame `frame` (for the
// hinge and spherical kinds). Singular cases: a hinge axis along the target direction leaves
// no way to turn (held on a, as a cone of 0); a spherical limit there becomes a cone of the
// smaller limit; a limit of 0 about one axis is a hinge about the other.
// ANGLE_LIMITS (point_chains.comp): the kinds compiled in, a bit each (ANGLE_LIMIT_BIT).
#define ANGLE_LIMIT_BIT(kind) (1 << (int(kind) - 1))
#define HAS_ANGLE_LIMIT(kind) ((ANGLE_LIMITS & ANGLE_LIMIT_BIT(kind)) != 0)

void limit_angle(PointSegmentRig rig, vec4 frame, vec3 base, vec3 t, vec3 v_t, inout vec3 x, inout vec3 v) {
    if (ANGLE_LIMITS == 0 || rig.limit_kind == LIMIT_NONE) {
        return;
    }
    vec3 a = t - base;
    vec3 u = x - base;
    float la = length(a);
    float lu = length(u);
    if (la < MIN_LENGTH || lu < MIN_LENGTH) {
        return;
    }
    a = a / la;
    vec3 un = u / lu;
    if (rig.limit_kind == LIMIT_CONE || !(HAS_ANGLE_LIMIT(LIMIT_HINGE) || HAS_ANGLE_LIMIT(LIMIT_SPHERICAL))) {
        if (HAS_ANGLE_LIMIT(LIMIT_CONE)) {
            limit_cone(rig.limit_bounds.x, base, a, un, lu, v_t, x, v);
        }
        return;
    }
    vec3 axis = quat_rotate(frame, rig.limit_axis.xyz);
    vec3 n = axis - dot(axis, a) * a;
    float ln = length(n);
    float first = rig.limit_bounds.x;
    float second = rig.limit_bounds.y;
    if (rig.limit_kind == LIMIT_HINGE || !HAS_ANGLE_LIMIT(LIMIT_SPHERICAL)) {
        if (!HAS_ANGLE_LIMIT(LIMIT_HINGE)) {
            return;
        }
        if (ln < MIN_LENGTH) {
            limit_cone(0.0, base, a, un, lu, v_t, x, v);
        } else {
            limit_hinge(first, second, n / ln, base, a, un, lu, v_t, x, v);
        }
        return;
    }
    if (ln < MIN_LENGTH || (first == 0.0 && second == 0.0)) {
        limit_cone(min(first, second), base, a, un, lu, v_t, x, v);
    } else if (second == 0.0) {
        limit_hinge(-first, first, n / ln, base, a, un, lu, v_t, x, v);
    } else if (first == 0.0) {
        limit_hinge(-second, second, cross(n / ln, a), base, a, un, lu, v_t, x, v);
    } else {
        limit_ellipse(first, second, n / ln, base, a, un, lu, v_t, x, v);
    }
}
