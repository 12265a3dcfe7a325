#version 330
// Lit meshes for the 3D demos: spheres, capsules and the ground, as triangles in world space.
// Vertices come from gpu_jiggle/render/draw3d.py (meshes generated and placed on the host).

uniform mat4 u_view_projection;  // world -> clip space

in vec3 in_position;  // world space, length unit
in vec3 in_normal;    // world space, unit
in vec4 in_colour;    // RGBA in [0, 1], straight alpha
in float in_tile;     // > 0: checker the surface with square tiles of this size (length unit) on world xz

out vec3 v_world;
out vec3 v_normal;
out vec4 v_colour;
out float v_tile;

void main() {
    v_world = in_position;
    v_normal = in_normal;
    v_colour = in_colour;
    v_tile = in_tile;
    gl_Position = u_view_projection * vec4(in_position, 1.0);
}
