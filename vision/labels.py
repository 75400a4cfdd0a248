"""Read a folder's ``labels.jsonl``: the one reader of the shared data format.

The format is ../shared/data/dice/README.md's: one JSON object per photo,
``{"image": "images/x.jpg", "dice": [{"value": 1-6, "box": [x0, y0, x1, y1]}, ...]}``, or for a
folder of crops ``{"image": ..., "value": v}``; other fields (``split``, ``known_issue``,
``suspect_value``, a table export's ``confidence`` ...) are kept as they are. People edit these
files by hand (a corrected value, a photo left out), so a file is read past a byte-order mark
and CRLF line ends, and a line that is not a record is named by its number with what a record
needs: training, ``pipcam eval``, ``pipcam tune`` and the simulations all read through here.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vision.errors import LabelsError

__all__ = ["LABELS", "LabelLine", "read_label_lines", "read_labels", "record_problem"]

LABELS = "labels.jsonl"
"""The labels' file name inside a folder of the shared data format."""


@dataclass(frozen=True)
class LabelLine:
    """One record of a labels file: its line number, its text as written, and the object."""

    number: int
    text: str
    record: dict[str, Any]


def _value_problem(value: object) -> str | None:
    """Why ``value`` is not a face value, or None when it is one (1..6; bools are not)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
        return f"{json.dumps(value)} is not a face value (a whole number 1 to 6)"
    return None


def _box_problem(box: object) -> str | None:
    """Why ``box`` is not a box in pixels, or None when it is one."""
    numbers = (
        isinstance(box, list)
        and len(box) == 4
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in box)
    )
    if not numbers:
        return f"box {json.dumps(box)} is not four numbers [x0, y0, x1, y1]"
    assert isinstance(box, list)
    if not all(math.isfinite(v) for v in box):
        return f"box {json.dumps(box)} has a number that is not finite"
    x0, y0, x1, y1 = box
    if x1 <= x0 or y1 <= y0:
        return f"box {json.dumps(box)} is empty: x1 must be above x0 and y1 above y0"
    return None


def record_problem(record: object) -> str | None:
    """Why ``record`` is not a labels record, or None when it is one.

    >>> record_problem({"image": "images/a.jpg", "dice": [{"value": 7, "box": [0, 0, 9, 9]}]})
    'die 1: 7 is not a face value (a whole number 1 to 6)'
    >>> record_problem({"image": "crops/a.jpg", "value": 3}) is None
    True
    """
    if not isinstance(record, dict):
        return "a record is a JSON object, one per line"
    if not isinstance(record.get("image"), str) or not record["image"]:
        return 'a record names its photo: "image": "images/NAME.jpg" (relative to the folder)'
    if "dice" not in record:
        if "value" not in record:
            return 'a record has "dice": [{"value": 1-6, "box": [x0, y0, x1, y1]}, ...]'
        return _value_problem(record["value"])
    dice = record["dice"]
    if not isinstance(dice, list):
        return '"dice" is a list of {"value": 1-6, "box": [x0, y0, x1, y1]}'
    for number, die in enumerate(dice, start=1):
        if not isinstance(die, dict) or "value" not in die or "box" not in die:
            return f'die {number}: a die is {{"value": 1-6, "box": [x0, y0, x1, y1]}}'
        problem = _value_problem(die["value"]) or _box_problem(die["box"])
        if problem is None and "suspect_value" in die:
            problem = _value_problem(die["suspect_value"])
            if problem is not None:
                problem = f"suspect_value {problem}"
        if problem is not None:
            return f"die {number}: {problem}"
    return None


def read_label_lines(folder: Path) -> list[LabelLine]:
    """The records of ``folder``'s labels file, each checked, with its line as written.

    Raises ``FileNotFoundError`` (an ``OSError``) when the file is missing and ``LabelsError``
    naming the file and line of the first record that is not one.
    """
    path = folder / LABELS
    lines: list[LabelLine] = []
    # utf-8-sig: read past a byte-order mark; splitlines: CRLF as well as LF.
    for number, text in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LabelsError(
                f"{path} line {number}: not JSON ({exc.msg} at column {exc.colno});"
                " each line is one photo's record"
            ) from exc
        problem = record_problem(record)
        if problem is not None:
            raise LabelsError(f"{path} line {number}: {problem}; mend or delete that line")
        lines.append(LabelLine(number, text, record))
    return lines


def read_labels(folder: Path) -> list[dict[str, Any]]:
    """The records of ``folder``'s labels file, checked (see :func:`read_label_lines`)."""
    return [line.record for line in read_label_lines(folder)]
