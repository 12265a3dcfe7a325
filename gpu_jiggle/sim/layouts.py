"""std430 layouts and bindings: one numpy structured dtype per GLSL struct and one binding
number per storage buffer, the single host-side source of truth for the buffers the compute
shaders read and write.

Each dtype spells out its padding and its size is asserted. ``tests/sim/test_layouts.py``
parses the struct declarations and ``layout(std430, binding = N)`` lines of
``shaders/sim/common.glsl``, ``angle_common.glsl`` and ``point_common.glsl`` and checks them
against these.
"""
from __future__ import annotations

import numpy as np


def _struct(fields, size):
    dtype = np.dtype(fields, align=False)
    assert dtype.itemsize == size, (fields, dtype.itemsize, size)
    return dtype


#: The substeps one level of detail runs in a frame (common.glsl ``Schedule``); start_lag,
#: end_lag: seconds from its clock's last substep to the last frame's time, before and after
#: this frame; frame_time: the frame's time (s).
SCHEDULE = _struct([("substep_count", "<u4"), ("substep", "<f4"), ("inv_path_step", "<f4"), ("blend", "<f4"),
                    ("gust_phase", "<f4"), ("collider_time_scale", "<f4"), ("span", "<f4"), ("inv_span", "<f4"),
                    ("start_lag", "<f4"), ("end_lag", "<f4"), ("frame_time", "<f4"), ("pad0", "<f4")], 48)

#: The exact integrator's step of one segment for one substep length (common.glsl
#: ``ExactStep``; SPEC 1, :mod:`gpu_jiggle.sim.integrator`): the offset d from the target and
#: its rate d' change by ``Δd = d_d·d + d_v·d' + d_b·b`` and ``Δd' = v_d·d + v_v·d' + v_b·b``
#: (b the held external acceleration). Two per segment, ``2·s`` at the substep h and
#: ``2·s + 1`` at the half rate's 2h.
EXACT_STEP_FIELDS = ("d_d", "d_v", "d_b", "v_d", "v_v", "v_b")
EXACT_STEP = _struct([(name, "<f4") for name in EXACT_STEP_FIELDS] + [("pad0", "<f4"), ("pad1", "<f4")], 32)

#: Level-of-detail values shared with the shaders (LOD_* defines in common.glsl).
LOD_FULL, LOD_HALF, LOD_FROZEN = 0, 1, 2

#: Per angle chain, static: where its segments and joints start in the flat arrays, and its
#: gravity g (length/s², world, SPEC 3).
ANGLE_CHAIN_RIG = _struct([("first_segment", "<u4"), ("segment_count", "<u4"), ("first_joint", "<u4"),
                           ("pad0", "<u4"), ("gravity", "<f4", (2,)), ("pad1", "<f4"), ("pad2", "<f4")], 32)

#: Per angle segment, static: length (unit), its reciprocal, k (1/s²), c (1/s), inertia μ,
#: angle limit β (rad, inf for none), air drag c_air (1/s).
ANGLE_SEGMENT_RIG = _struct([("length", "<f4"), ("inv_length", "<f4"), ("stiffness", "<f4"),
                             ("damping", "<f4"), ("inertia", "<f4"), ("angle_limit", "<f4"),
                             ("air_drag", "<f4"), ("pad0", "<f4")], 32)

#: Per angle segment, dynamic: world angle φ (rad, wrapped) and angular velocity ω (rad/s)
#: after the last substep and the one before it; the local target angle's path (SPEC 2): x0
#: (rad) and m0 (rad per second of target path); τ_prev, the world target angle at the last
#: substep (rad, SPEC 3).
ANGLE_SEGMENT_STATE = _struct([("angle", "<f4"), ("angular_velocity", "<f4"), ("prev_angle", "<f4"),
                               ("prev_angular_velocity", "<f4"), ("last_local_angle", "<f4"),
                               ("local_angle_rate", "<f4"), ("target_angle", "<f4"), ("pad0", "<f4")], 32)

