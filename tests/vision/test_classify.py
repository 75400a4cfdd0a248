"""The ONNX wrapper against a tiny hand-built model, its errors, and the real model if shipped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vision.classify import (
    CLASSES,
    DEFAULT_LOCATOR_MODEL,
    DEFAULT_MODEL,
    FIRST_SURE,
    FLOAT_MODEL,
    FakeClassifier,
    OnnxClassifier,
    OnnxLocator,
    member_models,
    read_unsure_turned,
    softmax,
)
from vision.errors import ModelLoadError

Weights = tuple[np.ndarray, np.ndarray]


def _crops(count: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).random((count, 3, 64, 64), dtype=np.float32)


def test_tiny_model_logits_match_numpy(tiny_model: Path, tiny_weights: Weights) -> None:
    classifier = OnnxClassifier(tiny_model)
    crops = _crops(5)
    weights, bias = tiny_weights
    expected = crops.mean(axis=(2, 3)) @ weights + bias
    np.testing.assert_allclose(classifier.logits(crops), expected, rtol=1e-4, atol=1e-5)
    probs = classifier.predict(crops)
    assert probs.shape == (5, CLASSES)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize(("channel", "label"), [(0, 1), (1, 2), (2, 3)])
def test_tiny_model_picks_the_class_of_the_dominant_rgb_channel(
    tiny_model: Path, channel: int, label: int
) -> None:
    crops = np.zeros((1, 3, 64, 64), np.float32)
    crops[0, channel] = 1.0
    assert int(np.argmax(OnnxClassifier(tiny_model).predict(crops)[0])) == label


def test_session_runs_on_one_cpu_thread_by_default(tiny_model: Path) -> None:
    classifier = OnnxClassifier(tiny_model)
    options = classifier._session.get_session_options()
    assert options.intra_op_num_threads == 1
    assert options.inter_op_num_threads == 1
    assert classifier._session.get_providers() == ["CPUExecutionProvider"]


def test_thread_count_is_passed_on(tiny_model: Path) -> None:
    options = OnnxClassifier(tiny_model, threads=2)._session.get_session_options()
    assert options.intra_op_num_threads == 2


def test_no_crops_give_no_rows(tiny_model: Path) -> None:
    assert OnnxClassifier(tiny_model).predict(np.zeros((0, 3, 64, 64), np.float32)).shape == (0, 7)


def test_fixed_batch_model_is_run_crop_by_crop(
    tmp_path: Path, model_bytes: Callable[..., bytes], tiny_weights: Weights
) -> None:
    path = tmp_path / "batch1.onnx"
    weights, bias = tiny_weights
    path.write_bytes(model_bytes(weights, bias, batch=1))
    crops = _crops(3, seed=1)
    expected = crops.mean(axis=(2, 3)) @ weights + bias
    np.testing.assert_allclose(OnnxClassifier(path).logits(crops), expected, rtol=1e-4, atol=1e-5)


def test_missing_model_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.onnx"
    with pytest.raises(ModelLoadError) as err:
        OnnxClassifier(path)
    assert str(err.value) == (
        f"face model {str(path)!r} not found: pass --model PATH, or restore"
        " models/dice_faces.onnx from the repository"
    )


def test_damaged_model_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "damaged.onnx"
    path.write_bytes(b"\x08\x07 this is not protobuf")
    with pytest.raises(ModelLoadError) as err:
        OnnxClassifier(path)
    message = str(err.value)
    assert message.startswith(f"cannot load face model {str(path)!r}: ")
    assert message.endswith(
        "the file is damaged or not an ONNX model: restore models/dice_faces.onnx or retrain it"
        " (vision/train)"
    )


def test_model_with_other_names_is_refused(
    tmp_path: Path, model_bytes: Callable[..., bytes], tiny_weights: Weights
) -> None:
    path = tmp_path / "named.onnx"
    weights, bias = tiny_weights
    path.write_bytes(model_bytes(weights, bias, input_name="input", output_name="out"))
    with pytest.raises(ModelLoadError) as err:
        OnnxClassifier(path)
    assert str(err.value) == (
        f"face model {str(path)!r} has inputs ['input'] and outputs ['out'];"
        " expected input 'image' and output 'logits'"
    )


def test_zero_threads_are_refused(tiny_model: Path) -> None:
    with pytest.raises(ValueError, match="threads must be at least 1, got 0"):
        OnnxClassifier(tiny_model, threads=0)


def test_fake_classifier_puts_the_confidence_on_the_decided_class() -> None:
    fake = FakeClassifier(lambda _crop: (4, 0.7))
    probs = fake.predict(_crops(2))
    assert probs[:, 4].tolist() == pytest.approx([0.7, 0.7])
    assert probs.sum(axis=1).tolist() == pytest.approx([1.0, 1.0])
    assert len(fake.calls) == 1


def test_softmax_is_stable_for_large_logits() -> None:
    probs = softmax(np.array([[1000.0, 1000.0, -1000.0]], np.float32))
    assert probs.tolist() == [[0.5, 0.5, 0.0]]


def test_shipped_model_loads_with_the_contract_shapes() -> None:
    classifier = OnnxClassifier(DEFAULT_MODEL)
    probs = classifier.predict(_crops(3))
    assert probs.shape == (3, CLASSES)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


# --- A composed model read member by member: the first alone where it is sure.

# The second member calls a red crop "no face": what the first member decides alone shows.
SECOND_WEIGHTS = np.array(
    [
        [30.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0],
    ],
    np.float32,
)


@pytest.fixture
def composed(tmp_path: Path, model_bytes: Callable[..., bytes], tiny_weights: Weights) -> Path:
    """The tiny model made sure (logits x3) composed with a second, as the ensemble tool does."""
    import onnx

    from vision.train.ensemble import compose

    weights, bias = tiny_weights
    first, second = tmp_path / "first.onnx", tmp_path / "second.onnx"
    first.write_bytes(model_bytes(weights * 3, bias * 3))
    second.write_bytes(model_bytes(SECOND_WEIGHTS, np.zeros(CLASSES, np.float32)))
    path = tmp_path / "composed.onnx"
    onnx.save(compose([first, second], rotations=False), str(path))
    return path


def _colour_crops(*colours: tuple[float, float, float]) -> np.ndarray:
    crops = np.zeros((len(colours), 3, 64, 64), np.float32)
    for row, colour in enumerate(colours):
        crops[row] = np.array(colour, np.float32)[:, None, None]
    return crops


def _member_logits(weights: np.ndarray, bias: np.ndarray, crops: np.ndarray) -> np.ndarray:
    out: np.ndarray = crops.mean(axis=(2, 3)) @ weights + bias
    return out


def test_members_of_a_composed_model_are_its_models(composed: Path, tiny_weights: Weights) -> None:
    import onnx
    import onnxruntime as ort

    members = member_models(onnx.load(str(composed)))
    assert len(members) == 2
    crops = _crops(4, seed=3)
    weights, bias = tiny_weights
    wanted = [(weights * 3, bias * 3), (SECOND_WEIGHTS, np.zeros(CLASSES, np.float32))]
    for member, (w, b) in zip(members, wanted, strict=True):
        session = ort.InferenceSession(
            member.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        (got,) = session.run(None, {"image": crops})
        want = np.log(softmax(_member_logits(w, b, crops)))
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_one_model_or_a_turned_composition_has_no_members(
    tiny_model: Path, tmp_path: Path, model_bytes: Callable[..., bytes], tiny_weights: Weights
) -> None:
    import onnx

    from vision.train.ensemble import compose

    assert member_models(onnx.load(str(tiny_model))) == []
    other = tmp_path / "other.onnx"
    other.write_bytes(model_bytes(SECOND_WEIGHTS, tiny_weights[1]))
    turned = compose([tiny_model, other], rotations=True)
    assert member_models(turned) == []


@pytest.mark.parametrize(
    ("colour", "first_decides"),
    [
        ((1.0, 0.0, 0.0), True),  # red: the first member is sure of a one
        ((0.0, 1.0, 0.0), True),  # green: sure of a two
        ((0.5, 0.5, 0.0), False),  # a one or a two: both members read it
        ((0.2, 0.2, 0.2), False),  # grey: the first member is unsure
    ],
    ids=["red", "green", "red-green", "grey"],
)
def test_the_first_member_decides_alone_only_what_it_is_sure_of(
    composed: Path, tiny_weights: Weights, colour: tuple[float, float, float], first_decides: bool
) -> None:
    crops = _colour_crops(colour)
    weights, bias = tiny_weights
    first = softmax(_member_logits(weights * 3, bias * 3, crops))
    assert (first.max() >= FIRST_SURE) == first_decides
    classifier = OnnxClassifier(composed)
    got, whole = classifier.predict(crops), classifier.predict_whole(crops)
    np.testing.assert_allclose(got, first if first_decides else whole, atol=1e-5)
    np.testing.assert_allclose(OnnxClassifier(composed, first_sure=None).predict(crops), whole)


def test_a_sure_first_member_is_not_overruled_but_mixed_batches_keep_their_order(
    composed: Path,
) -> None:
    crops = _colour_crops((0.5, 0.5, 0.0), (1.0, 0.0, 0.0), (0.2, 0.2, 0.2), (0.0, 1.0, 0.0))
    classifier = OnnxClassifier(composed)
    got, whole = classifier.predict(crops), classifier.predict_whole(crops)
    # The second member reads red as "no face", and the whole model with it; the first does not.
    assert int(whole[1].argmax()) != 1
    assert [int(row.argmax()) for row in got[[1, 3]]] == [1, 2]
    np.testing.assert_allclose(got[[0, 2]], whole[[0, 2]], atol=1e-6)
    for crop, row in zip(crops, got, strict=True):
        np.testing.assert_allclose(classifier.predict(crop[None])[0], row, atol=1e-6)


def test_the_first_member_is_read_alone_only_in_a_composed_model(
    composed: Path, tiny_model: Path, tiny_weights: Weights
) -> None:
    crops = _colour_crops((1.0, 0.0, 0.0), (0.2, 0.2, 0.2))
    weights, bias = tiny_weights
    classifier = OnnxClassifier(composed)
    assert classifier.has_members
    want = np.log(softmax(_member_logits(weights * 3, bias * 3, crops)))
    np.testing.assert_allclose(classifier.first_member_logp(crops), want, atol=1e-4)
    for whole in (OnnxClassifier(composed, first_sure=None), OnnxClassifier(tiny_model)):
        assert not whole.has_members
        with pytest.raises(ValueError, match="read whole: it has no first member"):
            whole.first_member_logp(crops)


def test_a_face_read_again_at_turns_is_read_by_every_member(
    composed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    classifier = OnnxClassifier(composed)
    crops = _colour_crops((0.2, 0.2, 0.2))
    probs = classifier.predict(crops)
    seen: list[int] = []
    whole = classifier.predict_whole

    def counted(batch: np.ndarray) -> np.ndarray:
        seen.append(len(batch))
        return whole(batch)

    monkeypatch.setattr(classifier, "predict_whole", counted)
    monkeypatch.setattr(classifier, "predict", lambda _batch: pytest.fail("turns read by one"))
    read_unsure_turned(classifier, crops, probs, 0.9)
    assert seen == [3]


@pytest.mark.parametrize("model", [FLOAT_MODEL, DEFAULT_MODEL], ids=["float", "int8"])
def test_the_shipped_model_is_read_member_by_member(model: Path) -> None:
    classifier = OnnxClassifier(model)
    crops = _crops(3)
    np.testing.assert_allclose(classifier.predict(crops).sum(axis=1), 1.0, rtol=1e-5)
    assert len(classifier._members) == 2


@pytest.mark.parametrize("model", [FLOAT_MODEL, DEFAULT_MODEL], ids=["float", "int8"])
def test_a_composed_model_is_read_by_its_members_alone_until_its_logits_are_asked(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading, reading whole and reading at turns run the members: the whole model's session,
    which holds their weights a second time, is opened only for :meth:`logits`, once, and
    agrees with them."""
    import vision.classify as classify

    opened: list[Path] = []
    real = classify._session

    def counted(path: Path, *args: Any, **kwargs: Any) -> Any:
        opened.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(classify, "_session", counted)
    classifier = OnnxClassifier(model)
    crops = _crops(5)
    probs = classifier.predict(crops)
    whole = classifier.predict_whole(crops)
    read_unsure_turned(classifier, crops, probs, 1.0)  # every crop read again at three turns
    assert opened == []
    logits = classifier.logits(crops)
    np.testing.assert_allclose(softmax(logits), whole, atol=1e-5)
    classifier.logits(crops)
    assert opened == [model]
    # Read whole from the start, the same model gives the same whole reading.
    np.testing.assert_allclose(
        OnnxClassifier(model, first_sure=None).predict(crops), whole, atol=1e-5
    )


