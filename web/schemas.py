"""The pydantic models of the HTTP API: what comes in (``*In``) and what goes out (``*Public``).

They document the OpenAPI schema and check requests; the engines never see pydantic. A state
carries the game's own ``describe()`` fields besides the common ones, so ``StatePublic`` allows
extra fields, as does the state inside it that each game shapes.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from scoring.core import Game, describe_options

OptionKind = Literal["bool", "int", "choice", "int_or_off", "str"]


def valid_text(value: Any) -> Any:
    """``value`` unchanged if every string in it is valid Unicode (JSON allows lone surrogates).

    A lone surrogate cannot be stored or sent back as UTF-8, so it is refused at the door.

    >>> valid_text({"a": ["b", 1]})
    {'a': ['b', 1]}
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(
                    "text must be valid Unicode: a lone surrogate (\\ud800-\\udfff) was sent"
                ) from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return value


JSONObject = Annotated[dict[str, Any], AfterValidator(valid_text)]
Name = Annotated[str, StringConstraints(max_length=40), AfterValidator(valid_text)]


# -- requests -----------------------------------------------------------------------------------


class PinIn(BaseModel):
    """The table PIN typed on a phone."""

    pin: Annotated[str, Field(min_length=1, max_length=32), AfterValidator(valid_text)]


class HeaderIn(BaseModel):
    """A transcript header: which game, who plays (seat order), which options."""

    # A key the header does not take goes on to the rules, which refuse it with its code
    # (unknown_header_keys) as they do in a transcript, rather than drop it unsaid (a misspelt
    # "options" would start a game without them); the schema still says no other key is taken.
    model_config = ConfigDict(extra="allow", json_schema_extra={"additionalProperties": False})

    game: Annotated[str, Field(max_length=64), AfterValidator(valid_text)]
    players: list[Name] = Field(min_length=1, max_length=12)
    options: JSONObject = Field(default_factory=dict)


class CorrectionIn(BaseModel):
    """A die of the last settled reading and the face it really shows."""

    die: int = Field(
        strict=True,
        ge=0,
        le=63,
        description="index into state.table.dice_read, then on into state.table.aside_read",
    )
    value: int = Field(
        strict=True,
        ge=0,
        le=6,
        description="the face the die shows; 0: no die there (the camera took something for one)",
    )


class TeachIn(BaseModel):
    """The face a die of a kept photo shows, answered on the teach sheet."""

    reading: int = Field(strict=True, ge=1, description="the photo's reading, as GET /api/teach")
    die: int = Field(strict=True, ge=0, le=63, description="the die, as GET /api/teach")
    value: int | None = Field(
        strict=True,
        ge=0,
        le=6,
        description="the face it shows; 0: no die there; null: cannot tell from the picture",
    )


class PlaceIn(BaseModel):
    """A die the camera missed, tapped on its photo on the teach sheet."""

    reading: int = Field(strict=True, ge=1, description="the photo's reading, as GET /api/teach")
    x: float = Field(ge=0.0, le=1.0, description="where it was tapped, 0..1 of the photo's width")
    y: float = Field(ge=0.0, le=1.0, description="where it was tapped, 0..1 of the photo's height")
    value: int = Field(strict=True, ge=1, le=6, description="the face it shows")


class AbsentIn(BaseModel):
    """One of the dice the camera missed in a photo is not in it (off the tray, out of view)."""

    reading: int = Field(strict=True, ge=1, description="the photo's reading, as GET /api/teach")


class QuestionPublic(BaseModel):
    """A die of a kept photo that the camera read unsurely, its picture
    /api/teach/{reading}/{die}.jpg; or (``missing`` > 0) a photo in which the camera missed
    dice, its picture /api/teach/{reading}/photo.jpg, answered by POST /api/teach/place."""

    reading: int
    die: int
    value: int | None = Field(description="what the camera read; null: it could not tell")
    confidence: float
    status: str = Field(description="ok (read, unsurely), uncertain, cocked or missed")
    blurred: bool = Field(default=False, description="uncertain: too blurred for the camera")
    hidden: bool = Field(default=False, description="uncertain: partly hidden from the camera")
    cut: bool = Field(default=False, description="hidden: by the edge of the camera's view")
    time: str = Field(description="when the photo was taken (UTC, ISO 8601)")
    disputed: bool = Field(
        description="read surely, but the last tuned model reads it otherwise: the answer decides"
    )
    missing: int = Field(
        default=0, description="dice the camera missed in this photo, still to tap; 0 for a die"
    )
    looked_again: bool = Field(
        default=False,
        description="read otherwise at first, before the camera's light was set right: the"
        " answer decides",
    )
    first: int | None = Field(default=None, description="what the camera read at first")
    doubted: bool = Field(
        default=False,
        description="a fix of its throw said one of the dice showing this face was misread, not"
        " which: the answer decides",
    )


