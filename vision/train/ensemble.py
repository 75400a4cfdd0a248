"""Compose face models into one ONNX file: several models, and each crop seen at four turns.

``python -m vision.train.ensemble OUT.onnx A.onnx [B.onnx ...] [--rotations] [--reports A.json ...
--card MODEL_CARD.md] [--record TEST_FOLDER]``: every model takes
"image" [N, 3, 64, 64] and gives "logits" [N, 7]; the composed model keeps that contract. Its
logits are the mean log-softmax over the models and, with ``--rotations``, over the crop turned by
0, 90, 180 and 270 degrees. A die's value does not depend on how it lies, so averaging the four
turns removes what a model learnt about one orientation by chance. Softmax of the mean log-softmax
is the normalised geometric mean of the probabilities. One model without ``--rotations`` is
installed byte for byte as it was trained (nothing to average).

``python -m vision.train.ensemble --member N OUT.onnx COMPOSED.onnx`` takes member N (from 1) out
of a composed model as a model of its own, with its own logits: to compose a newly trained
member with one already shipped, whose training folder is gone.
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

__all__ = ["compose", "join_models", "take_member"]

INPUT = "image"
OUTPUT = "logits"
TURNS = 4


def _member_prefix(index: int) -> str:
    """What every name of member ``index`` (from 0) is prefixed with in a composed model."""
    return f"m{index}/"


def _prefixed(model: onnx.ModelProto, prefix: str, source: str) -> onnx.GraphProto:
    """The model's graph with every name prefixed and its input read from ``source``."""
    graph = onnx.compose.add_prefix(model, prefix).graph
    for node in graph.node:
        node.input[:] = [source if name == prefix + INPUT else name for name in node.input]
    return graph


def _flip(source: str, out: str, axes: Sequence[int]) -> list[onnx.NodeProto]:
    """Nodes reversing ``source`` along ``axes`` (a Slice with step -1)."""
    count = len(axes)
    names = [f"{out}/{part}" for part in ("starts", "ends", "axes", "steps")]
    values = [[-1] * count, [-(2**63)] * count, list(axes), [-1] * count]
    nodes = [
        helper.make_node(
            "Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64), name)
        )
        for name, v in zip(names, values, strict=True)
    ]
    nodes.append(helper.make_node("Slice", [source, *names], [out]))
    return nodes


def _turns(source: str) -> tuple[list[onnx.NodeProto], str]:
    """Nodes stacking ``source`` turned by 0, 90, 180 and 270 degrees along the batch axis."""
    nodes = [
        helper.make_node("Transpose", [source], ["turns/swapped"], perm=[0, 1, 3, 2]),
        *_flip("turns/swapped", "turns/r90", [3]),
        *_flip(source, "turns/r180", [2, 3]),
        *_flip("turns/r90", "turns/r270", [2, 3]),
        helper.make_node(
            "Concat", [source, "turns/r90", "turns/r180", "turns/r270"], ["turns/all"], axis=0
        ),
    ]
    return nodes, "turns/all"


