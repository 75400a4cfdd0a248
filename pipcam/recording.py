"""A recorded table: frames with how long each was seen, and the button presses between them.

``make_demo`` renders the embedded default that ``make run`` plays when no Pi camera is there: a
short Kymppitonni game on a green tray, dice set aside to the left of the roll zone. It is made
from the same synthetic renderer as the vision tests, then read by the real reader and model.

A recording is a folder with ``script.json``::

    {"header": {...}, "calibration": {...} | null,
     "steps": [{"frame": "000.jpg", "seconds": 1.0}, {"press": "bank"}, ...]}
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.calibrate import calibrate_frame
from vision.errors import SourceExhausted, UnreadableImage
from vision.reader import Zone
from vision.source import read_image
from vision.synthetic import DieSpec, draw_hand, make_frame

Frame = npt.NDArray[np.uint8]
SCRIPT = "script.json"


@dataclass(frozen=True)
class Step:
    """A frame shown for some seconds, or a button pressed."""

    frame: str | None = None
    seconds: float = 0.0
    press: str | None = None


def load_script(folder: Path) -> tuple[dict[str, Any], dict[str, Any] | None, list[Step]]:
    """The header, the calibration and the steps of a recording (errors name the file)."""
    path = folder / SCRIPT
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        steps = [
            Step(frame=s.get("frame"), seconds=float(s.get("seconds", 0.0)), press=s.get("press"))
            for s in raw["steps"]
        ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UnreadableImage(
            f"{path} is not a recorded table ({exc}); a recording is a folder with script.json"
        ) from exc
    return raw.get("header", {}), raw.get("calibration"), steps


class RecordedSource:
    """Plays a recorded table in real time: each frame for its seconds, presses in between."""

    def __init__(
        self,
        folder: Path,
        *,
        on_press: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.folder = folder
        self.header, self.calibration, self.steps = load_script(folder)
        self.on_press = on_press
        self.clock = clock
        self._frames: dict[str, Frame] = {}
        self._index = 0
        self._since: float | None = None
        self._closed = False

    def __enter__(self) -> RecordedSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Forget the frames; closing twice is harmless."""
        self._closed = True
        self._frames.clear()

    @property
    def finished(self) -> bool:
        """Whether every step has been played (the last frame is then shown for ever)."""
        return self._index >= len(self.steps) - 1 and self._since is not None

    def _frame(self, name: str) -> Frame:
        if name not in self._frames:
            self._frames[name] = read_image(self.folder / name)
        return self._frames[name]

    def capture(self) -> Frame:
        """The frame the table shows now; presses due by now are made first."""
        if self._closed:
            raise SourceExhausted(f"the recorded table {self.folder} is closed")
        now = self.clock()
        while True:
            step = self.steps[self._index]
            if step.press is not None:
                if self.on_press is not None:
                    self.on_press(step.press)
                self._advance(now)
                continue
            assert step.frame is not None
            if self._since is None:
                self._since = now
            last = self._index == len(self.steps) - 1
            if not last and now - self._since >= step.seconds:
                self._advance(now)
                continue
            return self._frame(step.frame)

    def _advance(self, now: float) -> None:
        if self._index < len(self.steps) - 1:
            self._index += 1
            self._since = now if self.steps[self._index].frame is not None else None


# --------------------------------------------------------------------------------------------------
# Rendering a recording


@dataclass(frozen=True)
class Scene:
    """Dice in the roll zone and dice set aside to its left.

    A scene whose dice in the zone are the last scene's less those it sets aside is a
    set-aside: the dice left in the zone lie where they lay (a throw moves every die it throws,
    and the table tells the two apart by that). Any other scene is a throw: its dice land anew.
    """

    rolled: Sequence[int]
    aside: Sequence[int] = ()


def _place(
    values: Sequence[int],
    x0: float,
    x1: float,
    height: int,
    side: float,
    rng: random.Random,
    before: Sequence[DieSpec] = (),
) -> list[DieSpec]:
    """Dice at random spots in a column band, never touching, and never where a die of
    ``before`` with the same face lay (a thrown die that lands on its old place showing its old
    face is taken for one not thrown: rare at a table, and not what a recording means)."""
    placed: list[DieSpec] = []
    for value in values:
        for _ in range(500):
            cx = rng.uniform(x0 + side, x1 - side)
            cy = rng.uniform(side, height - side)
            same = [d for d in before if d.value == value]
            if all((cx - d.cx) ** 2 + (cy - d.cy) ** 2 > (1.9 * side) ** 2 for d in placed) and all(
                (cx - d.cx) ** 2 + (cy - d.cy) ** 2 > side**2 for d in same
            ):
                placed.append(DieSpec(value, cx, cy, side, angle=rng.uniform(0, 90)))
                break
        else:  # pragma: no cover  (the bands are large enough for six dice)
            raise ValueError(f"no room for {len(values)} dice")
    return placed


