"""Refusals as data: each coded refusal of the engines carries its code and params, and says in
English exactly what it said before (the command line and the logs print that)."""

from __future__ import annotations

from typing import Any

import pytest

from scoring.core import Action, Bank, Forbidden, Game, Keep, Roll, Score, Stop
from scoring.errors import IllegalAction, Reason, Refusal, refusal_codes, refusal_json
from scoring.registry import find_game


def refusal(
    game_id: str, options: dict[str, Any], actions: list[Action], action: Action
) -> IllegalAction:
    """The refusal of ``action`` after ``actions`` in a new game of Ann and Bob."""
    game: Game[Any, Any] = find_game(game_id).from_json(options)
    state = game.initial_state(["Ann", "Bob"])
    for step in actions:
        state = game.apply(state, step)
    with pytest.raises(IllegalAction) as caught:
        game.apply(state, action)
    return caught.value


# A game of 1000 that Ann has won: five 5s win at once with that option.
WON_1000: tuple[str, dict[str, Any], list[Action]] = (
    "thousand",
    {"five_of_a_kind_wins": True},
    [Roll([5, 5, 5, 5, 5])],
)

CASES: list[tuple[str, dict[str, Any], list[Action], Action, Refusal, dict[str, Any], str]] = [
    (
        "kymppitonni",
        {},
        [],
        Roll([1, 2, 3, 4]),
        Refusal.WRONG_DICE_COUNT,
        {"n": 6, "got": 4},
        "cannot roll 1 2 3 4: 6 dice are to be thrown, not 4",
    ),
    (
        "general",
        {},
        [],
        Roll([1, 2, 3, 4, 5, 6]),
        Refusal.WRONG_DICE_COUNT,
        {"n": 5, "got": 6},
        "cannot roll 1 2 3 4 5 6: 5 dice are to be thrown, not 6",
    ),
    (
        *WON_1000,
        Bank(),
        Refusal.GAME_OVER,
        {},
        "cannot pass: the game is over",
    ),
    (
        *WON_1000,
        Roll([1, 2, 3, 4, 5]),
        Refusal.GAME_OVER,
        {},
        "cannot roll 1 2 3 4 5: the game is over",
    ),
    (
        "kymppitonni",
        {},
        [],
        Bank(),
        Refusal.NOTHING_TO_BANK,
        {},
        "cannot bank: nothing to bank yet: throw the dice first",
    ),
    (
        "kymppitonni",
        {"min_bank": 350},
        [Roll([1, 2, 3, 4, 6, 6]), Keep([1])],
        Bank(),
        Refusal.AT_LEAST,
        {"n": 350},
        "cannot bank 100: at least 350 needed",
    ),
    (
        "kymppitonni",
        {"entry_min": 500},
        [Roll([1, 2, 3, 4, 6, 6]), Keep([1])],
        Bank(),
        Refusal.ON_THE_BOARD,
        {"n": 500},
        "cannot bank 100: at least 500 needed to get on the board",
    ),
    (
        "thousand",
        {},
        [Roll([5, 2, 3, 3, 6])],
        Bank(),
        Refusal.OPEN,
        {"need": 50, "have": 5},
        "cannot pass 5: to open the game you need 50 in one turn; you have 5",
    ),
    (
        "thousand",
        {"hot_dice_forced": True},
        [Roll([1, 1, 1, 5, 5])],
        Bank(),
        Refusal.ALL_AGAIN,
        {"n": 5},
        "cannot pass 110: every die has scored, so all 5 must be thrown again",
    ),
    (
        "sest-kostek",
        {},
        [Roll([1, 1, 1, 1, 5, 5])],
        Bank(),
        Refusal.CONFIRM_SIX,
        {},
        "cannot bank 2100: all six dice scored in one throw: confirm them with one more throw of"
        " all six",
    ),
    (
        "sest-kostek",
        {"max_dice_left_to_record": 2, "min_record": 0},
        [Roll([1, 2, 3, 4, 6, 6]), Keep([1])],
        Bank(),
        Refusal.DICE_LEFT,
        {"most": 2, "left": 5},
        "cannot bank 100: at most 2 dice may be left to record; you have 5",
    ),
    (
        "kymppitonni",
        {},
        [],
        Keep([1]),
        Refusal.NO_DICE_TO_KEEP,
        {"n": 6},
        "cannot keep 1: no dice are on the table; roll 6 dice",
    ),
    (
        "kymppitonni",
        {},
        [Roll([1, 2, 3, 4, 6, 6])],
        Keep([]),
        Refusal.KEEP_NOTHING,
        {},
        "cannot keep nothing: set aside at least one scoring die",
    ),
    (
        "kymppitonni",
        {},
        [Roll([1, 2, 3, 4, 6, 6])],
        Keep([5]),
        Refusal.KEEP_NOT_SHOWING,
        {"dice": [5], "shown": [1, 2, 3, 4, 6, 6]},
        "cannot keep 5: the dice showing are 1 2 3 4 6 6",
    ),
    (
        "kymppitonni",
        {},
        [Roll([1, 2, 3, 4, 6, 6])],
        Keep([1, 2]),
        Refusal.KEEP_NOT_SCORING,
        {"dice": [1, 2], "shown": [1, 2, 3, 4, 6, 6], "best": [1], "points": 100},
        "cannot keep 1 2: every die set aside must score; the best set-aside of 1 2 3 4 6 6 is 1"
        " for 100",
    ),
    (
        "kymppitonni",
        {},
        [Roll([1, 2, 3, 4, 6, 6])],
        Roll([1, 2, 3, 4, 6, 6]),
        Refusal.KEEP_FIRST,
        {"shown": [1, 2, 3, 4, 6, 6]},
        "cannot roll 1 2 3 4 6 6: set aside scoring dice from 1 2 3 4 6 6 first (or bank)",
    ),
    (
        "thousand",
        {},
        [Roll([5, 2, 3, 3, 6])],
        Keep([5]),
        Refusal.AUTO_KEEP,
        {},
        "cannot keep: in this game the scoring dice are set aside by themselves",
    ),
]


