"""What a solver asks of its backend: :class:`Backend` (both chain kinds) and
:class:`PointBackend` (point chains, with colliders), which the numpy reference
(:mod:`.reference`) and the GLSL compute path (:mod:`.gpu`) both implement.

A backend holds the rig, the state, the targets and the outputs of one chain kind as the
std430 records of :mod:`gpu_jiggle.sim.layouts`, so the GPU buffers and the reference's arrays
are byte-for-byte comparable.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


class LoopLimitError(ValueError):
    """A chain too long (with the frame's colliders) for one substep in one dispatch under
    Mesa's llvmpipe, whose loop limiter stops a shader's loops after 65535 iterations."""


@runtime_checkable
class Backend(Protocol):
    """One chain kind's records and the frame that advances them."""

    #: ``"gpu"`` or ``"cpu"``.
    name: str

    def upload_rig(self, chain_rig: np.ndarray, segment_rig: np.ndarray, exact_step: np.ndarray) -> None:
        """The static rig's records and the exact integrator's steps (SPEC 1; one placeholder
        record for the semi-implicit step), again only when they change."""

    def upload_targets(self, chain_target: np.ndarray, *kind_targets) -> None:
        """This frame's pose, teleport flags and levels of detail: angle chains
        ``(chain_target, local_angle)``, the (S,) local target angles; point chains
        ``(chain_target, chain_control, joint_offset, joint_rotation)``, the (S, 3) joint
        offsets and (S, 4) rotations or None when unchanged."""

    def prepare(self, header: np.ndarray, **switch_inputs) -> None:
        """Compile (GPU) the kernel variants that frames with this frame buffer's header run,
        before :meth:`run_frame` needs them; nothing on the numpy path."""

    def run_frame(self, params: np.ndarray) -> None:
        """Teleports, then every substep of the frame, then the frame-time outputs, from a
        frame buffer (:func:`gpu_jiggle.sim.packing.frame_buffer`)."""

    def read(self, name: str) -> np.ndarray:
        """One of ``chain_state, segment_state, joint_output, segment_output`` as a numpy
        record array (a copy)."""

    def read_field(self, name: str, field: str) -> np.ndarray:
        """One field of :meth:`read`'s records, in the solver's order."""

    def write_state(self, chain_state: np.ndarray, segment_state: np.ndarray) -> None:
        """Replace the dynamic state (to rebase and to restore a saved state)."""

    def write_outputs(self, joint_output: np.ndarray, segment_output: np.ndarray) -> None:
        """Replace the outputs (to restore a saved state)."""

    def release(self) -> None:
        """Free what it holds (GPU buffers and programs; nothing on the numpy path)."""


@runtime_checkable
class PointBackend(Backend, Protocol):
    """A point-chain backend: also the frame's colliders (SPEC 4.2)."""

    def check_colliders(self, sphere_count: int, capsule_count: int, plane_count: int) -> None:
        """Refuse, before anything changes, colliders the backend cannot run."""

    def upload_colliders(self, spheres: np.ndarray, capsules: np.ndarray, planes: np.ndarray) -> None:
        """The frame's collider records."""
