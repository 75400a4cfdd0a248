"""Tune the face model's last layer on a table's own photos: seconds, and no torch.

A table's dice are few and always the same, and the players' answers label them
(``pipcam photos``). ``vision.train.tune`` retrains the whole model on them, which needs torch
and a PC. This module refits only each member's last layer (the ``Gemm`` that turns the pooled
features into the seven class logits) on the features the model already computes: the reader's
own boxes on the table's training photos, each read at four quarter turns, a box on a labelled
die labelled with its value and a box clear of every label as "no face". The fit is full-batch
gradient descent on the cross-entropy, pulled back toward the model's own weights (``anchor``) so
that the little a table shows cannot undo what the model knew; the result is the same model file
with new last-layer weights, read by the same code. The held-out photos are read by the model in
use and by the tuned one, as the whole-model tuning does, and ``pipcam tune`` installs the tuned
one only if it costs the players clearly less (``vision.evaluate.MIN_GAIN``).

The defaults were chosen on dice sets the model never saw (``models/EXPERIMENTS.md``, "Tuning the
last layer only"): the CNN trained without nell-byler's photos, tuned on 20 or 60 of them and
scored on the rest.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.classify import (
    CLASSES,
    DEFAULT_MODEL,
    FLOAT_MODEL,
    OnnxClassifier,
    session_options,
    softmax,
)
from vision.detect import iou
from vision.errors import LabelsError, ModelLoadError, TuneError
from vision.evaluate import (
    Comparison,
    EvalReport,
    box_reader,
    evaluate_folder,
    image_view,
    match_dice,
    merge_reports,
    reading_cost,
    split_view,
)
from vision.labels import LABELS, read_labels
from vision.preprocess import crops_for_model
from vision.reader import DiceReader, default_locator

if TYPE_CHECKING:
    import onnx

    from vision.locate import Locator
    from vision.train.data import Record

TUNED_NAME = FLOAT_MODEL.name
"""The file name a tuned model is written by: the one a table installs it by (pipcam/run.py)."""

FOLDS = 5
"""The folds ``pipcam tune --head`` measures with: on a table's nell-byler simulation the
held-out fifth of the games decided too noisily (models/EXPERIMENTS.md, "The teach sheet")."""

__all__ = [
    "Head",
    "HeadConfig",
    "TuneResult",
    "fit_head",
    "held_out_figures",
    "load_model",
    "model_heads",
    "table_records",
    "table_split",
    "tune_heads",
    "with_heads",
]

NO_FACE_IOU = 0.05
"""A located box overlapping every labelled die less than this is "no face" (as in training)."""


@dataclass(frozen=True)
class HeadConfig:
    """What decides a last-layer tuning; models/EXPERIMENTS.md measures these defaults."""

    anchor: float = 0.01
    """Pull toward the model's own weights (L2, per unit of mean cross-entropy)."""
    rate: float = 0.5
    steps: int = 300
    threads: int = 1
    folds: int = 0
    """0: measure on the held-out games of the export's split. 2 or more: cross-validate by
    game (each fold's games read by a layer tuned on the others), so that every photo measures
    the tuning and not a fifth of them; the layer installed is tuned on all."""


@dataclass(frozen=True)
class Head:
    """One member's last layer: ``logits = features @ weight.T + bias``, and where it lives."""

    features: str
    """The graph tensor the layer reads (the pooled features)."""
    weight_name: str
    bias_name: str
    weight: npt.NDArray[np.float32]
    """(7, D), as the logits are computed (transposed from the file's layout if need be)."""
    bias: npt.NDArray[np.float32]
    transposed: bool
    """The file stores the weight as (D, 7) (``transB`` = 0)."""


