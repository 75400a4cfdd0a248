"""Transcripts (PROTOCOL.md): a JSON header line, then one action per line."""

from __future__ import annotations

import codecs
import json
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoring.core import JSON, Action, Game, action_from_json, action_to_json, options_to_json
from scoring.errors import InvalidAction, InvalidOption, ScoringError, Setup
from scoring.history import History
from scoring.registry import find_game


class TranscriptError(ScoringError, ValueError):
    """A transcript line that cannot be read or applied; ``line`` is 1-based."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class Header:
    """The first line of a transcript: which game, who plays, with which options."""

    game: str
    players: tuple[str, ...]
    options: dict[str, JSON] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSON]:
        """The header object as written in a transcript."""
        return {"game": self.game, "players": list(self.players), "options": self.options}


def check_new_players(players: Sequence[str]) -> None:
    """Refuse names a new game should not start with (``InvalidAction``): a control character
    (a line break splits every line that shows the name), a space at either end, or two names
    that look the same ("Ann" and "ann ", or one with an invisible character).

    Only new games are checked: a stored game replays with the names it was started with.

    >>> check_new_players(["Ann", "Bob", "Zoë 🎲"])
    """
    seen: dict[str, str] = {}
    for name in players:
        if any(unicodedata.category(c) == "Cc" for c in name):
            raise InvalidAction(
                f"the name {name!r} has a control character (a line break, a tab); type it again",
                code=Setup.NAME_CONTROL,
                params={"name": name},
            )
        if name != name.strip():
            raise InvalidAction(
                f"the name {name!r} starts or ends with a space; leave it out",
                code=Setup.NAME_SPACE,
                params={"name": name},
            )
        looks = "".join(
            c for c in unicodedata.normalize("NFKC", name) if unicodedata.category(c) != "Cf"
        )
        key = " ".join(looks.casefold().split())
        if key in seen:
            raise InvalidAction(
                f"the names {seen[key]!r} and {name!r} look the same; give each player a name of"
                " their own",
                code=Setup.NAMES_ALIKE,
                params={"a": seen[key], "b": name},
            )
        seen[key] = name


def is_str(value: object) -> bool:
    """Whether ``value`` is a string (a name, blank or not)."""
    return isinstance(value, str)


def json_type(value: object) -> str:
    """The JSON type of ``value``, as a refusal's ``given`` names it (a Python repr would mean
    nothing to a phone); a value JSON cannot hold is named by its Python type.

    >>> [json_type(v) for v in ({}, [], "x", 1.5, True, None)]
    ['object', 'array', 'string', 'number', 'boolean', 'null']
    """
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: True is an int to Python, not to JSON
        return "boolean"
    for kind, name in ((dict, "object"), ((list, tuple), "array"), (str, "string")):
        if isinstance(value, kind):
            return name
    return "number" if isinstance(value, int | float) else type(value).__name__


HEADER_KEYS = ("game", "players", "options")
"""The keys a header takes, in the order a transcript writes them."""


def _not_names(obj: dict[str, JSON]) -> dict[str, str]:
    """Where a header's ``players`` is no list of names, and what is there instead."""
    if "players" not in obj:
        return {"field": "players", "given": "missing"}
    players = obj["players"]
    if isinstance(players, list):
        for i, player in enumerate(players):
            if not isinstance(player, str):
                return {"field": f"players.{i}", "given": json_type(player)}
    return {"field": "players", "given": json_type(players)}


