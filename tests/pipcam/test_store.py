"""The game store: round trips, resume with undo/redo, transcripts, damaged files and threads."""

from __future__ import annotations

import contextlib
import copy
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipcam.store import (
    SCHEMA_VERSION,
    GameFinished,
    NoSuchGame,
    Store,
    StoredGame,
    StoreError,
    replay_events,
)
from scoring.core import JSON, Action, Bank, Keep, Roll, action_to_json
from scoring.errors import UnknownGame
from scoring.history import History
from scoring.transcript import dump, parse_header, replay, start

HEADER: dict[str, JSON] = {
    "game": "kymppitonni",
    "players": ["Ann", "Bob"],
    "options": {"target": 3000},
}
T0 = 1_700_000_000.0  # 2023-11-14T22:13:20 UTC


class FakeClock:
    """Half a second later at every call."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        t = self.now
        self.now += 0.5
        return t


def redo_stack(history: History[Any]) -> list[Action]:
    """The actions a redo would take again, in order, without touching ``history``."""
    scratch = copy.deepcopy(history)
    out: list[Action] = []
    while scratch.can_redo():
        out.append(scratch.redo())
    return out


def snapshot(history: History[Any]) -> tuple[Any, list[Action], list[Action]]:
    """Everything a resume must restore: the state, the actions in effect and the redo stack."""
    return history.state, history.actions, redo_stack(history)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Where the store lives: a folder that does not exist yet."""
    return tmp_path / "data" / "pipcam.db"


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    """An open store with a fake clock."""
    with Store(db, clock=FakeClock()) as s:
        yield s


def play(store: Store, game_id: int, history: History[Any], events: list[Any]) -> None:
    """Take events (actions, "undo", "redo") in the history and log each, as the table does."""
    for event in events:
        if event == "undo":
            store.append(game_id, "undo", None, source="button")
            history.pop()
        elif event == "redo":
            store.append(game_id, "redo", None, source="button")
            history.redo()
        else:
            store.append(game_id, "action", action_to_json(event), source="camera")
            history.push(event)


# A first turn of Ann with a mistaken keep undone and replaced, a bank undone and redone, then
# Bob's turn begun and its last two actions undone (so the redo stack holds two actions).
EVENTS: list[Any] = [
    Roll([2, 2, 3, 5, 5, 5]),
    Keep([5]),
    "undo",
    Keep([5, 5, 5]),
    Roll([1, 4, 6]),
    Keep([1]),
    Bank(),
    "undo",
    "redo",
    Roll([4, 4, 4, 5, 5, 6]),
    Keep([4, 4, 4, 5, 5]),
    "undo",
    "undo",
]


# -- round trips and resume -------------------------------------------------------------------


def test_new_game_round_trip(store: Store) -> None:
    """The header, players, options and events come back as stored, with UTC times."""
    game_id = store.new_game(HEADER)
    assert store.append(game_id, "action", {"roll": [5, 3, 2, 2, 5, 5]}, source="camera") == 1
    assert store.append(game_id, "action", {"keep": [5, 5, 5]}, source="phone") == 2
    assert store.append(game_id, "undo", None, source="button") == 3
    assert store.current_game() == StoredGame(
        game_id,
        HEADER,
        [("action", {"roll": [2, 2, 3, 5, 5, 5]}), ("action", {"keep": [5, 5, 5]}), ("undo", None)],
    )
    events = store.events(game_id)
    assert [(e.seq, e.source, e.time) for e in events] == [
        (1, "camera", "2023-11-14T22:13:20.500+00:00"),
        (2, "phone", "2023-11-14T22:13:21.000+00:00"),
        (3, "button", "2023-11-14T22:13:21.500+00:00"),
    ]
    (summary,) = store.games()
    assert (summary.id, summary.game, summary.players) == (game_id, "kymppitonni", ("Ann", "Bob"))
    assert (summary.started, summary.finished, summary.events) == (
        "2023-11-14T22:13:20.000+00:00",
        None,
        3,
    )


def test_replace_last_is_an_undo_and_an_action_in_one_commit(store: Store) -> None:
    """A grown set-aside takes the last one's place: both events or neither."""
    game_id = store.new_game(HEADER)
    with pytest.raises(ValueError, match="nothing to undo"):
        store.replace_last(game_id, {"keep": [1]}, source="camera")
    assert store.current_game() == StoredGame(game_id, HEADER, [])
    store.append(game_id, "action", {"roll": [1, 5, 2, 3, 4, 6]}, source="camera")
    store.append(game_id, "action", {"keep": [1]}, source="camera")
    assert store.replace_last(game_id, {"keep": [1, 5]}, source="camera") == 4
    assert list(store.game(game_id).events[1:]) == [
        ("action", {"keep": [1]}),
        ("undo", None),
        ("action", {"keep": [1, 5]}),
    ]


