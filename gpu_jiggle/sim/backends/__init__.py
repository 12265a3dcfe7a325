"""Backends: the numpy reference and the GLSL compute path, with one interface.

A backend holds the rig, the state, the targets and the outputs as the std430 records of
:mod:`gpu_jiggle.sim.layouts` and offers:

- ``upload_rig(chain_rig, segment_rig)``: the static rig (again only when it changes);
- ``upload_targets(chain_target, local_angle)``: this frame's pose and teleport flags;
- ``run_frame(params)``: teleports, then every substep of the frame, then the frame-time
  outputs, from a FrameParams buffer (:func:`gpu_jiggle.sim.packing.frame_params`);
- ``read(name)``: one of ``chain_state, segment_state, joint_output, segment_output`` as a
  numpy record array (a copy);
- ``write_state(chain_state, segment_state)``: replaces the dynamic state (used to restore).
"""
