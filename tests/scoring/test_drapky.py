"""Drápky / Figury (RULES §6.3): figures, marks, turn flow, refusals, places and game end."""

from __future__ import annotations

import json
import random
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core import Action, Keep, Phase, Roll, Score, Stop
from scoring.errors import IllegalAction, InvalidAction, InvalidOption
from scoring.games.drapky import (
    FIGURES,
    Drapky,
    DrapkyOptions,
    DrapkyState,
    figure_points,
    figures_made,
    overall_score,
    rank_places,
)
from scoring.history import History
from scoring.registry import find_game
from scoring.transcript import TranscriptError, replay

# fmt: off
VECTORS = [
    ("C40", [6, 1, 1, 1, 1, 1], "hiroshima", 11),
    ("C41", [4, 4, 4, 2, 5, 3], "fours", 12),
    ("C42", [5, 5, 5, 4, 4, 3], "pyramid", 26),
    ("C43", [4, 4, 4, 5, 5, 6], "pyramid", None),
    ("C44-three_pairs", [4, 4, 4, 4, 2, 2], "three_pairs", None),
    ("C44-two_plus_three", [4, 4, 4, 4, 2, 2], "two_plus_three", 16),
    ("C44-poker", [4, 4, 4, 4, 2, 2], "poker", 16),
    ("C44-fours", [4, 4, 4, 4, 2, 2], "fours", 16),
    ("C45", [2, 2, 3, 3, 3, 6], "two_plus_three", 13),
    ("C46", [1, 1, 2, 2, 3, 3], "three_pairs", 12),
    ("C47", [2, 2, 2, 6, 6, 6], "two_triples", 24),
    ("C48-general", [3, 3, 3, 3, 3, 3], "general", 18),
    ("C48-poker", [3, 3, 3, 3, 3, 3], "poker", 12),
    ("C48-threes", [3, 3, 3, 3, 3, 3], "threes", 18),
    ("C49", [1, 2, 3, 4, 5, 6], "straight", 21),
]
# fmt: on


@pytest.mark.parametrize(
    ("dice", "figure", "expected"), [pytest.param(*row[1:], id=row[0]) for row in VECTORS]
)
def test_figure_vectors(dice: list[int], figure: str, expected: int | None) -> None:
    assert figure_points(dice, figure) == expected
    made = Drapky().score_all(dice)
    assert made.get(figure) == expected
    assert (figure in made) == (expected is not None)


@pytest.mark.parametrize(
    ("dice", "figure", "expected"),
    [
        pytest.param([3, 3, 3, 5, 5, 5], "two_plus_three", 21, id="2+3-best-split"),
        pytest.param([2, 2, 2, 2, 2, 3], "two_plus_three", None, id="2+3-needs-two-faces"),
        pytest.param([4, 4, 4, 4, 4, 4], "two_plus_three", None, id="2+3-general-is-not"),
        pytest.param([1, 1, 2, 2, 3, 3], "two_triples", None, id="pairs-are-not-triples"),
        pytest.param([6, 6, 6, 1, 1, 1], "two_triples", 21, id="two-triples"),
        pytest.param([2, 2, 2, 2, 2, 2], "two_triples", None, id="six-equal-not-two-triples"),
        pytest.param([2, 2, 2, 2, 2, 2], "three_pairs", None, id="six-equal-not-three-pairs"),
        pytest.param([6, 6, 6, 5, 5, 1], "pyramid", 29, id="pyramid-651"),
        pytest.param([3, 3, 3, 2, 2, 1], "pyramid", 14, id="pyramid-smallest"),
        pytest.param([6, 6, 6, 1, 1, 5], "pyramid", None, id="pyramid-pair-below-single"),
        pytest.param([6, 6, 6, 6, 5, 1], "pyramid", None, id="pyramid-four-is-not"),
        pytest.param([5, 5, 5, 5, 5, 1], "poker", 20, id="poker-of-five"),
        pytest.param([5, 5, 5, 1, 2, 3], "poker", None, id="poker-needs-four"),
        pytest.param([1, 1, 1, 1, 6, 6], "hiroshima", None, id="hiroshima-exact"),
        pytest.param([2, 2, 2, 2, 2, 2], "general", 12, id="general-twos"),
        pytest.param([1, 2, 3, 4, 5, 5], "straight", None, id="no-straight"),
        pytest.param([1, 1, 2, 3, 4, 5], "ones", None, id="ones-needs-three"),
        pytest.param([1, 1, 1, 1, 1, 1], "ones", 6, id="six-ones"),
    ],
)
def test_figure_conditions(dice: list[int], figure: str, expected: int | None) -> None:
    assert figure_points(dice, figure) == expected


