#version 330
// Flat colour per vertex; see draw2d.vert.

in vec4 v_colour;
out vec4 f_colour;

void main() {
    f_colour = v_colour;
}
