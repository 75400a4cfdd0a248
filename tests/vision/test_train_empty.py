"""The dice-free strips probe: where its strips lie, what it reads on them, and the command."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vision.classify import DEFAULT_MODEL
from vision.reader import DiceReader, DiceReading
from vision.synthetic import DieSpec, make_frame
from vision.train.empty import MARGIN, EmptyCounts, Strip, dice_free_strips, main, read_strips
from vision.train.readers import reader_from

Box = tuple[int, int, int, int]


@pytest.mark.parametrize(
    ("size", "boxes", "strips"),
    [
        # No box: the photo's dice are unknown, so no strip is free of them.
        ((1000, 400), [], []),
        # One die: the strips either side, and below it between those; above is too low.
        (
            (1000, 400),
            [(400, 100, 450, 150)],
            [("left", (0, 0, 325, 400)), ("right", (525, 0, 1000, 400)),
             ("bottom", (325, 225, 525, 400))],
        ),
        # Dice along the top: the strip below them, between the left and right ones.
        (
            (600, 600),
            [(0, 0, 40, 40), (560, 0, 600, 40)],
            [("bottom", (0, 100, 600, 600))],
        ),
        # A die in a corner: beside it and below it.
        (
            (640, 480),
            [(600, 440, 640, 480)],
            [("left", (0, 0, 540, 480)), ("top", (540, 0, 640, 380))],
        ),
    ],
)  # fmt: skip
def test_strips_lie_beyond_the_dice_and_their_margin(
    size: tuple[int, int], boxes: list[Box], strips: list[tuple[str, Box]]
) -> None:
    assert dice_free_strips(*size, boxes) == [Strip(side, box) for side, box in strips]


def _overlap(a: Box, b: Box) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


@given(
    st.lists(
        st.tuples(
            st.integers(0, 900), st.integers(0, 700), st.integers(12, 90), st.integers(12, 90)
        ),
        min_size=1,
        max_size=8,
    )
)
def test_no_strip_touches_a_die_or_another_strip(dice: list[tuple[int, int, int, int]]) -> None:
    width, height = 1000, 800
    boxes = [(x, y, min(x + w, width), min(y + h, height)) for x, y, w, h in dice]
    strips = dice_free_strips(width, height, boxes)
    for strip in strips:
        x0, y0, x1, y1 = strip.box
        assert 0 <= x0 < x1 <= width
        assert 0 <= y0 < y1 <= height
        assert min(x1 - x0, y1 - y0) >= 64
        for box in boxes:
            assert not _overlap(strip.box, box)
    for i, a in enumerate(strips):
        for b in strips[i + 1 :]:
            assert not _overlap(a.box, b.box)


LEFT = DieSpec(value=5, cx=160, cy=480, side=90, angle=20)
RIGHT = (
    DieSpec(value=2, cx=640, cy=380, side=90),
    DieSpec(value=6, cx=720, cy=560, side=90, angle=35),
)
"""Two dice near the middle: LEFT lies in the strip left of them, when it is not labelled."""


def _folder(tmp_path: Path, records: list[dict[str, object]]) -> Path:
    """A folder in the shared data format: one tray with three dice (one far left of the
    others) under each of ``records``' names."""
    folder = tmp_path / "tray"
    (folder / "images").mkdir(parents=True)
    frame = make_frame(1280, 960, [LEFT, *RIGHT], tray="brown", seed=3)
    lines = []
    for record in records:
        assert cv2.imwrite(str(folder / str(record["image"])), frame)
        lines.append(json.dumps({"width": 1280, "height": 960, "split": "valid", **record}))
    (folder / "labels.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    return folder


def _die(spec: DieSpec) -> dict[str, object]:
    return {"value": spec.value, "box": list(spec.box)}


@pytest.fixture(scope="module")
def reader() -> DiceReader:
    return reader_from(DEFAULT_MODEL)


def test_a_tray_labelled_whole_has_strips_and_no_die_on_them(
    tmp_path: Path, reader: DiceReader
) -> None:
    folder = _folder(
        tmp_path, [{"image": "images/a.png", "dice": [_die(d) for d in (LEFT, *RIGHT)]}]
    )
    counts, hits = read_strips(reader, folder)
    assert counts.strips >= 1
    assert counts.pixels > 0
    assert (counts.valued, counts.asked, hits) == (0, 0, [])


def test_a_die_the_labels_leave_out_is_reported_on_its_strip(
    tmp_path: Path, reader: DiceReader
) -> None:
    folder = _folder(tmp_path, [{"image": "images/a.png", "dice": [_die(d) for d in RIGHT]}])
    out = tmp_path / "out"
    counts, hits = read_strips(reader, folder, out=out)
    assert counts.valued == 1
    (hit,) = hits
    assert (hit.strip.side, hit.die.value, hit.die.status) == ("left", LEFT.value, "ok")
    assert hit.in_whole  # the whole photo reads that die too
    x0, y0, _, _ = hit.strip.box
    bx0, by0, bx1, by1 = hit.die.box
    assert abs((bx0 + bx1) / 2 + x0 - LEFT.cx) < 10
    assert abs((by0 + by1) / 2 + y0 - LEFT.cy) < 10
    assert [p.name for p in out.iterdir()] == ["tray__a__left.jpg"]


@pytest.mark.parametrize(
    "extra",
    [{"augmented": True}, {"known_issue": "a die is not labelled"}, {"split": "train"}],
)
def test_copies_flawed_photos_and_another_split_are_left_out(
    tmp_path: Path, reader: DiceReader, extra: dict[str, object]
) -> None:
    folder = _folder(
        tmp_path, [{"image": "images/a.png", "dice": [_die(d) for d in RIGHT], **extra}]
    )
    assert read_strips(reader, folder, split="val") == (EmptyCounts(), [])


def test_the_command_prints_counts_and_each_die(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, [{"image": "images/a.png", "dice": [_die(d) for d in RIGHT]}])
    assert main([str(folder)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(", all photos:")
    assert out[1].startswith("tray: ")
    assert "1 dice reported with a value, 0 asked about" in out[1]
    assert out[2].startswith("  a.png left strip ")
    assert f": {LEFT.value} (ok, " in out[2]
    assert out[2].endswith("; also in the whole photo")


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        pytest.param(
            lambda f: f.mkdir(),
            "labels.jsonl: give folders in the shared data format",
            id="no labels",
        ),
        pytest.param(
            lambda f: (
                _folder(f.parent, [{"image": "images/a.png", "dice": [_die(LEFT)]}])
                .joinpath("images", "a.png")
                .write_bytes(b"not a picture")
            ),
            "not an image format OpenCV can decode",
            id="not an image",
        ),
    ],
)
def test_the_command_says_what_is_wrong_with_a_folder(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], object],
    problem: str,
) -> None:
    make(tmp_path / "tray")
    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path / "tray")])
    assert exit_.value.code == 2
    assert problem in capsys.readouterr().err


