"""A new game's refusals as data: a header the rules refuse (the game, the players, an option)
carries a code and params for the phones, and says in English exactly what it said before."""

from __future__ import annotations

from typing import Any

import pytest

from scoring import registry
from scoring.errors import ScoringError, Setup, UnknownGame, refusal_json
from scoring.transcript import check_new_players, parse_header, start

TWO = ["Ann", "Bob"]
GAMES = [
    "general",
    "kymppitonni",
    "thousand",
    "triangles",
    "jednicky-a-petky",
    "sest-kostek",
    "drapky",
    "sekvence",
    "zakazana-cisla",
]
BOARDS = (
    'write hexagon:N (N 1-9), triangle:N (N 2-20) or rhombus:AxB (A and B 1-20), e.g. "hexagon:4"'
)

CASES: list[tuple[str, list[str], dict[str, Any], Setup, dict[str, Any], str]] = [
    (
        "yatzy",
        TWO,
        {},
        Setup.UNKNOWN_GAME,
        {"game": "yatzy", "games": GAMES},
        f"unknown game 'yatzy'; the games are: {', '.join(GAMES)}",
    ),
    (
        "general",
        ["Ann"],
        {},
        Setup.PLAYER_COUNT,
        {"game": "general", "least": 2, "most": 12, "n": 1},
        "general is played by 2 to 12 players, not 1",
    ),
    (
        "general",
        ["Ann", " "],
        {},
        Setup.NO_NAME,
        {},
        'the header needs "players": a list of names such as ["Ann", "Bob"]',
    ),
    (
        "general",
        ["Ann", "Bob", "Ann"],
        {},
        Setup.NAME_TWICE,
        {"name": "Ann"},
        "two players share a name in ['Ann', 'Bob', 'Ann']; give each a different name",
    ),
    (
        "general",
        ["Ann", "ANN"],
        {},
        Setup.NAMES_ALIKE,
        {"a": "Ann", "b": "ANN"},
        "the names 'Ann' and 'ANN' look the same; give each player a name of their own",
    ),
    (
        "general",
        ["Ann", "B\nob"],
        {},
        Setup.NAME_CONTROL,
        {"name": "B\nob"},
        "the name 'B\\nob' has a control character (a line break, a tab); type it again",
    ),
    (
        "general",
        ["Ann", "Bob "],
        {},
        Setup.NAME_SPACE,
        {"name": "Bob "},
        "the name 'Bob ' starts or ends with a space; leave it out",
    ),
    (
        "kymppitonni",
        TWO,
        {"preset": "x"},
        Setup.UNKNOWN_PRESET,
        {"game": "kymppitonni", "preset": "x", "presets": ["niemo"]},
        "unknown preset 'x'; the presets are: niemo",
    ),
    (
        "sekvence",
        TWO,
        {"colour": 1},
        Setup.UNKNOWN_OPTION,
        {"game": "sekvence", "option": "colour", "options": ["target", "three_ones_reset"]},
        "unknown option 'colour'; the options are: target, three_ones_reset",
    ),
    (
        "sekvence",
        TWO,
        {"target": "abc"},
        Setup.OPTION_VALUE,
        {"game": "sekvence", "option": "target", "value": "abc", "takes": [{"kind": "whole"}]},
        "option target takes int, not 'abc'",
    ),
    (
        "general",
        TWO,
        {"general_joker": "sometimes"},
        Setup.OPTION_VALUE,
        {
            "game": "general",
            "option": "general_joker",
            "value": "sometimes",
            "takes": [{"choice": "off"}, {"choice": "forced"}, {"choice": "free"}],
        },
        "option general_joker takes off | forced | free, not 'sometimes'",
    ),
    (
        "general",
        TWO,
        {"upper_bonus": [35]},
        Setup.OPTION_VALUE,
        {
            "game": "general",
            "option": "upper_bonus",
            "value": "[35]",
            "takes": [{"kind": "whole"}, {"kind": "off"}],
        },
        "option upper_bonus takes int | off, not [35]",
    ),
    (
        "sekvence",
        TWO,
        {"target": 0},
        Setup.OPTION_AT_LEAST,
        {"game": "sekvence", "option": "target", "least": 1, "value": 0},
        "option target takes a whole number of at least 1, not 0",
    ),
    (
        "general",
        TWO,
        {"upper_bonus": -5},
        Setup.OPTION_AT_LEAST_OR_OFF,
        {"game": "general", "option": "upper_bonus", "least": 0, "value": -5},
        "option upper_bonus takes off or a whole number of at least 0, not -5",
    ),
    (
        "thousand",
        TWO,
        {"barrel_at": 1000},
        Setup.OPTION_BETWEEN,
        {"game": "thousand", "option": "barrel_at", "least": 1, "most": 999, "value": 1000},
        "option barrel_at must be between 1 and 999, not 1000",
    ),
    (
        "thousand",
        TWO,
        {"barrel_attempts": 0},
        Setup.OPTION_AT_LEAST,
        {"game": "thousand", "option": "barrel_attempts", "least": 1, "value": 0},
        "option barrel_attempts must be at least 1, not 0",
    ),
    (
        "thousand",
        TWO,
        {"open_min": -50},
        Setup.OPTION_AT_LEAST,
        {"game": "thousand", "option": "open_min", "least": 0, "value": -50},
        "option open_min cannot be negative, not -50",
    ),
    (
        "thousand",
        TWO,
        {"pits": "deep"},
        Setup.OPTION_FORMAT,
        {"game": "thousand", "option": "pits", "value": "deep", "example": "200-300,600-700"},
        "option pits takes ranges like 200-300,600-700 (or off), not 'deep'",
    ),
    (
        "thousand",
        TWO,
        {"pits": "300-200"},
        Setup.PIT_ORDER,
        {"game": "thousand", "option": "pits", "pit": "300-200"},
        "option pits: the pit 300-200 must go from low to high",
    ),
    (
        "thousand",
        TWO,
        {"pits": "200-300,250-400"},
        Setup.PITS_OVERLAP,
        {"game": "thousand", "option": "pits", "value": "200-300,250-400"},
        "option pits: the pits of '200-300,250-400' overlap",
    ),
    (
        "triangles",
        TWO,
        {"ring_points": "5/15"},
        Setup.OPTION_FORMAT,
        {"game": "triangles", "option": "ring_points", "value": "5/15", "example": "5/15/25"},
        "ring_points takes 3 numbers like '5/15/25', not '5/15'",
    ),
    (
        "triangles",
        TWO,
        {"deal": 80},
        Setup.OPTION_BETWEEN,
        {"game": "triangles", "option": "deal", "least": 1, "most": 76, "value": 80},
        'deal takes "equal" or a number of stones 1-76, not 80',
    ),
    (
        "triangles",
        ["Ann", "Bob", "Cy"],
        {"deal": 30},
        Setup.DEAL_TOO_LARGE,
        {"game": "triangles", "deal": 30, "need": 90, "n": 3, "stones": 76},
        "deal 30 needs 90 stones for 3 players; there are 76",
    ),
    (
        "triangles",
        TWO,
        {"board": "circle:3"},
        Setup.BOARD_SHAPE,
        {"game": "triangles", "option": "board", "value": "circle:3"},
        f"unknown board 'circle:3'; {BOARDS}",
    ),
    (
        "triangles",
        TWO,
        {"board": "hexagon:12"},
        Setup.BOARD_SHAPE,
        {"game": "triangles", "option": "board", "value": "hexagon:12"},
        f"board 'hexagon:12' has no such size; {BOARDS}",
    ),
    (
        "triangles",
        TWO,
        {"board_cells": "U(0,0) X"},
        Setup.BOARD_CELL,
        {"game": "triangles", "option": "board_cells", "cell": "X"},
        "board_cells: a cell is written U(i,j) or D(i,j), like U(0,0) or D(-1,2), not 'X'",
    ),
    (
        "triangles",
        TWO,
        {"board_cells": " ; "},
        Setup.OPTION_FORMAT,
        {
            "game": "triangles",
            "option": "board_cells",
            "value": " ; ",
            "example": "U(0,0) D(0,0) U(1,0)",
        },
        'board_cells lists no cells; write them like "U(0,0) D(0,0) U(1,0)"',
    ),
    (
        "triangles",
        TWO,
        {"board_cells": "U(0,0) U(0,0)"},
        Setup.CELL_TWICE,
        {"game": "triangles", "option": "board_cells", "cell": "U(0,0)"},
        "board_cells lists U(0,0) twice",
    ),
    (
        "triangles",
        TWO,
        {"board_cells": "U(0,0) U(100,0)"},
        Setup.CELL_TOO_FAR,
        {"game": "triangles", "option": "board_cells", "cell": "U(100,0)", "least": -9, "most": 99},
        "cell U(100,0) is too far out; coordinates run from -9 to 99",
    ),
]


