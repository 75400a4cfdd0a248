"""Correcting a misread die: logged with the reading it replaced, and the history kept honest."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pipcam.store import Store, replay_events
from pipcam.table import Table
from scoring.core import Action, Keep, Roll, Score
from scoring.errors import IllegalAction, InvalidAction
from tests.pipcam._fakes import FakeDie, FakeReading


def reading(*values: int) -> FakeReading:
    """A settled reading of these faces, each read with confidence. A die's place is set by
    its face and how many of that face come before it, so dice taken out leave the others
    where they lay."""
    dice = [
        FakeDie(v, box=(20 * v, 20 * k, 20 * v + 9, 20 * k + 9))
        for i, v in enumerate(values)
        for k in [values[:i].count(v)]
    ]
    return FakeReading(tuple(dice))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A real SQLite store in a temporary folder."""
    with Store(tmp_path / "pipcam.db") as s:
        yield s


@pytest.fixture
def table(store: Store) -> Table:
    """A two-player Kymppitonni game."""
    t = Table(store)
    t.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    return t


def events(store: Store, table: Table) -> list[tuple[str, dict[str, object] | None, str]]:
    """The stored log of the table's game: kind, action, source."""
    assert table.game_id is not None
    return [(e.kind, e.action, e.source) for e in store.events(table.game_id)]


def test_applied_misread_roll_is_replaced_in_one_step(store: Store, table: Table) -> None:
    """The misread roll is undone and the corrected one applied; both stay in the log."""
    table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)  # the 4 was really a 6
    state = table.correct(5, 6, source="phone")
    assert table.history is not None
    assert table.history.actions == [Roll([1, 1, 2, 3, 5, 6])]
    assert state["turn"]["dice"] == [1, 1, 2, 3, 5, 6]
    assert state["table"]["dice_read"][5] == {
        "value": 6,
        "confidence": 1.0,
        "status": "ok",
        "box": [80, 0, 89, 9],
    }
    assert events(store, table) == [
        ("action", {"roll": [1, 1, 2, 3, 4, 5]}, "camera"),
        ("undo", None, "phone"),
        ("action", {"roll": [1, 1, 2, 3, 5, 6]}, "phone"),
    ]
    (correction,) = store.corrections(table.game_id)
    assert (correction.die, correction.value, correction.events) == (5, 6, [2, 3])
    assert [d["value"] for d in correction.replaced] == [1, 1, 5, 2, 3, 4]
    assert not table.history.can_redo()  # the misread roll cannot come back by redo
    # The corrected throw is still the reading's: a later fix of it labels its photo.
    assert store.made(table.game_id or 0) == [correction.reading]


@pytest.mark.parametrize(
    ("typed", "photo", "by_reading", "doubted"),
    [
        ([1, 1, 5, 2, 3, 6], ([1, 1, 5, 2, 3, 6], (5,)), True, set()),
        ([1, 1, 5, 2, 3, 4], ([1, 1, 5, 2, 3, 4], ()), True, set()),
        ([1, 1, 5, 2, 6, 6], ([1, 1, 5, 2, 3, 4], ()), False, {4, 5}),
        ([1, 1, 2, 2, 3, 6], ([1, 1, 5, 2, 3, 4], ()), False, {2, 5}),
        ([2, 3, 3, 4, 6, 6], ([1, 1, 5, 2, 3, 4], ()), False, {0, 1, 2}),
    ],
    ids=[
        "one-die-otherwise",
        "the-same",
        "two-dice-otherwise",
        "two-faces-swapped",
        "another-throw",
    ],
)
def test_a_throw_undone_and_typed_again_is_the_readings_throw(
    store: Store,
    table: Table,
    typed: list[int],
    photo: tuple[list[int], tuple[int, ...]],
    by_reading: bool,
    doubted: set[int],
) -> None:
    """The 4 was a 6, and the player put it right by undo and typing the throw rather than a
    tap on the die: the board and the photo say 6, as a tap would have made them. Typed with
    two dice or more otherwise, which die was which is not known, or the dice were thrown again
    unseen: another throw, no label changed, but the dice showing a face the typed throw has
    not are no label as read until a person names them (a camera label the players undid is
    no face to learn)."""
    rid = table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    table.undo(source="phone")
    state = table.act(Roll(typed), source="phone")
    assert table.history is not None
    assert table.history.actions == [Roll(typed)]
    assert labels(store) == [photo]
    assert [d["value"] for d in state["table"]["dice_read"]] == photo[0]
    assert store.made(table.game_id or 0) == [rid if by_reading else None]
    assert store.doubted() == ({rid: doubted} if doubted else {})


def test_a_throw_typed_after_the_game_moved_on_corrects_no_photo(
    store: Store, table: Table
) -> None:
    """Ann's throw read, kept from and banked; Bob's throw typed one die away from hers: it
    does not stand in place of her reading's throw, so her photo keeps its labels."""
    rid = table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    table.act(Keep([1, 1, 5]), source="phone")
    table.press("bank")
    table.act(Roll([1, 1, 5, 2, 3, 6]), source="phone")  # Bob's
    assert labels(store) == [([1, 1, 5, 2, 3, 4], ())]
    assert store.made(table.game_id or 0) == [rid, None, None, None]
    table.act(Keep([1, 1, 5]), source="phone")
    table.undo(source="phone")
    table.undo(source="phone")  # Bob's throw, typed: nothing read stands in its place
    table.act(Roll([2, 2, 3, 4, 6, 6]), source="phone")
    assert store.doubted() == {}


def test_refused_reading_goes_through_once_corrected(store: Store, table: Table) -> None:
    """A cocked die blocks the roll; setting its value lets the reading count."""
    dice = (*[FakeDie(v) for v in (1, 5, 2, 3, 4)], FakeDie(None, 0.3, "cocked", (7, 7, 20, 20)))
    table.on_reading(FakeReading(dice), settled_now=True)
    assert "leans on something" in table.state_json()["table"]["problem"]
    state = table.correct(5, 6)
    assert state["table"]["problem"] == ""
    assert state["turn"]["dice"] == [1, 2, 3, 4, 5, 6]
    assert events(store, table) == [("action", {"roll": [1, 2, 3, 4, 5, 6]}, "phone")]


