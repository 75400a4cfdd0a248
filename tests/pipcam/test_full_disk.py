"""A full disk: the table says so (phones, attention LED), keeps the game as it was, and goes on
when space is freed; the camera loop keeps running and stores the roll once it can."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipcam.run import CameraLoop, led_status
from pipcam.store import Store, StoreError
from pipcam.table import Table
from scoring.core import Keep, Roll
from scoring.errors import refusal_json
from tests.pipcam._fakes import FakeDie, FakeReading
from tests.web.test_api import PIN
from tests.web.test_api_more import serving
from vision.settle import SettleUpdate


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A real SQLite store in a temporary folder."""
    with Store(tmp_path / "pipcam.db") as s:
        yield s


def full_message(store: Store) -> str:
    return (
        f"the disk of the game store {store.path} is full (database or disk is full); "
        "free some space and try again"
    )


class Disk:
    """Makes the store's disk full (every write fails as SQLite fails on a full disk: its
    SQLITE_FULL error) and frees it again; reading goes on."""

    def __init__(self, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full = False
        real = store._transaction

        @contextlib.contextmanager
        def transaction(*, write: bool) -> Iterator[Any]:
            if write and self.full:
                error = sqlite3.OperationalError("database or disk is full")
                error.sqlite_errorname = "SQLITE_FULL"
                raise store._failure(error) from error
            with real(write=write) as db:
                yield db

        monkeypatch.setattr(store, "_transaction", transaction)


@pytest.fixture
def disk(store: Store, monkeypatch: pytest.MonkeyPatch) -> Disk:
    return Disk(store, monkeypatch)


def kymppi(store: Store) -> Table:
    table = Table(store)
    table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    return table


def test_an_action_on_a_full_disk_is_refused_said_and_taken_once_space_is_freed(
    store: Store, disk: Disk
) -> None:
    table = kymppi(store)
    table.act(Roll([1, 1, 5, 2, 3, 4]), source="phone")
    disk.full = True
    with pytest.raises(StoreError) as caught:
        table.act(Keep([1, 1, 5]), source="phone")
    assert str(caught.value) == full_message(store)
    state = table.state_json()
    assert state["actions"] == 1  # the game as it was
    assert state["table"]["problem"] == full_message(store)
    assert led_status(state) == "attention"
    disk.full = False
    table.act(Keep([1, 1, 5]), source="phone")
    assert table.state_json()["table"]["problem"] == ""
    assert [e.kind for e in store.events(table.game_id or 0)] == ["action", "action"]


def test_a_button_on_a_full_disk_blinks_attention_instead_of_a_traceback(
    store: Store, disk: Disk
) -> None:
    table = kymppi(store)
    table.act(Roll([1, 1, 5, 2, 3, 4]), source="phone")
    disk.full = True
    assert table.press("confirm") is None
    state = table.state_json()
    assert state["actions"] == 1
    assert state["table"]["problem"] == full_message(store)
    assert led_status(state) == "attention"
    disk.full = False
    table.press("confirm")
    state = table.state_json()
    assert (state["actions"], state["table"]["problem"]) == (2, "")


def test_phones_get_the_stores_message_with_503(store: Store, disk: Disk) -> None:
    table = kymppi(store)
    with (
        serving(table, unavailable=(StoreError,)) as base,
        httpx.Client(base_url=base, headers={"X-Table-Pin": PIN}) as client,
    ):
        disk.full = True
        r = client.post("/api/actions", json={"roll": [1, 1, 5, 2, 3, 4]})
        # The English for the log and API clients; the code the phones word in their language.
        refused = {"detail": full_message(store), "code": "disk_full", "params": {}}
        assert (r.status_code, r.json()) == (503, refused)
        problem = client.get("/api/state").json()["table"]
        assert (problem["problem"], problem["problem_code"]) == (full_message(store), "disk_full")
        disk.full = False
        r = client.post("/api/actions", json={"roll": [1, 1, 5, 2, 3, 4]})
        assert r.status_code == 200
        assert r.json()["table"]["problem"] == ""


class ScriptedSettle:
    """A settle detector that reports what the test says."""

    touched = None  # where the tray changed while the dice moved: not known here

    def __init__(self) -> None:
        self.next = SettleUpdate(
            status="settled", roll=True, hand=False, motion=0, occupancy=0, still_for=1
        )

    def update(self, _frame: Any) -> SettleUpdate:
        update = self.next
        self.next = SettleUpdate(
            status=update.status, roll=False, hand=False, motion=0, occupancy=0, still_for=1
        )
        return update

    def read(self, _dice: Any) -> None:
        """Where the reader found the dice: these tests never ask again."""


class SixDice:
    def read(self, _frame: Any, *, status: str) -> FakeReading:
        return FakeReading(tuple(FakeDie(v) for v in (1, 1, 5, 2, 3, 4)), status=status)


def _camera_loop(table: Table, now: list[float]) -> tuple[CameraLoop, ScriptedSettle]:
    """A camera loop over six dice that settle at once, on the clock ``now[0]``."""
    loop = CameraLoop(
        lambda: None, table, SixDice(), settle_seconds=0.5, retry=2.0, clock=lambda: now[0]
    )
    settle = ScriptedSettle()
    loop.settle = settle  # type: ignore[assignment]
    return loop, settle


def test_the_camera_loop_goes_on_and_stores_the_roll_once_space_is_freed(
    store: Store, disk: Disk
) -> None:
    table = kymppi(store)
    now = [0.0]
    loop, _ = _camera_loop(table, now)
    disk.full = True
    loop.step(None)  # the roll settles: the store cannot keep it
    state = table.state_json()
    assert (state["actions"], state["table"]["problem"]) == (0, full_message(store))
    disk.full = False
    now[0] = 1.0
    loop.step(None)  # not tried again before `retry` seconds
    assert table.state_json()["actions"] == 0
    now[0] = 2.5
    loop.step(None)  # the dice still lie there: read and stored now
    state = table.state_json()
    assert (state["actions"], state["table"]["problem"]) == (1, "")
    now[0] = 10.0
    loop.step(None)  # stored once, not again
    assert table.state_json()["actions"] == 1


def test_a_roll_the_store_could_not_keep_is_dropped_when_the_dice_move(
    store: Store, disk: Disk
) -> None:
    table = kymppi(store)
    now = [0.0]
    loop, settle = _camera_loop(table, now)
    disk.full = True
    loop.step(None)
    disk.full = False
    settle.next = SettleUpdate(
        status="moving", roll=False, hand=True, motion=1, occupancy=1, still_for=0
    )
    loop.step(None)
    settle.next = SettleUpdate(
        status="settled", roll=False, hand=False, motion=0, occupancy=0, still_for=1
    )
    now[0] = 5.0
    loop.step(None)  # the same tray again (the detector reports no roll): nothing read
    assert table.state_json()["actions"] == 0


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("SQLITE_FULL", "disk_full"),
        ("SQLITE_READONLY_DBMOVED", "store_read_only"),
        ("SQLITE_CANTOPEN", "store_read_only"),
        ("SQLITE_BUSY", "store_busy"),
        ("SQLITE_CORRUPT", "store_damaged"),
        ("SQLITE_NOTADB", "store_damaged"),
        ("SQLITE_IOERR_WRITE", "store_failed"),
    ],
)
def test_each_failure_of_the_store_carries_the_code_the_phones_word(
    store: Store, name: str, code: str
) -> None:
    """The English message (path, command) is for the log; the phones word the code."""
    error = sqlite3.OperationalError("it failed")
    error.sqlite_errorname = name
    failure = store._failure(error)
    said = refusal_json(failure.reason)
    assert (said["detail"], said["code"]) == (str(failure), code)
    assert str(store.path) in str(failure)
