"""Generał (RULES §2): category values, options, turn flow, refusals and game end."""

from __future__ import annotations

import json
import random
from itertools import combinations
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core import Action, Keep, Phase, Roll, Score, Stop
from scoring.errors import IllegalAction, InvalidAction, InvalidOption
from scoring.games.general import (
    CATEGORIES,
    EMPTY_COLUMN,
    Column,
    Entry,
    General,
    GeneralOptions,
    GeneralState,
    box_choices,
    category_points,
    column_total,
    write_value,
)
from scoring.history import History
from scoring.registry import find_game
from scoring.transcript import dump, replay

OFF_DISTINCT = GeneralOptions(full_requires_distinct=False)
EXACT_FOUR = GeneralOptions(four_kind_exact=True)

# fmt: off
VECTORS = [
    ("G01", [1, 1, 1, 3, 5], "ones", 3, None),
    ("G02", [2, 2, 2, 1, 4], "twos", 6, None),
    ("G03", [3, 3, 6, 3, 3], "threes", 12, None),
    ("G04", [4, 4, 5, 5, 6], "fours", 8, None),  # the original text prints 12 [AMBIG-G1]
    ("G05", [1, 2, 3, 5, 5], "fives", 10, None),
    ("G06", [2, 3, 6, 6, 6], "sixes", 18, None),
    ("G07", [2, 3, 4, 4, 4], "three_of_a_kind", 17, None),
    ("G08", [4, 5, 5, 5, 5], "four_of_a_kind", 24, None),
    ("G09", [2, 2, 5, 5, 5], "full_house", 25, None),
    ("G10", [1, 3, 4, 5, 6], "small_straight", 30, None),
    ("G11", [2, 3, 4, 5, 6], "large_straight", 40, None),
    ("G12", [2, 2, 2, 2, 2], "general", 50, None),
    ("G13", [2, 3, 4, 4, 6], "chance", 19, None),
    ("G14-ones", [5, 5, 2, 1, 6], "ones", 1, None),
    ("G14-twos", [5, 5, 2, 1, 6], "twos", 2, None),
    ("G14-fives", [5, 5, 2, 1, 6], "fives", 10, None),
    ("G14-sixes", [5, 5, 2, 1, 6], "sixes", 6, None),
    ("G15", [1, 2, 3, 4, 6], "small_straight", 30, None),
    ("G16", [1, 2, 3, 4, 5], "large_straight", 40, None),
    ("G17", [1, 1, 2, 2, 2], "full_house", 25, None),
    ("G18-fives", [5, 2, 5, 5, 3], "fives", 15, None),
    ("G18-threes", [5, 2, 5, 5, 3], "threes", 3, None),
    ("G18-ones", [5, 2, 5, 5, 3], "ones", 0, None),
    ("G19", [2, 3, 4, 5, 6], "three_of_a_kind", 0, None),
    ("G20-default", [3, 3, 3, 3, 3], "full_house", 0, None),
    ("G20-full_requires_distinct=off", [3, 3, 3, 3, 3], "full_house", 25, OFF_DISTINCT),
    ("G21-default", [6, 6, 6, 6, 6], "four_of_a_kind", 30, None),
    ("G21-four_kind_exact=on", [6, 6, 6, 6, 6], "four_of_a_kind", 0, EXACT_FOUR),
    ("G22", [2, 3, 4, 5, 6], "small_straight", 30, None),
]
# fmt: on


@pytest.mark.parametrize(
    ("dice", "category", "expected", "options"),
    [pytest.param(*row[1:], id=row[0]) for row in VECTORS],
)
def test_category_vectors(
    dice: list[int], category: str, expected: int, options: GeneralOptions | None
) -> None:
    opts = options or GeneralOptions()
    assert category_points(dice, category, opts) == expected
    assert General(opts).score_all(dice)[category] == expected


@pytest.mark.parametrize(
    ("dice", "category", "expected"),
    [
        pytest.param([4, 4, 4, 4, 2], "four_of_a_kind", 18, id="exact-four-still-scores"),
        pytest.param([4, 4, 4, 2, 2], "four_of_a_kind", 0, id="three-is-not-four"),
        pytest.param([4, 4, 4, 4, 4], "full_house", 0, id="general-no-full-by-default"),
        pytest.param([1, 2, 3, 5, 6], "small_straight", 0, id="gap-no-small"),
        pytest.param([1, 2, 3, 4, 6], "large_straight", 0, id="small-is-not-large"),
        pytest.param([3, 4, 5, 6, 6], "small_straight", 30, id="small-3456"),
        pytest.param([2, 2, 2, 2, 3], "general", 0, id="four-is-no-general"),
    ],
)
def test_category_conditions(dice: list[int], category: str, expected: int) -> None:
    assert category_points(dice, category, EXACT_FOUR) == expected


