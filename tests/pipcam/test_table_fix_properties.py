"""Fixing an earlier throw (Table.amend) in random games of every engine: the fix either takes
the fixed throw and every later step again, or is refused with nothing changed; the store
replays to the table's history either way."""

from __future__ import annotations

import random
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipcam.store import Store, replay_events
from pipcam.table import Table
from scoring.core import Keep, Roll, Score, Stop, action_from_json, action_to_json
from scoring.errors import IllegalAction
from scoring.history import History
from tests.scoring.test_properties import FAST_OPTIONS, GAME_IDS, choose

STEPS = 25  # random steps played before a throw among them is fixed


@contextmanager
def played(game_id: str, rng: random.Random) -> Iterator[tuple[Table, History[Any], int]]:
    """A table, over a store in a temporary folder, with up to STEPS random steps of a game:
    the table, its history and the stored game's id."""
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "pipcam.db") as store:
        table = Table(store)
        table.new_game(
            {"game": game_id, "players": ["Ann", "Bob"], "options": FAST_OPTIONS.get(game_id, {})}
        )
        history = table.history
        assert history is not None
        for _ in range(STEPS):
            if history.game.outcome(history.state) is not None:
                break
            table.act(choose(history.game, history.state, rng), source="phone")
        assert table.game_id is not None
        yield table, history, table.game_id


@pytest.mark.parametrize("game_id", GAME_IDS)
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_fixed_throw_replays_the_later_steps_or_changes_nothing(game_id: str, seed: int) -> None:
    rng = random.Random(seed)
    with played(game_id, rng) as (table, history, game_id_stored):
        store, game = table.store, history.game
        throws = [i for i, a in enumerate(history.actions) if isinstance(a, Roll)]
        if not throws:
            return  # the triangle game places stones: no throw to fix
        index = rng.choice(throws)
        faces = [dice for dice, _ in game.roll_outcomes(history.state_after(index))]
        fixed = Roll(rng.choice(faces))
        before = history.actions
        refused: IllegalAction | None = None
        try:
            table.amend(index, fixed, source="phone")
        except IllegalAction as exc:
            refused = exc
        if refused is None:
            assert history.actions[: index + 1] == [*before[:index], fixed]
            for was, now in zip(before[index + 1 :], history.actions[index + 1 :], strict=True):
                # A set-aside of the fixed throw's turn may name the misread die by its face.
                assert now == was or (
                    isinstance(now, Keep)
                    and isinstance(was, Keep)
                    and sum((Counter(was.dice) - Counter(now.dice)).values()) == 1
                )
        else:
            assert refused.code is not None  # worded on the phones
            assert history.actions == before
        assert replay_events(store.game(game_id_stored)).actions == history.actions
        assert table.state_json()["finished"] == (game.outcome(history.state) is not None)


@pytest.mark.parametrize("game_id", GAME_IDS)
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_choice_offered_for_a_step_is_taken(game_id: str, seed: int) -> None:
    """A figure or set-aside offered in place of an earlier one is never refused: the later
    steps follow it (a figure taken later trading places), and the store replays to it. One
    of the same kind that the rules took then but that is not offered is refused."""
    rng = random.Random(seed)
    with played(game_id, rng) as (table, history, game_id_stored):
        store, game = table.store, history.game
        chosen = [i for i, a in enumerate(history.actions) if isinstance(a, (Keep, Score, Stop))]
        if not chosen:
            return
        index = rng.choice(chosen)
        offered = table.choices(index)["choices"]
        assert isinstance(offered, list)
        # What is not offered, of the same kind and legal then, is what a fix would break.
        taken = history.actions[index]
        kinds = (Keep,) if isinstance(taken, Keep) else (Score, Stop)
        shown = [c["action"] for c in offered if isinstance(c, dict)]
        left = [
            a
            for a in game.legal_actions(history.state_after(index))
            if isinstance(a, kinds) and a != taken and action_to_json(a) not in shown
        ]
        actions = history.actions
        for action in rng.sample(left, min(3, len(left))):
            with pytest.raises(IllegalAction) as refused:
                table.amend(index, action, source="phone")
            assert refused.value.code == "fix_breaks"
            assert history.actions == actions
        for choice in rng.sample(offered, min(3, len(offered))):
            assert isinstance(choice, dict)
            before = history.actions
            table.amend_json(index, choice["action"], source="phone")
            assert history.actions[: index + 1] == [
                *before[:index],
                action_from_json(choice["action"]),
            ]
            assert len(history.actions) == len(before)
            assert replay_events(store.game(game_id_stored)).actions == history.actions
