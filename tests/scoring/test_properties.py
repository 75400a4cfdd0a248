"""Random legal games of every engine, driven only by ``legal_actions`` and ``roll_outcomes``.

OpenSpiel's random_sim_test on our scale: games end, ``legal_actions`` is never empty before the
end, every listed action is accepted, undo returns the exact earlier state, and a transcript
replays to the same final state. Totals are checked against what was written where the game
family makes "written" observable from outside.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.core import Action, Bank, Game, Keep, Phase, Roll, Score, Stop
from scoring.errors import IllegalAction, InvalidAction, InvalidOption
from scoring.history import History
from scoring.jeopardy import JeopardyGame
from scoring.registry import available, game_class
from scoring.transcript import dump, replay

# Shorter games where the target is an option, so that a random game ends in a few hundred actions.
FAST_OPTIONS: dict[str, dict[str, Any]] = {
    "kymppitonni": {"target": 3000},
    "jednicky-a-petky": {"target": 3000},
    "sest-kostek": {"target": 3000},
    "sekvence": {"target": 40},
}

GAME_IDS = [cls.game_id for cls in available()]


def make(game_id: str, options: dict[str, Any] | None = None) -> Game[Any, Any]:
    """The engine with the fast options merged with any given."""
    cls = game_class(game_id)
    return cls.from_json({**FAST_OPTIONS.get(game_id, {}), **(options or {})})


def _drapky_keep(state: Any, rng: random.Random) -> Action | None:
    """Keep the dice that aim at one missing rare figure, as a player at the table would.

    Uniformly random keeps almost never make Hirošima, Generál or Postupka, so a random Drápky
    game would not end in any reasonable time; aiming keeps the test about the engine.
    """
    from collections import Counter

    from scoring.games.drapky import FIGURES

    recorded = set(state.sheets[state.player])
    missing = [f for f in FIGURES if f not in recorded]
    if not missing or not state.dice:
        return None
    target = rng.choice(missing)
    dice = list(state.dice)
    common, _ = Counter(dice).most_common(1)[0]
    if target == "straight":
        keep = sorted(set(dice))
    elif target == "hiroshima":
        keep = [1] * min(dice.count(1), 5) + ([6] if 6 in dice else [])
    elif target in ("ones", "twos", "threes", "fours", "fives", "sixes"):
        face = ("ones", "twos", "threes", "fours", "fives", "sixes").index(target) + 1
        keep = [face] * dice.count(face)
    else:
        keep = [common] * dice.count(common)
    keep = keep[:5]
    return Keep(keep)


def choose(game: Game[Any, Any], state: Any, rng: random.Random) -> Action:
    """A random legal action: rolls by their probability, turn-ending decisions often."""
    legal = game.legal_actions(state)
    assert legal, f"no legal action before the end in {game.state_json(state)}"
    decisions = [a for a in legal if not isinstance(a, Roll)]
    outcomes = game.roll_outcomes(state)
    if outcomes and (not decisions or rng.random() < 0.7):
        faces = [d for d, _ in outcomes]
        weights = [p for _, p in outcomes]
        return Roll(rng.choices(faces, weights)[0])
    if game.game_id == "drapky":
        figures = [a for a in decisions if isinstance(a, Score)]
        if figures:
            return rng.choice(figures)
        aimed = _drapky_keep(state, rng)
        if aimed is not None and aimed in decisions:
            return aimed
    enders = [a for a in decisions if isinstance(a, Bank | Score | Stop)]
    if enders and rng.random() < 0.5:
        # Favour scoring over stopping so that games with optional stops still end.
        writes = [a for a in enders if isinstance(a, Score | Bank)]
        return rng.choice(writes or enders)
    return rng.choice(decisions)


def play_out(
    game: Game[Any, Any], players: list[str], rng: random.Random, limit: int = 20000
) -> History[Any]:
    """A whole random game, checking the invariants after every action."""
    history: History[Any] = History(game, game.initial_state(players))
    for _ in range(limit):
        state = history.state
        if game.phase(state) is Phase.FINISHED:
            assert game.legal_actions(state) == ()
            return history
        assert game.to_move(state) is not None
        action = choose(game, state, rng)
        history.push(action)
        check_step(game, state, action, history.state)
        # Undo gives back the exact earlier state; redo the same action again.
        assert history.pop() == action
        assert history.state == state
        assert history.redo() == action
    raise AssertionError(f"{game.game_id} did not end within {limit} actions")


def _banked(game: JeopardyGame[Any, Any], before: Any) -> int:
    """What a bank writes: the turn total plus the best reading of dice still on the table."""
    total: int = before.turn.total
    if before.turn.dice:
        total += game.table().best(before.turn.dice).points
    return total


def check_step(game: Game[Any, Any], before: Any, action: Action, after: Any) -> None:
    """What a single action may do to the totals: only what is written changes them."""
    if not isinstance(game, JeopardyGame) or game.game_id == "thousand":
        return  # 1000's penalties (overtaking, bolts, barrel) are checked in test_thousand.py
    mover = before.turn.player
    delta = [a - b for a, b in zip(after.scores, before.scores, strict=True)]
    expected = [0] * len(delta)
    if isinstance(action, Bank):
        expected[mover] = _banked(game, before)
    if game.game_id == "kymppitonni":
        brk_before, brk_after = before.extra, after.extra
        if brk_after.bonus_given and not brk_before.bonus_given:
            expected[brk_after.holder] += game.options.break_bonus
    assert delta == expected, f"{action} changed the scores by {delta}, not {expected}"


def written_totals(game: Game[Any, Any], state: Any) -> tuple[int, ...] | None:
    """The totals as the sum of what the sheets say was written, where the game has a sheet."""
    info = game.describe(state)
    if game.game_id == "general":
        return tuple(
            sum(
                sum(v for v in col["boxes"].values() if v is not None)
                + col["upper_bonus"]
                + col["general_bonus"]
                for col in sheet["columns"]
            )
            for sheet in info["sheets"]
        )
    if game.game_id == "drapky":
        return tuple(sum(sheet["figures"].values()) for sheet in info["sheets"])
    if game.game_id == "triangles":
        return None  # checked move by move in test_triangles_properties.py
    return None


@pytest.mark.parametrize("game_id", GAME_IDS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n_players=st.integers(2, 4))
def test_random_games_end_and_replay(game_id: str, seed: int, n_players: int) -> None:
    """A random legal game ends, its totals add up, and its transcript replays exactly."""
    game = make(game_id)
    players = [f"P{i}" for i in range(n_players)]
    history = play_out(game, players, random.Random(seed))
    final = history.state
    outcome = game.outcome(final)
    assert outcome is not None
    assert outcome.winners
    assert outcome.totals == game.totals(final)
    text = dump(game, players, history.actions)
    again = replay(text.splitlines())
    assert again.state == final
    assert game.state_json(again.state) == game.state_json(final)
    written = written_totals(game, final)
    if written is not None:
        assert written == game.totals(final)


@pytest.mark.parametrize("game_id", GAME_IDS)
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(0, 60))
def test_unlisted_actions_are_refused(game_id: str, seed: int, steps: int) -> None:
    """An action that ``legal_actions`` does not list is refused, never applied; one it lists
    is legal (a game may answer ``is_legal`` without listing every action)."""
    game = make(game_id)
    rng = random.Random(seed)
    state = game.initial_state(["A", "B"])
    for _ in range(steps):
        if game.phase(state) is Phase.FINISHED:
            break
        state = game.apply(state, choose(game, state, rng))
    legal = set(game.legal_actions(state))
    n = game.roll_size(state)
    probes: list[Action] = [Bank(), Stop(), Keep([6, 6, 6, 6]), Score("chance")]
    probes.append(Roll([1] * (n + 1 if n < 6 else 1)))
    assert all(game.is_legal(state, action) for action in legal)
    for probe in probes:
        if probe in legal:
            continue
        assert not game.is_legal(state, probe)
        # Illegal here, or not even an action of this game (an unknown category).
        with pytest.raises((IllegalAction, InvalidAction)):
            game.apply(state, probe)


JEOPARDY_IDS = [g for g in GAME_IDS if issubclass(game_class(g), JeopardyGame)]


@pytest.mark.parametrize(
    ("game_id", "options"),
    [
        *[(g, {}) for g in JEOPARDY_IDS],
        ("kymppitonni", {"four_twos_trigger": "at_least_4"}),
        ("kymppitonni", {"four_twos_rule": False}),
        ("kymppitonni", {"four_twos_keeps_turn_total": True}),
    ],
)
def test_score_says_what_the_engine_gives_for_a_first_throw(
    game_id: str, options: dict[str, Any]
) -> None:
    """``pipcam score`` (``score_roll``) and the game agree on every first throw: its points are
    the most that a legal set-aside of that throw adds to the turn, 0 when the throw ends the
    turn (a bust, four 2s). Special rules live in the engine's flow; this catches a score that
    forgets one."""
    from itertools import combinations_with_replacement

    game: Any = game_class(game_id).from_json(options)
    start = game.initial_state(["A", "B"])
    for roll in combinations_with_replacement(range(1, 7), game.roll_size(start)):
        state = game.apply(start, Roll(list(roll)))
        keeps = [a for a in game.legal_actions(state) if isinstance(a, Keep)]
        # No set-aside to choose: every die scored and was set aside at once (hot dice), or the
        # throw ended the turn and it passed on.
        taken = state.turn.total if state.turn.player == 0 else 0
        engine = max((game.apply(state, keep).turn.total for keep in keeps), default=taken)
        assert game.score_roll(roll)["points"] == engine, roll


NUMBER_OPTIONS = [
    (cls.game_id, f.name, f.metadata["lowest"])
    for cls in available()
    for f in dataclasses.fields(cls.options_type)
    if f.metadata.get("lowest") is not None
]


@pytest.mark.parametrize(("game_id", "name", "lowest"), NUMBER_OPTIONS)
def test_a_number_option_below_its_lowest_is_refused(game_id: str, name: str, lowest: int) -> None:
    """A negative bonus, penalty, target or threshold makes no game (a bank that can never be
    made, a straight that costs points): refused with the option's name and range; the lowest
    value itself is a game."""
    cls = game_class(game_id)
    with pytest.raises(InvalidOption, match=f"^option {name} takes .*at least {lowest}, not"):
        cls.from_json({name: lowest - 1})
    game = cls.from_json({name: lowest})
    assert getattr(game.options, name) == lowest


@pytest.mark.parametrize(
    ("game_id", "fewest"),
    [
        ("general", 2),  # RULES §2.1: 2+ players
        ("kymppitonni", 2),  # §3.1
        ("thousand", 2),  # §4.1
        ("triangles", 2),  # §5: 2-3 usually, up to 6
        ("jednicky-a-petky", 1),  # §6.1: any number of players
    ],
)
def test_a_game_with_fewer_players_than_its_rules_is_refused(game_id: str, fewest: int) -> None:
    """A header with one player too few is refused with the range; the fewest allowed starts."""
    from scoring.transcript import parse_header, start

    names = [f"P{i}" for i in range(fewest)]
    assert start(parse_header({"game": game_id, "players": names})).game.game_id == game_id
    if fewest > 1:
        with pytest.raises(InvalidAction, match=f"played by {fewest} to .* not {fewest - 1}"):
            start(parse_header({"game": game_id, "players": names[:-1]}))
