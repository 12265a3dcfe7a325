"""Input checks at the public boundary (SPEC section 7).

Every check runs before anything changes and raises ``ValueError`` (``TypeError`` for a
wrong type) naming the argument, the first offending index and its value.
"""
from __future__ import annotations

import difflib
import numbers

import numpy as np


FLOAT32_MAX = float(np.finfo(np.float32).max)
#: The largest coordinate (or length) accepted, in length units: 1e15. Float64 keeps
#: about 0.1 length units of spacing there, and the squared distance between two points
#: within it stays far inside float32 range (12·L² ≤ FLOAT32_MAX holds up to 5.3e18), so no
#: length the kernels take overflows to inf and then NaN (SPEC 3.4, 4.4).
COORDINATE_LIMIT = 1e15
#: The longest frame ``advance`` accepts, in seconds (about 11.6 days): beyond it the clock's
#: arithmetic (the span over the substep, the dropped time) stops being meaningful.
MAX_FRAME_SECONDS = 1e6


class InputError(ValueError):
    """A refused value (SPEC section 7): the message names the argument, the first offending
    index and its value. The same facts are attributes, so a caller that packed the argument
    from its own tables (a rig file, a pipeline's chains) can say where the value came from.

    Attributes:
        argument: str, the argument's name. index: the flat index of the first bad entry
        into the argument as given (None for a scalar). indices: the same entry's index per
        axis, a tuple of ints (``(1, 2)`` for ``joint_positions[1, 2]``; ``(index,)`` for a
        1-D argument; None for a scalar or where the shape is not known). value: that entry.
        expected: str.
    """

    def __init__(self, argument: str, index, value, expected: str, where: str = "", indices=None):
        self.argument, self.index, self.value, self.expected = argument, index, value, expected
        self.indices = indices
        super().__init__(self.describe(where))

    def describe(self, where: str = "") -> str:
        """The message with ``where`` (e.g. ``"[2]"``, an index of the caller's) after the name
        (a value written in over 60 characters shortened to its ends and length)."""
        return f"{self.argument}{where} = {_shown(self.value)}: expected {self.expected}"


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:24]}...{text[-12:]} ({len(text)} characters)"


def _index_text(flat_index: int, shape: tuple) -> str:
    if len(shape) <= 1:
        return f"[{flat_index}]"
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat_index, shape)) + "]"


