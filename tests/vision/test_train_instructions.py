"""What a frame costs stage by stage: milliseconds natively, instructions under the counting
plugin (its protocol played here by a stand-in for the plugin's system-call hook)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from vision.train.instructions import Meter, main


class Plugin:
    """Plays the plugin's part: each ``getppid`` appends the count so far to the file, the
    count growing by what the program was doing (``per_call`` for each call of ``work``)."""

    def __init__(self, path: Path, per_call: int) -> None:
        self.path = path
        self.per_call = per_call
        self.executed = 1_000  # before the first mark: the interpreter's start
        path.write_text("", encoding="utf-8")

    def work(self) -> None:
        self.executed += self.per_call

    def getppid(self) -> int:
        self.executed += 7  # the mark itself costs a few instructions
        with self.path.open("a", encoding="utf-8") as out:
            out.write(f"mark {self.executed}\n")
        return 1


def test_a_stage_costs_the_instructions_counted_between_its_marks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = Plugin(tmp_path / "count.txt", per_call=3_000_000)
    monkeypatch.setattr(os, "getppid", plugin.getppid)
    meter = Meter(plugin.path)
    # Ten calls measured after one to warm up: 3 M each, and one mark's cost over the ten.
    assert meter.measure(plugin.work, 10) == pytest.approx(3.0, abs=1e-5)
    cost, result = meter.once(plugin.work)
    assert cost == pytest.approx(3.0, abs=1e-5)
    assert result is None
    assert meter.unit == "M instructions"
    # What ran before the first mark: the start, the warm-up call, the mark.
    assert meter.started == 1_000 + 3_000_000 + 7


def test_natively_it_times_the_reader_on_the_bench_frames(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PIPCAM_COUNT_FILE", raising=False)
    assert main(["--repeat", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "one thread; ms a call; loading the reader" in lines[0]
    names = ["read", "locate", "classify", "footprints", "settle-still", "settle-moved"]
    names += ["light-look", "tray-look"]
    stages = ", ".join(rf"{name} [\d.]+" for name in names)
    sizes = [re.fullmatch(rf"(\d+x\d+), six dice read right: {stages}", line) for line in lines[1:]]
    assert [m.group(1) for m in sizes if m] == ["1280x960", "1640x1232", "3280x2464"], lines


def test_a_count_file_with_no_counter_behind_it_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PIPCAM_COUNT_FILE set outside the counting qemu: said, not an IndexError."""
    monkeypatch.setenv("PIPCAM_COUNT_FILE", str(tmp_path / "count.txt"))
    with pytest.raises(SystemExit, match="no instruction count was written there"):
        main(["--repeat", "1"])


def test_repeat_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--repeat", "0"])
    assert "--repeat must be 1 or more, got 0" in capsys.readouterr().err