def test_figures_made_lists_only_satisfied_figures() -> None:
    assert figures_made([6, 1, 1, 1, 1, 1]) == {"ones": 5, "poker": 4, "hiroshima": 11}
    assert figures_made([1, 2, 2, 4, 5, 6]) == {}
    assert figures_made([3, 3, 3, 3, 3, 3]) == {"threes": 18, "poker": 12, "general": 18}


@pytest.mark.parametrize(
    ("dice", "figure", "message"),
    [
        pytest.param(
            [1, 2, 3, 4, 5, 6],
            "yahtzee",
            "unknown figure 'yahtzee'; the figures are: ones, twos, threes, fours, fives, sixes, "
            "two_plus_three, three_pairs, two_triples, pyramid, poker, hiroshima, general, "
            "straight",
            id="unknown-figure",
        ),
        pytest.param(
            [1, 2, 3, 4, 5], "straight", "Drápky scores six dice, not 5 ([1, 2, 3, 4, 5])", id="5"
        ),
        pytest.param(
            [0, 2, 3, 4, 5, 6],
            "straight",
            "a die shows 1 to 6, not 0 (in [0, 2, 3, 4, 5, 6])",
            id="0",
        ),
    ],
)
def test_malformed_figure_input(dice: list[int], figure: str, message: str) -> None:
    with pytest.raises(InvalidAction) as err:
        figure_points(dice, figure)
    assert str(err.value) == message


def test_registry_finds_drapky() -> None:
    for name in ("drapky", "Drápky", "DRAPKY"):
        assert find_game(name) is Drapky
    # the alias lookup imports every engine listed before this one, so check the alias data here
    assert Drapky.aliases == ("figury",)


# -- overall score (C51) ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        pytest.param([(120, 1), (100, 2), (90, 3)], 51.67, id="C51"),
        pytest.param([(150, 1)], 150.0, id="one-win"),
        pytest.param([(100, 2), (60, 4)], 26.67, id="two-games"),
    ],
)
def test_overall_score(results: list[tuple[int, int]], expected: float) -> None:
    assert round(overall_score(results), 2) == expected


def test_overall_score_needs_a_game() -> None:
    with pytest.raises(ValueError, match="at least one completed game"):
        overall_score([])


# -- helpers ---------------------------------------------------------------------------------------


def play(game: Drapky, state: DrapkyState, *actions: Action) -> DrapkyState:
    for action in actions:
        state = game.apply(state, action)
    return state


def refuse(game: Drapky, state: DrapkyState, action: Action) -> str:
    history = History(game, state)
    with pytest.raises(IllegalAction) as err:
        history.push(action)
    assert history.state is state
    assert len(history) == 0
    return str(err.value)


# -- marks and turn flow ---------------------------------------------------------------------------


def test_c50_unused_throws_carry_over_as_marks() -> None:
    game = Drapky()
    state = game.initial_state(["Ann", "Bob"])
    assert game.available(state) == 3
    state = play(game, state, Roll([1, 2, 2, 4, 5, 6]), Stop())
    assert state.marks == (2, 0)
    state = play(game, state, Stop())  # Bob carries all three throws
    assert state.marks == (2, 3)
    assert game.to_move(state) == 0
    assert game.available(state) == 5
    state = play(game, state, Roll([1, 2, 2, 4, 5, 6]), Keep([2, 2]), Roll([3, 3, 3, 3]))
    assert state.dice == (2, 2, 3, 3, 3, 3)
    assert game.throws_left(state) == 3
    state = game.apply(state, Score("threes"))
    assert state.marks == (3, 3)
    assert game.totals(state) == (12, 0)


def test_stop_before_the_first_throw_carries_three_more_marks() -> None:
    game = Drapky()
    state = game.initial_state(["Ann"])
    assert Stop() in game.legal_actions(state)
    for expected in (3, 6, 9):
        state = game.apply(state, Stop())
        assert state.marks == (expected,)
    assert game.available(state) == 12


