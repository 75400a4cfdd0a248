"""Just enough of the ONNX file format to split a composed face model, without the onnx package.

An ONNX file is one protobuf ``ModelProto``. The reader needs only to pick a composed model's
members out of it (``vision.classify``) and to find the tensor a die check reads
(``vision.die_check``); importing the ``onnx`` package for that cost a reader about 17 MB and half
a second at start on this host (models/EXPERIMENTS.md, "A reader without the onnx package").
So this reads protobuf's wire format for the few fields those need, keeps every other field as
the bytes it was, and writes models back in the order protobuf itself writes them: a member is
byte for byte the model ``onnx.helper.make_model`` gives (tests/vision/test_onnx_wire.py).

Field numbers are onnx.proto's; the tests check them against the onnx package's own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = [
    "FLOAT",
    "Graph",
    "Model",
    "Node",
    "Tensor",
    "WireError",
    "encode_field",
    "parse_model",
    "tensor_info",
]

# onnx.proto's field numbers (ModelProto, GraphProto, NodeProto, TensorProto, ValueInfoProto,
# TypeProto, TypeProto.Tensor, TensorShapeProto, TensorShapeProto.Dimension).
MODEL_IR_VERSION, MODEL_GRAPH, MODEL_OPSET_IMPORT = 1, 7, 8
GRAPH_NODE, GRAPH_NAME, GRAPH_INITIALIZER, GRAPH_INPUT, GRAPH_OUTPUT = 1, 2, 5, 11, 12
NODE_INPUT, NODE_OUTPUT, NODE_OP_TYPE = 1, 2, 4
TENSOR_NAME = 8
INFO_NAME, INFO_TYPE = 1, 2
TYPE_TENSOR = 1
TENSOR_TYPE_ELEM, TENSOR_TYPE_SHAPE = 1, 2
SHAPE_DIM = 1
DIM_VALUE, DIM_PARAM = 1, 2

FLOAT = 1
"""``TensorProto.FLOAT``, the element type of every tensor the reader asks for."""

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


class WireError(ValueError):
    """The bytes are not a protobuf message of the shape expected (a damaged or foreign file)."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    result = shift = 0
    while True:
        if pos >= len(data):
            raise WireError(f"a number runs past the end of the data at byte {pos}")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise WireError(f"a number longer than 10 bytes ends at byte {pos}")


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes, bytes]]:
    """Each field of a message in the order written: its number, its value (an int for a
    varint, the payload's bytes otherwise) and the field's own bytes, key included."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = _varint(data, pos)
        number, kind = key >> 3, key & 7
        value: int | bytes
        if kind == VARINT:
            value, pos = _varint(data, pos)
        elif kind in (FIXED64, FIXED32, LENGTH):
            if kind == LENGTH:
                size, pos = _varint(data, pos)
            else:
                size = 8 if kind == FIXED64 else 4
            if pos + size > len(data):
                raise WireError(f"field {number} at byte {start} runs past the end of the data")
            value = data[pos : pos + size]
            pos += size
        else:
            raise WireError(
                f"field {number} at byte {start} has wire type {kind}, which ONNX never uses"
            )
        if number == 0:
            raise WireError(f"a field numbered 0 at byte {start}")
        yield number, value, data[start:pos]


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_field(number: int, payload: bytes | int | str) -> bytes:
    """One field as protobuf writes it: a number as a varint, a string or a message (its
    bytes) length-delimited."""
    if isinstance(payload, int):
        return _encode_varint(number << 3 | VARINT) + _encode_varint(payload)
    raw = payload.encode() if isinstance(payload, str) else payload
    return _encode_varint(number << 3 | LENGTH) + _encode_varint(len(raw)) + raw


def _text(value: int | bytes, what: str) -> str:
    if isinstance(value, int):
        raise WireError(f"{what} is a number where a string was expected")
    try:
        return value.decode()
    except UnicodeDecodeError as err:
        raise WireError(f"{what} is not UTF-8: {err}") from err


def _message(value: int | bytes, what: str) -> bytes:
    if isinstance(value, int):
        raise WireError(f"{what} is a number where a message was expected")
    return value


@dataclass(frozen=True)
class Node:
    """One ``NodeProto``: what the splitting reads of it, and its bytes as written."""

    raw: bytes
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    @classmethod
    def parse(cls, raw: bytes) -> Node:
        """The node whose message is ``raw``."""
        op_type, inputs, outputs = "", [], []
        for number, value, _ in _fields(raw):
            if number == NODE_OP_TYPE:
                op_type = _text(value, "a node's op_type")
            elif number == NODE_INPUT:
                inputs.append(_text(value, "a node's input"))
            elif number == NODE_OUTPUT:
                outputs.append(_text(value, "a node's output"))
        return cls(raw, op_type, tuple(inputs), tuple(outputs))


@dataclass(frozen=True)
class Tensor:
    """One initializer (``TensorProto``): its name and its bytes as written."""

    raw: bytes
    name: str

    @classmethod
    def parse(cls, raw: bytes) -> Tensor:
        """The tensor whose message is ``raw``."""
        names = [_text(v, "a tensor's name") for n, v, _ in _fields(raw) if n == TENSOR_NAME]
        return cls(raw, names[-1] if names else "")


def _info_name(raw: bytes) -> str:
    names = [_text(v, "a value's name") for n, v, _ in _fields(raw) if n == INFO_NAME]
    return names[-1] if names else ""


@dataclass(frozen=True)
class Graph:
    """A ``GraphProto``'s nodes, initializers, inputs and outputs (``ValueInfoProto`` bytes)
    and name; its other fields (value_info, doc_string, ...) are not kept."""

    name: str
    nodes: tuple[Node, ...]
    initializers: tuple[Tensor, ...]
    inputs: tuple[bytes, ...]
    outputs: tuple[bytes, ...]

    @classmethod
    def parse(cls, raw: bytes) -> Graph:
        """The graph whose message is ``raw``."""
        name = ""
        nodes: list[Node] = []
        initializers: list[Tensor] = []
        inputs: list[bytes] = []
        outputs: list[bytes] = []
        for number, value, _ in _fields(raw):
            if number == GRAPH_NODE:
                nodes.append(Node.parse(_message(value, "a node")))
            elif number == GRAPH_NAME:
                name = _text(value, "the graph's name")
            elif number == GRAPH_INITIALIZER:
                initializers.append(Tensor.parse(_message(value, "an initializer")))
            elif number == GRAPH_INPUT:
                inputs.append(_message(value, "a graph input"))
            elif number == GRAPH_OUTPUT:
                outputs.append(_message(value, "a graph output"))
        return cls(name, tuple(nodes), tuple(initializers), tuple(inputs), tuple(outputs))

    @property
    def output_names(self) -> tuple[str, ...]:
        """The names of the graph's outputs, in order."""
        return tuple(_info_name(raw) for raw in self.outputs)

    def serialize(self) -> bytes:
        """The graph's message, its fields in protobuf's own order (by number)."""
        return b"".join(
            [
                *(encode_field(GRAPH_NODE, node.raw) for node in self.nodes),
                encode_field(GRAPH_NAME, self.name) if self.name else b"",
                *(encode_field(GRAPH_INITIALIZER, tensor.raw) for tensor in self.initializers),
                *(encode_field(GRAPH_INPUT, raw) for raw in self.inputs),
                *(encode_field(GRAPH_OUTPUT, raw) for raw in self.outputs),
            ]
        )


