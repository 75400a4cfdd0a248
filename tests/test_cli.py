"""The ``pipcam`` command line as a user runs it: a real subprocess, real stdin and stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pipcam.cli import main


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run ``python -m pipcam.cli`` as a child process."""
    return subprocess.run(
        [sys.executable, "-m", "pipcam.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_version_names_the_installed_package(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"pipcam {metadata.version('pipcam')} (Python {sys.version_info[0]}.")


def test_games_lists_every_id_with_options(capsys: pytest.CaptureFixture[str]) -> None:
    """`pipcam games --json`: ids, native names and each option with its default."""
    assert main(["games", "--json"]) == 0
    games = {g["id"]: g for g in json.loads(capsys.readouterr().out)}
    assert {"kymppitonni", "jednicky-a-petky", "sest-kostek", "sekvence"} <= set(games)
    kymppi = games["kymppitonni"]
    assert kymppi["name"] == "Kymppitonni"
    options = {o["name"]: o["default"] for o in kymppi["options"]}
    assert options["straight_value"] == 1000
    assert options["four_plus_pair"] == "separate"
    assert kymppi["presets"]["niemo"] == {"straight_value": 2000, "first_roll_reset": True}


def test_games_text(capsys: pytest.CaptureFixture[str]) -> None:
    """The text listing names aliases and shows each option with its default."""
    assert main(["games"]) == 0
    out = capsys.readouterr().out
    assert "kymppitonni        Kymppitonni (also: 10000-fi)" in out
    assert "    min_record = 400  [int >= 0]" in out


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["kymppitonni", "1", "1", "5", "2", "3", "4"], {"points": 250, "scoring": [1, 1, 5]}),
        (["10000-fi", "333355"], {"points": 700, "rest": []}),
        (
            ["kymppitonni", "3", "3", "3", "3", "5", "5", "--option", "four_plus_pair=three_pairs"],
            {"points": 2000},
        ),
        (["jednicky-a-petky", "1,1,1,1,5,5"], {"points": 1500}),
        (["ones-and-fives", "2", "3", "4", "6", "6", "3"], {"points": 0, "scoring": []}),
        (["sekvence", "1", "2", "3", "5", "5", "6"], {"points": 10}),
    ],
)
def test_score(
    args: list[str], expected: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    """`pipcam score GAME D D D ...` prints the PROTOCOL.md object."""
    assert main(["score", *args]) == 0
    got = json.loads(capsys.readouterr().out)
    assert {k: got[k] for k in expected} == expected


@pytest.mark.parametrize("game", ["kymppitonni", "jednicky-a-petky", "sest-kostek", "thousand"])
def test_score_prints_the_protocol_keys_and_explains_on_request(
    game: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A jeopardy roll prints exactly PROTOCOL.md's three keys; --explain adds the groups."""
    roll = ["1", "1", "5", "2", "3"]
    assert main(["score", game, *roll]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert set(plain) == {"points", "scoring", "rest"}
    assert main(["score", game, *roll, "--explain"]) == 0
    explained = json.loads(capsys.readouterr().out)
    assert {k: explained[k] for k in plain} == plain
    used = sorted(d for g in explained["groups"] for d in g["dice"])
    assert used == plain["scoring"] == [1, 1, 5]


def test_score_explain_says_why_a_turn_ends(capsys: pytest.CaptureFixture[str]) -> None:
    """Four 2s in Kymppitonni score 0: --explain says it is the four 2s, not a roll with nothing."""
    assert main(["score", "kymppitonni", "2", "2", "2", "2", "1", "5"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "points": 0,
        "scoring": [],
        "rest": [1, 2, 2, 2, 2, 5],
    }
    assert main(["score", "kymppitonni", "222215", "--explain"]) == 0
    assert json.loads(capsys.readouterr().out)["ends_turn"].startswith("four 2s")
    assert main(["score", "thousand", "2", "3", "4", "6", "6", "--explain"]) == 0
    assert json.loads(capsys.readouterr().out)["ends_turn"].startswith("no combination")
    assert main(["score", "thousand", "2", "3", "4", "6", "6"]) == 0
    assert "ends_turn" not in json.loads(capsys.readouterr().out)


def test_score_stdin_one_line_per_roll() -> None:
    """`pipcam score GAME -`: a JSON line per roll; a bad line is reported, the rest scored."""
    result = run("score", "kymppitonni", "-", stdin="1 1 1\n5\n\n1 7\n2 2 4 4 5 5\n")
    lines = [json.loads(line)["points"] for line in result.stdout.splitlines()]
    assert lines == [1000, 50, 2000]
    assert result.returncode == 1
    assert "line 4: a die shows 1 to 6, not 7" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "yatzy", "1"], "pipcam score: unknown game 'yatzy'; the games are: general,"),
        (["score", "sekvence", "1", "x"], "a die is a number from 1 to 6, not 'x'"),
        (
            ["score", "kymppitonni", "1", "--option", "straight=2000"],
            "unknown option 'straight'; the options are: break_after_cancel,",
        ),
        (
            ["score", "kymppitonni", "1", "--option", "four_plus_pair=both"],
            "option four_plus_pair takes separate | three_pairs, not 'both'",
        ),
        (
            ["score", "kymppitonni", "1111111"],
            "Kymppitonni throws 1 to 6 dice, not 7 ([1, 1, 1, 1, 1, 1, 1])",
        ),
        (["score", "thousand", "1", "1", "1", "1", "1", "1"], "throws 1 to 5 dice, not 6"),
        (["score", "sekvence", "1", "2", "3"], "Sekvence throws all 6 dice, not 3"),
        (
            ["score", "kymppitonni", "123456", "--option", "straight_value=-500"],
            "option straight_value takes a whole number of at least 0, not -500",
        ),
    ],
)
def test_usage_errors(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Bad input gets exit status 2 and a message that says what was wrong."""
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_replay_bad_line(tmp_path: Path) -> None:
    """An illegal action stops the replay with status 2, the line number, and nothing on stdout."""
    path = tmp_path / "game.jsonl"
    path.write_text(
        '{"game": "jednicky-a-petky", "players": ["Ann", "Bob"]}\n'
        '{"roll": [1, 1, 6, 6, 3, 4]}\n'
        '{"keep": [1, 1]}\n'
        '{"roll": [2, 3, 4, 5]}\n'
        '{"keep": [5]}\n'
        '{"bank": true}\n'
    )
    result = run("replay", str(path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == (
        f"pipcam replay: {path}: line 6: cannot bank 250: "
        "at least 400 needed and at most 2 dice left; you have 3"
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "line 1: the transcript is empty; it starts with a header line"),
        ('{"game": "kymppitonni", "players": ["A", "B"]}\n{"roll": [1, 2\n', "line 2: not JSON"),
        (
            '{"game": "kymppitonni", "players": ["A", "B"]}\n{"jump": 1}\n',
            "line 2: unknown action 'jump'",
        ),
        ('{"game": "nope", "players": ["A"]}\n', "line 1: unknown game 'nope'"),
        (
            '{"game": "general", "players": ["A", "B"]}\n{"roll": [1, 2, 3, 4, 5]}\n'
            '{"score": "chance", "column": "2"}\n',
            'line 3: "column" takes a sheet column counted from 0 (0, 1 or 2), not "2"',
        ),
        (
            '{"game": "general", "players": ["A", "B"]}\n{"roll": [1, 2, 3, 4, 5]}\n{"score": 3}\n',
            'line 3: "score" takes a category id such as "chance", not 3',
        ),
    ],
)
def test_replay_malformed(text: str, reason: str) -> None:
    """Malformed transcripts name the line and the problem."""
    result = run("replay", "-", stdin=text)
    assert result.returncode == 2
    assert reason in result.stderr


def test_replay_reads_a_transcript_saved_by_a_windows_editor(tmp_path: Path) -> None:
    """A byte-order mark and CRLF line ends (Notepad) replay as the plain file does."""
    text = '{"game": "kymppitonni", "players": ["A", "B"]}\n{"roll": [1, 1, 5, 2, 3, 4]}\n'
    plain, windows = tmp_path / "plain.jsonl", tmp_path / "windows.jsonl"
    plain.write_text(text, encoding="utf-8")
    windows.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    first, second = run("replay", str(plain)), run("replay", str(windows))
    assert (second.returncode, second.stderr) == (0, "")
    assert json.loads(second.stdout) == json.loads(first.stdout)
    assert json.loads(second.stdout)["turn"]["dice"] == [1, 1, 2, 3, 4, 5]
    # Windows PowerShell's `>` writes UTF-16 with its byte-order mark.
    windows.write_bytes(text.replace("\n", "\r\n").encode("utf-16"))
    third = run("replay", str(windows))
    assert (third.returncode, third.stderr) == (0, "")
    assert json.loads(third.stdout) == json.loads(first.stdout)


@pytest.mark.parametrize("command", [("replay",), ("advise", "kymppitonni", "--transcript")])
def test_a_transcript_that_is_not_text_names_its_line(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """Bytes that are not UTF-8 (another encoding, a binary file) are an error naming the line
    and what to do, not a traceback."""
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"game": "kymppitonni", "players": ["A", "B"]}\n{"roll": [1, 5]} \xe9\n')
    result = run(*command, str(bad))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.endswith(
        f"{bad}: line 2: not UTF-8 text (byte 0xe9 at column 18); a transcript is JSON lines in"
        " UTF-8: save it as UTF-8\n"
    )


def test_play_saves_a_transcript_that_replays(tmp_path: Path) -> None:
    """`pipcam play` at a terminal: typed rolls, a refused bank, undo, and a saved transcript."""
    save = tmp_path / "game.jsonl"
    typed = "\n".join(
        [
            "1 1 6 6 3 4",
            "keep 1 1",
            "bank",
            "2 3 4 5",
            "5",
            "2 3 5",
            "k 5",
            "1 5",
            "15",
            "undo",
            "keep 1 5",
            "b",
            "help",
            "q",
        ]
    )
    result = run(
        "play", "jednicky-a-petky", "--players", "Ann", "Bob", "--save", str(save), stdin=typed
    )
    assert result.returncode == 0, result.stderr
    assert (
        "! cannot bank 200: at least 400 needed and at most 2 dice left; you have 4"
        in result.stdout
    )
    assert "undone: roll 1 5" not in result.stdout  # "15" was a keep of the dice 1 and 5
    assert "undone: keep 1 5" in result.stdout
    assert "Ann banked 450" in result.stdout
    assert "Bob to play: roll 6 dice" in result.stdout
    replayed = run("replay", str(save))
    state = json.loads(replayed.stdout)
    assert state["players"] == [{"name": "Ann", "score": 450}, {"name": "Bob", "score": 0}]
    assert state["to_move"] == "Bob"


def test_play_goes_on_with_the_game_its_save_file_holds(tmp_path: Path) -> None:
    """Closing the terminal is not the end of the game: the same command goes on with it."""
    save = tmp_path / "game.jsonl"
    first = run(
        "play",
        "kymppitonni",
        "--players",
        "Ann",
        "Bob",
        "--save",
        str(save),
        stdin="1 1 5 2 3 4\nkeep 1 1 5\n",
    )
    assert first.returncode == 0, first.stderr
    again = run(
        "play", "kymppitonni", "--players", "Ann", "Bob", "--save", str(save), stdin="bank\n"
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"going on with the game saved in {save} (2 actions)\n")
    assert "Ann banked 250" in again.stdout
    assert [json.loads(line) for line in save.read_text().splitlines()[1:]] == [
        {"roll": [1, 1, 2, 3, 4, 5]},
        {"keep": [1, 1, 5]},
        {"bank": True},
    ]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["kymppitonni", "--players", "Ann", "Cy"],
            "holds another game (kymppitonni: Ann, Bob;"
            " target=5000); to go on with it: pipcam play kymppitonni --players Ann Bob"
            " --option target=5000 --save {save}; or pick another --save FILE",
        ),
        (
            ["kymppitonni", "--players", "Ann", "Bob"],
            "holds another game (kymppitonni: Ann, Bob; target=5000)",
        ),
        (["general", "--players", "Ann", "Bob"], "holds another game (kymppitonni: Ann, Bob;"),
    ],
    ids=["other-players", "other-options", "other-game"],
)
def test_play_never_overwrites_another_game(tmp_path: Path, args: list[str], said: str) -> None:
    save = tmp_path / "game.jsonl"
    kept = '{"game": "kymppitonni", "players": ["Ann", "Bob"], "options": {"target": 5000}}\n'
    kept += '{"roll": [1, 1, 2, 3, 4, 5]}\n'
    save.write_text(kept)
    result = run("play", *args, "--save", str(save))
    assert result.returncode == 2
    assert result.stderr.startswith(f"pipcam play: {save} " + said.format(save=save))
    assert save.read_text() == kept


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"\xff\xd8\xff\xe0 a photo", "is no transcript (not text); pick another --save FILE"),
        (b"shopping list\n", "is no transcript this game can go on with (line 1: not JSON"),
    ],
)
def test_play_refuses_a_save_file_that_is_no_transcript(
    tmp_path: Path, content: bytes, said: str
) -> None:
    save = tmp_path / "notes.txt"
    save.write_bytes(content)
    result = run("play", "kymppitonni", "--players", "Ann", "Bob", "--save", str(save))
    assert result.returncode == 2
    assert result.stderr.startswith(f"pipcam play: {save} {said}")
    assert save.read_bytes() == content


def test_play_says_where_it_cannot_save(tmp_path: Path) -> None:
    save = tmp_path / "no-such-folder" / "game.jsonl"
    result = run("play", "kymppitonni", "--players", "Ann", "Bob", "--save", str(save))
    assert (result.returncode, result.stderr) == (
        2,
        f"pipcam play: cannot save the transcript to {save} (No such file or directory);"
        " pick another --save FILE\n",
    )


def test_a_failing_save_mid_game_is_said_and_the_game_goes_on(tmp_path: Path) -> None:
    """The disk goes away mid-game: each action is still taken and the failure said; the next
    save that works writes the whole game."""
    import io

    from pipcam.play import Terminal
    from scoring.registry import find_game

    folder = tmp_path / "usb-stick"
    folder.mkdir()
    save = folder / "game.jsonl"
    terminal = Terminal(find_game("kymppitonni")(), ["Ann", "Bob"], save=save)
    terminal.save_now()

    class Typed(io.StringIO):
        """Lines typed at the terminal; the stick is pulled after the first, put back later."""

        def __iter__(self) -> Any:
            for number, line in enumerate(self.getvalue().splitlines(keepends=True)):
                if number == 1:
                    save.unlink()
                    folder.rmdir()
                if number == 2:
                    folder.mkdir()
                yield line

    out = io.StringIO()
    assert terminal.run(Typed("1 1 5 2 3 4\nkeep 1 1 5\nbank\n"), out) == 0
    said = out.getvalue()
    assert f"! cannot save the transcript to {save} (No such file or directory)" in said
    assert "Ann banked 250" in said
    assert len(save.read_text().splitlines()) == 4  # the header and all three actions
    assert said.endswith(f"transcript saved to {save}\n")

    # Pulled for good: the end says the file lags behind, and the status is 1.
    save.unlink()
    folder.rmdir()
    out = io.StringIO()
    assert terminal.run(io.StringIO("2 2 3 4 6 6\n"), out) == 1
    assert out.getvalue().endswith(
        f"! the last actions are not in {save}: it could not be written\n"
    )


@pytest.mark.parametrize(
    ("game", "typed", "hint"),
    [
        (
            "kymppitonni",
            "1 1 5 2 3 4",
            "Player: turn total 0, dice 1 1 2 3 4 5\n"
            "advice: keep 1 (100), then roll (expected 399.5; expected points of the turn)\n"
            "other choices:\n  keep 5 (50), then roll ",
        ),
        ("drapky", "1 1 5 2 3 4", "legal now: keep nothing, keep 1, keep 1 1, "),
    ],
    ids=["coached", "no-coach"],
)
def test_play_hint_is_the_coach_where_it_knows_the_game(game: str, typed: str, hint: str) -> None:
    result = run("play", game, "--players", "Player", "Other", stdin=f"{typed}\nhint\n")
    assert result.returncode == 0, result.stderr
    assert hint in result.stdout


@pytest.mark.parametrize(
    ("players", "said"),
    [
        (["Ann", "Ann"], "two players share a name"),
        (["Ann", "ann"], "the names 'Ann' and 'ann' look the same"),
        (["Ann", "Ann\u200b"], "the names 'Ann' and 'Ann\\u200b' look the same"),
        (["Ann", "Bob "], "the name 'Bob ' starts or ends with a space"),
        (["Ann", "B\nob"], "the name 'B\\nob' has a control character"),
    ],
)
def test_play_refuses_bad_players(players: list[str], said: str) -> None:
    """Names that would show as one, or break the lines that show them, are refused before
    the game starts."""
    result = run("play", "sekvence", "--players", *players)
    assert result.returncode == 2
    assert said in result.stderr


def test_names_of_every_script_and_emoji_are_players() -> None:
    result = run("play", "sekvence", "--players", "Zoë", "Łukasz", "Юля", "🎲 Bo", stdin="q\n")
    assert result.returncode == 0, result.stderr


def test_a_reader_that_leaves_early_stops_it_quietly() -> None:
    """`pipcam games | head -1`: the closed pipe ends the command without a traceback."""
    child = subprocess.Popen(
        [sys.executable, "-m", "pipcam.cli", "games"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None
    assert child.stderr is not None
    child.stdout.close()  # before the first line is written: every write meets a closed pipe
    err = child.stderr.read().decode()
    assert child.wait(timeout=60) == 141
    assert err == ""
