"""pipcam: the composition root and the command line."""
