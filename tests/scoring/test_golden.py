"""Golden transcripts: worked games from RULES.md replayed through ``pipcam replay``.

The expected files are worked out by hand from the rules (never written by the code under test).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipcam.cli import main

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name.removesuffix(".jsonl") for p in GOLDEN.glob("*.jsonl"))


@pytest.mark.parametrize("name", CASES)
def test_golden_replay(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The replayed state has every field the expected file names, with the same value."""
    assert main(["replay", str(GOLDEN / f"{name}.jsonl")]) == 0
    got: dict[str, Any] = json.loads(capsys.readouterr().out)
    expected: dict[str, Any] = json.loads((GOLDEN / f"{name}.expected.json").read_text())
    assert {key: got.get(key) for key in expected} == expected
