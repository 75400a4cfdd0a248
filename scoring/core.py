"""The vocabulary every engine speaks: actions, phases, outcomes, options and the Game base class.

A game is an immutable ``Game`` object (its options) plus frozen states. ``legal_actions(state)`` is
the single source of truth: ``apply`` accepts exactly the actions it lists and refuses everything
else with an ``IllegalAction`` that says why and what is allowed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import json
import types
import typing
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import (
    Any,
    ClassVar,
    Generic,
    Literal,
    Self,
    TypeAlias,
    TypeVar,
    Union,
    get_args,
    get_origin,
)

from scoring.dice import Dice, dice, outcomes
from scoring.errors import (
    Coded,
    IllegalAction,
    InvalidAction,
    InvalidOption,
    Reason,
    Refusal,
    Setup,
)

JSON: TypeAlias = Any
"""A value that ``json.dumps`` accepts."""


# --------------------------------------------------------------------------------------------------
# Actions (PROTOCOL.md): one small frozen dataclass each.


@dataclass(frozen=True, slots=True)
class Roll:
    """The faces that came up on the dice just thrown (sorted; order never matters)."""

    dice: Dice

    def __init__(self, values: Sequence[int]) -> None:
        object.__setattr__(self, "dice", dice(values))

    def __str__(self) -> str:
        return f"roll {' '.join(map(str, self.dice))}"


@dataclass(frozen=True, slots=True)
class Keep:
    """Set these faces aside (jeopardy games) or hold them before the next throw."""

    dice: Dice

    def __init__(self, values: Sequence[int]) -> None:
        object.__setattr__(self, "dice", dice(values))

    def __str__(self) -> str:
        return f"keep {' '.join(map(str, self.dice))}" if self.dice else "keep nothing"


@dataclass(frozen=True, slots=True)
class Bank:
    """End the turn and write the turn total ("pass" in 1000)."""

    def __str__(self) -> str:
        return "bank"


@dataclass(frozen=True, slots=True)
class Score:
    """Write the current dice into a category or figure (``column`` for multi-column sheets)."""

    category: str
    column: int = 0

    def __str__(self) -> str:
        return f"score {self.category}" + (f" (column {self.column + 1})" if self.column else "")


@dataclass(frozen=True, slots=True)
class Stop:
    """End the turn without writing a figure (Drápky: the unused throws carry over)."""

    def __str__(self) -> str:
        return "stop"


@dataclass(frozen=True, slots=True)
class Forbidden:
    """The two forbidden numbers of Na zakázaná čísla, as thrown before the first turn."""

    numbers: Dice

    def __init__(self, values: Sequence[int]) -> None:
        object.__setattr__(self, "numbers", dice(values))

    def __str__(self) -> str:
        return f"forbidden {' '.join(map(str, self.numbers))}"


@dataclass(frozen=True, slots=True)
class Draw:
    """The triangle stone a player turns up, as its three side values clockwise ("045")."""

    stone: str

    def __str__(self) -> str:
        return f"draw {self.stone}"


@dataclass(frozen=True, slots=True)
class Place:
    """Lay a triangle stone in a cell ("U(0,0)") with a rotation 0-2 (RULES §5.2)."""

    stone: str
    cell: str
    rotation: int

    def __str__(self) -> str:
        return f"place {self.stone} {self.cell} r{self.rotation}"


@dataclass(frozen=True, slots=True)
class Pass:
    """The triangle stone just drawn fits nowhere: it goes under the stack and the turn passes."""

    def __str__(self) -> str:
        return "pass"


Action: TypeAlias = Roll | Keep | Bank | Score | Stop | Forbidden | Draw | Place | Pass


def action_to_json(action: Action) -> dict[str, JSON]:
    """The PROTOCOL.md object of an action.

    >>> action_to_json(Keep([5, 1, 1]))
    {'keep': [1, 1, 5]}
    """
    match action:
        case Roll(dice=d):
            return {"roll": list(d)}
        case Keep(dice=d):
            return {"keep": list(d)}
        case Bank():
            return {"bank": True}
        case Score(category=c, column=col):
            return {"score": c, "column": col} if col else {"score": c}
        case Stop():
            return {"stop": True}
        case Forbidden(numbers=n):
            return {"forbidden": list(n)}
        case Draw(stone=s):
            return {"draw": s}
        case Place(stone=s, cell=c, rotation=r):
            return {"place": {"stone": s, "cell": c, "rotation": r}}
        case Pass():
            return {"pass": True}
    raise AssertionError(f"unhandled action {action!r}")  # pragma: no cover


def _as_json(value: object) -> str:
    """A value as the JSON it came as, for messages about JSON input (``true``, not ``True``).

    >>> _as_json(False), _as_json([1.5, None]), _as_json(float("inf"))
    ('false', '[1.5, null]', 'Infinity')
    """
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _int_list(key: str, value: JSON) -> list[int]:
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise InvalidAction(f'"{key}" takes a list of die faces like [1, 5], not {_as_json(value)}')
    return value


def action_from_json(obj: JSON) -> Action:
    """Parse one PROTOCOL.md action object; ``InvalidAction`` says what was wrong.

    >>> action_from_json({"roll": [3, 1, 2]})
    Roll(dice=(1, 2, 3))
    """
    if not isinstance(obj, dict) or not obj:
        raise InvalidAction(
            f'an action is a JSON object like {{"roll": [1, 5]}}, not {_as_json(obj)}'
        )
    keys = set(obj)
    extra = keys - {"column"} if "score" in keys else keys
    if len(extra) != 1:
        raise InvalidAction(f"an action has exactly one key of {ACTION_KEYS}, not {sorted(keys)}")
    (key,) = extra
    value = obj[key]
    if key == "roll":
        return Roll(_int_list(key, value))
    if key == "keep":
        return Keep(_int_list(key, value))
    if key == "forbidden":
        return Forbidden(_int_list(key, value))
    if key in ("bank", "stop", "pass"):
        if value is not True:
            raise InvalidAction(f'"{key}" takes the value true, not {_as_json(value)}')
        flags: dict[str, Action] = {"bank": Bank(), "stop": Stop(), "pass": Pass()}
        return flags[key]
    if key == "score":
        column = obj.get("column", 0)
        if not isinstance(value, str):
            raise InvalidAction(
                f'"score" takes a category id such as "chance", not {_as_json(value)}'
            )
        if not isinstance(column, int) or isinstance(column, bool) or column < 0:
            raise InvalidAction(
                f'"column" takes a sheet column counted from 0 (0, 1 or 2), not {_as_json(column)}'
            )
        return Score(value, column)
    if key == "draw":
        if not isinstance(value, str):
            raise InvalidAction(f'"draw" takes a stone such as "045", not {_as_json(value)}')
        return Draw(value)
    if key == "place":
        if (
            not isinstance(value, dict)
            or set(value) != {"stone", "cell", "rotation"}
            or not isinstance(value["stone"], str)
            or not isinstance(value["cell"], str)
            or not isinstance(value["rotation"], int)
            or isinstance(value["rotation"], bool)
        ):
            raise InvalidAction(
                '"place" takes {"stone": "045", "cell": "U(0,0)", "rotation": 0-2}, '
                f"not {_as_json(value)}"
            )
        return Place(value["stone"], value["cell"], value["rotation"])
    raise InvalidAction(f"unknown action {key!r}; the actions are {ACTION_KEYS}")


ACTION_KEYS = ["roll", "keep", "bank", "score", "stop", "forbidden", "draw", "place", "pass"]


# --------------------------------------------------------------------------------------------------
# Phases and outcomes


class Phase(enum.Enum):
    """What the game waits for next."""

    SETUP = "setup"  # before the first turn (forbidden numbers)
    ROLL = "roll"  # the dice are to be thrown (the player may also bank or stop if legal)
    DECIDE = "decide"  # dice are on the table: keep, score, bank, stop
    DRAW = "draw"  # a triangle stone is to be turned up
    PLACE = "place"  # a triangle stone is in hand
    FINISHED = "finished"


class EndReason(enum.StrEnum):
    """Why a game ended, as the phones word it (``end.<code>``, with the params of its
    :class:`Ending`)."""

    LAST_ROUND = "last_round"
    """The game's last round was played (Generał: every box filled; Na zakázaná čísla)."""
    TARGET = "target"
    """``player`` reached ``target`` and won at once (the Czech games, Sekvence, Kymppitonni
    without the equalizing round)."""
    TARGET_ROUND = "target_round"
    """Kymppitonni: ``player`` reached ``target``, and the round was played to its end."""
    BARREL = "barrel"
    """1000: ``player`` passed from the barrel to ``points``."""
    PASSED = "passed"
    """1000 without the barrel required: ``player`` passed to ``points``."""
    FIVE_OF_A_KIND = "five_of_a_kind"
    """1000: ``player`` threw five ``face``s with all five dice."""
    ALL_FIGURES = "all_figures"
    """Drápky: ``player`` recorded all 14 figures."""
    LAST_STONE = "last_stone"
    """Triangles: ``player`` laid their last stone; the others' stones held were subtracted."""
    NO_FIT = "no_fit"
    """Triangles: no player could lay a stone; the stones held were subtracted."""


