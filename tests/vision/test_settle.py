"""Settle detection on synthetic frame sequences with a fake clock (no sleeping)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from vision.settle import SettleDetector, SettleUpdate
from vision.srgb import to_levels, to_linear
from vision.synthetic import DieSpec, draw_hand, make_frame, six_dice

W, H = 320, 240
Frame = npt.NDArray[np.uint8]


class FakeClock:
    """A clock the test advances by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _frame(dice: Sequence[DieSpec] = (), *, hand: bool = False) -> Frame:
    frame = make_frame(W, H, dice, tray="green", seed=4)
    if hand:
        draw_hand(frame, W * 0.3, H * 0.75, H * 0.5)
    return frame


DICE = six_dice(W, H, seed=2)
EMPTY = _frame()
SOME = _frame(DICE[:3])
ALL = _frame(DICE)
MOVED = _frame([*DICE[:5], DieSpec(DICE[5].value, W * 0.9, H * 0.15, DICE[5].side)])
HAND = _frame(DICE, hand=True)


def _run(
    frames: Sequence[Frame], *, step: float = 0.125, settle_seconds: float = 0.5
) -> list[SettleUpdate]:
    clock = FakeClock()
    detector = SettleDetector(settle_seconds=settle_seconds, clock=clock)
    updates = []
    for frame in frames:
        updates.append(detector.update(frame))
        clock.now += step
    return updates


def test_a_roll_is_reported_once_when_the_dice_have_been_still_long_enough() -> None:
    updates = _run([EMPTY] * 3 + [SOME, ALL] + [ALL] * 12)
    rolls = [i for i, u in enumerate(updates) if u.roll]
    # The last change is frame 4; 0.5 s (four steps of 0.125 s) later is frame 8.
    assert rolls == [8]
    assert [u.status for u in updates[4:8]] == ["moving"] * 4
    assert all(u.status == "settled" for u in updates[8:])


@pytest.mark.parametrize(("settle_seconds", "expected"), [(0.25, 4), (1.0, 10)])
def test_settle_time_is_configurable(settle_seconds: float, expected: int) -> None:
    updates = _run([EMPTY, SOME, ALL] + [ALL] * 15, settle_seconds=settle_seconds)
    assert [i for i, u in enumerate(updates) if u.roll] == [expected]


def test_empty_tray_is_empty_and_never_a_roll() -> None:
    updates = _run([EMPTY] * 12)
    assert not any(u.roll for u in updates)
    assert updates[-1].status == "empty"
    assert updates[-1].occupancy < 0.001


def test_dice_lying_there_when_watching_starts_are_not_a_roll() -> None:
    updates = _run([ALL] * 12)
    assert [u.status for u in updates][-1] == "settled"
    assert not any(u.roll for u in updates)


def test_no_roll_while_a_hand_is_in_the_tray() -> None:
    updates = _run([EMPTY, ALL] + [HAND] * 15)
    assert all(u.hand for u in updates[2:])
    assert all(u.status == "moving" for u in updates[2:])
    assert not any(u.roll for u in updates)


def test_a_hand_that_leaves_the_dice_as_they_were_is_not_a_new_roll() -> None:
    updates = _run([EMPTY, ALL] + [ALL] * 8 + [HAND] * 3 + [ALL] * 10)
    assert [i for i, u in enumerate(updates) if u.roll] == [5]


def test_dice_moved_by_a_hand_make_a_new_roll() -> None:
    updates = _run([EMPTY, ALL] + [ALL] * 8 + [HAND] * 3 + [MOVED] * 10)
    assert [i for i, u in enumerate(updates) if u.roll] == [5, 17]


def test_the_places_touched_while_the_dice_moved_are_known_at_the_settle() -> None:
    """Five dice lifted and thrown, the sixth left lying: at the settle, the places of the five
    were touched and the sixth's was not, though one thrown die landed back on its own place.
    The next roll starts afresh."""
    clock = FakeClock()
    detector = SettleDetector(settle_seconds=0.5, clock=clock)
    lifted = _frame(DICE[5:])  # five picked up, one left
    landed = [
        DICE[0],  # the first lands where it lay, as it lay
        *(DieSpec(d.value, d.cx, min(d.cy + 0.35 * H, H - d.side), d.side) for d in DICE[1:5]),
        DICE[5],
    ]
    for frame in [EMPTY, ALL, *[ALL] * 8, HAND, lifted, lifted, HAND, *[_frame(landed)] * 8]:
        update = detector.update(frame)
        clock.now += 0.125
    assert update.status == "settled"
    touched = detector.touched
    assert touched is not None
    assert [touched(d.box) for d in DICE] == [True] * 5 + [False]
    for frame in [_frame(landed)] * 3 + [MOVED] * 8:
        update = detector.update(frame)
        clock.now += 0.125
    assert detector.touched is not None
    assert detector.touched(DICE[0].box) is False  # nothing moved there since the last roll


