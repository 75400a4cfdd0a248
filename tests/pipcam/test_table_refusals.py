"""The table's refusals and problems as data: each carries its code and params, and says in
English exactly what it said before (the terminal and the logs print that)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pipcam.store import Store
from pipcam.table import Table, TableRefusal
from scoring.core import Keep, Roll
from scoring.errors import IllegalAction, Refusal, RefusalCode
from tests.pipcam._fakes import FakeDie, FakeReading


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A real SQLite store in a temporary folder."""
    with Store(tmp_path / "pipcam.db") as s:
        yield s


def reading(*values: int) -> FakeReading:
    """A settled reading of these faces, each read with confidence."""
    return FakeReading(tuple(FakeDie(v) for v in values))


def kymppi(store: Store) -> Table:
    table = Table(store)
    table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    return table


def game_over(store: Store) -> Table:
    """A game of 1000 that Ann won on her first throw (five of a kind wins)."""
    table = Table(store)
    table.new_game(
        {"game": "thousand", "players": ["Ann", "Bob"], "options": {"five_of_a_kind_wins": True}}
    )
    table.act(Roll([5, 5, 5, 5, 5]), source="phone")
    return table


STALE = (
    "the game has changed since your screen showed it (another phone, a button or the camera"
    " was first): look again, then try again"
)

REFUSED: list[tuple[str, Callable[[Store], Any], RefusalCode, dict[str, Any], str]] = [
    ("stale", lambda s: kymppi(s).undo(source="phone", seen=-1), TableRefusal.STALE, {}, STALE),
    (
        "no game",
        lambda s: Table(s).undo(source="phone"),
        TableRefusal.NO_GAME,
        {},
        "no game is being played: start one first",
    ),
    (
        "undo",
        lambda s: kymppi(s).undo(source="phone"),
        TableRefusal.NOTHING_TO_UNDO,
        {},
        "nothing to undo: no action has been taken in this game",
    ),
    (
        "redo",
        lambda s: kymppi(s).redo(source="phone"),
        TableRefusal.NOTHING_TO_REDO,
        {},
        "nothing to redo: no action has been undone since the last one",
    ),
    (
        "no reading",
        lambda s: kymppi(s).correct(0, 5),
        TableRefusal.NO_READING,
        {},
        "there is no reading to correct: no dice have settled yet",
    ),
    (
        "coach off",
        lambda s: kymppi(s).advice(),
        TableRefusal.COACH_OFF,
        {},
        "the coach is off at this table: start it with pipcam run --coach (or coach = true in"
        " the configuration)",
    ),
    (
        "game over",
        lambda s: game_over(s).act(Roll([1, 2, 3, 4, 5]), source="phone"),
        Refusal.GAME_OVER,
        {},
        "cannot roll 1 2 3 4 5: the game is over",
    ),
    (
        "dice count",
        lambda s: kymppi(s).act(Roll([1, 2, 3, 4]), source="phone"),
        Refusal.WRONG_DICE_COUNT,
        {"n": 6, "got": 4},
        "cannot roll 1 2 3 4: 6 dice are to be thrown, not 4",
    ),
]


@pytest.mark.parametrize(
    ("call", "code", "params", "english"),
    [case[1:] for case in REFUSED],
    ids=[case[0] for case in REFUSED],
)
def test_a_refusal_carries_its_code_params_and_english(
    store: Store,
    call: Callable[[Store], Any],
    code: RefusalCode,
    params: dict[str, Any],
    english: str,
) -> None:
    with pytest.raises(IllegalAction) as caught:
        call(store)
    assert (caught.value.code, caught.value.params, str(caught.value)) == (code, params, english)


def seven_dice(table: Table) -> None:
    table.on_reading(reading(1, 1, 5, 2, 3, 4, 6), settled_now=True)


def five_dice(table: Table) -> None:
    table.on_reading(reading(1, 1, 5, 2, 3), settled_now=True)


def doubtful(table: Table) -> None:
    dice = (FakeDie(1), FakeDie(None, 0.4, "cocked", (5, 6, 30, 31)), *[FakeDie(2)] * 4)
    table.on_reading(FakeReading(dice), settled_now=True)


def covered(table: Table) -> None:
    under = FakeDie(None, 0.97, "uncertain", (5, 6, 30, 31), hidden=True)
    table.on_reading(FakeReading((FakeDie(1), under, *[FakeDie(2)] * 4)), settled_now=True)


def cut_by_the_view(table: Table) -> None:
    at_edge = FakeDie(None, 0.6, "uncertain", (0, 6, 25, 31), hidden=True, cut=True)
    table.on_reading(FakeReading((FakeDie(1), at_edge, *[FakeDie(2)] * 4)), settled_now=True)


def covered_and_cut(table: Table) -> None:
    under = FakeDie(None, 0.97, "uncertain", (50, 6, 80, 31), hidden=True)
    at_edge = FakeDie(None, 0.6, "uncertain", (0, 6, 25, 31), hidden=True, cut=True)
    table.on_reading(FakeReading((FakeDie(1), at_edge, under, *[FakeDie(2)] * 3)), settled_now=True)


def covered_and_cocked(table: Table) -> None:
    under = FakeDie(None, 0.97, "uncertain", (5, 6, 30, 31), hidden=True)
    cocked = FakeDie(None, 0.4, "cocked", (50, 6, 80, 31))
    table.on_reading(FakeReading((FakeDie(1), under, cocked, *[FakeDie(2)] * 3)), settled_now=True)


def not_scoring(table: Table) -> None:
    table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    table.on_reading(reading(1, 5, 3, 4), settled_now=True)  # 1 and 2 taken out