@dataclass(frozen=True)
class Model:
    """A ``ModelProto``: its IR version, opset imports (bytes as written) and graph. Its other
    fields (producer, doc strings, metadata) are not kept: onnxruntime needs none of them."""

    ir_version: int
    opset_imports: tuple[bytes, ...]
    graph: Graph

    def serialize(self) -> bytes:
        """The model's message, as protobuf writes it: what onnxruntime loads."""
        return b"".join(
            [
                encode_field(MODEL_IR_VERSION, self.ir_version) if self.ir_version else b"",
                encode_field(MODEL_GRAPH, self.graph.serialize()),
                *(encode_field(MODEL_OPSET_IMPORT, raw) for raw in self.opset_imports),
            ]
        )


def parse_model(data: bytes) -> Model:
    """The model in the bytes of an ONNX file; :class:`WireError` says where they are not one."""
    ir_version = 0
    opsets: list[bytes] = []
    graph: Graph | None = None
    for number, value, _ in _fields(data):
        if number == MODEL_IR_VERSION:
            if not isinstance(value, int):
                raise WireError("the model's ir_version is not a number")
            ir_version = value
        elif number == MODEL_OPSET_IMPORT:
            opsets.append(_message(value, "an opset import"))
        elif number == MODEL_GRAPH:
            graph = Graph.parse(_message(value, "the model's graph"))
    if graph is None:
        raise WireError("the data hold no graph: not an ONNX model")
    return Model(ir_version, tuple(opsets), graph)


def tensor_info(name: str, shape: Sequence[int | str] | None = None) -> bytes:
    """A ``ValueInfoProto`` for a float tensor ``name`` (what ``onnx.helper.make_tensor_value_info``
    writes): ``shape`` gives each dimension as a size or a name, None leaves the shape unknown."""
    tensor = encode_field(TENSOR_TYPE_ELEM, FLOAT)
    if shape is not None:
        dims = b"".join(
            encode_field(SHAPE_DIM, encode_field(DIM_PARAM if isinstance(d, str) else DIM_VALUE, d))
            for d in shape
        )
        tensor += encode_field(TENSOR_TYPE_SHAPE, dims)
    kind = encode_field(TYPE_TENSOR, tensor)
    return encode_field(INFO_NAME, name) + encode_field(INFO_TYPE, kind)
