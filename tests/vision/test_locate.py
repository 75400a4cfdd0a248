"""Locating dice on synthetic tray frames: counts, boxes, touching dice, cocked dice, big frames."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.locate import LocatedDie, LocatorOptions, downscale, locate_dice, tray_colour
from vision.source import as_bgr
from vision.synthetic import (
    TRAYS,
    DieSpec,
    draw_die,
    make_frame,
    make_tray,
    six_dice,
)

Box = tuple[int, int, int, int]


def _iou(a: Sequence[int], b: Sequence[int]) -> float:
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union


def _match(found: Sequence[LocatedDie], truth: Sequence[DieSpec]) -> list[float]:
    """Best IoU of each true die with the found boxes."""
    return [max((_iou(f.box, t.box) for f in found), default=0.0) for t in truth]


@pytest.mark.parametrize("tray", sorted(TRAYS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_six_separate_dice_are_found_with_tight_boxes(tray: str, seed: int) -> None:
    dice = six_dice(1280, 960, seed=seed)
    found = locate_dice(make_frame(1280, 960, dice, tray=tray, seed=seed))
    assert len(found) == 6
    assert min(_match(found, dice)) > 0.8
    assert not any(d.cocked for d in found)


@pytest.mark.parametrize("tray", sorted(TRAYS))
@pytest.mark.parametrize("size", [(640, 480), (1280, 960), (3280, 2464)])
def test_an_empty_tray_has_no_dice(tray: str, size: tuple[int, int]) -> None:
    assert locate_dice(make_tray(*size, colour=tray, seed=7)) == []


def test_two_touching_dice_are_split() -> None:
    side = 90.0
    dice = [DieSpec(3, 500, 400, side), DieSpec(5, 500 + side, 400, side)]
    found = locate_dice(make_frame(1280, 960, dice, tray="grey"))
    assert len(found) == 2
    assert min(_match(found, dice)) > 0.6


def test_three_touching_dice_in_an_l_are_split() -> None:
    side = 90.0
    dice = [
        DieSpec(1, 400, 400, side),
        DieSpec(2, 400 + side, 400, side),
        DieSpec(6, 400, 400 + side, side),
        DieSpec(4, 900, 300, side, angle=20),
    ]
    found = locate_dice(make_frame(1280, 960, dice, tray="green"))
    assert len(found) == 4
    assert min(_match(found, dice)) > 0.55


def test_a_leaning_die_is_cocked_and_flat_ones_are_not() -> None:
    flat = [DieSpec(2, 300, 300, 90, angle=10), DieSpec(5, 700, 600, 90, angle=50)]
    leaning = [DieSpec(4, 1000, 300, 90, angle=15)]
    found = locate_dice(make_frame(1280, 960, flat, cocked=leaning, tray="brown"))
    assert len(found) == 3
    cocked = [d for d in found if d.cocked]
    assert len(cocked) == 1
    assert _iou(cocked[0].box, (955, 255, 1045, 345)) > 0.4


def test_boxes_are_in_full_frame_pixels_for_large_frames() -> None:
    small = six_dice(1280, 960, seed=3)
    scale = 3280 / 1280
    big = [DieSpec(d.value, d.cx * scale, d.cy * scale, d.side * scale, d.angle) for d in small]
    found = locate_dice(make_frame(3280, 2464, big, tray="grey"))
    assert len(found) == 6
    assert min(_match(found, big)) > 0.8


def test_known_die_side_from_calibration_is_used() -> None:
    side = 90.0
    dice = [DieSpec(3, 500, 400, side), DieSpec(5, 500 + side, 400, side)]
    frame = make_frame(1280, 960, dice, tray="grey")
    assert len(locate_dice(frame, options=LocatorOptions(die_side=side))) == 2
    # Told the dice are four times as big, the pair is too thin to be one of them.
    assert locate_dice(frame, options=LocatorOptions(die_side=side * 4)) == []


def test_calibrated_tray_colour_finds_the_same_dice() -> None:
    dice = six_dice(1280, 960, seed=8)
    tray = tray_colour(downscale(make_tray(1280, 960, colour="brown"), 480)[0])
    found = locate_dice(make_frame(1280, 960, dice, tray="brown"), tray=tray)
    assert len(found) == 6


def test_downscale_keeps_small_frames() -> None:
    frame = np.zeros((100, 200, 3), np.uint8)
    small, factor = downscale(frame, 480)
    assert small is frame
    assert factor == 1.0
    big, factor = downscale(np.zeros((2464, 3280, 3), np.uint8), 480)
    assert big.shape == (361, 480, 3)
    assert factor == pytest.approx(480 / 3280)


@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 6), st.floats(0.0, 89.0)), min_size=0, max_size=9),
    st.sampled_from(sorted(TRAYS)),
    st.integers(0, 1000),
)
def test_property_every_die_on_a_grid_is_found_once(
    faces: list[tuple[int, float]], tray: str, seed: int
) -> None:
    dice = [
        DieSpec(value, 160 + 240 * (i % 3), 130 + 220 * (i // 3), 70, angle)
        for i, (value, angle) in enumerate(faces)
    ]
    frame = make_frame(800, 720, dice, tray=tray, seed=seed)
    found = locate_dice(frame)
    assert len(found) == len(dice)
    assert all(iou > 0.7 for iou in _match(found, dice))


def test_a_die_cut_by_the_frame_edge_is_not_reported() -> None:
    # Half out of view, a die cannot be read; the whole one beside it is found.
    dice = [DieSpec(6, 20, 20, 80, angle=30), DieSpec(1, 640, 480, 80)]
    found = locate_dice(make_frame(1280, 960, dice, tray="green"))
    assert len(found) == 1
    assert _iou(found[0].box, dice[1].box) > 0.8


def test_locating_runs_on_a_grey_camera_frame_converted_at_the_source() -> None:
    frame = make_frame(640, 480, six_dice(640, 480), tray="grey")
    grey = as_bgr(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
    assert len(locate_dice(grey)) == 6


def test_dice_on_a_tray_ringed_by_a_table_of_another_colour_are_found() -> None:
    # Against the tray's colour the table is one ring round the whole frame: what lies in its
    # hole (the tray and the dice) must still be searched.
    frame = make_tray(1280, 960, colour="brown", seed=3)
    frame[120:840, 160:1120] = make_tray(960, 720, colour="green", seed=4)
    dice = six_dice(960, 720, seed=6)
    tray = frame[120:840, 160:1120].copy()
    for spec in dice:
        draw_die(tray, spec)
    frame[120:840, 160:1120] = tray
    found = locate_dice(frame)
    moved = [DieSpec(d.value, d.cx + 160, d.cy + 120, d.side, d.angle) for d in dice]
    assert len(found) == 6
    assert min(_match(found, moved)) > 0.8
