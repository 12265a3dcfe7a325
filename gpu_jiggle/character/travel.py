"""Root motion: carrying a character through the world while its clip plays on the spot.

glTF locomotion clips (the Fox's Walk and Run) run on the spot. :func:`ground_speed` measures
the speed at which the feet push the ground back; :class:`TravellingPipeline` moves every root
joint forward at a velocity after the keyframes, so that the springs feel the motion; and
:func:`make_pipeline` builds one for a clip, with ``travel="auto"`` (the clip's own ground
speed: a clip that stands still, like the Fox's Survey, stays where it is) or a fixed speed
(``0`` keeps every clip on the spot). A built-in :class:`~gpu_jiggle.character.motion.Motion`
gives its own speed instead of the feet's (the walk travels, idle and turn stay on the spot).
Look-at targets travel along with the character.

Positions are world space in the model's length unit (the Fox's is about a centimetre),
times in seconds.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from .motion import Motion
from .pipeline import Pipeline
from .rig.model import LookAtSpec

__all__ = ["ground_speed", "TravellingPipeline", "make_pipeline", "preview_constraints", "SPEED_SAMPLES_PER_SECOND",
           "MAX_SPEED_SAMPLES"]

SPEED_SAMPLES_PER_SECOND = 60.0  # how often ground_speed samples the clip
MAX_SPEED_SAMPLES = 600          # at most this many samples: the first 10 s of a clip at 60 Hz
PLANTED_HEIGHT = 0.03            # a foot within this fraction of the body's extent above its lowest is planted
STANDING_SPEED = 0.05            # slower than this fraction of the body's extent per second: standing
DEFAULT_DIRECTION = (0.0, 0.0, 1.0)  # a fixed travel speed goes along +z when the feet give no direction


def ground_speed(character, clip, samples_per_second: float = SPEED_SAMPLES_PER_SECOND,
                 max_samples: int = MAX_SPEED_SAMPLES):
    """``(speed, direction)``: how fast an on-the-spot locomotion clip would move the character
    forward, from its feet.

    What is sampled: the pose every ``1 / samples_per_second`` s from the clip's start over
    one loop of ``clip``, but never more than ``max_samples`` poses, so only the first
    ``max_samples / samples_per_second`` s of a longer clip are looked at (10 s by default;
    a clip whose last key lies far out costs no more than that). Over those samples the
    lowest joint of the first skin (the foot on the ground) slides back at the speed the
    body would move; the median of its horizontal velocity while planted, reversed, is the
    answer: speed in length unit/s (≥ 0) and a (3,) unit world direction (zero when the
    speed is 0). Only the skin's end joints (feet, hands, head, tail tip) count, not a root
    joint resting on the floor. A clip whose lowest joint hardly moves (standing, looking
    around) gives 0, and so do no clip, no skin or a clip without duration.

    Raises:
        ValueError: ``samples_per_second`` not > 0 or ``max_samples`` under 2.
    """
    if not (math.isfinite(samples_per_second) and samples_per_second > 0):
        raise ValueError(f"samples_per_second = {samples_per_second!r}: expected a rate > 0 (Hz)")
    if int(max_samples) < 2:
        raise ValueError(f"max_samples = {max_samples!r}: expected at least 2")
    skin = character.skin
    if clip is None or skin is None or clip.duration <= 0:
        return 0.0, np.zeros(3)
    sk = character.skeleton
    rest = sk.rest_pose()
    dt = 1.0 / samples_per_second
    count = min(int(math.ceil(clip.duration * samples_per_second)) + 1, int(max_samples))
    times = clip.start + np.arange(count) * dt
    joints = [j for j in skin.joints if not any(c in skin.joints for c in sk.children(int(j)))]
    positions = []
    for t in times:
        world = sk.world_matrices(clip.sample(rest, float(t)))
        positions.append(world[joints, :3, 3])
    positions = np.asarray(positions)                   # (T, J, 3)
    lowest = np.argmin(positions[:-1, :, 1], axis=1)    # the foot on the ground, per sample
    k = np.arange(len(lowest))
    extent = float(np.ptp(positions.reshape(-1, 3), axis=0).max()) or 1.0
    height = positions[k, lowest, 1]
    planted = height <= height.min() + PLANTED_HEIGHT * extent   # on the floor, not in a leap
    velocity = (positions[k + 1, lowest] - positions[k, lowest])[planted] / dt
    velocity[:, 1] = 0.0
    push = -np.median(velocity, axis=0)
    speed = float(np.linalg.norm(push))
    if speed < STANDING_SPEED * extent:
        return 0.0, np.zeros(3)
    return speed, push / speed


class TravellingPipeline(Pipeline):
    """A :class:`~gpu_jiggle.character.pipeline.Pipeline` whose character is carried through the world:
    every root node is translated by ``offset + velocity · (t - start)`` (world, float64),
    after the keyframes, so the springs feel the motion.

    Args (besides the pipeline's): velocity: (3,) world length unit/s. start: the time the
    travel starts from (s).
    """

    def __init__(self, *args, velocity=(0.0, 0.0, 0.0), start: float = 0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.velocity = np.asarray(velocity, np.float64).reshape(3)
        self.start = float(start)
        self.offset = np.zeros(3)
        self._roots = np.flatnonzero(self.skeleton.parents < 0)

    def root_offset(self, time: float) -> np.ndarray:
        """(3,) float64 world translation added to the roots at playing time ``time`` (s)."""
        return self.offset + self.velocity * (float(time) - self.start)

    def sample_keyframes(self, time: float):
        pose = super().sample_keyframes(time)
        pose.translation[self._roots] += self.root_offset(time)
        return pose

    def teleport(self, jump=(0.0, 0.0, 0.0), keep_shape: bool = True) -> None:
        """Move the character by ``jump`` (3,) world from the next step on, the springs
        carried across with their shape and the colliders snapped instead of swept
        (:meth:`Pipeline.teleport <gpu_jiggle.character.pipeline.Pipeline.teleport>`)."""
        jump = np.asarray(jump, np.float64).reshape(3)
        super().teleport(keep_shape)
        self.offset = self.offset + jump


def make_pipeline(character, rig, clip, springs: bool = True, travel="auto", backend: str = "auto",
                  context=None, look_at: bool = False) -> TravellingPipeline:
    """A :class:`TravellingPipeline` for ``clip`` (a name or a clip; unknown names raise
    ValueError listing the clips); ``travel`` is ``"auto"`` (:func:`ground_speed`) or a speed
    ≥ 0 in length unit/s along the direction the feet give (+z when they give none; other
    values raise ValueError; a :class:`~gpu_jiggle.character.motion.Motion` gives its own speed
    and direction for ``"auto"``). ``look_at``: turn on the rig's look-at constraints (enabled or
    not in the file; the rig's enabled two-bone IK stays on, :func:`preview_constraints`), their targets
    carried along with the character, so the head turns to them after the keyframes and before the springs."""
    clip_obj = character.clip(clip) if isinstance(clip, str) else clip
    if isinstance(clip_obj, Motion):
        speed, direction = clip_obj.speed, (clip_obj.direction if clip_obj.speed > 0 else np.zeros(3))
    else:
        speed, direction = ground_speed(character, clip_obj)
    if travel != "auto":
        value = float(travel)
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"travel = {travel!r}: expected 'auto' or a speed >= 0 (length unit/s)")
        speed, direction = value, (direction if speed > 0 else np.array(DEFAULT_DIRECTION))
    start = clip_obj.start if clip_obj is not None else 0.0
    velocity = speed * direction
    constraints = preview_constraints(rig, True, velocity, start) if look_at else None
    return TravellingPipeline(character, rig, clip=clip_obj, springs=springs, backend=backend, context=context,
                              velocity=velocity, start=start, constraints=constraints)


#: The most frames a preroll plays before the first frame shown: about 55 minutes at 60 fps (a
#: bake simulates as many at most, bake.MAX_BAKE_FRAMES); 100 s of preroll takes about 2 s.
MAX_PREROLL_FRAMES = 200_000


def preroll_frames(seconds: float, fps: float) -> int:
    """How many frames of ``1/fps`` a preroll of ``seconds`` plays: round(seconds · fps).

    Raises: ValueError for seconds that are not a finite number >= 0, an fps that is not a
    finite number > 0, or more than MAX_PREROLL_FRAMES frames."""
    seconds, fps = float(seconds), float(fps)
    if not (math.isfinite(seconds) and seconds >= 0):
        raise ValueError(f"preroll = {seconds!r}: expected a finite number of seconds >= 0")
    if not (math.isfinite(fps) and fps > 0):
        raise ValueError(f"fps = {fps!r}: expected a frame rate > 0")
    if seconds * fps > MAX_PREROLL_FRAMES:
        raise ValueError(f"preroll = {seconds:g} s at {fps:g} fps is {math.ceil(seconds * fps)} frames to play before "
                         f"the first; at most {MAX_PREROLL_FRAMES} (gpu_jiggle.character.travel.MAX_PREROLL_FRAMES, "
                         f"{MAX_PREROLL_FRAMES / fps:g} s at {fps:g} fps)")
    return int(round(seconds * fps))


def run_preroll(pipeline, start: float, fps: float, seconds: float) -> int:
    """Play ``seconds`` of the clip before ``start`` through ``pipeline``, so that the frame at
    ``start`` shows the chains hanging as they do in a bake's first key: ``P = round(seconds ·
    fps)`` frames of ``1/fps`` at the playing times ``start - P/fps, ..., start - 1/fps`` (a
    looping clip wraps them into the clip, as the bake's pre-roll does; a travelling
    character travels on through them, so nothing jumps at ``start``). Returns P.

    Raises: what :func:`preroll_frames` raises (nothing is stepped)."""
    count = preroll_frames(seconds, fps)
    fps = float(fps)
    for k in range(count, 0, -1):
        pipeline.step(float(start) - k / fps, 1.0 / fps)
    return count


def preview_constraints(rig, look_at: bool = False, velocity=(0.0, 0.0, 0.0), start: float = 0.0) -> list:
    """The constraints a preview applies after the keyframes (what :func:`make_pipeline` gives
    its pipeline, and what ``bake`` records): the rig's enabled ones, in file order; with
    ``look_at`` every look-at of the rig too, whether enabled in the file or not, its target
    carried at ``velocity`` ((3,) world, length unit/s) from time ``start`` (s). A list of
    :class:`~gpu_jiggle.character.rig.model.LookAtSpec` / ``TwoBoneIKSpec``; ``[]`` for no rig."""
    if rig is None:
        return []
    if not look_at:
        return rig.enabled_constraints()
    velocity = np.asarray(velocity, np.float64).reshape(3)
    return [dataclasses.replace(spec, enabled=True, target_fn=_travelling_target(spec, velocity, start))
            if isinstance(spec, LookAtSpec) else spec
            for spec in rig.constraints if isinstance(spec, LookAtSpec) or spec.enabled]


def _travelling_target(spec, velocity, start):
    """The spec's own target path, moved along with a character travelling at ``velocity``."""
    def target(t):
        return spec.target_at(t) + velocity * (float(t) - start)
    return target
