"""Our review of the shared labels (vision/review.py) is applied by pipcam eval and by training,
and never to a die the source has changed since."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import review
from vision.evaluate import evaluate_folder
from vision.review import REVIEWS, Review, reviewed
from vision.train.data import load_folder

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "dice"
PHOTO = "images/a.png"


def _record(values: list[int]) -> dict[str, object]:
    dice = [{"value": v, "box": [10 + 30 * i, 10, 30 + 30 * i, 30]} for i, v in enumerate(values)]
    return {"image": PHOTO, "split": "val", "dice": dice}


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A source folder named "src" with one photo of three dice labelled 2, 5, 5."""
    folder = tmp_path / "src"
    (folder / "images").mkdir(parents=True)
    cv2.imwrite(str(folder / PHOTO), np.zeros((40, 100, 3), np.uint8))
    (folder / "labels.jsonl").write_text(json.dumps(_record([2, 5, 5])) + "\n")
    monkeypatch.setattr(review, "REVIEWS", {})
    return folder


def test_a_photo_without_a_review_is_read_as_it_is() -> None:
    record = _record([1, 2])
    assert reviewed("src", record) is record


@pytest.mark.parametrize(
    ("entry", "want_values", "want_training", "want_issue"),
    [
        # Scored as the reviewer saw it; trained without the doubted die.
        (Review(values=((0, 2, 3),)), [3, 5, 5], [5, 5], None),
        (Review(values=((0, 4, 3),)), [2, 5, 5], [2, 5, 5], None),  # the source changed
        (Review(added=((6, (80.0, 0.0, 99.0, 20.0)),)), [2, 5, 5, 6], [2, 5, 5, 6], None),
        (Review(known_issue="all labelled 6"), None, [2, 5, 5], "all labelled 6"),
    ],
)
def test_evaluation_takes_the_reviewed_labels_as_the_truth(
    source: Path,
    monkeypatch: pytest.MonkeyPatch,
    entry: Review,
    want_values: list[int] | None,
    want_training: list[int],
    want_issue: str | None,
) -> None:
    monkeypatch.setattr(review, "REVIEWS", {("src", PHOTO): entry})
    report = evaluate_folder(source, lambda _frame: [])  # a reader that finds nothing
    if want_values is None:  # left out of scoring
        assert (report.images, report.skipped) == (0, 1)
    else:
        (result,) = report.results
        assert sorted(result.labelled) == want_values
    (record,) = load_folder(source)
    assert record.known_issue == want_issue
    assert [d.value for d in record.dice if not d.suspect] == want_training


def test_a_die_the_source_changed_is_left_alone_and_logged(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(review, "REVIEWS", {("src", PHOTO): Review(values=((5, 2, 3),))})
    with caplog.at_level(logging.WARNING, logger="vision.review"):
        out = reviewed("src", _record([2]))
    assert out["dice"] == _record([2])["dice"]
    assert "die 5 is no longer a 2" in caplog.text


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared dice photos are not on this machine")
@pytest.mark.parametrize(("key", "entry"), sorted(REVIEWS.items()))
def test_every_review_names_a_photo_and_die_of_the_shared_data(
    key: tuple[str, str], entry: Review
) -> None:
    source, image = key
    lines = (SHARED / source / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    (record,) = [json.loads(x) for x in lines if x.strip() and json.loads(x)["image"] == image]
    assert (SHARED / source / image).is_file()
    for index, was, seen in entry.values:
        assert record["dice"][index]["value"] == was != seen
    if entry.known_issue:
        assert not record.get("known_issue"), "the source flags it already: drop the review"
