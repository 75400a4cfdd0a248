"""The vision commands of pipcam: read, bench, calibrate and eval, run as the CLI runs them."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from pipcam import vision_cli
from pipcam.vision_cli import add_vision_commands
from tests.vision.test_picam import FakePicamera2, fake_picamera2  # noqa: F401 - the fixture
from vision.calibrate import load_calibration
from vision.classify import DEFAULT_LOCATOR_MODEL, FakeClassifier, processor
from vision.errors import ModelLoadError
from vision.locate import ClassicalLocator, LearnedLocator
from vision.picam import CameraSettings
from vision.synthetic import DieSpec, draw_die, make_frame, make_tray, six_dice
from vision.train.data import split_of

LOCATORS = ["learned", "classical"]


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="pipcam")
    add_vision_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code = args.func(args)
    assert isinstance(code, int)
    return code


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch, pip_classifier: FakeClassifier) -> None:
    """Make the commands read with the pip-counting classifier instead of the ONNX model."""
    monkeypatch.setattr(vision_cli, "OnnxClassifier", lambda _path, **_options: pip_classifier)


def _write(path: Path, frame: np.ndarray) -> Path:
    assert cv2.imwrite(str(path), frame)
    return path


@pytest.fixture
def photos(tmp_path: Path) -> tuple[Path, Path, list[int]]:
    """A photo of three dice (values returned) and a photo of the empty tray."""
    dice = [DieSpec(6, 150, 150, 60), DieSpec(2, 400, 200, 60, angle=30), DieSpec(3, 300, 380, 60)]
    three = _write(tmp_path / "three.png", make_frame(640, 480, dice, tray="green"))
    empty = _write(tmp_path / "empty.png", make_tray(640, 480, colour="green"))
    return three, empty, [6, 2, 3]


@pytest.mark.usefixtures("fake_model")
def test_read_json_prints_one_object_per_image_in_order_and_reports_bad_files(
    photos: tuple[Path, Path, list[int]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    three, empty, values = photos
    missing = tmp_path / "missing.jpg"
    code = _run(["read", "--json", str(three), str(missing), str(empty)])
    out, err = capsys.readouterr()
    assert code == 1
    assert err == f"pipcam read: cannot read image {str(missing)!r}: no such file\n"
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["image"] == str(three)
    assert first["status"] == "settled"
    assert sorted(d["value"] for d in first["dice"]) == sorted(values)
    assert set(first["dice"][0]) == {"value", "confidence", "status", "box"}
    assert all(d["status"] == "ok" and len(d["box"]) == 4 for d in first["dice"])
    assert second == {"image": str(empty), "status": "empty", "dice": []}


@pytest.mark.usefixtures("fake_model")
@pytest.mark.parametrize("locator", LOCATORS)
def test_read_prints_a_short_line_per_image(
    photos: tuple[Path, Path, list[int]], capsys: pytest.CaptureFixture[str], locator: str
) -> None:
    three, empty, _ = photos
    assert _run(["read", "--locator", locator, str(three), str(empty)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{three}: settled: ")
    assert sorted(out[0].split(": ")[2].split()) == ["2", "3", "6"]
    assert out[1] == f"{empty}: empty: no dice"


@pytest.mark.usefixtures("fake_model")
def test_read_from_a_camera_spec(
    photos: tuple[Path, Path, list[int]], capsys: pytest.CaptureFixture[str]
) -> None:
    three, _, _ = photos
    assert _run(["read", "--json", "--camera", f"file:{three}"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["image"] == f"file:{three}"
    assert len(result["dice"]) == 3


def test_read_without_images_or_camera_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["read"]) == 2
    assert capsys.readouterr().err == "pipcam read: give IMAGE files to read, or --camera SPEC\n"


def test_read_with_a_missing_model_says_so(
    photos: tuple[Path, Path, list[int]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "none.onnx"
    assert _run(["read", "--model", str(model), str(photos[0])]) == 1
    assert capsys.readouterr().err == (
        f"pipcam read: face model {str(model)!r} not found: pass --model PATH, or restore"
        " models/dice_faces.onnx from the repository\n"
    )


@pytest.mark.usefixtures("fake_model")
def test_read_draws_what_it_read_beside_the_readings(
    photos: tuple[Path, Path, list[int]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--annotate DIR``: each image with its dice boxed, as NAME.read.jpg, two images of one
    name kept apart; the printed readings are as without it."""
    three, empty, _ = photos

    def load(path: Path) -> np.ndarray[Any, Any]:
        image = cv2.imread(str(path))
        assert image is not None, path
        return np.asarray(image, np.int16)

    other = tmp_path / "other"
    other.mkdir()
    again = _write(other / "three.png", load(three).astype(np.uint8))
    out = tmp_path / "drawn"
    assert _run(["read", "--json", "--annotate", str(out), str(three), str(empty), str(again)]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3
    assert sorted(p.name for p in out.iterdir()) == [
        "empty.read.jpg",
        "three-2.read.jpg",
        "three.read.jpg",
    ]
    drawn, plain = load(out / "three.read.jpg"), load(three)
    assert drawn.shape == plain.shape
    changed = np.abs(drawn - plain).max(axis=2) > 60
    # Boxes drawn around the three dice (at 150,150; 400,200; 300,380), nothing on the empty tray.
    for x, y in ((150, 150), (400, 200), (300, 380)):
        assert changed[y - 50 : y + 50, x - 50 : x + 50].any()
    assert not changed[440:, :100].any()
    assert np.abs(load(out / "empty.read.jpg") - load(empty)).max() < 30  # JPEG, no box


def test_read_runs_a_real_onnx_model(
    photos: tuple[Path, Path, list[int]], tiny_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(["read", "--json", "--model", str(tiny_model), str(photos[0])]) == 0
    result = json.loads(capsys.readouterr().out)
    # The tiny model's answers mean nothing; three dice were found and each was classified.
    assert len(result["dice"]) == 3
    assert all(0.0 < d["confidence"] <= 1.0 for d in result["dice"])


@pytest.mark.parametrize(
    ("blur", "said"),
    [
        (0.0, None),
        (12.0, "{blurred} dice blurred past reading: the camera looks out of focus"),
        (
            20.0,
            "6 soft shapes where no die was found (dice blurred past finding?): the camera looks"
            " out of focus",
        ),
    ],
    ids=["sharp", "past-reading", "past-finding"],
)
def test_read_warns_of_a_camera_out_of_focus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], blur: float, said: str | None
) -> None:
    """The quickest check of a camera is one frame read: most dice blurred past reading, or so
    blurred that none is found, are said on stderr as the table's focus watch counts them; the
    reading itself is printed as always."""
    _lens_turned(tmp_path / "lens", [blur])
    image = tmp_path / "lens" / "00.png"
    assert _run(["read", "--json", str(image)]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    if said is None:
        assert captured.err == ""
        assert [d["status"] for d in result["dice"]] == ["ok"] * 6
        return
    blurred = sum(1 for d in result["dice"] if d.get("blurred"))
    assert blurred >= 4 if blur < 16 else blurred == 0
    assert captured.err == (
        f"pipcam read: warning: {image}: {said.format(blurred=blurred)}; `pipcam focus` measures"
        " it while you turn the lens\n"
    )
    assert all(d["value"] is None for d in result["dice"])  # never guessed


@pytest.mark.usefixtures("fake_model")
def test_calibrate_then_read_sets_aside_dice_off_the_tray(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = make_tray(800, 600, colour="brown", seed=1)
    table[60:540, 60:600] = make_tray(540, 480, colour="green", seed=2)
    empty = _write(tmp_path / "empty.png", table)
    out = tmp_path / "cal" / "tray.json"
    assert _run(["calibrate", "--camera", f"file:{empty}", "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith("calibrated 800x600: roll zone [")
    calibration = load_calibration(out)
    x0, y0, x1, y1 = calibration.zone.pixels(800, 600)
    assert max(abs(x0 - 60), abs(y0 - 60), abs(x1 - 600), abs(y1 - 540)) <= 6

    frame = table.copy()
    for spec in (DieSpec(4, 300, 300, 50), DieSpec(1, 700, 300, 50)):
        draw_die(frame, spec)
    photo = _write(tmp_path / "roll.png", frame)
    assert _run(["read", "--json", "--calibration", str(out), str(photo)]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert [d["value"] for d in result["dice"]] == [4]
    assert [d["value"] for d in result["set_aside"]] == [1]
    assert captured.err == ""  # the photo is of the calibrated shape

    # Half the size, same shape: the same tray, silently. Another shape is read, with a warning.
    half = _write(tmp_path / "half.png", cv2.resize(frame, (400, 300)))
    wide = _write(tmp_path / "wide.png", frame[:450])
    assert _run(["read", "--calibration", str(out), str(half), str(wide)]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 2
    assert captured.err == (
        f"pipcam read: warning: {wide}: frames are 800x450 but the tray was calibrated on"
        " 800x600 frames, another shape: the roll zone may be off; run pipcam calibrate again"
        " with this camera\n"
    )


def _shows_tray(
    monkeypatch: pytest.MonkeyPatch,
    mend: Callable[[np.ndarray[Any, Any]], None] | None = None,
) -> None:
    """The fake Pi camera shows an empty green tray (``mend`` adds to it) at the size it was
    configured for."""

    def capture(camera: FakePicamera2, name: str = "main") -> np.ndarray[Any, Any]:
        config = next(c for n, c in camera.calls if n == "configure")
        width, height = config[name]["size"]
        tray = make_tray(width, height, colour="green", seed=2)
        if mend is not None:
            mend(tray)
        return tray

    monkeypatch.setattr(FakePicamera2, "capture_array", capture)


@pytest.mark.usefixtures("fake_model")
def test_calibrate_locks_the_pi_camera_and_writes_beside_the_games(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_picamera2: type[FakePicamera2],  # noqa: F811 - the fixture imported above
) -> None:
    monkeypatch.chdir(tmp_path)
    _shows_tray(monkeypatch)
    data = tmp_path / "data"
    assert _run(["calibrate", "--camera", "picamera:640x480", "--data", str(data)]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "camera locked: exposure 10000 us (whole flickers of 50 Hz lamps), gain 1.80, colour"
        " gains 1.80 / 1.40"
    ]
    calibration = load_calibration(data / "calibration.json")
    assert calibration.frame_size == (640, 480)
    assert calibration.camera == CameraSettings(10000, 1.8, (1.8, 1.4), flicker_period=10000)
    assert fake_picamera2.instances[0].controls["AeEnable"] is False

    # A config naming its calibration file and camera: calibrate writes there, with that camera.
    config = tmp_path / "pipcam.toml"
    config.write_text(f'[table]\ncamera = "picamera"\ncalibration = "{tmp_path}/tray.json"\n')
    assert _run(["calibrate", "--config", str(config), "--data", str(data)]) == 0
    assert load_calibration(tmp_path / "tray.json").frame_size == (1640, 1232)
    capsys.readouterr()

    # Another file than the table's: it says which file pipcam run reads.
    assert _run(["calibrate", "--camera", "picamera", "--data", str(data), "--out", "x.json"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"pipcam run reads {data / 'calibration.json'}: name this file as calibration in its"
        " config to use it"
    )
    assert load_calibration(tmp_path / "x.json").frame_size == (1640, 1232)


@pytest.mark.parametrize(
    ("mains", "auto", "locked"),
    [
        # The automatic 12 ms at gain 1.5: one flicker of 10 ms at gain 1.8, the same light.
        ("50", (12000, 1.5), (10000, 1.8, 10000)),
        ("60", (12000, 1.5), (16666, 1.08, 8333)),
        ("none", (12000, 1.5), (12000, 1.5, None)),
        # A dim room: the automatic exposure is longer than the table's 33 ms limit, kept so.
        ("50", (45000, 4.0), (40000, 4.5, 10000)),
        # A bright one: shorter than one flicker, nothing to round to.
        ("50", (4500, 1.0), (4500, 1.0, 10000)),
        # The gain never goes beyond the camera's own maximum (10.67 on the v2 camera).
        ("50", (66000, 10.0), (60000, 10.667, 10000)),
    ],
)
@pytest.mark.usefixtures("fake_model")
def test_calibrate_keeps_the_exposure_to_whole_flickers_of_the_mains_lamps(
    mains: str,
    auto: tuple[int, float],
    locked: tuple[int, float, int | None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_picamera2: type[FakePicamera2],  # noqa: F811 - the fixture imported above
) -> None:
    _shows_tray(monkeypatch)
    real_init = FakePicamera2.__init__

    def init(camera: FakePicamera2, camera_num: int = 0) -> None:
        real_init(camera, camera_num)
        camera.metadata |= {"ExposureTime": auto[0], "AnalogueGain": auto[1]}
        camera.camera_controls["AnalogueGain"] = (1.0, 10.667, None)

    monkeypatch.setattr(FakePicamera2, "__init__", init)
    out = tmp_path / "tray.json"
    args = ["calibrate", "--camera", "picamera:640x480", "--out", str(out), "--mains", mains]
    assert _run(args) == 0
    exposure, gain, period = locked
    camera = load_calibration(out).camera
    assert camera is not None
    assert (camera.exposure_time, camera.analogue_gain, camera.flicker_period) == locked
    assert fake_picamera2.instances[0].controls["ExposureTime"] == exposure
    printed = capsys.readouterr().out
    assert ("whole flickers of" in printed) == (period is not None and exposure >= period)
    assert ("shorter than one flicker" in printed) == (period is not None and exposure < period)


@pytest.mark.parametrize(
    ("flicker", "mains", "said"),
    [
        (0.6, "50", None),  # whole flickers of the lamps: no bands
        (0.6, "60", "if the mains here is not 60 Hz, calibrate again with --mains 50"),
        (0.6, "none", "calibrate again with --mains 50 or --mains 60, the mains frequency here"),
        (0.0, "none", None),  # steady light
    ],
)
@pytest.mark.usefixtures("fake_model", "fake_picamera2")
def test_calibrate_says_when_a_lamp_flickers_across_the_picture(
    flicker: float,
    mains: str,
    said: str | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Lamps on 50 Hz mains, seen by the camera locked to 12 ms (``--mains none``) or to
    16.7 ms (``--mains 60``): bands move across the picture, and calibrating says what to do."""
    from tests.vision.lit_scene import LitCamera

    monkeypatch.setattr(sys.modules["picamera2"], "Picamera2", LitCamera)
    monkeypatch.setattr(LitCamera, "scene", make_tray(640, 480, colour="green", seed=2))
    monkeypatch.setattr(LitCamera, "room", 1.0)
    monkeypatch.setattr(LitCamera, "flicker", flicker)
    out = tmp_path / "tray.json"
    args = ["calibrate", "--camera", "picamera:640x480", "--out", str(out), "--mains", mains]
    assert _run(args) == 0
    advice = [line for line in capsys.readouterr().out.splitlines() if "flickers:" in line]
    if said is None:
        assert advice == []
    else:
        (line,) = advice
        assert line.startswith("advice: a lamp flickers: bands across the picture move")
        assert line.endswith(said)


@pytest.mark.usefixtures("fake_model")
def test_calibrate_focuses_a_camera_module_3_on_the_tray(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_picamera2: type[FakePicamera2],  # noqa: F811 - the fixture imported above
) -> None:
    fake_picamera2.focus_motor = True
    _shows_tray(monkeypatch)
    data = tmp_path / "data"
    assert _run(["calibrate", "--camera", "picamera:640x480", "--data", str(data)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "camera locked: exposure 10000 us (whole flickers of 50 Hz lamps), gain 1.80, colour"
        " gains 1.80 / 1.40, focused at 40 cm"
    )
    calibration = load_calibration(data / "calibration.json")
    assert calibration.camera == CameraSettings(
        10000, 1.8, (1.8, 1.4), lens_position=2.5, flicker_period=10000
    )
    calls = [name for name, _ in fake_picamera2.instances[0].calls]
    assert calls.index("autofocus_cycle") < calls.index("capture_metadata")


def _ring(tray: np.ndarray[Any, Any]) -> None:
    """An LED ring's reflection on a glossy tray."""
    height, width = tray.shape[:2]
    cv2.circle(tray, (width // 2, height // 3), height // 8, (255, 255, 255), 4)


def _tube(tray: np.ndarray[Any, Any]) -> None:
    """A fluorescent tube's reflection: a long thin streak, nothing like a die."""
    height, width = tray.shape[:2]
    cv2.line(tray, (width // 4, height // 5), (width * 3 // 4, height // 4), (255, 255, 255), 4)


@pytest.mark.usefixtures("fake_picamera2")
@pytest.mark.parametrize(
    ("glare", "status", "said"),
    [
        (_ring, 1, "pipcam calibrate: a glare spot on the tray looks like a die (at ["),
        (_tube, 0, "advice: glare: 0.4 % of the tray is blown out; diffuse the light"),
    ],
    ids=["led-ring", "tube"],
)
def test_calibrate_says_what_glare_there_is(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    glare: Callable[[np.ndarray[Any, Any]], None],
    status: int,
    said: str,
) -> None:
    """A reflection that stands out like a die stops the calibration and is named as glare
    (not as a die to clear away); a streak nothing like a die is advice after calibrating,
    and the calibration is written."""

    _shows_tray(monkeypatch, glare)
    data = tmp_path / "data"
    assert _run(["calibrate", "--camera", "picamera:640x480", "--data", str(data)]) == status
    captured = capsys.readouterr()
    lines = (captured.out + captured.err).splitlines()
    assert [line for line in lines if line.startswith(said)] != [], lines
    assert (data / "calibration.json").exists() == (status == 0)


def test_calibrate_refuses_a_tray_with_dice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    photo = _write(tmp_path / "dice.png", make_frame(640, 480, six_dice(640, 480), tray="grey"))
    out = tmp_path / "cal.json"
    assert _run(["calibrate", "--camera", f"file:{photo}", "--out", str(out)]) == 1
    assert capsys.readouterr().err == (
        "pipcam calibrate: the tray is not empty: 6 dice seen; clear the tray and calibrate again\n"
    )
    assert not out.exists()


def test_calibrate_refuses_white_dice_on_light_wood_that_only_the_reader_sees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three white dice on a pale table (a committed matteop65 photo): the tray's own colour
    check misses them, the table's face model reads them, and nothing is written."""
    photo = Path(__file__).resolve().parents[1] / "data" / "dice" / "images" / "valid_valid_46.jpg"
    out = tmp_path / "cal.json"
    assert _run(["calibrate", "--camera", f"file:{photo}", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pipcam calibrate: the tray is not empty: 3 dice read ("), err
    assert err.endswith("looks like dice there: cover it with a plain cloth)\n")
    assert not out.exists()


def test_calibrate_checks_with_the_shipped_model_when_the_tuned_one_is_unusable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As pipcam run does: a damaged tuned model is reported and the shipped one reads instead;
    a model the config names is the user's choice, so it being unusable is an error."""
    from pipcam.run import table_model

    empty = _write(tmp_path / "empty.png", make_tray(640, 480, colour="green", seed=3))
    data = tmp_path / "data"
    table_model(data).parent.mkdir(parents=True, exist_ok=True)
    table_model(data).write_bytes(b"not an onnx model")
    assert _run(["calibrate", "--camera", f"file:{empty}", "--data", str(data)]) == 0
    out, err = capsys.readouterr()
    assert str(table_model(data)) in err
    assert "reading with the shipped model instead (pipcam tune makes a new one" in err, err
    assert "restore models/dice_faces.onnx" not in err  # that advice is for the shipped file
    assert out.startswith("calibrated 640x480: roll zone [")
    assert load_calibration(data / "calibration.json").frame_size == (640, 480)

    # With dice on the tray, the shipped model still sees them.
    photo = Path(__file__).resolve().parents[1] / "data" / "dice" / "images" / "valid_valid_46.jpg"
    assert _run(["calibrate", "--camera", f"file:{photo}", "--data", str(data)]) == 1
    assert "the tray is not empty: 3 dice read (" in capsys.readouterr().err
    assert load_calibration(data / "calibration.json").frame_size == (640, 480)

    config = tmp_path / "pipcam.toml"
    config.write_text(f'[table]\nmodel = "{table_model(data)}"\n')
    args = ["calibrate", "--camera", f"file:{empty}", "--config", str(config), "--data", str(data)]
    assert _run(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("pipcam calibrate: "), err
    assert str(table_model(data)) in err
    assert "shipped model instead" not in err


def test_bench_prints_versions_and_each_frame_size(
    tiny_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(["bench", "--model", str(tiny_model), "--repeat", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"onnxruntime {__import__('onnxruntime').__version__}, OpenCV ")
    assert lines[0].endswith(
        f"; {processor()}; one thread; face model {tiny_model.name}; "
        + (
            f"LearnedLocator {DEFAULT_LOCATOR_MODEL.name}"
            if DEFAULT_LOCATOR_MODEL.is_file()
            else "ClassicalLocator"
        )
    )
    assert lines[1].startswith("1280x960, six dice: ")
    assert lines[2].startswith("1640x1232, six dice: ")
    assert lines[3].startswith("3280x2464, six dice: ")
    assert len(lines) == 5
    frames = lines[1:4]
    assert all("read 6 dice" in line for line in frames)
    # A read takes the learned locator's footprints only for unsure dice: they are timed apart.
    learned = DEFAULT_LOCATOR_MODEL.is_file()
    assert all(("ms more when a die is unsure" in line) == learned for line in frames)
    # What the camera loop spends on every frame, read or not, is timed too.
    assert all(
        re.search(
            r"; settle detection \d+\.\d ms a frame that moved, \d+\.\d ms a still one$", line
        )
        for line in frames
    )
    # And what starting the reader costs, and what the process holds (this is Linux).
    last = re.fullmatch(
        r"reader loaded in (\d+) ms; process resident (\d+) MB after these frames", lines[4]
    )
    assert last is not None, lines[4]
    assert int(last[2]) > 10


def test_bench_says_when_it_cannot_know_the_memory(
    tiny_model: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pipcam.vision_cli

    monkeypatch.setattr(pipcam.vision_cli, "_resident_mb", lambda: None)
    assert _run(["bench", "--model", str(tiny_model), "--repeat", "1"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert re.fullmatch(
        r"reader loaded in \d+ ms; process resident memory not known on this system after these"
        r" frames",
        last,
    ), last


@pytest.mark.usefixtures("fake_model")
def test_eval_reports_each_folder_and_writes_the_png(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "rolls"
    (folder / "images").mkdir(parents=True)
    records = []
    for seed in range(2):
        dice = six_dice(640, 480, seed=seed)
        name = f"images/roll{seed}.png"
        _write(folder / name, make_frame(640, 480, dice, tray="green", seed=seed))
        records.append(
            {
                "image": name,
                "width": 640,
                "height": 480,
                "split": "test",
                "dice": [{"value": d.value, "box": list(d.box)} for d in dice],
            }
        )
    (folder / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    png_dir = tmp_path / "png"
    assert _run(["eval", str(folder), "--png-dir", str(png_dir)]) == 0
    out = capsys.readouterr().out
    assert "100.00 %  (12/12)" in out
    png = png_dir / "rolls-confusion.png"
    assert f"confusion matrix written to {png}" in out
    assert cv2.imread(str(png)) is not None


def test_eval_reads_a_crop_folder_as_one_die_per_photo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A crop folder (each photo one die, labelled by value) is read with the whole photo as the
    die's box: a locator finds no die in a photo that is all die. The crops are the dice of
    the committed real photos, cut at their labelled boxes; the real model reads them."""
    photos = Path(__file__).parents[1] / "data" / "dice"
    folder = tmp_path / "crops"
    (folder / "images").mkdir(parents=True)
    records = []
    for line in (photos / "labels.jsonl").read_text().splitlines():
        record = json.loads(line)
        image = cv2.imread(str(photos / record["image"]))
        assert image is not None
        for index, die in enumerate(record["dice"]):
            x0, y0, x1, y1 = (int(round(v)) for v in die["box"])
            name = f"images/{Path(record['image']).stem}-{index}.png"
            cv2.imwrite(str(folder / name), image[y0:y1, x0:x1])
            records.append({"image": name, "value": die["value"], "split": "val"})
    (folder / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert _run(["eval", str(folder), "--png-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    recall = next(line for line in out.splitlines() if "per-die recall" in line)
    matched, labelled = map(int, recall.split("(")[1].rstrip(")").split("/"))
    assert labelled == len(records) >= 20
    assert matched >= 0.9 * labelled, out
    assert "confidence of the dice read" in out


@pytest.mark.parametrize(
    ("kind", "model", "expected"),
    [
        pytest.param(None, DEFAULT_LOCATOR_MODEL, LearnedLocator),
        pytest.param("learned", DEFAULT_LOCATOR_MODEL, LearnedLocator),
        ("classical", DEFAULT_LOCATOR_MODEL, ClassicalLocator),
        (None, Path("no/such/locator.onnx"), None),
    ],
)
def test_make_locator_chooses_learned_when_its_model_is_there(
    kind: str | None, model: Path, expected: type | None
) -> None:
    if expected is None:
        # A locator model named but missing is an error, never a silent fallback.
        with pytest.raises(ModelLoadError, match="locator model 'no/such/locator.onnx'"):
            vision_cli.make_locator(kind, model)
    else:
        assert isinstance(vision_cli.make_locator(kind, model), expected)


@pytest.mark.usefixtures("fake_model")
def test_read_with_a_missing_locator_model_says_so(
    photos: tuple[Path, Path, list[int]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "none.onnx"
    assert (
        _run(["read", "--locator", "learned", "--locator-model", str(model), str(photos[0])]) == 1
    )
    assert capsys.readouterr().err == (
        f"pipcam read: locator model {str(model)!r} not found: pass --locator-model PATH or"
        " --locator classical, or restore models/dice_locator.onnx from the repository\n"
    )


def _labelled_folder(folder: Path, count: int) -> list[str]:
    """Write ``count`` six-dice photos with labels.jsonl (no split field); return their names."""
    (folder / "images").mkdir(parents=True)
    records, names = [], []
    for seed in range(count):
        dice = six_dice(640, 480, seed=seed)
        name = f"images/IMG_{seed:04d}.png"
        _write(folder / name, make_frame(640, 480, dice, tray="green", seed=seed))
        records.append(
            {
                "image": name,
                "width": 640,
                "height": 480,
                "dice": [{"value": d.value, "box": list(d.box)} for d in dice],
            }
        )
        names.append(name)
    (folder / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return names


@pytest.mark.usefixtures("fake_model")
@pytest.mark.parametrize("split", ["val", "train"])
def test_eval_split_keeps_the_photos_the_training_code_puts_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], split: str
) -> None:
    # nell-byler has no split of its own: the training code holds out a share by file name.
    source = "nell-byler_dice_detection"
    folder = tmp_path / source
    names = _labelled_folder(folder, 12)
    wanted = [n for n in names if split_of(source, n, None) == split]
    assert 0 < len(wanted) < len(names)
    png_dir = tmp_path / "png"
    assert _run(["eval", str(folder), "--split", split, "--png-dir", str(png_dir)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{folder}: {len(wanted)} photos (0 skipped for known_issue)\n")
    assert f"({6 * len(wanted)}/{6 * len(wanted)})" in out
    assert (png_dir / f"{source}-{split}-confusion.png").is_file()


@pytest.mark.usefixtures("fake_model")
def test_eval_of_no_photos_is_no_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder (or split) with no labelled photo measures nothing: the rates say n/a, not
    100 %, and the exit status says so to a script."""
    folder = tmp_path / "rolls"
    folder.mkdir()
    (folder / "labels.jsonl").write_text("")
    assert _run(["eval", str(folder), "--png-dir", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "per-die recall       n/a    (0/0)" in captured.out
    assert "100.00" not in captured.out
    assert f"pipcam eval: {folder}: no labelled photo to measure" in captured.err


def test_eval_counts_an_uncertain_die_as_found_but_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    unsure = FakeClassifier(lambda _crop: (3, 0.45))
    monkeypatch.setattr(vision_cli, "OnnxClassifier", lambda _path, **_options: unsure)
    folder = tmp_path / "rolls"
    _labelled_folder(folder, 1)
    assert _run(["eval", str(folder), "--png-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "per-die recall      0.00 %  (0/6)" in out
    assert "(0/0; 6 unread)" in out


@pytest.mark.usefixtures("fake_model")
def test_eval_effect_reads_each_folder_as_another_camera_would(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "rolls"
    _labelled_folder(folder, 2)
    png_dir = tmp_path / "png"
    argv = ["eval", str(folder), "--png-dir", str(png_dir)]
    assert _run([*argv, "--effect", "none", "--effect", "double", "--effect", "warm"]) == 0
    out = capsys.readouterr().out
    reports = out.split("effect ")
    # One report per effect, in order, each under its effect's name; a changed size still
    # matches the labels' boxes.
    assert len(reports) == 4
    assert reports[1].startswith(f"none: the photos as they are\n{folder}: 2 photos")
    assert reports[2].startswith("double: twice the resolution")
    assert reports[3].startswith("warm: a warm lamp")
    assert all("per-die recall    100.00 %  (12/12)" in r for r in reports[1:])
    for suffix in ("", "-double", "-warm"):
        assert (png_dir / f"rolls{suffix}-confusion.png").is_file()


def test_eval_refuses_an_unknown_effect_and_names_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        _run(["eval", str(tmp_path), "--effect", "fisheye"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "argument --effect: invalid choice: 'fisheye'" in err
    assert "'half'" in err
    assert "'jpeg40'" in err


def _lens_turned(folder: Path, blurs: list[float]) -> None:
    """Six dice in a tray seen through a lens turned past focus: one frame a blur (px)."""
    folder.mkdir()
    frame = make_frame(1280, 960, six_dice(1280, 960, seed=3), seed=3)
    for index, blur in enumerate(blurs):
        seen = cv2.GaussianBlur(frame, (0, 0), blur) if blur else frame
        assert cv2.imwrite(str(folder / f"{index:02d}.png"), seen)


def test_focus_follows_the_dice_as_the_lens_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One line a frame: the dice found and read, and how sharp they are, which rises as the
    lens comes to focus and falls past it; the best frame is named at the end."""
    blurs = [12.0, 6.0, 2.0, 0.0, 3.0]
    _lens_turned(tmp_path / "turning", blurs)
    assert (
        _run(["focus", "--camera", f"folder:{tmp_path / 'turning'}", "--data", str(tmp_path)]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("put a few dice in the tray and turn the lens slowly")
    pattern = r"frame (\d): (\d) dice, (\d) read; sharpness ([\d.]+) \(best [\d.]+, frame \d\)"
    frames = [re.fullmatch(pattern, line) for line in lines[1:-1]]
    rows = [(int(m.group(2)), int(m.group(3)), float(m.group(4))) for m in frames if m]
    assert len(rows) == len(blurs), lines
    sharpness = [row[2] for row in rows]
    assert sharpness.index(max(sharpness)) == blurs.index(0.0)
    assert sharpness[:4] == sorted(sharpness[:4])  # coming to focus
    assert sharpness[4] < sharpness[3]  # past it
    assert [row[1] for row in rows] == [0, 6, 6, 6, 6]  # 12 px: found, blurred past reading
    assert rows[0][0] >= 4
    assert lines[-1] == f"best sharpness {max(sharpness):.3f}, at frame 4"


def test_focus_says_when_it_finds_no_dice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image = tmp_path / "tray.png"
    assert cv2.imwrite(str(image), make_tray(640, 480, colour="green", seed=1))
    assert (
        _run(["focus", "--camera", f"file:{image}", "--frames", "2", "--data", str(tmp_path)]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert lines[1].startswith("frame 1: no dice found: put a few in the tray")


@pytest.mark.parametrize(("blurs", "narrowest"), [([40.0, 30.0, 20.0], 3), ([20.0, 40.0, 30.0], 1)])
def test_focus_measures_the_dice_blurred_past_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], blurs: list[float], narrowest: int
) -> None:
    """A lens far off: the reader finds no die, but the six soft shapes on the tray are told
    from an empty one, and how wide their edges are says which way to turn the lens."""
    _lens_turned(tmp_path / "far", blurs)
    argv = ["focus", "--camera", f"folder:{tmp_path / 'far'}", "--data", str(tmp_path)]
    assert _run(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    pattern = (
        r"frame (\d): no dice found, but 6 soft shapes \(dice blurred past finding\?\), edges"
        r" (\d+) px wide \(narrowest (\d+), frame (\d)\): turn the lens until the dice are found"
    )
    rows = [re.fullmatch(pattern, line) for line in lines[1:-1]]
    assert len(rows) == len(blurs)
    assert all(rows), lines
    widths = [int(m.group(2)) for m in rows if m]
    by_blur = [w for _, w in sorted(zip(blurs, widths, strict=True))]
    assert by_blur == sorted(set(by_blur))  # wider as the blur grows
    assert by_blur[0] >= 20  # far past a sharp die's 3 px
    assert lines[-1] == (
        f"no dice found; the narrowest edges, {min(widths)} px, at frame {narrowest}: turn the"
        " lens on the way it went there"
    )


@pytest.mark.parametrize(
    ("argv", "status", "said"),
    [
        (["--frames", "-1"], 2, "--frames must be 0 (no end) or more, got -1"),
        (["--camera", "none"], 2, "focusing needs a camera (--camera none was given)"),
        (["--camera", "file:/no/such.png"], 1, "/no/such.png"),
    ],
)
def test_focus_refuses_what_it_cannot_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], status: int, said: str
) -> None:
    assert _run(["focus", "--data", str(tmp_path), *argv]) == status
    err = capsys.readouterr().err
    assert err.startswith("pipcam focus: ")
    assert said in err


@pytest.mark.parametrize("motor", [False, True], ids=["v2", "module-3"])
def test_focus_on_a_pi_camera_says_whether_it_focuses_itself(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_picamera2: type[FakePicamera2],  # noqa: F811 - the fixture imported above
    motor: bool,
) -> None:
    fake_picamera2.focus_motor = motor
    _shows_tray(monkeypatch)
    argv = ["focus", "--camera", "picamera:640x480", "--frames", "1", "--data", str(tmp_path)]
    assert _run(argv) == 0
    out = capsys.readouterr().out
    assert ("this camera focuses itself: pipcam calibrate focuses it" in out) is motor
    assert "frame 1: no dice found" in out
    assert [name for name, _ in fake_picamera2.instances[0].calls][-2:] == ["stop", "close"]


def test_the_text_line_says_why_a_die_was_not_read() -> None:
    """``pipcam read`` without --json: a value, a guess with "?", or why there is none."""
    from vision.reader import DiceReading, Die

    box = (0, 0, 10, 10)
    dice = (
        Die(3, 0.99, "ok", box),
        Die(5, 0.4, "uncertain", box),
        Die(None, 0.3, "uncertain", box),
        Die(None, 0.9, "cocked", box),
        Die(None, 0.2, "uncertain", box, blurred=True),
        Die(None, 0.97, "uncertain", box, hidden=True),
        Die(None, 0.6, "uncertain", box, hidden=True, cut=True),
    )
    reading = DiceReading(
        "settled", dice, set_aside=(Die(None, 0.9, "uncertain", box, hidden=True),)
    )
    assert vision_cli.describe_reading(reading) == (
        "settled: 3 5? ? cocked blurred hidden cut; set aside: hidden"
    )
