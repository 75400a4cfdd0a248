"""The one error tree of ``scoring``: every leaf is also a builtin exception.

A refusal a phone can meet also carries a ``code`` and its ``params``: the page words it in its
own language, and ``str(exc)`` stays the English sentence (the command line, the logs, and the
fallback of a page that has no words for the code).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Generic, Self, TypeVar


class RefusalCode(StrEnum):
    """Base of every enum of refusal codes; its subclasses list every code there is.

    The page words code ``c`` by its key ``refusal.c``, so a code names a sentence, not a case:
    two refusals that read alike share one.
    """


class Refusal(RefusalCode):
    """The engines' refusals that a phone or a button at the table can meet."""

    GAME_OVER = "game_over"
    """The game is over: no action is taken any more."""
    WRONG_DICE_COUNT = "wrong_dice_count"
    """A throw of ``got`` dice when ``n`` are to be thrown."""
    NOTHING_TO_BANK = "nothing_to_bank"
    """A bank (a pass) before the first throw of the turn."""
    ALL_AGAIN = "all_again"
    """Every die has scored, and all ``n`` must be thrown again."""
    CONFIRM_SIX = "confirm_six"
    """Six scoring dice are to be confirmed by one more throw of all six (Šest kostek)."""
    AT_LEAST = "at_least"
    """A turn total of at least ``n`` is needed to bank (record) it."""
    MORE_THAN = "more_than"
    """A turn total of more than ``n`` is needed to record it."""
    ON_THE_BOARD = "on_the_board"
    """At least ``n`` is needed to bank while the score is 0 (Kymppitonni)."""
    DICE_LEFT = "dice_left"
    """At most ``most`` dice may be left to record; ``left`` are."""
    NEED_AND_DICE_LEFT = "need_and_dice_left"
    """Too low a total and too many dice left: ``need`` and ``left`` are those two refusals,
    each as ``{"code": ..., "params": ...}``."""
    OPEN = "open"
    """1000: ``need`` is needed in one turn to open the game; the turn has ``have``."""
    PIT = "pit"
    """1000: in the pit ``low``-``high`` the pass must reach ``high``; it would reach ``have``."""
    BARREL = "barrel"
    """1000: on the barrel the pass must reach ``need``; it would reach ``have``."""
    NO_DICE_TO_KEEP = "no_dice_to_keep"
    """A set-aside before the throw: ``n`` dice are to be thrown."""
    KEEP_NOTHING = "keep_nothing"
    """A set-aside of no dice."""
    KEEP_NOT_SHOWING = "keep_not_showing"
    """A set-aside of ``dice`` that are not among the dice showing, ``shown``."""
    KEEP_NOT_SCORING = "keep_not_scoring"
    """A set-aside of ``dice`` that do not all score; the best of ``shown`` is ``best``."""
    KEEP_FIRST = "keep_first"
    """A throw while scoring dice ``shown`` are still to be set aside."""
    AUTO_KEEP = "auto_keep"
    """A set-aside in a game whose scoring dice are set aside by themselves (1000)."""
    NOT_THROWN = "not_thrown"
    """Generał, Drápky: nothing to hold or write before the turn's first throw."""
    THROW_REST = "throw_rest"
    """Generał, Drápky: the ``n`` dice not held are to be thrown first."""
    NO_THROWS_LEFT = "no_throws_left"
    """Generał: no throws are left this turn; a box is to be written."""
    NO_THROWS_LEFT_OR_STOP = "no_throws_left_or_stop"
    """Drápky: no throws are left this turn; a figure is to be written, or the turn stopped."""
    HOLD_FIRST = "hold_first"
    """Generał: the dice to hold are to be kept before a throw (none: all ``n`` again)."""
    HOLD_FIRST_OR_STOP = "hold_first_or_stop"
    """Drápky: as ``hold_first``, or a figure written, or the turn stopped."""
    KEEP_ALL = "keep_all"
    """Drápky: all ``n`` dice held; at most ``most`` may be."""
    KEEP_ALL_OR_SCORE = "keep_all_or_score"
    """Generał: all ``n`` dice held; at most ``most`` may be, or a box written."""
    ALREADY_WRITTEN = "already_written"
    """Generał: ``box`` (of ``column``, from 1) is already written (``written``)."""
    ALREADY_RECORDED = "already_recorded"
    """Drápky: ``figure`` is already written (``written``)."""
    JOKER_UPPER = "joker_upper"
    """Generał's joker rule: a Generał of ``face`` goes into ``box`` while it is empty."""
    JOKER_LOWER = "joker_lower"
    """Generał's joker rule: a Generał goes into an empty lower box (``boxes``) while one is."""
    FIGURE_NOT_MADE = "figure_not_made"
    """Drápky: the ``dice`` do not make ``figure`` (the page says what it needs)."""
    FORBIDDEN_ALREADY = "forbidden_already"
    """Na zakázaná čísla: the forbidden numbers are already ``a`` and ``b``; ``allowed``, ``roll``
    and ``game`` as for ``not_now``."""
    FORBIDDEN_TWO_DICE = "forbidden_two_dice"
    """Na zakázaná čísla: the forbidden numbers are thrown with two dice, not ``got``."""
    FORBIDDEN_DOUBLE = "forbidden_double"
    """Na zakázaná čísla: the forbidden numbers differ; a double is thrown again."""
    FORBIDDEN_FIRST = "forbidden_first"
    """Na zakázaná čísla: the forbidden numbers are to be thrown first."""
    ASIDE_BY_THEMSELVES = "aside_by_themselves"
    """Na zakázaná čísla: dice showing a forbidden number are put aside by themselves;
    ``allowed``, ``roll`` and ``game`` as for ``not_now``."""
    TRI_ONLY = "tri_only"
    """Triangles: ``action`` (its PROTOCOL.md object) is none of draw, place and pass."""
    TRI_HOLDS = "tri_holds"
    """Triangles: ``player`` holds ``hand`` and is to lay it or pass, so ``stone`` is not drawn."""
    TRI_IN_HAND = "tri_in_hand"
    """Triangles: ``stone`` is already in ``player``'s hand."""
    TRI_ON_BOARD = "tri_on_board"
    """Triangles: ``stone`` already lies on the board, at ``cell``."""
    TRI_UNDER_STACK = "tri_under_stack"
    """Triangles: ``stone`` lies under ``player``'s stack (passed), not drawn by another."""
    TRI_SHOWN = "tri_shown"
    """Triangles: ``player`` has already turned ``stone`` up at the end of the game."""
    TRI_HOLDS_ONLY = "tri_holds_only"
    """Triangles (stones in hand): ``player`` holds only ``stones``, not ``stone``."""
    TRI_BELOW_UNTURNED = "tri_below_unturned"
    """Triangles: ``stone`` lies under ``player``'s stack, below ``n`` unturned stones."""
    TRI_NEXT_STONE = "tri_next_stone"
    """Triangles: ``player``'s next stone is ``next``, passed earlier, not ``stone``."""
    TRI_BEING_SHOWN = "tri_being_shown"
    """Triangles: the game is over; the stones still held are being turned up."""
    TRI_NO_STONE = "tri_no_stone"
    """Triangles: ``player`` has no stone in hand and is to turn one up first."""
    TRI_NOT_IN_HAND = "tri_not_in_hand"
    """Triangles: ``stone`` is laid, but the stone in hand is ``hand``."""
    TRI_OFF_BOARD = "tri_off_board"
    """Triangles: ``cell`` is not on the board (``board``, its shape)."""
    TRI_CELL_TAKEN = "tri_cell_taken"
    """Triangles: ``there`` already lies on ``cell``."""
    TRI_TOUCHES_NONE = "tri_touches_none"
    """Triangles: ``stone`` laid on ``cell`` would touch no stone along a side."""
    TRI_SIDES_EQUAL = "tri_sides_equal"
    """Triangles: ``stone`` on ``cell`` at ``rotation`` would lay its ``side`` side ``mine``
    against ``theirs`` of ``other``; touching sides must be equal."""
    TRI_SIDES_SUM7 = "tri_sides_sum7"
    """Triangles: as ``tri_sides_equal``, where touching sides must add up to 7 (0 counting 6)."""
    TRI_FITS = "tri_fits"
    """Triangles: no pass, for ``stone`` fits: at best on ``cell`` at ``rotation`` for ``value``."""
    NOT_NOW = "not_now"
    """Any game: ``action`` (its PROTOCOL.md object) is not allowed now; ``allowed`` lists the
    actions that are (throws left out), ``roll`` is how many dice may be thrown (0: none), and
    ``game`` says whose categories a ``score`` names."""


