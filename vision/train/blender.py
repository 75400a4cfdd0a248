"""Dice photographed in Blender: real 3D dice, path-traced, as a source folder for training.

``python -m vision.train.blender --out DIR [--photos N] [--seed S]`` writes ``DIR/images/*.jpg``
and ``DIR/labels.jsonl`` in the shared data format (whole-die boxes, split ``train``), for
``python -m vision.train --source DIR``. It needs Blender as a Python module (``pip install
bpy==4.5.15``, in an interpreter of its own: bpy pins its own numpy), and takes 2-5 s a photo on
two cores.

Why a renderer beside ``vision.synthetic``: that one paints faces flat, so what the dice that
the face model misreads have in common never appears in its renders: light passing through a
smoky body, the pips of the faces underneath showing through it, a glossy bevel catching a lamp,
the side faces' pips seen at a tilt. A path tracer gets those from the material, not from a rule.
About a third of the dice have a logo engraved on the six instead of its pips (letters, a ring, a
star or a polygon, in the pips' paint), as many real sets do; edges go from sharp (casino dice) to
soft, and a quarter of the dice have their pips painted on rather than dimpled.

The plan of every photo (dice, faces, colours, lights, camera) is drawn here from the seed
without Blender, so it is tested on its own; :func:`render` only builds it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tqdm import tqdm

from vision.labels import LABELS, read_labels

RGB = tuple[float, float, float]

# Standard dice: opposite faces sum to seven. The mesh carries 1 on +Z, 2 on +X, 3 on +Y.
FACE_NORMALS: dict[int, tuple[int, int, int]] = {
    1: (0, 0, 1),
    6: (0, 0, -1),
    2: (1, 0, 0),
    5: (-1, 0, 0),
    3: (0, 1, 0),
    4: (0, -1, 0),
}
# Euler XYZ angles (radians) that turn the face of each value to +Z before the die's yaw.
FACE_UP: dict[int, tuple[float, float, float]] = {
    1: (0.0, 0.0, 0.0),
    6: (math.pi, 0.0, 0.0),
    2: (0.0, -math.pi / 2, 0.0),
    5: (0.0, math.pi / 2, 0.0),
    3: (math.pi / 2, 0.0, 0.0),
    4: (-math.pi / 2, 0.0, 0.0),
}
PIP_RADIUS = 0.1  # of the die's side: a dimple 0.16 across
PIP_OFFSET = 0.26  # a pip's distance from the face's centre along each axis, of the die's side
BEVELS = (0.04, 0.13)  # the rounding of the edges, of the side: sharp casino dice to soft ones
FLAT_PIPS = 0.25  # share of dice whose pips are painted on, barely sunk, instead of dimpled
PIPS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0, 0),),
    2: ((-1, -1), (1, 1)),
    3: ((-1, -1), (0, 0), (1, 1)),
    4: ((-1, -1), (-1, 1), (1, -1), (1, 1)),
    5: ((-1, -1), (-1, 1), (0, 0), (1, -1), (1, 1)),
    6: ((-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)),
}
KINDS = ("solid", "marbled", "smoky", "two-tone")
LOGO_SHARE = 0.35
"""Share of dice whose six is a logo engraved in the face instead of six pips."""
# Not the families that vision.train.synth keeps out of training (skull, framed letter, crossed,
# crescent): those measure logos never seen, so no X, no C and no cross here either.
LOGO_FAMILIES = ("letters", "ring", "star", "polygon")
LOGO_LETTERS = "ABDEFGHKLMNPRSTVWZ&@$#%?"
LOGO_DEPTH = 0.03  # of the die's side: as deep as the logos pressed into real dice


@dataclass(frozen=True)
class LogoPlan:
    """The logo on a die's six: its family, its letters or points, size (of the side) and turn."""

    family: str
    text: str
    points: int
    size: float
    turn: float


@dataclass(frozen=True)
class DiePlan:
    """One die of a photo: where it lies, which face is up, and what it is made of."""

    value: int
    x: float
    y: float
    yaw: float
    tilt: tuple[float, float]  # small turns about X and Y (radians): a die on uneven felt
    kind: str
    body: RGB
    second: RGB  # the marbled or two-tone dice's other colour
    pips: RGB
    roughness: float
    pip_scale: float
    logo: LogoPlan | None = None  # engraved on the six instead of its pips
    bevel: float = 0.1
    flat_pips: bool = False


