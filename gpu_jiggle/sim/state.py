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

A blob is not trusted (:func:`unpack`): its members must be stored uncompressed, as
``save_state`` writes them, under known names, each ``.npy`` header's shape and dtype must
account for exactly the member's bytes, so reading it takes no more memory than its own size;
the record sizes are checked against the header's segment counts before a chain set or a
solver is built (:meth:`Solver.load_state <gpu_jiggle.Solver.load_state>`), every float in
them must be finite, the axes point segments carry in their w components must be valid codes
(:func:`axis_codes`), and every other value goes through the checks of the public call that
sets it.
"""
from __future__ import annotations

import io
import math
import zipfile

import numpy as np

from . import layouts, validation

#: The layout of the blob; a change to what is saved increments it.
STATE_FORMAT = 5
#: The docs/SPEC.md version whose model the solvers implement.
SPEC_VERSION = 2

# record name -> dtype name in layouts, per kind
_RECORDS = ("chain_state", "segment_state", "joint_output", "segment_output")
#: The members a blob may hold besides its ``record.``, ``option.``, ``chain_set.`` and
#: ``input.`` ones (whose names are checked by :func:`known_member`).
MEMBERS = frozenset({"format", "spec_version", "kind", "segment_counts", "substep", "max_substeps", "clock", "lod",
                     "lod_ran", "teleport", "advanced"})
#: The dtype kinds a member may have: booleans, integers, floats and strings (no objects).
MEMBER_KINDS = "biufU"
#: The longest ``.npy`` header read (bytes): numpy writes 128 or so.
MAX_NPY_HEADER = 4096


def pack(arrays: dict) -> bytes:
    """The blob of ``arrays`` (name → numpy array of numbers or strings)."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def known_member(name: str) -> bool:
    """Whether a blob may hold a member of this name (:data:`MEMBERS`, a record, an option, a
    chain set parameter or a per-frame input, whose names :meth:`chain_set_from_state
    <gpu_jiggle.sim.state.SavedState.chain_set_from_state>` and the solver check further)."""
    group, _, rest = name.partition(".")
    if not rest:
        return name in MEMBERS
    if group == "record":
        return rest in _RECORDS
    if group == "option":
        return rest in OPTION_DEFAULTS or any(rest in kind for kind in KIND_OPTION_DEFAULTS.values())
    parts = rest.split(".")
    return group in ("chain_set", "input") and len(parts) <= 2 and all(p.isidentifier() for p in parts)


