"""Write models/MODEL_CARD.md from a training run's measured figures."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vision.train.synth import (
    DARK_SHARE,
    EXTRA_LOGO_FAMILIES,
    GLOSS_SHARE,
    HELD_OUT_LOGOS,
    LOGO_FAMILIES,
    LOGO_SHARE,
    MARBLE_SHARE,
    ONE_MARK_SHARE,
)

__all__ = [
    "ARCH_NAMES",
    "LOCATOR_MARKER",
    "READING_MARKER",
    "write_composed_card",
    "write_model_card",
]

ARCH_NAMES = {"plain": "plain CNN", "effnet": "EfficientNet-Lite0"}
"""How the card names each ``TrainConfig.arch``."""

LOCATOR_MARKER = "<!-- locator section: written by python -m vision.train.locator -->"
READING_MARKER = "<!-- reading section:"
"""The start of the card's last section, written by hand: figures of whole photos read."""
"""Everything from this line on belongs to the locator; rewriting the face card keeps it."""

SOURCES = (
    (
        "Epanemu_GameDiceRecognition",
        "https://github.com/Epanemu/GameDiceRecognition (commit 1b5e6f7)",
        "CC BY 4.0 (Roboflow export 'Dice - v3'; stock-looking images are flagged, left out)",
        "the author's train split; valid + test (clean originals, disjoint source photos)",
    ),
    (
        "matteop65_Dice_Detection_Recognition",
        "https://github.com/matteop65/Dice_Detection_Recognition (commit 2ae0c77)",
        "MIT, Copyright (c) 2021 Matteo Anthony Penlington",
        "the author's Train; the author's Valid",
    ),
    (
        "nell-byler_dice_detection",
        "https://github.com/nell-byler/dice_detection (commit aa69c12)",
        "BSD-3-Clause, Copyright (c) 2019, Nell Byler",
        "the author's train split only; 20 % of its photos (crc32 of the file name) held out",
    ),
    (
        "skovy_tensorflow-dice-model",
        "https://github.com/skovy/tensorflow-dice-model (commit 0e09d8e)",
        'MIT, "Copyright (c) 2022" (LICENSE names no holder; repository owner skovy)',
        "frames and crops split together by recording day: 2022-12-10 held out",
    ),
    (
        "skovy_tensorflow-dice-model_crops",
        "https://github.com/skovy/tensorflow-dice-model (commit 0e09d8e)",
        'MIT, "Copyright (c) 2022" (LICENSE names no holder; repository owner skovy)',
        "as above (same recordings)",
    ),
)


def _percent(value: float) -> str:
    """0.9876 -> '98.8 %'."""
    return f"{100 * value:.1f} %"


def _architecture(config: dict[str, Any]) -> str:
    """The architecture line of the card, for either ``TrainConfig.arch``."""
    if config.get("arch", "plain") == "effnet":
        view = int(config.get("view", 64))
        seen = (
            f" The 64 px crop is resized to {view} px (bilinear) inside the network first, so the"
            " ImageNet features meet pips nearer the scale they were learnt at."
            if view != 64
            else ""
        )
        return (
            "- architecture: the stem and first 11 MBConv blocks of EfficientNet-Lite0 (to the"
            f" 112-channel stage, stride 16: {view // 16}x{view // 16} at {view} px; ReLU6, batch"
            " norm), started from its ImageNet weights and fine-tuned whole; the input is mapped"
            " to 2 * x - 1 inside the network (the ImageNet scaling), then global average"
            " pooling, dropout 0.1, linear to 7 classes." + seen
        )
    mixstyle = config.get("mixstyle", 0.0)
    return (
        f"- architecture: plain CNN, 7 conv3x3 + BN + ReLU layers (widths {config['widths']},"
        " strides 2, 2, 1, 2, 1, 2, 1), global average pooling, dropout 0.1, linear to 7 classes."
        + (
            f" While training, on {int(round(100 * mixstyle))} % of batches each of the first three"
            " layers' feature means and spreads are mixed between crops (MixStyle, Zhou et al."
            " 2021): crops meet body colours, lighting and textures no photo showed them in; the"
            " exported network does not contain it."
            if mixstyle
            else ""
        )
    )


