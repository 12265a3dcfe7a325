"""What the demos' bodies move by, outside the library: keyframe tracks (:mod:`.keyframes`)
and the 2D arm's two-bone IK (:mod:`.ik_2d`). The library's characters take their motion
from glTF clips and their IK from :mod:`gpu_jiggle.character.pose.ik3d`."""
