"""`pipcam tune`: the table's own model is chosen, installed and reverted safely, what cannot run
says what to do, and (with torch) a whole tuning run on kept photos of real dice."""

from __future__ import annotations

import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pipcam import tune
from pipcam.cli import main
from pipcam.config import Config
from pipcam.photos import PhotoKeeper
from pipcam.run import (
    MODEL_NAME,
    TableModel,
    chosen_model,
    find_model,
    make_reader,
    table_model,
)
from pipcam.store import Store
from pipcam.table import Table
from pipcam.tune import KEEP_RUNS, MIN_HELD_OUT, install_model, revert_model
from tests.pipcam._fakes import FakeDie, FakeReading
from tests.pipcam.test_photos import play
from tests.vision.conftest import TINY_BIAS, TINY_WEIGHTS, tiny_model_bytes
from vision.classify import DEFAULT_MODEL, OnnxClassifier
from vision.evaluate import Comparison, EvalReport, ImageResult
from vision.source import read_image

DATA = Path(__file__).resolve().parents[1] / "data" / "dice"


def _kept(data: Path) -> None:
    """A table that kept three photos (pipcam/photos.py's own test game)."""
    with Store(data / "pipcam.db") as store:
        play(store, PhotoKeeper(data / "photos"))


def test_without_kept_photos_it_says_how_to_keep_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tune", "--data", str(tmp_path)]) == 1
    assert "run the table with --keep-photos" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--epochs", "2"], "without torch (the `train` extra) it can tune only the last layer"),
        (["--head", "--renders", "10"], "--head tunes only the last layer"),
    ],
)
def test_whole_model_options_without_the_whole_model_are_refused_and_change_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    said: str,
) -> None:
    _kept(tmp_path)
    # None in sys.modules makes the import fail, as it does where the train extra is missing.
    monkeypatch.setitem(sys.modules, "vision.train.tune", None)
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["tune", "--data", str(tmp_path), *flags]) == 2
    err = capsys.readouterr().err
    assert said in err
    assert "pip install -e '.[train]'" in err
    assert f"copy {tmp_path} to a PC" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@dataclass(frozen=True)
class _Settings:
    epochs: int = 3
    renders: int = 6000
    threads: int = 2


def _photos(n: int, reported: tuple[int | None, ...]) -> list[EvalReport]:
    """One folder of ``n`` held-out photos of a 1 and a 2, each read as ``reported``."""
    results = [ImageResult(f"{i}.jpg", (1, 2), reported) for i in range(n)]
    return [EvalReport(Path("photos"), images=n, results=results)]


def _tuner(held_out: int, after: tuple[int | None, ...], calls: list[Any]) -> SimpleNamespace:
    """vision.train.tune with the training left out: the tuned model is a file of known bytes,
    and the held-out photos read (1, None) before it and ``after`` with it."""

    def tune_model(
        photos: list[Path], out: Path, config: _Settings, model: Path, baseline: Path
    ) -> SimpleNamespace:
        calls.append((photos, config, model))
        outs.append(out)
        out.mkdir(parents=True)
        (out / "dice_faces.onnx").write_bytes(b"tuned")
        before = _photos(held_out, (1, None))  # each photo costs 1: a die asked about
        comparison = Comparison(baseline, out / "dice_faces.onnx", before, _photos(held_out, after))
        return SimpleNamespace(comparison=comparison, tuned=out / "dice_faces.onnx", report={})

    outs: list[Path] = []
    return SimpleNamespace(
        TuneConfig=_Settings,
        TuneError=ValueError,
        tune_model=tune_model,
        held_out_photos=lambda _photos: held_out,
        outs=outs,
    )


