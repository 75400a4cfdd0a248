"""The int8 models the reader runs: copies of the float ones, reading what they read.

The shipped pair is checked against the float files it was made from and against the outputs
recorded when it was made; the command is run on the committed test photos (as a source of
training photos) to show what it keeps float and what it refuses.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.vision.committed import photo_source
from vision.classify import (
    DEFAULT_LOCATOR_MODEL,
    DEFAULT_MODEL,
    FLOAT_LOCATOR_MODEL,
    FLOAT_MODEL,
    OnnxClassifier,
    OnnxLocator,
    member_models,
)
from vision.detect import decode, locator_input
from vision.preprocess import crops_for_model
from vision.train.quantize import (
    PIXEL,
    QUANTIZED_FROM,
    RECORDED_FACE,
    RECORDED_LOCATOR,
    exact_additions,
    exact_upsampling,
    main,
)
from vision.tuning import model_heads

ROOT = Path(__file__).resolve().parents[2]
CARD = ROOT / "models" / "MODEL_CARD.md"
TEST_DATA = ROOT / "tests" / "data" / "dice"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _metadata(path: Path) -> dict[str, str]:
    return {p.key: p.value for p in onnx.load(str(path)).metadata_props}


def _recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TEST_DATA / name).read_text(encoding="utf-8"))
    return data


def _image(name: str) -> np.ndarray:
    loaded = cv2.imread(str(TEST_DATA / name))
    assert loaded is not None, name
    return loaded


def _labels() -> dict[str, list[int]]:
    lines = (TEST_DATA / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    return {r["image"]: [d["value"] for d in r["dice"]] for r in records}


@pytest.mark.parametrize(
    ("int8", "source"),
    [(DEFAULT_MODEL, FLOAT_MODEL), (DEFAULT_LOCATOR_MODEL, FLOAT_LOCATOR_MODEL)],
    ids=["faces", "locator"],
)
def test_the_shipped_int8_models_are_copies_of_the_shipped_float_ones(
    int8: Path, source: Path
) -> None:
    # A float model retrained without quantizing again would leave the reader on the old one.
    assert _metadata(int8)[QUANTIZED_FROM] == _sha256(source), (
        f"{int8.name} was not made from today's {source.name}: run python -m vision.train.quantize"
        " --record tests/data/dice"
    )
    assert int8.stat().st_size < source.stat().st_size / 3


def test_the_int8_files_and_their_records_are_named_on_the_card() -> None:
    section = CARD.read_text(encoding="utf-8").split("# The int8 copies the reader runs", 1)[1]
    for path, recorded in (
        (DEFAULT_MODEL, RECORDED_FACE),
        (DEFAULT_LOCATOR_MODEL, RECORDED_LOCATOR),
    ):
        digest = _sha256(path)
        found = re.search(rf"`{re.escape(path.name)}`: sha256: `([0-9a-f]{{64}})`", section)
        assert found is not None, path.name
        assert found.group(1) == digest, path.name
        assert _recorded(recorded)["model_sha256"] == digest


def test_the_int8_face_model_gives_its_recorded_logits_and_reads_the_labels() -> None:
    recorded = _recorded(RECORDED_FACE)
    whole = OnnxClassifier(DEFAULT_MODEL, first_sure=None)
    labels = _labels()
    assert len(recorded["crops"]) >= 5
    for entry in recorded["crops"]:
        crops = crops_for_model(_image(entry["image"]), [tuple(b) for b in entry["boxes"]])
        logits = whole.logits(crops)
        # The same on every processor: the member's resize and additions run in integers
        # (exact_upsampling, exact_additions); only the float last layers round by the machine
        # (within 1e-6 on a Pi 4's and a Pi 5's processor under qemu: models/MODEL_CARD.md).
        np.testing.assert_allclose(logits, np.array(entry["logits"]), atol=1e-4)
        assert logits.argmax(axis=1).tolist() == labels[entry["image"]], entry["image"]


def test_the_int8_face_model_reads_like_the_float_one() -> None:
    float_model = OnnxClassifier(FLOAT_MODEL, first_sure=None)
    int8_model = OnnxClassifier(DEFAULT_MODEL, first_sure=None)
    for entry in _recorded(RECORDED_FACE)["crops"]:
        crops = crops_for_model(_image(entry["image"]), [tuple(b) for b in entry["boxes"]])
        a, b = float_model.predict(crops), int8_model.predict(crops)
        assert a.argmax(axis=1).tolist() == b.argmax(axis=1).tolist(), entry["image"]
        assert float(np.abs(a - b).max()) < 0.1, entry["image"]


def test_the_int8_face_model_keeps_float_last_layers_for_table_tuning() -> None:
    int8, source = onnx.load(str(DEFAULT_MODEL)), onnx.load(str(FLOAT_MODEL))
    heads, float_heads = model_heads(int8), model_heads(source)
    assert len(heads) == len(float_heads) == len(member_models(int8)) == 2
    for head, float_head in zip(heads, float_heads, strict=True):
        np.testing.assert_array_equal(head.weight, float_head.weight)
    assert any(n.op_type == "DequantizeLinear" for n in int8.graph.node)


# --- The EfficientNet member's enlargement, in integers.


def _resize_then_quantize(height: int, width: int, scale: float) -> onnx.ModelProto:
    """A model of what the EfficientNet member starts with in its int8 copy: a float bilinear
    resize of the 0..1 image, quantized to uint8 steps."""
    nodes = [
        helper.make_node(
            "Resize",
            ["image", "", "scales"],
            ["big"],
            mode="linear",
            coordinate_transformation_mode="half_pixel",
        ),
        helper.make_node("QuantizeLinear", ["big", "step", "zero"], ["out"]),
    ]
    constants = [
        numpy_helper.from_array(np.array([1, 1, scale, scale], np.float32), "scales"),
        numpy_helper.from_array(np.array(PIXEL), "step"),
        numpy_helper.from_array(np.array(0, np.uint8), "zero"),
    ]
    image = helper.make_tensor_value_info("image", TensorProto.FLOAT, ["n", 3, height, width])
    out = helper.make_tensor_value_info("out", TensorProto.UINT8, None)
    graph = helper.make_graph(nodes, "resize", [image], [out], constants)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(model: onnx.ModelProto, output: str, image: np.ndarray) -> np.ndarray:
    if output not in {o.name for o in model.graph.output}:
        model.graph.output.append(helper.make_tensor_value_info(output, TensorProto.FLOAT, None))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run([output], {"image": image})[0])


@pytest.mark.parametrize(
    ("height", "width", "scale"), [(64, 64, 1.5), (20, 12, 2.0), (9, 15, 1.25), (6, 6, 4.0)]
)
def test_the_integer_enlargement_is_the_float_one_rounded_with_halves_up(
    height: int, width: int, scale: float
) -> None:
    pixels = np.random.default_rng(height * width).integers(0, 256, (4, 3, height, width))
    image = pixels.astype(np.float32) / np.float32(255.0)
    exact = exact_upsampling(_resize_then_quantize(height, width, scale))
    assert "Resize" not in {n.op_type for n in exact.graph.node}
    got = _run(exact, "out", image).astype(np.int64)
    # onnxruntime's own float resize, in uint8 steps: within float rounding of the exact value.
    steps = _run(_resize_then_quantize(height, width, scale), "big", image) * 255.0
    assert got.shape == steps.shape == (4, 3, int(height * scale), int(width * scale))
    fraction = steps - np.floor(steps)
    halves = np.abs(fraction - 0.5) < 1e-3
    assert halves.any()  # what the float resize rounds by its last bit, so by the processor
    np.testing.assert_array_equal(got[halves], np.ceil(steps[halves]))
    np.testing.assert_array_equal(got[~halves], np.floor(steps[~halves] + 0.5))


def test_a_model_without_an_enlargement_of_its_image_is_left_as_it_was() -> None:
    locator = onnx.load(str(DEFAULT_LOCATOR_MODEL))
    before = locator.SerializeToString()
    assert exact_upsampling(locator).SerializeToString() == before
    nearest = _resize_then_quantize(8, 8, 2.0)
    for attribute in nearest.graph.node[0].attribute:
        if attribute.name == "mode":
            attribute.s = b"nearest"
    assert exact_upsampling(nearest).graph.node[0].op_type == "Resize"


def _quantized_addition(
    scales: tuple[float, float, float], zeros: tuple[int, int, int]
) -> onnx.ModelProto:
    """What onnxruntime fuses into its integer addition: two uint8 tensors dequantized, added
    in float, the sum quantized."""
    nodes = [
        helper.make_node("DequantizeLinear", ["a", "a_scale", "a_zero"], ["a_float"]),
        helper.make_node("DequantizeLinear", ["b", "b_scale", "b_zero"], ["b_float"]),
        helper.make_node("Add", ["a_float", "b_float"], ["sum"]),
        helper.make_node("QuantizeLinear", ["sum", "out_scale", "out_zero"], ["out"]),
    ]
    constants = [
        numpy_helper.from_array(np.array(value, dtype), f"{name}_{what}")
        for name, scale, zero in zip(("a", "b", "out"), scales, zeros, strict=True)
        for what, value, dtype in (("scale", scale, np.float32), ("zero", zero, np.uint8))
    ]
    inputs = [helper.make_tensor_value_info(n, TensorProto.UINT8, ["n"]) for n in ("a", "b")]
    out = helper.make_tensor_value_info("out", TensorProto.UINT8, ["n"])
    graph = helper.make_graph(nodes, "add", inputs, [out], constants)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(
    ("scales", "zeros"),
    [
        ((0.05, 0.03, 0.07), (128, 120, 131)),
        ((0.011, 0.2, 0.09), (0, 255, 12)),  # sides far apart, sums beyond the out range
        ((0.02, 0.02, 0.02), (0, 0, 0)),  # the same scale: whole steps, no rounding at all
    ],
)
def test_the_integer_addition_is_the_float_one_rounded_with_halves_up(
    scales: tuple[float, float, float], zeros: tuple[int, int, int]
) -> None:
    a, b = np.meshgrid(np.arange(256, dtype=np.uint8), np.arange(256, dtype=np.uint8))
    feed = {"a": a.ravel(), "b": b.ravel()}
    exact = exact_additions(_quantized_addition(scales, zeros))
    assert "DequantizeLinear" not in {n.op_type for n in exact.graph.node}
    got = ort.InferenceSession(exact.SerializeToString(), providers=["CPUExecutionProvider"])
    (out,) = got.run(["out"], feed)
    f32 = [np.float32(s) for s in scales]
    sides = [f32[i] * (feed[k].astype(np.float64) - zeros[i]) for i, k in enumerate("ab")]
    steps = (sides[0] + sides[1]) / f32[2] + zeros[2]
    halves = np.abs(steps - np.floor(steps) - 0.5) < 1e-4
    want = np.clip(np.floor(steps + 0.5), 0, 255)
    np.testing.assert_array_equal(out[~halves], want[~halves])
    np.testing.assert_array_equal(out[halves], np.clip(np.ceil(steps[halves]), 0, 255))
    # The float form, as onnxruntime runs it, agrees off the halves.
    fused = ort.InferenceSession(
        _quantized_addition(scales, zeros).SerializeToString(), providers=["CPUExecutionProvider"]
    )
    np.testing.assert_array_equal(fused.run(["out"], feed)[0][~halves], out[~halves])


def test_the_shipped_face_model_enlarges_and_adds_in_integers_only() -> None:
    model = onnx.load(str(DEFAULT_MODEL))
    onnx.checker.check_model(model)
    ops = [n.op_type for n in model.graph.node]
    assert "Resize" not in ops
    assert {"Gather", "Div", "Cast"} <= set(ops)
    made = {out: n for n in model.graph.node for out in n.output}
    float_sums = [
        n
        for n in model.graph.node
        if n.op_type == "Add"
        and all(made.get(i) is not None and made[i].op_type == "DequantizeLinear" for i in n.input)
    ]
    assert float_sums == []


# --- The command, on the committed photos taken as a source of training photos.


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data root with one source: the committed test photos, labelled as training photos."""
    return photo_source(tmp_path_factory.mktemp("data"), split="train")


