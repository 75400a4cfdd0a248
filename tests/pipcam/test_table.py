"""The table: actions from readings, buttons and phones go through the engine and the store."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipcam.store import Store
from pipcam.table import Table
from scoring.core import Bank, Forbidden, Keep, Roll, Score
from scoring.errors import IllegalAction
from tests.pipcam._fakes import FakeDie, FakeReading


def reading(*values: int) -> FakeReading:
    """A settled reading of these faces, each read with confidence, all at one place (so a die
    of one such reading lies where a die of another with its face lay)."""
    return FakeReading(tuple(FakeDie(v) for v in values))


_throws = itertools.count(1)


def thrown(*values: int) -> FakeReading:
    """A throw of these faces: the dice land side by side, away from every earlier throw and
    never in an earlier throw's formation (that is a tray pushed with its dice in it)."""
    k = next(_throws)
    return placed(*((v, (60 + 7 * k) * i, 60 * k) for i, v in enumerate(values)))


def placed(*dice: tuple[int, int, int]) -> FakeReading:
    """Dice of value v with their boxes' corner at (x, y), 40 pixels a side."""
    return FakeReading(tuple(FakeDie(v, box=(x, y, x + 40, y + 40)) for v, x, y in dice))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A real SQLite store in a temporary folder."""
    with Store(tmp_path / "pipcam.db") as s:
        yield s


def kymppi(store: Store, **options: Any) -> Table:
    """A table with a two-player Kymppitonni game."""
    table = Table(store)
    table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"], "options": options})
    return table


def test_readings_become_rolls_and_keeps(store: Store) -> None:
    """A settled throw is a roll; dice taken out of the roll zone are a keep."""
    table = kymppi(store)
    table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    table.on_reading(reading(2, 3, 4), settled_now=True)  # 1 1 5 set aside
    assert table.history is not None
    assert table.history.actions == [Roll([1, 1, 5, 2, 3, 4]), Keep([1, 1, 5])]
    # The settle detector reports only a changed tray, so the next report is the next throw.
    table.on_reading(reading(5, 6, 6), settled_now=True)
    assert table.state_json()["turn"]["dice"] == [5, 6, 6]
    table.on_reading(reading(5, 6, 6), settled_now=True)  # the same dice again: nothing new
    assert len(table.history) == 3


def test_a_redo_clears_the_problem_as_an_undo_does(store: Store) -> None:
    """A problem said before a redo (a refused hold of confirm) is not left on a good game."""
    table = kymppi(store)
    table.act(Roll([1, 1, 5, 2, 3, 4]), source="phone")
    table.act(Keep([1, 1, 5]), source="phone")
    table.undo(source="phone")
    table.press("new_game")  # the game is not over: a second hold is asked for
    assert table.state_json()["table"]["problem"].startswith("the game is not over")
    table.redo(source="phone")
    assert table.state_json()["table"]["problem"] == ""


def test_reading_that_does_not_fit_is_refused(store: Store) -> None:
    """Seven dice where six are thrown: not applied, the problem is said, the game unchanged."""
    table = kymppi(store)
    table.on_reading(reading(1, 1, 5, 2, 3, 4, 6), settled_now=True)
    state = table.state_json()
    assert state["table"]["problem"] == (
        "7 dice are in the roll zone but 6 were to be thrown; "
        "take the others out, correct the reading, or type the throw on a phone"
    )
    assert table.history is not None
    assert len(table.history) == 0


def test_doubtful_die_is_not_guessed(store: Store) -> None:
    """A cocked or uncertain die asks for a re-roll instead of a guess."""
    table = kymppi(store)
    dice = (FakeDie(1), FakeDie(None, 0.4, "cocked", (5, 6, 30, 31)), *[FakeDie(2)] * 4)
    table.on_reading(FakeReading(dice), settled_now=True)
    assert "a die at [5, 6, 30, 31] leans on something" in table.state_json()["table"]["problem"]
    assert table.history is not None
    assert len(table.history) == 0


def test_kept_die_that_does_not_score_is_reported(store: Store) -> None:
    """Taking out a die that does not score is not a legal keep: said, not applied."""
    table = kymppi(store)
    table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    table.on_reading(reading(1, 5, 3, 4), settled_now=True)  # 1 and 2 taken out
    problem = table.state_json()["table"]["problem"]
    assert "cannot keep 1 2: every die set aside must score" in problem
    assert table.history is not None
    assert len(table.history) == 1


def test_buttons_confirm_bank_undo_redo(store: Store) -> None:
    """Confirm takes the engine's best option; bank, undo and redo do what they say."""
    table = kymppi(store)
    table.act(Roll([1, 1, 5, 2, 3, 4]), source="keyboard")
    assert table.state_json()["suggestion"] == {"keep": [1, 1, 5]}
    table.press("confirm")
    table.press("bank")
    assert [p["score"] for p in table.state_json()["players"]] == [250, 0]
    table.press("undo")
    assert [p["score"] for p in table.state_json()["players"]] == [0, 0]
    table.press("redo")
    assert [p["score"] for p in table.state_json()["players"]] == [250, 0]
    table.press("redo")
    assert "nothing to redo" in table.state_json()["table"]["problem"]


@pytest.mark.parametrize(
    ("dice", "box"),
    [
        ((6, 6, 6, 6, 5), "four_of_a_kind"),  # 29 in three of a kind, four of a kind and chance
        ((1, 2, 4, 5, 6), "chance"),  # worth most there alone
        ((3, 3, 3, 4, 5), "three_of_a_kind"),  # 18 there and in chance: chance is kept
        ((5, 5, 5, 5, 5), "general"),
    ],
    ids=["four-of-a-kind", "chance", "chance-last", "general"],
)
def test_general_confirm_of_boxes_worth_the_same_keeps_the_easier_one(
    store: Store, dice: tuple[int, ...], box: str
) -> None:
    """Of boxes worth the same now, confirm writes the harder to fill later (chance last)."""
    table = Table(store)
    table.new_game({"game": "general", "players": ["Ann", "Bob"]})
    table.on_reading(reading(*dice), settled_now=True)
    assert table.state_json()["suggestion"] == {"score": box}


