"""Tune a face model on a table's own photos: minutes from its weights, not an hour from nothing.

``python -m vision.train.tune PHOTOS [PHOTOS ...] --out DIR`` takes the folders ``pipcam photos``
writes (the players' corrections are their labels). Each member of the face model (by default
the shipped float one) is rebuilt in torch from its ONNX weights, where export folded batch norm
into the convolutions, and checked against onnxruntime; it is then trained a few epochs at a low
rate on crops of the table's photos beside fresh renders, so that what it knew of other dice stays.
The members are composed again as the shipped model is, and the result quantized to int8 as
the shipped copy is (``vision.train.quantize``, ranges measured on the tuning crops): the int8
copy is the tuned model that is read and installed, the float one stays beside it to tune again
from. The table's held-out photos (the
training code's own split: a fifth of them by file name) are read by the old model and the new
one, and both figures are printed: install the new model (``PIPCAM_MODEL`` or the config's
``model``) only if it reads them better. ``pipcam tune`` (pipcam/tune.py) does all of it on the
photos a table kept, and installs the tuned model itself when it does.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnx
import torch
from onnx import numpy_helper
from torch import nn

from vision.classify import FLOAT_MODEL
from vision.errors import TuneError
from vision.evaluate import Comparison
from vision.preprocess import MODEL_SIZE
from vision.train.__main__ import MODEL_NAME
from vision.train.backbone import EffFaceNet
from vision.train.data import CropSet, Proposer
from vision.train.ensemble import compose
from vision.train.export import export_onnx, sha256_of
from vision.train.quantize import quantize_face_model
from vision.train.train import (
    CLASS_NAMES,
    Datasets,
    FaceNet,
    TrainConfig,
    _cut_many,
    _render_many,
    locator_proposer,
    train,
)
from vision.tuning import TuneResult, held_out_figures, load_model, summary, table_split

__all__ = [
    "MemberWeights",
    "TuneError",
    "TuneResult",
    "held_out_photos",
    "member_weights",
    "rebuild",
    "tune_member",
    "tune_model",
]

_MEMBER = re.compile(r"^(m\d+/)")
PLAIN_CONVS = 7
"""Convolutions in ``FaceNet``; the EfficientNet trunk has 33."""


@dataclass(frozen=True)
class MemberWeights:
    """One member's weights as exported: convolutions (batch norm folded in) and the last layer."""

    prefix: str
    convs: list[tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]
    linear: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]
    view: int = MODEL_SIZE  # the side its crop is resized to first (EffFaceNet's ``view``)


def member_weights(model: onnx.ModelProto) -> list[MemberWeights]:
    """The members of a face model (``mN/``-prefixed in a composed one), in graph order."""
    if any(node.op_type == "ReduceMean" for node in model.graph.node):
        raise TuneError(
            "the model averages four turns of each crop (composed with --rotations); tune the"
            " members' composition without --rotations"
        )
    if any(node.op_type == "DequantizeLinear" for node in model.graph.node):
        raise TuneError(
            "the model is an int8 copy (vision.train.quantize), whose weights torch cannot train;"
            f" tune the float model it was made from ({FLOAT_MODEL.name}) and quantize the result"
        )
    values = {i.name: numpy_helper.to_array(i).astype(np.float32) for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant":
            tensor = next((a.t for a in node.attribute if a.name == "value"), None)
            if tensor is not None:
                values[node.output[0]] = numpy_helper.to_array(tensor).astype(np.float32)
    members: dict[str, MemberWeights] = {}
    for node in model.graph.node:
        if node.op_type not in ("Conv", "Gemm", "Resize"):
            continue
        found = _MEMBER.match(node.output[0])
        prefix = found.group(1) if found else ""
        member = members.setdefault(
            prefix, MemberWeights(prefix, [], (np.zeros(0, np.float32), np.zeros(0, np.float32)))
        )
        if node.op_type == "Resize":
            # The crop made larger before the trunk: its scales are (1, 1, s, s).
            scale = float(values[node.input[2]][-1])
            members[prefix] = replace(member, view=round(MODEL_SIZE * scale))
            continue
        weight = values[node.input[1]]
        bias = (
            values[node.input[2]] if len(node.input) > 2 else np.zeros(weight.shape[0], np.float32)
        )
        if node.op_type == "Conv":
            member.convs.append((weight, bias))
            continue
        trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
        members[prefix] = replace(member, linear=(weight if trans_b else weight.T, bias))
    if not members or any(m.linear[0].size == 0 for m in members.values()):
        raise TuneError(
            "the model has no member with convolutions and a last linear layer: tune a face"
            " model written by `python -m vision.train` or `vision.train.ensemble`"
        )
    return list(members.values())


def _fold_batch_norm(model: nn.Module) -> nn.Module:
    """Drop every batch norm and give every convolution a bias: the exported network's shape."""
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.BatchNorm2d):
                setattr(parent, name, nn.Identity())
    for conv in model.modules():
        if isinstance(conv, nn.Conv2d) and conv.bias is None:
            conv.bias = nn.Parameter(torch.zeros(conv.out_channels))
    return model


