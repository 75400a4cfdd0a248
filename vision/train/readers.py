"""The whole reader the probes read with, and the photo folders they read, as their command
lines name them.

``python -m vision.train.hidden`` and ``python -m vision.train.trays`` measure the reader on
synthetic frames; comparing a locator or a die check not yet shipped means reading with it, not
swapping files under ``models/``.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path

from vision.classify import DEFAULT_MODEL, OnnxClassifier, OnnxLocator
from vision.die_check import die_checker_for
from vision.errors import ModelLoadError, VisionError
from vision.locate import LearnedLocator
from vision.reader import DiceReader
from vision.train.data import DEFAULT_DATA

__all__ = [
    "PHOTO_SOURCES",
    "add_folder_options",
    "folder_errors",
    "add_reader_options",
    "folders_from_args",
    "reader_from",
    "readers_from_args",
]

PHOTO_SOURCES = (
    "Epanemu_GameDiceRecognition",
    "matteop65_Dice_Detection_Recognition",
    "nell-byler_dice_detection",
    "skovy_tensorflow-dice-model",
)
"""The shared folders of whole photos (the crop folder's are single dice, no frames)."""


def add_folder_options(parser: argparse.ArgumentParser, *, split: str, why: str) -> None:
    """Add ``FOLDER ...`` (folders of labelled photos), ``--data DIR`` (where the shared ones
    are, read when no folder is named) and ``--split`` (which of their photos, ``split`` by
    default, for the reason ``why``)."""
    parser.add_argument(
        "folders",
        nargs="*",
        type=Path,
        help=f"folders of labelled photos (default: the shared ones under --data: {PHOTO_SOURCES})",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared dice data folder")
    parser.add_argument(
        "--split",
        choices=("all", "val", "train"),
        default=split,
        help="only the photos training never saw (val) or those it saw (train), or all;"
        f" default: {split}, {why}",
    )


def folders_from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[Path]:
    """The folders :func:`add_folder_options` read: those named, or the shared ones; a usage
    error for one that is not there."""
    folders: list[Path] = args.folders or [args.data / name for name in PHOTO_SOURCES]
    for folder in folders:
        if not folder.is_dir():
            parser.error(f"no folder {str(folder)!r}: give folders of labelled photos, or --data")
    return folders


def add_reader_options(parser: argparse.ArgumentParser, *, models: bool = False) -> None:
    """Add ``--locator-model PATH`` and ``--die-check PATH``; with ``models``, a repeatable
    ``--model PATH`` too (else the face model is the caller's)."""
    if models:
        parser.add_argument(
            "--model",
            type=Path,
            action="append",
            help="face model (repeat to compare; default: ours)",
        )
    parser.add_argument(
        "--locator-model", type=Path, help="learned locator model (ONNX; default: ours)"
    )
    parser.add_argument(
        "--die-check",
        type=Path,
        help="die check fitted to the face model (JSON; default: ours when fitted to it)",
    )


@contextlib.contextmanager
def folder_errors(parser: argparse.ArgumentParser) -> Iterator[None]:
    """Say as a usage error what cannot be read in the folders: a file missing (no
    labels.jsonl: not the shared format) or a photo that does not decode."""
    try:
        yield
    except FileNotFoundError as error:
        parser.error(
            f"cannot read {error.filename}: give folders in the shared data format"
            " (images/ and labels.jsonl)"
        )
    except VisionError as error:
        parser.error(str(error))


def reader_from(
    model: Path,
    *,
    locator_model: Path | None = None,
    die_check: Path | None = None,
    threads: int = 1,
) -> DiceReader:
    """The reader of ``model`` with the locator and die check named (None: the reader's own),
    each network on ``threads`` threads.

    Raises :class:`ModelLoadError` when a file cannot be loaded, or when ``die_check`` was not
    fitted to ``model`` (the reader would silently go without it).
    """
    locator = (
        None
        if locator_model is None
        else LearnedLocator(OnnxLocator(locator_model, threads=threads))
    )
    classifier = OnnxClassifier(model, threads=threads)
    if die_check is None:
        return DiceReader(classifier, locator=locator)
    checker = die_checker_for(model, threads=threads, check_path=die_check)
    if checker is None:
        raise ModelLoadError(
            f"die check {str(die_check)!r} is missing or was not fitted to {str(model)!r};"
            f" fit one with: python -m vision.train.die_check --model {model} --out {die_check}"
        )
    return DiceReader(classifier, locator=locator, die_check=checker)


def readers_from_args(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> list[tuple[Path, DiceReader]]:
    """A reader for each ``--model`` given (ours when none), with the locator and die check
    named; a file that cannot be loaded ends the command with the parser's error."""
    try:
        return [
            (path, reader_from(path, locator_model=args.locator_model, die_check=args.die_check))
            for path in args.model or [DEFAULT_MODEL]
        ]
    except ModelLoadError as error:
        parser.error(str(error))