class TeachPublic(BaseModel):
    """The teach sheet: the dice to ask about, newest photo first."""

    keeping: bool = Field(description="whether the table keeps photos at all")
    count: int = Field(description="how many dice are open, of which `questions` are the first")
    missing: int = Field(
        0,
        description="dice the camera missed, still to place, over the whole sheet (each photo"
        " with missed dice is one of `count`)",
    )
    questions: list[QuestionPublic]


# The body of POST /api/actions is parsed by the engine (its messages say what is wrong); this
# schema only documents the PROTOCOL.md action objects for OpenAPI and the schema-driven fuzz.
_FACES = {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 6}, "maxItems": 8}


def _one(key: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: schema, **extra},
        "required": [key],
        "additionalProperties": False,
    }


ACTION_SCHEMA: dict[str, Any] = {
    "title": "Action",
    "description": 'One PROTOCOL.md action object, such as {"roll": [1, 5]} or {"bank": true}.',
    "oneOf": [
        _one("roll", _FACES),
        _one("keep", _FACES),
        _one("forbidden", _FACES),
        _one("bank", {"const": True}),
        _one("stop", {"const": True}),
        _one("pass", {"const": True}),
        _one("score", {"type": "string"}, column={"type": "integer", "minimum": 0}),
        _one("draw", {"type": "string"}),
        _one(
            "place",
            {
                "type": "object",
                "properties": {
                    "stone": {"type": "string"},
                    "cell": {"type": "string"},
                    "rotation": {"type": "integer", "minimum": 0, "maximum": 2},
                },
                "required": ["stone", "cell", "rotation"],
                "additionalProperties": False,
            },
        ),
    ],
}


# -- responses ----------------------------------------------------------------------------------


class ErrorPublic(BaseModel):
    """Why a request was refused: ``detail`` in English, and for a refusal the phones word in
    their own language its ``code`` (key ``refusal.<code>`` of the page) and ``params``."""

    detail: str
    code: str | None = Field(
        default=None, description="the refusal's code (409, 422), when it has one"
    )
    params: dict[str, Any] | None = Field(
        default=None, description="the numbers and dice of the refusal, named as its words use"
    )


class OkPublic(BaseModel):
    """The PIN was right."""

    ok: bool


class PlayerPublic(BaseModel):
    """A player and their score."""

    name: str
    score: int


class EndingPublic(BaseModel):
    """Why a finished game ended: the engine's English, and the code and params a phone words it
    by (``end.<code>``)."""

    reason: str = Field(description='in English, such as "Ann reached 10000"')
    code: str = Field(description="last_round, target, target_round, barrel, passed, ...")
    params: dict[str, Any] = Field(description="the player, the target, the points")


class DieReadPublic(BaseModel):
    """One die as the camera read it (or as a phone corrected it)."""

    value: int | None
    confidence: float
    status: str = Field(
        description='"ok", "uncertain" or "cocked"; "no_die" once a phone said no die is there'
    )
    box: list[int]
    blurred: bool = Field(
        default=False, description="an uncertain die too blurred to read (moving, out of focus)"
    )
    hidden: bool = Field(
        default=False, description="an uncertain die partly hidden (a card or a cup over it)"
    )
    cut: bool = Field(
        default=False,
        description="a hidden die whose part hidden is beyond the edge of the camera's view",
    )


class StepDicePublic(BaseModel):
    """``GET /api/history/{index}/dice``: the dice of the camera's reading that made a step,
    as the players left them (boxes in the pixels of its photo, ``GET /api/photo.jpg?reading=``)."""

    index: int
    reading: int
    dice: list[DieReadPublic] = Field(description="those of the roll zone, numbered from 0")