def test_a_phantom_die_said_not_there_lets_the_roll_through(store: Store, table: Table) -> None:
    """Seven dice read where six were thrown: "no die there" on the phantom makes it a roll."""
    table.on_reading(reading(1, 1, 5, 2, 3, 4, 6), settled_now=True)
    assert (
        "7 dice are in the roll zone but 6 were to be thrown"
        in (table.state_json()["table"]["problem"])
    )
    state = table.correct(6, 0)
    assert state["table"]["problem"] == ""
    assert state["turn"]["dice"] == [1, 1, 2, 3, 4, 5]
    assert state["table"]["dice_read"][6] == {
        "value": None,
        "confidence": 1.0,
        "status": "no_die",
        "box": [120, 0, 129, 9],
    }
    assert events(store, table) == [("action", {"roll": [1, 1, 2, 3, 4, 5]}, "phone")]
    (stored,) = store.readings()
    assert (stored.dice[6]["value"], stored.dice[6]["status"], stored.corrected) == (
        None,
        "no_die",
        (6,),
    )


def test_a_die_said_not_there_by_mistake_is_set_back(store: Store, table: Table) -> None:
    """ "No die there" on a real die takes it out of the roll; giving it a value puts it back."""
    table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    state = table.correct(0, 0)
    assert (
        "only 5 dice are seen in the roll zone but 6 were to be thrown" in state["table"]["problem"]
    )
    assert table.history is not None
    assert table.history.actions == []  # the roll read from the six dice was undone
    state = table.correct(0, 1)
    assert state["table"]["problem"] == ""
    assert table.history.actions == [Roll([1, 1, 2, 3, 4, 5])]
    assert [(c.die, c.value) for c in store.corrections(table.game_id)] == [(0, 0), (0, 1)]
    assert store.readings()[0].dice[0]["status"] == "ok"


def test_a_throw_typed_over_a_reading_short_of_dice_marks_what_the_camera_missed(
    store: Store, table: Table
) -> None:
    """Five dice read of six thrown: the throw typed on a phone goes in, and the reading is
    marked as missing a die (its photo has one without a label). The camera's own rolls, and
    throws typed with nothing read, mark nothing."""
    first = table.on_reading(reading(1, 1, 5, 2, 3), settled_now=True)
    assert table.state_json()["table"]["problem_code"] == "roll_zone_missing"
    table.act(Roll([1, 1, 2, 3, 5, 6]), source="phone")
    assert store.missed() == {first: 1}
    table.act(Keep([1, 1, 5]), source="phone")
    table.press("bank")
    table.act(Roll([2, 2, 3, 4, 6, 6]), source="phone")  # Bob's throw typed, nothing read
    assert store.missed() == {first: 1}
    table.undo(source="phone")
    second = table.on_reading(reading(2, 2, 3, 4), settled_now=True)
    table.act(Roll([2, 2, 3, 4, 6, 6]), source="keyboard")
    assert store.missed() == {first: 1, second: 2}
    table.undo(source="phone")
    table.on_reading(reading(2, 2, 3, 4, 6, 6), settled_now=True)  # the camera's own roll
    assert store.missed() == {first: 1, second: 2}
    assert table.history is not None
    assert table.history.actions[-1] == Roll([2, 2, 3, 4, 6, 6])


def test_two_misread_dice_corrected_one_after_the_other(store: Store, table: Table) -> None:
    """A reading still doubtful after one correction says so; the second one completes it."""
    dice = (
        FakeDie(None, 0.4, "uncertain"),
        FakeDie(None, 0.3, "cocked", (9, 9, 19, 19)),
        *[FakeDie(v) for v in (2, 3, 4, 6)],
    )
    table.on_reading(FakeReading(dice), settled_now=True)
    state = table.correct(0, 1)
    assert state["table"]["problem"] == (
        "a die at [9, 9, 19, 19] leans on something: throw it again or correct it on a phone"
    )
    assert table.history is not None
    assert len(table.history) == 0
    state = table.correct(1, 5)
    assert state["turn"]["dice"] == [1, 2, 3, 4, 5, 6]
    assert [c.die for c in store.corrections(table.game_id)] == [0, 1]
    second = store.corrections(table.game_id)[1]
    assert [d["value"] for d in second.replaced] == [1, None, 2, 3, 4, 6]  # after the first fix


def test_correction_that_changes_nothing_logs_only_itself(store: Store, table: Table) -> None:
    """Setting a die to the value it was read as changes no game event."""
    table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    table.correct(0, 1)
    assert events(store, table) == [("action", {"roll": [1, 1, 2, 3, 4, 5]}, "camera")]
    assert len(store.corrections(table.game_id)) == 1


def test_misread_keep_is_replaced(store: Store, table: Table) -> None:
    """Dice taken out of the zone misread as another legal keep: the keep is redone."""
    table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    table.on_reading(reading(5, 2, 3, 4), settled_now=True)  # 1 1 taken out
    assert table.history is not None
    assert table.history.actions[-1] == Keep([1, 1])
    # The 5 was really a 1 that stayed: only one 1 was taken out, together with the 5.
    table.correct(0, 1)
    assert table.history.actions == [Roll([1, 1, 2, 3, 4, 5]), Keep([1, 5])]
    assert [kind for kind, _, _ in events(store, table)] == ["action", "action", "undo", "action"]


def test_game_moved_on_is_409_with_reason(table: Table) -> None:
    """Once another action follows the misread roll, the correction is refused; undo allows it."""
    table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    table.act(Keep([1, 1, 5]), source="phone")
    with pytest.raises(IllegalAction) as info:
        table.correct(5, 6)
    assert str(info.value) == (
        "cannot correct the reading: the game has gone on since it was read "
        "(it made roll 1 1 2 3 4 5); undo back to it first"
    )
    table.undo(source="phone")
    table.correct(5, 6)
    assert table.history is not None
    assert table.history.actions == [Roll([1, 1, 2, 3, 5, 6])]


def test_nothing_to_correct(store: Store) -> None:
    """No settled reading, or one from before this game: nothing to correct."""
    table = Table(store)
    with pytest.raises(IllegalAction, match="there is no reading to correct: no dice have"):
        table.correct(0, 3)
    table.on_reading(reading(1, 2), settled_now=True)  # no game yet: kept, not applied
    table.correct(0, 3)  # logged all the same
    assert [c.game for c in store.corrections()] == [None]
    table.new_game({"game": "sekvence", "players": ["Ann"]})
    with pytest.raises(IllegalAction, match="read before this game started"):
        table.correct(0, 3)


@pytest.mark.parametrize(
    ("die", "value", "message"),
    [
        (6, 3, "the last reading has 6 dice (0 to 5); there is no die 6"),
        (-1, 3, "the last reading has 6 dice (0 to 5); there is no die -1"),
        (0, 7, "a die shows 1 to 6, or 0 when no die is there, not 7"),
        (0, -1, "a die shows 1 to 6, or 0 when no die is there, not -1"),
        (0, True, "a die shows 1 to 6, or 0 when no die is there, not True"),
    ],
)
def test_bad_index_or_value(store: Store, table: Table, die: int, value: int, message: str) -> None:
    """A die that is not in the reading, or a face that is not on a die, is malformed."""
    table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    with pytest.raises(InvalidAction) as info:
        table.correct(die, value)
    assert str(info.value) == message
    assert store.corrections() == []


