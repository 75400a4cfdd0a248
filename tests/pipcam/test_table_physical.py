"""A physical table played at random: the game the table takes from the dice is the one meant.

Seeded games of every dice game (tests/pipcam/physical.py): throws land at fresh places, the
dice set aside or held are taken out of the roll zone and the others stay where they lay, the
keep button is pressed before the dice are taken out now and then, a set-aside is taken out die
by die or a die of it put back, a die is nudged, and the next player gathers the dice the last
turn left lying. After every step the table's actions (a real table on a real store) must be
the actions meant, with no problem on the screen.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pipcam.store import Store
from pipcam.table import Table
from tests.pipcam.physical import HOLDS, N_DICE, play

STEPS = 150


@pytest.mark.parametrize("game", sorted(N_DICE))
def test_the_table_takes_the_game_the_players_meant(tmp_path: Path, game: str) -> None:
    """No parting in a few hundred steps, held dice put back and others taken out in one move
    (Generał, Drápky) too: the camera sees the dice out of the roll zone."""
    with Store(tmp_path / "pipcam.db") as store:
        found = play(lambda: Table(store), game, 7, STEPS, swaps=True, careful=True)
    assert [vars(m) for m in found] == []


ONE_MOTION = sorted(g for g in N_DICE if g not in ("thousand", "sekvence", "zakazana-cisla"))


@pytest.mark.parametrize("sees_aside", [True, False], ids=["sees-aside", "roll-zone-only"])
@pytest.mark.parametrize("game", ONE_MOTION)
def test_dice_set_aside_as_the_others_are_thrown(
    tmp_path: Path, game: str, sees_aside: bool
) -> None:
    """Dice set aside or held in the motion that throws the others (no reading in between):
    the table takes the set-aside and the throw. Where the camera sees the dice arrive out of
    the roll zone (and held dice go back into play) it never needs to ask. Where it sees only
    the roll zone it asks when the rules allow more than one set-aside of that many dice (any
    hold in Generał and Drápky), and the player enters the set-aside and the throw on a phone.
    (1000 sets dice aside by itself, Sekvence and Na zakázaná čísla keep none by choice.)"""
    tally: Counter[str] = Counter()
    with Store(tmp_path / "pipcam.db") as store:
        found = play(
            lambda: Table(store),
            game,
            11,
            STEPS,
            tally,
            # Seen only in the roll zone, held dice put back with others taken out look like a
            # throw of dice with those faces (physical.Player._may_hold).
            swaps=sees_aside,
            careful=True,
            one_motion=True,
            sees_aside=sees_aside,
        )
    assert [vars(m) for m in found] == []
    assert tally["one motion"] >= 10
    if sees_aside:
        assert tally["asked"] == 0
    elif game in HOLDS:
        assert tally["asked"] == tally["one motion"]
    else:
        assert 0 < tally["asked"] < tally["one motion"]


SET_ASIDE = ["jednicky-a-petky", "kymppitonni", "sest-kostek"]


def played_without_parting(tmp_path: Path, game: str, **how: Any) -> Counter[str]:
    """Twice the usual steps of seed 7, careful throws: no parting; what was played, counted."""
    tally: Counter[str] = Counter()
    with Store(tmp_path / "pipcam.db") as store:
        found = play(lambda: Table(store), game, 7, 2 * STEPS, tally, careful=True, **how)
    assert [vars(m) for m in found] == []
    return tally


@pytest.mark.parametrize("sees_aside", [True, False], ids=["sees-aside", "roll-zone-only"])
@pytest.mark.parametrize("game", SET_ASIDE)
def test_a_set_aside_changed_in_one_move_is_taken(
    tmp_path: Path, game: str, sees_aside: bool
) -> None:
    """Players who think again after taking a set-aside out: a die of it put back into the roll
    zone, or put back while another is taken out in the same move. The table takes the changed
    set-aside (it took the swap as dice left lying). Seen in the roll zone only, the player
    keeps a die of the zone lying still, else the swap looks like a throw (physical.Player)."""
    tally = played_without_parting(tmp_path, game, sees_aside=sees_aside, rethinks=0.6)
    assert tally["changed set-aside"] >= 3  # the swaps were played (4 to 14 with seed 7)


@pytest.mark.parametrize("game", sorted(HOLDS))
def test_held_dice_taken_back_and_thrown_with_the_others(tmp_path: Path, game: str) -> None:
    """Generał and Drápky: held dice let go are taken back and thrown with the others in one
    motion. The table takes the new hold and the throw; the throw before stands (a die that
    bounced out and was thrown back would erase it, and was once taken so)."""
    tally = played_without_parting(tmp_path, game, one_motion=True, releases=0.5)
    assert tally["released"] >= 3