def test_marks_cap() -> None:
    game = Drapky(DrapkyOptions(marks_cap=4))
    state = play(game, game.initial_state(["Ann"]), Stop(), Stop())
    assert state.marks == (4,)
    assert game.available(state) == 7
    rethrow: list[Action] = [Roll([1, 2, 2, 4, 5, 6]), Keep([])]
    state = play(game, state, *rethrow * 6, Roll([1, 2, 2, 4, 5, 6]))
    assert game.throws_left(state) == 0
    state = game.apply(state, Stop())
    assert state.marks == (0,)


def test_options_parse() -> None:
    assert Drapky.from_json({}).options == DrapkyOptions()
    assert DrapkyOptions().place_by == "points"
    assert DrapkyOptions().marks_cap is None
    assert Drapky.from_json({"place_by": "figures"}).options.place_by == "figures"
    assert Drapky.from_json({"marks_cap": "on"}).options.marks_cap == 3
    assert Drapky.from_json({"marks_cap": "6"}).options.marks_cap == 6
    with pytest.raises(InvalidOption) as err:
        Drapky.from_json({"place_by": "luck"})
    assert str(err.value) == "option place_by takes points | figures, not 'luck'"
    with pytest.raises(InvalidOption) as err:
        Drapky.from_json({"marks_cap": -1})
    assert str(err.value) == "option marks_cap takes off or a whole number of at least 0, not -1"


def all_keeps(dice: tuple[int, ...]) -> set[tuple[int, ...]]:
    return {
        tuple(sorted(dice[i] for i in idx))
        for size in range(6)
        for idx in combinations(range(6), size)
    }


@pytest.mark.parametrize(
    ("dice", "n_keeps", "scores"),
    [
        pytest.param([1, 2, 3, 4, 5, 6], 63, ["straight"], id="straight"),
        pytest.param([1, 1, 2, 2, 3, 3], 26, ["three_pairs"], id="three-pairs"),
        pytest.param([4, 4, 4, 4, 2, 2], 14, ["fours", "two_plus_three", "poker"], id="C44"),
        pytest.param([1, 2, 2, 4, 5, 6], 47, [], id="nothing"),
    ],
)
def test_after_a_throw_keep_score_or_stop(dice: list[int], n_keeps: int, scores: list[str]) -> None:
    game = Drapky()
    state = game.initial_state(["Ann"])
    assert game.phase(state) is Phase.ROLL
    assert game.roll_size(state) == 6
    assert len(game.roll_outcomes(state)) == 462
    state = game.apply(state, Roll(dice))
    assert game.phase(state) is Phase.DECIDE
    legal = game.legal_actions(state)
    assert {a.dice for a in legal if isinstance(a, Keep)} == all_keeps(tuple(sorted(dice)))
    assert sum(isinstance(a, Keep) for a in legal) == n_keeps
    assert [a.category for a in legal if isinstance(a, Score)] == scores
    assert Stop() in legal


def test_kept_dice_join_the_next_throw_and_can_be_thrown_again() -> None:
    game = Drapky()
    state = play(game, game.initial_state(["Ann"]), Roll([1, 5, 5, 5, 2, 3]), Keep([5, 5, 5]))
    assert game.phase(state) is Phase.ROLL
    assert game.roll_size(state) == 3
    assert Stop() in game.legal_actions(state)
    state = game.apply(state, Roll([4, 4, 6]))
    assert state.dice == (4, 4, 5, 5, 5, 6)
    state = play(game, state, Keep([4, 4, 5]), Roll([3, 5, 5]))
    assert state.dice == (3, 4, 4, 5, 5, 5)
    assert game.throws_left(state) == 0
    state = game.apply(state, Score("pyramid"))
    assert game.totals(state) == (26,)
    assert state.marks == (0,)


def test_three_throw_limit_leaves_score_or_stop() -> None:
    game = Drapky()
    nothing = Roll([1, 2, 2, 4, 5, 6])
    state = play(game, game.initial_state(["Ann"]), nothing, Keep([]), nothing, Keep([]), nothing)
    assert game.throws_left(state) == 0
    assert game.legal_actions(state) == (Stop(),)
    assert refuse(game, state, Roll([1, 2, 3, 4, 5, 6])) == (
        "cannot roll: no throws left this turn; score a figure or stop"
    )
    assert refuse(game, state, Keep([2, 2])) == (
        "cannot keep 2 2: no throws left this turn; score a figure or stop"
    )
    state = game.apply(state, Stop())
    assert state.marks == (0,)


