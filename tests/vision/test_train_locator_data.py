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
    LocatorConfig,
    Photo,
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
