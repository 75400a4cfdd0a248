"""The record of what a machine reads, and its comparison with another machine's."""

from __future__ import annotations

import copy
import json
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vision.classify import processor
from vision.train.machines import compare, main, record


def _die(value: int | None, status: str, confidence: float, x: float) -> dict[str, Any]:
    return {"value": value, "confidence": confidence, "status": status, "box": [x, 0, x + 9, 9]}


def _record() -> dict[str, Any]:
    """A record of two photos and a face model of two members."""
    return {
        "processor": "x86_64 (avx2)",
        "versions": {"onnxruntime": "1.32.0"},
        "models": {"face": "f", "locator": "l", "die check": "c"},
        "split": "val",
        "readings": {
            "a/one.jpg": {
                "status": "settled",
                "dice": [_die(4, "ok", 0.9, 0), _die(2, "ok", 0.8, 20)],
                "set_aside": [],
            },
            "a/two.jpg": {
                "status": "settled",
                "dice": [_die(None, "cocked", 0.6, 0)],
                "set_aside": [_die(6, "ok", 0.99, 50)],
            },
        },
        "members": [[[-0.1, -2.5, -3.0]], [[-0.2, -2.0, -2.5]]],
    }


def _nothing(r: dict[str, Any]) -> None:
    del r


def _value(r: dict[str, Any]) -> None:
    r["readings"]["a/one.jpg"]["dice"][1]["value"] = 3


def _unsure(r: dict[str, Any]) -> None:
    r["readings"]["a/two.jpg"]["set_aside"][0]["status"] = "uncertain"


def _confidence(r: dict[str, Any]) -> None:
    r["readings"]["a/one.jpg"]["dice"][0]["confidence"] = 0.7


def _order(r: dict[str, Any]) -> None:
    r["readings"]["a/one.jpg"]["dice"].reverse()


def _box(r: dict[str, Any]) -> None:
    r["readings"]["a/one.jpg"]["dice"][1]["box"][0] = 20.4


def _member(r: dict[str, Any]) -> None:
    r["members"][1][0][1] = 0.0


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (_nothing, ["2 photos, 4 dice: 0 photos read otherwise",
                          "the photos read alike: confidences within 0.0000, boxes within 0.0 px"]),
        (_value, ["2 photos, 4 dice: 1 photo read otherwise (this | the other):",
                  "  a/one.jpg: settled: 2 4 | settled: 3 4"]),
        (_unsure, ["  a/two.jpg: settled: cocked; set aside: 6 | settled: cocked; set aside: 6?"]),
        # Dice read alike, in another order, are the same reading.
        (_order, ["2 photos, 4 dice: 0 photos read otherwise"]),
        (_confidence, ["the photos read alike: confidences within 0.2000, boxes within 0.0 px"]),
        (_box, ["the photos read alike: confidences within 0.0000, boxes within 0.4 px"]),
        (_member, ["face model member 1 on the 1 committed test crops: log-probabilities within 0,"
                   " the same class",
                   "face model member 2 on the 1 committed test crops: log-probabilities within"
                   " 2, NOT the same class"]),
    ],
)  # fmt: skip
def test_the_comparison_says_what_the_other_machine_read_otherwise(
    change: Callable[[dict[str, Any]], None], expected: list[str]
) -> None:
    ours, theirs = _record(), _record()
    theirs["processor"] = "aarch64 (asimd), qemu cortex-a72"
    change(theirs)
    lines = compare(ours, theirs)
    assert lines[:2] == [
        "this record: x86_64 (avx2), onnxruntime 1.32.0",
        "the other:   aarch64 (asimd), qemu cortex-a72, onnxruntime 1.32.0",
    ]
    for line in expected:
        assert line in lines


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r["models"].update(face="g"), "the records are of different models"),
        (lambda r: r["readings"].pop("a/two.jpg"), "the records read different photos"),
    ],
)
def test_records_of_other_models_or_photos_are_not_compared(
    change: Callable[[dict[str, Any]], None], message: str
) -> None:
    theirs = _record()
    change(theirs)
    with pytest.raises(ValueError, match=message):
        compare(_record(), theirs)


def test_the_processor_names_the_machine_and_the_emulated_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("QEMU_CPU", raising=False)
    plain = processor()
    assert plain.split(" (")[0] == platform.machine()
    monkeypatch.setenv("QEMU_CPU", "cortex-a72")
    if platform.machine() == "x86_64":
        # An x86 program under qemu reads the host's /proc/cpuinfo: its flags are not said.
        assert processor() == "x86_64, qemu cortex-a72"
    else:
        assert processor() == f"{plain}, qemu cortex-a72"


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    """The record of the committed test photos alone."""
    return record([], "val")


def test_a_record_holds_every_committed_photo_and_each_members_output(
    committed: dict[str, Any],
) -> None:
    names = {
        json.loads(line)["image"]
        for line in (Path(__file__).parents[1] / "data" / "dice" / "labels.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
        if line.strip()
    }
    assert set(committed["readings"]) == {f"dice/{name}" for name in names}
    assert all(r["status"] == "settled" and r["dice"] for r in committed["readings"].values())
    # The shipped face model is a pair; each member reads the 22 committed crops.
    assert [len(member) for member in committed["members"]] == [22, 22]
    assert compare(committed, copy.deepcopy(committed))[2].endswith(": 0 photos read otherwise")


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    """A folder of labelled photos with none in it: the command reads the committed ones only."""
    folder = tmp_path / "folder"
    (folder / "images").mkdir(parents=True)
    (folder / "labels.jsonl").write_text("", encoding="utf-8")
    return folder


def test_the_command_writes_a_record_and_compares_it(
    tmp_path: Path, empty: Path, committed: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    other = copy.deepcopy(committed)
    name = sorted(other["readings"])[0]
    other["readings"][name]["dice"][0]["value"] = 7
    (tmp_path / "other.json").write_text(json.dumps(other), encoding="utf-8")
    out = tmp_path / "this.json"
    assert main([str(out), str(empty), "--against", str(tmp_path / "other.json")]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["readings"] == committed["readings"]
    printed = capsys.readouterr().out
    assert ": 1 photo read otherwise (this | the other):" in printed
    assert f"  {name}: settled: " in printed


@pytest.mark.parametrize(
    ("against", "message"),
    [
        ("missing.json", "cannot read the record"),
        ("notjson.json", "cannot read the record"),
        ("other.json", "is no record of this command"),
    ],
)
def test_the_command_says_what_is_wrong_with_the_other_record(
    tmp_path: Path, empty: Path, against: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notjson.json").write_text("{", encoding="utf-8")
    (tmp_path / "other.json").write_text('{"models": {}}', encoding="utf-8")
    argv = [str(tmp_path / "this.json"), str(empty), "--against", str(tmp_path / against)]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_the_command_refuses_a_folder_that_is_not_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([str(tmp_path / "this.json"), str(tmp_path / "nowhere")])
    assert "no folder" in capsys.readouterr().err


def test_the_command_says_a_folder_is_not_in_the_shared_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "photos").mkdir()
    with pytest.raises(SystemExit):
        main([str(tmp_path / "this.json"), str(tmp_path / "photos")])
    assert "labels.jsonl: give folders in the shared data format" in capsys.readouterr().err
    assert not (tmp_path / "this.json").exists()
