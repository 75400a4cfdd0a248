"""The triangle-stone game (RULES §5): every test vector D01–D17, the options and whole games."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import pytest

from scoring.core import Action, Draw, Pass, Phase, Place
from scoring.errors import IllegalAction, InvalidAction, InvalidOption
from scoring.games.triangles import (
    STONES,
    Cell,
    Layout,
    Rules,
    Triangles,
    TrianglesState,
    best_placements,
    make_board,
    parse_cell,
    pip_value,
    render_board,
    start_player,
)
from scoring.games.triangles.lattice import cells_around, neighbours, vertices
from scoring.games.triangles.placement import WideMode, sides_fit
from scoring.games.triangles.stones import STONE_INDEX, canonical, rotate
from scoring.registry import find_game

HEX4 = make_board("hexagon:4")


def play(game: Triangles, state: TrianglesState, *actions: Action) -> TrianglesState:
    """Apply actions in order."""
    for action in actions:
        state = game.apply(state, action)
    return state


def lay(game: Triangles, state: TrianglesState, stone: str, cell: str, rotation: int) -> Any:
    """The player to move draws ``stone`` and lays it."""
    return play(game, state, Draw(stone), Place(stone, cell, rotation))


def layout_with(cells: Iterable[str | Cell], mode: WideMode = "hole_size") -> Layout:
    """A hexagon-4 layout with some stone in each cell (geometry vectors ignore matching)."""
    layout = Layout.empty(Rules(HEX4, wide_mode=mode))
    for cell in cells:
        c = HEX4.index[parse_cell(cell) if isinstance(cell, str) else cell]
        layout = layout.place(c, 0, 0)
    return layout


def value_of(layout: Layout, cell: str) -> tuple[int, int, int]:
    """(rings, wide rings, rim) of laying a stone in ``cell``."""
    v = layout.value(HEX4.index[parse_cell(cell)])
    return v.rings, v.wide, v.rim


def corner_sharing(*cells: Cell) -> set[Cell]:
    """Every cell sharing a corner with one of ``cells``, the cells themselves excluded."""
    around = {c for cell in cells for v in vertices(cell) for c in cells_around(v)}
    return around - set(cells)


# -- stones ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stone", "pips"),
    [
        pytest.param("045", 15, id="D01"),
        pytest.param("123", 6, id="D02"),
        pytest.param("450", 15, id="D01-rotated"),
        pytest.param("000", 18, id="three-zeros"),
    ],
)
def test_pip_value(stone: str, pips: int) -> None:
    """A stone counts the sum of its sides, 0 counting 6."""
    assert pip_value(stone) == pips


def test_d03_seventy_six_one_sided_stones() -> None:
    """D03: 76 distinct stones up to rotation (not reflection): 6 aaa, 30 aab, 40 abc."""
    kinds = [len(set(s)) for s in STONES]
    assert (len(STONES), kinds.count(1), kinds.count(2), kinds.count(3)) == (76, 6, 30, 40)
    assert "045" in STONES
    assert "054" in STONES  # its mirror image is a different stone
    assert sum(pip_value(s) for s in STONES) == 798


@pytest.mark.parametrize("written", ["045", "450", "504"])
def test_a_stone_may_be_written_from_any_side(written: str) -> None:
    """A stone written 045, 450 or 504 is one stone; its mirror 054 is another."""
    assert canonical(written) == "045"
    assert canonical("540") == "054"
    assert rotate(written, 3) == written


@pytest.mark.parametrize("bad", ["046", "12", "1234", "abc", ""])
def test_malformed_stone(bad: str) -> None:
    """A stone outside 0-5 or not three sides is malformed input."""
    game = Triangles()
    with pytest.raises(InvalidAction, match="a stone is its three side values 0-5 clockwise"):
        game.apply(game.initial_state(["A", "B"]), Draw(bad))


# -- geometry ----------------------------------------------------------------------------------


def test_neighbours_are_mutual_with_equal_side_index() -> None:
    """Side k of a cell touches side k of its neighbour, and the neighbour's side k comes back."""
    for cell in HEX4.cells:
        for k, other in enumerate(neighbours(cell)):
            assert neighbours(other)[k] == cell
            shared = set(vertices(cell)) & set(vertices(other))
            assert len(shared) == 2