def test_frames_that_keep_changing_never_settle() -> None:
    updates = _run([SOME, ALL] * 10)
    assert all(u.status == "moving" for u in updates)
    assert not any(u.roll for u in updates)


def test_a_small_change_below_the_threshold_does_not_restart_the_wait() -> None:
    noisy = ALL.copy()
    noisy[10:12, 10:12] = 255  # four pixels: camera noise, not a die
    updates = _run([EMPTY, ALL] + [ALL, noisy] * 6)
    assert [i for i, u in enumerate(updates) if u.roll] == [5]


def test_reset_forgets_the_pending_roll() -> None:
    clock = FakeClock()
    detector = SettleDetector(settle_seconds=0.3, clock=clock)
    for frame in [EMPTY, ALL]:
        detector.update(frame)
        clock.now += 0.1
    detector.reset()
    updates = []
    for _ in range(8):
        updates.append(detector.update(ALL))
        clock.now += 0.1
    assert not any(u.roll for u in updates)


def _shaded(frame: Frame, *, depth: float, reach: float = 0.45) -> Frame:
    """``frame`` with a person's soft shadow cast from the right edge over ``reach`` of it."""
    shade = np.zeros((H, W), np.float32)
    cv2.ellipse(shade, (W + 10, H // 2), (int(W * reach) + 10, int(H * 0.45)), 0, 0, 360, 1.0, -1)
    shade = np.asarray(cv2.GaussianBlur(shade, (0, 0), 6.0), np.float32)
    dimmed = frame.astype(np.float32) * (1.0 - depth * shade[:, :, None])
    return np.asarray(np.clip(dimmed, 0, 255), np.uint8)


def _lit(frame: Frame, gain: float) -> Frame:
    """``frame`` under light ``gain`` times as bright (a cloud, auto-exposure)."""
    return np.asarray(np.clip(frame.astype(np.float32) * gain, 0, 255), np.uint8)


def _passing_shadow(frame: Frame) -> list[Frame]:
    steps = [_shaded(frame, depth=0.45, reach=r) for r in (0.15, 0.3, 0.45)]
    return [*steps, *[steps[-1]] * 12, *steps[::-1], *[frame] * 8]


def _cloud_then_hand(frame: Frame) -> list[Frame]:
    dim = _lit(frame, 0.75)
    hand = dim.copy()
    draw_hand(hand, W * 0.3, H * 0.75, H * 0.5)
    ramp = [_lit(frame, 1.0 - 0.025 * k) for k in range(1, 10)]
    return [*ramp, *[dim] * 6, *[hand] * 3, *[dim] * 10]


def _exposure_settling_then_hand(frame: Frame) -> list[Frame]:
    bright = _lit(frame, 1.3)
    hand = bright.copy()
    draw_hand(hand, W * 0.3, H * 0.75, H * 0.5)
    return [*[hand] * 3, *[_lit(frame, 1.3 - 0.03 * k) for k in range(11)], *[frame] * 8]


@pytest.mark.parametrize(
    "disturbance",
    [_passing_shadow, _cloud_then_hand, _exposure_settling_then_hand],
    ids=["a shadow comes, stays, goes", "a cloud, then a hand", "auto-exposure after a hand"],
)
def test_light_that_changes_over_still_dice_is_not_a_new_roll(
    disturbance: Callable[[Frame], list[Frame]],
) -> None:
    updates = _run([EMPTY, ALL] + [ALL] * 8 + disturbance(ALL))
    assert [i for i, u in enumerate(updates) if u.roll] == [5]


@pytest.mark.parametrize(
    "disturbance", [_passing_shadow, _cloud_then_hand], ids=["a shadow", "a cloud, then a hand"]
)
def test_light_that_changes_over_dice_lying_there_when_watching_starts_is_no_roll(
    disturbance: Callable[[Frame], list[Frame]],
) -> None:
    updates = _run([ALL] * 8 + disturbance(ALL))
    assert not any(u.roll for u in updates)


@pytest.mark.parametrize(
    ("light", "expected"),
    [(lambda f: _shaded(f, depth=0.45), [5, 17]), (lambda f: _lit(f, 0.75), [5, 17])],
    ids=["under a shadow", "under a cloud"],
)
def test_dice_moved_under_other_light_make_a_new_roll(
    light: Callable[[Frame], Frame], expected: list[int]
) -> None:
    hand = light(MOVED)
    draw_hand(hand, W * 0.3, H * 0.75, H * 0.5)
    updates = _run([EMPTY, ALL] + [ALL] * 8 + [hand] * 3 + [light(MOVED)] * 10)
    assert [i for i, u in enumerate(updates) if u.roll] == expected


def _flickering(frames: Sequence[Frame], depth: float) -> list[Frame]:
    """``frames`` under a lamp that flickers on mains power, seen by a rolling shutter with an
    exposure shorter than the flicker: 2.3 horizontal bands, the light 1 +- ``depth`` times its
    mean, at another place in every frame (a camera's frames do not keep time with the mains)."""
    rng = np.random.default_rng(7)
    rows = np.arange(H, dtype=np.float32)[:, None, None]
    out = []
    for frame in frames:
        phase = rng.uniform(0.0, 2.0 * np.pi)
        bands = 1.0 + depth * np.sin(2.0 * np.pi * 2.3 * rows / H + phase)
        out.append(to_levels(to_linear(frame) * bands))
    return out


@pytest.mark.parametrize("depth", [0.2, 0.5])
def test_a_roll_under_a_flickering_lamp_is_reported_once(depth: float) -> None:
    # Before rows were compared by their own light, 0.2 kept the tray moving for ever.
    updates = _run(_flickering([EMPTY] * 3 + [SOME, ALL] + [ALL] * 12, depth))
    assert [i for i, u in enumerate(updates) if u.roll] == [8]
    assert all(u.status == "settled" for u in updates[8:])
    empty = _run(_flickering([EMPTY] * 10, depth))
    assert [u.status for u in empty[4:]] == ["empty"] * 6


@pytest.mark.parametrize("depth", [0.2, 0.5])
def test_under_a_flickering_lamp_moving_dice_and_hands_are_still_seen(depth: float) -> None:
    rolling = _run(_flickering([SOME, ALL] * 10, depth))
    assert all(u.status == "moving" for u in rolling)
    moved = _run(_flickering([EMPTY, ALL] + [ALL] * 8 + [HAND] * 3 + [MOVED] * 10, depth))
    assert all(u.hand for u in moved[10:13])
    assert [i for i, u in enumerate(moved) if u.roll] == [5, 17]


def _faint(dice: Sequence[DieSpec], tray: tuple[int, int, int] = (28, 28, 28)) -> Frame:
    """Dice of the tray's own colour, black on black felt: only their pips show."""
    body = [
        DieSpec(d.value, d.cx, d.cy, d.side, d.angle, body=tray, pip=(235, 235, 235)) for d in dice
    ]
    return make_frame(W, H, body, tray=tray, seed=4)


BLACK_TRAY = make_frame(W, H, (), tray=(28, 28, 28), seed=4)
FAINT = _faint(DICE)
FAINT_MOVED = _faint([*DICE[:5], DieSpec(DICE[5].value, W * 0.9, H * 0.15, DICE[5].side)])


def _boxes(dice: Sequence[DieSpec]) -> list[tuple[int, int, int, int]]:
    return [d.box for d in dice]


def test_dice_of_the_trays_colour_are_asked_about_not_called_empty() -> None:
    """Black dice on black felt barely stand out here: the detector does not call the tray
    empty on its own but asks once, when it comes to rest after the change; what the reader
    says then decides the frames after it."""
    clock = FakeClock()
    detector = SettleDetector(settle_seconds=0.5, clock=clock)

    def watch(frames: Sequence[Frame]) -> list[SettleUpdate]:
        updates = []
        for frame in frames:
            updates.append(detector.update(frame))
            clock.now += 0.125
        return updates

    updates = watch([BLACK_TRAY] * 3 + [FAINT] * 8)
    assert updates[-1].occupancy < detector.empty_fraction  # the mask alone sees nothing
    assert [i for i, u in enumerate(updates) if u.check] == [7]
    assert not any(u.roll for u in updates)
    assert detector.saw_dice(_boxes(DICE))  # the reader saw six dice: a roll
    assert {u.status for u in watch([FAINT] * 4)} == {"settled"}
    # A hand that leaves them as they lay: asked again, the same dice, no new roll.
    updates = watch([HAND] * 3 + [FAINT] * 8)
    assert sum(u.check for u in updates) == 1
    assert not detector.saw_dice(_boxes(DICE))
    # One die thrown again: a new roll.
    updates = watch([HAND] * 3 + [FAINT_MOVED] * 8)
    assert sum(u.check for u in updates) == 1
    moved = [*DICE[:5], DieSpec(DICE[5].value, W * 0.9, H * 0.15, DICE[5].side)]
    assert detector.saw_dice(_boxes(moved))
    # The dice picked up: asked, none read, the tray is empty.
    updates = watch([HAND] * 3 + [BLACK_TRAY] * 8)
    assert sum(u.check for u in updates) == 1
    detector.saw_empty()
    assert {u.status for u in watch([BLACK_TRAY] * 4)} == {"empty"}


def test_an_empty_tray_at_rest_is_asked_about_once_per_change() -> None:
    """The question costs a reading: never on frames that are only still."""
    updates = _run([EMPTY] * 12 + [HAND] * 2 + [EMPTY] * 12)
    assert sum(u.check for u in updates) == 1


def test_dice_of_the_trays_colour_thrown_beside_others_are_asked_about() -> None:
    """Three white dice and three black ones on black felt: the black ones thrown again, the
    white ones left lying. What stands out lies as it did, but the tray changed where the mask
    sees nothing: the detector asks, and the reader's places say it is a new roll."""
    clock = FakeClock()
    detector = SettleDetector(settle_seconds=0.5, clock=clock)
    white = [DieSpec(d.value, d.cx, d.cy, d.side, d.angle) for d in DICE[:3]]
    black = [
        DieSpec(d.value, d.cx, d.cy, d.side, d.angle, body=(28, 28, 28), pip=(235,) * 3)
        for d in DICE[3:]
    ]
    thrown = [
        DieSpec(d.value, d.cx - 30, d.cy + 20, d.side, d.angle + 20, body=d.body, pip=d.pip)
        for d in black
    ]
    first = make_frame(W, H, [*white, *black], tray=(28, 28, 28), seed=4)
    again = make_frame(W, H, [*white, *thrown], tray=(28, 28, 28), seed=4)
    updates = []
    for frame in [BLACK_TRAY] * 3 + [first] * 8 + [again] * 8:
        updates.append(detector.update(frame))
        clock.now += 0.125
        if updates[-1].roll:
            detector.read(_boxes([*white, *black]))
    assert [i for i, u in enumerate(updates) if u.roll] == [7]
    assert [i for i, u in enumerate(updates) if u.check] == [15]
    assert detector.saw_dice(_boxes([*white, *thrown]))


def _noisy(frame: Frame, seed: int, sigma: float = 2.0) -> Frame:
    """``frame`` as a sensor sees it again: a little noise on every pixel."""
    noise = np.random.default_rng(seed).normal(0.0, sigma, frame.shape)
    return np.clip(frame + noise, 0, 255).astype(np.uint8)


BIG_DICE = six_dice(1280, 960, seed=2)
BIG_EMPTY = make_frame(1280, 960, (), tray="green", seed=4)
BIG_ALL = make_frame(1280, 960, BIG_DICE, tray="green", seed=4)


SEQUENCES = {
    "a roll": [EMPTY] * 3 + [SOME, ALL] + [ALL] * 12,
    "a hand that leaves the dice": [EMPTY, ALL] + [ALL] * 8 + [HAND] * 3 + [ALL] * 8,
    "dice moved": [EMPTY, ALL] + [ALL] * 8 + [HAND, MOVED] + [MOVED] * 8,
    "a passing shadow": [EMPTY, ALL] + [ALL] * 8 + _passing_shadow(ALL) + [ALL] * 8,
    "a noisy sensor": [_noisy(f, i) for i, f in enumerate([BIG_EMPTY] * 3 + [BIG_ALL] * 10)],
    "a die of faint contrast put down": [EMPTY] * 3
    + [make_frame(W, H, [DieSpec(3, W * 0.5, H * 0.5, 24.0, body=(60, 150, 60))], seed=4)] * 8,
    "dice of the tray's colour": [BLACK_TRAY] * 3 + [FAINT] * 8 + [FAINT_MOVED] * 8,
}


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_a_still_frame_keeps_the_foreground_and_says_the_same(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The foreground is found again only where a frame moved past ``still_levels``, and the
    detector says frame by frame what it says when it finds it in every frame."""
    import vision.settle
    from vision.locate import foreground_mask as real

    found = 0

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal found
        found += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(vision.settle, "foreground_mask", counted)
    frames = SEQUENCES[name]
    said = []
    for levels in (None, vision.settle.STILL_LEVELS):
        clock = FakeClock()
        detector = SettleDetector(settle_seconds=0.5, clock=clock, still_levels=levels)
        updates = []
        for frame in frames:
            update = detector.update(frame)
            updates.append((update.status, update.roll, update.hand, update.check))
            clock.now += 0.125
        said.append(updates)
        if levels is None:
            assert found == len(frames)
        else:
            distinct = sum(
                1 for i, f in enumerate(frames) if i == 0 or not np.array_equal(f, frames[i - 1])
            )
            # The noisy frames differ one from the next, yet within the levels once shrunk.
            assert found <= (distinct if name != "a noisy sensor" else 2)
        found = 0
    assert said[0] == said[1]
