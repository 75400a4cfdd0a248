"""``python -m pipcam``: the ``pipcam`` command line (a running table starts its tuning so)."""

from pipcam.cli import main

raise SystemExit(main())
