"""The shipped locator model: matches its card and the boxes recorded when it was made."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from vision.classify import DEFAULT_LOCATOR_MODEL, FLOAT_LOCATOR_MODEL, OnnxLocator
from vision.detect import decode, locator_input
from vision.evaluate import match_dice

ROOT = Path(__file__).resolve().parents[2]
CARD = ROOT / "models" / "MODEL_CARD.md"
TEST_DATA = ROOT / "tests" / "data" / "dice"
RECORDED = TEST_DATA / "locator_outputs.json"  # vision.train.locator.RECORDED_NAME


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RECORDED.read_text(encoding="utf-8"))
    return data


def test_locator_is_small_and_its_sha256_is_in_its_card_section(recorded: dict[str, Any]) -> None:
    data = FLOAT_LOCATOR_MODEL.read_bytes()
    assert len(data) < 2_000_000
    digest = hashlib.sha256(data).hexdigest()
    section = CARD.read_text(encoding="utf-8").split("# dice_locator.onnx", 1)[1]
    card = re.search(r"sha256: `([0-9a-f]{64})`", section)
    assert card is not None
    assert card.group(1) == digest
    assert recorded["model_sha256"] == digest


# The int8 copy the reader runs (tests/vision/test_quantize.py) gets a looser tolerance: integer
# arithmetic is exact, but processors round its rescaling differently.
@pytest.mark.parametrize(
    ("model", "name", "box_tolerance", "score_tolerance"),
    [
        (FLOAT_LOCATOR_MODEL, RECORDED.name, 0.5, 1e-3),
        (DEFAULT_LOCATOR_MODEL, "locator_int8_outputs.json", 2.0, 0.02),
    ],
    ids=["float", "int8"],
)
def test_boxes_agree_with_the_recorded_ones(
    model: Path, name: str, box_tolerance: float, score_tolerance: float
) -> None:
    recorded = json.loads((TEST_DATA / name).read_text(encoding="utf-8"))
    locator = OnnxLocator(model, threads=1)
    assert len(recorded["photos"]) >= 5
    for entry in recorded["photos"]:
        loaded = cv2.imread(str(TEST_DATA / entry["image"]))
        assert loaded is not None, entry["image"]
        image = np.asarray(loaded, dtype=np.uint8)
        tensor, factor = locator_input(image)
        heat, box = locator.run(tensor)
        found = decode(
            heat, box, factor=factor, threshold=recorded["threshold"], frame_shape=image.shape[:2]
        )
        assert len(found) == len(entry["boxes"]), entry["image"]
        np.testing.assert_allclose([f.box for f in found], entry["boxes"], atol=box_tolerance)
        np.testing.assert_allclose([f.score for f in found], entry["scores"], atol=score_tolerance)


def test_every_labelled_die_of_the_test_photos_has_a_recorded_box(
    recorded: dict[str, Any],
) -> None:
    lines = (TEST_DATA / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    labels = {r["image"]: r for r in (json.loads(line) for line in lines if line.strip())}
    for entry in recorded["photos"]:
        truth = [tuple(d["box"]) for d in labels[entry["image"]]["dice"]]
        pairs = match_dice(truth, [tuple(b) for b in entry["boxes"]])
        assert len(pairs) == len(truth), entry["image"]