def test_score_all_lists_every_category() -> None:
    scores = General().score_all([1, 1, 1, 3, 5])
    assert list(scores) == list(CATEGORIES)
    assert scores == {
        "ones": 3,
        "twos": 0,
        "threes": 3,
        "fours": 0,
        "fives": 5,
        "sixes": 0,
        "three_of_a_kind": 11,
        "four_of_a_kind": 0,
        "full_house": 0,
        "small_straight": 0,
        "large_straight": 0,
        "general": 0,
        "chance": 11,
    }


@pytest.mark.parametrize(
    ("dice", "category", "message"),
    [
        pytest.param(
            [1, 2, 3, 4, 5],
            "yahtzee",
            "unknown category 'yahtzee'; the categories are: ones, twos, threes, fours, fives, "
            "sixes, three_of_a_kind, four_of_a_kind, full_house, small_straight, large_straight, "
            "general, chance",
            id="unknown-category",
        ),
        pytest.param(
            [1, 2, 3, 4, 7], "chance", "a die shows 1 to 6, not 7 (in [1, 2, 3, 4, 7])", id="die-7"
        ),
        pytest.param(
            [1, 2, 3, 4], "chance", "Generał scores five dice, not 4 ([1, 2, 3, 4])", id="four-dice"
        ),
    ],
)
def test_category_points_rejects_malformed_input(
    dice: list[int], category: str, message: str
) -> None:
    with pytest.raises(InvalidAction) as err:
        category_points(dice, category)
    assert str(err.value) == message


# -- helpers ---------------------------------------------------------------------------------------


def play(game: General, state: GeneralState, *actions: Action) -> GeneralState:
    for action in actions:
        state = game.apply(state, action)
    return state


def turn(
    game: General, state: GeneralState, dice: list[int], category: str, column: int = 0
) -> GeneralState:
    return play(game, state, Roll(dice), Score(category, column))


def refuse(game: General, state: GeneralState, action: Action) -> str:
    before = state
    history = History(game, state)
    with pytest.raises(IllegalAction) as err:
        history.push(action)
    assert history.state is before
    assert len(history) == 0
    return str(err.value)


def column_with(**entries: int) -> Column:
    return tuple(entries.get(c) for c in CATEGORIES)


# -- G23: the whole sheet --------------------------------------------------------------------------

G23_TURNS = [
    ([1, 1, 1, 3, 5], "ones"),
    ([2, 2, 2, 1, 4], "twos"),
    ([3, 3, 6, 3, 3], "threes"),
    ([4, 4, 5, 5, 6], "fours"),
    ([1, 2, 3, 5, 5], "fives"),
    ([2, 3, 6, 6, 6], "sixes"),
    ([2, 3, 4, 4, 4], "three_of_a_kind"),
    ([4, 5, 5, 5, 5], "four_of_a_kind"),
    ([2, 2, 5, 5, 5], "full_house"),
    ([1, 3, 4, 5, 6], "small_straight"),
    ([2, 3, 4, 5, 6], "large_straight"),
    ([2, 2, 2, 2, 2], "general"),
    ([2, 3, 4, 4, 6], "chance"),
]


@pytest.mark.parametrize(
    ("options", "fours", "expected"),
    [
        pytest.param({}, [4, 4, 5, 5, 6], 262, id="G23-default"),
        pytest.param({"upper_bonus": "on"}, [4, 4, 5, 5, 6], 262, id="G23-upper_bonus-57"),
        pytest.param({"upper_bonus": "on"}, [4, 4, 4, 4, 1], 305, id="G23-upper_bonus-65"),
        pytest.param({}, [4, 4, 4, 4, 1], 270, id="G23-fours-16-no-bonus"),
        pytest.param({"upper_bonus": 50}, [4, 4, 4, 4, 1], 320, id="G23-upper_bonus-50"),
    ],
)
def test_g23_whole_sheet(options: dict[str, Any], fours: list[int], expected: int) -> None:
    game = General.from_json(options)
    assert isinstance(game, General)
    state = game.initial_state(["Ann"])
    for dice, category in G23_TURNS:
        assert game.phase(state) is Phase.ROLL
        state = turn(game, state, fours if category == "fours" else dice, category)
    assert game.phase(state) is Phase.FINISHED
    assert game.totals(state) == (expected,)
    outcome = game.outcome(state)
    assert outcome is not None
    assert outcome.winners == (0,)
    assert outcome.totals == (expected,)


