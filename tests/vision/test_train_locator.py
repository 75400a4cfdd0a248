"""The locator network and its export, with torch."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from vision.train.heatmap import encode  # noqa: E402
from vision.train.locator import (  # noqa: E402
    LocNet,
    _loss,
    export_locator,
    train_locator,
    write_card_section,
)
from vision.train.locator_data import LocatorConfig, Photo  # noqa: E402


def test_outputs_are_at_stride_four_for_any_multiple_of_sixteen() -> None:
    model = LocNet().eval()
    heat, box = model(torch.rand(2, 3, 96, 160))
    assert tuple(heat.shape) == (2, 1, 24, 40)
    assert tuple(box.shape) == (2, 4, 24, 40)


def test_loss_is_lower_for_the_right_answer() -> None:
    heat, reg, mask = (torch.from_numpy(a)[None] for a in encode([(8.0, 8.0, 24.0, 24.0)], 32, 32))
    right = torch.logit(heat.clamp(1e-3, 1 - 1e-3))
    wrong = torch.full_like(right, -5.0)
    assert float(_loss(right, reg, heat, reg, mask)) < float(_loss(wrong, reg, heat, reg, mask))
    assert float(_loss(right, reg, heat, reg, mask)) < float(_loss(right, reg + 1, heat, reg, mask))


def _toy_photos() -> list[Photo]:
    """Two grey photos with a white square die each."""
    photos = []
    for left in (40, 150):
        image = np.full((240, 320, 3), 90, np.uint8)
        image[100:132, left : left + 32] = 235
        box = (float(left), 100.0, float(left + 32), 132.0)
        photos.append(Photo("toy", image, [box], Path("toy.jpg"), (240, 320)))
    return photos


def test_locator_training_is_reproducible_from_the_seed() -> None:
    # Every draw (photos, scenes, augmentation, weights) comes from the seed: the card's
    # recipe must give the same network again, and another seed another network.
    config = LocatorConfig(
        steps=3, batch_size=2, crop=64, synthetic_scenes=2, widths=(4, 4, 8, 8, 4), touching=0.4
    )
    first, second = (train_locator(_toy_photos(), config).state_dict() for _ in range(2))
    other = train_locator(_toy_photos(), replace(config, seed=5))
    assert all(torch.equal(first[k], second[k]) for k in first)
    assert not all(torch.equal(first[k], other.state_dict()[k]) for k in first)


def test_export_has_dynamic_frame_size(tmp_path: Path) -> None:
    import onnxruntime as ort

    torch.manual_seed(0)
    path = tmp_path / "loc.onnx"
    assert export_locator(LocNet(), path) <= 1e-4
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["image"]
    assert [o.name for o in session.get_outputs()] == ["heatmap", "boxes"]
    heat, box = session.run(None, {"image": np.zeros((1, 3, 192, 320), np.float32)})
    assert heat.shape == (1, 1, 48, 80)
    assert box.shape == (1, 4, 48, 80)


def test_card_section_is_replaced_not_repeated(tmp_path: Path) -> None:
    card = tmp_path / "MODEL_CARD.md"
    reading = "<!-- reading section: by hand -->\n\n# Reading whole photos\n\nfigures\n"
    card.write_text("# face model\n\ntext\n")
    report = {
        "config": {"threshold": 0.4, "steps": 5, "batch_size": 2, "crop": 64,
                   "synthetic_share": 0.3, "seed": 1, "threads": 2,
                   "widths": [24, 32, 64, 96, 48]},
        "metrics": {"src": {"photos": 1, "dice": 2, "found": 2, "recall": 1.0, "precision": 0.5,
                            "median_ms": 1.0}},
        "train_seconds": 1.0, "sha256": "0" * 64, "size_bytes": 10, "parameters": 3,
        "bench_ms": 2.0,
    }  # fmt: skip
    write_card_section(report, card)
    card.write_text(card.read_text() + "\n" + reading)
    write_card_section(report, card)
    write_card_section(report, card)
    text = card.read_text()
    assert text.startswith("# face model\n\ntext\n")
    assert text.count("# dice_locator.onnx") == 1
    assert text.endswith(reading)
    assert "| src | 1 | 2 | 2 | 100.0 % | 50.0 % | 1.0 |" in text
    assert "24-32-64-96 channels" in text
    assert "on 2 thread(s)" in text
    assert "card" not in text
    report["config"] = {**report["config"], "occluded": 0.2}  # type: ignore[dict-item]
    write_card_section(report, card)
    assert "20 % of all crops with a card over part of a die" in card.read_text()
    # The seed gives the same network only on the same libraries: the card names them.
    assert "seed 1, 1.0 s on 2 thread(s)" in card.read_text()
    report |= {"torch": "2.13.0+cpu", "numpy": "2.4.6", "opencv": "4.14.0", "machine": "x86_64"}
    write_card_section(report, card)
    assert (
        "seed 1, torch 2.13.0+cpu, numpy 2.4.6, OpenCV 4.14.0, x86_64, 1.0 s on 2 thread(s)"
        in card.read_text()
    )


def test_widths_set_the_channels_and_keep_the_outputs() -> None:
    def count(model: LocNet) -> int:
        return sum(p.numel() for p in model.parameters())

    small, wide = LocNet((8, 8, 16, 16, 8)), LocNet((32, 48, 96, 128, 64))
    assert count(small) < count(LocNet()) < count(wide)
    heat, box = wide.eval()(torch.rand(1, 3, 64, 64))
    assert (tuple(heat.shape), tuple(box.shape)) == ((1, 1, 16, 16), (1, 4, 16, 16))


@pytest.mark.parametrize("text", ["16,24,48,64", "16,24,48,64,0", "a,b,c,d,e", "1,2,3,4,5,6"])
def test_widths_option_refuses_what_is_not_five_positive_numbers(text: str) -> None:
    from vision.train.locator import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--widths", text])
    assert exit_info.value.code == 2


def test_widths_option_parses_five_numbers() -> None:
    from vision.train.locator import _widths

    assert _widths("24,32,64,96,48") == (24, 32, 64, 96, 48)


class _FakeLocator:
    """Answers the heatmap and boxes of fixed boxes given in locator pixels."""

    def __init__(self, boxes: list[tuple[float, float, float, float]]) -> None:
        self.boxes = boxes

    def run(self, names: list[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        _, _, height, width = feeds["image"].shape
        heat, box, _ = encode(self.boxes, height, width)
        logits = np.log(np.clip(heat, 1e-6, 1 - 1e-6) / (1 - np.clip(heat, 1e-6, 1 - 1e-6)))
        return [logits[None].astype(np.float32), box[None]]


class _FakeFace:
    """Reads every crop as the given values, in order."""

    def __init__(self, values: list[int]) -> None:
        self.values = values

    def run(self, names: list[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        logits = np.zeros((len(feeds["image"]), 7), np.float32)
        for row, value in enumerate(self.values[: len(logits)]):
            logits[row, value] = 5.0
        return [logits]


def test_measure_counts_boxes_and_values(tmp_path: Path) -> None:
    import cv2

    from vision.train.data import LabelledDie, Record
    from vision.train.locator import measure

    cv2.imwrite(str(tmp_path / "a.png"), np.full((640, 640, 3), 128, np.uint8))
    record = Record(
        source="nell-byler_dice_detection",
        path=tmp_path / "a.png",
        split="val",
        dice=(
            LabelledDie(3, (100.0, 100.0, 160.0, 160.0)),
            LabelledDie(5, (300.0, 300.0, 360.0, 360.0)),
        ),
    )
    # The frame is halved for the locator: one true die, one extra box, one die missed.
    locator = _FakeLocator([(50.0, 50.0, 80.0, 80.0), (250.0, 20.0, 280.0, 50.0)])
    result = measure(locator, [record], threshold=0.4, face=_FakeFace([3, 0]))
    assert (result["dice"], result["found"], result["matched"]) == (2, 2, 1)
    assert result["recall"] == 0.5
    assert result["precision"] == 0.5
    assert result["value_recall"] == 0.5
    assert result["value_precision"] == 1.0  # the extra box was called class 0
    assert result["exact_photos"] == 0


def test_recorded_outputs_name_the_model_and_every_photo(tmp_path: Path) -> None:
    import hashlib
    import json
    import shutil

    from vision.train.locator import RECORDED_NAME, record_locator_outputs

    torch.manual_seed(0)
    model = tmp_path / "loc.onnx"
    export_locator(LocNet(), model)
    folder = tmp_path / "dice"
    shutil.copytree(
        Path(__file__).resolve().parents[1] / "data" / "dice" / "images", folder / "images"
    )
    shutil.copy(Path(__file__).resolve().parents[1] / "data" / "dice" / "labels.jsonl", folder)
    out = record_locator_outputs(model, folder, threshold=0.3)
    assert out == folder / RECORDED_NAME
    document = json.loads(out.read_text())
    assert document["model_sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert document["threshold"] == 0.3
    assert len(document["photos"]) == 5
    for entry in document["photos"]:
        assert (folder / entry["image"]).is_file()
        assert len(entry["boxes"]) == len(entry["scores"])


@pytest.mark.parametrize("text", ["2.5-0.5", "0-1", "a-b", "1", "1-2-3"])
def test_scale_range_refuses_what_is_not_low_dash_high(text: str) -> None:
    from vision.train.locator import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--scale-range", text])
    assert exit_info.value.code == 2


def test_scale_range_parses_low_and_high() -> None:
    from vision.train.locator import _scale_range

    assert _scale_range("0.5-2.5") == (0.5, 2.5)


def test_excluding_an_unknown_source_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vision.train.locator import main

    folder = tmp_path / "real_source"
    folder.mkdir()
    (folder / "labels.jsonl").write_text("")
    with pytest.raises(SystemExit) as exit_info:
        main(["--data", str(tmp_path), "--exclude", "no_such_source"])
    assert exit_info.value.code == 2
    assert "--exclude: cannot leave out no_such_source: no such source" in capsys.readouterr().err


def test_a_tables_own_photos_train_the_locator_and_are_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--source`` adds a table's export: its train games are learned from, its val games are
    measured beside the shared sources; a folder that is not a source is refused."""
    import json

    from vision.train.locator import main

    committed = Path(__file__).parents[1] / "data" / "dice"
    data = tmp_path / "data"
    data.mkdir()
    (data / "committed").symlink_to(committed)
    table = tmp_path / "mytable"
    table.mkdir()
    (table / "images").symlink_to(committed / "images")
    lines = (committed / "labels.jsonl").read_text().splitlines()
    records = [
        json.loads(line) | {"split": "train" if i < 3 else "val"} for i, line in enumerate(lines)
    ]
    (table / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(SystemExit) as exit_info:
        main(["--data", str(data), "--source", str(tmp_path / "nothing")])
    assert exit_info.value.code == 2
    assert "no labels.jsonl there" in capsys.readouterr().err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "labels.jsonl").write_text('{"image": "images/a.jpg", "dice": [{"value": 9}]}\n')
    with pytest.raises(SystemExit) as exit_info:
        main(["--data", str(data), "--source", str(broken)])
    assert exit_info.value.code == 2
    assert "labels.jsonl line 1: die 1: a die is" in capsys.readouterr().err
    args = ["--data", str(data), "--source", str(table), "--out", str(tmp_path / "out")]
    tiny = ["--steps", "2", "--synthetic-scenes", "2", "--threads", "1"]
    assert main([*args, *tiny]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(report["metrics"]) == ["committed", "mytable"]
    assert report["metrics"]["mytable"]["photos"] == 2
    assert (tmp_path / "out" / "dice_locator.onnx").is_file()


@pytest.mark.parametrize("option", ["--occluded", "--touching", "--rim-share", "--synthetic-share"])
def test_a_share_outside_0_to_1_is_refused_before_training(
    option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from vision.train.locator import main

    with pytest.raises(SystemExit) as exit_:
        main([option, "1.5", "--steps", "1"])
    assert exit_.value.code == 2
    assert f"{option} 1.5: a share is from 0 to 1" in capsys.readouterr().err
