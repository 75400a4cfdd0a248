"""Training and export with torch: shapes, reproducibility from the seed, ONNX agreement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from vision.train.data import CropSet  # noqa: E402
from vision.train.export import check_onnx, export_onnx, sha256_of  # noqa: E402
from vision.train.train import (  # noqa: E402
    Datasets,
    FaceNet,
    MixStyle,
    TrainConfig,
    _augment,
    add_hard_shadows,
    add_streaks,
    duotone,
    evaluate_crops,
    train,
)


def _toy_crops(count: int, seed: int) -> CropSet:
    """Class 0 = dark crops, class 1 = bright ones: learnable in a few steps."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, count)
    images = np.where(
        labels[:, None, None, None] == 1,
        rng.integers(180, 256, (count, 64, 64, 3)),
        rng.integers(0, 70, (count, 64, 64, 3)),
    ).astype(np.uint8)
    return CropSet(images, labels.astype(np.int64), ["toy"] * count)


def test_facenet_maps_crops_to_seven_logits() -> None:
    model = FaceNet().eval()
    out = model(torch.rand(5, 3, 64, 64))
    assert tuple(out.shape) == (5, 7)


def test_augment_keeps_shape_and_range_and_follows_the_generator() -> None:
    batch = torch.rand(8, 3, 64, 64)
    first = _augment(batch.clone(), torch.Generator().manual_seed(3))
    second = _augment(batch.clone(), torch.Generator().manual_seed(3))
    assert first.shape == batch.shape
    assert float(first.min()) >= 0.0
    assert float(first.max()) <= 1.0
    assert torch.equal(first, second)
    assert not torch.equal(first, batch)


def test_augment_shuffles_each_crops_colours_and_inverts_the_share_asked_for() -> None:
    # Pure red crops: the channel that stays brightest tells each crop's shuffle.
    batch = torch.zeros(64, 3, 8, 8)
    batch[:, 0] = 0.9
    shuffled = _augment(batch.clone(), torch.Generator().manual_seed(1))
    brightest = shuffled.mean(dim=(2, 3)).argmax(dim=1)
    assert len(set(brightest.tolist())) == 3
    kept = _augment(batch.clone(), torch.Generator().manual_seed(1), invert=0.0)
    negative = _augment(batch.clone(), torch.Generator().manual_seed(1), invert=1.0)
    # A negative turns the one bright channel dark and the two dark ones bright.
    assert bool((kept.mean(dim=(1, 2, 3)) < 0.5).all())
    assert bool((negative.mean(dim=(1, 2, 3)) > 0.5).all())


def test_training_is_reproducible_and_learns() -> None:
    config = TrainConfig(
        seed=11, epochs=4, batch_size=32, learning_rate=1e-2, widths=(8, 8, 16, 16)
    )
    datasets = Datasets(train=_toy_crops(256, 0), val={"toy": _toy_crops(64, 1)})
    first = train(datasets, config)
    second = train(datasets, config)
    for a, b in zip(
        first.model.state_dict().values(), second.model.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b)
    assert first.history == second.history
    assert first.metrics["toy"]["dice_accuracy"] > 0.9
    assert first.metrics["toy"]["negative_accuracy"] > 0.9
    assert evaluate_crops(first.model, datasets.val["toy"]) == first.metrics["toy"]