class Ending(Coded[EndReason]):
    """Why a game ended, in English, with its code and params for the phones (as a
    :class:`~scoring.errors.Reason` carries a refusal's).

    >>> why = Ending("Ann reached 100", EndReason.TARGET, {"player": "Ann", "target": 100})
    >>> why == "Ann reached 100", why.code.value, why.params
    (True, 'target', {'player': 'Ann', 'target': 100})
    """

    def to_json(self) -> dict[str, JSON]:
        """The English ``reason`` with its ``code`` and ``params``."""
        return {"reason": str(self), "code": self.code.value, "params": self.params}


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended: the winners (indices into players), the final totals, and why
    it ended."""

    winners: tuple[int, ...]
    totals: tuple[int, ...]
    reason: Ending


S = TypeVar("S")
OptT = TypeVar("OptT")


# --------------------------------------------------------------------------------------------------
# Options: frozen dataclasses, parsed from JSON objects or "name=value" strings


def option(default: Any, doc: str, *, on: Any = None, lowest: int | None = None) -> Any:
    """A documented option field; ``on`` is the value that ``name=on`` stands for; a number
    below ``lowest`` is refused (a negative bonus or target makes no game)."""
    return dataclasses.field(default=default, metadata={"doc": doc, "on": on, "lowest": lowest})


def _describe(tp: Any) -> str:
    origin = get_origin(tp)
    if origin is Literal:
        return " | ".join(repr(a) if not isinstance(a, str) else a for a in get_args(tp))
    if origin in (Union, types.UnionType):
        return " | ".join("off" if a is type(None) else _describe(a) for a in get_args(tp))
    return getattr(tp, "__name__", str(tp))


def _kinds(tp: Any) -> list[dict[str, JSON]]:
    """What a type takes, as the phones word it: ``{"kind": k}`` or ``{"choice": value}``.

    >>> _kinds(Literal["off", "free"] | None)
    [{'choice': 'off'}, {'choice': 'free'}, {'kind': 'off'}]
    """
    origin = get_origin(tp)
    if origin is Literal:
        return [{"choice": a} for a in get_args(tp)]
    if origin in (Union, types.UnionType):
        return [k for a in get_args(tp) for k in _kinds(a)]
    names = {type(None): "off", bool: "yes_no", int: "whole", float: "number", str: "text"}
    return [{"kind": names.get(tp, "text")}]


def shown(value: JSON) -> str:
    """A value given for an option as the phones show it: a text as it is, else as JSON.

    >>> shown("abc"), shown(True), shown([1, 2])
    ('abc', 'true', '[1, 2]')
    """
    return value if isinstance(value, str) else _as_json(value)


def _coerce(name: str, tp: Any, value: JSON, on_value: Any) -> Any:
    """Turn a JSON value or a command-line string into the option's type, or say what it takes."""
    origin = get_origin(tp)
    wanted = _describe(tp)
    bad = InvalidOption(
        f"option {name} takes {wanted}, not {value!r}",
        code=Setup.OPTION_VALUE,
        params={"option": name, "value": shown(value), "takes": _kinds(tp)},
    )
    if isinstance(value, str) and tp is not str and origin is not Literal:
        low = value.strip().lower()
        if low in ("on", "true", "yes"):
            value = True
        elif low in ("off", "false", "no", "none"):
            value = False
        else:
            try:
                value = int(low)
            except ValueError:
                with contextlib.suppress(ValueError):
                    value = float(low)
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        if type(None) in args and (value is False or value is None):
            return None
        if value is True and on_value is not None:
            return on_value
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(name, arg, value, None)
            except InvalidOption:
                continue
        raise bad
    if origin is Literal:
        on_words = ("on", "true", "yes")
        if on_value is not None and (
            value is True or (isinstance(value, str) and value.strip().lower() in on_words)
        ):
            return on_value
        for arg in get_args(tp):
            if value == arg or (isinstance(value, str) and str(arg) == value.strip()):
                return arg
        raise bad
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise bad
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise bad
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise bad
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise bad
        return value
    raise bad