def _occluded_where(config: dict[str, Any]) -> str:
    """Where ``--occluded`` hid dice: "20 % of scenes, and of the photos' dice" and the like."""
    scenes = f"{int(round(100 * config['occluded']))} % of scenes"
    photos = config.get("occluded_photos")
    if photos is None:
        return f"{scenes}, and of the photos' dice"
    if photos == 0:
        return f"{scenes} (none of the photos' dice)"
    return f"{scenes} and {int(round(100 * photos))} % of the photos' dice"


def _families(config: dict[str, Any]) -> tuple[str, ...]:
    """The logo families a run drew on rendered sixes."""
    return LOGO_FAMILIES + (EXTRA_LOGO_FAMILIES if config.get("more_logos") else ())


def _mining(config: dict[str, Any]) -> list[str]:
    """The card's lines on crops cut at the reader's own locator boxes."""
    if not config.get("mine", False):
        return []
    return [
        "- the reader's own boxes: the shipped locator (models/dice_locator.onnx) is run on every",
        "  training photo; a box on a labelled die (IoU >= 0.5) is cut again with the die's value,",
        "  so the model learns the boxes it will be given; a box clear of every label (IoU < 0.05)",
        "  that the shipped face model does not read surely (top face < 0.9) is cut three times",
        "  as class 0: the knobs, shadows and pip-like spots a locator takes for dice.",
    ]


def _pretrained(config: dict[str, Any]) -> str:
    """The card's sentence on pretrained weights."""
    if config.get("arch", "plain") == "effnet":
        from vision.train.backbone import PRETRAINED

        return f"Pretrained weights: {PRETRAINED}."
    return "No pretrained weights are used."


_CONTRACT = [
    "- input `image`: float32 [N, 3, 64, 64], **RGB**, pixel / 255 (no mean or std), NCHW,",
    "  N dynamic. Make it with `vision.preprocess.crop_for_model(frame_bgr, box)`: a square of",
    "  side max(w, h) * 1.2 centred on the die's whole box, edge-replicated outside the frame,",
    "  resized with cv2.INTER_AREA.",
    "- output `logits`: float32 [N, 7]. Class 0 = not a readable die face (background, a die",
    "  on its edge or corner, half outside the crop, blurred past reading, a hand, a box",
    "  around two dice); classes 1..6 = the value on the face turned to the camera.",
    "  Confidence = softmax probability of the chosen class.",
]


def write_model_card(report: dict[str, Any], path: Path) -> None:
    """Render the card of one trained model: contract, data, training, validation, limits."""
    lines = [
        "# dice_faces.onnx: the face classifier",
        "",
        f"Reads the top face of one die from a square crop: a {_name(report)} trained here on CPU"
        " by:",
        "",
        *_member_commands([report], [path.parent.name or "."]),
        "",
        f"- sha256: `{report['sha256']}`",
        f"- size: {report['size_bytes']} bytes, {report['parameters']} parameters",
        *_CONTRACT,
        f"- ONNX opset 17; onnxruntime and torch agree to {report['onnx_max_abs_difference']:.1e}"
        " (checked at export, limit 1e-4).",
        "",
        *_member_sections(report, level="##"),
        *_LIMITS,
    ]
    _write(lines, path)


def _arch(report: dict[str, Any]) -> str:
    """The run's ``TrainConfig.arch`` ("plain" in reports older than the option)."""
    return str(report["config"].get("arch", "plain"))


def _name(report: dict[str, Any]) -> str:
    """The model's kind as the card names it: "plain CNN", "EfficientNet-Lite0"."""
    return ARCH_NAMES.get(_arch(report), _arch(report))


COMMAND_DEFAULTS: dict[str, float] = {"label_smoothing": 0.05, "seed": 4}
"""``TrainConfig``'s defaults for options a card's command names only when a run changed them
(``vision.train.train`` imports torch, which a card written by the ensemble need not have)."""
SHARE_OPTIONS = (
    "invert",
    "streaks",
    "duotone",
    "faint",
    "arcs",
    "translucent",
    "occluded",
    "hard_shadows",
    "mixstyle",
)
"""The training options that are shares (from 0 to 1, 0: off), as ``TrainConfig`` names them;
each is written in a member's command when it was on."""


