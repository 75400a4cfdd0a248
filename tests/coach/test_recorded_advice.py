"""The jeopardy coach's advice over many seeded states, against outputs recorded by the coach
before its turn-start speed-up (``data/recorded_advice.json``): a faster coach advises the same.

The states come from seeded random games (``states``), at turn starts and mid-turn, under a few
house rules that reach the state-dependent parts of a turn (1000's bolts and barrel, Niemo's
first-throw reset, the confirmation throw). Re-record (only when the advice is meant to change):
``PYTHONPATH=. .venv/bin/python -m tests.coach.test_recorded_advice``.
"""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from coach.jeopardy import TOLERANCE, JeopardyCoach
from scoring.core import Action, Bank, Keep, Phase, Roll
from scoring.games.jednicky_a_petky import JednickyAPetky
from scoring.games.kymppitonni import Kymppitonni, KymppitonniOptions
from scoring.games.sest_kostek import SestKostek, SestKostekOptions
from scoring.games.thousand import Thousand
from tests.coach.support import AnyGame, State

DATA = Path(__file__).parent / "data" / "recorded_advice.json"

GAMES: dict[str, AnyGame] = {
    "kymppitonni": Kymppitonni(),
    "kymppitonni-niemo": Kymppitonni(KymppitonniOptions(first_roll_reset=True)),
    "kymppitonni-keep-total": Kymppitonni(KymppitonniOptions(four_twos_keeps_turn_total=True)),
    "thousand": Thousand(),
    "jednicky-a-petky": JednickyAPetky(),
    "sest-kostek": SestKostek(),
    "sest-kostek-hot-dice": SestKostek(SestKostekOptions(confirmation="hot_dice")),
}
# 1000's turns score little: its states are sampled more sparsely to reach the barrel.
SPREAD = {"thousand": 0.25}
STARTS = 5  # turn starts per game
MIDDLES = 5  # states with dice showing or between throws per game


def states(game: AnyGame, seed: int, spread: float = 1.0) -> list[State]:
    """Turn starts and mid-turn states of seeded random games, spread over the games' course
    (a smaller ``spread`` samples fewer of them, so later in the game)."""
    rng = random.Random(seed)
    starts: list[State] = []
    middles: list[State] = []
    state = game.initial_state(["Ann", "Bob"])
    while len(starts) < STARTS or len(middles) < MIDDLES:
        if game.phase(state) is Phase.FINISHED:
            state = game.initial_state(["Ann", "Bob"])
        turn = state.turn
        start = not turn.dice and turn.rolls == 0
        wanted = starts if start else middles
        quota = STARTS if start else MIDDLES
        if len(wanted) < quota and rng.random() < spread * (0.08 if start else 0.03):
            wanted.append(state)
        state = game.apply(state, _random_action(game, state, rng))
    return starts + middles


def _random_action(game: AnyGame, state: State, rng: random.Random) -> Action:
    legal = game.legal_actions(state)
    if Bank() in legal and rng.random() < 0.45:
        return Bank()
    if state.turn.dice:
        keeps = [a for a in legal if isinstance(a, Keep)]
        if keeps:
            return rng.choice(keeps)
        return Bank()
    return Roll([rng.randint(1, 6) for _ in range(game.roll_size(state))])


@cache
def coach(name: str) -> JeopardyCoach:
    """One coach per game, as the table keeps it."""
    return JeopardyCoach(GAMES[name])


def state_key(state: State) -> str:
    """The state as recorded, to catch a change of the games: scores, round, turn and the last
    event's words (not the whole repr, which changes with any field a game adds)."""
    return (
        f"scores={state.scores} round={state.round} turn={state.turn!r} "
        f"last_event={state.last_event!r}"
    )


def advice_record(name: str, state: State) -> dict[str, Any]:
    """What is compared: the state (to catch a change of the games), the choices and notes."""
    advice = coach(name).advise(state)
    return {
        "state": state_key(state),
        "situation": advice.situation,
        "choices": [[c.label, c.value, c.then, c.wins] for c in advice.choices],
        "same": {c.label: [m.label for m in c.same] for c in advice.choices if c.same},
        "error_bound": advice.error_bound,
        "notes": list(advice.notes),
    }


def cases() -> list[tuple[str, int]]:
    """(game name, index of the state) for every recorded state."""
    return [(name, i) for name in GAMES for i in range(STARTS + MIDDLES)]


@cache
def _states(name: str) -> list[State]:
    return states(GAMES[name], seed=sorted(GAMES).index(name), spread=SPREAD.get(name, 1.0))


@cache
def _recorded() -> dict[str, list[dict[str, Any]]]:
    data: dict[str, list[dict[str, Any]]] = json.loads(DATA.read_text())
    return data


@pytest.mark.parametrize(("name", "index"), cases())
def test_advice_is_as_recorded(name: str, index: int) -> None:
    """Same choices in the same order, the same values (to float noise), words and notes."""
    old = _recorded()[name][index]
    new = advice_record(name, _states(name)[index])
    assert new["state"] == old["state"]
    assert new["situation"] == old["situation"]
    assert new["notes"] == old["notes"]
    # Since the recording, ways of banking that come to the same are one choice (``same``): a
    # recorded choice merged into another was a bank worth that choice (to the tolerance).
    into = {m: label for label, merged in new["same"].items() for m in merged}
    by_label = {c[0]: c for c in new["choices"]}
    for label, value, then, wins in old["choices"]:
        if label in into:
            assert then == "bank", label
            assert value == pytest.approx(by_label[into[label]][1], abs=TOLERANCE), label
            assert wins == by_label[into[label]][3], label
    kept = [c for c in old["choices"] if c[0] not in into]
    assert [c[0] for c in new["choices"]] == [c[0] for c in kept]
    for got, want in zip(new["choices"], kept, strict=True):
        assert got[1] == pytest.approx(want[1], abs=1e-9), got[0]
        assert got[2:] == want[2:], got[0]
    if into:  # the merged choices' bounds no longer count
        assert new["error_bound"] <= old["error_bound"] * 1.02 + 1e-12
    else:
        assert new["error_bound"] == pytest.approx(old["error_bound"], rel=0.02, abs=1e-12)


def record() -> None:
    """Write the current coach's advice over every state to ``DATA``."""
    out = {name: [advice_record(name, s) for s in _states(name)] for name in GAMES}
    DATA.parent.mkdir(exist_ok=True)
    DATA.write_text(json.dumps(out, indent=1) + "\n")
    print(f"recorded {sum(map(len, out.values()))} states to {DATA}")


if __name__ == "__main__":
    record()


@pytest.mark.parametrize("name", list(GAMES))
def test_the_first_throws_that_end_a_turn_are_those_derived_once(name: str) -> None:
    """A turn's start values the scoring first throws from the set-asides derived once per game;
    at every recorded turn start the engine ends the turn on exactly the other throws."""
    game = GAMES[name]
    derived = {row.roll: bool(row.moves) for row in coach(name)._rows[game.n_dice]}
    for state in _states(name)[:STARTS]:
        p, taken = state.turn.player, state.turns_taken[state.turn.player]
        for roll, _ in game.roll_outcomes(state):
            after = game.apply(state, Roll(roll))
            scores = after.winners is None and after.turns_taken[p] == taken
            assert scores == derived[roll], (roll, state)