#: Per angle chain, dynamic, positions relative to the chain's anchor: P_prev, V_prev (SPEC 3),
#: the root's path (x0, m0 of its position and heading), CHAIN_* flags and path_lag, the
#: seconds from the chain's last substep (where its paths start) to the last frame's time.
ANGLE_CHAIN_STATE = _struct([("prev_root_position", "<f4", (2,)), ("prev_root_velocity", "<f4", (2,)),
                             ("last_root_position", "<f4", (2,)), ("root_position_rate", "<f4", (2,)),
                             ("last_root_angle", "<f4"), ("root_angle_rate", "<f4"), ("flags", "<u4"),
                             ("path_lag", "<f4")], 48)

#: Per angle chain, per frame: this frame's root (relative to the anchor) and heading, teleport
#: flags, level of detail, the wind phase κ·anchor (rad, mod 2π), and the anchor's move since
#: the last frame (old - new, length units).
ANGLE_CHAIN_TARGET = _struct([("root_position", "<f4", (2,)), ("root_angle", "<f4"), ("teleport", "<u4"),
                              ("lod", "<u4"), ("gust_phase", "<f4"), ("anchor_shift", "<f4", (2,))], 32)

#: Per frame, header of the angle kernel's frame buffer; ``alphas`` follows it,
#: ``alpha_stride`` floats per level of detail. options: OPTION_* bits. substep_begin,
#: substep_end: the substeps this dispatch runs (see :data:`ALL_SUBSTEPS`). 2D wind: wind (w0.xy,
#: A, 0), gust (κ.xy, 2π·f_w, 0), gust_direction (u.xy, 0, 0).
ANGLE_FRAME_PARAMS = _struct([("chain_count", "<u4"), ("alpha_stride", "<u4"), ("options", "<u4"), ("pad0", "<u4"),
                              ("substep_begin", "<u4"), ("substep_end", "<u4"), ("pad1", "<u4"), ("pad2", "<u4"),
                              ("full_rate", SCHEDULE), ("half_rate", SCHEDULE), ("wind", "<f4", (4,)),
                              ("gust", "<f4", (4,)), ("gust_direction", "<f4", (4,))], 176)

#: Per joint (each chain's pivot, then its tips), output: position at frame time, raw position.
ANGLE_JOINT_OUTPUT = _struct([("position", "<f4", (2,)), ("raw_position", "<f4", (2,))], 16)

#: Per segment, output at frame time: angle (rad), angular velocity (rad/s).
ANGLE_SEGMENT_OUTPUT = _struct([("angle", "<f4"), ("angular_velocity", "<f4")], 8)

#: Per point chain, static: topology, collider mask (bit g = group g), world influence w, and
#: gravity g (xyz, length/s², world; w 0; SPEC 4).
POINT_CHAIN_RIG = _struct([("first_segment", "<u4"), ("segment_count", "<u4"), ("first_joint", "<u4"),
                           ("collider_mask", "<u4"), ("world_influence", "<f4"), ("pad0", "<f4"),
                           ("pad1", "<f4"), ("pad2", "<f4"), ("gravity", "<f4", (4,))], 48)

#: Per angle chain, output of each frame: the largest |A| (length/s²) of the root's acceleration
#: over the chain's substeps of the frame, the one the kernel integrates with (SPEC 3, step 1;
#: ``watch_root`` in angle_chains.comp), or :data:`ROOT_NOT_JUDGED` where the frame is not
#: judged (the chain ran no substeps, jumped, or started moving: SPEC 1, "Stability").
ANGLE_CHAIN_OUTPUT = _struct([("root_acceleration", "<f4")], 4)
ROOT_NOT_JUDGED = -1.0

#: Per angle segment, per frame: its local target angle λ (rad; SPEC 3).
ANGLE_LOCAL_ANGLE = np.dtype("<f4")

#: Per point segment, per frame: its tip's target offset from the chain's pivot (xyz, 12 bytes:
#: the GLSL buffer is a float array, three per segment).
POINT_JOINT_OFFSET = np.dtype(("<f4", (3,)))

