"""Export the face model to ONNX, check it against torch, and write its model card."""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import onnxruntime as ort

from vision.preprocess import MODEL_SIZE, crops_for_model
from vision.train.data import load_folder, read_image

if TYPE_CHECKING:
    from torch import nn

__all__ = ["check_onnx", "export_onnx", "record_outputs", "sha256_of"]

TOLERANCE = 1e-4


def export_onnx(model: nn.Module, path: Path) -> None:
    """Write ``model`` as ONNX: input "image" [N, 3, 64, 64], output "logits" [N, 7], N dynamic."""
    import torch  # here: hashing and recording a model's outputs need no torch

    model.eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    example = torch.rand(1, 3, MODEL_SIZE, MODEL_SIZE)
    with warnings.catch_warnings():
        # The TorchScript exporter is deprecated but needs no onnxscript, and this plain CNN is
        # exactly what it handles well.
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            model,
            (example,),
            str(path),
            input_names=["image"],
            output_names=["logits"],
            dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )


def check_onnx(model: nn.Module, path: Path, images: np.ndarray) -> float:
    """Largest absolute difference between torch and onnxruntime logits; raises above 1e-4."""
    import torch

    model.eval()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    got = session.run(["logits"], {"image": images.astype(np.float32)})[0]
    with torch.no_grad():
        want = model(torch.from_numpy(images.astype(np.float32))).numpy()
    difference = float(np.abs(got - want).max())
    if difference > TOLERANCE:
        raise RuntimeError(f"ONNX and torch differ by {difference:.2e} (limit {TOLERANCE:.0e})")
    return difference


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record_outputs(onnx_path: Path, folder: Path, name: str = "face_model_outputs.json") -> Path:
    """Run the ONNX model on every labelled die of a test folder; store the logits for tests
    in ``folder / name``."""
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    entries: list[dict[str, Any]] = []
    for record in load_folder(folder):
        if record.is_crop or not record.dice:
            continue
        image = read_image(record.path)
        boxes = [tuple(int(round(v)) for v in die.box) for die in record.dice]
        logits = session.run(["logits"], {"image": crops_for_model(image, boxes)})[0]
        entries.append(
            {
                "image": record.path.relative_to(folder).as_posix(),
                "boxes": [list(b) for b in boxes],
                "logits": np.round(logits.astype(np.float64), 5).tolist(),
            }
        )
    out = folder / name
    out.write_text(
        json.dumps({"model_sha256": sha256_of(onnx_path), "crops": entries}, indent=1) + "\n",
        encoding="utf-8",
    )
    return out