def new_game(header: dict[str, Any]) -> None:
    """The checks of a new game from a phone (pipcam's Table.new_game), without a table."""
    parsed = parse_header(header)
    check_new_players(parsed.players)
    start(parsed)


@pytest.mark.parametrize(("game", "players", "options", "code", "params", "english"), CASES)
def test_a_new_games_refusal_carries_its_code_and_params(
    game: str,
    players: list[str],
    options: dict[str, Any],
    code: Setup,
    params: dict[str, Any],
    english: str,
) -> None:
    """The checks a phone's new game goes through (web/app.py, pipcam Table.new_game)."""
    with pytest.raises(ScoringError) as caught:
        new_game({"game": game, "players": players, "options": options})
    assert refusal_json(caught.value) == {"detail": english, "code": code.value, "params": params}


def test_a_game_without_its_engine_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """A game listed in the registry whose module is not there (a version without it)."""
    monkeypatch.setitem(registry._GAMES, "yatzy", "scoring.games.yatzy:Yatzy")
    with pytest.raises(UnknownGame) as caught:
        start(parse_header({"game": "yatzy", "players": TWO}))
    assert refusal_json(caught.value) == {
        "detail": "game 'yatzy' has no engine yet",
        "code": "no_engine",
        "params": {"game": "yatzy"},
    }


