"""The OpenGL layer: the headless context (:mod:`.context`), shader loading with includes and
defines (:mod:`.glsl`), dispatch sizes (:mod:`.dispatch`) and offscreen targets
(:mod:`.offscreen`). It imports nothing else of gpu_jiggle."""
