"""The table's configuration file (TOML) with documented defaults.

Example (systemd/pipcam.toml.example has every key)::

    [table]
    port = 8000
    camera = "picamera"
    pin = "4711"          # or the PIPCAM_PIN environment variable; else made up at start
    game = "kymppitonni"
    players = ["Ann", "Bob"]

    [game_options]
    target = 5000

    [pins]
    bank = 17
"""

from __future__ import annotations

import argparse
import math
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PHOTO_LIMIT = 2000
"""Photos ``keep_photos`` keeps at most (the oldest go first): 1-3 GB of 1280x960 to 3280x2464."""

AUTO_TUNE_EVERY = 50
"""Photos a table that keeps them takes between two tunings of its own (``pipcam.tune.AutoTune``);
``auto_tune = true`` in the config means this, ``false`` never, a number that many photos."""


CALIBRATION_NAME = "calibration.json"
"""The tray calibration ``pipcam calibrate`` writes beside the games, and ``pipcam run`` reads,
unless the config names another file (``calibration``)."""


PORTS = range(1, 65536)
"""The TCP ports a scoreboard can listen on (``--port`` and ``table.port``)."""


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Config:
    """Everything ``pipcam run`` reads from its configuration file."""

    source: Path | None = None
    host: str = "0.0.0.0"  # every phone on the table's network must reach the scoreboard
    port: int = 8000
    data: Path | None = None
    camera: str | None = None
    pin: str | None = None
    game: str = "kymppitonni"
    players: tuple[str, ...] = ("Player 1", "Player 2")
    game_options: dict[str, Any] = field(default_factory=dict)
    pins: dict[str, Any] = field(default_factory=dict)
    settle_seconds: float = 0.6
    model: Path | None = None
    calibration: Path | None = None
    keep_photos: bool = False  # save each settled frame for pipcam photos (pipcam/photos.py)
    photo_limit: int = PHOTO_LIMIT
    auto_tune: int = AUTO_TUNE_EVERY  # with kept photos: photos between tunings; 0 never
    coach: bool = False  # the phones' Hint button (GET /api/advice); off: a table plays unaided

    def header(self) -> dict[str, Any]:
        """The transcript header of the game a fresh table starts with."""
        return {"game": self.game, "players": list(self.players), "options": self.game_options}


# How a key's expected type is named to someone editing the TOML file.
_KIND_NAMES: dict[type, str] = {
    str: "a string in quotes",
    int: "a whole number",
    float: "a number",
    bool: "true or false",
    list: "a list",
}

_TABLE_KEYS = {
    "host": str,
    "port": int,
    "data": str,
    "camera": str,
    "pin": str,
    "game": str,
    "players": list,
    "settle_seconds": float,
    "model": str,
    "calibration": str,
    "keep_photos": bool,
    "photo_limit": int,
    "auto_tune": int,
    "coach": bool,
}


def load_config(path: Path | None) -> Config:
    """Read a configuration file; None gives the defaults. Errors name the file and the key."""
    if path is None:
        return Config()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # a BOM: Windows editors
    except FileNotFoundError as exc:
        raise ConfigError(
            f"no configuration file at {path}; "
            "copy systemd/pipcam.toml.example there or leave out --config"
        ) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid TOML: {exc}; systemd/pipcam.toml.example shows every key"
        ) from exc
    unknown = set(raw) - {"table", "game_options", "pins"}
    if unknown:
        raise ConfigError(
            f"{path}: unknown section(s) {sorted(unknown)}; "
            "the sections are [table], [game_options] and [pins]"
        )
    for section in ("table", "game_options", "pins"):
        if not isinstance(raw.get(section, {}), dict):
            raise ConfigError(
                f"{path}: {section} must be a section ([{section}] on a line of its own, its keys"
                f" below), not {raw[section]!r}"
            )
    table = raw.get("table", {})
    values: dict[str, Any] = {"source": path}
    for key, value in table.items():
        kind = _TABLE_KEYS.get(key)
        if kind is None:
            raise ConfigError(
                f"{path}: unknown key table.{key}; the keys are {', '.join(_TABLE_KEYS)}"
            )
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if key == "auto_tune" and isinstance(value, bool):
            value = AUTO_TUNE_EVERY if value else 0
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise ConfigError(f"{path}: table.{key} must be {_KIND_NAMES[kind]}, not {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            # TOML has inf and nan; a table that never reads (inf) or reads a moving hand (nan)
            # would follow.
            raise ConfigError(f"{path}: table.{key} must be a finite number, not {value!r}")
        values[key] = value
    if "players" in values:
        players = values["players"]
        if not players or not all(isinstance(p, str) and p.strip() for p in players):
            raise ConfigError(f"{path}: table.players must be a list of names")
        values["players"] = tuple(players)
    if values.get("auto_tune", 0) < 0:
        raise ConfigError(
            f"{path}: table.auto_tune must be true, false or a number of photos, not"
            f" {values['auto_tune']}"
        )
    if values.get("port", 8000) not in PORTS:
        raise ConfigError(f"{path}: table.port must be 1-65535, not {values['port']}")
    if values.get("settle_seconds", 0.0) < 0:
        raise ConfigError(
            f"{path}: table.settle_seconds must be 0 or more (seconds the dice lie still"
            f" before they are read), not {values['settle_seconds']}"
        )
    if values.get("photo_limit", 1) < 1:
        raise ConfigError(
            f"{path}: table.photo_limit must be at least 1, not {values['photo_limit']}"
        )
    for key in ("data", "model", "calibration"):
        if key in values:
            values[key] = Path(values[key]).expanduser()
    values["game_options"] = dict(raw.get("game_options", {}))
    values["pins"] = dict(raw.get("pins", {}))
    return Config(**values)


def default_data_dir() -> Path:
    """Where games are kept: the service's state directory, else the user's data folder."""
    state = os.environ.get("STATE_DIRECTORY")  # set by systemd's StateDirectory=
    if state:
        return Path(state.split(":")[0])
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "share"
    return base / "pipcam"


def calibration_path(config: Config, data: Path) -> Path:
    """The table's calibration file: the config's ``calibration``, else the one beside the games."""
    return config.calibration or data / CALIBRATION_NAME


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 1-65535, refused with what was given."""
    try:
        port = int(text)
    except ValueError:
        port = 0
    if port not in PORTS:
        raise argparse.ArgumentTypeError(f"a port is a number from 1 to 65535, not {text!r}")
    return port


def whole_number(lowest: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``lowest``, refused with what was given.

    >>> whole_number(1)("2")
    2
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = lowest - 1
        if value < lowest:
            raise argparse.ArgumentTypeError(
                f"a whole number of at least {lowest} is wanted, not {text!r}"
            )
        return value

    return parse


def table_config(config_arg: str | None, data_arg: str | None) -> tuple[Config, Path]:
    """The configuration (``--config``) and the data folder (``--data``, else the
    configuration's, else ``default_data_dir``) a command works on; raises ``ConfigError``."""
    config = load_config(Path(config_arg) if config_arg else None)
    return config, Path(data_arg) if data_arg else (config.data or default_data_dir())
