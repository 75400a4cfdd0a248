"""The Blender photos' plans: faces, pips, dice apart; checked without Blender itself."""

from __future__ import annotations

import json
import math
import os
import sys
import types
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from vision.train import blender
from vision.train.blender import (
    BEVELS,
    FACE_NORMALS,
    FACE_UP,
    PIP_RADIUS,
    LogoPlan,
    die_rotation,
    euler_matrix,
    logo_outline,
    pip_centres,
    plan_photo,
    up_value,
)
from vision.train.synth import HELD_OUT_LOGOS


def test_opposite_faces_sum_to_seven() -> None:
    for value, normal in FACE_NORMALS.items():
        opposite = tuple(-c for c in normal)
        assert [v for v, n in FACE_NORMALS.items() if n == opposite] == [7 - value]


@pytest.mark.parametrize("value", range(1, 7))
def test_each_value_is_turned_up_whatever_the_yaw_and_a_small_tilt(value: int) -> None:
    assert up_value(euler_matrix(FACE_UP[value])) == value
    for yaw in np.linspace(0, 2 * math.pi, 7):
        rotation = euler_matrix((0.1, -0.1, float(yaw))) @ euler_matrix(FACE_UP[value])
        assert up_value(rotation) == value


def test_a_planned_die_shows_its_value() -> None:
    plan = plan_photo(np.random.default_rng(3))
    for die in plan.dice:
        assert up_value(die_rotation(die)) == die.value


def test_the_pips_are_dimples_inside_their_faces() -> None:
    """21 pips, each face's count on it, each sphere cutting its face and clear of the edges."""
    for scale in (0.8, 1.0, 1.15):
        centres = np.array(pip_centres(scale))
        assert len(centres) == 21
        radius = PIP_RADIUS * scale
        for value, normal in FACE_NORMALS.items():
            n = np.array(normal, float)
            on_face = centres[np.isclose(centres @ n, 0.5 + 0.6 * radius)]
            assert len(on_face) == value
            across = on_face - np.outer(on_face @ n, n)
            disc = math.sqrt(radius**2 - (0.6 * radius) ** 2)  # the dimple's rim on the face
            assert np.abs(across).max() + disc < 0.5 - BEVELS[1]  # inside the widest bevel
            if value > 1:  # no two dimples run into each other
                gaps = [
                    np.linalg.norm(a - b) for i, a in enumerate(across) for b in across[i + 1 :]
                ]
                assert min(gaps) > 2 * disc


def test_a_photo_plan_is_its_seed_and_keeps_its_dice_apart() -> None:
    assert plan_photo(np.random.default_rng(7)) == plan_photo(np.random.default_rng(7))
    assert plan_photo(np.random.default_rng(7)) != plan_photo(np.random.default_rng(8))
    values: Counter[int] = Counter()
    kinds: Counter[str] = Counter()
    for seed in range(60):
        plan = plan_photo(np.random.default_rng(seed))
        assert 3 <= len(plan.dice) <= 12
        for i, a in enumerate(plan.dice):
            for b in plan.dice[i + 1 :]:
                assert math.hypot(a.x - b.x, a.y - b.y) >= 1.5  # a die's diagonal is 1.41
        values.update(d.value for d in plan.dice)
        kinds.update(d.kind for d in plan.dice)
    assert sorted(values) == [1, 2, 3, 4, 5, 6]
    assert min(values.values()) > 0.1 * sum(values.values())
    assert set(kinds) == set(blender.KINDS)


def test_without_blender_it_says_how_to_get_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    try:
        import bpy  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("Blender is installed here")
    with pytest.raises(SystemExit) as raised:
        blender.main(["--out", str(tmp_path), "--photos", "1"])
    assert raised.value.code == 2
    assert "pip install bpy" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("hsv", "linear"),
    [
        ((0.0, 1.0, 1.0), (1.0, 0.0, 0.0)),
        ((1 / 3, 1.0, 1.0), (0.0, 1.0, 0.0)),
        ((2 / 3, 1.0, 0.5), (0.0, 0.0, 0.214)),  # sRGB 0.5 is linear 0.214
        ((0.7, 0.0, 0.5), (0.214, 0.214, 0.214)),
    ],
)
def test_colours_are_drawn_in_hsv_and_given_to_blender_linear(
    hsv: tuple[float, float, float], linear: tuple[float, float, float]
) -> None:
    assert blender._hsv(*hsv) == pytest.approx(linear, abs=1e-3)


