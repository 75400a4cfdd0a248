"""The one reader of ``labels.jsonl`` (vision/labels.py): good files read, bad lines named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vision.errors import LabelsError, VisionError
from vision.labels import LABELS, read_label_lines, read_labels
from vision.train.data import DEFAULT_DATA as SHARED_DICE

GOOD = {"image": "images/a.jpg", "dice": [{"value": 3, "box": [10, 10, 40, 40]}]}


def _write(folder: Path, *lines: str) -> None:
    (folder / LABELS).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("not json", "not JSON (Expecting value at column 1); each line is one photo's record"),
        ('["images/a.jpg"]', "a record is a JSON object, one per line"),
        ('{"dice": []}', 'a record names its photo: "image": "images/NAME.jpg"'),
        ('{"image": "", "dice": []}', 'a record names its photo: "image"'),
        ('{"image": 7, "dice": []}', 'a record names its photo: "image"'),
        ('{"image": "a.jpg"}', 'a record has "dice": [{"value": 1-6'),
        ('{"image": "a.jpg", "dice": {}}', '"dice" is a list of {"value": 1-6'),
        ('{"image": "a.jpg", "dice": [3]}', 'die 1: a die is {"value": 1-6, "box"'),
        ('{"image": "a.jpg", "dice": [{"value": 3}]}', 'die 1: a die is {"value": 1-6, "box"'),
        (
            '{"image": "a.jpg", "dice": [{"value": 2, "box": [0,0,5,5]},'
            ' {"value": 0, "box": [0,0,5,5]}]}',
            "die 2: 0 is not a face value (a whole number 1 to 6)",
        ),
        ('{"image": "a.jpg", "dice": [{"value": "3", "box": [0,0,5,5]}]}', 'die 1: "3" is not'),
        ('{"image": "a.jpg", "dice": [{"value": 3.0, "box": [0,0,5,5]}]}', "die 1: 3.0 is not"),
        ('{"image": "a.jpg", "dice": [{"value": true, "box": [0,0,5,5]}]}', "die 1: true is not"),
        ('{"image": "a.jpg", "dice": [{"value": 3, "box": [0,0,5]}]}', "is not four numbers"),
        ('{"image": "a.jpg", "dice": [{"value": 3, "box": [0,0,"5",5]}]}', "is not four numbers"),
        ('{"image": "a.jpg", "dice": [{"value": 3, "box": [0,0,NaN,5]}]}', "not finite"),
        ('{"image": "a.jpg", "dice": [{"value": 3, "box": [9,0,5,5]}]}', "is empty: x1 must be"),
        (
            '{"image": "a.jpg", "dice": [{"value": 3, "box": [0,0,5,5], "suspect_value": 9}]}',
            "die 1: suspect_value 9 is not a face value",
        ),
        ('{"image": "crop.jpg", "value": 7}', "7 is not a face value"),
    ],
)
def test_a_bad_line_is_named_with_its_number_and_what_a_record_needs(
    tmp_path: Path, line: str, said: str
) -> None:
    _write(tmp_path, json.dumps(GOOD), "", line)
    with pytest.raises(LabelsError) as err:
        read_labels(tmp_path)
    message = str(err.value)
    assert message.startswith(f"{tmp_path / LABELS} line 3: ")
    assert said in message
    # Callers that catch the builtin type (or the vision tree) still catch it.
    assert isinstance(err.value, ValueError)
    assert isinstance(err.value, VisionError)


def test_records_read_past_a_byte_order_mark_crlf_and_blank_lines(tmp_path: Path) -> None:
    crop = {"image": "crops/b.jpg", "value": 6, "split": "val"}
    text = f"{json.dumps(GOOD)}\r\n\r\n{json.dumps(crop)}\r\n"
    (tmp_path / LABELS).write_bytes(b"\xef\xbb\xbf" + text.encode())
    lines = read_label_lines(tmp_path)
    assert [(line.number, line.record) for line in lines] == [(1, GOOD), (3, crop)]
    # The text is the line as written (no BOM, no CR), for views that copy lines.
    assert [json.loads(line.text) for line in lines] == [GOOD, crop]
    assert not any("\r" in line.text or "\ufeff" in line.text for line in lines)


def test_other_fields_are_kept_as_written(tmp_path: Path) -> None:
    record = {
        "image": "images/a.jpg",
        "split": "train",
        "known_issue": "blurred",
        "game": 4,
        "dice": [{"value": 2, "box": [1.5, 2, 30, 31.25], "confidence": 0.7, "die": 1}],
    }
    _write(tmp_path, json.dumps(record))
    assert read_labels(tmp_path) == [record]


def test_a_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_labels(tmp_path)


@pytest.mark.skipif(not SHARED_DICE.is_dir(), reason="the shared photos are not beside this clone")
def test_every_shared_source_reads() -> None:
    folders = sorted(p for p in SHARED_DICE.iterdir() if (p / LABELS).is_file())
    assert folders
    for folder in folders:
        assert read_labels(folder), folder
