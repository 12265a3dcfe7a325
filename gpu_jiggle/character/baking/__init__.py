"""Springs written back as keyframes: a bake's run (:mod:`.run`), the copy of the glTF it
writes (:mod:`.gltf`), strands baked as joints (:mod:`.strands`), and for ``gpu-jiggle
bake-many`` the manifest (:mod:`.manifest`, its path patterns :mod:`.globs`) and the inputs'
digests that let it skip what is up to date (:mod:`.inputs`). The top wing: it imports the
pipeline and every other wing."""