def model_heads(model: onnx.ModelProto) -> list[Head]:
    """Every member's last layer, in graph order; raise ``TuneError`` if there is none or one is
    not a plain ``Gemm`` with its weights in the file."""
    from onnx import numpy_helper

    values = {i.name: i for i in model.graph.initializer}
    heads: list[Head] = []
    for node in model.graph.node:
        if node.op_type != "Gemm":
            continue
        attrs = {a.name: a for a in node.attribute}
        alpha = attrs["alpha"].f if "alpha" in attrs else 1.0
        beta = attrs["beta"].f if "beta" in attrs else 1.0
        trans_a = attrs["transA"].i if "transA" in attrs else 0
        plain = (
            len(node.input) == 3
            and node.input[1] in values
            and node.input[2] in values
            and alpha == 1.0
            and beta == 1.0
            and trans_a == 0
        )
        if not plain:
            raise TuneError(
                f"the model's layer {node.name or node.output[0]!r} is not a plain linear layer"
                " with its weights in the file; tune a face model written by `python -m"
                " vision.train` or `vision.train.ensemble`"
            )
        transposed = not (attrs["transB"].i if "transB" in attrs else 0)
        weight = numpy_helper.to_array(values[node.input[1]]).astype(np.float32)
        weight = weight.T if transposed else weight
        bias = numpy_helper.to_array(values[node.input[2]]).astype(np.float32)
        if weight.ndim != 2 or weight.shape[0] != CLASSES or bias.shape != (CLASSES,):
            raise TuneError(
                f"the model's layer {node.name or node.output[0]!r} gives {weight.shape[0]}"
                f" outputs, not the {CLASSES} classes of a face model"
            )
        heads.append(Head(node.input[0], node.input[1], node.input[2], weight, bias, transposed))
    if not heads:
        raise TuneError(
            "the model has no last linear layer to tune: tune a face model written by `python -m"
            " vision.train` or `vision.train.ensemble`"
        )
    return heads


def with_heads(model: onnx.ModelProto, heads: Sequence[Head]) -> onnx.ModelProto:
    """A copy of ``model`` whose last layers carry ``heads``' weights (the rest is unchanged)."""
    import onnx
    from onnx import numpy_helper

    out = onnx.ModelProto()
    out.CopyFrom(model)
    new: dict[str, npt.NDArray[np.float32]] = {}
    for head in heads:
        new[head.weight_name] = np.ascontiguousarray(
            head.weight.T if head.transposed else head.weight
        )
        new[head.bias_name] = head.bias
    for index, init in enumerate(out.graph.initializer):
        if init.name in new:
            out.graph.initializer[index].CopyFrom(
                numpy_helper.from_array(new[init.name].astype(np.float32), init.name)
            )
    return out


def load_model(path: Path) -> onnx.ModelProto:
    """The face model file ``path`` as ONNX; ``ModelLoadError`` names the file if it is not."""
    import onnx

    try:
        return onnx.load(str(path))
    except Exception as err:  # protobuf's DecodeError is no OSError or ValueError
        raise ModelLoadError(
            f"cannot load face model {str(path)!r} to tune it: {err}; restore or retrain it"
        ) from err


class FeatureReader:
    """The face model run with each member's pooled features as extra outputs."""

    def __init__(self, model_path: Path, *, threads: int = 1) -> None:
        """Load the model; raise ``ModelLoadError`` or ``TuneError`` naming the file."""
        import onnx

        self.model = load_model(model_path)
        self.heads = model_heads(self.model)
        probe = onnx.ModelProto()
        probe.CopyFrom(self.model)
        for head in self.heads:
            probe.graph.output.append(
                onnx.helper.make_tensor_value_info(head.features, onnx.TensorProto.FLOAT, None)
            )
        import onnxruntime

        self._session = onnxruntime.InferenceSession(
            probe.SerializeToString(),
            sess_options=session_options(threads),
            providers=["CPUExecutionProvider"],
        )

    def features(self, crops: npt.NDArray[np.float32]) -> list[npt.NDArray[np.float32]]:
        """Each head's (N, D) input features for ``crops``."""
        names = [h.features for h in self.heads]
        outs = self._session.run(names, {"image": np.ascontiguousarray(crops, np.float32)})
        if any(np.shape(o)[0] != len(crops) for o in outs):
            # A model composed with four turns of each crop reads every crop four times.
            raise TuneError(
                "the model's last layers see more rows than crops (composed with --rotations?);"
                " tune the members' composition without --rotations"
            )
        return [np.asarray(o, np.float32).reshape(len(crops), -1) for o in outs]


