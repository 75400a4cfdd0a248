"""The board as text for a terminal, with cell names a player can read off and type.

Each lattice row ``j`` is one line between two lines of horizontal sides. Up cells ``U(i,j)`` are
drawn ``/lbr\\`` (left, bottom, right side values) and down cells ``D(i,j)`` ``\\ltr/`` (left, top,
right), so the values that touch stand next to each other across a slant. An empty cell next to a
stone shows its ``i``; with the row's ``j`` and the cell's shape that is its name. Highlighted
empty cells show ``*`` before ``i``; a highlighted stone has its horizontal side drawn ``=``.
"""

from __future__ import annotations

from collections.abc import Iterable

from scoring.games.triangles.lattice import Cell, parse_cell
from scoring.games.triangles.placement import HasLayout, Layout
from scoring.games.triangles.stones import ROTATED

LABEL = 7  # width of the row labels


def _slot(text: str) -> str:
    return f"{text:^3}"[:3]


def render_board(
    state: HasLayout | Layout, *, highlight: Iterable[str | Cell] | None = None
) -> str:
    """The board drawn in text: stones with their side values, empty cells by name (see module).

    >>> from scoring.games.triangles.lattice import make_board
    >>> from scoring.games.triangles.placement import Rules
    >>> layout = Layout.empty(Rules(make_board("hexagon:1")))
    >>> layout = layout.place(layout.rules.board.names.index("U(0,0)"), 5, 0)
    >>> print(render_board(layout, highlight=["D(0,-1)"]))  # doctest: +NORMALIZE_WHITESPACE
    up U(i,j) = /left bottom right\\  down D(i,j) = \\left top right/  (row j, i inside)
                _______
    j= 0     / . \\-1 /005\\
            _______ _______
    j=-1     \\ . / . \\*0 /
                _______
    """
    layout = state if isinstance(state, Layout) else state.layout
    board = layout.rules.board
    marked = {parse_cell(h) if isinstance(h, str) else h for h in highlight or ()}
    near = set(layout.candidates())
    xs = [2 * i + j for i, j in board.vertices]
    left = min(xs)
    width = 4 * (max(xs) - left) + 9
    rows = sorted({c.j for c in board.cells}, reverse=True)

    def col(x: int) -> int:
        return 4 * (x - left)

    def on(kind: str, i: int, j: int) -> int:
        return board.index.get(Cell(kind, i, j), -1)

    def edge(y: int) -> str:
        line = [" "] * width
        seen: set[int] = set()
        for kind, i, j in board.cells:
            key_i = i
            if (kind == "U" and j == y) or (kind == "D" and j == y - 1):
                if key_i in seen:
                    continue
                seen.add(key_i)
                above, below = on("U", key_i, y), on("D", key_i, y - 1)
                hot = any(
                    c >= 0 and layout.cells[c] >= 0 and board.cells[c] in marked
                    for c in (above, below)
                )
                x = col(2 * key_i + y)
                line[x + 1 : x + 8] = "=======" if hot else "_______"
        return (" " * LABEL + "".join(line)).rstrip()

    def interior(c: int) -> str:
        cell = board.cells[c]
        code = layout.cells[c]
        if code >= 0:
            stone, rotation = divmod(code, 3)
            s = ROTATED[stone][rotation]
            # Read left to right: left side, the horizontal side, right side.
            return f"{s[1]}{s[0]}{s[2]}" if cell.kind == "U" else f"{s[2]}{s[0]}{s[1]}"
        if cell in marked:
            return f"*{cell.i:<2}"[:3]
        return _slot(str(cell.i)) if c in near else " . "

    def middle(j: int) -> str:
        line = [" "] * width
        for c, cell in enumerate(board.cells):
            if cell.j != j:
                continue
            x0 = col(2 * cell.i + j)
            if cell.kind == "U":
                line[x0 + 2], line[x0 + 3 : x0 + 6], line[x0 + 6] = "/", interior(c), "\\"
            else:
                line[x0 + 6], line[x0 + 7 : x0 + 10], line[x0 + 10] = "\\", interior(c), "/"
        return f"j={j:>2}".ljust(LABEL) + "".join(line).rstrip()

    lines = [
        "up U(i,j) = /left bottom right\\  down D(i,j) = \\left top right/  (row j, i inside)",
        edge(rows[0] + 1),
    ]
    for j in rows:
        lines.append(middle(j))
        lines.append(edge(j))
    return "\n".join(lines)