class StepDieIn(BaseModel):
    """A die of an earlier throw's photo and the face it really showed."""

    die: int = Field(
        strict=True, ge=0, le=63, description="index into GET /api/history/{index}/dice"
    )
    value: int = Field(strict=True, ge=1, le=6, description="the face it showed")


class TablePublic(BaseModel):
    """The table besides the game: the dice last read, any problem, the camera, a counter."""

    reading: str
    dice_read: list[DieReadPublic]
    aside_read: list[DieReadPublic] = Field(
        default_factory=list,
        description="the dice the last reading saw out of the roll zone (set aside, held)",
    )
    problem: str
    problem_code: str | None = Field(
        default=None, description="the problem's refusal code, when the phones can word it"
    )
    problem_params: dict[str, Any] = Field(
        default_factory=dict, description="the numbers and dice of the problem, by name"
    )
    camera: str = Field(
        description='"ok", "missing" or "failed"; "none": the table has no camera (dice typed)'
    )
    camera_notices: list[Literal["dark", "bright", "tray_size"]] = Field(
        default_factory=list,
        description='what to mend at the table: "dark" (too little light even at the longest'
        ' exposure), "bright" (too much even at the shortest), "tray_size" (the tray looks'
        " another size than calibrated: calibrate again)",
    )
    photos: int | None = Field(
        default=None,
        description="photos of the tray the table keeps (pipcam run --keep-photos); null: none",
    )
    photo_seq: int = Field(
        default=0,
        description="grows by one with every photo kept (and when keeping starts): the teach"
        " sheet (GET /api/teach) may have changed",
    )
    tuned: str | None = Field(
        default=None,
        description="the day (YYYY-MM-DD) the face model the table reads with was tuned on its"
        " own photos (pipcam tune); null: the shipped model, or one the configuration names",
    )
    seq: int = Field(description="grows by one with every change; SSE event ids carry it")
    game_id: int | None
    version: int = Field(
        default=0,
        description="starts at a random number each time the table starts and grows by one"
        " with every change of the game (a new game, an action, undo,"
        " redo, a correction that changed the actions); a change sent with ?seen=VERSION is"
        " refused (409) if the game has changed since",
    )
    coach: bool = Field(
        default=False,
        description="the coach is on (pipcam run --coach) and knows the game: GET /api/advice",
    )


class StatePublic(BaseModel):
    """The current game; the fields of the game's own ``describe()`` come on top (extra)."""

    model_config = ConfigDict(extra="allow")

    game: str | None
    players: list[PlayerPublic]
    finished: bool
    winners: list[str]
    ending: EndingPublic | None = Field(default=None, description="once the game is over")
    to_move: str | None
    phase: str | None = None
    roll_size: int | None = None
    legal: list[dict[str, Any]] | None = Field(default=None, description="rolls excluded")
    actions: int | None = None
    can_undo: bool | None = None
    can_redo: bool | None = None
    suggestion: dict[str, Any] | None = None
    table: TablePublic


class ChoicePublic(BaseModel):
    """One thing the player may do now, valued under the best play after it."""

    label: str = Field(description='in words, such as "keep 1 (100), then roll"')
    actions: list[dict[str, Any]] = Field(
        description="the PROTOCOL.md actions that make the choice (none: throw the dice)"
    )
    value: float = Field(description="on the scale of the advice's objective")
    then: str | None = Field(default=None, description='after a set-aside: "bank" or "roll"')
    wins: bool | None = Field(default=None, description="true: it wins the game there and then")
    same: list[ChoicePublic] | None = Field(
        default=None,
        description="other ways of making this choice that come to the same (keep the dice the "
        "bank would set aside, then bank), merged into it",
    )


class AdvicePublic(BaseModel):
    """The coach's advice for the player to move (``pipcam run --coach``)."""

    game: str
    player: str
    situation: str
    objective: str = Field(description="what the values measure")
    advice: ChoicePublic
    expected: float
    choices: list[ChoicePublic] = Field(description="every choice, best first")
    error_bound: float
    notes: list[str]
    text: str = Field(description="the advice as `pipcam advise` prints it")
    version: int = Field(description="the game version (state.table.version) it is for")


class OptionPublic(BaseModel):
    """One option of a game, as RULES.md documents it."""

    name: str
    default: Any
    takes: str
    doc: str
    kind: OptionKind
    choices: list[Any] | None


