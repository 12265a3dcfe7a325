"""Drawing, headless (EGL) or in a window: :mod:`.draw2d` and :mod:`.draw3d` (lit meshes,
strands, spheres and capsules), :mod:`.chain_draw` (point chains drawn straight from a solver's
GPU buffers), :mod:`.scene` (a character on a ground, with its springs; its meshes morphed, skinned and
shaded by their materials in :mod:`.meshes`) and
:mod:`.video` (the one writer of MP4, GIF and PNG frames). It uses :mod:`gpu_jiggle.gl`,
:mod:`gpu_jiggle.sim` and :mod:`gpu_jiggle.character`; videos and images need the ``[app]``
extra (imageio, imageio-ffmpeg, Pillow).
"""