def fit_head(
    head: Head, features: npt.NDArray[np.float32], labels: npt.NDArray[np.int64], config: HeadConfig
) -> Head:
    """Refit ``head`` on (features, labels) by full-batch gradient descent on the mean
    cross-entropy plus ``anchor / 2`` times the squared distance to its own weights.

    Deterministic (no sampling), so the same photos give the same model.

    >>> head = Head("f", "w", "b", np.zeros((7, 2), np.float32), np.zeros(7, np.float32), False)
    >>> x = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    >>> tuned = fit_head(head, x, np.array([3, 5]), HeadConfig())
    >>> [int(v) for v in (x @ tuned.weight.T + tuned.bias).argmax(axis=1)]
    [3, 5]
    """
    if len(features) != len(labels):
        raise ValueError(f"{len(features)} feature rows for {len(labels)} labels")
    if len(labels) == 0:
        return head
    x = features.astype(np.float64)
    target = np.eye(CLASSES)[labels]
    w0, b0 = head.weight.astype(np.float64), head.bias.astype(np.float64)
    w, b = w0.copy(), b0.copy()
    for _ in range(config.steps):
        grad = (softmax(x @ w.T + b).astype(np.float64) - target) / len(x)
        w -= config.rate * (grad.T @ x + config.anchor * (w - w0))
        b -= config.rate * (grad.sum(axis=0) + config.anchor * (b - b0))
    return Head(
        head.features,
        head.weight_name,
        head.bias_name,
        w.astype(np.float32),
        b.astype(np.float32),
        head.transposed,
    )


def table_records(folders: Sequence[Path]) -> list[Record]:
    """The photos of the table folders (``pipcam photos`` writes them); raise ``TuneError``."""
    from vision.train.data import load_folder

    for folder in folders:
        if not (folder / LABELS).is_file():
            raise TuneError(
                f"{folder}: no labels.jsonl there; tune on folders that `pipcam photos OUT`"
                " wrote (or any folder in the shared data format)"
            )
    try:
        return [record for folder in folders for record in load_folder(folder)]
    except LabelsError as exc:
        raise TuneError(str(exc)) from exc


def table_split(folders: Sequence[Path]) -> tuple[list[Record], list[Record]]:
    """The table's photos to tune on and those held out (training's own split); raise
    ``TuneError`` when there is nothing to tune on."""
    from vision.train.data import train_and_val

    records = table_records(folders)
    train_records, val_records = train_and_val(records)
    if not train_records:
        raise TuneError(
            f"no labelled photo to tune on in {', '.join(map(str, folders))} (of"
            f" {len(records)} photos, {len(val_records)} are held out to measure the result):"
            " keep more photos with `pipcam run --keep-photos`"
        )
    return train_records, val_records


def table_examples(
    records: Sequence[Record], reader: FeatureReader, locator: Locator
) -> tuple[list[npt.NDArray[np.float32]], npt.NDArray[np.int64]]:
    """Each head's features and the labels of the reader's own boxes on ``records``, each box
    at four quarter turns: a box on a labelled die carries its value, a box clear of every label
    is "no face" (0); a box on a die whose label is in doubt is left out."""
    columns: list[list[npt.NDArray[np.float32]]] = [[] for _ in reader.heads]
    labels: list[int] = []
    for record in records:
        loaded = cv2.imread(str(record.path), cv2.IMREAD_COLOR)
        if loaded is None:
            raise TuneError(f"cannot read {record.path}: restore it, or export the photos again")
        image = np.asarray(loaded, dtype=np.uint8)
        located = [d.box for d in locator.locate(image, zone=None, tray=None)]
        truth = [d.box for d in record.dice]
        boxes: list[tuple[int, int, int, int]] = []
        values: list[int] = []
        for i, j in match_dice(truth, located):
            if not record.dice[i].suspect:
                boxes.append(located[j])
                values.append(record.dice[i].value)
        for box in located:
            if all(iou(box, t) < NO_FACE_IOU for t in truth):
                boxes.append(box)
                values.append(0)
        if not boxes:
            continue
        crops = crops_for_model(image, boxes)
        for turn in range(4):
            turned = np.ascontiguousarray(np.rot90(crops, turn, axes=(2, 3)))
            for column, features in zip(columns, reader.features(turned), strict=True):
                column.append(features)
            labels.extend(values)
    if not labels:
        return [np.zeros((0, h.weight.shape[1]), np.float32) for h in reader.heads], np.zeros(
            0, np.int64
        )
    return [np.concatenate(c) for c in columns], np.asarray(labels, np.int64)


