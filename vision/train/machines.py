"""Whether another machine reads as this one: ``python -m vision.train.machines OUT
[--against RECORD] [--data DIR] [--split S] [FOLDER ...]``.

The figures of the model card were measured on a PC; the reader runs on a Pi. Float models give
the same numbers on both to a few millionths, but an int8 model quantizes what its float layers
give, and where a value falls half way between two steps, the last bit that ARM and x86 round
otherwise becomes a whole step (models/MODEL_CARD.md, "On a Pi's processor": the EfficientNet
member's input resize).
This command writes a record (JSON) of what this machine reads: its processor and library
versions, the models' sha256, each photo's reading (the held-out photos of the shared folders
and the committed test photos), and each face-model member's log-probabilities on the
committed test crops. With ``--against`` it compares the record with another machine's, made
by the same command there (on a Pi, or on the Pi's processor under qemu:
``scripts/emulated-pi.sh``): the photos read otherwise, die by die, and how far apart the
readings that agree and the members' outputs are.
"""

from __future__ import annotations

import argparse
import json
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import onnxruntime

from vision import onnx_wire as wire
from vision.classify import (
    DEFAULT_LOCATOR_MODEL,
    DEFAULT_MODEL,
    members_of,
    processor,
    session_options,
)
from vision.die_check import DEFAULT_DIE_CHECK
from vision.evaluate import split_view
from vision.labels import read_labels
from vision.preprocess import crops_for_model
from vision.reader import Die
from vision.source import read_image
from vision.train.export import sha256_of
from vision.train.readers import (
    add_folder_options,
    folder_errors,
    folders_from_args,
    reader_from,
)

__all__ = ["compare", "main", "record"]

TESTS = Path(__file__).resolve().parents[2] / "tests" / "data" / "dice"
"""The committed test photos, and the boxes of their crops (``face_model_outputs.json``)."""

RECORD_KEYS = frozenset({"processor", "versions", "models", "readings", "members"})
"""What every record holds."""


def _photos(folders: Sequence[Path], split: str) -> list[tuple[str, Path]]:
    """Each photo to read as (name in the record, path): the folders' ``split`` photos, and
    the committed test photos."""
    chosen: list[tuple[str, Path]] = []
    for folder, part in [*((f, split) for f in folders), (TESTS, "all")]:
        with split_view(folder, part) as view:
            for entry in read_labels(view):
                if "dice" in entry:  # whole photos; a crop folder's single dice are no frames
                    name = str(entry["image"])
                    chosen.append((f"{folder.name}/{name}", (view / name).resolve()))
    return chosen


def _member_logp(model: Path) -> list[list[list[float]]]:
    """Each member's (N, 7) log-probabilities on the committed test crops (the whole model's
    for a model of one member)."""
    outputs = json.loads((TESTS / "face_model_outputs.json").read_text(encoding="utf-8"))
    crops = np.concatenate(
        [
            crops_for_model(read_image(TESTS / entry["image"]), [tuple(b) for b in entry["boxes"]])
            for entry in outputs["crops"]
        ]
    )
    whole = wire.parse_model(model.read_bytes())
    result = []
    for member in members_of(whole) or [whole]:
        session = onnxruntime.InferenceSession(
            member.serialize(), sess_options=session_options(1), providers=["CPUExecutionProvider"]
        )
        (out,) = session.run(None, {session.get_inputs()[0].name: crops})
        # Members give log-probabilities, a model of one member logits: the log-softmax of
        # either is the log-probabilities.
        shifted = np.asarray(out, np.float64)
        shifted -= shifted.max(axis=1, keepdims=True)
        result.append((shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))).tolist())
    return result


def record(folders: Sequence[Path], split: str) -> dict[str, Any]:
    """What this machine reads with the shipped models (the module's docstring)."""
    reader = reader_from(DEFAULT_MODEL)
    readings = {}
    for name, path in _photos(folders, split):
        reading = reader.read(read_image(path))
        readings[name] = {
            "status": reading.status,
            "dice": [die.to_json() for die in reading.dice],
            "set_aside": [die.to_json() for die in reading.set_aside],
        }
    return {
        "processor": processor(),
        "versions": {
            "onnxruntime": onnxruntime.__version__,
            "opencv": cv2.__version__,
            "numpy": np.__version__,
            "python": platform.python_version(),
        },
        "models": {
            "face": sha256_of(DEFAULT_MODEL),
            "locator": sha256_of(DEFAULT_LOCATOR_MODEL),
            "die check": sha256_of(DEFAULT_DIE_CHECK),
        },
        "split": split,
        "readings": readings,
        "members": _member_logp(DEFAULT_MODEL),
    }


def _die(entry: dict[str, Any]) -> Die:
    """A die of a record, as read."""
    return Die(
        entry["value"],
        float(entry["confidence"]),
        entry["status"],
        tuple(entry["box"]),
        blurred=bool(entry.get("blurred")),
        hidden=bool(entry.get("hidden")),
        cut=bool(entry.get("cut")),
    )


