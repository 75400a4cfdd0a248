"""Locating dice on synthetic tray frames: counts, boxes, touching dice, cocked dice, big frames."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.vision.boxes_net import BoxesNet
from vision.classify import DEFAULT_LOCATOR_MODEL, OnnxLocator
from vision.detect import centre_inside, iou
from vision.locate import (
    ClassicalLocator,
    LearnedLocator,
    LocatedDie,
    LocatorOptions,
    die_at,
    downscale,
    footprint,
    locate_dice,
    tray_colour,
)
from vision.source import as_bgr
from vision.synthetic import (
    TRAYS,
    DieSpec,
    draw_die,
    make_frame,
    make_tray,
    six_dice,
)
from vision.train.data import read_image
from vision.train.heatmap import encode

Box = tuple[int, int, int, int]
Array = npt.NDArray[np.float32]


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


# --- The classical locator behind the Locator protocol: a roll zone splits the search.


def test_classical_locator_finds_dice_in_the_zone_and_on_the_table_beside_it() -> None:
    frame = make_tray(1280, 960, colour="brown", seed=2)
    frame[:, 384:] = make_tray(896, 960, colour="green", seed=3)
    inside = [DieSpec(3, 700, 300, 80), DieSpec(6, 1000, 700, 80, angle=25)]
    aside = [DieSpec(1, 150, 250, 80), DieSpec(5, 200, 700, 80, angle=40)]
    for spec in inside + aside:
        draw_die(frame, spec)
    found = ClassicalLocator().locate(frame, zone=(384, 0, 1280, 960))
    assert len(found) == 4
    assert min(_match(found, inside + aside)) > 0.7


# --- The learned locator with a stand-in network that answers given boxes.


def test_learned_locator_returns_the_nets_boxes_in_frame_pixels() -> None:
    dice = six_dice(1280, 960, seed=5)
    frame = make_frame(1280, 960, dice, tray="grey", seed=5)
    net = BoxesNet([d.box for d in dice], frame.shape[:2])
    found = LearnedLocator(net).locate(frame)
    assert net.seen == [(1, 3, 240, 320)]
    assert len(found) == 6
    assert min(_match(found, dice)) > 0.8
    assert not any(d.cocked for d in found)


def test_learned_locator_tells_a_leaning_die_by_its_footprint() -> None:
    flat = [DieSpec(2, 300, 300, 90, angle=10), DieSpec(5, 700, 600, 90, angle=50)]
    leaning = [DieSpec(4, 1000, 300, 90, angle=15)]
    frame = make_frame(1280, 960, flat, cocked=leaning, tray="brown")
    # The net boxes the leaning die as a plain square: only its footprint shows it leans.
    net = BoxesNet([d.box for d in flat + leaning], frame.shape[:2])
    found = LearnedLocator(net).locate(frame)
    assert len(found) == 3
    cocked = [d for d in found if d.cocked]
    assert len(cocked) == 1
    assert _iou(cocked[0].box, leaning[0].box) > 0.4


def test_learned_locator_calls_a_die_leaning_on_another_cocked() -> None:
    flat = DieSpec(3, 300, 240, 80)
    leaning = DieSpec(6, 300 + 80 + 5, 240, 80, angle=90)
    frame = make_frame(640, 480, [flat], cocked=[leaning], tray="green")
    found = LearnedLocator(BoxesNet([flat.box, leaning.box], frame.shape[:2])).locate(frame)
    assert len(found) == 2
    by_x = sorted(found, key=lambda d: d.centre[0])
    assert by_x[1].cocked


def test_a_net_that_sees_nothing_finds_nothing() -> None:
    frame = make_tray(640, 480, colour="grey", seed=1)
    assert LearnedLocator(BoxesNet([], frame.shape[:2])).locate(frame) == []


@pytest.mark.parametrize("angle", [0.0, 20.0, 45.0, 70.0])
def test_footprint_of_a_flat_die_is_square_whatever_its_turn(angle: float) -> None:
    spec = DieSpec(5, 320, 240, 90, angle=angle)
    frame = make_frame(640, 480, [spec], tray="green")
    rect = footprint(frame, spec.box)
    assert rect is not None
    (cx, cy), (w, h), _ = rect
    assert (cx, cy) == pytest.approx((320, 240), abs=4)
    assert max(w, h) / min(w, h) < 1.15
    assert min(w, h) == pytest.approx(90, rel=0.12)


def test_footprint_of_bare_tray_is_none() -> None:
    assert footprint(make_tray(640, 480, colour="grey", seed=2), (300, 200, 380, 280)) is None


# --- The second, larger look when the dice are small.


class _SharpNet:
    """A heatmap model that sees a die only when it is ``min_px`` or more in its input."""

    def __init__(self, boxes: Sequence[Box], frame_side: int, min_px: float = 10.0) -> None:
        self.boxes, self.frame_side, self.min_px = boxes, frame_side, min_px
        self.seen: list[tuple[int, ...]] = []

    def run(self, image: Array) -> tuple[Array, Array]:
        self.seen.append(image.shape)
        # Inputs are padded by less than 16 pixels: the larger side gives the scale closely.
        scale = (max(image.shape[2:]) - 8) / self.frame_side
        seen = [
            tuple(v * scale for v in box)
            for box in self.boxes
            if (box[2] - box[0]) * scale >= self.min_px
        ]
        heat, size, _ = encode([(b[0], b[1], b[2], b[3]) for b in seen], *image.shape[2:])
        clipped = np.clip(heat, 1e-4, 1 - 1e-4)
        return np.log(clipped / (1 - clipped))[None].astype(np.float32), size[None]


def _small_and_large_dice() -> list[Box]:
    """Two dice of 80 px and twelve of 40 px on a 1600x1200 frame (16 and 8 px at 320)."""
    large = [(100, 100, 180, 180), (1300, 900, 1380, 980)]
    small = [(300 + 100 * (k % 6), 400 + 150 * (k // 6), 340 + 100 * (k % 6), 440 + 150 * (k // 6))
             for k in range(12)]  # fmt: skip
    return large + small


def test_small_dice_are_looked_at_again_larger_and_all_found() -> None:
    frame = make_tray(1600, 1200, colour="grey", seed=3)
    boxes = _small_and_large_dice()
    net = _SharpNet(boxes, 1600)
    found = LearnedLocator(net, zoom_below=20.0, zoom_to=28.0).locate(frame)
    # The first look (320 px) sees the two large dice only (16 px); the second makes them 28 px,
    # about 560 px wide, and sees all of them.
    assert len(net.seen) == 2
    assert net.seen[0][3] == 320
    assert 540 <= net.seen[1][3] <= 600
    # Each die once (the stand-in net's scale is only estimated, so boxes are matched by centre).
    assert len(found) == len(boxes)
    assert all(sum(centre_inside(f.box, b) for f in found) == 1 for b in boxes)


def test_without_zoom_the_small_dice_stay_unseen() -> None:
    frame = make_tray(1600, 1200, colour="grey", seed=3)
    net = _SharpNet(_small_and_large_dice(), 1600)
    assert len(LearnedLocator(net, zoom_below=0.0).locate(frame)) == 2
    assert len(net.seen) == 1


def test_dice_of_ordinary_size_are_looked_at_once() -> None:
    dice = six_dice(1280, 960, seed=5)
    frame = make_frame(1280, 960, dice, tray="grey", seed=5)
    net = _SharpNet([d.box for d in dice], 1280)
    found = LearnedLocator(net, zoom_below=20.0).locate(frame)
    assert len(found) == 6
    assert net.seen == [(1, 3, 240, 320)]


def test_an_empty_tray_is_not_looked_at_again() -> None:
    net = _SharpNet([], 1600)
    assert LearnedLocator(net, zoom_below=20.0).locate(make_tray(1600, 1200, seed=1)) == []
    assert len(net.seen) == 1


def test_the_zoom_never_goes_past_the_frames_own_pixels() -> None:
    # A 400 px photo whose dice are 10 px at 320: zooming could only blow up its pixels.
    boxes = [(50 + 40 * k, 50, 63 + 40 * k, 63) for k in range(5)]
    net = _SharpNet(boxes, 400, min_px=8.0)
    LearnedLocator(net, zoom_below=20.0, zoom_to=28.0).locate(make_tray(400, 300, seed=2))
    assert max(shape[3] for shape in net.seen) <= 400


# --- The shipped learned locator on synthetic frames (the network itself).


@pytest.fixture(scope="module")
def learned() -> LearnedLocator:
    return LearnedLocator(OnnxLocator(DEFAULT_LOCATOR_MODEL))


@pytest.mark.parametrize("tray", sorted(TRAYS))
@pytest.mark.parametrize("size", [(1280, 960), (3280, 2464)])
def test_shipped_locator_finds_six_dice_and_nothing_on_an_empty_tray(
    tray: str, size: tuple[int, int], learned: LearnedLocator
) -> None:
    dice = six_dice(*size, seed=2)
    found = learned.locate(make_frame(*size, dice, tray=tray, seed=2))
    assert len(found) == 6
    assert min(_match(found, dice)) > 0.6
    assert learned.locate(make_tray(*size, colour=tray, seed=7)) == []


def test_shipped_locator_finds_a_leaning_die_and_calls_it_cocked(learned: LearnedLocator) -> None:
    flat = [DieSpec(2, 300, 300, 90, angle=10), DieSpec(5, 700, 600, 90, angle=50)]
    leaning = [DieSpec(4, 1000, 300, 90, angle=15)]
    found = learned.locate(make_frame(1280, 960, flat, cocked=leaning, tray="brown"))
    assert len(found) == 3
    assert [_iou(d.box, leaning[0].box) > 0.4 for d in found if d.cocked] == [True]


def _int_box(box: Sequence[float]) -> Box:
    return (int(box[0]), int(box[1]), int(box[2]), int(box[3]))


def _labelled_photos() -> list[tuple[npt.NDArray[np.uint8], list[tuple[float, ...]]]]:
    """The committed real photos (tests/data/dice) with their labelled boxes."""
    root = Path(__file__).resolve().parents[1] / "data" / "dice"
    photos = []
    for line in (root / "labels.jsonl").read_text().splitlines():
        record = json.loads(line)
        photos.append(
            (read_image(root / record["image"]), [tuple(d["box"]) for d in record["dice"]])
        )
    return photos


def test_a_die_pointed_at_is_boxed_where_the_locator_sees_it() -> None:
    """Each labelled die of the real photos, taken as missed, tapped off its centre (a fifth of
    its side right, a sixth up): the shipped locator's faint peak under the tap boxes it better
    than a square of the other dice's size round the tap would."""
    locator = LearnedLocator(OnnxLocator(DEFAULT_LOCATOR_MODEL))
    found, guessed = [], []
    for image, boxes in _labelled_photos():
        for k, box in enumerate(boxes):
            others = [_int_box(b) for j, b in enumerate(boxes) if j != k]
            side = max(box[2] - box[0], box[3] - box[1])
            tap = ((box[0] + box[2]) / 2 + side / 5, (box[1] + box[3]) / 2 - side / 6)
            placed = die_at(image, tap, others, locator)
            square = die_at(image, tap, others)
            assert placed is not None
            assert square is not None
            found.append(iou(placed, box))
            guessed.append(iou(square, box))
    assert len(found) == 22
    assert min(found) >= 0.4
    assert sum(found) / len(found) >= sum(guessed) / len(guessed) + 0.15