@pytest.mark.parametrize("first_sure", [0.0, 1.5, -0.1])
def test_a_first_sure_that_is_no_probability_is_refused(
    tiny_model: Path, first_sure: float
) -> None:
    with pytest.raises(ValueError, match=f"first_sure must be a probability .*got {first_sure}"):
        OnnxClassifier(tiny_model, first_sure=first_sure)


# --- A member taken out of a composed model (to compose a new member with a shipped one).


def _logits(model: object, crops: np.ndarray) -> np.ndarray:
    import onnx
    import onnxruntime as ort

    assert isinstance(model, onnx.ModelProto)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (out,) = session.run(["logits"], {"image": crops})
    result: np.ndarray = out
    return result


def test_a_member_taken_out_gives_its_own_logits_under_its_own_names(
    composed: Path, tiny_weights: Weights
) -> None:
    import onnx

    from vision.train.ensemble import take_member

    crops = _crops(5, seed=4)
    weights, bias = tiny_weights
    wanted = [(weights * 3, bias * 3), (SECOND_WEIGHTS, np.zeros(CLASSES, np.float32))]
    for number, (w, b) in enumerate(wanted, start=1):
        member = take_member(onnx.load(str(composed)), number)
        np.testing.assert_allclose(_logits(member, crops), _member_logits(w, b, crops), atol=1e-5)
        names = [n for node in member.graph.node for n in (*node.input, *node.output)]
        assert not [n for n in names if n.startswith(("m0/", "m1/"))], names


