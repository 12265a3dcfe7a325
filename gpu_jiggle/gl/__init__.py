"""The OpenGL layer: the headless context (:mod:`.context`), shader loading with includes and
defines (:mod:`.glsl`), dispatch sizes (:mod:`.dispatch`), read-only image views of storage buffers
(:mod:`.buffer_image`) and offscreen targets (:mod:`.offscreen`). It imports nothing else of
gpu_jiggle."""