@pytest.mark.parametrize(
    ("spec", "cells"),
    [
        ("hexagon:4", 96),
        ("hexagon:5", 150),
        ("hexagon:1", 6),
        ("triangle:8", 64),
        ("rhombus:6x6", 72),
        ("rhombus:3x5", 30),
    ],
)
def test_board_shapes(spec: str, cells: int) -> None:
    """Board sizes follow 6N² (hexagon), N² (triangle) and 2AB (rhombus)."""
    assert len(make_board(spec)) == cells
    assert len(Triangles.from_json({"board": spec}).board) == cells


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"board": "square:4"},
            "unknown board 'square:4'; write hexagon:N (N 1-9), triangle:N (N 2-20) or "
            'rhombus:AxB (A and B 1-20), e.g. "hexagon:4"',
        ),
        (
            {"board": "hexagon:12"},
            "board 'hexagon:12' has no such size; write hexagon:N (N 1-9), triangle:N (N 2-20) "
            'or rhombus:AxB (A and B 1-20), e.g. "hexagon:4"',
        ),
        ({"board_cells": "U(0,0) X(1,1)"}, "board_cells: a cell is written U(i,j) or D(i,j)"),
        ({"board_cells": "U(0,0) u(0, 0)"}, "board_cells lists U(0,0) twice"),
        ({"ring_points": "5/15"}, "ring_points takes 3 numbers like '5/15/25', not '5/15'"),
        ({"rim_penalty": -1}, "option rim_penalty takes a whole number of at least 0, not -1"),
        ({"deal": 0}, 'deal takes "equal" or a number of stones 1-76, not 0'),
        ({"match": "sum8"}, "option match takes equal | sum7, not 'sum8'"),
    ],
)
def test_bad_options(options: dict[str, Any], message: str) -> None:
    """Wrong option values are refused with a message that says what is allowed."""
    with pytest.raises(InvalidOption, match=None) as info:
        Triangles.from_json(options)
    assert str(info.value).startswith(message)


def test_explicit_board_cells() -> None:
    """``board_cells`` lists the board cell by cell; a strip of three is all rim."""
    game = Triangles.from_json({"board_cells": "U(0,0) D(0,0) U(1,0)"})
    assert game.board.names == ("U(0,0)", "D(0,0)", "U(1,0)")
    assert game.board.rim == (True, True, True)


# -- matching: D04-D06 -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "match", "fits"),
    [
        pytest.param(2, 2, "equal", True, id="D04-2-2-equal"),
        pytest.param(2, 5, "equal", False, id="D04-2-5-equal"),
        pytest.param(2, 2, "sum7", False, id="D04-2-2-sum7"),
        pytest.param(2, 5, "sum7", True, id="D04-2-5-sum7"),
        pytest.param(0, 1, "sum7", True, id="D05"),
        pytest.param(3, 4, "sum7", True, id="sum7-3-4"),
        pytest.param(0, 0, "sum7", False, id="sum7-0-0"),
    ],
)
def test_sides_fit(a: int, b: int, match: Any, fits: bool) -> None:
    """Touching sides: equal values, or with ``sum7`` values adding to 7 (0 counts 6)."""
    assert sides_fit(a, b, match) is fits
    assert sides_fit(b, a, match) is fits


@pytest.fixture
def d06() -> tuple[Triangles, TrianglesState]:
    """D06: U(0,0) holds (1,2,3) at r0: bottom 1, left 2, right 3; 345 is in hand."""
    game = Triangles()
    state = lay(game, game.initial_state(["A", "B"]), "123", "U(0,0)", 0)
    return game, game.apply(state, Draw("345"))


def test_d06_left_side_meets_right_side(d06: tuple[Triangles, TrianglesState]) -> None:
    """D06: 345 in D(0,0) at r1 has left 3 against U(0,0)'s right 3: legal."""
    game, state = d06
    after = game.apply(state, Place("345", "D(0,0)", 1))
    desc = game.describe(after)
    entry = {k: v for k, v in desc["board"][1].items() if k != "sides"}
    assert entry == {"cell": "D(0,0)", "stone": "345", "rotation": 1}
    assert desc["board"][1]["sides"] == {"top": 4, "right": 5, "left": 3}


