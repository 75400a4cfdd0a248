"""The self-tuning simulation (python -m pipcam.simulate) on the committed real photos."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import pytest

from pipcam.photos import PhotoKeeper
from pipcam.simulate import Tally, _answer, main
from pipcam.store import Store
from pipcam.teach import Teacher
from tests.pipcam.test_photos import play
from vision.classify import DEFAULT_MODEL

DATA = Path(__file__).parents[1] / "data" / "dice"


def test_a_table_is_played_answered_tuned_and_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three photos played in games of one, one stage; the other two are the test."""
    args = ["--model", str(DEFAULT_MODEL), "--played", "3", "--every", "3", "--game", "1"]
    assert main([str(DATA), *args, "--threads", "1", "--work", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("seed 1, answers all: untuned on the test: R ")
    assert "exact 2/2" in lines[0]  # the shipped model reads the committed photos exactly
    assert lines[1].startswith("stage 3: Tally(")
    # The table's own store and photos, as pipcam run keeps them.
    assert len(list((tmp_path / "table" / "photos").glob("reading-*.jpg"))) == 3
    assert (tmp_path / "export" / "labels.jsonl").is_file()


def test_a_run_without_a_work_folder_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table, photos and exports of a run not given --work (about 40 MB) are deleted."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    args = ["--model", str(DEFAULT_MODEL), "--played", "3", "--every", "3", "--game", "1"]
    assert main([str(DATA), *args, "--threads", "1"]) == 0
    assert list(temporary.iterdir()) == []


def _one_die_off(folder: Path) -> None:
    """The committed photos with each first die unlabelled (the reader's box there is on "no
    die") and a die labelled in an empty corner (one the reader never finds)."""
    (folder / "images").symlink_to(DATA / "images")
    lines = []
    for line in (DATA / "labels.jsonl").read_text().splitlines():
        record = json.loads(line)
        record["dice"] = [*record["dice"][1:], {"value": 3, "box": [0, 0, 30, 30]}]
        lines.append(json.dumps(record) + "\n")
    (folder / "labels.jsonl").write_text("".join(lines))


@pytest.mark.parametrize("mended", [True, False], ids=["mended-in-play", "as-before"])
def test_a_die_too_many_or_too_few_is_mended_in_play(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mended: bool
) -> None:
    """Each played photo has a box on no die, said to hold none, and a die never found, typed
    (its photo flagged) and then placed on the teach sheet by a tap on its centre; with
    --phantoms-stay --no-typing neither."""
    source = tmp_path / "source"
    source.mkdir()
    _one_die_off(source)
    args = ["--model", str(DEFAULT_MODEL), "--played", "3", "--every", "3", "--game", "1"]
    old = [] if mended else ["--phantoms-stay", "--no-typing"]
    work = tmp_path / "work"
    assert main([str(source), *args, *old, "--threads", "1", "--work", str(work)]) == 0
    stage = capsys.readouterr().out.splitlines()[1]
    n = 3 if mended else 0
    assert f"phantoms={n}, missed={n}, placed={n}," in stage
    with Store(work / "table" / "pipcam.db") as store:
        assert sum(c.value == 0 for c in store.corrections()) == n
        assert sorted(store.missed().values()) == [1] * n
        placed = [die for dice in store.placed().values() for die in dice.values()]
    # The corner die: its value, boxed round the corner it lies in.
    assert [value for value, _ in placed] == [3] * n
    assert all(box[0] < 15 < box[2] and box[1] < 15 < box[3] for _, box in placed)
    labels = (work / "export" / "labels.jsonl").read_text()
    assert labels.count('"placed": true') == n
    assert "the camera missed" not in labels


def test_bad_arguments_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([str(DATA), "--model", str(DEFAULT_MODEL), "--answer", "some"])
    assert exc.value.code == 2
    assert "--answer takes none, all or a number" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(DATA), "--model", str(DEFAULT_MODEL), "--mistakes", "1.5"])
    assert "--mistakes is a share from 0 to 1, not 1.5" in capsys.readouterr().err
    assert main([str(DATA), "--model", str(DEFAULT_MODEL), "--work", str(tmp_path)]) == 2
    assert "leave none to test" in capsys.readouterr().err


@pytest.mark.parametrize(("share", "wrong"), [(0.0, 0), (1.0, 2)])
def test_the_players_answer_truly_but_for_their_mistakes(
    tmp_path: Path, share: float, wrong: int
) -> None:
    """Every question of the sheet answered: truly, or (all of them here) with another value."""
    with Store(tmp_path / "pipcam.db") as store:
        play(store, PhotoKeeper(tmp_path / "photos"))
        truths: dict[tuple[int, int], int | None] = {(3, 0): 4, (2, 2): None}
        tally = Tally()
        _answer(
            Teacher(store, tmp_path / "photos"),
            truths,
            "all",
            tally,
            mistakes=(share, random.Random(1)),
        )
        answers = store.checks()
    given = {(3, 0): answers[3][0], (2, 2): answers[2][2]}
    assert sum(given[k] != (truths[k] or 0) for k in given) == wrong
    assert all(0 <= v <= 6 for v in given.values())
    assert (tally.answered, tally.mistaken) == (2, wrong)