def test_replace_last_two_is_one_commit(store: Store) -> None:
    """A set-aside and throw mended (a die had bounced out among the set-aside): two undos and
    two actions, all or nothing; more undos than actions logged are refused, nothing stored."""
    game_id = store.new_game(HEADER)
    store.append(game_id, "action", {"roll": [1, 5, 2, 3, 4, 6]}, source="camera")
    with pytest.raises(ValueError, match="nothing to undo"):
        store.replace_last(game_id, {"keep": [1]}, {"roll": [2, 2, 3, 4, 6]}, undone=2, source="x")
    assert len(store.game(game_id).events) == 1
    store.append(game_id, "action", {"keep": [1, 5]}, source="camera")
    store.append(game_id, "action", {"roll": [2, 3, 6, 6]}, source="camera")
    seq = store.replace_last(
        game_id, {"keep": [1]}, {"roll": [2, 3, 5, 6, 6]}, undone=2, source="camera"
    )
    events = store.game(game_id).events
    assert seq == len(events)
    assert list(events[2:]) == [
        ("action", {"roll": [2, 3, 6, 6]}),
        ("undo", None),
        ("undo", None),
        ("action", {"keep": [1]}),
        ("action", {"roll": [2, 3, 5, 6, 6]}),
    ]
    assert replay_events(store.game(game_id)).actions[1:] == [Keep([1]), Roll([2, 3, 5, 6, 6])]
    with pytest.raises(ValueError, match="undoes one action or more"):
        store.replace_last(game_id, undone=1, source="camera")


def test_a_reading_keeps_the_dice_out_of_the_zone_and_a_correction_may_name_one(
    store: Store,
) -> None:
    """The dice seen out of the roll zone are kept with the reading, numbered after the zone's:
    a correction may name one (a set-aside die misread). It labels no photo: the reading's own
    dice stay as the zone's were read."""
    game_id = store.new_game(HEADER)
    zone = [
        {"value": v, "confidence": 0.9, "status": "ok", "box": [60 * v, 0, 60 * v + 40, 40]}
        for v in (2, 3)
    ]
    out = [{"value": 1, "confidence": 0.8, "status": "ok", "box": [900, 0, 940, 40]}]
    rid = store.record_reading(game_id, zone, status="settled", aside=out)
    with pytest.raises(ValueError, match="has 3 dice; there is no die 3"):
        store.record_correction(rid, 3, 5, events=[], source="phone")
    fix = store.record_correction(rid, 2, 5, events=[], source="phone")
    assert [d["value"] for d in fix.replaced] == [2, 3, 1]
    (reading,) = store.readings()
    assert ([d["value"] for d in reading.dice], reading.corrected) == ([2, 3], ())
    store.record_correction(rid, 0, 4, events=[], source="phone")
    (reading,) = store.readings()
    assert ([d["value"] for d in reading.dice], reading.corrected) == ([4, 3], (0,))
    # Its photo draws every die as corrected, those out of the zone included.
    zone_now, out_now = store.dice(rid)
    assert ([d["value"] for d in zone_now], [d["value"] for d in out_now]) == ([4, 3], [5])
    with pytest.raises(LookupError, match=f"there is no reading {rid + 1}"):
        store.dice(rid + 1)


def test_a_doubt_stands_over_what_was_said_before_and_a_word_since_settles_it(
    store: Store,
) -> None:
    """A fix of the throw doubts dice 0 and 1 after die 0 was corrected by hand: the doubt
    stands. The camera's second look settles nothing; a person's correction or teach-sheet
    answer settles each."""
    game_id = store.new_game(HEADER)
    dice = [
        {"value": 2, "confidence": 0.97, "status": "ok", "box": [60 * i, 0, 60 * i + 40, 40]}
        for i in range(3)
    ]
    rid = store.record_reading(game_id, dice, status="settled")
    store.record_correction(rid, 0, 4, events=[], source="phone")
    for die in (0, 1):
        store.record_doubted(rid, die, source="phone")
    assert store.doubted() == {rid: {0, 1}}
    store.record_correction(rid, 0, 5, events=[], source="camera")
    assert store.doubted() == {rid: {0, 1}}
    store.record_correction(rid, 0, 5, events=[], source="phone")
    assert store.doubted() == {rid: {1}}
    store.record_check(rid, 1, 3, source="phone")
    assert store.doubted() == {}
    with pytest.raises(LookupError, match=f"there is no reading {rid + 1}"):
        store.record_doubted(rid + 1, 0, source="phone")


def test_players_and_options_are_queryable(store: Store, db: Path) -> None:
    """Players and options are rows of their own, not only header JSON."""
    first = store.new_game(HEADER)
    second = store.new_game({"game": "sekvence", "players": ["Cid", "Ann", "Dee"]})
    with contextlib.closing(sqlite3.connect(db)) as con:
        ann = con.execute(
            "SELECT game, seat FROM players WHERE name = 'Ann' ORDER BY game"
        ).fetchall()
        options = con.execute("SELECT game, name, value FROM options").fetchall()
    assert ann == [(first, 0), (second, 1)]
    assert options == [(first, "target", "3000")]


