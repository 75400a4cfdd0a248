"""Synthetic dice renders made with numpy and OpenCV: data no camera of ours has seen.

Each die is a cube with six textured faces (body and pip colours, sometimes a logo on the six),
turned in 3D, lit, shadowed and projected onto a random table texture, then spoiled the way
cameras spoil pictures (blur, noise, glare, JPEG). The label of a crop follows the geometry: the
face turned most towards the camera if it is within ``READABLE_DEG`` of the view axis, class 0 if no
face is closer than ``COCKED_DEG`` (a die on its edge or corner), and renders in between are dropped
as ambiguous.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.preprocess import square_around
from vision.train.data import CropSet, FloatBox, UInt8Image, jitter_box, occlude, to_uint8

__all__ = [
    "COCKED_DEG",
    "DARK_SHARE",
    "GLOSS_SHARE",
    "READABLE_DEG",
    "RenderedDie",
    "Scene",
    "pip_positions",
    "pips_stand_out",
    "EXTRA_LOGO_FAMILIES",
    "HELD_OUT_LOGOS",
    "LOGO_FAMILIES",
    "LOGO_SHARE",
    "MARBLE_SHARE",
    "ONE_MARK_SHARE",
    "TEXTURE",
    "render_crops",
    "render_logo_sixes",
    "render_scene",
]

# Float work images and matrices: OpenCV hands back loosely typed arrays.
Array = npt.NDArray[Any]

READABLE_DEG = 28.0
LOGO_SHARE = 0.3
"""Share of rendered dice sets whose six is a logo (real sets often have one there)."""
MARBLE_SHARE = 0.45
"""Share of rendered dice with a second colour swirled through the body."""
DARK_SHARE = 0.2
"""Share of rendered dice bodies that are near black (among white, ivory and coloured ones)."""
ONE_MARK_SHARE = 0.2
"""Share of rendered dice sets whose one has a ring or swirl round its pip."""
GLOSS_SHARE = 0.35
"""Share of rendered dice that are glossy: a highlight shines on the upturned face."""
COCKED_DEG = 40.0
TEXTURE = 96

# Face normals of the unit cube and the value on each. Opposite faces sum to seven.
_NORMALS = np.array(
    [[0, 0, 1], [0, 0, -1], [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]], dtype=np.float64
)
_CORNERS = np.array(
    [[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64
)


def pip_positions(value: int, spread: float = 0.5) -> list[tuple[float, float]]:
    """Pip centres of a face in [-1, 1] face coordinates.

    >>> pip_positions(1)
    [(0.0, 0.0)]
    >>> len(pip_positions(6))
    6
    """
    s = spread
    layouts: dict[int, list[tuple[float, float]]] = {
        1: [(0.0, 0.0)],
        2: [(-s, -s), (s, s)],
        3: [(-s, -s), (0.0, 0.0), (s, s)],
        4: [(-s, -s), (s, -s), (-s, s), (s, s)],
        5: [(-s, -s), (s, -s), (0.0, 0.0), (-s, s), (s, s)],
        6: [(-s, -s), (-s, 0.0), (-s, s), (s, -s), (s, 0.0), (s, s)],
    }
    if value not in layouts:
        raise ValueError(f"a die face is 1..6, not {value!r}")
    return layouts[value]


@dataclass(frozen=True)
class DieStyle:
    """How one die looks: colours, pip size and spread, rounding, and whether the six is a logo."""

    body: tuple[float, float, float]
    pip: tuple[float, float, float]
    pip_radius: float
    spread: float
    rounding: float
    logo_six: bool
    one_pip_scale: float
    marble: tuple[float, float, float] | None = None
    """A second body colour swirled through the first (marbled dice), or None."""
    logo: str = ""
    """The family of the six's logo (one of ``LOGO_FAMILIES`` or ``HELD_OUT_LOGOS``), if any."""
    gloss: float = 0.0
    """Brightness of a specular highlight on the upturned face (0: a matte die)."""
    one_mark: tuple[float, float, float] | None = None
    """Colour of a ring or swirl drawn around the one's pip (real sets decorate it), or None."""
    faint: bool = False
    """Pips dulled toward the body (see :func:`random_style`): they need only stand out faintly."""
    arcs: tuple[float, float, float] | None = None
    """Colour of bold arcs swirled across every face under the pips (decorated sets), or None."""
    translucent: float = 0.0
    """How strongly the marks of the faces behind show through the body (0: an opaque die)."""


def _random_colour(rng: np.random.Generator) -> tuple[float, float, float]:
    """A die body colour in BGR: saturated hues, ivory, white, black, greys."""
    kind = rng.random()
    if kind < 0.25:
        tone = rng.uniform(200, 255)
        return (tone * rng.uniform(0.8, 0.95), tone * rng.uniform(0.9, 1.0), tone)
    if kind < 0.25 + DARK_SHARE:
        # Black, smoke and dark brown bodies: real sets pair them with red, white or gold pips.
        tone = rng.uniform(10, 70)
        return (tone * rng.uniform(0.8, 1.0), tone * rng.uniform(0.85, 1.0), tone)
    hsv = np.array(
        [[[rng.uniform(0, 180), rng.uniform(120, 255), rng.uniform(90, 245)]]], dtype=np.uint8
    )
    b, g, r = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0]
    return (float(b), float(g), float(r))


def _bgr(colour: Sequence[float] | Array) -> tuple[float, float, float]:
    """A colour as a plain BGR tuple of floats (what DieStyle and OpenCV's drawing take)."""
    return (float(colour[0]), float(colour[1]), float(colour[2]))


def _luma(colour: Sequence[float]) -> float:
    """Approximate brightness of a BGR colour."""
    return 0.114 * colour[0] + 0.587 * colour[1] + 0.299 * colour[2]


def _distance(a: Sequence[float], b: Sequence[float]) -> float:
    """Euclidean distance of two BGR colours."""
    return float(np.linalg.norm(np.subtract(a, b)))


FAINT_LEAST = 40.0
"""Least RGB distance of a faint die's pips from its body: below it a person squints too."""


def pips_stand_out(pip: Sequence[float], body: Sequence[float], *, faint: bool = False) -> bool:
    """True when pips of this colour can be told from this body, as on real dice.

    Brightness alone is not enough: red pips on a dark grey body (real sets have them) differ by
    less than 25 in luma but plainly in colour. A ``faint`` die (see :func:`random_style`) needs
    only a difference a person still sees, in colour or in brightness.

    >>> pips_stand_out((30, 30, 200), (50, 50, 50)), pips_stand_out((60, 60, 60), (50, 50, 50))
    (True, False)
    >>> dull_red, smoke = (40, 40, 110), (50, 50, 60)
    >>> pips_stand_out(dull_red, smoke), pips_stand_out(dull_red, smoke, faint=True)
    (False, True)
    """
    distance = _distance(pip, body)
    if faint:
        return distance > FAINT_LEAST
    luma = abs(_luma(pip) - _luma(body))
    return luma > 40 or (luma > 10 and distance > 120)