def test_general_confirm_writes_best_category(store: Store) -> None:
    """In Generał the confirm button writes the category worth most now."""
    table = Table(store)
    table.new_game({"game": "general", "players": ["Ann", "Bob"]})
    table.on_reading(reading(2, 2, 5, 5, 5), settled_now=True)
    assert table.state_json()["suggestion"] == {"score": "full_house"}
    table.press("confirm")
    assert table.state_json()["players"] == [
        {"name": "Ann", "score": 25},
        {"name": "Bob", "score": 0},
    ]


def test_generał_reroll_all_without_holding(store: Store) -> None:
    """Five new dice with none held: keep nothing, then the new throw."""
    table = Table(store)
    table.new_game({"game": "general", "players": ["Ann", "Bob"]})
    table.on_reading(thrown(1, 2, 3, 4, 6), settled_now=True)
    table.on_reading(thrown(2, 2, 5, 6, 6), settled_now=True)
    assert table.history is not None
    assert table.history.actions == [Roll([1, 2, 3, 4, 6]), Keep([]), Roll([2, 2, 5, 6, 6])]


def test_the_same_faces_thrown_again_are_a_throw_and_dice_that_lie_still_are_not(
    store: Store,
) -> None:
    """Generał: all five thrown again to the same faces is the next throw (it was lost, and
    the player had an extra one); the same dice lying where they lay are nothing new, and one
    die turned over by hand is no throw of all five."""
    table = Table(store)
    table.new_game({"game": "general", "players": ["Ann", "Bob"]})
    first = placed((1, 0, 0), (2, 60, 0), (3, 120, 0), (4, 180, 0), (6, 240, 0))
    table.on_reading(first, settled_now=True)
    table.on_reading(first, settled_now=True)  # a shadow came and went: the same dice
    assert table.history is not None
    assert len(table.history) == 1
    turned = placed((1, 0, 0), (2, 60, 0), (3, 120, 0), (4, 180, 0), (5, 240, 0))
    table.on_reading(turned, settled_now=True)
    assert len(table.history) == 1
    problem = table.state_json()["table"]
    assert problem["problem_code"] == "left_lying"
    assert problem["problem_params"] == {"still": 4, "n": 5}
    table.on_reading(thrown(1, 2, 3, 4, 6), settled_now=True)
    assert table.history.actions == [Roll([1, 2, 3, 4, 6]), Keep([]), Roll([1, 2, 3, 4, 6])]
    assert table.state_json()["table"]["problem"] == ""


@pytest.mark.parametrize(
    ("touched", "taken"),
    [
        (None, False),  # not known (a phone's reading, a fake): lying where it lay, no throw
        ((), False),  # the camera saw no touch at its place: it was left lying
        ((0,), True),  # its place was touched (the die picked up): it landed there again
        ((0, 240), True),
    ],
    ids=["not-known", "untouched", "touched", "all-touched"],
)
def test_a_thrown_die_landing_where_a_die_lay_is_a_throw_when_its_place_was_touched(
    store: Store, touched: tuple[int, ...] | None, taken: bool
) -> None:
    """Generał: all five thrown again, and the 1 lands where the 1 lay. About one throw of six
    dice in a hundred does so on a tray; the camera tells it from a die left lying by whether
    its place changed while the dice moved (``touched``: the x of the places touched)."""
    table = Table(store)
    table.new_game({"game": "general", "players": ["Ann", "Bob"]})
    table.on_reading(
        placed((1, 0, 0), (2, 60, 0), (3, 120, 0), (4, 180, 0), (6, 240, 0)), settled_now=True
    )
    again = placed((1, 3, 2), (5, 60, 200), (5, 120, 200), (2, 180, 200), (3, 240, 200))
    table.on_reading(
        again,
        settled_now=True,
        touched=None if touched is None else (lambda box: int(box[0]) in touched),
    )
    assert table.history is not None
    if taken:
        assert table.history.actions[-1] == Roll([1, 2, 3, 5, 5])
        assert table.state_json()["table"]["problem"] == ""
    else:
        assert len(table.history) == 1
        problem = table.state_json()["table"]
        assert (problem["problem_code"], problem["problem_params"]) == (
            "left_lying",
            {"still": 1, "n": 5},
        )


@pytest.mark.parametrize(
    ("game", "first", "lying", "then"),
    [
        # 1000 sets the scoring dice aside by itself: taking them out leaves the rest lying.
        ("thousand", [1, 5, 2, 3, 6], [2, 3, 6], [Roll([1, 2, 3, 5, 6])]),
        # Kymppitonni: the dice taken out are the keep; the rest lie until they are thrown.
        ("kymppitonni", [1, 1, 5, 2, 3, 4], [2, 3, 4], [Roll([1, 1, 2, 3, 4, 5]), Keep([1, 1, 5])]),
    ],
)
def test_dice_left_lying_are_no_throw_and_a_die_put_back_is_none_either(
    store: Store, game: str, first: list[int], lying: list[int], then: list[Any]
) -> None:
    """The dice left in the roll zone after a set-aside were not thrown: no throw is taken from
    them (in 1000 it was, a bust that cost the turn), and a die picked up and put back with its
    face is said to be no throw. Then the real throw of them all is the next roll."""
    table = Table(store)
    table.new_game({"game": game, "players": ["Ann", "Bob"]})
    table.on_reading(placed(*((v, 60 * i, 0) for i, v in enumerate(first))), settled_now=True)
    still = [(v, 60 * first.index(v), 0) for v in lying]  # dice at their places of the throw
    table.on_reading(placed(*still), settled_now=True)
    assert table.history is not None
    assert table.history.actions == then
    assert table.state_json()["table"]["problem"] == ""
    moved = placed(*still[:-1], (still[-1][0], still[-1][1] + 25, 30))
    table.on_reading(moved, settled_now=True)
    assert table.history.actions == then
    assert table.state_json()["table"]["problem_params"] == {"still": 2, "n": 3}
    table.on_reading(thrown(4, 4, 6), settled_now=True)
    assert table.history.actions == [*then, Roll([4, 4, 6])]


def aside(reading: FakeReading, *dice: tuple[int, int, int]) -> FakeReading:
    """``reading`` with dice of value v set aside (out of the roll zone) at (x, y)."""
    out = tuple(FakeDie(v, box=(x, y, x + 40, y + 40)) for v, x, y in dice)
    return FakeReading(reading.dice, set_aside=out)


OUT = 2000  # set-aside dice lie at x >= OUT, out of the roll zone