@dataclass(frozen=True)
class PhotoPlan:
    """One photo: its dice, the tray, the lights and the camera."""

    dice: tuple[DiePlan, ...]
    tray: RGB
    sun: tuple[float, float, float]  # strength, elevation, azimuth
    lamp: tuple[float, float, float, float]  # strength, x, y, height
    ambient: float
    height: float  # the camera's, in die sides
    lens: float  # millimetres on a 36 mm sensor
    camera_tilt: float
    quality: int


def _hsv(hue: float, sat: float, val: float) -> RGB:
    """Linear RGB from HSV, so a drawn colour is what Blender's material gets."""
    k = np.array([5.0, 3.0, 1.0])
    rgb = val - val * sat * np.clip(np.minimum((k + hue * 6) % 6, 4 - (k + hue * 6) % 6), 0, 1)
    srgb = np.clip(rgb, 0.0, 1.0)
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    return (float(linear[0]), float(linear[1]), float(linear[2]))


def _colours(rng: np.random.Generator, kind: str) -> tuple[RGB, RGB, RGB]:
    """Body, second and pip colours: mostly ordinary sets, many of the hard ones."""
    hue = float(rng.random())
    if kind == "smoky":
        body = _hsv(hue, float(rng.uniform(0.0, 0.6)), float(rng.uniform(0.15, 0.7)))
    elif rng.random() < 0.3:
        body = _hsv(hue, float(rng.uniform(0.0, 0.15)), float(rng.uniform(0.75, 0.97)))  # ivory
    else:
        body = _hsv(hue, float(rng.uniform(0.2, 1.0)), float(rng.uniform(0.05, 0.9)))
    if kind == "marbled" and rng.random() < 0.6:  # white or silver swirls
        second = _hsv(hue, float(rng.uniform(0.0, 0.1)), float(rng.uniform(0.7, 1.0)))
    else:
        second = _hsv(float(rng.random()), float(rng.uniform(0, 1)), float(rng.uniform(0, 1)))
    brightness = float(np.mean(body))
    choice = rng.random()
    if choice < 0.35:  # red or gold pips, on any body: the sets read wrong most often
        pips = _hsv(float(rng.choice([0.0, 0.02, 0.12])), 0.9, float(rng.uniform(0.5, 0.95)))
    elif brightness > 0.25:
        pips = _hsv(hue, float(rng.uniform(0, 0.3)), float(rng.uniform(0.0, 0.15)))
    else:
        pips = _hsv(hue, float(rng.uniform(0, 0.2)), float(rng.uniform(0.8, 1.0)))
    return body, second, pips


def plan_photo(rng: np.random.Generator, logo_share: float = LOGO_SHARE) -> PhotoPlan:
    """Draw one photo: 3-12 dice apart inside the camera's view, ``logo_share`` with a logo six."""
    lens = float(rng.uniform(28, 60))
    side_px = float(rng.uniform(28, 90))  # a die's side in a 640-px-wide photo
    view = 640 / side_px  # die sides across the photo
    height = view * lens / 36
    count = int(rng.integers(3, 13))
    dice: list[DiePlan] = []
    half_w, half_h = view * 0.42, view * 0.42 * 0.75
    tries = 0
    while len(dice) < count and tries < 500:
        tries += 1
        x, y = float(rng.uniform(-half_w, half_w)), float(rng.uniform(-half_h, half_h))
        if any(math.hypot(x - d.x, y - d.y) < 1.5 for d in dice):
            continue
        kind = str(rng.choice(KINDS, p=[0.35, 0.25, 0.25, 0.15]))
        body, second, pips = _colours(rng, kind)
        logo = _logo(rng) if rng.random() < logo_share else None
        dice.append(
            DiePlan(
                value=int(rng.integers(1, 7)),
                x=x,
                y=y,
                yaw=float(rng.uniform(0, 2 * math.pi)),
                tilt=(float(rng.normal(0, 0.04)), float(rng.normal(0, 0.04))),
                kind=kind,
                body=body,
                second=second,
                pips=pips,
                roughness=float(rng.uniform(0.05, 0.5)),
                pip_scale=float(rng.uniform(0.8, 1.15)),
                logo=logo,
                bevel=float(rng.uniform(*BEVELS)),
                flat_pips=bool(rng.random() < FLAT_PIPS),
            )
        )
    return PhotoPlan(
        dice=tuple(dice),
        tray=_hsv(float(rng.random()), float(rng.uniform(0, 0.8)), float(rng.uniform(0.05, 0.8))),
        sun=(
            float(rng.uniform(0.5, 5.0)),
            float(rng.uniform(0.5, 1.5)),
            float(rng.uniform(0, 2 * math.pi)),
        ),
        lamp=(
            float(rng.uniform(0, 800)) * height**2 / 100,
            float(rng.uniform(-1, 1)) * view,
            float(rng.uniform(-1, 1)) * view,
            float(rng.uniform(0.3, 1.0)) * height,
        ),
        ambient=float(rng.uniform(0.1, 1.0)),
        height=height,
        lens=lens,
        camera_tilt=float(rng.uniform(0, 0.25)),
        quality=int(rng.integers(75, 96)),
    )


