"""Characters and their primary motion: glTF files in and out, skeletons and clips, keyframes,
IK, spring rigs, the per-frame pipeline, root motion, baking, and groomed strands. It uses
:mod:`gpu_jiggle.sim` (and :mod:`gpu_jiggle.gl`) only, never drawing or the command line.

- :mod:`.gltf` (with :mod:`.gltf_io`, :mod:`.gltf_access`, :mod:`.gltf_check`,
  :mod:`.gltf_image`, :mod:`.gltf_draco`): loading a glTF/GLB character safely (see the
  docs/CHARACTERS.md, "Untrusted files"), :mod:`.gltf_material` and :mod:`.morph`: materials and morph
  targets; :mod:`.skeleton`, :mod:`.animation`, :mod:`.quat`: poses, clips and their sampling;
  :mod:`.keyframes`: a keyframe track for demo bodies; :mod:`.motion`: built-in motions for
  files without clips.
- :mod:`.ik` (2D), :mod:`.ik3d`: two-bone IK and look-at, the stage before the springs.
- :mod:`.rig` (:mod:`.rig_reader`): TOML spring rigs checked against a skeleton.
- :mod:`.pipeline`: keyframes → constraints → springs → skinning; :mod:`.travel`: carrying a
  character through the world; :mod:`.bake` (:mod:`.bake_gltf`): the springs written back as
  keyframes into a valid copy; :mod:`.bake_manifest`, :mod:`.bake_inputs`: the manifest of
  ``gpu-jiggle bake-many`` and the digests that let it skip what is up to date.
- :mod:`.groom`: hair strands grown on a head.

TOML rigs need the ``[character]`` extra on Python 3.10 (tomli); decoding textures needs
Pillow (the ``[app]`` extra), Draco-compressed meshes DracoPy (``[draco]``).
"""