def test_export_gives_image_and_logits_with_a_dynamic_batch(tmp_path: Path) -> None:
    import onnxruntime as ort

    torch.manual_seed(0)
    model = FaceNet((8, 8, 16, 16)).eval()
    path = tmp_path / "faces.onnx"
    export_onnx(model, path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (inp,) = session.get_inputs()
    (out,) = session.get_outputs()
    assert (inp.name, out.name) == ("image", "logits")
    assert inp.shape[1:] == [3, 64, 64]
    images = np.random.default_rng(0).random((3, 3, 64, 64), dtype=np.float32)
    assert check_onnx(model, path, images) <= 1e-4
    assert session.run(None, {"image": images[:1]})[0].shape == (1, 7)
    assert len(sha256_of(path)) == 64


def test_streaks_draw_a_thin_bright_curve_on_the_die_and_leave_the_rest() -> None:
    dark = torch.full((16, 3, 64, 64), 0.1)
    kept = add_streaks(dark.clone(), 0.0, torch.Generator().manual_seed(2))
    assert torch.equal(kept, dark)
    drawn = add_streaks(dark.clone(), 1.0, torch.Generator().manual_seed(2))
    again = add_streaks(dark.clone(), 1.0, torch.Generator().manual_seed(2))
    assert torch.equal(drawn, again)
    changed = (drawn - dark).abs().amax(dim=1) > 0.05  # (16, 64, 64)
    for mask in changed:
        ys, xs = torch.nonzero(mask, as_tuple=True)
        # Long against a pip (a pip is ~8 px across at 64 px), never round like one...
        assert max(int(xs.max() - xs.min()), int(ys.max() - ys.min())) >= 20
        # ...thin (a small share of the crop), and on the die, not at the crop's border.
        assert float(mask.float().mean()) < 0.15
        border = mask.clone()
        border[4:-4, 4:-4] = False
        assert not bool(border.any())
    # A lamp's reflection is bright.
    assert bool((drawn >= dark - 1e-6).all())
    assert float(drawn.amax()) > 0.8


def test_hard_shadows_darken_one_side_of_a_line_across_the_die() -> None:
    flat = torch.full((16, 3, 64, 64), 0.8)
    assert torch.equal(add_hard_shadows(flat.clone(), 0.0, torch.Generator().manual_seed(3)), flat)
    shaded = add_hard_shadows(flat.clone(), 1.0, torch.Generator().manual_seed(3))
    again = add_hard_shadows(flat.clone(), 1.0, torch.Generator().manual_seed(3))
    assert torch.equal(shaded, again)
    assert bool((shaded <= flat + 1e-6).all())  # a shadow only darkens
    for crop in shaded[:, 0]:
        dark = crop < 0.75
        # One side of a line: a good share of the crop, not a spot or a streak...
        assert 0.1 < float(dark.float().mean()) < 0.9
        # ...as dark as 25-60 % of the light (linear), and the lit side untouched.
        assert 0.8 * 0.25 ** (1 / 2.2) - 0.01 <= float(crop.min()) <= 0.8 * 0.6 ** (1 / 2.2) + 0.01
        assert float(crop.max()) == pytest.approx(0.8, abs=1e-3)
        # ...and its edge crosses the die's middle third: both sides show well within the
        # middle half.
        middle = crop[16:48, 16:48]
        assert float(middle.min()) < 0.7
        assert float(middle.max()) > 0.78


def test_mixstyle_mixes_while_training_and_is_the_identity_when_evaluating() -> None:
    torch.manual_seed(0)
    features = torch.rand(8, 4, 16, 16) * torch.arange(1, 9).float()[:, None, None, None]
    mixing = MixStyle(1.0)
    assert torch.equal(mixing.eval()(features), features)
    mixed = mixing.train()(features)
    assert mixed.shape == features.shape
    # Each crop keeps its own pattern (correlation) but takes on other crops' statistics.
    assert not torch.allclose(mixed.mean(dim=(2, 3)), features.mean(dim=(2, 3)), atol=1e-3)
    for a, b in zip(mixed, features, strict=True):
        assert float(torch.corrcoef(torch.stack([a.flatten(), b.flatten()]))[0, 1]) > 0.5
    assert torch.equal(MixStyle(0.0).train()(features), features)


def test_a_mixstyle_cnn_exports_the_same_network_as_a_plain_one(tmp_path: Path) -> None:
    torch.manual_seed(0)
    plain = FaceNet((8, 8, 16, 16)).eval()
    torch.manual_seed(0)
    mixing = FaceNet((8, 8, 16, 16), mixstyle=0.5).eval()
    images = torch.rand(3, 3, 64, 64)
    assert torch.equal(plain(images), mixing(images))
    export_onnx(mixing, tmp_path / "faces.onnx")
    assert check_onnx(mixing, tmp_path / "faces.onnx", images.numpy()) <= 1e-4


def test_mixstyle_is_refused_for_the_efficientnet() -> None:
    from vision.train.train import build_model

    with pytest.raises(ValueError, match="plain CNN only: use --arch plain"):
        build_model(TrainConfig(arch="effnet", mixstyle=0.5))


def test_duotone_repaints_a_crop_in_two_colours_along_its_brightness() -> None:
    rng = np.random.default_rng(0)
    # A bright die with dark pips: two levels and a little noise.
    batch = torch.full((6, 3, 32, 32), 0.85) + 0.02 * torch.from_numpy(
        rng.standard_normal((6, 3, 32, 32)).astype(np.float32)
    )
    batch[:, :, 10:14, 10:14] = 0.1
    assert torch.equal(duotone(batch, 0.0, torch.Generator().manual_seed(1)), batch)
    painted = duotone(batch, 1.0, torch.Generator().manual_seed(1))
    again = duotone(batch, 1.0, torch.Generator().manual_seed(1))
    assert torch.equal(painted, again)
    for crop in painted:
        pip, body = crop[:, 11, 11], crop[:, 25, 25]
        # The pips still stand apart from the body, now in colour...
        assert float((pip - body).norm()) > 0.3
        # ...and every pixel lies on the line between the two colours (one colour axis).
        pixels = crop.flatten(1).T - crop.flatten(1).T.mean(dim=0)
        singular = torch.linalg.svdvals(pixels)
        assert float(singular[1]) < 1e-3 * float(singular[0])
    assert float((painted - batch).abs().mean()) > 0.05


def _tiny_run() -> tuple[Datasets, TrainConfig]:
    config = TrainConfig(
        seed=5, epochs=3, batch_size=32, learning_rate=1e-2, widths=(8, 8, 16, 16), mixstyle=0.5
    )
    return Datasets(train=_toy_crops(128, 0), val={"toy": _toy_crops(32, 1)}), config


def _interrupt_in_epoch(epoch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make training stop like a pulled plug after ``epoch``'s steps, before its checkpoint."""
    import vision.train.train as module

    calls = {"n": 0}
    measure = module.evaluate_crops

    def evaluate(model: Any, crops: CropSet) -> dict[str, float | int]:
        calls["n"] += 1
        if calls["n"] == epoch:  # one validation set: one call per epoch
            raise KeyboardInterrupt
        return measure(model, crops)

    monkeypatch.setattr(module, "evaluate_crops", evaluate)


def test_an_interrupted_run_resumed_from_its_checkpoint_ends_as_one_never_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets, config = _tiny_run()
    whole = train(datasets, config)
    checkpoint = tmp_path / "run.pt"
    with monkeypatch.context() as patch:
        _interrupt_in_epoch(2, patch)
        with pytest.raises(KeyboardInterrupt):
            train(datasets, config, checkpoint=checkpoint)
    assert torch.load(checkpoint, weights_only=False)["epochs_done"] == 1
    assert not checkpoint.with_name("run.pt.partial").exists()
    resumed = train(datasets, config, checkpoint=checkpoint)
    for a, b in zip(
        whole.model.state_dict().values(), resumed.model.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b)
    assert resumed.history == whole.history
    assert resumed.metrics == whole.metrics
    assert torch.load(checkpoint, weights_only=False)["epochs_done"] == 3
    # A finished run's checkpoint gives the finished model without training again.
    again = train(datasets, config, checkpoint=checkpoint)
    assert again.history == whole.history


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"seed": 6}, "seed: 5 there, 6 now"),
        ({"epochs": 4}, "epochs: 3 there, 4 now"),
        ({"invert": 0.5}, "invert"),
    ],
)
def test_a_checkpoint_of_another_run_is_refused_and_kept(
    tmp_path: Path, change: dict[str, Any], named: str
) -> None:
    from dataclasses import replace

    from vision.train.train import CheckpointError

    datasets, config = _tiny_run()
    checkpoint = tmp_path / "run.pt"
    train(datasets, config, checkpoint)
    before = checkpoint.read_bytes()
    with pytest.raises(CheckpointError, match=named) as err:
        train(datasets, replace(config, **change), checkpoint)
    assert "delete it" in str(err.value)
    assert checkpoint.read_bytes() == before


