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

from pipcam.store import NO_DIE, Store, replay_events
from pipcam.table import Table
from scoring.core import Keep, Roll, Score, Stop, action_from_json, action_to_json
from scoring.errors import IllegalAction, InvalidAction
from scoring.history import History
from tests.pipcam._fakes import FakeDie, FakeReading
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
        for _ in range(min(3, len(offered))):
            # Asked again each time: a fix changes the step, and what can stand in its place
            # with it (a stop fixed in place of a figure offers no figure a later turn wrote).
            now = table.choices(index)["choices"]
            assert isinstance(now, list)
            if not now:
                break  # nothing else can stand there now
            choice = rng.choice(now)
            assert isinstance(choice, dict)
            before = history.actions
            table.amend_json(index, choice["action"], source="phone")
            assert history.actions[: index + 1] == [
                *before[:index],
                action_from_json(choice["action"]),
            ]
            assert len(history.actions) == len(before)
            assert replay_events(store.game(game_id_stored)).actions == history.actions


# -- the photos a fix labels ---------------------------------------------------------------------
# However the players put a throw right (Fix typed, a die tapped on its photo, undo and the throw
# typed again), the photo of that throw never teaches a face the game says was not thrown.


def camera_throw(dice: list[int], turn: int) -> FakeReading:
    """Dice read surely, each at a place no earlier throw used (a throw moves every die)."""
    return FakeReading(
        tuple(
            FakeDie(v, 0.97, box=(40 * i, 40 * turn, 40 * i + 20, 40 * turn + 20))
            for i, v in enumerate(dice)
        )
    )


def assert_photos_faithful(table: Table) -> None:
    """Each throw in effect that the camera read: its photo's dice (a die a fix could not tell
    apart left out) show only faces of the throw, and all of them when none is left out."""
    history, store = table.history, table.store
    assert history is not None
    assert table.game_id is not None
    doubts = store.doubted()
    made = store.made(table.game_id)
    assert len(made) == len(history)
    for step, reading in zip(history.actions, made, strict=True):
        if not isinstance(step, Roll) or reading is None:
            continue
        zone, _ = store.dice(reading)
        doubted = doubts.get(reading, set())  # those nobody named since the fix
        sure = Counter(
            d["value"] for i, d in enumerate(zone) if i not in doubted and d["status"] != NO_DIE
        )
        assert not sure - Counter(step.dice), (step, zone, doubted)
        if not doubted:
            assert sure == Counter(step.dice), (step, zone)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_photo_never_teaches_a_face_the_game_says_was_not_thrown(seed: int) -> None:
    """Generał: six throws read by the camera, five figures typed; then eight fixes of random
    throws, each typed (one or two dice otherwise), tapped on the photo, or (the last throw)
    undone and typed again. After each, every photo agrees with its throw."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "pipcam.db") as store:
        table = Table(store)
        table.new_game({"game": "general", "players": ["Ann", "Bob"]})
        history = table.history
        assert history is not None
        for turn in range(6):
            faces = [rng.randint(1, 6) for _ in range(5)]
            table.on_reading(camera_throw(faces, turn), settled_now=True)
            if not isinstance(history.actions[-1], Roll):
                # The same faces as the last throw, elsewhere: the table may take them for
                # those dice pushed aside, not thrown; the players type the throw.
                table.act(Roll(faces), source="phone")
            if turn < 5:
                legal = history.game.legal_actions(history.state)
                scores = [a for a in legal if isinstance(a, Score)]
                table.act(rng.choice(scores), source="phone")
        assert_photos_faithful(table)
        for _ in range(8):
            index = rng.choice([i for i, a in enumerate(history.actions) if isinstance(a, Roll)])
            old = history.actions[index]
            assert isinstance(old, Roll)
            new = list(old.dice)
            for k in rng.sample(range(len(new)), rng.choice([1, 1, 2])):
                new[k] = rng.randint(1, 6)
            how = rng.choice(["typed", "tapped", "typed again"])
            try:
                if how == "tapped":
                    table.amend_die(index, rng.randrange(5), rng.randint(1, 6), source="phone")
                elif how == "typed again" and index == len(history) - 1:
                    table.undo(source="phone")
                    table.act(Roll(new), source="phone")
                else:
                    table.amend(index, Roll(new), source="phone")
            except (IllegalAction, InvalidAction):
                pass  # refused, nothing changed (the tests above)
            assert_photos_faithful(table)
