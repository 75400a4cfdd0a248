"""The partly-hidden-die probe: its trays, how it judges a reading, and the command."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from vision.classify import DEFAULT_LOCATOR_MODEL
from vision.die_check import DEFAULT_DIE_CHECK
from vision.reader import DiceReading, Die
from vision.synthetic import DieSpec, make_frame, six_dice
from vision.train.hidden import CARDS, HEIGHT, WIDTH, HiddenCounts, hidden_tray, judge, main


@pytest.mark.parametrize("seed", [0, 7, 13, 29])
@pytest.mark.parametrize("share", [0.2, 0.45, 0.6])
def test_the_card_covers_the_share_asked_of_one_die_and_nothing_of_the_others(
    seed: int, share: float
) -> None:
    frame, hidden, others = hidden_tray(seed, share)
    bare = make_frame(WIDTH, HEIGHT, six_dice(WIDTH, HEIGHT, seed=seed), seed=seed)
    changed = np.any(frame != bare, axis=2)
    # The card is the one colour of CARDS painted over what the tray showed.
    card = max(
        (changed & np.all(frame == np.array(c, np.uint8), axis=2) for c in CARDS.values()),
        key=lambda painted: int(painted.sum()),
    )
    x0, y0, x1, y1 = hidden.box
    assert card[y0:y1, x0:x1].mean() == pytest.approx(share, abs=0.02)
    for spec in others:
        x0, y0, x1, y1 = spec.box
        assert not card[y0:y1, x0:x1].any()
        # Only the card's shadow may reach them, and only faintly.
        diff = np.abs(frame[y0:y1, x0:x1].astype(int) - bare[y0:y1, x0:x1].astype(int))
        assert diff.mean() < 2.0


def test_the_same_seed_draws_the_same_tray() -> None:
    first, second = hidden_tray(5, 0.4), hidden_tray(5, 0.4)
    assert np.array_equal(first[0], second[0])
    assert first[1:] == second[1:]


HIDDEN = DieSpec(value=5, cx=100, cy=100, side=80)
OTHER = DieSpec(value=2, cx=400, cy=100, side=80)


def _die(value: int | None, cx: float, status: str = "ok", cy: float = 100) -> Die:
    return Die(value, 0.9, status, (int(cx) - 30, int(cy) - 30, int(cx) + 30, int(cy) + 30))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("dice", "expected"),
    [
        ((_die(5, 110), _die(2, 400)), HiddenCounts(right=1)),
        ((_die(3, 110), _die(2, 400)), HiddenCounts(wrong=1)),
        ((_die(3, 110, "uncertain"), _die(2, 400)), HiddenCounts(asked=1)),
        ((_die(None, 110, "cocked"), _die(2, 400)), HiddenCounts(asked=1)),
        ((_die(2, 400),), HiddenCounts(missing=1)),
        # A die found beside the hidden one (its centre outside the box) is not it: it lies on
        # no die.
        ((_die(5, 160), _die(2, 400)), HiddenCounts(missing=1, invented=1)),
        # Of two boxes on the hidden die, the one nearest its centre is the reading.
        ((_die(3, 130), _die(5, 95), _die(2, 400)), HiddenCounts(right=1)),
        # The uncovered die read wrong or not found is counted apart.
        ((_die(5, 110), _die(6, 400)), HiddenCounts(right=1, others_wrong=1)),
        ((_die(3, 110),), HiddenCounts(wrong=1, others_wrong=1)),
        # A die reported where none lies (on the card beyond the hidden die) is invented.
        (
            (_die(5, 110), _die(2, 400), _die(None, 250, "uncertain")),
            HiddenCounts(right=1, invented=1),
        ),
    ],
)
def test_a_reading_is_judged_by_what_the_players_would_be_told(
    dice: tuple[Die, ...], expected: HiddenCounts
) -> None:
    reading = DiceReading(status="settled", dice=dice[:1], set_aside=dice[1:])
    assert judge(reading, HIDDEN, [OTHER]) == expected


def test_the_command_reads_the_shipped_model_on_the_same_trays_each_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["--seeds", "2", "--share", "0.3", "--share", "0.5"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    assert capsys.readouterr().out == first
    header, line = first.splitlines()
    assert header == "2 trays a share; the hidden die read right / asked about / missing / wrong"
    assert "(die check on): 30 %: " in line
    assert "  50 %: " in line
    assert "wrong at 30 % and more: " in line
    assert line.endswith("; dice reported on no die: 0")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--share", "1.2"], "1.2: a share of the die's box is between 0 and 1"),
        (["--seeds", "0"], "--seeds must be at least 1, not 0"),
    ],
)
def test_the_command_refuses_a_probe_it_cannot_draw(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert said in capsys.readouterr().err


def test_the_command_names_a_missing_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--model", str(tmp_path / "none.onnx"), "--seeds", "1"])
    assert exit_.value.code == 2
    assert "none.onnx" in capsys.readouterr().err


def test_the_command_reads_with_the_locator_and_die_check_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--seeds", "1", "--share", "0.4"]
    assert main(args) == 0
    default = capsys.readouterr().out
    named = ["--locator-model", str(DEFAULT_LOCATOR_MODEL), "--die-check", str(DEFAULT_DIE_CHECK)]
    assert main([*args, *named]) == 0
    assert capsys.readouterr().out == default
    with pytest.raises(SystemExit) as exit_:
        main([*args, "--locator-model", str(tmp_path / "nowhere.onnx")])
    assert exit_.value.code == 2
    assert "nowhere.onnx" in capsys.readouterr().err


def test_the_shipped_reader_asks_about_dice_under_a_card_rather_than_misread_them() -> None:
    """The die check's partly-hidden check was fitted on dice hidden as training hides them,
    not on this probe's card: on 24 trays a share, 30 to 60 % of a die covered, it gives at
    most half as many wrong values as the same reader without it, and leaves the uncovered
    dice beside the card read right."""
    from vision.classify import DEFAULT_MODEL, OnnxClassifier
    from vision.die_check import DEFAULT_DIE_CHECK, DieChecker, load_die_check
    from vision.reader import DiceReader
    from vision.train.hidden import probe

    check = load_die_check(DEFAULT_DIE_CHECK)
    assert check.hidden is not None
    totals = []
    for used in (check, dataclasses.replace(check, hidden=None)):
        checker = DieChecker(DEFAULT_MODEL, used)
        reader = DiceReader(OnnxClassifier(DEFAULT_MODEL), die_check=checker)
        counts = probe(reader, seeds=range(24), shares=(0.3, 0.4, 0.5, 0.6))
        totals.append(sum(counts.values(), HiddenCounts()))
    asked, guessed = totals
    assert asked.wrong <= guessed.wrong // 2, (asked, guessed)
    assert asked.others_wrong == guessed.others_wrong == 0
    assert asked.asked > guessed.asked


def test_the_shipped_reader_asks_about_dice_under_a_card_it_would_have_dropped() -> None:
    """Most dice 40 to 60 % under a card are read "no face" and were dropped (the table then
    counts too few dice). The check of the boxes otherwise dropped asks about some of them, as
    partly hidden, and reads nothing more where no die is: never more dice than the tray has,
    and the other dice read as without it."""
    from vision.classify import DEFAULT_MODEL, OnnxClassifier
    from vision.die_check import DEFAULT_DIE_CHECK, DieChecker, load_die_check
    from vision.reader import DiceReader

    check = load_die_check(DEFAULT_DIE_CHECK)
    assert check.hidden_dropped is not None
    readers = [
        DiceReader(OnnxClassifier(DEFAULT_MODEL), die_check=DieChecker(DEFAULT_MODEL, used))
        for used in (check, dataclasses.replace(check, hidden_dropped=None))
    ]
    totals = [HiddenCounts(), HiddenCounts()]
    for share in (0.4, 0.5, 0.6):
        for seed in range(24):
            frame, hidden, others = hidden_tray(seed, share)
            readings = [reader.read(frame) for reader in readers]
            for i, reading in enumerate(readings):
                totals[i] = totals[i] + judge(reading, hidden, others)
            kept, dropped = ([d for d in r.dice if not d.hidden] for r in readings)
            assert kept == dropped  # the dice not hidden are read alike
    asked, before = totals
    assert asked.missing < before.missing, (asked, before)
    assert asked.asked - before.asked == before.missing - asked.missing
    assert (asked.right, asked.wrong, asked.others_wrong) == (before.right, before.wrong, 0)
    assert asked.invented == before.invented == 0