# -- options -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param({}, GeneralOptions(), id="defaults"),
        pytest.param({"upper_bonus": "on"}, GeneralOptions(upper_bonus=35), id="upper_bonus-on"),
        pytest.param({"upper_bonus": True}, GeneralOptions(upper_bonus=35), id="upper_bonus-true"),
        pytest.param(
            {"upper_bonus": "off"}, GeneralOptions(upper_bonus=None), id="upper_bonus-off"
        ),
        pytest.param(
            {"extra_general_bonus": "on"}, GeneralOptions(extra_general_bonus=100), id="extra-on"
        ),
        pytest.param(
            {"general_joker": "on"},
            GeneralOptions(general_joker="forced"),
            id="joker-on",
        ),
        pytest.param(
            {"general_joker": "free"}, GeneralOptions(general_joker="free"), id="joker-free"
        ),
        pytest.param(
            {"four_kind_exact": "on"}, GeneralOptions(four_kind_exact=True), id="exact-on"
        ),
        pytest.param(
            {"full_requires_distinct": "off"},
            GeneralOptions(full_requires_distinct=False),
            id="distinct-off",
        ),
        pytest.param({"columns": "3"}, GeneralOptions(columns=3), id="columns-3"),
        pytest.param({"columns": 3}, GeneralOptions(columns=3), id="columns-3-json"),
        pytest.param(
            {"first_roll_multiplier": "2"}, GeneralOptions(first_roll_multiplier=2), id="mult-2"
        ),
    ],
)
def test_options_parse(given: dict[str, Any], expected: GeneralOptions) -> None:
    assert General.from_json(given).options == expected


def test_option_defaults_match_rules() -> None:
    opts = GeneralOptions()
    assert opts.upper_bonus is None
    assert opts.extra_general_bonus is None
    assert opts.general_joker == "off"
    assert opts.four_kind_exact is False
    assert opts.full_requires_distinct is True
    assert opts.columns == 1
    assert opts.first_roll_multiplier == 1


@pytest.mark.parametrize(
    ("given", "message"),
    [
        pytest.param({"columns": 2}, "option columns takes 1 | 3, not 2", id="columns-2"),
        pytest.param(
            {"general_joker": "always"},
            "option general_joker takes off | forced | free, not 'always'",
            id="joker-bad",
        ),
        pytest.param(
            {"first_roll_multiplier": 0},
            "option first_roll_multiplier takes a whole number of at least 1, not 0",
            id="mult-0",
        ),
        pytest.param(
            {"upper_bonus": -5},
            "option upper_bonus takes off or a whole number of at least 0, not -5",
            id="bonus-neg",
        ),
    ],
)
def test_options_refused(given: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidOption) as err:
        General.from_json(given)
    assert str(err.value) == message


def test_registry_finds_general_by_aliases() -> None:
    for name in ("general", "Generał", "GENERAŁ", "kosci", "Kości"):
        assert find_game(name) is General


# -- turn flow -----------------------------------------------------------------------------------


def all_keeps(dice: tuple[int, ...]) -> set[tuple[int, ...]]:
    return {
        tuple(sorted(dice[i] for i in idx))
        for size in range(5)
        for idx in combinations(range(5), size)
    }


