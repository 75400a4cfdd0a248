"""A table that keeps photos tunes its own face model: when a run starts, that only one runs, what
it says when it ends, that its count survives a restart, and a real run in the background."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pipcam.run import table_model
from pipcam.tune import AutoTune
from tests.pipcam.test_tune import _real_table


class _Process:
    """A started run that ends when told, with ``status``; ``install`` writes a tuned model."""

    def __init__(self, data: Path, log: Path) -> None:
        self.data, self.log = data, log
        self.done = threading.Event()
        self.status = 0
        self.install = False
        self.terminated = False

    def wait(self, timeout: float | None = None) -> int:
        self.done.wait(timeout)
        if self.install:
            table_model(self.data).write_bytes(b"tuned")
        return self.status

    def terminate(self) -> None:
        self.terminated = True
        self.done.set()


class _Launcher:
    def __init__(self, data: Path) -> None:
        self.data = data
        self.started: list[_Process] = []
        self.commands: list[list[str]] = []

    def __call__(self, command: list[str], log: Path) -> _Process:
        self.commands.append(command)
        log.write_text("pipcam tune: not installed: it reads the held-out photos no better\n")
        self.started.append(_Process(self.data, log))
        return self.started[-1]


def _finished(auto: AutoTune) -> None:
    deadline = time.monotonic() + 10
    while auto.running() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not auto.running()


def test_a_run_starts_every_n_photos_and_only_one_at_a_time(tmp_path: Path) -> None:
    launch = _Launcher(tmp_path)
    auto = AutoTune(tmp_path, tmp_path / "pipcam.toml", every=3, launch=launch)
    auto.kept()
    auto.kept()
    assert launch.started == []
    auto.kept()
    assert len(launch.started) == 1
    assert launch.commands[0][1:] == [
        "-m",
        "pipcam",
        "tune",
        "--head",
        "--data",
        str(tmp_path),
        "--config",
        str(tmp_path / "pipcam.toml"),
    ]
    assert launch.commands[0][0] == sys.executable
    for _ in range(4):  # more than enough photos for another run, but one is under way
        auto.kept()
    assert len(launch.started) == 1
    launch.started[0].done.set()
    _finished(auto)
    assert auto.outcome == (
        "automatic tuning kept the model in use: not installed: it reads the held-out photos"
        " no better"
    )
    auto.kept()  # the photos counted meanwhile are enough for the next run
    assert len(launch.started) == 2


def test_the_count_toward_the_next_run_survives_a_restart(tmp_path: Path) -> None:
    launch = _Launcher(tmp_path)
    AutoTune(tmp_path, every=3, launch=launch).kept()
    AutoTune(tmp_path, every=3, launch=launch).kept()
    restarted = AutoTune(tmp_path, every=3, launch=launch)
    assert restarted.count == 2
    restarted.kept()
    assert len(launch.started) == 1
    assert AutoTune(tmp_path, every=3, launch=launch).count == 0
    (tmp_path / "tune" / "auto.json").write_text("{damaged")
    assert AutoTune(tmp_path, every=3, launch=launch).count == 0


@pytest.mark.parametrize(
    ("status", "install", "said"),
    [
        (0, True, "automatic tuning installed"),
        (0, False, "automatic tuning kept the model in use"),
        (1, False, "automatic tuning failed (exit 1): not installed"),
    ],
)
def test_each_end_of_a_run_is_said(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    status: int,
    install: bool,
    said: str,
) -> None:
    launch = _Launcher(tmp_path)
    auto = AutoTune(tmp_path, every=1, launch=launch)
    auto.kept()
    (process,) = launch.started
    process.status, process.install = status, install
    process.done.set()
    _finished(auto)
    assert auto.outcome is not None
    assert auto.outcome.startswith(said)
    assert f"pipcam: {said}" in capsys.readouterr().out


def test_a_run_that_cannot_start_is_said_and_a_table_stopping_stops_its_run(
    tmp_path: Path,
) -> None:
    def refuse(command: list[str], log: Path) -> Any:
        raise OSError(f"no such file: {command[0]} (log {log.name})")

    auto = AutoTune(tmp_path, every=1, launch=refuse)
    auto.kept()
    assert auto.outcome == (
        f"automatic tuning could not start: no such file: {sys.executable} (log auto.log)"
    )
    assert not auto.running()
    launch = _Launcher(tmp_path)
    auto = AutoTune(tmp_path, every=1, launch=launch)
    auto.kept()
    auto.close()
    assert launch.started[0].terminated
    _finished(auto)
    assert auto.outcome is None  # stopped with the table: nothing to say
    with pytest.raises(ValueError, match="every must be at least 1"):
        AutoTune(tmp_path, every=0)


def test_a_table_tunes_its_last_layer_in_the_background_on_its_kept_photos(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PIPCAM_MODEL", raising=False)
    _real_table(tmp_path)
    auto = AutoTune(tmp_path, every=1)  # the real `python -m pipcam tune --head`
    auto.kept()
    assert auto.running()
    deadline = time.monotonic() + 300
    while auto.running() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert auto.outcome == (
        "automatic tuning kept the model in use: not installed: 5 photos measured are too few to"
        " trust (at least 10; each game read by a layer tuned on the others); keep playing"
        " with --keep-photos and tune again, or install it anyway with --force"
    )
    (run,) = [p for p in (tmp_path / "tune").iterdir() if p.is_dir() and p.name != "photos"]
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert report["kind"] == "last layer"
    assert "cost to the players" in auto.log.read_text()
    assert not table_model(tmp_path).exists()
