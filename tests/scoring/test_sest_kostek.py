"""The Czech 6-dice variant (RULES §6.2): table C20–C28 and the confirmation throw C29–C30."""

from __future__ import annotations

from typing import Any

import pytest

from scoring.core import Action, Bank, Keep, Roll
from scoring.errors import IllegalAction
from scoring.games.sest_kostek import SestKostek, SState

GAME = SestKostek()


def play(game: SestKostek, state: SState, *actions: Action) -> SState:
    """Apply actions in order."""
    for action in actions:
        state = game.apply(state, action)
    return state


@pytest.mark.parametrize(
    ("roll", "options", "points"),
    [
        pytest.param([2, 2, 2], {}, 200, id="C20-222"),
        pytest.param([6, 6, 6], {}, 600, id="C20-666"),
        pytest.param([3, 3, 3, 3], {}, 600, id="C21"),
        pytest.param([6, 6, 6, 6, 6], {}, 2400, id="C22"),
        pytest.param([4, 4, 4, 4, 4, 4], {}, 3200, id="C23"),
        pytest.param([1, 1, 1, 1], {}, 2000, id="C24-4"),
        pytest.param([1, 1, 1, 1, 1, 1], {}, 8000, id="C24-6"),
        pytest.param([1, 2, 3, 4, 5, 6], {}, 1500, id="C25"),
        pytest.param([2, 2, 4, 4, 5, 5], {}, 1000, id="C26"),
        pytest.param([5, 5, 5, 1, 1, 1], {}, 1500, id="C27"),
        pytest.param([2, 2, 2, 2, 5, 5], {}, 1000, id="C28-default"),
        pytest.param([2, 2, 2, 2, 5, 5], {"three_pairs_allow_same": "off"}, 500, id="C28-strict"),
    ],
)
def test_roll_values(roll: list[int], options: dict[str, Any], points: int) -> None:
    """The 6-dice table [ORIG-4] and derived rows."""
    assert SestKostek.from_json(options).score_roll(roll)["points"] == points


def confirmed_throw() -> SState:
    """A turn whose first six-dice throw 1 2 3 4 5 6 was set aside whole (1500)."""
    state = GAME.initial_state(["A", "B"])
    return play(GAME, state, Roll([1, 2, 3, 4, 5, 6]), Keep([1, 2, 3, 4, 5, 6]))


def test_six_scoring_dice_must_be_confirmed() -> None:
    """After six scoring dice of one throw the player must throw all six again."""
    state = confirmed_throw()
    assert state.turn.total == 1500
    assert Bank() not in GAME.legal_actions(state)
    with pytest.raises(IllegalAction) as err:
        GAME.apply(state, Bank())
    assert str(err.value) == (
        "cannot bank 1500: all six dice scored in one throw: "
        "confirm them with one more throw of all six"
    )


def test_c29_confirmation_throw_busts() -> None:
    """C29: the confirmation throw 2 3 4 6 6 3 has no combination: the turn scores 0."""
    state = GAME.apply(confirmed_throw(), Roll([2, 3, 4, 6, 6, 3]))
    assert state.scores == (0, 0)
    assert state.turn.player == 1


def test_c30_confirmation_throw_scores() -> None:
    """C30: 5 2 3 4 6 6 confirms: +50 → 1550 with 5 dice left, and he may record."""
    state = play(GAME, confirmed_throw(), Roll([5, 2, 3, 4, 6, 6]), Keep([5]))
    assert (state.turn.total, state.turn.pool) == (1550, 5)
    assert Bank() in GAME.legal_actions(state)
    assert GAME.apply(state, Bank()).scores == (1550, 0)


def test_bank_straight_after_confirmation_roll_with_dice_showing() -> None:
    """Banking right after the confirmation throw scores its best reading."""
    state = GAME.apply(confirmed_throw(), Roll([5, 2, 3, 4, 6, 6]))
    assert GAME.apply(state, Bank()).scores == (1550, 0)


def test_hot_dice_over_several_throws_needs_no_confirmation() -> None:
    """AMBIG-C4: six dice scoring over several throws are ordinary hot dice."""
    state = GAME.initial_state(["A", "B"])
    state = play(GAME, state, Roll([1, 1, 1, 2, 3, 4]), Keep([1, 1, 1]), Roll([5, 5, 5]))
    state = GAME.apply(state, Keep([5, 5, 5]))
    assert (state.turn.total, state.turn.pool) == (1500, 0)
    assert Bank() in GAME.legal_actions(state)


@pytest.mark.parametrize(("mode", "may_bank"), [("hot_dice", False), ("off", True)])
def test_confirmation_modes(mode: str, may_bank: bool) -> None:
    """confirmation=hot_dice asks for it after any hot dice; off never does."""
    game = SestKostek.from_json({"confirmation": mode})
    state = game.initial_state(["A"])
    state = play(game, state, Roll([1, 1, 1, 2, 3, 4]), Keep([1, 1, 1]), Roll([5, 5, 5]))
    state = game.apply(state, Keep([5, 5, 5]))
    assert (Bank() in game.legal_actions(state)) is may_bank


def test_minimum_350_and_no_dice_rule() -> None:
    """AMBIG-C3: from 350 on he may stop with any number of dice left; below it not."""
    state = play(GAME, GAME.initial_state(["A"]), Roll([3, 3, 3, 2, 4, 6]), Keep([3, 3, 3]))
    with pytest.raises(IllegalAction, match=r"^cannot bank 300: at least 350 needed$"):
        GAME.apply(state, Bank())
    state = play(GAME, state, Roll([5, 2, 4]), Keep([5]))
    assert GAME.apply(state, Bank()).scores == (350,)