def _grid(
    values: Sequence[int], band: float, height: int, side: float, rng: random.Random
) -> list[DieSpec]:
    """Set-aside dice in two neat columns left of the roll zone, as players line them up."""
    specs = []
    for n, value in enumerate(values):
        cx = band * (0.3 if n % 2 == 0 else 0.7)
        cy = height * (n // 2 + 1) / 4
        specs.append(DieSpec(value, cx, cy, side, angle=rng.uniform(0, 15)))
    return specs


def render_scenes(
    folder: Path,
    header: dict[str, Any],
    plan: Sequence[Scene | str],
    *,
    width: int = 800,
    height: int = 600,
    zone_x0: float = 0.3,
    seed: int = 1,
    hold: float = 1.2,
) -> None:
    """Write a recording: each scene is preceded by a hand over the tray; strings are presses."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    side = width / 15
    steps: list[dict[str, Any]] = []
    empty = make_frame(width, height, seed=seed)
    _write(folder / "empty.jpg", empty)
    steps.append({"frame": "empty.jpg", "seconds": hold})
    aside_specs: list[DieSpec] = []
    rolled: list[DieSpec] = []
    for n, item in enumerate(plan):
        if isinstance(item, str):
            steps.append({"press": item})
            continue
        was = Counter(d.value for d in aside_specs)
        newly = Counter(item.aside) - was
        lying = Counter(d.value for d in rolled)
        set_aside = (
            bool(newly)
            and not was - Counter(item.aside)
            and lying - Counter(item.rolled) == newly
            and not Counter(item.rolled) - lying
        )
        if sorted(item.aside) != sorted(was.elements()):
            aside_specs = _grid(item.aside, zone_x0 * width, height, side, rng)
        if set_aside:
            left = list(rolled)
            rolled = [
                left.pop(next(i for i, d in enumerate(left) if d.value == v)) for v in item.rolled
            ]
        else:
            rolled = _place(item.rolled, zone_x0 * width, width, height, side, rng, rolled)
        hand = make_frame(width, height, aside_specs, seed=seed)
        draw_hand(hand, rng.uniform(0.4, 0.7) * width, rng.uniform(0.3, 0.7) * height, width / 3)
        name = f"{n:03d}"
        _write(folder / f"{name}-hand.jpg", hand)
        _write(
            folder / f"{name}.jpg", make_frame(width, height, [*aside_specs, *rolled], seed=seed)
        )
        steps.append({"frame": f"{name}-hand.jpg", "seconds": 0.5})
        steps.append({"frame": f"{name}.jpg", "seconds": hold})
    steps.append({"frame": "empty.jpg", "seconds": hold})
    # Calibrated on the empty tray as `pipcam calibrate` would, with the roll zone to the right.
    found = calibrate_frame(empty)
    calibration = replace(found, zone=Zone(zone_x0, 0.0, 1.0, 1.0)).to_json()
    script = {"header": header, "calibration": calibration, "steps": steps}
    (folder / SCRIPT).write_text(json.dumps(script, indent=1) + "\n", encoding="utf-8")


def _write(path: Path, frame: Frame) -> None:
    if not cv2.imwrite(str(path), frame, [cv2.IMWRITE_JPEG_QUALITY, 88]):
        raise OSError(f"could not write {path}")


DEMO_HEADER: dict[str, Any] = {
    "game": "kymppitonni",
    "players": ["Ann", "Bob"],
    "options": {"target": 4000},
}

# Ann sets aside 1 1 5, then a 5, and banks 300; Bob throws four 2s; Ann throws 1 1 1 5 5 5 (hot
# dice) and three pairs and banks 3500 (she holds the break); Bob busts; Ann throws a straight,
# banks it and reaches the target; Bob busts in his equalizing turn and Ann wins.
DEMO_PLAN: list[Scene | str] = [
    Scene([1, 1, 5, 2, 3, 4]),
    Scene([2, 3, 4], aside=[1, 1, 5]),
    Scene([5, 2, 3], aside=[1, 1, 5]),
    Scene([2, 3], aside=[1, 1, 5, 5]),
    "bank",
    Scene([2, 2, 2, 2, 3, 6]),
    Scene([1, 1, 1, 5, 5, 5]),
    Scene([], aside=[1, 1, 1, 5, 5, 5]),
    Scene([3, 3, 4, 4, 6, 6]),
    "confirm",
    "bank",
    Scene([2, 3, 4, 6, 6, 3]),
    Scene([1, 2, 3, 4, 5, 6]),
    "confirm",
    "bank",
    Scene([2, 2, 3, 4, 6, 6]),
]


def make_demo(folder: Path) -> None:
    """Render the embedded default recording into ``folder``."""
    render_scenes(folder, DEMO_HEADER, DEMO_PLAN)


def demo_folder() -> Path:
    """Where the embedded recording ships inside the package."""
    return Path(__file__).parent / "recorded" / "kymppitonni"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pipcam.recording [FOLDER]``: render the embedded recording again."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    folder = Path(args[0]) if args else demo_folder()
    make_demo(folder)
    sys.stdout.write(f"wrote {folder}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
