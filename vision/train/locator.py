"""Train the tiny dice locator: a centre heatmap and box net at stride 4 on a 320 px frame.

``python -m vision.train.locator --data /work/shared/data/dice --out models/`` trains on the real
training photos (whole-die boxes) and synthetic table scenes, measures per-die recall and precision
on the held-out photos per source, exports ``dice_locator.onnx`` and writes its section of
``MODEL_CARD.md``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import onnxruntime as ort
import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn
from tqdm import tqdm

from vision.classify import processor
from vision.errors import LabelsError
from vision.evaluate import match_dice
from vision.preprocess import crops_for_model
from vision.train.card import LOCATOR_MARKER, READING_MARKER
from vision.train.data import (
    DEFAULT_DATA,
    FloatBox,
    Record,
    SourceFolderError,
    UnknownSourceError,
    add_exclude_option,
    add_source_option,
    die_boxes,
    load_folder,
    load_sources,
    read_image,
    train_and_val,
)
from vision.train.export import sha256_of
from vision.train.heatmap import LOCATOR_SIDE, STRIDE, decode, encode, locator_input
from vision.train.locator_data import (
    LocatorConfig,
    Photo,
    Scene,
    cover_die,
    load_photo,
    photometric,
    render_pool,
    sample,
)

__all__ = [
    "RECORDED_NAME",
    "LocatorConfig",
    "LocNet",
    "main",
    "measure",
    "record_locator_outputs",
    "train_locator",
]

RECORDED_NAME = "locator_outputs.json"
"""The file in a test folder that holds the shipped locator's recorded boxes."""

CARD_MARKER = LOCATOR_MARKER


