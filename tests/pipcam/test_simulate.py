"""The self-tuning simulation (python -m pipcam.simulate) on the committed real photos."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipcam.simulate import main
from vision.classify import DEFAULT_MODEL

DATA = Path(__file__).parents[1] / "data" / "dice"


def test_a_table_is_played_answered_tuned_and_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three photos played in games of one, one stage; the other two are the test."""
    args = ["--model", str(DEFAULT_MODEL), "--played", "3", "--every", "3", "--game", "1"]
    assert main([str(DATA), *args, "--threads", "1", "--work", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("seed 1, answers all: untuned on the test: R ")
    assert "exact 2/2" in lines[0]  # the shipped model reads the committed photos exactly
    assert lines[1].startswith("stage 3: Tally(")
    # The table's own store and photos, as pipcam run keeps them.
    assert len(list((tmp_path / "table" / "photos").glob("reading-*.jpg"))) == 3
    assert (tmp_path / "export" / "labels.jsonl").is_file()


def test_bad_arguments_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([str(DATA), "--model", str(DEFAULT_MODEL), "--answer", "some"])
    assert exc.value.code == 2
    assert "--answer takes none, all or a number" in capsys.readouterr().err
    assert main([str(DATA), "--model", str(DEFAULT_MODEL), "--work", str(tmp_path)]) == 2
    assert "leave none to test" in capsys.readouterr().err