def _logo(rng: np.random.Generator) -> LogoPlan:
    family = str(rng.choice(LOGO_FAMILIES))
    letters = int(rng.integers(1, 4))
    return LogoPlan(
        family=family,
        text="".join(str(c) for c in rng.choice(list(LOGO_LETTERS), size=letters)),
        points=int(rng.integers(5 if family == "star" else 3, 9)),
        size=float(rng.uniform(0.45, 0.7)),
        turn=float(rng.uniform(0, 2 * math.pi)),
    )


def logo_outline(logo: LogoPlan) -> list[tuple[float, float]]:
    """The outline of a star or polygon logo on its face, centred, as (x, y) of the side."""
    if logo.family == "star":
        corners = [
            (logo.size / 2 * (1.0 if k % 2 == 0 else 0.45), k * math.pi / logo.points)
            for k in range(2 * logo.points)
        ]
    else:
        corners = [(logo.size / 2, 2 * k * math.pi / logo.points) for k in range(logo.points)]
    return [(r * math.cos(a + logo.turn), r * math.sin(a + logo.turn)) for r, a in corners]


def up_value(rotation: npt.NDArray[np.float64]) -> int:
    """The value whose face a rotation matrix turns nearest to +Z (what the camera sees)."""
    ups = {v: float((rotation @ np.array(n, float))[2]) for v, n in FACE_NORMALS.items()}
    return max(ups, key=lambda v: ups[v])


def euler_matrix(angles: Sequence[float]) -> npt.NDArray[np.float64]:
    """Blender's XYZ Euler order as a matrix: X turned first, then Y, then Z."""
    ax, ay, az = angles
    rx = np.array([[1, 0, 0], [0, math.cos(ax), -math.sin(ax)], [0, math.sin(ax), math.cos(ax)]])
    ry = np.array([[math.cos(ay), 0, math.sin(ay)], [0, 1, 0], [-math.sin(ay), 0, math.cos(ay)]])
    rz = np.array([[math.cos(az), -math.sin(az), 0], [math.sin(az), math.cos(az), 0], [0, 0, 1]])
    return np.asarray(rz @ ry @ rx, np.float64)


def die_rotation(die: DiePlan) -> npt.NDArray[np.float64]:
    """The die's whole turn: its value's face up, then the small tilt, then its yaw."""
    tilt = euler_matrix((die.tilt[0], die.tilt[1], die.yaw))
    return np.asarray(tilt @ euler_matrix(FACE_UP[die.value]), np.float64)


def pip_centres(
    scale: float, *, six: bool = True, lift: float = 0.6
) -> list[tuple[float, float, float]]:
    """Every pip's centre on the unit die (side 1, centred at the origin), faces as FACE_NORMALS;
    without the six's when ``six`` is false (a logo is there). A dimple's sphere lies ``lift``
    of its radius above the face; a painted pip's disc (``lift`` 0) on it."""
    centres: list[tuple[float, float, float]] = []
    for value, normal in FACE_NORMALS.items():
        if value == 6 and not six:
            continue
        n = np.array(normal, float)
        # Two axes across the face, in a fixed order so a face's layout does not depend on luck.
        u = np.array([0.0, 1.0, 0.0]) if abs(n[0]) else np.array([1.0, 0.0, 0.0])
        w = np.cross(n, u)
        for a, b in PIPS[value]:
            # At the default lift of 0.6 of its radius above the face: a dimple 0.4 deep.
            centre = n * (0.5 + lift * PIP_RADIUS * scale) + (a * u + b * w) * PIP_OFFSET
            centres.append((float(centre[0]), float(centre[1]), float(centre[2])))
    return centres


