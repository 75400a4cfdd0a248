"""Whole games at a table: recorded frames, the real reader and model, MockFactory buttons,
the real store and the real HTTP server.

The frames are rendered by the same recorder that makes the embedded demo (pipcam.recording); the
camera loop sees each frame for as long as the script says, on a fake clock, so the settle
detector decides when a roll is over exactly as it does at a real table.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from gpiozero.pins.mock import MockFactory

from device.keyboard import press
from device.panel import Panel
from device.pins import PinMap
from pipcam.config import Config
from pipcam.photos import PhotoKeeper, export_photos
from pipcam.recording import Scene, demo_folder, load_script, render_scenes
from pipcam.run import CameraLoop, make_reader
from pipcam.store import Store
from pipcam.table import Table
from vision.calibrate import Calibration
from vision.evaluate import box_reader, evaluate_folder
from vision.source import read_image
from web.app import create_app

FRAME_STEP = 0.1  # seconds of fake time per captured frame


class FakeClock:
    """Time that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def server_for() -> Iterator[Any]:
    """Serve a table over real HTTP on loopback; stopped after the test."""
    servers: list[tuple[uvicorn.Server, threading.Thread]] = []

    def serve(table: Table) -> str:
        port = free_port()
        config = uvicorn.Config(
            create_app(table, pin="0000"), host="127.0.0.1", port=port, log_level="warning"
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        servers.append((server, thread))
        return f"http://127.0.0.1:{port}"

    yield serve
    for server, thread in servers:
        server.should_exit = True
        thread.join(10)


def play_recording(
    folder: Path, store: Store, keep_photo: Callable[[int, Any, Any], object] | None = None
) -> Table:
    """Play a recording through the camera loop and the panel's buttons; return the table."""
    header, calibration, steps = load_script(folder)
    clock = FakeClock()
    table = Table(store, clock=clock)
    table.new_game(header)
    factory = MockFactory()
    pressed: list[str] = []

    def on_button(name: str) -> None:
        pressed.append(name)
        table.press(name)

    reader = make_reader(
        Config(), None if calibration is None else Calibration.from_json(calibration)
    )
    with Panel(PinMap(), pin_factory=factory, on_button=on_button, clock=clock) as panel:
        loop = CameraLoop(
            lambda: None, table, reader, settle_seconds=0.6, clock=clock, keep_photo=keep_photo
        )
        for step in steps:
            if step.press is not None:
                press(panel, step.press)
                continue
            assert step.frame is not None
            frame = read_image(folder / step.frame)
            for _ in range(max(1, round(step.seconds / FRAME_STEP))):
                clock.now += FRAME_STEP
                loop.step(frame)
            problem = table.view.problem
            assert not problem, f"after {step.frame}: {problem}"
    factory.close()
    assert pressed == [s.press for s in steps if s.press is not None]
    return table


def record(tmp_path: Path, header: dict[str, Any], plan: Sequence[Scene | str]) -> Path:
    """Render a recording into a fresh folder."""
    folder = tmp_path / "recording"
    render_scenes(folder, header, plan, seed=3)
    return folder


def test_kymppitonni_whole_game(tmp_path: Path, server_for: Any) -> None:
    """Ann sets dice aside, banks, holds the break and reaches the target; Bob busts last."""
    plan: list[Scene | str] = [
        Scene([1, 1, 5, 2, 3, 4]),
        Scene([2, 3, 4], aside=[1, 1, 5]),  # 1 1 5 taken out of the roll zone: a keep
        Scene([5, 2, 6], aside=[1, 1, 5]),
        "confirm",  # the best set-aside: the 5
        "bank",  # Ann 300
        Scene([2, 2, 2, 2, 3, 6]),  # Bob: four 2s, the turn passes with 0
        Scene([1, 1, 1, 5, 5, 5]),
        Scene([], aside=[1, 1, 1, 5, 5, 5]),  # every die set aside: hot dice
        Scene([3, 3, 4, 4, 6, 6]),
        "confirm",
        "bank",  # Ann 300 + 1500 + 2000 = 3800: over the target, and she holds the break
        Scene([2, 2, 3, 4, 6, 6]),  # Bob's equalizing turn: no combination
    ]
    header = {"game": "kymppitonni", "players": ["Ann", "Bob"], "options": {"target": 3000}}
    folder = record(tmp_path, header, plan)
    with Store(tmp_path / "pipcam.db") as store:
        table = play_recording(folder, store)
        base = server_for(table)
        state = httpx.get(f"{base}/api/state", timeout=5).json()
        transcript = httpx.get(f"{base}/api/transcript", timeout=5).text
    assert state["players"] == [{"name": "Ann", "score": 3800}, {"name": "Bob", "score": 0}]
    assert state["finished"] is True
    assert state["winners"] == ["Ann"]
    assert state["break"]["holder"] == "Ann"
    assert transcript.count('"roll"') == 6
    assert transcript.count('"keep"') == 4


def test_the_embedded_recording_plays_the_game_it_tells(tmp_path: Path) -> None:
    """`make run` without a Pi camera plays the embedded recording: read by the real reader,
    it is the game pipcam.recording's DEMO_PLAN tells, action for action."""
    with Store(tmp_path / "pipcam.db") as store:
        table = play_recording(demo_folder(), store)
        transcript = table.transcript()
    actions = [json.loads(line) for line in transcript.splitlines()[1:]]
    assert actions == [
        {"roll": [1, 1, 2, 3, 4, 5]},
        {"keep": [1, 1, 5]},  # the dice left in the zone lie where they lay: no throw
        {"roll": [2, 3, 5]},
        {"keep": [5]},
        {"bank": True},  # Ann 300
        {"roll": [2, 2, 2, 2, 3, 6]},  # Bob: four 2s
        {"roll": [1, 1, 1, 5, 5, 5]},
        {"keep": [1, 1, 1, 5, 5, 5]},  # hot dice
        {"roll": [3, 3, 4, 4, 6, 6]},
        {"keep": [3, 3, 4, 4, 6, 6]},  # confirm: three pairs
        {"bank": True},  # Ann 300 + 1500 + 2000 = 3800
        {"roll": [2, 3, 3, 4, 6, 6]},  # Bob: nothing scores
        {"roll": [1, 2, 3, 4, 5, 6]},
        {"keep": [1, 2, 3, 4, 5, 6]},  # confirm: the straight
        {"bank": True},  # Ann 4800: over the target
        {"roll": [2, 2, 3, 4, 6, 6]},  # Bob's equalizing turn: nothing scores
    ]
    state = table.state_json()
    assert [p["score"] for p in state["players"]] == [4800, 0]
    assert state["winners"] == ["Ann"]


def test_general_whole_game(tmp_path: Path, server_for: Any) -> None:
    """Thirteen turns of Generał: throws, re-throws with held dice, and the confirm button."""
    plan: list[Scene | str] = []
    throws = [
        [1, 1, 1, 3, 5],
        [2, 2, 2, 1, 4],
        [3, 3, 6, 3, 3],
        [4, 4, 4, 5, 6],
        [1, 2, 3, 5, 5],
        [2, 3, 6, 6, 6],
        [2, 3, 4, 4, 4],
        [4, 5, 5, 5, 5],
        [2, 2, 5, 5, 5],
        [1, 3, 4, 5, 6],
        [2, 3, 4, 5, 6],
        [2, 2, 2, 2, 2],
        [2, 3, 4, 4, 6],
    ]
    for turn, dice in enumerate(throws):
        if turn == 11:
            # Generał in two throws: hold four 2s, throw the fifth die again.
            plan += [Scene([2, 2, 2, 2, 6]), Scene([6], aside=[2, 2, 2, 2])]
            plan.append(Scene([2], aside=[2, 2, 2, 2]))
        else:
            plan.append(Scene(dice))
        plan.append("confirm")
        # Bob (RULES §2.1: 2+ players) throws other dice and writes his best box.
        plan += [Scene([d % 6 + 1 for d in dice]), "confirm"]
    header = {"game": "general", "players": ["Ann", "Bob"], "options": {}}
    folder = record(tmp_path, header, plan)
    with Store(tmp_path / "pipcam.db") as store:
        table = play_recording(folder, store)
        base = server_for(table)
        state = httpx.get(f"{base}/api/state", timeout=5).json()
    assert state["finished"] is True
    boxes = state["sheets"][0]["columns"][0]["boxes"]
    assert None not in boxes.values()
    assert boxes["general"] == 50  # the held 2s and the re-thrown die made a Generał
    assert state["players"][0]["score"] == sum(boxes.values())
    # 13 throws and 13 boxes each, and Ann's one hold and one re-throw
    assert state["actions"] == 2 * (13 + 13) + 2


def test_general_holds_made_as_the_others_are_thrown(tmp_path: Path) -> None:
    """Generał: the dice to hold taken out of the roll zone as the others are thrown, with no
    still tray between; the real reader sees the dice arrive out of the zone, and the table
    takes the hold and the throw."""
    plan: list[Scene | str] = [
        Scene([6, 6, 1, 2, 3]),
        Scene([6, 4, 1], aside=[6, 6]),  # 6 6 held, three thrown
        Scene([5, 6], aside=[6, 6, 6]),  # a third 6 held, two thrown
        "confirm",
    ]
    header = {"game": "general", "players": ["Ann", "Bob"], "options": {}}
    folder = record(tmp_path, header, plan)
    with Store(tmp_path / "pipcam.db") as store:
        table = play_recording(folder, store)
        transcript = table.transcript()
    actions = [json.loads(line) for line in transcript.splitlines()[1:]]
    assert actions[:5] == [
        {"roll": [1, 2, 3, 6, 6]},
        {"keep": [6, 6]},
        {"roll": [1, 4, 6]},
        {"keep": [6, 6, 6]},
        {"roll": [5, 6]},
    ]
    assert len(actions) == 6
    assert "score" in actions[5]


def test_kept_photos_export_as_labelled_data_the_evaluator_reads(tmp_path: Path) -> None:
    """`pipcam run --keep-photos` then `pipcam photos`: every settled frame of a game comes out
    labelled with the dice that were on it (roll zone and set aside), in the shared data format
    that `pipcam eval` and training read."""
    plan: list[Scene | str] = [
        Scene([1, 1, 5, 2, 3, 4]),
        Scene([2, 3, 4], aside=[1, 1, 5]),
        Scene([6, 6, 2], aside=[1, 1, 5]),
    ]
    header = {"game": "kymppitonni", "players": ["Ann", "Bob"], "options": {}}
    folder = record(tmp_path, header, plan)
    photos = tmp_path / "data" / "photos"
    with Store(tmp_path / "pipcam.db") as store:
        play_recording(folder, store, keep_photo=PhotoKeeper(photos).keep)
        out = tmp_path / "export" / "mytable"
        summary = export_photos(store, photos, out)
    assert summary.photos == len(plan)
    assert summary.flagged == 0
    records = [json.loads(line) for line in (out / "labels.jsonl").read_text().splitlines()]
    for scene, rec in zip(plan, records, strict=True):
        assert isinstance(scene, Scene)
        assert sorted(d["value"] for d in rec["dice"] if not d.get("set_aside")) == sorted(
            scene.rolled
        )
        assert sorted(d["value"] for d in rec["dice"] if d.get("set_aside")) == sorted(scene.aside)
        assert (out / rec["image"]).is_file()
    report = evaluate_folder(out, box_reader(make_reader(Config(), None)))
    assert report.images == len(plan)
    assert report.recall == 1.0
    assert report.precision == 1.0
