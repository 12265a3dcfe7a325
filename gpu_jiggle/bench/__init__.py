"""The benchmark behind ``gpu-jiggle bench``: the grid of cases (:mod:`.cases`), how one case
is timed on each path (:mod:`.measure`), the copy-shader yardstick (:mod:`.bandwidth`), the
run and its summary figures (:mod:`.runner`), the table and plot (:mod:`.report`), and the
peers: the same step written with numba and NVIDIA Warp (:mod:`.peers`, the ``[bench]``
extra). Speed is reported here, never asserted by the tests.
"""
