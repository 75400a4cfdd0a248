"""The die check (vision/die_check.py): which "no face" boxes are dice the model cannot read."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from vision.classify import DEFAULT_MODEL, FLOAT_MODEL, OnnxClassifier
from vision.detect import iou
from vision.die_check import (
    DEFAULT_DIE_CHECK,
    HIDDEN_EXTRAS,
    DieCheck,
    DieChecker,
    die_checker_for,
    dropped,
    fit_die_check,
    hidden_rows,
    load_die_check,
    model_features,
)
from vision.errors import ModelLoadError
from vision.locate import LocatedDie, TrayColour
from vision.preprocess import EDGE_FEATURES, crops_for_model, edge_features
from vision.reader import DiceReader

Frame = npt.NDArray[np.uint8]
ROOT = Path(__file__).resolve().parents[2]
Box = tuple[int, int, int, int]


@pytest.fixture
def tiny_model(tmp_path: Path, tiny_weights: tuple[Any, Any]) -> Path:
    """A tiny face model with a last linear layer (``Gemm``) as trained ones end: logits = the
    crop's mean colour ("flat", RGB 0..1) @ weights + bias."""
    from onnx import TensorProto, helper, numpy_helper

    weights, bias = tiny_weights
    graph = helper.make_graph(
        [
            helper.make_node("GlobalAveragePool", ["image"], ["pooled"]),
            helper.make_node("Flatten", ["pooled"], ["flat"], axis=1),
            helper.make_node("Gemm", ["flat", "W", "B"], ["logits"]),
        ],
        "tiny",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 64, 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 7])],
        [numpy_helper.from_array(weights, "W"), numpy_helper.from_array(bias, "B")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / "tiny.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def test_a_model_with_no_last_linear_layer_has_no_check(
    tmp_path: Path, model_bytes: Any, tiny_weights: tuple[Any, Any]
) -> None:
    path = tmp_path / "matmul.onnx"
    path.write_bytes(model_bytes(*tiny_weights))
    with pytest.raises(ModelLoadError, match="no last linear layer"):
        model_features(path)
    assert die_checker_for(path) is None
    assert DiceReader(OnnxClassifier(path)).die_check is None


def _check(model: Path, weight: list[float], bias: float, threshold: float = 0.9) -> DieCheck:
    """A check on the tiny model's features: the crop's mean colour (RGB, 0..1)."""
    n = len(weight)
    return DieCheck(
        model_features(model)[1],
        "flat",
        np.zeros(n, np.float32),
        np.ones(n, np.float32),
        np.array(weight, np.float32),
        bias,
        threshold,
    )


def test_the_shipped_check_is_fitted_to_the_face_model_the_reader_runs() -> None:
    """Retraining or requantizing the face model without fitting the check again would switch
    it off quietly (leaning dice dropped again): this says so first."""
    check = load_die_check(DEFAULT_DIE_CHECK)
    assert (check.features, check.features_sha256) == model_features(DEFAULT_MODEL)
    assert die_checker_for(DEFAULT_MODEL) is not None
    assert DiceReader(OnnxClassifier(DEFAULT_MODEL)).die_check is not None
    # The float model computes other features: no check for it.
    assert die_checker_for(FLOAT_MODEL) is None


def test_a_check_serves_a_model_whose_last_layers_alone_were_tuned(tmp_path: Path) -> None:
    """``pipcam tune`` refits the last layers only: the features, and so the check, stay."""
    from dataclasses import replace

    from vision.tuning import load_model, model_heads, with_heads

    model = load_model(DEFAULT_MODEL)
    heads = [replace(h, weight=h.weight * 1.5, bias=h.bias + 0.25) for h in model_heads(model)]
    tuned = tmp_path / "tuned.onnx"
    tuned.write_bytes(with_heads(model, heads).SerializeToString())
    assert tuned.read_bytes() != DEFAULT_MODEL.read_bytes()
    assert model_features(tuned) == model_features(DEFAULT_MODEL)
    assert die_checker_for(tuned) is not None


def test_a_check_reads_the_features_it_names(tiny_model: Path) -> None:
    checker = DieChecker(tiny_model, _check(tiny_model, [-10.0, -10.0, -10.0], 5.0))
    crops = np.zeros((3, 3, 64, 64), np.float32)
    crops[1] += 0.1
    crops[2] += 0.5
    want = np.array([[0.0] * 3, [0.1] * 3, [0.5] * 3], np.float32)
    np.testing.assert_allclose(checker.features(crops), want, atol=1e-6)
    expected = 1 / (1 + np.exp(-np.array([5.0, 2.0, -10.0])))
    np.testing.assert_allclose(checker.die_probability(crops), expected, rtol=1e-5)
    assert checker.is_die(crops).tolist() == [True, False, False]
    assert checker.die_probability(crops[:0]).shape == (0,)


def test_a_check_fitted_to_another_model_is_not_used(tiny_model: Path, tmp_path: Path) -> None:
    other = _check(tiny_model, [-10.0, -10.0, -10.0], 5.0)
    path = tmp_path / "check.json"
    path.write_text(json.dumps({**other.to_json(), "features_sha256": "0" * 64}), "utf-8")
    assert die_checker_for(tiny_model, check_path=path) is None
    path.write_text(json.dumps(other.to_json()), "utf-8")
    assert die_checker_for(tiny_model, check_path=path) is not None
    assert die_checker_for(tiny_model, check_path=tmp_path / "none.json") is None
    # A classifier that is not an ONNX model file has no check.
    assert DiceReader(_Fixed([])).die_check is None  # type: ignore[arg-type]