# -- refusals ------------------------------------------------------------------------------------


def test_refusals_with_the_dice_showing() -> None:
    game = Drapky()
    state = play(game, game.initial_state(["Ann"]), Roll([4, 4, 4, 5, 5, 6]))
    assert refuse(game, state, Score("pyramid")) == (
        "cannot score pyramid: it needs a triple, a pair and a single with triple > pair > "
        "single; the dice 4 4 4 5 5 6 do not make one"
    )
    assert refuse(game, state, Score("fives")) == (
        "cannot score fives: it needs at least three 5s; the dice 4 4 4 5 5 6 do not make one"
    )
    assert refuse(game, state, Score("hiroshima")) == (
        "cannot score hiroshima: it needs one 6 and five 1s; the dice 4 4 4 5 5 6 do not make one"
    )
    assert refuse(game, state, Keep([4, 4, 4, 5, 5, 6])) == (
        "cannot keep all six dice: keep at most five and throw the rest"
    )
    assert refuse(game, state, Roll([1, 2, 3, 4, 5, 6])) == (
        "cannot roll now: keep the dice to hold first (keep nothing to throw all six again), "
        "score a figure or stop"
    )
    state = play(game, game.initial_state(["Ann"]), Roll([1, 2, 3, 4, 5, 5]))
    assert refuse(game, state, Keep([6, 6])) == (
        "cannot keep 6 6: the dice showing are 1 2 3 4 5 5"
    )


def test_refusals_before_a_throw_and_while_dice_are_kept() -> None:
    game = Drapky()
    state = game.initial_state(["Ann"])
    assert refuse(game, state, Score("straight")) == (
        "cannot score straight: no dice have been thrown this turn"
    )
    assert refuse(game, state, Keep([1])) == "cannot keep 1: no dice have been thrown this turn"
    assert refuse(game, state, Roll([1, 2, 3, 4, 5])) == (
        "cannot roll 1 2 3 4 5: 6 dice are to be thrown, not 5"
    )
    state = play(game, state, Roll([1, 2, 3, 4, 5, 6]), Keep([1, 2, 3, 4, 5]))
    assert refuse(game, state, Score("straight")) == (
        "cannot score straight: throw the 1 die not kept first"
    )


def test_a_recorded_figure_cannot_be_recorded_again() -> None:
    game = Drapky()
    state = play(game, game.initial_state(["Ann"]), Roll([1, 2, 3, 4, 5, 6]), Score("straight"))
    state = game.apply(state, Roll([1, 2, 3, 4, 5, 6]))
    assert Score("straight") not in game.legal_actions(state)
    assert refuse(game, state, Score("straight")) == (
        "cannot score straight: it is already recorded (21)"
    )


def test_malformed_score_raises_invalid_action() -> None:
    game = Drapky()
    state = game.apply(game.initial_state(["Ann"]), Roll([1, 2, 3, 4, 5, 6]))
    with pytest.raises(InvalidAction, match="unknown figure 'full_house'"):
        game.apply(state, Score("full_house"))
    with pytest.raises(InvalidAction) as err:
        game.apply(state, Score("straight", 1))
    assert str(err.value) == "Drápky has one column of figures, not column 2"


# -- game end and places -------------------------------------------------------------------------

FINISHER_TURNS = [
    ([1, 1, 1, 2, 3, 4], "ones", 3),
    ([2, 2, 2, 1, 3, 4], "twos", 6),
    ([3, 3, 3, 1, 2, 4], "threes", 9),
    ([4, 4, 4, 2, 5, 3], "fours", 12),
    ([5, 5, 5, 1, 2, 3], "fives", 15),
    ([6, 6, 6, 1, 2, 3], "sixes", 18),
    ([2, 2, 3, 3, 3, 6], "two_plus_three", 13),
    ([1, 1, 2, 2, 3, 3], "three_pairs", 12),
    ([2, 2, 2, 6, 6, 6], "two_triples", 24),
    ([5, 5, 5, 4, 4, 3], "pyramid", 26),
    ([4, 4, 4, 4, 2, 2], "poker", 16),
    ([6, 1, 1, 1, 1, 1], "hiroshima", 11),
    ([3, 3, 3, 3, 3, 3], "general", 18),
    ([1, 2, 3, 4, 5, 6], "straight", 21),
]


