// Shared declarations for every gpu_jiggle compute shader: constants, wrap().
// Source of the conventions: SPEC.md section 0.

const float PI = 3.14159265358979;
const float TWO_PI = 6.28318530717959;
const float INV_TWO_PI = 0.159154943091895;

// wrap(a) = a - 2π·floor((a + π) / 2π), a value in [-π, π). The division is written as a
// multiplication by 1/2π so that GLSL and the numpy reference round the same way.
float wrap_angle(float a) {
    return a - TWO_PI * floor((a + PI) * INV_TWO_PI);
}
