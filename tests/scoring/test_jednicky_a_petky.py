"""Jedničky a pětky (RULES §6.1): the original text's two worked turns C01–C10 and C11–C17."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from scoring.core import Action, Bank, Keep, Roll
from scoring.errors import IllegalAction
from scoring.games.jednicky_a_petky import CzechState, JednickyAPetky

GAME = JednickyAPetky()


def play(game: JednickyAPetky, state: CzechState, *actions: Action) -> CzechState:
    """Apply actions in order."""
    for action in actions:
        state = game.apply(state, action)
    return state


# (id, roll, set aside, dice left, turn total, may end)
Step = tuple[str, list[int], list[int], int, int, bool]
PLAYER_1: list[Step] = [
    ("C01", [1, 1, 6, 6, 3, 4], [1, 1], 4, 200, False),
    ("C02", [2, 3, 4, 5], [5], 3, 250, False),
    ("C03", [2, 3, 5], [5], 2, 300, False),
    ("C04", [1, 5], [1, 5], 0, 450, True),
    ("C05", [2, 2, 4, 4, 4, 4], [2, 2, 4, 4, 4, 4], 0, 1950, True),
    ("C06", [1, 3, 3, 3, 2, 2], [1, 3, 3, 3], 2, 2350, True),
]
PLAYER_2: list[Step] = [
    ("C07", [1, 1, 5, 5, 2, 4], [1, 1, 5, 5], 2, 300, False),
    ("C08", [1, 1], [1, 1], 0, 500, True),
    ("C09", [1, 1, 1, 2, 3, 4], [1, 1, 1], 3, 1500, False),
]


def test_player_1_turn_step_by_step() -> None:
    """C01–C06 [ORIG-4, verbatim]: each step's dice left, turn total and whether he may end."""
    state = GAME.initial_state(["Player 1", "Player 2"])
    for step, roll, kept, left, total, may_end in PLAYER_1:
        state = play(GAME, state, Roll(roll), Keep(kept))
        assert (state.turn.total, state.turn.pool) == (total, left), step
        assert (Bank() in GAME.legal_actions(state)) is may_end, step
    state = GAME.apply(state, Bank())
    assert state.scores == (2350, 0)
    assert state.turn.player == 1


def test_player_2_turn_ends_with_nothing() -> None:
    """C07–C10 [ORIG-4, verbatim]: 1500 with three dice cannot be recorded; 2 3 4 loses it all."""
    state = GAME.initial_state(["Player 1", "Player 2"])
    state = replace(state, turn=replace(state.turn, player=1))
    for step, roll, kept, left, total, may_end in PLAYER_2:
        state = play(GAME, state, Roll(roll), Keep(kept))
        assert (state.turn.total, state.turn.pool) == (total, left), step
        assert (Bank() in GAME.legal_actions(state)) is may_end, step
    with pytest.raises(IllegalAction, match="at most 2 dice may be left to record; you have 3"):
        GAME.apply(state, Bank())
    state = GAME.apply(state, Roll([2, 3, 4]))  # C10
    assert state.scores == (0, 0)
    assert state.turn.player == 0
    assert "losing 1500" in state.last_event


@pytest.mark.parametrize(
    ("roll", "options", "points"),
    [
        pytest.param([1, 2, 3, 4, 5, 6], {}, 3000, id="C11"),
        pytest.param([3, 3, 3, 3, 3, 3], {}, 1500, id="C12"),
        pytest.param([1, 1, 1, 1, 5, 5], {}, 1500, id="C13"),
        pytest.param([1, 1, 1, 1], {}, 1100, id="C14"),
        pytest.param([3, 3, 3, 4, 4, 4], {}, 700, id="C15"),
        pytest.param([2, 2, 2], {}, 200, id="C17"),
        pytest.param([5, 5, 5, 5], {}, 550, id="5555"),
        pytest.param([2, 2, 2, 2], {}, 200, id="2222"),
        pytest.param([1, 1, 1, 1, 5, 5], {"three_pairs_allow_same": False}, 1200, id="C13-strict"),
        pytest.param([1, 1, 6, 6, 3, 4], {}, 200, id="C01-best"),
    ],
)
def test_roll_values(roll: list[int], options: dict[str, Any], points: int) -> None:
    """Values of single rolls (RULES §6.1 [DERIVED])."""
    assert JednickyAPetky.from_json(options).score_roll(roll)["points"] == points


def test_c12_six_of_a_kind_uses_all_dice() -> None:
    """C12: six 3s are read as three pairs, so every die scores (hot dice)."""
    reading = GAME.score_roll([3, 3, 3, 3, 3, 3])
    assert (reading["scoring"], reading["rest"]) == ([3] * 6, [])


@pytest.mark.parametrize(
    ("options", "may_record"),
    [
        pytest.param({}, True, id="C16-default"),
        pytest.param({"min_record_strict": "on"}, False, id="C16-strict"),
    ],
)
def test_c16_exactly_400(options: dict[str, Any], may_record: bool) -> None:
    """C16: exactly 400 with one die left may be recorded (≥ 400) unless the rule is strict."""
    game = JednickyAPetky.from_json(options)
    state = game.initial_state(["A", "B"])
    state = play(game, state, Roll([3, 3, 3, 2, 4, 6]), Keep([3, 3, 3]), Roll([5, 2, 4]))
    state = play(game, state, Keep([5]), Roll([5, 2]), Keep([5]))
    assert (state.turn.total, state.turn.pool) == (400, 1)
    assert (Bank() in game.legal_actions(state)) is may_record
    if not may_record:
        with pytest.raises(IllegalAction, match=r"^cannot bank 400: more than 400 needed$"):
            game.apply(state, Bank())


def test_refusal_names_both_reasons() -> None:
    """The message names every unmet condition: the minimum and the dice left."""
    state = play(GAME, GAME.initial_state(["A"]), Roll([1, 1, 6, 6, 3, 4]), Keep([1, 1]))
    state = play(GAME, state, Roll([2, 3, 4, 5]), Keep([5]))
    with pytest.raises(IllegalAction) as err:
        GAME.apply(state, Bank())
    assert (
        str(err.value) == "cannot bank 250: at least 400 needed and at most 2 dice left; you have 3"
    )


def test_first_to_target_wins_at_once() -> None:
    """The first player to reach the target wins immediately; nobody else throws."""
    game = JednickyAPetky.from_json({"target": 2000})
    state = game.initial_state(["A", "B"])
    state = play(game, state, Roll([1, 1, 1, 5, 5, 5]), Keep([1, 1, 1, 5, 5, 5]))
    state = play(game, state, Roll([1, 1, 2, 2, 3, 3]), Keep([1, 1, 2, 2, 3, 3]), Bank())
    outcome = game.outcome(state)
    assert outcome is not None
    assert (outcome.winners, outcome.totals) == ((0,), (3000, 0))
    assert game.legal_actions(state) == ()
    with pytest.raises(IllegalAction, match="the game is over"):
        game.apply(state, Roll([1, 2, 3, 4, 5, 6]))
