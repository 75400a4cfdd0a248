"""Scoring a reader on a labelled folder, with a fake reader whose answers are set per photo."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from vision.evaluate import (
    COLUMNS,
    MIN_GAIN,
    ROWS,
    WRONG_COST,
    Comparison,
    EvalReport,
    ImageResult,
    evaluate_folder,
    format_report,
    match_dice,
    photo_cost,
    photos_cheaper,
    reading_cost,
    sign_test,
    split_view,
    write_confusion_png,
)

Box = tuple[int, int, int, int]
Answer = list[tuple[int | None, Box]]

A = (10, 10, 30, 30)
B = (50, 10, 70, 30)
C = (10, 50, 30, 70)


def _make_folder(tmp_path: Path, records: list[dict[str, object]]) -> Path:
    """Write a labels.jsonl and one 80x80 PNG per record whose grey level is its index."""
    (tmp_path / "images").mkdir()
    for index, record in enumerate(records):
        image = np.full((80, 80, 3), index * 10, np.uint8)
        cv2.imwrite(str(tmp_path / str(record["image"])), image)
    lines = [json.dumps(r) for r in records]
    (tmp_path / "labels.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def _reader(answers: Sequence[Answer]) -> object:
    """A fake reader: the photo's grey level says which answer to give."""

    def read(frame: npt.NDArray[np.uint8]) -> Answer:
        return answers[int(frame[0, 0, 0]) // 10]

    return read


def _die(value: int, box: Box) -> dict[str, object]:
    return {"value": value, "box": list(box)}


def test_counts_recall_precision_exact_and_confusion(tmp_path: Path) -> None:
    folder = _make_folder(
        tmp_path,
        [
            {"image": "images/a.png", "dice": [_die(3, A), _die(5, B)]},
            {"image": "images/b.png", "dice": [_die(1, A), _die(1, B), _die(6, C)]},
            {"image": "images/c.png", "dice": [], "known_issue": "dice not labelled"},
            {"image": "images/d.png", "dice": [_die(2, A)]},
        ],
    )
    answers: list[Answer] = [
        [(3, A), (5, B)],  # exact
        [(1, A), (4, B), (6, C), (2, (60, 60, 75, 75))],  # one wrong value, one extra die
        [(6, A)],  # skipped photo: must never be counted
        [(None, A)],  # found but not read
    ]
    report = evaluate_folder(folder, _reader(answers))  # type: ignore[arg-type]
    assert (report.images, report.skipped) == (3, 1)
    assert (report.labelled, report.reported, report.unread) == (6, 7, 1)
    assert report.matched == 4
    assert report.recall == pytest.approx(4 / 6)
    assert report.precision == pytest.approx(4 / 6)
    assert report.exact == 1
    assert report.exact_rate == pytest.approx(1 / 3)
    confusion = np.array(report.confusion)
    assert confusion[2, 2] == 1  # the 3 right
    assert confusion[4, 4] == 1  # the 5 right
    assert confusion[0, 0] == 1  # one 1 right...
    assert confusion[0, 3] == 1  # ...and one 1 read as 4
    assert confusion[5, 5] == 1
    assert confusion[6, 1] == 1  # the extra 2
    assert confusion[1, 6] == 1  # the unread 2 counts as missed
    assert confusion.sum() == 7


def test_suspect_value_is_taken_as_truth(tmp_path: Path) -> None:
    folder = _make_folder(
        tmp_path,
        [{"image": "images/a.png", "dice": [{"value": 2, "suspect_value": 3, "box": list(A)}]}],
    )
    report = evaluate_folder(folder, _reader([[(3, A)]]))  # type: ignore[arg-type]
    assert report.matched == 1
    assert report.confusion[2][2] == 1


@pytest.mark.parametrize(
    ("reported_there", "recall", "precision", "exact"),
    [
        (5, 1.0, 1.0, True),  # another value than the unsure guess: not counted wrong
        (3, 1.0, 1.0, True),  # the guess itself: not counted right
        (None, 1.0, 1.0, True),  # asked about there: not counted unread
    ],
)
def test_a_tables_unsure_reads_nobody_corrected_are_not_scored(
    tmp_path: Path,
    reported_there: int | None,
    recall: float,
    precision: float,
    exact: bool,
) -> None:
    guess = {**_die(3, A), "confidence": 0.62}  # read unsurely, nobody corrected it
    sure = {**_die(5, B), "confidence": 0.97}
    answered = {**_die(2, C), "corrected": True}
    folder = _make_folder(tmp_path, [{"image": "images/a.png", "dice": [guess, sure, answered]}])
    read = _reader([[(reported_there, A), (5, B), (2, C)]])
    report = evaluate_folder(folder, read)  # type: ignore[arg-type]
    assert (report.labelled, report.unscored) == (2, 1)
    assert (report.recall, report.precision, report.exact == 1) == (recall, precision, exact)
    assert "1 die not scored (read unsurely, nobody corrected them)" in format_report(report)
    # The sure read and the answer are scored as ever: reading them wrong costs.
    wrong = evaluate_folder(folder, _reader([[(3, A), (6, B), (None, C)]]))  # type: ignore[arg-type]
    assert (wrong.matched, wrong.unread, reading_cost(wrong)) == (0, 1, 3 + 1)


def test_crop_folder_records_are_one_die_each(tmp_path: Path) -> None:
    folder = _make_folder(tmp_path, [{"image": "images/a.png", "value": 4}])
    report = evaluate_folder(folder, _reader([[(4, (5, 5, 75, 75))]]))  # type: ignore[arg-type]
    assert (report.labelled, report.matched, report.exact) == (1, 1, 1)


def test_crop_records_go_to_the_crop_reader(tmp_path: Path) -> None:
    """With a crop reader, crop records (no boxes) are read by it and photos by the other."""
    folder = _make_folder(
        tmp_path,
        [{"image": "images/a.png", "value": 4}, {"image": "images/b.png", "dice": [_die(2, A)]}],
    )
    photo_reader = _reader([[(6, A)], [(2, A)]])
    crop_reader = _reader([[(4, (0, 0, 80, 80))], [(5, A)]])
    report = evaluate_folder(folder, photo_reader, crop_reader)  # type: ignore[arg-type]
    assert (report.labelled, report.matched, report.exact) == (2, 2, 2)


def test_six_dice_rolls_are_counted_apart(tmp_path: Path) -> None:
    boxes = [(x, 0, x + 10, 10) for x in range(0, 60, 12)] + [(0, 40, 10, 50)]
    dice = [_die(v, b) for v, b in zip([1, 2, 3, 4, 5, 6], boxes, strict=True)]
    folder = _make_folder(tmp_path, [{"image": "images/a.png", "dice": dice}])
    wrong: Answer = [(v, b) for v, b in zip([1, 2, 3, 4, 5, 5], boxes, strict=True)]
    report = evaluate_folder(folder, _reader([wrong]))  # type: ignore[arg-type]
    assert (report.six_dice_rolls, report.six_dice_exact) == (1, 0)
    assert "six-dice exact      0.00 %  (0/1)" in format_report(report)


def test_confidence_bands_count_dice_read_and_right(tmp_path: Path) -> None:
    """Each die read with a value counts in its confidence's band, right only if its box
    matches a labelled die of that value; unread dice and readers without confidence add
    nothing, and the report prints only the bands that hold dice."""
    folder = _make_folder(
        tmp_path,
        [
            {"image": "images/a.png", "dice": [_die(3, A), _die(5, B), _die(1, C)]},
            {"image": "images/b.png", "dice": [_die(2, A)]},
        ],
    )
    answers = [
        [(3, A, 0.995), (6, B, 0.995), (None, C, 0.4), (4, (60, 60, 75, 75), 0.6)],
        [(2, A, 0.95)],
    ]
    report = evaluate_folder(folder, _reader(answers))  # type: ignore[arg-type]
    assert report.bands == [[1, 0], [0, 0], [1, 1], [2, 1]]  # 0.5, 0.7, 0.9, 0.99 and up
    text = format_report(report)
    assert "0.99-1      50.00 %  (1/2)" in text
    assert "0.90-0.99  100.00 %  (1/1)" in text
    assert "0.50-0.70    0.00 %  (0/1)" in text
    assert "0.70-0.90" not in text
    plain = evaluate_folder(folder, _reader([[(3, A)], [(2, A)]]))  # type: ignore[arg-type]
    assert plain.bands == [[0, 0]] * 4
    assert "confidence of the dice read" not in format_report(plain)


def test_top_face_boxes_match_whole_die_boxes_by_centre() -> None:
    # matteop65 labels a pip cluster inside the die: IoU is small but the centre is inside.
    assert match_dice([(18, 18, 22, 22)], [(5, 5, 35, 35)]) == [(0, 0)]
    assert match_dice([(18, 18, 22, 22)], [(40, 40, 70, 70)]) == []


def test_format_report_lists_rates_matrix_and_misreads(tmp_path: Path) -> None:
    folder = _make_folder(tmp_path, [{"image": "images/a.png", "dice": [_die(3, A)]}])
    report = evaluate_folder(folder, _reader([[(4, A)]]))  # type: ignore[arg-type]
    text = format_report(report)
    assert "per-die recall      0.00 %  (0/1)" in text
    assert "exact rolls         0.00 %  (0/1)" in text
    assert "images/a.png: labelled 3 reported 4" in text
    header = text.splitlines()[5].split()
    assert header == list(COLUMNS)
    row_three = next(line.split() for line in text.splitlines() if line.split()[:1] == ["3"])
    assert row_three == ["3", "0", "0", "0", "1", "0", "0", "0"]
    assert len(ROWS) == 7


def test_confusion_png_is_written(tmp_path: Path) -> None:
    folder = _make_folder(tmp_path, [{"image": "images/a.png", "dice": [_die(3, A)]}])
    report = evaluate_folder(folder, _reader([[(3, A)]]))  # type: ignore[arg-type]
    out = tmp_path / "out" / "confusion.png"
    write_confusion_png(report, out)
    image = cv2.imread(str(out))
    assert image is not None
    assert min(image.shape[:2]) > 400
    cell, margin = 56, 90
    # The right reading of the 3 fills its row, so its cell is pure green; an empty row stays white.
    three = image[margin + 2 * cell + 4, margin + 2 * cell + 4]
    assert three.tolist() == [0, 255, 0]
    empty = image[margin + 4, margin + 4]
    assert empty.tolist() == [255, 255, 255]


def test_missing_labels_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no labels.jsonl in .*: give a folder in the"):
        evaluate_folder(tmp_path, _reader([]))  # type: ignore[arg-type]


def test_a_bad_labels_line_is_named(tmp_path: Path) -> None:
    # The cases are vision.labels' (tests/vision/test_labels.py); eval says them as they are.
    good = json.dumps({"image": "images/a.png", "dice": []})
    (tmp_path / "labels.jsonl").write_text(f"{good}\nnot json\n")
    with pytest.raises(ValueError, match=r"labels\.jsonl line 2: ") as err:
        evaluate_folder(tmp_path, _reader([]))  # type: ignore[arg-type]
    assert str(err.value).startswith(f"{tmp_path / 'labels.jsonl'} line 2: not JSON")


def test_labels_saved_with_a_byte_order_mark_are_read(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    cv2.imwrite(str(tmp_path / "images" / "a.png"), np.zeros((8, 8, 3), np.uint8))
    line = json.dumps({"image": "images/a.png", "dice": []})
    (tmp_path / "labels.jsonl").write_bytes(b"\xef\xbb\xbf" + line.encode() + b"\r\n")
    report = evaluate_folder(tmp_path, _reader([[]]))  # type: ignore[arg-type]
    assert (report.images, report.exact) == (1, 1)
    with split_view(tmp_path, "train") as train, split_view(tmp_path, "val") as val:
        views = [(v / "labels.jsonl").read_text().count("images/a.png") for v in (train, val)]
    assert sorted(views) == [0, 1]  # the photo is in one split, whichever the rule gives


def test_a_labelled_photo_that_is_missing_is_named(tmp_path: Path) -> None:
    (tmp_path / "labels.jsonl").write_text('{"image": "images/gone.jpg", "dice": []}\n')
    with pytest.raises(ValueError, match=r"cannot read image '.*gone\.jpg': no such file$"):
        evaluate_folder(tmp_path, _reader([]))  # type: ignore[arg-type]


def test_missing_folder_is_named_as_missing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no folder .*nope'"):
        evaluate_folder(tmp_path / "nope", _reader([]))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("labelled", "reported", "cost"),
    [
        ((1, 2), (1, 2), 0),  # exact
        ((1, 2), (1, 3), WRONG_COST),  # a misread die costs as a wrong value, not twice
        ((1, 2), (1, None), 1),  # found but not read: the players are asked
        ((1, 2), (1,), 1),  # missed
        ((1,), (1, 5), WRONG_COST),  # a die that is not there
        ((1, 2, 3), (1, 4), WRONG_COST + 1),  # one misread, one missed
        ((), (), 0),  # an empty tray read empty
    ],
)
def test_reading_cost_weighs_a_wrong_value_against_a_die_not_read(
    labelled: tuple[int, ...], reported: tuple[int | None, ...], cost: int
) -> None:
    report = EvalReport(Path("t"), results=[ImageResult("a.png", labelled, reported)])
    assert reading_cost(report) == cost
    # Photos add up, within a folder and across folders.
    assert reading_cost([report, report]) == 2 * cost


@pytest.mark.parametrize(
    ("saved_questions", "better"),
    [(0, False), (MIN_GAIN - 1, False), (MIN_GAIN, True), (MIN_GAIN + 3, True)],
)
def test_a_candidate_is_better_only_when_it_saves_more_than_the_noise(
    saved_questions: int, better: bool
) -> None:
    # Ten photos, each with a die the baseline asks about; the candidate reads some of them.
    before = [ImageResult(f"{i}.png", (1, 2), (1, None)) for i in range(10)]
    after = [
        ImageResult(f"{i}.png", (1, 2), (1, 2) if i < saved_questions else (1, None))
        for i in range(10)
    ]
    comparison = Comparison(
        Path("old.onnx"),
        Path("new.onnx"),
        [EvalReport(Path("t"), images=10, results=before)],
        [EvalReport(Path("t"), images=10, results=after)],
    )
    assert comparison.better == better


@pytest.mark.parametrize(
    ("wins", "losses", "p"),
    [
        (0, 0, 1.0),  # nothing changed: nothing to tell
        (3, 3, 1.0),  # an even split
        (5, 0, 2 / 32),  # five of five: 1 in 16 by chance
        (0, 5, 2 / 32),  # either way
        (7, 14, 2 * sum(math.comb(21, k) for k in range(8)) / 2**21),  # about 0.19
        (10, 0, 2 / 1024),
    ],
)
def test_sign_test_is_the_exact_two_sided_binomial_tail(wins: int, losses: int, p: float) -> None:
    assert sign_test(wins, losses) == pytest.approx(p)


def test_photos_cheaper_pairs_the_same_photos_read_twice() -> None:
    """Two photos cost less after, one more, one the same; a photo only one side read is not
    counted, and the line printed says how uneven the split is."""
    before = [
        ImageResult("a.png", (1, 2), (1, None)),  # asked about: 1
        ImageResult("b.png", (3,), (4,)),  # wrong: 3
        ImageResult("c.png", (5,), (5,)),  # right: 0
        ImageResult("d.png", (6,), (6,)),
        ImageResult("gone.png", (6,), ()),
    ]
    after = [
        ImageResult("a.png", (1, 2), (1, 2)),  # 0: cheaper after
        ImageResult("b.png", (3,), (None,)),  # 1: cheaper after
        ImageResult("c.png", (5,), (2,)),  # 3: cheaper before
        ImageResult("d.png", (6,), (6,)),  # the same
    ]
    old = [EvalReport(Path("t"), images=5, results=before)]
    new = [EvalReport(Path("t"), images=4, results=after)]
    assert photos_cheaper(old, new) == (2, 1)
    assert photos_cheaper(new, old) == (1, 2)
    assert [photo_cost(r) for r in before] == [1, WRONG_COST, 0, 0, 1]
    line = Comparison(Path("old.onnx"), Path("new.onnx"), old, new).lines()[-1]
    assert line.endswith(
        "2 photos cheaper after, 1 cheaper before (sign test p = 1.00: how often chance alone"
        " splits them that unevenly)"
    )


def test_reports_of_parts_merge_into_the_report_of_the_whole() -> None:
    """The committed photos read in two parts (image_view) and merged give the counts, the
    confusion, the bands and the cost of reading them at once."""
    from vision.classify import OnnxClassifier
    from vision.evaluate import box_reader, image_view, merge_reports
    from vision.reader import DiceReader

    data = Path(__file__).resolve().parents[1] / "data" / "dice"
    read = box_reader(DiceReader(OnnxClassifier()))
    whole = evaluate_folder(data, read)
    first = {
        json.loads(line)["image"] for line in (data / "labels.jsonl").read_text().splitlines()[:2]
    }
    parts = []
    for wanted in (True, False):

        def keep(record: dict[str, object], wanted: bool = wanted) -> bool:
            return (record["image"] in first) == wanted

        with image_view(data, keep) as view:
            parts.append(evaluate_folder(view, read))
    assert [p.images for p in parts] == [2, 3]
    merged = merge_reports(parts, data)
    for name in ("images", "labelled", "reported", "unread", "matched", "exact"):
        assert getattr(merged, name) == getattr(whole, name), name
    assert merged.confusion == whole.confusion
    assert merged.bands == whole.bands
    assert reading_cost(merged) == reading_cost(whole)
    assert sorted(r.image for r in merged.results) == sorted(r.image for r in whole.results)
