"""Legal placement and the value of a placement (RULES §5.3, §5.4): rings, wide rings, the rim.

A ``Layout`` is the stones on one board: per cell the stone and its rotation, per cell side the
value lying there, and per vertex how many of its six cells are filled (so a ring closes exactly
when a full vertex holds five stones and the sixth is laid). The value of a placement depends only
on the cell, never on the rotation, so ``best_placements`` scores each candidate cell once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

from scoring.core import JSON
from scoring.games.triangles.lattice import DOWN_SIDES, UP_SIDES, Board
from scoring.games.triangles.stones import ROTATED, STONES, parse_stone, pip

Match: TypeAlias = Literal["equal", "sum7"]
WideMode: TypeAlias = Literal["hole_size", "outline", "loop"]

_FITS: dict[str, tuple[tuple[bool, ...], ...]] = {
    "equal": tuple(tuple(a == b for b in range(6)) for a in range(6)),
    "sum7": tuple(tuple(pip(a) + pip(b) == 7 for b in range(6)) for a in range(6)),
}


def sides_fit(a: int, b: int, match: Match = "equal") -> bool:
    """Whether two side values may lie against each other (RULES §5.3; 0 counts 6 for ``sum7``).

    >>> sides_fit(2, 2), sides_fit(2, 5), sides_fit(2, 5, "sum7"), sides_fit(0, 1, "sum7")
    (True, False, True, True)
    """
    return _FITS[match][a][b]


@dataclass(frozen=True)
class Rules:
    """Everything a placement's legality and value depend on (from the game's options)."""

    board: Board
    match: Match = "equal"
    ring_points: tuple[int, int, int] = (5, 15, 25)
    wide_points: tuple[int, int] = (3, 8)
    wide_mode: WideMode = "hole_size"
    rim_penalty: int = 2


@dataclass(frozen=True, slots=True)
class Value:
    """What one placement earns: ring points, wide-ring points and the rim penalty (negative)."""

    rings: int = 0
    wide: int = 0
    rim: int = 0

    @property
    def total(self) -> int:
        """``move_value`` of RULES §5.4: everything added up."""
        return self.rings + self.wide + self.rim


@dataclass(frozen=True, slots=True)
class Placement:
    """One legal way to lay a stone: cell, rotation (from the stone as written) and its value."""

    cell: str
    rotation: int
    value: int
    rings: int = 0
    wide: int = 0
    rim: int = 0

    def to_json(self) -> dict[str, JSON]:
        """The placement as a JSON object."""
        return {
            "cell": self.cell,
            "rotation": self.rotation,
            "value": self.value,
            "rings": self.rings,
            "wide": self.wide,
            "rim": self.rim,
        }


@dataclass(frozen=True)
class Layout:
    """The stones on the board: ``cells[c]`` is -1 or stone·3 + rotation (from its canonical name).

    ``sides[3c + k]`` is the value on side ``k`` of cell ``c`` (-1 when empty) and ``fill[v]`` the
    number of filled cells around vertex ``v``. Layouts are immutable; ``place`` returns a new one.
    """

    rules: Rules
    cells: tuple[int, ...]
    sides: tuple[int, ...]
    fill: tuple[int, ...]
    count: int = 0

    @classmethod
    def empty(cls, rules: Rules) -> Layout:
        """The board without stones."""
        n = len(rules.board)
        return cls(rules, (-1,) * n, (-1,) * (3 * n), (0,) * len(rules.board.vertices))

    def stone_at(self, cell: int) -> tuple[int, int] | None:
        """The stone number and canonical rotation in a cell, or None when it is empty."""
        code = self.cells[cell]
        return None if code < 0 else divmod(code, 3)

    def place(self, cell: int, stone: int, rotation: int) -> Layout:
        """The layout with ``stone`` laid in ``cell`` at a canonical rotation (no checks)."""
        cells = list(self.cells)
        cells[cell] = 3 * stone + rotation
        sides = list(self.sides)
        sides[3 * cell : 3 * cell + 3] = ROTATED[stone][rotation]
        fill = list(self.fill)
        for v in self.rules.board.cell_vertices[cell]:
            fill[v] += 1
        return Layout(self.rules, tuple(cells), tuple(sides), tuple(fill), self.count + 1)

    # -- legality -------------------------------------------------------------------------------

    def needs(self, cell: int) -> tuple[int, int, int]:
        """The values a stone in ``cell`` must meet on its sides 0-2 (-1: no stone there)."""
        sides = self.sides
        a, b, c = self.rules.board.nb[cell]
        return (
            sides[3 * a] if a >= 0 else -1,
            sides[3 * b + 1] if b >= 0 else -1,
            sides[3 * c + 2] if c >= 0 else -1,
        )

    def mismatch(self, cell: int, stone: int, rotation: int) -> int | None:
        """The first side of ``cell`` whose value does not fit its neighbour's, or None."""
        fits = _FITS[self.rules.match]
        values = ROTATED[stone][rotation]
        for k, need in enumerate(self.needs(cell)):
            if need >= 0 and not fits[values[k]][need]:
                return k
        return None

    def touches(self, cell: int) -> bool:
        """Whether ``cell`` shares a side with a stone."""
        cells = self.cells
        return any(n >= 0 and cells[n] >= 0 for n in self.rules.board.nb[cell])

    def candidates(self) -> Iterator[int]:
        """The empty cells a stone may go to: touching a stone, or any cell on an empty board."""
        cells = self.cells
        if self.count == 0:
            yield from range(len(cells))
            return
        for c, nbs in enumerate(self.rules.board.nb):
            if cells[c] < 0:
                a, b, d = nbs
                if (
                    (a >= 0 and cells[a] >= 0)
                    or (b >= 0 and cells[b] >= 0)
                    or (d >= 0 and cells[d] >= 0)
                ):
                    yield c

    def legal(self, stone: int) -> Iterator[tuple[int, int]]:
        """Every legal (cell, canonical rotation) for a stone, in board order."""
        fits = _FITS[self.rules.match]
        rotations = ROTATED[stone]
        for c in self.candidates():
            na, nb, nc = self.needs(c)
            for r, (x, y, z) in enumerate(rotations):
                if (na < 0 or fits[x][na]) and (nb < 0 or fits[y][nb]) and (nc < 0 or fits[z][nc]):
                    yield c, r

    # -- value ----------------------------------------------------------------------------------

    def value(self, cell: int) -> Value:
        """What laying any stone in the empty ``cell`` earns (RULES §5.4 steps 1-4)."""
        rules = self.rules
        board = rules.board
        fill = self.fill
        closed = 0
        for v in board.cell_vertices[cell]:
            if fill[v] == 5 and board.vertex_full[v]:
                closed += 1
        rings = rules.ring_points[closed - 1] if closed else 0
        if rules.wide_mode == "hole_size":
            wide = self._holes_sealed(cell)
        elif rules.wide_mode == "outline":
            wide = self._outlines_closed(cell)
        else:
            wide = self._loops_closed(cell)
        rim = -rules.rim_penalty if board.rim[cell] else 0
        return Value(rings, wide, rim)

    def _component(self, start: int, laid: int, cap: int) -> tuple[set[int], bool]:
        """The empty cells side-connected to ``start`` (``laid`` counted as filled), up to ``cap``
        of them, and whether any touches the board's edge (then it is not sealed)."""
        cells, nb = self.cells, self.rules.board.nb
        seen = {start}
        todo = [start]
        open_ = False
        while todo:
            c = todo.pop()
            for n in nb[c]:
                if n < 0:
                    open_ = True
                elif n != laid and cells[n] < 0 and n not in seen:
                    seen.add(n)
                    if len(seen) >= cap:
                        return seen, open_
                    todo.append(n)
        return seen, open_

    def _holes_sealed(self, cell: int) -> int:
        """Wide rings by hole size: holes of 2 or 3 cells that this stone seals (AMBIG-D2 a)."""
        board, cells, wide = self.rules.board, self.cells, self.rules.wide_points
        parts: list[tuple[set[int], bool]] = []
        seen: set[int] = set()
        for n in board.nb[cell]:
            if n >= 0 and cells[n] < 0 and n not in seen:
                part = self._component(n, cell, 4)
                seen |= part[0]
                parts.append(part)
        points = sum(wide[len(p) - 2] for p, open_ in parts if 2 <= len(p) <= 3 and not open_)
        if not points:
            return 0
        # A hole scores only when it is newly sealed: before this stone it was part of an open
        # region, i.e. this cell lies on the edge or one of the other parts reaches the edge.
        if board.rim[cell] or any(open_ for p, open_ in parts if len(p) < 4):
            return points
        for p, _ in parts:
            if len(p) >= 4 and self._component(next(iter(p)), cell, len(cells) + 1)[1]:
                return points
        return 0

    def _outlines_closed(self, cell: int) -> int:
        """Wide rings as outlines of two or three single rings around empty cells (AMBIG-D2 b)."""
        board, cells, wide = self.rules.board, self.cells, self.rules.wide_points
        points = 0
        for shapes, at, worth in (
            (board.outline2, board.outline2_at, wide[0]),
            (board.outline3, board.outline3_at, wide[1]),
        ):
            for n in at[cell]:
                hole, ring = shapes[n]
                if all(cells[h] < 0 for h in hole) and all(
                    x == cell or cells[x] >= 0 for x in ring
                ):
                    points += worth
        return points

    def _loops_closed(self, cell: int) -> int:
        """Wide rings as closed side-to-side loops around a hole of 2 or 3 cells (AMBIG-D2 c).

        The loop is every cell sharing a corner with the hole: 14 stones around a rhombus, 16
        around a trapezoid. It closes when its last stone (this one) is laid.
        """
        board, cells, wide = self.rules.board, self.cells, self.rules.wide_points
        points = 0
        seen: set[int] = set()
        for v in board.cell_vertices[cell]:
            for e in board.vertex_cells[v]:
                if e == cell or cells[e] >= 0 or e in seen:
                    continue
                hole, open_ = self._component(e, cell, 4)
                seen |= hole
                if open_ or not 2 <= len(hole) <= 3:
                    continue
                corners = {w for h in hole for w in board.cell_vertices[h]}
                if all(
                    board.vertex_full[w]
                    and all(x == cell or x in hole or cells[x] >= 0 for x in board.vertex_cells[w])
                    for w in corners
                ):
                    points += wide[len(hole) - 2]
        return points


