#version 330
// Strands (hair) as camera-facing ribbons. Each joint of a strand comes twice, once per side
// (in_offset < 0 and > 0); the ribbon is widened here, across the strand and the view ray,
// so it faces the camera from any side. Vertices come from gpu_jiggle/render/draw3d.py.

uniform mat4 u_view_projection;  // world -> clip space
uniform vec3 u_eye;              // camera position, world space

in vec3 in_position;  // the joint, world space, length unit
in vec3 in_tangent;   // direction along the strand at the joint, world space (any length > 0)
in float in_offset;   // signed half width, length unit: this vertex's side and how far out
in float in_along;    // 0 at the root, 1 at the tip
in vec4 in_colour;    // RGBA in [0, 1]

out vec3 v_world;
out vec3 v_tangent;
out float v_along;
out vec4 v_colour;

void main() {
    vec3 tangent = normalize(in_tangent);
    vec3 view = normalize(u_eye - in_position);
    vec3 side = cross(tangent, view);
    float len = length(side);
    // Looking straight along the strand: any direction across it will do.
    side = len > 1e-4 ? side / len : normalize(cross(tangent, abs(tangent.y) < 0.9 ? vec3(0, 1, 0) : vec3(1, 0, 0)));
    v_world = in_position + side * in_offset;
    v_tangent = tangent;
    v_along = in_along;
    v_colour = in_colour;
    gl_Position = u_view_projection * vec4(v_world, 1.0);
}