def rebuild(weights: MemberWeights) -> nn.Module:
    """The torch network of one member, with its exported weights, batch norm folded."""
    convs = weights.convs
    if len(convs) == PLAIN_CONVS:
        # FaceNet's widths are the outputs of its 1st, 2nd, 4th and 6th convolutions.
        widths = tuple(int(convs[i][0].shape[0]) for i in (0, 1, 3, 5))
        model: nn.Module = FaceNet(widths)
    else:
        model = EffFaceNet(classes=len(CLASS_NAMES), pretrained=False, view=weights.view)
    model = _fold_batch_norm(model)
    layers = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if len(layers) != len(convs) or len(linears) != 1:
        raise TuneError(
            f"member {weights.prefix or '(single)'} has {len(convs)} convolutions; neither"
            f" network here has that many ({PLAIN_CONVS} plain, 33 EfficientNet)"
        )
    with torch.no_grad():
        for index, (layer, (weight, bias)) in enumerate(zip(layers, convs, strict=True)):
            if tuple(layer.weight.shape) != weight.shape:
                raise TuneError(
                    f"member {weights.prefix or '(single)'}: convolution {index} is"
                    f" {weight.shape} in the model, {tuple(layer.weight.shape)} here"
                )
            layer.weight.copy_(torch.from_numpy(weight))
            assert layer.bias is not None  # given by _fold_batch_norm
            layer.bias.copy_(torch.from_numpy(bias))
        linears[0].weight.copy_(torch.from_numpy(weights.linear[0]))
        linears[0].bias.copy_(torch.from_numpy(weights.linear[1]))
    return model.eval()


def composed_logits(members: Sequence[nn.Module], images: torch.Tensor) -> torch.Tensor:
    """What the model file computes from its members: one member's logits, or the mean of the
    members' log-softmax (``vision.train.ensemble.compose`` without turns)."""
    if len(members) == 1:
        # Bound to a typed name: nn.Module's call is untyped with torch and Any without it.
        logits: torch.Tensor = members[0](images)
        return logits
    return torch.stack([torch.log_softmax(m(images), dim=1) for m in members]).mean(0)


def check_rebuilt(
    members: Sequence[nn.Module], model: onnx.ModelProto, images: npt.NDArray[np.float32]
) -> float:
    """Largest logit difference between the rebuilt members and onnxruntime on ``images``."""
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = np.asarray(session.run(None, {"image": images})[0])
    with torch.no_grad():
        got = composed_logits([m.eval() for m in members], torch.from_numpy(images)).numpy()
    return float(np.abs(got - want).max())


@dataclass(frozen=True)
class TuneConfig:
    """What decides a tuning run; models/EXPERIMENTS.md measures these defaults (not a sweep)."""

    seed: int = 4
    epochs: int = 3
    lr_plain: float = 3e-4
    lr_effnet: float = 2e-4
    renders: int = 6000
    """Fresh renders trained beside the table's crops, so that other dice are not forgotten."""
    repeat: int = 3
    """How many times the table's crops are in each epoch."""
    copies: int = 6
    """Crops cut per labelled die (each with its box moved and the photo turned)."""
    threads: int = 2


def held_out_photos(folders: Sequence[Path]) -> int:
    """How many of the table's photos a run holds out to measure itself (known before it tunes,
    which takes minutes); raise ``TuneError`` when there is nothing to tune on."""
    return len(table_split(folders)[1])


def tune_datasets(
    folders: Sequence[Path],
    config: TuneConfig,
    rng: np.random.Generator,
    proposer: Proposer | None = None,
) -> Datasets:
    """The table's training crops (repeated) with fresh renders; its held-out crops to watch."""
    train_records, val_records = table_split(folders)
    table = _cut_many(
        train_records,
        rng,
        split="train",
        description="table crops",
        proposer=proposer,
        copies=config.copies,
    )
    renders = _render_many(rng, config.renders, description="renders")
    val = (
        {"held-out": _cut_many(val_records, rng, split="val", description="held-out crops")}
        if val_records
        else {}
    )
    return Datasets(train=CropSet.concat([table] * config.repeat + [renders]), val=val)


def tune_member(member: nn.Module, datasets: Datasets, config: TuneConfig) -> nn.Module:
    """Train one rebuilt member on ``datasets`` at the member's own low learning rate."""
    plain = isinstance(member, FaceNet)
    run = TrainConfig(
        seed=config.seed,
        epochs=config.epochs,
        learning_rate=config.lr_plain if plain else config.lr_effnet,
        threads=config.threads,
        arch="plain" if plain else "effnet",
    )
    return train(datasets, run, start=member).model


