#version 330
// The text panel's texture (RGBA, straight alpha, top row first).
uniform sampler2D panel;

in vec2 uv;
out vec4 colour;

void main() {
    colour = texture(panel, uv);
}
