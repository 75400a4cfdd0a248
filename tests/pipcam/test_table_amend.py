"""Fixing an earlier step of the game (Table.amend): a throw misread or typed wrong, seen only
turns later, fixed with every later step taken again, or refused with nothing changed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pipcam.store import Store, replay_events
from pipcam.table import Table
from scoring.core import Action, Keep, Roll
from scoring.errors import IllegalAction, InvalidAction
from tests.pipcam.test_table_corrections import reading, thrown


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A real SQLite store in a temporary folder."""
    with Store(tmp_path / "pipcam.db") as s:
        yield s


@pytest.fixture
def table(store: Store) -> Table:
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


def test_a_throw_fixed_turns_later_keeps_every_later_step(store: Store, table: Table) -> None:
    assert table.history is not None
    later = table.history.actions[1:]
    before, was = table.version, table.state_json()
    state = table.amend(0, Roll([1, 1, 2, 3, 5, 6]), source="phone")
    assert table.history.actions == [Roll([1, 1, 2, 3, 5, 6]), *later]
    assert stored_actions(store) == table.history.actions
    assert table.version != before
    # The fixed die was not kept: the scores and whose turn it is stay as they were.
    assert (state["players"], state["turn"]) == (was["players"], was["turn"])
    # The camera's photo of that throw is labelled as the players said: its 4 is a 6.
    assert state["table"]["dice_read"][5]["value"] == 6
    (photo,) = store.readings()
    assert ([d["value"] for d in photo.dice], photo.corrected) == ([1, 1, 5, 2, 3, 6], (5,))


def test_a_fix_that_a_later_step_no_longer_follows_is_refused(store: Store, table: Table) -> None:
    """Ann's throw fixed to dice without her kept 1 1 5: her keep no longer follows, and the
    refusal says which step and why; nothing changes, nothing is stored."""
    assert table.history is not None
    actions, events = table.history.actions, len(store.events(table.game_id or 0))
    with pytest.raises(IllegalAction) as info:
        table.amend(0, Roll([2, 2, 3, 4, 6, 6]), source="phone")
    assert "with step 1 fixed, step 2 (keep 1 1 5) no longer follows the rules" in str(info.value)
    assert (info.value.code, info.value.params["at"]) == ("fix_breaks", 2)
    assert table.history.actions == actions
    assert len(store.events(table.game_id or 0)) == events
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
    store: Store, table: Table, index: int, action: Roll, message: str
) -> None:
    """No such step is a malformed fix (InvalidAction); a throw the rules refuse, illegal."""
    assert table.history is not None
    actions = table.history.actions
    with pytest.raises((IllegalAction, InvalidAction), match=message):
        table.amend(index, action, source="phone")
    assert table.history.actions == actions
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


def test_a_stale_screen_cannot_fix(table: Table) -> None:
    with pytest.raises(IllegalAction, match="changed since your screen showed it"):
        table.amend(0, Roll([1, 1, 2, 3, 5, 6]), source="phone", seen=table.version - 1)


def test_the_last_reading_fixed_from_the_history_can_still_be_corrected(table: Table) -> None:
    """Bob's throw read by the camera, fixed from the history: the board can still correct
    that reading, as the game's last."""
    table.undo(source="phone")  # Bob's throw typed: taken back, the camera reads it instead
    table.on_reading(thrown(2, 2, 3, 4, 6, 5, dy=200), settled_now=True)
    assert table.history is not None
    table.amend(len(table.history) - 1, Roll([2, 2, 3, 4, 6, 6]), source="phone")
    assert table.history.actions[-1] == Roll([2, 2, 3, 4, 6, 6])
    state = table.correct(5, 1)  # the 5 (its photo: the 6 given in the fix) was a 1 after all
    assert table.history.actions[-1] == Roll([1, 2, 2, 3, 4, 6])
    assert state["table"]["dice_read"][5]["value"] == 1
