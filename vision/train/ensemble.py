"""Join two face models into one ONNX file whose logits are their mean log-probabilities.

``python -m vision.train.ensemble A.onnx B.onnx OUT.onnx``: both take "image" [N, 3, 64, 64] and
give "logits" [N, 7]; the joined model keeps that contract. Softmax of the mean log-softmax is the
normalised geometric mean of the two models' probabilities.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

__all__ = ["join_models"]


def _prefixed(model: onnx.ModelProto, prefix: str) -> onnx.GraphProto:
    """The model's graph with every name but the input "image" prefixed."""
    graph = onnx.compose.add_prefix(model, prefix).graph
    for node in graph.node:
        node.input[:] = ["image" if name == prefix + "image" else name for name in node.input]
    return graph


def join_models(first: Path, second: Path) -> onnx.ModelProto:
    """One model whose "logits" are the mean of the two models' log-softmax outputs."""
    a = _prefixed(onnx.load(str(first)), "a/")
    b = _prefixed(onnx.load(str(second)), "b/")
    half = numpy_helper.from_array(np.array(0.5, np.float32), "ensemble/half")
    nodes = [
        *a.node,
        *b.node,
        helper.make_node("LogSoftmax", ["a/logits"], ["ensemble/a"], axis=1),
        helper.make_node("LogSoftmax", ["b/logits"], ["ensemble/b"], axis=1),
        helper.make_node("Add", ["ensemble/a", "ensemble/b"], ["ensemble/sum"]),
        helper.make_node("Mul", ["ensemble/sum", "ensemble/half"], ["logits"]),
    ]
    image = onnx.load(str(first)).graph.input[0]
    logits = onnx.load(str(first)).graph.output[0]
    graph = helper.make_graph(
        nodes,
        "dice_faces_ensemble",
        [image],
        [logits],
        initializer=[*a.initializer, *b.initializer, half],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = onnx.load(str(first)).ir_version
    onnx.checker.check_model(model)
    return model


def main(argv: list[str] | None = None) -> int:
    """Join two models and write the result; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m vision.train.ensemble", description=__doc__)
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    onnx.save(join_models(args.first, args.second), str(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
