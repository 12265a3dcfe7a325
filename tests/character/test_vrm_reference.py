"""gpu_jiggle's VRM mapping against VRM's own per-frame update (tests/character/vrm_reference.py,
from the VRMC_springBone specification's pseudocode), on Godette's hair driven by the built-in
head shake: at the reference rate (60 fps) the two swing at the same frequency and decay and
their tip paths agree; at 30 and 144 fps VRM's update drifts from its own 60 fps motion while
gpu_jiggle's stays with its own."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpu_jiggle.character.gltf.loader import Character
from gpu_jiggle.character.motion import builtin_motion
from gpu_jiggle.character.pipeline import Pipeline
from gpu_jiggle.character.gltf.vrm import read_springs
from gpu_jiggle.character.rig.from_vrm import REFERENCE_RATE, rig_from_vrm
from vrm_reference import VrmReference

GODETTE = Path(__file__).resolve().parents[2] / "data" / "vrm" / "Godette_vrm_v4.vrm"
SECONDS = 3.0       # the shake (1 s), then two seconds of free swing
SHAKE_ENDS = 1.0    # s: when the head stops
#: Chains clear of every collider while they swing (the front hair in the middle, the hair
#: balls): their free swing is the linear one the mapping matches.
FREE = ("FrontHair_Center_L", "FrontHair_Center_R", "HairBall_L", "HairBall_R", "HairBall_Center")


@pytest.fixture(scope="module")
def scene():
    godette = Character.load(GODETTE)
    return godette, read_springs(godette), builtin_motion(godette, "shake")


def _frames(fps):
    return np.arange(1, int(round(SECONDS * fps)) + 1) / fps


def _animated(scene, fps):
    """(F, J, 3) where every tail would be carried rigidly by the animation (no springs)."""
    godette, springs, motion = scene
    tails = VrmReference(godette.skeleton, springs).joints
    with Pipeline(godette, None, motion, backend="cpu") as pipeline:
        out = []
        for t in _frames(fps):
            world = godette.skeleton.world_matrices(pipeline.sample_keyframes(t))
            out.append([(world[node] @ np.append(tail, 1.0))[:3] for node, tail, _, _ in tails])
    return np.array(out)


def _reference(scene, fps):
    godette, springs, motion = scene
    reference = VrmReference(godette.skeleton, springs)
    with Pipeline(godette, None, motion, backend="cpu") as pipeline:
        reference.reset(pipeline.sample_keyframes(0.0))
        return np.array([reference.step(pipeline.sample_keyframes(t), 1.0 / fps)[1] for t in _frames(fps)])


def _ours(scene, fps, backend="cpu"):
    godette, _, motion = scene
    rig = rig_from_vrm(godette)
    with Pipeline(godette, rig, motion, backend=backend) as pipeline:
        pipeline.step(0.0, 1.0 / fps)
        return np.array([np.concatenate([p[1:] for p in pipeline.step(t, 1.0 / fps).chain_positions])
                         for t in _frames(fps)])


def _swing(times, deflection):
    """(frequency Hz, decay 1/s) of a tail's free swing after the shake: zero crossings of its
    deflection along its main direction, and the log of its half-cycle peaks."""
    keep = times > SHAKE_ENDS + 1e-9
    times, deflection = times[keep], deflection[keep]
    direction = np.linalg.svd(deflection - deflection.mean(axis=0), full_matrices=False)[2][0]
    x = deflection @ direction
    k = np.flatnonzero(np.sign(x[:-1]) * np.sign(x[1:]) < 0)
    crossings = times[k] - x[k] * (times[k + 1] - times[k]) / (x[k + 1] - x[k])
    half = float(np.mean(np.diff(crossings[:6])))
    peaks = [np.abs(x[(times > a) & (times < b)]).max() for a, b in zip(crossings[:5], crossings[1:6])]
    return 1.0 / (2.0 * half), -np.polyfit(np.arange(len(peaks)) * half, np.log(peaks), 1)[0]


def _tails(scene, names):
    springs = scene[1].springs
    index = [k for k, s in enumerate(springs) for _ in s.joints]
    return [j for j, k in enumerate(index) if springs[k].name.split(": ")[-1] in names]


def test_at_the_reference_rate_the_swing_has_vrms_frequency_and_decay(scene):
    fps = REFERENCE_RATE
    animated = _animated(scene, fps)
    ours, reference = _ours(scene, fps) - animated, _reference(scene, fps) - animated
    times = _frames(fps)
    for j in _tails(scene, FREE):
        f_ref, decay_ref = _swing(times, reference[:, j])
        f_ours, decay_ours = _swing(times, ours[:, j])
        print(f"tail {j}: VRM {f_ref:.3f} Hz, {decay_ref:.2f}/s; gpu_jiggle {f_ours:.3f} Hz, {decay_ours:.2f}/s")
        assert f_ours == pytest.approx(f_ref, rel=0.05)
        assert decay_ours == pytest.approx(decay_ref, rel=0.05)


def test_at_the_reference_rate_the_tip_paths_agree(scene, backend):
    fps = REFERENCE_RATE
    animated = _animated(scene, fps)
    ours, reference = _ours(scene, fps, backend) - animated, _reference(scene, fps) - animated
    for j in _tails(scene, FREE):
        rms = float(np.sqrt(np.mean(np.sum(reference[:, j] ** 2, axis=1))))
        apart = float(np.sqrt(np.mean(np.sum((ours[:, j] - reference[:, j]) ** 2, axis=1))))
        peak_ours, peak_ref = (np.linalg.norm(d[:, j], axis=1).max() for d in (ours, reference))
        print(f"tail {j}: rms swing {rms:.4f}, rms apart {apart:.4f} ({apart / rms:.1%}); peaks {peak_ours:.4f} "
              f"vs {peak_ref:.4f}")
        # the stated tolerance (docs/VRM.md, "How close"): VRM's step drives a tail with about
        # 1/(1 + κ/2) of its target's acceleration, which a spring with VRM's poles cannot also
        # do; measured 16-50 % of the swing's rms apart, the largest swings 14-42 % larger
        assert apart <= 0.6 * rms
        assert peak_ref <= peak_ours <= 1.5 * peak_ref


def test_at_other_frame_rates_vrm_drifts_and_gpu_jiggle_does_not(scene):
    grid = np.arange(1, int(SECONDS * 6)) / 6.0  # frame times of 30, 60 and 144 fps alike

    def at_grid(path, fps):
        return path[np.rint(grid * fps).astype(int) - 1]

    runs = {fps: (_animated(scene, fps), _ours(scene, fps), _reference(scene, fps)) for fps in (30, 60, 144)}
    travel = np.linalg.norm(runs[60][0] - runs[60][0][0], axis=2).max(axis=0)  # each tail's carried path
    moved = travel > 0.0  # the ribbon's tails: on the chest, which the shake leaves still
    drift = {}
    for fps in (30, 144):
        for name, which in (("gpu_jiggle", 1), ("VRM", 2)):
            apart = np.linalg.norm(at_grid(runs[fps][which], fps) - at_grid(runs[60][which], 60), axis=2)
            drift[name, fps] = float((apart.max(axis=0)[moved] / travel[moved]).max())
            print(f"{name} at {fps} fps: its tip paths {drift[name, fps]:.1%} of the motion from its own at 60 fps")
    for fps in (30, 144):
        assert drift["gpu_jiggle", fps] <= 0.02
        assert drift["VRM", fps] >= 5 * drift["gpu_jiggle", fps]