def _numbers(name: str, value, copy: bool = True) -> np.ndarray:
    """``value`` as a float64 array (a new one, or with ``copy`` False ``value`` itself where it
    is one already); TypeError unless it holds only real numbers."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nesting
        raise TypeError(f"{name}: expected numbers, got {type(value).__name__} ({exc})") from None
    if raw.dtype.kind not in "iuf" and not (raw.dtype.kind == "O" and raw.size == 0):
        bad = _first_non_number(raw) if raw.dtype.kind == "O" else None  # (text arrays lost their entries' types)
        if bad is not None:
            index, entry = bad
            at = "[" + ", ".join(map(str, index)) + "]" if raw.ndim else ""
            if isinstance(entry, numbers.Real):  # a number, past float64's range: a bad value
                raise InputError(name, int(np.ravel_multi_index(index, raw.shape)) if raw.ndim else None, entry,
                                 _FLOAT32_RANGE, at, index if raw.ndim else None)
            raise TypeError(f"{name}{at}: expected real numbers, got {type(entry).__name__} {_shown(entry)}")
        if raw.dtype.kind in "US":
            raise TypeError(f"{name}: expected real numbers, got {type(value).__name__} holding text")
        raise TypeError(f"{name}: expected real numbers, got {type(value).__name__} of dtype {raw.dtype}")
    return np.array(raw, dtype=np.float64) if copy else np.asarray(raw, dtype=np.float64)


def _first_non_number(raw: np.ndarray):
    """(index, entry) of the first entry of an object array that is no real number a float64
    holds (not a number, or one past its range), in order, or None when each is one (then the
    array's dtype is the fault)."""
    for index in np.ndindex(raw.shape):
        entry = raw[index]
        if isinstance(entry, (bool, np.bool_)) or not isinstance(entry, numbers.Real):  # (numpy's numbers are Real)
            return index, entry
        try:
            float(entry)
        except OverflowError:
            return index, entry
    return None


def closest_name(name, known, cutoff: float = 0.6) -> str | None:
    """The name in ``known`` that ``name`` was probably meant to be, or None: one equal to it
    but for case, else the most similar ignoring case (:class:`difflib.SequenceMatcher` ratio
    ≥ ``cutoff``). Of equally similar names the one whose matching letters come earliest wins
    (``b_Tail2``: ``b_Tail02_013`` rather than ``b_Tail01_012``), then the first in ``known``."""
    if not isinstance(name, str):
        return None
    wanted = name.lower()
    best, best_score = None, None
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(wanted)
    for k in (str(k) for k in known):
        if k.lower() == wanted:
            return k
        matcher.set_seq1(k.lower())
        if matcher.real_quick_ratio() < cutoff or matcher.quick_ratio() < cutoff or matcher.ratio() < cutoff:
            continue
        score = (matcher.ratio(), -sum(a * size for a, _, size in matcher.get_matching_blocks()))
        if best_score is None or score > best_score:
            best, best_score = k, score
    return best


def name_hint(name, known, listing: str = "the valid names are:", shown: int = 40) -> str:
    """What follows a refused name: ``"; did you mean 'b_Tail02_013'?"`` when a name in
    ``known`` is close (:func:`closest_name`), else ``listing`` and the valid names (the
    first ``shown`` of them, and how many there are), e.g. ``"; the valid names are: a, b"``."""
    close = closest_name(name, known)
    if close is not None:
        return f"; did you mean {close!r}?"
    known = list(known)
    listed = ", ".join(str(k) for k in known[:shown])
    more = f", ... ({len(known)} in all)" if len(known) > shown else ""
    return f"; {listing} {listed or 'none'}{more}"


def unknown_name(kind: str, name, known, shown: int = 40, listing: str = "the valid names are:") -> str:
    """Words for a refused name: ``unknown joint 'b_Tail2'; did you mean 'b_Tail02_013'?`` when
    one is close, else ``unknown joint 'x'; the valid names are: ...`` (see :func:`name_hint`)."""
    text = repr(name) if len(repr(name)) <= 60 else repr(name)[:57] + "..."
    return f"unknown {kind} {text}{name_hint(name, known, listing, shown)}"


def choice(name: str, value, choices: tuple):
    """``value`` when it is one of the strings ``choices``; ValueError naming the closest one
    otherwise, TypeError for a non-string."""
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected one of {', '.join(map(repr, choices))}, got {type(value).__name__}")
    if value not in choices:
        close = closest_name(value, choices)
        hint = f"; did you mean {close!r}?" if close else ""
        raise ValueError(f"{name} = {value!r}: expected one of {', '.join(map(repr, choices))}{hint}")
    return value


def flag(name: str, value) -> bool:
    """``value`` when it is a bool; TypeError otherwise."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected a bool, got {type(value).__name__}")
    return bool(value)


def float_array(name: str, value, shape: tuple | None = None, *, finite: bool = True,
                copy: bool = True) -> np.ndarray:
    """``value`` as a float64 array, checked for type, shape and (by default) finiteness: a new
    array, or with ``copy`` False ``value`` itself where it is a float64 array already (for a
    caller that only reads it before it returns: 1M local angles copied cost a frame 1 ms).

    ``shape`` may contain ``None`` for a free axis. Raises ``TypeError`` for non-numeric
    input, ``ValueError`` for a wrong shape or a non-finite entry.
    """
    a = _numbers(name, value, copy)
    if shape is not None:
        ok = a.ndim == len(shape) and all(s is None or s == d for s, d in zip(shape, a.shape))
        if not ok:
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
            raise ValueError(f"{name}: expected shape {want}, got {a.shape}")
    if finite:
        _check_finite(name, a, FLOAT32_MAX)
    return a


def _check_finite(name: str, a: np.ndarray, bound: float) -> bool:
    """Raise unless every entry is finite and within float32 range. True when every entry is
    also within ``bound`` (at most that range): one pass when all is well, the entry-by-entry
    checks, in order, only to name a bad one."""
    if not a.size or (a.min() >= -bound and a.max() <= bound):  # NaN compares false, so it fails here too
        return True
    _require_within(name, a, FLOAT32_MAX, _FLOAT32_RANGE)
    return False


_FLOAT32_RANGE = f"a number within float32 range (|x| <= {FLOAT32_MAX:.3g})"


def _require_within(name: str, a: np.ndarray, limit: float, expected: str) -> None:
    """Raise :class:`InputError` at the first entry of ``a`` that is not finite ("a finite
    number"), beyond float32 range, or beyond ±``limit`` (at most that range; ``expected``
    says what was expected there): the first bad entry, whichever way it is bad."""
    finite = np.isfinite(a)
    size = np.abs(np.where(finite, a, 0.0))
    require(name, a, finite & (size <= limit),
            lambda i: "a finite number" if not finite.flat[i] else _FLOAT32_RANGE if size.flat[i] > FLOAT32_MAX
            else expected)


def finite_within(name: str, a: np.ndarray, bound: float) -> bool:
    """Raise :class:`InputError` (a ``ValueError``) unless every entry of ``a`` is finite and
    within float32 range; return whether every entry is also within ``bound`` (at most that
    range), from the same one pass (for a caller that can skip work on values within it)."""
    return _check_finite(name, a, bound)


def coordinates(name: str, value, shape: tuple | None = None) -> np.ndarray:
    """``value`` as a float64 array of coordinates (or lengths): finite and within
    ±:data:`COORDINATE_LIMIT`. Raises what :func:`float_array` raises, and ``ValueError``
    (an :class:`InputError`) for a coordinate beyond the limit."""
    a = float_array(name, value, shape, finite=False)
    if a.size and not (a.min() >= -COORDINATE_LIMIT and a.max() <= COORDINATE_LIMIT):  # NaN fails too
        _require_within(name, a, COORDINATE_LIMIT, f"a coordinate within ±{COORDINATE_LIMIT:.3g}")
    return a


def require(name: str, a: np.ndarray, good, expected) -> None:
    """Raise :class:`InputError` (a ``ValueError``) at the first entry of ``a`` where ``good``
    is False; ``expected``: what was expected there, a str or a function of the entry's flat
    index giving it (for an argument whose columns mean different things)."""
    good = np.broadcast_to(np.asarray(good, dtype=bool), a.shape)
    if not good.all():
        i = int(np.flatnonzero(~good.ravel())[0])
        where = _index_text(i, a.shape) if a.ndim else ""
        indices = tuple(int(k) for k in np.unravel_index(i, a.shape)) if a.ndim else None
        text = expected(i) if callable(expected) else expected
        raise InputError(name, i if a.ndim else None, a.ravel()[i].item(), text, where, indices)


def positive(name: str, value, shape=None) -> np.ndarray:
    a = float_array(name, value, shape)
    require(name, a, a > 0, "a finite value > 0")
    return a


def non_negative(name: str, value, shape=None) -> np.ndarray:
    a = float_array(name, value, shape)
    require(name, a, a >= 0, "a finite value >= 0")
    return a


def per_segment(name: str, value, segment_counts: np.ndarray) -> np.ndarray:
    """Broadcast a scalar, a per-chain (C,) or a per-segment (S,) array to (S,) float64.

    Raises ``ValueError`` for any other shape and ``TypeError`` for non-numbers. Values are
    not range-checked here.
    """
    c = len(segment_counts)
    s = int(segment_counts.sum())
    a = _numbers(name, value)
    if a.ndim == 0:
        return np.full(s, float(a))
    if a.ndim == 1 and a.shape[0] == s:
        return a.copy()
    if a.ndim == 1 and a.shape[0] == c:
        return np.repeat(a, segment_counts)
    raise ValueError(
        f"{name}: expected a scalar, one value per chain ({c},) or one per segment ({s},), got shape {a.shape}")


#: The most segments (and joints) a chain set may have: the kernels index them with 32-bit
#: unsigned integers.
MAX_SEGMENTS = 2 ** 31 - 1


def count_array(name: str, value) -> np.ndarray:
    """A 1-D array of positive integers (segment counts), as int64, with at most
    :data:`MAX_SEGMENTS` segments and joints in all."""
    a = np.asarray(value)
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence of integers, got shape {a.shape}")
    if a.size and a.dtype.kind not in "iu":
        if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
            a = a.astype(np.int64)
        else:
            bad = 0 if a.dtype.kind != "f" else int(np.flatnonzero(~(np.isfinite(a) & (a == np.round(a))))[0])
            raise TypeError(f"{name}[{bad}] = {a[bad].item()!r}: expected an integer")
    if a.size and a.dtype.kind in "iu":
        big = int(np.argmax(a)) if a.max() > MAX_SEGMENTS else None
        if big is not None:
            raise InputError(name, big, int(a[big]), f"an integer in [1, {MAX_SEGMENTS}]", f"[{big}]", (big,))
    a = a.astype(np.int64)
    require(name, a, a >= 1, "an integer >= 1 (a chain needs at least one segment)")
    total = int(a.sum()) + a.size
    if total > MAX_SEGMENTS:
        raise ValueError(f"{name}: {a.size} chains of {int(a.sum())} segments in all have {total} joints; at most "
                         f"{MAX_SEGMENTS} (the kernels index them with 32-bit integers): split them over several sets")
    return a


def whole_number(name: str, value, least: int = 1) -> int:
    """``value`` as an int when it is an integer (not a bool) >= ``least``; TypeError for
    another type, ValueError for a smaller one."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {type(value).__name__} {value!r}")
    if value < least:
        raise ValueError(f"{name} = {value!r}: expected an integer >= {least}")
    return int(value)