def parse_header(obj: JSON) -> Header:
    """Check a header object: ``{"game": id, "players": [names], "options": {...}}``."""
    if not isinstance(obj, dict):
        raise InvalidAction(
            f"a transcript header is a JSON object, not {obj!r}",
            code=Setup.HEADER_NOT_OBJECT,
            params={"given": json_type(obj)},
        )
    unknown = set(obj) - set(HEADER_KEYS)
    if unknown:
        raise InvalidAction(
            f"unknown header keys {sorted(unknown)}; allowed: {', '.join(HEADER_KEYS)}",
            code=Setup.UNKNOWN_HEADER_KEYS,
            params={"keys": sorted(unknown), "known": list(HEADER_KEYS)},
        )
    game, players, options = obj.get("game"), obj.get("players"), obj.get("options", {})
    if not isinstance(game, str):
        raise InvalidAction(
            'the header needs "game": a game id such as "general"',
            code=Setup.HEADER_GAME,
            params={"given": json_type(game) if "game" in obj else "missing"},
        )
    if (
        not isinstance(players, list)
        or not players
        or not all(isinstance(p, str) and p.strip() for p in players)
    ):
        # Names that are all text, one of them blank, are a phone's empty name field.
        blank = isinstance(players, list) and bool(players) and all(map(is_str, players))
        raise InvalidAction(
            'the header needs "players": a list of names such as ["Ann", "Bob"]',
            code=Setup.NO_NAME if blank else Setup.HEADER_PLAYERS,
            params={} if blank else _not_names(obj),
        )
    twice = [p for i, p in enumerate(players) if p in players[:i]]
    if twice:
        raise InvalidAction(
            f"two players share a name in {players!r}; give each a different name",
            code=Setup.NAME_TWICE,
            params={"name": twice[0]},
        )
    if not isinstance(options, dict):
        raise InvalidAction(
            f'"options" is a JSON object of option names, not {options!r}',
            code=Setup.HEADER_OPTIONS,
            params={"given": json_type(options)},
        )
    return Header(game, tuple(players), dict(options))


def start(header: Header, *, stored: bool = False) -> History[Any]:
    """A new game's history from a header (``UnknownGame``/``InvalidOption`` if it is wrong).

    A ``stored`` game (one a table kept) replays with as many players as it was started with,
    so that a game begun under an earlier, looser count is resumed rather than set aside.
    """
    cls = find_game(header.game)
    n = len(header.players)
    fewest = 1 if stored else cls.min_players
    if not fewest <= n <= cls.max_players:
        raise InvalidAction(
            f"{cls.game_id} is played by {cls.min_players} to {cls.max_players} players, not {n}",
            code=Setup.PLAYER_COUNT,
            params={"game": cls.game_id, "least": cls.min_players, "most": cls.max_players, "n": n},
        )
    game: Game[Any, Any] = cls.from_json(header.options)
    return History(game, game.initial_state(header.players))


def decode(data: bytes) -> list[str]:
    """A transcript file's lines from its bytes: UTF-8 (a byte-order mark is read past), or
    UTF-16 with its byte-order mark (what Windows PowerShell's ``>`` writes).

    Bytes that are neither raise ``TranscriptError`` naming the line.

    >>> decode('{"game": "general"}\\r\\n'.encode("utf-16"))
    ['{"game": "general"}']
    """
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16").splitlines()
        except UnicodeDecodeError as exc:
            raise TranscriptError(
                1, f"not UTF-16 text as its first bytes say ({exc.reason}); save it as UTF-8"
            ) from exc
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise TranscriptError(
            line,
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at column {column});"
            " a transcript is JSON lines in UTF-8: save it as UTF-8",
        ) from exc


def replay(lines: Iterable[str]) -> History[Any]:
    """Rebuild a game from transcript lines; the first bad line raises ``TranscriptError``."""
    history: History[Any] | None = None
    for number, raw in enumerate(lines, start=1):
        # A byte-order mark: what Windows editors put before a UTF-8 file's first line.
        text = (raw.removeprefix("\ufeff") if number == 1 else raw).strip()
        if not text:
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TranscriptError(number, f"not JSON ({exc.msg} at column {exc.colno})") from exc
        try:
            if history is None:
                history = start(parse_header(obj))
            else:
                history.push(action_from_json(obj))
        except (ScoringError, InvalidOption) as exc:
            raise TranscriptError(number, str(exc)) from exc
    if history is None:
        raise TranscriptError(1, "the transcript is empty; it starts with a header line")
    return history


def dump(game: Game[Any, Any], players: Sequence[str], actions: Iterable[Action]) -> str:
    """A transcript's text for a game and its actions (a header and one line per action)."""
    header = Header(game.game_id, tuple(players), options_to_json(game.options))
    lines = [json.dumps(header.to_json(), ensure_ascii=False)]
    lines.extend(json.dumps(action_to_json(a)) for a in actions)
    return "\n".join(lines) + "\n"
