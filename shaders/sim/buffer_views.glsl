// Storage buffers read through read-only image views of their own memory (BUFFER_IMAGES 1;
// gpu_jiggle/gl/buffer_image.py): Mesa's llvmpipe reads a storage buffer one invocation and
// one component at a time (a bounds test, a scalar move and a lane insert each), an image
// texel for the 8 invocations of a vector at once: a point segment's 128-byte state costs 308
// x86 instructions per segment through the buffer, 49 through a view (docs/PERFORMANCE.md,
// "Reads through image views"). The bits are the buffer's own. Writes stay storage-buffer
// stores (an imageStore costs more there). A view of a buffer the kernel also writes is
// coherent. SEGMENT_STATE_VIEW (the including kernel may define it first; BUFFER_IMAGES
// unless it does) says whether the kernel reads its segments' state through the view; where
// it does, every walk of the segments that writes their state ends with memoryBarrier()
// (WROTE_VIEWED; once a walk, not after each store, whose fence cost time), so that a later
// read of the same bytes by the same invocation, through the view, sees what it wrote.
// BUFFER_IMAGES 0 (a context without buffer textures, or too small for them) reads the
// buffers themselves.
#ifndef BUFFER_IMAGES
#define BUFFER_IMAGES 0
#endif
#ifndef SEGMENT_STATE_VIEW
#define SEGMENT_STATE_VIEW BUFFER_IMAGES
#endif

#if BUFFER_IMAGES
#define VIEW_UVEC4(view, t) imageLoad(view, int(t))
#define VIEW_VEC4(view, t) uintBitsToFloat(imageLoad(view, int(t)))
#define VIEW_FLOAT(view, t) uintBitsToFloat(imageLoad(view, int(t)).x)
#endif
#if SEGMENT_STATE_VIEW
#define WROTE_VIEWED() memoryBarrier()
#else
#define WROTE_VIEWED()
#endif
