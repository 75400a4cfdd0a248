"""A game's own events (a bolt, the barrel, a break, four 2s) as data: the phones word them, and
their English sentence is ``last_event`` as it always was."""

from __future__ import annotations

from typing import Any

import pytest

from scoring.core import Action, Bank, Game, Keep, Roll
from scoring.jeopardy import EVENT_KINDS, TurnEvent
from scoring.registry import find_game

CASES: list[tuple[str, dict[str, Any], list[Action], dict[str, Any], str]] = [
    (
        "thousand",
        {},
        [Roll([5, 5, 5, 2, 3]), Bank(), Roll([2, 3, 4, 6, 6]), Roll([2, 3, 4, 6, 6])],
        {
            "kind": "bust",
            "player": "Ann",
            "dice": [2, 3, 4, 6, 6],
            "lost": 0,
            "notes": [{"kind": "bolt", "bolts": 1, "limit": 3}],
        },
        "Ann threw 2 3 4 6 6: no combination; bolt 1 of 3",
    ),
    (
        "thousand",
        {"dump_truck": 20, "open_min": 0},
        [Roll([1, 5, 5, 2, 3]), Bank()],
        {
            "kind": "pass",
            "player": "Ann",
            "points": 20,
            "before": 0,
            "after": 20,
            "notes": [{"kind": "dump_truck", "player": "Ann"}],
        },
        "Ann passed 20: 0 -> 20; dump truck: Ann is back to 0",
    ),
    (
        "thousand",
        {"barrel_at": 50},
        [Roll([5, 5, 5, 2, 3]), Bank()],
        {"kind": "pass", "player": "Ann", "points": 50, "before": 0, "after": 50, "barrel": 50},
        "Ann passed 50: 0 -> 50, on the barrel at 50",
    ),
    (
        "thousand",
        {"five_of_a_kind_wins": True},
        [Roll([4, 4, 4, 4, 4])],
        {"kind": "five_of_a_kind", "player": "Ann", "dice": [4, 4, 4, 4, 4]},
        "Ann threw five 4s and wins at once",
    ),
    (
        "kymppitonni",
        {},
        [Roll([1, 3, 3, 4, 6, 6]), Keep([1]), Roll([2, 2, 2, 2, 3])],
        {"kind": "four_twos", "player": "Ann", "dice": [2, 2, 2, 2, 3], "lost": 100},
        "Ann threw four 2s: the turn passes with 0, 100 lost",
    ),
    (
        "kymppitonni",
        {"break_threshold": 900, "target": 1000},
        [Roll([1, 1, 1, 3, 4, 6]), Bank()],
        {
            "kind": "bank",
            "player": "Ann",
            "points": 1000,
            "notes": [
                {"kind": "break", "player": "Ann", "points": 1000},
                {"kind": "reached", "player": "Ann", "target": 1000},
            ],
        },
        "Ann banked 1000; Ann holds the break (1000); Ann reached 1000",
    ),
]


@pytest.mark.parametrize(
    ("game_id", "options", "actions", "event", "english"),
    CASES,
    ids=["bolt", "dump-truck", "barrel", "five-of-a-kind", "four-twos", "break-reached"],
)
def test_an_event_is_data_with_its_english(
    game_id: str,
    options: dict[str, Any],
    actions: list[Action],
    event: dict[str, Any],
    english: str,
) -> None:
    game: Game[Any, Any] = find_game(game_id).from_json(options)
    state = game.initial_state(["Ann", "Bob"])
    for action in actions:
        state = game.apply(state, action)
    said = game.describe(state)
    assert (said.get("event"), said["last_event"]) == (event, english)


def test_an_unknown_event_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown turn event 'jump'"):
        TurnEvent("jump", "Ann")
    assert "roll" in EVENT_KINDS