def test_a_die_pointed_at_is_never_one_already_known() -> None:
    image, boxes = _labelled_photos()[0]
    known = [_int_box(b) for b in boxes]
    x0, y0, x1, y1 = known[0]
    locator = LearnedLocator(OnnxLocator(DEFAULT_LOCATOR_MODEL))
    assert die_at(image, ((x0 + x1) / 2, (y0 + y1) / 2), known, locator) is None
    assert die_at(image, (-1.0, 5.0), known, locator) is None  # outside the frame
    assert die_at(image, (5.0, 5.0), []) is None  # nothing to size a box by


def test_without_a_locator_the_box_is_the_known_dice_size_round_the_tap() -> None:
    frame = np.zeros((100, 200, 3), np.uint8)
    known = [(0, 0, 10, 10), (20, 0, 30, 10), (40, 0, 52, 12)]
    assert die_at(frame, (100.0, 50.0), known) == (95, 45, 105, 55)
    assert die_at(frame, (198.0, 98.0), known) == (193, 93, 200, 100)  # cut at the frame's edge
    assert die_at(frame, (35.0, 5.0), known) == (30, 0, 40, 10)  # between two dice
    assert die_at(frame, (45.0, 5.0), known) is None  # on a known die


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    shadow=st.floats(0.3, 0.9),
    image_centre=st.booleans(),
)
def test_what_stands_out_is_the_scaled_distance_pixel_by_pixel(
    seed: int, shadow: float, image_centre: bool
) -> None:
    """The mask the settle detector and the classical locator build on, computed plane by plane
    for speed, is the distance of each pixel from the tray's colour (or from an image of local
    colours), scaled per channel, with lightness not counted where a shadow could have darkened
    the tray."""
    from vision.locate import _far

    rng = np.random.default_rng(seed)
    lab = rng.uniform(0, 255, (37, 53, 3)).astype(np.float32)
    centre = (
        rng.uniform(0, 255, (37, 53, 3)).astype(np.float32)
        if image_centre
        else rng.uniform(0, 255, 3).astype(np.float32)
    )
    scale = rng.uniform(2, 30, 3).astype(np.float32)
    options = LocatorOptions(shadow_ratio=shadow)
    got = _far(lab, centre, scale, options)
    back = np.broadcast_to(centre, lab.shape)
    for y, x in zip(rng.integers(0, 37, 60), rng.integers(0, 53, 60), strict=True):
        pixel, tray = lab[y, x].astype(np.float64), back[y, x].astype(np.float64)
        z = (pixel - tray) / scale
        if tray[0] * shadow <= pixel[0] < tray[0]:
            z[0] = 0.0  # as dark as a shadow makes the tray: its lightness says nothing
        distance = float(np.sum(z * z))
        if abs(distance - options.distance**2) > 1e-3:  # not on the edge of float rounding
            assert got[y, x] == (255 if distance > options.distance**2 else 0), (y, x)


def test_the_tray_colour_is_each_channel_median_and_spread() -> None:
    """Median and spread (1.4826 times the median absolute deviation) per channel, however the
    sample is laid out: the same as numpy's median down the columns."""
    from vision.locate import _median_spread

    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 1000):
        sample = rng.normal(120, 9, (n, 3)).astype(np.float32)
        median, spread = _median_spread(sample)
        expected = np.median(sample, axis=0)
        np.testing.assert_array_equal(median, expected)
        np.testing.assert_array_equal(spread, 1.4826 * np.median(np.abs(sample - expected), axis=0))