def test_members_taken_out_compose_back_to_the_same_logits(composed: Path, tmp_path: Path) -> None:
    import onnx

    from vision.train.ensemble import compose, main

    paths = []
    for number in (1, 2):
        path = tmp_path / f"taken{number}.onnx"
        assert main(["--member", str(number), str(path), str(composed)]) == 0
        paths.append(path)
    crops = _crops(6, seed=5)
    again = compose(paths, rotations=False)
    np.testing.assert_array_equal(_logits(again, crops), _logits(onnx.load(str(composed)), crops))


@pytest.mark.parametrize("model", [FLOAT_MODEL, DEFAULT_MODEL], ids=["float", "int8"])
def test_the_shipped_members_compose_back_to_the_shipped_file(tmp_path: Path, model: Path) -> None:
    import onnx

    from vision.train.ensemble import compose, take_member

    shipped = onnx.load(str(model))
    paths = []
    for number in (1, 2):
        paths.append(tmp_path / f"member{number}.onnx")
        onnx.save(take_member(shipped, number), str(paths[-1]))
    # The int8 copy carries what it was made from in its metadata, which composing does not.
    del shipped.metadata_props[:]
    assert compose(paths, rotations=False).SerializeToString() == shipped.SerializeToString()
    if model == FLOAT_MODEL:
        assert shipped.SerializeToString() == model.read_bytes()


