"""``python -m vision.train --data DIR --out models/``: train, export and describe the model."""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch

from vision.errors import LabelsError
from vision.train.card import SHARE_OPTIONS, write_model_card
from vision.train.data import (
    DEFAULT_DATA,
    SourceFolderError,
    UnknownSourceError,
    add_exclude_option,
    add_source_option,
)
from vision.train.export import check_onnx, export_onnx, record_outputs, sha256_of
from vision.train.train import CheckpointError, TrainConfig, build_datasets, train

MODEL_NAME = "dice_faces.onnx"


def main(argv: list[str] | None = None) -> int:
    """Run the whole pipeline; returns the process exit status."""
    parser = argparse.ArgumentParser(prog="python -m vision.train", description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared dice data folder")
    parser.add_argument("--out", type=Path, default=Path("models"), help="where the model goes")
    parser.add_argument("--seed", type=int, default=TrainConfig.seed)
    parser.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    parser.add_argument("--synthetic", type=int, default=TrainConfig.synthetic_train)
    parser.add_argument("--threads", type=int, default=TrainConfig.threads)
    parser.add_argument("--arch", choices=("plain", "effnet"), default=TrainConfig.arch)
    parser.add_argument("--lr", type=float, default=TrainConfig.learning_rate)
    parser.add_argument(
        "--label-smoothing",
        type=float,
        default=TrainConfig.label_smoothing,
        help="share of each target spread over the other classes; it also holds the model's"
        " certainty down (0.05 aims its top probability at about 0.957 over 7 classes)",
    )
    parser.add_argument(
        "--report", type=Path, default=None, help="also write the run's figures as JSON here"
    )
    parser.add_argument(
        "--record",
        type=Path,
        default=None,
        help="test folder (shared data format) whose dice get recorded logits for tests",
    )
    parser.add_argument(
        "--invert",
        type=float,
        default=TrainConfig.invert,
        help="share of training crops seen as their negative (dark dice from light ones)",
    )
    for name, meaning in (
        ("streaks", "share of training crops given a lamp's glossy streak across the face"),
        ("duotone", "share of training crops repainted in two random colours by their brightness"),
        ("faint", "share of rendered dice whose pips are dulled toward the body (smoke dice)"),
        ("arcs", "share of rendered dice with bold light swirls across every face (decorated)"),
        ("translucent", "share of rendered dice that are see-through: pips underneath show"),
        ("occluded", "share of dice also cut partly hidden by something over them, as class 0"),
        ("hard_shadows", "share of training crops with a hard shadow's edge across the die"),
        ("mixstyle", "chance per batch of mixing feature statistics between crops (plain CNN)"),
    ):
        default = getattr(TrainConfig, name)
        flag = f"--{name.replace('_', '-')}"
        parser.add_argument(flag, type=float, default=default, help=meaning)
    parser.add_argument(
        "--occluded-least",
        type=float,
        default=TrainConfig.occluded_least,
        help="the least share of a hidden die's box that --occluded covers (at most 0.65)",
    )
    parser.add_argument(
        "--occluded-photos",
        type=float,
        default=TrainConfig.occluded_photos,
        metavar="SHARE",
        help="share of the training photos' dice cut partly hidden (default: as --occluded;"
        " 0: the renders only, the photos keep their own boxes)",
    )
    parser.add_argument(
        "--view",
        type=int,
        default=TrainConfig.view,
        help="side in pixels the EfficientNet sees, its 64 px crop resized inside the network",
    )
    parser.add_argument(
        "--more-logos",
        action="store_true",
        help="also draw a sun, a heart, a crown or a spiral as the logo on rendered sixes",
    )
    parser.add_argument(
        "--checkpoint",
        type=Path,
        default=None,
        help="save the run here after every epoch; if the file holds an interrupted run with the"
        " same options, carry on from it (run the same command again to resume)",
    )
    add_source_option(parser)
    parser.add_argument(
        "--source-copies",
        type=int,
        default=1,
        metavar="N",
        help="crops cut per die of each --source folder (default 1)",
    )
    add_exclude_option(parser, unseen="dice")
    args = parser.parse_args(argv)
    if args.source_copies < 1:
        parser.error(f"--source-copies {args.source_copies}: give 1 or more crops a die")
    for name in (*SHARE_OPTIONS, "occluded_photos"):
        share = getattr(args, name)
        if share is not None and not 0.0 <= share <= 1.0:
            parser.error(f"--{name.replace('_', '-')} {share:g}: a share is from 0 to 1")
    if not 0.0 <= args.occluded_least <= 0.65:
        parser.error(f"--occluded-least {args.occluded_least:g}: give a share from 0 to 0.65")
    config = TrainConfig(
        seed=args.seed,
        epochs=args.epochs,
        synthetic_train=args.synthetic,
        threads=args.threads,
        arch=args.arch,
        learning_rate=args.lr,
        label_smoothing=args.label_smoothing,
        invert=args.invert,
        streaks=args.streaks,
        duotone=args.duotone,
        faint=args.faint,
        arcs=args.arcs,
        translucent=args.translucent,
        occluded=args.occluded,
        occluded_least=args.occluded_least,
        occluded_photos=args.occluded_photos,
        more_logos=args.more_logos,
        mixstyle=args.mixstyle,
        hard_shadows=args.hard_shadows,
        view=args.view,
        exclude=tuple(args.exclude),
        source_copies=args.source_copies,
    )
    torch.set_num_threads(config.threads)
    started = time.perf_counter()
    try:
        datasets = build_datasets(args.data, config, sources=args.source)
    except UnknownSourceError as err:
        parser.error(f"--exclude: {err} (in {args.data})")
    except (SourceFolderError, LabelsError) as err:
        parser.error(str(err))
    data_seconds = time.perf_counter() - started
    try:
        result = train(datasets, config, checkpoint=args.checkpoint)
    except CheckpointError as err:
        parser.error(f"--checkpoint: {err}")
    onnx_path = args.out / MODEL_NAME
    export_onnx(result.model, onnx_path)
    sample = datasets.val["synthetic"].images[:64]
    difference = check_onnx(
        result.model, onnx_path, sample.transpose(0, 3, 1, 2).astype(np.float32) / 255.0
    )
    total_seconds = time.perf_counter() - started
    report = {
        "config": config.__dict__,
        "counts": datasets.counts,
        "metrics": result.metrics,
        "loss_per_epoch": result.history,
        "train_seconds": round(result.seconds, 1),
        "data_seconds": round(data_seconds, 1),
        "total_seconds": round(total_seconds, 1),
        "onnx_max_abs_difference": difference,
        "sha256": sha256_of(onnx_path),
        "size_bytes": onnx_path.stat().st_size,
        "parameters": sum(p.numel() for p in result.model.parameters()),
        "torch": torch.__version__,
        "machine": f"{platform.machine()}, {config.threads} thread(s)",
    }
    if args.report is not None:
        args.report.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    write_model_card(report, args.out / "MODEL_CARD.md")
    if args.record is not None:
        record_outputs(onnx_path, args.record)
    print(json.dumps({"sha256": report["sha256"], "metrics": result.metrics}, indent=1))  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