def _member_commands(
    reports: Sequence[dict[str, Any]], names: Sequence[str] | None = None
) -> list[str]:
    """The command that trained each member (folders A, B, ... or ``names``), from its config."""
    lines = []
    for index, report in enumerate(reports):
        config = report["config"]
        name = names[index] if names is not None else chr(ord("A") + index)
        arch = _arch(report)
        options = ([f"--arch {arch}"] if arch != "plain" else []) + [f"--epochs {config['epochs']}"]
        if config.get("learning_rate") != 3e-3:
            options.append(f"--lr {config['learning_rate']:g}")
        for option, default in COMMAND_DEFAULTS.items():
            if option in config and config[option] != default:
                options.append(f"--{option.replace('_', '-')} {config[option]:g}")
        for option in SHARE_OPTIONS:
            if config.get(option):
                options.append(f"--{option.replace('_', '-')} {config[option]:g}")
        if config.get("more_logos"):
            options.append("--more-logos")
        hides = config.get("occluded") or config.get("occluded_photos")
        if hides and config.get("occluded_least", 0.3) != 0.3:
            options.append(f"--occluded-least {config['occluded_least']:g}")
        if config.get("occluded_photos") is not None:
            options.append(f"--occluded-photos {config['occluded_photos']:g}")
        if config.get("view", 64) != 64:
            options.append(f"--view {config['view']}")
        if "synthetic_train" in config:
            # Always written: the default has changed before, and the count matters.
            options.append(f"--synthetic {config['synthetic_train']}")
        options.append(f"--threads {config['threads']}")
        options += [f"--exclude {source}" for source in config.get("exclude", ())]
        lines += [
            f"    python -m vision.train {' '.join(options)} \\",
            f"        --out {name} --report {name}/report.json",
        ]
    return lines


def write_composed_card(
    reports: list[dict[str, Any]],
    path: Path,
    *,
    sha256: str,
    size_bytes: int,
    rotations: bool,
) -> None:
    """Render the card of a composed model (``vision.train.ensemble``): each member's story.

    One model without rotations is installed as it was trained; its card says so.
    """
    members = " and ".join(_name(r) for r in reports)
    how = []
    if len(reports) > 1:
        how.append(f"the mean log-softmax of {len(reports)} separately trained models ({members})")
    if rotations:
        how.append(
            "each crop read four times, turned by 0, 90, 180 and 270 degrees, and the"
            " log-softmax averaged (a die's value cannot depend on how it lies)"
        )
    names = [chr(ord("A") + k) for k in range(len(reports))]
    intro = (
        "Its logits are " + "; and ".join(how) + ". Trained here on CPU and composed (the"
        " members' own sections follow):"
        if how
        else f"It is one {members}, trained here on CPU and installed as it is (its"
        " sections follow):"
    )
    lines = [
        "# dice_faces.onnx: the face classifier",
        "",
        "Reads the top face of one die from a square crop. " + intro,
        "",
        *_member_commands(reports),
        "    python -m vision.train.ensemble models/dice_faces.onnx \\",
        "        " + " ".join(f"{n}/dice_faces.onnx" for n in names) + " \\",
        "        --reports " + " ".join(f"{n}/report.json" for n in names) + " \\",
        "        --card models/MODEL_CARD.md --record tests/data/dice"
        + (" --rotations" if rotations else ""),
        "",
        f"- sha256: `{sha256}`",
        f"- size: {size_bytes} bytes,"
        f" {sum(int(r['parameters']) for r in reports)} parameters in all",
        *_CONTRACT,
        "- ONNX opset 17; each member's onnxruntime and torch logits agree to "
        + ", ".join(f"{r['onnx_max_abs_difference']:.1e}" for r in reports)
        + " (checked at export, limit 1e-4); the composition is checked against the members"
        " run one by one in tests/vision/test_train_ensemble.py.",
        "",
    ]
    for index, report in enumerate(reports, start=1):
        lines += [
            (
                f"## Member {index}: {_name(report)} (`--arch {_arch(report)}`, sha256 of its own"
                f" file `{report['sha256'][:16]}...`)"
                if how
                else f"## The model: {_name(report)} (`--arch {_arch(report)}`)"
            ),
            "",
            *_member_sections(report, level="###"),
        ]
    lines += _LIMITS
    _write(lines, path)