#: Per point segment, static: rest length L, k (1/s²), c (1/s), particle radius ρ, max distance D,
#: air drag c_air (1/s), its angle limit (docs/SPEC.md section 9, "Angle limits"): limit_kind
#: (LIMIT_*), limit_axis (xyz: the hinge axis or the spherical limit's pitch axis, unit, in the
#: frame of the joint at the segment's base) and limit_bounds (cone: x = β; hinge: x, y = the
#: least and greatest angle about the axis; spherical: x, y = the pitch and yaw limits; rad).
POINT_SEGMENT_RIG = _struct([("rest_length", "<f4"), ("stiffness", "<f4"), ("damping", "<f4"),
                             ("particle_radius", "<f4"), ("max_distance", "<f4"), ("air_drag", "<f4"),
                             ("limit_kind", "<u4"), ("pad1", "<f4"), ("limit_axis", "<f4", (4,)),
                             ("limit_bounds", "<f4", (4,))], 64)
#: POINT_SEGMENT_RIG limit kinds.
LIMIT_NONE, LIMIT_CONE, LIMIT_HINGE, LIMIT_SPHERICAL = 0, 1, 2, 3

#: Per point segment, per frame: the animated world rotation (x, y, z, w) of the joint at the
#: segment's base (identity when the pose gives none).
POINT_JOINT_ROTATION = np.dtype(("<f4", (4,)))

#: Per point segment, dynamic (xyz), relative to the chain's pivot: the tip, its world
#: velocity, the same one substep earlier, the tip's target offset path (x0, and m0 per second
#: of target path), t_prev, its target at the last substep, and (x, y, z, w) the base joint's
#: animated rotation at the last substep (the start of its nlerp path). The w of the first six
#: hold the unit axes carried over from the last evaluation of the segment's rotations built
#: from two directions (SPEC 4, step 2, ``turn_axis``), two floats each
#: (:data:`AXIS_CODE_FIELDS`); target's w is 0.
POINT_SEGMENT_STATE = _struct([("position", "<f4", (4,)), ("velocity", "<f4", (4,)),
                               ("prev_position", "<f4", (4,)), ("prev_velocity", "<f4", (4,)),
                               ("last_offset", "<f4", (4,)), ("offset_rate", "<f4", (4,)),
                               ("target", "<f4", (4,)), ("last_rotation", "<f4", (4,))], 128)
#: The axes a point segment carries and the two POINT_SEGMENT_STATE fields whose w hold each
#: one's code (SPEC 9, "Swings": octahedral, its first component plus AXIS_CODE_SHIFT; (0, 0),
#: what a zeroed record holds, for none carried yet): its bend (animated direction onto
#: simulated) at the last substep; at the last frame's output its swing (animated direction
#: onto the output's) and its world rotation's turn (target direction onto the output's).
AXIS_CODE_FIELDS = {"bend": ("position", "velocity"), "swing": ("last_offset", "offset_rate"),
                    "world": ("prev_position", "prev_velocity")}
#: Added to a code's first component, so that a valid code has it in [1, 3] (its second in
#: [-1, 1]) and (0, 0) lies outside.
AXIS_CODE_SHIFT = 2.0

#: Per point chain, dynamic (xyz, relative to the chain's anchor): p_prev and the pivot's path
#: (x0, m0); the pivot's path velocity at the substep before the last (length/s, for the
#: frame-time output, SPEC 9); CHAIN_* flags; path_lag, the seconds from the chain's last
#: substep (where its paths start) to the last frame's time; contact_near, 1 where the GPU's far
#: pass found a collider near the chain (SPEC 9, "Near and far chains"), 0 between frames.
POINT_CHAIN_STATE = _struct([("prev_pivot", "<f4", (4,)), ("last_pivot", "<f4", (4,)), ("pivot_rate", "<f4", (4,)),
                             ("prev_pivot_rate", "<f4", (4,)),
                             ("flags", "<u4"), ("path_lag", "<f4"), ("contact_near", "<u4"), ("pad2", "<u4")], 80)

#: Per point chain, per frame (40 bytes, uploaded every frame): the anchor (this frame's pivot,
#: world, float64, xyz), the anchor's move since the last frame (old - new), the wind phase
#: κ·anchor (mod 2π).
POINT_CHAIN_TARGET = _struct([("anchor", "<f8", (3,)), ("anchor_shift", "<f4", (3,)), ("gust_phase", "<f4")], 40)

#: Per point chain, per frame, uploaded only when it changed: teleport flags (TELEPORT_*) and
#: level of detail (LOD_*).
POINT_CHAIN_CONTROL = _struct([("teleport", "<u4"), ("lod", "<u4")], 8)

