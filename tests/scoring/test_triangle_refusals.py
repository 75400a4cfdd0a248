"""The triangle game's refusals as data: each carries its code and params (stones as written,
cells as the board names them, sides by name) and says in English exactly what it said before."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from scoring.core import Action, Bank, Draw, Pass, Place
from scoring.errors import IllegalAction, Refusal, refusal_json
from scoring.games.triangles import Triangles, TrianglesState
from scoring.games.triangles.stones import STONE_INDEX

Tweak = Callable[[TrianglesState], TrianglesState] | None
Case = tuple[dict[str, Any], list[Action], Tweak, Action, Refusal, dict[str, Any], str]

# 123 laid on U(0,0), and 345 in Bob's hand.
OPENING: list[Action] = [Draw("123"), Place("123", "U(0,0)", 0), Draw("345")]
# Two cells, five stones each: Ann lays 111, Bob's 222 fits nowhere and goes under his stack.
SMALL = {"board_cells": "U(0,0) D(0,0)", "deal": 5}
PASSED: list[Action] = [Draw("111"), Place("111", "U(0,0)", 0), Draw("222"), Pass()]
# One cell, three stones each: after 555 nobody can lay, and the stones held are turned up.
ONE_CELL = {"board_cells": "U(0,0)", "deal": 3}
ENDED: list[Action] = [Draw("555"), Place("555", "U(0,0)", 0), Draw("045"), Pass()]
ENDED += [Draw("444"), Pass()]


def bob_has_no_unturned_stones(state: TrianglesState) -> TrianglesState:
    """Bob to draw, holding only the stone he passed."""
    return replace(state, player=1, counts=(4, 1))


def in_hand_at_the_end(state: TrianglesState) -> TrianglesState:
    """A stone in hand while the stones held are turned up (no turn leads there)."""
    return replace(state, hand=STONE_INDEX["123"], written="123")


CASES: list[Case] = [
    (
        {},
        [],
        None,
        Bank(),
        Refusal.TRI_ONLY,
        {"action": {"bank": True}},
        "cannot bank: triangles knows only draw, place and pass",
    ),
    (
        {},
        [Draw("123")],
        None,
        Draw("045"),
        Refusal.TRI_HOLDS,
        {"stone": "045", "player": "Ann", "hand": "123"},
        "cannot draw 045: Ann holds 123; place it or pass",
    ),
    (
        ONE_CELL,
        ENDED,
        in_hand_at_the_end,
        Draw("123"),
        Refusal.TRI_IN_HAND,
        {"stone": "123", "player": "Bob"},
        "cannot draw 123: it is in Bob's hand",
    ),
    (
        {},
        OPENING[:2],
        None,
        Draw("231"),
        Refusal.TRI_ON_BOARD,
        {"stone": "231", "cell": "U(0,0)"},
        "cannot draw 231: it already lies on the board at U(0,0)",
    ),
    (
        ONE_CELL,
        ENDED[:4],
        None,
        Draw("045"),
        Refusal.TRI_UNDER_STACK,
        {"stone": "045", "player": "Bob"},
        "cannot draw 045: it lies under Bob's stack",
    ),
    (
        ONE_CELL,
        [*ENDED, Draw("123")],
        None,
        Draw("123"),
        Refusal.TRI_SHOWN,
        {"stone": "123", "player": "Ann"},
        "cannot draw 123: Ann has shown it already",
    ),
    (
        {**SMALL, "stone_source": "hand"},
        PASSED,
        bob_has_no_unturned_stones,
        Draw("333"),
        Refusal.TRI_HOLDS_ONLY,
        {"stone": "333", "player": "Bob", "stones": ["222"]},
        "cannot draw 333: Bob holds only 222",
    ),
    (
        SMALL,
        [*PASSED, Draw("012"), Place("012", "D(0,0)", 2)],
        None,
        Draw("222"),
        Refusal.TRI_BELOW_UNTURNED,
        {"stone": "222", "player": "Bob", "n": 4},
        "cannot draw 222: it lies under Bob's stack, below 4 unturned stones",
    ),
    (
        SMALL,
        PASSED,
        bob_has_no_unturned_stones,
        Draw("333"),
        Refusal.TRI_NEXT_STONE,
        {"stone": "333", "player": "Bob", "next": "222"},
        "cannot draw 333: Bob's next stone is 222, passed earlier",
    ),
    (
        ONE_CELL,
        ENDED,
        None,
        Place("123", "U(0,0)", 0),
        Refusal.TRI_BEING_SHOWN,
        {},
        "cannot place 123: the game is over; the stones still held are being shown",
    ),
    (
        ONE_CELL,
        ENDED,
        None,
        Pass(),
        Refusal.TRI_BEING_SHOWN,
        {},
        "cannot pass: the game is over; the stones still held are being shown",
    ),
    (
        {},
        [],
        None,
        Place("123", "U(0,0)", 0),
        Refusal.TRI_NO_STONE,
        {"player": "Ann"},
        "cannot place 123: Ann has no stone in hand; draw one first",
    ),
    (
        {},
        [],
        None,
        Pass(),
        Refusal.TRI_NO_STONE,
        {"player": "Ann"},
        "cannot pass: Ann has no stone in hand; draw one first",
    ),
    (
        {},
        [Draw("123")],
        None,
        Place("450", "U(0,0)", 0),
        Refusal.TRI_NOT_IN_HAND,
        {"stone": "450", "hand": "123"},
        "cannot place 450: the stone in hand is 123",
    ),
    (
        {},
        [Draw("123")],
        None,
        Place("231", "u( 9, 9)", 0),
        Refusal.TRI_OFF_BOARD,
        {"stone": "231", "cell": "U(9,9)", "board": "hexagon:4"},
        "cannot place 231 at U(9,9): that cell is not on the board (hexagon:4)",
    ),
    (
        {},
        OPENING,
        None,
        Place("345", "U(0,0)", 0),
        Refusal.TRI_CELL_TAKEN,
        {"stone": "345", "cell": "U(0,0)", "there": "123"},
        "cannot place 345 at U(0,0): 123 already lies there",
    ),
    (
        {},
        OPENING,
        None,
        Place("345", "U(1,1)", 0),
        Refusal.TRI_TOUCHES_NONE,
        {"stone": "345", "cell": "U(1,1)"},
        "cannot place 345 at U(1,1): it touches no stone along a side",
    ),
    (
        {},
        OPENING,
        None,
        Place("345", "D(0,0)", 0),
        Refusal.TRI_SIDES_EQUAL,
        {
            "stone": "345",
            "cell": "D(0,0)",
            "rotation": 0,
            "side": "left",
            "mine": 5,
            "theirs": 3,
            "other": "U(0,0)",
        },
        "cannot place 345 at D(0,0) r0: its left side 5 would lie against 3 of U(0,0) (touching"
        " sides must be equal)",
    ),
    (
        {"match": "sum7"},
        OPENING,
        None,
        Place("345", "D(0,0)", 0),
        Refusal.TRI_SIDES_SUM7,
        {
            "stone": "345",
            "cell": "D(0,0)",
            "rotation": 0,
            "side": "left",
            "mine": 5,
            "theirs": 3,
            "other": "U(0,0)",
        },
        "cannot place 345 at D(0,0) r0: its left side 5 would lie against 3 of U(0,0) (touching"
        " sides must add up to 7, 0 counting 6)",
    ),
    (
        {},
        OPENING,
        None,
        Pass(),
        Refusal.TRI_FITS,
        {"stone": "345", "cell": "D(0,0)", "rotation": 1, "value": 0},
        "cannot pass: 345 fits, e.g. at D(0,0) r1 (worth 0)",
    ),
    (
        {"board_cells": "U(0,0)", "deal": 1},
        [Draw("123"), Place("123", "U(0,0)", 0), Draw("045")],
        None,
        Draw("111"),
        Refusal.GAME_OVER,
        {},
        "cannot draw 111: the game is over",
    ),
]


def refused(case: Case) -> IllegalAction:
    """The refusal of the case's action in a game of Ann and Bob after its actions."""
    options, actions, tweak, action, *_ = case
    game = Triangles.from_json(options)
    state = game.initial_state(["Ann", "Bob"])
    for step in actions:
        state = game.apply(state, step)
    if tweak is not None:
        state = tweak(state)
    with pytest.raises(IllegalAction) as caught:
        game.apply(state, action)
    return caught.value


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[4].value}-{c[3]}")
def test_a_triangle_refusal_has_its_code_params_and_english(case: Case) -> None:
    exc = refused(case)
    *_, code, params, english = case
    assert (exc.code, exc.params, str(exc)) == (code, params, english)


def test_the_codes_of_the_table_are_every_triangle_code() -> None:
    """No triangle refusal is left without a case above."""
    triangle_codes = {c for c in Refusal if c.value.startswith("tri_")}
    assert triangle_codes == {case[4] for case in CASES} - {Refusal.GAME_OVER}


def test_a_triangle_refusal_goes_to_the_phones_as_json() -> None:
    """What the server sends: the English detail, the code and params that JSON can carry."""
    case = next(c for c in CASES if c[4] is Refusal.TRI_SIDES_EQUAL)
    sent = json.loads(json.dumps(refusal_json(refused(case))))
    assert sent == {"detail": case[6], "code": "tri_sides_equal", "params": case[5]}
