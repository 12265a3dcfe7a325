"""glTF, GLB and VRM files in: the character loader (:mod:`.loader`) over bounded reading
(:mod:`.io`), accessors (:mod:`.access`), the document's checks (:mod:`.check`), images
(:mod:`.image`), Draco meshes (:mod:`.draco`, decoded in :mod:`.draco_child`), materials
(:mod:`.material`) and morph targets (:mod:`.morph`); VRM's spring bones (:mod:`.vrm`), VRM
animations (:mod:`.vrma`) and the credit a file carries (:mod:`.credit`). Untrusted files:
docs/CHARACTERS.md. Imports the :mod:`..pose` wing only."""
