"""How much memory a chain set takes, and the refusal of one that cannot fit, before anything of
it is allocated (SPEC section 7).

A chain set is used with a solver: the estimate covers the chain set's arrays, a solver's
records and the numpy reference's scratch of one frame, in bytes per chain and per segment
(:data:`HOST_BYTES`). The limit is this machine's physical memory (:func:`machine_memory`).
A GPU solver also needs its largest buffer (the segment state) within the context's storage-
block size (``GL_MAX_SHADER_STORAGE_BLOCK_SIZE``), which the GPU backend checks when it is made
(:func:`gpu_jiggle.sim.backends.gpu.check_storage_limits`); the refusal here names that size
too, so that one message says both.
"""
from __future__ import annotations

import os

from . import layouts

#: Host bytes (per chain, per segment) of a chain set with a numpy-reference solver after its
#: first frame (pose given, one frame run, positions read back): the peak of what it allocates
#: (tracemalloc) with 1e5 chains of 1 segment and 1e4 of 10 was 1503 and 676 B per segment for
#: point chains (the carried rotation axes and the frame-time output's velocities included), 683
#: and 283 for angle chains; these rates cover both with a margin of 15-40 % for the
#: interpreter's own objects and allocator slack.
HOST_BYTES = {"point": (1100, 750), "angle": (450, 350)}
#: The segment-state record of each kind: the largest per-segment buffer of a GPU solver.
SEGMENT_STATE = {"point": layouts.POINT_SEGMENT_STATE, "angle": layouts.ANGLE_SEGMENT_STATE}
#: The storage-block size OpenGL 4.3 guarantees (bytes); an implementation may give more.
GUARANTEED_STORAGE_BLOCK = 2 ** 24
GIB = 2.0 ** 30


def host_bytes(kind: str, chain_count: int, segment_count: int) -> int:
    """Estimated host bytes of a chain set of ``kind`` ("point" or "angle") and its solver."""
    per_chain, per_segment = HOST_BYTES[kind]
    return int(chain_count) * per_chain + int(segment_count) * per_segment


def machine_memory() -> int | None:
    """This machine's physical memory in bytes (``os.sysconf``), or None where it cannot be
    read (then nothing is refused for memory)."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * page_size if pages > 0 and page_size > 0 else None


def check_fits(kind: str, chain_count: int, segment_count: int, memory: int | None = None) -> None:
    """Refuse a chain set whose estimated host bytes (:func:`host_bytes`) exceed ``memory``
    (bytes; default :func:`machine_memory`). Nothing is allocated.

    Raises:
        ValueError: naming the chain and segment counts, the estimate, the machine's memory
            and what a GPU solver's segment-state buffer would need against the storage-block
            size.
    """
    limit = machine_memory() if memory is None else int(memory)
    need = host_bytes(kind, chain_count, segment_count)
    if limit is None or need <= limit:
        return
    block = segment_count * SEGMENT_STATE[kind].itemsize
    raise ValueError(
        f"segment_counts: {chain_count} {kind} chains of {segment_count} segments need about {need / GIB:.3g} GiB "
        f"for the chain set and a solver ({HOST_BYTES[kind][0]} B a chain and {HOST_BYTES[kind][1]} B a segment), "
        f"more than this machine's memory ({limit / GIB:.3g} GiB); a GPU solver also needs their segment_state "
        f"buffer of {block / GIB:.3g} GiB within one storage block (GL_MAX_SHADER_STORAGE_BLOCK_SIZE: "
        f"{GUARANTEED_STORAGE_BLOCK / 2 ** 20:.0f} MiB guaranteed by OpenGL 4.3, `gpu-jiggle info` shows this GPU's). "
        f"Split the chains over several sets")