@pytest.mark.parametrize(
    ("dice", "n_keeps"),
    [
        pytest.param([1, 2, 3, 4, 5], 31, id="all-different"),
        pytest.param([1, 1, 1, 3, 5], 15, id="a-triple"),
        pytest.param([6, 6, 6, 6, 6], 5, id="general"),
    ],
)
def test_after_first_throw_keep_any_subset_or_score_any_box(dice: list[int], n_keeps: int) -> None:
    game = General()
    state = game.initial_state(["Ann", "Bob"])
    assert game.phase(state) is Phase.ROLL
    assert game.roll_size(state) == 5
    assert len(game.roll_outcomes(state)) == 252
    state = game.apply(state, Roll(dice))
    assert game.phase(state) is Phase.DECIDE
    assert game.roll_size(state) == 0
    legal = game.legal_actions(state)
    keeps = {a.dice for a in legal if isinstance(a, Keep)}
    scores = {a.category for a in legal if isinstance(a, Score)}
    assert keeps == all_keeps(tuple(sorted(dice)))
    assert len(keeps) == n_keeps
    assert scores == set(CATEGORIES)
    assert len(legal) == n_keeps + 13


def test_keep_then_roll_joins_the_kept_dice_and_kept_dice_can_be_rethrown() -> None:
    game = General()
    state = play(game, game.initial_state(["Ann"]), Roll([6, 6, 2, 3, 1]), Keep([6, 6]))
    assert game.phase(state) is Phase.ROLL
    assert game.roll_size(state) == 3
    assert len(game.roll_outcomes(state)) == 56
    assert game.describe(state)["kept"] == [6, 6]
    state = game.apply(state, Roll([6, 4, 1]))
    assert state.dice == (1, 4, 6, 6, 6)
    assert state.throws == 2
    # the third throw may re-throw dice kept before: keep 1 4, throw the three 6s again
    state = play(game, state, Keep([1, 4]), Roll([2, 3, 5]))
    assert state.dice == (1, 2, 3, 4, 5)
    assert state.throws == 3
    legal = game.legal_actions(state)
    assert all(isinstance(a, Score) for a in legal)
    assert len(legal) == 13
    state = game.apply(state, Score("large_straight"))
    assert game.totals(state) == (40,)
    assert state.throws == 0
    assert state.dice == ()


def test_keep_nothing_rethrows_all_five() -> None:
    game = General()
    state = play(game, game.initial_state(["Ann"]), Roll([1, 2, 3, 4, 6]), Keep([]))
    assert game.roll_size(state) == 5
    state = game.apply(state, Roll([5, 5, 5, 5, 5]))
    assert state.dice == (5, 5, 5, 5, 5)


def test_scoring_zero_in_an_unmet_category_ends_the_turn() -> None:
    game = General()
    state = play(game, game.initial_state(["Ann", "Bob"]), Roll([2, 3, 4, 5, 6]))
    state = game.apply(state, Score("general"))
    assert state.sheets[0][0][CATEGORIES.index("general")] == 0
    assert game.totals(state) == (0, 0)
    assert game.to_move(state) == 1
    assert game.phase(state) is Phase.ROLL
    assert game.legal_actions(state)  # Bob's throw
    assert Score("general") in game.legal_actions(game.apply(state, Roll([1, 1, 1, 1, 1])))


def test_scoring_after_one_throw_is_allowed() -> None:
    game = General()
    state = play(game, game.initial_state(["Ann"]), Roll([2, 2, 5, 5, 5]), Score("full_house"))
    assert game.totals(state) == (25,)


# -- refusals ------------------------------------------------------------------------------------


def test_refusals_before_the_first_throw() -> None:
    game = General()
    state = game.initial_state(["Ann"])
    assert refuse(game, state, Keep([1])) == "cannot keep 1: no dice have been thrown this turn"
    assert (
        refuse(game, state, Score("chance"))
        == "cannot score chance: no dice have been thrown this turn"
    )
    assert (
        refuse(game, state, Roll([1, 2, 3])) == "cannot roll 1 2 3: 5 dice are to be thrown, not 3"
    )
    assert refuse(game, state, Stop()) == "cannot stop now; allowed: roll 5 dice"


def test_refusals_after_a_throw() -> None:
    game = General()
    state = play(game, game.initial_state(["Ann"]), Roll([1, 2, 3, 5, 5]))
    state = play(game, state, Keep([5, 5]), Roll([4, 5, 6]))
    assert state.dice == (4, 5, 5, 5, 6)
    assert refuse(game, state, Keep([6, 6])) == "cannot keep 6 6: the dice showing are 4 5 5 5 6"
    assert (
        refuse(game, state, Keep([4, 5, 5, 5, 6]))
        == "cannot keep all five dice: keep at most four and throw the rest, or score a category"
    )
    assert refuse(game, state, Roll([1, 2, 3, 4, 5])) == (
        "cannot roll now: keep the dice to hold first (keep nothing to throw all five again), "
        "or score a category"
    )


