"""Shared fixtures of the vision tests: a pip-counting fake classifier and a tiny ONNX model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from vision.classify import FakeClassifier
from vision.onnx_wire import encode_field as _field
from vision.onnx_wire import tensor_info

# --- A hand-written ONNX file: protobuf encoded field by field, so no `onnx` package is needed.


def _tensor(name: str, array: npt.NDArray[np.float32]) -> bytes:
    dims = b"".join(_field(1, d) for d in array.shape)
    return dims + _field(2, 1) + _field(8, name) + _field(9, array.astype("<f4").tobytes())


def _node(op: str, inputs: list[str], outputs: list[str], attributes: bytes = b"") -> bytes:
    body = b"".join(_field(1, i) for i in inputs) + b"".join(_field(2, o) for o in outputs)
    return body + _field(4, op) + attributes


def tiny_model_bytes(
    weights: npt.NDArray[np.float32],
    bias: npt.NDArray[np.float32],
    *,
    input_name: str = "image",
    output_name: str = "logits",
    batch: int | str = "N",
) -> bytes:
    """An ONNX model: logits = mean colour of the (N,3,64,64) image @ weights (3x7) + bias."""
    flatten_axis = _field(5, _field(1, "axis") + _field(3, 1) + _field(20, 2))
    graph = (
        _field(1, _node("GlobalAveragePool", [input_name], ["pooled"]))
        + _field(1, _node("Flatten", ["pooled"], ["flat"], flatten_axis))
        + _field(1, _node("MatMul", ["flat", "W"], ["scores"]))
        + _field(1, _node("Add", ["scores", "B"], [output_name]))
        + _field(2, "tiny")
        + _field(5, _tensor("W", weights))
        + _field(5, _tensor("B", bias))
        + _field(11, tensor_info(input_name, [batch, 3, 64, 64]))
        + _field(12, tensor_info(output_name, [batch, 7]))
    )
    opset = _field(1, "") + _field(2, 13)
    return _field(1, 8) + _field(2, "pipcam-tests") + _field(7, graph) + _field(8, opset)


TINY_WEIGHTS = np.array(
    [
        [0.0, 4.0, 0.0, 0.0, 1.0, 0.0, 2.0],  # red
        [0.0, 0.0, 4.0, 0.0, 1.0, 0.0, 2.0],  # green
        [0.0, 0.0, 0.0, 4.0, 1.0, 0.0, 2.0],  # blue
    ],
    np.float32,
)
TINY_BIAS = np.array([0.5, 0.0, 0.0, 0.0, 0.0, 0.1, -1.0], np.float32)


@pytest.fixture
def tiny_model(tmp_path: Path) -> Path:
    """Path of a tiny valid face-model file (input "image", output "logits")."""
    path = tmp_path / "tiny.onnx"
    path.write_bytes(tiny_model_bytes(TINY_WEIGHTS, TINY_BIAS))
    return path


@pytest.fixture
def tiny_weights() -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The tiny model's weights (3x7) and bias (7)."""
    return TINY_WEIGHTS, TINY_BIAS


@pytest.fixture
def model_bytes() -> Callable[..., bytes]:
    """The tiny-model builder, for tests that need other names or shapes."""
    return tiny_model_bytes


# --- A classifier that reads synthetic dice classically, so reader tests need no trained model.


def count_pips(crop: npt.NDArray[np.float32]) -> tuple[int, float]:
    """Count the dark pips on the bright die in a model crop; class 0 if it is no die face."""
    grey = cv2.cvtColor((crop.transpose(1, 2, 0) * 255).astype(np.uint8), cv2.COLOR_RGB2GRAY)
    bright = (grey > 170).astype(np.uint8) * 255
    contours, _ = cv2.findContours(bright, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return 0, 0.97
    die = np.zeros_like(bright)
    cv2.drawContours(die, [max(contours, key=cv2.contourArea)], -1, 255, -1)
    die = np.asarray(cv2.erode(die, np.ones((3, 3), np.uint8)), np.uint8)
    pips = ((grey < 100) & (die > 0)).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(pips)
    found = int(np.count_nonzero(stats[1:, cv2.CC_STAT_AREA] >= 4))
    if 1 <= found <= 6:
        return found, 0.99
    return 0, 0.97


@pytest.fixture
def pip_classifier() -> FakeClassifier:
    """A FakeClassifier that counts pips, right on the synthetic frames."""
    return FakeClassifier(count_pips)