def _photo_reader(model: Path) -> DiceReader:
    """The reader the comparisons read photos with."""
    return DiceReader(classifier=OnnxClassifier(model, threads=1), locator=default_locator())


def game_folds(
    folders: Sequence[Path], records: Sequence[Record], folds: int
) -> list[list[Record]]:
    """``records`` in ``folds`` groups, whole games together (a table export's ``game``; a photo
    is its own game elsewhere); stable from run to run."""
    import zlib

    keys: dict[str, str] = {}
    for folder in folders:
        for raw in read_labels(folder):
            game = raw.get("game")
            name = str(raw["image"]) if game is None else f"game {game}"
            keys[str(folder / str(raw["image"]))] = f"{folder.name}:{name}"
    out: list[list[Record]] = [[] for _ in range(folds)]
    for record in records:
        key = keys.get(str(record.path), str(record.path))
        out[zlib.crc32(key.encode()) % folds].append(record)
    return out


def held_out_figures(folders: Sequence[Path], model: Path) -> list[EvalReport]:
    """The reader with ``model`` on each folder's held-out photos (never tuned on)."""
    reader = _photo_reader(model)
    reports = []
    for folder in folders:
        with split_view(folder, "val") as view:
            report = evaluate_folder(view, box_reader(reader))
        report.folder = folder
        reports.append(report)
    return reports


def summary(report: EvalReport) -> dict[str, Any]:
    """One folder's figures for a run's ``report.json``."""
    return {
        "folder": str(report.folder),
        "photos": report.images,
        "dice": report.labelled,
        "recall": round(report.recall, 4),
        "precision": round(report.precision, 4),
        "exact_photos": report.exact,
        "cost": reading_cost(report),
    }


def _run_report(
    out: Path,
    model: Path,
    baseline: Path,
    config: HeadConfig,
    started: float,
    compared: tuple[list[EvalReport], list[EvalReport]],
    **facts: Any,
) -> dict[str, Any]:
    """A run's ``report.json`` (written into ``out``, beside the tuned model) and its content."""
    import hashlib

    tuned = out / TUNED_NAME
    report = {
        "kind": "last layer",
        "model": str(model),
        "baseline": str(baseline),
        "tuned": str(tuned),
        "sha256": hashlib.sha256(tuned.read_bytes()).hexdigest(),
        "config": asdict(config),
        **facts,
        "seconds": round(time.perf_counter() - started, 1),
        "before": [summary(r) for r in compared[0]],
        "after": [summary(r) for r in compared[1]],
    }
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return report


def _save_tuned(out: Path, reader: FeatureReader, heads: Sequence[Head]) -> Path:
    """Write the model with its last layers replaced by ``heads`` into ``out``; its path."""
    import onnx

    out.mkdir(parents=True, exist_ok=True)
    path = out / TUNED_NAME  # the name the table installs it by
    onnx.save(with_heads(reader.model, heads), str(path))
    return path