def not_following(table: Table) -> None:
    table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    table.on_reading(reading(6, 6), settled_now=True)


def landed_out(table: Table) -> None:
    """1 and 5 set aside (out of the roll zone), the four others thrown: one lands out of the
    zone, among the set-aside."""

    def at(v: int, x: int, y: int) -> FakeDie:
        return FakeDie(v, box=(x, y, x + 40, y + 40))

    first = [at(v, 60 * i, 0) for i, v in enumerate([1, 5, 2, 3, 4, 6])]
    aside = (at(1, 2000, 0), at(5, 2060, 0))
    table.on_reading(FakeReading(tuple(first)), settled_now=True)
    table.on_reading(FakeReading(tuple(first[2:]), set_aside=aside), settled_now=True)
    thrown = (at(6, 100, 500), at(6, 300, 500), at(2, 500, 500))
    table.on_reading(FakeReading(thrown, set_aside=(*aside, at(3, 2030, 200))), settled_now=True)


def confirm_bank(table: Table) -> None:
    table.press("bank")


def hold_new_game(table: Table) -> None:
    table.act(Roll([1, 1, 5, 2, 3, 4]), source="phone")
    table.press("new_game")


PROBLEMS: list[tuple[Callable[[Table], None], str, dict[str, Any], str]] = [
    (
        seven_dice,
        "roll_zone_count",
        {"read": 7, "n": 6},
        "7 dice are in the roll zone but 6 were to be thrown; take the others out, correct the"
        " reading, or type the throw on a phone",
    ),
    (
        # Too few: one left in a hand, or hidden from the camera (a die half under a card).
        five_dice,
        "roll_zone_missing",
        {"read": 5, "n": 6},
        "only 5 dice are seen in the roll zone but 6 were to be thrown; throw any left out, move"
        " whatever hides a die from the camera, correct the reading, or type the throw on a phone",
    ),
    (
        doubtful,
        "doubtful",
        {"n": 1},
        "a die at [5, 6, 30, 31] leans on something: throw it again or correct it on a phone",
    ),
    (
        covered,
        "covered",
        {"n": 1},
        "a die at [5, 6, 30, 31] is partly hidden: move what covers it or correct it on a phone",
    ),
    (
        # Nothing lies over it: the camera's view ends across it.
        cut_by_the_view,
        "out_of_view",
        {"n": 1},
        "a die at [0, 6, 25, 31] is cut by the camera's edge: slide it into the camera's view"
        " without turning it, or correct it on a phone",
    ),
    (
        # Something to move all the same: each die is named for what hides it.
        covered_and_cut,
        "covered",
        {"n": 2},
        "a die at [0, 6, 25, 31] is cut by the camera's edge; a die at [50, 6, 80, 31] is"
        " partly hidden: move what covers it or correct it on a phone",
    ),
    (
        # One die to throw again among them: the dice are asked about as before.
        covered_and_cocked,
        "doubtful",
        {"n": 2},
        "a die at [5, 6, 30, 31] cannot be read; a die at [50, 6, 80, 31] leans on something:"
        " throw it again or correct it on a phone",
    ),
    (
        not_scoring,
        "dice_read",
        {
            "dice": [1, 3, 4, 5],
            "reason": {
                "detail": "cannot keep 1 2: every die set aside must score; the best set-aside"
                " of 1 1 2 3 4 5 is 1 1 5 for 250",
                "code": "keep_not_scoring",
                "params": {
                    "dice": [1, 2],
                    "shown": [1, 1, 2, 3, 4, 5],
                    "best": [1, 1, 5],
                    "points": 250,
                },
            },
        },
        "the dice read 1 3 4 5: cannot keep 1 2: every die set aside must score; the best"
        " set-aside of 1 1 2 3 4 5 is 1 1 5 for 250",
    ),
    (
        not_following,
        "not_following",
        {"dice": [6, 6], "table": [1, 1, 2, 3, 4, 5]},
        "the dice in the roll zone (6 6) do not follow from the dice on the table"
        " (1 1 2 3 4 5); set aside dice by taking them out of the roll zone",
    ),
    (
        landed_out,
        "landed_out",
        {"dice": [3], "n": 1, "thrown": 4},
        "1 of the 4 dice thrown landed out of the roll zone (3): throw it into the zone again,"
        " or type the throw on a phone",
    ),
    (
        confirm_bank,
        "nothing_to_bank",
        {},
        "cannot bank: nothing to bank yet: throw the dice first",
    ),
    (
        hold_new_game,
        "hold_again",
        {"seconds": 5},
        "the game is not over: hold confirm again within 5 s to abandon it and start a new one",
    ),
]


@pytest.mark.parametrize(
    ("make", "code", "params", "english"),
    PROBLEMS,
    ids=[case[1] for case in PROBLEMS],
)
def test_a_problem_carries_its_code_params_and_english(
    store: Store,
    make: Callable[[Table], None],
    code: str,
    params: dict[str, Any],
    english: str,
) -> None:
    table = kymppi(store)
    make(table)
    said = table.state_json()["table"]
    assert (said["problem_code"], said["problem_params"], said["problem"]) == (
        code,
        params,
        english,
    )


def test_a_problem_without_a_code_is_english_alone(store: Store) -> None:
    table = kymppi(store)
    table.report_problem("check the dice")
    said = table.state_json()["table"]
    assert (said["problem"], said["problem_code"], said["problem_params"]) == (
        "check the dice",
        None,
        {},
    )
    table.act(Roll([1, 1, 5, 2, 3, 4]), source="phone")
    table.act(Keep([1, 1, 5]), source="phone")
    assert table.state_json()["table"]["problem_code"] is None
