"""The triangular lattice of RULES §5.2: cells ``U(i,j)``/``D(i,j)``, sides, vertices, board shapes.

Vertices are integer pairs ``(i,j)`` at Cartesian ``(i + j/2, j·√3/2)``. An up cell ``U(i,j)`` has
the vertices ``(i,j), (i+1,j), (i,j+1)`` and its sides, clockwise, are bottom, left, right; a down
cell ``D(i,j)`` has ``(i+1,j), (i,j+1), (i+1,j+1)`` and top, right, left. Side ``k`` of an up cell
always touches side ``k`` of a down cell (bottom-top, left-right, right-left), which keeps matching
a comparison of equal indices.

A ``Board`` is a finite set of cells with every neighbour, vertex and ring table precomputed once,
so that scoring a placement is a handful of tuple look-ups.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import NamedTuple, TypeAlias

from scoring.errors import InvalidAction, InvalidOption, Setup

Vertex: TypeAlias = tuple[int, int]

UP_SIDES = ("bottom", "left", "right")
DOWN_SIDES = ("top", "right", "left")

# Coordinates are kept in the range the text board can show in a three-character slot.
MIN_COORD, MAX_COORD = -9, 99


class Cell(NamedTuple):
    """One small triangle: ``kind`` "U" (pointing up) or "D" (pointing down) and its indices."""

    kind: str
    i: int
    j: int

    def __str__(self) -> str:
        return f"{self.kind}({self.i},{self.j})"


_CELL_RE = re.compile(r"\s*([UuDd])\s*\(\s*([+-]?\d+)\s*,\s*([+-]?\d+)\s*\)\s*")


def parse_cell(text: str) -> Cell:
    """The cell a player wrote, as ``U(i,j)`` or ``D(i,j)`` (case and spaces do not matter).

    >>> parse_cell("U(0,0)"), str(parse_cell(" d( -1, 2 ) "))
    (Cell(kind='U', i=0, j=0), 'D(-1,2)')
    """
    m = _CELL_RE.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise InvalidAction(
            f"a cell is written U(i,j) or D(i,j), like U(0,0) or D(-1,2), not {text!r}"
        )
    return Cell(m.group(1).upper(), int(m.group(2)), int(m.group(3)))


def neighbours(cell: Cell) -> tuple[Cell, Cell, Cell]:
    """The three cells across the sides of ``cell``, in its clockwise side order.

    >>> [str(c) for c in neighbours(Cell("U", 0, 0))]
    ['D(0,-1)', 'D(-1,0)', 'D(0,0)']
    """
    kind, i, j = cell
    if kind == "U":
        return Cell("D", i, j - 1), Cell("D", i - 1, j), Cell("D", i, j)
    return Cell("U", i, j + 1), Cell("U", i + 1, j), Cell("U", i, j)


def vertices(cell: Cell) -> tuple[Vertex, Vertex, Vertex]:
    """The three corners of ``cell``.

    >>> vertices(Cell("D", 0, 0))
    ((1, 0), (0, 1), (1, 1))
    """
    kind, i, j = cell
    if kind == "U":
        return (i, j), (i + 1, j), (i, j + 1)
    return (i + 1, j), (i, j + 1), (i + 1, j + 1)


def cells_around(vertex: Vertex) -> tuple[Cell, ...]:
    """The six cells that meet at a vertex: one single ring.

    >>> [str(c) for c in cells_around((0, 0))]
    ['U(0,0)', 'U(-1,0)', 'U(0,-1)', 'D(-1,0)', 'D(0,-1)', 'D(-1,-1)']
    """
    i, j = vertex
    return (
        Cell("U", i, j),
        Cell("U", i - 1, j),
        Cell("U", i, j - 1),
        Cell("D", i - 1, j),
        Cell("D", i, j - 1),
        Cell("D", i - 1, j - 1),
    )


def column(cell: Cell) -> int:
    """The cell's centre in half-units along its row (left to right), for drawing and ordering."""
    return 2 * cell.i + cell.j + (1 if cell.kind == "U" else 2)


def _hex_distance(v: Vertex) -> int:
    return max(abs(v[0]), abs(v[1]), abs(v[0] + v[1]))


def hexagon_cells(side: int) -> list[Cell]:
    """The 6·side² cells of the regular hexagon of that side around vertex (0,0).

    >>> len(hexagon_cells(4))
    96
    """
    out = []
    for j in range(-side, side):
        for i in range(-2 * side, 2 * side):
            for kind in "UD":
                cell = Cell(kind, i, j)
                if all(_hex_distance(v) <= side for v in vertices(cell)):
                    out.append(cell)
    return out