class Setup(RefusalCode):
    """Refusals of a new game's header (``transcript.parse_header``, ``start``): its shape, the
    game, the players, the options.

    An option's refusal also carries ``game`` (the game's id), so that the page names the option
    (``option``) and its choices in its own words.
    """

    HEADER_NOT_OBJECT = "header_not_object"
    """The header is no JSON object but ``given`` (a JSON type: ``array``, ``string``, ...)."""
    UNKNOWN_HEADER_KEYS = "unknown_header_keys"
    """The header has keys ``keys`` it does not take; ``known`` lists those it does."""
    HEADER_GAME = "header_game"
    """The header's ``game`` is no game id but ``given`` (a JSON type, or ``missing``)."""
    HEADER_PLAYERS = "header_players"
    """The header's ``players`` is no list of names: at ``field`` (``players``, or
    ``players.i`` for the first entry, from 0, that is no text) is ``given`` (a JSON type, or
    ``missing``; an empty list is an ``array``)."""
    HEADER_OPTIONS = "header_options"
    """The header's ``options`` is no JSON object of option names but ``given`` (a JSON type)."""
    UNKNOWN_GAME = "unknown_game"
    """No game answers to ``game``; ``games`` lists the ids."""
    NO_ENGINE = "no_engine"
    """The game ``game`` is listed but has no engine in this version."""
    PLAYER_COUNT = "player_count"
    """The game is played by ``least`` to ``most`` players, not ``n``."""
    NO_NAME = "no_name"
    """A player has no name (an empty one, or only spaces)."""
    NAME_TWICE = "name_twice"
    """Two players are called ``name``."""
    NAMES_ALIKE = "names_alike"
    """The names ``a`` and ``b`` look the same (case, spaces, invisible characters)."""
    NAME_CONTROL = "name_control"
    """The name ``name`` has a control character (a line break, a tab)."""
    NAME_SPACE = "name_space"
    """The name ``name`` starts or ends with a space."""
    UNKNOWN_PRESET = "unknown_preset"
    """No preset ``preset``; ``presets`` lists them."""
    UNKNOWN_OPTION = "unknown_option"
    """No option ``option``; ``options`` lists them."""
    OPTION_VALUE = "option_value"
    """``option`` does not take ``value``; ``takes`` lists what it does, each ``{"kind": k}``
    (``whole``, ``number``, ``yes_no``, ``text``, ``off``) or ``{"choice": value}``."""
    OPTION_AT_LEAST = "option_at_least"
    """``option`` takes a whole number of at least ``least``, not ``value``."""
    OPTION_AT_LEAST_OR_OFF = "option_at_least_or_off"
    """``option`` takes off or a whole number of at least ``least``, not ``value``."""
    OPTION_BETWEEN = "option_between"
    """``option`` takes a whole number from ``least`` to ``most``, not ``value``."""
    OPTION_FORMAT = "option_format"
    """``option`` is written like ``example``, not ``value``."""
    PIT_ORDER = "pit_order"
    """1000: the pit ``pit`` does not go from low to high."""
    PITS_OVERLAP = "pits_overlap"
    """1000: the pits of ``value`` overlap."""
    BOARD_SHAPE = "board_shape"
    """Triangles: no board ``value`` (a shape, or a size it does not come in)."""
    BOARD_CELL = "board_cell"
    """Triangles: ``cell`` of ``board_cells`` is not written as a cell."""
    CELL_TWICE = "cell_twice"
    """Triangles: ``board_cells`` lists ``cell`` twice."""
    CELL_TOO_FAR = "cell_too_far"
    """Triangles: ``cell`` is too far out; coordinates run from ``least`` to ``most``."""
    DEAL_TOO_LARGE = "deal_too_large"
    """Triangles: ``deal`` stones for each of ``n`` players need ``need``; there are ``stones``."""