OptionsT = TypeVar("OptionsT")


def parse_options(
    cls: type[OptionsT],
    given: Mapping[str, JSON],
    presets: Mapping[str, Mapping[str, JSON]] | None = None,
) -> OptionsT:
    """Build a game's options dataclass from a mapping; ``preset`` applies a named preset first.

    Unknown names and wrong values raise ``InvalidOption`` naming what is allowed.
    """
    presets = presets or {}
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    merged: dict[str, JSON] = {}
    if "preset" in given:
        name = given["preset"]
        if name not in presets:
            known = ", ".join(presets) or "none"
            raise InvalidOption(
                f"unknown preset {name!r}; the presets are: {known}",
                code=Setup.UNKNOWN_PRESET,
                params={"preset": shown(name), "presets": list(presets)},
            )
        merged.update(presets[name])
    merged.update({k: v for k, v in given.items() if k != "preset"})
    values: dict[str, Any] = {}
    for key, value in merged.items():
        if key not in fields:
            known = ", ".join(sorted(fields))
            raise InvalidOption(
                f"unknown option {key!r}; the options are: {known}",
                code=Setup.UNKNOWN_OPTION,
                params={"option": key, "options": list(fields)},
            )
        values[key] = _coerce(key, hints[key], value, fields[key].metadata.get("on"))
        lowest = fields[key].metadata.get("lowest")
        number = values[key]
        if lowest is not None and type(number) is int and number < lowest:
            off = "off or " if type(None) in get_args(hints[key]) else ""
            raise InvalidOption(
                f"option {key} takes {off}a whole number of at least {lowest}, not {number}",
                code=Setup.OPTION_AT_LEAST_OR_OFF if off else Setup.OPTION_AT_LEAST,
                params={"option": key, "least": lowest, "value": number},
            )
    result = cls(**values)
    check = getattr(result, "check", None)
    if callable(check):
        check()
    return result