def random_style(
    rng: np.random.Generator,
    *,
    faint: float = 0.0,
    arcs: float = 0.0,
    more_logos: bool = False,
    translucent: float = 0.0,
) -> DieStyle:
    """Draw a die style whose pips contrast with its body, as real dice do.

    On a ``faint`` share of dice the pips are dulled toward the body, as on smoke dice with dark
    red pips or blue-black swirls with red ones: 20-30 luma and 40-60 RGB units from the body,
    which the ordinary pip colours never are. An ``arcs`` share of dice have bold light swirls
    across every face (decorated sets): a decoration to count the pips around, not a logo.
    With ``more_logos`` a logo six may also be one of ``EXTRA_LOGO_FAMILIES``. A ``translucent``
    share of dice are see-through (smoke, gem-like sets): the pips of the face underneath show
    through the top, shifted by the view through the die (see :func:`face_texture`).
    """
    body = _random_colour(rng)
    choices: list[tuple[float, float, float]] = [
        (20.0, 20.0, 20.0),
        (245.0, 245.0, 245.0),
        (30.0, 30.0, 200.0),
        (40.0, 200.0, 230.0),
        (200.0, 80.0, 30.0),
        (40.0, 150.0, 40.0),
        (60.0, 170.0, 210.0),  # gold
        (190.0, 190.0, 190.0),  # silver
        (170.0, 50.0, 120.0),  # purple
    ]
    # Drawn only when asked for, so renders without faint dice stay those of earlier recipes.
    dull = faint > 0 and bool(rng.random() < faint)
    for _ in range(10):
        pip = choices[int(rng.integers(len(choices)))]
        if dull:
            # Toward the body: worn paint, pips seen through smoky plastic.
            mixed = np.add(body, rng.uniform(0.25, 0.7) * np.subtract(pip, body))
            pip = _bgr(mixed)
        if pips_stand_out(pip, body, faint=dull):
            break
    else:
        pip = (20.0, 20.0, 20.0) if _luma(body) > 128 else (245.0, 245.0, 245.0)
    marble = None
    if rng.random() < MARBLE_SHARE:
        # A swirl of a nearby or of a contrasting tone (light veins through a dark body, as on
        # real marbled sets), but never of the pips' own colour, which would draw false pips.
        other = np.array(_random_colour(rng)) * rng.uniform(0.3, 1.0)
        if _distance(other.tolist(), pip) > 80:
            marble = _bgr(other)
    # Many real dice are glossy: a lamp's reflection on the top face is a bright soft spot
    # that a reader must not count as a pip.
    gloss = float(rng.uniform(60, 200)) if rng.random() < GLOSS_SHARE else 0.0
    one_mark = None
    if rng.random() < ONE_MARK_SHARE:
        # Printed in the pips' colour or in a light metallic one (silver swirls on dark sets).
        silver = (230.0, 230.0, 225.0)
        one_mark = silver if rng.random() < 0.5 and pips_stand_out(silver, body) else pip
    # Drawn only when asked for, like ``dull``.
    swirl = _arc_colour(body, pip, rng) if arcs > 0 and rng.random() < arcs else None
    # One draw either way, so renders without the extra logos stay those of earlier recipes.
    families = LOGO_FAMILIES + EXTRA_LOGO_FAMILIES if more_logos else LOGO_FAMILIES
    # Drawn only when asked for, like ``dull``.
    clear = translucent > 0 and bool(rng.random() < translucent)
    return DieStyle(
        body=body,
        pip=pip,
        pip_radius=float(rng.uniform(0.12, 0.19)),
        spread=float(rng.uniform(0.45, 0.56)),
        rounding=float(rng.uniform(0.05, 0.3)),
        logo_six=bool(rng.random() < LOGO_SHARE),
        one_pip_scale=float(rng.choice([1.0, 1.0, 1.0, 1.6, 2.0])),
        marble=marble,
        logo=families[int(rng.integers(len(families)))],
        gloss=gloss,
        one_mark=one_mark,
        faint=dull,
        arcs=swirl,
        translucent=float(rng.uniform(0.2, 0.6)) if clear else 0.0,
    )


def _arc_colour(
    body: tuple[float, float, float], pip: tuple[float, float, float], rng: np.random.Generator
) -> tuple[float, float, float] | None:
    """A light colour for decorative swirls: white or silver, or the body's own tone lifted.

    None when it would look like the pips (swirls of the pips' colour would draw false pips).
    """
    if rng.random() < 0.5:
        tone = rng.uniform(200, 250)
        colour = np.array([tone * rng.uniform(0.85, 1.0), tone * rng.uniform(0.9, 1.0), tone])
    else:
        colour = np.clip(np.array(body) * rng.uniform(1.8, 3.5) + rng.uniform(20, 80), 0, 255)
    if _distance(colour.tolist(), pip) < 80:
        return None
    return _bgr(colour)


def face_texture(
    value: int,
    style: DieStyle,
    rng: np.random.Generator,
    *,
    through: tuple[float, float] = (0.0, 0.0),
) -> UInt8Image:
    """Draw one face (TEXTURE x TEXTURE BGR): rounded body, pips or a logo for the six.

    On a translucent die (``style.translucent``) the marks of the faces behind show faintly
    under the pips; ``through`` is where the view through the die carries the opposite face's
    marks on this one, in half-sides along the texture's x and y (see :func:`_draw_die`).
    """
    size = TEXTURE
    body = np.array(style.body)
    edge = body * 0.55
    tex = np.empty((size, size, 3), np.float64)
    tex[:] = edge
    radius = int(style.rounding * size / 2)
    inset = 2
    cv2.rectangle(
        tex,
        (inset + radius, inset),
        (size - 1 - inset - radius, size - 1 - inset),
        style.body,
        -1,
        cv2.LINE_AA,
    )
    cv2.rectangle(
        tex,
        (inset, inset + radius),
        (size - 1 - inset, size - 1 - inset - radius),
        style.body,
        -1,
        cv2.LINE_AA,
    )
    for cx in (inset + radius, size - 1 - inset - radius):
        for cy in (inset + radius, size - 1 - inset - radius):
            cv2.circle(tex, (cx, cy), radius, style.body, -1, cv2.LINE_AA)
    # The face's own rounded square: the window a translucent die is seen through.
    window = np.all(np.abs(tex - body) < 1.0, axis=2) if style.translucent > 0 else None
    if style.marble is not None:
        _marble(tex, body, np.array(style.marble), rng)
    if style.arcs is not None:
        _arcs(tex, style.arcs, rng)
    if window is not None:
        _see_through(tex, value, style, rng, through, window)
    _marks(tex, value, style, rng)
    return np.clip(tex, 0, 255).astype(np.uint8)


def _marks(tex: Array, value: int, style: DieStyle, rng: np.random.Generator) -> None:
    """Paint a face's pips, or its logo if it is a logo six, onto ``tex``."""
    half = tex.shape[0] / 2
    if value == 6 and style.logo_six:
        _draw_logo(tex, style, rng, style.logo or None)
        return
    pip_r = style.pip_radius * half * (style.one_pip_scale if value == 1 else 1.0)
    for px, py in pip_positions(value, style.spread):
        centre = (int(round(half + px * half)), int(round(half + py * half)))
        cv2.circle(tex, centre, int(round(pip_r)), style.pip, -1, cv2.LINE_AA)
        # A darker rim reads as the pip's drilled hole.
        cv2.circle(tex, centre, int(round(pip_r)), tuple(float(c) * 0.6 for c in style.pip), 1)
    if value == 1 and style.one_mark is not None:
        _one_mark(tex, pip_r, style.one_mark, rng)