@pytest.mark.parametrize(
    ("game", "first", "then", "expected"),
    [
        # Kymppitonni: 1 and 5 out, four thrown; the camera sees the two arrive out there.
        (
            "kymppitonni",
            [1, 5, 2, 3, 4, 6],
            aside(thrown(2, 2, 3, 4), (1, OUT, 0), (5, OUT + 60, 0)),
            [Keep([1, 5]), Roll([2, 2, 3, 4])],
        ),
        # The camera does not see out of the zone: 1 5 is the only set-aside of two dice.
        ("kymppitonni", [1, 5, 2, 3, 4, 6], thrown(6, 6, 3, 2), [Keep([1, 5]), Roll([2, 3, 6, 6])]),
        # Two of 1 1 5 could be 1 1 or 1 5: the camera saw 1 and 5 go out.
        (
            "kymppitonni",
            [1, 1, 5, 2, 3, 4],
            aside(thrown(4, 4, 4, 2), (1, OUT, 0), (5, OUT, 60)),
            [Keep([1, 5]), Roll([2, 4, 4, 4])],
        ),
        # Hot dice: every die scored, all six scooped up and thrown again.
        (
            "kymppitonni",
            [1, 1, 1, 5, 5, 5],
            thrown(1, 1, 1, 5, 5, 5),
            [Keep([1, 1, 1, 5, 5, 5]), Roll([1, 1, 1, 5, 5, 5])],
        ),
        # Generał: two held out of the zone, three thrown.
        (
            "general",
            [6, 6, 1, 2, 3],
            aside(thrown(6, 4, 5), (6, OUT, 0), (6, OUT, 60)),
            [Keep([6, 6]), Roll([4, 5, 6])],
        ),
    ],
)
def test_dice_set_aside_and_the_rest_thrown_in_one_motion(
    store: Store, game: str, first: list[int], then: FakeReading, expected: list[Any]
) -> None:
    """Dice taken out and the others thrown before the tray settles (no reading in between):
    the set-aside, then the throw. Which dice went out is what the camera saw arrive out of
    the roll zone, else the only set-aside the rules allow."""
    table = Table(store)
    table.new_game({"game": game, "players": ["Ann", "Bob"]})
    table.on_reading(placed(*((v, 60 * i, 0) for i, v in enumerate(first))), settled_now=True)
    table.on_reading(then, settled_now=True)
    assert table.history is not None
    assert table.state_json()["table"]["problem"] == ""
    assert table.history.actions == [Roll(first), *expected]


@pytest.mark.parametrize(
    ("game", "first", "again", "expected"),
    [
        # Kymppitonni: 1 5 out and four thrown, one bounced out showing a 5 (taken: keep 1 5 5,
        # roll 2 3 4); it is thrown again alone, the others lying still, and shows a 6.
        ("kymppitonni", [1, 5, 5, 2, 3, 6], [6], [Keep([1, 5]), Roll([2, 3, 4, 6])]),
        # ... or all four are gathered and thrown again.
        ("kymppitonni", [1, 5, 5, 2, 3, 6], [1, 1, 2, 6], [Keep([1, 5]), Roll([1, 1, 2, 6])]),
        # Generał: 1 5 held, three thrown, one bounced out among them showing a 5.
        ("general", [1, 5, 5, 2, 3], [6], [Keep([1, 5]), Roll([2, 3, 6])]),
    ],
)
def test_a_die_that_bounced_out_among_the_set_aside_and_is_thrown_again(
    tmp_path: Path, game: str, first: list[int], again: list[int], expected: list[Any]
) -> None:
    """A die of a throw made in the motion of a set-aside bounces out of the roll zone among the
    set-aside dice, showing a face the set-aside can take: its faces and count are those of a
    set-aside, and the table takes it so. When the die is thrown back into the zone (alone, or
    with the others gathered), the set-aside and the throw are mended in one stored step (it was
    refused: "do not follow"). The store replays to the mended game."""
    with Store(tmp_path / "pipcam.db") as store:
        table = Table(store)
        table.new_game({"game": game, "players": ["Ann", "Bob"]})
        table.on_reading(placed(*((v, 60 * i, 0) for i, v in enumerate(first))), settled_now=True)
        out = [(1, OUT, 0), (5, OUT + 60, 0)]
        zone = [(2, 500, 400), (3, 600, 400), (4, 700, 400)][: len(first) - 3]
        table.on_reading(aside(placed(*zone), *out, (5, OUT + 30, 200)), settled_now=True)
        assert table.history is not None
        assert table.history.actions[1:] == [Keep([1, 5, 5]), Roll([v for v, _, _ in zone])]
        if len(again) == 1:
            zone = [*zone, (again[0], 800, 600)]
        else:
            zone = [(v, 100 * i, 700) for i, v in enumerate(again)]
        table.on_reading(aside(placed(*zone), *out), settled_now=True)
        assert table.state_json()["table"]["problem"] == ""
        assert table.history.actions[1:] == expected
        now = table.state_json()
    with Store(tmp_path / "pipcam.db") as store:
        resumed = Table(store)
        assert resumed.resume()
        assert resumed.history is not None
        assert resumed.history.actions[1:] == expected
        assert resumed.state_json()["legal"] == now["legal"]


def test_a_held_die_released_and_thrown_with_the_others_is_no_bounce(store: Store) -> None:
    """Generał: 1 5 held as three are thrown; then the player takes the 5 back and throws it
    with the three in one motion. That is a new hold (1) and the third throw, not a die of the
    second throw that bounced out and was thrown again (which would erase the second throw)."""
    table = Table(store)
    table.new_game({"game": "general", "players": ["Ann", "Bob"]})
    first = [(v, 60 * i, 0) for i, v in enumerate([1, 5, 2, 2, 3])]
    table.on_reading(placed(*first), settled_now=True)
    out = [(1, OUT, 0), (5, OUT + 60, 0)]
    table.on_reading(
        aside(placed((2, 500, 400), (3, 600, 400), (4, 700, 400)), *out), settled_now=True
    )
    assert table.history is not None
    assert table.history.actions[1:] == [Keep([1, 5]), Roll([2, 3, 4])]
    again = [(6, 100, 700), (6, 200, 700), (1, 300, 700), (4, 400, 700)]
    table.on_reading(aside(placed(*again), *out[:1]), settled_now=True)
    assert table.state_json()["table"]["problem"] == ""
    assert table.history.actions[1:] == [
        Keep([1, 5]),
        Roll([2, 3, 4]),
        Keep([1]),
        Roll([1, 4, 6, 6]),
    ]