@pytest.mark.parametrize(
    ("game_id", "options", "actions", "action", "code", "params", "english"),
    CASES,
    ids=[f"{c[0]}-{c[4].value}" for c in CASES],
)
def test_a_refusal_carries_its_code_params_and_english(
    game_id: str,
    options: dict[str, Any],
    actions: list[Action],
    action: Action,
    code: Refusal,
    params: dict[str, Any],
    english: str,
) -> None:
    exc = refusal(game_id, options, actions, action)
    assert (exc.code, exc.params, str(exc)) == (code, params, english)


@pytest.mark.parametrize(
    ("options", "code", "params", "english"),
    [
        (
            {"max_dice_left_to_record": None},
            Refusal.AT_LEAST,
            {"n": 350},
            "cannot bank 50: at least 350 needed",
        ),
        (
            {"max_dice_left_to_record": None, "min_record_strict": True},
            Refusal.MORE_THAN,
            {"n": 350},
            "cannot bank 50: more than 350 needed",
        ),
        (
            {"max_dice_left_to_record": 2},
            Refusal.NEED_AND_DICE_LEFT,
            {
                "need": {"code": "at_least", "params": {"n": 350}},
                "left": {"code": "dice_left", "params": {"most": 2, "left": 5}},
            },
            "cannot bank 50: at least 350 needed and at most 2 dice left; you have 5",
        ),
    ],
    ids=["at-least", "more-than", "both"],
)
def test_jednicky_a_petky_says_what_a_record_needs(
    options: dict[str, Any], code: Refusal, params: dict[str, Any], english: str
) -> None:
    exc = refusal(
        "jednicky-a-petky",
        {"min_record": 350, **options},
        [Roll([5, 2, 3, 3, 6, 6]), Keep([5])],
        Bank(),
    )
    assert (exc.code, exc.params, str(exc)) == (code, params, english)