C = TypeVar("C", bound=StrEnum)


class Coded(str, Generic[C]):
    """English words that also carry a code and its params, which the phones word in their
    language. A ``str``, so whatever read the words reads them as before."""

    code: C
    params: dict[str, Any]

    def __new__(cls, text: str, code: C, params: dict[str, Any] | None = None) -> Self:
        out = super().__new__(cls, text)
        out.code = code
        out.params = dict(params or {})
        return out

    def __getnewargs__(self) -> tuple[str, C, dict[str, Any]]:  # type: ignore[override]
        return (str(self), self.code, self.params)


class Reason(Coded[RefusalCode]):
    """An English reason that also carries its refusal code and params, for the phones.

    It is a ``str`` so that every reason the engines give (``explain_illegal``, ``bank_problem``)
    reads as before; an exception made from one carries its code.

    >>> why = Reason("nothing to bank yet", Refusal.NOTHING_TO_BANK)
    >>> why == "nothing to bank yet", why.code.value
    (True, 'nothing_to_bank')
    """

    def worded(self, text: str, **params: Any) -> Reason:
        """The same refusal in other English words (a prefix added), with more params."""
        return Reason(text, self.code, {**self.params, **params})


class ScoringError(Exception):
    """Root of every error raised by the rules engines.

    ``code`` and ``params`` say the refusal as data (``code`` is None when it has no words on
    the phones); a :class:`Reason` given as the message brings its own.
    """

    def __init__(
        self,
        message: str = "",
        *,
        code: RefusalCode | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        if code is None and isinstance(message, Reason):
            code, params = message.code, message.params
        self.code: RefusalCode | None = code
        self.params: dict[str, Any] = dict(params or {})

    def as_reason(self) -> str:
        """``str(self)``, as a :class:`Reason` when it has a code."""
        text = str(self)
        return text if self.code is None else Reason(text, self.code, self.params)


class InvalidAction(ScoringError, ValueError):
    """Malformed input: not an action at all (a die showing 7, an unknown category, bad JSON)."""


class IllegalAction(ScoringError, ValueError):
    """A well-formed action that the rules do not allow in this state; the state is unchanged."""


class InvalidOption(ScoringError, ValueError):
    """An unknown option name, or a value the option does not take."""


class UnknownGame(ScoringError, LookupError):
    """A game id or alias that no engine answers to."""


def refusal_json(reason: str | ScoringError) -> dict[str, Any]:
    """A refusal as the phones get it: the English ``detail``, with its ``code`` and ``params``
    when it has a code.

    >>> refusal_json(Reason("cannot pass: the game is over", Refusal.GAME_OVER))
    {'detail': 'cannot pass: the game is over', 'code': 'game_over', 'params': {}}
    >>> refusal_json("the disk is full")
    {'detail': 'the disk is full'}
    """
    if isinstance(reason, ScoringError):
        reason = reason.as_reason()
    out: dict[str, Any] = {"detail": str(reason)}
    if isinstance(reason, Reason):
        out.update(code=reason.code.value, params=reason.params)
    return out


def refusal_codes() -> dict[str, RefusalCode]:
    """Every refusal code of the enums defined so far (import the packages that define theirs)."""
    out: dict[str, RefusalCode] = {}
    pending: list[type[RefusalCode]] = [RefusalCode]
    while pending:
        kind = pending.pop()
        pending.extend(kind.__subclasses__())
        for member in kind:
            if member.value in out and out[member.value] is not member:
                raise ValueError(f"refusal code {member.value!r} is defined twice")
            out[member.value] = member
    return out
