"""``python -m vision.train.trays``: the whole reader on synthetic trays, and how it counts."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import numpy as np
import numpy.typing as npt
import pytest

from vision.reader import DiceReader, DiceReading, Die
from vision.synthetic import dice_side_by_side
from vision.train.trays import LAYOUTS, Pressed, main, pressed

Frame = npt.NDArray[np.uint8]


class _Scripted:
    """A reader that reports the dice laid for each frame in turn, as ``change`` alters them."""

    def __init__(self, seeds: range, change: str) -> None:
        self.laid = [
            dice_side_by_side(1280, 960, rows=rows, cols=cols, gap=gap, seed=seed)
            for rows, cols, gap in LAYOUTS
            for seed in seeds
        ]
        self.change = change

    def read(self, frame: Frame) -> DiceReading:
        del frame
        laid = self.laid.pop(0)
        dice = [Die(d.value, 0.99, "ok", (0, 0, 1, 1)) for d in laid]
        if self.change == "misread":
            dice[0] = Die(laid[0].value % 6 + 1, 0.99, "ok", (0, 0, 1, 1))
        elif self.change == "hidden":
            dice[0] = Die(None, 0.9, "uncertain", (0, 0, 1, 1), hidden=True)
        elif self.change == "invented":
            dice.append(Die(laid[0].value, 0.99, "ok", (0, 0, 1, 1)))
        elif self.change == "dropped":
            dice.pop()
        return DiceReading("settled", tuple(dice))


@pytest.mark.parametrize(
    ("change", "want"),
    [
        ("none", Pressed(dice=30, right=30, frames=8, exact=8)),
        ("misread", Pressed(dice=30, right=22, wrong=8, frames=8, exact=0)),
        ("hidden", Pressed(dice=30, right=22, frames=8, exact=0, hidden=8)),
        ("invented", Pressed(dice=30, right=30, wrong=8, frames=8, exact=0, extra=8)),
        ("dropped", Pressed(dice=30, right=22, frames=8, exact=0)),
    ],
)
def test_dice_pressed_together_are_counted_as_the_players_would_see_them(
    change: str, want: Pressed
) -> None:
    seeds = range(100, 102)
    reader = _Scripted(seeds, change)
    assert pressed(cast(DiceReader, reader), seeds) == want
    assert not reader.laid


def test_the_command_reads_the_shipped_reader_on_the_same_frames_each_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--frames", "2"]) == 0
    first = capsys.readouterr().out
    assert main(["--frames", "2"]) == 0
    assert capsys.readouterr().out == first
    pressed_line, leaning_line, bare_line = first.splitlines()
    assert pressed_line.startswith("dice pressed together (8 frames): ")
    assert pressed_line.endswith(", 0 reported beyond those laid")
    assert leaning_line.startswith("a die leaning beside two flat ones (2 frames): ")
    assert leaning_line.endswith(" 0 reported beyond those laid")
    assert bare_line == "bare trays (2 frames): 0 dice reported"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--frames", "0"], "--frames must be at least 1, not 0"),
        (["--locator-model", "{tmp}/nowhere.onnx"], "nowhere.onnx"),
        (["--model", "{tmp}/none.onnx"], "none.onnx"),
        (["--die-check", "{tmp}/check.json"], "check.json' is missing or was not fitted to"),
    ],
)
def test_the_command_names_what_it_cannot_read_with(
    tmp_path: Path, argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([a.format(tmp=tmp_path) for a in argv])
    assert exit_.value.code == 2
    assert said in capsys.readouterr().err