def chain_ids(name: str, value, chain_count: int) -> np.ndarray:
    """Chain indices as a unique int64 array; ``None`` means all chains."""
    if value is None:
        return np.arange(chain_count, dtype=np.int64)
    if isinstance(value, numbers.Integral):
        value = [value]
    a = np.asarray(value)
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence of chain indices, got shape {a.shape}")
    if a.size and a.dtype.kind not in "iu":
        raise TypeError(f"{name}: expected integer chain indices, got dtype {a.dtype}")
    a = a.astype(np.int64)
    require(name, a, (a >= 0) & (a < chain_count), f"a chain index in [0, {chain_count})")
    return np.unique(a)


def frame_time(name: str, value) -> float:
    """A frame time in seconds: a finite real number in [0, :data:`MAX_FRAME_SECONDS`].
    Raises :class:`InputError` (a ``ValueError``) outside that, TypeError for a non-number."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number of seconds, got {type(value).__name__}")
    try:
        v = float(value)
    except OverflowError:  # an int too large for a float
        v = float("inf")
    if not np.isfinite(v) or v < 0:
        raise InputError(name, None, value, "a finite number of seconds >= 0")
    if v > MAX_FRAME_SECONDS:
        raise InputError(name, None, value, f"at most {MAX_FRAME_SECONDS:g} seconds: a longer frame does not fit "
                                            f"the clock (for a pause, advance by 0 or teleport the chains)")
    return v


def mask_array(name: str, value, count: int) -> np.ndarray:
    """A scalar or (count,) array of 32-bit masks, as uint32; anything outside
    [0, 2**32) or not an integer is refused."""
    a = np.asarray(value)
    if a.dtype.kind == "O":
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in a.ravel()):
            raise TypeError(f"{name}: expected 32-bit integer masks")
    elif a.size and a.dtype.kind not in "iu":
        raise TypeError(f"{name}: expected 32-bit integer masks, got dtype {a.dtype}")
    values = [int(v) for v in a.ravel()]
    if a.ndim == 0:
        values = values * count
    elif a.shape != (count,):
        raise ValueError(f"{name}: expected a scalar or one value per chain ({count},), got shape {a.shape}")
    for i, v in enumerate(values):
        if not 0 <= v <= 0xFFFFFFFF:
            where = f"[{i}]" if a.ndim else ""
            raise InputError(name, i if a.ndim else None, v, "a 32-bit mask in [0, 0xFFFFFFFF]", where)
    return np.array(values, dtype=np.uint32)


def group_array(name: str, value, count: int) -> np.ndarray:
    """(count,) collider groups, integers in [0, 31], as uint32; ``None`` means all 0."""
    if value is None:
        return np.zeros(count, np.uint32)
    a = np.asarray(value)
    if a.size and a.dtype.kind not in "iu":
        raise TypeError(f"{name}: expected integer groups in [0, 31], got dtype {a.dtype}")
    if a.shape != (count,):
        raise ValueError(f"{name}: expected shape ({count},), got {a.shape}")
    a = a.astype(np.int64)
    require(name, a, (a >= 0) & (a <= 31), "a collider group in [0, 31]")
    return a.astype(np.uint32)


def flag_array(name: str, value, count: int) -> np.ndarray:
    """(count,) booleans as uint32 0/1; ``None`` means all 0. TypeError for anything but
    bools (numbers are refused: ``inside=[1, 0]`` might mean indices)."""
    if value is None:
        return np.zeros(count, np.uint32)
    a = np.asarray(value)
    if a.size and a.dtype.kind != "b":
        raise TypeError(f"{name}: expected booleans, got dtype {a.dtype}")
    if a.shape != (count,):
        raise ValueError(f"{name}: expected shape ({count},), got {a.shape}")
    return a.astype(np.uint32)


LOD_NAMES = {"full": 0, "half": 1, "frozen": 2}


def _lod_name(name: str, value, index) -> int:
    """The level a name stands for; InputError naming the closest name where it is unknown."""
    if str(value) not in LOD_NAMES:
        close = closest_name(str(value), LOD_NAMES)
        hint = f" (did you mean {close!r}?)" if close else ""
        raise InputError(name, index, str(value), f"one of 'full', 'half', 'frozen'{hint}",
                         "" if index is None else f"[{index}]", None if index is None else (index,))
    return LOD_NAMES[str(value)]


def _not_a_level(values):
    """The index of the first entry of ``values`` that is neither a name nor an integer (a bool
    is not a level), or None."""
    return next((i for i, v in enumerate(values)
                 if isinstance(v, (bool, np.bool_)) or not isinstance(v, (str, int, np.integer))), None)


def lod_array(name: str, value, count: int) -> np.ndarray:
    """Levels of detail as (count,) uint32 from names ("full", "half", "frozen") or 0/1/2, or
    a list mixing both. Raises InputError for an unknown name or level (naming the closest
    name), ValueError for a wrong shape, TypeError for another type."""
    if isinstance(value, (list, tuple)) and any(isinstance(v, str) for v in value) \
            and not all(isinstance(v, str) for v in value):  # names beside numbers: each as given
        value = [_lod_name(name, v, i) if isinstance(v, str) else v for i, v in enumerate(value)]
        bad = _not_a_level(value)
        if bad is not None:
            raise TypeError(f"{name}[{bad}] = {value[bad]!r}: expected a level name or an integer 0-2")
    a = np.asarray(value)
    one = a.ndim == 0  # one level for every chain
    if one:
        a = np.full(count, a.item(), dtype=a.dtype)
    if a.shape != (count,):
        raise ValueError(f"{name}: expected a level or one per chain ({count},), got shape {a.shape}")
    if a.dtype.kind in "US":
        return np.array([_lod_name(name, v, None if one else i) for i, v in enumerate(a)], np.uint32)
    if a.size and a.dtype.kind not in "iu":
        bad = _not_a_level(a.ravel()) if a.dtype.kind == "O" else None
        where = f"{name}[{bad}] = {a.ravel()[bad]!r}" if bad is not None and not one else name
        raise TypeError(f"{where}: expected level names or integers 0-2, got dtype {a.dtype}")
    a = a.astype(np.int64)
    require(name, a, (a >= 0) & (a <= 2), "a level of detail 0 (full), 1 (half) or 2 (frozen)")
    return a.astype(np.uint32)