class HasLayout(Protocol):
    """Anything holding a layout, such as a game state."""

    @property
    def layout(self) -> Layout:
        """The stones on the board."""
        ...


def best_placements(state: HasLayout | Layout, stone: str) -> tuple[Placement, ...]:
    """Every legal (cell, rotation) of ``stone`` with its value, best first (RULES §5.4).

    Rotations count from the stone as written. Ties keep board order (top row first).

    >>> from scoring.games.triangles.lattice import make_board, parse_cell
    >>> layout = Layout.empty(Rules(make_board("hexagon:1")))
    >>> layout = layout.place(layout.rules.board.index[parse_cell("U(0,0)")], 0, 0)
    >>> [(p.cell, p.rotation, p.value) for p in best_placements(layout, "000")][:2]
    [('D(-1,0)', 0, -2), ('D(-1,0)', 1, -2)]
    """
    layout = state if isinstance(state, Layout) else state.layout
    number, offset = parse_stone(stone)
    names = layout.rules.board.names
    values: dict[int, Value] = {}
    found: list[tuple[int, int, int, Value]] = []
    for c, r in layout.legal(number):
        v = values.get(c)
        if v is None:
            v = values[c] = layout.value(c)
        found.append((-v.total, c, (r - offset) % 3, v))
    found.sort(key=lambda f: f[:3])
    return tuple(Placement(names[c], r, v.total, v.rings, v.wide, v.rim) for _, c, r, v in found)


def side_names(kind: str) -> tuple[str, str, str]:
    """The names of a cell's sides in clockwise order.

    >>> side_names("U")
    ('bottom', 'left', 'right')
    """
    return UP_SIDES if kind == "U" else DOWN_SIDES


def stone_name(stone: int) -> str:
    """The canonical name of a stone by number."""
    return STONES[stone]