def test_refusals_while_kept_dice_wait_for_the_throw() -> None:
    game = General()
    state = play(game, game.initial_state(["Ann"]), Roll([1, 2, 3, 5, 5]), Keep([5, 5]))
    assert (
        refuse(game, state, Score("fives")) == "cannot score fives: throw the 3 dice not kept first"
    )
    assert refuse(game, state, Keep([5])) == "cannot keep 5: throw the 3 dice not kept first"
    assert refuse(game, state, Roll([1, 1])) == "cannot roll 1 1: 3 dice are to be thrown, not 2"


def test_three_throw_limit() -> None:
    game = General()
    state = play(
        game,
        game.initial_state(["Ann"]),
        Roll([1, 2, 3, 5, 5]),
        Keep([5, 5]),
        Roll([1, 2, 3]),
        Keep([5, 5]),
        Roll([1, 1, 6]),
    )
    assert state.throws == 3
    assert game.describe(state)["throws_left"] == 0
    assert refuse(game, state, Roll([1, 2, 3, 4, 5])) == (
        "cannot roll: no throws left this turn; score a category"
    )
    assert refuse(game, state, Keep([5, 5])) == (
        "cannot keep 5 5: no throws left this turn; score a category"
    )


def test_refused_score_in_a_filled_box() -> None:
    game = General()
    state = play(game, game.initial_state(["Ann"]), Roll([2, 2, 5, 5, 5]), Score("full_house"))
    state = game.apply(state, Roll([3, 3, 4, 4, 4]))
    assert refuse(game, state, Score("full_house")) == (
        "cannot score full_house: it is already written (25)"
    )


@pytest.mark.parametrize(
    ("action", "message"),
    [
        pytest.param(
            Score("yahtzee"),
            "unknown category 'yahtzee'; the categories are: ones, twos, threes, fours, fives, "
            "sixes, three_of_a_kind, four_of_a_kind, full_house, small_straight, large_straight, "
            "general, chance",
            id="unknown-category",
        ),
        pytest.param(
            Score("chance", 1), "there is no column 2: the sheet has 1 column", id="column-2"
        ),
    ],
)
def test_malformed_score_raises_invalid_action(action: Score, message: str) -> None:
    game = General()
    state = game.apply(game.initial_state(["Ann"]), Roll([1, 2, 3, 4, 5]))
    with pytest.raises(InvalidAction) as err:
        game.apply(state, action)
    assert str(err.value) == message


def test_a_die_showing_seven_is_malformed() -> None:
    with pytest.raises(InvalidAction):
        Roll([1, 2, 3, 4, 7])


# -- the Generał joker and bonus -------------------------------------------------------------------

GENERAL_50 = column_with(general=50)
GENERAL_0 = column_with(general=0)
SIXES_AND_GENERAL = column_with(general=50, sixes=24)
LOWER_FULL = column_with(
    general=50, sixes=24, three_of_a_kind=20, four_of_a_kind=20, full_house=25,
    small_straight=30, large_straight=40, chance=20,
)  # fmt: skip
SIXES = [6, 6, 6, 6, 6]


def test_joker_off_scores_a_generał_by_the_ordinary_conditions() -> None:
    choices = box_choices(GENERAL_50, SIXES)
    assert set(choices) == set(CATEGORIES) - {"general"}
    assert choices["full_house"] == Entry(0)
    assert choices["small_straight"] == Entry(0)
    assert choices["large_straight"] == Entry(0)
    assert choices["sixes"] == Entry(30)
    assert choices["chance"] == Entry(30)


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        pytest.param(GENERAL_50, {"sixes": 30}, id="matching-upper-empty"),
        pytest.param(GENERAL_0, {"sixes": 30}, id="generał-box-scratched"),
        pytest.param(
            SIXES_AND_GENERAL,
            {
                "three_of_a_kind": 30,
                "four_of_a_kind": 30,
                "full_house": 25,
                "small_straight": 30,
                "large_straight": 40,
                "chance": 30,
            },
            id="matching-upper-full",
        ),
        pytest.param(
            LOWER_FULL,
            {"ones": 0, "twos": 0, "threes": 0, "fours": 0, "fives": 0},
            id="lower-full",
        ),
        pytest.param(
            EMPTY_COLUMN,
            {c: category_points(SIXES, c) for c in CATEGORIES},
            id="generał-box-empty-no-joker",
        ),
    ],
)
def test_forced_joker(column: Column, expected: dict[str, int]) -> None:
    opts = GeneralOptions(general_joker="forced")
    assert {c: e.points for c, e in box_choices(column, SIXES, opts).items()} == expected


