"""Composing face models: logits are mean log-probabilities over the models and four turns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

import onnxruntime as ort  # noqa: E402

from vision.train.ensemble import compose, join_models  # noqa: E402
from vision.train.export import export_onnx  # noqa: E402
from vision.train.train import FaceNet  # noqa: E402


def _run(path: Path, images: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    out: np.ndarray = session.run(["logits"], {"image": images})[0]
    return out


def _log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=1, keepdims=True)
    out: np.ndarray = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return out


def test_joined_model_gives_the_mean_log_probabilities(tmp_path: Path) -> None:
    paths = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        path = tmp_path / f"m{seed}.onnx"
        export_onnx(FaceNet((8, 8, 16, 16)).eval(), path)
        paths.append(path)
    joined = tmp_path / "joined.onnx"
    onnx.save(join_models(paths[0], paths[1]), str(joined))
    images = np.random.default_rng(0).random((3, 3, 64, 64)).astype(np.float32)
    first, second = (_run(p, images) for p in paths)
    assert not np.allclose(first, second)
    want = (_log_softmax(first) + _log_softmax(second)) / 2
    np.testing.assert_allclose(_run(joined, images), want, atol=1e-5)
    session = ort.InferenceSession(str(joined), providers=["CPUExecutionProvider"])
    (inp,) = session.get_inputs()
    assert inp.name == "image"
    assert inp.shape[1:] == [3, 64, 64]


@pytest.mark.parametrize("members", [1, 2])
def test_rotations_average_the_four_turns_of_every_member(tmp_path: Path, members: int) -> None:
    paths = []
    for seed in range(members):
        torch.manual_seed(seed + 10)
        path = tmp_path / f"m{seed}.onnx"
        export_onnx(FaceNet((8, 8, 16, 16)).eval(), path)
        paths.append(path)
    composed = tmp_path / "composed.onnx"
    onnx.save(compose(paths, rotations=True), str(composed))
    images = np.random.default_rng(1).random((5, 3, 64, 64)).astype(np.float32)
    turns = [np.ascontiguousarray(np.rot90(images, k, axes=(2, 3))) for k in range(4)]
    want = np.mean([_log_softmax(_run(p, t)) for p in paths for t in turns], axis=0)
    got = _run(composed, images)
    np.testing.assert_allclose(got, want, atol=1e-5)
    # So a crop turned a quarter reads exactly as before; a single member alone would not.
    np.testing.assert_allclose(_run(composed, turns[1]), got, atol=1e-5)
    assert np.abs(_run(paths[0], turns[1]) - _run(paths[0], images)).max() > 1e-6


def test_compose_refuses_no_models() -> None:
    with pytest.raises(ValueError, match="at least one model"):
        compose([], rotations=True)
