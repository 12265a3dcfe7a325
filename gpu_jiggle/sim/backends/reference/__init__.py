"""The numpy reference: each module the twin of the kernel file of the same name in
``shaders/sim/`` (``point_chains.py`` ↔ ``point_chains.comp``, ``point_contact.py`` ↔
``point_contact.glsl``, …), with the same stage names and the same operation order, in
float32. ``common.py`` (↔ ``common.glsl``) holds what both kinds share: the walk by depth
(:class:`~.common.DepthWalkBackend`), the exact step and the target path's weights."""
