"""Tuning a face model on a table's own photos: members rebuilt from the model file agree with it,
what cannot be tuned is refused with a reason, and a tuning run writes a model that still reads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
pytest.importorskip("efficientnet_lite_pytorch")

from onnx import helper  # noqa: E402
from torch import nn  # noqa: E402

from vision.classify import DEFAULT_MODEL, FLOAT_MODEL  # noqa: E402
from vision.preprocess import crops_for_model  # noqa: E402
from vision.source import read_image  # noqa: E402
from vision.train.backbone import EffFaceNet  # noqa: E402
from vision.train.ensemble import compose  # noqa: E402
from vision.train.export import export_onnx, sha256_of  # noqa: E402
from vision.train.train import FaceNet, TrainConfig, train  # noqa: E402
from vision.train.tune import (  # noqa: E402
    TuneError,
    check_rebuilt,
    main,
    member_weights,
    rebuild,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "dice"


def _records() -> list[dict[str, Any]]:
    lines = (DATA / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _real_crops() -> np.ndarray:
    """Crops of the committed photos' labelled dice, as the reader cuts them."""
    parts = []
    for record in _records():
        if "dice" not in record:
            continue
        image = read_image(DATA / str(record["image"]))
        boxes = [tuple(int(v) for v in d["box"]) for d in record["dice"]]
        parts.append(crops_for_model(image, boxes))
    return np.concatenate(parts).astype(np.float32)


def _trained_batch_norm(net: nn.Module) -> nn.Module:
    """A few training-mode passes, so batch norm holds statistics that folding must carry."""
    net.train()
    with torch.no_grad():
        for _ in range(3):
            net(torch.rand(16, 3, 64, 64) * 0.5 + 0.2)
    return net.eval()


def test_the_shipped_models_members_rebuild_to_what_the_file_computes() -> None:
    model = onnx.load(str(FLOAT_MODEL))
    weights = member_weights(model)
    assert [w.prefix for w in weights] == ["m0/", "m1/"]
    # The shipped EfficientNet looks at the crop enlarged to 96 px (MODEL_CARD.md).
    assert [w.view for w in weights] == [64, 96]
    members = [rebuild(w) for w in weights]
    assert isinstance(members[0], FaceNet)
    assert isinstance(members[1], EffFaceNet)
    assert check_rebuilt(members, model, _real_crops()) < 1e-4


def test_a_single_network_rebuilds_with_its_own_widths(tmp_path: Path) -> None:
    torch.manual_seed(3)
    net = _trained_batch_norm(FaceNet((8, 12, 16, 24)))
    path = tmp_path / "one.onnx"
    export_onnx(net, path)
    weights = member_weights(onnx.load(str(path)))
    assert [w.prefix for w in weights] == [""]
    rebuilt = rebuild(weights[0])
    images = torch.from_numpy(_real_crops())
    with torch.no_grad():
        assert float((rebuilt(images) - net(images)).abs().max()) < 1e-4


def test_an_efficientnet_with_a_larger_view_rebuilds_with_it(tmp_path: Path) -> None:
    """--view 96: the crop is resized inside the member; composed beside a plain CNN, the
    member is rebuilt with that view and computes what the file does."""
    torch.manual_seed(5)
    big = _trained_batch_norm(EffFaceNet(pretrained=False, view=96))
    plain = _trained_batch_norm(FaceNet((8, 12, 16, 24)))
    paths = [tmp_path / "plain.onnx", tmp_path / "big.onnx"]
    export_onnx(plain, paths[0])
    export_onnx(big, paths[1])
    model = compose(paths, rotations=False)
    weights = member_weights(model)
    assert [w.view for w in weights] == [64, 96]
    members = [rebuild(w) for w in weights]
    assert check_rebuilt(members, model, _real_crops()) < 1e-4
    with pytest.raises(ValueError, match="at least the crop's 64 px"):
        EffFaceNet(pretrained=False, view=48)


def test_a_model_without_a_face_network_is_refused() -> None:
    node = helper.make_node("Relu", ["image"], ["logits"])
    tensor = helper.make_tensor_value_info
    graph = helper.make_graph(
        [node],
        "not-faces",
        [tensor("image", onnx.TensorProto.FLOAT, [1, 3, 64, 64])],
        [tensor("logits", onnx.TensorProto.FLOAT, [1, 3, 64, 64])],
    )
    with pytest.raises(TuneError, match="no member with convolutions"):
        member_weights(helper.make_model(graph))