def test_blenders_tile_reports_are_kept_off_standard_output(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Blender's C code prints every tile it renders; the progress bar is what the user sees."""
    with blender._quiet_stdout():
        os.write(1, b"Fra:1 Mem:11.57M | Rendered 1/4 Tiles\n")
    os.write(1, b"after\n")
    assert capfd.readouterr().out == "after\n"


def test_a_logo_six_has_no_pips_and_the_other_faces_keep_theirs() -> None:
    centres = np.array(pip_centres(1.0, six=False))
    assert len(centres) == 15
    assert not np.any(np.isclose(centres[:, 2], -(0.5 + 0.6 * PIP_RADIUS)))


def test_some_dice_have_a_logo_of_every_family_and_none_of_those_kept_for_measuring() -> None:
    logos = [
        die.logo
        for seed in range(80)
        for die in plan_photo(np.random.default_rng(seed)).dice
        if die.logo is not None
    ]
    dice = sum(len(plan_photo(np.random.default_rng(seed)).dice) for seed in range(80))
    assert abs(len(logos) / dice - blender.LOGO_SHARE) < 0.06
    assert {logo.family for logo in logos} == set(blender.LOGO_FAMILIES)
    assert not set(blender.LOGO_FAMILIES) & set(HELD_OUT_LOGOS)
    # The held-out "crossed" logo is a cross; no letter here draws one.
    assert not set("XxC+") & set("".join(logo.text for logo in logos))


@pytest.mark.parametrize("family", ["star", "polygon"])
@pytest.mark.parametrize("points", [3, 5, 8])
def test_a_star_or_polygon_logo_lies_on_the_flat_of_its_face(family: str, points: int) -> None:
    logo = LogoPlan(family=family, text="", points=points, size=0.7, turn=1.0)
    outline = np.array(logo_outline(logo))
    assert len(outline) == (2 * points if family == "star" else points)
    radii = np.hypot(outline[:, 0], outline[:, 1])
    assert np.abs(outline).max() < 0.5 - BEVELS[1]  # inside the widest bevel
    if family == "star":  # points out, notches in, in turn
        assert np.allclose(radii[::2], 0.35)
        assert np.all(radii[1::2] < 0.5 * radii[::2])
    else:
        assert np.allclose(radii, 0.35)


def test_run_again_it_carries_on_without_making_a_labelled_photo_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    made: list[str] = []

    def render(plan: blender.PhotoPlan, path: Path, **_: object) -> list[object]:
        made.append(path.name)
        return [{"value": plan.dice[0].value, "box": [1.0, 2.0, 30.0, 40.0]}]

    monkeypatch.setitem(sys.modules, "bpy", types.ModuleType("bpy"))  # no Blender needed here
    monkeypatch.setattr(blender, "render", render)
    assert blender.main(["--out", str(tmp_path), "--photos", "2", "--seed", "3"]) == 0
    assert blender.main(["--out", str(tmp_path), "--photos", "4", "--seed", "3"]) == 0
    assert made == [f"blender-3-{n:05d}.jpg" for n in (0, 1, 2, 3)]
    records = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text().splitlines()]
    assert [r["image"] for r in records] == [f"images/{name}" for name in made]
    assert {r["split"] for r in records} == {"train"}


def test_painted_pips_lie_on_their_faces_where_the_dimples_are() -> None:
    dimples, painted = np.array(pip_centres(1.0)), np.array(pip_centres(1.0, lift=0))
    assert np.allclose(np.abs(painted).max(axis=1), 0.5)
    assert np.allclose(np.sign(dimples), np.sign(painted))
    assert np.allclose(np.abs(dimples - painted).sum(axis=1), 0.6 * PIP_RADIUS)


def test_the_dice_are_sharp_and_soft_with_dimpled_and_painted_pips() -> None:
    dice = [d for seed in range(60) for d in plan_photo(np.random.default_rng(seed)).dice]
    bevels = np.array([d.bevel for d in dice])
    assert BEVELS[0] <= bevels.min() < BEVELS[0] + 0.01
    assert BEVELS[1] - 0.01 < bevels.max() <= BEVELS[1]
    assert abs(np.mean([d.flat_pips for d in dice]) - blender.FLAT_PIPS) < 0.06


@pytest.mark.parametrize("share", [0.0, 0.1, 0.6])
def test_the_logo_share_is_an_option(share: float) -> None:
    dice = [d for seed in range(60) for d in plan_photo(np.random.default_rng(seed), share).dice]
    assert abs(np.mean([d.logo is not None for d in dice]) - share) < 0.05


def test_the_command_draws_its_logo_share_and_refuses_one_out_of_range(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    logos: list[bool] = []

    def render(plan: blender.PhotoPlan, *_: object, **__: object) -> list[object]:
        logos.extend(d.logo is not None for d in plan.dice)
        return []

    monkeypatch.setitem(sys.modules, "bpy", types.ModuleType("bpy"))
    monkeypatch.setattr(blender, "render", render)
    assert blender.main(["--out", str(tmp_path), "--photos", "6", "--logo-share", "0"]) == 0
    assert len(logos) > 20
    assert not any(logos)
    with pytest.raises(SystemExit) as raised:
        blender.main(["--out", str(tmp_path / "b"), "--photos", "1", "--logo-share", "35"])
    assert raised.value.code == 2
    assert "--logo-share must be between 0 and 1, not 35.0" in capsys.readouterr().err