def test_a_held_die_put_back_by_hand_is_a_new_hold_not_a_bounce(store: Store) -> None:
    """Generał: 1 5 held in the motion of the throw of three; then the 5 is put back into the
    zone by hand, showing its 5, the thrown dice lying still: a new hold (1), not a die that
    bounced out and was thrown again (faces of a re-throw are new)."""
    table = Table(store)
    table.new_game({"game": "general", "players": ["Ann", "Bob"]})
    first = [(v, 60 * i, 0) for i, v in enumerate([1, 5, 2, 2, 3])]
    table.on_reading(placed(*first), settled_now=True)
    out = [(1, OUT, 0), (5, OUT + 60, 0)]
    zone = [(2, 500, 400), (3, 600, 400), (4, 700, 400)]
    table.on_reading(aside(placed(*zone), *out), settled_now=True)
    assert table.history is not None
    assert table.history.actions[1:] == [Keep([1, 5]), Roll([2, 3, 4])]
    table.on_reading(aside(placed(*zone, (5, 800, 600)), *out[:1]), settled_now=True)
    assert table.state_json()["table"]["problem"] == ""
    assert table.history.actions[1:] == [Keep([1, 5]), Roll([2, 3, 4]), Keep([1])]


def test_a_set_aside_in_one_motion_that_the_camera_did_not_see_is_asked(store: Store) -> None:
    """Two of 1 1 5 out and four thrown, out of the camera's sight: 1 1 or 1 5? The table asks
    and takes nothing; the dice seen out of the zone at the next reading answer it."""
    table = kymppi(store)
    table.on_reading(
        placed(*((v, 60 * i, 0) for i, v in enumerate([1, 1, 5, 2, 3, 4]))), settled_now=True
    )
    throw = thrown(6, 6, 2, 3)
    table.on_reading(throw, settled_now=True)
    assert table.history is not None
    assert table.history.actions == [Roll([1, 1, 5, 2, 3, 4])]
    said = table.state_json()["table"]
    assert said["problem_code"] == "which_aside"
    assert said["problem_params"] == {
        "out": 2,
        "dice": [2, 3, 6, 6],
        "choices": [[1, 1], [1, 5]],
        "keeps": [[1, 1], [1, 5]],
        "more": False,
    }
    # The player moves the set-aside dice into the camera's view: now it is known.
    table.on_reading(aside(throw, (1, OUT, 0), (1, OUT, 60)), settled_now=True)
    assert table.history.actions == [Roll([1, 1, 5, 2, 3, 4]), Keep([1, 1]), Roll([2, 3, 6, 6])]
    assert table.state_json()["table"]["problem"] == ""


def test_a_throw_typed_as_the_camera_read_it_is_that_readings_throw(store: Store) -> None:
    """The camera did not see which dice were set aside, so the players type the set-aside and
    the throw: the throw shows the faces the camera read, so it is that reading's (its photo is
    labelled by a later fix of the throw); the set-aside, typed, is no reading's."""
    table = kymppi(store)
    first = table.on_reading(
        placed(*((v, 60 * i, 0) for i, v in enumerate([1, 1, 5, 2, 3, 4]))), settled_now=True
    )
    second = table.on_reading(thrown(6, 6, 2, 3), settled_now=True)
    assert table.state_json()["table"]["problem_code"] == "which_aside"
    table.act(Keep([1, 5]), source="phone")
    table.act(Roll([2, 3, 6, 6]), source="phone")
    assert store.made(table.game_id or 0) == [first, None, second]


def test_general_third_throw_holding_one_more_in_one_motion(store: Store) -> None:
    """Generał: two dice held since the second throw stay where they lay out of the zone; a
    third die taken out beside them while the other two are thrown is the new hold."""
    table = Table(store)
    table.new_game({"game": "general", "players": ["Ann", "Bob"]})
    table.on_reading(
        placed(*((v, 60 * i, 0) for i, v in enumerate([6, 6, 1, 2, 3]))), settled_now=True
    )
    second = aside(thrown(6, 4, 1), (6, OUT, 0), (6, OUT, 60))
    table.on_reading(second, settled_now=True)
    third = aside(thrown(2, 5), (6, OUT, 0), (6, OUT, 60), (6, OUT, 120))
    table.on_reading(third, settled_now=True)
    assert table.history is not None
    assert table.history.actions[1:] == [
        Keep([6, 6]),
        Roll([1, 4, 6]),
        Keep([6, 6, 6]),
        Roll([2, 5]),
    ]


def _general_holding_six_six(store: Store) -> tuple[Table, FakeReading]:
    """Generał: 6 6 1 2 3 thrown, then 6 6 held out of the zone and the other three thrown:
    6 4 1 (the reading of that roll's zone)."""
    table = Table(store)
    table.new_game({"game": "general", "players": ["Ann", "Bob"]})
    table.on_reading(
        placed(*((v, 60 * i, 0) for i, v in enumerate([6, 6, 1, 2, 3]))), settled_now=True
    )
    second = placed((6, 100, 300), (4, 200, 300), (1, 300, 300))
    table.on_reading(aside(second, (6, OUT, 0), (6, OUT, 60)), settled_now=True)
    return table, second


@pytest.mark.parametrize("thrown_too", [False, True], ids=["by-hand", "with-the-throw"])
def test_general_a_held_die_put_back_and_another_taken_out(store: Store, thrown_too: bool) -> None:
    """Generał, 6 6 held out of the zone and 6 4 1 thrown: one 6 put back into the zone and the
    4 taken out is the hold 4 6; the camera sees which dice left the area out of the zone and
    which arrived. The same in the motion that throws the three in the zone: the hold, then
    the throw."""
    table, second = _general_holding_six_six(store)
    assert table.history is not None
    assert table.history.actions[1:] == [Keep([6, 6]), Roll([1, 4, 6])]
    if thrown_too:
        table.on_reading(aside(thrown(5, 5, 6), (6, OUT, 0), (4, OUT, 120)), settled_now=True)
        assert table.history.actions[3:] == [Keep([4, 6]), Roll([5, 5, 6])]
    else:
        swapped = placed((6, 100, 300), (1, 300, 300), (6, 500, 500))
        table.on_reading(aside(swapped, (6, OUT, 0), (4, OUT, 120)), settled_now=True)
        assert table.history.actions[3:] == [Keep([4, 6])]
    assert table.state_json()["table"]["problem"] == ""