def test_a_game_ended_by_a_mistake_goes_on_again(store: Store) -> None:
    """A misread or mistyped roll that ended the game is corrected or undone like any other:
    the game goes on again, in the store too (a restart resumes it), and ends again when the
    roll is redone."""
    table = Table(store)
    table.new_game({"game": "sekvence", "players": ["Ann"], "options": {"target": 10}})
    table.on_reading(reading(1, 2, 3, 5, 5, 6), settled_now=True)  # 1-2-3: 10 points, the end
    assert table.state_json()["finished"] is True
    assert store.current_game() is None
    table.correct(2, 4)  # the 3 was a 4: 1-2 and no 3, 5 points
    state = table.state_json()
    assert (state["finished"], state["players"][0]["score"]) == (False, 5)
    assert Table(store).resume()  # a restart goes on with it
    table.act(Roll([1, 2, 3, 4, 2, 2]), source="phone")  # 1-2-3-4: 15 more, the end
    assert table.state_json()["finished"] is True
    table.undo(source="phone")
    assert table.state_json()["finished"] is False
    resumed = Table(store)
    assert resumed.resume()
    assert resumed.state_json()["players"][0]["score"] == 5
    table.redo(source="phone")
    assert table.state_json()["finished"] is True
    assert store.current_game() is None  # ended again: not resumed


def test_a_game_followed_by_a_new_one_is_not_taken_up_again(store: Store) -> None:
    """Only the newest game goes on again: one given up for a new game stays as it ended."""
    table = Table(store)
    table.new_game({"game": "sekvence", "players": ["Ann"], "options": {"target": 10}})
    table.act(Roll([1, 2, 3, 5, 5, 6]), source="phone")
    old = table.game_id
    assert old is not None
    Table(store).new_game({"game": "sekvence", "players": ["Bob"]})
    with pytest.raises(IllegalAction, match="was followed by a new game; it stays as it ended"):
        table.undo(source="phone")
    assert table.state_json()["finished"] is True
    assert [kind for kind, _ in store.game(old).events] == ["action"]


def test_timeline_history_and_series(table: Table) -> None:
    """History entries name the player of each action; the series starts at 0 for everyone."""
    table.act(Roll([1, 1, 5, 2, 3, 4]), source="phone")
    table.act(Keep([1, 1, 5]), source="phone")
    table.press("bank")
    table.act(Roll([2, 3, 4, 6, 6, 2]), source="phone")
    history = table.history_json()
    assert [(e["index"], e["player"], e["text"]) for e in history["entries"]] == [
        (0, "Ann", "roll 1 1 2 3 4 5"),
        (1, "Ann", "keep 1 1 5"),
        (2, "Ann", "bank"),
        (3, "Bob", "roll 2 2 3 4 6 6"),
    ]
    assert history["can_undo"] is True
    series = table.score_series()
    assert series == {
        "players": ["Ann", "Bob"],
        "points": [[0, 0], [0, 0], [0, 0], [250, 0], [250, 0]],
    }
    table.undo(source="phone")
    assert len(table.score_series()["points"]) == 4
    assert table.history_json()["can_redo"] is True


def test_face_counts_are_the_rolls_in_effect_of_every_game(store: Store, table: Table) -> None:
    """Each roll counts once (dice read again after a keep do not); undone rolls do not count."""
    table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    table.on_reading(reading(2, 3, 4), settled_now=True)  # a keep: the same 2 3 4 read again
    table.act(Roll([6, 6, 6]), source="phone")
    table.undo(source="phone")
    table.new_game({"game": "sekvence", "players": ["Ann"]})  # the first game is finished
    table.act(Roll([6, 6, 6, 6, 6, 1]), source="phone")
    assert table.face_counts() == {1: 3, 2: 1, 3: 1, 4: 1, 5: 1, 6: 5}
    assert store.face_counts() == {1: 2, 2: 2, 3: 2, 4: 2, 5: 1, 6: 0}  # readings: twice over


def at(v: int, x: int, y: int) -> FakeDie:
    """A die showing v with its box at (x, y)."""
    return FakeDie(v, box=(x, y, x + 40, y + 40))


def test_a_die_misread_out_of_the_roll_zone_is_corrected(store: Store, table: Table) -> None:
    """The 5 set aside as the other five dice are thrown (one motion) is read as a 1 out of the
    roll zone: the table takes keep 1 and the throw. Tapping that die on a phone (numbered after
    the roll zone's) makes it keep 5 and the throw, in one stored step; the next throw is told
    from the corrected set-aside."""
    first = [at(v, 60 * i, 0) for i, v in enumerate([1, 1, 2, 3, 5, 6])]
    table.on_reading(FakeReading(tuple(first)), settled_now=True)
    thrown = (at(1, 0, 300), at(1, 60, 300), at(2, 120, 300), at(2, 180, 300), at(5, 240, 300))
    table.on_reading(FakeReading(thrown, set_aside=(at(1, 2000, 0),)), settled_now=True)
    assert table.history is not None
    assert table.history.actions[1:] == [Keep([1]), Roll([1, 1, 2, 2, 5])]
    state = table.correct(5, 5, source="phone")
    assert table.history.actions[1:] == [Keep([5]), Roll([1, 1, 2, 2, 5])]
    assert state["table"]["aside_read"] == [
        {"value": 5, "confidence": 1.0, "status": "ok", "box": [2000, 0, 2040, 40]}
    ]
    assert state["table"]["dice_read"] == [
        {"value": d.value, "confidence": 0.99, "status": "ok", "box": list(d.box)} for d in thrown
    ]
    (fix,) = store.corrections(table.game_id)
    assert (fix.die, fix.value, [d["value"] for d in fix.replaced]) == (5, 5, [1, 1, 2, 2, 5, 1])
    # The 1 1 5 of the throw set aside: told from the corrected 5 lying out of the zone.
    table.on_reading(
        FakeReading(
            thrown[2:4], set_aside=(at(5, 2000, 0), at(1, 2060, 0), at(1, 2120, 0), at(5, 2180, 0))
        ),
        settled_now=True,
    )
    assert table.history.actions[3:] == [Keep([1, 1, 5])]
    again = Table(store)
    assert again.resume()
    assert again.history is not None
    assert again.history.actions == table.history.actions


