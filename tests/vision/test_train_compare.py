"""vision.train.compare: two whole readers on the same photos, paired photo by photo."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vision.classify import DEFAULT_MODEL, FLOAT_MODEL
from vision.die_check import DEFAULT_DIE_CHECK
from vision.train.compare import main

DATA = Path(__file__).resolve().parents[1] / "data"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    assert main([*args, "--data", str(DATA), "--source", "dice", "--split", "all"]) == 0
    return capsys.readouterr().out.splitlines()


def test_a_reader_against_itself_changes_no_photo(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _run(capsys, str(DEFAULT_MODEL), str(DEFAULT_MODEL))
    assert [line.split(" (")[0] for line in lines] == ["dice", "all"]
    # The committed photos are read exactly (tests/vision/test_reader.py), by both.
    for name, before, after in re.findall(r"(\w+) (\d+) -> (\d+)", lines[0]):
        assert before == after, name
    assert "exact 5 -> 5; cost 0 -> 0" in lines[0]
    assert lines[0].endswith("photos cheaper with the candidate 0, with the baseline 0")
    assert "sign test p = 1.00" in lines[1]


def test_each_effect_reads_both_again(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _run(
        capsys, str(DEFAULT_MODEL), str(FLOAT_MODEL), "--effect", "none", "--effect", "half"
    )
    assert [line.split(" (")[0].split(":")[0] for line in lines] == [
        "dice",
        "all",
        "effect half",
        "dice",
        "all",
    ]


def test_a_die_check_fitted_to_another_model_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = tmp_path / "check.json"
    other.write_text(
        DEFAULT_DIE_CHECK.read_text().replace('"features_sha256": "', '"features_sha256": "0')
    )
    with pytest.raises(SystemExit) as exit_:
        main(
            [str(DEFAULT_MODEL), str(DEFAULT_MODEL), "--candidate-check", str(other)]
            + ["--data", str(DATA), "--source", "dice"]
        )
    assert exit_.value.code == 2
    assert "was not fitted to" in capsys.readouterr().err


def test_a_missing_photo_folder_says_where_to_point(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit):
        main([str(DEFAULT_MODEL), str(DEFAULT_MODEL), "--data", str(tmp_path), "--source", "x"])
    assert f"no photo folder {tmp_path / 'x'}: pass --data" in capsys.readouterr().err
