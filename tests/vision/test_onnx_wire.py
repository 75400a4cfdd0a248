"""vision.onnx_wire against the onnx package, which the reader no longer imports."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from vision import onnx_wire as wire
from vision.classify import (
    CLASSES,
    DEFAULT_MODEL,
    FLOAT_MODEL,
    last_linear,
    members_of,
    softmax,
    with_outputs,
)
from vision.die_check import model_features
from vision.errors import ModelLoadError

ROOT = Path(__file__).resolve().parents[2]

SHIPPED = [DEFAULT_MODEL, FLOAT_MODEL]


@pytest.mark.parametrize(
    ("message", "field", "number"),
    [
        (onnx.ModelProto, "ir_version", wire.MODEL_IR_VERSION),
        (onnx.ModelProto, "graph", wire.MODEL_GRAPH),
        (onnx.ModelProto, "opset_import", wire.MODEL_OPSET_IMPORT),
        (onnx.GraphProto, "node", wire.GRAPH_NODE),
        (onnx.GraphProto, "name", wire.GRAPH_NAME),
        (onnx.GraphProto, "initializer", wire.GRAPH_INITIALIZER),
        (onnx.GraphProto, "input", wire.GRAPH_INPUT),
        (onnx.GraphProto, "output", wire.GRAPH_OUTPUT),
        (onnx.NodeProto, "input", wire.NODE_INPUT),
        (onnx.NodeProto, "output", wire.NODE_OUTPUT),
        (onnx.NodeProto, "op_type", wire.NODE_OP_TYPE),
        (onnx.TensorProto, "name", wire.TENSOR_NAME),
        (onnx.ValueInfoProto, "name", wire.INFO_NAME),
        (onnx.ValueInfoProto, "type", wire.INFO_TYPE),
        (onnx.TypeProto, "tensor_type", wire.TYPE_TENSOR),
        (onnx.TypeProto.Tensor, "elem_type", wire.TENSOR_TYPE_ELEM),
        (onnx.TypeProto.Tensor, "shape", wire.TENSOR_TYPE_SHAPE),
        (onnx.TensorShapeProto, "dim", wire.SHAPE_DIM),
        (onnx.TensorShapeProto.Dimension, "dim_value", wire.DIM_VALUE),
        (onnx.TensorShapeProto.Dimension, "dim_param", wire.DIM_PARAM),
    ],
)
def test_field_numbers_are_onnx_protos(message: type, field: str, number: int) -> None:
    assert message.DESCRIPTOR.fields_by_name[field].number == number  # type: ignore[attr-defined]


def test_float_is_onnx_float() -> None:
    assert wire.FLOAT == TensorProto.FLOAT


@pytest.mark.parametrize(
    "shape", [None, ["batch", CLASSES], [1, 3, 64, 64], ["n"], [300, 0], [2**40]]
)
def test_tensor_info_is_what_the_onnx_helper_writes(shape: Sequence[int | str] | None) -> None:
    want = helper.make_tensor_value_info("m0/logp", TensorProto.FLOAT, shape)
    assert wire.tensor_info("m0/logp", shape) == want.SerializeToString()


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_a_shipped_model_read_and_written_again_keeps_its_graph(path: Path) -> None:
    data = path.read_bytes()
    model = wire.parse_model(data)
    again = onnx.load_from_string(model.serialize())
    whole = onnx.load_from_string(data)
    assert again.ir_version == whole.ir_version
    assert list(again.opset_import) == list(whole.opset_import)
    assert again.graph.name == whole.graph.name
    assert list(again.graph.node) == list(whole.graph.node)
    assert list(again.graph.initializer) == list(whole.graph.initializer)
    assert list(again.graph.input) == list(whole.graph.input)
    assert list(again.graph.output) == list(whole.graph.output)
    assert model.graph.output_names == tuple(o.name for o in whole.graph.output)
    for node, raw in zip(model.graph.nodes, whole.graph.node, strict=True):
        assert node.raw == raw.SerializeToString()
        assert (node.op_type, node.inputs, node.outputs) == (
            raw.op_type,
            tuple(raw.input),
            tuple(raw.output),
        )


def _members_by_helper(model: onnx.ModelProto, count: int) -> list[bytes]:
    """The members as the onnx helper builds them: what the reader split with before."""
    graph = model.graph
    out = []
    for i in range(count):
        prefix = f"m{i}/"
        nodes = [n for n in graph.node if n.output and all(o.startswith(prefix) for o in n.output)]
        inits = [t for t in graph.initializer if t.name.startswith(prefix)]
        logp = nodes[-1].output[0]
        output = helper.make_tensor_value_info(logp, TensorProto.FLOAT, ["batch", CLASSES])
        sub = helper.make_graph(nodes, f"{graph.name}/{prefix}", [graph.input[0]], [output], inits)
        member = helper.make_model(sub, opset_imports=list(model.opset_import))
        member.ir_version = model.ir_version
        out.append(member.SerializeToString())
    return out


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_the_shipped_members_are_byte_for_byte_the_helpers(path: Path) -> None:
    members = members_of(wire.parse_model(path.read_bytes()))
    assert len(members) == 2
    want = _members_by_helper(onnx.load(str(path)), 2)
    assert [m.serialize() for m in members] == want


def test_the_shipped_members_average_to_the_shipped_logits() -> None:
    import onnxruntime as ort

    data = DEFAULT_MODEL.read_bytes()
    crops = np.random.default_rng(7).random((5, 3, 64, 64), dtype=np.float32)
    whole = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    (logits,) = whole.run(["logits"], {"image": crops})
    logps = []
    for member in members_of(wire.parse_model(data)):
        session = ort.InferenceSession(member.serialize(), providers=["CPUExecutionProvider"])
        logps.append(session.run(None, {"image": crops})[0])
    np.testing.assert_allclose(softmax(np.mean(logps, axis=0)), softmax(logits), atol=1e-5)


def test_the_features_output_is_the_last_linear_layers_input() -> None:
    import onnxruntime as ort

    first = members_of(wire.parse_model(DEFAULT_MODEL.read_bytes()))[0]
    index = last_linear(first.graph)
    assert index is not None
    assert first.graph.nodes[index].op_type == "Gemm"
    features = first.graph.nodes[index].inputs[0]
    assert model_features(DEFAULT_MODEL)[0] == features
    both = with_outputs(first, features)
    alone = with_outputs(first, features, replace=True)
    assert both.graph.output_names == (*first.graph.output_names, features)
    assert alone.graph.output_names == (features,)
    crops = np.random.default_rng(3).random((2, 3, 64, 64), dtype=np.float32)
    got = ort.InferenceSession(alone.serialize(), providers=["CPUExecutionProvider"])
    (pooled,) = got.run(None, {"image": crops})
    assert pooled.shape[0] == 2
    assert pooled.reshape(2, -1).shape[1] > CLASSES


@pytest.mark.parametrize(
    ("message", "words"),
    [
        (onnx.ModelProto(ir_version=8), "no graph: not an ONNX model"),
        (helper.make_opsetid("ai.onnx", 17), "the model's ir_version is not a number"),
    ],
)
def test_a_message_that_is_no_model_is_refused(
    message: onnx.ModelProto | onnx.OperatorSetIdProto, words: str
) -> None:
    with pytest.raises(wire.WireError, match=words):
        wire.parse_model(message.SerializeToString())


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"\x08", "runs past the end of the data at byte 1"),
        (b"\x08" + b"\xff" * 11, "longer than 10 bytes"),
        (b"\x3a\x05ab", "field 7 at byte 0 runs past the end"),
        (b"\x0b", "wire type 3, which ONNX never uses"),
        (b"\x02\x00", "a field numbered 0 at byte 0"),
        (b"\x38\x01", "the model's graph is a number where a message was expected"),
        (b"\x3a\x02\x10\x01", "the graph's name is a number where a string was expected"),
        (b"\x3a\x03\x12\x01\xff", "the graph's name is not UTF-8"),
    ],
)
def test_damaged_bytes_say_what_and_where(data: bytes, words: str) -> None:
    with pytest.raises(wire.WireError, match=words):
        wire.parse_model(data)


@settings(max_examples=200, deadline=None)
@given(cut=st.integers(min_value=0, max_value=4000), noise=st.binary(max_size=64))
def test_any_damage_is_a_wire_error_or_a_model(cut: int, noise: bytes) -> None:
    # The file cut anywhere in its first 4000 bytes (graph, first nodes), then anything.
    data = DEFAULT_MODEL.read_bytes()[:cut] + noise
    with contextlib.suppress(wire.WireError):
        wire.parse_model(data)


def test_a_damaged_face_model_gives_no_die_check_features(tmp_path: Path) -> None:
    path = tmp_path / "damaged.onnx"
    path.write_bytes(DEFAULT_MODEL.read_bytes()[:1000])
    with pytest.raises(ModelLoadError, match=f"cannot load face model {str(path)!r}: "):
        model_features(path)


def test_reading_a_photo_does_not_import_the_onnx_package() -> None:
    # The onnx package costs a reader about 17 MB and half a second at start (vision.onnx_wire).
    script = (
        "import sys, cv2\n"
        "from pipcam.vision_cli import build_reader\n"
        "from vision.die_check import die_checker_for\n"
        "from vision.classify import DEFAULT_MODEL\n"
        "assert die_checker_for(DEFAULT_MODEL) is not None\n"
        "photo = sorted(__import__('pathlib').Path('tests/data/dice/images').iterdir())[0]\n"
        "reading = build_reader().read(cv2.imread(str(photo)))\n"
        "assert reading.dice, photo\n"
        "print(sorted(m for m in sys.modules if m == 'onnx' or m.startswith('onnx.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