def test_a_die_number_past_those_out_of_the_zone_is_refused(table: Table) -> None:
    """The dice are numbered in the roll zone, then out of it; a number past them all is an
    invalid correction that says how many there are."""
    table.on_reading(FakeReading((at(2, 0, 0),), set_aside=(at(5, 2000, 0),)), settled_now=True)
    with pytest.raises(InvalidAction, match=r"has 2 dice \(1 of them out of the roll zone\)"):
        table.correct(2, 3, source="phone")


def _again(first: FakeReading, **changes: FakeDie) -> FakeReading:
    """``first`` read again: the same dice at their places, but those in ``changes`` (by index,
    ``d3=...``)."""
    return FakeReading(
        tuple(changes.get(f"d{i}", die) for i, die in enumerate(first.dice)), first.status
    )


def test_a_die_read_again_in_better_light_is_corrected_by_the_camera(
    store: Store, table: Table
) -> None:
    """The camera's light was set right under the dice of a roll: the 4 it read in the
    blown-out picture is a 6, and the camera corrects it as a phone would."""
    first = reading(1, 1, 5, 2, 3, 4)
    table.on_reading(first, settled_now=True)
    box = first.dice[5].box
    assert table.look_again(_again(first, d5=FakeDie(6, box=box)))
    assert table.history is not None
    assert table.history.actions == [Roll([1, 1, 2, 3, 5, 6])]
    assert events(store, table)[1:] == [
        ("undo", None, "camera"),
        ("action", {"roll": [1, 1, 2, 3, 5, 6]}, "camera"),
    ]
    assert [c.source for c in store.corrections(table.game_id)] == ["camera"]
    # The dice as the game left them, but no person set that die: the teach sheet and the
    # photo export take it for the model's read, not for a label given by hand.
    (stored,) = store.readings()
    assert ([d["value"] for d in stored.dice], stored.corrected) == ([1, 1, 5, 2, 3, 6], ())
    assert table.state_json()["table"]["dice_read"][5]["confidence"] == FakeDie(6).confidence
    # Read again as it now is: the same dice, nothing more to do.
    assert table.look_again(_again(first, d5=FakeDie(6, box=box)))
    assert len(events(store, table)) == 3


@pytest.mark.parametrize(
    ("again", "same"),
    [
        # Unsure the second time: the first reading stands.
        (lambda first: _again(first, d5=FakeDie(6, 0.4, "uncertain", first.dice[5].box)), True),
        # The die is no longer where it lay: other dice, for the caller to hand over as a throw.
        (lambda first: _again(first, d5=FakeDie(6, box=(300, 300, 309, 309))), False),
        # A die fewer: not the same dice either.
        (lambda first: FakeReading(first.dice[:5]), False),
    ],
    ids=["unsure", "moved", "one-fewer"],
)
def test_a_die_read_again_is_not_corrected_unless_surely_read_at_its_place(
    store: Store, table: Table, again: Callable[[FakeReading], FakeReading], same: bool
) -> None:
    first = reading(1, 1, 5, 2, 3, 4)
    table.on_reading(first, settled_now=True)
    assert table.look_again(again(first)) == same
    assert table.history is not None
    assert table.history.actions == [Roll([1, 1, 2, 3, 4, 5])]
    assert store.corrections(table.game_id) == []


def test_after_the_game_went_on_the_camera_leaves_the_reading_to_the_players(table: Table) -> None:
    first = reading(1, 1, 5, 2, 3, 4)
    table.on_reading(first, settled_now=True)
    table.act(Keep([1, 1]), source="phone")
    assert table.look_again(_again(first, d5=FakeDie(6, box=first.dice[5].box)))
    assert table.history is not None
    assert table.history.actions == [Roll([1, 1, 2, 3, 4, 5]), Keep([1, 1])]


def test_a_roll_refused_in_a_bad_light_is_taken_when_read_again(table: Table) -> None:
    """A die left unread in the blown-out picture: the throw is refused. Once the light is
    set right it is read, and the roll is taken as if it had just settled."""
    first = reading(1, 1, 5, 2, 3, 4)
    unread = FakeDie(None, 0.3, "uncertain", first.dice[5].box)
    table.on_reading(_again(first, d5=unread), settled_now=True)
    assert table.history is not None
    assert table.history.actions == []
    assert table.state_json()["table"]["problem"]
    assert table.look_again(first)
    assert table.history.actions == [Roll([1, 1, 2, 3, 4, 5])]
    assert table.state_json()["table"]["problem"] == ""
    assert table.look_again(first)  # the same dice again: nothing new
    assert table.history.actions == [Roll([1, 1, 2, 3, 4, 5])]


def test_dice_taken_for_set_aside_by_an_old_roll_zone_are_a_roll_when_read_again(
    table: Table,
) -> None:
    """A pushed tray, six dice thrown into its far part before the roll zone followed it: all
    read as out of the zone, which makes nothing at the first throw. Read again with the zone
    on the tray, the same dice at the same places are the roll."""
    first = reading(1, 1, 5, 2, 3, 4)
    table.on_reading(FakeReading((), set_aside=first.dice), settled_now=True)
    assert table.history is not None
    assert table.history.actions == []
    assert table.look_again(first)
    assert table.history.actions == [Roll([1, 1, 2, 3, 4, 5])]


def test_dice_split_otherwise_after_a_roll_was_taken_are_left_to_the_players(
    table: Table,
) -> None:
    first = reading(1, 1, 5, 2, 3, 4)
    table.on_reading(first, settled_now=True)
    split = FakeReading(first.dice[:4], set_aside=first.dice[4:])
    assert table.look_again(split)  # the same dice: not a throw for the caller to hand over
    assert table.history is not None
    assert table.history.actions == [Roll([1, 1, 2, 3, 4, 5])]
    assert table.state_json()["table"]["problem"] == ""


# -- places said to hold no die ---------------------------------------------------------------

KNOB = (300, 300, 309, 309)  # where the tray has something the camera takes for a die
KNOB_SIX = FakeDie(6, 0.97, "ok", KNOB)  # what the camera reads there


def thrown(*values: int, dy: int = 0, extra: FakeDie | None = None) -> FakeReading:
    """:func:`reading` moved down by ``dy`` (another throw lands elsewhere), with ``extra``
    (a phantom) read as the last die."""
    dice = [
        FakeDie(d.value, box=(d.box[0], d.box[1] + dy, d.box[2], d.box[3] + dy))
        for d in reading(*values).dice
    ]
    return FakeReading((*dice, *([extra] if extra else [])))


