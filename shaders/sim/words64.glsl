// Records moved 64 bits a component. Mesa's llvmpipe reads and writes a storage buffer one
// invocation and one component at a time (per component, a bounds test, a scalar move and a
// lane insert: docs/PERFORMANCE.md, "What a storage access costs on llvmpipe"), so a record
// declared as 64-bit vectors moves in half the steps of the same bytes as vec4s: the kernels
// declare the buffers they read or write per segment (the state, the outputs) as arrays of
// these words and take the floats out bit for bit (nothing is converted; a word is never
// computed with). On a GPU a word is a plain 64-bit load or store.
//
// The words are 64-bit integers where the context has GL_ARB_gpu_shader_int64 (the including
// kernel enables it; llvmpipe and the desktop GPUs' drivers have it), else doubles (moved, never
// computed with: GLSL 4.00 has them in core). WORDS_AS_DOUBLES 1 (a switch of the kernels that
// have variants) forces the doubles, for the test of that fallback.
#ifndef WORDS_AS_DOUBLES
#define WORDS_AS_DOUBLES 0
#endif
#if defined(GL_ARB_gpu_shader_int64) && WORDS_AS_DOUBLES == 0
#define word64 uint64_t
#define word64x2 u64vec2
#define word64x4 u64vec4
#define UNPACK_WORD unpackUint2x32
#define PACK_WORD packUint2x32
#else
#define word64 double
#define word64x2 dvec2
#define word64x4 dvec4
#define UNPACK_WORD unpackDouble2x32
#define PACK_WORD packDouble2x32
#endif

// A word's two 32-bit halves (x the low), and back.
uvec2 word_bits(word64 w) {
    return UNPACK_WORD(w);
}
word64 bits_word(uvec2 b) {
    return PACK_WORD(b);
}

// Two floats in one word, and back.
vec2 word_vec2(word64 w) {
    return uintBitsToFloat(word_bits(w));
}
word64 vec2_word(vec2 v) {
    return bits_word(floatBitsToUint(v));
}

// A vec4 in two words (one word64x2, or a half of a word64x4), and back.
vec4 words_vec4(word64 a, word64 b) {
    return vec4(word_vec2(a), word_vec2(b));
}
word64x2 vec4_words(vec4 v) {
    return word64x2(vec2_word(v.xy), vec2_word(v.zw));
}
