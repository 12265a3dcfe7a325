"""Live tuning of a rig in ``play``: a panel value for everything a rig holds, changed without
resetting the motion, kept by **Save** in the rig's TOML file, thrown away by **Revert**, and
followed when the file changes on disk; **Undo** takes the last edits back.

- Per chain group (a ``[[chain]]`` and its ``group``, a strand group): frequency (Hz), damping
  ratio, air drag (1/s), gravity (length/s² along the rig's direction, default down), particle
  radius and max distance (length), world influence, and the cone limit (degrees) where the
  rig has one. A slider sets the value of the group's first segment; every chain of the group
  keeps its own profile along its length, scaled with it (set from scratch where it was 0).
- The wind (``[wind]``, SPEC 4.1): heading about +y (degrees, 0 blowing toward +z), strength
  and gust amplitude (length/s²), gust frequency (Hz) and wavelength (length).
- The colliders: one picked (from a list or by clicking it in the view), its radius and its
  offset in its joint's space (a capsule's first end; its second end moves with it).

Save writes only the values that changed (:func:`gpu_jiggle.character.rig.toml.saved_rig_text`),
whole or not at all; the file's comments and order stay. A rig that did not come from a TOML
file (a VRM's own springs) is tuned live but not saved: ``gpu-jiggle rig`` writes it as one.
"""
from __future__ import annotations

import difflib
import math
import os
from pathlib import Path

import numpy as np

from ..character.rig.reader import load_rig, rig_from_dict
from ..character.rig.live import changed_parameters
from ..character.rig.toml import same_layout, saved_rig_text, tomllib
from ..sim.chains import PointChainSet
from .viewer.session import Action, Parameter

__all__ = ["RigTuning", "GROUP_VALUES", "WIND_VALUES"]

#: Per chain group: (kind, label, the rig's key, log slider, key step).
GROUP_VALUES = (("frequency", "f (Hz)", "frequency", True, 1.1), ("damping", "damping ratio", "damping_ratio", False, 0.05),
                ("air_drag", "air drag (1/s)", "air_drag", False, 0.25),
                ("gravity", "gravity (length/s²)", "gravity", False, None),
                ("particle_radius", "particle radius", "particle_radius", False, None),
                ("max_distance", "max distance", "max_distance", False, None),
                ("world_influence", "world influence", "world_influence", False, 0.05),
                ("angle_limit", "cone limit (deg)", "angle_limit_deg", False, 5.0),
                ("hinge_least", "hinge least (deg)", "hinge_limit_deg", False, 5.0),
                ("hinge_greatest", "hinge greatest (deg)", "hinge_limit_deg", False, 5.0),
                ("spherical_pitch", "spherical pitch (deg)", "spherical_limit_deg", False, 5.0),
                ("spherical_yaw", "spherical yaw (deg)", "spherical_limit_deg", False, 5.0))
#: Limits given as rows per segment: the kind → (the chain set's array, its column).
ROW_LIMITS = {"hinge_least": ("hinge_limit", 0), "hinge_greatest": ("hinge_limit", 1),
              "spherical_pitch": ("spherical_limit", 0), "spherical_yaw": ("spherical_limit", 1)}
#: Angles move a chain's profile by the change at its root (a scale would flip signs).
ANGLES = ("angle_limit",) + tuple(ROW_LIMITS)
#: The wind's values: (key, label).
WIND_VALUES = (("heading", "heading (deg)"), ("strength", "strength (length/s²)"),
               ("gust_amplitude", "gust amplitude (length/s²)"), ("gust_frequency", "gust frequency (Hz)"),
               ("gust_wavelength", "gust wavelength (length)"))
FREQUENCY_RANGE = (0.5, 20.0)     # Hz, widened to hold the rig's own value
DAMPING_RANGE = (0.0, 2.0)
GUST_FREQUENCY_RANGE = (0.0, 5.0)  # Hz
SLIDER_STEPS = 40                  # a key press moves a linear slider by its range / this
DOWN = np.array([0.0, -1.0, 0.0])  # gravity's direction where a chain has none
HEADING_DIGITS = 12               # decimals the wind's direction keeps from its heading
CLICK_PIXELS = 40.0                # a click picks the collider whose centre is this close on screen
WIND = "wind"
COLLIDER = "collider"