def test_free_joker_any_empty_box_lower_by_condition_while_upper_box_open() -> None:
    """Verhoeff's free choice: any box; lower boxes by their own condition until sixes is filled."""
    opts = GeneralOptions(general_joker="free")
    choices = {c: e.points for c, e in box_choices(GENERAL_50, SIXES, opts).items()}
    assert choices == {
        "ones": 0,
        "twos": 0,
        "threes": 0,
        "fours": 0,
        "fives": 0,
        "sixes": 30,
        "three_of_a_kind": 30,
        "four_of_a_kind": 30,
        "full_house": 0,
        "small_straight": 0,
        "large_straight": 0,
        "chance": 30,
    }


def test_free_joker_lower_at_full_value_once_upper_box_filled() -> None:
    """With the sixes box filled, the free joker gives the lower boxes their full value."""
    opts = GeneralOptions(general_joker="free")
    choices = {c: e.points for c, e in box_choices(SIXES_AND_GENERAL, SIXES, opts).items()}
    assert choices["full_house"] == 25
    assert choices["small_straight"] == 30
    assert choices["large_straight"] == 40
    assert choices["ones"] == 0


@pytest.mark.parametrize(
    ("column", "joker", "expected"),
    [
        pytest.param(GENERAL_50, "off", Entry(30, 100), id="50-in-box"),
        pytest.param(GENERAL_0, "off", Entry(30, 0), id="0-in-box"),
        pytest.param(EMPTY_COLUMN, "off", Entry(30, 0), id="box-empty"),
        pytest.param(GENERAL_50, "forced", Entry(30, 100), id="50-in-box-forced"),
    ],
)
def test_extra_general_bonus(column: Column, joker: str, expected: Entry) -> None:
    opts = General.from_json({"extra_general_bonus": "on", "general_joker": joker}).options
    assert write_value(column, SIXES, "sixes", opts) == expected


def test_extra_bonus_is_not_paid_for_non_generał_dice() -> None:
    opts = GeneralOptions(extra_general_bonus=100)
    assert write_value(GENERAL_50, [6, 6, 6, 6, 5], "sixes", opts) == Entry(24, 0)


def generał_in_box(game: General, score: int) -> GeneralState:
    """Ann has written a Generał (or a scratch) into the Generał box and throws six 6s."""
    first = SIXES if score else [1, 2, 3, 4, 6]
    return play(game, game.initial_state(["Ann"]), Roll(first), Score("general"), Roll(SIXES))


def test_forced_joker_through_the_engine() -> None:
    game = General(GeneralOptions(general_joker="forced", extra_general_bonus=100))
    state = generał_in_box(game, 50)
    scores = [a for a in game.legal_actions(state) if isinstance(a, Score)]
    assert scores == [Score("sixes")]
    assert refuse(game, state, Score("chance")) == (
        "cannot score chance: by the joker rule a Generał of 6s goes into sixes "
        "while that box is empty"
    )
    assert game.preview(state, Score("sixes")) == 130
    state = game.apply(state, Score("sixes"))
    assert game.totals(state) == (50 + 30 + 100,)
    state = game.apply(state, Roll(SIXES))
    assert refuse(game, state, Score("ones")) == (
        "cannot score ones: by the joker rule a Generał goes into an empty lower box while there "
        "is one (three_of_a_kind, four_of_a_kind, full_house, small_straight, large_straight, "
        "chance)"
    )
    state = game.apply(state, Score("large_straight"))
    assert game.totals(state) == (50 + 30 + 100 + 40 + 100,)


def test_forced_joker_after_a_scratched_generał_pays_no_bonus() -> None:
    game = General(GeneralOptions(general_joker="forced", extra_general_bonus=100))
    state = generał_in_box(game, 0)
    state = play(game, state, Score("sixes"), Roll(SIXES), Score("full_house"))
    assert game.totals(state) == (0 + 30 + 25,)