def test_training_from_a_network_cannot_resume_a_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="tune without one"):
        train(None, TrainConfig(), tmp_path / "ck.pt", start=FaceNet())  # type: ignore[arg-type]


def _table(tmp_path: Path) -> Path:
    """A table folder as `pipcam photos` writes one: photos with their split by game."""
    folder = tmp_path / "table"
    (folder / "images").mkdir(parents=True)
    lines = []
    for index, record in enumerate(_records()):
        shutil.copy(DATA / str(record["image"]), folder / str(record["image"]))
        # The first nell-byler photo is the held-out one; the others are tuned on.
        record["split"] = "val" if index == 0 else "train"
        lines.append(json.dumps(record))
    (folder / "labels.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_a_folder_without_labels_is_refused_with_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    assert "pipcam photos OUT" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_model_composed_with_turns_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        paths.append(tmp_path / f"m{seed}.onnx")
        export_onnx(_trained_batch_norm(FaceNet((8, 8, 16, 16))), paths[-1])
    turned = tmp_path / "turned.onnx"
    onnx.save(compose(paths, rotations=True), str(turned))
    code = main([str(_table(tmp_path)), "--model", str(turned), "--out", str(tmp_path / "out")])
    assert code == 1
    assert "--rotations" in capsys.readouterr().err


def test_the_int8_copy_is_refused_with_the_float_model_to_tune_instead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([str(_table(tmp_path)), "--model", str(DEFAULT_MODEL), "--out", str(tmp_path)])
    assert code == 1
    err = capsys.readouterr().err
    assert "int8 copy" in err
    assert FLOAT_MODEL.name in err


def test_tuning_writes_a_composed_model_that_still_reads_the_held_out_photo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    args = [str(_table(tmp_path)), "--out", str(out), "--epochs", "1", "--renders", "64"]
    assert main([*args, "--threads", "1"]) == 0
    tuned = onnx.load(str(out / "dice_faces.onnx"))
    assert [w.prefix for w in member_weights(tuned)] == ["m0/", "m1/"]
    shipped = [w.convs[0][0] for w in member_weights(onnx.load(str(FLOAT_MODEL)))]
    assert not np.array_equal([w.convs[0][0] for w in member_weights(tuned)][0], shipped[0])
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert [r["photos"] for r in report["before"]] == [1]
    # The held-out photo (six dice) is read exactly before and after a short, gentle tuning.
    assert report["before"][0]["exact_photos"] == 1
    assert report["after"][0]["exact_photos"] == 1
    # What the table reads with is the int8 copy of the tuned float model, as for the shipped one.
    int8 = onnx.load(str(out / "dice_faces.int8.onnx"))
    metadata = {p.key: p.value for p in int8.metadata_props}
    assert metadata["quantized_from"] == sha256_of(out / "dice_faces.onnx")
    assert any(n.op_type == "DequantizeLinear" for n in int8.graph.node)
    assert report["tuned"] == str(out / "dice_faces.int8.onnx")
    printed = capsys.readouterr().out
    assert f"PIPCAM_MODEL={out / 'dice_faces.int8.onnx'}" in printed


def test_untrained_members_compose_back_to_the_model_and_no_held_out_photo_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from vision.train import tune

    # Without training, rebuilding, exporting and composing must give back the shipped model.
    monkeypatch.setattr(tune, "tune_member", lambda member, *_: member)
    folder = _table(tmp_path)
    labels = folder / "labels.jsonl"
    records = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record["split"] = "train"
    labels.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "out"
    assert main([str(folder), "--out", str(out), "--renders", "8", "--threads", "1"]) == 0
    assert "no held-out photo" in capsys.readouterr().out
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["after"] == []
    rebuilt = [rebuild(w) for w in member_weights(onnx.load(str(FLOAT_MODEL)))]
    assert check_rebuilt(rebuilt, onnx.load(str(out / "dice_faces.onnx")), _real_crops()) < 1e-4
