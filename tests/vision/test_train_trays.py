"""``python -m vision.train.trays``: the whole reader on synthetic trays, and how it counts."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import numpy as np
import numpy.typing as npt
import pytest

from vision.reader import DiceReader, DiceReading, Die, DieStatus
from vision.synthetic import (
    dice_side_by_side,
    die_across_shadow,
    die_cut_by_edge,
    leaning_beside_two_flat,
    six_dice,
)
from vision.train.trays import (
    CUT_VISIBLE,
    LAYOUTS,
    OWN_COLOUR,
    SHADOW_LIGHT,
    Crossed,
    Cut,
    OwnColour,
    Pressed,
    crossed,
    cut,
    leaning,
    main,
    own_colour,
    pressed,
)

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


class _Leaning:
    """A reader that reads each frame of :func:`leaning_beside_two_flat` in turn: the flat dice
    right, and the leaning die as ``lean`` says (None: not reported)."""

    def __init__(self, seeds: range, lean: tuple[int | None, str] | None) -> None:
        self.laid = [leaning_beside_two_flat(seed) for seed in seeds]
        self.lean = lean

    def read(self, frame: Frame) -> DiceReading:
        del frame
        _, flat, die = self.laid.pop(0)
        dice = [Die(d.value, 0.99, "ok", _box(d.box)) for d in flat]
        if self.lean is not None:
            value, status = self.lean
            dice.append(Die(value, 0.7, cast(DieStatus, status), _box(die.box)))
        return DiceReading("settled", tuple(dice))


def _box(box: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    return x0, y0, x1, y1


@pytest.mark.parametrize(
    ("lean", "want"),
    [
        pytest.param((None, "cocked"), (3, 0, 0, 0), id="cocked"),
        pytest.param((4, "ok"), (0, 3, 0, 0), id="read as a face"),
        pytest.param((4, "uncertain"), (0, 3, 0, 0), id="an unsure guess"),
        pytest.param((None, "uncertain"), (0, 0, 0, 0), id="asked"),
        pytest.param(None, (0, 0, 0, 0), id="not reported"),
    ],
)
def test_a_leaning_die_is_counted_cocked_or_given_a_value(
    lean: tuple[int | None, str] | None, want: tuple[int, int, int, int]
) -> None:
    seeds = range(100, 103)
    reader = _Leaning(seeds, lean)
    assert leaning(cast(DiceReader, reader), seeds) == want
    assert not reader.laid


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


class _ScriptedCut:
    """A reader that reports the whole die laid for each frame and the cut one as ``change``
    says, at the cut die's place."""

    def __init__(self, seeds: range, change: str) -> None:
        self.laid = [die_cut_by_edge(seed, 0.7)[1:] for seed in seeds]
        self.change = change

    def read(self, frame: Frame) -> DiceReading:
        del frame
        edge, whole = self.laid.pop(0)
        at = (int(edge.cx) - 5, int(edge.cy) - 5, int(edge.cx) + 5, int(edge.cy) + 5)
        cut_die = {
            "right": Die(edge.value, 0.99, "ok", at),
            "wrong": Die(edge.value % 6 + 1, 0.99, "ok", at),
            "hidden": Die(None, 0.6, "uncertain", at, hidden=True),
            "cocked": Die(None, 0.6, "cocked", at),
            "asked": Die(edge.value, 0.4, "uncertain", at),
        }.get(self.change)
        centre = (int(whole.cx) - 40, int(whole.cy) - 40, int(whole.cx) + 40, int(whole.cy) + 40)
        dice = [Die(whole.value, 0.99, "ok", centre)] + ([cut_die] if cut_die else [])
        return DiceReading("settled", tuple(dice))


@pytest.mark.parametrize(
    ("change", "want"),
    [
        ("right", Cut(dice=3, right=3)),
        ("wrong", Cut(dice=3, wrong=3)),
        ("hidden", Cut(dice=3, hidden=3)),
        ("cocked", Cut(dice=3, cocked=3)),
        ("asked", Cut(dice=3, asked=3)),
        ("missed", Cut(dice=3, missed=3)),
    ],
)
def test_dice_cut_by_the_frames_edge_are_counted_by_what_the_players_are_told(
    change: str, want: Cut
) -> None:
    seeds = range(100, 103)
    reader = _ScriptedCut(seeds, change)
    assert cut(cast(DiceReader, reader), seeds, 0.7) == want
    assert not reader.laid


@pytest.mark.parametrize("visible", [0.3, 0.6, 0.9])
@pytest.mark.parametrize("seed", range(8))
def test_a_die_cut_by_the_frames_edge_shows_the_share_asked_for(seed: int, visible: float) -> None:
    frame, edge, whole = die_cut_by_edge(seed, visible)
    height, width = frame.shape[:2]
    x0, y0, x1, y1 = edge.box
    # The share of its box on the frame's side of the one edge it crosses (to a pixel).
    shares = [x1 / (x1 - x0), (width - x0) / (x1 - x0), y1 / (y1 - y0), (height - y0) / (y1 - y0)]
    crossing = [s for s in shares if s < 1]
    assert len(crossing) == 1
    assert crossing[0] == pytest.approx(visible, abs=2 / (x1 - x0))
    assert (whole.cx, whole.cy) == (width / 2, height / 2)


