"""Poses and their motion, the wing every other one stands on: quaternions (:mod:`.quat`),
skeletons and local/world poses (:mod:`.skeleton`), clips and their sampling
(:mod:`.animation`), 3D two-bone IK and look-at (:mod:`.ik3d`), and a chain's joints posed
from the springs (:mod:`.chain_pose`). Imports nothing else of :mod:`gpu_jiggle.character`."""
