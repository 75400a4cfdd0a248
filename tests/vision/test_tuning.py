"""Tuning the face model's last layer without torch: the features are the layer's own inputs, a
rewritten file reads as its weights say, the fit does what it is asked, and a run on real photos
gives a model that reads them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from vision.classify import CLASSES, DEFAULT_LOCATOR_MODEL, DEFAULT_MODEL, OnnxClassifier
from vision.errors import ModelLoadError, TuneError
from vision.evaluate import box_reader, evaluate_folder
from vision.reader import DiceReader
from vision.tuning import (
    FeatureReader,
    Head,
    HeadConfig,
    fit_head,
    game_folds,
    model_heads,
    table_records,
    tune_heads,
    with_heads,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "dice"


def _crops(n: int, seed: int = 0) -> npt.NDArray[np.float32]:
    return np.random.default_rng(seed).random((n, 3, 64, 64), dtype=np.float32)


def _log_softmax(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    shifted = x - x.max(axis=1, keepdims=True)
    out: npt.NDArray[np.float32] = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return out


def _gemm_model(path: Path, *, trans_b: int = 1, trans_a: int = 0) -> Path:
    """logits = Gemm(mean colour of the crop, W, B): a one-member face model with a last layer."""
    rng = np.random.default_rng(3)
    weight = rng.normal(size=(CLASSES, 3)).astype(np.float32)
    stored = weight if trans_b else weight.T
    graph = helper.make_graph(
        [
            helper.make_node("GlobalAveragePool", ["image"], ["pooled"]),
            helper.make_node("Flatten", ["pooled"], ["flat"], axis=1),
            helper.make_node(
                "Gemm", ["flat", "W", "B"], ["logits"], transB=trans_b, transA=trans_a
            ),
        ],
        "gemm",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 64, 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", CLASSES])],
        [
            numpy_helper.from_array(stored, "W"),
            numpy_helper.from_array(rng.normal(size=CLASSES).astype(np.float32), "B"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_the_features_and_last_layers_give_the_shipped_models_logits() -> None:
    # The composed pair's logits are the mean log-probability of its members: rebuilt here from
    # the features FeatureReader takes out and the heads model_heads reads, they must agree.
    reader = FeatureReader(DEFAULT_MODEL)
    assert len(reader.heads) == 2
    crops = _crops(6)
    members = [
        _log_softmax(f @ h.weight.T + h.bias)
        for f, h in zip(reader.features(crops), reader.heads, strict=True)
    ]
    want = OnnxClassifier(DEFAULT_MODEL).logits(crops)
    assert np.abs(np.mean(members, axis=0) - want).max() < 1e-4


@pytest.mark.parametrize("trans_b", [1, 0])
def test_a_rewritten_layer_reads_as_its_new_weights_say(tmp_path: Path, trans_b: int) -> None:
    path = _gemm_model(tmp_path / "gemm.onnx", trans_b=trans_b)
    model = onnx.load(str(path))
    (head,) = model_heads(model)
    crops = _crops(5)
    before = OnnxClassifier(path).logits(crops)
    same = tmp_path / "same.onnx"
    onnx.save(with_heads(model, [head]), str(same))
    assert np.array_equal(OnnxClassifier(same).logits(crops), before)
    shift = np.zeros(CLASSES, np.float32)
    shift[3] = 2.5
    moved = Head(
        head.features,
        head.weight_name,
        head.bias_name,
        head.weight * 2,
        head.bias + shift,
        head.transposed,
    )
    changed = tmp_path / "changed.onnx"
    onnx.save(with_heads(model, [moved]), str(changed))
    (features,) = FeatureReader(path).features(crops)
    want = features @ (head.weight * 2).T + head.bias + shift
    assert np.abs(OnnxClassifier(changed).logits(crops) - want).max() < 1e-5


def _head(dims: int = 2) -> Head:
    return Head(
        "f",
        "w",
        "b",
        np.zeros((CLASSES, dims), np.float32),
        np.zeros(CLASSES, np.float32),
        transposed=False,
    )


def _loss(head: Head, x: npt.NDArray[np.float32], y: npt.NDArray[np.int64]) -> float:
    logp = _log_softmax(x @ head.weight.T + head.bias)
    return float(-logp[np.arange(len(y)), y].mean())


def test_the_fit_learns_what_it_is_shown_and_is_the_same_each_time() -> None:
    rng = np.random.default_rng(1)
    labels = rng.integers(0, CLASSES, 200)
    centres = rng.normal(size=(CLASSES, 8)) * 3
    x = (centres[labels] + rng.normal(size=(200, 8))).astype(np.float32)
    start = _head(8)
    tuned = fit_head(start, x, labels, HeadConfig())
    assert _loss(tuned, x, labels) < _loss(start, x, labels) / 4
    assert ((x @ tuned.weight.T + tuned.bias).argmax(axis=1) == labels).mean() > 0.95
    again = fit_head(start, x, labels, HeadConfig())
    assert np.array_equal(again.weight, tuned.weight)
    assert np.array_equal(again.bias, tuned.bias)


def test_the_anchor_holds_the_layer_to_its_own_weights() -> None:
    rng = np.random.default_rng(2)
    start = Head(
        "f",
        "w",
        "b",
        rng.normal(size=(CLASSES, 4)).astype(np.float32),
        np.zeros(CLASSES, np.float32),
        transposed=False,
    )
    x = rng.normal(size=(50, 4)).astype(np.float32)
    labels = rng.integers(0, CLASSES, 50)
    loose = fit_head(start, x, labels, HeadConfig(anchor=0.0, rate=0.1))
    held = fit_head(start, x, labels, HeadConfig(anchor=1e3, rate=1e-4))
    moved = float(np.abs(loose.weight - start.weight).max())
    assert moved > 0.1
    assert float(np.abs(held.weight - start.weight).max()) < moved / 100


def test_no_examples_leave_the_layer_as_it_was_and_a_mismatch_is_refused() -> None:
    head = _head()
    assert fit_head(head, np.zeros((0, 2), np.float32), np.zeros(0, np.int64), HeadConfig()) is head
    with pytest.raises(ValueError, match="3 feature rows for 2 labels"):
        fit_head(head, np.zeros((3, 2), np.float32), np.zeros(2, np.int64), HeadConfig())


def test_models_without_a_plain_last_layer_say_what_can_be_tuned(
    tmp_path: Path, tiny_model: Path
) -> None:
    with pytest.raises(TuneError, match="no last linear layer to tune"):
        model_heads(onnx.load(str(tiny_model)))  # MatMul and Add, no Gemm
    with pytest.raises(TuneError, match="no last linear layer to tune"):
        FeatureReader(DEFAULT_LOCATOR_MODEL)  # the locator is not a face model
    odd = _gemm_model(tmp_path / "odd.onnx", trans_a=1)
    with pytest.raises(TuneError, match="not a plain linear layer"):
        model_heads(onnx.load(str(odd)))
    damaged = tmp_path / "damaged.onnx"
    damaged.write_bytes(b"not a model")
    with pytest.raises(ModelLoadError, match="damaged.onnx"):
        FeatureReader(damaged)


def test_a_model_that_reads_every_crop_four_times_is_refused(tmp_path: Path) -> None:
    from vision.train.ensemble import compose

    members = [_gemm_model(tmp_path / f"m{i}.onnx") for i in range(2)]
    turned = tmp_path / "turned.onnx"
    onnx.save(compose(members, rotations=True), str(turned))
    reader = FeatureReader(turned)
    with pytest.raises(TuneError, match="composed with --rotations"):
        reader.features(_crops(3))
    flat = tmp_path / "flat.onnx"
    onnx.save(compose(members, rotations=False), str(flat))
    assert [f.shape for f in FeatureReader(flat).features(_crops(3))] == [(3, 3), (3, 3)]


def _table(folder: Path, held_out: set[str]) -> Path:
    """The committed real photos as a table's export: ``held_out`` photos are the val share."""
    shutil.copytree(DATA / "images", folder / "images")
    lines = []
    for line in (DATA / "labels.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record.pop("source", None)
        record["split"] = "val" if Path(record["image"]).name in held_out else "train"
        lines.append(json.dumps(record))
    (folder / "labels.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_a_run_on_real_photos_writes_a_model_that_still_reads_them(tmp_path: Path) -> None:
    table = _table(tmp_path / "table", {"valid_valid_50.jpg"})
    result = tune_heads([table], tmp_path / "out", HeadConfig(threads=2))
    report = result.report
    assert report["kind"] == "last layer"
    assert report["train_photos"] == 4
    # Every labelled die of the four photos tuned on, each at four turns (all are found).
    tuned_on = [
        json.loads(line)
        for line in (table / "labels.jsonl").read_text().splitlines()
        if '"train"' in line
    ]
    dice = sum(len(r["dice"]) for r in tuned_on)
    assert sum(report["by_class"][1:]) == 4 * dice
    assert report["examples"] == sum(report["by_class"])
    assert result.comparison.photos == 1
    assert [r["photos"] for r in report["after"]] == [1]
    assert json.loads((tmp_path / "out" / "report.json").read_text())["sha256"] == report["sha256"]
    # The tuned model is a face model like the shipped one and still reads every photo exactly.
    reader = DiceReader(OnnxClassifier(result.tuned))
    scored = evaluate_folder(DATA, box_reader(reader))
    assert scored.exact == scored.images == 5
    assert not np.array_equal(
        OnnxClassifier(result.tuned).logits(_crops(2)),
        OnnxClassifier(DEFAULT_MODEL).logits(_crops(2)),
    )


def test_a_table_with_nothing_to_tune_on_says_so(tmp_path: Path) -> None:
    all_held_out = {p.name for p in (DATA / "images").iterdir()}
    table = _table(tmp_path / "table", all_held_out)
    with pytest.raises(TuneError, match="no labelled photo to tune on .* 5 are held out"):
        tune_heads([table], tmp_path / "out")
    with pytest.raises(TuneError, match="no labels.jsonl there"):
        tune_heads([tmp_path], tmp_path / "out")
    (tmp_path / "labels.jsonl").write_text('{"image": "images/a.jpg"}\n')
    with pytest.raises(TuneError, match=r"labels\.jsonl line 1: a record has \"dice\""):
        tune_heads([tmp_path], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_folds_measure_every_photo_with_a_layer_that_never_saw_it(tmp_path: Path) -> None:
    """Cross-validated by game: every photo is read by the baseline and by a layer tuned on the
    other folds; the layer kept is tuned on all of them."""
    table = _table(tmp_path / "table", {"valid_valid_50.jpg"})
    records = table_records([table])
    groups = game_folds([table], records, 3)
    assert sum(len(g) for g in groups) == 5  # each photo is a game of its own here
    result = tune_heads([table], tmp_path / "out", HeadConfig(threads=2, folds=3))
    report = result.report
    assert report["train_photos"] == 5
    assert report["folds"] == sum(1 for g in groups if g)
    assert result.comparison.photos == 5  # all of them, not the one held out
    assert len(list((tmp_path / "out" / "folds").glob("fold-*.onnx"))) == report["folds"]
    reader = DiceReader(OnnxClassifier(result.tuned))
    assert evaluate_folder(DATA, box_reader(reader)).exact == 5


def test_a_table_export_keeps_each_game_in_one_fold(tmp_path: Path) -> None:
    """Photos of one game look alike (the same dice and light): they are never split up."""
    table = _table(tmp_path / "table", set())
    lines = (table / "labels.jsonl").read_text().splitlines()
    games = [1, 1, 2, 2, 2]
    records_json = [
        json.loads(line) | {"game": game} for line, game in zip(lines, games, strict=True)
    ]
    (table / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records_json))
    groups = game_folds([table], table_records([table]), 5)
    fold_of = {r.path.name: k for k, group in enumerate(groups) for r in group}
    names = [Path(r["image"]).name for r in records_json]
    assert len({fold_of[name] for name in names[:2]}) == 1
    assert len({fold_of[name] for name in names[2:]}) == 1