class _ScriptedSix:
    """A reader that reports the six dice laid for each frame, the first as ``change`` says."""

    def __init__(self, seeds: range, change: str) -> None:
        self.laid = [six_dice(1280, 960, seed=seed) for seed in seeds]
        self.change = change

    def read(self, frame: Frame) -> DiceReading:
        del frame
        laid = self.laid.pop(0)
        dice = [Die(d.value, 0.99, "ok", d.box) for d in laid]
        first = laid[0]
        if self.change == "wrong":
            dice[0] = Die(first.value % 6 + 1, 0.99, "ok", first.box)
        elif self.change == "asked":
            dice[0] = Die(None, 0.4, "uncertain", first.box)
        elif self.change == "invented":
            dice.append(Die(None, 0.4, "uncertain", (0, 0, 9, 9)))
        elif self.change == "missed":
            dice.pop(0)
        return DiceReading("settled", tuple(dice))


@pytest.mark.parametrize(
    ("change", "want"),
    [
        ("none", OwnColour(dice=12, right=12, frames=2, exact=2)),
        ("wrong", OwnColour(dice=12, right=10, wrong=2, frames=2)),
        ("asked", OwnColour(dice=12, right=10, asked=2, frames=2)),
        ("invented", OwnColour(dice=12, right=12, asked=2, extra=2, frames=2)),
        ("missed", OwnColour(dice=12, right=10, frames=2)),
    ],
)
def test_dice_on_a_tray_of_their_own_colour_are_counted_as_the_players_would_see_them(
    change: str, want: OwnColour
) -> None:
    reader = _ScriptedSix(range(2), change)
    assert own_colour(cast(DiceReader, reader), range(2), "black on black") == want
    assert not reader.laid


class _ScriptedShadow:
    """A reader that reports the dice laid under each shadow, the crossed one as ``change`` says."""

    def __init__(self, seeds: range, change: str) -> None:
        self.laid = [die_across_shadow(seed, 0.3)[1:] for seed in seeds]
        self.change = change

    def read(self, frame: Frame) -> DiceReading:
        del frame
        dice, edge = self.laid.pop(0)
        read = {
            "right": [Die(edge.value, 0.99, "ok", edge.box)],
            "wrong": [Die(edge.value % 6 + 1, 0.99, "ok", edge.box)],
            "asked": [Die(None, 0.3, "cocked", edge.box)],
            "missed": [],
        }[self.change]
        others = [Die(d.value, 0.99, "ok", d.box) for d in dice if d is not edge]
        return DiceReading("settled", tuple(others + read))


@pytest.mark.parametrize(
    ("change", "want"),
    [
        ("right", Crossed(dice=2, right=2)),
        ("wrong", Crossed(dice=2, wrong=2)),
        ("asked", Crossed(dice=2, asked=2)),
        ("missed", Crossed(dice=2, missed=2)),
    ],
)
def test_dice_a_hard_shadow_crosses_are_counted_apart_from_the_others(
    change: str, want: Crossed
) -> None:
    reader = _ScriptedShadow(range(2), change)
    assert crossed(cast(DiceReader, reader), range(2), 0.3) == want
    assert not reader.laid


def test_a_hard_shadow_darkens_one_side_of_a_line_through_the_crossed_die() -> None:
    frame, dice, edge = die_across_shadow(3, 0.3)
    lit, _, _ = die_across_shadow(3, 1.0)
    ratio = frame.astype(np.float32).mean(axis=2) / np.maximum(lit.mean(axis=2), 1.0)
    x, y = int(edge.cx), int(edge.cy)
    patch = ratio[y - 20 : y + 21, x - 20 : x + 21]
    # Both sides of the edge meet at the crossed die's centre; far from it the frame is one or
    # the other.
    assert patch.min() == pytest.approx(0.3, abs=0.05)
    assert patch.max() == pytest.approx(1.0, abs=0.05)
    assert edge in dice
    assert 0.2 < float((ratio < 0.65).mean()) < 0.8


def test_the_command_reads_the_shipped_reader_on_the_same_frames_each_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--frames", "2"]) == 0
    first = capsys.readouterr().out
    assert main(["--frames", "2"]) == 0
    assert capsys.readouterr().out == first
    pressed_line, leaning_line, bare_line, *cut_lines = first.splitlines()
    cut_lines, colour_lines, shadow_lines = (
        cut_lines[: len(CUT_VISIBLE)],
        cut_lines[len(CUT_VISIBLE) : len(CUT_VISIBLE) + len(OWN_COLOUR)],
        cut_lines[len(CUT_VISIBLE) + len(OWN_COLOUR) :],
    )
    assert pressed_line.startswith("dice pressed together (8 frames): ")
    assert pressed_line.endswith(", 0 reported beyond those laid")
    assert leaning_line.startswith("a die leaning beside two flat ones (2 frames): ")
    assert leaning_line.endswith(" 0 reported beyond those laid")
    assert bare_line == "bare trays (2 frames): 0 dice reported"
    assert [line.split(" (")[0] for line in cut_lines] == [
        f"a die cut by the frame's edge, {visible:.0%} in view" for visible in CUT_VISIBLE
    ]
    assert all(" 0 called cocked," in line for line in cut_lines)
    assert [line.split(" (")[0] for line in colour_lines] == [
        f"six dice {scheme}" for scheme in OWN_COLOUR
    ]
    assert all(" 0 reported beyond those laid" in line for line in colour_lines)
    assert [line.split(" (")[0] for line in shadow_lines] == [
        f"a hard shadow at {light:.0%} of the light across a die" for light in SHADOW_LIGHT
    ]


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
