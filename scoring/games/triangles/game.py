"""The Dutch triangle-stone game (RULES §5): options, state and turn flow.

How the transcript carries a game whose deal is random (``scoring`` never draws at random):

* The header's players are in seating order from the start player, whom the table settles by each
  turning up a stone (``start_player`` says who wins that). The start player's revealed stone is his
  first ``draw`` and the first stone on the board.
* Every player gets ``76 // n`` stones (``deal = equal``; the rest are out of play, unseen) or the
  number ``deal`` says. The engine knows how many stones each player holds, but not which: a stone
  nobody has shown yet is *unknown*, and a ``draw`` names the stone the player turned up.
* ``stone_source = top_of_pile``: while a player still has unknown stones on his stack, he may
  draw any unknown stone (one not on the board, not under anybody's stack, not in hand). A stone
  that fits nowhere is passed: it goes under his stack, so once his unknown stones are used up his
  next draw is exactly his oldest passed stone. ``hand``: he may draw any unknown stone while he
  has some, or any of his passed stones.
* A turn is ``draw`` then ``place``; ``pass`` only when the stone fits nowhere.
* The game ends when a player lays his last stone, or when every player in a row has passed. The
  other players then subtract the pips of the stones they still hold (RULES §5.5): passed stones
  are known and subtracted at once; every unknown stone still held is shown with one more ``draw``
  by its owner, in seat order (the engine asks for exactly as many as each holds). After the last
  of these the game is finished. This reuses the ``draw`` action: PROTOCOL.md needs no new one.

Scoring is RULES §5.4 with the options of §5.6: rings, wide rings (``wide_ring_mode``), the rim
penalty and the best-placement obligation, which compares the placements of the same stone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from scoring.core import (
    JSON,
    Action,
    Draw,
    Ending,
    EndReason,
    Game,
    Outcome,
    Pass,
    Phase,
    Place,
    action_to_json,
    option,
)
from scoring.errors import InvalidAction, InvalidOption, Reason, Refusal, Setup
from scoring.games.triangles.lattice import make_board, parse_cell
from scoring.games.triangles.placement import (
    Layout,
    Placement,
    Rules,
    best_placements,
    side_names,
)
from scoring.games.triangles.stones import (
    PIPS,
    ROTATED,
    STONES,
    parse_stone,
    pip_total,
    pip_value,
)

N_STONES = len(STONES)
BEST_SHOWN = 5


def parse_points(text: str, count: int, name: str) -> tuple[int, ...]:
    """Points written "5/15/25" (or with commas) as a tuple of exactly ``count`` numbers.

    >>> parse_points("5/15/25", 3, "ring_points"), parse_points("3, 8", 2, "wide_ring_points")
    ((5, 15, 25), (3, 8))
    """
    parts = [p for p in re.split(r"[/,\s]+", str(text).strip()) if p]
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != count:
        example = "5/15/25" if count == 3 else "3/8"
        raise InvalidOption(
            f"{name} takes {count} numbers like {example!r}, not {text!r}",
            code=Setup.OPTION_FORMAT,
            params={"option": name, "value": str(text), "example": example},
        )
    return values


@dataclass(frozen=True)
class TrianglesOptions:
    """Options of the triangle-stone game (RULES §5.6)."""

    match: Literal["equal", "sum7"] = option(
        "equal", "touching sides carry equal values, or (sum7) add up to 7 with 0 counting 6"
    )
    ring_points: str = option("5/15/25", "points for closing one/two/three single rings at once")
    wide_ring_points: str = option(
        "3/8", "points for a wide ring of two/three small triangles (RULES §5.4)"
    )
    wide_ring_mode: Literal["hole_size", "outline", "loop"] = option(
        "hole_size",
        "what a wide ring is (AMBIG-D2): a sealed hole of 2/3 cells, the outline of 2/3 single "
        "rings, or a side-to-side loop of stones around a 2/3-cell hole",
    )
    rim_penalty: int = option(
        2, "penalty for every stone laid on a rim cell of the board", lowest=0
    )
    best_placement_penalty: Literal["on", "difference", "off"] = option(
        "on",
        "a stone laid below its best value: deduct the best value (on), the shortfall "
        "(difference), or nothing (off)",
    )
    stone_source: Literal["top_of_pile", "hand"] = option(
        "top_of_pile", "turn up the top stone of your stack, or choose any stone you hold (hand)"
    )
    deal: Literal["equal"] | int = option(
        "equal", "stones per player: equal shares of 76 with the rest out of play, or a number"
    )
    board: str = option(
        "hexagon:4", "board shape: hexagon:N (6N² cells), triangle:N (N²) or rhombus:AxB (2AB)"
    )
    board_cells: str | None = option(
        None, 'an explicit board: cell names separated by spaces ("U(0,0) D(0,0) ...")'
    )

    def check(self) -> None:
        """Refuse values the types alone do not catch."""
        parse_points(self.ring_points, 3, "ring_points")
        parse_points(self.wide_ring_points, 2, "wide_ring_points")
        if isinstance(self.deal, int) and not 1 <= self.deal <= N_STONES:
            raise InvalidOption(
                f'deal takes "equal" or a number of stones 1-76, not {self.deal}',
                code=Setup.OPTION_BETWEEN,
                params={"option": "deal", "least": 1, "most": N_STONES, "value": self.deal},
            )
        make_board(self.board, self.board_cells)


@dataclass(frozen=True, slots=True)
class Move:
    """One stone laid: by whom, where, what it was worth, the best it could have been worth."""

    player: int
    stone: str
    cell: str
    rotation: int
    value: int
    best: int
    points: int


@dataclass(frozen=True)
class TrianglesState:
    """The board, the scores and what each player holds (counts, and the stones known to him)."""

    players: tuple[str, ...]
    layout: Layout
    scores: tuple[int, ...]
    counts: tuple[int, ...]  # stones each player holds, the one in hand included
    passed: tuple[tuple[int, ...], ...]  # stones known under each stack, oldest first
    revealed: tuple[tuple[int, ...], ...]  # stones shown at the end, to be subtracted
    out_of_play: int
    player: int = 0
    hand: int | None = None
    written: str = ""  # the stone in hand as its draw wrote it (rotations count from that)
    passes: int = 0  # passes in a row
    end: str = ""  # why the game ended (an Ending); empty while it goes on
    moves: tuple[Move, ...] = ()


def placement_points(value: int, best: int, mode: str) -> int:
    """Points for a placement worth ``value`` when ``best`` was possible (RULES §5.4 step 5).

    >>> [placement_points(5, 25, m) for m in ("on", "difference", "off")]
    [-20, -15, 5]
    >>> placement_points(-2, 0, "on"), placement_points(25, 25, "on")
    (-2, 25)
    """
    if mode == "off" or value >= best or best <= 0:
        return value
    if mode == "on":
        return value - best
    return value - (best - value)


def start_player(revealed: Sequence[str]) -> tuple[int, ...]:
    """The seats whose turned-up stone has the highest pip value; more than one means a tie, and
    those players turn up their next stone (RULES §5.5).

    >>> start_player(["045", "123"]), start_player(["123", "510", "402"])
    ((0,), (1, 2))
    """
    values = [pip_value(s) for s in revealed]
    top = max(values)
    return tuple(n for n, v in enumerate(values) if v == top)


class Triangles(Game[TrianglesState, TrianglesOptions]):
    """The Dutch 76-stone triangle game: match sides, close rings, mind the rim."""

    game_id = "triangles"
    name = "Driehoeken"
    aliases = ("driehoeken",)
    options_type = TrianglesOptions
    min_players = 2
    max_players = 6

    def __init__(self, options: TrianglesOptions | None = None) -> None:
        super().__init__(options)
        o = self.options
        o.check()
        ring = parse_points(o.ring_points, 3, "ring_points")
        wide = parse_points(o.wide_ring_points, 2, "wide_ring_points")
        self.rules = Rules(
            board=make_board(o.board, o.board_cells),
            match=o.match,
            ring_points=(ring[0], ring[1], ring[2]),
            wide_points=(wide[0], wide[1]),
            wide_mode=o.wide_ring_mode,
            rim_penalty=o.rim_penalty,
        )
        self.board = self.rules.board

    # -- set-up ---------------------------------------------------------------------------------

    def initial_state(self, players: Sequence[str]) -> TrianglesState:
        """An empty board; every player holds his share of the deal, the first seat to draw."""
        n = len(players)
        if not self.min_players <= n <= self.max_players:
            raise InvalidAction(f"triangles is played by 2 to 6 players, not {n}")
        each = N_STONES // n if self.options.deal == "equal" else int(self.options.deal)
        if each * n > N_STONES:
            raise InvalidOption(
                f"deal {each} needs {each * n} stones for {n} players; there are {N_STONES}",
                code=Setup.DEAL_TOO_LARGE,
                params={
                    "game": self.game_id,
                    "deal": each,
                    "need": each * n,
                    "n": n,
                    "stones": N_STONES,
                },
            )
        return TrianglesState(
            players=tuple(players),
            layout=Layout.empty(self.rules),
            scores=(0,) * n,
            counts=(each,) * n,
            passed=((),) * n,
            revealed=((),) * n,
            out_of_play=N_STONES - each * n,
        )

    # -- what the state holds -------------------------------------------------------------------

    def unknown(self, state: TrianglesState, player: int) -> int:
        """How many stones ``player`` holds that nobody has seen yet."""
        holding = 1 if state.hand is not None and player == state.player else 0
        return (
            state.counts[player] - len(state.passed[player]) - len(state.revealed[player]) - holding
        )

    def pool(self, state: TrianglesState) -> list[int]:
        """The stones nobody has shown: in some stack, unturned, or out of play."""
        seen = {code // 3 for code in state.layout.cells if code >= 0}
        for stones in (*state.passed, *state.revealed):
            seen.update(stones)
        if state.hand is not None:
            seen.add(state.hand)
        return [s for s in range(N_STONES) if s not in seen]

    def _revealer(self, state: TrianglesState) -> int | None:
        for p in range(len(state.players)):
            if self.unknown(state, p) > 0:
                return p
        return None

    def phase(self, state: TrianglesState) -> Phase:
        if state.end:
            return Phase.DRAW if self._revealer(state) is not None else Phase.FINISHED
        return Phase.DRAW if state.hand is None else Phase.PLACE

    def to_move(self, state: TrianglesState) -> int | None:
        if state.end:
            return self._revealer(state)
        return state.player

    def players(self, state: TrianglesState) -> tuple[str, ...]:
        return state.players

    def totals(self, state: TrianglesState) -> tuple[int, ...]:
        if not state.end:
            return state.scores
        return tuple(
            score - pip_total(passed) - pip_total(shown)
            for score, passed, shown in zip(state.scores, state.passed, state.revealed, strict=True)
        )

    def outcome(self, state: TrianglesState) -> Outcome | None:
        if self.phase(state) is not Phase.FINISHED:
            return None
        totals = self.totals(state)
        top = max(totals)
        winners = tuple(n for n, t in enumerate(totals) if t == top)
        # ``end`` is an Ending from the action that ended the game.
        assert isinstance(state.end, Ending)
        said = f"{state.end}; the stones still held are subtracted"
        return Outcome(winners, totals, Ending(said, state.end.code, state.end.params))

    def best_placements(self, state: TrianglesState, stone: str) -> tuple[Placement, ...]:
        """Every legal (cell, rotation) of ``stone`` now, with its value, best first."""
        return best_placements(state, stone)

    def points(self, value: int, best: int) -> int:
        """What a placement worth ``value`` scores when ``best`` was possible for the stone.

        ``apply`` writes exactly this, and ``describe`` shows it on every placement button.
        """
        return placement_points(value, best, self.options.best_placement_penalty)

    # -- legal actions --------------------------------------------------------------------------

    def drawable(self, state: TrianglesState) -> list[int]:
        """The stones the player to move may turn up now (empty unless a draw is due)."""
        if state.end:
            return self.pool(state) if self._revealer(state) is not None else []
        if state.hand is not None:
            return []
        p = state.player
        passed = state.passed[p]
        if self.unknown(state, p) > 0:
            mine = list(passed) if self.options.stone_source == "hand" else []
            return sorted({*self.pool(state), *mine})
        if self.options.stone_source == "hand":
            return sorted(set(passed))
        return [passed[0]]

    def legal_actions(self, state: TrianglesState) -> tuple[Action, ...]:
        if state.hand is None:
            return tuple(Draw(STONES[s]) for s in self.drawable(state))
        places = best_placements(state, state.written)
        if not places:
            return (Pass(),)
        return tuple(Place(state.written, p.cell, p.rotation) for p in places)

    def is_legal(self, state: TrianglesState, action: Action) -> bool:
        """Whether ``apply`` would accept the action (a stone may be written from any side)."""
        return self._problem(state, action) is None

    def explain_illegal(self, state: TrianglesState, action: Action) -> str:
        return self._problem(state, action) or f"{action} is legal"

    def _problem(self, state: TrianglesState, action: Action) -> str | None:
        """Why an action is refused, or None when it is legal; malformed input raises."""
        if isinstance(action, Draw):
            return self._draw_problem(state, action)
        if isinstance(action, Place):
            return self._place_problem(state, action)
        if isinstance(action, Pass):
            return self._pass_problem(state)
        if self.phase(state) is Phase.FINISHED:
            return Reason(f"cannot {action}: the game is over", Refusal.GAME_OVER)
        return Reason(
            f"cannot {action}: triangles knows only draw, place and pass",
            Refusal.TRI_ONLY,
            {"action": action_to_json(action)},
        )

    def _where(self, state: TrianglesState, stone: int) -> str | None:
        for c, code in enumerate(state.layout.cells):
            if code >= 0 and code // 3 == stone:
                return self.board.names[c]
        return None

    def _draw_problem(self, state: TrianglesState, action: Draw) -> str | None:
        stone, _ = parse_stone(action.stone)
        what = f"cannot draw {action.stone}"
        names = state.players
        phase = self.phase(state)

        def refused(text: str, code: Refusal, **params: JSON) -> Reason:
            return Reason(f"{what}: {text}", code, {"stone": action.stone.strip(), **params})

        if phase is Phase.FINISHED:
            return Reason(f"{what}: the game is over", Refusal.GAME_OVER)
        if phase is Phase.PLACE:
            name = names[state.player]
            return refused(
                f"{name} holds {state.written}; place it or pass",
                Refusal.TRI_HOLDS,
                player=name,
                hand=state.written,
            )
        if stone == state.hand:
            name = names[state.player]
            return refused(f"it is in {name}'s hand", Refusal.TRI_IN_HAND, player=name)
        cell = self._where(state, stone)
        if cell is not None:
            return refused(
                f"it already lies on the board at {cell}", Refusal.TRI_ON_BOARD, cell=cell
            )
        for q, stones in enumerate(state.passed):
            if stone in stones and (state.end or q != state.player):
                return refused(
                    f"it lies under {names[q]}'s stack", Refusal.TRI_UNDER_STACK, player=names[q]
                )
        for q, stones in enumerate(state.revealed):
            if stone in stones:
                return refused(
                    f"{names[q]} has shown it already", Refusal.TRI_SHOWN, player=names[q]
                )
        if state.end:
            return None
        p = state.player
        name = names[p]
        unknown = self.unknown(state, p)
        passed = state.passed[p]
        if self.options.stone_source == "hand":
            if stone in passed or unknown > 0:
                return None
            held = [STONES[s] for s in passed]
            return refused(
                f"{name} holds only {', '.join(held)}",
                Refusal.TRI_HOLDS_ONLY,
                player=name,
                stones=list(held),
            )
        if stone in passed:
            if unknown > 0:
                return refused(
                    f"it lies under {name}'s stack, below {unknown} unturned stones",
                    Refusal.TRI_BELOW_UNTURNED,
                    player=name,
                    n=unknown,
                )
            if stone == passed[0]:
                return None
        if unknown > 0:
            return None
        return refused(
            f"{name}'s next stone is {STONES[passed[0]]}, passed earlier",
            Refusal.TRI_NEXT_STONE,
            player=name,
            next=STONES[passed[0]],
        )

    def _place_problem(self, state: TrianglesState, action: Place) -> str | None:
        stone, offset = parse_stone(action.stone)
        cell = parse_cell(action.cell)
        if (
            not isinstance(action.rotation, int)
            or isinstance(action.rotation, bool)
            or action.rotation not in (0, 1, 2)
        ):
            raise InvalidAction(f"a rotation is 0, 1 or 2, not {action.rotation!r}")
        what = f"cannot place {action.stone}"
        phase = self.phase(state)
        if phase is Phase.FINISHED:
            return Reason(f"{what}: the game is over", Refusal.GAME_OVER)
        if state.end:
            return Reason(
                f"{what}: the game is over; the stones still held are being shown",
                Refusal.TRI_BEING_SHOWN,
            )
        if state.hand is None:
            name = state.players[state.player]
            return Reason(
                f"{what}: {name} has no stone in hand; draw one first",
                Refusal.TRI_NO_STONE,
                {"player": name},
            )
        written = action.stone.strip()
        if stone != state.hand:
            return Reason(
                f"{what}: the stone in hand is {state.written}",
                Refusal.TRI_NOT_IN_HAND,
                {"stone": written, "hand": state.written},
            )
        layout = state.layout
        c = self.board.cell_index(cell)
        what = f"{what} at {cell}"
        at = {"stone": written, "cell": str(cell)}
        if c < 0:
            return Reason(
                f"{what}: that cell is not on the board ({self.board.spec})",
                Refusal.TRI_OFF_BOARD,
                {**at, "board": self.board.spec},
            )
        held = layout.stone_at(c)
        if held is not None:
            there = STONES[held[0]]
            return Reason(
                f"{what}: {there} already lies there",
                Refusal.TRI_CELL_TAKEN,
                {**at, "there": there},
            )
        if layout.count and not layout.touches(c):
            return Reason(f"{what}: it touches no stone along a side", Refusal.TRI_TOUCHES_NONE, at)
        rotation = (action.rotation + offset) % 3
        side = layout.mismatch(c, stone, rotation)
        if side is None:
            return None
        other = self.board.nb[c][side]
        mine = ROTATED[stone][rotation][side]
        theirs = layout.sides[3 * other + side]
        equal = self.options.match == "equal"
        rule = (
            "touching sides must be equal"
            if equal
            else "touching sides must add up to 7, 0 counting 6"
        )
        side_name = side_names(cell.kind)[side]
        return Reason(
            f"{what} r{action.rotation}: its {side_name} side {mine} "
            f"would lie against {theirs} of {self.board.names[other]} ({rule})",
            Refusal.TRI_SIDES_EQUAL if equal else Refusal.TRI_SIDES_SUM7,
            {
                **at,
                "rotation": action.rotation,
                "side": side_name,
                "mine": mine,
                "theirs": theirs,
                "other": self.board.names[other],
            },
        )

    def _pass_problem(self, state: TrianglesState) -> str | None:
        phase = self.phase(state)
        if phase is Phase.FINISHED:
            return Reason("cannot pass: the game is over", Refusal.GAME_OVER)
        if state.end:
            return Reason(
                "cannot pass: the game is over; the stones still held are being shown",
                Refusal.TRI_BEING_SHOWN,
            )
        if state.hand is None:
            name = state.players[state.player]
            return Reason(
                f"cannot pass: {name} has no stone in hand; draw one first",
                Refusal.TRI_NO_STONE,
                {"player": name},
            )
        places = best_placements(state, state.written)
        if not places:
            return None
        best = places[0]
        return Reason(
            f"cannot pass: {state.written} fits, e.g. at {best.cell} r{best.rotation} "
            f"(worth {best.value})",
            Refusal.TRI_FITS,
            {
                "stone": state.written,
                "cell": best.cell,
                "rotation": best.rotation,
                "value": best.value,
            },
        )

    # -- applying -------------------------------------------------------------------------------

    def _apply(self, state: TrianglesState, action: Action) -> TrianglesState:
        if isinstance(action, Draw):
            stone, _ = parse_stone(action.stone)
            if state.end:
                p = self._revealer(state)
                assert p is not None
                revealed = list(state.revealed)
                revealed[p] = (*revealed[p], stone)
                return replace(state, revealed=tuple(revealed))
            passed = list(state.passed)
            mine = list(passed[state.player])
            if stone in mine:
                mine.remove(stone)
            passed[state.player] = tuple(mine)
            return replace(state, hand=stone, written=action.stone.strip(), passed=tuple(passed))
        n = len(state.players)
        p = state.player
        assert state.hand is not None
        if isinstance(action, Pass):
            passed = list(state.passed)
            passed[p] = (*passed[p], state.hand)
            passes = state.passes + 1
            return replace(
                state,
                passed=tuple(passed),
                hand=None,
                written="",
                passes=passes,
                player=(p + 1) % n,
                end=Ending("no player could lay a stone", EndReason.NO_FIT) if passes >= n else "",
            )
        assert isinstance(action, Place)
        stone, offset = parse_stone(action.stone)
        c = self.board.index[parse_cell(action.cell)]
        rotation = (action.rotation + offset) % 3
        layout = state.layout
        value = layout.value(c).total
        best = max(layout.value(cell).total for cell in {cell for cell, _ in layout.legal(stone)})
        points = self.points(value, best)
        scores = list(state.scores)
        scores[p] += points
        counts = list(state.counts)
        counts[p] -= 1
        move = Move(p, STONES[stone], self.board.names[c], rotation, value, best, points)
        return replace(
            state,
            layout=layout.place(c, stone, rotation),
            scores=tuple(scores),
            counts=tuple(counts),
            hand=None,
            written="",
            passes=0,
            player=(p + 1) % n,
            end=Ending(
                f"{state.players[p]} laid the last stone",
                EndReason.LAST_STONE,
                {"player": state.players[p]},
            )
            if counts[p] == 0
            else "",
            moves=(*state.moves, move),
        )

    # -- JSON -----------------------------------------------------------------------------------

    def render_text(self, state: TrianglesState) -> str:
        """The board in text for ``pipcam play``, with the best cells for the stone in hand."""
        from scoring.games.triangles.render import render_board

        if state.hand is None:
            return render_board(state)
        places = best_placements(state, state.written)
        lines = [render_board(state, highlight=[p.cell for p in places[:BEST_SHOWN]])]
        if places:
            best = ", ".join(f"{p.cell} r{p.rotation} ({p.value:+d})" for p in places[:BEST_SHOWN])
            lines.append(f"stone {state.written} in hand; best placements: {best}")
        else:
            lines.append(f"stone {state.written} fits nowhere: pass")
        return "\n".join(lines)

    def describe(self, state: TrianglesState) -> dict[str, JSON]:
        """The board, stones left, the stone in hand with its best and all its placements (with
        the points each would score), and the scores."""
        board = []
        for c, code in enumerate(state.layout.cells):
            if code < 0:
                continue
            stone, rotation = divmod(code, 3)
            kind = self.board.cells[c].kind
            board.append(
                {
                    "cell": self.board.names[c],
                    "stone": STONES[stone],
                    "rotation": rotation,
                    "sides": dict(zip(side_names(kind), ROTATED[stone][rotation], strict=True)),
                }
            )
        best: list[JSON] = []
        every: list[JSON] = []
        if state.hand is not None:
            places = best_placements(state, state.written)
            best = [p.to_json() for p in places[:BEST_SHOWN]]
            # Every placement with the points apply() would write, so a phone never has to guess
            # what a placement below the best or on the rim costs (RULES §5.4 steps 3 and 5).
            top = places[0].value if places else 0
            every = [
                {
                    "cell": p.cell,
                    "rotation": p.rotation,
                    "value": p.value,
                    "points": self.points(p.value, top),
                }
                for p in places
            ]
        last = state.moves[-1] if state.moves else None
        n_players = len(state.players)
        return {
            "board_shape": self.board.spec,
            "board_cells": len(self.board),
            "board": board,
            "stones_left": list(state.counts),
            "passed": [[STONES[s] for s in stones] for stones in state.passed],
            "out_of_play": state.out_of_play,
            "hand": state.written or None,
            "hand_pips": PIPS[state.hand] if state.hand is not None else None,
            "best_placements": best,
            "legal_placements": len(every),
            "placements": every,
            "scores": list(state.scores),
            "last_move": None
            if last is None
            else {
                "player": state.players[last.player],
                "stone": last.stone,
                "cell": last.cell,
                "rotation": last.rotation,
                "value": last.value,
                "best": last.best,
                "points": last.points,
            },
            "end": state.end or None,
            # Who ended the game by laying his last stone (None: it ended because nobody could
            # lay one), and how many stones each player must still turn up to be subtracted.
            "ended_by": next(
                (state.players[p] for p, n in enumerate(state.counts) if n == 0 and state.end),
                None,
            ),
            "to_reveal": [self.unknown(state, p) if state.end else 0 for p in range(n_players)],
            "revealed": [[STONES[s] for s in stones] for stones in state.revealed],
        }


__all__ = [
    "Move",
    "Triangles",
    "TrianglesOptions",
    "TrianglesState",
    "placement_points",
    "start_player",
]
