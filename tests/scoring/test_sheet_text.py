"""The score sheets `pipcam play` shows for Generał and Drápky."""

from __future__ import annotations

from scoring.core import Roll, Score
from scoring.games.drapky import Drapky
from scoring.games.general import General, GeneralOptions


def row(text: str, name: str) -> list[str]:
    """The cells of one row of a sheet, by its box name."""
    for line in text.splitlines():
        cells = line.split()
        if cells and cells[0] == name:
            return cells[1:]
    raise AssertionError(f"no row {name!r} in\n{text}")


def test_general_sheet_shows_entries_and_what_the_dice_give_now() -> None:
    """Written boxes per player, the 'now' column for the dice on the table, totals."""
    game = General()
    state = game.apply(game.initial_state(["Ann", "Bob"]), Roll([2, 2, 5, 5, 5]))
    state = game.apply(state, Score("full_house"))
    state = game.apply(state, Roll([1, 1, 1, 3, 5]))
    text = game.render_text(state)
    assert row(text, "full_house") == ["25", "0"]  # Ann's 25; Bob's dice would give 0 there
    assert row(text, "three_of_a_kind") == ["11"]
    assert row(text, "total") == ["25", "0"]
    assert "dice: 1 1 1 3 5 (throw 1 of 3)" in text


def test_general_three_columns_are_titled() -> None:
    """With three columns every column has its own sheet."""
    game = General(GeneralOptions(columns=3))
    text = game.render_text(game.initial_state(["Ann"]))
    assert [line for line in text.splitlines() if line.startswith("column")] == [
        "column 1",
        "column 2",
        "column 3",
    ]


def test_drapky_sheet_shows_figures_marks_and_throws() -> None:
    """Recorded figures, the figures the dice make now, and the carried throws."""
    game = Drapky()
    state = game.apply(game.initial_state(["Ann", "Bob"]), Roll([5, 5, 5, 4, 4, 3]))
    text = game.render_text(state)
    assert row(text, "pyramid") == ["26"]
    assert row(text, "fives") == ["15"]
    state = game.apply(state, Score("pyramid"))
    text = game.render_text(state)
    assert row(text, "pyramid") == ["26"]
    assert "carried throws (marks): Ann 2  Bob 0" in text
