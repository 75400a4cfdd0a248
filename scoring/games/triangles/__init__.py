"""The Dutch 76-stone triangle game (RULES §5): lattice, stones, placement scoring, turn flow."""

from scoring.games.triangles.game import (
    Move,
    Triangles,
    TrianglesOptions,
    TrianglesState,
    placement_points,
    start_player,
)
from scoring.games.triangles.lattice import Board, Cell, make_board, parse_cell
from scoring.games.triangles.placement import Layout, Placement, Rules, Value, best_placements
from scoring.games.triangles.render import render_board
from scoring.games.triangles.stones import STONES, canonical, pip_value

__all__ = [
    "STONES",
    "Board",
    "Cell",
    "Layout",
    "Move",
    "Placement",
    "Rules",
    "Triangles",
    "TrianglesOptions",
    "TrianglesState",
    "Value",
    "best_placements",
    "canonical",
    "make_board",
    "parse_cell",
    "pip_value",
    "placement_points",
    "render_board",
    "start_player",
]