def test_d06_mismatch_is_refused(d06: tuple[Triangles, TrianglesState]) -> None:
    """D06: at r0 the left side 5 would lie against 3: refused, naming both sides."""
    game, state = d06
    with pytest.raises(IllegalAction) as info:
        game.apply(state, Place("345", "D(0,0)", 0))
    assert str(info.value) == (
        "cannot place 345 at D(0,0) r0: its left side 5 would lie against 3 of U(0,0) "
        "(touching sides must be equal)"
    )


def test_d06_rotation_counts_from_the_stone_as_written(
    d06: tuple[Triangles, TrianglesState],
) -> None:
    """Writing the stone from its second side ("453") shifts the rotation by one."""
    game, state = d06
    after = game.apply(state, Place("453", "D(0,0)", 0))
    assert game.describe(after)["board"][1]["sides"] == {"top": 4, "right": 5, "left": 3}
    listed = game.legal_actions(state)
    assert Place("345", "D(0,0)", 1) in listed
    assert Place("345", "D(0,0)", 0) not in listed


def test_sum7_placement() -> None:
    """With ``sum7`` 045 fits next to a 3 with its 4 (4 + 3 = 7), and not with equal sides."""
    for match, ok in (("sum7", True), ("equal", False)):
        game = Triangles.from_json({"match": match})
        state = lay(game, game.initial_state(["A", "B"]), "123", "U(0,0)", 0)
        state = game.apply(state, Draw("045"))
        assert game.is_legal(state, Place("045", "D(0,0)", 2)) is ok


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (Place("345", "U(9,9)", 0), "cannot place 345 at U(9,9): that cell is not on the board"),
        (Place("345", "U(0,0)", 0), "cannot place 345 at U(0,0): 123 already lies there"),
        (Place("345", "U(1,1)", 0), "cannot place 345 at U(1,1): it touches no stone along a side"),
        (Place("111", "D(0,0)", 0), "cannot place 111: the stone in hand is 345"),
        (Draw("111"), "cannot draw 111: B holds 345; place it or pass"),
        (Pass(), "cannot pass: 345 fits, e.g. at "),
    ],
)
def test_illegal_actions_say_why(
    d06: tuple[Triangles, TrianglesState], action: Action, message: str
) -> None:
    """Refusals name the reason; the state is unchanged (it is frozen)."""
    game, state = d06
    with pytest.raises(IllegalAction) as info:
        game.apply(state, action)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (Place("345", "X(0,0)", 0), "a cell is written U(i,j) or D(i,j)"),
        (Place("345", "D(0,0)", 3), "a rotation is 0, 1 or 2, not 3"),
    ],
)
def test_malformed_place(
    d06: tuple[Triangles, TrianglesState], action: Action, message: str
) -> None:
    """A cell that is no cell name, or a rotation other than 0-2, is malformed input."""
    game, state = d06
    with pytest.raises(InvalidAction, match=message.replace("(", r"\(").replace(")", r"\)")):
        game.apply(state, action)


# -- scoring geometry: D07-D14 -----------------------------------------------------------------

D08_CELLS = (set(cells_around((0, 0))) | set(cells_around((1, 0)))) - {Cell("U", 0, 0)}
D09_CELLS = corner_sharing(Cell("U", 0, 0))
D11_CELLS = ["D(-1,0)", "D(0,-1)", "U(0,1)", "D(1,0)"]


@pytest.mark.parametrize(
    ("occupied", "cell", "expected"),
    [
        pytest.param(
            ["U(-1,0)", "U(0,-1)", "D(-1,0)", "D(0,-1)", "D(-1,-1)"], "U(0,0)", (5, 0, 0), id="D07"
        ),
        pytest.param(sorted(D08_CELLS), "U(0,0)", (15, 0, 0), id="D08"),
        pytest.param(sorted(D09_CELLS), "U(0,0)", (25, 0, 0), id="D09"),
        pytest.param(["D(-1,0)", "D(0,-1)", "U(1,0)"], "U(0,1)", (0, 3, 0), id="D10"),
        pytest.param(D11_CELLS, "D(1,-1)", (0, 8, 0), id="D11"),
        pytest.param(["D(-1,0)", "D(0,-1)"], "D(0,0)", (0, 0, 0), id="D12"),
        pytest.param([*D11_CELLS, "D(1,-1)"], "U(1,0)", (0, 0, 0), id="D13"),
        pytest.param([], "U(-4,3)", (0, 0, -2), id="D14"),
        pytest.param(["D(-4,2)"], "U(-4,3)", (0, 0, -2), id="D14-next-to-a-stone"),
    ],
)
def test_placement_value(occupied: list[Any], cell: str, expected: tuple[int, int, int]) -> None:
    """Rings, wide rings (hole size) and the rim penalty of one placement."""
    assert value_of(layout_with(occupied), cell) == expected