def _one_epoch_run(checkpoint: Path) -> tuple[Datasets, TrainConfig]:
    """Train the tiny run for one epoch, saved at ``checkpoint``; its crops and config."""
    from dataclasses import replace

    datasets, config = _tiny_run()
    config = replace(config, epochs=1)
    train(datasets, config, checkpoint)
    return datasets, config


def test_a_checkpoint_is_refused_for_other_training_crops_and_resumed_at_another_thread_count(
    tmp_path: Path,
) -> None:
    from dataclasses import replace

    from vision.train.train import CheckpointError

    checkpoint = tmp_path / "run.pt"
    datasets, config = _one_epoch_run(checkpoint)
    other = Datasets(train=_toy_crops(128, 7), val=datasets.val)
    with pytest.raises(CheckpointError, match="data"):
        train(other, config, checkpoint)
    # The thread count decides speed, not what is learnt: changing it resumes.
    result = train(datasets, replace(config, threads=2), checkpoint)
    assert len(result.history) == 1


def test_a_checkpoint_from_before_an_option_existed_resumes_at_its_default(
    tmp_path: Path,
) -> None:
    from dataclasses import replace

    from vision.train.train import CheckpointError

    checkpoint = tmp_path / "run.pt"
    datasets, config = _one_epoch_run(checkpoint)
    state = torch.load(checkpoint, weights_only=True)
    del state["identity"]["more_logos"]  # written before --more-logos existed
    torch.save(state, checkpoint)
    assert len(train(datasets, config, checkpoint).history) == 1
    with pytest.raises(CheckpointError, match="more_logos: False there, True now"):
        train(datasets, replace(config, more_logos=True), checkpoint)


def test_an_unreadable_checkpoint_says_so(tmp_path: Path) -> None:
    from vision.train.train import CheckpointError

    datasets, config = _tiny_run()
    checkpoint = tmp_path / "run.pt"
    checkpoint.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="cannot be read.*delete it"):
        train(datasets, config, checkpoint)
