"""A die under a card, read by the shipped reader from pixels, at a real table on a real store.

The trays are those of the hidden-die probe (``vision.train.hidden``): six dice, a card over
part of one. Which trays the reader reports the covered die on as partly hidden, or not at all,
depends on the models, so each test takes the first such tray of the probe's seeds rather than
a seed picked by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from pipcam.store import Store
from pipcam.table import Table
from scoring.core import Roll
from vision.reader import DiceReader, DiceReading
from vision.synthetic import DieSpec, make_frame, six_dice
from vision.train.hidden import HEIGHT, SEEDS, WIDTH, HiddenCounts, hidden_tray, judge

Frame = npt.NDArray[np.uint8]


@pytest.fixture(scope="module")
def reader() -> DiceReader:
    from vision.classify import OnnxClassifier

    return DiceReader(OnnxClassifier())


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "pipcam.db") as s:
        yield s


def _asked_as_hidden(reading: DiceReading, hidden: DieSpec, others: list[DieSpec]) -> bool:
    counts = judge(reading, hidden, others)
    return counts == HiddenCounts(asked=1) and any(d.hidden for d in reading.dice)


def _missing(reading: DiceReading, hidden: DieSpec, others: list[DieSpec]) -> bool:
    return judge(reading, hidden, others) == HiddenCounts(missing=1)


def _first_tray(
    reader: DiceReader, wanted: Callable[[DiceReading, DieSpec, list[DieSpec]], bool]
) -> tuple[Frame, int]:
    """The first probe tray (share by share, seed by seed) whose reading ``wanted`` accepts,
    the five uncovered dice read right; and its seed."""
    for share in (0.3, 0.4, 0.5, 0.6):
        for seed in range(SEEDS):
            frame, hidden, others = hidden_tray(seed, share)
            if wanted(reader.read(frame), hidden, others):
                return frame, seed
    raise AssertionError("no probe tray reads so, though the model card's probe says some do")


@pytest.mark.parametrize(
    ("wanted", "code"),
    [
        pytest.param(_asked_as_hidden, "covered", id="asked about as partly hidden"),
        pytest.param(_missing, "roll_zone_missing", id="not seen at all"),
    ],
)
def test_a_throw_with_a_die_under_a_card_waits_for_the_card_to_go(
    reader: DiceReader,
    store: Store,
    wanted: Callable[[DiceReading, DieSpec, list[DieSpec]], bool],
    code: str,
) -> None:
    """The throw is not taken while the card lies over a die, and the phones say what to do
    (move what covers it; or, the die unseen, what may hide it); once the card is taken away,
    the dice lying as they lay, the throw is taken with all six faces."""
    frame, seed = _first_tray(reader, wanted)
    table = Table(store)
    table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    table.on_reading(reader.read(frame), settled_now=True)
    assert table.state_json()["table"]["problem_code"] == code
    assert table.history is not None
    assert table.history.actions == []
    dice = six_dice(WIDTH, HEIGHT, seed=seed)
    table.on_reading(reader.read(make_frame(WIDTH, HEIGHT, dice, seed=seed)), settled_now=True)
    assert table.state_json()["table"]["problem"] == ""
    assert table.history.actions == [Roll([d.value for d in dice])]