def options_to_json(opts: Any) -> dict[str, JSON]:
    """The options that differ from their defaults, as a JSON object for a transcript header."""
    out: dict[str, JSON] = {}
    for f in dataclasses.fields(opts):
        value = getattr(opts, f.name)
        if value != f.default:
            out[f.name] = value
    return out


@dataclass(frozen=True, slots=True)
class OptionInfo:
    """One option for ``pipcam games``: name, default, what it takes, and why."""

    name: str
    default: JSON
    takes: str
    doc: str


def describe_options(cls: type[Any]) -> tuple[OptionInfo, ...]:
    """Every option of an options dataclass, in declaration order."""
    hints = typing.get_type_hints(cls)
    return tuple(
        OptionInfo(
            f.name,
            f.default,
            _takes(hints[f.name], f.metadata.get("lowest")),
            f.metadata.get("doc", ""),
        )
        for f in dataclasses.fields(cls)
    )


def _takes(tp: Any, lowest: int | None) -> str:
    """What an option takes, in words: ``int >= 1 | off``."""
    words = _describe(tp)
    return words if lowest is None else words.replace("int", f"int >= {lowest}", 1)


# --------------------------------------------------------------------------------------------------
# The Game base class


class Game(ABC, Generic[S, OptT]):
    """Rules of one game with fixed options; states are frozen and ``apply`` returns a new one.

    Subclasses set the class attributes and implement the abstract methods. ``legal_actions`` is the
    single source of truth: ``apply`` refuses anything not listed there, with the reason that
    ``explain_illegal`` gives.
    """

    game_id: ClassVar[str]
    name: ClassVar[str]  # the native name
    aliases: ClassVar[tuple[str, ...]] = ()
    options_type: ClassVar[type[Any]]
    presets: ClassVar[Mapping[str, Mapping[str, JSON]]] = {}
    min_players: ClassVar[int] = 1
    max_players: ClassVar[int] = 12
    score_names: ClassVar[tuple[str, ...]] = ()
    """The categories or figures a ``Score`` action names, in sheet order (none: no Score)."""

    def __init__(self, options: OptT | None = None) -> None:
        self.options: OptT = options if options is not None else self.options_type()

    @classmethod
    def from_json(cls, options: Mapping[str, JSON] | None = None) -> Self:
        """The game with options from a transcript header (``{"preset": "niemo", ...}``).

        A refusal says which game's options it is about (``game``), for the phones' words.
        """
        try:
            parsed = parse_options(cls.options_type, options or {}, cls.presets)
        except InvalidOption as exc:
            if exc.code is not None:
                exc.params.setdefault("game", cls.game_id)
            raise
        return cls(parsed)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options!r})"

    # -- what every game implements -------------------------------------------------------------

    @abstractmethod
    def initial_state(self, players: Sequence[str]) -> S:
        """The state before the first action, with players in seating order."""

    @abstractmethod
    def legal_actions(self, state: S) -> tuple[Action, ...]:
        """Every action allowed now, chance outcomes (rolls) included."""

    @abstractmethod
    def _apply(self, state: S, action: Action) -> S:
        """Apply an action already known to be legal."""

    @abstractmethod
    def phase(self, state: S) -> Phase:
        """What the game waits for."""

    @abstractmethod
    def to_move(self, state: S) -> int | None:
        """The seat that acts next, or None when the game is over."""

    @abstractmethod
    def totals(self, state: S) -> tuple[int, ...]:
        """Every player's score now."""

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """How the game ended, or None while it goes on."""

    @abstractmethod
    def players(self, state: S) -> tuple[str, ...]:
        """The players' names in seating order."""

    def roll_size(self, state: S) -> int:
        """How many dice the next roll throws (0 when no roll is legal now)."""
        return 0

    def describe(self, state: S) -> dict[str, JSON]:
        """Game-specific details for the JSON state (sheets, turn total, dice on the table)."""
        return {}

    # -- shared machinery -----------------------------------------------------------------------

    def roll_outcomes(self, state: S) -> tuple[tuple[Dice, float], ...]:
        """Every legal result of the next throw with its probability (empty when none is due)."""
        n = self.roll_size(state)
        return outcomes(n) if n else ()

    def preview(self, state: S, action: Action) -> int:
        """Points a legal action adds to the mover's total, shown before the player commits."""
        if not self.is_legal(state, action):
            raise IllegalAction(self.explain_illegal(state, action))
        mover = self.to_move(state)
        if mover is None:  # pragma: no cover  (no action is legal in a finished game)
            return 0
        return self.totals(self._apply(state, action))[mover] - self.totals(state)[mover]

    def is_legal(self, state: S, action: Action) -> bool:
        """Whether ``apply`` would accept the action."""
        if isinstance(action, Roll):
            n = self.roll_size(state)
            return n > 0 and len(action.dice) == n
        return action in self.legal_actions(state)

    def apply(self, state: S, action: Action) -> S:
        """The state after a legal action; an illegal one raises ``IllegalAction``."""
        if not self.is_legal(state, action):
            raise IllegalAction(self.explain_illegal(state, action))
        return self._apply(state, action)

    def explain_illegal(self, state: S, action: Action) -> str:
        """Why an action is refused and what is allowed instead; games refine this."""
        if isinstance(action, Roll):
            n = self.roll_size(state)
            if n:
                got = len(action.dice)
                return Reason(
                    f"cannot {action}: {n} dice are to be thrown, not {got}",
                    Refusal.WRONG_DICE_COUNT,
                    {"n": n, "got": got},
                )
        if self.phase(state) is Phase.FINISHED:
            return Reason(f"cannot {action}: the game is over", Refusal.GAME_OVER)
        return Reason(
            f"cannot {action} now; allowed: {self.allowed_text(state)}",
            Refusal.NOT_NOW,
            {"action": action_to_json(action), **self.allowed_params(state)},
        )

    def allowed_params(self, state: S) -> dict[str, JSON]:
        """The legal actions as refusal params, for the phones to word as ``allowed_text`` does:
        ``allowed`` (PROTOCOL.md objects, throws left out), ``roll`` (how many dice may be thrown,
        0 when none) and ``game`` (whose categories a ``score`` names)."""
        allowed = [action_to_json(a) for a in self.legal_actions(state) if not isinstance(a, Roll)]
        return {"allowed": allowed, "roll": self.roll_size(state), "game": self.game_id}

    def allowed_text(self, state: S, *, most: int = 12) -> str:
        """The legal actions in words; rolls and long lists of one kind are summarised."""
        words: list[str] = []
        n = self.roll_size(state)
        if n:
            words.append(f"roll {n} dice")
        by_kind: dict[str, list[str]] = {}
        for action in self.legal_actions(state):
            if not isinstance(action, Roll):
                by_kind.setdefault(type(action).__name__, []).append(str(action))
        for texts in by_kind.values():
            if len(texts) > most:
                shown = ", ".join(texts[: most // 2])
                words.append(f"{shown}, ... ({len(texts)} in all)")
            else:
                words.extend(texts)
        return ", ".join(words) if words else "nothing (the game is over)"

    def state_json(self, state: S) -> dict[str, JSON]:
        """The JSON view of ``pipcam replay`` and ``GET /api/state``."""
        names = self.players(state)
        out = self.outcome(state)
        mover = self.to_move(state)
        legal = [action_to_json(a) for a in self.legal_actions(state) if not isinstance(a, Roll)]
        return {
            "game": self.game_id,
            "players": [
                {"name": n, "score": s} for n, s in zip(names, self.totals(state), strict=True)
            ],
            "finished": out is not None,
            "winners": [names[i] for i in out.winners] if out else [],
            **({"ending": out.reason.to_json()} if out else {}),
            "to_move": names[mover] if mover is not None else None,
            "phase": self.phase(state).value,
            "roll_size": self.roll_size(state),
            "legal": legal,
            **self.describe(state),
        }
