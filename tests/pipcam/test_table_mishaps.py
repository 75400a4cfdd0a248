"""Mishaps of real tables that the physical table plays now and then (tests/pipcam/physical.py):
after every step the table's actions must be the actions meant, with no problem on the screen."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pipcam.store import Store
from pipcam.table import Table
from tests.pipcam.physical import N_DICE, play

STEPS = 300

MISHAPS: dict[str, tuple[dict[str, float], str]] = {
    # mishap: the physical table's options, the tally that shows it happened
    # The last player takes his dice away, the next picks some up or pushes those out of the
    # zone into it: dice lying where the last turn left them are no throw.
    "between turns": ({"between_turns": 0.7}, "between turns"),
    # Dice set aside as the others are thrown, and a die out of the zone misread or missed:
    # the table asks rather than guess the only set-aside.
    "misread aside": ({"misreads": 0.15, "one_motion": True}, "one motion"),
    "missed aside": ({"misses": 0.15, "one_motion": True}, "one motion"),
    # A thrown die comes to rest leaning (the table says so): the player throws it again, or
    # types its face on a phone (a correction of the reading, in the throw's motion too).
    "cocked": ({"cocks": 0.3, "one_motion": True}, "cocked"),
    # A thrown die bounces out among the dice set aside (in the throw's motion or before) and
    # is thrown again: taken as set aside at first, the set-aside and throw are mended.
    "bounced": ({"bounces": 0.3, "one_motion": True}, "bounced"),
}
# Where a mishap still leads the table astray (see the report of the probe): held dice (Generał,
# Drápky) out of the zone misread or missed; a die that bounced out among held dice and is
# thrown again showing the face it showed there looks like a held die put back by hand.
ASTRAY = {"misread aside", "missed aside", "bounced"}
SET_ASIDE = ["jednicky-a-petky", "kymppitonni", "sest-kostek"]
CASES = [
    (game, mishap)
    for mishap in sorted(MISHAPS)
    for game in sorted(N_DICE)
    if mishap not in ASTRAY or game in SET_ASIDE
]


@pytest.mark.parametrize(("game", "mishap"), CASES)
def test_mishaps_lead_the_table_nowhere_else(tmp_path: Path, game: str, mishap: str) -> None:
    """A few hundred steps with the mishap now and then: no parting, no problem left."""
    how, counted = MISHAPS[mishap]
    tally: Counter[str] = Counter()
    with Store(tmp_path / "pipcam.db") as store:
        found = play(lambda: Table(store), game, 3, STEPS, tally, careful=True, **how)
    assert [vars(m) for m in found] == []
    assert tally[counted] > 0


def test_held_dice_misread_out_of_the_zone_are_set_right_on_a_phone(tmp_path: Path) -> None:
    """Drápky, a die out of the roll zone misread in 15 % of readings: where the game on the
    phones parts from the one played, the player taps the misread held die and sets its face,
    and the game is the one meant again. With the same seed and no phone it parts twice in 300
    steps, where the hold is taken from a misread die. (It parted 4 times before a held die
    read with another face where it lay, the roll zone unchanged, was known for a misreading
    and no longer taken for a hold changed.)"""
    tally: Counter[str] = Counter()
    with Store(tmp_path / "pipcam.db") as store:
        found = play(
            lambda: Table(store),
            "drapky",
            3,
            STEPS,
            tally,
            careful=True,
            one_motion=True,
            misreads=0.15,
            fixes=True,
        )
    assert [vars(m) for m in found] == []
    assert tally["fixed aside"] >= 2