def _see_through(
    tex: Array,
    value: int,
    style: DieStyle,
    rng: np.random.Generator,
    through: tuple[float, float],
    window: npt.NDArray[np.bool_],
) -> None:
    """Show the marks of the faces behind a translucent face, blurred and faint, in ``window``.

    Through smoke and gem-like dice the pips underneath are plain to see: the five's centre pip
    under a two, the six's columns round a one. A reader that counts every dark spot reads
    those faces one pip high. The opposite face (``7 - value``) shows whole, shifted by
    ``through`` (less the bend of the light into the plastic) and a little smaller, being
    further away; half the time the four side faces show too, squeezed along the edges, as
    the view meets them at a slant.
    """
    size = tex.shape[0]
    body = np.array(style.body)

    def marks_of(face: int) -> Array:
        """A face's marks on a bare body of this die."""
        bare = np.empty_like(tex)
        bare[:] = body
        _marks(bare, face, style, rng)
        return bare

    behind = marks_of(7 - value)
    if rng.random() < 0.5:
        # Either turn of the pips of a two, three or six underneath: sets differ.
        behind = behind.transpose(1, 0, 2).copy()
    if rng.random() < 0.5:
        sides = [v for v in range(1, 7) if v not in (value, 7 - value)]
        band = max(int(size * rng.uniform(0.12, 0.25)), 2)
        for edge, side in enumerate(rng.permutation(sides)):
            mark = marks_of(int(side))
            strip = 0.6 * cv2.resize(mark - body, (size, band), interpolation=cv2.INTER_AREA)
            strip = np.rot90(strip, edge)  # along each of the four edges in turn
            if edge % 2 == 0:
                rows = slice(0, band) if edge == 0 else slice(size - band, size)
                behind[rows] += strip
            else:
                columns = slice(0, band) if edge == 1 else slice(size - band, size)
                behind[:, columns] += strip
    half = size / 2
    bend = rng.uniform(1.3, 1.7)
    shift = np.clip(np.array(through), -1.5, 1.5) * half / bend
    matrix = cv2.getRotationMatrix2D((half, half), 0.0, float(rng.uniform(0.8, 1.0)))
    matrix[:, 2] += shift
    ghost = cv2.warpAffine(behind - body, matrix, (size, size), borderMode=cv2.BORDER_CONSTANT)
    ghost = cv2.GaussianBlur(ghost, (0, 0), float(rng.uniform(1.5, 4.0))) * window[..., None]
    if rng.random() < 0.5:
        # Paint blocks the light from below: the marks behind show as shade, whatever colour.
        contrast = max(_distance(style.pip, style.body), 1.0) / np.sqrt(3)
        shade = np.clip(np.abs(ghost).mean(axis=2, keepdims=True) / contrast, 0.0, 1.0)
        tex -= style.translucent * shade * tex
    else:
        tex += style.translucent * ghost


def _one_mark(
    tex: Array, pip_r: float, colour: tuple[float, float, float], rng: np.random.Generator
) -> None:
    """A ring, or one or two swirling arcs, around the one's pip: still a one, not a logo."""
    size = tex.shape[0]
    centre = (size // 2, size // 2)
    thickness = int(rng.integers(1, 4))
    radius = max(pip_r * rng.uniform(1.5, 2.6), pip_r + thickness + 2)
    axes = (int(round(radius)), int(round(radius * rng.uniform(0.85, 1.0))))
    if rng.random() < 0.35:
        cv2.circle(tex, centre, axes[0], colour, thickness, cv2.LINE_AA)
        return
    start = rng.uniform(0, 360)
    for arc in range(int(rng.integers(1, 3))):
        span = rng.uniform(90, 250)
        begin = start + arc * 180
        cv2.ellipse(tex, centre, axes, 0, begin, begin + span, colour, thickness, cv2.LINE_AA)


def _arcs(tex: Array, colour: tuple[float, float, float], rng: np.random.Generator) -> None:
    """One to three bold arcs across the face, drawn before the pips so the pips stay on top."""
    size = tex.shape[0]
    for _ in range(int(rng.integers(1, 4))):
        centre = (int(rng.uniform(0.1, 0.9) * size), int(rng.uniform(0.1, 0.9) * size))
        axes = (int(rng.uniform(0.15, 0.6) * size), int(rng.uniform(0.1, 0.5) * size))
        start = rng.uniform(0, 360)
        end = start + rng.uniform(60, 220)
        thickness = int(rng.integers(2, 6))
        cv2.ellipse(
            tex, centre, axes, rng.uniform(0, 180), start, end, colour, thickness, cv2.LINE_AA
        )


def _marble(tex: Array, body: Array, other: Array, rng: np.random.Generator) -> None:
    """Swirl ``other`` through the body colour in thin veins (marbled, swirled dice)."""
    size = tex.shape[0]
    coarse = rng.normal(0, 1, (5, 5))
    field_ = cv2.resize(coarse, (size, size), interpolation=cv2.INTER_CUBIC)
    if rng.random() < 0.5:
        veins = np.abs(np.sin(field_ * rng.uniform(2.0, 5.0)))
        weight = np.clip(1.0 - veins / rng.uniform(0.25, 0.6), 0.0, 1.0)[..., None]
    else:
        # Soft clouds rather than veins.
        weight = (1.0 / (1.0 + np.exp(-field_ * rng.uniform(1.5, 4.0))))[..., None]
    is_body = np.all(np.abs(tex - body) < 1.0, axis=2)[..., None]
    tex[:] = np.where(is_body, body * (1 - weight) + other * weight, tex)


LOGO_FAMILIES = (
    "ring",
    "star",
    "letters",
    "blob",
    "polygon",
    "emblem",
    "shield",
    "rings",
    "badge",
)
"""The logos drawn on a six in training: each is a family of random shapes."""

EXTRA_LOGO_FAMILIES = ("sun", "heart", "crown", "spiral")
"""Logo families drawn in training only when asked for (``more_logos``): a sun with its rays,
a heart, a crown and a spiral, as on real sets; the spiral is a swirl with no pips round it."""

HELD_OUT_LOGOS = ("skull", "framed_letter", "crossed", "crescent")
"""Logo families never drawn in training: reading them measures logos the model has not seen."""

_FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
)