def test_d08_and_d09_cell_counts() -> None:
    """The D08 and D09 set-ups have the 9 and 12 stones the vectors say."""
    assert (len(D08_CELLS), len(D09_CELLS)) == (9, 12)
    assert {Cell("U", 0, 1), Cell("U", -1, 1), Cell("D", -1, 1)}.isdisjoint(D08_CELLS)


def test_d14_first_stone_on_the_rim() -> None:
    """D14 in play: the first stone on the rim scores -2 (best 0, so no further penalty)."""
    game = Triangles()
    state = lay(game, game.initial_state(["A", "B"]), "045", "U(-4,3)", 0)
    assert game.totals(state) == (-2, 0)
    assert state.moves[-1].best == 0


# -- wide-ring readings (AMBIG-D2) ---------------------------------------------------------------

RHOMBUS = (Cell("U", 0, 0), Cell("D", 0, 0))
TRAPEZOID = (Cell("U", 0, 0), Cell("D", 0, 0), Cell("U", 1, 0))
BIG_TRIANGLE = (Cell("U", 0, 0), *neighbours(Cell("U", 0, 0)))


def closing(ring: set[Cell], mode: WideMode) -> tuple[int, int, int]:
    """The value of laying the last stone of ``ring`` (the others already lie)."""
    last = max(ring)
    return value_of(layout_with(ring - {last}, mode), str(last))


@pytest.mark.parametrize(
    ("mode", "ring", "stones", "points"),
    [
        pytest.param(
            "outline",
            (set(cells_around((1, 0))) | set(cells_around((0, 1)))) - set(RHOMBUS),
            8,
            3,
            id="outline-two",
        ),
        pytest.param(
            "outline", corner_sharing(Cell("U", 0, 0)) - set(BIG_TRIANGLE), 9, 8, id="outline-three"
        ),
        pytest.param("loop", corner_sharing(*RHOMBUS), 14, 3, id="loop-two"),
        pytest.param("loop", corner_sharing(*TRAPEZOID), 16, 8, id="loop-three"),
    ],
)
def test_wide_ring_modes(mode: WideMode, ring: set[Cell], stones: int, points: int) -> None:
    """RULES §5.8 readings b and c: the stone counts of the vectors, and the points on closing."""
    assert len(ring) == stones
    assert closing(ring, mode) == (0, points, 0)


@pytest.mark.parametrize("mode", ["outline", "loop"])
def test_wide_ring_modes_do_not_count_a_bare_hole(mode: WideMode) -> None:
    """The 4-stone D10 seal scores in ``hole_size`` only."""
    layout = layout_with(["D(-1,0)", "D(0,-1)", "U(1,0)"], mode)
    assert value_of(layout, "U(0,1)") == (0, 0, 0)


# -- the best-placement obligation: D15 --------------------------------------------------------

# A legal game of 17 stones in which 012 closes three rings at U(0,0) (25) and one at U(-2,3) (5).
D15_STONES = [
    ("D(-2,2)", "031", 0),
    ("U(-1,2)", "355", 2),
    ("D(-1,1)", "053", 1),
    ("D(-1,2)", "035", 0),
    ("U(0,1)", "234", 0),
    ("U(-1,1)", "014", 1),
    ("U(-1,3)", "042", 0),
    ("D(0,0)", "224", 1),
    ("D(-1,0)", "111", 0),
    ("D(-2,3)", "254", 1),
    ("U(1,0)", "045", 0),
    ("U(-1,0)", "112", 1),
    ("D(1,-1)", "054", 0),
    ("D(-1,-1)", "152", 0),
    ("U(1,-1)", "445", 1),
    ("U(0,-1)", "025", 1),
    ("D(0,-1)", "005", 1),
]


