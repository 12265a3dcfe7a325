// Read-only records held in an RGBA32UI texture (gpu_jiggle/gl/record_texture.py): texel t of
// the array at (t mod 2^row_shift, t >> row_shift), four 32-bit words, unchanged. Mesa's
// llvmpipe fetches a texel for the 8 invocations of a vector in one gather, where it reads a
// storage buffer one invocation at a time (docs/PERFORMANCE.md).
uvec4 record_texel(usampler2D records, uint row_shift, uint t) {
    return texelFetch(records, ivec2(t & ((1u << row_shift) - 1u), t >> row_shift), 0);
}