def _write(lines: list[str], path: Path) -> None:
    """Write the card, keeping the locator's and reading sections already in the file."""
    text = "\n".join(lines)
    if path.exists():
        old = path.read_text(encoding="utf-8")
        if LOCATOR_MARKER in old:
            text = text.rstrip("\n") + "\n\n" + LOCATOR_MARKER + old.split(LOCATOR_MARKER, 1)[1]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _left_out(config: dict[str, Any]) -> list[str]:
    """Say which sources training never saw, and that they are validated on every photo."""
    if not config.get("exclude"):
        return []
    return [
        f"Left out of training: {', '.join(config['exclude'])}. Validated on all its photos"
        " (dice and tables the model never saw)."
    ]


def _own_sources(counts: dict[str, Any]) -> list[str]:
    """Photo sources trained on beyond the public ones (``--source``, or put under ``--data``)."""
    public = {name for name, *_ in SOURCES}
    return sorted(
        name for name, entry in counts.items() if "train_photos" in entry and name not in public
    )


def _member_sections(report: dict[str, Any], *, level: str) -> list[str]:
    """Data, training and validation of one trained model, headed at ``level``."""
    config = report["config"]
    counts = report["counts"]
    metrics = report["metrics"]
    lines = [
        f"{level} Data",
        "",
        "| source | repository | licence | our split (train; validation) |",
        "|---|---|---|---|",
    ]
    lines += [f"| {name} | {repo} | {lic} | {split} |" for name, repo, lic, split in SOURCES]
    own = _own_sources(counts)
    lines += [
        f"| {name} | a table's own photos (`pipcam photos`; see its README.txt) | the table"
        " owner's | the export's own split, by whole games |"
        for name in own
    ]
    lines += [
        "| synthetic | rendered by `vision/train/synth.py` (ours) | MIT (this project) |"
        " fresh renders for each split |",
        "",
        "Photos with a `known_issue` are left out of training and validation; a die with a",
        "`suspect_value` is not used as a labelled example. matteop65's boxes cover only the top",
        "face or pip cluster: the whole die is found around each box by its colour against the",
        "local background (with a per-photo typical size as fallback), so every source follows the",
        "whole-die box convention the reader uses. " + _pretrained(config),
        *_left_out(config),
        "",
        "| source | train photos | train dice | val photos | val dice | skipped (known_issue) |",
        "|---|---|---|---|---|---|",
    ]
    for name in [name for name, *_ in SOURCES] + own:
        entry = counts.get(name, {})
        lines.append(
            f"| {name} | {entry.get('train_photos', 0)} | {entry.get('train_dice', 0)} | "
            f"{entry.get('val_photos', 0)} | {entry.get('val_dice', 0)} | "
            f"{entry.get('skipped_known_issue', 0)} |"
        )
    lines += [
        "",
        "Crops by class (0, 1..6): the whole training set (augmented copies, negatives and",
        "synthetic renders), then each validation set (one crop per die at its labelled box, plus",
        "class-0 crops cut the same way as for training):",
        "",
    ]
    for name, entry in counts.items():
        if "crops_by_class" in entry:
            lines.append(f"- {name}: {entry['crops_by_class']}")
    lines += [
        "",
        f"{level} Training",
        "",
        _architecture(config),
        f"- {config['epochs']} epochs, batch {config['batch_size']}, AdamW (lr"
        f" {config['learning_rate']}, one-cycle, weight decay {config['weight_decay']}), label"
        f" smoothing {config['label_smoothing']}, seed {config['seed']}, torch {report['torch']},"
        f" {report['machine']}.",
        f"- time: {report['data_seconds']} s cutting and rendering crops, {report['train_seconds']}"
        f" s training, {report['total_seconds']} s in all.",
        "- real crops: each training die is cut several times with its box moved by up to 8 % and",
        "  scaled by up to 15 %, the photo turned by a random angle and mirrored at random.",
        "- class 0 from photos: patches clear of every labelled die, dice shifted 60-90 % of their",
        "  side out of the crop, boxes around two neighbouring dice, dice blurred (sigma 7-12 px).",
        *_mining(config),
        f"- synthetic: {counts.get('synthetic', {}).get('train_crops', 0)} crops of 3D-rendered"
        " dice (random body and pip colours, pips set apart by brightness or by colour alone such"
        " as red on dark grey"
        + (
            f", or on {int(round(100 * config['faint']))} % of dice only faintly (pips dulled"
            " toward the body, as on smoke dice with dark red pips)"
            if config.get("faint")
            else ""
        )
        + f", {int(100 * DARK_SHARE)} % near-black bodies, marbled bodies on"
        f" {int(100 * MARBLE_SHARE)} % with veins of any colour but the pips',"
        + (
            f" bold light swirls across every face of {int(round(100 * config['arcs']))} % of"
            " dice (decorated sets),"
            if config.get("arcs")
            else ""
        )
        + (
            f" {int(round(100 * config['translucent']))} % of dice see-through (the pips"
            " underneath show through the top, blurred and shifted by the view),"
            if config.get("translucent")
            else ""
        ),
        "  pip size and spacing, rounded corners, a ring or swirl round the one's pip on"
        f" {int(100 * ONE_MARK_SHARE)} % of sets, a logo instead of the six on"
        f" {int(100 * LOGO_SHARE)} % of sets (families: {', '.join(_families(config))}), Lambert",
        f"  shading, a glossy highlight on the upturned face of {int(100 * GLOSS_SHARE)} % of dice,"
        " cast shadows, glare, wood/felt/cloth/noise tables",
        "  with clutter, camera tilt up to 30 degrees, perspective, scale jitter, rotation, blur,",
        "  motion blur, noise, JPEG quality 30-95). A render is labelled by geometry: the face",
        "  turned most to the camera if within 28 degrees of the view axis, class 0 (cocked) if no",
        "  face is within 40 degrees; in between is dropped. Synthetic class 0 also has half-out",
        "  dice, heavy blur, bare table, skin-coloured finger shapes and round things (coins,",
        "  knobs, counters) where no die is."
        + (
            f" On {_occluded_where(config)}, a die partly hidden"
            f" ({int(round(100 * config.get('occluded_least', 0.3)))}-65 % of its box under"
            " something lying over it, cut at the"
            " box of what shows) is class 0 too."
            if config.get("occluded") or config.get("occluded_photos")
            else ""
        ),
        "- on the fly: rot90 and mirror, channel shuffles per crop (dice come in every colour),"
        + (
            f" {int(round(100 * config['invert']))} % of crops as their negative (dark dice"
            " from light ones),"
            if config.get("invert")
            else ""
        )
        + (
            f" {int(round(100 * config['streaks']))} % of crops with a thin bright curve drawn"
            " across the die (a lamp reflected in a glossy die, not a pip),"
            if config.get("streaks")
            else ""
        )
        + (
            f" {int(round(100 * config['duotone']))} % of crops repainted in two random colours"
            " by their brightness (any pips on any body),"
            if config.get("duotone")
            else ""
        )
        + (
            f" {int(round(100 * config['hard_shadows']))} % of crops with a hard shadow's edge"
            " across the die (one side at 25-60 % of the light),"
            if config.get("hard_shadows")
            else ""
        ),
        "  gain, contrast, brightness, 10 % greyscale, Gaussian noise.",
        "",
        f"{level} Validation (never seen in training)",
        "",
        "Dice accuracy = labelled dice read with the right value; 'as 0' = dice called not",
        "readable; 'wrong value' = dice read as another value; class-0 accuracy = negatives as 0.",
        "",
        "| source | dice | dice accuracy | as 0 | wrong value | class-0 crops | class-0 accuracy |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, entry in metrics.items():
        dice = _percent(entry["dice_accuracy"]) if entry["dice"] else "-"
        lines.append(
            f"| {name} | {entry['dice']} | {dice} |"
            f" {entry['dice_as_zero']} | {entry['dice_wrong_value']} | {entry['negatives']} |"
            f" {_percent(entry['negative_accuracy']) if entry['negatives'] else '-'} |"
        )
    lines += [
        "",
        "These figures are per crop at the labelled box; per-photo recall, precision and exact",
        "rolls with the real locator come from `pipcam eval` (vision/evaluate.py).",
        "",
    ]
    return lines


_LIMITS = [
    "## Known limits",
    "",
    "- None of the photos is a Raspberry Pi camera over a tray; top-down views come only from",
    "  nell-byler and the renders. Expect lower accuracy on unseen tables, lighting and dice.",
    "  A table's own photos measure it where it is used: `pipcam run --keep-photos`, then",
    "  `pipcam photos OUT` (labelled with the players' corrections) for `pipcam eval OUT` and",
    "  `python -m vision.train --source OUT`.",
    "- Epanemu's photos are stretched to 640x640 and mostly oblique; tiny dice (10-20 px,",
    "  the Catan board photos) are hard at any crop size.",
    "- The line between readable (< 28 degrees) and cocked (> 40 degrees) is our choice,",
    "  made on renders; real cocked dice were not labelled in any source. A die the model calls",
    '  "no face" is reported `cocked` only when the die check (fitted on renders of leaning dice',
    "  and the phantoms of real photos) takes it for a die. A die that leans yet shows a face",
    "  the model reads is called `cocked` when the die check's leaning check of the faces",
    "  (fitted on 3D renders alone) takes it; of 360 leaning dice drawn by the trays probe's own",
    "  renderer (`vision.synthetic.leaning_beside_two_flat`, seeds 100-159, 300-399 and",
    "  1000-1199), 24 are still given a value (50 without that check; models/EXPERIMENTS.md,",
    '  "Leaning dice read as a face, checked").',
    "- Dice with symbols other than pips (and logos on faces other than the six) are not",
    "  modelled; a logo six is learned from renders and the few nell-byler examples. The row",
    f"  'unseen logos' is sixes whose logos are of families training never draws"
    f" ({', '.join(HELD_OUT_LOGOS)}): how the model meets a logo it does not know.",
    "- On dice sets training never saw, an unsure six is often another face (a ringed one, a",
    "  three crossed by a swirl): six is what the model learnt for a logo. Of the sixes a CNN",
    "  trained without nell-byler read there under 0.9, 27 of 52 were right, against 100 of 116",
    '  other values ("Dice never seen, read as six" in models/EXPERIMENTS.md).',
    "- The crop must follow the whole-die box convention; boxes around the top face only make",
    "  the die look bigger than in training.",
    "- A die partly under something lying in the tray (a card, a cup) can be read as the face its",
    "  visible part looks like: the die check asks about most such dice, but 3 of 192, 30-60 %",
    "  covered, in the synthetic probe `python -m vision.train.hidden` are still read wrong (9",
    '  with the linear check shipped before, 27 without it; "Dice partly hidden, asked about" and',
    '  "A partly-hidden check with a layer" in models/EXPERIMENTS.md); most dice 40-60 %',
    "  covered are not reported at all (102 of 144: most are never boxed; 106 before the check",
    "  of the boxes otherwise dropped read the crop's edges, 116 before that check: \"Dice more",
    '  hidden, asked about instead of dropped" and "What the crop\'s edges say" in the same',
    "  file).",
    "- Shiny things with glints like pips can be read as a die: in the parts of the shared",
    "  photos where no die lies (`python -m vision.train.empty`: 2000 strips of real tables,",
    "  boards and keyboards), one pair of sunglasses was read as a one in two photos; keys and",
    '  a cable\'s plug were asked about ("Real tables with no die" in models/EXPERIMENTS.md).',
    "",
]