def render(plan: PhotoPlan, path: Path, *, size: tuple[int, int], samples: int) -> list[Any]:
    """Build ``plan`` in Blender, render it to ``path`` (JPEG) and return its dice's labels."""
    import bpy  # Blender as a module: only this function needs it
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Matrix

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.use_denoising = True
    scene.cycles.max_bounces = 6
    scene.cycles.transmission_bounces = 6
    scene.cycles.caustics_reflective = False
    scene.cycles.caustics_refractive = False
    scene.render.resolution_x, scene.render.resolution_y = size
    scene.render.image_settings.file_format = "JPEG"
    scene.render.image_settings.quality = plan.quality
    scene.view_settings.view_transform = "Standard"

    def material(name: str, colour: RGB, **inputs: float) -> Any:
        made = bpy.data.materials.new(name)
        made.use_nodes = True
        bsdf = made.node_tree.nodes["Principled BSDF"]
        bsdf.inputs["Base Color"].default_value = (*colour, 1.0)
        for key, value in inputs.items():
            bsdf.inputs[key].default_value = value
        return made

    world = bpy.data.worlds.new("world")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Strength"].default_value = plan.ambient
    scene.world = world

    bpy.ops.mesh.primitive_plane_add(size=plan.height * 6)
    tray = bpy.context.object
    tray_material = material("tray", plan.tray, Roughness=0.9)
    _noise_colour(tray_material, plan.tray, _darker(plan.tray), scale=40.0, style="soft")
    tray.data.materials.append(tray_material)

    sun = bpy.data.lights.new("sun", "SUN")
    sun.energy = plan.sun[0]
    sun.angle = 0.05
    sun_object = bpy.data.objects.new("sun", sun)
    sun_object.rotation_euler = (math.pi / 2 - plan.sun[1], 0.0, plan.sun[2])
    scene.collection.objects.link(sun_object)
    lamp = bpy.data.lights.new("lamp", "AREA")
    lamp.energy, lamp.size = plan.lamp[0], plan.height * 0.3
    lamp_object = bpy.data.objects.new("lamp", lamp)
    lamp_object.location = plan.lamp[1:]
    scene.collection.objects.link(lamp_object)

    camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    camera.data.lens = plan.lens
    camera.location = (0.0, -math.sin(plan.camera_tilt) * plan.height, plan.height)
    camera.rotation_euler = (plan.camera_tilt, 0.0, 0.0)
    scene.collection.objects.link(camera)
    scene.camera = camera

    labels: list[Any] = []
    for index, die in enumerate(plan.dice):
        obj = _die_object(f"die{index}", die, material)
        rotation = die_rotation(die)
        lift = float(np.sum(np.abs(rotation[2])) * 0.5)  # its lowest corner on the tray
        obj.matrix_world = Matrix.Translation((die.x, die.y, lift)) @ Matrix(
            [[*row, 0.0] for row in rotation.tolist()] + [[0.0, 0.0, 0.0, 1.0]]
        )
        scene.view_layers[0].update()
        points = [
            world_to_camera_view(scene, camera, obj.matrix_world @ v.co) for v in obj.data.vertices
        ]
        xs = [p.x * size[0] for p in points]
        ys = [(1 - p.y) * size[1] for p in points]
        box = [min(xs), min(ys), max(xs), max(ys)]
        if box[0] < 0 or box[1] < 0 or box[2] > size[0] or box[3] > size[1]:
            bpy.data.objects.remove(obj)  # a die the frame cuts is not one to learn a face from
            continue
        labels.append({"value": die.value, "box": [round(c, 1) for c in box]})
    scene.render.filepath = str(path)
    with _quiet_stdout():  # Blender reports every tile on standard output
        bpy.ops.render.render(write_still=True)
    return labels


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Send file descriptor 1 (where Blender's C code prints) to /dev/null for a while."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _darker(colour: RGB) -> RGB:
    return (colour[0] * 0.6, colour[1] * 0.6, colour[2] * 0.6)


def _noise_colour(made: Any, first: RGB, second: RGB, *, scale: float, style: str) -> None:
    """Feed the material's base colour from a noise texture between two colours.

    ``style``: ``soft`` blends them, ``split`` cuts the body into patches of each (two-tone
    dice), ``veins`` draws thin swirls of the second colour through the first (marbled dice).
    """
    nodes, links = made.node_tree.nodes, made.node_tree.links
    noise = nodes.new("ShaderNodeTexNoise")
    noise.inputs["Scale"].default_value = scale
    noise.inputs["Detail"].default_value = 6.0
    ramp = nodes.new("ShaderNodeValToRGB")
    stops = {
        "soft": [(0.0, first), (1.0, second)],
        "split": [(0.48, first), (0.52, second)],
        "veins": [(0.46, first), (0.5, second), (0.54, first)],
    }[style]
    elements = ramp.color_ramp.elements
    for index, (position, colour) in enumerate(stops):
        element = elements[index] if index < 2 else elements.new(position)
        element.position, element.color = position, (*colour, 1.0)
    links.new(noise.outputs["Fac"], ramp.inputs["Fac"])
    links.new(ramp.outputs["Color"], nodes["Principled BSDF"].inputs["Base Color"])


def _die_object(name: str, die: DiePlan, material: Any) -> Any:
    """A bevelled unit cube with its pips (and the six's logo, if any) cut in, body and pip
    materials as the plan says."""
    import bpy

    bpy.ops.mesh.primitive_cube_add(size=1.0)
    obj = bpy.context.object
    obj.name = name
    bevel = obj.modifiers.new("bevel", "BEVEL")
    bevel.width, bevel.segments = die.bevel, 3
    bpy.ops.object.modifier_apply(modifier="bevel")
    body = material(f"{name}-body", die.body, Roughness=die.roughness)
    if die.kind == "smoky":
        body.node_tree.nodes["Principled BSDF"].inputs["Transmission Weight"].default_value = 1.0
    elif die.kind == "marbled":
        _noise_colour(body, die.body, die.second, scale=2.5, style="veins")
    elif die.kind == "two-tone":
        _noise_colour(body, die.body, die.second, scale=0.8, style="split")
    pips = material(f"{name}-pips", die.pips, Roughness=0.4)
    obj.data.materials.append(body)
    cutters = []
    radius = PIP_RADIUS * die.pip_scale
    for centre in pip_centres(
        die.pip_scale, six=die.logo is None, lift=0 if die.flat_pips else 0.6
    ):
        if die.flat_pips:  # a disc as wide as a dimple's rim, sunk as deep as paint
            axis = int(np.argmax(np.abs(centre)))
            turn = [(0.0, math.pi / 2, 0.0), (math.pi / 2, 0.0, 0.0), (0.0, 0.0, 0.0)][axis]
            bpy.ops.mesh.primitive_cylinder_add(
                radius=radius * 0.8, depth=0.02, location=centre, rotation=turn, vertices=24
            )
        else:
            bpy.ops.mesh.primitive_uv_sphere_add(
                radius=radius, location=centre, segments=16, ring_count=8
            )
        cutters.append(bpy.context.object)
    if die.logo is not None:
        cutters.append(_logo_cutter(die.logo))
    for cutter in cutters:
        cutter.data.materials.clear()
        cutter.data.materials.append(pips)
    bpy.ops.object.select_all(action="DESELECT")
    for cutter in cutters:
        cutter.select_set(state=True)
    bpy.context.view_layer.objects.active = cutters[0]
    bpy.ops.object.join()
    cutter = bpy.context.object
    cut = obj.modifiers.new("pips", "BOOLEAN")
    cut.operation, cut.object, cut.solver = "DIFFERENCE", cutter, "EXACT"
    cut.material_mode = "TRANSFER"
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.modifier_apply(modifier="pips")
    bpy.data.objects.remove(cutter)
    return obj


def _logo_cutter(logo: LogoPlan) -> Any:
    """A solid that engraves ``logo`` LOGO_DEPTH deep into the six's face (the -Z side)."""
    import bmesh
    import bpy

    face, depth = -0.5, LOGO_DEPTH
    if logo.family == "ring":
        bpy.ops.mesh.primitive_torus_add(
            major_radius=logo.size * 0.4,
            minor_radius=logo.size * 0.08,
            location=(0.0, 0.0, face),
            major_segments=32,
            minor_segments=8,
        )
        return bpy.context.object
    if logo.family == "letters":
        curve = bpy.data.curves.new("logo", "FONT")
        curve.body = logo.text
        curve.align_x, curve.align_y = "CENTER", "CENTER"
        curve.extrude = depth
        obj = bpy.data.objects.new("logo", curve)
        bpy.context.scene.collection.objects.link(obj)
        bpy.ops.object.select_all(action="DESELECT")
        obj.select_set(state=True)
        bpy.context.view_layer.objects.active = obj
        bpy.ops.object.convert(target="MESH")
        obj = bpy.context.object
        # A font's mesh comes as loose front, back and sides: welded, it is a solid the boolean
        # can cut with. Then fitted to the logo's size, turned, and mirrored (the face is seen
        # from below the die's own axes) onto the six.
        made = bmesh.new()
        made.from_mesh(obj.data)
        bmesh.ops.remove_doubles(made, verts=made.verts, dist=1e-5)
        xy = np.array([v.co[:2] for v in made.verts])
        middle = (xy.max(axis=0) + xy.min(axis=0)) / 2
        fit = logo.size / max(float(np.ptp(xy, axis=0).max()), 1e-6)
        cos, sin = math.cos(logo.turn), math.sin(logo.turn)
        for vertex in made.verts:
            x, y = (vertex.co.x - middle[0]) * fit, -(vertex.co.y - middle[1]) * fit
            vertex.co.x, vertex.co.y = cos * x - sin * y, sin * x + cos * y
            vertex.co.z += face
        _outward(made)
        made.to_mesh(obj.data)
        made.free()
        return obj
    outline = logo_outline(logo)
    count = len(outline)
    vertices = [(x, y, face - depth) for x, y in outline] + [
        (x, y, face + depth) for x, y in outline
    ]
    sides = [(k, (k + 1) % count, count + (k + 1) % count, count + k) for k in range(count)]
    # A star is not convex: a fan from a centre vertex on each end keeps its faces flat and whole.
    vertices += [(0.0, 0.0, face - depth), (0.0, 0.0, face + depth)]
    low, high = 2 * count, 2 * count + 1
    ends = [(low, (k + 1) % count, k) for k in range(count)]
    ends += [(high, count + k, count + (k + 1) % count) for k in range(count)]
    mesh = bpy.data.meshes.new("logo")
    mesh.from_pydata(vertices, [], sides + ends)
    made = bmesh.new()
    made.from_mesh(mesh)
    _outward(made)
    made.to_mesh(mesh)
    made.free()
    mesh.update()
    obj = bpy.data.objects.new("logo", mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def _outward(made: Any) -> None:
    """Turn a closed bmesh's faces outward, as the boolean needs: a solid whose faces look in
    is cut as everything but itself. (bmesh's own recalculation gets letters with holes wrong.)"""
    import bmesh

    bmesh.ops.recalc_face_normals(made, faces=made.faces)
    if made.calc_volume(signed=True) < 0:
        bmesh.ops.reverse_faces(made, faces=made.faces)


def main(argv: Sequence[str] | None = None) -> int:
    """Render ``--photos`` photos into ``--out`` as a source folder."""
    parser = argparse.ArgumentParser(prog="python -m vision.train.blender", description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="the source folder to write")
    parser.add_argument("--photos", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=10, help="Cycles samples a pixel")
    parser.add_argument(
        "--logo-share",
        type=float,
        default=LOGO_SHARE,
        help=f"share of dice with a logo instead of the six's pips (default {LOGO_SHARE})",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.logo_share <= 1:
        parser.error(f"--logo-share must be between 0 and 1, not {args.logo_share}")
    try:
        import bpy  # noqa: F401
    except ImportError:
        parser.error(
            "needs Blender as a Python module: run it with an interpreter that has bpy"
            " (python3.11 -m venv BV && BV/bin/pip install bpy==4.5.15)"
        )
    images = args.out / "images"
    images.mkdir(parents=True, exist_ok=True)
    labels_path = args.out / LABELS
    # Run again after a stop and it carries on: the photos labelled are not made again.
    done = {record["image"] for record in read_labels(args.out)} if labels_path.exists() else set()
    size = (640, 480)
    bar = tqdm(range(args.photos), desc="blender photos", unit="photo")
    for number in bar:
        name = f"images/blender-{args.seed}-{number:05d}.jpg"
        if name in done:
            continue
        rng = np.random.default_rng([args.seed, number])  # each photo its own: resumable
        plan = plan_photo(rng, args.logo_share)
        dice = render(plan, args.out / name, size=size, samples=args.samples)
        record = {
            "image": name,
            "width": size[0],
            "height": size[1],
            "split": "train",
            "dice": dice,
        }
        with labels_path.open("a") as out:
            out.write(json.dumps(record) + "\n")
        bar.set_postfix(dice=len(dice))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