def _tune_heads_by_folds(
    photos: Sequence[Path],
    out: Path,
    config: HeadConfig,
    model: Path,
    baseline: Path,
    started: float,
) -> TuneResult:
    """``tune_heads`` measured by cross-validation over the games (``HeadConfig.folds``)."""

    import onnx

    records = [r for r in table_records(photos) if not r.known_issue and not r.is_crop]
    if not records:
        raise TuneError(
            f"no labelled photo to tune on in {', '.join(map(str, photos))}: keep more photos"
            " with `pipcam run --keep-photos`"
        )
    reader = FeatureReader(model, threads=config.threads)
    locator = default_locator()
    groups = [g for g in game_folds(photos, records, config.folds) if g]
    parts = [table_examples(group, reader, locator) for group in groups]

    def fit(chosen: Sequence[int]) -> list[Head]:
        labels = np.concatenate([parts[i][1] for i in chosen])
        return [
            fit_head(head, np.concatenate([parts[i][0][h] for i in chosen]), labels, config)
            for h, head in enumerate(reader.heads)
        ]

    model_path = _save_tuned(out, reader, fit(range(len(parts))))
    before: list[EvalReport] = []
    after: list[EvalReport] = []
    if len(groups) >= 2:
        (out / "folds").mkdir(exist_ok=True)
        old = _photo_reader(baseline)
        for k, group in enumerate(groups):
            fold_model = out / "folds" / f"fold-{k}.onnx"
            others = [i for i in range(len(parts)) if i != k]
            onnx.save(with_heads(reader.model, fit(others)), str(fold_model))
            new = _photo_reader(fold_model)
            images = {str(r.path) for r in group}
            for folder in photos:

                def in_fold(
                    raw: dict[str, Any], folder: Path = folder, images: set[str] = images
                ) -> bool:
                    return str(folder / str(raw["image"])) in images

                with image_view(folder, in_fold) as view:
                    before.append(evaluate_folder(view, box_reader(old)))
                    after.append(evaluate_folder(view, box_reader(new)))
        before = [
            merge_reports(before[i :: len(photos)], folder) for i, folder in enumerate(photos)
        ]
        after = [merge_reports(after[i :: len(photos)], folder) for i, folder in enumerate(photos)]
    report = _run_report(
        out,
        model,
        baseline,
        config,
        started,
        (before, after),
        train_photos=len(records),
        folds=len(groups),
        # Which photos each fold's layer (folds/fold-K.onnx) never saw: pipcam tune asks about
        # the dice a fold's layer reads otherwise on those photos only.
        fold_photos=[sorted(str(r.path) for r in group) for group in groups],
        examples=int(sum(len(p[1]) for p in parts)),
    )
    return TuneResult(Comparison(baseline, model_path, before, after, by_folds=True), report)


@dataclass(frozen=True)
class TuneResult:
    """A tuned model, the held-out photos read by the baseline and by it, and the run's report."""

    comparison: Comparison
    report: dict[str, Any]

    @property
    def tuned(self) -> Path:
        """The tuned model's file."""
        return self.comparison.candidate


def tune_heads(
    photos: Sequence[Path],
    out: Path,
    config: HeadConfig = HeadConfig(),
    model: Path = DEFAULT_MODEL,
    baseline: Path | None = None,
) -> TuneResult:
    """Refit ``model``'s last layers on the training photos of the table folders ``photos``
    into ``out``; read their held-out photos with ``baseline`` (by default ``model``) and the
    tuned model. Raises ``TuneError``."""

    started = time.perf_counter()
    baseline = baseline or model
    if config.folds >= 2:
        return _tune_heads_by_folds(photos, out, config, model, baseline, started)
    train_records, _ = table_split(photos)
    reader = FeatureReader(model, threads=config.threads)
    columns, labels = table_examples(train_records, reader, default_locator())
    heads = [
        fit_head(head, column, labels, config)
        for head, column in zip(reader.heads, columns, strict=True)
    ]
    model_path = _save_tuned(out, reader, heads)
    before = held_out_figures(photos, baseline)
    after = held_out_figures(photos, model_path) if any(r.images for r in before) else []
    report = _run_report(
        out,
        model,
        baseline,
        config,
        started,
        (before, after),
        train_photos=len(train_records),
        examples=int(len(labels)),
        by_class=np.bincount(labels, minlength=CLASSES).tolist(),
    )
    return TuneResult(Comparison(baseline, model_path, before, after), report)
