"""The applications: the ``gpu-jiggle`` command line (:mod:`.cli`, with one module per
command: :mod:`.info`, :mod:`.verify`, :mod:`.bake`, :mod:`.render`, :mod:`.play`) and the
window / headless frame loop every demo and ``play`` share (:mod:`.viewer`). The top layer:
it may use every other. Windows, their panel, videos and plots need the ``[app]`` extra.
"""
