"""Collection rules for the whole suite."""

from __future__ import annotations

import importlib.util

# vision/train is the optional `train` extra: without torch its modules cannot even be imported,
# so their doctests are collected only where torch is installed.
collect_ignore_glob = [] if importlib.util.find_spec("torch") else ["vision/train/*.py"]
