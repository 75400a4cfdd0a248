"""``pipcam play`` reads back what it shows: each legal action as the prompt writes it."""

from __future__ import annotations

import random
from typing import Any

import pytest

from pipcam.play import parse_command
from scoring.core import Action, Draw, Phase, Roll, Score
from scoring.registry import available, game_class

GAME_IDS = [cls.game_id for cls in available()]
# Multi-column and other option shapes print their actions differently.
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    *[(g, {}) for g in GAME_IDS],
    ("general", {"columns": 3}),
]


@pytest.mark.parametrize(("game_id", "options"), VARIANTS)
def test_every_legal_action_as_shown_is_read_back(game_id: str, options: dict[str, Any]) -> None:
    """Along a random game, each legal action typed as ``str(action)`` (the words of the
    prompt's list) is that action: a player can copy what the prompt offers."""
    game: Any = game_class(game_id).from_json(options)
    rng = random.Random(7)
    state = game.initial_state(["A", "B", "C"])
    checked = 0
    for _ in range(150):
        if game.phase(state) is Phase.FINISHED:
            break
        legal: list[Action] = list(game.legal_actions(state))
        for action in legal:
            if isinstance(action, Roll | Draw):
                continue  # shown as "roll 5 dice" / a stone to type; typed as the dice
            assert parse_command(str(action), game, state) == action, str(action)
            checked += 1
        state = game.apply(state, rng.choice(legal))
    assert checked > 0 or game_id == "sekvence"  # Sekvence is all throws


@pytest.mark.parametrize("typed", ["chance", "score chance", "s chance"])
def test_a_category_typed_alone_gets_the_engines_reason(typed: str) -> None:
    """A category's id alone is a Score even when it cannot be written now, so the player is
    told why (no dice thrown) rather than that the line was not understood."""
    game: Any = game_class("general").from_json({})
    state = game.initial_state(["A"])
    assert parse_command(typed, game, state) == Score("chance")
    assert "no dice have been thrown" in game.explain_illegal(state, Score("chance"))


def test_a_word_that_is_no_category_is_not_read() -> None:
    game: Any = game_class("general").from_json({})
    with pytest.raises(ValueError, match="cannot read 'chanse'"):
        parse_command("chanse", game, game.initial_state(["A"]))
    kymppi: Any = game_class("kymppitonni").from_json({})
    with pytest.raises(ValueError, match="cannot read 'chance'"):
        parse_command("chance", kymppi, kymppi.initial_state(["A"]))