def four_player_game(options: DrapkyOptions | None = None) -> tuple[Drapky, DrapkyState]:
    """Ann records every figure in 14 turns; Bob and Cyd score sixes then two_triples; Dan ones."""
    game = Drapky(options)
    state = game.initial_state(["Ann", "Bob", "Cyd", "Dan"])
    for turn, (dice, figure, _) in enumerate(FINISHER_TURNS):
        state = play(game, state, Roll(dice), Score(figure))
        if game.outcome(state) is not None:
            break
        for seat in (1, 2, 3):
            assert game.to_move(state) == seat
            if seat < 3 and turn == 0:
                state = play(game, state, Roll([6, 6, 6, 6, 1, 2]), Score("sixes"))
            elif seat < 3 and turn == 1:
                state = play(game, state, Roll([1, 1, 1, 2, 2, 2]), Score("two_triples"))
            elif seat == 3 and turn == 0:
                state = play(game, state, Roll([1, 1, 1, 2, 3, 4]), Score("ones"))
            else:
                state = game.apply(state, Stop())
    return game, state


def test_game_ends_as_soon_as_one_player_has_every_figure() -> None:
    game, state = four_player_game()
    outcome = game.outcome(state)
    assert outcome is not None
    assert outcome.winners == (0,)
    assert outcome.totals == (sum(p for *_, p in FINISHER_TURNS), 33, 33, 3)
    assert outcome.totals[0] == 204
    assert outcome.reason == "Ann recorded all 14 figures"
    assert game.places(state) == (1, 2, 2, 4)
    assert game.phase(state) is Phase.FINISHED
    assert game.to_move(state) is None
    assert game.legal_actions(state) == ()
    assert refuse(game, state, Stop()) == "cannot stop: the game is over"
    view = game.state_json(state)
    json.dumps(view)
    assert view["winners"] == ["Ann"]
    assert [s["place"] for s in view["sheets"]] == [1, 2, 2, 4]


def test_game_goes_on_before_the_fourteenth_figure() -> None:
    game = Drapky()
    state = game.initial_state(["Ann"])
    for dice, figure, _ in FINISHER_TURNS[:-1]:
        state = play(game, state, Roll(dice), Score(figure))
    assert game.outcome(state) is None
    state = game.apply(state, Roll([1, 2, 3, 4, 5, 6]))
    assert [a for a in game.legal_actions(state) if isinstance(a, Score)] == [Score("straight")]
    state = game.apply(state, Score("straight"))
    assert game.outcome(state) is not None


def test_places_finisher_first_even_with_fewer_points() -> None:
    game = Drapky()
    sheet_few: tuple[int | None, ...] = (3,) * 14  # 14 figures, 42 points
    sheet_rich: tuple[int | None, ...] = (30,) * 13 + (None,)
    sheet_mid: tuple[int | None, ...] = (10,) * 5 + (None,) * 9
    state = DrapkyState(
        ("Ann", "Bob", "Cyd"), (sheet_few, sheet_rich, sheet_mid), (0, 0, 0), finisher=0
    )
    assert game.totals(state) == (42, 390, 50)
    assert game.places(state) == (1, 2, 3)
    outcome = game.outcome(state)
    assert outcome is not None
    assert outcome.winners == (0,)


@pytest.mark.parametrize(
    ("place_by", "expected"),
    [
        pytest.param("points", (1, 3, 2, 3), id="by-points"),
        pytest.param("figures", (1, 3, 4, 2), id="by-figures-then-points"),
    ],
)
def test_place_by(place_by: str, expected: tuple[int, ...]) -> None:
    game = Drapky.from_json({"place_by": place_by})
    sheets: tuple[tuple[int | None, ...], ...] = (
        (1,) * 14,
        (10,) * 3 + (None,) * 11,  # 3 figures, 30 points
        (50,) + (None,) * 13,  # 1 figure, 50 points
        (5,) * 3 + (15,) + (None,) * 10,  # 4 figures, 30 points
    )
    state = DrapkyState(("A", "B", "C", "D"), sheets, (0,) * 4, finisher=0)
    assert game.places(state) == expected