def test_joker_off_lets_a_generał_go_anywhere_at_ordinary_value() -> None:
    game = General()
    state = generał_in_box(game, 50)
    assert {a.category for a in game.legal_actions(state) if isinstance(a, Score)} == set(
        CATEGORIES
    ) - {"general"}
    state = game.apply(state, Score("full_house"))
    assert game.totals(state) == (50,)


# -- three columns -------------------------------------------------------------------------------


def test_three_columns_each_box_once_per_column() -> None:
    game = General(GeneralOptions(columns=3))
    state = game.initial_state(["Ann"])
    assert len(state.sheets[0]) == 3
    state = game.apply(state, Roll([2, 2, 5, 5, 5]))
    legal = [a for a in game.legal_actions(state) if isinstance(a, Score)]
    assert len(legal) == 39
    for column in range(3):
        state = play(game, state, Score("full_house", column), Roll([3, 3, 4, 4, 4]))
    assert game.totals(state) == (75,)
    scores = {(a.category, a.column) for a in game.legal_actions(state) if isinstance(a, Score)}
    assert ("full_house", 0) not in scores
    assert len(scores) == 36
    assert refuse(game, state, Score("full_house", 1)) == (
        "cannot score full_house in column 2: it is already written (25)"
    )
    with pytest.raises(InvalidAction) as err:
        game.apply(state, Score("chance", 3))
    assert str(err.value) == "there is no column 4: the sheet has 3 columns"


def test_three_column_game_ends_after_39_boxes() -> None:
    game = General(GeneralOptions(columns=3, upper_bonus=35))
    state = game.initial_state(["Ann"])
    turns = 0
    for column in range(3):
        for category in CATEGORIES:
            assert game.phase(state) is not Phase.FINISHED
            state = turn(game, state, [6, 6, 6, 6, 5], category, column)
            turns += 1
    assert turns == 39
    assert game.phase(state) is Phase.FINISHED
    # upper: 0+0+0+0+5+24 = 29 (< 63); lower: 29+29+0+0+0+0+29 = 87 -> 116 per column
    assert game.totals(state) == (3 * 116,)
    assert game.column_totals(state, 0) == (116, 116, 116)


def test_upper_bonus_is_counted_per_column() -> None:
    opts = GeneralOptions(upper_bonus=35)
    full_upper = column_with(ones=3, twos=6, threes=9, fours=12, fives=15, sixes=18)
    short_upper = column_with(ones=3, twos=6, threes=9, fours=12, fives=15, sixes=12)
    assert column_total(full_upper, options=opts) == 63 + 35
    assert column_total(short_upper, options=opts) == 57


# -- first-throw multiplier ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actions", "expected"),
    [
        pytest.param([Roll([2, 3, 4, 5, 6])], 80, id="first-throw-doubled"),
        pytest.param([Roll([2, 3, 4, 5, 1]), Keep([2, 3, 4, 5]), Roll([6])], 40, id="second-throw"),
    ],
)
def test_first_roll_multiplier(actions: list[Action], expected: int) -> None:
    game = General(GeneralOptions(first_roll_multiplier=2))
    state = play(game, game.initial_state(["Ann"]), *actions)
    assert game.describe(state)["can_score"][0]["large_straight"] == expected
    state = game.apply(state, Score("large_straight"))
    assert game.totals(state) == (expected,)


# -- game end --------------------------------------------------------------------------------------


def two_player_game(bob_chance: list[int]) -> tuple[General, GeneralState]:
    game = General()
    state = game.initial_state(["Ann", "Bob"])
    for category in CATEGORIES:
        state = turn(game, state, [2, 3, 4, 5, 6], category)
        bob = bob_chance if category == "chance" else [2, 3, 4, 5, 6]
        state = turn(game, state, bob, category)
    return game, state


@pytest.mark.parametrize(
    ("bob_chance", "winners", "totals"),
    [
        pytest.param([2, 3, 4, 5, 6], (0, 1), (110, 110), id="tie-shared"),
        pytest.param([1, 3, 4, 5, 6], (0,), (110, 109), id="ann-wins"),
        pytest.param([1, 1, 1, 1, 1], (0,), (110, 95), id="scratch-hurts"),
    ],
)
def test_game_end_and_winners(
    bob_chance: list[int], winners: tuple[int, ...], totals: tuple[int, ...]
) -> None:
    game, state = two_player_game(bob_chance)
    outcome = game.outcome(state)
    assert outcome is not None
    assert outcome.winners == winners
    assert outcome.totals == totals
    assert game.to_move(state) is None
    assert game.legal_actions(state) == ()
    assert refuse(game, state, Roll([1, 2, 3, 4, 5])) == "cannot roll 1 2 3 4 5: the game is over"
    view = game.state_json(state)
    assert view["finished"] is True
    assert view["winners"] == [["Ann", "Bob"][i] for i in winners]


