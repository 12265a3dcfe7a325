#version 430
// Hair from hair_strand.vert: Kajiya-Kay shading (a strand has a tangent T and no normal:
// diffuse light is sin(T, L), the highlight sin(T, H)^p), roots darkened by the hair above
// them, and distance fog.
uniform vec3 eye;              // camera, origin-relative
uniform vec3 light_direction;  // unit, toward the light
uniform vec3 sky_colour;
uniform vec2 fog;              // start and end distances, length unit

in vec3 world_position;
in vec3 joint_world;
in vec3 tangent;
in float along;
in vec3 strand_colour;

out vec4 colour;

void main() {
    vec3 t = normalize(tangent);
    vec3 view = normalize(eye - world_position);
    float tl = dot(t, light_direction);
    float diffuse = sqrt(max(1.0 - tl * tl, 0.0));
    vec3 half_vector = normalize(light_direction + view);
    float th = dot(t, half_vector);
    float highlight = pow(sqrt(max(1.0 - th * th, 0.0)), 90.0);
    float occlusion = mix(0.4, 1.0, smoothstep(0.0, 0.35, along));
    vec3 lit = (strand_colour * (0.3 + 0.7 * diffuse) + 0.25 * highlight * mix(strand_colour, vec3(1.0), 0.5))
             * occlusion;
    float f = smoothstep(fog.x, fog.y, length(eye - world_position));
    colour = vec4(mix(lit, sky_colour, f), 1.0);
}
