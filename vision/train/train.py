"""Build the crop datasets, train the face classifier on CPU and measure it per source."""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import torch
from torch import nn
from tqdm import tqdm

from vision.classify import FLOAT_LOCATOR_MODEL, FLOAT_MODEL, OnnxClassifier, OnnxLocator
from vision.detect import decode, locator_input
from vision.preprocess import MODEL_SIZE, crops_for_model
from vision.train.data import (
    CropSet,
    Proposal,
    Proposer,
    Record,
    Split,
    UInt8Image,
    cut_crops,
    load_sources,
    train_and_val,
)
from vision.train.synth import render_crops, render_logo_sixes

__all__ = [
    "CLASS_NAMES",
    "CheckpointError",
    "Datasets",
    "FaceNet",
    "TrainConfig",
    "TrainResult",
    "UNSEEN_LOGOS",
    "build_datasets",
    "build_model",
    "evaluate_crops",
    "locator_proposer",
    "train",
]

UNSEEN_LOGOS = "unseen logos"
"""The validation set of logo sixes of families training never draws."""
CLASS_NAMES = ("not a readable die face", "1", "2", "3", "4", "5", "6")

# How many jittered, rotated copies of each real die the training set gets. Epanemu's train split
# already holds three augmented copies of every photo, and the skovy crops are few.
COPIES = {
    "Epanemu_GameDiceRecognition": 1,
    "matteop65_Dice_Detection_Recognition": 3,
    "nell-byler_dice_detection": 6,
    "skovy_tensorflow-dice-model": 6,
    "skovy_tensorflow-dice-model_crops": 5,
}


@dataclass(frozen=True)
class TrainConfig:
    """Everything that decides a training run; the same config and seed give the same model."""

    seed: int = 4
    epochs: int = 12
    batch_size: int = 128
    learning_rate: float = 3e-3
    weight_decay: float = 1e-4
    label_smoothing: float = 0.05
    synthetic_train: int = 40000
    """Synthetic crops rendered for training; 40000 read dice sets never seen better than 20000."""
    synthetic_val: int = 1500
    threads: int = 1
    widths: tuple[int, int, int, int] = (32, 48, 96, 160)
    arch: str = "plain"
    """"plain" = ``FaceNet`` from nothing; "effnet" = ``EffFaceNet`` from ImageNet features."""
    mine: bool = True
    """Also cut the shipped locator's boxes from training photos (dice and phantoms)."""
    invert: float = 0.2
    """Share of training crops seen as their negative (dark dice from light ones and back)."""
    exclude: tuple[str, ...] = ()
    """Sources left out of training and validated on all their photos (unseen dice and tables)."""
    streaks: float = 0.0
    """Share of training crops given a lamp's glossy streak (a thin bright curve) on the face."""
    duotone: float = 0.0
    """Share of training crops repainted in two random colours by their brightness (any pips on
    any body, red on smoky grey too: pips that stand out by colour more than by brightness)."""
    faint: float = 0.0
    """Share of rendered dice whose pips are dulled toward the body (smoke dice, dark red pips)."""
    arcs: float = 0.0
    """Share of rendered dice with bold light swirls across every face (decorated sets)."""
    more_logos: bool = False
    """Also draw ``EXTRA_LOGO_FAMILIES`` (sun, heart, crown, spiral) on rendered logo sixes."""
    translucent: float = 0.0
    """Share of rendered dice that are see-through: the pips underneath show through the top."""
    occluded: float = 0.0
    """Share of rendered scenes (and, unless ``occluded_photos`` says otherwise, of the training
    photos' dice) that also give a die partly hidden, as class 0."""
    occluded_least: float = 0.3
    """The least share of a hidden die's box that ``occluded`` covers (at most 0.65)."""
    occluded_photos: float | None = None
    """Share of the training photos' dice cut partly hidden; None: ``occluded``, 0: renders only."""
    hard_shadows: float = 0.0
    """Share of training crops with a hard shadow's edge across the die (one side darkened)."""
    mixstyle: float = 0.0
    """Chance per batch that the plain CNN's first blocks swap feature statistics between crops."""
    view: int = 64
    """The side the EfficientNet sees: its 64 px crop resized inside the network."""
    source_copies: int = 1
    """Crops cut per die of the extra ``--source`` folders (photos rendered by
    ``vision.train.blender`` are few beside the flat renders, so they may be cut more often)."""