def triangle_cells(side: int) -> list[Cell]:
    """The side² cells of the big up-pointing triangle with corners (0,0), (side,0), (0,side).

    >>> len(triangle_cells(8))
    64
    """
    out = [Cell("U", i, j) for j in range(side) for i in range(side - j)]
    out += [Cell("D", i, j) for j in range(side - 1) for i in range(side - 1 - j)]
    return out


def rhombus_cells(width: int, height: int) -> list[Cell]:
    """The 2·width·height cells of the rhombus from (0,0): ``width`` along i, ``height`` along j.

    >>> len(rhombus_cells(6, 6))
    72
    """
    return [Cell(k, i, j) for j in range(height) for i in range(width) for k in "UD"]


BOARD_HELP = (
    'write hexagon:N (N 1-9), triangle:N (N 2-20) or rhombus:AxB (A and B 1-20), e.g. "hexagon:4"'
)

_SHAPE_RE = re.compile(r"(hexagon|triangle|rhombus)(?::(\d+)(?:x(\d+))?)?")


def shape_cells(spec: str) -> list[Cell]:
    """The cells of a named board shape such as "hexagon:4", "triangle:8" or "rhombus:6x4".

    >>> len(shape_cells("hexagon:5")), len(shape_cells("rhombus:6x4")), len(shape_cells("triangle"))
    (150, 48, 64)
    """
    m = _SHAPE_RE.fullmatch(spec.strip().lower())
    if m is None:
        raise InvalidOption(
            f"unknown board {spec!r}; {BOARD_HELP}",
            code=Setup.BOARD_SHAPE,
            params={"option": "board", "value": spec},
        )
    shape, a, b = m.group(1), m.group(2), m.group(3)
    if shape == "hexagon" and b is None:
        side = int(a) if a else 4
        if 1 <= side <= 9:
            return hexagon_cells(side)
    elif shape == "triangle" and b is None:
        side = int(a) if a else 8
        if 2 <= side <= 20:
            return triangle_cells(side)
    elif shape == "rhombus":
        width = int(a) if a else 6
        height = int(b) if b else width
        if 1 <= width <= 20 and 1 <= height <= 20:
            return rhombus_cells(width, height)
    raise InvalidOption(
        f"board {spec!r} has no such size; {BOARD_HELP}",
        code=Setup.BOARD_SHAPE,
        params={"option": "board", "value": spec},
    )


def listed_cells(text: str) -> list[Cell]:
    """The cells of a ``board_cells`` option: cell names separated by spaces or semicolons.

    >>> [str(c) for c in listed_cells("U(0,0) D(0,0); U(1,0)")]
    ['U(0,0)', 'D(0,0)', 'U(1,0)']
    """
    words = [w for w in re.split(r"[\s;]+(?![^()]*\))", text.strip()) if w]
    cells = []
    for word in words:
        try:
            cells.append(parse_cell(word))
        except InvalidAction as exc:
            raise InvalidOption(
                f"board_cells: {exc}",
                code=Setup.BOARD_CELL,
                params={"option": "board_cells", "cell": word},
            ) from exc
    if not cells:
        raise InvalidOption(
            'board_cells lists no cells; write them like "U(0,0) D(0,0) U(1,0)"',
            code=Setup.OPTION_FORMAT,
            params={"option": "board_cells", "value": text, "example": "U(0,0) D(0,0) U(1,0)"},
        )
    seen: set[Cell] = set()
    for cell in cells:
        if cell in seen:
            raise InvalidOption(
                f"board_cells lists {cell} twice",
                code=Setup.CELL_TWICE,
                params={"option": "board_cells", "cell": str(cell)},
            )
        seen.add(cell)
    return cells


