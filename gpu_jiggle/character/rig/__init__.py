"""Spring rigs, as authored: the data (:mod:`.model`), TOML rigs read and checked against a
skeleton (:mod:`.reader`, with per-segment values :mod:`.values`, curves :mod:`.curves`,
angle limits :mod:`.limits`, constraint and collider specs :mod:`.specs`), written back
(:mod:`.toml`), the parameters a live session may change (:mod:`.live`), and a rig made from
a VRM's spring bones (:mod:`.from_vrm`). The format: docs/RIG.md. Imports the :mod:`..pose`
and :mod:`..gltf` wings."""