@pytest.mark.parametrize(
    ("which", "number", "message"),
    [
        ("composed", 0, "the model has members 1 to 2, not 0"),
        ("composed", 3, "the model has members 1 to 2, not 3"),
        ("tiny", 1, "not a composition of face models without turns"),
    ],
)
def test_a_member_that_is_not_there_is_refused(
    composed: Path, tiny_model: Path, which: str, number: int, message: str
) -> None:
    import onnx

    from vision.train.ensemble import take_member

    path = composed if which == "composed" else tiny_model
    with pytest.raises(ValueError, match=message):
        take_member(onnx.load(str(path)), number)


def test_member_on_the_command_line_names_the_file_and_takes_one_model(
    composed: Path, tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vision.train.ensemble import main

    out = tmp_path / "out.onnx"
    with pytest.raises(SystemExit) as exit_:
        main(["--member", "1", str(out), str(tiny_model)])
    assert exit_.value.code == 2
    assert f"{tiny_model}: this model is not a composition" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--member", "1", str(out), str(composed), str(composed)])
    assert "--member takes one composed model" in capsys.readouterr().err
    assert not out.exists()


# --- The learned locator's session: the same loading rules, its own names and shapes.


def test_missing_locator_model_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.onnx"
    with pytest.raises(ModelLoadError) as err:
        OnnxLocator(path)
    assert str(err.value) == (
        f"locator model {str(path)!r} not found: pass --locator-model PATH or --locator"
        " classical, or restore models/dice_locator.onnx from the repository"
    )


def test_damaged_locator_model_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "damaged.onnx"
    path.write_bytes(b"\x08\x07 this is not protobuf")
    with pytest.raises(ModelLoadError) as err:
        OnnxLocator(path)
    message = str(err.value)
    assert message.startswith(f"cannot load locator model {str(path)!r}: ")
    assert message.endswith(
        "the file is damaged or not an ONNX model: restore models/dice_locator.onnx or retrain it"
        " (python -m vision.train.locator)"
    )


def test_a_face_model_is_no_locator(tiny_model: Path) -> None:
    with pytest.raises(ModelLoadError) as err:
        OnnxLocator(tiny_model)
    assert str(err.value) == (
        f"locator model {str(tiny_model)!r} has inputs ['image'] and outputs ['logits'];"
        " expected input 'image' and outputs 'heatmap' and 'boxes'"
    )


def test_zero_locator_threads_are_refused(tiny_model: Path) -> None:
    with pytest.raises(ValueError, match="threads must be at least 1, got 0"):
        OnnxLocator(tiny_model, threads=0)


@pytest.mark.parametrize(("height", "width"), [(240, 320), (320, 224)])
def test_shipped_locator_answers_a_stride_four_grid_on_one_thread(height: int, width: int) -> None:
    locator = OnnxLocator(DEFAULT_LOCATOR_MODEL)
    options = locator._session.get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)
    heat, boxes = locator.run(np.full((1, 3, height, width), 0.5, np.float32))
    assert heat.shape == (1, 1, height // 4, width // 4)
    assert boxes.shape == (1, 4, height // 4, width // 4)
    assert heat.dtype == boxes.dtype == np.float32
    # A flat grey frame holds no die: no cell of the heatmap is above the decoding threshold.
    assert float(1 / (1 + np.exp(-heat.max()))) < 0.4