class Board:
    """A finite set of cells with its lookup tables; boards are built once per shape and shared.

    Cells are numbered in reading order (top row first, left to right). ``nb[c][k]`` is the cell
    across side ``k`` of cell ``c`` or -1 off the board; ``ring_cells[v]`` holds the six cells
    around vertex ``v`` when all six are on the board (only there can a ring close).
    """

    __slots__ = (
        "cell_vertices",
        "cells",
        "index",
        "names",
        "nb",
        "outline2",
        "outline2_at",
        "outline3",
        "outline3_at",
        "rim",
        "ring_cells",
        "spec",
        "vertex_cells",
        "vertex_full",
        "vertex_index",
        "vertices",
    )

    def __init__(self, spec: str, cells: Iterable[Cell]) -> None:
        ordered = sorted(set(cells), key=lambda c: (-c.j, column(c)))
        for cell in ordered:
            if not (MIN_COORD <= cell.i <= MAX_COORD and MIN_COORD <= cell.j <= MAX_COORD):
                raise InvalidOption(
                    f"cell {cell} is too far out; coordinates run from {MIN_COORD} to {MAX_COORD}",
                    code=Setup.CELL_TOO_FAR,
                    params={
                        "option": "board_cells",
                        "cell": str(cell),
                        "least": MIN_COORD,
                        "most": MAX_COORD,
                    },
                )
        self.spec = spec
        self.cells: tuple[Cell, ...] = tuple(ordered)
        self.index: dict[Cell, int] = {c: n for n, c in enumerate(ordered)}
        self.names: tuple[str, ...] = tuple(str(c) for c in ordered)
        self.nb: tuple[tuple[int, int, int], ...] = tuple(
            (self._at(a), self._at(b), self._at(c))
            for a, b, c in (neighbours(cell) for cell in ordered)
        )
        self.rim: tuple[bool, ...] = tuple(-1 in n for n in self.nb)
        verts = sorted({v for c in ordered for v in vertices(c)}, key=lambda v: (-v[1], v[0]))
        self.vertices: tuple[Vertex, ...] = tuple(verts)
        self.vertex_index: dict[Vertex, int] = {v: n for n, v in enumerate(verts)}
        self.cell_vertices: tuple[tuple[int, int, int], ...] = tuple(
            (self.vertex_index[a], self.vertex_index[b], self.vertex_index[c])
            for a, b, c in (vertices(cell) for cell in ordered)
        )
        self.vertex_cells: tuple[tuple[int, ...], ...] = tuple(
            tuple(self.index[c] for c in cells_around(v) if c in self.index) for v in verts
        )
        self.vertex_full: tuple[bool, ...] = tuple(len(vc) == 6 for vc in self.vertex_cells)
        self.ring_cells = self.vertex_cells
        self._build_outlines()

    def _at(self, cell: Cell) -> int:
        return self.index.get(cell, -1)

    def _build_outlines(self) -> None:
        """Tables for ``wide_ring_mode = outline`` (RULES §5.8, AMBIG-D2 reading b).

        A wide ring of two is the outline of two single rings around the ends of one edge: the
        eight cells around both ends, the two cells on the edge left empty (a rhombus). A wide ring
        of three is the outline of three single rings around the corners of one cell: nine cells,
        that cell and its three side-neighbours (a big triangle of four) left empty.
        """
        n_cells = len(self.cells)
        two: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
        for a, va in enumerate(self.vertices):
            if not self.vertex_full[a]:
                continue
            for di, dj in ((1, 0), (0, 1), (-1, 1)):
                b = self.vertex_index.get((va[0] + di, va[1] + dj))
                if b is None or not self.vertex_full[b]:
                    continue
                around_a, around_b = set(self.vertex_cells[a]), set(self.vertex_cells[b])
                hole = tuple(sorted(around_a & around_b))
                ring = tuple(sorted((around_a | around_b) - set(hole)))
                two.append((hole, ring))
        three: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
        for c in range(n_cells):
            corners = self.cell_vertices[c]
            if not all(self.vertex_full[v] for v in corners):
                continue
            union = set().union(*(self.vertex_cells[v] for v in corners))
            hole = tuple(sorted({c, *self.nb[c]}))
            ring = tuple(sorted(union - set(hole)))
            three.append((hole, ring))
        self.outline2 = tuple(two)
        self.outline3 = tuple(three)
        self.outline2_at = _index_by_ring_cell(two, n_cells)
        self.outline3_at = _index_by_ring_cell(three, n_cells)

    def __len__(self) -> int:
        return len(self.cells)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Board) and other.spec == self.spec

    def __hash__(self) -> int:
        return hash(self.spec)

    def __repr__(self) -> str:
        return f"Board({self.spec!r}, {len(self.cells)} cells)"

    def cell_index(self, cell: Cell) -> int:
        """The number of an on-board cell, or -1 when the cell is not on this board."""
        return self.index.get(cell, -1)


def _index_by_ring_cell(
    shapes: list[tuple[tuple[int, ...], tuple[int, ...]]], n_cells: int
) -> tuple[tuple[int, ...], ...]:
    at: list[list[int]] = [[] for _ in range(n_cells)]
    for n, (_, ring) in enumerate(shapes):
        for c in ring:
            at[c].append(n)
    return tuple(tuple(x) for x in at)


@functools.lru_cache(maxsize=32)
def make_board(shape: str, cells: str | None = None) -> Board:
    """The board of the ``board`` option, or of an explicit ``board_cells`` list when given.

    >>> make_board("hexagon:4")
    Board('hexagon:4', 96 cells)
    """
    if cells is not None:
        listed = listed_cells(cells)
        return Board(" ".join(str(c) for c in listed), listed)
    return Board(shape.strip().lower(), shape_cells(shape))