NOT_NOW_CASES: list[tuple[str, dict[str, Any], list[Action], Action, dict[str, Any], str]] = [
    (
        "general",
        {},
        [],
        Stop(),
        {"action": {"stop": True}, "allowed": [], "roll": 5, "game": "general"},
        "cannot stop now; allowed: roll 5 dice",
    ),
    (
        "kymppitonni",
        {},
        [Roll([1, 1, 5, 2, 3, 4])],
        Score("ones"),
        {
            "action": {"score": "ones"},
            "allowed": [
                {"keep": [1]},
                {"keep": [1, 1]},
                {"keep": [5]},
                {"keep": [1, 5]},
                {"keep": [1, 1, 5]},
                {"bank": True},
            ],
            "roll": 0,
            "game": "kymppitonni",
        },
        "cannot score ones now; allowed: keep 1, keep 1 1, keep 5, keep 1 5, keep 1 1 5, bank",
    ),
]


@pytest.mark.parametrize(
    ("game_id", "options", "actions", "action", "params", "english"),
    NOT_NOW_CASES,
    ids=[c[0] for c in NOT_NOW_CASES],
)
def test_any_other_refusal_names_the_action_and_what_is_allowed(
    game_id: str,
    options: dict[str, Any],
    actions: list[Action],
    action: Action,
    params: dict[str, Any],
    english: str,
) -> None:
    """The generic "cannot X now; allowed: ..." carries the actions as PROTOCOL.md objects, for
    the phones to word them."""
    exc = refusal(game_id, options, actions, action)
    assert (exc.code, exc.params, str(exc)) == (Refusal.NOT_NOW, params, english)


def test_a_refusal_made_without_a_reason_has_no_code() -> None:
    exc = IllegalAction("cannot do that")
    assert (exc.code, exc.params, refusal_json(exc)) == (None, {}, {"detail": "cannot do that"})


def test_an_error_made_from_a_reason_keeps_it_and_its_english() -> None:
    why = Reason("the game is over", Refusal.GAME_OVER, {"n": 1})
    exc = IllegalAction(why)
    assert (str(exc), exc.code, exc.params, exc.args) == (
        "the game is over",
        "game_over",
        {"n": 1},
        (why,),
    )
    assert exc.as_reason().code is Refusal.GAME_OVER  # type: ignore[attr-defined]
    assert IllegalAction("plain").as_reason() == "plain"


def test_every_engine_code_is_registered_once() -> None:
    codes = refusal_codes()
    assert set(Refusal) <= set(codes.values())
    assert all(codes[code.value] is code for code in Refusal)


Case = tuple[dict[str, Any], list[Action], Action, Refusal, dict[str, Any], str]

THREE_THROWS: list[Action] = [Roll([1, 2, 3, 4, 5]), Keep([]), Roll([1, 2, 3, 4, 5]), Keep([])]
# Ann's Generał of 6s is written, Bob writes a Chance, and Ann throws five 2s.
JOKER: list[Action] = [
    Roll([6, 6, 6, 6, 6]),
    Score("general"),
    Roll([1, 2, 3, 4, 6]),
    Score("chance"),
    Roll([2, 2, 2, 2, 2]),
]

