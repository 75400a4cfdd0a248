"""A frame with what was read on it: the roll zone, each die's box, number and face.

For setting a camera up (``pipcam read --annotate``) and for the players to see which die the
table means (the phones' "photo of the throw"). The numbers are the phones': the dice in the
roll zone first, then those out of it. Only digits and symbols are drawn, so the picture reads
the same in every language.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import cv2
import numpy as np
import numpy.typing as npt

__all__ = ["annotate", "to_jpeg"]

Frame = npt.NDArray[np.uint8]

# BGR. A die read surely is green, one read unsurely or leaning orange, a place said to hold no
# die grey; the roll zone is outlined in blue.
COLOURS = {
    "ok": (80, 200, 60),
    "uncertain": (0, 150, 255),
    "cocked": (0, 150, 255),
    "no_die": (150, 150, 150),
}
ZONE_COLOUR = (255, 140, 40)


def annotate(
    frame: Frame,
    dice: Sequence[Mapping[str, object]],
    aside: Sequence[Mapping[str, object]] = (),
    *,
    zone: tuple[int, int, int, int] | None = None,
) -> Frame:
    """A copy of ``frame`` with ``dice`` (those of the roll zone) and ``aside`` (those out of it)
    drawn: each box with its number from 1 and its face ("?" unread, "x" no die there); ``zone``
    (frame pixels) is the roll zone, outlined when it is not the whole frame."""
    out = np.ascontiguousarray(frame.copy())
    height, width = out.shape[:2]
    # Lines and letters in proportion to the frame: a phone shows the whole frame some 300 px
    # wide, where letters a fortieth of it high are still read at a glance.
    unit = max(1, round(max(width, height) / 400))
    if zone is not None and zone != (0, 0, width, height):
        cv2.rectangle(out, zone[:2], zone[2:], ZONE_COLOUR, 2 * unit)
    for number, die in enumerate([*dice, *aside], start=1):
        x0, y0, x1, y1 = (int(v) for v in _box(die))
        status = str(die.get("status", "ok"))
        colour = COLOURS.get(status, COLOURS["uncertain"])
        thick = unit if number > len(dice) else 2 * unit  # set aside: a thinner line
        cv2.rectangle(out, (x0, y0), (x1, y1), colour, thick)
        value = die.get("value")
        face = "x" if status == "no_die" else str(value) if isinstance(value, int) else "?"
        _label(out, f"{number}:{face}", (x0, y0), colour, unit)
    return out


def to_jpeg(frame: Frame, *, longest: int = 1280, quality: int = 85) -> bytes:
    """``frame`` as JPEG bytes, shrunk so its longer side is at most ``longest`` pixels."""
    height, width = frame.shape[:2]
    factor = min(1.0, longest / max(width, height))
    if factor < 1.0:
        size = (max(1, round(width * factor)), max(1, round(height * factor)))
        frame = np.asarray(cv2.resize(frame, size, interpolation=cv2.INTER_AREA), np.uint8)
    ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:  # pragma: no cover - OpenCV encodes any uint8 BGR image
        raise ValueError("the frame could not be encoded as JPEG")
    return bytes(data)


def _box(die: Mapping[str, object]) -> tuple[float, float, float, float]:
    box = die.get("box")
    if not isinstance(box, Sequence) or len(box) != 4:
        raise ValueError(f"a die needs a box [x0, y0, x1, y1], not {box!r}")
    x0, y0, x1, y1 = (float(v) for v in box)
    return x0, y0, x1, y1


def _label(
    out: Frame, text: str, corner: tuple[int, int], colour: tuple[int, int, int], unit: int
) -> None:
    """``text`` on a filled tag of ``colour`` above the box's top-left corner (inside the
    frame at its edges)."""
    font, scale, weight = cv2.FONT_HERSHEY_SIMPLEX, 0.55 * unit, max(1, unit)
    (w, h), base = cv2.getTextSize(text, font, scale, weight)
    height, width = out.shape[:2]
    x = min(max(corner[0], 0), max(width - w - 4, 0))
    y = corner[1] - 4 if corner[1] - h - base - 6 >= 0 else corner[1] + h + base + 4
    cv2.rectangle(out, (x, y - h - base - 2), (x + w + 4, y + 2), colour, cv2.FILLED)
    cv2.putText(out, text, (x + 2, y - base), font, scale, (0, 0, 0), weight, cv2.LINE_AA)