def _block(inputs: int, outputs: int, stride: int) -> list[nn.Module]:
    """3x3 convolution, batch norm, ReLU."""
    return [
        nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False),
        nn.BatchNorm2d(outputs),
        nn.ReLU(inplace=True),
    ]


class MixStyle(nn.Module):
    """Mix the per-channel feature mean and spread of each crop with another crop's (training only).

    Early feature statistics carry a crop's style (body colour, lighting, texture), its pattern
    the pips. Mixing them between crops of different dice sets and sources makes the classifier
    meet styles no photo showed (Zhou et al., "Domain Generalization with MixStyle", ICLR 2021).
    It is the identity when the model is evaluated, so the exported network does not contain it.
    """

    def __init__(self, chance: float, alpha: float = 0.1, eps: float = 1e-6) -> None:
        """``chance`` per batch of mixing; the mixing weights follow Beta(alpha, alpha)."""
        super().__init__()
        self.chance = chance
        self.alpha = alpha
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Features with their statistics mixed (training) or unchanged (evaluation)."""
        if not self.training or self.chance <= 0 or float(torch.rand(1)) >= self.chance:
            return x
        size = x.shape[0]
        mean = x.mean(dim=(2, 3), keepdim=True).detach()
        spread = (x.var(dim=(2, 3), keepdim=True) + self.eps).sqrt().detach()
        normed = (x - mean) / spread
        weight = torch.distributions.Beta(self.alpha, self.alpha).sample((size, 1, 1, 1))
        other = torch.randperm(size)
        mixed_mean = weight * mean + (1 - weight) * mean[other]
        mixed_spread = weight * spread + (1 - weight) * spread[other]
        return normed * mixed_spread + mixed_mean


class FaceNet(nn.Module):
    """A small plain CNN: 64x64 RGB crop in, 7 logits out (class 0 = not a readable face)."""

    def __init__(self, widths: Sequence[int] = (32, 48, 96, 160), *, mixstyle: float = 0.0) -> None:
        """Build the layers; ``widths`` are the channels at strides 2, 4, 8 and 16.

        ``mixstyle`` > 0 mixes feature statistics between crops after each of the first three
        blocks while training (:class:`MixStyle`).
        """
        super().__init__()
        a, b, c, d = widths
        self.features = nn.Sequential(
            *_block(3, a, 2),
            MixStyle(mixstyle),
            *_block(a, b, 2),
            MixStyle(mixstyle),
            *_block(b, b, 1),
            MixStyle(mixstyle),
            *_block(b, c, 2),
            *_block(c, c, 1),
            *_block(c, d, 2),
            *_block(d, d, 1),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.head = nn.Sequential(nn.Dropout(0.1), nn.Linear(d, len(CLASS_NAMES)))

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        """Logits for a batch of crops (N, 3, 64, 64), RGB in 0..1."""
        return self.head(self.features(image))  # type: ignore[no-any-return]


@dataclass
class Datasets:
    """Training crops, validation crops per source, and counts for the model card."""

    train: CropSet
    val: dict[str, CropSet]
    counts: dict[str, dict[str, Any]] = field(default_factory=dict)


def locator_proposer(
    locator_path: Path = FLOAT_LOCATOR_MODEL, face_path: Path = FLOAT_MODEL
) -> Proposer:
    """Boxes the reader's locator finds, each with the face model's top face probability.

    The models are the ones the reader runs (by default the shipped float ones, whose int8
    copies the reader runs read the same boxes), so the crops mined are the cases it meets.
    """
    locator = OnnxLocator(locator_path)
    faces = OnnxClassifier(face_path)

    def propose(frame: UInt8Image) -> list[Proposal]:
        # read_image gives BGR, as the reader's frames are.
        tensor, factor = locator_input(frame)
        heat, size = locator.run(tensor)
        found = decode(heat, size, factor=factor, frame_shape=frame.shape[:2])
        if not found:
            return []
        probs = faces.predict(crops_for_model(frame, [f.box for f in found]))
        return [Proposal(f.box, float(p[1:].max())) for f, p in zip(found, probs, strict=True)]

    return propose


def _cut_many(
    records: Sequence[Record],
    rng: np.random.Generator,
    *,
    split: Split,
    description: str,
    proposer: Proposer | None = None,
    copies: int | None = None,
    source_copies: Mapping[str, int] | None = None,
    occluded: float = 0.0,
    occluded_least: float = 0.3,
) -> CropSet:
    """Cut crops from many records with a progress bar (``copies`` per die: else by source,
    ``source_copies`` before ``COPIES``)."""
    by_source = {**COPIES, **(source_copies or {})}
    parts = []
    for record in tqdm(records, desc=description, unit="photo", leave=False):
        augment = split == "train"
        cuts = (copies or by_source.get(record.source, 1)) if augment else 1
        parts.append(
            cut_crops(
                record,
                rng,
                copies=cuts,
                negatives=True,
                augment=augment,
                proposer=proposer,
                occluded=occluded,
                occluded_least=occluded_least,
            )
        )
    return CropSet.concat(parts)


def _render_many(
    rng: np.random.Generator,
    count: int,
    *,
    description: str,
    render: Callable[[np.random.Generator, int], CropSet] = render_crops,
) -> CropSet:
    """Render synthetic crops in chunks with ``render`` (the renderer and its looks), with a
    progress bar."""
    chunk = 500
    parts = []
    with tqdm(total=count, desc=description, unit="crop", leave=False) as bar:
        for start in range(0, count, chunk):
            size = min(chunk, count - start)
            parts.append(render(rng, size))
            bar.update(size)
    return CropSet.concat(parts)


def build_datasets(data: Path, config: TrainConfig, *, sources: Sequence[Path] = ()) -> Datasets:
    """Cut real crops per split and render synthetic ones, all from ``config.seed``.

    ``sources`` are source folders beside those under ``data`` (a table's own photos from
    ``pipcam photos``); a name already taken is refused rather than silently merged.
    """
    rng = np.random.default_rng(config.seed)
    records = load_sources(data, sources)
    train_records, val_records = train_and_val(records, exclude=config.exclude)
    proposer = locator_proposer() if config.mine else None
    real_train = _cut_many(
        train_records,
        rng,
        split="train",
        description="train crops",
        proposer=proposer,
        source_copies={folder.name: config.source_copies for folder in sources},
        occluded=config.occluded if config.occluded_photos is None else config.occluded_photos,
        occluded_least=config.occluded_least,
    )
    val: dict[str, CropSet] = {}
    for source in sorted({r.source for r in val_records}):
        chosen = [r for r in val_records if r.source == source]
        val[source] = _cut_many(chosen, rng, split="val", description=f"val {source[:12]}")
    synthetic = _render_many(
        rng,
        config.synthetic_train,
        description="synthetic train",
        render=partial(
            render_crops,
            faint=config.faint,
            arcs=config.arcs,
            more_logos=config.more_logos,
            translucent=config.translucent,
            occluded=config.occluded,
            occluded_least=config.occluded_least,
        ),
    )
    # Validation renders stay the ordinary ones, so runs with and without these options compare.
    val["synthetic"] = _render_many(rng, config.synthetic_val, description="synthetic val")
    # Sixes with logos of families training never draws: a logo nobody showed the model.
    val[UNSEEN_LOGOS] = render_logo_sixes(rng, config.synthetic_val // 5)
    train_set = CropSet.concat([real_train, synthetic])
    counts: dict[str, dict[str, Any]] = {}
    skipped = Counter(r.source for r in records if r.known_issue)
    for source in sorted({r.source for r in records}):
        entry: dict[str, Any] = {"skipped_known_issue": skipped.get(source, 0)}
        for split_name, chosen in (("train", train_records), ("val", val_records)):
            photos = [r for r in chosen if r.source == source]
            entry[f"{split_name}_photos"] = len(photos)
            entry[f"{split_name}_dice"] = sum(
                1 if r.is_crop else sum(not d.suspect for d in r.dice) for r in photos
            )
        counts[source] = entry
    for name, crops in [("train (all)", train_set), *val.items()]:
        counts.setdefault(name, {})["crops_by_class"] = np.bincount(
            crops.labels, minlength=len(CLASS_NAMES)
        ).tolist()
    counts["synthetic"]["train_crops"] = len(synthetic)
    counts["synthetic"]["val_crops"] = len(val["synthetic"])
    return Datasets(train=train_set, val=val, counts=counts)


def _to_tensor(images: npt.NDArray[np.uint8]) -> torch.Tensor:
    """uint8 NHWC RGB to float NCHW in 0..1 (what ``crop_for_model`` gives)."""
    return torch.from_numpy(images).permute(0, 3, 1, 2).float().div_(255.0)


def _chosen(size: int, share: float, generator: torch.Generator) -> torch.Tensor:
    """The indices of a random ``share`` of a batch of ``size`` crops (one draw per crop)."""
    return torch.nonzero(torch.rand(size, generator=generator) < share).flatten()


def add_streaks(batch: torch.Tensor, share: float, generator: torch.Generator) -> torch.Tensor:
    """Draw a thin bright curve, a lamp reflected in a glossy die, on a ``share`` of the crops.

    Glossy and translucent dice under a lamp show white arcs along their rounded edges and across
    the face; a reader must count pips, not reflections. Each curve is a quadratic Bezier through
    the crop's middle (where the die is), 1-2.5 px wide at 64 px and long against a pip, so it is
    never round like one; a value's pips stay where they are and the label does not change.
    """
    size, _, height, width = batch.shape
    chosen = _chosen(size, share, generator)
    if chosen.numel() == 0:
        return batch
    count = chosen.numel()
    side = float(min(height, width))
    # A chord through the die's middle, 35-55 % of the side long, bent to either side.
    centre = 0.38 + 0.24 * torch.rand(count, 1, 2, generator=generator)
    angle = torch.rand(count, 1, generator=generator) * torch.pi
    length = 0.35 + 0.2 * torch.rand(count, 1, generator=generator)
    along = torch.stack([angle.cos(), angle.sin()], dim=-1) * length[..., None] / 2
    across = torch.stack([-angle.sin(), angle.cos()], dim=-1) * length[..., None]
    bend = 0.8 * torch.rand(count, 1, 1, generator=generator) - 0.4
    ends = torch.cat([centre - along, centre + along], dim=1)  # (count, 2, 2)
    middle = centre + bend * across
    t = torch.linspace(0.0, 1.0, 25)[None, :, None]
    curve = (
        (1 - t) ** 2 * ends[:, :1] + 2 * (1 - t) * t * middle + t**2 * ends[:, 1:]
    ) * side  # (count, 25, 2): x, y in pixels
    thickness = torch.randint(1, 3, (count,), generator=generator)
    sigma = 0.3 + 0.5 * torch.rand(count, generator=generator)
    masks = np.zeros((count, height, width), np.float32)
    fixed = (curve * 16).round().int().numpy()  # 4 fractional bits for cv2's shift
    for index in range(count):
        # A drawn line, not a row of points: points would be beads, which is what pips look like.
        cv2.polylines(
            masks[index],
            [fixed[index]],
            isClosed=False,
            color=1.0,
            thickness=int(thickness[index]),
            lineType=cv2.LINE_AA,
            shift=4,
        )
        cv2.GaussianBlur(masks[index], (0, 0), float(sigma[index]), dst=masks[index])
    mask = torch.from_numpy(masks / masks.max(axis=(1, 2), keepdims=True).clip(1e-6))[:, None]
    alpha = 0.5 + 0.5 * torch.rand(count, 1, 1, 1, generator=generator)
    colour = 0.85 + 0.15 * torch.rand(count, 3, 1, 1, generator=generator)
    weight = (alpha * mask).clamp_(0.0, 1.0)
    out = batch.clone()
    out[chosen] = batch[chosen] * (1 - weight) + colour * weight
    return out


def add_hard_shadows(batch: torch.Tensor, share: float, generator: torch.Generator) -> torch.Tensor:
    """Darken one side of a straight line across the die on a ``share`` of the crops.

    A tray's wall or a lamp's edge casts a hard shadow whose edge can cross a die: the face is
    then half in light, half in 25-60 % of it (linear light), and the edge, soft over a pixel or
    two, runs at any angle through the die's middle third. The pips stay where they are and the
    label does not change: a reader that sees the line as pips' edges reads a wrong value.
    """
    size, _, height, width = batch.shape
    chosen = _chosen(size, share, generator)
    if chosen.numel() == 0:
        return batch
    count = chosen.numel()
    side = float(min(height, width))
    centre = (1 / 3 + torch.rand(count, 2, generator=generator) / 3) * side
    angle = torch.rand(count, generator=generator) * 2 * torch.pi
    soft = 0.3 + 1.2 * torch.rand(count, generator=generator)
    light = 0.25 + 0.35 * torch.rand(count, generator=generator)
    rows = torch.arange(height, dtype=batch.dtype)[None, :, None]
    cols = torch.arange(width, dtype=batch.dtype)[None, None, :]
    along = (cols + 0.5 - centre[:, 0, None, None]) * angle.cos()[:, None, None] + (
        rows + 0.5 - centre[:, 1, None, None]
    ) * angle.sin()[:, None, None]
    lit = torch.sigmoid(along / soft[:, None, None])  # 1 in the light, 0 in the shadow
    gain = (light[:, None, None] + (1 - light[:, None, None]) * lit)[:, None]
    out = batch.clone()
    # sRGB values darkened in linear light, as a shadow darkens what the camera saw.
    out[chosen] = (batch[chosen].clamp(0.0, 1.0) ** 2.2 * gain) ** (1 / 2.2)
    return out


def duotone(batch: torch.Tensor, share: float, generator: torch.Generator) -> torch.Tensor:
    """Repaint a ``share`` of the crops in two random colours by their brightness.

    A white die with black pips becomes, say, a smoky grey die with red pips: every labelled
    photo teaches every pair of body and pip colours, including pairs that differ in colour more
    than in brightness, which are the dice a reader trained on bright-and-dark pips asks about.
    The two colours are at least 0.35 apart (in 0..1 RGB), so the pips always remain visible.
    """
    size = batch.shape[0]
    chosen = _chosen(size, share, generator)
    if chosen.numel() == 0:
        return batch
    count = chosen.numel()
    weights = torch.tensor([0.299, 0.587, 0.114], dtype=batch.dtype)[None, :, None, None]
    luma = (batch[chosen] * weights).sum(dim=1, keepdim=True)  # (count, 1, H, W)
    flat = luma.flatten(1)
    low = flat.quantile(0.005, dim=1)[:, None, None, None]
    high = flat.quantile(0.995, dim=1)[:, None, None, None]
    level = ((luma - low) / (high - low).clamp_min(0.05)).clamp(0.0, 1.0)
    # Eight candidate pairs per crop; the first pair far enough apart is taken.
    dark = torch.rand(count, 8, 3, generator=generator)
    bright = torch.rand(count, 8, 3, generator=generator)
    apart = (bright - dark).norm(dim=2) > 0.35
    apart[:, -1] = True  # never left without a pair (a near pair still draws the die)
    pick = apart.float().argmax(dim=1)
    rows = torch.arange(count)
    dark_colour = dark[rows, pick][:, :, None, None]
    bright_colour = bright[rows, pick][:, :, None, None]
    out = batch.clone()
    out[chosen] = dark_colour + (bright_colour - dark_colour) * level
    return out


def _augment(
    batch: torch.Tensor,
    generator: torch.Generator,
    *,
    invert: float = 0.0,
    streaks: float = 0.0,
    duotones: float = 0.0,
    hard_shadows: float = 0.0,
) -> torch.Tensor:
    """Cheap augmentation: dihedral turns, colour shuffles, inversions, contrast, noise.

    Pip patterns read the same turned or mirrored, and dice come in every colour, so each crop's
    channels are shuffled on its own, and an ``invert`` share of crops is turned into its
    negative: a white die with black pips becomes a black die with white pips, so the pips of
    every real die teach every body colour.
    """
    size = batch.shape[0]
    if streaks > 0:
        batch = add_streaks(batch, streaks, generator)
    if duotones > 0:
        batch = duotone(batch, duotones, generator)
    if hard_shadows > 0:
        batch = add_hard_shadows(batch, hard_shadows, generator)
    turns = int(torch.randint(0, 4, (1,), generator=generator))
    batch = torch.rot90(batch, turns, dims=(2, 3))
    if bool(torch.rand(1, generator=generator) < 0.5):
        batch = batch.flip(3)
    order = torch.rand(size, 3, generator=generator).argsort(dim=1)
    batch = torch.gather(batch, 1, order[:, :, None, None].expand_as(batch))
    if invert > 0:
        negative = torch.rand(size, 1, 1, 1, generator=generator) < invert
        batch = torch.where(negative, 1.0 - batch, batch)
    gain = 1 + 0.25 * (torch.rand(size, 3, 1, 1, generator=generator) - 0.5)
    contrast = 0.6 + 0.8 * torch.rand(size, 1, 1, 1, generator=generator)
    mean = batch.mean(dim=(1, 2, 3), keepdim=True)
    batch = (batch - mean) * contrast + mean
    batch = batch * gain + 0.2 * (torch.rand(size, 1, 1, 1, generator=generator) - 0.5)
    grey = torch.rand(size, 1, 1, 1, generator=generator) < 0.1
    batch = torch.where(grey, batch.mean(dim=1, keepdim=True).expand_as(batch), batch)
    noise = torch.randn(batch.shape, generator=generator) * 0.03
    noisy = torch.rand(size, 1, 1, 1, generator=generator) < 0.3
    batch = torch.where(noisy, batch + noise, batch)
    return batch.clamp_(0.0, 1.0)


@torch.no_grad()
def predict(model: nn.Module, images: npt.NDArray[np.uint8]) -> npt.NDArray[np.int64]:
    """Predicted classes of uint8 NHWC RGB crops."""
    model.eval()
    outputs = [
        model(_to_tensor(images[start : start + 512])).argmax(1)
        for start in range(0, len(images), 512)
    ]
    if not outputs:
        return np.zeros(0, np.int64)
    return torch.cat(outputs).numpy().astype(np.int64)


def evaluate_crops(model: nn.Module, crops: CropSet) -> dict[str, float | int]:
    """Accuracy on dice (classes 1..6), on class-0 crops, and dice wrongly called not-a-face."""
    predicted = predict(model, crops.images)
    truth = crops.labels
    dice = truth > 0
    negatives = ~dice
    return {
        "dice": int(dice.sum()),
        "dice_accuracy": float((predicted[dice] == truth[dice]).mean()) if dice.any() else 0.0,
        "dice_as_zero": int((predicted[dice] == 0).sum()),
        "dice_wrong_value": int(((predicted[dice] != truth[dice]) & (predicted[dice] > 0)).sum()),
        "negatives": int(negatives.sum()),
        "negative_accuracy": (
            float((predicted[negatives] == 0).mean()) if negatives.any() else 0.0
        ),
    }


def build_model(config: TrainConfig) -> nn.Module:
    """The network ``config.arch`` names, freshly initialised (or from ImageNet for "effnet")."""
    if config.arch == "effnet":
        if config.mixstyle:
            raise ValueError("MixStyle is built into the plain CNN only: use --arch plain")
        from vision.train.backbone import EffFaceNet

        return EffFaceNet(classes=len(CLASS_NAMES), view=config.view)
    if config.arch != "plain":
        raise ValueError(f"unknown architecture {config.arch!r}: use 'plain' or 'effnet'")
    if config.view != MODEL_SIZE:
        raise ValueError("a larger view is for the EfficientNet only: use --arch effnet")
    return FaceNet(config.widths, mixstyle=config.mixstyle)


@dataclass
class TrainResult:
    """The trained model, its validation figures per source and how long training took."""

    model: nn.Module
    metrics: dict[str, dict[str, float | int]]
    seconds: float
    history: list[float]


class CheckpointError(ValueError):
    """A checkpoint file cannot be resumed: unreadable, or written by another run."""


# Fields that may change between an interrupted run and its resumption: they decide how fast
# the run goes, not what it learns.
_RESUMABLE_CHANGES = frozenset({"threads"})


def _data_fingerprint(crops: CropSet) -> str:
    """A short hash of the training crops: their labels and every 97th image (cheap on 1 GB)."""
    digest = hashlib.sha256()
    digest.update(repr(crops.images.shape).encode())
    digest.update(np.ascontiguousarray(crops.labels).tobytes())
    digest.update(np.ascontiguousarray(crops.images[::97]).tobytes())
    return digest.hexdigest()[:16]


def _run_identity(config: TrainConfig, fingerprint: str) -> dict[str, Any]:
    identity = {k: v for k, v in asdict(config).items() if k not in _RESUMABLE_CHANGES}
    identity["data"] = fingerprint
    return {k: list(v) if isinstance(v, tuple) else v for k, v in identity.items()}


def _save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` next to ``path`` and rename it over: an interruption never leaves half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    torch.save(state, partial)
    os.replace(partial, path)


def _load_checkpoint(path: Path, identity: dict[str, Any]) -> dict[str, Any]:
    try:
        state: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
        saved = state["identity"]
    except Exception as err:
        # torch's own message for a foreign pickle is about its loader, not about the file.
        raise CheckpointError(
            f"checkpoint {path} cannot be read: it is not a checkpoint written by"
            f" `python -m vision.train` ({type(err).__name__}); delete it to train from the start"
        ) from err
    # An option added since the checkpoint was written is off by default, which is how that
    # earlier run trained: a field it does not name is taken at its default.
    defaults = _run_identity(TrainConfig(), "")
    saved = {**{k: v for k, v in defaults.items() if k != "data"}, **saved}
    differs = sorted(k for k in identity.keys() | saved.keys() if identity.get(k) != saved.get(k))
    if differs:
        shown = ", ".join(f"{k}: {saved.get(k)!r} there, {identity.get(k)!r} now" for k in differs)
        raise CheckpointError(
            f"checkpoint {path} was written by another run ({shown}); run with that run's options"
            " to resume it, or delete it (or pass another path) to train from the start"
        )
    return state


def train(
    datasets: Datasets,
    config: TrainConfig,
    checkpoint: Path | None = None,
    *,
    start: nn.Module | None = None,
) -> TrainResult:
    """Train ``FaceNet`` on the training crops; the seed fixes weights, order and augmentation.

    With ``checkpoint``, the run is saved there after every epoch and, when the file already
    holds an earlier part of the same run (same config and crops), carries on from it: the
    resumed run ends with the same weights as one never interrupted (at the same thread count).
    ``start`` is a trained network to go on from (``vision.train.tune``) instead of a new one.
    """
    if start is not None and checkpoint is not None:
        raise ValueError("a checkpoint records runs from a new network: tune without one")
    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)
    generator = torch.Generator().manual_seed(config.seed)
    model = start if start is not None else build_model(config)
    images = datasets.train.images
    labels = torch.from_numpy(datasets.train.labels)
    steps_per_epoch = max(len(images) // config.batch_size, 1)
    optimiser = torch.optim.AdamW(
        model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimiser,
        max_lr=config.learning_rate,
        total_steps=steps_per_epoch * config.epochs,
        pct_start=0.15,
    )
    loss_fn = nn.CrossEntropyLoss(label_smoothing=config.label_smoothing)
    history: list[float] = []
    done = 0
    earlier = 0.0
    identity = _run_identity(config, _data_fingerprint(datasets.train)) if checkpoint else {}
    if checkpoint is not None and checkpoint.exists():
        state = _load_checkpoint(checkpoint, identity)
        model.load_state_dict(state["model"])
        optimiser.load_state_dict(state["optimiser"])
        schedule.load_state_dict(state["schedule"])
        generator.set_state(state["generator"])
        torch.set_rng_state(state["torch_rng"])
        history = list(state["history"])
        done = int(state["epochs_done"])
        earlier = float(state["seconds"])
        tqdm.write(f"resuming from {checkpoint}: {done} of {config.epochs} epochs done")
    started = time.perf_counter()
    for epoch in range(done, config.epochs):
        model.train()
        order = torch.randperm(len(images), generator=generator)
        total = 0.0
        bar = tqdm(range(steps_per_epoch), desc=f"epoch {epoch + 1}/{config.epochs}", unit="batch")
        for step in bar:
            index = order[step * config.batch_size : (step + 1) * config.batch_size]
            batch = _augment(
                _to_tensor(images[index.numpy()]),
                generator,
                invert=config.invert,
                streaks=config.streaks,
                duotones=config.duotone,
                hard_shadows=config.hard_shadows,
            )
            loss = loss_fn(model(batch), labels[index])
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss.detach())
            bar.set_postfix(loss=f"{total / (step + 1):.3f}")
        history.append(total / steps_per_epoch)
        summary = {name: evaluate_crops(model, crops) for name, crops in datasets.val.items()}
        tqdm.write(
            f"epoch {epoch + 1}: loss {history[-1]:.3f}; "
            + ", ".join(
                f"{name[:10]} {m['dice_accuracy']:.3f}/{m['negative_accuracy']:.3f}"
                for name, m in summary.items()
            )
        )
        if checkpoint is not None:
            _save_checkpoint(
                checkpoint,
                {
                    "identity": identity,
                    "epochs_done": epoch + 1,
                    "model": model.state_dict(),
                    "optimiser": optimiser.state_dict(),
                    "schedule": schedule.state_dict(),
                    "generator": generator.get_state(),
                    "torch_rng": torch.get_rng_state(),
                    "history": history,
                    "seconds": earlier + time.perf_counter() - started,
                },
            )
    seconds = earlier + time.perf_counter() - started
    metrics = {name: evaluate_crops(model, crops) for name, crops in datasets.val.items()}
    model.eval()
    return TrainResult(model=model, metrics=metrics, seconds=seconds, history=history)