def _conv(inputs: int, outputs: int, stride: int = 1, kernel: int = 3) -> nn.Sequential:
    """Convolution, batch norm, ReLU."""
    return nn.Sequential(
        nn.Conv2d(inputs, outputs, kernel, stride, kernel // 2, bias=False),
        nn.BatchNorm2d(outputs),
        nn.ReLU(inplace=True),
    )


class LocNet(nn.Module):
    """A small U-shaped net: RGB frame in, centre logits (1 channel) and box (4) at stride 4."""

    def __init__(self, widths: tuple[int, int, int, int, int] = LocatorConfig.widths) -> None:
        """Build the layers: ``widths`` as in :attr:`LocatorConfig.widths`."""
        super().__init__()
        w2, w4, w8, w16, head = widths
        self.stem = _conv(3, w2, 2)
        self.down4 = nn.Sequential(_conv(w2, w4, 2), _conv(w4, w4))
        self.down8 = nn.Sequential(_conv(w4, w8, 2), _conv(w8, w8))
        self.down16 = nn.Sequential(_conv(w8, w16, 2), _conv(w16, w16))
        self.up8 = nn.Sequential(_conv(w16 + w8, w8, kernel=1), _conv(w8, w8))
        self.up4 = nn.Sequential(_conv(w8 + w4, head, kernel=1), _conv(head, head))
        self.heat = nn.Conv2d(head, 1, 1)
        self.box = nn.Conv2d(head, 4, 1)
        # Start the heatmap near "no die anywhere", as CenterNet does, so early steps are stable.
        bias = self.heat.bias
        assert bias is not None
        nn.init.constant_(bias, -2.19)

    def forward(self, image: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Heatmap logits (N, 1, H/4, W/4) and box (N, 4, H/4, W/4) for (N, 3, H, W) input."""
        s4 = self.down4(self.stem(image))
        s8 = self.down8(s4)
        s16 = self.down16(s8)
        u8 = self.up8(torch.cat([F.interpolate(s16, scale_factor=2.0, mode="nearest"), s8], 1))
        u4 = self.up4(torch.cat([F.interpolate(u8, scale_factor=2.0, mode="nearest"), s4], 1))
        return self.heat(u4), self.box(u4)


def _batch(
    photos: list[Photo],
    rng: np.random.Generator,
    config: LocatorConfig,
    pool: list[Scene] | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A batch of inputs (RGB / 255, NCHW) and their heatmap, box and mask targets."""
    images, heats, regs, masks = [], [], [], []
    for _ in range(config.batch_size):
        image, boxes = sample(photos, rng, config, pool)
        if config.occluded and rng.random() < config.occluded:
            image, boxes = cover_die(image, boxes, rng)
        if config.photometric:
            image, boxes = photometric(image, boxes, rng, config.grey)
        # Colour jitter: channel gains and brightness, as lighting and white balance vary.
        jitter = image.astype(np.float32) * rng.uniform(0.8, 1.2, 3) * rng.uniform(0.7, 1.3)
        rgb = np.clip(jitter, 0, 255)[:, :, ::-1] / 255.0
        images.append(rgb.transpose(2, 0, 1))
        heat, reg, mask = encode(boxes, config.crop, config.crop)
        heats.append(heat)
        regs.append(reg)
        masks.append(mask)
    return (
        torch.from_numpy(np.stack(images).astype(np.float32)),
        torch.from_numpy(np.stack(heats)),
        torch.from_numpy(np.stack(regs)),
        torch.from_numpy(np.stack(masks)),
    )


def _loss(
    heat_logits: torch.Tensor,
    box: torch.Tensor,
    heat: torch.Tensor,
    reg: torch.Tensor,
    mask: torch.Tensor,
) -> torch.Tensor:
    """CenterNet's focal loss on the heatmap plus L1 on the box at centre cells."""
    prob = torch.sigmoid(heat_logits).clamp(1e-4, 1 - 1e-4)
    positive = mask > 0
    pos_loss = -(torch.log(prob) * (1 - prob) ** 2)[positive].sum()
    neg_loss = -(torch.log(1 - prob) * prob**2 * (1 - heat) ** 4)[~positive].sum()
    count = positive.sum().clamp(min=1)
    box_loss = (F.l1_loss(box, reg, reduction="none") * mask).sum() / count
    return (pos_loss + neg_loss) / count + box_loss


def train_locator(photos: list[Photo], config: LocatorConfig) -> LocNet:
    """Train the locator for ``config.steps`` batches, reproducibly from the seed."""
    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)
    rng = np.random.default_rng(config.seed)
    model = LocNet(config.widths)
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimiser, max_lr=config.learning_rate, total_steps=config.steps, pct_start=0.1
    )
    pool = (
        render_pool(rng, config, lambda steps: tqdm(steps, desc="scenes", leave=False))
        if config.synthetic_scenes
        else None
    )
    model.train()
    bar = tqdm(range(config.steps), desc="locator", unit="batch")
    running = 0.0
    for step in bar:
        images, heat, reg, mask = _batch(photos, rng, config, pool)
        heat_logits, box = model(images)
        loss = _loss(heat_logits, box, heat, reg, mask)
        optimiser.zero_grad(set_to_none=True)
        torch.autograd.backward(loss)
        optimiser.step()
        schedule.step()
        running = 0.98 * running + 0.02 * float(loss.detach()) if step else float(loss.detach())
        bar.set_postfix(loss=f"{running:.3f}")
    model.eval()
    return model


def export_locator(model: LocNet, path: Path) -> float:
    """Export to ONNX (input "image", outputs "heatmap" and "boxes"); return the torch gap."""
    model.eval()
    example = torch.rand(1, 3, 240, 320)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            model,
            (example,),
            str(path),
            input_names=["image"],
            output_names=["heatmap", "boxes"],
            dynamic_axes={
                "image": {0: "batch", 2: "height", 3: "width"},
                "heatmap": {0: "batch", 2: "grid_height", 3: "grid_width"},
                "boxes": {0: "batch", 2: "grid_height", 3: "grid_width"},
            },
            opset_version=17,
            dynamo=False,
        )
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, {"image": example.numpy()})
    with torch.no_grad():
        want = [t.numpy() for t in model(example)]
    gap = max(float(np.abs(g - w).max()) for g, w in zip(got, want, strict=True))
    if gap > 1e-4:
        raise RuntimeError(f"ONNX and torch differ by {gap:.2e} (limit 1e-4)")
    return gap


