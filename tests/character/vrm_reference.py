"""VRM's reference spring-bone update (VRMC_springBone-1.0, "SpringBone Algorithm"), written
in numpy from the specification's pseudocode, for the tests only: one Verlet step per frame,
the tail pulled toward its rest direction, the length kept, pushed out of sphere and capsule
colliders, each joint's rotation replaced so that its bone points at its tail. Its result
depends on the frame rate; gpu_jiggle's mapping (gpu_jiggle.character.rig.from_vrm) is compared
with it at the reference rate.

Everything is float64 and world space; a pose is a gpu_jiggle Skeleton Pose (local TRS).
"""
from __future__ import annotations

import numpy as np

from gpu_jiggle.character.gltf.vrm import VIRTUAL_TAIL


def _quat_matrix(q):
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _quat_multiply(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz])


def _from_to(u, v):
    """The shortest rotation taking unit u to unit v."""
    c = float(np.dot(u, v))
    axis = np.cross(u, v)
    if c < -1 + 1e-12:
        helper = np.array([1.0, 0.0, 0.0]) if abs(u[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        axis = np.cross(u, helper)
        axis /= np.linalg.norm(axis)
        return np.array([*axis, 0.0])
    q = np.array([*axis, 1.0 + c])
    return q / np.linalg.norm(q)


def _trs(t, q, s):
    m = np.eye(4)
    m[:3, :3] = _quat_matrix(q) * s
    m[:3, 3] = t
    return m


class VrmReference:
    """The reference update of every spring of ``springs`` (gpu_jiggle.character.gltf.vrm.VrmSprings)
    on ``skeleton``; colliders are spheres and capsules (``springs.colliders``)."""

    def __init__(self, skeleton, springs):
        self.skeleton = skeleton
        self.rest = skeleton.rest
        self.colliders = {c.name: c for c in springs.colliders}
        self.joints = []  # (node, tail local position, joint, collider names), root to tail
        for spring in springs.springs:
            nodes = [j.node for j in spring.joints]
            for k, joint in enumerate(spring.joints):
                if k + 1 < len(nodes):
                    tail = self.rest.translation[nodes[k + 1]]
                elif spring.tail is not None:
                    tail = self.rest.translation[spring.tail]
                else:
                    axis = self.rest.translation[joint.node]
                    tail = axis / np.linalg.norm(axis) * VIRTUAL_TAIL
                self.joints.append((joint.node, np.asarray(tail, np.float64), joint, spring.colliders))
        self.current = self.previous = None
        self.bone_length = None

    def _world(self, pose):
        return self.skeleton.world_matrices(pose)

    def reset(self, pose):
        """Start at rest on ``pose`` (every tail where the pose puts it)."""
        world = self._world(pose)
        self.current = np.array([world[n] @ np.append(t, 1.0) for n, t, _, _ in self.joints])[:, :3]
        self.previous = self.current.copy()
        self.bone_length = np.array([np.linalg.norm(c - world[n, :3, 3]) for c, (n, _, _, _) in
                                     zip(self.current, self.joints)])

    def step(self, pose, dt: float):
        """One frame of ``dt`` seconds on the animated ``pose``: returns a copy of the pose
        with the spring joints' rotations replaced, and (J, 3) the tails."""
        out = pose.copy()
        for k, (node, tail, joint, names) in enumerate(self.joints):
            world = self._world(out)  # the joints before this one have turned
            parent = self.skeleton.parents[node]
            parent_world = world[parent] if parent >= 0 else np.eye(4)
            initial = _trs(out.translation[node], self.rest.rotation[node], out.scale[node])
            frame = parent_world @ initial
            position = frame[:3, 3]
            axis = tail / np.linalg.norm(tail)
            parent_rotation = parent_world[:3, :3] / np.linalg.norm(parent_world[:3, :3], axis=0)
            rest_direction = parent_rotation @ (_quat_matrix(self.rest.rotation[node]) @ axis)
            inertia = (self.current[k] - self.previous[k]) * (1.0 - joint.drag_force)
            stiffness = dt * rest_direction * joint.stiffness
            external = dt * joint.gravity_dir * joint.gravity_power
            next_tail = self.current[k] + inertia + stiffness + external
            next_tail = position + _unit(next_tail - position) * self.bone_length[k]
            for name in names:
                direction, distance = self._collision(self.colliders[name], world, next_tail, joint.hit_radius)
                if distance < 0.0:
                    next_tail = next_tail - direction * distance
                    next_tail = position + _unit(next_tail - position) * self.bone_length[k]
            self.previous[k], self.current[k] = self.current[k], next_tail
            local = np.linalg.inv(frame) @ np.append(next_tail, 1.0)
            out.rotation[node] = _quat_multiply(self.rest.rotation[node], _from_to(axis, _unit(local[:3])))
        return out, self.current.copy()

    @staticmethod
    def _collision(collider, world, x, joint_radius):
        m = world[collider.node]
        offset = m[:3, :3] @ collider.offset + m[:3, 3]
        delta = x - offset
        if collider.shape == "capsule":
            to_tail = m[:3, :3] @ collider.tail + m[:3, 3] - offset
            along = float(np.dot(to_tail, delta))
            if along > np.dot(to_tail, to_tail):
                delta = delta - to_tail
            elif along >= 0.0:
                delta = delta - to_tail * (along / np.dot(to_tail, to_tail))
        elif collider.shape != "sphere":
            raise NotImplementedError(f"the reference has spheres and capsules, not {collider.shape}")
        return _unit(delta), float(np.linalg.norm(delta)) - collider.radius - joint_radius


def _unit(v):
    n = np.linalg.norm(v)
    return v / n if n > 0 else v