class RigTuning:
    """The panel values of a rig and their live edits (the module docstring).

    Args:
        rig: the :class:`~gpu_jiggle.character.rig.model.Rig` as loaded; the values tuned are
            those of the live pipeline's own copy (:attr:`rig`).
        skeleton: its character's skeleton (to read the file again).
        pipeline: a callable giving the live :class:`~gpu_jiggle.character.pipeline.Pipeline`
            (the player makes a new one per clip, from the last one's rig), or None before
            the first.
        size: the character's size (length units), which scales the length sliders' ranges.
    """

    def __init__(self, rig, skeleton, pipeline, size: float):
        self._rig, self.skeleton, self._pipeline, self.size = rig, skeleton, pipeline, float(size)
        source = Path(str(rig.source))
        self.path = source if source.suffix.lower() == ".toml" and source.is_file() else None
        self.loaded = load_rig(self.path, skeleton) if self.path else None  # the file as last read or written
        self._file_state = self._stat()
        self.undo_stack = []     # (key, value before, collider picked), consecutive edits of one key merged
        self._merging = None     # (key, collider picked) of the edit the next one of that key joins
        self.groups = {}
        for i, chain in enumerate(rig.chains):
            self.groups.setdefault(chain.group, []).append(i)
        self._take_base()
        self.parameters = self._parameters()
        if rig.colliders:
            self._show_collider(0)
        self.actions = [Action("save", "save", "W"), Action("revert", "revert", "R"), Action("undo", "undo", "U")]

    @property
    def rig(self):
        """The rig being tuned: the live pipeline's own copy, or the rig as loaded before one."""
        pipeline = self._pipeline()
        return pipeline.rig if pipeline is not None else self._rig

    # -- the values --------------------------------------------------------------------------
    def _take_base(self) -> None:
        """Each chain's values as they are now: the profiles a slider scales."""
        self._base = {}
        for i, c in enumerate(self.rig.chains):
            self._base[i] = {"frequency": c.frequency, "damping_ratio": c.damping_ratio, "air_drag": c.air_drag,
                             "particle_radius": c.particle_radius, "max_distance": c.max_distance,
                             "angle_limit_deg": np.degrees(c.rig.chain_set.angle_limit[self._rows(i)]),
                             "hinge_limit_deg": np.degrees(c.rig.chain_set.hinge_limit[self._rows(i)]),
                             "spherical_limit_deg": np.degrees(c.rig.chain_set.spherical_limit[self._rows(i)]),
                             "gravity": c.gravity, "world_influence": c.world_influence}

    def _rows(self, i):
        first = int(self.rig.chain_set.first_segment[i])
        return slice(first, first + self.rig.chains[i].segments)

    def _group_value(self, kind, key, group) -> float:
        base = self._base[self.groups[group][0]][key]
        if kind == "gravity":
            return float(np.linalg.norm(base))
        if kind in ROW_LIMITS:
            return float(base[0, ROW_LIMITS[kind][1]])
        return float(base) if np.ndim(base) == 0 else float(base[0])

    def _parameters(self) -> list:
        out = []
        for group, members in self.groups.items():
            for kind, label, key, log, step in GROUP_VALUES:
                value = self._group_value(kind, key, group)
                if kind in ("max_distance",) + ANGLES and not math.isfinite(value) or (
                        kind.startswith("spherical") and value >= 180.0):
                    continue  # no such limit in the rig: nothing to tune
                low, high = self._range(kind, value)
                out.append(Parameter(f"{kind}:{group}", label, value, low, high, log=log,
                                     step=step if step else (high - low) / SLIDER_STEPS,
                                     fmt="%.3g" if kind != "damping" else "%.2f", section=group))
        for key, label in WIND_VALUES:
            value = self._wind_value(key)
            low, high = self._range("wind_" + key, value)
            out.append(Parameter(f"wind:{key}", label, value, low, high, step=(high - low) / SLIDER_STEPS,
                                 fmt="%.0f" if key == "heading" else "%.3g", section=WIND))
        if self.rig.colliders:
            names = tuple(c.name for c in self.rig.colliders)
            out.append(Parameter("collider", "collider (click to pick)", 0, 0, len(names) - 1, kind="choice",
                                 choices=names, section=COLLIDER))
            out.append(Parameter("collider:radius", "radius", 0.0, section=COLLIDER, fmt="%.3g"))
            for axis in "xyz":
                out.append(Parameter(f"collider:offset_{axis}", f"offset {axis} (joint space)", 0.0, section=COLLIDER,
                                     fmt="%.3g"))
        return out

    def _range(self, kind, value):
        size = self.size
        if kind == "frequency":
            return min(FREQUENCY_RANGE[0], value / 2), max(FREQUENCY_RANGE[1], 2 * value)
        if kind == "damping":
            return DAMPING_RANGE[0], max(DAMPING_RANGE[1], 2 * value)
        if kind == "world_influence":
            return 0.0, 1.0
        if kind in ("angle_limit", "spherical_pitch", "spherical_yaw"):
            return 0.0, 180.0
        if kind in ("hinge_least", "hinge_greatest"):
            return -180.0, 180.0
        if kind == "wind_heading":
            return -180.0, 180.0
        if kind == "wind_gust_frequency":
            return GUST_FREQUENCY_RANGE[0], max(GUST_FREQUENCY_RANGE[1], 2 * value)
        if kind == "air_drag":
            return 0.0, max(10.0, 2 * value)
        scale = {"gravity": 20.0, "wind_strength": 10.0, "wind_gust_amplitude": 10.0, "wind_gust_wavelength": 10.0,
                 "particle_radius": 0.1, "max_distance": 1.0}[kind] * size
        return 0.0, max(scale, 2 * value)

    def _wind_value(self, key) -> float:
        wind = self.rig.wind
        if key == "heading":
            d = wind.direction if wind is not None else np.array([1.0, 0.0, 0.0])
            return math.degrees(math.atan2(d[0], d[2]))
        return 0.0 if wind is None else float(getattr(wind, key))

    def parameter(self, key) -> Parameter:
        for p in self.parameters:
            if p.key == key:
                return p
        raise KeyError(key)

    def _show_collider(self, index) -> None:
        c = self.rig.colliders[index]
        self.parameter("collider").value = index
        radius = self.parameter("collider:radius")
        radius.value, radius.low, radius.high = float(c.radius), 0.0, max(0.5 * self.size, 2 * float(c.radius))
        radius.step = (radius.high - radius.low) / SLIDER_STEPS
        for axis, v in zip("xyz", c.offset):
            p = self.parameter(f"collider:offset_{axis}")
            p.value, p.low, p.high = float(v), float(v) - 0.5 * self.size, float(v) + 0.5 * self.size
            p.step = self.size / SLIDER_STEPS
        # a plane has no radius: its slider is shown but refuses (the message says why)

    @property
    def selected_collider(self) -> str | None:
        if not self.rig.colliders:
            return None
        return self.rig.colliders[int(self.parameter("collider").value)].name

    # -- edits -------------------------------------------------------------------------------
    def handles(self, key: str) -> bool:
        return key.split(":", 1)[0] in {k for k, *_ in GROUP_VALUES} | {WIND, COLLIDER}

    def set(self, key: str, value, record: bool = True) -> None:
        """Apply the panel value ``key`` = ``value`` live; ValueError (changing nothing) to refuse."""
        before = self.parameter(key).value
        kind, _, name = key.partition(":")
        if kind == COLLIDER and not name:
            self._show_collider(int(value))
            return  # picking is not an edit
        if kind == WIND:
            self._set_wind(name, float(value))
        elif kind == COLLIDER:
            self._set_collider(name, float(value))
        else:
            self._set_group(kind, name, float(value))
        self.parameter(key).value = value  # as the panel's Session.set does: the next edit's "before"
        if record:
            picked = self.parameter(COLLIDER).value if self.rig.colliders else None
            if self._merging != (key, picked):  # a drag is one edit, not one per frame
                self.undo_stack.append((key, before, picked))
            self._merging = (key, picked)

    def _set_group(self, kind, group, value) -> None:
        """Every chain of ``group`` moved with its first chain's first segment, which becomes
        ``value``: scaled by value / that segment's value (angles: moved by the difference),
        each chain keeping its own profile; set from scratch where that value is 0."""
        key = next(k for kk, _, k, *_ in GROUP_VALUES if kk == kind)
        members = self.groups[group]
        reference = self._group_value(kind, key, group)
        if kind in ROW_LIMITS:
            name, column = ROW_LIMITS[kind]
            rows = np.array(getattr(self.rig.chain_set, name), np.float64)
            for i in members:
                rows[self._rows(i), column] = np.radians(self._base[i][key][:, column] + (value - reference))
            self._pipeline().replace_parameters(**{name: rows})
            return
        scale = value / reference if reference > 0 and math.isfinite(reference) else None
        arrays = {}
        for i in members:
            base = self._base[i][key]
            if kind == "angle_limit":
                new = base + (value - reference)
            elif kind == "world_influence":
                new = value
            elif kind == "gravity":
                n = np.linalg.norm(base)
                new = base * scale if scale is not None else value * (base / n if n > 0 else DOWN)
            else:
                new = base * scale if scale is not None else np.full_like(base, value)
            arrays = changed_parameters(self.rig, [i], {key: new}, arrays)
        self._pipeline().replace_parameters(**arrays)

    def _set_wind(self, name, value) -> None:
        if name == "heading":
            a = math.radians(value)
            # rounded: a heading of 90° blows along +x, not [1, 0, 6.1e-17]
            self._pipeline().set_wind(direction=np.round([math.sin(a), 0.0, math.cos(a)], HEADING_DIGITS))
        else:
            self._pipeline().set_wind(**{name: value})

    def _set_collider(self, name, value) -> None:
        collider = self.rig.colliders[int(self.parameter("collider").value)]
        if name == "radius":
            if collider.shape == "plane":
                raise ValueError(f"collider {collider.name!r} is a plane: it has no radius")
            self._pipeline().set_collider(collider.name, radius=value)
        else:
            offset = np.array(collider.offset, np.float64)
            axis = "xyz".index(name[-1])
            move = value - offset[axis]
            offset[axis] = value
            changes = {"offset": offset}
            if collider.shape == "capsule":  # the whole capsule moves: its second end with the first
                changes["end"] = np.array(collider.end, np.float64) + np.eye(3)[axis] * move
            self._pipeline().set_collider(collider.name, **changes)

    def undo(self) -> str:
        """Take the last edit back; returns what was undone. ValueError when there is none."""
        if not self.undo_stack:
            raise ValueError("nothing to undo")
        key, value, picked = self.undo_stack.pop()
        self._merging = None
        p = self.parameter(key)
        if key.startswith(COLLIDER + ":"):
            self._show_collider(int(picked))  # the collider that was edited, picked again
        self.set(key, value, record=False)
        p.value = value
        return f"undid {p.section + ' ' if p.section else ''}{p.label} = {p.fmt % value}"

    def pick(self, x, y, camera, aspect, shapes) -> str | None:
        """The collider whose centre is nearest the click (x, y in [0, 1] from the top-left)
        on screen, within :data:`CLICK_PIXELS` at a 1000-pixel-high window; it becomes the
        picked one. ``shapes``: the frame's :class:`~gpu_jiggle.character.rig.model.ColliderShapes`."""
        if shapes is None or camera is None:
            return None
        centres = [(n, s[:3]) for n, s in zip(shapes.sphere_names, shapes.spheres)]
        centres += [(n, 0.5 * (k[:3] + k[3:6])) for n, k in zip(shapes.capsule_names, shapes.capsules)]
        if not centres:
            return None
        points = np.array([c for _, c in centres])
        clip = np.c_[points, np.ones(len(points))] @ camera.view_projection(aspect).T
        visible = clip[:, 3] > 0
        ndc = clip[:, :2] / np.where(visible, clip[:, 3], 1.0)[:, None]
        screen = np.c_[(ndc[:, 0] + 1) / 2 * aspect, (1 - ndc[:, 1]) / 2]  # height units
        distance = np.hypot(screen[:, 0] - x * aspect, screen[:, 1] - y)
        distance[~visible] = np.inf
        best = int(np.argmin(distance))
        if distance[best] * 1000.0 > CLICK_PIXELS:
            return None
        name = centres[best][0]
        self._show_collider([c.name for c in self.rig.colliders].index(name))
        return name

    # -- the file ----------------------------------------------------------------------------
    def _stat(self):
        if self.path is None:
            return None
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def _need_file(self, what) -> Path:
        if self.path is None:
            raise ValueError(f"{what}: the rig did not come from a TOML file ({self.rig.source}); "
                             f"'gpu-jiggle rig MODEL --out RIG.toml' writes one to play with --rig")
        return self.path

    def save(self) -> str:
        """Write the changed values into the rig's TOML file (whole or not at all); returns
        what was written. The file keeps its mode and owner; a link is written through.
        Raises ValueError (no TOML file, a file whose chains changed) or OSError (among them
        :class:`~gpu_jiggle.whole_files.WholeWriteError`: a rig with several hard links, or
        one this user may not write); the file is then as it was."""
        from ..character.baking.run import write_whole

        path = self._need_file("save")
        text = path.read_text(encoding="utf-8")
        new_text = saved_rig_text(text, self.rig, self.loaded)
        if new_text == text:
            return f"nothing changed: {path.name} kept"
        written = rig_from_dict(tomllib.loads(new_text), self.skeleton, str(path))  # reads back, before it is written
        write_whole(path.resolve(), new_text.encode("utf-8"))  # through a link (rigs/fox.toml), not over it
        self.loaded, self._file_state = written, self._stat()
        self._merging = None  # an edit after the save is undone back to the saved value, not past it
        changed = sum(1 for line in difflib.unified_diff(text.splitlines(), new_text.splitlines(), lineterm="", n=0)
                      if line.startswith("+") and not line.startswith("+++"))
        return f"saved {path.name} ({changed} line{'' if changed == 1 else 's'} written)"

    def revert(self) -> str:
        """Read the rig's file again and play its values (live when its chains are the same).
        Raises ValueError/OSError for a file that does not read (the values stay)."""
        path = self._need_file("revert")
        new = load_rig(path, self.skeleton)
        self._file_state = self._stat()
        return self._adopt(new, f"reverted to {path.name}")

    def poll(self) -> str | None:
        """When the rig's file changed on disk since it was last read or written, read it and
        play its values; returns what happened (a refusal is told, the values staying)."""
        state = self._stat()
        if self.path is None or state is None or state == self._file_state:
            return None
        self._file_state = state
        try:
            new = load_rig(self.path, self.skeleton)
        except (ValueError, OSError) as exc:
            return f"{self.path.name} changed on disk but does not read: {exc}"
        return self._adopt(new, f"{self.path.name} changed on disk: reloaded")

    def _adopt(self, new, said: str) -> str:
        if not same_layout(self.rig, new):
            raise ValueError(f"{said.split(':')[0]}: its chains or colliders are not those being played; "
                             f"restart play to load it")
        pipeline = self._pipeline()
        pipeline.replace_parameters(**{name: getattr(new.chain_set, name) for name in PointChainSet.PARAMETERS})
        self.rig.colliders[:] = new.colliders
        self.rig.constraints[:] = new.constraints
        if new.wind is not None:
            pipeline.set_wind(**{k: getattr(new.wind, k) for k in ("direction", "strength", "gust_amplitude",
                                                                 "gust_frequency", "gust_wavelength")})
        elif self.rig.wind is not None:
            pipeline.set_wind(strength=0.0, gust_amplitude=0.0)
            self.rig.wind = None
        self.loaded = new
        self._take_base()
        picked = int(self.parameter("collider").value) if self.rig.colliders else 0
        fresh = {p.key: p for p in self._parameters()}
        for p in self.parameters:
            if p.key in fresh:
                p.value, p.low, p.high, p.step = fresh[p.key].value, fresh[p.key].low, fresh[p.key].high, fresh[p.key].step
        if self.rig.colliders:
            self._show_collider(picked)
        self.undo_stack.clear()
        self._merging = None
        return said