@pytest.fixture(scope="module")
def quantized(table: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("int8")
    faces, locator = out / "faces.onnx", out / "locator.onnx"
    argv = ["--data", str(table), "--photos", "3", "--face", str(FLOAT_MODEL), str(faces)]
    assert main([*argv, "--locator", str(FLOAT_LOCATOR_MODEL), str(locator)]) == 0
    return faces, locator


def test_the_command_writes_int8_copies_that_say_what_they_came_from(
    quantized: tuple[Path, Path],
) -> None:
    faces, locator = quantized
    for path, source in ((faces, FLOAT_MODEL), (locator, FLOAT_LOCATOR_MODEL)):
        metadata = _metadata(path)
        assert metadata[QUANTIZED_FROM] == _sha256(source)
        assert "3 training photos" in metadata["calibration"]
        nodes = onnx.load(str(path)).graph.node
        assert any(n.op_type == "DequantizeLinear" for n in nodes)
    composed = onnx.load(str(faces))
    assert len(member_models(composed)) == 2
    assert len(model_heads(composed)) == 2


def test_the_command_output_reads_the_photos_as_the_float_models_do(
    quantized: tuple[Path, Path],
) -> None:
    faces, locator = quantized
    float_model, int8_model = OnnxClassifier(FLOAT_MODEL), OnnxClassifier(faces)
    locators = (OnnxLocator(FLOAT_LOCATOR_MODEL), OnnxLocator(locator))
    for name, values in _labels().items():
        image = _image(name)
        tensor, factor = locator_input(image)
        found = [
            decode(*loc.run(tensor), factor=factor, threshold=0.4, frame_shape=image.shape[:2])
            for loc in locators
        ]
        # Read as the reader reads: boxes the face model calls class 0 are dropped. A peak
        # just at the threshold may be found by one copy and not the other (this calibration
        # has only three photos); what is read must not differ.
        read = []
        for boxes, model in zip(found, (float_model, int8_model), strict=True):
            crops = crops_for_model(image, [f.box for f in boxes])
            classes = model.predict(crops).argmax(axis=1).tolist()
            read.append(sorted(v for v in classes if v))
        assert read[0] == read[1] == sorted(values), name
        assert abs(len(found[0]) - len(found[1])) <= 1, name


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--photos", "0"], "--photos must be at least 1, got 0"),
        (["--face", "missing.onnx", "out.onnx"], "--face: float model 'missing.onnx' not found"),
    ],
)
def test_the_command_refuses_what_it_cannot_do(
    argv: list[str], message: str, table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--data", str(table), *argv])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_a_data_folder_without_training_photos_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    photo_source(tmp_path, "held_out")
    with pytest.raises(SystemExit):
        main(["--data", str(tmp_path), "--face", str(FLOAT_MODEL), str(tmp_path / "f.onnx")])
    assert "has no training photos to calibrate on" in capsys.readouterr().err


def test_a_single_face_model_is_quantized_whole(table: Path, tmp_path: Path) -> None:
    from vision.train.ensemble import take_member

    single = tmp_path / "cnn.onnx"
    onnx.save(take_member(onnx.load(str(FLOAT_MODEL)), 1), str(single))
    out = tmp_path / "cnn.int8.onnx"
    argv = ["--data", str(table), "--photos", "2", "--only", "face"]
    assert main([*argv, "--face", str(single), str(out)]) == 0
    model = onnx.load(str(out))
    assert member_models(model) == []
    assert len(model_heads(model)) == 1
    assert any(n.op_type == "DequantizeLinear" for n in model.graph.node)
    crops = np.random.default_rng(0).random((4, 3, 64, 64), dtype=np.float32)
    assert OnnxClassifier(out).predict(crops).shape == (4, 7)


def test_quantizing_the_face_model_alone_records_its_outputs_without_the_locators_code(
    table: Path, tmp_path: Path
) -> None:
    """`--only face --record` is what a retrained face model needs, on a machine without torch
    (the locator's training module imports it); the record names the int8 file it came from."""
    import shutil

    folder = shutil.copytree(TEST_DATA, tmp_path / "dice")
    (folder / RECORDED_FACE).unlink()
    out = tmp_path / "faces.int8.onnx"
    argv = ["--data", str(table), "--photos", "2", "--only", "face", "--record", str(folder)]
    assert main([*argv, "--face", str(FLOAT_MODEL), str(out)]) == 0
    recorded = json.loads((folder / RECORDED_FACE).read_text(encoding="utf-8"))
    assert recorded["model_sha256"] == _sha256(out)
    assert len(recorded["crops"]) == len(_recorded(RECORDED_FACE)["crops"])
    assert (folder / RECORDED_LOCATOR).read_bytes() == (TEST_DATA / RECORDED_LOCATOR).read_bytes()