GENERAL_CASES: list[Case] = [
    (
        {},
        [],
        Keep([1]),
        Refusal.NOT_THROWN,
        {},
        "cannot keep 1: no dice have been thrown this turn",
    ),
    (
        {},
        [Roll([1, 2, 3, 4, 5]), Keep([1, 2])],
        Score("chance"),
        Refusal.THROW_REST,
        {"n": 3},
        "cannot score chance: throw the 3 dice not kept first",
    ),
    (
        {},
        [*THREE_THROWS, Roll([1, 2, 3, 4, 5])],
        Roll([1, 2, 3, 4, 5]),
        Refusal.NO_THROWS_LEFT,
        {},
        "cannot roll: no throws left this turn; score a category",
    ),
    (
        {},
        [*THREE_THROWS, Roll([1, 2, 3, 4, 5])],
        Keep([1]),
        Refusal.NO_THROWS_LEFT,
        {},
        "cannot keep 1: no throws left this turn; score a category",
    ),
    (
        {},
        [Roll([1, 2, 3, 4, 5])],
        Roll([1, 2, 3, 4, 5]),
        Refusal.HOLD_FIRST,
        {"n": 5},
        "cannot roll now: keep the dice to hold first (keep nothing to throw all five again), or"
        " score a category",
    ),
    (
        {},
        [Roll([1, 2, 3, 4, 5])],
        Keep([6]),
        Refusal.KEEP_NOT_SHOWING,
        {"dice": [6], "shown": [1, 2, 3, 4, 5]},
        "cannot keep 6: the dice showing are 1 2 3 4 5",
    ),
    (
        {},
        [Roll([1, 2, 3, 4, 5])],
        Keep([1, 2, 3, 4, 5]),
        Refusal.KEEP_ALL_OR_SCORE,
        {"n": 5, "most": 4},
        "cannot keep all five dice: keep at most four and throw the rest, or score a category",
    ),
    (
        {},
        [
            Roll([1, 1, 1, 2, 3]),
            Score("ones"),
            Roll([1, 2, 3, 4, 6]),
            Score("chance"),
            Roll([1, 2, 3, 4, 5]),
        ],
        Score("ones"),
        Refusal.ALREADY_WRITTEN,
        {"box": "ones", "column": 1, "written": 3},
        "cannot score ones: it is already written (3)",
    ),
    (
        {"columns": 3},
        [
            Roll([1, 1, 1, 2, 3]),
            Score("ones", 1),
            Roll([1, 2, 3, 4, 6]),
            Score("chance"),
            Roll([1, 2, 3, 4, 5]),
        ],
        Score("ones", 1),
        Refusal.ALREADY_WRITTEN,
        {"box": "ones", "column": 2, "written": 3},
        "cannot score ones in column 2: it is already written (3)",
    ),
    (
        {"general_joker": "forced"},
        JOKER,
        Score("chance"),
        Refusal.JOKER_UPPER,
        {"face": 2, "box": "twos"},
        "cannot score chance: by the joker rule a Generał of 2s goes into twos while that box is"
        " empty",
    ),
    (
        {"general_joker": "forced"},
        [*JOKER, Score("twos"), Roll([1, 2, 3, 4, 6]), Score("ones"), Roll([2, 2, 2, 2, 2])],
        Score("ones"),
        Refusal.JOKER_LOWER,
        {
            "boxes": [
                "three_of_a_kind",
                "four_of_a_kind",
                "full_house",
                "small_straight",
                "large_straight",
                "chance",
            ]
        },
        "cannot score ones: by the joker rule a Generał goes into an empty lower box while there"
        " is one (three_of_a_kind, four_of_a_kind, full_house, small_straight, large_straight,"
        " chance)",
    ),
]

SIX: list[Action] = [Roll([1, 2, 3, 4, 5, 6])]