#: Per point chain, written by the kernel on a frame's first dispatch, for drawing from the
#: GPU (shaders/draw/point_draw.glsl): this frame's pivot relative to the solver's drawing
#: origin (xyz) and the chain's level of detail.
POINT_CHAIN_OUTPUT = _struct([("pivot", "<f4", (3,)), ("lod", "<u4")], 16)

#: Colliders on their target path: where they were at the last substep (float64 world: sphere
#: centre and radius; capsule ends, radius in start_a's w; plane unit normal and offset), their
#: move this frame (float32) and their path velocity × span (float32; not for planes). inside:
#: 1 for a sphere or capsule that keeps particles inside it (SPEC 4.2), 0 for one that keeps
#: them out. Where the collider can be over the frame, for the far pass's broad phase (SPEC 9,
#: "Near and far chains"; :mod:`gpu_jiggle.sim.collider_bounds`): a sphere's frame_bound
#: (float64 world centre xyz, radius w), a capsule's frame_a and frame_b (the ends of a capsule
#: of radius frame_a's w), each holding the collider with its move over every substep; a
#: plane's frame_offset, its largest offset; frame_move, the longest move of a centre or end
#: over one substep, and frame_radius, the smallest radius, over the frame.
SPHERE_COLLIDER = _struct([("start", "<f8", (4,)), ("delta", "<f4", (4,)), ("start_rate", "<f4", (4,)),
                           ("frame_bound", "<f8", (4,)), ("group", "<u4"), ("inside", "<u4"),
                           ("frame_move", "<f4"), ("frame_radius", "<f4")]
                          + [(f"pad{i}", "<u4") for i in range(4)], 128)
CAPSULE_COLLIDER = _struct([("start_a", "<f8", (4,)), ("start_b", "<f8", (4,)), ("delta_a", "<f4", (4,)),
                            ("delta_b", "<f4", (4,)), ("rate_a", "<f4", (4,)), ("rate_b", "<f4", (4,)),
                            ("frame_a", "<f8", (4,)), ("frame_b", "<f8", (4,)), ("group", "<u4"), ("inside", "<u4"),
                            ("frame_move", "<f4"), ("frame_radius", "<f4")]
                           + [(f"pad{i}", "<u4") for i in range(4)], 224)
PLANE_COLLIDER = _struct([("start", "<f8", (4,)), ("delta", "<f4", (4,)), ("frame_offset", "<f8"), ("group", "<u4"),
                          ("pad0", "<u4")], 64)

#: Per frame, header of the point kernel's frame buffer; ``alphas`` follows it. options:
#: OPTION_* bits. substep_begin, substep_end: the substeps this dispatch runs (see
#: :data:`ALL_SUBSTEPS`); contact_substep_cap: the most contact sub-steps one substep of a
#: chain may take in this dispatch (SPEC 9, "Swept contact": MAX_CONTACT_SUBSTEPS, less where
#: llvmpipe's loop budget leaves less); origin (xyz; w 0): the solver's drawing origin
#: (float64 world), which chain_output's pivots are relative to. Laid out alike as a storage
#: and a uniform block (std430 and std140: a dvec4 last, no array of scalars), as the kernel
#: reads it (:data:`POINT_UNIFORM_BLOCKS`).
POINT_FRAME_PARAMS = _struct([("chain_count", "<u4"), ("alpha_stride", "<u4"), ("sphere_count", "<u4"),
                              ("capsule_count", "<u4"), ("plane_count", "<u4"), ("options", "<u4"),
                              ("substep_begin", "<u4"), ("substep_end", "<u4"), ("full_rate", SCHEDULE), ("half_rate", SCHEDULE),
                              ("wind", "<f4", (4,)), ("gust", "<f4", (4,)), ("gust_direction", "<f4", (4,)),
                              ("contact_substep_cap", "<u4"), ("pad1", "<u4"), ("pad2", "<u4"), ("pad3", "<u4"),
                              ("origin", "<f8", (4,))], 224)