@pytest.mark.parametrize(
    ("keys", "finisher", "expected"),
    [
        pytest.param([(90,), (100,), (100,), (80,)], None, (3, 1, 1, 4), id="no-finisher"),
        pytest.param([(10,), (100,), (100,), (80,)], 0, (1, 2, 2, 4), id="1-2-2-4"),
        pytest.param([(100,), (100,), (10,)], 2, (2, 2, 1), id="finisher-last-seat"),
    ],
)
def test_rank_places(
    keys: list[tuple[int, ...]], finisher: int | None, expected: tuple[int, ...]
) -> None:
    assert rank_places(keys, finisher) == expected


def test_describe_shows_dice_throws_marks_and_figures() -> None:
    game = Drapky()
    state = play(game, game.initial_state(["Ann", "Bob"]), Stop())
    state = play(game, state, Roll([1, 2, 3, 4, 5, 6]), Score("straight"))
    state = play(game, state, Roll([1, 5, 5, 5, 2, 3]), Keep([5, 5, 5]))
    view = game.describe(state)
    json.dumps(view)
    assert view["dice"] == [1, 2, 3, 5, 5, 5]
    assert view["kept"] == [5, 5, 5]
    assert view["throws_used"] == 1
    assert view["throws_available"] == 6
    assert view["marks"] == [3, 2]
    assert view["can_score"] == {}
    assert view["sheets"][1]["figures"] == {"straight": 21}
    assert view["sheets"][1]["points"] == 21
    assert view["sheets"][0]["figures"] == {}
    state = game.apply(state, Roll([5, 4, 3]))
    assert game.describe(state)["can_score"] == {"fives": 20, "poker": 20}


# -- properties ------------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=6, max_size=6))
def test_number_figures_and_made_agree(dice: list[int]) -> None:
    made = figures_made(dice)
    for face, figure in enumerate(FIGURES[:6], start=1):
        n = dice.count(face)
        assert made.get(figure) == (n * face if n >= 3 else None)
    for figure, points in made.items():
        assert figure_points(dice, figure) == points
        assert 0 < points <= 36


@settings(max_examples=15, deadline=None)
@given(st.randoms(use_true_random=False))
def test_random_turns_keep_the_invariants(rnd: random.Random) -> None:
    game = Drapky()
    state = game.initial_state(["Ann", "Bob"])
    for _ in range(120):
        if game.outcome(state) is not None:
            break
        legal = game.legal_actions(state)
        assert legal
        assert 0 <= state.used <= game.available(state)
        if game.phase(state) is Phase.ROLL and rnd.random() < 0.95:
            outcomes = game.roll_outcomes(state)
            action: Action = Roll(
                rnd.choices([d for d, _ in outcomes], [p for _, p in outcomes])[0]
            )
        else:
            action = rnd.choice(legal)
        before = state
        state = game.apply(state, action)
        if isinstance(action, Score | Stop):
            p = before.player
            assert state.marks[p] == game.available(before) - before.used
            assert state.dice == ()
        assert all(m >= 0 for m in state.marks)
        assert game.totals(state) == tuple(
            sum(v for v in sheet if v is not None) for sheet in state.sheets
        )


def test_transcript_replay() -> None:
    lines = [
        '{"game": "drapky", "players": ["Ann", "Bob"]}',
        '{"stop": true}',
        '{"roll": [1, 1, 1, 2, 3, 4]}',
        '{"keep": [1, 1, 1]}',
        '{"roll": [1, 5, 6]}',
        '{"score": "ones"}',
        '{"roll": [6, 1, 1, 1, 1, 1]}',
        '{"score": "pyramid"}',
    ]
    with pytest.raises(TranscriptError) as err:
        replay(lines)
    assert str(err.value) == (
        "line 8: cannot score pyramid: it needs a triple, a pair and a single with triple > pair "
        "> single; the dice 1 1 1 1 1 6 do not make one"
    )
    history = replay(lines[:-1])
    assert history.game.totals(history.state) == (0, 4)
    assert history.state.marks == (3, 1)
