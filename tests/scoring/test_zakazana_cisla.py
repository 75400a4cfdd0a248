"""Na zakázaná čísla (RULES §6.5): test vectors C70-C77, refused actions, options, transcripts."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core import Action, Bank, Forbidden, Keep, Phase, Roll, describe_options
from scoring.errors import IllegalAction, InvalidAction, InvalidOption
from scoring.games.zakazana_cisla import (
    ZakazanaCisla,
    ZakazanaCislaOptions,
    ZakazanaCislaState,
    throw_points,
)
from scoring.history import History
from scoring.registry import find_game
from scoring.transcript import TranscriptError, replay

DOUBLE = "the forbidden numbers must differ: a double is thrown again"

# Whole turns that score 38 under the forbidden numbers {2, 5} (for C77).
TURN_38_UNDER_2_5 = [[6, 6, 6, 6, 6, 6], [1, 1, 2, 2, 2, 2], [2, 5]]
# C71 verbatim: 14 + 7 + 3 + 4.
TURN_28_UNDER_2_5 = [[1, 2, 3, 4, 5, 6], [1, 2, 2, 6], [3, 5], [4], [2]]


@dataclass(frozen=True)
class Vector:
    """One RULES §6.5 vector played through the engine from a new game."""

    players: int
    setup: list[list[int]]  # set-up throws: every double is refused, the last pair is kept
    rolls: list[list[int]]
    forbidden: list[int]
    totals: tuple[int, ...]
    in_play: int  # dice the next roll throws (0 once the game is over)
    to_move: int | None
    winners: tuple[int, ...] = ()


VECTORS = [
    pytest.param(Vector(2, [[2, 5]], [[1, 2, 3, 4, 5, 6]], [2, 5], (14, 0), 4, 0), id="C70"),
    pytest.param(Vector(2, [[2, 5]], TURN_28_UNDER_2_5, [2, 5], (28, 0), 6, 1), id="C71"),
    pytest.param(Vector(2, [[5, 2]], [[2, 5, 2, 5, 2, 2]], [2, 5], (0, 0), 6, 1), id="C72"),
    pytest.param(Vector(2, [[3, 3], [3, 6]], [], [3, 6], (0, 0), 6, 0), id="C73"),
    pytest.param(Vector(2, [[1, 6]], [[1, 1, 6, 6, 1, 6]], [1, 6], (0, 0), 6, 1), id="C74"),
    pytest.param(Vector(2, [[1, 6]], [[2, 3, 4, 5, 2, 3]], [1, 6], (19, 0), 6, 0), id="C75"),
    pytest.param(
        Vector(
            2, [[3, 4]], [[1, 2, 5, 6, 3, 4], [6, 6, 6, 6], [3, 4, 3, 4]], [3, 4], (38, 0), 6, 1
        ),
        id="C76",
    ),
    pytest.param(
        Vector(
            3,
            [[2, 5]],
            TURN_28_UNDER_2_5 + TURN_38_UNDER_2_5 + TURN_38_UNDER_2_5,
            [2, 5],
            (28, 38, 38),
            0,
            None,
            winners=(1, 2),
        ),
        id="C77",
    ),
]

NAMES = ("Ann", "Bob", "Cyril")


@pytest.mark.parametrize("vector", VECTORS)
def test_rules_vector(vector: Vector) -> None:
    game = ZakazanaCisla()
    history = History(game, game.initial_state(NAMES[: vector.players]))
    for throw in vector.setup[:-1]:
        with pytest.raises(IllegalAction) as refused:
            history.push(Forbidden(throw))
        assert str(refused.value) == DOUBLE
        assert game.phase(history.state) is Phase.SETUP
    history.push(Forbidden(vector.setup[-1]))
    for throw in vector.rolls:
        history.push(Roll(throw))
    state = history.state
    assert game.describe(state)["forbidden"] == vector.forbidden
    assert game.totals(state) == vector.totals
    assert game.roll_size(state) == vector.in_play
    assert game.to_move(state) == vector.to_move
    outcome = game.outcome(state)
    assert (outcome.winners if outcome else ()) == vector.winners


@pytest.mark.parametrize(
    ("roll", "forbidden", "points", "left"),
    [
        pytest.param([1, 2, 3, 4, 5, 6], [2, 5], 14, 4, id="C70"),
        pytest.param([2, 5, 2, 5, 2, 2], [2, 5], 0, 0, id="C72"),
        pytest.param([1, 1, 6, 6, 1, 6], [1, 6], 0, 0, id="C74"),
        pytest.param([2, 3, 4, 5, 2, 3], [1, 6], 19, 6, id="C75"),
        pytest.param([6, 6, 6, 6], [3, 4], 24, 4, id="C76-second-throw"),
    ],
)
def test_throw_points(roll: list[int], forbidden: list[int], points: int, left: int) -> None:
    assert throw_points(roll, forbidden) == (points, left)


def test_describe_during_a_turn() -> None:
    game = ZakazanaCisla()
    state = game.initial_state(["Ann", "Bob"])
    for action in (Forbidden([2, 5]), Roll([1, 2, 3, 4, 5, 6]), Roll([2, 2, 6, 1])):
        state = game.apply(state, action)
    details = game.describe(state)
    assert details == {
        "forbidden": [2, 5],
        "dice_in_play": 2,
        "turn_total": 21,
        "last_roll": [1, 2, 2, 6],
        "set_aside": [2, 2],
        "round": 1,
        "rounds": 1,
        "scores": [
            {"name": "Ann", "score": 21, "turns": []},
            {"name": "Bob", "score": 0, "turns": []},
        ],
    }
    assert json.loads(json.dumps(game.state_json(state)))["to_move"] == "Ann"


# --------------------------------------------------------------------------------------------------
# Refused actions: the exact message, and the history (and its state) exactly as before.

SETUP_DONE = [Forbidden([2, 5])]
TWO_LEFT = [Forbidden([2, 5]), Roll([1, 2, 3, 4, 5, 6]), Roll([1, 2, 2, 6])]
ONE_LEFT = [*TWO_LEFT, Roll([3, 5])]
GAME_OVER = [Forbidden([2, 5]), Roll([2, 2, 2, 5, 5, 5]), Roll([2, 2, 2, 5, 5, 5])]


@pytest.mark.parametrize(
    ("before", "action", "message"),
    [
        pytest.param(
            TWO_LEFT,
            Roll([1, 1, 3, 3]),
            "cannot roll 4 dice: 2 dice are still in play",
            id="roll-too-many",
        ),
        pytest.param(
            ONE_LEFT, Roll([3, 3]), "cannot roll 2 dice: 1 die is still in play", id="one-die-left"
        ),
        pytest.param(
            SETUP_DONE,
            Roll([1, 2, 3, 4, 5]),
            "cannot roll 5 dice: 6 dice are still in play",
            id="turn-starts-with-six",
        ),
        pytest.param(
            [],
            Roll([1, 2, 3, 4, 5, 6]),
            "cannot roll 1 2 3 4 5 6: first throw two dice for the forbidden numbers "
            "(two different faces)",
            id="roll-before-setup",
        ),
        pytest.param([], Forbidden([4, 4]), DOUBLE, id="double-C73"),
        pytest.param(
            [],
            Forbidden([1, 2, 3]),
            "the forbidden numbers are thrown with two dice, not 3",
            id="three-forbidden",
        ),
        pytest.param(
            TWO_LEFT,
            Forbidden([1, 3]),
            "the forbidden numbers are already 2 and 5; allowed: roll 2 dice",
            id="forbidden-after-setup",
        ),
        pytest.param(
            TWO_LEFT,
            Keep([6]),
            "cannot keep 6: dice showing a forbidden number are put aside by themselves; "
            "allowed: roll 2 dice",
            id="keep",
        ),
        pytest.param(TWO_LEFT, Bank(), "cannot bank now; allowed: roll 2 dice", id="bank"),
        pytest.param(
            GAME_OVER,
            Roll([1, 2, 3, 4, 5, 6]),
            "cannot roll 1 2 3 4 5 6: the game is over",
            id="roll-after-end",
        ),
        pytest.param(
            GAME_OVER, Forbidden([1, 3]), "cannot forbidden 1 3: the game is over", id="forbid-end"
        ),
    ],
)
def test_refused_action_leaves_state(before: list[Action], action: Action, message: str) -> None:
    game = ZakazanaCisla()
    history = History(game, game.initial_state(["Ann", "Bob"]))
    for a in before:
        history.push(a)
    state, length = history.state, len(history)
    with pytest.raises(IllegalAction) as refused:
        history.push(action)
    assert str(refused.value) == message
    assert history.state is state
    assert len(history) == length
    assert game.is_legal(state, action) is False


def test_malformed_die_is_invalid_not_illegal() -> None:
    with pytest.raises(InvalidAction, match=r"^a die shows 1 to 6, not 7 \(in \[2, 7\]\)$"):
        Forbidden([2, 7])


# --------------------------------------------------------------------------------------------------
# Options


def test_several_rounds_add_up() -> None:
    game = ZakazanaCisla.from_json({"rounds": "2"})
    state = game.initial_state(["Ann", "Bob"])
    actions: list[Action] = [
        Forbidden([2, 5]),
        *map(Roll, TURN_28_UNDER_2_5),  # Ann, round 1
        Roll([5, 5, 5, 5, 5, 5]),  # Bob, round 1: 0
        Roll([3, 3, 2, 2, 2, 2]),  # Ann, round 2: +6 ...
        Roll([2, 2]),  # ... and out
    ]
    for action in actions:
        state = game.apply(state, action)
    assert game.totals(state) == (34, 0)
    assert game.outcome(state) is None
    assert game.describe(state)["round"] == 2
    state = game.apply(state, Roll([4, 4, 4, 4, 4, 4]))  # Bob, round 2: +24 ...
    state = game.apply(state, Roll([2, 2, 2, 2, 2, 5]))  # ... and out
    outcome = game.outcome(state)
    assert outcome is not None
    assert (outcome.winners, outcome.totals) == ((0,), (34, 24))
    assert outcome.reason == "highest score after 2 rounds"
    assert game.describe(state)["scores"][0]["turns"] == [28, 6]


def test_new_forbidden_numbers_each_round() -> None:
    game = ZakazanaCisla(ZakazanaCislaOptions(rounds=2, new_forbidden_each_round=True))
    state = game.initial_state(["Ann"])
    for action in (Forbidden([2, 5]), Roll([2, 2, 2, 5, 5, 5])):
        state = game.apply(state, action)
    assert game.phase(state) is Phase.SETUP
    assert game.describe(state)["forbidden"] == []
    state = game.apply(state, Forbidden([1, 6]))
    state = game.apply(state, Roll([2, 2, 2, 5, 5, 5]))  # 2s and 5s score now: 21, six go again
    assert game.totals(state) == (21,)
    assert game.roll_size(state) == 6


@pytest.mark.parametrize(
    ("given", "message"),
    [
        pytest.param({"rounds": 0}, "option rounds takes a whole number of at least 1, not 0"),
        pytest.param({"rounds": "many"}, "option rounds takes int, not 'many'"),
        pytest.param(
            {"round": 2},
            "unknown option 'round'; the options are: new_forbidden_each_round, rounds",
        ),
    ],
)
def test_bad_options(given: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidOption) as refused:
        ZakazanaCisla.from_json(given)
    assert str(refused.value) == message


def test_every_option_is_documented() -> None:
    infos = describe_options(ZakazanaCislaOptions)
    assert [(i.name, i.default) for i in infos] == [
        ("rounds", 1),
        ("new_forbidden_each_round", False),
    ]
    assert all(i.doc for i in infos)


@pytest.mark.parametrize("name", ["zakazana-cisla", "forbidden", "Zakázaná-Čísla"])
def test_registry_names(name: str) -> None:
    assert find_game(name) is ZakazanaCisla


# --------------------------------------------------------------------------------------------------
# Transcripts


def test_transcript_replay() -> None:
    lines = [
        json.dumps({"game": "zakazana-cisla", "players": ["Ann", "Bob", "Cyril"]}),
        '{"forbidden": [5, 2]}',
        *(json.dumps({"roll": r}) for r in TURN_28_UNDER_2_5 + TURN_38_UNDER_2_5),
        "",
        *(json.dumps({"roll": r}) for r in TURN_38_UNDER_2_5),
    ]
    history = replay(lines)
    state_json = history.game.state_json(history.state)
    assert state_json["finished"] is True
    assert [p["score"] for p in state_json["players"]] == [28, 38, 38]
    assert state_json["winners"] == ["Bob", "Cyril"]


@pytest.mark.parametrize(
    ("bad", "line", "reason"),
    [
        pytest.param('{"forbidden": [4, 4]}', 2, DOUBLE, id="double"),
        pytest.param(
            '{"roll": [1, 2, 3]}', 4, "cannot roll 3 dice: 4 dice are still in play", id="count"
        ),
        pytest.param(
            '{"roll": [1, 2, 3', 4, "not JSON (Expecting ',' delimiter at column 18)", id="not-json"
        ),
    ],
)
def test_transcript_bad_line(bad: str, line: int, reason: str) -> None:
    lines = [
        '{"game": "zakazana-cisla", "players": ["Ann", "Bob"]}',
        '{"forbidden": [2, 5]}',
        '{"roll": [1, 2, 3, 4, 5, 6]}',
    ]
    lines.insert(line - 1, bad)
    with pytest.raises(TranscriptError) as refused:
        replay(lines)
    assert refused.value.line == line
    assert str(refused.value) == f"line {line}: {reason}"


# --------------------------------------------------------------------------------------------------
# Property: random legal games end, and the totals are the pips of every non-forbidden die thrown.
# The dice fall with their real chances (from a seeded RNG): a game ends with probability 1 only, so
# letting hypothesis pick every throw would shrink to a table that throws 1 1 1 1 1 1 for ever.


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_players=st.integers(1, 4),
    rounds=st.integers(1, 2),
    new_forbidden=st.booleans(),
)
def test_random_games_end_and_add_up(
    *, seed: int, n_players: int, rounds: int, new_forbidden: bool
) -> None:
    rng = random.Random(seed)
    game = ZakazanaCisla(ZakazanaCislaOptions(rounds, new_forbidden_each_round=new_forbidden))
    state: ZakazanaCislaState = game.initial_state([f"P{i}" for i in range(n_players)])
    expected = [0] * n_players
    for _ in range(2000):
        if game.outcome(state) is not None:
            break
        chances = game.roll_outcomes(state)
        if chances:
            throw = rng.choices([d for d, _ in chances], [p for _, p in chances])[0]
            mover = game.to_move(state)
            assert mover is not None
            expected[mover] += sum(d for d in throw if d not in state.forbidden)
            action: Action = Roll(throw)
        else:
            legal = game.legal_actions(state)
            assert legal
            action = rng.choice(legal)
        state = game.apply(state, action)
    outcome = game.outcome(state)
    assert outcome is not None
    assert game.totals(state) == tuple(expected)
    assert outcome.winners == tuple(p for p, t in enumerate(expected) if t == max(expected))
    assert [sum(turns) for turns in state.sheet] == expected
    assert all(len(turns) == rounds for turns in state.sheet)