def compose(models: Sequence[Path], *, rotations: bool) -> onnx.ModelProto:
    """One model whose logits are the mean log-softmax over ``models`` (and four turns)."""
    if not models:
        raise ValueError("compose needs at least one model")
    first = onnx.load(str(models[0]))
    nodes: list[onnx.NodeProto] = []
    initializers: list[onnx.TensorProto] = []
    source = INPUT
    if rotations:
        turn_nodes, source = _turns(INPUT)
        nodes.extend(turn_nodes)
    outputs = []
    for index, path in enumerate(models):
        prefix = _member_prefix(index)
        graph = _prefixed(onnx.load(str(path)), prefix, source)
        nodes.extend(graph.node)
        initializers.extend(graph.initializer)
        nodes.append(helper.make_node("LogSoftmax", [prefix + OUTPUT], [prefix + "logp"], axis=1))
        outputs.append(prefix + "logp")
    nodes.append(helper.make_node("Sum", outputs, ["compose/sum"]))
    scale = numpy_helper.from_array(np.array(1.0 / len(models), np.float32), "compose/scale")
    initializers.append(scale)
    if rotations:
        shape = numpy_helper.from_array(np.array([TURNS, -1, 7], np.int64), "compose/shape")
        initializers.append(shape)
        nodes += [
            helper.make_node("Mul", ["compose/sum", "compose/scale"], ["compose/mean"]),
            helper.make_node("Reshape", ["compose/mean", "compose/shape"], ["compose/by_turn"]),
            helper.make_node("ReduceMean", ["compose/by_turn"], [OUTPUT], axes=[0], keepdims=0),
        ]
    else:
        nodes.append(helper.make_node("Mul", ["compose/sum", "compose/scale"], [OUTPUT]))
    graph = helper.make_graph(
        nodes,
        "dice_faces",
        [first.graph.input[0]],
        [first.graph.output[0]],
        initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = first.ir_version
    onnx.checker.check_model(model)
    return model


def join_models(first: Path, second: Path) -> onnx.ModelProto:
    """One model whose "logits" are the mean of the two models' log-softmax outputs."""
    return compose([first, second], rotations=False)


def take_member(model: onnx.ModelProto, number: int) -> onnx.ModelProto:
    """Member ``number`` (from 1) of a model :func:`compose` made without turns, as a model of
    its own: "image" in, the member's own "logits" out, every name as it was before composing.

    Composed again with the other members it gives the composed logits exactly.
    """
    from vision.classify import member_models

    members = member_models(model)
    if not members:
        raise ValueError(
            "this model is not a composition of face models without turns, so it has no members"
            " to take; take members from a file `python -m vision.train.ensemble` wrote"
        )
    if not 1 <= number <= len(members):
        raise ValueError(f"the model has members 1 to {len(members)}, not {number}")
    member = members[number - 1]
    graph = member.graph
    last = graph.node[-1]
    prefix = _member_prefix(number - 1)
    if last.op_type != "LogSoftmax" or last.input[0] != prefix + OUTPUT:
        raise ValueError(f"member {number} does not end in its own {OUTPUT!r} and a LogSoftmax")
    graph.node.remove(last)

    def bare(name: str) -> str:
        return name[len(prefix) :] if name.startswith(prefix) else name

    for node in graph.node:
        node.name = bare(node.name)
        node.input[:] = [bare(name) for name in node.input]
        node.output[:] = [bare(name) for name in node.output]
    for tensor in graph.initializer:
        tensor.name = bare(tensor.name)
    for info in graph.value_info:
        info.name = bare(info.name)
    graph.output[0].name = OUTPUT
    onnx.checker.check_model(member)
    return member


def main(argv: list[str] | None = None) -> int:
    """Compose the models and write the result; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m vision.train.ensemble", description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("models", type=Path, nargs="+")
    parser.add_argument(
        "--rotations", action="store_true", help="average each crop over four turns"
    )
    parser.add_argument(
        "--reports", type=Path, nargs="*", default=[], help="each model's training report (JSON)"
    )
    parser.add_argument("--card", type=Path, default=None, help="write the model card here")
    parser.add_argument(
        "--record", type=Path, default=None, help="test folder whose dice get recorded logits"
    )
    parser.add_argument(
        "--member",
        type=int,
        default=None,
        metavar="N",
        help="take member N (from 1) out of the one composed model given, as a model of its own",
    )
    args = parser.parse_args(argv)
    if args.member is not None:
        if len(args.models) != 1 or args.rotations or args.card or args.record:
            parser.error("--member takes one composed model and no other option")
        try:
            member = take_member(onnx.load(str(args.models[0])), args.member)
        except ValueError as error:
            parser.error(f"{args.models[0]}: {error}")
        onnx.save(member, str(args.out))
        return 0
    if args.card is not None and len(args.reports) != len(args.models):
        parser.error("--card needs one --reports file per model")
    if len(args.models) == 1 and not args.rotations:
        if args.models[0].resolve() != args.out.resolve():
            shutil.copyfile(args.models[0], args.out)
    else:
        onnx.save(compose(args.models, rotations=args.rotations), str(args.out))
    if args.card is not None:
        from vision.train.card import write_composed_card
        from vision.train.export import sha256_of

        reports = [json.loads(p.read_text(encoding="utf-8")) for p in args.reports]
        write_composed_card(
            reports,
            args.card,
            sha256=sha256_of(args.out),
            size_bytes=args.out.stat().st_size,
            rotations=args.rotations,
        )
    if args.record is not None:
        from vision.train.export import record_outputs

        record_outputs(args.out, args.record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
