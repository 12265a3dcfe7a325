"""Saving a solver's state and going on from it (SPEC section 2: a restored solver gives
bit-identical frames): the part of :class:`~gpu_jiggle.Solver` that writes and reads the
versioned blob of :mod:`gpu_jiggle.sim.state`.
"""
from __future__ import annotations

import numpy as np

from . import layouts, state, validation


class SavedState:
    """``save_state``, ``restore`` and ``load_state`` of :class:`~gpu_jiggle.Solver` (a base
    class of it; it uses the solver's chain set, clocks, backend, levels of detail, teleport
    flags and per-frame inputs)."""

    def save_state(self) -> bytes:
        """Everything needed to go on from this frame, as bytes (:mod:`gpu_jiggle.sim.state`:
        versioned, with the chain set, the clocks, the dynamic state, the outputs and the
        per-frame inputs). Restoring it into a solver of the same chain set on the same
        backend gives bit-identical frames from here on.

        Raises: RuntimeError after :meth:`release`."""
        arrays = state.header(self.KIND, self._chain_set, self.substep, self.max_substeps, self._option_names())
        for name in ("chain_state", "segment_state", "joint_output", "segment_output"):
            arrays["record." + name] = self._backend.read(name).view(np.uint8)
        arrays.update({"clock": np.array(self._clock.snapshot(), np.float64), "lod": self._lod,
                       "lod_ran": self._lod_ran, "teleport": self._teleport, "advanced": np.array(self._advanced)})
        arrays.update({"input." + k: v for k, v in self._inputs_arrays().items()})
        return state.pack(arrays)

    def restore(self, blob) -> None:
        """Go on from a state saved by :meth:`save_state` of a solver with the same chain set
        (parameters included), substep, cap and options (target path, damping frame,
        integrator; a point solver's rotation_outputs).

        Raises: ValueError for a blob of another chain set, kind, format or model version, or
        a damaged one (nothing is changed then); TypeError for anything but bytes."""
        arrays = state.unpack(blob)
        cs = self._chain_set
        state.check_header(arrays, self.KIND, cs, self.substep, self.max_substeps, self._option_names())
        records = state.records(arrays, self.RECORDS, state.record_sizes(cs.chain_count, cs.segment_count))
        c = state.clock(arrays, len(self._clock.snapshot()))
        lod = state.array(arrays, "lod", (cs.chain_count,), np.uint32)
        # The levels the last frame ran (Solver.frame_levels); states saved before had none.
        lod_ran = state.array(arrays, "lod_ran", (cs.chain_count,), np.uint32) if "lod_ran" in arrays else lod
        teleport = state.array(arrays, "teleport", (cs.chain_count,), np.uint32)
        advanced = bool(state.array(arrays, "advanced", ()))
        validation.require("state lod", lod, lod <= layouts.LOD_FROZEN, "a level of detail 0, 1 or 2")
        validation.require("state lod_ran", lod_ran, lod_ran <= layouts.LOD_FROZEN, "a level of detail 0, 1 or 2")
        mirror = layouts.TELEPORT_MIRROR if self.KIND == "angle" else 0  # a 2D turn-round (Solver.mirror)
        flags = layouts.TELEPORT_MODE_MASK | layouts.TELEPORT_MOVING | mirror
        validation.require("state teleport", teleport, ((teleport & ~np.uint32(flags)) == 0)
                           & ((teleport & layouts.TELEPORT_MODE_MASK) <= layouts.TELEPORT_KEEP_SHAPE),
                           "teleport flags: snap (1) or keep_shape (2), with moving (4)"
                           + (" and mirror (8)" if mirror else "") + ", or 0")
        lag = records["chain_state"]["path_lag"]
        validation.require("state chain_state.path_lag", lag, lag >= 0, "a time in seconds >= 0")
        apply_inputs = self._restore_inputs({k[len("input."):]: v for k, v in arrays.items() if k.startswith("input.")})
        self._backend.write_state(records["chain_state"], records["segment_state"])
        self._backend.write_outputs(records["joint_output"], records["segment_output"])
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
        arrays = state.unpack(blob)
        kind = str(arrays.get("kind", ""))
        solver = {"angle": "AngleSolver", "point": "PointSolver"}.get(kind)
        if solver is None:
            raise ValueError(f"state: not a gpu_jiggle solver state (kind {kind!r})")
        from .solver import Solver

        target = next(k for k in Solver.__subclasses__() if k.__name__ == solver)
        state.check_header(arrays, target.KIND)
        counts = state.segment_counts(arrays)  # the records must fit them before anything of their size is made
        state.records(arrays, target.RECORDS, state.record_sizes(counts.size, int(counts.sum())))
        chain_set = target.chain_set_from_state(arrays)
        made = target(chain_set, backend=backend, substep=state.scalar(arrays, "substep"),
                      max_substeps=state.scalar(arrays, "max_substeps", integer=True), context=context,
                      work_group_size=work_group_size, **state.options(arrays, target.KIND))
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
            return cls.CHAIN_SET(state.segment_counts(arrays), **params)
        except TypeError as exc:  # a parameter the chain set needs is missing
            raise ValueError(f"state: its chain set cannot be rebuilt ({exc})") from None
