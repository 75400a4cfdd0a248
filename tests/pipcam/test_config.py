"""The table's configuration file: every refusal names the file, the key and what is wanted."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from pipcam.config import ConfigError, load_config, port_number


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[table]\nport = 0\n", "table.port must be 1-65535, not 0"),
        ("[table]\nport = 65536\n", "table.port must be 1-65535, not 65536"),
        ("[table]\nport = '8000'\n", "table.port must be a whole number, not '8000'"),
        ("[table]\nsettle_seconds = -0.5\n", "table.settle_seconds must be 0 or more"),
        ("[table]\nsettle_seconds = 'slow'\n", "table.settle_seconds must be a number, not"),
        (
            "[table]\nsettle_seconds = inf\n",
            "table.settle_seconds must be a finite number, not inf",
        ),
        (
            "[table]\nsettle_seconds = nan\n",
            "table.settle_seconds must be a finite number, not nan",
        ),
        ("[table]\nsettle_seconds = 1e400\n", "table.settle_seconds must be a finite number"),
        ("table = 5\n", "table must be a section ([table] on a line of its own, its keys below)"),
        ("pins = 5\n", "pins must be a section ([pins] on a line of its own"),
        ("game_options = [1, 2]\n", "game_options must be a section ([game_options] on a"),
        ("[table]\ngame = 5\n", "table.game must be a string in quotes, not 5"),
        ("[table]\nplayers = 'Ann'\n", "table.players must be a list, not 'Ann'"),
        ("[table]\nplayers = ['Ann', ' ']\n", "table.players must be a list of names"),
        ("[table]\ncolour = 'red'\n", "unknown key table.colour; the keys are host, port,"),
        ("[tabel]\n", "unknown section(s) ['tabel']; the sections are [table]"),
        ("[table]\nport = \n", "is not valid TOML: "),
    ],
)
def test_bad_values_are_refused_with_the_file_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "pipcam.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    # The commands put their own name first ("pipcam run: "); the message starts at the file.
    assert str(err.value).startswith(str(path)), err.value
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("text", "port", "settle"),
    [("", 8000, 0.6), ("port = 1\nsettle_seconds = 0\n", 1, 0.0), ("port = 65535\n", 65535, 0.6)],
)
def test_edge_values_are_taken(tmp_path: Path, text: str, port: int, settle: float) -> None:
    path = tmp_path / "pipcam.toml"
    path.write_text(f"[table]\n{text}")
    config = load_config(path)
    assert (config.port, config.settle_seconds) == (port, settle)


def test_a_missing_file_says_where_to_copy_one_from(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no configuration file at .*; copy systemd/pipcam"):
        load_config(tmp_path / "absent.toml")


@pytest.mark.parametrize(("text", "port"), [("1", 1), ("8000", 8000), ("65535", 65535)])
def test_port_number_takes_a_port(text: str, port: int) -> None:
    assert port_number(text) == port


@pytest.mark.parametrize("text", ["0", "65536", "-80", "eighty", ""])
def test_port_number_refuses_what_is_no_port(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=f"from 1 to 65535, not {text!r}$"):
        port_number(text)


def test_a_file_saved_by_a_windows_editor_is_read(tmp_path: Path) -> None:
    """A byte-order mark and CRLF line ends (Notepad) read as the plain file does."""
    path = tmp_path / "pipcam.toml"
    path.write_bytes(b'\xef\xbb\xbf[table]\r\nport = 8123\r\ngame = "general"\r\n')
    config = load_config(path)
    assert (config.port, config.game) == (8123, "general")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--threads", "0"], "argument --threads: a whole number of at least 1 is wanted, not '0'"),
        (["--threads", "-3"], "a whole number of at least 1 is wanted, not '-3'"),
        (["--epochs", "two"], "argument --epochs: a whole number of at least 1 is wanted, not"),
        (["--renders", "-1"], "argument --renders: a whole number of at least 0 is wanted, not"),
    ],
)
def test_tune_counts_are_refused_by_the_command_line(
    args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A count that makes no run (0 threads) stops at the command line, not in a traceback."""
    from pipcam.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["tune", "--head", *args])
    assert exit_info.value.code == 2
    assert said in capsys.readouterr().err