@pytest.mark.parametrize("swapped", [False, True], ids=["misread", "swapped"])
def test_general_a_held_die_read_with_another_face_where_it_lay(
    store: Store, swapped: bool
) -> None:
    """Generał, 6 6 held out of the zone and 6 4 1 thrown; then the three are thrown again,
    and the reading shows a held 6 as a 4 where it lay: that 6 misread (a die does not turn
    over by itself), the hold 6 6 as it was. (Before, the 6 was taken for a die put back into
    play and the 4 for one taken out of it: the hold 4 6, and the game parted from the one
    played.) When the 4 was really taken out and put where the 6 lay, the 6 put into the zone
    in its place, the zone shows it: that swap is the hold 4 6."""
    table, second = _general_holding_six_six(store)
    assert table.history is not None
    if swapped:
        zone = placed((6, 100, 300), (1, 300, 300), (6, 500, 500))
        table.on_reading(aside(zone, (6, OUT, 0), (4, OUT, 60)), settled_now=True)
        assert table.history.actions[3:] == [Keep([4, 6])]
    else:
        table.on_reading(aside(thrown(2, 3, 5), (6, OUT, 0), (4, OUT, 60)), settled_now=True)
        assert table.history.actions[3:] == [Keep([6, 6]), Roll([2, 3, 5])]
    assert table.state_json()["table"]["problem"] == ""


def test_a_die_thrown_again_alone_after_a_doubtful_throw_is_taken(store: Store) -> None:
    """A throw with a leaning die is refused; that die thrown again alone (the others lying
    still) makes the throw: the dice are compared with the throw the game last took, not with
    the refused one."""
    table = kymppi(store)
    first = [(1, 0, 0), (1, 60, 0), (5, 120, 0), (2, 180, 0), (3, 240, 0), (4, 300, 0)]
    table.on_reading(placed(*first), settled_now=True)
    table.on_reading(placed(*first[3:]), settled_now=True)  # 1 1 5 taken out: the keep
    assert table.history is not None
    assert table.history.actions == [Roll([1, 1, 2, 3, 4, 5]), Keep([1, 1, 5])]
    leaning = FakeReading(
        (
            FakeDie(6, box=(300, 300, 340, 340)),
            FakeDie(2, box=(400, 300, 440, 340)),
            FakeDie(3, confidence=0.4, status="cocked", box=(500, 300, 540, 340)),
        )
    )
    table.on_reading(leaning, settled_now=True)
    assert table.state_json()["table"]["problem_code"] == "doubtful"
    table.on_reading(placed((6, 300, 300), (2, 400, 300), (3, 520, 300)), settled_now=True)
    assert table.history.actions[-1] == Roll([2, 3, 6])


def test_every_action_is_stored_before_it_is_applied(tmp_path: Path) -> None:
    """After a restart the table resumes exactly, undo included."""
    with Store(tmp_path / "pipcam.db") as store:
        table = kymppi(store)
        table.act(Roll([1, 1, 5, 2, 3, 4]), source="camera")
        table.act(Keep([1, 1, 5]), source="button")
        table.act(Bank(), source="button")
        table.undo(source="phone")
        before = table.state_json()
    with Store(tmp_path / "pipcam.db") as store:
        again = Table(store)
        assert again.resume()
        after = again.state_json()
    assert after == before | {"table": after["table"]}
    assert after["can_redo"] is True