@pytest.mark.parametrize(
    ("held_out", "after", "flags", "installed", "said"),
    [
        (MIN_HELD_OUT, (1, 2), [], True, "installed as"),
        (MIN_HELD_OUT, (1, None), [], False, "no better"),  # the same cost
        (MIN_HELD_OUT, (1, 3), [], False, "no better"),  # a wrong value costs more
        (MIN_HELD_OUT - 1, (1, 2), [], False, "not tuned: 9 held-out photos are too few"),
        (MIN_HELD_OUT - 1, (1, 2), ["--force"], True, "installed as"),
        (0, (1, 2), ["--force"], True, "installed as"),
        (MIN_HELD_OUT, (1, 2), ["--no-install"], False, "would be installed"),
    ],
)
def test_the_tuned_model_is_installed_only_when_it_costs_less_on_enough_photos(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    held_out: int,
    after: tuple[int | None, ...],
    flags: list[str],
    installed: bool,
    said: str,
) -> None:
    monkeypatch.delenv("PIPCAM_MODEL", raising=False)
    _kept(tmp_path)
    calls: list[Any] = []
    monkeypatch.setattr(tune, "_tuner", lambda: _tuner(held_out, after, calls))
    assert main(["tune", "--data", str(tmp_path), "--epochs", "2", *flags]) == 0
    out = capsys.readouterr().out
    assert said in out
    # The dice read unsurely and never answered are named, with where to answer them.
    assert "2 dice read unsurely teach nothing until the players answer them" in out
    assert table_model(tmp_path).exists() == installed
    if installed:
        assert table_model(tmp_path).read_bytes() == b"tuned"
    # The export is tuned on, from the shipped model, with the options given and the tuner's
    # defaults for the rest; not at all (minutes saved) when too few photos would measure it.
    tuned = [([tmp_path / "tune" / "photos"], _Settings(epochs=2), find_model(MODEL_NAME))]
    assert calls == ([] if "not tuned" in said else tuned)
    assert (tmp_path / "tune" / "photos" / "labels.jsonl").is_file()


