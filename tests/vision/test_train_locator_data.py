"""The locator's training samples (no torch): crops, turns, flips and scales move the boxes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from vision.train.data import FloatBox, LabelledDie, Record
from vision.train.locator_data import (
    HIDDEN_BEYOND,
    LocatorConfig,
    Photo,
    cover_die,
    cut_scene,
    load_photo,
    photometric,
    sample,
)

Image = npt.NDArray[np.uint8]


def _squares(size: int, boxes: list[FloatBox]) -> Image:
    """A black picture with a white square at each box."""
    image = np.zeros((size, size, 3), np.uint8)
    for x0, y0, x1, y1 in boxes:
        image[int(y0) : int(y1), int(x0) : int(x1)] = 255
    return image


def _inside_and_outside(image: Image, boxes: list[FloatBox]) -> tuple[float, float]:
    """Mean brightness inside the boxes (shrunk by 2 px) and outside every box (grown by 2)."""
    grey = image.mean(axis=2)
    inside = np.zeros(grey.shape, bool)
    near = np.zeros(grey.shape, bool)
    for x0, y0, x1, y1 in boxes:
        inside[int(y0) + 2 : int(y1) - 2, int(x0) + 2 : int(x1) - 2] = True
        near[max(int(y0) - 2, 0) : int(y1) + 2, max(int(x0) - 2, 0) : int(x1) + 2] = True
    return float(grey[inside].mean()), float(grey[~near].mean())


BOXES: list[FloatBox] = [(20.0, 30.0, 50.0, 60.0), (120.0, 10.0, 140.0, 30.0), (70, 150, 110, 190)]


@pytest.mark.parametrize("seed", range(8))
def test_cut_scene_moves_the_boxes_with_the_pixels(seed: int) -> None:
    image = _squares(256, BOXES)
    window, boxes = cut_scene((image, BOXES), np.random.default_rng(seed), 192)
    assert window.shape == (192, 192, 3)
    kept = [b for b in boxes if b[0] >= 0 and b[1] >= 0 and b[2] <= 192 and b[3] <= 192]
    assert kept, "the window lost every square"
    inside, outside = _inside_and_outside(window, kept)
    assert inside == 255.0
    assert outside < 10.0


@pytest.mark.parametrize("seed", range(8))
def test_photometric_changes_keep_the_boxes_on_the_squares(seed: int) -> None:
    image = _squares(192, [(b[0], b[1], b[2], b[3]) for b in BOXES[:2]])
    changed, boxes = photometric(image, list(BOXES[:2]), np.random.default_rng(seed))
    inside, outside = _inside_and_outside(changed, boxes)
    assert inside > 150.0
    assert outside < 80.0


@pytest.mark.parametrize("share", [0.0, 0.1, 0.3, 1.0])
def test_photometric_makes_the_grey_share_of_samples_grey(share: float) -> None:
    # A coloured image: a grey sample has its three channels alike everywhere.
    image = np.zeros((64, 64, 3), np.uint8)
    image[:, :, 2] = 200
    image[16:48, 16:48] = (40, 180, 90)
    rng = np.random.default_rng(7)
    greys = 0
    for _ in range(400):
        changed, _ = photometric(image, [], rng, grey=share)
        # Noise is added after the grey, pixel by pixel: the channels' means stay alike.
        means = changed.reshape(-1, 3).mean(axis=0)
        greys += int(np.ptp(means) < 3)
    assert greys / 400 == pytest.approx(share, abs=0.05)


def test_sampled_photos_are_seen_at_the_asked_scale() -> None:
    # A 640x480 photo with one 32 px die: 16 px at the locator's 320 px view.
    image = _squares(640, [(300.0, 200.0, 332.0, 232.0)])[:480]
    photo = Photo("src", image, [(300.0, 200.0, 332.0, 232.0)], Path("x.jpg"), (480, 640))
    for scale in (0.5, 1.0, 2.5):
        config = replace(LocatorConfig(), synthetic_share=0.0, scale_range=(scale, scale))
        crop, boxes = sample([photo], np.random.default_rng(1), config)
        assert crop.shape == (config.crop, config.crop, 3)
        (x0, y0, x1, y1) = boxes[0]
        assert x1 - x0 == pytest.approx(16 * scale, rel=0.05)
        assert y1 - y0 == pytest.approx(16 * scale, rel=0.05)


def test_a_photo_smaller_than_the_crop_is_not_mirrored_into_unlabelled_dice() -> None:
    # At half the locator's scale the 320 px photo is 160 px: the rest of the crop is filler,
    # and the only white in the crop is the labelled die.
    image = np.zeros((320, 320, 3), np.uint8)
    image[280:310, 280:310] = 255
    photo = Photo("src", image, [(280.0, 280.0, 310.0, 310.0)], Path("x.jpg"), (320, 320))
    config = replace(LocatorConfig(), synthetic_share=0.0, scale_range=(0.5, 0.5))
    for seed in range(6):
        crop, boxes = sample([photo], np.random.default_rng(seed), config)
        white = crop.mean(axis=2) > 128
        x0, y0, x1, y1 = (int(round(v)) for v in boxes[0])
        assert white.sum() == pytest.approx(white[y0:y1, x0:x1].sum(), abs=4)


def test_photos_are_kept_large_but_never_blown_up(tmp_path: Path) -> None:
    path = tmp_path / "p.png"
    cv2.imwrite(str(path), np.zeros((300, 400, 3), np.uint8))
    record = Record("src", path, "train", (LabelledDie(3, (100.0, 100.0, 140.0, 140.0)),))
    kept = load_photo(record, 640)
    assert kept.image.shape[:2] == (300, 400)
    assert kept.boxes == [(100.0, 100.0, 140.0, 140.0)]
    small = load_photo(record, 320)
    assert small.image.shape[:2] == (240, 320)
    assert small.boxes[0] == pytest.approx((80.0, 80.0, 112.0, 112.0))
    assert small.source_shape == (300, 400)


@pytest.mark.parametrize("seed", range(40))
def test_a_card_over_a_die_leaves_boxes_on_what_shows_of_each_die(seed: int) -> None:
    # Grey squares on black. A shadow only darkens (channels stay equal, black stays black);
    # the card has a colour and grain of its own, so its pixels are those whose channels differ.
    # Inside a die's new box, the die shows; a die no longer labelled is mostly under the card.
    boxes = [(30.0, 40.0, 70.0, 80.0), (90.0, 90.0, 120.0, 120.0), (140.0, 20.0, 175.0, 55.0)]
    image = _squares(192, boxes) // 4 * 3
    covered, shown = cover_die(image, boxes, np.random.default_rng(seed))
    assert covered.shape == image.shape
    wide = covered.astype(int)
    card = (wide.max(axis=2) - wide.min(axis=2) > 2) | (
        (image == 0).all(axis=2) & (wide > 0).any(axis=2)
    )
    assert card.any(), "no card was laid"
    for box, new in _matched(boxes, shown):
        x0, y0, x1, y1 = (int(v) for v in box)
        under = card[y0:y1, x0:x1]
        if new is None:
            assert under.mean() > HIDDEN_BEYOND - 0.1
            continue
        assert under.mean() < HIDDEN_BEYOND + 0.1
        ys, xs = np.nonzero(~under)
        outside = (xs + x0 < new[0] - 3) | (xs + x0 > new[2] + 3)
        outside |= (ys + y0 < new[1] - 3) | (ys + y0 > new[3] + 3)
        assert outside.mean() < 0.02, "part of the die that shows lies outside its new box"
        # ... and the box is no larger than what shows.
        assert xs.min() + x0 <= new[0] + 4
        assert xs.max() + x0 + 1 >= new[2] - 4
        assert ys.min() + y0 <= new[1] + 4
        assert ys.max() + y0 + 1 >= new[3] - 4


def _matched(
    boxes: list[FloatBox], shown: list[FloatBox]
) -> list[tuple[FloatBox, FloatBox | None]]:
    """Each die's box with its box after the card (inside it), or None when it was dropped."""
    pairs: list[tuple[FloatBox, FloatBox | None]] = []
    rest = list(shown)
    for box in boxes:
        inside = [
            b
            for b in rest
            if b[0] >= box[0] - 1e-3
            and b[1] >= box[1] - 1e-3
            and b[2] <= box[2] + 1e-3
            and b[3] <= box[3] + 1e-3
        ]
        pairs.append((box, inside[0] if inside else None))
        if inside:
            rest.remove(inside[0])
    assert not rest, "a box after the card lies in no die"
    return pairs


def test_cards_cut_dice_boxes_drop_dice_and_lie_on_bare_tables() -> None:
    # Over many draws the card leaves each label the locator is to learn from: a die boxed
    # smaller where it shows, a die no longer labelled, and a card on a table with no dice.
    box = (60.0, 60.0, 100.0, 100.0)
    image = _squares(192, [box]) // 2
    outcomes = []
    for seed in range(200):
        _, shown = cover_die(image, [box], np.random.default_rng(seed))
        outcomes.append("dropped" if not shown else "same" if shown[0] == box else "cut")
    assert outcomes.count("cut") > 60
    assert outcomes.count("dropped") > 30
    bare, none = cover_die(np.zeros((192, 192, 3), np.uint8), [], np.random.default_rng(1))
    assert none == []
    assert bare.any(), "a card lies on a bare table too"
