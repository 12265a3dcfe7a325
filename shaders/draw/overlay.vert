#version 330
// A screen-space textured rectangle (the text panel of gpu_jiggle.viewer): four vertices of
// a triangle strip, placed in pixels from the top-left corner of the viewport.
uniform vec4 rectangle;  // x, y (top-left, pixels from the viewport's top-left), width, height
uniform vec2 viewport;   // viewport width and height, pixels

out vec2 uv;

void main() {
    vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
    uv = corner;
    vec2 pixel = rectangle.xy + corner * rectangle.zw;
    gl_Position = vec4(2.0 * pixel.x / viewport.x - 1.0, 1.0 - 2.0 * pixel.y / viewport.y, 0.0, 1.0);
}
