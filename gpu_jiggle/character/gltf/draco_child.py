"""The child process that decodes one Draco buffer for :mod:`.draco` under a memory
limit: a small file may decode to far more than it holds (12 KB to 574 MB), so the decoder
runs where the operating system stops it at the load's remaining byte budget.

Run as ``python -m gpu_jiggle.character.gltf.draco_child LIMIT_BYTES UID...``, the Draco bytes on
stdin. Writes to stdout one ``.npy`` array per unique id (its decoded attribute, or a 0-d
array when the data has none) and then the faces, and exits 0; exits 3 when the decoder
raises (its message on stderr), and the OS ends it (or DracoPy reports no memory) at the limit.
"""
from __future__ import annotations

import sys


def _limit_memory(limit_bytes: int) -> None:
    """Cap this process's address space at what it maps now plus ``limit_bytes`` (Linux and
    other systems with ``resource``; elsewhere the decoder runs without the cap)."""
    try:
        import resource
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * resource.getpagesize()
    except (ImportError, OSError, ValueError):
        return
    resource.setrlimit(resource.RLIMIT_AS, (mapped + limit_bytes, mapped + limit_bytes))


def main(argv) -> int:
    import numpy as np
    import DracoPy

    limit, uids = int(argv[0]), [int(u) for u in argv[1:]]
    data = sys.stdin.buffer.read()
    _limit_memory(limit)
    try:
        decoded = DracoPy.decode(data)
        out = sys.stdout.buffer
        for uid in uids:
            attribute = decoded.get_attribute_by_unique_id(uid)
            np.save(out, np.asarray(attribute["data"]) if attribute is not None else np.array(0), allow_pickle=False)
        np.save(out, np.asarray(getattr(decoded, "faces", np.zeros((0, 3)))), allow_pickle=False)
        out.flush()
    except MemoryError:
        print(f"MemoryError: decoding needs more than the {limit} bytes left of the load's budget", file=sys.stderr)
        return 3
    except Exception as exc:  # the decoder meeting damaged bytes may raise almost anything
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