def test_resume_after_reopen_gives_the_exact_history(db: Path) -> None:
    """Close, reopen, replay: same state, same actions in effect, same redo stack."""
    with Store(db) as store:
        game_id = store.new_game(HEADER)
        live = start(parse_header(HEADER))
        play(store, game_id, live, EVENTS)
    assert len(redo_stack(live)) == 2  # the scenario really leaves something to redo
    with Store(db) as store:
        stored = store.current_game()
    assert stored is not None
    assert stored.id == game_id
    resumed = replay_events(stored)
    assert snapshot(resumed) == snapshot(live)
    resumed.redo()
    live.redo()
    assert snapshot(resumed) == snapshot(live)


def test_a_game_stored_with_fewer_players_than_now_allowed_resumes(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-player Generał kept by an earlier version (before RULES §2.1's 2+ was enforced)
    resumes as it was; only new games are held to the count."""
    from scoring.games.general import General

    header: JSON = {"game": "general", "players": ["Ann"]}
    with monkeypatch.context() as earlier:
        earlier.setattr(General, "min_players", 1)
        with Store(db) as store:
            game_id = store.new_game(header)
            store.append(game_id, "action", action_to_json(Roll([2, 2, 5, 5, 5])), source="camera")
    with Store(db) as store:
        stored = store.current_game()
        assert stored is not None
        assert replay_events(stored).state.dice == (2, 2, 5, 5, 5)
        with pytest.raises(ValueError, match="played by 2 to 12 players, not 1"):
            store.new_game(header)


@st.composite
def event_lists(draw: st.DrawFn) -> list[Any]:
    """Legal Kymppitonni actions mixed with undo and redo wherever they are possible."""
    history = start(parse_header(HEADER))
    events: list[Any] = []
    for _ in range(draw(st.integers(0, 12))):
        choices = (
            ["act"] + (["undo"] if len(history) else []) + (["redo"] if history.can_redo() else [])
        )
        legal = history.game.legal_actions(history.state)
        if not legal:
            choices.remove("act")
        if not choices:
            break
        choice = draw(st.sampled_from(choices))
        if choice == "undo":
            history.pop()
            events.append("undo")
        elif choice == "redo":
            history.redo()
            events.append("redo")
        else:
            action = draw(st.sampled_from(legal))
            history.push(action)
            events.append(action)
    return events


@settings(max_examples=15, deadline=None)
@given(events=event_lists())
def test_resume_replays_any_log_exactly(events: list[Any]) -> None:
    """Property: whatever mix of actions, undos and redos was logged, a resume restores it."""
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "pipcam.db"
        with Store(db) as store:
            game_id = store.new_game(HEADER)
            live = start(parse_header(HEADER))
            play(store, game_id, live, events)
        with Store(db) as store:
            stored = store.game(game_id)
    assert snapshot(replay_events(stored)) == snapshot(live)


@settings(max_examples=15, deadline=None)
@given(events=event_lists())
def test_the_reading_of_each_action_in_effect_follows_undo_and_redo(events: list[Any]) -> None:
    """Property: each action logged with the reading that made it; whatever undos and redos
    followed, :meth:`Store.made` names, for each action the history replays, its reading."""
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "pipcam.db") as store:
        game_id = store.new_game(HEADER)
        made_by: dict[int, Action] = {}
        for event in events:
            if event in ("undo", "redo"):
                store.append(game_id, event, None, source="button")
                continue
            reading = store.record_reading(game_id, [], status="settled")
            made_by[reading] = event
            store.append(game_id, "action", action_to_json(event), source="camera", reading=reading)
        made = store.made(game_id)
        assert None not in made
        assert [made_by[r] for r in made if r is not None] == (
            replay_events(store.game(game_id)).actions
        )


def test_a_replacement_names_the_reading_of_each_action_it_logs(store: Store) -> None:
    """A fix of an earlier step logs it and every later step again: each keeps its reading
    (None for one typed), and the actions undone are gone from :meth:`Store.made`."""
    game_id = store.new_game(HEADER)
    first, second = (store.record_reading(game_id, [], status="settled") for _ in range(2))
    store.append(game_id, "action", {"roll": [1, 5, 2, 3, 4, 6]}, source="camera", reading=first)
    store.append(game_id, "action", {"keep": [1, 5]}, source="phone")
    store.append(game_id, "action", {"roll": [2, 3, 6, 6]}, source="camera", reading=second)
    assert store.made(game_id) == [first, None, second]
    store.replace_last(
        game_id,
        {"roll": [1, 5, 2, 3, 6, 6]},
        {"keep": [1, 5]},
        {"roll": [2, 3, 6, 6]},
        undone=3,
        source="phone",
        made=[first, None, second],
    )
    assert store.made(game_id) == [first, None, second]
    store.append(game_id, "undo", None, source="button")
    assert store.made(game_id) == [first, None]
    with pytest.raises(ValueError, match="2 readings named for 1 actions"):
        store.replace_last(game_id, {"keep": [1]}, source="x", made=[first, second])
    with pytest.raises(NoSuchGame):
        store.made(game_id + 1)


def test_transcript_replays_like_pipcam_replay(store: Store) -> None:
    """The transcript holds the actions in effect (none undone) and replays to the same state."""
    game_id = store.new_game(HEADER)
    live = start(parse_header(HEADER))
    play(store, game_id, live, EVENTS)
    text = store.transcript(game_id)
    assert text == dump(live.game, ["Ann", "Bob"], live.actions)
    assert text.splitlines() == [
        '{"game": "kymppitonni", "players": ["Ann", "Bob"], "options": {"target": 3000}}',
        '{"roll": [2, 2, 3, 5, 5, 5]}',
        '{"keep": [5, 5, 5]}',
        '{"roll": [1, 4, 6]}',
        '{"keep": [1]}',
        '{"bank": true}',
    ]
    replayed = replay(text.splitlines())
    assert replayed.state == live.state
    assert replayed.game.totals(replayed.state) == (600, 0)


def test_current_game_is_the_latest_game_while_it_is_unfinished(store: Store) -> None:
    """None before any game and after the latest is finished; a new game becomes current."""
    assert store.current_game() is None
    first = store.new_game(HEADER)
    second = store.new_game({"game": "sekvence", "players": ["Ann"]})
    current = store.current_game()
    assert current is not None
    assert current.id == second
    store.finish_game(second)
    store.finish_game(second)  # finishing twice changes nothing
    assert store.current_game() is None
    assert [g.finished is not None for g in store.games()] == [False, True]
    third = store.new_game(HEADER)
    current = store.current_game()
    assert current is not None
    assert current.id == third
    assert store.game(first).events == []


# -- what append refuses ----------------------------------------------------------------------


def test_append_to_a_finished_game_is_refused(store: Store, db: Path) -> None:
    """Nothing is logged after the end; the message says what to do."""
    game_id = store.new_game(HEADER)
    store.finish_game(game_id)
    with pytest.raises(GameFinished) as info:
        store.append(game_id, "action", {"bank": True}, source="button")
    assert str(info.value) == (
        f"game {game_id} of the game store {db} is finished; start a new game to go on playing"
    )
    assert store.events(game_id) == []


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        pytest.param(
            lambda s: s.append(9, "undo", None, source="button"),
            NoSuchGame,
            "there is no game 9 in the game store {db}",
            id="unknown-game",
        ),
        pytest.param(
            lambda s: s.record_reading(9, [], status="settled"),
            NoSuchGame,
            "there is no game 9 in the game store {db}",
            id="reading-of-unknown-game",
        ),
        pytest.param(
            lambda s: s.append(1, "skip", None, source="button"),
            ValueError,
            "an event is one of action, undo, redo; not 'skip'",
            id="unknown-kind",
        ),
        pytest.param(
            lambda s: s.append(1, "action", None, source="button"),
            ValueError,
            "an action event needs its action object, such as {'bank': True}",
            id="action-without-object",
        ),
        pytest.param(
            lambda s: s.append(1, "undo", {"bank": True}, source="button"),
            ValueError,
            "an undo event carries no action, not {'bank': True}",
            id="undo-with-object",
        ),
        pytest.param(
            lambda s: s.append(1, "action", {"roll": [1, 7]}, source="camera"),
            ValueError,
            "a die shows 1 to 6, not 7 (in [1, 7])",
            id="malformed-action",
        ),
        pytest.param(
            lambda s: s.append(1, "action", {"bank": True}, source=""),
            ValueError,
            "an event's source names where it came from, not ''",
            id="no-source",
        ),
        pytest.param(
            lambda s: s.append(1, "undo", None, source="button"),
            ValueError,
            "nothing to undo in game 1: no action is in effect",
            id="undo-nothing",
        ),
        pytest.param(
            lambda s: s.append(1, "redo", None, source="button"),
            ValueError,
            "nothing to redo in game 1: no action has been undone",
            id="redo-nothing",
        ),
        pytest.param(
            lambda s: s.record_reading(1, [{"value": 3}], status="settled"),
            ValueError,
            "a die read is an object with value, confidence, status and box (and blurred: true"
            " on a die too blurred to read, hidden: true on one partly hidden, with cut: true"
            " when the frame's edge hides it), not {'value': 3}",
            id="reading-die-incomplete",
        ),
        pytest.param(
            lambda s: s.record_reading(1, [{**die(4), "blurred": True}], status="settled"),
            ValueError,
            "only an uncertain die is blurred, and it says blurred: true, not {'value': 4, "
            "'confidence': 0.97, 'status': 'ok', 'box': [10, 20, 50, 60], 'blurred': True}",
            id="reading-die-blurred-but-read",
        ),
        pytest.param(
            lambda s: s.record_reading(
                1, [{**die(None, "uncertain"), "blurred": False}], status="settled"
            ),
            ValueError,
            "only an uncertain die is blurred, and it says blurred: true, not {'value': None, "
            "'confidence': 0.97, 'status': 'uncertain', 'box': [10, 20, 50, 60], "
            "'blurred': False}",
            id="reading-die-blurred-false",
        ),
        pytest.param(
            lambda s: s.record_reading(
                1, [{**die(None, "cocked"), "hidden": True}], status="settled"
            ),
            ValueError,
            "only an uncertain die is hidden, and it says hidden: true, not {'value': None, "
            "'confidence': 0.97, 'status': 'cocked', 'box': [10, 20, 50, 60], 'hidden': True}",
            id="reading-die-hidden-but-cocked",
        ),
        pytest.param(
            lambda s: s.record_reading(
                1, [{**die(None, "uncertain"), "cut": True}], status="settled"
            ),
            ValueError,
            "a die cut by the frame's edge is hidden: true too, not {'value': None, "
            "'confidence': 0.97, 'status': 'uncertain', 'box': [10, 20, 50, 60], 'cut': True}",
            id="reading-die-cut-but-not-hidden",
        ),
    ],
)
def test_bad_calls_store_nothing(
    store: Store,
    db: Path,
    call: Callable[[Store], object],
    error: type[Exception],
    message: str,
) -> None:
    """Each refusal says why, and neither the log nor the readings change."""
    game_id = store.new_game(HEADER)
    assert game_id == 1
    with pytest.raises(error) as info:
        call(store)
    assert str(info.value) == message.replace("{db}", str(db))
    assert store.events(game_id) == []
    assert sum(store.face_counts().values()) == 0


def test_a_redo_stack_emptied_by_a_new_action_refuses_redo(store: Store) -> None:
    """The store follows History: a new action after an undo leaves nothing to redo."""
    game_id = store.new_game(HEADER)
    live = start(parse_header(HEADER))
    play(store, game_id, live, [Roll([2, 2, 3, 5, 5, 5]), Keep([5]), "undo", Keep([5, 5, 5])])
    with pytest.raises(ValueError, match="^nothing to redo in game 1"):
        store.append(game_id, "redo", None, source="button")


def test_new_game_refuses_a_bad_header_before_storing(store: Store) -> None:
    """An unknown game or a bad option is never stored (it could not be resumed)."""
    with pytest.raises(UnknownGame, match="^unknown game 'yahtzee'"):
        store.new_game({"game": "yahtzee", "players": ["Ann"]})
    with pytest.raises(ValueError, match="target"):
        store.new_game(
            {"game": "kymppitonni", "players": ["Ann", "Bob"], "options": {"target": -1}}
        )
    assert store.games() == []


def test_a_log_that_does_not_replay_names_the_game_and_event() -> None:
    """A log changed outside pipcam is reported, never half replayed."""
    stored = StoredGame(4, HEADER, [("action", {"roll": [1, 2, 3, 4, 5, 6]}), ("redo", None)])
    with pytest.raises(StoreError) as info:
        replay_events(stored)
    assert str(info.value) == (
        "stored game 4 does not replay at event 2 (redo): "
        "nothing to redo: no action has been undone since the last new one"
    )


# -- the file ---------------------------------------------------------------------------------


def test_wal_full_sync_and_foreign_keys(store: Store, db: Path) -> None:
    """The durability settings are in force (per connection, hence the peek at it)."""
    con = store._db
    assert con is not None
    assert con.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert con.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
    assert con.execute("PRAGMA foreign_keys").fetchone() == (1,)
    with contextlib.closing(sqlite3.connect(db)) as other:
        assert other.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def test_close_is_idempotent_and_use_after_close_is_refused(db: Path) -> None:
    """close() twice is harmless; a closed store says so."""
    store = Store(db)
    store.close()
    store.close()
    with pytest.raises(StoreError) as info:
        store.games()
    assert str(info.value) == f"the game store {db} is closed"


@pytest.mark.parametrize("with_wal", [False, True], ids=["alone", "with-wal"])
def test_garbage_file_is_refused_with_what_to_do(tmp_path: Path, with_wal: bool) -> None:
    """A file that is not a database is left as it is; the message says how to move it away.

    A write-ahead log left beside it must move along: a new database would take it up.
    """
    db = tmp_path / "pipcam.db"
    garbage = bytes(range(256)) * 32
    db.write_bytes(garbage)
    if with_wal:
        Path(f"{db}-wal").write_bytes(garbage[:100])
    with pytest.raises(StoreError) as info:
        Store(db)
    move_wal = f" && mv {db}-wal {db}.broken-wal" if with_wal else ""
    assert str(info.value) == (
        f"the game store {db} is damaged (file is not a database); "
        f"move it aside and start again: mv {db} {db}.broken{move_wal}"
    )
    assert db.read_bytes() == garbage
    if with_wal:
        assert Path(f"{db}-wal").read_bytes() == garbage[:100]


def test_damaged_page_is_found_by_the_integrity_check(tmp_path: Path) -> None:
    """Garbage written over a table page inside a valid file is caught on open."""
    db = tmp_path / "pipcam.db"
    with Store(db) as store:
        game_id = store.new_game(HEADER)
        for _ in range(40):
            store.record_reading(game_id, [], status="settled")
    data = bytearray(db.read_bytes())
    page = 4096
    assert len(data) >= 4 * page
    data[3 * page : 4 * page] = b"\x55" * page
    db.write_bytes(bytes(data))
    with pytest.raises(StoreError) as info:
        Store(db)
    message = str(info.value)
    assert message.startswith(f"the game store {db} is damaged (")
    assert message.endswith(f"); move it aside and start again: mv {db} {db}.broken")


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    """A store written by a newer pipcam is left alone."""
    db = tmp_path / "pipcam.db"
    Store(db).close()
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError) as info:
        Store(db)
    assert str(info.value) == (
        f"the game store {db} was written by a newer pipcam (schema version "
        f"{SCHEMA_VERSION + 1}; this pipcam knows version {SCHEMA_VERSION}); upgrade pipcam, "
        f"or move it aside and start again: mv {db} {db}.broken"
    )


def _as_version_1(db: Path, *, corrections: bool) -> None:
    """Turn a store back into a version-1 file: corrections of 1..6 only, or no such table."""
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute("DROP TABLE corrections")
        if corrections:
            con.execute(
                "CREATE TABLE corrections (id INTEGER PRIMARY KEY, "
                "reading INTEGER NOT NULL REFERENCES readings (id), "
                "game INTEGER REFERENCES games (id), die INTEGER NOT NULL CHECK (die >= 0), "
                "value INTEGER NOT NULL CHECK (value BETWEEN 1 AND 6), replaced TEXT NOT NULL, "
                "events TEXT NOT NULL, source TEXT NOT NULL, time TEXT NOT NULL)"
            )
        con.execute("PRAGMA user_version = 1")
        con.commit()


@pytest.mark.parametrize("corrections", [True, False], ids=["with-corrections", "before-them"])
def test_a_version_1_store_is_upgraded_and_keeps_its_corrections(
    tmp_path: Path, corrections: bool
) -> None:
    """A table's store from before "no die there" opens, keeps every correction, and then takes
    a correction to 0."""
    db = tmp_path / "pipcam.db"
    with Store(db) as store:
        game = store.new_game(HEADER)
        reading = store.record_reading(game, [die(1), die(2)], status="settled")
    _as_version_1(db, corrections=corrections)
    if corrections:
        with contextlib.closing(sqlite3.connect(db)) as con:
            with pytest.raises(sqlite3.IntegrityError):  # what version 1 could not hold
                con.execute(
                    "INSERT INTO corrections (reading, game, die, value, replaced, events, "
                    "source, time) VALUES (?, ?, 0, 0, '[]', '[]', 'phone', 'now')",
                    (reading, game),
                )
            con.execute(
                "INSERT INTO corrections (reading, game, die, value, replaced, events, source, "
                "time) VALUES (?, ?, 1, 5, '[]', '[]', 'phone', 'now')",
                (reading, game),
            )
            con.commit()
    with Store(db) as store:
        assert [[d["value"] for d in r.dice] for r in store.readings()] == [
            [1, 5 if corrections else 2]
        ]
        store.record_correction(reading, 0, 0, events=[], source="phone")
        (got,) = store.readings()
        assert [(d["value"], d["status"]) for d in got.dice] == [
            (None, "no_die"),
            (5, "ok") if corrections else (2, "ok"),
        ]
    with contextlib.closing(sqlite3.connect(db)) as con:
        assert con.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.parametrize(
    ("version", "whys"),
    [(2, ("blurred",)), (2, ("hidden",)), (3, ("hidden",)), (4, ("hidden", "cut"))],
)
def test_an_older_store_is_upgraded_and_then_keeps_dice_blurred_or_hidden(
    tmp_path: Path, version: int, whys: tuple[str, ...]
) -> None:
    """A store from before blurred (version 2), partly hidden (version 3) or cut dice (version
    4) opens as it was and then takes one."""
    db = tmp_path / "pipcam.db"
    with Store(db) as store:
        game = store.new_game(HEADER)
        store.record_reading(game, [die(1), die(None, "cocked", 0.4)], status="settled")
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute(f"PRAGMA user_version = {version}")
        con.commit()
    with Store(db) as store:
        unread = {**die(None, "uncertain", 0.2), **dict.fromkeys(whys, True)}
        store.record_reading(game, [unread], status="settled")
        assert [[d.get(whys[-1], False) for d in r.dice] for r in store.readings()] == [
            [False, False],
            [True],
        ]
    with contextlib.closing(sqlite3.connect(db)) as con:
        assert con.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def test_someone_elses_database_is_refused(tmp_path: Path) -> None:
    """An SQLite file of another program is not taken over."""
    db = tmp_path / "notes.db"
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(StoreError) as info:
        Store(db)
    assert str(info.value) == (
        f"{db} is not a pipcam game store (it holds the tables notes); pick another "
        f"folder with --data or move it aside: mv {db} {db}.broken"
    )


def test_hot_journal_is_rolled_back_before_the_checks(tmp_path: Path) -> None:
    """A crash mid-transaction leaves a journal only a writer can roll back: then it is checked."""
    db = tmp_path / "notes.db"
    crash = (
        "import os, sqlite3, sys\n"
        "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "con.execute('PRAGMA cache_size = 1')\n"  # spill to the file, so the journal is hot
        "con.execute('CREATE TABLE notes (text BLOB)')\n"
        "con.execute('BEGIN')\n"
        "for _ in range(100): con.execute('INSERT INTO notes VALUES (randomblob(3000))')\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", crash, str(db)], check=True)
    assert Path(f"{db}-journal").stat().st_size > 0
    with pytest.raises(StoreError) as info:
        Store(db)
    assert str(info.value) == (
        f"{db} is not a pipcam game store (it holds the tables notes); pick another "
        f"folder with --data or move it aside: mv {db} {db}.broken"
    )


def test_folder_that_cannot_be_created(tmp_path: Path) -> None:
    """A data path under a file: the folder cannot be made."""
    (tmp_path / "file").write_text("")
    db = tmp_path / "file" / "data" / "pipcam.db"
    with pytest.raises(StoreError) as info:
        Store(db)
    assert str(info.value) == (
        f"cannot create the folder {db.parent} for the game store (Not a directory); "
        "create it with write access for this user or pick another folder with --data"
    )


@contextlib.contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """Take write access away: chmod for a user; the immutable attribute for root if possible."""
    mode = path.stat().st_mode
    path.chmod(0o555 if path.is_dir() else 0o444)
    immutable = False
    if os.access(path, os.W_OK) and shutil.which("chattr"):  # root ignores the mode bits
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
        immutable = done.returncode == 0
    try:
        if os.access(path, os.W_OK):
            pytest.skip("cannot take write access away here (root without chattr +i)")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(mode)


def test_unwritable_folder_is_refused(tmp_path: Path) -> None:
    """WAL needs to create files beside the database, so the folder must be writable."""
    folder = tmp_path / "data"
    db = folder / "pipcam.db"
    Store(db).close()
    with unwritable(folder), pytest.raises(StoreError) as info:
        Store(db)
    assert str(info.value) == (
        f"cannot write the game store {db}: the folder {folder} is not writable for "
        "this user; give it write access (SQLite keeps pipcam.db-wal and pipcam.db-shm beside "
        "the database) or pick another folder with --data"
    )


def test_read_only_file_is_refused(tmp_path: Path) -> None:
    """A database file this user cannot write."""
    db = tmp_path / "pipcam.db"
    Store(db).close()
    with unwritable(db), pytest.raises(StoreError) as info:
        Store(db)
    assert str(info.value) == (
        f"cannot write the game store {db}: the file is read-only for this user; "
        "give this user read and write access to it or pick another folder with --data"
    )


def test_a_failed_write_is_reported_not_dropped(store: Store, db: Path) -> None:
    """A full disk (here: a page limit) fails the append loudly and logs nothing half-way."""
    game_id = store.new_game(HEADER)
    assert store.append(game_id, "action", {"roll": [1, 2, 3, 4, 5, 6]}, source="camera") == 1
    con = store._db
    assert con is not None
    pages = con.execute("PRAGMA page_count").fetchone()[0]
    con.execute(f"PRAGMA max_page_count = {pages}")
    for _ in range(500):  # fills the pages left, then fails
        try:
            store.record_reading(game_id, [], status="settled")
        except StoreError as exc:
            error = exc
            break
    else:
        pytest.fail("the page limit was never reached")
    assert str(error) == (
        f"the disk of the game store {db} is full (database or disk is full); "
        "free some space and try again"
    )
    con.execute("PRAGMA max_page_count = 1073741823")
    assert store.append(game_id, "action", {"keep": [1]}, source="camera") == 2


# -- threads and readings ---------------------------------------------------------------------


def test_concurrent_appends_get_unique_gap_free_numbers(store: Store) -> None:
    """Camera, buttons and web server append at once: every event gets its own number."""
    game_id = store.new_game(HEADER)
    threads_n, each = 4, 12
    got: list[list[int]] = [[] for _ in range(threads_n)]
    barrier = threading.Barrier(threads_n + 1)

    def worker(i: int) -> None:
        barrier.wait()
        for _ in range(each):
            got[i].append(store.append(game_id, "action", {"bank": True}, source=f"t{i}"))

    def reader() -> None:
        barrier.wait()
        for _ in range(each):
            store.record_reading(game_id, [], status="moving")
            store.current_game()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(threads_n)]
    threads.append(threading.Thread(target=reader))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    numbers = sorted(n for g in got for n in g)
    assert numbers == list(range(1, threads_n * each + 1))
    assert all(g == sorted(g) for g in got)  # each thread's events keep their order
    events = store.events(game_id)
    assert [e.seq for e in events] == numbers
    assert all(e.seq in got[int(e.source[1:])] for e in events)  # logged as its thread was told


def die(value: int | None, status: str = "ok", confidence: float = 0.97) -> dict[str, JSON]:
    """A die as the table records it."""
    return {"value": value, "confidence": confidence, "status": status, "box": [10, 20, 50, 60]}


def test_readings_are_recorded_and_counted(store: Store, db: Path) -> None:
    """Every die read is kept with its confidence; faces are counted per game and overall."""
    first = store.new_game(HEADER)
    store.record_reading(
        first, [die(1), die(5), die(5), die(None, "cocked", 0.4)], status="settled"
    )
    store.record_reading(None, [die(6, "uncertain", 0.55)], status="settled")
    second = store.new_game(HEADER)
    store.record_reading(second, [die(5), die(2)], status="settled")
    assert store.face_counts(first) == {1: 1, 2: 0, 3: 0, 4: 0, 5: 2, 6: 0}
    assert store.face_counts(second) == {1: 0, 2: 1, 3: 0, 4: 0, 5: 1, 6: 0}
    assert store.face_counts() == {1: 1, 2: 1, 3: 0, 4: 0, 5: 3, 6: 1}
    with contextlib.closing(sqlite3.connect(db)) as con:
        rows = con.execute("SELECT game, time, status, dice FROM readings ORDER BY id").fetchall()
    assert rows[1][:3] == (None, "2023-11-14T22:13:21.000+00:00", "settled")
    assert rows[0][3] == (
        '[{"value": 1, "confidence": 0.97, "status": "ok", "box": [10, 20, 50, 60]}, '
        '{"value": 5, "confidence": 0.97, "status": "ok", "box": [10, 20, 50, 60]}, '
        '{"value": 5, "confidence": 0.97, "status": "ok", "box": [10, 20, 50, 60]}, '
        '{"value": null, "confidence": 0.4, "status": "cocked", "box": [10, 20, 50, 60]}]'
    )


@pytest.mark.parametrize("whys", [("blurred",), ("hidden",), ("hidden", "cut")])
def test_a_die_blurred_or_hidden_is_kept_so_until_a_person_says_what_it_shows(
    store: Store, db: Path, whys: tuple[str, ...]
) -> None:
    """The reader's word that a die was too blurred to read, or partly hidden (by the frame's
    edge, cut), survives the store; a correction, to a face or to "no die", ends it."""
    game = store.new_game(HEADER)
    unread = {**die(None, "uncertain", 0.3), **dict.fromkeys(whys, True)}
    first = store.record_reading(game, [unread, die(2), unread], status="settled")
    (got,) = store.readings()
    assert [[d.get(why) for why in whys] for d in got.dice] == [
        [True] * len(whys),
        [None] * len(whys),
        [True] * len(whys),
    ]
    store.record_correction(first, 0, 6, events=[], source="phone")
    store.record_correction(first, 2, 0, events=[], source="phone")
    (got,) = store.readings()
    assert got.dice == [
        {**die(6, "ok", 0.3)},
        die(2),
        {"value": None, "confidence": 0.3, "status": "no_die", "box": [10, 20, 50, 60]},
    ]
    with contextlib.closing(sqlite3.connect(db)) as con:
        (raw,) = con.execute("SELECT dice FROM readings").fetchone()
    for why in whys:
        assert raw.count(f'"{why}": true') == 2  # the reading as read stays as it was


def test_readings_come_back_as_last_corrected(store: Store) -> None:
    """Readings list the dice with every correction applied, which dice were set by hand, and
    start after a given id (what the photo export needs to label its frames)."""
    game = store.new_game(HEADER)
    first = store.record_reading(game, [die(1), die(None, "cocked", 0.4)], status="settled")
    second = store.record_reading(game, [die(6, "uncertain", 0.55), die(2)], status="settled")
    store.record_correction(first, 1, 4, events=[], source="phone")
    store.record_correction(second, 0, 5, events=[], source="phone")
    store.record_correction(second, 0, 3, events=[], source="phone")  # the last one stands
    got = store.readings()
    assert [r.id for r in got] == [first, second]
    assert [[d["value"] for d in r.dice] for r in got] == [[1, 4], [3, 2]]
    assert [[d["status"] for d in r.dice] for r in got] == [["ok", "ok"], ["ok", "ok"]]
    assert [r.corrected for r in got] == [(1,), (0,)]
    assert got[0].game == game
    assert got[0].status == "settled"
    assert [r.id for r in store.readings(after=first)] == [second]
    assert store.readings(after=second) == []