def d15_state(options: dict[str, Any] | None = None) -> tuple[Triangles, TrianglesState]:
    """The D15 board, with B to lay 012."""
    game = Triangles.from_json(options or {})
    state = game.initial_state(["A", "B"])
    for cell, stone, rotation in D15_STONES:
        state = lay(game, state, stone, cell, rotation)
    return game, game.apply(state, Draw("012"))


def test_d15_best_placements() -> None:
    """012 is worth 25 at U(0,0) and 5 at U(-2,3); the list is best first."""
    _, state = d15_state()
    places = best_placements(state, "012")
    assert (places[0].cell, places[0].rotation, places[0].value) == ("U(0,0)", 0, 25)
    assert [p.value for p in places] == sorted((p.value for p in places), reverse=True)
    assert ("U(-2,3)", 0, 5) in [(p.cell, p.rotation, p.value) for p in places]
    # Written from another side, the rotations shift with it.
    assert best_placements(state, "120")[0].rotation == 2


@pytest.mark.parametrize(
    ("penalty", "points"),
    [
        pytest.param("on", -20, id="D15"),
        pytest.param("difference", -15, id="D15-difference"),
        pytest.param("off", 5, id="D15-off"),
    ],
)
def test_d15_closing_one_ring_where_three_were_possible(penalty: str, points: int) -> None:
    """D15: 5 for the ring, minus 25 that could have been earned: -20 (other modes in kind)."""
    game, state = d15_state({"best_placement_penalty": penalty})
    before = game.totals(state)[1]
    after = game.apply(state, Place("012", "U(-2,3)", 0))
    assert game.totals(after)[1] - before == points
    assert (after.moves[-1].value, after.moves[-1].best) == (5, 25)


def test_d15_the_best_placement_scores_in_full() -> None:
    """Laying 012 where it closes three rings earns the 25 without penalty."""
    game, state = d15_state()
    before = game.totals(state)[1]
    after = game.apply(state, Place("012", "U(0,0)", 0))
    assert game.totals(after)[1] - before == 25


def test_describe_shows_the_best_placements() -> None:
    """describe: the stone in hand, its best placements first, stones left, JSON only."""
    game, state = d15_state()
    desc = game.describe(state)
    assert desc["hand"] == "012"
    assert desc["best_placements"][0] == {
        "cell": "U(0,0)",
        "rotation": 0,
        "value": 25,
        "rings": 25,
        "wide": 0,
        "rim": 0,
    }
    assert desc["stones_left"] == [38 - 9, 38 - 8]
    assert len(desc["board"]) == 17
    assert game.state_json(state)["to_move"] == "B"


REPORTED = (  # the tester's game: B then draws 005, which closes a ring only at D(0,-1)
    ("035", "U(0,0)", 0),
    ("345", "D(-1,0)", 2),
    ("044", "U(-1,0)", 2),
    ("245", "D(-1,-1)", 1),
    ("455", "U(0,-1)", 0),
)


@pytest.mark.parametrize(
    ("cell", "rotation", "points"),
    [
        pytest.param("D(0,-1)", 0, 5, id="the-ring"),
        pytest.param("D(-2,0)", 0, -5, id="below-best"),
        pytest.param("D(0,0)", 0, -5, id="below-best-2"),
    ],
)
def test_describe_gives_every_placement_the_points_it_scores(
    cell: str, rotation: int, points: int
) -> None:
    """Each placement of the stone in hand is listed with what laying it scores, not only the
    best five: a placement below the best costs the best (RULES §5.4 step 5)."""
    game = Triangles()
    state = game.initial_state(["A", "B"])
    for stone, at, r in REPORTED:
        state = lay(game, state, stone, at, r)
    state = game.apply(state, Draw("005"))
    shown = {(p["cell"], p["rotation"]): p["points"] for p in game.describe(state)["placements"]}
    assert len(shown) == len(game.legal_actions(state))
    assert shown[(cell, rotation)] == points
    after = game.apply(state, Place("005", cell, rotation))
    assert after.scores[1] - state.scores[1] == points


# -- set-up, turns and the end: D16, D17 -------------------------------------------------------


