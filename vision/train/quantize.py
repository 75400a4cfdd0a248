"""Quantize the face model and the locator to 8-bit integers: the same readings in half the time.

``python -m vision.train.quantize [--data DIR] [--photos N] [--seed S] [--face IN OUT]
[--locator IN OUT] [--only face|locator] [--method M] [--record TEST_FOLDER]`` writes the int8
copies the reader runs (``models/dice_faces.int8.onnx`` and ``models/dice_locator.int8.onnx``
by default) from the float models training made (``models/dice_faces.onnx``,
``models/dice_locator.onnx``), which stay in the repository: tuning and retraining start from
their float weights.

Static post-training quantization with onnxruntime's own tool: weights int8 per output channel,
activations uint8 with ranges measured on calibration data, QDQ format, which onnxruntime
fuses into integer convolutions when it loads the file. The calibration data are the
*training* photos only (``vision.train.data.train_and_val``), a seeded sample: each die cut at
its labelled box plus the class-0 patches training cuts, and the locator's scaled input of the
same photos. The validation photos stay unseen, so ``pipcam eval`` measures the int8 models as
it measures the float ones.

Choices, and why:

- a composed face model is quantized member by member (``take_member``) and composed again, so
  the reader can still run the first member alone on the dice it is sure of;
- the layers that make the outputs stay float: the face model's last layer (the ``Gemm`` to
  seven logits), which ``vision.tuning`` refits on a table's photos, and the locator's two
  heads, whose heatmap is held against a threshold; both cost next to nothing;
- ranges by min / max (``--method``): percentile and entropy ranges read the held-out photos
  the same, die for die (models/MODEL_CARD.md);
- weights use 7 bits (``reduce_range``): x86 processors without VNNI add 8-bit products in 16-bit
  registers that can saturate, which would make readings depend on the machine;
- two kinds of layer are done in integers after quantizing, so that the int8 pair computes the
  same bytes on every processor: a member's enlargement of its input (the EfficientNet
  member's 64 -> 96 px bilinear ``Resize``, ``exact_upsampling``) and its quantized residual
  additions (``exact_additions``). A float resize rounds its last bit otherwise on ARM, and
  onnxruntime's fused integer addition rounds its float products otherwise (fused multiply-add
  on x86); values that lie at or within a hair of half a step then fall on the other side,
  and the layers after carry that on (0.11 log-prob apart on a Pi's processor under qemu).
  Convolutions and pooling already give the same bytes everywhere;
- each file records the sha256 of the float model it came from (``quantized_from`` in its
  metadata), so a test can tell when the float model changed and its int8 copy did not.
"""

from __future__ import annotations

import argparse
import math
import random
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper, numpy_helper

from vision.classify import (
    DEFAULT_LOCATOR_MODEL,
    DEFAULT_MODEL,
    FLOAT_LOCATOR_MODEL,
    FLOAT_MODEL,
    member_models,
)
from vision.detect import locator_input
from vision.train.data import (
    DEFAULT_DATA,
    CropSet,
    Record,
    cut_crops,
    load_sources,
    read_image,
    train_and_val,
)
from vision.train.ensemble import compose, take_member
from vision.train.export import sha256_of

__all__ = [
    "QUANTIZED_FROM",
    "calibration_photos",
    "exact_additions",
    "exact_upsampling",
    "face_calibration",
    "locator_calibration",
    "quantize_face_model",
    "quantize_locator",
]

QUANTIZED_FROM = "quantized_from"
"""Metadata key of an int8 file: the sha256 of the float model it was quantized from."""

CALIBRATION = "calibration"
"""Metadata key of an int8 file: what its activation ranges were measured on."""

BATCH = 32

METHODS: dict[str, Callable[[Any], Any]] = {
    "minmax": lambda m: m.MinMax,
    "percentile": lambda m: m.Percentile,
    "entropy": lambda m: m.Entropy,
}
"""How activation ranges are measured (onnxruntime's ``CalibrationMethod`` by name)."""

