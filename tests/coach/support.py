"""Shared by the coach tests: the plain threshold player the coach is measured against."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scoring.core import Action, Bank, Keep, Roll
from scoring.jeopardy import JeopardyGame, JeopardyState

AnyGame = JeopardyGame[Any, Any]
State = JeopardyState[Any]
Policy = Callable[[State], Action]


def threshold(game: AnyGame, at: int) -> Policy:
    """Set aside the best reading; bank once the total reaches ``at`` and banking is allowed."""

    def act(state: State) -> Action:
        turn = state.turn
        if turn.dice:
            return Keep(game.table().best(turn.dice).scoring)
        if turn.rolls and turn.total >= at and game.bank_problem(state) is None:
            return Bank()
        return Roll(())

    return act