def unpack(blob) -> dict:
    """The arrays of a blob made by :func:`pack`, read without trusting it: each member must
    be stored (not compressed), have a known name (:func:`known_member`), and its ``.npy``
    header's shape × item size must be exactly the bytes that follow it, all checked before
    the member is read; so a blob of n bytes needs about n bytes more memory, whatever it claims.

    Raises: TypeError for anything but bytes; ValueError for bytes that are not such a blob,
    naming the member and what is wrong."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise TypeError(f"state: expected the bytes of Solver.save_state(), got {type(blob).__name__}")
    data = bytes(blob)
    arrays = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            for info in infos:  # every name and size first: nothing is read from a blob that lies
                _check_member(info, len(data))
            for info in infos:
                arrays[info.filename[:-len(".npy")]] = _read_member(archive, info)
    except (OSError, EOFError, zipfile.BadZipFile, KeyError, RuntimeError, NotImplementedError) as exc:
        raise ValueError(f"state: not a gpu_jiggle solver state ({exc})") from None
    return arrays


def _check_member(info, blob_bytes: int) -> None:
    name = info.filename
    if not name.endswith(".npy") or not known_member(name[:-len(".npy")]):
        raise ValueError(f"state: unknown member {name!r} (a state holds only what Solver.save_state writes)")
    if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
        raise ValueError(f"state: member {name!r} is compressed ({info.file_size} bytes from {info.compress_size}); "
                         f"Solver.save_state stores its members, so that reading a blob takes no more memory than "
                         f"its size")
    if info.file_size > blob_bytes:
        raise ValueError(f"state: member {name!r} claims {info.file_size} bytes; the blob has {blob_bytes}")


def _read_member(archive, info) -> np.ndarray:
    name = info.filename
    with archive.open(info) as stream:
        try:
            version = np.lib.format.read_magic(stream)
            read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                           (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if read_header is None:
                raise ValueError(f"npy format version {version}")
            shape, fortran, dtype = read_header(stream, max_header_size=MAX_NPY_HEADER)
        except ValueError as exc:
            raise ValueError(f"state: member {name!r} is not an array ({exc})") from None
        if dtype.kind not in MEMBER_KINDS or dtype.hasobject:
            raise ValueError(f"state: member {name!r} has dtype {dtype}; a state holds numbers and strings only")
        payload = math.prod(shape) * dtype.itemsize
        if stream.tell() + payload != info.file_size:
            raise ValueError(f"state: member {name!r} claims shape {shape} of {dtype} ({payload} bytes); it holds "
                             f"{info.file_size - stream.tell()}")
        raw = bytearray(payload)  # writable, read in place: no second copy
        if stream.readinto(raw) != payload:
            raise ValueError(f"state: member {name!r} is cut short")
    return np.frombuffer(raw, dtype).reshape(shape, order="F" if fortran else "C")


#: The solver options a blob records (SPEC 1, 2, 3, 4) and the value a blob saved before they
#: were recorded had.
OPTION_DEFAULTS = {"target_path": "hermite", "damping_frame": "relative", "integrator": "semi-implicit"}
#: The options of one kind's solvers alone, booleans (recorded as "True" or "False"), and the
#: value a blob saved before they were recorded had.
KIND_OPTION_DEFAULTS = {"point": {"rotation_outputs": True}}
#: Chain set parameters added since the first format, and the value older blobs had.
PARAMETER_DEFAULTS = {"angle_limit": np.inf, "max_root_acceleration": 0.0}


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


def options(arrays: dict, kind: str) -> dict:
    """The solver options a blob of ``kind`` chains was saved with (the defaults for a blob
    that has none): :data:`OPTION_DEFAULTS`' and the kind's :data:`KIND_OPTION_DEFAULTS`'.

    Raises: ValueError for an option that is not a string (or, for a boolean one, neither
    "True" nor "False"), or one that solvers of ``kind`` do not have."""
    own = KIND_OPTION_DEFAULTS.get(kind, {})
    for member in arrays:
        name = member[len("option."):]
        if member.startswith("option.") and name not in OPTION_DEFAULTS and name not in own:
            raise ValueError(f"state: option {name} is not an option of {kind} solvers")
    out = {}
    for name, default in (*OPTION_DEFAULTS.items(), *own.items()):
        value = arrays.get("option." + name)
        if value is not None and (value.shape != () or value.dtype.kind != "U"
                                  or (isinstance(default, bool) and str(value) not in ("True", "False"))):
            raise ValueError(f"state: its option {name} is unreadable")
        out[name] = default if value is None else (str(value) == "True" if isinstance(default, bool) else str(value))
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
    substep_saved, cap_saved = scalar(arrays, "substep"), scalar(arrays, "max_substeps", integer=True)
    if chain_set is None:
        return
    counts = segment_counts(arrays)
    if counts.shape != chain_set.segment_counts.shape or not np.array_equal(counts, chain_set.segment_counts):
        segments = int(counts.sum())
        raise ValueError(f"state: saved for another chain set ({counts.size} chain{'s' if counts.size != 1 else ''} "
                         f"of {segments} segment{'s' if segments != 1 else ''}); this solver has {chain_set!r}")
    for name, value in chain_set_parameters(chain_set).items():
        saved = arrays.get("chain_set." + name)
        if saved is None and name in PARAMETER_DEFAULTS:
            saved = np.full(value.shape, PARAMETER_DEFAULTS[name])
        if saved is None or saved.shape != value.shape or not np.array_equal(saved, value):
            raise ValueError(f"state: saved for a chain set whose {name} differs from this solver's")
    if substep_saved != substep or cap_saved != max_substeps:
        raise ValueError(f"state: saved with substep {substep_saved!r} s and max_substeps "
                         f"{cap_saved}; this solver has {substep!r} s and {max_substeps}")
    for name, saved in options(arrays, kind).items():
        if solver_options is not None and saved != solver_options[name]:
            raise ValueError(f"state: saved with {name}={saved!r}; this solver has {name}={solver_options[name]!r}")


def record_sizes(chain_count: int, segment_count: int) -> dict:
    """The number of std430 records of each kind a chain set of these counts has."""
    return {"chain_state": chain_count, "segment_state": segment_count,
            "joint_output": segment_count + chain_count, "segment_output": segment_count}


def segment_counts(arrays: dict) -> np.ndarray:
    """The blob's segment counts, checked as :class:`~gpu_jiggle.sim.chains.ChainSet` checks
    them, before anything of that size is made.

    Raises: ValueError (an InputError) naming the bad entry."""
    counts = arrays.get("segment_counts")
    if counts is None or counts.ndim != 1 or counts.dtype.kind not in "iu":
        raise ValueError("state: its segment_counts is missing or not a list of integers")
    validation.require("state segment_counts", counts, counts >= 1, "a segment count >= 1")
    return counts.astype(np.int64)


def records(arrays: dict, dtypes: dict, sizes: dict) -> dict:
    """The std430 records saved as raw bytes, checked against their dtypes and counts, and
    every float in them finite and within float32 range (the solver's own never are not).

    Raises: ValueError for a record of the wrong size (saying the size the header implies) or
    an InputError naming the record, field, index and value."""
    out = {}
    for name in _RECORDS:
        raw = arrays.get("record." + name)
        dtype = dtypes[name]
        if raw is None or raw.dtype != np.uint8 or raw.ndim != 1 or raw.size != dtype.itemsize * sizes[name]:
            held = "none" if raw is None else f"{raw.size} bytes"
            raise ValueError(f"state: its {name} does not fit the chain set: {sizes[name]} records of "
                             f"{dtype.itemsize} bytes expected, {held} held")
        out[name] = raw.view(dtype).copy()
        for field in dtype.names or ():
            if dtype[field].base.kind == "f":
                validation.float_array(f"state {name}.{field}", out[name][field])
        if dtype == layouts.POINT_SEGMENT_STATE:
            axis_codes(out[name], f"state {name}")
    return out


def axis_codes(segment_state: np.ndarray, where: str = "segment_state") -> None:
    """Check the axes point segments carry in their state's w components (SPEC 9, "Swings";
    :data:`~gpu_jiggle.sim.layouts.AXIS_CODE_FIELDS`): each code (0, 0), none carried, or a
    first component in [AXIS_CODE_SHIFT - 1, AXIS_CODE_SHIFT + 1] and a second in [-1, 1]
    (the octahedral square); target's w 0. ``segment_state`` (S,) POINT_SEGMENT_STATE, finite.

    Raises: ValueError (an InputError) naming the field, the segment and its value."""
    shift = layouts.AXIS_CODE_SHIFT
    for first, second in layouts.AXIS_CODE_FIELDS.values():
        a, b = segment_state[first][:, 3], segment_state[second][:, 3]
        validation.require(f"{where}.{first}[:, 3]", a, (a == 0) | ((a >= shift - 1) & (a <= shift + 1)),
                           f"0 (no axis carried) or a carried axis's code in [{shift - 1:g}, {shift + 1:g}]")
        validation.require(f"{where}.{second}[:, 3]", b, np.where(a == 0, b == 0, (b >= -1) & (b <= 1)),
                           f"a carried axis's code in [-1, 1], or 0 where {first}'s w is 0 (no axis carried)")
    target = segment_state["target"][:, 3]
    validation.require(f"{where}.target[:, 3]", target, target == 0, "0 (unused)")


def clock(arrays: dict, length: int) -> tuple:
    """The clocks' snapshot (:meth:`FrameClock.snapshot <gpu_jiggle.sim.clock.FrameClock.snapshot>`:
    times in seconds finite and >= 0, counts whole numbers >= 0).

    Raises: ValueError (an InputError) naming the entry and its value."""
    c = array(arrays, "clock", (length,))
    validation.float_array("state clock", c)
    validation.require("state clock", c, c >= 0, "a time or count >= 0")
    whole = np.ones(length, bool)  # the substeps run of each clock and the frame count are counts
    whole[[k for k in (1, 4, 7) if k < length]] = False
    validation.require("state clock", c, whole | (c == np.round(c)), "a whole number of substeps or frames")
    return c.tolist()


def scalar(arrays: dict, name: str, integer: bool = False):
    """The blob's 0-d ``name`` (substep, max_substeps) as a float or int, for the solver's own
    checks. Raises: ValueError when it is missing, not a number, or not one value."""
    value = arrays.get(name)
    if value is None or value.shape != () or value.dtype.kind not in "iuf":
        shape = "missing" if value is None else f"of shape {value.shape} and dtype {value.dtype}"
        raise ValueError(f"state: its {name} is {shape}; expected one number")
    if value.dtype.kind == "f" and not math.isfinite(float(value)):
        raise ValueError(f"state: its {name} = {float(value)!r}; expected a finite number")
    if integer:
        if value.dtype.kind == "f" and not float(value).is_integer():
            raise ValueError(f"state: its {name} = {float(value)!r}; expected a whole number")
        return int(value)
    return float(value)


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


# -- a solver's state saved and restored -----------------------------------------------------
class SavedState:
    """``save_state``, ``restore`` and ``load_state`` of :class:`~gpu_jiggle.Solver` (a base
    class of it: saving is where the blob meets the solver's chain set, clocks, backend,
    levels of detail, teleport flags and per-frame inputs; ``load_state`` finds the solver
    class of the blob's kind in ``solver_kinds()``)."""

    def save_state(self) -> bytes:
        """Everything needed to go on from this frame, as bytes (:mod:`gpu_jiggle.sim.state`:
        versioned, with the chain set, the clocks, the dynamic state, the outputs and the
        per-frame inputs). Restoring it into a solver of the same chain set on the same
        backend gives bit-identical frames from here on.

        Raises: RuntimeError after :meth:`release`."""
        arrays = header(self.KIND, self._chain_set, self.substep, self.max_substeps, self._option_names())
        for name in ("chain_state", "segment_state", "joint_output", "segment_output"):
            arrays["record." + name] = self._backend.read(name).view(np.uint8)
        arrays.update({"clock": np.array(self._clock.snapshot(), np.float64), "lod": self._lod,
                       "lod_ran": self._lod_ran, "teleport": self._teleport, "advanced": np.array(self._advanced)})
        arrays.update({"input." + k: v for k, v in self._inputs_arrays().items()})
        return pack(arrays)

    def restore(self, blob) -> None:
        """Go on from a state saved by :meth:`save_state` of a solver with the same chain set
        (parameters included), substep, cap and options (target path, damping frame,
        integrator; a point solver's rotation_outputs).

        Raises: ValueError for a blob of another chain set, kind, format or model version, or
        a damaged one (nothing is changed then); TypeError for anything but bytes."""
        arrays = unpack(blob)
        cs = self._chain_set
        check_header(arrays, self.KIND, cs, self.substep, self.max_substeps, self._option_names())
        saved = records(arrays, self.RECORDS, record_sizes(cs.chain_count, cs.segment_count))
        c = clock(arrays, len(self._clock.snapshot()))
        lod = array(arrays, "lod", (cs.chain_count,), np.uint32)
        # The levels the last frame ran (Solver.frame_levels); states saved before had none.
        lod_ran = array(arrays, "lod_ran", (cs.chain_count,), np.uint32) if "lod_ran" in arrays else lod
        teleport = array(arrays, "teleport", (cs.chain_count,), np.uint32)
        advanced = bool(array(arrays, "advanced", ()))
        validation.require("state lod", lod, lod <= layouts.LOD_FROZEN, "a level of detail 0, 1 or 2")
        validation.require("state lod_ran", lod_ran, lod_ran <= layouts.LOD_FROZEN, "a level of detail 0, 1 or 2")
        mirror = layouts.TELEPORT_MIRROR if self.KIND == "angle" else 0  # a 2D turn-round (Solver.mirror)
        flags = layouts.TELEPORT_MODE_MASK | layouts.TELEPORT_MOVING | mirror
        validation.require("state teleport", teleport, ((teleport & ~np.uint32(flags)) == 0)
                           & ((teleport & layouts.TELEPORT_MODE_MASK) <= layouts.TELEPORT_KEEP_SHAPE),
                           "teleport flags: snap (1) or keep_shape (2), with moving (4)"
                           + (" and mirror (8)" if mirror else "") + ", or 0")
        lag = saved["chain_state"]["path_lag"]
        validation.require("state chain_state.path_lag", lag, lag >= 0, "a time in seconds >= 0")
        apply_inputs = self._restore_inputs({k[len("input."):]: v for k, v in arrays.items() if k.startswith("input.")})
        self._backend.write_state(saved["chain_state"], saved["segment_state"])
        self._backend.write_outputs(saved["joint_output"], saved["segment_output"])
        self._clock.restore((c[0], int(c[1]), c[2], c[3], int(c[4]), c[5], c[6], int(c[7])))
        self._lod, self._lod_ran, self._teleport, self._advanced = lod, lod_ran, teleport, advanced
        apply_inputs()
        self._prepare_kernel()

    @classmethod
    def load_state(cls, blob, backend: str = "auto", context=None, work_group_size: int | None = None):
        """A new solver that goes on from a state saved by :meth:`save_state`: its chain set,
        substep, cap and options are rebuilt from the blob, then :meth:`restore`. The
        work-group size is not part of a state (it changes no result): give it here.

        Raises: what :meth:`restore` and the Solver constructor raise."""
        arrays = unpack(blob)
        kind = str(arrays.get("kind", ""))
        target = cls.solver_kinds().get(kind)
        if target is None:
            raise ValueError(f"state: not a gpu_jiggle solver state (kind {kind!r})")
        check_header(arrays, target.KIND)
        counts = segment_counts(arrays)  # the records must fit them before anything of their size is made
        records(arrays, target.RECORDS, record_sizes(counts.size, int(counts.sum())))
        chain_set = target.chain_set_from_state(arrays)
        made = target(chain_set, backend=backend, substep=scalar(arrays, "substep"),
                      max_substeps=scalar(arrays, "max_substeps", integer=True), context=context,
                      work_group_size=work_group_size, **options(arrays, target.KIND))
        made.restore(blob)
        return made

    def _option_names(self) -> dict:
        """The solver options, as a saved state records them."""
        return {"target_path": self.target_path, "damping_frame": self.damping_frame, "integrator": self.integrator}

    @classmethod
    def chain_set_from_state(cls, arrays):
        """The chain set a saved state was made for (its ``chain_set.*`` arrays), built and so
        checked by the chain set's constructor.

        Raises: ValueError for a parameter the chain set does not have (naming it and the
        known ones), and what the constructor raises for a bad value."""
        params = {k[len("chain_set."):]: v for k, v in arrays.items() if k.startswith("chain_set.")}
        known = set(cls.CHAIN_SET.PARAMETERS) | {"lengths", "rest_lengths"}
        for name in params:
            if name not in known:
                raise ValueError(f"state: {validation.unknown_name('chain set parameter', name, sorted(known))}")
        try:
            return cls.CHAIN_SET(segment_counts(arrays), **params)
        except TypeError as exc:  # a parameter the chain set needs is missing
            raise ValueError(f"state: its chain set cannot be rebuilt ({exc})") from None
