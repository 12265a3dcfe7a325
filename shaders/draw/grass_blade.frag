#version 430
// Grass blades from grass_blade.vert: two-sided Lambert with some light through the blade,
// a colour per blade between two greens, drier toward the tip, darker at the root (shadowed
// by its neighbours), and distance fog. With show_lod, blades are tinted by level of detail
// (half rate blue, frozen red).
#define LOD_FULL 0u
#define LOD_HALF 1u
#define LOD_FROZEN 2u

uniform vec3 eye;               // camera, origin-relative
uniform vec3 light_direction;   // unit, toward the light
uniform vec3 sky_colour;        // fog and upper ambient colour
uniform vec3 ground_colour;     // lower ambient colour
uniform vec2 fog;               // start and end distances, length unit
uniform vec3 colour_low;        // the darkest blades
uniform vec3 colour_high;       // the lightest blades
uniform vec3 tip_colour;        // dry tips
uniform bool show_lod;

in vec3 world_position;
in vec3 joint_world;
in vec3 normal;
in float along;
in float blade_shade;
flat in uint blade_lod;

out vec4 colour;

void main() {
    vec3 n = normalize(normal);
    vec3 view = normalize(eye - world_position);
    if (dot(n, view) < 0.0) {
        n = -n;
    }
    vec3 base = mix(colour_low, colour_high, blade_shade);
    base = mix(base, tip_colour, smoothstep(0.55, 1.0, along) * (0.3 + 0.5 * blade_shade));
    if (show_lod) {
        base = blade_lod == LOD_HALF ? mix(base, vec3(0.15, 0.35, 1.0), 0.6)
             : blade_lod == LOD_FROZEN ? mix(base, vec3(1.0, 0.2, 0.15), 0.6) : base;
    }
    float facing = dot(n, light_direction);
    float diffuse = max(facing, 0.0);
    float through = max(-facing, 0.0) * 0.45;  // light coming through the blade from behind
    vec3 ambient = mix(ground_colour, sky_colour, 0.5 + 0.5 * n.y) * 0.5;
    float occlusion = mix(0.35, 1.0, smoothstep(0.0, 0.7, along));
    vec3 half_vector = normalize(light_direction + view);
    float highlight = pow(max(dot(n, half_vector), 0.0), 24.0) * 0.12;
    vec3 lit = (base * (ambient + 0.8 * diffuse + through * vec3(0.9, 1.0, 0.6)) + highlight) * occlusion;
    float f = smoothstep(fog.x, fog.y, length(eye - world_position));
    colour = vec4(mix(lit, sky_colour, f), 1.0);
}
