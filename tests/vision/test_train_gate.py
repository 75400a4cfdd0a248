"""The first-member gate measured: its table, its properties, and the command on real photos."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.vision.committed import COMMITTED_PHOTOS, photo_source
from vision.classify import DEFAULT_MODEL, FIRST_SURE
from vision.train.gate import THRESHOLDS, gate_rows, main


def _probs(*rows: tuple[float, ...]) -> np.ndarray:
    return np.array(rows, np.float64)


# first member, whole model, labels, threshold -> (alone, dice alone, wrong alone, changed)
CASES = {
    "everything alone from 0": (
        _probs((0.1, 0.9), (0.6, 0.4)),
        _probs((0.1, 0.9), (0.3, 0.7)),
        [1, 1],
        0.0,
        (2, 2, 1, 1),
    ),
    "a sure wrong read counts": (
        _probs((0.02, 0.98), (0.5, 0.5)),
        _probs((0.02, 0.98), (0.5, 0.5)),
        [0, 1],
        0.95,
        (1, 0, 1, 0),
    ),
    "an unsure crop is the whole model's: not counted": (
        _probs((0.4, 0.6), (0.97, 0.03)),
        _probs((0.9, 0.1), (0.97, 0.03)),
        [0, 0],
        0.95,
        (1, 0, 0, 0),
    ),
    "the threshold itself decides alone": (
        _probs((0.05, 0.95)),
        _probs((0.6, 0.4)),
        [1],
        0.95,
        (1, 1, 0, 1),
    ),
}


@pytest.mark.parametrize(
    ("first", "whole", "labels", "threshold", "want"), CASES.values(), ids=CASES.keys()
)
def test_the_gate_table_counts_what_the_first_member_decides_alone(
    first: np.ndarray,
    whole: np.ndarray,
    labels: list[int],
    threshold: float,
    want: tuple[int, int, int, int],
) -> None:
    (row,) = gate_rows(first, whole, np.array(labels), [threshold])
    assert (row.alone, row.dice_alone, row.wrong_alone, row.changed) == want
    assert (row.crops, row.dice) == (len(labels), sum(label > 0 for label in labels))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    count=st.integers(1, 40),
    thresholds=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6),
)
def test_a_higher_threshold_never_decides_more_alone(
    seed: int, count: int, thresholds: list[float]
) -> None:
    rng = np.random.default_rng(seed)
    first = rng.dirichlet(np.full(7, 0.3), count)
    whole = rng.dirichlet(np.full(7, 0.3), count)
    labels = rng.integers(0, 7, count)
    rows = gate_rows(first, whole, labels, sorted(thresholds))
    for row in rows:
        assert row.wrong_alone <= row.alone
        assert row.changed <= row.alone
        assert row.dice_alone <= min(row.alone, row.dice)
    for lower, higher in zip(rows, rows[1:], strict=False):
        for field in ("alone", "dice_alone", "wrong_alone", "changed"):
            assert getattr(higher, field) <= getattr(lower, field)


def test_probabilities_of_other_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="same shape and N labels"):
        gate_rows(np.zeros((2, 7)), np.zeros((3, 7)), np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="same shape and N labels"):
        gate_rows(np.zeros((2, 7)), np.zeros((2, 7)), np.zeros(3, np.int64))


# --- The command, on the committed photos (held out: their labels say "val").


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return photo_source(tmp_path_factory.mktemp("data"))


def _labelled_dice() -> int:
    lines = (COMMITTED_PHOTOS / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    return sum(len(json.loads(line)["dice"]) for line in lines if line.strip())


def test_the_command_prints_a_line_per_threshold_on_held_out_photos(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data", str(data), "--model", str(DEFAULT_MODEL)]) == 0
    head, *lines = capsys.readouterr().out.splitlines()
    assert re.match(rf"held-out photos: \d+ crops, {_labelled_dice()} dice; right: ", head)
    assert len(lines) == len(THRESHOLDS)
    alone = [int(re.search(r"alone (\d+) crops", line)[1]) for line in lines]  # type: ignore[index]
    assert alone == sorted(alone, reverse=True)
    # The committed photos are read exactly by the shipped reader: the first member is sure of
    # some of their dice, and whatever it decides alone from the shipped threshold is right.
    (shipped,) = [line for line in lines if line.strip().startswith(f"from {FIRST_SURE:g}:")]
    assert int(re.search(r"(\d+) dice", shipped)[1]) > 0  # type: ignore[index]
    assert "read wrong 0;" in shipped


def test_the_command_measures_rendered_logo_sixes_at_the_thresholds_asked(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--data", str(data), "--logos", "12", "--threshold", "0.99", "--threshold", "0.5"]
    assert main([*argv, "--model", str(DEFAULT_MODEL)]) == 0
    out = capsys.readouterr().out
    logos = out[out.index("unseen logo sixes") :].splitlines()
    assert logos[0].startswith("unseen logo sixes: 12 crops, 12 dice;")
    assert [line.split(":")[0].strip() for line in logos[1:]] == ["from 0.5", "from 0.99"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--exclude", "elsewhere"], "cannot leave out elsewhere: no such source"),
        (["--exclude", "table", "--exclude", "table"], "one source at a time"),
    ],
)
def test_the_command_refuses_what_it_cannot_measure(
    data: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--data", str(data), *argv])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_one_model_has_no_member_to_gate(
    data: Path, tiny_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["--data", str(data), "--model", str(tiny_model)])
    assert "is one model, not a composition of members" in capsys.readouterr().err


def test_no_held_out_photo_is_no_measurement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    photo_source(tmp_path, split="train")
    with pytest.raises(SystemExit):
        main(["--data", str(tmp_path)])
    assert "no crops to measure" in capsys.readouterr().err
