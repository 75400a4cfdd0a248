"""The face model: crops in, class probabilities out. The only module that imports onnxruntime."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from vision.errors import ModelLoadError

__all__ = [
    "CLASSES",
    "DEFAULT_MODEL",
    "Classifier",
    "FakeClassifier",
    "OnnxClassifier",
    "onnxruntime_version",
    "softmax",
]

CLASSES = 7
"""Class 0 is "not a readable face"; classes 1..6 are the face values."""

DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "dice_faces.onnx"
"""Where the shipped face model lives in the source tree."""

Crops = npt.NDArray[np.float32]
Probabilities = npt.NDArray[np.float32]


class Classifier(Protocol):
    """Anything that turns (N, 3, 64, 64) RGB crops into (N, 7) class probabilities."""

    def predict(self, crops: Crops) -> Probabilities:
        """Return softmax probabilities, one row per crop."""
        ...


def softmax(logits: npt.NDArray[np.floating[Any]]) -> Probabilities:
    """Return the row-wise softmax of ``logits`` as float32.

    >>> softmax(np.array([[0.0, 0.0]])).tolist()
    [[0.5, 0.5]]
    """
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    exp = np.exp(shifted)
    return np.asarray(exp / np.sum(exp, axis=1, keepdims=True), dtype=np.float32)


def onnxruntime_version() -> str:
    """Return the installed onnxruntime version."""
    import onnxruntime

    return str(onnxruntime.__version__)


class OnnxClassifier:
    """The ONNX face model run by onnxruntime on the CPU with a fixed number of threads."""

    def __init__(self, model_path: str | os.PathLike[str] = DEFAULT_MODEL, *, threads: int = 1):
        """Load the model; raise :class:`ModelLoadError` naming the file and what to do."""
        import onnxruntime

        self.path = Path(model_path)
        if not self.path.is_file():
            raise ModelLoadError(
                f"face model {str(self.path)!r} not found: pass --model PATH, or restore"
                f" models/dice_faces.onnx from the repository"
            )
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        options = onnxruntime.SessionOptions()
        # Set both explicitly: by default onnxruntime spreads over every core, which on a Pi also
        # runs the camera and the web server, and makes timings depend on the machine.
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            self._session = onnxruntime.InferenceSession(
                str(self.path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as err:  # onnxruntime raises its own untyped errors for bad files
            raise ModelLoadError(
                f"cannot load face model {str(self.path)!r}: {err}; the file is damaged or not an"
                f" ONNX model: restore models/dice_faces.onnx or retrain it (vision/train)"
            ) from err
        inputs = {i.name: i for i in self._session.get_inputs()}
        outputs = {o.name: o for o in self._session.get_outputs()}
        if "image" not in inputs or "logits" not in outputs:
            raise ModelLoadError(
                f"face model {str(self.path)!r} has inputs {sorted(inputs)} and outputs"
                f" {sorted(outputs)}; expected input 'image' and output 'logits'"
            )
        batch = inputs["image"].shape[0]
        # A model exported with a fixed batch of 1 is run one crop at a time.
        self._batch = batch if isinstance(batch, int) and batch > 0 else None

    def __repr__(self) -> str:
        return f"OnnxClassifier({str(self.path)!r})"

    def logits(self, crops: Crops) -> npt.NDArray[np.float32]:
        """Return the model's raw (N, 7) logits for ``crops``."""
        crops = np.ascontiguousarray(crops, dtype=np.float32)
        if len(crops) == 0:
            return np.zeros((0, CLASSES), np.float32)
        if self._batch is None:
            (out,) = self._session.run(["logits"], {"image": crops})
            result = np.asarray(out, dtype=np.float32)
        else:
            parts = [
                self._session.run(["logits"], {"image": crops[i : i + self._batch]})[0]
                for i in range(0, len(crops), self._batch)
            ]
            result = np.concatenate(parts).astype(np.float32)
        if result.ndim != 2 or result.shape[1] != CLASSES:
            raise ModelLoadError(
                f"face model {str(self.path)!r} returned logits of shape {result.shape};"
                f" expected (N, {CLASSES})"
            )
        return result

    def predict(self, crops: Crops) -> Probabilities:
        """Return (N, 7) softmax probabilities for ``crops``."""
        return softmax(self.logits(crops))


class FakeClassifier:
    """A stand-in for tests: ``decide(crop) -> (class, confidence)`` answers each crop."""

    def __init__(self, decide: Callable[[npt.NDArray[np.float32]], tuple[int, float]]) -> None:
        """Keep the function that answers each crop; every batch seen is kept in ``calls``."""
        self.decide = decide
        self.calls: list[Crops] = []

    def predict(self, crops: Crops) -> Probabilities:
        """Return probabilities with ``confidence`` on the decided class, the rest shared out."""
        self.calls.append(crops)
        probs = np.zeros((len(crops), CLASSES), np.float32)
        for row, crop in enumerate(crops):
            label, confidence = self.decide(crop)
            probs[row, :] = (1.0 - confidence) / (CLASSES - 1)
            probs[row, label] = confidence
        return probs
