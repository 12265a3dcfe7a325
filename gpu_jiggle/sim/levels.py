"""The levels of detail of a solver's chains and the stability check at each level's
substep: :class:`LevelsOfDetail`, a base of :class:`~gpu_jiggle.sim.solver.Solver` (which
holds the clock ``_clock``, the chain set, the wind and the levels ``_lod`` / ``_lod_ran``).
Source: ``SPEC.md`` sections 1 ("Stability of the whole step") and 2 ("Levels of detail").
"""
from __future__ import annotations

import numpy as np

from . import layouts, validation
from .chains import AngleChainSet
from .inputs import Wind
from .spring import UnstableSpringError, check_stable

#: The words a refusal at level of detail "half" adds after the substep.
HALF_RATE = "at level of detail 'half'"


class LevelsOfDetail:
    """Levels of detail per chain (full, half, frozen) and the stability of the chain set at
    the substep each level runs."""

    @property
    def lod(self) -> np.ndarray:
        """(C,) uint32 levels of detail (0 full, 1 half, 2 frozen), as set by :meth:`set_lod`."""
        return self._lod.copy()

    def frame_levels(self) -> np.ndarray:
        """(C,) uint32: the levels of detail the next ``advance`` runs (SPEC 2, "Levels of
        detail"). The half rate runs on every second frame with both frames' time; on such a
        frame a chain that enters "half" (it is one frame behind, not two) or leaves it (it is
        two frames behind, not one) keeps its last level for this frame and switches on the
        next, so that no switch takes a frame's time twice or leaves one out. Freezing takes
        effect at once."""
        if not self._clock.half_turn:
            return self._lod.copy()
        changes_rate = (self._lod == layouts.LOD_HALF) != (self._lod_ran == layouts.LOD_HALF)
        return np.where(changes_rate & (self._lod != layouts.LOD_FROZEN), self._lod_ran, self._lod).astype(np.uint32)

    def set_lod(self, levels) -> None:
        """Level of detail per chain, from the next ``advance`` on.

        Args:
            levels: (C,) or a scalar, each ``"full"`` (0: every frame at the substep h),
                ``"half"`` (1: every second frame, at substep 2h with both frames' time, so
                the motion keeps its speed at half the cost) or ``"frozen"`` (2: sits on its
                animated targets, nothing integrated).

        Raises:
            ValueError: an unknown level, a wrong shape, or a chain whose frequency is not
                stable at the substep 2h (the message gives the largest stable one).

            TypeError: levels that are neither names nor integers.

        A chain that enters or leaves "half" just before a frame that runs the half rate
        switches one frame later (:meth:`frame_levels`), so the switch is not seen.
        """
        self._require_live("set_lod")
        lod = validation.lod_array("levels", levels, self._chain_set.chain_count)
        self._check_half_rate(self._chain_set, lod)
        self._lod = lod

    def _check_stable(self, chain_set, wind) -> None:
        """Refuse what the substep cannot keep stable with ``wind`` (:func:`check_runs_stable`)."""
        check_runs_stable(chain_set, self.substep, self.integrator, wind)

    def _check_half_rate(self, chain_set, lod, wind=None) -> None:
        half = np.repeat(lod == layouts.LOD_HALF, chain_set.segment_counts)
        if half.any():
            check_runs_stable(chain_set, self._clock.half.substep, self.integrator,
                              self._wind if wind is None else wind, where=half, what=HALF_RATE)


def check_runs_stable(chain_set, substep: float, integrator: str = "semi-implicit", wind=None, where=None,
                      what: str = "") -> None:
    """The stability check of a chain set as a solver runs it (SPEC section 1, "Stability"):
    its springs, air drag and, under ``wind`` (a :class:`~gpu_jiggle.sim.inputs.Wind`; None:
    no wind), the external terms of :func:`stability_terms`, for ``substep`` seconds with
    ``integrator``; ``where``, ``what``: as :func:`~gpu_jiggle.sim.spring.check_stable`. The
    one place where a chain set's stability is judged: the solver, the rig reader and a
    pipeline's live changes all call it.

    Raises: UnstableSpringError (a ValueError) at the first unstable segment, as
    :func:`check_chain_set_stable`."""
    if wind is None:
        wind = Wind.none(2 if isinstance(chain_set, AngleChainSet) else 3)
    check_chain_set_stable(chain_set, substep, where=where, what=what, integrator=integrator,
                           **stability_terms(chain_set, wind))


def check_chain_set_stable(chain_set, substep: float, **terms) -> None:
    """:func:`~gpu_jiggle.sim.spring.check_stable` of ``chain_set``'s springs (its (S,)
    frequency in Hz and damping ratio) for ``substep`` seconds; ``terms``: check_stable's other
    arguments.

    Raises: UnstableSpringError (a ValueError) at the first unstable segment, its ``index``
    into the (S,) arrays, its message also naming the chain and the segment within it."""
    try:
        check_stable(chain_set.frequency, chain_set.damping_ratio, substep, **terms)
    except UnstableSpringError as exc:
        raise exc.in_chain(*chain_set.locate("frequency", exc.index)) from None


def stability_terms(chain_set, wind) -> dict:
    """The external terms of :func:`~gpu_jiggle.sim.spring.check_stable` for ``chain_set``
    (either kind) under ``wind`` (:class:`~gpu_jiggle.sim.inputs.Wind`): air drag, the gust
    ``(A, |κ|)``, and for angle chains each segment's length, the largest acceleration
    across it, ``|g + w0| + A``, its inertia μ and its chain's root acceleration bound
    (``max_root_acceleration``; SPEC section 1, "Stability")."""
    amplitude = abs(float(wind.gust_amplitude))
    terms = {"air_drag": chain_set.air_drag,
             "gust": (amplitude, float(np.linalg.norm(wind.gust_wave_vector)))}
    if isinstance(chain_set, AngleChainSet):
        across = np.linalg.norm(np.asarray(chain_set.gravity, np.float64) + wind.acceleration, axis=-1) + amplitude
        terms.update(lengths=chain_set.lengths, load=np.repeat(across, chain_set.segment_counts),
                     inertia=chain_set.inertia,
                     root_acceleration=np.repeat(chain_set.max_root_acceleration, chain_set.segment_counts))
    return terms
