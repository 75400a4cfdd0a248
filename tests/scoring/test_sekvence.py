"""Sekvence (RULES §6.4): test vectors C60-C67, the target, options, refused rolls, transcripts."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core import Action, Bank, Forbidden, Phase, Roll
from scoring.errors import IllegalAction, InvalidOption
from scoring.games.sekvence import Sekvence, SekvenceOptions, SekvenceState, run_points
from scoring.history import History
from scoring.transcript import TranscriptError, replay

ALL_SIX = [1, 2, 3, 4, 5, 6]  # 25 points
NOTHING = [2, 3, 4, 5, 6, 6]  # 0 points

# (throw, points from 0 without the option, Ann's total after it from 25 with three_ones_reset)
VECTORS = [
    pytest.param([1, 2, 4, 4, 6, 6], 5, 30, id="C60"),
    pytest.param([1, 2, 3, 5, 5, 6], 10, 35, id="C61"),
    pytest.param([1, 2, 3, 4, 6, 6], 15, 40, id="C62"),
    pytest.param([1, 2, 3, 4, 5, 5], 20, 45, id="C63"),
    pytest.param([1, 2, 3, 4, 5, 6], 25, 50, id="C64"),
    pytest.param([2, 3, 4, 5, 6, 6], 0, 25, id="C65"),
    pytest.param([1, 3, 4, 5, 6, 6], 0, 25, id="C66"),
    pytest.param([1, 1, 1, 2, 3, 4], 15, 0, id="C67"),
    # [AMBIG-C8]: "three 1s" read as three or more; two 1s are an ordinary throw.
    pytest.param([1, 1, 1, 1, 2, 3], 10, 0, id="C67-four-ones"),
    pytest.param([1, 1, 2, 3, 4, 6], 15, 40, id="C67-two-ones"),
]


@pytest.mark.parametrize(("throw", "points", "_reset_total"), VECTORS)
def test_run_points(throw: list[int], points: int, _reset_total: int) -> None:
    assert run_points(throw) == points


@pytest.mark.parametrize(("throw", "points", "_reset_total"), VECTORS)
def test_vector_without_reset(throw: list[int], points: int, _reset_total: int) -> None:
    game = Sekvence()
    state = game.apply(game.initial_state(["Ann", "Bob"]), Roll(throw))
    assert game.totals(state) == (points, 0)
    assert game.to_move(state) == 1
    assert game.describe(state) == {"last_roll": throw, "target": 100}


@pytest.mark.parametrize(("throw", "_points", "reset_total"), VECTORS)
def test_vector_with_three_ones_reset(throw: list[int], _points: int, reset_total: int) -> None:
    game = Sekvence(SekvenceOptions(three_ones_reset=True))
    history = History(game, game.initial_state(["Ann", "Bob"]))
    for t in (ALL_SIX, [1, 2, 5, 5, 6, 6], throw):  # Ann 25, Bob 5, then Ann throws the vector
        history.push(Roll(t))
    assert game.totals(history.state) == (reset_total, 5)


def test_target_reached_ends_the_game_at_once() -> None:
    game = Sekvence()
    history = History(game, game.initial_state(["Ann", "Bob", "Cyril"]))
    for _ in range(3):  # Ann 75, the others nothing
        for t in (ALL_SIX, NOTHING, NOTHING):
            history.push(Roll(t))
    history.push(Roll(ALL_SIX))  # Ann 100: Bob and Cyril do not get to finish the round
    state = history.state
    outcome = game.outcome(state)
    assert outcome is not None
    assert (outcome.winners, outcome.totals, outcome.reason) == ((0,), (100, 0, 0), "reached 100")
    assert game.phase(state) is Phase.FINISHED
    assert game.to_move(state) is None
    assert game.roll_size(state) == 0
    assert game.legal_actions(state) == ()
    state_json = json.loads(json.dumps(game.state_json(state)))
    assert (state_json["finished"], state_json["winners"]) == (True, ["Ann"])


def test_just_below_the_target_goes_on() -> None:
    game = Sekvence.from_json({"target": 30})
    state = game.apply(game.initial_state(["Ann", "Bob"]), Roll(ALL_SIX))
    state = game.apply(state, Roll([1, 2, 3, 4, 5, 5]))  # Bob 20
    state = game.apply(state, Roll([1, 2, 4, 4, 6, 6]))  # Ann 30: exactly the target wins
    outcome = game.outcome(state)
    assert outcome is not None
    assert (outcome.winners, outcome.totals) == ((0,), (30, 20))


def test_option_parsing() -> None:
    assert Sekvence.from_json({"three_ones_reset": "on"}).options == SekvenceOptions(
        three_ones_reset=True
    )
    assert Sekvence.from_json({"target": "50"}).options == SekvenceOptions(target=50)
    assert Sekvence.from_json().options == SekvenceOptions(target=100, three_ones_reset=False)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        pytest.param(
            {"three_ones": True},
            "unknown option 'three_ones'; the options are: target, three_ones_reset",
            id="unknown",
        ),
        pytest.param(
            {"three_ones_reset": "maybe"},
            "option three_ones_reset takes bool, not 'maybe'",
            id="not-on-off",
        ),
        pytest.param({"target": "lots"}, "option target takes int, not 'lots'", id="not-a-number"),
        pytest.param(
            {"target": 0}, "option target takes a whole number of at least 1, not 0", id="zero"
        ),
    ],
)
def test_bad_options(given: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidOption) as refused:
        Sekvence.from_json(given)
    assert str(refused.value) == message


def _finished() -> SekvenceState:
    game = Sekvence(SekvenceOptions(target=25))
    return game.apply(game.initial_state(["Ann", "Bob"]), Roll(ALL_SIX))


@pytest.mark.parametrize(
    ("finished", "action", "message"),
    [
        pytest.param(
            False,
            Roll([1, 2, 3]),
            "cannot roll 1 2 3: 6 dice are to be thrown, not 3",
            id="too-few",
        ),
        pytest.param(
            False,
            Roll([1, 2, 3, 4, 5, 6, 6]),
            "cannot roll 1 2 3 4 5 6 6: 6 dice are to be thrown, not 7",
            id="too-many",
        ),
        pytest.param(False, Bank(), "cannot bank now; allowed: roll 6 dice", id="bank"),
        pytest.param(
            False, Forbidden([2, 5]), "cannot forbidden 2 5 now; allowed: roll 6 dice", id="forbid"
        ),
        pytest.param(
            True, Roll(ALL_SIX), "cannot roll 1 2 3 4 5 6: the game is over", id="after-end"
        ),
    ],
)
def test_refused_action_leaves_state(*, finished: bool, action: Action, message: str) -> None:
    game = Sekvence(SekvenceOptions(target=25))
    history = History(game, game.initial_state(["Ann", "Bob"]))
    history.push(Roll([1, 2, 4, 4, 6, 6]))
    if finished:
        history.push(Roll(ALL_SIX))
    state, length = history.state, len(history)
    with pytest.raises(IllegalAction) as refused:
        history.push(action)
    assert str(refused.value) == message
    assert history.state is state
    assert len(history) == length


def test_transcript_replay() -> None:
    throws = [ALL_SIX, NOTHING] * 3 + [[1, 1, 1, 2, 3, 4]]
    lines = [
        json.dumps(
            {"game": "Sekvence", "players": ["Ann", "Bob"], "options": {"target": 90}},
        ),
        *(json.dumps({"roll": t}) for t in throws),
    ]
    history = replay(lines)
    state_json = history.game.state_json(history.state)
    assert [p["score"] for p in state_json["players"]] == [90, 0]
    assert (state_json["finished"], state_json["winners"]) == (True, ["Ann"])
    assert len(history) == len(throws)


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        pytest.param('{"roll": [1, 2]}', "cannot roll 1 2: 6 dice are to be thrown, not 2"),
        pytest.param(
            '{"roll": [1, 2, 3, 4, 5, 9]}', "a die shows 1 to 6, not 9 (in [1, 2, 3, 4, 5, 9])"
        ),
        pytest.param('{"bank": true}', "cannot bank now; allowed: roll 6 dice"),
    ],
)
def test_transcript_bad_line(bad: str, reason: str) -> None:
    lines = [
        '{"game": "sekvence", "players": ["Ann", "Bob"], "options": {"three_ones_reset": true}}',
        '{"roll": [1, 2, 3, 4, 5, 6]}',
        "",
        bad,
        '{"roll": [1, 2, 3, 4, 5, 6]}',
    ]
    with pytest.raises(TranscriptError) as refused:
        replay(lines)
    assert refused.value.line == 4
    assert str(refused.value) == f"line 4: {reason}"


def test_transcript_bad_option_names_the_header_line() -> None:
    with pytest.raises(TranscriptError) as refused:
        replay(['{"game": "sekvence", "players": ["Ann"], "options": {"goal": 50}}'])
    assert str(refused.value) == (
        "line 1: unknown option 'goal'; the options are: target, three_ones_reset"
    )


THROW = st.lists(st.integers(1, 6), min_size=6, max_size=6)


@settings(max_examples=40, deadline=None)
@given(throws=st.lists(THROW, max_size=40), n_players=st.integers(1, 4), reset=st.booleans())
def test_random_throws_score_and_end_with_one_winner(
    *, throws: list[list[int]], n_players: int, reset: bool
) -> None:
    game = Sekvence(SekvenceOptions(target=30, three_ones_reset=reset))
    state = game.initial_state([f"P{i}" for i in range(n_players)])
    for throw in throws:
        if game.outcome(state) is not None:
            with pytest.raises(IllegalAction):
                game.apply(state, Roll(throw))
            break
        mover = game.to_move(state)
        assert mover is not None
        before = game.totals(state)
        state = game.apply(state, Roll(throw))
        wiped = reset and throw.count(1) >= 3
        expected = list(before)
        expected[mover] = 0 if wiped else before[mover] + run_points(throw)
        assert game.totals(state) == tuple(expected)
        assert (game.outcome(state) is not None) == (expected[mover] >= 30)
    outcome = game.outcome(state)
    if outcome is not None:
        (winner,) = outcome.winners
        assert outcome.totals[winner] >= 30
        assert sum(t >= 30 for t in outcome.totals) == 1
