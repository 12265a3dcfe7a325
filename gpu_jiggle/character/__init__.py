"""Characters and their primary motion, in four wings over the per-frame pipeline. It uses
:mod:`gpu_jiggle.sim` (and :mod:`gpu_jiggle.gl`) only, never drawing or the command line.

- :mod:`.pose`: quaternions, skeletons and poses, clips and their sampling, 3D IK and look-at.
- :mod:`.gltf`: glTF, GLB and VRM files read safely (docs/CHARACTERS.md, "Untrusted files"),
  materials, morph targets, VRM spring bones and animations, a file's credit.
- :mod:`.rig`: spring rigs as authored (TOML, or from a VRM's spring bones), docs/RIG.md.
- :mod:`.baking`: the springs written back as keyframes into a valid copy, and the manifest
  and digests of ``gpu-jiggle bake-many``.
- At the root: :mod:`.pipeline` (keyframes → constraints → springs → skinning, and the live
  values a session changes), :mod:`.travel` (a character carried through the world),
  :mod:`.motion` (built-in motions for files without clips), :mod:`.crowd` (many copies in
  one solver) and :mod:`.groom` (hair strands grown on a head).

Wings import downward only: pose ← gltf ← rig ← the root modules ← baking.

TOML rigs need the ``[character]`` extra on Python 3.10 (tomli); decoding textures needs
Pillow (the ``[app]`` extra), Draco-compressed meshes DracoPy (``[draco]``).
"""
from .baking.run import bake
from .gltf.loader import Character
from .gltf.vrm import read_springs
from .pipeline import Pipeline
from .rig.from_vrm import rig_from_vrm
from .rig.model import Rig
from .rig.reader import load_rig

__all__ = ["Character", "load_rig", "Rig", "Pipeline", "bake", "read_springs", "rig_from_vrm"]
