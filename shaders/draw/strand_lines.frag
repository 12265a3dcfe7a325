#version 430
// Colour of strands drawn by strand_lines.vert: root colour to tip colour.
uniform vec3 root_colour;
uniform vec3 tip_colour;

in vec3 world_position;
in float along;
out vec4 colour;

void main() {
    colour = vec4(mix(root_colour, tip_colour, along), 1.0);
}