def _words(reading: dict[str, Any]) -> str:
    """A reading in words, the dice sorted (the order of dice read alike may follow a box
    moved by a tenth of a pixel)."""
    words = sorted(_die(d).text for d in reading["dice"])
    aside = sorted(_die(d).text for d in reading["set_aside"])
    text = f"{reading['status']}: {' '.join(words) or 'no dice'}"
    return text + (f"; set aside: {' '.join(aside)}" if aside else "")


def _apart(one: dict[str, Any], other: dict[str, Any]) -> tuple[float, float]:
    """How far apart two readings of the same words are: the largest confidence and box-corner
    differences of their dice, paired in the order of their words and boxes."""
    confidence = box = 0.0
    for part in ("dice", "set_aside"):
        ours, theirs = (
            sorted((_die(d).text, d["box"], d["confidence"]) for d in reading[part])
            for reading in (one, other)
        )
        for (_, box_a, conf_a), (_, box_b, conf_b) in zip(ours, theirs, strict=True):
            confidence = max(confidence, abs(conf_a - conf_b))
            box = max(box, max(abs(a - b) for a, b in zip(box_a, box_b, strict=True)))
    return confidence, box


def compare(this: dict[str, Any], other: dict[str, Any]) -> list[str]:
    """Lines that say how ``this`` record's readings and outputs differ from ``other``'s;
    ``ValueError`` when they are not of the same models and photos."""
    if this["models"] != other["models"]:
        raise ValueError(
            "the records are of different models; make both with the same models/ folder"
            f" (this: {this['models']}, the other: {other['models']})"
        )
    if set(this["readings"]) != set(other["readings"]):
        raise ValueError(
            "the records read different photos; make both with the same --data, --split and folders"
        )
    lines = [
        f"this record: {this['processor']}, {_versions(this)}",
        f"the other:   {other['processor']}, {_versions(other)}",
    ]
    otherwise = []
    confidence = box = 0.0
    for name in sorted(this["readings"]):
        ours, theirs = this["readings"][name], other["readings"][name]
        if _words(ours) != _words(theirs):
            otherwise.append(f"  {name}: {_words(ours)} | {_words(theirs)}")
            continue
        apart = _apart(ours, theirs)
        confidence, box = max(confidence, apart[0]), max(box, apart[1])
    dice = sum(len(r["dice"]) + len(r["set_aside"]) for r in this["readings"].values())
    photos = "photo" if len(otherwise) == 1 else "photos"
    lines.append(
        f"{len(this['readings'])} photos, {dice} dice: {len(otherwise)} {photos} read otherwise"
        + (" (this | the other):" if otherwise else "")
    )
    lines.extend(otherwise)
    lines.append(
        f"the photos read alike: confidences within {confidence:.4f}, boxes within {box:.1f} px"
    )
    for number, (ours_logp, theirs_logp) in enumerate(
        zip(this["members"], other["members"], strict=True), start=1
    ):
        a, b = np.array(ours_logp), np.array(theirs_logp)
        same = "the same" if (a.argmax(1) == b.argmax(1)).all() else "NOT the same"
        lines.append(
            f"face model member {number} on the {len(a)} committed test crops: log-probabilities"
            f" within {float(np.abs(a - b).max()):.2g}, {same} class"
        )
    return lines


def _versions(entry: dict[str, Any]) -> str:
    return ", ".join(f"{name} {version}" for name, version in entry["versions"].items())


def main(argv: Sequence[str] | None = None) -> int:
    """Write this machine's record; with ``--against``, print how it differs from another."""
    parser = argparse.ArgumentParser(prog="python -m vision.train.machines", description=__doc__)
    parser.add_argument("out", type=Path, help="where this machine's record goes (JSON)")
    add_folder_options(parser, split="val", why="the held-out ones the card reports")
    parser.add_argument("--against", type=Path, help="another machine's record to compare with")
    args = parser.parse_args(argv)
    other = None
    if args.against is not None:
        try:
            other = json.loads(args.against.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            parser.error(
                f"cannot read the record {str(args.against)!r} ({error}): give a file this"
                " command wrote on the other machine"
            )
        if not isinstance(other, dict) or not set(other) >= RECORD_KEYS:
            parser.error(
                f"{str(args.against)!r} is no record of this command (it lacks"
                f" {sorted(RECORD_KEYS - set(other if isinstance(other, dict) else ()))}):"
                " make it with python -m vision.train.machines on the other machine"
            )
    folders = folders_from_args(parser, args)
    with folder_errors(parser):
        ours = record(folders, args.split)
    args.out.write_text(json.dumps(ours), encoding="utf-8")
    print(f"wrote {args.out}: {len(ours['readings'])} photos read on {ours['processor']}")  # noqa: T201
    if other is not None:
        try:
            lines = compare(ours, other)
        except (KeyError, TypeError) as error:
            parser.error(
                f"{str(args.against)!r} is no record of this command ({error!r} missing or"
                " wrong): make it with python -m vision.train.machines on the other machine"
            )
        except ValueError as error:
            parser.error(str(error))
        for line in lines:
            print(line)  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