@pytest.mark.parametrize(
    ("revealed", "starters"),
    [
        pytest.param(["045", "123"], (0,), id="D17"),
        pytest.param(["123", "045"], (1,), id="D17-swapped"),
        pytest.param(["000", "555", "123"], (0,), id="zeros-count-six"),
        pytest.param(["045", "540", "123"], (0, 1), id="tie"),
    ],
)
def test_start_player(revealed: list[str], starters: tuple[int, ...]) -> None:
    """D17: the highest pip value begins; a tie names every tied seat."""
    assert start_player(revealed) == starters


@pytest.mark.parametrize(
    ("players", "each", "out"),
    [(2, 38, 0), (3, 25, 1), (4, 19, 0), (5, 15, 1), (6, 12, 4)],
)
def test_dealing(players: int, each: int, out: int) -> None:
    """``deal = equal``: 76 // n each, the remainder (0, 1, 0, 1, 4) out of play."""
    game = Triangles()
    state = game.initial_state([f"P{i}" for i in range(players)])
    assert state.counts == (each,) * players
    assert state.out_of_play == out
    assert len(game.legal_actions(state)) == 76


@pytest.mark.parametrize("players", [1, 7])
def test_player_count(players: int) -> None:
    """Two to six players (RULES §5.1)."""
    with pytest.raises(InvalidAction, match=f"played by 2 to 6 players, not {players}"):
        Triangles().initial_state([f"P{i}" for i in range(players)])


def test_deal_by_number() -> None:
    """``deal = 10``: ten stones each, the rest out of play; too many for the set is refused."""
    game = Triangles.from_json({"deal": 10})
    assert game.initial_state(["A", "B", "C"]).counts == (10, 10, 10)
    with pytest.raises(InvalidOption, match="deal 20 needs 80 stones for 4 players"):
        Triangles.from_json({"deal": 20}).initial_state(["A", "B", "C", "D"])


def test_d16_final_subtraction_after_everybody_passes() -> None:
    """D16: the game ends when nobody can lay; B holds 045 and 123 and loses 21 pips."""
    game = Triangles.from_json({"board_cells": "U(0,0)", "deal": 2})
    state = lay(game, game.initial_state(["A", "B"]), "555", "U(0,0)", 0)
    assert game.totals(state) == (-2, 0)  # U(0,0) is on the rim of a one-cell board
    state = play(game, state, Draw("045"))
    assert game.legal_actions(state) == (Pass(),)
    state = play(game, state, Pass(), Draw("444"), Pass())
    assert state.end == "no player could lay a stone"
    assert game.phase(state) is Phase.DRAW
    assert game.to_move(state) == 1  # B still has to show his unknown stone
    said = game.describe(state)
    assert (said["ended_by"], said["to_reveal"]) == (None, [0, 1])
    with pytest.raises(IllegalAction, match="cannot draw 045: it lies under B's stack"):
        game.apply(state, Draw("045"))
    state = game.apply(state, Draw("123"))
    assert game.phase(state) is Phase.FINISHED
    assert game.totals(state) == (-2 - 12, -21)
    outcome = game.outcome(state)
    assert outcome is not None
    assert outcome.winners == (0,)
    assert game.legal_actions(state) == ()


def test_d16_the_player_who_lays_his_last_stone_ends_the_game() -> None:
    """The first player without stones ends the game; the others show and subtract theirs."""
    game = Triangles.from_json({"deal": 2})
    state = lay(game, game.initial_state(["A", "B", "C"]), "111", "U(0,0)", 0)
    state = lay(game, state, "112", "D(0,0)", 1)
    state = lay(game, state, "113", "D(0,-1)", 0)
    assert game.phase(state) is Phase.DRAW
    assert state.end == ""
    state = lay(game, state, "115", "D(-1,0)", 0)
    assert state.end == "A laid the last stone"
    assert game.to_move(state) == 1
    said = game.describe(state)
    assert (said["ended_by"], said["to_reveal"]) == ("A", [0, 1, 1])
    state = play(game, state, Draw("045"), Draw("123"))
    assert game.outcome(state) is not None
    assert game.totals(state) == (
        state.scores[0],
        state.scores[1] - 15,
        state.scores[2] - 6,
    )


