#version 330
// Hemisphere ambient + one directional light (Lambert) + a soft Blinn-Phong highlight, a
// checker on ground-like surfaces, and distance fog toward the sky colour. See draw3d_mesh.vert.

uniform vec3 u_eye;             // camera position, world space
uniform vec3 u_light_direction; // unit, world space, pointing from the surface toward the light
uniform vec3 u_sky_colour;      // fog and upper ambient colour, linear RGB in [0, 1]
uniform vec3 u_ground_colour;   // lower ambient colour
uniform vec2 u_fog;             // distances (length unit) where fog starts and where it is complete

in vec3 v_world;
in vec3 v_normal;
in vec4 v_colour;
in float v_tile;

out vec4 f_colour;

void main() {
    vec3 n = normalize(v_normal);
    vec3 view = normalize(u_eye - v_world);
    if (dot(n, view) < 0.0) {
        n = -n;  // thin or open surfaces seen from behind
    }
    vec3 base = v_colour.rgb;
    if (v_tile > 0.0) {
        vec2 cell = floor(v_world.xz / v_tile);
        float odd = mod(cell.x + cell.y, 2.0);
        base *= mix(1.0, 0.82, odd);
        vec2 edge = abs(fract(v_world.xz / v_tile + 0.5) - 0.5) * v_tile;  // distance to the grid lines
        float line = 1.0 - smoothstep(0.0, 0.012 * v_tile, min(edge.x, edge.y));
        base *= 1.0 - 0.35 * line;
    }
    vec3 ambient = mix(u_ground_colour, u_sky_colour, 0.5 + 0.5 * n.y) * 0.45;
    float diffuse = max(dot(n, u_light_direction), 0.0);
    vec3 half_vector = normalize(u_light_direction + view);
    float highlight = pow(max(dot(n, half_vector), 0.0), 40.0) * 0.25;
    vec3 lit = base * (ambient + 0.75 * diffuse) + vec3(highlight) * step(0.0, diffuse);
    float fog = smoothstep(u_fog.x, u_fog.y, length(u_eye - v_world));
    f_colour = vec4(mix(lit, u_sky_colour, fog), v_colour.a);
}