DRAPKY_CASES: list[Case] = [
    (
        {},
        [],
        Score("ones"),
        Refusal.NOT_THROWN,
        {},
        "cannot score ones: no dice have been thrown this turn",
    ),
    (
        {},
        [*SIX, Keep([1])],
        Keep([1]),
        Refusal.THROW_REST,
        {"n": 5},
        "cannot keep 1: throw the 5 dice not kept first",
    ),
    (
        {},
        [*SIX, Keep([]), *SIX, Keep([]), *SIX],
        Roll([1, 2, 3, 4, 5, 6]),
        Refusal.NO_THROWS_LEFT_OR_STOP,
        {},
        "cannot roll: no throws left this turn; score a figure or stop",
    ),
    (
        {},
        [*SIX, Keep([]), *SIX, Keep([]), *SIX],
        Keep([1]),
        Refusal.NO_THROWS_LEFT_OR_STOP,
        {},
        "cannot keep 1: no throws left this turn; score a figure or stop",
    ),
    (
        {},
        SIX,
        Roll([1, 2, 3, 4, 5, 6]),
        Refusal.HOLD_FIRST_OR_STOP,
        {"n": 6},
        "cannot roll now: keep the dice to hold first (keep nothing to throw all six again), score"
        " a figure or stop",
    ),
    (
        {},
        SIX,
        Keep([6, 6]),
        Refusal.KEEP_NOT_SHOWING,
        {"dice": [6, 6], "shown": [1, 2, 3, 4, 5, 6]},
        "cannot keep 6 6: the dice showing are 1 2 3 4 5 6",
    ),
    (
        {},
        SIX,
        Keep([1, 2, 3, 4, 5, 6]),
        Refusal.KEEP_ALL,
        {"n": 6, "most": 5},
        "cannot keep all six dice: keep at most five and throw the rest",
    ),
    (
        {},
        [
            Roll([1, 1, 1, 2, 3, 4]),
            Score("ones"),
            Roll([2, 2, 2, 3, 4, 5]),
            Score("twos"),
            Roll([1, 1, 1, 2, 3, 4]),
        ],
        Score("ones"),
        Refusal.ALREADY_RECORDED,
        {"figure": "ones", "written": 3},
        "cannot score ones: it is already recorded (3)",
    ),
    (
        {},
        SIX,
        Score("pyramid"),
        Refusal.FIGURE_NOT_MADE,
        {"figure": "pyramid", "dice": [1, 2, 3, 4, 5, 6]},
        "cannot score pyramid: it needs a triple, a pair and a single with triple > pair > single;"
        " the dice 1 2 3 4 5 6 do not make one",
    ),
]


def check(game_id: str, case: Case) -> None:
    """The refusal of a case has its code and params, and the English it always had."""
    options, actions, action, code, params, english = case
    exc = refusal(game_id, options, actions, action)
    assert (exc.code, exc.params, str(exc)) == (code, params, english)


@pytest.mark.parametrize("case", GENERAL_CASES, ids=lambda c: f"{c[3].value}")
def test_general_refusals(case: Case) -> None:
    check("general", case)


@pytest.mark.parametrize("case", DRAPKY_CASES, ids=lambda c: f"{c[3].value}")
def test_drapky_refusals(case: Case) -> None:
    check("drapky", case)


ZAKAZANA_CASES: list[Case] = [
    (
        {},
        [Forbidden([1, 2])],
        Forbidden([3, 4]),
        Refusal.FORBIDDEN_ALREADY,
        {"a": 1, "b": 2, "allowed": [], "roll": 6, "game": "zakazana-cisla"},
        "the forbidden numbers are already 1 and 2; allowed: roll 6 dice",
    ),
    (
        {},
        [],
        Forbidden([3, 4, 5]),
        Refusal.FORBIDDEN_TWO_DICE,
        {"got": 3},
        "the forbidden numbers are thrown with two dice, not 3",
    ),
    (
        {},
        [],
        Forbidden([3, 3]),
        Refusal.FORBIDDEN_DOUBLE,
        {},
        "the forbidden numbers must differ: a double is thrown again",
    ),
    (
        {},
        [],
        Roll([1, 2, 3, 4, 5, 6]),
        Refusal.FORBIDDEN_FIRST,
        {},
        "cannot roll 1 2 3 4 5 6: first throw two dice for the forbidden numbers (two different"
        " faces)",
    ),
    (
        {},
        [Forbidden([1, 2]), Roll([1, 2, 3, 4, 5, 6])],
        Keep([1]),
        Refusal.ASIDE_BY_THEMSELVES,
        {"allowed": [], "roll": 4, "game": "zakazana-cisla"},
        "cannot keep 1: dice showing a forbidden number are put aside by themselves; allowed:"
        " roll 4 dice",
    ),
    (
        {},
        [Forbidden([1, 2])],
        Bank(),
        Refusal.NOT_NOW,
        {"action": {"bank": True}, "allowed": [], "roll": 6, "game": "zakazana-cisla"},
        "cannot bank now; allowed: roll 6 dice",
    ),
]


@pytest.mark.parametrize("case", ZAKAZANA_CASES, ids=lambda c: f"{c[3].value}")
def test_zakazana_cisla_refusals(case: Case) -> None:
    check("zakazana-cisla", case)