def test_unplaceable_stone_goes_under_the_stack() -> None:
    """A stone that fits nowhere is passed; once the unturned stones are used up it comes back."""
    game = Triangles.from_json({"board_cells": "U(0,0) D(0,0)", "deal": 5})
    state = lay(game, game.initial_state(["A", "B", "C"]), "111", "U(0,0)", 0)
    state = play(game, state, Draw("222"), Pass())
    assert state.passed[1] == (STONE_INDEX["222"],)
    assert state.passes == 1
    assert game.to_move(state) == 2
    # B's unturned stones are used up: his next draw can only be the passed 222.
    state = replace(state, player=1, counts=(4, 1, 5))
    assert game.legal_actions(state) == (Draw("222"),)
    with pytest.raises(IllegalAction, match="cannot draw 333: B's next stone is 222"):
        game.apply(state, Draw("333"))
    with pytest.raises(IllegalAction, match="cannot draw 222: it lies under B's stack"):
        game.apply(replace(state, player=2), Draw("222"))


def test_passed_stone_waits_below_unturned_ones() -> None:
    """``top_of_pile``: a passed stone is not drawable while unturned stones lie above it."""
    game = Triangles.from_json({"board_cells": "U(0,0) D(0,0)", "deal": 5})
    state = lay(game, game.initial_state(["A", "B", "C"]), "111", "U(0,0)", 0)
    state = play(game, state, Draw("222"), Pass())
    state = lay(game, state, "012", "D(0,0)", 2)
    state = play(game, state, Draw("333"), Pass())
    assert game.to_move(state) == 1
    assert Draw("222") not in game.legal_actions(state)
    with pytest.raises(IllegalAction, match="below 4 unturned stones"):
        game.apply(state, Draw("222"))


def test_hand_mode_draws_a_passed_stone_again() -> None:
    """``stone_source = hand``: the player may take up any stone he holds, passed ones too."""
    game = Triangles.from_json({"board_cells": "U(0,0) D(0,0)", "deal": 5, "stone_source": "hand"})
    state = lay(game, game.initial_state(["A", "B", "C"]), "111", "U(0,0)", 0)
    state = play(game, state, Draw("222"), Pass(), Draw("012"))
    state = game.apply(state, Place("012", "D(0,0)", 2))
    assert game.totals(state) == (-2, 0, -2)
    state = play(game, state, Draw("333"), Pass())
    assert Draw("222") in game.legal_actions(state)


def test_first_stone_may_go_anywhere() -> None:
    """The first stone touches nothing: every cell and rotation is legal (288 on hexagon:4)."""
    game = Triangles()
    state = game.apply(game.initial_state(["A", "B"]), Draw("045"))
    assert len(game.legal_actions(state)) == 96 * 3


def test_registry_and_alias() -> None:
    """The game answers to its id and to "driehoeken"."""
    assert find_game("driehoeken") is Triangles
    assert find_game("triangles") is Triangles


# -- a whole game and the text board -------------------------------------------------------------


def test_whole_game_to_the_end() -> None:
    """Two players lay their best placement every turn until the game ends; totals add up."""
    game = Triangles()
    state = game.initial_state(["A", "B"])
    while game.phase(state) is not Phase.FINISHED:
        state = game.apply(state, game.legal_actions(state)[0])
    outcome = game.outcome(state)
    assert outcome is not None
    for p in (0, 1):
        laid = [m.points for m in state.moves if m.player == p]
        held = list(state.passed[p]) + list(state.revealed[p])
        assert len(laid) + len(held) == 38
        assert state.scores[p] == sum(laid)
        assert game.totals(state)[p] == sum(laid) - sum(pip_value(STONES[s]) for s in held)
    assert outcome.winners == tuple(p for p in (0, 1) if outcome.totals[p] == max(outcome.totals))


def test_render_board_names_cells() -> None:
    """The text board shows each stone's sides and the cells next to stones by their i."""
    game = Triangles()
    state = lay(game, game.initial_state(["A", "B"]), "123", "U(0,0)", 0)
    text = render_board(state, highlight=["D(0,0)"])
    row = next(line for line in text.splitlines() if line.startswith("j= 0"))
    assert "/213\\*0 /" in row  # U(0,0): left 2, bottom 1, right 3; D(0,0) highlighted
    assert "\\-1 /213" in row  # D(-1,0), next to the stone, shows its i
    assert len(text.splitlines()) == 2 + 2 * 8
