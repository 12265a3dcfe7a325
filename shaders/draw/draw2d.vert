#version 330
// 2D shapes for the demos: triangles in world space, mapped to clip space by a view rectangle.
// Vertices come from gpu_jiggle/render/draw2d.py (thick lines expanded to quads, circles and
// polygons as fans, all on the host), one RGBA colour per vertex.

uniform vec4 u_view;  // the visible world rectangle: (x_min, y_min, x_max, y_max), length unit

in vec2 in_position;  // world space, length unit
in vec4 in_colour;    // RGBA in [0, 1] as written to the framebuffer, straight (not premultiplied) alpha

out vec4 v_colour;

void main() {
    vec2 unit = (in_position - u_view.xy) / (u_view.zw - u_view.xy);
    gl_Position = vec4(unit * 2.0 - 1.0, 0.0, 1.0);
    v_colour = in_colour;
}