def _read_values(
    face: ort.InferenceSession, image: npt.NDArray[np.uint8], found: list[FloatBox]
) -> list[int]:
    """Face values of the found boxes, leaving out those the face model calls class 0."""
    if not found:
        return []
    boxes = [tuple(int(round(v)) for v in box) for box in found]
    logits = face.run(["logits"], {"image": crops_for_model(image, boxes)})[0]
    return [int(k) for k in logits.argmax(axis=1) if k != 0]


def measure(
    session: ort.InferenceSession,
    records: list[Record],
    *,
    threshold: float,
    face: ort.InferenceSession | None = None,
) -> dict[str, float | int]:
    """Per-die recall and precision of boxes on full photos (matched as vision.evaluate does).

    With a ``face`` model it also reads the values (dropping class 0) and counts them as
    ``pipcam eval`` does: recall and precision by multiset of values per photo, exact photos.
    """
    labelled = found_total = matched = 0
    values_read = values_matched = exact = 0
    times: list[float] = []
    for record in records:
        image = read_image(record.path)
        truth = die_boxes(record, image)
        started = time.perf_counter()
        tensor, factor = locator_input(image)
        heat, box = session.run(["heatmap", "boxes"], {"image": tensor})
        found = decode(
            heat[0], box[0], factor=factor, threshold=threshold, frame_shape=image.shape[:2]
        )
        times.append(time.perf_counter() - started)
        pairs = match_dice(truth, [f.box for f in found])
        labelled += len(truth)
        found_total += len(found)
        matched += len(pairs)
        if face is not None:
            values = Counter(_read_values(face, image, [f.box for f in found]))
            wanted = Counter(die.value for die in record.dice)
            values_read += sum(values.values())
            values_matched += sum((values & wanted).values())
            exact += values == wanted
    result: dict[str, float | int] = {
        "photos": len(records),
        "dice": labelled,
        "found": found_total,
        "matched": matched,
        "recall": matched / labelled if labelled else 1.0,
        "precision": matched / found_total if found_total else 1.0,
        "median_ms": 1000 * float(np.median(times)) if times else 0.0,
    }
    if face is not None:
        result["value_recall"] = values_matched / labelled if labelled else 1.0
        result["value_precision"] = values_matched / values_read if values_read else 1.0
        result["exact_photos"] = exact
    return result


