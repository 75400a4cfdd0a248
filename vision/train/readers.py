"""The whole reader the probes read with, as their command lines name its parts.

``python -m vision.train.hidden`` and ``python -m vision.train.trays`` measure the reader on
synthetic frames; comparing a locator or a die check not yet shipped means reading with it, not
swapping files under ``models/``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vision.classify import OnnxClassifier, OnnxLocator
from vision.die_check import die_checker_for
from vision.errors import ModelLoadError
from vision.locate import LearnedLocator
from vision.reader import DiceReader

__all__ = ["add_reader_options", "reader_from"]


def add_reader_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--locator-model PATH`` and ``--die-check PATH`` (the face model is the caller's)."""
    parser.add_argument(
        "--locator-model", type=Path, help="learned locator model (ONNX; default: ours)"
    )
    parser.add_argument(
        "--die-check",
        type=Path,
        help="die check fitted to the face model (JSON; default: ours when fitted to it)",
    )


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