class GamePublic(BaseModel):
    """A game of the catalog: its id, its native name, its options and presets."""

    id: str
    name: str
    aliases: list[str]
    min_players: int
    max_players: int
    options: list[OptionPublic]
    presets: dict[str, dict[str, Any]]

    @classmethod
    def of(cls, game: type[Game[Any, Any]]) -> GamePublic:
        """The catalog entry of an engine class."""
        hints = typing.get_type_hints(game.options_type)
        options = []
        for info in describe_options(game.options_type):
            kind, choices = option_kind(hints[info.name])
            default = info.default
            if dataclasses.is_dataclass(default) or isinstance(default, tuple):
                default = str(default)
            options.append(
                OptionPublic(
                    name=info.name,
                    default=default,
                    takes=info.takes,
                    doc=info.doc,
                    kind=kind,
                    choices=choices,
                )
            )
        return cls(
            id=game.game_id,
            name=game.name,
            aliases=list(game.aliases),
            min_players=game.min_players,
            max_players=game.max_players,
            options=options,
            presets={name: dict(values) for name, values in game.presets.items()},
        )


def option_kind(tp: Any) -> tuple[OptionKind, list[Any] | None]:
    """How a phone asks for an option of this type, and the choices if it is a list of them.

    >>> option_kind(Literal[1, 3])
    ('choice', [1, 3])
    >>> option_kind(int | None)
    ('int_or_off', None)
    """
    origin = typing.get_origin(tp)
    if tp is bool:
        return "bool", None
    if tp is int:
        return "int", None
    if origin is Literal:
        return "choice", list(typing.get_args(tp))
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if args == [int]:
            return "int_or_off", None
    # str, str | None, and mixtures such as Literal["equal"] | int: typed in as text, which
    # the engine's option parser reads ("7" is 7, "off" is off).
    return "str", None


class HistoryEntryPublic(BaseModel):
    """One action in effect: its place, who took it, the action object and its words."""

    index: int = Field(description="0 for the first action; points[index + 1] are the scores after")
    player: str | None
    action: dict[str, Any]
    text: str
    reading: int | None = Field(
        default=None,
        description="the camera's reading whose dice made it (GET /api/photo.jpg?reading= shows"
        " its photo); null for a step typed or pressed",
    )


class EarlierGamePublic(BaseModel):
    """A game played here before the current one (``GET /api/games``)."""

    id: int = Field(description="the store's id: GET /api/games/{id}/transcript has its actions")
    game: str
    started: str = Field(description="when it started (UTC, ISO 8601)")
    finished: str | None = Field(description="when it ended or was left for another game")
    ended: bool = Field(description="true if it was played to the end, false if it was left")
    players: list[PlayerPublic] = Field(description="scores when it stopped, in seat order")
    winners: list[str]
    ending: EndingPublic | None = Field(description="why it ended; null if it was left")
    actions: int = Field(description="actions in effect")


class HistoryPublic(BaseModel):
    """The actions of the current game in effect (undone ones left out)."""

    entries: list[HistoryEntryPublic]
    can_undo: bool
    can_redo: bool


class StepChoicePublic(BaseModel):
    """Something an earlier step could have been instead, that the later steps still follow."""

    action: dict[str, Any] = Field(description="the action object, for PUT /api/history/{index}")
    text: str
    points: int | None = Field(
        description="what a figure writes for the player who took the step; null otherwise"
    )


class ChoicesPublic(BaseModel):
    """``GET /api/history/{index}/choices``: the step as taken and what else it could be.

    Offered for a figure written (or a turn stopped) and for a set-aside; a throw is typed
    instead, so its list is empty. A figure that the same player wrote later moves into the
    one the fix leaves (the two were written the wrong way round)."""

    index: int
    action: dict[str, Any]
    choices: list[StepChoicePublic]


class SeriesPublic(BaseModel):
    """Scores over the game: ``points[0]`` at the start, ``points[k]`` after action k."""

    players: list[str]
    points: list[list[int]]


class StatsPublic(BaseModel):
    """The score series, and how fair the dice have been over every game at this table."""

    series: SeriesPublic
    faces: dict[str, int] = Field(description='how often each face came up, "1" to "6"')
    dice_read: int = Field(description="dice counted: those of every roll in effect")
    chi_square: float
    p_value: float = Field(description="chi-square survival function, 5 degrees of freedom")
    verdict: Literal["fair", "suspicious", "too few dice"]
