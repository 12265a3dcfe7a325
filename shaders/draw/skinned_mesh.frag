#version 330
// Base colour (texture times factor times COLOR_0) lit like the other meshes of the 3D renderer
// (shaders/draw3d_mesh.frag): hemisphere ambient between ground and sky colours, one
// directional light (Lambert), a soft Blinn-Phong highlight and distance fog. KHR_materials_unlit
// shows the base colour as it is (fog still applies). The alpha mode (glTF 2.0 section 3.9.4):
// OPAQUE ignores alpha, MASK draws only where alpha >= the cutoff, BLEND gives alpha to the
// blending the host set up.
#define OPAQUE 0
#define MASK 1
#define BLEND 2

uniform sampler2D u_base_colour_texture;  // RGBA; a 1x1 white texture when the material has none
uniform vec4 u_base_colour_factor;        // RGBA multiplier (glTF baseColorFactor)
uniform bvec2 u_mirrored_repeat;          // per axis: the sampler's wrap is MIRRORED_REPEAT
uniform int u_alpha_mode;                 // OPAQUE, MASK or BLEND
uniform float u_alpha_cutoff;             // MASK: the least alpha drawn
uniform bool u_unlit;                     // KHR_materials_unlit
uniform vec3 u_eye;                       // camera position, world space
uniform vec3 u_light_direction;           // unit, world space, toward the light
uniform vec3 u_sky_colour;                // fog and upper ambient colour
uniform vec3 u_ground_colour;             // lower ambient colour
uniform vec2 u_fog;                       // distances where fog starts and where it is complete
uniform float u_highlight;                // strength of the highlight (0: matte)

in vec3 v_world;
in vec3 v_normal;
in vec2 v_uv;
in vec4 v_colour;

out vec4 f_colour;

void main() {
    vec2 uv = v_uv;
    // MIRRORED_REPEAT folds every other repeat back (the texture object itself repeats)
    if (u_mirrored_repeat.x) {
        uv.x = 1.0 - abs(mod(uv.x, 2.0) - 1.0);
    }
    if (u_mirrored_repeat.y) {
        uv.y = 1.0 - abs(mod(uv.y, 2.0) - 1.0);
    }
    vec4 base = texture(u_base_colour_texture, uv) * u_base_colour_factor * v_colour;
    if (u_alpha_mode == MASK && base.a < u_alpha_cutoff) {
        discard;
    }
    float alpha = u_alpha_mode == BLEND ? base.a : 1.0;
    vec3 lit = base.rgb;
    if (!u_unlit) {
        vec3 n = normalize(v_normal);
        if (!gl_FrontFacing) {
            n = -n;  // double-sided parts seen from behind
        }
        vec3 view = normalize(u_eye - v_world);
        vec3 ambient = mix(u_ground_colour, u_sky_colour, 0.5 + 0.5 * n.y) * 0.5;
        float diffuse = max(dot(n, u_light_direction), 0.0);
        vec3 half_vector = normalize(u_light_direction + view);
        float highlight = pow(max(dot(n, half_vector), 0.0), 24.0) * u_highlight * step(0.0, diffuse);
        lit = base.rgb * (ambient + 0.7 * diffuse) + vec3(highlight);
    }
    float fog = smoothstep(u_fog.x, u_fog.y, length(u_eye - v_world));
    f_colour = vec4(mix(lit, u_sky_colour, fog), alpha);
}