@pytest.mark.parametrize(
    ("phantom", "asked"),
    [
        (KNOB_SIX, "7 dice are in the roll zone"),
        (FakeDie(None, 0.9, "cocked", KNOB), "a die at [300, 300, 309, 309] leans on something"),
    ],
    ids=["read-as-a-six", "read-as-leaning"],
)
def test_a_place_said_to_hold_no_die_is_not_asked_about_at_every_throw(
    store: Store, table: Table, phantom: FakeDie, asked: str
) -> None:
    """A knob of the tray taken for a die: once a phone said "no die there", the same thing at
    the same place is left out of the next throws, shown as no die, with no question."""
    table.on_reading(thrown(1, 1, 5, 2, 3, 4, extra=phantom), settled_now=True)
    assert asked in table.state_json()["table"]["problem"]
    table.correct(6, 0)
    table.act(Keep([1, 1, 5]), source="phone")
    table.press("bank")
    # Bob's throw: the knob is seen again, a pixel off.
    again = FakeDie(phantom.value, 0.95, phantom.status, (301, 300, 310, 309))
    table.on_reading(thrown(2, 2, 3, 4, 6, 6, dy=200, extra=again), settled_now=True)
    state = table.state_json()
    assert state["table"]["problem"] == ""
    assert table.history is not None
    assert table.history.actions[-1] == Roll([2, 2, 3, 4, 6, 6])
    assert state["table"]["dice_read"][6]["status"] == "no_die"
    assert store.readings()[-1].dice[6]["status"] == "no_die"
    # Nothing was asked, so nothing is owed to the teach sheet or the photo export.
    assert store.readings()[-1].corrected == ()


@pytest.mark.parametrize(
    "landed",
    [
        FakeDie(3, 0.99, "ok", (300, 300, 309, 309)),  # another face than the knob's six
        FakeDie(6, 0.99, "ok", (294, 300, 303, 309)),  # a six, but not where the knob is
    ],
    ids=["other-face", "other-place"],
)
def test_a_die_landing_near_a_place_said_to_hold_no_die_is_read(
    table: Table, landed: FakeDie
) -> None:
    table.on_reading(thrown(1, 1, 5, 2, 3, 4, extra=KNOB_SIX), settled_now=True)
    table.correct(6, 0)
    table.act(Keep([1, 1, 5]), source="phone")
    table.press("bank")
    table.on_reading(thrown(2, 2, 4, 6, 6, dy=200, extra=landed), settled_now=True)
    assert table.state_json()["table"]["problem"] == ""
    assert table.history is not None
    assert table.history.actions[-1] == Roll(sorted([2, 2, 4, 6, 6, int(landed.value or 0)]))


def test_a_place_left_out_by_mistake_is_read_again_once_given_a_value(table: Table) -> None:
    """A real six came to rest on the knob, as the knob reads: left out, the throw is short of
    a die. Giving it its value takes the throw, and the place is no longer left out."""
    table.on_reading(thrown(1, 1, 5, 2, 3, 4, extra=KNOB_SIX), settled_now=True)
    table.correct(6, 0)
    table.act(Keep([1, 1, 5]), source="phone")
    table.press("bank")
    table.on_reading(thrown(2, 2, 3, 4, 6, dy=200, extra=KNOB_SIX), settled_now=True)
    assert table.state_json()["table"]["problem_code"] == "roll_zone_missing"
    state = table.correct(5, 6)
    assert state["table"]["problem"] == ""
    assert table.history is not None
    assert table.history.actions[-1] == Roll([2, 2, 3, 4, 6, 6])
    table.undo(source="phone")
    table.on_reading(thrown(2, 2, 3, 4, 6, dy=200, extra=KNOB_SIX), settled_now=True)
    assert table.history.actions[-1] == Roll([2, 2, 3, 4, 6, 6])


@pytest.mark.parametrize(
    ("tray", "left_out_at"),
    [
        ((250, 250, 400, 400), (340, 300, 349, 309)),  # on the tray: it goes with it
        ((500, 250, 650, 400), KNOB),  # off the tray (a knob of the table): it stays
    ],
    ids=["on-the-tray", "off-the-tray"],
)
def test_a_place_said_to_hold_no_die_moves_with_the_tray_it_lies_on(
    table: Table, tray: tuple[int, int, int, int], left_out_at: tuple[int, int, int, int]
) -> None:
    table.on_reading(thrown(1, 1, 5, 2, 3, 4, extra=KNOB_SIX), settled_now=True)
    table.correct(6, 0)
    table.act(Keep([1, 1, 5]), source="phone")
    table.press("bank")
    x0, y0, x1, y1 = tray
    table.tray_moved(tray, (x0 + 40, y0, x1 + 40, y1))  # pushed 40 px to the right
    table.on_reading(
        thrown(2, 2, 3, 4, 6, 6, dy=200, extra=FakeDie(6, 0.97, "ok", left_out_at)),
        settled_now=True,
    )
    assert table.state_json()["table"]["problem"] == ""
    assert table.history is not None
    assert table.history.actions[-1] == Roll([2, 2, 3, 4, 6, 6])


def test_places_said_to_hold_no_die_are_remembered_across_a_restart(store: Store) -> None:
    first = Table(store)
    first.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    first.on_reading(thrown(1, 1, 5, 2, 3, 4, extra=KNOB_SIX), settled_now=True)
    first.correct(6, 0)
    first.act(Keep([1, 1, 5]), source="phone")
    first.press("bank")
    restarted = Table(store)
    assert restarted.resume()
    restarted.on_reading(thrown(2, 2, 3, 4, 6, 6, dy=200, extra=KNOB_SIX), settled_now=True)
    assert restarted.state_json()["table"]["problem"] == ""
    assert restarted.history is not None
    assert restarted.history.actions[-1] == Roll([2, 2, 3, 4, 6, 6])


def test_the_camera_reading_again_leaves_what_a_person_said(store: Store, table: Table) -> None:
    """A phone set the 4 to a 6 and said the knob is no die; the camera, reading the same dice
    again in better light, reads the 4 and the knob as before: the players' word stands."""
    first = thrown(1, 1, 5, 2, 3, 4, extra=KNOB_SIX)
    table.on_reading(first, settled_now=True)
    table.correct(6, 0)
    table.correct(5, 6)
    assert table.history is not None
    assert table.history.actions == [Roll([1, 1, 2, 3, 5, 6])]
    assert table.look_again(first)
    assert table.history.actions == [Roll([1, 1, 2, 3, 5, 6])]
    assert [c.source for c in store.corrections(table.game_id)] == ["phone", "phone"]