RECORDED_FACE = "face_model_int8_outputs.json"
RECORDED_LOCATOR = "locator_int8_outputs.json"
"""What ``--record`` writes in the test folder: the int8 models' outputs, beside the float ones'."""


def calibration_photos(records: Sequence[Record], photos: int, seed: int) -> list[Record]:
    """A seeded sample of ``photos`` training photos (never a validation one), crops included."""
    train, _ = train_and_val(records)
    chosen = sorted(train, key=lambda r: str(r.path))
    random.Random(seed).shuffle(chosen)
    return chosen[:photos]


def face_calibration(records: Sequence[Record], seed: int) -> npt.NDArray[np.float32]:
    """The face model's input for the calibration photos: every labelled die at its box and
    the class-0 patches training cuts, float32 (N, 3, 64, 64) RGB 0..1."""
    rng = np.random.default_rng(seed)
    parts = [cut_crops(r, rng, copies=1, negatives=True, augment=False) for r in records]
    images = CropSet.concat(parts).images
    return np.ascontiguousarray(images.transpose(0, 3, 1, 2), np.float32) / np.float32(255.0)


def locator_calibration(records: Sequence[Record]) -> list[npt.NDArray[np.float32]]:
    """The locator's input for the calibration photos (single crops of a die are left out)."""
    return [locator_input(read_image(r.path))[0] for r in records if not r.is_crop]


PIXEL = np.float32(1 / 255)
"""One uint8 step of the face model's input, which is RGB 0..1 as the crops' uint8 / 255."""


def _axis_taps(size: int, scale: float) -> tuple[list[int], list[int], list[int], list[int], int]:
    """Bilinear ``half_pixel`` taps of one axis enlarged ``scale`` times, in whole numbers: the
    two source indices of every output index and their weights over a common denominator."""
    exact = Fraction(scale)  # the float's own value, as onnxruntime divides by it
    points = []
    for out in range(math.floor(size * scale)):
        where = max((out + Fraction(1, 2)) / exact - Fraction(1, 2), Fraction(0))
        low = min(math.floor(where), size - 1)
        points.append((low, min(low + 1, size - 1), where - low if low < size - 1 else Fraction(0)))
    denominator = math.lcm(*(frac.denominator for _, _, frac in points))
    return (
        [low for low, _, _ in points],
        [high for _, high, _ in points],
        [int((1 - frac) * denominator) for _, _, frac in points],
        [int(frac * denominator) for _, _, frac in points],
        denominator,
    )