def _draw_logo(
    tex: Array, style: DieStyle, rng: np.random.Generator, family: str | None = None
) -> None:
    """Draw a random logo where the six's pips would be: a shape of one of ``LOGO_FAMILIES``.

    Real sets put anything there (a brand, a skull, a crest), so the families are broad and
    randomised; ``family`` picks one, including the ``HELD_OUT_LOGOS`` kept out of training.
    """
    size = tex.shape[0]
    centre = (size // 2, size // 2)
    if family is None:
        family = LOGO_FAMILIES[int(rng.integers(len(LOGO_FAMILIES)))]
    colour = style.pip
    if rng.random() < 0.25:
        # Some sets print the logo in another colour than the pips (gold, silver, red).
        colour = _random_colour(rng) if abs(_luma(style.body) - 128) < 60 else colour
        if abs(_luma(colour) - _luma(style.body)) < 40:
            colour = style.pip
    body = _bgr(style.body)
    _LOGOS[family](_Pen(tex, centre, size, colour, body, rng))


@dataclass(frozen=True)
class _Pen:
    """What a logo is drawn with: the face texture, its centre and size, colours, randomness."""

    tex: Array
    c: tuple[int, int]
    size: int
    colour: tuple[float, float, float]
    body: tuple[float, float, float]
    rng: np.random.Generator


def _text(
    tex: Array,
    centre: tuple[int, int],
    letters: str,
    height: float,
    colour: tuple[float, float, float],
    rng: np.random.Generator,
) -> None:
    """Letters in a random Hershey font, about ``height`` pixels tall, centred."""
    font = _FONTS[int(rng.integers(len(_FONTS)))]
    thickness = int(rng.integers(1, 4))
    (w, h), _ = cv2.getTextSize(letters, font, 1.0, thickness)
    scale = min(height / max(h, 1), tex.shape[0] * 0.8 / max(w, 1))
    (w, h), _ = cv2.getTextSize(letters, font, scale, thickness)
    origin = (centre[0] - w // 2, centre[1] + h // 2)
    cv2.putText(tex, letters, origin, font, scale, colour, thickness, cv2.LINE_AA)


def _random_letters(rng: np.random.Generator) -> str:
    return "".join(chr(int(rng.integers(65, 91))) for _ in range(int(rng.integers(1, 4))))


def _logo_ring(pen: _Pen) -> None:
    """A bold ring, empty or round a letter; never round a lone dot, which is a decorated one."""
    tex, c, size, colour, rng = pen.tex, pen.c, pen.size, pen.colour, pen.rng
    reach = int(size * rng.uniform(0.22, 0.34))
    cv2.circle(tex, c, reach, colour, int(size * 0.06) + 1, cv2.LINE_AA)
    if rng.random() < 0.6:
        _text(tex, c, _random_letters(rng)[:1], reach * 0.9, colour, rng)


def _logo_star(pen: _Pen) -> None:
    tex, c, size, colour, rng = pen.tex, pen.c, pen.size, pen.colour, pen.rng
    spikes = int(rng.integers(4, 9))
    outer, inner = size * rng.uniform(0.26, 0.38), size * rng.uniform(0.08, 0.18)
    turn = rng.uniform(0, np.pi)
    points = [
        (
            int(c[0] + (outer if k % 2 == 0 else inner) * np.cos(turn + np.pi * k / spikes)),
            int(c[1] + (outer if k % 2 == 0 else inner) * np.sin(turn + np.pi * k / spikes)),
        )
        for k in range(2 * spikes)
    ]
    cv2.fillPoly(tex, [np.array(points, np.int32)], colour, cv2.LINE_AA)


def _logo_letters(pen: _Pen) -> None:
    tex, c, size, colour, rng = pen.tex, pen.c, pen.size, pen.colour, pen.rng
    _text(tex, c, _random_letters(rng), size * rng.uniform(0.2, 0.45), colour, rng)


def _logo_blob(pen: _Pen) -> None:
    """Any shape at all: a smooth random field cut at a level, inside a disc."""
    tex, c, size, colour, rng = pen.tex, pen.c, pen.size, pen.colour, pen.rng
    coarse = rng.normal(0, 1, (int(rng.integers(3, 7)),) * 2)
    field_ = cv2.resize(coarse, (size, size), interpolation=cv2.INTER_CUBIC)
    yy, xx = np.mgrid[0:size, 0:size]
    reach = size * rng.uniform(0.25, 0.4)
    disc = np.hypot(xx - c[0], yy - c[1]) < reach
    shape = (field_ > rng.uniform(-0.5, 0.5)) & disc
    tex[shape] = colour


def _logo_polygon(pen: _Pen) -> None:
    tex, c, size, colour, rng = pen.tex, pen.c, pen.size, pen.colour, pen.rng
    count = int(rng.integers(3, 9))
    angles = np.sort(rng.uniform(0, 2 * np.pi, count))
    radii = size * rng.uniform(0.15, 0.38, count)
    points = np.stack([c[0] + radii * np.cos(angles), c[1] + radii * np.sin(angles)], 1)
    if rng.random() < 0.5:
        cv2.fillPoly(tex, [points.astype(np.int32)], colour, cv2.LINE_AA)
    else:
        closed = True  # a keyword, as OpenCV's stubs name it
        cv2.polylines(tex, [points.astype(np.int32)], closed, colour, int(size * 0.05) + 1, 16)


def _logo_emblem(pen: _Pen) -> None:
    """Two to five of the other shapes, smaller, around the middle."""
    tex, c, size, colour, rng = pen.tex, pen.c, pen.size, pen.colour, pen.rng
    for _ in range(int(rng.integers(2, 6))):
        sub = (
            int(c[0] + rng.uniform(-0.18, 0.18) * size),
            int(c[1] + rng.uniform(-0.18, 0.18) * size),
        )
        kind = int(rng.integers(4))
        if kind == 0:
            cv2.circle(tex, sub, int(size * rng.uniform(0.04, 0.15)), colour, -1, cv2.LINE_AA)
        elif kind == 1:
            half = int(size * rng.uniform(0.04, 0.14))
            cv2.rectangle(tex, (sub[0] - half, sub[1] - half), (sub[0] + half, sub[1] + half),
                          colour, -1)  # fmt: skip
        elif kind == 2:
            end = (int(sub[0] + rng.uniform(-0.3, 0.3) * size),
                   int(sub[1] + rng.uniform(-0.3, 0.3) * size))  # fmt: skip
            cv2.line(tex, sub, end, colour, int(size * rng.uniform(0.02, 0.07)) + 1, 16)
        else:
            _text(tex, sub, _random_letters(rng)[:1], size * 0.2, colour, rng)


def _logo_shield(pen: _Pen) -> None:
    tex, c, size, colour, body, rng = pen.tex, pen.c, pen.size, pen.colour, pen.body, pen.rng
    w, h = size * rng.uniform(0.22, 0.32), size * rng.uniform(0.28, 0.38)
    points = np.array(
        [
            (c[0] - w, c[1] - h),
            (c[0] + w, c[1] - h),
            (c[0] + w, c[1] + 0.2 * h),
            (c[0], c[1] + h),
            (c[0] - w, c[1] + 0.2 * h),
        ],
        np.int32,
    )
    cv2.fillPoly(tex, [points], colour, cv2.LINE_AA)
    if rng.random() < 0.6:
        _text(tex, c, _random_letters(rng)[:1], size * 0.22, body, rng)


def _logo_rings(pen: _Pen) -> None:
    tex, c, size, colour, rng = pen.tex, pen.c, pen.size, pen.colour, pen.rng
    rings = int(rng.integers(2, 4))
    for k in range(rings):
        radius = int(size * (0.36 - 0.1 * k) * rng.uniform(0.85, 1.05))
        cv2.circle(tex, c, max(radius, 2), colour, int(size * 0.035) + 1, cv2.LINE_AA)


def _logo_badge(pen: _Pen) -> None:
    """A filled disc or square with letters cut out of it in the body's colour."""
    tex, c, size, colour, body, rng = pen.tex, pen.c, pen.size, pen.colour, pen.body, pen.rng
    reach = int(size * rng.uniform(0.26, 0.36))
    if rng.random() < 0.5:
        cv2.circle(tex, c, reach, colour, -1, cv2.LINE_AA)
    else:
        cv2.rectangle(tex, (c[0] - reach, c[1] - reach), (c[0] + reach, c[1] + reach), colour, -1)
    _text(tex, c, _random_letters(rng), reach * 0.9, body, rng)


def _logo_skull(pen: _Pen) -> None:
    tex, c, size, colour, body = pen.tex, pen.c, pen.size, pen.colour, pen.body
    cv2.circle(tex, c, int(size * 0.28), colour, -1, cv2.LINE_AA)
    for dx in (-1, 1):
        eye = (c[0] + dx * int(size * 0.1), c[1] - int(size * 0.03))
        cv2.circle(tex, eye, int(size * 0.07), body, -1, cv2.LINE_AA)
    jaw = (c[0] - int(size * 0.12), c[1] + int(size * 0.2))
    cv2.rectangle(tex, jaw, (c[0] + int(size * 0.12), c[1] + int(size * 0.34)), colour, -1)


def _logo_framed_letter(pen: _Pen) -> None:
    tex, c, size, colour, rng = pen.tex, pen.c, pen.size, pen.colour, pen.rng
    half = int(size * 0.3)
    cv2.rectangle(tex, (c[0] - half, c[1] - half), (c[0] + half, c[1] + half), colour,
                  int(size * 0.05) + 1, cv2.LINE_AA)  # fmt: skip
    _text(tex, c, _random_letters(rng)[:1], size * 0.3, colour, rng)


def _logo_crossed(pen: _Pen) -> None:
    tex, c, size, colour = pen.tex, pen.c, pen.size, pen.colour
    reach, thick = int(size * 0.3), int(size * 0.07) + 1
    cv2.line(tex, (c[0] - reach, c[1] - reach), (c[0] + reach, c[1] + reach), colour, thick, 16)
    cv2.line(tex, (c[0] - reach, c[1] + reach), (c[0] + reach, c[1] - reach), colour, thick, 16)


def _logo_crescent(pen: _Pen) -> None:
    tex, c, size, colour, body = pen.tex, pen.c, pen.size, pen.colour, pen.body
    cv2.circle(tex, c, int(size * 0.3), colour, -1, cv2.LINE_AA)
    bite = (c[0] + int(size * 0.12), c[1] - int(size * 0.05))
    cv2.circle(tex, bite, int(size * 0.25), body, -1, cv2.LINE_AA)


def _logo_sun(pen: _Pen) -> None:
    """A disc, filled or a ring, with six to sixteen rays."""
    tex, c, size, colour, rng = pen.tex, pen.c, pen.size, pen.colour, pen.rng
    disc = size * rng.uniform(0.1, 0.17)
    fill = -1 if rng.random() < 0.7 else int(size * 0.04) + 1
    cv2.circle(tex, c, int(disc), colour, fill, cv2.LINE_AA)
    rays = int(rng.integers(6, 17))
    turn = rng.uniform(0, np.pi)
    outer = size * rng.uniform(0.27, 0.38)
    thickness = int(size * rng.uniform(0.015, 0.045)) + 1
    for k in range(rays):
        angle = turn + 2 * np.pi * k / rays
        inner = (int(c[0] + disc * 1.3 * np.cos(angle)), int(c[1] + disc * 1.3 * np.sin(angle)))
        tip = (int(c[0] + outer * np.cos(angle)), int(c[1] + outer * np.sin(angle)))
        cv2.line(tex, inner, tip, colour, thickness, cv2.LINE_AA)


def _logo_heart(pen: _Pen) -> None:
    tex, c, size, colour, rng = pen.tex, pen.c, pen.size, pen.colour, pen.rng
    reach = size * rng.uniform(0.25, 0.36)
    t = np.linspace(0, 2 * np.pi, 60)
    x = 16 * np.sin(t) ** 3
    y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
    points = np.stack([c[0] + x / 17 * reach, c[1] + y / 17 * reach], 1).astype(np.int32)
    if rng.random() < 0.7:
        cv2.fillPoly(tex, [points], colour, cv2.LINE_AA)
    else:
        closed = True  # a keyword, as OpenCV's stubs name it
        cv2.polylines(tex, [points], closed, colour, int(size * 0.05) + 1, cv2.LINE_AA)


def _logo_crown(pen: _Pen) -> None:
    """A band with three to five points, the dips between them at random depths."""
    tex, c, size, colour, rng = pen.tex, pen.c, pen.size, pen.colour, pen.rng
    w, h = size * rng.uniform(0.25, 0.36), size * rng.uniform(0.2, 0.3)
    spikes = int(rng.integers(3, 6))
    top = [
        (
            c[0] - w + 2 * w * k / (2 * spikes - 2),
            c[1] - h if k % 2 == 0 else c[1] - h * rng.uniform(0.0, 0.4),
        )
        for k in range(2 * spikes - 1)
    ]
    points = np.array([(c[0] - w, c[1] + h), *top, (c[0] + w, c[1] + h)], np.int32)
    cv2.fillPoly(tex, [points], colour, cv2.LINE_AA)


def _logo_spiral(pen: _Pen) -> None:
    """One to three arms wound round the middle: a swirl with no pips, so a six."""
    tex, c, size, colour, rng = pen.tex, pen.c, pen.size, pen.colour, pen.rng
    arms = int(rng.integers(1, 4))
    turns = rng.uniform(0.8, 2.0)
    outer = size * rng.uniform(0.25, 0.38)
    thickness = int(size * rng.uniform(0.03, 0.07)) + 1
    turn = rng.uniform(0, 2 * np.pi)
    sense = float(rng.choice([-1.0, 1.0]))
    t = np.linspace(0, 1, 80)
    reach = outer * (0.1 + 0.9 * t) if arms == 1 else outer * t
    closed = False
    for arm in range(arms):
        angle = turn + 2 * np.pi * arm / arms + sense * 2 * np.pi * turns * t
        points = np.stack([c[0] + reach * np.cos(angle), c[1] + reach * np.sin(angle)], 1)
        cv2.polylines(tex, [points.astype(np.int32)], closed, colour, thickness, cv2.LINE_AA)


_LOGOS = {
    "ring": _logo_ring,
    "star": _logo_star,
    "letters": _logo_letters,
    "blob": _logo_blob,
    "polygon": _logo_polygon,
    "emblem": _logo_emblem,
    "shield": _logo_shield,
    "rings": _logo_rings,
    "badge": _logo_badge,
    "skull": _logo_skull,
    "framed_letter": _logo_framed_letter,
    "crossed": _logo_crossed,
    "crescent": _logo_crescent,
    "sun": _logo_sun,
    "heart": _logo_heart,
    "crown": _logo_crown,
    "spiral": _logo_spiral,
}


def _rotation(axis: Array, angle: float) -> Array:
    """Rotation matrix about a unit axis (Rodrigues)."""
    axis = axis / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    rotation: Array = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)
    return rotation


def _face_values(top: int, rng: np.random.Generator) -> list[int]:
    """Values on the faces in _NORMALS order (+z, -z, +x, -x, +y, -y) with ``top`` on +z."""
    sides = [v for v in range(1, 7) if v not in (top, 7 - top)]
    first = sides[int(rng.integers(4))]
    second = next(v for v in sides if v not in (first, 7 - first))
    if rng.random() < 0.5:
        second = 7 - second
    return [top, 7 - top, first, 7 - first, second, 7 - second]


@dataclass(frozen=True)
class RenderedDie:
    """A die drawn in a scene: its box, the label the geometry gives it, and its angle."""

    box: FloatBox
    label: int | None
    angle_deg: float


@dataclass(frozen=True)
class Scene:
    """A rendered BGR image and the dice in it."""

    image: UInt8Image
    dice: tuple[RenderedDie, ...]


def _background(size: tuple[int, int], rng: np.random.Generator) -> Array:
    """A random table: flat, gradient, wood grain, felt noise or cloth weave."""
    height, width = size
    base = np.array(_random_colour(rng)) * rng.uniform(0.4, 1.0)
    if rng.random() < 0.3:
        base = np.full(3, rng.uniform(40, 230))
    img = np.empty((height, width, 3), np.float64)
    img[:] = base
    kind = int(rng.integers(5))
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float64)
    if kind == 1:
        angle = rng.uniform(0, 2 * np.pi)
        ramp = (np.cos(angle) * xx + np.sin(angle) * yy) / max(height, width)
        img *= (1 + rng.uniform(-0.4, 0.4) * ramp)[..., None]
    elif kind == 2:
        angle = rng.uniform(0, np.pi)
        u = np.cos(angle) * xx + np.sin(angle) * yy
        v = -np.sin(angle) * xx + np.cos(angle) * yy
        freq = rng.uniform(0.05, 0.3)
        grain = np.sin(u * freq + 3 * np.sin(v * rng.uniform(0.005, 0.03)))
        img *= (1 + rng.uniform(0.05, 0.2) * grain)[..., None]
    elif kind == 3:
        noise: Array = cv2.GaussianBlur(
            rng.normal(0, 1, (height, width)), (0, 0), rng.uniform(0.8, 3)
        )
        img *= (1 + rng.uniform(0.05, 0.25) * noise / max(noise.std(), 1e-6))[..., None]
    elif kind == 4:
        period = rng.uniform(3, 10)
        weave = np.sin(xx * 2 * np.pi / period) * np.sin(yy * 2 * np.pi / period)
        img *= (1 + rng.uniform(0.03, 0.12) * weave)[..., None]
    if rng.random() < 0.3:
        # Clutter: a stripe or blob of another colour (tray rim, paper, cable).
        colour = np.array(_random_colour(rng))
        p1 = (int(rng.integers(width)), int(rng.integers(height)))
        p2 = (int(rng.integers(width)), int(rng.integers(height)))
        cv2.line(img, p1, p2, colour.tolist(), int(rng.integers(3, max(width // 6, 4))))
    return img


def _tray_rim(canvas: Array, rng: np.random.Generator) -> None:
    """Draw a tray's wall along part of the picture: a band of another colour, a dark seam."""
    height, width = canvas.shape[:2]
    colour = np.array(_random_colour(rng)) * rng.uniform(0.3, 1.0)
    inset = (rng.uniform(-0.2, 0.35, 4) * np.array([width, height, width, height])).astype(int)
    inner = (inset[0], inset[1], width - 1 - inset[2], height - 1 - inset[3])
    thickness = int(rng.uniform(0.04, 0.15) * max(height, width)) + 1
    outer = np.ones((height, width), np.float32)
    cv2.rectangle(outer, inner[:2], inner[2:], 0.0, -1)
    wall = cv2.dilate(1 - outer, np.ones((3, 3), np.uint8), iterations=thickness // 2) - (1 - outer)
    # The tray's floor is what lies inside; outside the wall is the table, in a darker tone.
    outside = outer * (1 - wall)
    canvas *= (1 - outside * rng.uniform(0.2, 0.7))[..., None]
    canvas[:] = canvas * (1 - wall[..., None]) + colour * wall[..., None]
    seam = cv2.GaussianBlur(wall, (0, 0), max(thickness / 6, 1.0)) * (1 - wall)
    canvas *= (1 - rng.uniform(0.2, 0.6) * seam)[..., None]


def _project(points: Array, focal: float, distance: float) -> Array:
    """Perspective projection of camera-frame points (z towards the camera) to the image plane."""
    depth = distance - points[:, 2]
    return points[:, :2] * (focal / depth)[:, None]


def _draw_die(
    canvas: Array,
    shadow: Array,
    *,
    centre: tuple[float, float],
    half: float,
    rotation: Array,
    values: list[int],
    style: DieStyle,
    light: Array,
    rng: np.random.Generator,
) -> FloatBox:
    """Draw one die into ``canvas`` (and its footprint into ``shadow``); return its box."""
    distance = 12.0
    focal = half * distance
    corners_cam = _CORNERS @ rotation.T
    projected = _project(corners_cam, focal, distance)
    # Image y grows downwards.
    projected[:, 1] *= -1
    projected += np.array(centre)
    hull = cv2.convexHull(projected.astype(np.float32))
    cv2.fillConvexPoly(shadow, np.round(hull).astype(np.int32), 1.0, cv2.LINE_AA)
    normals_cam = _NORMALS @ rotation.T
    order = np.argsort(normals_cam[:, 2])
    tex_corners = np.array(
        [[0, 0], [TEXTURE - 1, 0], [TEXTURE - 1, TEXTURE - 1], [0, TEXTURE - 1]], np.float32
    )
    for index in order:
        normal = normals_cam[index]
        if normal[2] <= 0.02:
            continue
        quad_local = _face_quad(_NORMALS[index])
        quad = _project(quad_local @ rotation.T, focal, distance)
        quad[:, 1] *= -1
        quad += np.array(centre)
        through = _view_through(_NORMALS[index], rotation) if style.translucent > 0 else (0, 0)
        texture = face_texture(values[index], style, rng, through=through).astype(np.float32)
        shade = 0.45 + 0.55 * max(float(normal @ light), 0.0)
        texture *= shade
        matrix = cv2.getPerspectiveTransform(tex_corners, quad.astype(np.float32))
        height, width = canvas.shape[:2]
        warped = cv2.warpPerspective(texture, matrix, (width, height), flags=cv2.INTER_LINEAR)
        mask = cv2.warpPerspective(
            np.ones((TEXTURE, TEXTURE), np.float32), matrix, (width, height), flags=cv2.INTER_LINEAR
        )
        canvas *= 1 - mask[..., None]
        canvas += warped
        if style.gloss > 0 and index == order[-1]:
            # Faces are drawn back to front: the last one is turned most to the camera.
            _highlight(canvas, mask, quad, half, style.gloss, rng)
    x, y, w, h = cv2.boundingRect(np.round(hull).astype(np.int32))
    return (float(x), float(y), float(x + w), float(y + h))


def _view_through(normal: Array, rotation: Array) -> tuple[float, float]:
    """Where a face's opposite face is seen through a see-through die, on this face's texture.

    The opposite face lies 2 half-sides behind, along ``-normal``; a camera looking down its
    z axis sees it carried by 2 * tan of the view's slant along the face's own axes (x, y of its
    texture, in half-sides). Refraction is left to the caller.
    """
    quad = _face_quad(normal)
    u_axis, v_axis = (quad[1] - quad[0]) / 2, (quad[3] - quad[0]) / 2
    facing = float((rotation @ normal)[2])
    return (
        2 * float((rotation @ u_axis)[2]) / facing,
        2 * float((rotation @ v_axis)[2]) / facing,
    )


def _highlight(
    canvas: Array, mask: Array, quad: Array, half: float, strength: float, rng: np.random.Generator
) -> None:
    """Add a soft, possibly stretched, whitish reflection inside one drawn face."""
    u, v = rng.uniform(0.1, 0.9, 2)
    top = quad[0] + u * (quad[1] - quad[0])
    bottom = quad[3] + u * (quad[2] - quad[3])
    cx, cy = top + v * (bottom - top)
    major = half * rng.uniform(0.08, 0.35)
    minor = major * rng.uniform(0.25, 1.0)
    angle = rng.uniform(0, np.pi)
    tint = rng.uniform(0.85, 1.0, 3)
    # Only the face's own rectangle (and a pixel of antialiased edge) can shine.
    height, width = canvas.shape[:2]
    x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int) - 2, 0)
    x1 = min(int(np.ceil(quad[:, 0].max())) + 3, width)
    y1 = min(int(np.ceil(quad[:, 1].max())) + 3, height)
    if x1 <= x0 or y1 <= y0:
        return  # the face lies wholly off the canvas (a die half out of the picture)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    along = (xx - cx) * np.cos(angle) + (yy - cy) * np.sin(angle)
    across = -(xx - cx) * np.sin(angle) + (yy - cy) * np.cos(angle)
    spot = np.exp(-0.5 * ((along / major) ** 2 + (across / minor) ** 2)) * mask[y0:y1, x0:x1]
    canvas[y0:y1, x0:x1] += strength * spot[..., None] * tint


def _face_quad(normal: Array) -> Array:
    """The four corners of the cube face with this normal, in texture corner order."""
    if abs(normal[2]) > 0.5:
        u, v = np.array([1.0, 0, 0]), np.array([0, -1.0, 0])
    elif abs(normal[0]) > 0.5:
        u, v = np.array([0, 1.0, 0]), np.array([0, 0, -1.0])
    else:
        u, v = np.array([1.0, 0, 0]), np.array([0, 0, -1.0])
    return np.array([normal - u - v, normal + u - v, normal + u + v, normal - u + v])


def render_scene(
    rng: np.random.Generator,
    *,
    size: tuple[int, int] = (192, 192),
    dice: int = 1,
    half_range: tuple[float, float] = (16.0, 26.0),
    cocked_share: float = 0.15,
    scatter: bool = False,
    rim_share: float = 0.0,
    styles: Callable[[np.random.Generator], DieStyle] | None = None,
    top: int | None = None,
    touching: float = 0.0,
) -> Scene:
    """Render a table with ``dice`` dice; the first sits near the centre.

    A share of dice lean on an edge or corner (cocked); the others rest flat, seen by a camera
    tilted up to about 30 degrees from straight down. With ``scatter`` the dice lie anywhere in
    the picture (a whole tray, as the locator sees it) instead of around the first; a
    ``rim_share`` of scenes show a tray's rim: a wall of another colour with its shadow.
    ``styles`` draws each die's look (default :func:`random_style`); ``top`` fixes the value
    turned up (default: any). A ``touching`` share of the dice after the first is pushed
    against a die already there, side to side or at a corner (:func:`_beside`), as dice that
    knock together in a tray come to rest (lying flat: none leans on another); the others keep
    apart.
    """
    height, width = size
    canvas = _background(size, rng)
    # Asked only when wanted, so renders made without rims stay as they were for a seed.
    if rim_share > 0 and rng.random() < rim_share:
        _tray_rim(canvas, rng)
    light = np.array([rng.uniform(-0.6, 0.6), rng.uniform(-0.6, 0.6), 1.0])
    light /= np.linalg.norm(light)
    camera_tilt = _rotation(
        np.array([np.cos(rng.uniform(0, 6.3)), np.sin(rng.uniform(0, 6.3)), 0.0]),
        np.radians(rng.uniform(0, 30) if rng.random() < 0.7 else rng.uniform(0, 12)),
    )
    placed: list[RenderedDie] = []
    half = float(rng.uniform(*half_range))
    footprints = np.zeros((height, width), np.float32)
    spots: list[tuple[float, float]] = []
    # Each die's size and turn about the vertical, for a die pushed against it.
    laid: list[tuple[float, float]] = []
    looks: list[DieStyle] = []
    for index in range(dice):
        # Asked only when wanted, so renders made without touching dice stay as they were.
        pushed = bool(laid) and touching > 0 and rng.random() < touching
        die_half = half * float(rng.uniform(0.92, 1.08)) if pushed else 0.0
        if pushed:
            # A few tries: in a cluster, many places beside a die are taken.
            for _ in range(3):
                against = int(rng.integers(len(laid)))
                centre, spin = _beside(spots[against], laid[against], die_half, rng)
                face = _top_face(centre, die_half, spin)
                if not any(
                    cv2.intersectConvexConvex(face, _top_face(spot, h, turn))[0] > 0.02 * h * h
                    for spot, (h, turn) in zip(spots, laid, strict=True)
                ):
                    break
            else:
                continue  # no room: it would lie on another die
        elif scatter:
            margin = -0.5 * half
            centre = (rng.uniform(margin, width - margin), rng.uniform(margin, height - margin))
        elif index == 0:
            centre = (
                width / 2 + rng.uniform(-0.1, 0.1) * width,
                height / 2 + rng.uniform(-0.1, 0.1) * height,
            )
        else:
            angle = rng.uniform(0, 2 * np.pi)
            reach = rng.uniform(2.1, 4.5) * half
            centre = (spots[0][0] + reach * np.cos(angle), spots[0][1] + reach * np.sin(angle))
        if not pushed and any(
            np.hypot(centre[0] - sx, centre[1] - sy) < 2.7 * half for sx, sy in spots
        ):
            continue
        spots.append(centre)
        style = (styles or random_style)(rng)
        if pushed and rng.random() < 0.5:
            # Dice of one set: where they touch, only their edges tell them apart.
            style = looks[against]
        looks.append(style)
        value = int(rng.integers(1, 7)) if top is None else top
        if not pushed:
            spin = rng.uniform(0, 2 * np.pi)
        rotation = _rotation(np.array([0, 0, 1.0]), spin)
        if rng.random() < cocked_share and not pushed:
            axis = np.array([np.cos(rng.uniform(0, 6.3)), np.sin(rng.uniform(0, 6.3)), 0.0])
            rotation = _rotation(axis, np.radians(rng.uniform(35, 55))) @ rotation
        rotation = camera_tilt @ rotation
        values = _face_values(value, rng)
        if not pushed:
            die_half = half * float(rng.uniform(0.92, 1.08))
        laid.append((die_half, spin))
        shadow = np.zeros((height, width), np.float32)
        box = _draw_die(
            canvas,
            shadow,
            centre=centre,
            half=die_half,
            rotation=rotation,
            values=values,
            style=style,
            light=light,
            rng=rng,
        )
        footprints = np.maximum(footprints, shadow)
        facing = (_NORMALS @ rotation.T)[:, 2]
        best = int(facing.argmax())
        angle = float(np.degrees(np.arccos(np.clip(facing[best], -1, 1))))
        label: int | None
        if angle <= READABLE_DEG:
            label = values[best]
        elif angle >= COCKED_DEG:
            label = 0
        else:
            label = None
        placed.append(RenderedDie(box=box, label=label, angle_deg=angle))
    image = _finish(canvas, footprints, light, rng)
    return Scene(image=image, dice=tuple(placed))


_TOP_SCALE = 12.0 / 11.0
"""How much larger than its half-side a die's top face is drawn (``_draw_die``: the camera at 12
half-sides from the die's centre sees its top face from 11)."""


def _top_face(centre: tuple[float, float], half: float, spin: float) -> npt.NDArray[np.float32]:
    """The corners of a flat die's top face as drawn, turned by ``spin``, in image pixels."""
    reach = half * _TOP_SCALE
    along = np.array([np.cos(spin), -np.sin(spin)]) * reach
    across = np.array([np.sin(spin), np.cos(spin)]) * reach
    corners = [np.array(centre) + a * along + b * across for a, b in _SQUARE]
    return np.array(corners, np.float32)


_SQUARE = ((1, 1), (1, -1), (-1, -1), (-1, 1))


def _beside(
    spot: tuple[float, float],
    die: tuple[float, float],
    half: float,
    rng: np.random.Generator,
) -> tuple[tuple[float, float], float]:
    """Where a die of ``half`` lies pushed against the die at ``spot`` (its half-side and turn),
    and its own turn: against one of its four sides, turned alike within 8 degrees, or (a
    third of the time) at one of its corners, turned alike within 2 degrees, where it
    completes a row or a square with the dice beside it; at most 6 % of a side apart."""
    other_half, spin = die
    place = int(rng.integers(6))
    reach = (other_half + half) * _TOP_SCALE * float(rng.uniform(1.0, 1.06))
    if place < 4:
        direction = spin + place * np.pi / 2
        turn = float(rng.uniform(-1.0, 1.0)) * np.radians(8.0)
    else:
        direction = spin + (2 * int(rng.integers(4)) + 1) * np.pi / 4
        turn = float(rng.uniform(-1.0, 1.0)) * np.radians(2.0)
        reach *= np.sqrt(2.0)
    # A turned die reaches further towards its neighbour: keep the two from overlapping.
    reach += half * _TOP_SCALE * (abs(np.cos(turn)) + abs(np.sin(turn)) - 1.0)
    # Image y grows downwards: a die turned by ``spin`` has its sides along (cos, -sin).
    centre = (spot[0] + reach * np.cos(direction), spot[1] - reach * np.sin(direction))
    return centre, spin + turn


def _finish(
    canvas: Array,
    footprints: Array,
    light: Array,
    rng: np.random.Generator,
) -> UInt8Image:
    """Add shadow, glare, colour cast, blur, noise and JPEG artefacts."""
    height, width = canvas.shape[:2]
    offset = -light[:2] / max(light[2], 0.3) * rng.uniform(3, 12)
    matrix = np.array([[1, 0, offset[0]], [0, 1, -offset[1]]], np.float32)
    cast = cv2.warpAffine(footprints, matrix, (width, height))
    cast = cv2.GaussianBlur(cast, (0, 0), rng.uniform(1.5, 5))
    # The shadow falls on the table only: where a die is drawn it is already shaded.
    darkness = rng.uniform(0.2, 0.6) * cast * (1 - footprints)
    canvas = canvas * (1 - darkness[..., None])
    if rng.random() < 0.35:
        gx, gy = rng.uniform(0.2, 0.8) * width, rng.uniform(0.2, 0.8) * height
        yy, xx = np.mgrid[0:height, 0:width]
        sigma = rng.uniform(3, 14)
        glare = np.exp(-(((xx - gx) ** 2) + ((yy - gy) ** 2)) / (2 * sigma**2))
        canvas = canvas + rng.uniform(60, 200) * glare[..., None]
    canvas = canvas * rng.uniform(0.85, 1.15, 3) * rng.uniform(0.6, 1.3)
    canvas = np.clip(canvas, 0, 255)
    gamma = rng.uniform(0.7, 1.4)
    canvas = 255.0 * (canvas / 255.0) ** gamma
    blur = rng.random()
    if blur < 0.3:
        canvas = cv2.GaussianBlur(canvas, (0, 0), rng.uniform(0.5, 1.6))
    elif blur < 0.4:
        length = int(rng.integers(3, 8))
        line = np.zeros((length, length), np.float64)
        line[length // 2, :] = 1.0 / length
        turn = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), rng.uniform(0, 180), 1)
        kernel: Array = cv2.warpAffine(line, turn, (length, length))
        canvas = cv2.filter2D(canvas, -1, kernel / max(kernel.sum(), 1e-6))
    canvas = canvas + rng.normal(0, rng.uniform(0, 8), canvas.shape)
    image = np.clip(canvas, 0, 255).astype(np.uint8)
    if rng.random() < 0.6:
        quality = int(rng.integers(30, 95))
        ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if ok:
            image = np.asarray(cv2.imdecode(encoded, cv2.IMREAD_COLOR), np.uint8)
    return image


def render_crops(
    rng: np.random.Generator,
    count: int,
    *,
    faint: float = 0.0,
    arcs: float = 0.0,
    more_logos: bool = False,
    translucent: float = 0.0,
    occluded: float = 0.0,
    occluded_least: float = 0.3,
) -> CropSet:
    """Render ``count`` labelled model crops: readable faces, cocked dice and class-0 cases.

    ``faint``, ``arcs`` and ``translucent`` are the shares of dice whose pips barely stand out,
    of dice with decorative swirls and of see-through dice; ``more_logos`` adds
    ``EXTRA_LOGO_FAMILIES`` (see :func:`random_style`). An ``occluded`` share of scenes adds a
    flat die partly hidden (:func:`vision.train.data.occlude`, at least ``occluded_least`` of its
    box) as class 0.
    """
    crops: list[UInt8Image] = []
    labels: list[int] = []
    styles = partial(
        random_style, faint=faint, arcs=arcs, more_logos=more_logos, translucent=translucent
    )
    while len(crops) < count:
        scene = render_scene(
            rng, dice=int(rng.choice([1, 2, 3, 4])), half_range=(14.0, 28.0), styles=styles
        )
        height, width = scene.image.shape[:2]
        boxes = [d.box for d in scene.dice]
        for die in scene.dice:
            inside = die.box[0] >= 0 and die.box[1] >= 0
            if die.label is None or not inside or die.box[2] > width or die.box[3] > height:
                continue
            box = jitter_box(die.box, rng, shift=0.08, scale=0.15)
            crops.append(to_uint8(_crop(scene.image, box)))
            labels.append(die.label)
        negative = _negative(scene, boxes, rng)
        if negative is not None:
            crops.append(negative)
            labels.append(0)
        # Asked only when wanted, so renders made without it stay as they were for a seed.
        if occluded > 0 and rng.random() < occluded:
            flat = [
                d.box
                for d in scene.dice
                if d.label not in (0, None)
                and d.box[0] >= 0
                and d.box[1] >= 0
                and d.box[2] <= width
                and d.box[3] <= height
            ]
            if flat:
                under = flat[int(rng.integers(len(flat)))]
                hidden, visible = occlude(scene.image, under, rng, least=occluded_least)
                box = jitter_box(visible, rng, shift=0.08, scale=0.15)
                crops.append(to_uint8(_crop(hidden, box)))
                labels.append(0)
    return CropSet(
        np.stack(crops[:count]), np.asarray(labels[:count], np.int64), ["synthetic"] * count
    )


def render_logo_sixes(
    rng: np.random.Generator, count: int, families: Sequence[str] = HELD_OUT_LOGOS
) -> CropSet:
    """Render ``count`` crops of single dice lying flat with a logo of ``families`` on the six.

    With the default, the logos are of families training never draws: how the model reads
    logos it has not seen.
    """
    unknown = sorted(set(families) - set(_LOGOS))
    if unknown:
        raise ValueError(f"unknown logo families {unknown}; known: {sorted(_LOGOS)}")

    def logo_style(generator: np.random.Generator) -> DieStyle:
        family = families[int(generator.integers(len(families)))]
        return replace(random_style(generator), logo_six=True, logo=family)

    crops: list[UInt8Image] = []
    while len(crops) < count:
        scene = render_scene(
            rng, half_range=(14.0, 28.0), cocked_share=0.0, styles=logo_style, top=6
        )
        die = scene.dice[0]
        if die.label != 6:
            continue
        crops.append(to_uint8(_crop(scene.image, jitter_box(die.box, rng, shift=0.05, scale=0.1))))
    return CropSet(np.stack(crops), np.full(count, 6, np.int64), ["logo sixes"] * count)


def _negative(scene: Scene, boxes: list[FloatBox], rng: np.random.Generator) -> UInt8Image | None:
    """One class-0 crop of a scene (or none): a die half out, heavy blur, bare table or a hand."""
    main = scene.dice[0].box
    side = max(main[2] - main[0], main[3] - main[1])
    roll = rng.random()
    if roll < 0.2:
        angle = rng.uniform(0, 2 * np.pi)
        reach = rng.uniform(0.6, 0.9) * side
        dx, dy = reach * np.cos(angle), reach * np.sin(angle)
        moved = (main[0] + dx, main[1] + dy, main[2] + dx, main[3] + dy)
        if _centre_inside_any(moved, boxes[1:]):
            return None
        return to_uint8(_crop(scene.image, moved))
    if roll < 0.3:
        crop = _crop(scene.image, main)
        blurred = cv2.GaussianBlur(crop.transpose(1, 2, 0), (0, 0), float(rng.uniform(7.0, 12.0)))
        return np.asarray(np.rint(blurred * 255), np.uint8)
    if roll < 0.4:
        image = scene.image.copy()
        _draw_hand(image, rng)
        return to_uint8(_crop(image, main))
    if roll < 0.55:
        corner = (2.0, 2.0, 2.0 + side, 2.0 + side)
        if _centre_inside_any(corner, boxes) or any(_centre_inside_any(b, [corner]) for b in boxes):
            return None
        return to_uint8(_crop(scene.image, corner))
    if roll < 0.7:
        return _round_thing(scene, boxes, side, rng)
    return None


def _round_thing(
    scene: Scene, boxes: list[FloatBox], side: float, rng: np.random.Generator
) -> UInt8Image | None:
    """A coin, knob, counter or button where no die is: round and pip-like, but no die."""
    image = scene.image.copy()
    height, width = image.shape[:2]
    radius = side * float(rng.uniform(0.2, 0.55))
    cx = float(rng.uniform(radius, width - radius))
    cy = float(rng.uniform(radius, height - radius))
    box = (cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2)
    if _centre_inside_any(box, boxes) or any(_centre_inside_any(b, [box]) for b in boxes):
        return None
    colour = np.array(_random_colour(rng)) * rng.uniform(0.3, 1.0)
    centre = (int(round(cx)), int(round(cy)))
    cv2.circle(image, centre, int(round(radius)), colour.tolist(), -1, cv2.LINE_AA)
    if rng.random() < 0.5:
        # A rim or an embossed ring, as coins and counters have.
        rim = (colour * rng.uniform(0.5, 0.8)).tolist()
        cv2.circle(image, centre, int(round(radius * rng.uniform(0.6, 0.9))), rim, 1, cv2.LINE_AA)
    return to_uint8(_crop(image, box))


def _crop(image: UInt8Image, box: FloatBox) -> Array:
    """The model crop of a box (the shared preprocessing)."""
    from vision.preprocess import crop_for_model

    return crop_for_model(image, box)


def _centre_inside_any(box: FloatBox, others: list[FloatBox]) -> bool:
    """True when the crop square of ``box`` would be centred on another die."""
    sx0, sy0, sx1, sy1 = square_around(box)
    cx, cy = (sx0 + sx1) / 2, (sy0 + sy1) / 2
    return any(o[0] <= cx <= o[2] and o[1] <= cy <= o[3] for o in others)


def _draw_hand(image: UInt8Image, rng: np.random.Generator) -> None:
    """Cover the middle of the image with skin-toned finger shapes."""
    height, width = image.shape[:2]
    tone = np.array([rng.uniform(60, 190), rng.uniform(90, 200), rng.uniform(140, 240)])
    base = (int(rng.uniform(0.3, 0.7) * width), height + 10)
    for _ in range(int(rng.integers(2, 5))):
        tip = (
            int(rng.uniform(0.3, 0.7) * width),
            int(rng.uniform(0.25, 0.6) * height),
        )
        thickness = int(rng.uniform(0.08, 0.16) * width)
        shade = tone * rng.uniform(0.85, 1.1)
        cv2.line(image, base, tip, shade.tolist(), thickness, cv2.LINE_AA)