PLAYERS = 'the header needs "players": a list of names such as ["Ann", "Bob"]'
OPTIONS = '"options" is a JSON object of option names, not '

# Headers no phone sends (its requests are checked by FastAPI first) but a transcript, the
# command line or an API client can: each refusal names what was there, as JSON names it.
HEADERS: list[tuple[Any, Setup, dict[str, Any], str]] = [
    (
        ["general"],
        Setup.HEADER_NOT_OBJECT,
        {"given": "array"},
        "a transcript header is a JSON object, not ['general']",
    ),
    (
        None,
        Setup.HEADER_NOT_OBJECT,
        {"given": "null"},
        "a transcript header is a JSON object, not None",
    ),
    (
        {"game": "general", "players": TWO, "seat": 1, "colour": "red"},
        Setup.UNKNOWN_HEADER_KEYS,
        {"keys": ["colour", "seat"], "known": ["game", "players", "options"]},
        "unknown header keys ['colour', 'seat']; allowed: game, players, options",
    ),
    (
        {"players": TWO},
        Setup.HEADER_GAME,
        {"given": "missing"},
        'the header needs "game": a game id such as "general"',
    ),
    (
        {"game": None, "players": TWO},
        Setup.HEADER_GAME,
        {"given": "null"},
        'the header needs "game": a game id such as "general"',
    ),
    (
        {"game": ["general"], "players": TWO},
        Setup.HEADER_GAME,
        {"given": "array"},
        'the header needs "game": a game id such as "general"',
    ),
    ({"game": "general"}, Setup.HEADER_PLAYERS, {"field": "players", "given": "missing"}, PLAYERS),
    (
        {"game": "general", "players": "Ann, Bob"},
        Setup.HEADER_PLAYERS,
        {"field": "players", "given": "string"},
        PLAYERS,
    ),
    (
        {"game": "general", "players": []},
        Setup.HEADER_PLAYERS,
        {"field": "players", "given": "array"},
        PLAYERS,
    ),
    (
        {"game": "general", "players": ["Ann", 3]},
        Setup.HEADER_PLAYERS,
        {"field": "players.1", "given": "number"},
        PLAYERS,
    ),
    (  # an entry that is no text is told before a blank one
        {"game": "general", "players": [" ", "Ann", True]},
        Setup.HEADER_PLAYERS,
        {"field": "players.2", "given": "boolean"},
        PLAYERS,
    ),
    (
        {"game": "general", "players": TWO, "options": []},
        Setup.HEADER_OPTIONS,
        {"given": "array"},
        OPTIONS + "[]",
    ),
    (
        {"game": "general", "players": TWO, "options": "target=100"},
        Setup.HEADER_OPTIONS,
        {"given": "string"},
        OPTIONS + "'target=100'",
    ),
    (
        {"game": "general", "players": TWO, "options": 1.5},
        Setup.HEADER_OPTIONS,
        {"given": "number"},
        OPTIONS + "1.5",
    ),
]


@pytest.mark.parametrize(("header", "code", "params", "english"), HEADERS)
def test_a_header_of_the_wrong_shape_carries_its_code_and_params(
    header: Any, code: Setup, params: dict[str, Any], english: str
) -> None:
    """A header that is no object, has keys it does not take, or holds the wrong JSON type."""
    with pytest.raises(ScoringError) as caught:
        new_game(header)
    assert refusal_json(caught.value) == {"detail": english, "code": code.value, "params": params}


def test_every_new_game_code_is_met() -> None:
    """The tests above meet every code of ``Setup``."""
    met = {case[3] for case in CASES} | {case[1] for case in HEADERS}
    assert met == set(Setup) - {Setup.NO_ENGINE}