def exact_upsampling(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with each bilinear ``Resize`` of its image input followed by a quantize to
    uint8 steps done in integers instead: the image quantized to its uint8 values, the taps
    weighed and added in int32 (the weights over their common denominator), then divided with
    the half rounded up: the exact bilinear value, rounded.

    What comes out differs from the float resize only where the float value lies exactly half
    way between two steps (which a float resize rounds by its last bit, so by the processor),
    and is the same on every machine. A model without such a resize comes back unchanged.
    """
    graph = model.graph
    inputs = {i.name: i for i in graph.input}
    constants = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    for node in list(graph.node):
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if (
            node.op_type != "Resize"
            or node.input[0] not in inputs
            or attributes.get("mode") != b"linear"
            or attributes.get("coordinate_transformation_mode") != b"half_pixel"
            or len(node.input) < 3
            or node.input[2] not in constants
        ):
            continue
        quantize = _quantized_alone(graph, node)
        if (
            quantize is None
            or constants.get(quantize.input[1]) != PIXEL
            or constants.get(quantize.input[2]) != np.uint8(0)
        ):
            continue
        scales = [float(s) for s in constants[node.input[2]]]
        dims = [d.dim_value for d in inputs[node.input[0]].type.tensor_type.shape.dim]
        if scales[:2] != [1.0, 1.0] or len(dims) != 4 or not all(dims[2:]):
            continue
        nodes = _integer_resize(node.name, node.input[0], quantize.output[0], dims[2:], scales[2:])
        _replace(graph, (node, quantize), nodes)
    _drop_unused(graph)
    return model


def _quantized_alone(graph: onnx.GraphProto, node: onnx.NodeProto) -> onnx.NodeProto | None:
    """The ``QuantizeLinear`` that is the only reader of ``node``'s output, or None."""
    readers: list[onnx.NodeProto] = [n for n in graph.node if node.output[0] in n.input]
    if len(readers) == 1 and readers[0].op_type == "QuantizeLinear":
        return readers[0]
    return None


def _replace(
    graph: onnx.GraphProto, old: Sequence[onnx.NodeProto], nodes: Sequence[onnx.NodeProto]
) -> None:
    """Put ``nodes`` where the first of ``old`` stood, and remove ``old``."""
    position = list(graph.node).index(old[0])
    for node in old:
        graph.node.remove(node)
    for offset, new in enumerate(nodes):
        graph.node.insert(position + offset, new)


class _Nodes:
    """New nodes of a graph, each named under ``prefix``."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.nodes: list[onnx.NodeProto] = []

    def constant(self, what: str, value: npt.NDArray[Any]) -> str:
        named = f"{self.prefix}/{what}"
        tensor = numpy_helper.from_array(value, named)
        self.nodes.append(helper.make_node("Constant", [], [named], value=tensor))
        return named

    def add(
        self, op: str, ins: Sequence[str], what: str, *, out: str = "", **attributes: Any
    ) -> str:
        named = out or f"{self.prefix}/{what}"
        self.nodes.append(
            helper.make_node(op, list(ins), [named], name=f"{self.prefix}/{what}", **attributes)
        )
        return named


def _integer_resize(
    name: str, image: str, out: str, sizes: Sequence[int], scales: Sequence[float]
) -> list[onnx.NodeProto]:
    """Nodes turning the 0..1 ``image`` into the uint8 ``out`` of its bilinear enlargement."""
    new = _Nodes(f"{name}/exact")
    steps = new.add(
        "QuantizeLinear",
        [
            image,
            new.constant("pixel", np.array(PIXEL)),
            new.constant("zero", np.array(0, np.uint8)),
        ],
        "uint8",
    )
    current = new.add("Cast", [steps], "int32", to=TensorProto.INT32)
    whole = 1
    for axis, size, scale in zip((2, 3), sizes, scales, strict=True):
        low, high, low_weight, high_weight, denominator = _axis_taps(size, scale)
        whole *= denominator
        shape = [1, 1, 1, 1]
        shape[axis] = len(low)
        taps = []
        for side, index, weight in (("low", low, low_weight), ("high", high, high_weight)):
            picked = new.add(
                "Gather",
                [current, new.constant(f"{side}{axis}", np.array(index, np.int64))],
                f"{side}{axis}/picked",
                axis=axis,
            )
            weights = np.array(weight, np.int32).reshape(shape)
            taps.append(
                new.add(
                    "Mul",
                    [picked, new.constant(f"{side}{axis}/w", weights)],
                    f"{side}{axis}/weighed",
                )
            )
        current = new.add("Add", taps, f"axis{axis}")
    if whole * 255 >= 2**31:
        raise ValueError(f"{name}: an enlargement of {scales} needs more than 32 bits in integers")
    rounded = new.add(
        "Add", [current, new.constant("half", np.array(whole // 2, np.int32))], "rounded"
    )
    divided = new.add("Div", [rounded, new.constant("whole", np.array(whole, np.int32))], "divided")
    new.add("Cast", [divided], "out", out=out, to=TensorProto.UINT8)
    return new.nodes


def exact_additions(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with each quantized addition (a dequantize of two uint8 tensors, a float
    ``Add``, a quantize of the sum) done in 32-bit integers: each side's scale over the sum's
    as a whole number over a power of two, the half rounded up.

    onnxruntime fuses the float form into one integer kernel that rounds its float products
    otherwise on x86 (fused multiply-add) and on ARM: a sum that lies within a hair of half a
    step can fall to either side (1 value in 60000 of the EfficientNet member's sums on the
    committed crops, which the layers after carry on). In integers it falls the same on every
    machine; off those halves it is the float form's result.
    """
    graph = model.graph
    constants = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    made = {out: node for node in graph.node for out in node.output}

    def dequantized(name: str) -> tuple[str, float, int] | None:
        node = made.get(name)
        if node is None or node.op_type != "DequantizeLinear" or len(node.input) != 3:
            return None
        scale, zero = constants.get(node.input[1]), constants.get(node.input[2])
        if scale is None or zero is None or scale.size != 1 or zero.dtype != np.uint8:
            return None
        return node.input[0], float(scale), int(zero)

    for node in list(graph.node):
        if node.op_type != "Add":
            continue
        quantize = _quantized_alone(graph, node)
        sides = [dequantized(name) for name in node.input]
        if quantize is None:
            continue
        out_scale, out_zero = (constants.get(name) for name in quantize.input[1:3])
        if None in sides or out_scale is None or out_zero is None or out_zero.dtype != np.uint8:
            continue
        added = _integer_add(
            node.name,
            [side for side in sides if side is not None],
            float(out_scale),
            int(out_zero),
            quantize.output[0],
        )
        _replace(graph, (node, quantize), added)
    _drop_unused(graph)
    return model


def _integer_add(
    name: str, sides: Sequence[tuple[str, float, int]], scale: float, zero: int, out: str
) -> list[onnx.NodeProto]:
    """Nodes adding the uint8 tensors of ``sides`` (tensor, scale, zero point) into the uint8
    ``out`` of ``scale`` and ``zero``, in int32."""
    new = _Nodes(f"{name}/exact")
    ratios = [side_scale / scale for _, side_scale, _ in sides]
    # As many bits as the sum of the largest products leaves room for in 31.
    shift = min(24, math.floor(math.log2(2**29 / (256 * sum(ratios)))))
    if shift < 8:
        raise ValueError(f"{name}: scales {ratios} too far apart to add in 32-bit integers")
    factors = [round(ratio * 2**shift) for ratio in ratios]
    terms = []
    for number, ((tensor, _, side_zero), factor) in enumerate(zip(sides, factors, strict=True)):
        wide = new.add("Cast", [tensor], f"{number}/int32", to=TensorProto.INT32)
        centred = new.add(
            "Sub",
            [wide, new.constant(f"{number}/zero", np.array(side_zero, np.int32))],
            f"{number}/centred",
        )
        terms.append(
            new.add(
                "Mul",
                [centred, new.constant(f"{number}/factor", np.array(factor, np.int32))],
                f"{number}/scaled",
            )
        )
    total = new.add("Add", terms, "sum")
    # Whole steps added first keep the sum positive, so that integer division is the floor.
    lift = math.ceil(256 * sum(factors) / 2**shift)
    lifted = new.add(
        "Add",
        [total, new.constant("lift", np.array(lift * 2**shift + 2 ** (shift - 1), np.int32))],
        "lifted",
    )
    steps = new.add("Div", [lifted, new.constant("step", np.array(2**shift, np.int32))], "steps")
    placed = new.add(
        "Add", [steps, new.constant("zero", np.array(zero - lift, np.int32))], "placed"
    )
    low = new.add("Max", [placed, new.constant("0", np.array(0, np.int32))], "at_least_0")
    high = new.add("Min", [low, new.constant("255", np.array(255, np.int32))], "at_most_255")
    new.add("Cast", [high], "out", out=out, to=TensorProto.UINT8)
    return new.nodes


def _drop_unused(graph: onnx.GraphProto) -> None:
    """Remove the nodes and initializers nothing reads any more (the graph's outputs are read)."""
    while True:
        used = {name for n in graph.node for name in n.input} | {o.name for o in graph.output}
        idle = [n for n in graph.node if n.output and not used & set(n.output)]
        if not idle:
            break
        for node in idle:
            graph.node.remove(node)
    used = {name for n in graph.node for name in n.input}
    for unused in [i for i in graph.initializer if i.name not in used]:
        graph.initializer.remove(unused)


class _Feed:
    """onnxruntime's calibration reader over a list of inputs for "image"."""

    def __init__(self, inputs: Sequence[npt.NDArray[np.float32]]):
        self._inputs: Iterator[npt.NDArray[np.float32]] = iter(inputs)

    def get_next(self) -> dict[str, npt.NDArray[np.float32]] | None:
        batch = next(self._inputs, None)
        return None if batch is None else {"image": batch}

    def rewind(self) -> None:  # pragma: no cover - onnxruntime calls it for some methods only
        raise NotImplementedError


def _quantize_file(
    source: Path,
    out: Path,
    inputs: Sequence[npt.NDArray[np.float32]],
    *,
    method: str = "minmax",
) -> None:
    """Pre-process ``source`` (shapes, fusions) and quantize it to ``out`` on ``inputs``."""
    from onnxruntime.quantization import (
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    prepared = out.with_name(out.stem + ".prepared.onnx")
    # The pre-processing folds the explicit Pad nodes of the EfficientNet's "same" padding into
    # its convolutions; left alone, each would run in float between a dequantize and a quantize.
    # Symbolic shape inference would need sympy, which onnxruntime no longer installs, and
    # cannot follow the locator's free height and width; without it the output is the same.
    quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
    model = onnx.load(str(prepared))
    # The layers that make the outputs stay float: the face model's last layer is what
    # vision.tuning refits, and the locator's heads decide a die against a threshold; both are
    # a handful of multiplications.
    outputs = {o.name for o in model.graph.output}
    excluded = [n.name for n in model.graph.node if outputs & set(n.output)]
    quantize_static(
        str(prepared),
        str(out),
        _Feed(inputs),  # duck-typed: onnxruntime calls get_next until None
        quant_format=QuantFormat.QDQ,
        per_channel=True,
        reduce_range=True,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        calibrate_method=METHODS[method](CalibrationMethod),
        nodes_to_exclude=excluded,
    )
    prepared.unlink()


def _stamp(model: onnx.ModelProto, source: Path, calibration: str) -> onnx.ModelProto:
    """Record where an int8 model came from in its metadata."""
    for key, value in ((QUANTIZED_FROM, sha256_of(source)), (CALIBRATION, calibration)):
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    return model


def quantize_face_model(
    source: Path,
    out: Path,
    crops: npt.NDArray[np.float32],
    *,
    calibration: str,
    method: str = "minmax",
) -> None:
    """Write the int8 copy of the face model ``source``, member by member, calibrated on
    ``crops``; the last layer of each member stays float (``vision.tuning`` refits it)."""
    whole = onnx.load(str(source))
    count = len(member_models(whole))
    # Whole batches only: the histogram methods stack every batch's activations as one array.
    batches = [crops[i : i + BATCH] for i in range(0, len(crops) - BATCH + 1, BATCH)] or [crops]
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        members = []
        for number in range(1, count + 1) if count else [0]:
            plain = folder / f"member{number}.onnx"
            onnx.save(take_member(whole, number) if number else whole, str(plain))
            quantized = folder / f"member{number}.int8.onnx"
            _quantize_file(plain, quantized, batches, method=method)
            exact = exact_additions(exact_upsampling(onnx.load(str(quantized))))
            onnx.save(exact, str(quantized))
            members.append(quantized)
        model = compose(members, rotations=False) if count else onnx.load(str(members[0]))
    onnx.save(_stamp(model, source, calibration), str(out))


def quantize_locator(
    source: Path,
    out: Path,
    inputs: Sequence[npt.NDArray[np.float32]],
    *,
    calibration: str,
    method: str = "minmax",
) -> None:
    """Write the int8 copy of the locator ``source``, calibrated on ``inputs``."""
    with tempfile.TemporaryDirectory() as work:
        quantized = Path(work) / "locator.int8.onnx"
        _quantize_file(source, quantized, inputs, method=method)
        model = onnx.load(str(quantized))
    onnx.save(_stamp(model, source, calibration), str(out))


def main(argv: Sequence[str] | None = None) -> int:
    """Quantize the models the command line names; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m vision.train.quantize", description=__doc__)
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="the shared dice photos (training split)"
    )
    parser.add_argument("--photos", type=int, default=150, help="training photos to calibrate on")
    parser.add_argument("--seed", type=int, default=0, help="seed of the photo sample")
    for role, shipped in (
        ("face", (FLOAT_MODEL, DEFAULT_MODEL)),
        ("locator", (FLOAT_LOCATOR_MODEL, DEFAULT_LOCATOR_MODEL)),
    ):
        parser.add_argument(
            f"--{role}",
            type=Path,
            nargs=2,
            metavar=("IN", "OUT"),
            default=shipped,
            help=f"float {role} model and its int8 copy (default: the shipped pair)",
        )
    parser.add_argument(
        "--method", choices=sorted(METHODS), default="minmax", help="how ranges are measured"
    )
    parser.add_argument(
        "--only", choices=("face", "locator"), default=None, help="quantize one model only"
    )
    parser.add_argument(
        "--record", type=Path, default=None, help="test folder whose outputs get recorded"
    )
    args = parser.parse_args(argv)
    if args.photos < 1:
        parser.error(f"--photos must be at least 1, got {args.photos}")
    for role, (source, _) in (("--face", args.face), ("--locator", args.locator)):
        if args.only not in (None, role[2:]):
            continue
        if not source.is_file():
            parser.error(f"{role}: float model {str(source)!r} not found")
    try:
        records = load_sources(args.data)
    except (OSError, ValueError) as error:
        parser.error(f"cannot read the photos in {str(args.data)!r}: {error}")
    chosen = calibration_photos(records, args.photos, args.seed)
    if not chosen:
        parser.error(f"{str(args.data)!r} has no training photos to calibrate on")
    started = time.perf_counter()
    if args.only in (None, "face"):
        crops = face_calibration(chosen, args.seed)
        what = f"{len(crops)} crops of {len(chosen)} training photos"
        what += f", seed {args.seed}, {args.method}"
        quantize_face_model(args.face[0], args.face[1], crops, calibration=what, method=args.method)
        _report("face model", args.face, what)
    if args.only in (None, "locator"):
        inputs = locator_calibration(chosen)
        what = f"{len(inputs)} training photos, seed {args.seed}, {args.method}"
        quantize_locator(
            args.locator[0], args.locator[1], inputs, calibration=what, method=args.method
        )
        _report("locator", args.locator, what)
    if args.record is not None:
        from vision.train.export import record_outputs

        if args.only in (None, "face"):
            record_outputs(args.face[1], args.record, RECORDED_FACE)
        if args.only in (None, "locator"):
            # Imported only here: the locator's training module needs torch, the face's not.
            from vision.train.locator import record_locator_outputs

            record_locator_outputs(args.locator[1], args.record, name=RECORDED_LOCATOR)
    print(f"done in {time.perf_counter() - started:.1f} s")  # noqa: T201
    return 0


def _report(what: str, pair: Sequence[Path], calibration: str) -> None:
    source, out = pair
    print(  # noqa: T201
        f"{what}: {source} ({source.stat().st_size} bytes) -> {out} ({out.stat().st_size} bytes),"
        f" sha256 {sha256_of(out)}; calibrated on {calibration}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