#: SPEC 9, contact sub-steps: at most this many per substep of a chain (the frame buffer's
#: contact_substep_cap, the kernels' and the reference's bound): a chain's substep costs up to
#: this many times its work where a collider passes it fast. With CONTACT_STEP_FRACTION 1/2,
#: a collider moving up to 128 times its radius (with ρ) per substep relative to the chain's
#: pivot, e.g. a 2 cm sphere at 300 m/s with h = 1/120 s; past that the pieces grow, and the
#: reference logs a warning.
MAX_CONTACT_SUBSTEPS = 256

#: Per joint, output: position at frame time relative to this frame's pivot, raw position
#: relative to p_prev (xyz; w 0).
POINT_JOINT_OUTPUT = _struct([("position", "<f4", (4,)), ("raw_position", "<f4", (4,))], 32)

#: Per segment, output at frame time: velocity (xyz); rotation (x, y, z, w), the smallest
#: rotation taking the animated direction onto the simulated one; world_rotation, the
#: simulated segment's world rotation (its target frame turned onto its direction).
POINT_SEGMENT_OUTPUT = _struct([("velocity", "<f4", (4,)), ("rotation", "<f4", (4,)),
                               ("world_rotation", "<f4", (4,))], 48)

#: Teleport flag values shared with the shaders (TELEPORT_* defines in common.glsl): the mode in
#: bits 0-1, and the MOVING and MIRROR bits.
TELEPORT_NONE, TELEPORT_SNAP, TELEPORT_KEEP_SHAPE = 0, 1, 2
TELEPORT_MODE_MASK, TELEPORT_MOVING, TELEPORT_MIRROR = 3, 4, 8
#: Point chains, keep_shape: this pose and the last gave joint rotations, so the jump's turn is
#: taken from the pivot joint's rotation (SPEC 5); set by the host on upload, never stored.
TELEPORT_TURN_FROM_JOINTS = 16
#: Chain state flags (CHAIN_* in common.glsl).
CHAIN_START_MOVING = 1
#: Solver options (OPTION_* in common.glsl), the frame buffer's ``options``.
OPTION_HERMITE_PATH, OPTION_RELATIVE_DAMPING, OPTION_EXACT_INTEGRATOR = 1, 2, 4
#: With OPTION_HERMITE_PATH: the monotone target path (SPEC 2).
OPTION_MONOTONE_PATH = 8
#: Point chains made with ``rotation_outputs=False``: the frame-time output leaves out the
#: segments' rotations (SPEC 9, "Frame-time output").
OPTION_NO_ROTATION_OUTPUTS = 16
#: The target path's kinds (PATH_* in common.glsl).
PATH_LINEAR, PATH_HERMITE, PATH_MONOTONE = 0, 1, 2


def path_kind(options: int) -> int:
    """The PATH_* kind the solver ``options`` (OPTION_* bits) select, as ``path_kind`` in
    common.glsl."""
    if not options & OPTION_HERMITE_PATH:
        return PATH_LINEAR
    return PATH_MONOTONE if options & OPTION_MONOTONE_PATH else PATH_HERMITE

#: A frame's substeps may run over several dispatches, each running the substeps j with
#: substep_begin ≤ j < substep_end of every schedule (the first one also teleports, the one
#: that reaches a chain's last substep also writes its output); one dispatch runs them all.
ALL_SUBSTEPS = (0, 0xFFFFFFFF)

#: The most substeps of one level of detail in a frame that the frame buffer is first sized
#: for (it grows when a solver's cap is larger): its alphas follow the header.
INITIAL_ALPHA_CAPACITY = 64

#: Storage buffer name → binding number, per kernel (``layout(std430, binding = N)`` in
#: angle_common.glsl and point_common.glsl; ``point_draw.glsl`` takes the point ones).
ANGLE_BINDINGS = {"params": 0, "chain_rig": 1, "chain_state": 3, "segment_state": 4,
                  "chain_target": 5, "local_angle": 6, "joint_output": 7, "segment_output": 8, "exact_step": 9,
                  "chain_output": 10}
POINT_BINDINGS = {"params": 0, "chain_rig": 1, "segment_rig": 2, "chain_state": 3, "segment_state": 4,
                  "chain_target": 5, "joint_offset": 6, "joint_output": 7, "segment_output": 8,
                  "spheres": 9, "capsules": 10, "planes": 11, "exact_step": 12,
                  "joint_rotation": 13, "chain_output": 14, "chain_control": 15}