def test_the_command_refuses_a_folder_that_is_not_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([str(tmp_path / "nowhere")])
    assert "no folder" in capsys.readouterr().err


def test_the_margin_keeps_a_top_face_box_s_die_out_of_the_strips() -> None:
    # matteop65 boxes the top face (or pips) only: the die's sides reach beyond the box.
    face = (500, 300, 540, 340)
    whole_die = (485, 285, 560, 360)
    assert MARGIN >= 1.0
    for strip in dice_free_strips(1280, 960, [face]):
        assert not _overlap(strip.box, whole_die)


def test_the_committed_photos_show_no_die_beyond_their_labelled_ones(reader: DiceReader) -> None:
    """The real tables around the dice of the committed photos (tests/data): no die there."""
    folder = Path(__file__).resolve().parents[1] / "data" / "dice"
    counts, hits = read_strips(reader, folder)
    assert counts.strips >= 5
    assert hits == []


def test_a_die_the_whole_photo_does_not_read_is_said_so(
    tmp_path: Path, reader: DiceReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The strip's die is one the whole photo's reading does not report (here: a reading of the
    whole photo that finds nothing), so a table would not show it: said apart."""
    folder = _folder(tmp_path, [{"image": "images/a.png", "dice": [_die(d) for d in RIGHT]}])
    read = reader.read

    def nothing_in_the_whole(frame: np.ndarray, **kwargs: Any) -> DiceReading:
        return DiceReading("empty", ()) if frame.shape[:2] == (960, 1280) else read(frame, **kwargs)

    monkeypatch.setattr(reader, "read", nothing_in_the_whole)
    (hit,) = read_strips(reader, folder)[1]
    assert hit.die.value == LEFT.value
    assert not hit.in_whole
