#version 330
// Kajiya-Kay strand shading: a strand has no normal, only a tangent T, so diffuse light is
// sin(T, L) and the highlight is sin(T, H)^p; roots are darkened (light blocked by the hair
// above them), and distance fog as for meshes. See draw3d_strand.vert.

uniform vec3 u_eye;
uniform vec3 u_light_direction;  // unit, toward the light
uniform vec3 u_sky_colour;
uniform vec2 u_fog;              // fog start and end distances, length unit

in vec3 v_world;
in vec3 v_tangent;
in float v_along;
in vec4 v_colour;

out vec4 f_colour;

void main() {
    vec3 t = normalize(v_tangent);
    vec3 view = normalize(u_eye - v_world);
    float tl = dot(t, u_light_direction);
    float diffuse = sqrt(max(1.0 - tl * tl, 0.0));
    vec3 half_vector = normalize(u_light_direction + view);
    float th = dot(t, half_vector);
    float highlight = pow(sqrt(max(1.0 - th * th, 0.0)), 80.0);
    float occlusion = mix(0.45, 1.0, smoothstep(0.0, 0.4, v_along));
    vec3 base = v_colour.rgb;
    vec3 lit = base * (0.35 + 0.65 * diffuse) * occlusion + 0.22 * highlight * mix(base, vec3(1.0), 0.5) * occlusion;
    float fog = smoothstep(u_fog.x, u_fog.y, length(u_eye - v_world));
    f_colour = vec4(mix(lit, u_sky_colour, fog), v_colour.a);
}