def test_a_check_naming_a_tensor_the_model_lacks_is_refused(tiny_model: Path) -> None:
    check = _check(tiny_model, [1.0, 1.0, 1.0], 0.0)
    wrong = DieCheck(
        check.features_sha256, "m0/pool", check.mean, check.scale, check.weight, 0.0, 0.9
    )
    with pytest.raises(
        ModelLoadError, match=r"no tensor 'm0/pool'.*python -m vision.train.die_check"
    ):
        DieChecker(tiny_model, wrong)


_PLAIN: dict[str, Any] = {
    "features_sha256": "a",
    "features": "f",
    "threshold": 0.9,
    "bias": 0,
    "mean": [0, 0],
    "scale": [1, 1],
    "weight": [1, 1],
}
"""A whole check of two features in JSON, without a layer."""


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param("{not json", "Expecting property name", id="not JSON"),
        pytest.param('{"features_sha256": "a"}', "KeyError", id="keys missing"),
        pytest.param(
            json.dumps(_PLAIN | {"weight": [1]}),
            "not one length",
            id="lengths differ",
        ),
    ],
)
def test_a_damaged_check_file_is_named_with_what_to_do(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "die_check.json"
    path.write_text(text, "utf-8")
    with pytest.raises(ModelLoadError, match=problem) as caught:
        load_die_check(path)
    assert str(path) in str(caught.value)
    assert "python -m vision.train.die_check" in str(caught.value)


def test_a_check_survives_its_json() -> None:
    check = fit_die_check(
        np.array([[0.0, 1.0], [1.0, 0.0]], np.float32),
        np.array([True, False]),
        features_sha256="abc",
        features_name="f",
    )
    again = DieCheck.from_json(json.loads(json.dumps(check.to_json())))
    x = np.array([[0.3, 0.6]], np.float32)
    np.testing.assert_allclose(again.probability(x), check.probability(x), rtol=1e-6)
    assert (again.features_sha256, again.features, again.threshold) == ("abc", "f", 0.9)


@pytest.mark.parametrize(
    ("rows", "labels", "problem"),
    [
        pytest.param(3, [True, False], "3 feature rows for 2 labels", id="lengths"),
        pytest.param(2, [True, True], "both dice and boxes", id="dice only"),
        pytest.param(2, [False, False], "both dice and boxes", id="none only"),
    ],
)
def test_fitting_needs_rows_of_both_kinds(rows: int, labels: list[bool], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        fit_die_check(
            np.zeros((rows, 2), np.float32), np.array(labels), features_sha256="", features_name="f"
        )


def test_a_fitted_check_separates_what_it_was_fitted_on() -> None:
    """Two clouds of features: every row of each lands on its side of the threshold, whatever
    the features' scale (they are standardised) and however few the dice."""
    rng = np.random.default_rng(3)
    dice = rng.normal(5.0, 1.0, (20, 4)) * [1, 100, 0.01, 1]
    none = rng.normal(-5.0, 1.0, (200, 4)) * [1, 100, 0.01, 1]
    x = np.concatenate([dice, none]).astype(np.float32)
    y = np.arange(len(x)) < len(dice)
    check = fit_die_check(x, y, features_sha256="", features_name="f")
    assert ((check.probability(x) >= check.threshold) == y).all()


def _crossed(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Dice where both features are high or both low, boxes that are none where one is high and
    the other low: no line parts them, as with the visible part of a die and clutter."""
    rng = np.random.default_rng(seed)
    corners = rng.integers(0, 2, (400, 2))
    x = (corners * 4.0 - 2.0 + rng.normal(0.0, 0.5, (400, 2))).astype(np.float32)
    return x, corners[:, 0] == corners[:, 1]


def test_a_check_with_a_layer_parts_what_a_line_cannot() -> None:
    x, y = _crossed(1)
    line = fit_die_check(x, y, features_sha256="", features_name="f", threshold=0.5)
    layer = fit_die_check(x, y, features_sha256="", features_name="f", threshold=0.5, units=16)
    right = {
        name: float(((check.probability(x) >= 0.5) == y).mean())
        for name, check in (("line", line), ("layer", layer))
    }
    assert right["line"] < 0.8
    assert right["layer"] > 0.98
    # Rows it never saw, drawn the same way.
    seen, truth = _crossed(2)
    assert float(((layer.probability(seen) >= 0.5) == truth).mean()) > 0.98


def test_a_check_with_a_layer_is_the_same_for_the_same_rows_and_seed() -> None:
    x, y = _crossed(1)

    def fitted(seed: int) -> dict[str, Any]:
        return fit_die_check(
            x, y, features_sha256="", features_name="f", units=8, steps=50, seed=seed
        ).to_json()

    assert fitted(0) == fitted(0)
    assert fitted(0)["layer_weight"] != fitted(1)["layer_weight"]


def test_a_check_with_a_layer_survives_its_json() -> None:
    x, y = _crossed(1)
    check = fit_die_check(x, y, features_sha256="abc", features_name="f", units=8, steps=200)
    data = check.to_json()
    assert np.asarray(data["layer_weight"]).shape == (2, 8)
    assert len(data["weight"]) == len(data["layer_bias"]) == 8
    again = DieCheck.from_json(json.loads(json.dumps(data)))
    np.testing.assert_array_equal(again.probability(x), check.probability(x))
    # A check without a layer writes none, as the files before layers were written.
    plain = fit_die_check(x, y, features_sha256="abc", features_name="f")
    assert "layer_weight" not in plain.to_json()


_LAYERED = _PLAIN | {
    "weight": [1, 1, 1],
    "layer_weight": [[1, 0, 0], [0, 1, 0]],
    "layer_bias": [0, 0, 0],
}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        pytest.param({"layer_bias": None}, "weights or biases, not both", id="no biases"),
        pytest.param({"layer_weight": None}, "weights or biases, not both", id="no weights"),
        pytest.param({"layer_weight": [[1, 0, 0]]}, r"shape \(1, 3\) .* not \(2, H\)", id="rows"),
        pytest.param({"layer_bias": [0, 0]}, r"biases of shape \(2,\)", id="units"),
        pytest.param({"weight": [1, 1]}, "2 weights for its layer's 3 units", id="output"),
    ],
)
def test_a_check_whose_layer_does_not_fit_is_refused(change: dict[str, Any], problem: str) -> None:
    DieCheck.from_json(_LAYERED)  # whole, it is a check
    with pytest.raises(ValueError, match=problem):
        DieCheck.from_json(_LAYERED | change)


@pytest.mark.parametrize("option", ["--hidden-units", "--hidden-dropped-units", "--leaning-units"])
def test_the_fitter_refuses_a_negative_count_of_units(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    from vision.train.die_check import main

    with pytest.raises(SystemExit) as exit_:
        main([option, "-1", "--out", str(tmp_path / "c.json")])
    assert exit_.value.code == 2
    assert f"{option} -1: give 0 (no layer) or more units" in capsys.readouterr().err
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        pytest.param(["--leaning-scenes", "-1"], "--leaning-scenes -1: give 1 or more", id="neg"),
        pytest.param(
            ["--only-leaning", "--leaning-scenes", "0"], "--leaning-scenes 0: give 1", id="none"
        ),
        pytest.param(["--only-leaning"], "cannot load the die check", id="no file to refit"),
        pytest.param(["--leaning-touching", "1.5"], "give a share from 0 to 1", id="touching"),
        pytest.param(["--only-leaning", "--only-hidden"], "not allowed with", id="both"),
    ],
)
def test_the_fitter_refuses_what_it_cannot_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], problem: str
) -> None:
    from vision.train.die_check import main

    with pytest.raises(SystemExit) as exit_:
        main([*args, "--out", str(tmp_path / "c.json")])
    assert exit_.value.code == 2
    assert problem in capsys.readouterr().err
    assert not (tmp_path / "c.json").exists()


class _Fixed:
    """A locator that answers fixed boxes, none leaning."""

    def __init__(self, boxes: list[Box]) -> None:
        self.boxes = boxes

    def locate(
        self,
        frame: Frame,  # noqa: ARG002
        *,
        zone: Box | None = None,  # noqa: ARG002
        tray: TrayColour | None = None,  # noqa: ARG002
    ) -> list[LocatedDie]:
        return [
            LocatedDie(
                box=b,
                rect=(((b[0] + b[2]) / 2, (b[1] + b[3]) / 2), (b[2] - b[0], b[3] - b[1]), 0.0),
                cocked=False,
            )
            for b in self.boxes
        ]


def _patch(frame: Frame, box: Box, bgr: Any) -> None:
    """Paint ``box`` and a margin round it (the crop reaches beyond the box) in ``bgr``."""
    x0, y0, x1, y1 = box
    frame[y0 - 20 : y1 + 20, x0 - 20 : x1 + 20] = bgr


def _pipped(frame: Frame, box: Box, *, blur: float = 0.0) -> None:
    """Paint ``box`` and its margin black with five white 8-pixel pips on the box, blurred by
    a Gaussian of ``blur`` pixels (0: sharp); the crop's mean colour stays dark."""
    x0, y0, x1, y1 = box
    patch = np.zeros((y1 - y0 + 40, x1 - x0 + 40, 3), np.uint8)
    for fx, fy in ((0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)):
        px, py = 20 + int(fx * (x1 - x0)) - 4, 20 + int(fy * (y1 - y0)) - 4
        patch[py : py + 8, px : px + 8] = 255
    if blur:
        patch = np.asarray(cv2.GaussianBlur(patch, (0, 0), blur), np.uint8)
    frame[y0 - 20 : y1 + 20, x0 - 20 : x1 + 20] = patch


def test_the_reader_keeps_as_cocked_only_the_no_face_boxes_the_check_takes_for_dice(
    tiny_model: Path,
) -> None:
    """The tiny model calls a dark crop "no face" and a red one a sure 1. The check takes a
    dark crop (black with white pips) for a die and a dark grey one for none. A black box that
    lies within a die read surely is over read dice (a seam) and is dropped too."""
    frame = np.full((400, 800, 3), 255, np.uint8)
    black, grey = (40, 40, 100, 100), (200, 40, 260, 100)
    _pipped(frame, black)
    _patch(frame, grey, (25, 25, 25))
    red, seam = (400, 40, 460, 200), (400, 40, 460, 100)
    frame[24:216, 334:526] = (0, 0, 255)  # the red die's whole crop
    frame[34:106, 394:466] = 0  # the seam's whole crop, black
    classifier = OnnxClassifier(tiny_model)
    checker = DieChecker(tiny_model, _check(tiny_model, [-10.0, -10.0, -10.0], 5.0))
    locator = _Fixed([black, grey, red, seam])
    reading = DiceReader(classifier, locator=locator, die_check=checker).read(frame)
    assert [(d.box, d.value, d.status) for d in reading.dice] == [
        (black, None, "cocked"),
        (red, 1, "ok"),
    ]
    without = DiceReader(classifier, locator=locator, die_check=None).read(frame)
    assert [(d.box, d.value, d.status) for d in without.dice] == [(red, 1, "ok")]


def test_the_fitter_writes_a_check_for_the_shipped_model_and_prints_its_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m vision.train.die_check`` on a few renders and the committed test photos:
    the same seeds give the same check, which serves the shipped face model."""
    from vision.train.die_check import main

    def fit(name: str) -> Path:
        out = tmp_path / name
        args = ["--data", str(ROOT / "tests" / "data"), "--scenes", "6", "--val-scenes", "3"]
        args += ["--blurred-scenes", "4", "--hidden-scenes", "6", "--leaning-scenes", "0"]
        assert main([*args, "--out", str(out), "--threads", "1"]) == 0
        return out

    first, second = fit("a.json"), fit("b.json")
    assert first.read_bytes() == second.read_bytes()
    printed = capsys.readouterr().out
    assert "render: leaning die:" in printed
    assert "blurred render: blurred die:" in printed
    assert "dice: no die:" in printed  # the committed photos' folder is called "dice"
    assert "blurred render: hand bare:" in printed
    assert "dice: blurred hand bare:" in printed
    check = load_die_check(first)
    assert (check.features, check.features_sha256) == model_features(DEFAULT_MODEL)
    assert die_checker_for(DEFAULT_MODEL, check_path=first) is not None
    # By default the check of the boxes otherwise dropped reads the crop's edges, with a layer.
    assert check.hidden is not None
    assert check.hidden_dropped is not None
    assert len(check.hidden.mean) == len(check.mean) + HIDDEN_EXTRAS
    assert len(check.hidden_dropped.mean) == len(check.mean) + HIDDEN_EXTRAS + EDGE_FEATURES
    assert check.hidden_dropped.layer_bias is not None
    assert len(check.hidden_dropped.layer_bias) == 64
    # The partly-hidden check refitted alone, on stretched boxes and the edges too: the other
    # checks stay.
    again = tmp_path / "c.json"
    again.write_bytes(first.read_bytes())
    args = ["--data", str(ROOT / "tests" / "data"), "--hidden-scenes", "6", "--threads", "1"]
    only = ["--only-hidden", "--spilled", "--edges", "both"]
    assert main([*args, *only, "--out", str(again)]) == 0
    printed = capsys.readouterr().out
    assert "render spilled whole:" in printed
    assert "partly-hidden check of the boxes otherwise dropped fitted on" in printed
    assert "render phantom:" in printed
    refitted = load_die_check(again)
    assert refitted.hidden is not None
    assert len(refitted.hidden.mean) == len(check.mean) + HIDDEN_EXTRAS + EDGE_FEATURES
    before, after = check.to_json(), refitted.to_json()
    assert before.pop("hidden") != after.pop("hidden")
    # The spilled boxes are read as faces: the check of the boxes otherwise dropped is the same.
    assert before == after
    # The leaning check fitted alone: the others stay as they were. Of the renders from seed
    # 305000 (--seed's default plus 300000), the 19th and 20th hold a leaning die read as a
    # face: one to fit on (19 scenes), one to measure (6 more).
    args = ["--data", str(ROOT / "tests" / "data"), "--leaning-scenes", "19", "--threads", "1"]
    assert main([*args, "--only-leaning", "--out", str(again)]) == 0
    printed = capsys.readouterr().out
    assert "leaning check of the faces fitted on" in printed
    assert "val render leaning:" in printed
    assert "val dice flat:" in printed  # the committed photos (held out), all flat
    leaning = load_die_check(again)
    assert leaning.leaning is not None
    assert len(leaning.leaning.mean) == len(check.mean) + HIDDEN_EXTRAS  # not the edges
    with_leaning = leaning.to_json()
    assert with_leaning.pop("leaning")
    assert with_leaning == refitted.to_json()
    # With the flat dice's boxes stretched as well, read right, as flat ones.
    assert main([*args, "--only-leaning", "--leaning-spilled", "--out", str(again)]) == 0
    printed = capsys.readouterr().out
    assert "train render spilled flat:" in printed
    assert "val dice spilled flat:" in printed
    spilled = load_die_check(again).to_json()
    assert spilled.pop("leaning") != leaning.to_json()["leaning"]
    assert spilled == refitted.to_json()


@pytest.mark.parametrize("option", ["--model", "--locator-model"])
def test_the_fitter_names_a_model_it_cannot_load(
    tmp_path: Path, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from vision.train.die_check import main

    with pytest.raises(SystemExit) as exit_:
        main([option, str(tmp_path / "missing.onnx"), "--out", str(tmp_path / "c.json")])
    assert exit_.value.code == 2
    assert "missing.onnx" in capsys.readouterr().err
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize(
    ("blur", "inner", "status"),
    [
        pytest.param(0.0, "takes", "cocked", id="sharp"),
        pytest.param(2.0, "takes", "cocked", id="slightly soft"),
        pytest.param(8.0, "takes", "uncertain", id="blurred"),
        pytest.param(16.0, "takes", "uncertain", id="very blurred"),
        pytest.param(0.0, "refuses", "cocked", id="sharp, whatever the blurred check says"),
        pytest.param(8.0, "refuses", None, id="blurred, the blurred check refuses"),
        pytest.param(8.0, None, "cocked", id="blurred, no blurred check: as before"),
    ],
)
def test_a_die_the_check_keeps_is_uncertain_when_blurred_and_cocked_when_sharp(
    tiny_model: Path, blur: float, inner: str | None, status: str | None
) -> None:
    """The same dark die with white pips (the tiny model: "no face"; the leaning check: a die),
    its pips blurred more and more. A blurred one goes to the blurred-die check: taken, it is
    asked for its value (``uncertain``, none given), not taken for a leaning die to throw
    again; refused, it is dropped. A check file without a blurred-die check keeps the old way."""
    frame = np.full((300, 300, 3), 255, np.uint8)
    box = (100, 100, 160, 160)
    _pipped(frame, box, blur=blur)
    check = _check(tiny_model, [-10.0, -10.0, -10.0], 5.0)
    if inner is not None:
        bias = 5.0 if inner == "takes" else -5.0
        check = dataclasses.replace(check, blurred=_check(tiny_model, [-10.0] * 3, bias))
    reader = DiceReader(
        OnnxClassifier(tiny_model),
        locator=_Fixed([box]),
        die_check=DieChecker(tiny_model, check),
    )
    got = [(d.box, d.value, d.status) for d in reader.read(frame).dice]
    assert got == ([] if status is None else [(box, None, status)])


def test_a_check_with_a_blurred_die_check_goes_through_json() -> None:
    def check(sha: str, size: int) -> DieCheck:
        ones = np.ones(size, np.float32)
        return DieCheck(sha, "f", ones, ones, ones, bias=0.5, threshold=0.9)

    whole = dataclasses.replace(check("abc", 2), blurred=check("abc", 2))
    again = DieCheck.from_json(json.loads(json.dumps(whole.to_json())))
    assert again.blurred is not None
    assert again.blurred.bias == 0.5
    assert DieCheck.from_json(check("abc", 2).to_json()).blurred is None
    for other in (check("xyz", 2), check("abc", 3)):
        data = dataclasses.replace(whole, blurred=other).to_json()
        with pytest.raises(ValueError, match="blurred-die check reads other features"):
            DieCheck.from_json(data)


def test_a_check_with_a_partly_hidden_die_check_goes_through_json() -> None:
    def check(sha: str, size: int) -> DieCheck:
        ones = np.ones(size, np.float32)
        return DieCheck(sha, "f", ones, ones, ones, bias=0.25, threshold=0.8)

    dropped_check = dataclasses.replace(check("abc", 2 + HIDDEN_EXTRAS), threshold=0.98)
    whole = dataclasses.replace(
        check("abc", 2), hidden=check("abc", 2 + HIDDEN_EXTRAS), hidden_dropped=dropped_check
    )
    again = DieCheck.from_json(json.loads(json.dumps(whole.to_json())))
    assert again.hidden is not None
    assert (again.hidden.bias, again.hidden.threshold) == (0.25, 0.8)
    assert again.hidden_dropped is not None
    assert again.hidden_dropped.threshold == 0.98
    plain = DieCheck.from_json(check("abc", 2).to_json())
    assert plain.hidden is None
    assert plain.hidden_dropped is None
    edges = check("abc", 2 + HIDDEN_EXTRAS + EDGE_FEATURES)
    read = DieCheck.from_json(dataclasses.replace(whole, hidden_dropped=edges).to_json())
    assert read.hidden_dropped is not None
    assert len(read.hidden_dropped.mean) == 2 + HIDDEN_EXTRAS + EDGE_FEATURES
    for other in (
        check("xyz", 2 + HIDDEN_EXTRAS),
        check("abc", 2),
        check("abc", 2 + HIDDEN_EXTRAS + EDGE_FEATURES - 1),
    ):
        for wrong in (
            dataclasses.replace(whole, hidden=other),
            dataclasses.replace(whole, hidden_dropped=other),
        ):
            with pytest.raises(ValueError, match="partly-hidden check reads other features"):
                DieCheck.from_json(wrong.to_json())


def test_the_shipped_check_asks_about_dice_partly_hidden() -> None:
    """The shipped check file holds both partly-hidden checks, fitted to the same features."""
    check = load_die_check(DEFAULT_DIE_CHECK)
    assert check.hidden is not None
    assert check.hidden.mean.shape == (len(check.mean) + HIDDEN_EXTRAS,)
    assert check.hidden_dropped is not None
    # The check of the boxes otherwise dropped reads the crop's edges too.
    edges = len(check.mean) + HIDDEN_EXTRAS + EDGE_FEATURES
    assert check.hidden_dropped.mean.shape == (edges,)


def test_the_shipped_leaning_check_calls_leaning_dice_cocked_and_leaves_flat_ones() -> None:
    """The trays probe's leaning dice (seeds 100-159, drawn by a renderer the check was never
    fitted on): with the shipped leaning check fewer are given a value than without it, and
    every flat die beside them is still read right."""
    from vision.synthetic import leaning_beside_two_flat

    check = load_die_check(DEFAULT_DIE_CHECK)
    assert check.leaning is not None
    assert check.leaning.mean.shape == (len(check.mean) + HIDDEN_EXTRAS,)  # not the edges
    model = OnnxClassifier(DEFAULT_MODEL)
    given: dict[bool, int] = {}
    for leaning in (True, False):
        used = check if leaning else dataclasses.replace(check, leaning=None)
        reader = DiceReader(model, die_check=DieChecker(DEFAULT_MODEL, used))
        given[leaning] = 0
        for seed in range(100, 160):
            frame, flat, lean = leaning_beside_two_flat(seed)
            dice = reader.read(frame).dice
            given[leaning] += sum(
                1 for d in dice if iou(d.box, lean.box) >= 0.3 and d.value is not None
            )
            for die in flat:
                assert [(d.value, d.status) for d in dice if iou(d.box, die.box) >= 0.5] == [
                    (die.value, "ok")
                ], seed
    assert given[True] < given[False]


def test_the_rows_of_the_hidden_check_need_one_box_and_reading_a_feature_row() -> None:
    with pytest.raises(ValueError, match="2 feature rows, 1 boxes and 2 readings"):
        hidden_rows(np.zeros((2, 3), np.float32), [(0, 0, 5, 5)], np.zeros((2, 7), np.float32))
    empty = hidden_rows(np.zeros((0, 3), np.float32), [], np.zeros((0, 7), np.float32))
    assert empty.shape == (0, 3 + HIDDEN_EXTRAS)


def _narrow_is_hidden(model: Path) -> DieCheck:
    """A partly-hidden check on the tiny model's rows that takes a box whose short side is
    less than 0.75 of its long one for a die partly hidden (threshold 0.9)."""
    weight = [0.0] * (3 + HIDDEN_EXTRAS)
    weight[3] = -20.0  # short side over long side
    return _check(model, weight, 0.75 * 20.0 + 2.2)


@pytest.mark.parametrize(
    ("hidden", "narrow"),
    [
        pytest.param(True, (None, "uncertain", True), id="asked, with no value"),
        pytest.param(False, (1, "ok", False), id="no partly-hidden check: read as before"),
    ],
)
def test_a_face_the_check_takes_for_a_die_partly_hidden_is_asked_not_guessed(
    tiny_model: Path, hidden: bool, narrow: tuple[int | None, str, bool]
) -> None:
    """Two red dice the tiny model reads as sure 1s; one box is square, the other narrow, as
    what shows of a die under a card. The check asks about the narrow one alone; without a
    partly-hidden check both are read."""
    frame = np.full((300, 500, 3), 255, np.uint8)
    square, thin = (60, 60, 120, 120), (300, 60, 336, 120)
    _patch(frame, square, (0, 0, 255))
    _patch(frame, thin, (0, 0, 255))
    check = _check(tiny_model, [-10.0, -10.0, -10.0], 5.0)
    if hidden:
        check = dataclasses.replace(check, hidden=_narrow_is_hidden(tiny_model))
    reader = DiceReader(
        OnnxClassifier(tiny_model),
        locator=_Fixed([square, thin]),
        die_check=DieChecker(tiny_model, check),
    )
    dice = reader.read(frame).dice
    assert [(d.value, d.status, d.hidden) for d in dice] == [(1, "ok", False), narrow]
    assert dice[1].to_json().get("hidden", False) is narrow[2]
    assert "hidden" not in dice[0].to_json()


@pytest.mark.parametrize(
    ("leaning", "hidden", "narrow"),
    [
        pytest.param(True, False, (None, "cocked", False), id="cocked, with no value"),
        pytest.param(True, True, (None, "uncertain", True), id="partly hidden comes first"),
        pytest.param(False, False, (1, "ok", False), id="no leaning check: read as before"),
    ],
)
def test_a_face_the_check_takes_for_a_leaning_die_is_cocked(
    tiny_model: Path, leaning: bool, hidden: bool, narrow: tuple[int | None, str, bool]
) -> None:
    """Two red dice the tiny model reads as sure 1s, one box square, one narrow (as a leaning
    die's box is stretched by its side), and a narrow dim red box read as an unsure 1 with a
    fair chance of no face, which the reader drops. A leaning check that takes narrow faces
    makes the narrow die ``cocked`` and gives it no value; it never brings back the box the
    reader drops (it judges dice, not phantoms). A die the partly-hidden check asks about
    stays asked about."""
    frame = np.full((300, 500, 3), 255, np.uint8)
    square, thin, dim = (60, 60, 120, 120), (300, 60, 336, 120), (200, 180, 236, 240)
    _patch(frame, square, (0, 0, 255))
    _patch(frame, thin, (0, 0, 255))
    _patch(frame, dim, (0, 0, 36))
    check = _check(tiny_model, [-10.0, -10.0, -10.0], 5.0)
    if leaning:
        check = dataclasses.replace(check, leaning=_narrow_is_hidden(tiny_model))
    if hidden:
        check = dataclasses.replace(check, hidden=_narrow_is_hidden(tiny_model))
    again = DieCheck.from_json(json.loads(json.dumps(check.to_json())))
    assert (again.leaning is None) is not leaning
    reader = DiceReader(
        OnnxClassifier(tiny_model),
        locator=_Fixed([square, thin, dim]),
        die_check=DieChecker(tiny_model, again),
    )
    dice = reader.read(frame).dice
    assert [(d.box, d.value, d.status, d.hidden) for d in dice] == [
        (square, 1, "ok", False),
        (thin, *narrow),
    ]


@pytest.mark.parametrize(
    ("which", "counts"),
    [
        pytest.param(None, (0, 0, 2), id="no check: read, as another value"),
        pytest.param("leaning", (0, 2, 0), id="leaning: asked (to be thrown again)"),
        pytest.param("hidden", (0, 2, 0), id="partly hidden: asked"),
    ],
)
def test_the_logo_probe_counts_what_the_checks_flag_as_asked(
    tiny_model: Path, which: str | None, counts: tuple[int, int, int]
) -> None:
    """Two red crops, sure 1s to the tiny model (so not sixes): counted as read wrong, unless a
    check of the faces flags them, as the reader would ask about them then."""
    from vision.train.logos import LogoCounts, read_logo_sixes

    images = np.zeros((2, 64, 64, 3), np.uint8)
    images[..., 0] = 255  # RGB, as rendered
    everything = _check(tiny_model, [0.0] * (3 + HIDDEN_EXTRAS), 5.0)
    check = _check(tiny_model, [-10.0, -10.0, -10.0], 5.0)
    if which == "leaning":
        check = dataclasses.replace(check, leaning=everything)
    elif which == "hidden":
        check = dataclasses.replace(check, hidden=everything)
    reader = DiceReader(
        OnnxClassifier(tiny_model), locator=_Fixed([]), die_check=DieChecker(tiny_model, check)
    )
    assert read_logo_sixes(reader, images) == LogoCounts(*counts)


def test_a_leaning_check_on_other_features_is_refused() -> None:
    def check(sha: str, size: int) -> DieCheck:
        ones = np.ones(size, np.float32)
        return DieCheck(sha, "f", ones, ones, ones, bias=0.25, threshold=0.8)

    whole = dataclasses.replace(check("abc", 2), leaning=check("abc", 2 + HIDDEN_EXTRAS))
    assert DieCheck.from_json(whole.to_json()).leaning is not None
    for other in (check("xyz", 2 + HIDDEN_EXTRAS), check("abc", 2)):
        wrong = dataclasses.replace(whole, leaning=other).to_json()
        with pytest.raises(ValueError, match="leaning-face check reads other features"):
            DieCheck.from_json(wrong)


def test_the_face_model_gives_the_check_its_features_from_the_same_run() -> None:
    """The shipped composed model's first member computes the features the check reads: its
    run gives them beside the reading, equal to the check's own session, and the reading is the
    one :meth:`OnnxClassifier.predict` gives."""
    from vision.source import read_image

    images = sorted((ROOT / "tests" / "data" / "dice" / "images").iterdir())
    reader = DiceReader(OnnxClassifier(DEFAULT_MODEL))
    boxes = [d.box for d in reader.locate(read_image(images[0]))]
    crops = crops_for_model(read_image(images[0]), boxes)
    classifier = OnnxClassifier(DEFAULT_MODEL)
    probs, features = classifier.predict_with_features(crops)
    checker = DieChecker(DEFAULT_MODEL, load_die_check(DEFAULT_DIE_CHECK))
    assert checker.reads_features_of(classifier)
    assert features is not None
    np.testing.assert_array_equal(features, checker.features(crops))
    np.testing.assert_array_equal(probs, classifier.predict(crops))
    # A model read whole gives no features; neither does a model the check was not opened on.
    whole = OnnxClassifier(DEFAULT_MODEL, first_sure=None)
    assert whole.predict_with_features(crops)[1] is None
    assert not checker.reads_features_of(whole)


def test_the_reader_runs_the_first_member_once_when_it_gives_the_check_its_features(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader whose check reads the face model's own features never opens the check's
    session, and reads every die (value, status, confidence, box, hidden) as a check that runs
    its own: on the committed photos and on trays with a die partly under a card."""
    from vision.source import read_image
    from vision.train.hidden import hidden_tray

    copy = tmp_path / "same-model.onnx"
    copy.write_bytes(DEFAULT_MODEL.read_bytes())
    check = load_die_check(DEFAULT_DIE_CHECK)
    shared = DieChecker(DEFAULT_MODEL, check)
    apart = DieChecker(copy, check)  # another file: the check runs its own session

    def refuse(*_: Any) -> Any:
        raise AssertionError("the check ran the first member a second time")

    monkeypatch.setattr(shared, "features", refuse)
    one_run = DiceReader(OnnxClassifier(DEFAULT_MODEL), die_check=shared)
    two_runs = DiceReader(OnnxClassifier(DEFAULT_MODEL), die_check=apart)
    assert not apart.reads_features_of(two_runs.classifier)
    frames = [read_image(p) for p in sorted((ROOT / "tests/data/dice/images").iterdir())]
    frames += [hidden_tray(seed, 0.3)[0] for seed in range(8)]
    hidden = 0
    for frame in frames:
        reading = one_run.read(frame)
        assert reading == two_runs.read(frame)
        hidden += sum(d.hidden for d in reading.dice)
    assert hidden > 0  # the partly-hidden check had something to judge


def test_features_that_do_not_fit_the_crops_are_refused(tiny_model: Path) -> None:
    checker = DieChecker(tiny_model, _check(tiny_model, [-10.0, -10.0, -10.0], 5.0))
    crops = np.zeros((2, 3, 64, 64), np.float32)
    probs = np.full((2, 7), 1 / 7, np.float32)
    with pytest.raises(
        ValueError, match=r"features of shape \(1, 3\) for 2 crops; the check reads 3"
    ):
        checker.judge_frame(crops, [(0, 0, 9, 9)] * 2, probs, features=np.zeros((1, 3), np.float32))


@pytest.mark.parametrize("hidden_dropped", [True, False])
def test_a_box_otherwise_dropped_that_the_check_takes_for_a_die_partly_hidden_is_asked(
    tiny_model: Path, hidden_dropped: bool
) -> None:
    """Boxes the reader drops: two dark grey ones the tiny model calls "no face" (and the
    leaning-die check refuses), one square, one narrow as what shows of a die under a card; and
    a narrow dim red one it reads as an unsure 1 with a fair chance of no face (0.2). The check
    of the boxes otherwise dropped takes the narrow ones for dice partly hidden: they are asked
    about, with no value; the square one is dropped. A narrow box over the seam of two dice read
    is dropped too: they are there already. Without that check, all are dropped as before."""
    frame = np.full((300, 800, 3), 255, np.uint8)
    square, thin, dim = (60, 60, 120, 120), (300, 60, 336, 120), (200, 180, 236, 240)
    _patch(frame, square, (25, 25, 25))
    _patch(frame, thin, (25, 25, 25))
    _patch(frame, dim, (0, 0, 36))
    left, right, seam = (500, 40, 560, 200), (560, 40, 620, 200), (542, 60, 578, 120)
    frame[24:216, 434:686] = (0, 0, 255)  # two red dice side by side: their whole crops
    frame[54:126, 524:596] = 25  # the seam's whole crop, dark grey
    check = _check(tiny_model, [-10.0, -10.0, -10.0], 5.0, threshold=0.999)
    if hidden_dropped:
        check = dataclasses.replace(check, hidden_dropped=_narrow_is_hidden(tiny_model))
    classifier = OnnxClassifier(tiny_model)
    locator = _Fixed([square, thin, dim, left, right, seam])
    probs = classifier.predict(crops_for_model(frame, [dim]))[0]
    assert int(probs.argmax()) != 0  # an unsure face, as said above
    assert probs.max() < 0.5
    assert probs[0] >= 0.2
    reader = DiceReader(classifier, locator=locator, die_check=DieChecker(tiny_model, check))
    got = {d.box: (d.value, d.status, d.hidden) for d in reader.read(frame).dice}
    asked = (None, "uncertain", True)
    expected = {thin: asked, dim: asked} if hidden_dropped else {}
    assert got == {left: (1, "ok", False), right: (1, "ok", False), **expected}


def test_a_dropped_check_that_reads_the_crops_edges_takes_a_box_whose_sides_stand_out(
    tiny_model: Path,
) -> None:
    """Two dark grey boxes the tiny model calls "no face": one on a margin of its own colour,
    one whose sides meet a black margin. A check of the boxes otherwise dropped that reads
    the crop's edges (here: the largest colour distance across a side) asks about the second
    alone."""
    frame = np.full((300, 500, 3), 255, np.uint8)
    blended, standing = (60, 60, 120, 120), (300, 60, 360, 120)
    _patch(frame, blended, (25, 25, 25))
    _patch(frame, standing, (0, 0, 0))
    frame[60:120, 300:360] = 25
    classifier = OnnxClassifier(tiny_model)
    probs = classifier.predict(crops_for_model(frame, [blended, standing]))
    assert dropped(probs).all()
    weight = [0.0] * (3 + HIDDEN_EXTRAS + EDGE_FEATURES)
    weight[3 + HIDDEN_EXTRAS] = 60.0  # the largest colour distance across a side (0.17)
    edges = _check(tiny_model, weight, -5.0)
    check = dataclasses.replace(
        _check(tiny_model, [-10.0, -10.0, -10.0], 5.0, threshold=0.999), hidden_dropped=edges
    )
    again = DieCheck.from_json(json.loads(json.dumps(check.to_json())))
    assert again.hidden_dropped is not None
    assert again.hidden_dropped.mean.shape == (len(weight),)
    reader = DiceReader(
        classifier, locator=_Fixed([blended, standing]), die_check=DieChecker(tiny_model, again)
    )
    got = [(d.box, d.value, d.status, d.hidden) for d in reader.read(frame).dice]
    assert got == [(standing, None, "uncertain", True)]


def test_rows_with_the_crops_end_with_their_edges() -> None:
    crops = np.random.default_rng(0).random((2, 3, 64, 64)).astype(np.float32)
    boxes = [(0, 0, 10, 10), (0, 0, 5, 10)]
    rows = hidden_rows(np.zeros((2, 1), np.float32), boxes, np.zeros((2, 7), np.float32))
    with_edges = hidden_rows(
        np.zeros((2, 1), np.float32), boxes, np.zeros((2, 7), np.float32), crops=crops
    )
    np.testing.assert_array_equal(with_edges[:, : rows.shape[1]], rows)
    np.testing.assert_array_equal(with_edges[:, rows.shape[1] :], edge_features(crops, boxes))
    with pytest.raises(ValueError, match="2 feature rows, 2 boxes and 2 readings and 1 crops"):
        hidden_rows(
            np.zeros((2, 1), np.float32), boxes, np.zeros((2, 7), np.float32), crops=crops[:1]
        )
    empty = hidden_rows(
        np.zeros((0, 1), np.float32), [], np.zeros((0, 7), np.float32), crops=crops[:0]
    )
    assert empty.shape == (0, 1 + HIDDEN_EXTRAS + EDGE_FEATURES)


def test_the_boxes_the_dropped_check_judges_are_those_the_reader_drops_by_default() -> None:
    """``dropped`` (what the fourth check was fitted on) restates the reader's default rules:
    a change of either default needs ``dropped`` and the check changed with it."""
    import inspect

    params = inspect.signature(DiceReader.__init__).parameters
    least, unsure = params["min_confidence"].default, params["unsure_no_face"].default
    rows = np.zeros((4, 7), np.float32)
    rows[0, [0, 1]] = (0.51, 0.49)  # "no face"
    rows[1, [0, 1, 2]] = (unsure, least - 0.01, 1 - unsure - least + 0.01)  # unsure, p0 enough
    rows[2, [0, 1, 2]] = (unsure - 0.01, least - 0.01, 1 - unsure - least + 0.02)  # p0 too low
    rows[3, [0, 1]] = (unsure, 1 - unsure)  # a sure face
    assert dropped(rows).tolist() == [True, True, False, False]