def test_only_the_newest_runs_are_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each run leaves a folder of about 15 MB; on an SD card only the newest few stay."""
    _kept(tmp_path)
    fake = _tuner(MIN_HELD_OUT, (1, 2), [])
    monkeypatch.setattr(tune, "_tuner", lambda: fake)
    # Quick runs: the same second gives suffixed names (the fake refuses an existing folder).
    for _ in range(KEEP_RUNS + 2):
        assert main(["tune", "--data", str(tmp_path), "--no-install"]) == 0
    runs = {p for p in (tmp_path / "tune").iterdir() if p.is_dir() and p.name != "photos"}
    assert runs == set(fake.outs[-KEEP_RUNS:])
    assert capsys.readouterr().out.count("deleted 1 older tuning runs") == 2
    assert (tmp_path / "tune" / "photos" / "labels.jsonl").is_file()


def test_install_keeps_the_previous_model_and_revert_sets_it_aside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "first.onnx", tmp_path / "second.onnx"
    first.write_bytes(b"first")
    second.write_bytes(b"second")
    data = tmp_path / "data"
    data.mkdir()
    assert install_model(first, data) == table_model(data)
    install_model(second, data)
    assert table_model(data).read_bytes() == b"second"
    assert (data / "dice_faces.previous.onnx").read_bytes() == b"first"
    assert not list(data.glob("*.partial"))
    assert main(["tune", "--data", str(data), "--revert"]) == 0
    assert "set aside" in capsys.readouterr().out
    assert not table_model(data).exists()
    assert (data / "dice_faces.reverted.onnx").read_bytes() == b"second"
    assert revert_model(data) is None
    assert main(["tune", "--data", str(data), "--revert"]) == 1
    assert "reads with the shipped one" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("config_model", "env", "tuned", "want", "why"),
    [
        (False, False, False, "shipped", "shipped"),
        (False, False, True, "tuned", "tuned on this table"),
        (False, True, True, "env", "PIPCAM_MODEL"),
        (True, True, True, "config", "model in"),
    ],
)
def test_the_model_read_with_is_config_then_environment_then_tuned_then_shipped(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    config_model: bool,
    env: bool,
    tuned: bool,
    want: str,
    why: str,
) -> None:
    paths = {
        "shipped": find_model(),
        "env": tmp_path / "env.onnx",
        "config": tmp_path / "config.onnx",
        "tuned": table_model(tmp_path),
    }
    monkeypatch.delenv("PIPCAM_MODEL", raising=False)
    if env:
        monkeypatch.setenv("PIPCAM_MODEL", str(paths["env"]))
    if tuned:
        shutil.copyfile(DEFAULT_MODEL, paths["tuned"])
    config = Config(model=paths["config"], source=tmp_path / "t.toml") if config_model else Config()
    path, reason = chosen_model(config, tmp_path)
    assert path == paths[want]
    assert why in reason


def test_a_damaged_tuned_model_falls_back_to_the_shipped_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PIPCAM_MODEL", raising=False)
    table_model(tmp_path).write_bytes(b"not an onnx model")
    reader = make_reader(Config(), None, tmp_path)
    captured = capsys.readouterr()
    assert str(table_model(tmp_path)) in captured.err
    assert "reading with the shipped model instead" in captured.err
    assert f"face model {find_model()} (shipped)" in captured.out
    # It still reads dice: the committed six-dice photo, exactly.
    record = json.loads((DATA / "labels.jsonl").read_text(encoding="utf-8").splitlines()[0])
    reading = reader.read(read_image(DATA / record["image"]))
    assert sorted(d.value for d in reading.dice) == sorted(d["value"] for d in record["dice"])


def test_tune_starts_from_the_shipped_model_when_the_tuned_one_is_damaged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A damaged tuned model does not stop tuning: it is reported, the run is compared with
    the shipped model (what the table reads with), and the new model replaces the damaged one."""
    monkeypatch.delenv("PIPCAM_MODEL", raising=False)
    _kept(tmp_path)
    table_model(tmp_path).write_bytes(b"not an onnx model")
    monkeypatch.setattr(tune, "_tuner", lambda: _tuner(MIN_HELD_OUT, (1, 2), []))
    assert main(["tune", "--data", str(tmp_path), "--epochs", "2"]) == 0
    out, err = capsys.readouterr()
    assert str(table_model(tmp_path)) in err
    assert "the shipped model instead" in err
    assert f"compared with the model the table reads with now: {find_model()} (shipped)" in out
    assert table_model(tmp_path).read_bytes() == b"tuned"

    # A model the config names is the user's choice: unusable, it stops the run, naming it.
    damaged = tmp_path / "named.onnx"
    damaged.write_bytes(b"not an onnx model")
    config = tmp_path / "pipcam.toml"
    config.write_text(f'[table]\nmodel = "{damaged}"\n')
    assert main(["tune", "--data", str(tmp_path), "--config", str(config), "--epochs", "2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pipcam tune: "), err
    assert str(damaged) in err
    assert table_model(tmp_path).read_bytes() == b"tuned"


def _crops() -> Any:
    import numpy as np

    return np.random.default_rng(0).random((3, 3, 64, 64), dtype=np.float32)


def test_a_running_table_reads_with_what_tune_installs_or_reverts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    monkeypatch.delenv("PIPCAM_MODEL", raising=False)
    tiny = tmp_path / "tiny.onnx"
    tiny.write_bytes(tiny_model_bytes(TINY_WEIGHTS, TINY_BIAS))
    shipped = OnnxClassifier(DEFAULT_MODEL).predict(_crops())
    other = OnnxClassifier(tiny).predict(_crops())
    assert not np.allclose(shipped, other)
    data = tmp_path / "data"
    data.mkdir()
    heard: list[str | None] = []
    model = TableModel(Config(), data, heard.append)
    assert np.array_equal(model.predict(_crops()), shipped)
    install_model(tiny, data)  # what pipcam tune does, while the table runs
    assert np.array_equal(model.predict(_crops()), other)
    assert model.path == table_model(data)
    assert "tuned on this table's photos" in capsys.readouterr().out
    revert_model(data)
    assert np.array_equal(model.predict(_crops()), shipped)
    assert f"face model {find_model()} (shipped)" in capsys.readouterr().out
    # The phones hear the day the model read with was tuned here, and when it no longer is.
    assert heard == [None, time.strftime("%Y-%m-%d"), None]
    # A model that cannot be loaded is said, and the shipped one read with.
    damaged = tmp_path / "damaged.onnx"
    damaged.write_bytes(b"not a model")
    install_model(damaged, data)
    assert np.array_equal(model.predict(_crops()), shipped)
    assert "reading with the shipped model instead" in capsys.readouterr().err
    # A model the configuration names is kept, whatever is installed.
    named = TableModel(Config(model=tiny, source=tmp_path / "t.toml"), data)
    install_model(DEFAULT_MODEL, data)
    assert np.array_equal(named.predict(_crops()), other)
    assert named.path == tiny


def _real_table(data: Path) -> None:
    """The committed real photos kept by a table, one game each, labelled as read: game 4 is in
    the held-out share (pipcam.photos.split_of_game), the others are tuned on."""
    records = [json.loads(line) for line in (DATA / "labels.jsonl").read_text().splitlines()]
    with Store(data / "pipcam.db") as store:
        table = Table(store)
        keeper = PhotoKeeper(data / "photos")
        for record in records:
            table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
            dice = []
            for die in record["dice"]:
                x0, y0, x1, y1 = (round(v) for v in die["box"])
                dice.append(FakeDie(die["value"], box=(x0, y0, x1, y1)))
            reading_id = table.on_reading(FakeReading(tuple(dice)), settled_now=True)
            assert reading_id is not None
            keeper.keep(reading_id, read_image(DATA / record["image"]))


def test_a_whole_tuning_run_on_kept_photos_installs_only_when_asked_or_better(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("efficientnet_lite_pytorch")
    monkeypatch.delenv("PIPCAM_MODEL", raising=False)
    _real_table(tmp_path)
    short = ["--epochs", "1", "--renders", "64", "--threads", "1"]
    assert main(["tune", "--data", str(tmp_path), *short]) == 0
    out = capsys.readouterr().out
    assert "5 photos, 22 dice labelled" in out
    kept = sorted((tmp_path / "photos").glob("*.jpg"))
    assert len(kept) == 5
    for photo in kept:  # exported beside them without a copy
        assert (tmp_path / "tune" / "photos" / "images" / photo.name).samefile(photo)
    # One held-out photo is too few to trust, whatever it would show: said before tuning.
    assert "not tuned: 1 held-out photos are too few to trust" in out
    assert not table_model(tmp_path).exists()
    assert not [p for p in (tmp_path / "tune").iterdir() if p.is_dir() and p.name != "photos"]
    # --force tunes and installs what the run tuned (its int8 copy), byte for byte; the table
    # reads with it.
    assert main(["tune", "--data", str(tmp_path), *short, "--force"]) == 0
    out = capsys.readouterr().out
    assert "cost to the players" in out
    assert "installed as" in out
    (run,) = [p for p in (tmp_path / "tune").iterdir() if p.is_dir() and p.name != "photos"]
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert [r["photos"] for r in report["before"]] == [1]
    assert report["baseline"] == str(find_model())
    assert table_model(tmp_path).read_bytes() == (run / "dice_faces.int8.onnx").read_bytes()
    assert chosen_model(Config(), tmp_path)[0] == table_model(tmp_path)


def test_without_torch_the_last_layer_is_tuned_on_the_kept_photos_of_real_dice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PIPCAM_MODEL", raising=False)
    monkeypatch.setitem(sys.modules, "vision.train.tune", None)  # a Pi without the train extra
    _real_table(tmp_path)
    assert main(["tune", "--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "torch (the `train` extra) is not installed: tuning the last layer only" in out
    # Cross-validated by game: all five photos are measured, still too few to trust.
    assert "not installed: 5 photos measured are too few to trust" in out
    assert "each read by a layer tuned without its game" in out
    assert not table_model(tmp_path).exists()
    (run,) = [p for p in (tmp_path / "tune").iterdir() if p.is_dir() and p.name != "photos"]
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert report["kind"] == "last layer"
    assert report["train_photos"] == 5
    assert report["folds"] >= 2
    assert not (run / "folds").exists()  # the folds' layers are not kept on the SD card
    # --force installs it byte for byte, and the table reads the committed photos with it.
    assert main(["tune", "--data", str(tmp_path), "--force"]) == 0
    assert "installed as" in capsys.readouterr().out
    newest = max(
        (p for p in (tmp_path / "tune").iterdir() if p.is_dir() and p.name != "photos"),
        key=lambda p: p.stat().st_mtime_ns,
    )
    assert table_model(tmp_path).read_bytes() == (newest / "dice_faces.onnx").read_bytes()
    assert chosen_model(Config(), tmp_path)[0] == table_model(tmp_path)
    reader = make_reader(Config(), None, tmp_path)
    record = json.loads((DATA / "labels.jsonl").read_text(encoding="utf-8").splitlines()[0])
    reading = reader.read(read_image(DATA / record["image"]))
    assert sorted(d.value for d in reading.dice) == sorted(d["value"] for d in record["dice"])
    # The next run refines the model in use (a model tuned whole on a PC is not thrown away).
    assert json.loads((newest / "report.json").read_text())["model"] == str(find_model())
    assert main(["tune", "--data", str(tmp_path), "--no-install"]) == 0
    latest = max(
        (p for p in (tmp_path / "tune").iterdir() if p.is_dir() and p.name != "photos"),
        key=lambda p: p.stat().st_mtime_ns,
    )
    assert json.loads((latest / "report.json").read_text())["model"] == str(table_model(tmp_path))