def record_locator_outputs(
    onnx_path: Path, folder: Path, *, threshold: float = 0.4, name: str = RECORDED_NAME
) -> Path:
    """Run the locator on every photo of a test folder; store its boxes and scores for tests
    in ``folder / name``."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    entries: list[dict[str, Any]] = []
    for record in load_folder(folder):
        if record.is_crop:
            continue
        image = read_image(record.path)
        tensor, factor = locator_input(image)
        heat, box = session.run(["heatmap", "boxes"], {"image": tensor})
        found = decode(
            heat[0], box[0], factor=factor, threshold=threshold, frame_shape=image.shape[:2]
        )
        entries.append(
            {
                "image": record.path.relative_to(folder).as_posix(),
                "boxes": [[round(v, 2) for v in f.box] for f in found],
                "scores": [round(f.score, 4) for f in found],
            }
        )
    out = folder / name
    document = {"model_sha256": sha256_of(onnx_path), "threshold": threshold, "photos": entries}
    out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return out


def _card_section(report: dict[str, Any]) -> str:
    """The locator's section of MODEL_CARD.md."""
    config = report["config"]
    low, high = config.get("scale_range", (0.7, 1.4))
    # Runs before the option made grey a tenth of the samples.
    grey = int(round(100 * config.get("grey", 0.1)))
    extra = (
        f", quarter turns, channel shuffles, grey ({grey} %), blur, noise, contrast"
        if config.get("photometric")
        else ""
    )
    scenes = ""
    if config.get("scatter"):
        scenes += " anywhere in the picture"
    if config.get("rim_share"):
        scenes += f", {int(100 * config['rim_share'])} % with a tray's rim"
    if config.get("touching"):
        scenes += f", {int(100 * config['touching'])} % of their dice pushed against another"
    if config.get("synthetic_scenes"):
        scenes += f", {config['synthetic_scenes']} scenes rendered once and cut at random"
    left_out = f"; left out: {', '.join(config['exclude'])}" if config.get("exclude") else ""
    covered = (
        f"; {int(100 * config['occluded'])} % of all crops with a card over part of a die"
        " (boxed where it shows)"
        if config.get("occluded")
        else ""
    )
    lines = [
        CARD_MARKER,
        "",
        "# dice_locator.onnx: where the dice are",
        "",
        f"- sha256: `{report['sha256']}`",
        f"- size: {report['size_bytes']} bytes, {report['parameters']} parameters",
        "- input `image`: float32 [1, 3, H, W], RGB, pixel / 255: the frame scaled (aspect",
        f"  kept) so its longer side is {LOCATOR_SIDE} px, padded right and bottom by edge",
        "  replication to multiples of 16. `vision.train.heatmap.locator_input(frame_bgr)` makes",
        "  it and the factor back to frame pixels.",
        f"- outputs at stride {STRIDE}: `heatmap` [1, 1, H/4, W/4], logits of die centres",
        "  (sigmoid gives 0..1); `boxes` [1, 4, H/4, W/4] = centre offset x, y inside the cell",
        "  (0..1), log(width / 4), log(height / 4) in locator pixels.",
        "  `vision.train.heatmap.decode` keeps 3x3 local maxima above"
        f" {config['threshold']} and returns whole-die boxes in frame pixels.",
        "- architecture: small U-net ({}-{}-{}-{} channels down to stride 16, two nearest-".format(
            *config["widths"][:4]
        ),
        f"  neighbour up steps with skips to stride 4, {config['widths'][4]} channels there),"
        " 1x1 heads; CenterNet focal loss + L1 box.",
        f"- training: {config['steps']} batches of {config['batch_size']} random"
        f" {config['crop']} px crops (photos at {low:g}-{high:g} times the locator's scale,"
        f" flips, colour gains{extra}{covered}), {int(100 * config['synthetic_share'])} %"
        f" synthetic table scenes with 0-{config.get('max_dice', 8)} dice{scenes}"
        " (vision/train/synth.py), the rest the real",
        f"  training photos of the sources above (same splits{left_out}); seed {config['seed']},"
        f"{_environment(report)} {report['train_seconds']} s on {config['threads']} thread(s).",
        "",
        "Held-out photos (boxes matched by IoU >= 0.2 or centre inside, as `pipcam eval` does;"
        " a source left out of training is measured on all its photos):",
        "",
        "| source | photos | dice | found | recall | precision | median ms (full frame) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, m in report["metrics"].items():
        lines.append(
            f"| {name} | {m['photos']} | {m['dice']} | {m['found']} |"
            f" {100 * m['recall']:.1f} % | {100 * m['precision']:.1f} % | {m['median_ms']:.1f} |"
        )
    if any("value_recall" in m for m in report["metrics"].values()):
        lines += [
            "",
            "The same photos read end to end, counted as `pipcam eval` does (values by multiset",
            "per photo): the locator's boxes, then the `dice_faces.onnx` of the locator's training",
            "day on each, class 0 dropped (the reading section below has today's face model):",
            "",
            "| source | per-die recall | per-die precision | photos read exactly |",
            "|---|---|---|---|",
        ]
        for name, m in report["metrics"].items():
            if "value_recall" in m:
                lines.append(
                    f"| {name} | {100 * m['value_recall']:.1f} % |"
                    f" {100 * m['value_precision']:.1f} % | {m['exact_photos']} of {m['photos']} |"
                )
    lines += [
        "",
        f"Speed: {report['bench_ms']:.1f} ms median for a 1280x960 frame on one onnxruntime thread"
        " (scaling, network and decoding).",
        "",
        "The figures above are one look at the 320 px view. The reader looks a second time,",
        "larger, when the median die found is under `vision.locate.ZOOM_BELOW` pixels there",
        "(the many small dice of a crowded photo or a far camera), and adds what it finds then;",
        "the reading section below counts that.",
        "",
        "Known limits: trained on few real scenes; dice under ~8 px at 320 px (the Catan board",
        "photos) are missed unless other dice are small too; dice side by side need a seam",
        "between them: three or more pressed flush into a block, with no gap or shadow",
        "between, are one blob to it. Extra boxes (on",
        "nell-byler, among others, the two round grey knobs of its light box) are mostly called",
        "class 0 by the face model and dropped: the locator answers 'something die-like is",
        "here', the face model whether it is a readable die. The end-to-end table counts what",
        "is left.",
        "",
    ]
    return "\n".join(lines)


def _environment(report: dict[str, Any]) -> str:
    """The libraries and machine of a run, as the card names them (empty for older reports).

    The seed gives the same network again only with the same torch, numpy and OpenCV on the
    same kind of processor: their float rounding differs between builds and instruction sets.
    """
    labels = {"torch": "torch ", "numpy": "numpy ", "opencv": "OpenCV ", "machine": ""}
    return "".join(f" {label}{report[key]}," for key, label in labels.items() if key in report)


def write_card_section(report: dict[str, Any], card: Path) -> None:
    """Replace (or add) the locator section of the model card, keeping the reading section."""
    text = card.read_text(encoding="utf-8") if card.exists() else ""
    head = text.split(CARD_MARKER)[0].rstrip("\n")
    tail = ""
    if READING_MARKER in text:
        tail = "\n" + READING_MARKER + text.split(READING_MARKER, 1)[1]
    card.write_text(head + "\n\n" + _card_section(report) + tail, encoding="utf-8")


def _widths(text: str) -> tuple[int, int, int, int, int]:
    """Parse ``--widths``: five positive integers separated by commas."""
    parts = text.split(",")
    if len(parts) != 5 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(
            f"--widths {text!r}: give five positive whole numbers, e.g. 16,24,48,64,32"
        )
    a, b, c, d, e = (int(p) for p in parts)
    return a, b, c, d, e


def _scale_range(text: str) -> tuple[float, float]:
    """Parse ``--scale-range``: two positive numbers LOW-HIGH with LOW <= HIGH."""
    try:
        low, high = (float(p) for p in text.split("-"))
    except ValueError:
        low = high = -1.0
    if not 0 < low <= high:
        raise argparse.ArgumentTypeError(
            f"--scale-range {text!r}: give LOW-HIGH, two positive numbers, e.g. 0.5-2.5"
        )
    return low, high


def main(argv: list[str] | None = None) -> int:
    """Train, measure, export and describe the locator; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m vision.train.locator", description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=Path("models"))
    parser.add_argument("--steps", type=int, default=LocatorConfig.steps)
    parser.add_argument("--seed", type=int, default=LocatorConfig.seed)
    parser.add_argument("--threads", type=int, default=LocatorConfig.threads)
    parser.add_argument(
        "--widths",
        type=_widths,
        default=LocatorConfig.widths,
        help="channels at stride 2, 4, 8, 16 and of the head, e.g. 16,24,48,64,32",
    )
    parser.add_argument(
        "--record",
        type=Path,
        metavar="DIR",
        help=f"also write the new locator's boxes on DIR's photos to DIR/{RECORDED_NAME}",
    )
    parser.add_argument(
        "--scale-range",
        type=_scale_range,
        default=LocatorConfig.scale_range,
        help="photos are seen at LOW-HIGH times the locator's own scale, e.g. 0.5-2.5",
    )
    parser.add_argument("--photo-side", type=int, default=LocatorConfig.photo_side)
    parser.add_argument("--synthetic-share", type=float, default=LocatorConfig.synthetic_share)
    parser.add_argument(
        "--synthetic-scenes",
        type=int,
        default=LocatorConfig.synthetic_scenes,
        help="render this many scenes once and cut them at random (0: render every sample)",
    )
    parser.add_argument("--max-dice", type=int, default=LocatorConfig.max_dice)
    parser.add_argument(
        "--scatter",
        action=argparse.BooleanOptionalAction,
        default=LocatorConfig.scatter,
        help="synthetic dice anywhere in the scene (--no-scatter: around the first)",
    )
    parser.add_argument("--rim-share", type=float, default=LocatorConfig.rim_share)
    parser.add_argument(
        "--touching",
        type=float,
        default=LocatorConfig.touching,
        help="share of synthetic dice pushed against another die, e.g. 0.4",
    )
    parser.add_argument(
        "--occluded",
        type=float,
        default=LocatorConfig.occluded,
        help="share of training samples with a card over part of a die, e.g. 0.2",
    )
    parser.add_argument(
        "--photometric",
        action=argparse.BooleanOptionalAction,
        default=LocatorConfig.photometric,
        help="quarter turns, channel shuffles, grey, blur, noise and contrast",
    )
    parser.add_argument(
        "--grey",
        type=float,
        default=LocatorConfig.grey,
        help="share of those samples made grey, as a monochrome camera sees them, e.g. 0.3",
    )
    add_source_option(parser, also="; its val games are measured like the other sources")
    add_exclude_option(parser, unseen="scenes")
    args = parser.parse_args(argv)
    for name in ("synthetic_share", "rim_share", "touching", "occluded", "grey"):
        share = getattr(args, name)
        if not 0.0 <= share <= 1.0:
            parser.error(f"--{name.replace('_', '-')} {share:g}: a share is from 0 to 1")
    config = LocatorConfig(
        steps=args.steps,
        seed=args.seed,
        threads=args.threads,
        widths=args.widths,
        scale_range=args.scale_range,
        photo_side=args.photo_side,
        synthetic_share=args.synthetic_share,
        synthetic_scenes=args.synthetic_scenes,
        max_dice=args.max_dice,
        scatter=args.scatter,
        rim_share=args.rim_share,
        touching=args.touching,
        occluded=args.occluded,
        photometric=args.photometric,
        grey=args.grey,
        exclude=tuple(args.exclude),
    )
    torch.set_num_threads(config.threads)
    try:
        records = load_sources(args.data, extra=args.source)
    except (SourceFolderError, LabelsError) as err:
        parser.error(str(err))
    try:
        train_all, val_all = train_and_val(records, exclude=config.exclude)
    except UnknownSourceError as err:
        parser.error(f"--exclude: {err} (in {args.data})")
    # The locator learns and is measured on whole photos only, never on the crops folder.
    train_records = [r for r in train_all if not r.is_crop and r.dice]
    val_records = [r for r in val_all if not r.is_crop]
    photos = [
        load_photo(r, config.photo_side) for r in tqdm(train_records, desc="photos", leave=False)
    ]
    started = time.perf_counter()
    model = train_locator(photos, config)
    seconds = time.perf_counter() - started
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "dice_locator.onnx"
    gap = export_locator(model, path)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    face_path = args.out / "dice_faces.onnx"
    face = (
        ort.InferenceSession(str(face_path), options, providers=["CPUExecutionProvider"])
        if face_path.exists()
        else None
    )
    metrics = {
        source: measure(
            session,
            [r for r in val_records if r.source == source],
            threshold=config.threshold,
            face=face,
        )
        for source in sorted({r.source for r in val_records})
    }
    frame = np.full((960, 1280, 3), 120, np.uint8)
    timings = []
    for _ in range(20):
        begun = time.perf_counter()
        tensor, factor = locator_input(frame)
        heat, box = session.run(["heatmap", "boxes"], {"image": tensor})
        decode(heat[0], box[0], factor=factor, threshold=config.threshold)
        timings.append(time.perf_counter() - begun)
    report = {
        "config": config.__dict__,
        "metrics": metrics,
        "train_seconds": round(seconds, 1),
        "onnx_max_abs_difference": gap,
        "sha256": sha256_of(path),
        "size_bytes": path.stat().st_size,
        "parameters": sum(p.numel() for p in model.parameters()),
        "bench_ms": 1000 * float(np.median(timings)),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "opencv": cv2.__version__,
        "machine": processor(),  # the instruction sets: they decide the rounding
    }
    write_card_section(report, args.out / "MODEL_CARD.md")
    if args.record is not None:
        record_locator_outputs(path, args.record, threshold=config.threshold)
    print(json.dumps(report, indent=1))  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