def test_a_stored_game_that_does_not_replay_is_set_aside_not_fatal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two tables on one store write into the same game, which then replays for neither: the
    next start sets it aside (kept, marked finished) and a new game can start."""
    with Store(tmp_path / "pipcam.db") as store:
        first = kymppi(store)
        second = Table(store)
        assert second.resume()
        first.act(Roll([1, 1, 5, 2, 3, 4]), source="camera")
        second.act(Roll([5, 5, 5, 2, 3, 4]), source="phone")  # its history had no roll yet
        broken = first.game_id
        assert broken is not None
    with Store(tmp_path / "pipcam.db") as store, caplog.at_level("ERROR", "pipcam.table"):
        again = Table(store)
        assert not again.resume()
        assert [e.action for e in store.events(broken)] == [
            {"roll": [1, 1, 2, 3, 4, 5]},
            {"roll": [2, 3, 4, 5, 5, 5]},
        ]
        assert store.games()[-1].finished is not None
        again.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
        assert again.game_id == broken + 1
    assert (
        caplog.records[-1]
        .getMessage()
        .startswith(f"stored game {broken} does not replay at event 2 ")
    )
    assert (
        caplog.records[-1]
        .getMessage()
        .endswith("; it stays in the store as it was, and a new game starts")
    )


def test_refused_action_stores_nothing(tmp_path: Path) -> None:
    """An illegal action raises and leaves both the game and the store as they were."""
    with Store(tmp_path / "pipcam.db") as store:
        table = kymppi(store)
        with pytest.raises(IllegalAction, match="nothing to bank yet"):
            table.act(Bank(), source="phone")
        assert table.game_id is not None
        stored = store.current_game()
        assert stored is not None
        assert stored.events == []


def test_listeners_hear_every_change(store: Store) -> None:
    """Phones and LEDs get the new state after every change, in order."""
    table = kymppi(store)
    seen: list[int] = []
    unsubscribe = table.subscribe(lambda state: seen.append(state["table"]["seq"]))
    table.act(Roll([1, 1, 5, 2, 3, 4]), source="keyboard")
    table.report_problem("check the dice")
    unsubscribe()
    table.act(Keep([1]), source="keyboard")
    assert len(seen) == 2
    assert seen[1] == seen[0] + 1


def test_new_game_button_asks_twice_for_an_unfinished_game(store: Store) -> None:
    """Holding confirm abandons a running game only when held again within the window."""
    now = [100.0]
    table = Table(store, clock=lambda: now[0])
    table.new_game({"game": "sekvence", "players": ["Ann", "Bob"]})
    table.act(Roll([1, 2, 3, 5, 5, 6]), source="keyboard")
    first_id = table.game_id
    table.press("new_game")
    assert "hold confirm again within 5 s" in table.state_json()["table"]["problem"]
    assert table.game_id == first_id
    now[0] += 2
    table.press("new_game")
    assert table.game_id != first_id
    assert table.state_json()["players"] == [
        {"name": "Ann", "score": 0},
        {"name": "Bob", "score": 0},
    ]


def play_to_the_end(table: Table) -> None:
    """Fixed throws, banking whenever a bank is legal: a short game with a low target."""
    throws = iter([[1, 1, 1, 5, 2, 3], [1, 5, 5, 2, 3, 4], [5, 5, 5, 1, 2, 3]] * 50)
    while table.history is not None and not table.state_json()["finished"]:
        game, state = table.history.game, table.history.state
        n = game.roll_size(state)
        if n:
            table.act(Roll(next(throws)[:n]), source="phone")
            continue
        legal = game.legal_actions(state)
        table.act(next((a for a in legal if isinstance(a, Bank)), legal[0]), source="phone")


def test_earlier_games_keep_a_finished_game_seen_after_a_restart(store: Store) -> None:
    """A game that ended just before a restart is no longer the table's game (the next one
    starts), but its scores and winners are listed; a game left before its first action and
    the current game are not. A game left unfinished is listed as not ended."""
    table = kymppi(store, target=300)
    play_to_the_end(table)
    ended = table.state_json()
    restarted = Table(store)  # pipcam run again: the newest game has ended, so a new one starts
    assert not restarted.resume()
    restarted.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    restarted.act(Roll([2, 3, 4, 6, 6, 2]), source="phone")  # a throw, then given up
    restarted.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})  # given up at once
    restarted.new_game({"game": "general", "players": ["Cy", "Di"]})
    earlier = restarted.earlier_games()
    assert [(g["game"], g["ended"], g["actions"]) for g in earlier] == [
        ("kymppitonni", False, 1),
        ("kymppitonni", True, len(table.history or [])),
    ]
    assert earlier[1]["players"] == ended["players"]
    assert earlier[1]["winners"] == ended["winners"] != []
    assert earlier[0]["winners"] == []
    assert restarted.earlier_games(most=1) == earlier[:1]
    # The transcript of an earlier game replays to its final scores.
    from scoring.transcript import replay

    finished = replay(restarted.earlier_transcript(int(earlier[1]["id"])).splitlines())
    assert list(finished.game.totals(finished.state)) == [p["score"] for p in ended["players"]]
    with pytest.raises(LookupError, match="there is no game 99 at this table"):
        restarted.earlier_transcript(99)


@pytest.mark.parametrize(
    ("third", "then"),
    [
        # Both dice of the second throw thrown again: the three 3s stay held.
        (thrown(5, 1), [Keep([3, 3, 3]), Roll([1, 5])]),
        # ... to faces the dice on the table also show: still a throw, not a set-aside of 2 3 3.
        (thrown(3, 6), [Keep([3, 3, 3]), Roll([3, 6])]),
        # The 6 taken out to be held as well, the 2 nudged by the hand: a set-aside.
        (placed((2, 312, 0)), [Keep([3, 3, 3, 6])]),
    ],
    ids=["thrown-again", "thrown-again-to-faces-on-the-table", "one-more-held"],
)
def test_generał_third_throw_of_the_dice_the_second_threw(
    store: Store, third: FakeReading, then: list[Any]
) -> None:
    """Three 3s held (taken out of the roll zone), two dice thrown, then those two thrown
    again: the held dice stay held (the third throw was refused as not following, or taken as
    a wrong set-aside when its faces were among those on the table)."""
    table = Table(store)
    table.new_game({"game": "general", "players": ["Ann", "Bob"]})
    first = [(3, 0, 0), (3, 60, 0), (3, 120, 0), (2, 180, 0), (5, 240, 0)]
    table.on_reading(placed(*first), settled_now=True)
    table.on_reading(placed(*first[3:]), settled_now=True)  # the three 3s taken out: held
    table.on_reading(placed((2, 300, 0), (6, 400, 0)), settled_now=True)
    assert table.history is not None
    before = [Roll([2, 3, 3, 3, 5]), Keep([3, 3, 3]), Roll([2, 6])]
    assert table.history.actions == before
    table.on_reading(third, settled_now=True)
    assert table.state_json()["table"]["problem"] == ""
    assert table.history.actions == [*before, *then]


def test_dice_left_in_the_zone_after_the_keep_button_are_no_throw(store: Store) -> None:
    """Kymppitonni: the keep button sets 1 1 5 aside, then the player takes them out of the roll
    zone; the 2 3 4 left lying were not thrown (they were taken as a throw of 2 3 4)."""
    table = kymppi(store)
    first = [(1, 0, 0), (1, 60, 0), (5, 120, 0), (2, 180, 0), (3, 240, 0), (4, 300, 0)]
    table.on_reading(placed(*first), settled_now=True)
    table.press("keep")
    table.on_reading(placed(*first[3:]), settled_now=True)
    assert table.history is not None
    assert table.history.actions == [Roll([1, 1, 2, 3, 4, 5]), Keep([1, 1, 5])]
    assert table.state_json()["table"]["problem"] == ""
    table.on_reading(thrown(6, 6, 2), settled_now=True)
    assert table.history.actions[-1] == Roll([2, 6, 6])


@pytest.mark.parametrize(
    ("first", "out", "then"),
    [
        # The 1 out, a pause (the tray settles: keep 1), then the 5: one set-aside of 1 5.
        ([1, 5, 2, 3, 4, 6], [[1], [5]], [[1], [1, 5]]),
        # One 2 of three is no set-aside (nothing said), two neither, three are.
        ([2, 2, 2, 3, 4, 6], [[2], [2], [2]], [None, None, [2, 2, 2]]),
        # The 1 first, then three 2s one by one: 1 2 and 1 2 2 wait for the last 2.
        ([1, 2, 2, 2, 4, 6], [[1], [2], [2], [2]], [[1], [1], [1], [1, 2, 2, 2]]),
    ],
)
def test_a_set_aside_taken_out_die_by_die_is_one_set_aside(
    tmp_path: Path, first: list[int], out: list[list[int]], then: list[list[int] | None]
) -> None:
    """Kymppitonni allows one set-aside a throw: dice taken out one by one, the tray settling
    between, make one set-aside that grows (it was refused: "4 dice are in the roll zone but 5
    were to be thrown", and the game could not go on). A part of a set-aside the rules refuse
    alone waits for the rest, and nothing is said meanwhile. The stored log replays to it."""
    places = [(v, 60 * i, 0) for i, v in enumerate(first)]
    with Store(tmp_path / "pipcam.db") as store:
        table = kymppi(store)
        table.on_reading(placed(*places), settled_now=True)
        for dice, kept in zip(out, then, strict=True):
            for v in dice:
                places.remove(next(p for p in places if p[0] == v))
            table.on_reading(placed(*places), settled_now=True)
            assert table.history is not None
            assert table.state_json()["table"]["problem"] == ""
            assert table.history.actions[1:] == ([] if kept is None else [Keep(kept)])
        table.on_reading(thrown(*([6] * len(places))), settled_now=True)
        assert table.history is not None
        assert table.history.actions[-1] == Roll([6] * len(places))
        before = table.state_json()
    with Store(tmp_path / "pipcam.db") as store:
        again = Table(store)
        assert again.resume()
        assert again.state_json()["turn"] == before["turn"]


def test_a_die_of_the_set_aside_put_back_shrinks_it(store: Store) -> None:
    """Kymppitonni: 1 and 5 taken out (keep 1 5), then the player thinks again and puts the 5
    back into the roll zone: the set-aside is the 1 alone, and the five dice are thrown."""
    table = kymppi(store)
    places = [(v, 60 * i, 0) for i, v in enumerate([1, 5, 2, 3, 4, 6])]
    table.on_reading(placed(*places), settled_now=True)
    table.on_reading(placed(*places[2:]), settled_now=True)
    assert table.history is not None
    assert table.history.actions[1:] == [Keep([1, 5])]
    table.on_reading(placed(*places[2:], (5, 400, 300)), settled_now=True)
    assert table.history.actions[1:] == [Keep([1])]
    assert table.state_json()["table"]["problem"] == ""
    table.on_reading(thrown(2, 2, 3, 5, 6), settled_now=True)
    assert table.history.actions[1:] == [Keep([1]), Roll([2, 2, 3, 5, 6])]


@pytest.mark.parametrize(
    ("first", "out", "swap", "then"),
    [
        # 1 5 set aside; the 5 put back and the 1 beside it taken out instead: keep 1 1.
        ([1, 5, 1, 3, 4, 6], [1, 5], ([5], [1]), [1, 1]),
        # 1 set aside; it is put back for one 2 of three: no set-aside yet, nothing said...
        ([1, 2, 2, 2, 4, 6], [1], ([1], [2]), None),
        # ... and the 1 put back for all three 2s: keep 2 2 2.
        ([1, 2, 2, 2, 4, 6], [1], ([1], [2, 2, 2]), [2, 2, 2]),
    ],
)
def test_a_set_aside_changed_in_one_move(
    store: Store,
    first: list[int],
    out: list[int],
    swap: tuple[list[int], list[int]],
    then: list[int] | None,
) -> None:
    """Kymppitonni: the player thinks again and, in one move, puts a die of the set-aside back
    into the roll zone and takes another out. The set-aside changes (it was refused as dice left
    lying: "5 dice lie where they lay ... that was no throw"); a change the rules allow only
    with more dice taken out waits for them; the dice left in the zone are then thrown."""
    table = kymppi(store)
    places = [(v, 60 * i, 0) for i, v in enumerate(first)]
    table.on_reading(placed(*places), settled_now=True)
    zone = list(places)
    for v in out:
        zone.remove(next(p for p in zone if p[0] == v))
    table.on_reading(placed(*zone), settled_now=True)
    assert table.history is not None
    assert table.history.actions[1:] == [Keep(out)]
    back, taken = swap
    for v in taken:
        zone.remove(next(p for p in zone if p[0] == v))
    zone += [(v, 400 + 60 * i, 300) for i, v in enumerate(back)]
    table.on_reading(placed(*zone), settled_now=True)
    assert table.state_json()["table"]["problem"] == ""
    assert table.history.actions[1:] == [Keep(then if then is not None else out)]
    if then is not None:
        table.on_reading(thrown(*([3] * len(zone))), settled_now=True)
        assert table.history.actions[1:] == [Keep(then), Roll([3] * len(zone))]


def test_dice_thrown_with_faces_of_the_set_aside_are_no_change_of_it(store: Store) -> None:
    """Kymppitonni, 1 5 set aside, 1 5 4 6 left: the 1 and the 5 of those are thrown again and
    show 5 and 1, the 4 and the 6 lie where they lay. In the roll zone alone that looks like the
    set-aside put back for the 1 and 5 beside it; the camera sees that nothing arrived or left
    out of the zone, so dice were left lying (said), not a set-aside changed."""
    table = kymppi(store)
    first = [(1, 0, 0), (5, 60, 0), (1, 120, 0), (5, 180, 0), (4, 240, 0), (6, 300, 0)]
    out = [(1, OUT, 0), (5, OUT + 60, 0)]
    table.on_reading(placed(*first), settled_now=True)
    table.on_reading(aside(placed(*first[2:]), *out), settled_now=True)
    assert table.history is not None
    assert table.history.actions[1:] == [Keep([1, 5])]
    now = placed(*first[4:], (5, 500, 400), (1, 600, 400))
    table.on_reading(aside(now, *out), settled_now=True)
    assert table.history.actions[1:] == [Keep([1, 5])]
    assert table.state_json()["table"]["problem_code"] == "left_lying"


def test_scoring_dice_taken_out_one_by_one_leave_no_problem_said(store: Store) -> None:
    """1000: with one of the two scoring dice out, the zone holds a die too many, lying where it
    lay: the player is taking the dice out, and nothing is said (it was, and the red LED blinked
    at every pause); with both out the dice lie as they should."""
    table = Table(store)
    table.new_game({"game": "thousand", "players": ["Ann", "Bob"]})
    first = [(1, 0, 0), (5, 60, 0), (2, 120, 0), (3, 180, 0), (6, 240, 0)]
    table.on_reading(placed(*first), settled_now=True)
    table.on_reading(placed(*first[1:]), settled_now=True)  # the 1 out
    assert table.state_json()["table"]["problem"] == ""
    table.on_reading(placed(*first[1:3], (3, 200, 100), first[4]), settled_now=True)
    assert table.state_json()["table"]["problem_code"] == "roll_zone_count"  # one moved: said
    table.on_reading(placed(*first[2:]), settled_now=True)  # the 5 out
    assert table.state_json()["table"]["problem"] == ""
    table.on_reading(thrown(4, 4, 6), settled_now=True)
    assert table.history is not None
    assert table.history.actions == [Roll([1, 2, 3, 5, 6]), Roll([4, 4, 6])]


def test_a_die_thrown_where_a_die_set_aside_lay_is_thrown(store: Store) -> None:
    """Na zakázaná čísla (2 and 4 forbidden): the 2 and the 4 put aside, the four others
    thrown; one lands where the 2 lay, showing a 2. The dice the throw is compared with are those
    left in the zone, so it is a throw (it was said to be a die not thrown)."""
    table = Table(store)
    table.new_game({"game": "zakazana-cisla", "players": ["Ann", "Bob"]})
    table.act_json({"forbidden": [2, 4]}, source="phone")
    first = [(2, 0, 0), (3, 60, 0), (4, 120, 0), (5, 180, 0), (6, 240, 0), (1, 300, 0)]
    table.on_reading(placed(*first), settled_now=True)
    table.on_reading(placed(first[1], *first[3:]), settled_now=True)  # 2 and 4 put aside
    table.on_reading(
        placed((2, 2, 1), (1, 400, 400), (3, 500, 400), (6, 600, 400)), settled_now=True
    )
    assert table.state_json()["table"]["problem"] == ""
    assert table.history is not None
    assert table.history.actions[-1] == Roll([1, 2, 3, 6])


@pytest.mark.parametrize(
    "read_aside",
    [[1, 1, 4, 5, 5], [1, 1, 5, 5]],
    ids=["a-one-misread-as-four", "a-one-missed"],
)
def test_dice_pushed_into_the_zone_between_turns_are_no_throw_though_one_was_misread(
    store: Store, read_aside: list[int]
) -> None:
    """Kymppitonni: Ann set 1 1 1 5 5 aside and banked, the 2 lying in the zone; the camera
    read one die out of the zone wrong, or missed it. Bob pushes the set-aside into the zone,
    the 2 lying still: gathering, not a throw (it was taken as a throw of 1 1 1 2 5 5, and
    Bob's real throw then refused); his throw of all six is his first."""
    table = kymppi(store)
    first = [(1, 0, 0), (1, 60, 0), (1, 120, 0), (5, 180, 0), (5, 240, 0), (2, 300, 0)]
    table.on_reading(placed(*first), settled_now=True)
    out = [(v, OUT + 60 * i, 0) for i, v in enumerate(read_aside)]
    table.on_reading(aside(placed(first[5]), *out), settled_now=True)
    assert table.history is not None
    assert table.history.actions[1:] == [Keep([1, 1, 1, 5, 5])]
    table.press("bank")
    pushed = [(v, 500 + 60 * i, 600) for i, v in enumerate([1, 1, 1, 5, 5])]
    table.on_reading(placed(first[5], *pushed), settled_now=True)
    assert table.history.actions[1:] == [Keep([1, 1, 1, 5, 5]), Bank()]
    assert table.state_json()["table"]["problem"] == ""
    table.on_reading(thrown(6, 6, 4, 3, 2, 2), settled_now=True)
    assert table.history.actions[-1] == Roll([2, 2, 3, 4, 6, 6])


def test_the_next_players_throw_is_taken_wherever_its_dice_land(store: Store) -> None:
    """The next player gathers every die and throws: one that lands on an old place with its
    old face is no reason to refuse the throw (it was refused once the last player had written
    a category, as if the die had never been picked up)."""
    table = Table(store)
    table.new_game({"game": "general", "players": ["Ann", "Bob"]})
    ann = [(3, 0, 0), (3, 60, 0), (3, 120, 0), (2, 180, 0), (5, 240, 0)]
    table.on_reading(placed(*ann), settled_now=True)
    table.act(Score("threes"), source="phone")
    table.on_reading(
        placed((3, 2, 1), (1, 300, 90), (6, 360, 90), (4, 420, 90), (4, 480, 90)),
        settled_now=True,
    )
    assert table.history is not None
    assert table.history.actions[-1] == Roll([1, 3, 4, 4, 6])
    assert table.state_json()["table"]["problem"] == ""


def test_na_zakazana_cisla_forbidden_numbers_are_thrown_under_the_camera(store: Store) -> None:
    """The set-up throw of two dice is read as the forbidden numbers; a double is refused, to
    be thrown again, and the game's six dice follow."""
    table = Table(store)
    table.new_game({"game": "zakazana-cisla", "players": ["Ann", "Bob"]})
    table.on_reading(thrown(3, 3), settled_now=True)
    assert table.history is not None
    assert table.history.actions == []
    assert table.state_json()["table"]["problem_params"]["reason"]["code"] == "forbidden_double"
    table.on_reading(thrown(6, 3), settled_now=True)
    assert table.history.actions == [Forbidden([3, 6])]
    assert table.state_json()["table"]["problem"] == ""
    table.on_reading(thrown(1, 2, 5, 6, 3, 4), settled_now=True)
    assert table.history.actions == [Forbidden([3, 6]), Roll([1, 2, 3, 4, 5, 6])]


@pytest.mark.parametrize("shift", [(50, 20), (-90, 0), (0, 130)])
def test_a_tray_pushed_with_its_dice_in_it_is_no_throw(
    store: Store, shift: tuple[int, int]
) -> None:
    """Every die one shift away, each with its face: the tray was pushed (or the camera
    knocked), not thrown; the game waits as it was. A real throw of the same faces lands in
    another formation and is a throw."""
    table = Table(store)
    table.new_game({"game": "general", "players": ["Ann", "Bob"]})
    faces = [(1, 0, 0), (2, 60, 0), (3, 120, 0), (4, 180, 0), (6, 240, 0)]
    table.on_reading(placed(*faces), settled_now=True)
    dx, dy = shift
    table.on_reading(placed(*((v, x + dx, y + dy) for v, x, y in faces)), settled_now=True)
    assert table.history is not None
    assert table.history.actions == [Roll([1, 2, 3, 4, 6])]
    assert table.state_json()["table"]["problem"] == ""
    table.on_reading(thrown(1, 2, 3, 4, 6), settled_now=True)
    assert table.history.actions == [Roll([1, 2, 3, 4, 6]), Keep([]), Roll([1, 2, 3, 4, 6])]
