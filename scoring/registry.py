"""Game ids and aliases (PROTOCOL.md) mapped to their engines."""

from __future__ import annotations

import importlib
import unicodedata
from typing import Any

from scoring.core import Game
from scoring.errors import Setup, UnknownGame

# id -> "module:Class"; modules are imported on first use so a broken game cannot break the others.
_GAMES: dict[str, str] = {
    "general": "scoring.games.general:General",
    "kymppitonni": "scoring.games.kymppitonni:Kymppitonni",
    "thousand": "scoring.games.thousand:Thousand",
    "triangles": "scoring.games.triangles:Triangles",
    "jednicky-a-petky": "scoring.games.jednicky_a_petky:JednickyAPetky",
    "sest-kostek": "scoring.games.sest_kostek:SestKostek",
    "drapky": "scoring.games.drapky:Drapky",
    "sekvence": "scoring.games.sekvence:Sekvence",
    "zakazana-cisla": "scoring.games.zakazana_cisla:ZakazanaCisla",
}

# The aliases of PROTOCOL.md, kept here so that a lookup imports only the game it finds.
ALIASES: dict[str, str] = {
    "generał": "general",
    "kosci": "general",
    "10000-fi": "kymppitonni",
    "1000": "thousand",
    "tysiacha": "thousand",
    "driehoeken": "triangles",
    "ones-and-fives": "jednicky-a-petky",
    "six-dice": "sest-kostek",
    "figury": "drapky",
    "forbidden": "zakazana-cisla",
}

GameClass = type[Game[Any, Any]]


def _fold(name: str) -> str:
    """Case- and accent-insensitive key: "Generał" and "GENERAL" both fold to "general"."""
    name = name.strip().lower().replace("ł", "l").replace("_", "-")
    decomposed = unicodedata.normalize("NFKD", name)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def available() -> list[GameClass]:
    """Every game whose engine exists, in PROTOCOL.md order."""
    out = []
    for game_id in _GAMES:
        try:
            out.append(game_class(game_id))
        except UnknownGame:
            continue
    return out


def game_class(game_id: str) -> GameClass:
    """The engine class of an exact game id."""
    spec = _GAMES.get(game_id)
    if spec is None:
        raise _unknown(game_id)
    module_name, _, cls_name = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise UnknownGame(
            f"game {game_id!r} has no engine yet", code=Setup.NO_ENGINE, params={"game": game_id}
        ) from exc
    cls: GameClass = getattr(module, cls_name)
    return cls


def find_game(name: str) -> GameClass:
    """The engine for a game id or alias, matched without regard to case or accents.

    >>> find_game("Generał").game_id
    'general'
    >>> find_game("yatzy")
    Traceback (most recent call last):
    ...
    scoring.errors.UnknownGame: unknown game 'yatzy'; the games are: general, kymppitonni, \
thousand, triangles, jednicky-a-petky, sest-kostek, drapky, sekvence, zakazana-cisla
    """
    key = _fold(name)
    for game_id in _GAMES:
        if _fold(game_id) == key:
            return game_class(game_id)
    for alias, game_id in ALIASES.items():
        if _fold(alias) == key:
            return game_class(game_id)
    raise _unknown(name)


def _unknown(name: str) -> UnknownGame:
    return UnknownGame(
        f"unknown game {name!r}; the games are: {', '.join(_GAMES)}",
        code=Setup.UNKNOWN_GAME,
        params={"game": name, "games": list(_GAMES)},
    )
