"""Тысяча / 1000 (RULES §4): vectors T01-T24, options, refused actions, a whole game, properties."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core import JSON, Action, Bank, Keep, Phase, Roll, describe_options, parse_options
from scoring.errors import IllegalAction, InvalidAction, InvalidOption
from scoring.games.thousand import (
    Thousand,
    ThousandExtra,
    ThousandOptions,
    ThousandState,
    parse_pits,
)
from scoring.history import History
from scoring.jeopardy import Turn
from scoring.registry import find_game
from scoring.transcript import dump, replay

NAMES = ("Ann", "Bob", "Cyril")
PASS = Bank()
BURN = [2, 3, 4, 6, 6]  # T09: no combination in five dice
KEEP_REFUSED = "cannot keep: in this game the scoring dice are set aside by themselves"


@dataclass(frozen=True)
class Refused:
    """A step that must be refused with exactly this message, leaving the state as it was."""

    action: Action
    message: str


Step = list[int] | Bank | Refused


def game_with(**options: JSON) -> Thousand:
    """The game with options given as in a transcript header."""
    return Thousand(parse_options(ThousandOptions, options))


def mid_game(
    game: Thousand,
    scores: tuple[int, ...],
    *,
    opened: tuple[bool, ...] | None = None,
    **extra: Any,
) -> ThousandState:
    """A game already under way: these scores and flags, the first seat about to throw.

    Players with points are opened unless told otherwise.
    """
    state = game.initial_state(NAMES[: len(scores)])
    flags = replace(
        state.extra,
        opened=opened if opened is not None else tuple(s > 0 for s in scores),
        **extra,
    )
    return replace(state, scores=scores, extra=flags, turn=Turn(player=0, pool=5))


def play(game: Thousand, state: ThousandState, steps: list[Step]) -> ThousandState:
    """Apply rolls (lists of faces) and passes; a ``Refused`` step must fail with its message."""
    for step in steps:
        if isinstance(step, Refused):
            with pytest.raises(IllegalAction) as refused:
                game.apply(state, step.action)
            assert str(refused.value) == step.message
            continue
        state = game.apply(state, Roll(step) if isinstance(step, list) else step)
    return state


# --------------------------------------------------------------------------------------------------
# T01-T11: one roll, scored automatically (RULES §4.9 roll vectors)


@pytest.mark.parametrize(
    ("roll", "points", "removed", "left"),
    [
        pytest.param([1, 1, 5, 2, 3], 25, [1, 1, 5], 2, id="T01"),
        pytest.param([1, 2, 3, 4, 5], 125, [1, 2, 3, 4, 5], 0, id="T02"),
        pytest.param([2, 3, 4, 5, 6], 250, [2, 3, 4, 5, 6], 0, id="T03"),
        pytest.param([1, 1, 1, 5, 5], 110, [1, 1, 1, 5, 5], 0, id="T04"),
        pytest.param([5, 5, 5, 5, 2], 100, [5, 5, 5, 5], 1, id="T05"),
        pytest.param([2, 2, 2, 2, 2], 200, [2, 2, 2, 2, 2], 0, id="T06"),
        pytest.param([1, 1, 1, 1, 1], 1000, [1, 1, 1, 1, 1], 0, id="T07"),
        pytest.param([6, 6, 6, 6, 3], 120, [6, 6, 6, 6], 1, id="T08"),
        pytest.param([3, 3, 3, 1, 5], 45, [1, 3, 3, 3, 5], 0, id="T10"),
        pytest.param([1, 1, 1, 1, 5], 205, [1, 1, 1, 1, 5], 0, id="T11"),
    ],
)
def test_roll_vector(roll: list[int], points: int, removed: list[int], left: int) -> None:
    game = Thousand()
    assert game.score_roll(roll)["points"] == points
    state = game.apply(game.initial_state(NAMES[:2]), Roll(roll))
    assert state.turn.total == points
    assert state.turn.kept == (tuple(removed),)
    assert state.turn.pool == left
    # Hot dice: all five are thrown again.
    assert game.roll_size(state) == (left or 5)
    assert game.to_move(state) == 0


def test_t09_zero_roll_burns_the_turn() -> None:
    game = Thousand()
    state = mid_game(game, (100, 0))
    state = play(game, state, [[1, 2, 2, 3, 4]])
    assert state.turn.total == 10
    state = play(game, state, [[2, 3, 4, 6]])
    assert game.score_roll(BURN)["points"] == 0
    assert state.scores == (100, 0)
    assert game.to_move(state) == 1
    assert state.last_event == "Ann threw 2 3 4 6: no combination, losing 10; bolt 1 of 3"


def test_t12_screenshot_turn() -> None:
    game = Thousand()
    state = game.initial_state(NAMES[:2])
    state = play(game, state, [[1, 5, 2, 3, 6]])
    assert (state.turn.total, game.roll_size(state)) == (15, 3)
    state = play(game, state, [[1, 4, 6]])
    assert (state.turn.total, game.roll_size(state)) == (25, 2)
    assert state.turn.kept == ((1, 5), (1,))
    state = play(game, state, [[2, 3]])
    assert game.to_move(state) == 1
    assert state.scores == (0, 0)
    assert state.last_event == "Ann threw 2 3: no combination, losing 25"


# --------------------------------------------------------------------------------------------------
# T13-T24: whole turns from a given position (RULES §4.9 state vectors)


@dataclass(frozen=True)
class Vector:
    """A position, the steps played from it, and what must follow."""

    start: tuple[int, ...]
    steps: list[Step]
    scores: tuple[int, ...]
    flags: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # ThousandExtra at the start
    expect: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # ThousandExtra at the end
    options: dict[str, JSON] = field(default_factory=dict)
    winner: int | None = None
    to_move: int | None = 1


ON_BARREL = (True, False)
BOB_ON_BARREL = (False, True)


def _refused_pass(total: int, reason: str) -> Refused:
    return Refused(PASS, f"cannot pass {total}: {reason}")


STATE_VECTORS = [
    pytest.param(
        Vector(
            (0, 0),
            [
                [1, 5, 2, 3, 6],
                _refused_pass(15, "to open the game you need 50 in one turn; you have 15"),
                [5, 5, 5],
                PASS,
            ],
            (65, 0),
            expect={"opened": (True, False), "bolts": (0, 0)},
        ),
        id="T13",
    ),
    pytest.param(
        Vector(
            (180, 0),
            [
                [4, 4, 4, 2, 3],
                PASS,
                BURN,
                [6, 6, 6, 2, 3],
                _refused_pass(60, "in the pit 200-300 you need 300; you would have 280"),
                [1, 1],
                PASS,
            ],
            (300, 0),
        ),
        id="T14",
    ),
    pytest.param(
        Vector(
            (480, 0),
            [[6, 6, 6, 1, 5], PASS, BURN, [1, 5, 2, 3, 6], PASS],
            (15, 0),
            expect={"opened": (True, False)},
            to_move=1,
        ),
        id="T15",
    ),
    pytest.param(Vector((300, 320, 340), [[3, 3, 3, 5, 2], PASS], (335, 270, 340)), id="T16"),
    pytest.param(Vector((300, 340), [[4, 4, 4, 2, 3], PASS], (340, 340)), id="T17"),
    pytest.param(
        Vector(
            (850, 0),
            [[4, 4, 4, 5, 2], PASS, BURN, BURN, BURN, BURN, BURN, BURN],
            (780, 0),
            expect={"on_barrel": (False, False), "falls": (1, 0), "barrel_used": (0, 0)},
            to_move=1,
        ),
        id="T18",
    ),
    pytest.param(
        Vector(
            (860, 880),
            [[3, 3, 3, 2, 4], PASS],
            (880, 780),
            flags={"on_barrel": BOB_ON_BARREL, "barrel_used": (0, 1)},
            expect={"on_barrel": ON_BARREL, "falls": (0, 1), "barrel_used": (0, 0)},
        ),
        id="T19",
    ),
    pytest.param(
        Vector(
            (700, 880),
            [[2, 2, 2, 2, 2], PASS],
            (880, 730),
            flags={"on_barrel": BOB_ON_BARREL},
            expect={"on_barrel": ON_BARREL, "falls": (0, 1)},
        ),
        id="T19b",
    ),
    pytest.param(
        Vector(
            (880, 0),
            [BURN],
            (0, 0),
            flags={"on_barrel": ON_BARREL, "barrel_used": (2, 0), "falls": (2, 0)},
            expect={"on_barrel": (False, False), "falls": (3, 0), "bolts": (0, 0)},
        ),
        id="T20",
    ),
    pytest.param(
        Vector(
            (880, 300),
            [[6, 6, 6, 6, 2], PASS],
            (1000, 300),
            flags={"on_barrel": ON_BARREL},
            winner=0,
            to_move=None,
        ),
        id="T21-120-wins",
    ),
    pytest.param(
        Vector(
            (880, 300),
            [[6, 6, 6, 1, 1], [6, 6, 6, 5, 5], PASS],
            (1030, 300),
            flags={"on_barrel": ON_BARREL},
            winner=0,
            to_move=None,
        ),
        id="T21-150-wins",
    ),
    pytest.param(
        Vector(
            (880, 300),
            [[6, 6, 6, 1, 1], [6, 6, 6, 5, 5], PASS],
            (880, 300),
            flags={"on_barrel": ON_BARREL},
            expect={"on_barrel": ON_BARREL, "barrel_used": (1, 0), "bolts": (0, 0)},
            options={"exact_1000": True},
        ),
        id="T21-150-exact_1000-burns",
    ),
    pytest.param(
        Vector(
            (880, 300),
            [[6, 6, 6, 6, 2], PASS],
            (1000, 300),
            flags={"on_barrel": ON_BARREL},
            options={"exact_1000": True},
            winner=0,
            to_move=None,
        ),
        id="T21-120-exact_1000-wins",
    ),
    pytest.param(
        Vector(
            (870, 0),
            [[2, 2, 2, 2, 2], PASS],
            (880, 0),
            expect={"on_barrel": ON_BARREL, "barrel_used": (0, 0)},
        ),
        id="T22",
    ),
    pytest.param(
        Vector((400, 0), [BURN], (300, 0), flags={"bolts": (2, 0)}, expect={"bolts": (0, 0)}),
        id="T23",
    ),
    pytest.param(
        Vector((250, 0), [BURN], (250, 0), flags={"bolts": (1, 0)}, expect={"bolts": (1, 0)}),
        id="T24",
    ),
]


@pytest.mark.parametrize("vector", STATE_VECTORS)
def test_state_vector(vector: Vector) -> None:
    game = game_with(**vector.options)
    state = play(game, mid_game(game, vector.start, **vector.flags), vector.steps)
    assert state.scores == vector.scores
    for name, value in vector.expect.items():
        assert getattr(state.extra, name) == value, name
    outcome = game.outcome(state)
    assert (outcome.winners if outcome else None) == (
        (vector.winner,) if vector.winner is not None else None
    )
    assert game.to_move(state) == vector.to_move


def test_t18_barrel_attempts_count_down() -> None:
    game = Thousand()
    state = play(game, mid_game(game, (850, 0)), [[4, 4, 4, 5, 2], PASS])
    assert state.last_event == "Ann passed 45: 850 -> 895, on the barrel at 880"
    left = []
    for _ in range(3):
        assert game.describe(state)["pass_minimum"] == 50  # Bob has not opened yet
        state = play(game, state, [BURN])
        assert game.describe(state)["pass_minimum"] == 120  # Ann on the barrel at 880
        state = play(game, state, [BURN])
        left.append(game.describe(state)["standing"][0]["barrel_attempts_left"])
    assert left == [2, 1, None]
    assert state.scores[0] == 780


def test_t19b_event_line() -> None:
    game = Thousand()
    state = mid_game(game, (700, 880), on_barrel=BOB_ON_BARREL)
    state = play(game, state, [[2, 2, 2, 2, 2], PASS])
    assert state.last_event == (
        "Ann passed 200: 700 -> 900, on the barrel at 880; "
        "Bob is thrown off the barrel: fall 1, -100 (780); Bob is overtaken: -50 (730)"
    )


def test_t21_exact_1000_burn_event() -> None:
    game = game_with(exact_1000=True)
    state = mid_game(game, (880, 0), on_barrel=ON_BARREL, barrel_used=(2, 0))
    state = play(game, state, [[6, 6, 6, 1, 1], [6, 6, 6, 5, 5], PASS])
    assert state.last_event == (
        "Ann passed 150: 1030 is over 1000, the turn burns; "
        "all 3 barrel attempts used, off the barrel: fall 1, -100 (780)"
    )
    assert state.scores == (780, 0)


# --------------------------------------------------------------------------------------------------
# Options


@pytest.mark.parametrize(
    ("options", "roll", "points"),
    [
        pytest.param({}, [1, 2, 3, 4, 5], 125, id="straights-125"),
        pytest.param({"straights": "150/250"}, [1, 2, 3, 4, 5], 150, id="straights-150"),
        pytest.param({"straights": "150/250"}, [2, 3, 4, 5, 6], 250, id="straights-150-high"),
        pytest.param({"straights": "off"}, [1, 2, 3, 4, 5], 15, id="straights-off-low"),
        pytest.param({"straights": "off"}, [2, 3, 4, 5, 6], 5, id="straights-off-high"),
    ],
)
def test_straights_option(options: dict[str, JSON], roll: list[int], points: int) -> None:
    assert game_with(**options).score_roll(roll)["points"] == points


@pytest.mark.parametrize(
    ("options", "start", "flags", "steps", "scores", "expect"),
    [
        pytest.param(
            {"open_min": 75},
            (0, 0),
            {},
            [
                [6, 6, 6, 5, 5],
                _refused_pass(70, "to open the game you need 75 in one turn; you have 70"),
                [1, 2, 3, 4, 6],
                PASS,
            ],
            (80, 0),
            {"opened": (True, False)},
            id="open_min-75",
        ),
        pytest.param(
            {}, (0, 0), {}, [[6, 6, 6, 5, 5], PASS], (70, 0), {}, id="open_min-default-70"
        ),
        pytest.param(
            {"barrel_required": False},
            (870, 0),
            {},
            [[2, 2, 2, 2, 2], PASS],
            (1070, 0),
            {"on_barrel": (False, False), "winner": 0},
            id="barrel_required-off-wins",
        ),
        pytest.param(
            {"bolts_consecutive": True},
            (400, 0),
            {"bolts": (2, 0)},
            [[4, 4, 4, 2, 3], PASS, BURN, BURN],
            (440, 0),
            {"bolts": (1, 0)},
            id="bolts_consecutive-on",
        ),
        pytest.param(
            {},
            (400, 0),
            {"bolts": (2, 0)},
            [[4, 4, 4, 2, 3], PASS, BURN, BURN],
            (340, 0),
            {"bolts": (0, 0)},
            id="bolts_consecutive-off",
        ),
        pytest.param(
            {"score_floor": "none"},
            (50, 0),
            {"bolts": (2, 0)},
            [BURN],
            (-50, 0),
            {},
            id="floor-none",
        ),
        pytest.param({}, (50, 0), {"bolts": (2, 0)}, [BURN], (0, 0), {}, id="floor-0"),
        pytest.param(
            {"score_floor": "none", "overtake_penalty": 60},
            (30, 40),
            {},
            [[4, 4, 4, 2, 3], PASS],
            (70, -20),
            {},
            id="floor-none-overtake",
        ),
        pytest.param(
            {"hot_dice_forced": True},
            (100, 0),
            {},
            [
                [2, 2, 2, 2, 2],
                _refused_pass(200, "every die has scored, so all 5 must be thrown again"),
                [1, 2, 3, 4, 6],
                PASS,
            ],
            (310, 0),
            {},
            id="hot_dice_forced-on",
        ),
        pytest.param({}, (100, 0), {}, [[2, 2, 2, 2, 2], PASS], (300, 0), {}, id="hot_dice-free"),
        pytest.param(
            {"five_of_a_kind_wins": True},
            (0, 300),
            {},
            [[3, 3, 3, 3, 3]],
            (0, 300),
            {"winner": 0},
            id="five_of_a_kind_wins-on",
        ),
        pytest.param(
            {"five_of_a_kind_wins": True},
            (0, 300),
            {},
            [[3, 3, 3, 3, 2]],
            (0, 300),
            {"winner": None},
            id="five_of_a_kind-not-four",
        ),
        pytest.param(
            {}, (0, 300), {}, [[3, 3, 3, 3, 3], PASS], (300, 300), {"winner": None}, id="five-off"
        ),
        pytest.param(
            {"pits": "off"}, (250, 0), {}, [[1, 2, 3, 4, 6], PASS], (260, 0), {}, id="no-pits"
        ),
        pytest.param(
            {"pits_exclusive": True},
            (200, 0),
            {},
            [[1, 2, 3, 4, 6], PASS],
            (210, 0),
            {},
            id="pit-ex",
        ),
        pytest.param(
            {"pits_exclusive": True},
            (210, 0),
            {},
            [
                [1, 2, 3, 4, 6],
                _refused_pass(10, "in the pit 200-300 you need 300; you would have 220"),
            ],
            (210, 0),
            {},
            id="pit-exclusive-inside",
        ),
        pytest.param(
            {},
            (200, 0),
            {},
            [
                [1, 2, 3, 4, 6],
                _refused_pass(10, "in the pit 200-300 you need 300; you would have 210"),
            ],
            (200, 0),
            {},
            id="pit-bottom-inclusive",
        ),
        pytest.param(
            {"pits": "0-100"},
            (50, 0),
            {},
            [
                [1, 2, 3, 4, 6],
                _refused_pass(10, "in the pit 0-100 you need 100; you would have 60"),
            ],
            (50, 0),
            {},
            id="pits-custom",
        ),
        pytest.param(
            {}, (600, 0), {}, [[5, 5, 5, 5, 5], PASS], (880, 0), {}, id="pit-2-climb-barrel"
        ),
        pytest.param(
            {"dump_truck": "off"}, (480, 0), {}, [[6, 6, 6, 1, 5], PASS], (555, 0), {}, id="no-dump"
        ),
        pytest.param(
            {"dump_truck": 600}, (480, 0), {}, [[6, 6, 6, 6, 2], PASS], (0, 0), {}, id="dump-at-600"
        ),
        pytest.param(
            {"overtake_penalty": 0},
            (300, 320, 340),
            {},
            [[3, 3, 3, 5, 2], PASS],
            (335, 320, 340),
            {},
            id="overtake-off",
        ),
        pytest.param(
            {"barrel_clamp": False},
            (850, 0),
            {},
            [
                [4, 4, 4, 5, 2],
                PASS,
                BURN,
                [6, 6, 6, 2, 3],
                _refused_pass(60, "on the barrel you need 1000; you would have 955"),
            ],
            (895, 0),
            {"on_barrel": ON_BARREL},
            id="barrel_clamp-off",
        ),
        pytest.param(
            {"barrel_at": 800},
            (750, 0),
            {},
            [[5, 5, 5, 2, 3], PASS],
            (800, 0),
            {"on_barrel": ON_BARREL},
            id="barrel_at-800",
        ),
        pytest.param(
            {"barrel_attempts": 1, "barrel_fall_penalty": 50},
            (880, 0),
            {"on_barrel": ON_BARREL},
            [BURN],
            (830, 0),
            {"on_barrel": (False, False), "falls": (1, 0)},
            id="one-attempt-fall-50",
        ),
        pytest.param(
            {"third_fall": "off"},
            (880, 0),
            {"on_barrel": ON_BARREL, "barrel_used": (2, 0), "falls": (2, 0)},
            [BURN],
            (780, 0),
            {"falls": (3, 0)},
            id="third_fall-off",
        ),
        pytest.param(
            {"third_fall": 2},
            (880, 0),
            {"on_barrel": ON_BARREL, "barrel_used": (2, 0), "falls": (1, 0)},
            [BURN],
            (0, 0),
            {"falls": (2, 0)},
            id="third_fall-2",
        ),
        pytest.param(
            {"bolts_limit": 2, "bolt_penalty": 30},
            (400, 0),
            {"bolts": (1, 0)},
            [BURN],
            (370, 0),
            {"bolts": (0, 0)},
            id="bolts-2-penalty-30",
        ),
        pytest.param(
            {"bolts_limit": "off"},
            (400, 0),
            {"bolts": (2, 0)},
            [BURN],
            (400, 0),
            {"bolts": (2, 0)},
            id="bolts-off",
        ),
    ],
)
def test_option_variant(
    options: dict[str, JSON],
    start: tuple[int, ...],
    flags: dict[str, tuple[Any, ...]],
    steps: list[Step],
    scores: tuple[int, ...],
    expect: dict[str, Any],
) -> None:
    game = game_with(**options)
    state = play(game, mid_game(game, start, **flags), steps)
    assert state.scores == scores
    for name, value in expect.items():
        assert getattr(state.extra, name) == value, name


def test_five_of_a_kind_win_is_the_outcome() -> None:
    game = game_with(five_of_a_kind_wins=True)
    state = play(game, mid_game(game, (0, 300)), [[6, 6, 6, 6, 6]])
    outcome = game.outcome(state)
    assert outcome is not None
    assert outcome.winners == (0,)
    assert outcome.reason == "Ann threw five 6s and wins at once"


def test_no_bolt_when_unopened_or_on_the_barrel() -> None:
    game = Thousand()
    state = mid_game(game, (0, 880), on_barrel=BOB_ON_BARREL)
    state = play(game, state, [BURN, BURN])
    assert state.extra.bolts == (0, 0)
    assert state.extra.barrel_used == (0, 1)
    assert state.last_event == ("Bob threw 2 3 4 6 6: no combination; barrel attempt 1 of 3 used")


def test_penalty_onto_555_is_no_dump_truck() -> None:
    game = Thousand()  # AMBIG-T5: only gaining 555 dumps
    state = play(game, mid_game(game, (560, 605)), [[5, 5, 5, 2, 3], PASS])
    assert state.scores == (610, 555)
    state = mid_game(game, (500, 605))
    state = play(game, state, [[5, 5, 5, 5, 5], PASS])
    assert state.scores == (880, 555)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param(
            {"pits": "200-300,250-400"}, "option pits: the pits of '200-300,250-400' overlap"
        ),
        pytest.param({"pits": "300-200"}, "option pits: the pit 300-200 must go from low to high"),
        pytest.param(
            {"pits": "low-high"},
            "option pits takes ranges like 200-300,600-700 (or off), not 'low-high'",
        ),
        pytest.param({"pits": 300}, "option pits takes str | off, not 300"),
        pytest.param(
            {"straights": "100/200"},
            "option straights takes 125/250 | 150/250 | off, not '100/200'",
        ),
        pytest.param({"barrel_at": 1000}, "option barrel_at must be between 1 and 999, not 1000"),
        pytest.param({"barrel_attempts": 0}, "option barrel_attempts must be at least 1, not 0"),
        pytest.param({"third_fall": 0}, "option third_fall must be at least 1, not 0"),
        pytest.param({"bolt_penalty": -5}, "option bolt_penalty cannot be negative, not -5"),
        pytest.param({"open_min": "lots"}, "option open_min takes int, not 'lots'"),
    ],
)
def test_bad_options(options: dict[str, JSON], message: str) -> None:
    with pytest.raises(InvalidOption) as bad:
        parse_options(ThousandOptions, options)
    assert str(bad.value) == message


def test_pits_parse() -> None:
    assert parse_pits("200-300,600-700") == ((200, 300), (600, 700))
    assert parse_pits(" 700-800 ,0-100") == ((0, 100), (700, 800))
    assert parse_pits("off") == ()
    game = game_with(pits="0-100,300-400,700-800")
    assert [game.pit(s) for s in (0, 99, 100, 300, 650, 799)] == [
        (0, 100),
        (0, 100),
        None,
        (300, 400),
        None,
        (700, 800),
    ]


def test_every_option_is_documented() -> None:
    infos = describe_options(ThousandOptions)
    assert [i.name for i in infos] == [
        "open_min",
        "straights",
        "pits",
        "pits_exclusive",
        "dump_truck",
        "overtake_penalty",
        "barrel_at",
        "barrel_attempts",
        "barrel_fall_penalty",
        "third_fall",
        "barrel_clamp",
        "barrel_required",
        "bolts_limit",
        "bolt_penalty",
        "bolts_consecutive",
        "hot_dice_forced",
        "exact_1000",
        "score_floor",
        "five_of_a_kind_wins",
    ]
    assert all(i.doc for i in infos)
    defaults = {i.name: i.default for i in infos}
    assert defaults["open_min"] == 50
    assert defaults["pits"] == "200-300,600-700"
    assert defaults["dump_truck"] == 555
    assert defaults["score_floor"] == 0


# --------------------------------------------------------------------------------------------------
# Refused actions: the exact message, and the state exactly as before


@pytest.mark.parametrize(
    ("start", "flags", "before", "action", "message"),
    [
        pytest.param(
            (0, 0),
            {},
            [],
            PASS,
            "cannot pass: nothing to bank yet: throw the dice first",
            id="pass-first",
        ),
        pytest.param((0, 0), {}, [], Keep([1]), KEEP_REFUSED, id="keep-start"),
        pytest.param(
            (0, 0), {}, [[1, 1, 5, 2, 3]], Keep([1, 1]), KEEP_REFUSED, id="keep-after-roll"
        ),
        pytest.param(
            (0, 0),
            {},
            [[1, 1, 5, 2, 3]],
            Roll([2, 3, 4]),
            "cannot roll 2 3 4: 2 dice are to be thrown, not 3",
            id="roll-wrong-count",
        ),
        pytest.param(
            (0, 0),
            {},
            [],
            Roll([2, 3, 4]),
            "cannot roll 2 3 4: 5 dice are to be thrown, not 3",
            id="turn-starts-with-five",
        ),
        pytest.param(
            (0, 0),
            {},
            [[1, 1, 5, 2, 3]],
            PASS,
            "cannot pass 25: to open the game you need 50 in one turn; you have 25",
            id="opening",
        ),
        pytest.param(
            (620, 0),
            {},
            [[5, 5, 5, 2, 3]],
            PASS,
            "cannot pass 50: in the pit 600-700 you need 700; you would have 670",
            id="pit-2",
        ),
        pytest.param(
            (880, 0),
            {"on_barrel": ON_BARREL},
            [[5, 5, 5, 5, 2]],
            PASS,
            "cannot pass 100: on the barrel you need 1000; you would have 980",
            id="barrel",
        ),
        pytest.param(
            (880, 0),
            {"on_barrel": ON_BARREL},
            [[6, 6, 6, 6, 2], PASS],
            Roll([1, 2, 3, 4, 6]),
            "cannot roll 1 2 3 4 6: the game is over",
            id="roll-after-end",
        ),
        pytest.param(
            (880, 0),
            {"on_barrel": ON_BARREL},
            [[6, 6, 6, 6, 2], PASS],
            PASS,
            "cannot pass: the game is over",
            id="pass-after-end",
        ),
    ],
)
def test_refused_action_leaves_state(
    start: tuple[int, ...],
    flags: dict[str, tuple[Any, ...]],
    before: list[Step],
    action: Action,
    message: str,
) -> None:
    game = Thousand()
    history = History(game, mid_game(game, start, **flags))
    for step in before:
        history.push(Roll(step) if isinstance(step, list) else PASS)
    state, length = history.state, len(history)
    with pytest.raises(IllegalAction) as refused:
        history.push(action)
    assert str(refused.value) == message
    assert history.state is state
    assert len(history) == length
    assert action not in game.legal_actions(state)


def test_malformed_roll_is_invalid() -> None:
    with pytest.raises(InvalidAction) as bad:
        Roll([1, 2, 3, 4, 7])
    assert str(bad.value) == "a die shows 1 to 6, not 7 (in [1, 2, 3, 4, 7])"


def test_legal_actions_offer_pass_only_when_allowed() -> None:
    game = Thousand()
    state = play(game, game.initial_state(NAMES[:2]), [[1, 1, 5, 2, 3]])
    actions = game.legal_actions(state)
    assert PASS not in actions
    assert len([a for a in actions if isinstance(a, Roll)]) == 21  # multisets of two dice
    state = play(game, state, [[1, 5]])
    assert PASS not in game.legal_actions(state)  # 40, hot dice, still short of 50
    state = play(game, state, [[1, 2, 3, 4, 6]])
    assert PASS in game.legal_actions(state)
    assert not any(isinstance(a, Keep) for a in game.legal_actions(state))


# --------------------------------------------------------------------------------------------------
# A whole game, the registry and the JSON views


WHOLE_GAME: list[Step] = [
    [1, 1, 1, 2, 3], PASS,  # Ann 100
    [5, 5, 5, 5, 5], PASS,  # Bob 500 overtakes Ann: 50
    [6, 6, 6, 6, 6], PASS,  # Ann 650 (pit 2) overtakes Bob: 450
    [4, 4, 4, 4, 4], PASS,  # Bob 850 overtakes Ann: 600
    [1, 1, 5, 2, 3], _refused_pass(25, "in the pit 600-700 you need 700; you would have 625"),
    [4, 6],  # Ann burns in the pit: no bolt
    [3, 3, 3, 3, 3], PASS,  # Bob 1150 climbs the barrel at 880
    [1, 1, 1, 1, 2], PASS,  # Ann 800
    [2, 2, 2, 2, 3], _refused_pass(40, "on the barrel you need 1000; you would have 920"),
    [3],  # Bob burns: barrel attempt 1
    [1, 1, 1, 1, 1], PASS,  # Ann climbs (880) and throws Bob off: 780
    [6, 6, 6, 2, 3], PASS,  # Bob 840
    [5, 5, 5, 5, 2], _refused_pass(100, "on the barrel you need 1000; you would have 980"),
    [1], [1, 2, 3, 4, 6], PASS,  # Ann 880 + 120 = 1000 wins
]  # fmt: skip


def test_whole_game_to_a_winner() -> None:
    game = Thousand()
    state = game.initial_state(NAMES[:2])
    scores_after_turns = []
    for step in WHOLE_GAME:
        before = state.turn.player
        state = play(game, state, [step])
        if state.turn.player != before or state.winners is not None:
            scores_after_turns.append(state.scores)
    assert scores_after_turns == [
        (100, 0),
        (50, 500),
        (650, 450),
        (600, 850),
        (600, 850),
        (600, 880),
        (800, 880),
        (800, 880),
        (880, 780),
        (880, 840),
        (1000, 840),
    ]
    assert state.extra.falls == (0, 1)
    assert state.extra.bolts == (0, 0)
    assert game.phase(state) is Phase.FINISHED
    outcome = game.outcome(state)
    assert outcome is not None
    assert (outcome.winners, outcome.totals, outcome.reason) == (
        (0,),
        (1000, 840),
        "Ann reached 1000",
    )
    assert game.legal_actions(state) == ()
    view = json.loads(json.dumps(game.state_json(state)))
    assert view["winners"] == ["Ann"]
    assert view["end_reason"] == "Ann reached 1000"
    assert view["standing"][0]["on_barrel"] is True


def test_transcript_round_trip() -> None:
    game = Thousand()
    state = game.initial_state(NAMES[:2])
    actions: list[Action] = []
    for step in WHOLE_GAME:
        if isinstance(step, Refused):
            continue
        action: Action = Roll(step) if isinstance(step, list) else step
        state = game.apply(state, action)
        actions.append(action)
    history = replay(dump(game, NAMES[:2], actions).splitlines())
    assert history.state == state


def test_registry_names() -> None:
    for name in ("thousand", "1000", "tysiacha", "Thousand"):
        assert find_game(name) is Thousand
    assert Thousand.name == "Тысяча"


def test_describe_mid_turn() -> None:
    game = Thousand()
    state = mid_game(game, (250, 880), on_barrel=BOB_ON_BARREL, barrel_used=(0, 1), bolts=(2, 0))
    state = play(game, state, [[1, 1, 5, 2, 3]])
    details = game.describe(state)
    assert details["turn"] == {
        "player": "Ann",
        "total": 25,
        "dice_left": 2,
        "dice": [],
        "kept": [[1, 1, 5]],
        "rolls": 1,
    }
    assert details["can_bank"] is False
    assert details["pass_minimum"] == 50
    assert details["standing"] == [
        {
            "name": "Ann",
            "score": 250,
            "opened": True,
            "bolts": 2,
            "on_barrel": False,
            "barrel_attempts_left": None,
            "falls": 0,
            "pit": "200-300",
        },
        {
            "name": "Bob",
            "score": 880,
            "opened": True,
            "bolts": 0,
            "on_barrel": True,
            "barrel_attempts_left": 2,
            "falls": 0,
            "pit": None,
        },
    ]


# --------------------------------------------------------------------------------------------------
# Properties of random games


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_random_games_keep_the_invariants(data: st.DataObject) -> None:
    exact = data.draw(st.booleans())
    game = game_with(exact_1000=exact)
    state = game.initial_state(NAMES)
    for _ in range(150):
        if state.winners is not None:
            break
        legal = game.legal_actions(state)
        assert legal
        if PASS in legal and data.draw(st.booleans()):
            state = game.apply(state, PASS)
        else:
            rolls = [a for a in legal if isinstance(a, Roll)]
            state = game.apply(state, data.draw(st.sampled_from(rolls)))
        extra: ThousandExtra = state.extra
        assert all(s >= 0 for s in state.scores)
        assert sum(extra.on_barrel) <= 1
        for q, score in enumerate(state.scores):
            if not extra.opened[q]:
                assert score == 0
            if extra.on_barrel[q]:
                assert score == 880 or (q in (state.winners or ()) and score >= 1000)
            assert 0 <= extra.bolts[q] < 3
            assert 0 <= extra.barrel_used[q] < 3
    if state.winners is not None:
        (w,) = state.winners
        assert state.scores[w] >= 1000
        assert not exact or state.scores[w] == 1000


def test_a_pass_is_an_event_a_phone_words_with_its_dump_truck() -> None:
    """A pass is data (score before and after), and so is the dump truck's note after it."""
    game = Thousand()
    state = game.apply(
        game.apply(game.initial_state(["Ann", "Bob"]), Roll([5, 5, 5, 2, 3])), Bank()
    )
    described = game.describe(state)
    assert described["last_event"] == "Ann passed 50: 0 -> 50"
    assert described["event"] == {
        "kind": "pass",
        "player": "Ann",
        "points": 50,
        "before": 0,
        "after": 50,
    }
    dumped = replace(state, scores=(505, 0), turn=replace(state.turn, player=0))
    dumped = game.apply(game.apply(dumped, Roll([5, 5, 5, 2, 3])), Bank())
    assert dumped.last_event == "Ann passed 50: 505 -> 555; dump truck: Ann is back to 0"
    assert game.describe(dumped)["event"] == {
        "kind": "pass",
        "player": "Ann",
        "points": 50,
        "before": 505,
        "after": 555,
        "notes": [{"kind": "dump_truck", "player": "Ann"}],
    }
