"""``python -m gpu_jiggle``: the ``gpu-jiggle`` command (see :mod:`gpu_jiggle.app.cli`)."""
from .app.cli import main

raise SystemExit(main())
