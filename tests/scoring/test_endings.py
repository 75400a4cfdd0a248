"""Why a game ended, as data: every engine's outcome carries an end reason's code and params
(the phones word them), and says in English what it said before."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scoring.core import EndReason, Roll
from scoring.registry import game_class
from tests.scoring.test_properties import make, play_out

# (game, options, seed of a random game of Ann and Bob, code, params, the English reason)
CASES: list[tuple[str, dict[str, Any], int, EndReason, dict[str, Any], str]] = [
    ("general", {}, 0, EndReason.LAST_ROUND, {}, "every box is filled"),
    (
        "kymppitonni",
        {},
        0,
        EndReason.TARGET_ROUND,
        {"player": "Bob", "target": 3000},
        "Bob reached 3000",
    ),
    (
        "kymppitonni",
        {"equalizing_round": False},
        2,
        EndReason.TARGET,
        {"player": "Ann", "target": 3000},
        "Ann reached 3000",
    ),
    ("thousand", {}, 2, EndReason.BARREL, {"player": "Bob", "points": 1020}, "Bob reached 1020"),
    (
        "thousand",
        {"barrel_required": False},
        1,
        EndReason.PASSED,
        {"player": "Bob", "points": 1040},
        "Bob reached 1040",
    ),
    (
        "triangles",
        {"deal": 8},
        2,
        EndReason.LAST_STONE,
        {"player": "Bob"},
        "Bob laid the last stone; the stones still held are subtracted",
    ),
    (
        "triangles",
        {"deal": 3, "board_cells": "U(0,0) U(5,5)"},
        0,
        EndReason.NO_FIT,
        {},
        "no player could lay a stone; the stones still held are subtracted",
    ),
    (
        "jednicky-a-petky",
        {},
        0,
        EndReason.TARGET,
        {"player": "Bob", "target": 3000},
        "Bob reached 3000",
    ),
    ("sest-kostek", {}, 0, EndReason.TARGET, {"player": "Ann", "target": 3000}, "Ann reached 3000"),
    (
        "drapky",
        {},
        2,
        EndReason.ALL_FIGURES,
        {"player": "Ann"},
        "Ann recorded all 14 figures",
    ),
    ("sekvence", {}, 1, EndReason.TARGET, {"player": "Bob", "target": 40}, "reached 40"),
    (
        "zakazana-cisla",
        {"rounds": 2},
        0,
        EndReason.LAST_ROUND,
        {},
        "highest score after 2 rounds",
    ),
]


@pytest.mark.parametrize(("game_id", "options", "seed", "code", "params", "english"), CASES)
def test_an_ended_game_says_why_as_data(
    game_id: str,
    options: dict[str, Any],
    seed: int,
    code: EndReason,
    params: dict[str, Any],
    english: str,
) -> None:
    """A random game played to its end: its outcome's reason, and the state's ``ending``."""
    game = make(game_id, options)
    state = play_out(game, ["Ann", "Bob"], random.Random(seed)).state
    outcome = game.outcome(state)
    assert outcome is not None
    said = {"reason": english, "code": code.value, "params": params}
    assert (str(outcome.reason), outcome.reason.to_json()) == (english, said)
    assert game.state_json(state)["ending"] == said


def test_five_of_a_kind_ends_1000_at_once() -> None:
    """Five equal dice in a throw of all five, with that option (RULES §4.8)."""
    game = game_class("thousand").from_json({"five_of_a_kind_wins": True})
    state = game.apply(game.initial_state(["Ann", "Bob"]), Roll([4, 4, 4, 4, 4]))
    outcome = game.outcome(state)
    assert outcome is not None
    assert outcome.reason.to_json() == {
        "reason": "Ann threw five 4s and wins at once",
        "code": "five_of_a_kind",
        "params": {"player": "Ann", "face": 4},
    }


def test_every_end_reason_is_met() -> None:
    """The tests above meet every code of ``EndReason``."""
    assert {case[3] for case in CASES} | {EndReason.FIVE_OF_A_KIND} == set(EndReason)


def test_a_game_going_on_has_no_ending() -> None:
    """``ending`` is in the state only once the game is over."""
    game = make("sekvence")
    assert "ending" not in game.state_json(game.initial_state(["Ann", "Bob"]))
