"""Saving and restoring a solver (save games, replays, networked play, a long bake resumed).

A saved state is one bytes blob: a numpy ``.npz`` archive (read back with
``allow_pickle=False``, so a blob from elsewhere can hold arrays only) of

- ``format`` (:data:`STATE_FORMAT`), ``spec_version`` (the model the solver implements,
  :data:`SPEC_VERSION`) and ``kind`` (``"angle"`` or ``"point"``);
- the chain set: its segment counts, every parameter array, and the solver's substep and
  cap, so that :meth:`Solver.load_state <gpu_jiggle.Solver.load_state>` can rebuild it;
- the dynamic state and the outputs as the raw bytes of their std430 records
  (:mod:`.layouts`), the clocks, levels of detail and pending teleport flags;
- the per-frame inputs of the kind (pose, colliders, wind, origin, rest lengths).

Restoring into a solver of the same chain set on the same backend gives bit-identical
frames from there on (SPEC section 2, determinism). A blob for another chain set, another
kind, format or model version is refused with a ValueError that says what differs; nothing
changes before every part of it has been checked.
"""
from __future__ import annotations

import io
import zipfile

import numpy as np

#: The layout of the blob; a change to what is saved increments it.
STATE_FORMAT = 3
#: The docs/SPEC.md version whose model the solvers implement.
SPEC_VERSION = 2

# record name -> dtype name in layouts, per kind
_RECORDS = ("chain_state", "segment_state", "joint_output", "segment_output")


def pack(arrays: dict) -> bytes:
    """The blob of ``arrays`` (name → numpy array of numbers or strings)."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def unpack(blob) -> dict:
    """The arrays of a blob made by :func:`pack`.

    Raises: TypeError for anything but bytes; ValueError for bytes that are not such a blob."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise TypeError(f"state: expected the bytes of Solver.save_state(), got {type(blob).__name__}")
    try:
        with np.load(io.BytesIO(bytes(blob)), allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as exc:
        # numpy's own words for a non-archive suggest loading it with pickles: not for a state
        reason = "not an .npz archive of arrays" if isinstance(exc, ValueError) else str(exc)
        raise ValueError(f"state: not a gpu_jiggle solver state ({reason})") from None


#: The solver options a blob records (SPEC 1, 2, 3, 4) and the value a blob saved before they
#: were recorded had.
OPTION_DEFAULTS = {"target_path": "hermite", "damping_frame": "relative", "integrator": "semi-implicit"}
#: Chain set parameters added since the first format, and the value older blobs had.
PARAMETER_DEFAULTS = {"angle_limit": np.inf}


def header(kind: str, chain_set, substep: float, max_substeps: int, options=None) -> dict:
    """The arrays that say what a blob is for: format, model version, kind, chain set, clock
    and the solver options (``options``: name → value, the keys of :data:`OPTION_DEFAULTS`)."""
    arrays = {"format": np.array(STATE_FORMAT), "spec_version": np.array(SPEC_VERSION), "kind": np.array(kind),
              "segment_counts": np.asarray(chain_set.segment_counts, np.int64),
              "substep": np.array(float(substep)), "max_substeps": np.array(int(max_substeps))}
    for name, value in chain_set_parameters(chain_set).items():
        arrays["chain_set." + name] = value
    for name, value in (options or {}).items():
        arrays["option." + name] = np.array(str(value))
    return arrays


def options(arrays: dict) -> dict:
    """The solver options a blob was saved with (the defaults for a blob that has none).

    Raises: ValueError for an option that is not a string."""
    out = {}
    for name, default in OPTION_DEFAULTS.items():
        value = arrays.get("option." + name)
        if value is not None and (value.shape != () or value.dtype.kind != "U"):
            raise ValueError(f"state: its option {name} is unreadable")
        out[name] = default if value is None else str(value)
    return out


def chain_set_parameters(chain_set) -> dict:
    """Every parameter array of a chain set (lengths or rest lengths included), float64 or uint32."""
    out = {name: np.asarray(getattr(chain_set, name)) for name in chain_set.PARAMETERS}
    for name in ("lengths", "rest_lengths"):
        value = getattr(chain_set, name, None)
        if value is not None:
            out[name] = np.asarray(value)
    return out


def check_header(arrays: dict, kind: str, chain_set=None, substep=None, max_substeps=None,
                 solver_options=None) -> None:
    """Refuse a blob of another format, model version or kind, or (when given) for another
    chain set, clock or solver options than the solver's.

    Raises: ValueError naming what differs."""
    need = ("format", "spec_version", "kind", "segment_counts", "substep", "max_substeps")
    missing = [name for name in need if name not in arrays]
    if missing:
        raise ValueError(f"state: not a gpu_jiggle solver state (no {missing[0]!r})")
    _expect(arrays, "format", STATE_FORMAT, "state format")
    _expect(arrays, "spec_version", SPEC_VERSION, "model (SPEC) version")
    if str(arrays["kind"]) != kind:
        raise ValueError(f"state: saved from a solver of {arrays['kind']} chains; this one runs {kind} chains")
    if chain_set is None:
        return
    counts = arrays["segment_counts"]
    if counts.shape != chain_set.segment_counts.shape or not np.array_equal(counts, chain_set.segment_counts):
        raise ValueError(f"state: saved for another chain set ({counts.size} chains of {int(counts.sum())} segments); "
                         f"this solver has {chain_set!r}")
    for name, value in chain_set_parameters(chain_set).items():
        saved = arrays.get("chain_set." + name)
        if saved is None and name in PARAMETER_DEFAULTS:
            saved = np.full(value.shape, PARAMETER_DEFAULTS[name])
        if saved is None or saved.shape != value.shape or not np.array_equal(saved, value):
            raise ValueError(f"state: saved for a chain set whose {name} differs from this solver's")
    if float(arrays["substep"]) != substep or int(arrays["max_substeps"]) != max_substeps:
        raise ValueError(f"state: saved with substep {float(arrays['substep'])!r} s and max_substeps "
                         f"{int(arrays['max_substeps'])}; this solver has {substep!r} s and {max_substeps}")
    for name, saved in options(arrays).items():
        if solver_options is not None and saved != solver_options[name]:
            raise ValueError(f"state: saved with {name}={saved!r}; this solver has {name}={solver_options[name]!r}")


def records(arrays: dict, dtypes: dict, sizes: dict) -> dict:
    """The std430 records saved as raw bytes, checked against their dtypes and counts.

    Raises: ValueError for a record of the wrong size."""
    out = {}
    for name in _RECORDS:
        raw = arrays.get("record." + name)
        dtype = dtypes[name]
        if raw is None or raw.dtype != np.uint8 or raw.size != dtype.itemsize * sizes[name]:
            raise ValueError(f"state: its {name} does not fit this solver's chain set")
        out[name] = raw.view(dtype).copy()
    return out


def array(arrays: dict, name: str, shape=None, dtype=np.float64) -> np.ndarray:
    """``arrays[name]`` as ``dtype``, checked for ``shape`` (None for any).

    Raises: ValueError when it is missing or of another shape."""
    value = arrays.get(name)
    if value is None or value.dtype.kind not in "biuf" or (shape is not None and value.shape != tuple(shape)):
        raise ValueError(f"state: its {name} is missing or has the wrong shape")
    return value.astype(dtype)


def _expect(arrays, name, value, what):
    try:
        saved = int(arrays[name])
    except (TypeError, ValueError):
        raise ValueError(f"state: its {what} is unreadable") from None
    if saved != value:
        raise ValueError(f"state: saved with {what} {saved}; this gpu_jiggle reads {what} {value}")