#: Buffers the kernels read as uniform blocks, name → uniform block binding
#: (``layout(std140, binding = N) uniform``, point_common.glsl): Mesa's llvmpipe loads a
#: uniform block's value once for the 8 invocations of a vector, a storage buffer's once per
#: invocation (docs/PERFORMANCE.md, "Uniform blocks"). The frame buffer's header, and each
#: collider shape's records where its slots are compiled in (point_colliders.glsl; more than
#: PLACED_COLLIDERS are read from the storage buffer). Their records are laid out alike in
#: both forms.
POINT_UNIFORM_BLOCKS = {"params": 0, "spheres": 1, "capsules": 2, "planes": 3}
#: The angle kernel's: its frame buffer's header (angle_common.glsl).
ANGLE_UNIFORM_BLOCKS = {"params": 0}

#: Records held in a texture (:mod:`gpu_jiggle.gl.record_texture`) → texture unit, per kernel:
#: ``uniform usampler2D NAME_texels`` and ``uniform uint NAME_row_shift`` in angle_common.glsl.
#: The angle segments' rig (binding 2 before) is read there in every substep (docs/PERFORMANCE.md).
ANGLE_TEXTURES = {"segment_rig": 0}

#: Storage buffers a kernel reads through a read-only image view of their memory
#: (:mod:`gpu_jiggle.gl.buffer_image`; ``BUFFER_IMAGES`` in ``shaders/sim/buffer_views.glsl``)
#: → (image unit, image format): ``layout(FORMAT, binding = UNIT) uniform uimageBuffer
#: NAME_view`` in angle_common.glsl and point_common.glsl.
ANGLE_VIEWS = {"segment_state": (0, "rgba32ui"), "local_angle": (1, "r32ui"), "chain_rig": (2, "rgba32ui"),
               "chain_state": (3, "rgba32ui"), "chain_target": (4, "rgba32ui")}
POINT_VIEWS = {"segment_state": (0, "rgba32ui"), "segment_rig": (1, "rgba32ui"), "joint_rotation": (2, "rgba32ui"),
               "joint_offset": (3, "r32ui"), "chain_rig": (4, "rgba32ui"), "chain_target": (5, "rg32ui"),
               "chain_control": (6, "rg32ui"), "chain_state": (7, "rgba32ui")}

#: Struct name in GLSL → dtype, per shared GLSL file, for the layout test.
COMMON_GLSL_STRUCTS = {"Schedule": SCHEDULE, "ExactStep": EXACT_STEP}
ANGLE_GLSL_STRUCTS = {
    "AngleChainRig": ANGLE_CHAIN_RIG,
    "AngleSegmentRig": ANGLE_SEGMENT_RIG,
    "AngleSegmentState": ANGLE_SEGMENT_STATE,
    "AngleChainState": ANGLE_CHAIN_STATE,
    "AngleChainTarget": ANGLE_CHAIN_TARGET,
    "AngleFrameParams": ANGLE_FRAME_PARAMS,
    "AngleJointOutput": ANGLE_JOINT_OUTPUT,
    "AngleSegmentOutput": ANGLE_SEGMENT_OUTPUT,
    "AngleChainOutput": ANGLE_CHAIN_OUTPUT,
}
POINT_GLSL_STRUCTS = {
    "PointChainRig": POINT_CHAIN_RIG,
    "PointSegmentRig": POINT_SEGMENT_RIG,
    "PointSegmentState": POINT_SEGMENT_STATE,
    "PointChainState": POINT_CHAIN_STATE,
    "PointChainTarget": POINT_CHAIN_TARGET,
    "PointChainOutput": POINT_CHAIN_OUTPUT,
    "PointChainControl": POINT_CHAIN_CONTROL,
    "SphereCollider": SPHERE_COLLIDER,
    "CapsuleCollider": CAPSULE_COLLIDER,
    "PlaneCollider": PLANE_COLLIDER,
    "PointFrameParams": POINT_FRAME_PARAMS,
    "PointJointOutput": POINT_JOINT_OUTPUT,
    "PointSegmentOutput": POINT_SEGMENT_OUTPUT,
}
