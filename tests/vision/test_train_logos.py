"""Reading rendered logo sixes by the reader's rules: the counts, and the command."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.classify import FakeClassifier
from vision.locate import ClassicalLocator
from vision.reader import DiceReader
from vision.train.logos import LogoCounts, main, read_logo_sixes


def _images(count: int) -> np.ndarray:
    # The fake reads the crop's first pixel: its red channel picks the answer.
    images = np.zeros((count, 64, 64, 3), np.uint8)
    images[:, 0, 0, 0] = np.arange(count)
    return images


ANSWERS = {0: (6, 0.99), 1: (6, 0.3), 2: (3, 0.97), 3: (0, 0.9), 4: (6, 0.7)}


@pytest.mark.parametrize(
    ("min_confidence", "expected"),
    [
        (0.5, LogoCounts(read=2, asked=2, wrong=1)),  # the unsure six and "no face" are asked
        (0.8, LogoCounts(read=1, asked=3, wrong=1)),  # a stricter reader asks about the 0.7 six
        (0.98, LogoCounts(read=1, asked=4, wrong=0)),  # and even about the sure three
    ],
)
def test_each_six_counts_as_the_reader_would_report_it(
    min_confidence: float, expected: LogoCounts
) -> None:
    fake = FakeClassifier(lambda crop: ANSWERS[round(float(crop[0, 0, 0]) * 255)])
    reader = DiceReader(fake, locator=ClassicalLocator(), min_confidence=min_confidence)
    # No turned look here: the fake's answer depends on the corner the turn moves.
    reader.turn_below = 0.0
    assert read_logo_sixes(reader, _images(5)) == expected


def test_counts_print_as_shares_of_the_sixes() -> None:
    assert str(LogoCounts(read=3, asked=1, wrong=0)) == (
        "4 sixes: read 6 75.0 %, asked about 25.0 %, another value 0.0 %"
    )


def test_the_command_reads_the_shipped_model_on_the_same_renders_each_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["--seed", "3", "--count", "12"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    assert capsys.readouterr().out == first
    (line,) = first.splitlines()
    assert "seed 3, unseen logos, 12 sixes: read 6 " in line


def test_the_command_names_a_missing_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--model", str(tmp_path / "none.onnx"), "--count", "2"])
    assert exit_.value.code == 2
    assert "none.onnx" in capsys.readouterr().err