# -- fixing an earlier step (Table.amend) -------------------------------------------------------
# A throw misread or typed wrong, seen only turns later, fixed with every later step taken again,
# or refused with nothing changed.


@pytest.fixture
def played(store: Store) -> Table:
    """Kymppitonni: Ann's throw read by the camera (its 4 was a 6), her keep and bank, then
    Bob's throw typed on a phone."""
    t = Table(store)
    t.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    t.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    t.act(Keep([1, 1, 5]), source="phone")
    t.press("bank")
    t.act(Roll([2, 2, 3, 4, 6, 6]), source="phone")
    return t


def stored_actions(store: Store) -> list[Action]:
    """The actions in effect as the store replays them (what a restart resumes)."""
    stored = store.current_game()
    assert stored is not None
    return replay_events(stored).actions


def test_a_throw_fixed_turns_later_keeps_every_later_step(store: Store, played: Table) -> None:
    assert played.history is not None
    later = played.history.actions[1:]
    before, was = played.version, played.state_json()
    state = played.amend(0, Roll([1, 1, 2, 3, 5, 6]), source="phone")
    assert played.history.actions == [Roll([1, 1, 2, 3, 5, 6]), *later]
    assert stored_actions(store) == played.history.actions
    assert played.version != before
    # The fixed die was not kept: the scores and whose turn it is stay as they were.
    assert (state["players"], state["turn"]) == (was["players"], was["turn"])
    # The camera's photo of that throw is labelled as the players said: its 4 is a 6.
    assert state["table"]["dice_read"][5]["value"] == 6
    (photo,) = store.readings()
    assert ([d["value"] for d in photo.dice], photo.corrected) == ([1, 1, 5, 2, 3, 6], (5,))


def test_a_fix_that_a_later_step_no_longer_follows_is_refused(store: Store, played: Table) -> None:
    """Ann's throw fixed to dice without her kept 1 1 5: her keep no longer follows, and the
    refusal says which step and why; nothing changes, nothing is stored."""
    assert played.history is not None
    actions, events = played.history.actions, len(store.events(played.game_id or 0))
    with pytest.raises(IllegalAction) as info:
        played.amend(0, Roll([2, 2, 3, 4, 6, 6]), source="phone")
    assert "with step 1 fixed, step 2 (keep 1 1 5) no longer follows the rules" in str(info.value)
    assert (info.value.code, info.value.params["at"]) == ("fix_breaks", 2)
    assert played.history.actions == actions
    assert len(store.events(played.game_id or 0)) == events
    assert store.corrections() == []


@pytest.mark.parametrize(
    ("index", "action", "message"),
    [
        (4, Roll([1, 1, 2, 3, 5, 6]), "there is no step 5 to fix: the game has 4"),
        (-1, Roll([1, 1, 2, 3, 5, 6]), "there is no step 0 to fix: the game has 4"),
        (0, Roll([1, 1, 2, 3, 5]), "6"),  # the engine's own refusal: six dice are thrown
    ],
    ids=["past-the-end", "negative", "illegal-itself"],
)
def test_a_fix_of_no_step_or_an_illegal_one_changes_nothing(
    store: Store, played: Table, index: int, action: Roll, message: str
) -> None:
    """No such step is a malformed fix (InvalidAction); a throw the rules refuse, illegal."""
    assert played.history is not None
    actions = played.history.actions
    with pytest.raises((IllegalAction, InvalidAction), match=message):
        played.amend(index, action, source="phone")
    assert played.history.actions == actions
    assert stored_actions(store) == actions


def test_a_fix_that_ends_the_game_or_undoes_its_end(store: Store) -> None:
    """Sekvence to 10: fixing the throw that ended it to one worth less takes the game up
    again (a restart resumes it); fixing it back ends it again."""
    table = Table(store)
    table.new_game({"game": "sekvence", "players": ["Ann"], "options": {"target": 10}})
    table.act(Roll([1, 2, 3, 5, 5, 6]), source="phone")
    assert table.state_json()["finished"] is True
    table.amend(0, Roll([1, 2, 4, 5, 5, 6]), source="phone")
    assert table.state_json()["finished"] is False
    resumed = Table(store)
    assert resumed.resume()
    assert resumed.history is not None
    assert resumed.history.actions == [Roll([1, 2, 4, 5, 5, 6])]
    table.amend(0, Roll([1, 2, 3, 5, 5, 6]), source="phone")
    assert table.state_json()["finished"] is True
    assert store.current_game() is None


def test_a_stale_screen_cannot_fix(played: Table) -> None:
    with pytest.raises(IllegalAction, match="changed since your screen showed it"):
        played.amend(0, Roll([1, 1, 2, 3, 5, 6]), source="phone", seen=played.version - 1)


def test_the_last_reading_fixed_from_the_history_can_still_be_corrected(played: Table) -> None:
    """Bob's throw read by the camera, fixed from the history: the board can still correct
    that reading, as the game's last."""
    played.undo(source="phone")  # Bob's throw typed: taken back, the camera reads it instead
    played.on_reading(thrown(2, 2, 3, 4, 6, 5, dy=200), settled_now=True)
    assert played.history is not None
    played.amend(len(played.history) - 1, Roll([2, 2, 3, 4, 6, 6]), source="phone")
    assert played.history.actions[-1] == Roll([2, 2, 3, 4, 6, 6])
    state = played.correct(5, 1)  # the 5 (its photo: the 6 given in the fix) was a 1 after all
    assert played.history.actions[-1] == Roll([1, 2, 2, 3, 4, 6])
    assert state["table"]["dice_read"][5]["value"] == 1


@pytest.fixture
def both_read(store: Store) -> Table:
    """As ``played``, but Bob's throw (its 6 read as a 5) read by the camera too, elsewhere in
    the tray: Ann's reading is no longer the one the table holds."""
    t = Table(store)
    t.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    t.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    t.act(Keep([1, 1, 5]), source="phone")
    t.press("bank")
    t.on_reading(thrown(2, 2, 3, 4, 6, 5, dy=200), settled_now=True)
    assert t.history is not None
    assert t.history.actions[-1] == Roll([2, 2, 3, 4, 5, 6])
    return t


def labels(store: Store) -> list[tuple[list[int | None], tuple[int, ...]]]:
    """Each stored reading's dice as the players left them, and which a person set."""
    return [([d["value"] for d in r.dice], r.corrected) for r in store.readings()]