def test_game_is_not_over_until_the_last_player_fills_his_sheet() -> None:
    game = General()
    state = game.initial_state(["Ann", "Bob"])
    for category in CATEGORIES:
        state = turn(game, state, [1, 2, 3, 4, 5], category)
        if category != "chance":
            state = turn(game, state, [1, 2, 3, 4, 5], category)
    assert game.outcome(state) is None
    assert game.to_move(state) == 1


def test_describe_is_json_and_shows_the_turn() -> None:
    game = General(GeneralOptions(upper_bonus=35))
    state = play(game, game.initial_state(["Ann", "Bob"]), Roll([1, 1, 1, 3, 5]), Score("ones"))
    state = play(game, state, Roll([6, 6, 6, 2, 2]), Keep([6, 6, 6]))
    view = game.describe(state)
    json.dumps(view)
    assert view["dice"] == [2, 2, 6, 6, 6]
    assert view["kept"] == [6, 6, 6]
    assert view["throws"] == 1
    assert view["throws_left"] == 2
    assert view["can_score"] == []
    sheets = view["sheets"]
    assert sheets[0]["columns"][0]["boxes"]["ones"] == 3
    assert sheets[0]["columns"][0]["boxes"]["twos"] is None
    assert sheets[0]["total"] == 3
    assert sheets[1]["total"] == 0


# -- properties ------------------------------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(
    st.randoms(use_true_random=False),
    st.sampled_from([1, 3]),
    st.sampled_from(["off", "forced", "free"]),
)
def test_random_playouts_end_and_totals_add_up(
    rnd: random.Random, columns: int, joker: str
) -> None:
    game = General(
        GeneralOptions(
            columns=columns,  # type: ignore[arg-type]
            general_joker=joker,  # type: ignore[arg-type]
            upper_bonus=35,
            extra_general_bonus=100,
        )
    )
    state = game.initial_state(["Ann", "Bob"])
    steps = 0
    while game.outcome(state) is None:
        legal = game.legal_actions(state)
        assert legal
        if game.phase(state) is Phase.ROLL:
            outcomes = game.roll_outcomes(state)
            dice = rnd.choices([d for d, _ in outcomes], weights=[p for _, p in outcomes])[0]
            action: Action = Roll(dice)
        else:
            action = rnd.choice(legal)
        state = game.apply(state, action)
        steps += 1
        assert steps < 2 * 39 * 6
    for p in range(2):
        entries = sum(v or 0 for col in state.sheets[p] for v in col)
        bonus = sum(state.bonuses[p])
        uppers = sum(35 for col in state.sheets[p] if sum(v or 0 for v in col[:6]) >= 63)
        assert game.totals(state)[p] == entries + bonus + uppers


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=5, max_size=5), st.sampled_from(CATEGORIES))
def test_empty_sheet_write_equals_category_value(dice: list[int], category: str) -> None:
    assert write_value(EMPTY_COLUMN, dice, category) == Entry(category_points(dice, category))
    assert 0 <= category_points(dice, category) <= 50


def test_transcript_replay_with_columns() -> None:
    lines = [
        '{"game": "general", "players": ["Ann", "Bob"], "options": {"columns": 3}}',
        '{"roll": [2, 2, 5, 5, 5]}',
        '{"keep": [5, 5, 5]}',
        '{"roll": [5, 5]}',
        '{"score": "general", "column": 2}',
        '{"roll": [1, 2, 3, 4, 6]}',
        '{"score": "small_straight"}',
    ]
    history = replay(lines)
    game = history.game
    assert isinstance(game, General)
    assert game.totals(history.state) == (50, 30)
    assert history.state.sheets[0][2][CATEGORIES.index("general")] == 50
    assert dump(game, ["Ann", "Bob"], history.actions).splitlines()[1:] == lines[1:]
