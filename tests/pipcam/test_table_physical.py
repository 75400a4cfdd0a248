"""A physical table played at random: the game the table takes from the dice is the one meant.

Seeded games of every dice game (tests/pipcam/physical.py): throws land at fresh places, the
dice set aside or held are taken out of the roll zone and the others stay where they lay, the
keep button is pressed before the dice are taken out now and then, a die is nudged, and the next
player gathers the dice the last turn left lying. After every step the table's actions (a real
table on a real store) must be the actions meant, with no problem on the screen.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipcam.store import Store
from pipcam.table import Table
from tests.pipcam.physical import N_DICE, play

STEPS = 150


@pytest.mark.parametrize("game", sorted(N_DICE))
def test_the_table_takes_the_game_the_players_meant(tmp_path: Path, game: str) -> None:
    """No parting in a few hundred steps. A hold that puts some held dice back and takes others
    out in one move is left out: the roll zone alone cannot tell it from a throw (see
    physical.Player._may_hold)."""
    with Store(tmp_path / "pipcam.db") as store:
        found = play(lambda: Table(store), game, 7, STEPS, swaps=False, careful=True)
    assert [vars(m) for m in found] == []