@pytest.mark.parametrize("restarted", [False, True], ids=["turns-later", "after-a-restart"])
def test_a_throw_fixed_turns_later_labels_the_photo_that_showed_it(
    store: Store, both_read: Table, restarted: bool
) -> None:
    """Ann's 4 was a 6, seen once Bob had thrown (or after a power cut): the photo of her
    throw is labelled 6, so a table tuning itself on its photos learns the face the players
    said, not the misread one."""
    table = both_read
    if restarted:
        table = Table(store)
        assert table.resume()
    table.amend(0, Roll([1, 1, 2, 3, 5, 6]), source="phone")
    assert labels(store) == [([1, 1, 5, 2, 3, 6], (5,)), ([2, 2, 3, 4, 6, 5], ())]


@pytest.mark.parametrize(
    ("step", "fixed", "photo", "doubts"),
    [
        (0, [1, 1, 5, 4, 6, 6], ([1, 1, 5, 6, 6, 4], (3, 4)), set()),  # the 2 and 3 were sixes
        (0, [1, 1, 5, 4, 6, 4], ([1, 1, 5, 2, 3, 4], ()), {3, 4}),  # a 6 and a 4: which was which?
        (3, [1, 1, 3, 4, 6, 5], ([1, 1, 3, 4, 6, 5], (0, 1)), set()),  # both twos were ones
        (3, [1, 2, 3, 4, 6, 5], ([2, 2, 3, 4, 6, 5], ()), {0, 1}),  # one of the twos: which?
    ],
    ids=["two-faces-to-one", "two-faces-to-two", "a-face-twice", "one-of-two-alike"],
)
def test_a_throw_fixed_by_several_dice_labels_them_when_it_says_which(
    store: Store, both_read: Table, step: int, fixed: list[int], photo: Any, doubts: set[int]
) -> None:
    """A fix that takes out every die of some faces and puts one face in their place says
    which dice were misread and what they showed: the photo is labelled so (Ann's, no longer
    held, or Bob's, the last). Otherwise which die showed which face is not known: no label
    changes, and the dice it may be are kept as doubted (asked about, no labels till then)."""
    both_read.amend(step, Roll(fixed), source="phone")
    ann, bob = labels(store)
    assert (ann if step == 0 else bob) == photo
    assert (bob if step == 0 else ann)[1] == ()
    # Where it does not say which, the dice it may be are no labels until the players say.
    first, second = (r.id for r in store.readings())
    fixed_reading = first if step == 0 else second
    assert store.doubted() == ({fixed_reading: doubts} if doubts else {})


@pytest.mark.parametrize(
    ("step", "die", "value", "throw", "photo"),
    [
        # Bob's second 2 was a 1: typed, which 2 it was would not be known.
        (3, 1, 1, [1, 2, 3, 4, 5, 6], ([2, 1, 3, 4, 6, 5], (1,))),
        # Ann's 4 was a 6, turns ago (her reading no longer held).
        (0, 5, 6, [1, 1, 2, 3, 5, 6], ([1, 1, 5, 2, 3, 6], (5,))),
    ],
    ids=["one-of-two-alike", "turns-ago"],
)
def test_a_throw_fixed_by_a_tap_on_its_photo_labels_that_very_die(
    store: Store,
    both_read: Table,
    step: int,
    die: int,
    value: int,
    throw: list[int],
    photo: tuple[list[int], tuple[int, ...]],
) -> None:
    """The die tapped on an earlier throw's photo names itself: the throw is fixed by its face
    and the photo labelled at that die, even where typing the throw could not say which."""
    read = [d["value"] for d in both_read.step_dice(step)["dice"]]
    assert read == [*photo[0][:die], read[die], *photo[0][die + 1 :]]
    assert read[die] != value
    both_read.amend_die(step, die, value, source="phone")
    assert both_read.history is not None
    assert both_read.history.actions[step] == Roll(throw)
    assert stored_actions(store) == both_read.history.actions
    ann, bob = labels(store)
    assert (ann if step == 0 else bob) == photo
    assert [d["value"] for d in both_read.step_dice(step)["dice"]] == photo[0]


@pytest.mark.parametrize(
    ("step", "die", "value", "error", "message"),
    [
        (1, 0, 6, InvalidAction, "step 2 is no throw (keep 1 1 5)"),
        (0, 6, 6, InvalidAction, "has 6 dice in the roll zone (0 to 5); there is no die 6"),
        (0, 5, 0, InvalidAction, "a die of a throw shows 1 to 6, not 0"),
        (0, 0, 2, IllegalAction, "no longer follows the rules"),  # her kept 1 is gone
        (7, 0, 2, InvalidAction, "there is no step 8 to fix"),
    ],
    ids=["not-a-throw", "no-such-die", "no-die-there", "keep-breaks", "no-such-step"],
)
def test_a_tap_fix_that_cannot_be_made_changes_nothing(
    store: Store,
    both_read: Table,
    step: int,
    die: int,
    value: int,
    error: type[Exception],
    message: str,
) -> None:
    assert both_read.history is not None
    actions = both_read.history.actions
    with pytest.raises(error, match=re.escape(message)):
        both_read.amend_die(step, die, value, source="phone")
    assert both_read.history.actions == actions == stored_actions(store)
    assert store.corrections() == []


def test_a_tap_on_a_die_in_doubt_says_which_and_leaves_the_throw(
    store: Store, both_read: Table
) -> None:
    """Bob's throw typed again with one of its 2s a 1: which 2, the fix could not say, so both
    are drawn unsure on the photo. A tap on the second says it was the 1: the throw stands as
    fixed (not 1 1 ...), the die is labelled 1, and the other 2 is then surely the 2."""
    both_read.amend(3, Roll([1, 2, 3, 4, 6, 5]), source="phone")
    assert both_read.history is not None
    throw = both_read.history.actions[3]
    statuses = [d["status"] for d in both_read.step_dice(3)["dice"]]
    assert statuses == ["uncertain", "uncertain", "ok", "ok", "ok", "ok"]
    state = both_read.amend_die(3, 1, 1, source="phone")
    assert both_read.history.actions[3] == throw == Roll([1, 2, 3, 4, 5, 6])
    assert stored_actions(store) == both_read.history.actions
    assert labels(store)[1] == ([2, 1, 3, 4, 6, 5], (0, 1))
    assert [d["status"] for d in both_read.step_dice(3)["dice"]] == ["ok"] * 6
    assert [d["value"] for d in state["table"]["dice_read"]] == [2, 1, 3, 4, 6, 5]


