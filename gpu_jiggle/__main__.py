"""``python -m gpu_jiggle``: the ``gpu-jiggle`` command (see :mod:`gpu_jiggle.cli`)."""
from .cli import main

raise SystemExit(main())
