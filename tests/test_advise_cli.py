"""``pipcam advise``: typed states, transcripts and the after-game report, as a user runs them."""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pipcam.advise import add_advise_command


def advise(*args: str) -> int:
    """Run ``pipcam advise ARGS`` through its own parser (the lead wires it into pipcam.cli)."""
    parser = argparse.ArgumentParser(prog="pipcam")
    add_advise_command(parser.add_subparsers(dest="command", required=True))
    ns = parser.parse_args(["advise", *args])
    status: int = ns.func(ns)
    return status


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the Generał solver's table out of the user's cache folder."""
    monkeypatch.setenv("PIPCAM_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def test_typed_throw_json(capsys: pytest.CaptureFixture[str]) -> None:
    """The example of the issue: keep one 1 of 1 1 5 2 3 4 at 300 and throw five dice."""
    assert (
        advise(
            "kymppitonni", "--dice", "1", "1", "5", "2", "3", "4", "--turn-total", "300", "--json"
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["advice"]["actions"] == [{"keep": [1]}]
    assert out["advice"]["then"] == "roll"
    assert out["situation"] == "turn total 300, dice 1 1 2 3 4 5"
    assert out["expected"] == out["choices"][0]["value"] > 550
    bank = next(c for c in out["choices"] if c["label"] == "bank 550")
    # Keeping what the bank sets aside, then banking, is the bank: one choice, not two.
    assert [c["label"] for c in bank["same"]] == ["keep 1 1 5 (250), then bank"]
    assert bank["same"][0]["actions"] == [{"keep": [1, 1, 5]}]
    assert "keep 1 1 5 (250), then bank" not in {c["label"] for c in out["choices"]}
    labels = [c["label"] for c in out["choices"]]
    assert "keep 1 1 (200), then roll" in labels  # fewer points set aside: another choice


def test_typed_throw_text(capsys: pytest.CaptureFixture[str]) -> None:
    """The text names the advice, its expectation and what the other choices give up."""
    assert advise("kymppitonni", "--dice", "115234", "--turn-total", "300") == 0
    out = capsys.readouterr().out
    assert out.startswith("you: turn total 300, dice 1 1 2 3 4 5\nadvice: keep 1 (100), then roll")
    assert "\n  bank 550 " in out


def test_between_throws_with_options(capsys: pytest.CaptureFixture[str]) -> None:
    """--dice-left asks bank or roll; --option changes the rules (here a minimum bank)."""
    assert advise("kymppitonni", "--dice-left", "2", "--turn-total", "300", "--json") == 0
    assert json.loads(capsys.readouterr().out)["advice"]["label"] == "bank 300"
    args = ["kymppitonni", "--dice-left", "2", "--turn-total", "300", "--option", "min_bank=350"]
    assert advise(*args, "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["advice"]["label"] == "roll 2 dice"
    assert out["notes"] == ["no bank yet: at least 350 needed"]


def test_thousand_players_situation(capsys: pytest.CaptureFixture[str]) -> None:
    """1000 at 480: a pass of 75 would hit the dump truck, so throw the last die."""
    assert advise("1000", "--dice-left", "1", "--turn-total", "75", "--score", "480") == 0
    out = capsys.readouterr().out
    assert "advice: roll 1 die" in out
    assert "pass 75" in out
    assert "-480.0" in out


def test_a_bank_worth_other_than_its_points_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    """1000 at 520: a pass of 35 lands on the dump truck (555): the note says so."""
    assert advise("thousand", "--dice-left", "2", "--turn-total", "35", "--score", "520") == 0
    out = capsys.readouterr().out
    assert "pass 35 is worth -520: " in out
    assert "dump truck" in out


def test_a_throw_that_ends_the_turn(capsys: pytest.CaptureFixture[str]) -> None:
    """A bust typed as the throw: nothing to advise, the engine's event is shown."""
    assert advise("ones-and-fives", "--dice", "223466", "--turn-total", "300") == 0
    assert capsys.readouterr().out == (
        "the turn is over: you threw 2 2 3 4 6 6: no combination, losing 300\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["kymppitonni", "--dice-left", "2", "--turn-total", "325"],
            "a turn total of kymppitonni is a multiple of 50, not 325",
        ),
        (
            ["kymppitonni", "--dice", "1", "5", "2"],
            "with turn total 0 the dice are the turn's first throw: all 6, not 3",
        ),
        (
            ["kymppitonni", "--dice-left", "6", "--turn-total", "300"],
            "--dice-left is 0 (hot dice) to 5, not 6",
        ),
        (
            ["sekvence"],
            "the coach knows kymppitonni, thousand, jednicky-a-petky, sest-kostek "
            "and general, not sekvence",
        ),
        (
            ["kymppitonni", "--on-barrel"],
            "--on-barrel: for thousand, not kymppitonni; leave it out",
        ),
        (
            ["thousand", "--on-barrel", "--score", "870"],
            "on the barrel the score is 880 to 999 (barrel_at 880), not 870; give --score, or"
            " leave out --on-barrel",
        ),
        ([], "name the game, or give --transcript FILE or --report FILE"),
        # Flags that describe another game's state, and states no game reaches.
        (
            ["general", "--turn-total", "300"],
            "--turn-total: for the 10 000 games and thousand, not",
        ),
        (["kymppitonni", "--rolls-left", "2"], "--rolls-left: for general, not kymppitonni"),
        (["general", "--sheet", "ones=3,ones=4"], "--sheet names ones twice (3 and 4)"),
        (["kymppitonni", "--score", "-5000"], "--score is at least 0 in kymppitonni, not -5000"),
        (["ones-and-fives", "--score", "10000"], "--score 10000 has reached the target (10000)"),
        (
            ["thousand", "--score", "950", "--turn-total", "100", "--dice-left", "2"],
            "a score of 880 or more (barrel_at) is on the barrel; add --on-barrel",
        ),
        (["thousand", "--bolts", "7"], "--bolts 7: a player's bolts are 0 to 2: bolt 3 costs 100"),
        (
            ["kymppitonni", "--must-confirm", "--turn-total", "500", "--dice-left", "2"],
            "--must-confirm: kymppitonni has no confirmation throw under these options",
        ),
        (
            ["sest-kostek", "--must-confirm", "--turn-total", "500", "--dice-left", "2"],
            "--must-confirm: a confirmation throw is of all 6 dice; give --dice-left 0",
        ),
    ],
    ids=[
        "off-grid",
        "first-throw",
        "dice-left",
        "no-coach",
        "barrel",
        "below-barrel",
        "nothing",
        "general-total",
        "jeopardy-rolls",
        "sheet-twice",
        "negative-score",
        "at-target",
        "off-barrel",
        "bolts",
        "no-confirmation",
        "confirm-all-six",
    ],
)
def test_errors(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A wrong request: exit status 2 and one line on stderr, nothing on stdout."""
    assert advise(*args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"pipcam advise: {message}")
    assert captured.err.count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        # 1000 without the clamp: a climb stays whole, so the barrel holds 1000 (RULES §4.4), and
        # a fall leaves 900 off the barrel.
        ["thousand", "--on-barrel", "--score", "1000", "--dice-left", "4", "--turn-total", "10"]
        + ["--option", "barrel_clamp=off"],
        ["thousand", "--score", "900", "--dice-left", "4", "--turn-total", "10"]
        + ["--option", "barrel_clamp=off"],
        # A fall that takes nothing leaves 880 off the barrel.
        ["thousand", "--score", "880", "--dice-left", "4", "--turn-total", "10"]
        + ["--option", "barrel_fall_penalty=0"],
        # Kymppitonni's equalizing round: a break's bonus may seat a player past 10 000 (K18).
        ["kymppitonni", "--score", "10500", "--dice", "1", "2", "3", "4", "6", "6"],
        # Below 0 in 1000 without the floor: bolts, which only an opened player gets.
        ["thousand", "--score", "-50", "--turn-total", "50", "--dice-left", "3"]
        + ["--option", "score_floor=off"],
    ],
    ids=["barrel-1000", "fallen-900", "fallen-free", "equalizing", "negative"],
)
def test_states_real_games_reach_are_advised(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert advise(*args) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.startswith("you: ")
    assert "to open the game" not in out


def _write(tmp_path: Path, lines: list[str]) -> str:
    path = tmp_path / "game.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


KYMPPI = [
    '{"game": "kymppitonni", "players": ["Ann", "Bob"]}',
    '{"roll": [1, 1, 5, 2, 3, 4]}',
    '{"keep": [1, 1, 5]}',
    '{"bank": true}',
    '{"roll": [1, 2, 3, 3, 4, 6]}',
]


def test_transcript_advises_the_player_to_move(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Replay, then advise Bob, who has 1 2 3 3 4 6 on the table."""
    assert advise("--transcript", _write(tmp_path, KYMPPI), "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["player"] == "Bob"
    assert out["advice"]["actions"] == [{"keep": [1]}]


def test_transcript_of_another_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A game id that contradicts the transcript is refused."""
    assert advise("thousand", "--transcript", _write(tmp_path, KYMPPI)) == 2
    assert capsys.readouterr().err == (
        "pipcam advise: the transcript is a game of kymppitonni, not thousand\n"
    )


def test_report_table_and_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--report prints the table and --chart writes an SVG file."""
    chart = tmp_path / "regret.svg"
    assert advise("--report", _write(tmp_path, KYMPPI), "--chart", str(chart)) == 0
    out = capsys.readouterr().out
    assert "player  decisions  not best  points lost" in out
    assert out.rstrip().endswith(f"chart written to {chart}")
    root = ET.fromstring(chart.read_text(encoding="utf-8"))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"


def test_report_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Ann's two decisions (keep, bank) each lose points; Bob has not decided yet."""
    assert advise("--report", _write(tmp_path, KYMPPI), "--json") == 0
    out = json.loads(capsys.readouterr().out)
    ann, bob = out["players"]
    assert (ann["decisions"], ann["mistakes"], bob["decisions"]) == (2, 2, 0)
    assert ann["regret"] == pytest.approx(sum(d["regret"] for d in out["decisions"]))


def test_general_typed(capsys: pytest.CaptureFixture[str]) -> None:
    """Generał: five 6s after the first throw with Generał still open: write it."""
    assert (
        advise("general", "--dice", "66666", "--rolls-left", "2", "--sheet", "ones=3", "--json")
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["advice"]["actions"] == [{"score": "general"}]
    assert out["objective"] == "expected final total of the column"


def test_general_unknown_box(capsys: pytest.CaptureFixture[str]) -> None:
    """A box that is not on the sheet is named in the refusal."""
    assert advise("general", "--sheet", "yahtzee=50") == 2
    assert capsys.readouterr().err.startswith(
        "pipcam advise: unknown box 'yahtzee'; the boxes are: ones"
    )


@pytest.mark.parametrize(
    ("sheet", "options", "said"),
    [
        ("ones=7", [], "no throw writes 7 in ones; it takes 0, 1, 2, 3, 4, 5\n"),
        ("twos=-4", [], "no throw writes -4 in twos; it takes 0, 2, 4, 6, 8, 10\n"),
        ("full_house=24", [], "no throw writes 24 in full_house; it takes 0, 25\n"),
        ("chance=3", [], "no throw writes 3 in chance; it takes 5, 6, 7,"),
    ],
)
def test_general_box_no_throw_writes_is_refused(
    capsys: pytest.CaptureFixture[str], sheet: str, options: list[str], said: str
) -> None:
    """A value no throw can write in its box is a typo: advice on that sheet would be advice
    on another game."""
    assert advise("general", "--sheet", sheet, *options) == 2
    assert said in capsys.readouterr().err


def test_general_box_values_follow_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    """With first_roll_multiplier 2 a Full written after the first throw holds 50."""
    assert advise("general", "--sheet", "full_house=50", "--option", "first_roll_multiplier=2") == 0
    assert advise("general", "--sheet", "full_house=50") == 2
    assert "no throw writes 50 in full_house" in capsys.readouterr().err