def test_a_tap_on_a_die_in_doubt_that_the_throw_cannot_place_is_refused(
    store: Store, both_read: Table
) -> None:
    """Ann's 2 and 3 fixed to a 6 and a 4: both in doubt, the throw counting them as 4 and 6.
    A tap saying the 2 was a 5 fits neither, and which of 4 and 6 it replaces is not known:
    refused, nothing changed; typing the throw is the way."""
    both_read.amend(0, Roll([1, 1, 5, 4, 6, 4]), source="phone")
    assert both_read.history is not None
    actions = both_read.history.actions
    with pytest.raises(InvalidAction, match="may count it as any of 4 6"):
        both_read.amend_die(0, 3, 5, source="phone")
    assert both_read.history.actions == actions == stored_actions(store)
    # Saying it was the 6 fits: labelled, the throw as it stands; the 3 is then the 4.
    both_read.amend_die(0, 3, 6, source="phone")
    assert both_read.history.actions == actions
    assert labels(store)[0] == ([1, 1, 5, 6, 4, 4], (3, 4))
    assert store.doubted() == {}


def test_a_typed_throw_has_no_photo_to_fix_by(played: Table) -> None:
    """Bob's throw was typed: no reading made it, so there is no die of it to tap."""
    with pytest.raises(InvalidAction, match="step 4 was not read by the camera"):
        played.step_dice(3)
    with pytest.raises(InvalidAction, match="step 4 was not read by the camera"):
        played.amend_die(3, 0, 1, source="phone")


def test_a_step_taken_again_by_a_fix_stays_its_readings(store: Store, both_read: Table) -> None:
    """Fixing Ann's throw takes Bob's again: his is still the throw of his reading, so fixing
    it next (after a restart) labels his photo."""
    both_read.amend(0, Roll([1, 1, 2, 3, 5, 6]), source="phone")
    first, second = (r.id for r in store.readings())
    assert store.made(both_read.game_id or 0) == [first, None, None, second]
    table = Table(store)
    assert table.resume()
    table.amend(3, Roll([2, 2, 3, 4, 6, 6]), source="phone")
    assert labels(store) == [([1, 1, 5, 2, 3, 6], (5,)), ([2, 2, 3, 4, 6, 6], (5,))]


def test_a_fixed_throw_that_no_reading_made_labels_no_photo(store: Store, played: Table) -> None:
    """Bob's throw was typed: fixing it corrects no photo (Ann's least of all)."""
    played.amend(3, Roll([2, 2, 3, 4, 6, 5]), source="phone")
    assert labels(store) == [([1, 1, 5, 2, 3, 4], ())]
    assert store.corrections() == []


def test_a_die_held_after_its_throw_carries_its_fixed_face(store: Store) -> None:
    """Generał: a 2 read as a 1 and held with the other 1, then the rest thrown again and
    written as ones. Fixed, the hold names the die by its own face (1 2), and the ones are
    scored as they lie: 2, not 3."""
    table = Table(store)
    table.new_game({"game": "general", "players": ["Ann", "Bob"]})
    for step in (Roll([1, 1, 3, 4, 5]), Keep([1, 1]), Roll([1, 2, 6]), Score("ones")):
        table.act(step, source="phone")
    state = table.amend(0, Roll([1, 2, 3, 4, 5]), source="phone")
    assert table.history is not None
    assert table.history.actions == [
        Roll([1, 2, 3, 4, 5]),
        Keep([1, 2]),
        Roll([1, 2, 6]),
        Score("ones"),
    ]
    assert [p["score"] for p in state["players"]] == [2, 0]


# -- fixing a step by choosing (Table.choices) ----------------------------------------------------
# A figure written into the wrong category, or the wrong dice set aside, seen turns later: the
# phone offers what else that step could have been, each one the later steps still follow.


@pytest.fixture
def written(store: Store) -> Table:
    """Generał: Ann writes 2 2 2 5 5 into "twos" (she meant the full house), Bob writes
    his throw, then Ann writes her next throw into the full house."""
    t = Table(store)
    t.new_game({"game": "general", "players": ["Ann", "Bob"]})
    for step in (
        Roll([2, 2, 2, 5, 5]),
        Score("twos"),
        Roll([1, 3, 4, 6, 6]),
        Score("sixes"),
        Roll([3, 3, 6, 6, 6]),
        Score("full_house"),
    ):
        t.act(step, source="phone")
    return t


def chosen(choices: dict[str, Any]) -> dict[str, int | None]:
    """The choices offered, as category -> points written."""
    return {str(c["action"]["score"]): c["points"] for c in choices["choices"]}


def test_a_written_figure_offers_every_other_category_with_its_points(written: Table) -> None:
    offered = chosen(written.choices(1))
    assert written.choices(1)["action"] == {"score": "twos"}
    assert "twos" not in offered
    # What the same dice write elsewhere (RULES §2: the sum of the fives; Full 25, as G09).
    assert (offered["fives"], offered["full_house"], offered["ones"]) == (10, 25, 0)


def test_two_figures_written_the_wrong_way_round_trade_places(store: Store, written: Table) -> None:
    """Fixing Ann's "twos" to the full house moves her later full house into "twos", where
    3 3 6 6 6 writes nothing; everyone else's steps stay."""
    assert written.history is not None
    state = written.amend(1, Score("full_house"), source="phone")
    assert written.history.actions[1] == Score("full_house")
    assert written.history.actions[5] == Score("twos")
    assert written.history.actions[3] == Score("sixes")
    assert stored_actions(store) == written.history.actions
    # Ann: Full 25, then 3 3 6 6 6 as twos, 0 (was 6 + 25); Bob's sixes 12 stay.
    assert [p["score"] for p in state["players"]] == [25, 12]


def test_a_throw_offers_no_choices_it_is_typed(written: Table) -> None:
    assert written.choices(0)["choices"] == []


def test_choices_leave_out_what_a_later_step_would_not_follow(store: Store) -> None:
    """Kymppitonni: Ann set 1 5 aside and threw the other four. Setting aside 1 1 or 5 5
    leaves four to throw too: offered; one die, or three, would not leave her four-dice throw
    following: not offered, though the rules took them then."""
    table = Table(store)
    table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    for step in (Roll([1, 1, 5, 5, 2, 3]), Keep([1, 5]), Roll([1, 2, 4, 6])):
        table.act(step, source="phone")
    assert table.history is not None
    legal = table.history.game.legal_actions(table.history.state_after(1))
    offered = sorted(c["action"]["keep"] for c in table.choices(1)["choices"])
    assert offered == [[1, 1], [5, 5]]
    assert Keep([1]) in legal
    assert Keep([1, 1, 5]) in legal
    with pytest.raises(IllegalAction, match="no longer follows"):
        table.amend(1, Keep([1, 1, 5]), source="phone")


def test_choices_of_no_step_are_refused(written: Table) -> None:
    with pytest.raises(InvalidAction, match="there is no step 7 to fix: the game has 6"):
        written.choices(6)