INT8_NAME = "dice_faces.int8.onnx"
"""The tuned model's int8 copy, which the table reads with (``vision.train.quantize``)."""

CALIBRATION_CROPS = 1500
"""Tuning crops the int8 copy's ranges are measured on (the shipped copy: 1382 crops)."""

REBUILT_LIMIT = 1e-3
"""Largest logit difference allowed between the rebuilt members and the model file."""


def tune_model(
    photos: Sequence[Path],
    out: Path,
    config: TuneConfig,
    model: Path = FLOAT_MODEL,
    baseline: Path | None = None,
) -> TuneResult:
    """Tune ``model`` on the table folders ``photos`` into ``out``; read their held-out photos
    with ``baseline`` (by default ``model``) and the tuned model. Raises ``TuneError``."""
    started = time.perf_counter()
    baseline = baseline or model
    source = load_model(model)
    members = [rebuild(w) for w in member_weights(source)]
    probe = np.random.default_rng(config.seed).random((8, 3, 64, 64), dtype=np.float32)
    differs = check_rebuilt(members, source, probe)
    if differs > REBUILT_LIMIT:
        raise TuneError(
            f"{model}: its members rebuilt in torch differ from it by {differs:.2g}"
            f" (limit {REBUILT_LIMIT}): it was not composed by `vision.train.ensemble`"
            " without --rotations; tune a model that was"
        )
    rng = np.random.default_rng(config.seed)
    datasets = tune_datasets(photos, config, rng, proposer=locator_proposer(face_path=model))
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, member in enumerate(members):
        path = out / f"member{index}.onnx"
        export_onnx(tune_member(member, datasets, config), path)
        paths.append(path)
    float_path = out / MODEL_NAME
    composed = compose(paths, rotations=False) if len(paths) > 1 else onnx.load(str(paths[0]))
    onnx.save(composed, str(float_path))
    # The table reads with an int8 copy, as it does with the shipped model (half the time),
    # calibrated on what it was tuned on; the float model stays beside it to tune again from.
    model_path = out / INT8_NAME
    pick = np.random.default_rng(config.seed).permutation(len(datasets.train))[:CALIBRATION_CROPS]
    crops = datasets.train.images[np.sort(pick)].transpose(0, 3, 1, 2).astype(np.float32) / 255
    quantize_face_model(
        float_path,
        model_path,
        np.ascontiguousarray(crops),
        calibration=f"{len(pick)} of the tuning crops (the table's photos and renders),"
        f" seed {config.seed}",
    )
    before = held_out_figures(photos, baseline)
    after = held_out_figures(photos, model_path) if any(r.images for r in before) else []
    report = {
        "model": str(model),
        "baseline": str(baseline),
        "tuned": str(model_path),
        "float": str(float_path),
        "sha256": sha256_of(model_path),
        "config": asdict(config),
        "train_crops": len(datasets.train),
        "seconds": round(time.perf_counter() - started, 1),
        "before": [summary(r) for r in before],
        "after": [summary(r) for r in after],
    }
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return TuneResult(Comparison(baseline, model_path, before, after), report)


def main(argv: list[str] | None = None) -> int:
    """Tune, compose, measure and write the model; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m vision.train.tune", description=__doc__)
    parser.add_argument("photos", type=Path, nargs="+", help="folders from `pipcam photos OUT`")
    parser.add_argument("--out", type=Path, required=True, help="where the tuned model goes")
    parser.add_argument(
        "--model",
        type=Path,
        default=FLOAT_MODEL,
        help="float face model to tune (the shipped one; not its int8 copy)",
    )
    defaults = TuneConfig()
    parser.add_argument(
        "--epochs", type=int, default=defaults.epochs, help="passes over the crops (%(default)s)"
    )
    parser.add_argument(
        "--renders",
        type=int,
        default=defaults.renders,
        help="fresh synthetic crops beside the table's, so other dice are not forgotten"
        " (%(default)s)",
    )
    parser.add_argument(
        "--seed", type=int, default=defaults.seed, help="seed of the crops and the training"
    )
    parser.add_argument(
        "--threads", type=int, default=defaults.threads, help="CPU threads torch uses (%(default)s)"
    )
    args = parser.parse_args(argv)
    config = replace(
        defaults, epochs=args.epochs, renders=args.renders, seed=args.seed, threads=args.threads
    )
    try:
        result = tune_model(args.photos, args.out, config, model=args.model)
    except (TuneError, OSError, ValueError) as err:
        print(f"tune: {err}", file=sys.stderr)  # noqa: T201
        return 1
    lines = result.comparison.lines()
    lines.append(
        f"tuned model written to {result.tuned}; use it with PIPCAM_MODEL={result.tuned}"
        " (or `model` in the config) if it reads the held-out photos better"
    )
    print("\n".join(lines))  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
