"""`pipcam run` as systemd runs it: a real process, a fake notify socket, the real HTTP server."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import cv2
import httpx
import numpy as np
import pytest

from pipcam.run import (
    EXIT_CONFIG,
    CameraLoop,
    JournalFormatter,
    KeptLight,
    ScoreboardError,
    TableLocked,
    _open_camera,
    bind_scoreboard,
    led_status,
    log_handler,
    summary_line,
    table_lock,
)
from pipcam.store import Store
from pipcam.table import Table
from scoring.core import Keep, Roll, Score
from tests.vision.test_picam import FakePicamera2, fake_picamera2  # noqa: F401 - the fixture
from vision.calibrate import Calibration, calibrate_frame, save_calibration
from vision.locate import TrayColour
from vision.picam import CameraSettings, PiCameraSource
from vision.reader import Zone
from vision.synthetic import (
    DieSpec,
    draw_cocked_die,
    draw_die,
    draw_hand,
    make_frame,
    make_tray,
    six_dice,
)

PIN = "1357"


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Running:
    """A `pipcam run` child process with its notify socket and base URL."""

    def __init__(self, tmp: Path, data: Path, *extra: str, table: str = "", **popen: Any) -> None:
        self.sock_path = tmp / f"notify-{time.monotonic_ns()}.sock"
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(self.sock_path))
        self.sock.settimeout(0.2)
        self.port = free_port()
        config = tmp / "pipcam.toml"
        config.write_text(f'[table]\nhost = "127.0.0.1"\ngame = "kymppitonni"\n{table}')
        env = {
            **os.environ,
            "NOTIFY_SOCKET": str(self.sock_path),
            "WATCHDOG_USEC": "1000000",
            "PIPCAM_PIN": PIN,
            "GPIOZERO_PIN_FACTORY": "mock",
        }
        args = ["run", "--camera", "none", "--data", str(data), "--port", str(self.port)]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pipcam.cli", *args, "--config", str(config), *extra],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            **popen,
        )
        self.messages: list[str] = []
        self.base = f"http://127.0.0.1:{self.port}"

    def wait_for(self, message: str, timeout: float = 20) -> None:
        """Wait until the service sends a notify datagram that starts with ``message``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(m.startswith(message) for m in self.messages):
                return
            try:
                data = self.sock.recv(4096).decode()
            except TimeoutError:
                assert self.proc.poll() is None, self.output()
                continue
            self.messages.extend(data.splitlines())
        raise AssertionError(f"no {message!r} in {self.messages}; output:\n{self.output()}")

    def drain(self) -> None:
        """Read the notify datagrams sent so far, as systemd would (a full socket blocks)."""
        with contextlib.suppress(TimeoutError):
            while True:
                self.messages.extend(self.sock.recv(4096).decode().splitlines())

    def output(self) -> str:
        """What the process printed (after it ended)."""
        if self.proc.poll() is None:
            return "(still running)"
        return self.proc.stdout.read() if self.proc.stdout else ""

    def close(self) -> None:
        """Stop the process if it still runs; close the socket."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        if self.proc.stdout:
            self.proc.stdout.close()
        self.sock.close()


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started that are still running (Linux /proc)."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue  # ended meanwhile
        if f"\nPPid:\t{pid}\n" in text and "\nState:\tZ" not in text:
            found.append(int(status.parent.name))
    return found


@pytest.fixture
def run_table(tmp_path: Path) -> Iterator[Any]:
    """Start `pipcam run` processes that are always cleaned up."""
    started: list[Running] = []

    def start(*extra: str, table: str = "", **popen: Any) -> Running:
        running = Running(tmp_path, tmp_path / "data", *extra, table=table, **popen)
        started.append(running)
        return running

    yield start
    for running in started:
        running.close()


def test_ready_watchdog_and_clean_stop(run_table: Any) -> None:
    """READY=1 once serving, WATCHDOG=1 while healthy, STOPPING=1 and status 0 on SIGTERM."""
    table = run_table()
    table.wait_for("READY=1")
    state = httpx.get(f"{table.base}/api/state", timeout=5).json()
    assert state["game"] == "kymppitonni"
    assert state["table"]["camera"] == "none"  # --camera none: the phones offer typing
    table.wait_for("WATCHDOG=1", timeout=5)
    table.proc.send_signal(signal.SIGTERM)
    table.wait_for("STOPPING=1")
    assert table.proc.wait(15) == 0
    # table.host = "127.0.0.1": the URL shown is where the scoreboard answers, not the LAN's.
    assert f"pipcam: scoreboard at {table.base}/  (table PIN {PIN})" in table.output()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_ends_the_phones_event_streams(run_table: Any, sig: signal.Signals) -> None:
    """A phone's event stream never ends by itself; a stop (systemctl stop, Ctrl-C) ends the
    streams, so the table closes properly instead of waiting for every phone to hang up (and
    being killed by systemd's stop timeout, skipping its cleanup)."""
    table = run_table()
    table.wait_for("READY=1")
    with httpx.stream("GET", f"{table.base}/api/events", timeout=30) as stream:
        lines = stream.iter_lines()
        assert next(lines) == "event: state"
        table.proc.send_signal(sig)
        # With the stream still open: the table stops (it used to wait for the phone for ever).
        assert table.proc.wait(15) == 0
        rest = list(lines)  # the stream has ended with the server
    assert rest[0].startswith("data: {")
    table.wait_for("STOPPING=1")


def test_a_second_table_on_the_same_data_is_refused(run_table: Any, tmp_path: Path) -> None:
    """Two tables on one store would write into the same game: the second one stops at once,
    naming the first; once the first has stopped, a table starts there again."""
    first = run_table()
    first.wait_for("READY=1")
    data = tmp_path / "data"
    second = _refused_start("--camera", "none", "--data", str(data), "--port", str(free_port()))
    assert second.returncode == 2, second.stderr
    assert second.stderr == (
        f"pipcam run: another pipcam run (pid {first.proc.pid}) keeps its games in {data}:"
        " stop it (sudo systemctl stop pipcam, if it is the service), or give this one another"
        " --data\n"
    )
    first.proc.kill()  # even a killed table lets go of the lock
    first.proc.wait(10)
    third = run_table()
    third.wait_for("READY=1")


def test_table_lock_is_held_once_per_folder(tmp_path: Path) -> None:
    taken = rf"another pipcam run \(pid {os.getpid()}\)"
    with table_lock(tmp_path), pytest.raises(TableLocked, match=taken), table_lock(tmp_path):
        pass
    with table_lock(tmp_path):  # let go on leaving
        assert (tmp_path / "table.lock").read_text() == f"{os.getpid()}\n"


def _unopenable_lock(monkeypatch: pytest.MonkeyPatch, *modes: str) -> None:
    """Opening table.lock in ``modes`` fails as for a root-owned file (the tests may run as
    root, who could open it anyway)."""
    real_open = Path.open

    def fake_open(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if self.name == "table.lock" and mode in modes:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", fake_open)


def test_a_lock_file_this_user_cannot_write_still_locks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table.lock left by a run with sudo: the lock is still held, on a read-only handle."""
    (tmp_path / "table.lock").write_text("4242\n")
    _unopenable_lock(monkeypatch, "a+")
    taken = r"another pipcam run \(pid 4242\)"
    with table_lock(tmp_path), pytest.raises(TableLocked, match=taken), table_lock(tmp_path):
        pass


def test_a_lock_file_this_user_cannot_open_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = tmp_path / "table.lock"
    lock.write_text("4242\n")
    _unopenable_lock(monkeypatch, "a+", "r")
    with pytest.raises(TableLocked) as caught, table_lock(tmp_path):
        pass
    assert str(caught.value) == (
        f"cannot take the table lock {lock} (Permission denied); give this user access to it"
        f" (sudo chown $USER {lock}) or remove it, or give this table another --data"
    )


def test_kill_9_loses_no_acknowledged_action(run_table: Any) -> None:
    """Actions acknowledged over HTTP are all there after a SIGKILL and a restart."""
    first = run_table()
    first.wait_for("READY=1")
    client = httpx.Client(base_url=first.base, headers={"X-Table-Pin": PIN}, timeout=5)
    for action in ({"roll": [1, 1, 5, 2, 3, 4]}, {"keep": [1, 1, 5]}, {"roll": [5, 6, 6]}):
        assert client.post("/api/actions", json=action).status_code == 200
    before = client.get("/api/state").json()
    first.proc.kill()
    first.proc.wait(10)
    second = run_table()
    second.wait_for("READY=1")
    after = httpx.get(f"{second.base}/api/state", timeout=5).json()
    assert after["turn"] == before["turn"]
    assert after["turn"]["dice"] == [5, 6, 6]
    assert after["players"] == before["players"]


def test_a_store_that_cannot_take_the_next_game_is_said_not_a_failed_start(
    run_table: Any, tmp_path: Path
) -> None:
    """A table killed after its game ended starts again on a disk that is full now: it serves
    without a game and says why (not a traceback that systemd repeats), and a phone starts a
    game once the store can be written."""
    data = tmp_path / "data"
    ended_then_killed = (
        "import os, signal, sys\n"
        "from pipcam.store import Store\n"
        f"store = Store({str(data / 'pipcam.db')!r})\n"
        "store.finish_game(store.new_game({'game': 'kymppitonni', 'players': ['Ann', 'Bob']}))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    subprocess.run([sys.executable, "-c", ended_then_killed], check=False, timeout=30)
    # No file may grow past the largest one there: the store's log cannot take a new game.
    largest = max(f.stat().st_size for f in data.iterdir())

    def full_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (largest, resource.RLIM_INFINITY))

    table = run_table(preexec_fn=full_disk)
    table.wait_for("READY=1")
    client = httpx.Client(base_url=table.base, headers={"X-Table-Pin": PIN}, timeout=5)
    state = client.get("/api/state").json()
    assert state["game"] is None
    problem = state["table"]["problem"]
    assert f"the game store {data / 'pipcam.db'} cannot be read or written" in problem
    header = {"game": "general", "players": ["Ann", "Bob"]}
    refused = client.post("/api/games", json=header)
    assert refused.status_code == 503
    assert client.get("/api/state").json()["game"] is None
    resource.prlimit(table.proc.pid, resource.RLIMIT_FSIZE, (-1, -1))  # space freed
    started = client.post("/api/games", json=header)
    assert started.status_code == 200, started.text
    assert started.json()["game"] == "general"
    assert started.json()["table"]["problem"] == ""


def test_keep_photos_saves_settled_frames_and_phones_count_them(
    run_table: Any, tmp_path: Path
) -> None:
    """`pipcam run --keep-photos` on the embedded recorded table: each settled frame the real
    model reads is saved with its sidecar, and the state tells the phones how many."""
    table = run_table("--camera", "recorded", "--keep-photos")
    table.wait_for("READY=1")
    deadline = time.monotonic() + 60
    kept = None
    while time.monotonic() < deadline:
        kept = httpx.get(f"{table.base}/api/state", timeout=5).json()["table"]["photos"]
        if kept:
            break
        time.sleep(0.2)
    assert kept, f"no photo kept in 60 s (photos: {kept})"
    photos = sorted((tmp_path / "data" / "photos").glob("reading-*.jpg"))
    assert len(photos) >= kept
    assert photos[0].with_suffix(".json").exists()
    table.proc.send_signal(signal.SIGTERM)
    assert table.proc.wait(15) == 0
    said = table.output()
    assert "keeping each settled frame in" in said
    assert "last layer is tuned on the kept photos every 50 photos" in said


def test_a_table_keeping_photos_tunes_itself_in_the_background(
    run_table: Any, tmp_path: Path
) -> None:
    """With `auto_tune = 2` the recorded table starts `pipcam tune --head` after two photos, and
    says how it ended; the table plays on meanwhile."""
    table = run_table("--camera", "recorded", "--keep-photos", table="auto_tune = 2\n")
    table.wait_for("READY=1")
    log = tmp_path / "data" / "tune" / "auto.log"
    ends = ("not installed", "installed as", "no labelled photo", "Error")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        table.drain()
        if log.is_file() and any(end in log.read_text() for end in ends):
            break
        time.sleep(0.2)
    said = log.read_text() if log.is_file() else "(no log)"
    assert any(end in said for end in ends), said
    # The run writes its last line before it exits, and at the lowest CPU priority exiting can
    # take a while on a busy machine: the table says how it ended once it has.
    while _children(table.proc.pid) and time.monotonic() < deadline + 60:
        time.sleep(0.2)
    assert _children(table.proc.pid) == []
    time.sleep(1)  # the table hears the run end
    table.drain()
    assert httpx.get(f"{table.base}/api/state", timeout=5).json()["table"]["photos"] >= 2
    table.proc.send_signal(signal.SIGTERM)
    assert table.proc.wait(15) == 0
    out = table.output()
    assert "last layer is tuned on the kept photos every 2 photos" in out
    assert "pipcam: tuning the face model's last layer on the kept photos" in out
    assert "pipcam: automatic tuning" in out


def _refused_start(*args: str) -> subprocess.CompletedProcess[str]:
    """``pipcam run ARGS`` as a child expected to stop at once, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "pipcam.cli", "run", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    ("config_text", "camera", "message"),
    [
        ("[table]\nport = 'eighty'\n", None, "{config}: table.port must be a whole number, not"),
        ("[table]\nport = 80000\n", None, "{config}: table.port must be 1-65535, not 80000"),
        ("[table\n", None, "{config} is not valid TOML: "),
        (
            "[table]\ncalibration = '{tmp}/missing.json'\n",
            None,
            "calibration file '{tmp}/missing.json' not found: run `pipcam calibrate --out",
        ),
        (
            "[table]\n",
            "usb:front",
            "bad camera spec 'usb:front': after usb come a camera number N and a frame size WxH",
        ),
        ("[table]\ncamera = 'webcam'\n", None, "unknown camera spec 'webcam': use picamera"),
        (
            "[table]\n",
            "folder:/no-such-pipcam-folder",
            "camera spec 'folder:/no-such-pipcam-folder': there is no folder",
        ),
        ("[table]\n", "file:/no/such.jpg", "there is no file /no/such.jpg; give the path of an"),
    ],
)
def test_bad_config_is_refused_clearly(
    tmp_path: Path, config_text: str, camera: str | None, message: str
) -> None:
    """A broken configuration file or camera spec stops the start with a message naming it,
    before the camera loop would retry it for ever."""
    config = tmp_path / "bad.toml"
    config.write_text(config_text.format(tmp=tmp_path))
    extra = ["--camera", camera] if camera else []
    result = _refused_start("--config", str(config), "--data", str(tmp_path / "data"), *extra)
    assert result.returncode == EXIT_CONFIG, result.stderr
    assert result.stderr.startswith("pipcam run: "), result.stderr
    assert "pipcam run: pipcam" not in result.stderr  # one prefix, the command's
    assert message.format(config=config, tmp=tmp_path) in result.stderr


@pytest.mark.parametrize(
    ("table_text", "message"),
    [
        ('game = "kymppitoni"\n', "unknown game 'kymppitoni'"),
        (
            'game = "kymppitonni"\nplayers = ["Ann", "ann"]\n',
            "the names 'Ann' and 'ann' look the same",
        ),
        ('game = "kymppitonni"\n[game_options]\ntargte = 5\n', "unknown option 'targte'"),
    ],
    ids=["game", "players", "game_options"],
)
def test_a_config_typo_is_refused_while_an_unfinished_game_resumes(
    tmp_path: Path, table_text: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only once that game ends, when every start would fail (and systemd retry for ever)."""
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")  # no log line of the automatic choice
    data = tmp_path / "data"
    with Store(data / "pipcam.db") as store:
        Table(store).new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    config = tmp_path / "pipcam.toml"
    config.write_text(f"[table]\n{table_text}")
    result = _refused_start(
        "--camera", "none", "--port", str(free_port()), "--data", str(data), "--config", str(config)
    )
    assert result.returncode == EXIT_CONFIG, result.stderr
    assert result.stderr.startswith("pipcam run: the configured game cannot start: ")
    assert message in result.stderr
    assert len(result.stderr.splitlines()) == 1


def _journal_env(stream: Any) -> dict[str, str]:
    info = os.fstat(stream.fileno())
    return {"JOURNAL_STREAM": f"{info.st_dev}:{info.st_ino}"}


def test_log_lines_say_their_level(tmp_path: Path) -> None:
    with (tmp_path / "err").open("w+") as err:
        handler = log_handler(err, {})
        handler.handle(logging.LogRecord("pipcam.run", logging.WARNING, "", 0, "hm", None, None))
        err.seek(0)
        assert err.read() == "WARNING pipcam.run: hm\n"


def test_log_lines_to_the_journal_carry_its_priority(tmp_path: Path) -> None:
    with (tmp_path / "err").open("w+") as err:
        handler = log_handler(err, _journal_env(err))
        for level, text in [(logging.WARNING, "hm"), (logging.ERROR, "bad\n  more"), (20, "ok")]:
            handler.handle(logging.makeLogRecord({"name": "x", "levelno": level, "msg": text}))
        err.seek(0)
        assert err.read() == "<4>x: hm\n<3>x: bad\n<3>  more\n<6>x: ok\n"
    # Another stream than the journal's (a terminal, a pipe) has no prefixes.
    with (tmp_path / "other").open("w+") as other, (tmp_path / "err").open() as err:
        assert not isinstance(log_handler(other, _journal_env(err)).formatter, JournalFormatter)


def test_pipcam_run_logs_info_with_the_journals_priorities(tmp_path: Path) -> None:
    """Under systemd: an info line of a module's logger reaches the journal at info (it was
    dropped: logging was never set up)."""
    config = tmp_path / "pipcam.toml"
    config.write_text('[table]\ngame = "kymppitoni"\n')  # stops the start after the panel
    env = {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"}
    args = ["--camera", "none", "--port", str(free_port()), "--data", str(tmp_path / "data")]
    with (tmp_path / "err").open("w+") as err:
        result = subprocess.run(
            [sys.executable, "-m", "pipcam.cli", "run", *args, "--config", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**env, **_journal_env(err)},
            timeout=60,
            check=False,
        )
        err.seek(0)
        lines = err.read().splitlines()
    assert result.returncode == EXIT_CONFIG
    # The automatic choice of pin factory is said at info (no GPIO chip) or warning.
    assert lines[0].startswith(("<6>device.factory: ", "<4>device.factory: ")), lines


def test_a_pin_factory_that_cannot_load_stops_the_start_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "bogus")
    result = _refused_start(
        "--camera", "none", "--port", str(free_port()), "--data", str(tmp_path / "data")
    )
    assert result.returncode == EXIT_CONFIG, result.stderr
    assert result.stderr == (
        "pipcam run: unknown pin factory 'bogus' (from GPIOZERO_PIN_FACTORY); allowed: lgpio,"
        " mock, native, pigpio, rpigpio, or unset to choose automatically\n"
    )


@pytest.mark.parametrize("named_by", ["config", "environment"])
@pytest.mark.parametrize("model", ["missing.onnx", "damaged.onnx"])
def test_a_named_face_model_that_does_not_load_stops_the_start(
    tmp_path: Path, named_by: str, model: str
) -> None:
    """A model the config or $PIPCAM_MODEL names is the owner's choice: one that does not load
    stops the start (exit 2, no traceback; systemd does not restart it for ever), naming the
    setting to mend; `pipcam run` has no --model to point to."""
    (tmp_path / "damaged.onnx").write_text("not a model")
    path = tmp_path / model
    config = tmp_path / "pipcam.toml"
    config.write_text(f"[table]\nmodel = '{path}'\n" if named_by == "config" else "[table]\n")
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock", "PIPCAM_MODEL": str(path)}
    if named_by == "config":
        del env["PIPCAM_MODEL"]
    args = ["--config", str(config), "--data", str(tmp_path / "data"), "--camera", "recorded"]
    result = subprocess.run(
        [sys.executable, "-m", "pipcam.cli", "run", *args, "--port", str(free_port())],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    assert result.returncode == EXIT_CONFIG, result.stderr
    setting = f"table.model in {config}" if named_by == "config" else "$PIPCAM_MODEL"
    trouble = "not found" if model == "missing.onnx" else "cannot be loaded (damaged or not ONNX)"
    assert result.stderr == (
        f"pipcam run: face model {path} ({setting}) {trouble}; mend {setting}, or remove it to"
        " read with the shipped model\n"
    )


def test_the_scoreboard_binds_a_free_port_and_refuses_a_taken_one() -> None:
    with bind_scoreboard("127.0.0.1", 0) as taken:
        port = taken.getsockname()[1]
        assert port > 0
        with pytest.raises(ScoreboardError) as err:
            bind_scoreboard("127.0.0.1", port)
    assert str(err.value) == (
        f"port {port} is in use by another program (another pipcam run?): stop it, or pick"
        " another port with --port N or table.port in the configuration"
    )


@pytest.mark.parametrize(
    ("host", "said"),
    [
        ("192.0.2.77", "the scoreboard cannot listen on '192.0.2.77': no address of this machine;"),
        ("no-such-host.invalid", "the scoreboard cannot listen on 'no-such-host.invalid': "),
    ],
    ids=["not-this-machine", "no-such-name"],
)
def test_the_scoreboard_names_a_host_it_cannot_listen_on(host: str, said: str) -> None:
    with pytest.raises(ScoreboardError) as err:
        bind_scoreboard(host, 0)
    assert str(err.value).startswith(said)
    assert str(err.value).endswith(
        "set table.host in the configuration to an address of this machine, or leave it out"
    )


def test_a_taken_port_stops_the_start_before_the_url_is_shown(tmp_path: Path) -> None:
    """Another program on the port: exit 2 with what to do, and no URL or QR code that would
    lead the phones to that other program."""
    with socket.socket() as other:
        other.bind(("0.0.0.0", 0))
        other.listen()
        port = other.getsockname()[1]
        result = _refused_start(
            "--camera", "none", "--port", str(port), "--data", str(tmp_path / "data")
        )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"pipcam run: port {port} is in use by another program")
    assert "scoreboard at" not in result.stdout
    assert not (tmp_path / "data" / "pipcam.db").exists()  # nothing opened before the port


def test_pipcam_run_reads_only_the_calibrated_roll_zone(run_table: Any, tmp_path: Path) -> None:
    """`pipcam calibrate` writes the table's calibration beside its games; `pipcam run` on the
    same data folder reads it: six dice on the tray are a throw, the seventh beside it is not."""
    import cv2

    tray = make_tray(1280, 960, colour="brown", seed=1)
    tray[60:900, 60:1000] = make_tray(940, 840, colour="green", seed=2)
    empty = tmp_path / "empty.png"
    cv2.imwrite(str(empty), tray)
    frame = tray.copy()
    data = tmp_path / "data"
    calibrate = subprocess.run(
        [sys.executable, "-m", "pipcam.cli", "calibrate", "--camera", f"file:{empty}"]
        + ["--data", str(data)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert calibrate.returncode == 0, calibrate.stderr
    assert f"written to {data / 'calibration.json'}" in calibrate.stdout

    dice = [
        DieSpec(d.value, d.cx + 60, d.cy + 60, d.side, d.angle) for d in six_dice(940, 840, seed=3)
    ]
    for die in [*dice, DieSpec(2, 1140, 480, dice[0].side, 10)]:
        draw_die(frame, die)
    # A recorded table: the empty tray, then the dice lying still for longer than they must.
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "00.png"), tray)
    for i in range(1, 16):
        cv2.imwrite(str(frames / f"{i:02d}.png"), frame)
    table = run_table("--camera", f"folder:{frames}")
    table.wait_for("READY=1")
    deadline = time.monotonic() + 60
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        state = httpx.get(f"{table.base}/api/state", timeout=5).json()
        if state["table"]["dice_read"] or state["table"]["problem"]:
            break
        time.sleep(0.2)
    assert not state["table"]["problem"], state["table"]
    assert sorted(state["turn"]["dice"]) == sorted(d.value for d in dice)
    table.proc.send_signal(signal.SIGTERM)
    assert table.proc.wait(15) == 0
    assert f"tray calibration {data / 'calibration.json'}" in table.output()


def test_pipcam_run_says_when_the_camera_no_longer_fits_its_calibration(
    run_table: Any, tmp_path: Path
) -> None:
    """The tray was calibrated on 16:9 frames; the camera now gives 4:3 ones: the table still
    reads, and the log says to calibrate again."""
    from dataclasses import replace

    import cv2

    tray = make_tray(1280, 960, colour="green", seed=2)
    empty = tmp_path / "empty.png"
    cv2.imwrite(str(empty), tray)
    calibration = replace(calibrate_frame(tray), frame_size=(1920, 1080))
    save_calibration(tmp_path / "data" / "calibration.json", calibration)
    table = run_table("--camera", f"file:{empty}")
    table.wait_for("READY=1")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if httpx.get(f"{table.base}/api/state", timeout=5).json()["table"]["reading"] == "empty":
            break
        time.sleep(0.2)
    table.proc.send_signal(signal.SIGTERM)
    assert table.proc.wait(15) == 0
    output = table.output()
    assert output.count("frames are 1280x960 but the tray was calibrated on 1920x1080") == 1, output


def _opened(open_source: Any) -> Any:
    """Open and close the camera ``_open_camera`` returned; return it (closed)."""
    source = open_source()
    assert source is not None
    source.close()
    return source


def test_a_calibrated_pi_camera_runs_as_it_was_calibrated(
    fake_picamera2: type[FakePicamera2],  # noqa: F811 - the fixture imported above
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Frame size and the locked exposure and white balance come from the calibration file;
    a size in the spec still wins, and a USB camera is not given the Pi camera's size."""
    settings = CameraSettings(exposure_time=9000, analogue_gain=1.25, colour_gains=(1.7, 1.3))
    tray = np.full((1232, 1640, 3), (40, 120, 30), np.uint8)
    calibration = calibrate_frame(tray, camera=settings)
    assert calibration.frame_size == (1640, 1232)
    fake_picamera2.sensor = (4608, 2592)  # a size of its own would be 2304x1296

    open_source, _, kept = _open_camera("picamera", lambda _: None, calibration)
    assert kept is calibration
    source = _opened(open_source)
    assert isinstance(source, PiCameraSource)
    assert source.size == (1640, 1232)
    camera = fake_picamera2.instances[-1]
    assert camera.controls == settings.controls()
    calls = [name for name, _ in camera.calls]
    assert calls.index("set_controls") < calls.index("start")

    source = _opened(_open_camera("picamera:4608x2592", lambda _: None, calibration)[0])
    assert source.size == (4608, 2592)
    assert fake_picamera2.instances[-1].controls == settings.controls()

    source = _opened(_open_camera("picamera", lambda _: None, None)[0])
    assert source.size == (2304, 1296)
    assert fake_picamera2.instances[-1].controls == {}

    asked: list[tuple[int, float]] = []

    class Capture:
        def __init__(self, index: int) -> None:
            self.index = index

        def isOpened(self) -> bool:  # noqa: N802 - OpenCV's name
            return True

        def set(self, prop: int, value: float) -> bool:
            asked.append((prop, value))
            return True

        def get(self, prop: int) -> float:
            return 0.0

        def release(self) -> None:
            """Nothing to release."""

    monkeypatch.setattr("vision.source.cv2.VideoCapture", Capture)
    _opened(_open_camera("usb:0", lambda _: None, calibration)[0])
    assert asked == []


class FlakySource:
    """A camera that fails once (unplugged) and then works again."""

    opened = 0

    def __init__(self) -> None:
        FlakySource.opened += 1
        self.fail = FlakySource.opened == 1

    @classmethod
    def working(cls) -> FlakySource:
        """One that gives frames."""
        source = cls()
        source.fail = False
        return source

    def capture(self) -> Any:
        from vision.errors import CameraUnavailable

        if self.fail:
            raise CameraUnavailable("the camera went away")
        import numpy as np

        return np.zeros((48, 64, 3), np.uint8)

    def close(self) -> None:
        """Nothing to release."""


def test_camera_unplugged_mid_game_recovers(tmp_path: Path) -> None:
    """A failing camera is reported as missing; the loop opens it again and carries on."""
    with Store(tmp_path / "pipcam.db") as store:
        table = Table(store)
        table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
        seen: list[str] = []
        table.subscribe(lambda s: seen.append(s["table"]["camera"]))
        loop = CameraLoop(FlakySource, table, reader=None, settle_seconds=0.5, retry=0.01)
        loop.start()
        deadline = time.monotonic() + 10
        while not loop.ended and time.monotonic() < deadline:
            time.sleep(0.01)
        loop.stop()
        assert "missing" in seen
        assert seen[-1] == "ok"
        assert loop.frames >= 3
        assert loop.healthy()


def test_an_unplugged_camera_is_logged_once_a_minute_not_every_retry(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Twelve failed attempts 10 s apart: the failure is logged when it starts, again a minute
    later with the count, on a new message at once, and once when the camera is back."""
    from vision.errors import CameraUnavailable

    now = [0.0]
    attempts = [0]

    def open_source() -> Any:
        attempts[0] += 1
        now[0] = 10.0 * attempts[0]
        if attempts[0] <= 10:
            raise CameraUnavailable("USB camera 0 could not be opened")
        if attempts[0] <= 12:
            raise CameraUnavailable("USB camera 0 gave no frame")
        return FlakySource.working()

    caplog.set_level("WARNING", logger="pipcam.run")
    with Store(tmp_path / "pipcam.db") as store:
        table = Table(store)
        table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
        loop = CameraLoop(
            open_source, table, reader=None, settle_seconds=0.5, retry=0.0, clock=lambda: now[0]
        )
        loop.start()
        deadline = time.monotonic() + 10
        while loop.frames < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        loop.stop()
    assert [r.getMessage() for r in caplog.records] == [
        "camera: USB camera 0 could not be opened",
        "camera: USB camera 0 could not be opened (7 failed attempts so far)",
        "camera: USB camera 0 gave no frame (11 failed attempts so far)",
        "camera: working again after 12 failed attempts",
    ]


def test_an_unexpected_error_stops_the_loop_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A fault of ours (not the camera's) is logged with its traceback, the phones and the LED
    are told the camera stopped, and the heartbeat stops so that the watchdog restarts."""
    from vision.source import StaticSource

    class Broken(StaticSource):
        def capture(self) -> Any:
            raise ZeroDivisionError("a bug")

    caplog.set_level("WARNING", logger="pipcam.run")
    with Store(tmp_path / "pipcam.db") as store:
        table = Table(store)
        table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
        source = Broken([np.zeros((4, 4, 3), np.uint8)])
        loop = CameraLoop(lambda: source, table, reader=None, settle_seconds=0.5, interval=0.01)
        loop.start()
        assert loop._thread is not None
        loop._thread.join(10)
        assert not loop._thread.is_alive()
        time.sleep(0.05)
        alive = loop.healthy(max_age=0.04)
        state = table.state_json()
        loop.stop()
    assert (alive, state["table"]["camera"], source.closed) == (False, "failed", True)
    assert led_status(state) == "attention"
    record = caplog.records[-1]
    assert record.getMessage() == "camera: the camera loop stopped on an unexpected error"
    assert record.exc_info is not None
    assert record.exc_info[0] is ZeroDivisionError


def test_a_folder_played_to_its_end_is_not_replayed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """At the end of a recording the table stays as its last frame left it: the folder is not
    opened again (its rolls would come again as new ones), and the loop stays alive."""
    from vision.source import StaticSource

    opened = [0]

    def open_source() -> Any:
        opened[0] += 1
        return StaticSource([np.zeros((48, 64, 3), np.uint8)] * 3)

    caplog.set_level("WARNING", logger="pipcam.run")
    with Store(tmp_path / "pipcam.db") as store:
        table = Table(store)
        table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
        loop = CameraLoop(open_source, table, reader=None, settle_seconds=0.5, interval=0.01)
        loop.start()
        deadline = time.monotonic() + 10
        while not loop.ended and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # twenty intervals more: time enough to open the folder again
        alive = loop.healthy(max_age=0.1)
        loop.stop()
        camera = table.state_json()["table"]["camera"]
    assert (opened[0], loop.frames, alive, camera) == (1, 3, True, "ok")
    assert [r.getMessage() for r in caplog.records] == [
        "camera: StaticSource(3 frames): all 3 frames were read; the recording has ended,"
        " type the dice from now"
    ]


@pytest.mark.parametrize(
    ("calibrated", "logged"),
    [((64, 48), 0), ((1280, 960), 0), ((1920, 1080), 1), ((48, 64), 1)],
    ids=["same", "same-shape", "wider", "turned"],
)
def test_frames_of_another_shape_than_the_calibration_are_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, calibrated: tuple[int, int], logged: int
) -> None:
    """The zone is in fractions, so a calibration fits frames of any size of the same shape;
    frames of another shape (another camera, another crop of the sensor) are said, once."""
    import numpy as np

    caplog.set_level("WARNING", logger="pipcam.run")
    with Store(tmp_path / "pipcam.db") as store:
        loop = CameraLoop(
            FlakySource.working,
            Table(store),
            reader=None,
            settle_seconds=0.5,
            calibration=Calibration(
                zone=Zone(),
                tray=TrayColour((150.0, 100.0, 140.0), (4.0, 2.0, 2.0)),
                frame_size=calibrated,
            ),
        )
        for _ in range(5):
            loop.step(np.zeros((48, 64, 3), np.uint8))
    width, height = calibrated
    warning = (
        f"camera: frames are 64x48 but the tray was calibrated on {width}x{height} frames,"
        " another shape: the roll zone may be off; run pipcam calibrate again with this camera"
    )
    assert [r.getMessage() for r in caplog.records] == [warning] * logged


@pytest.mark.parametrize(
    ("table", "led"),
    [
        ({"camera": "ok", "reading": "settled", "problem": ""}, "ready"),
        ({"camera": "none", "reading": "empty", "problem": ""}, "ready"),
        ({"camera": "ok", "reading": "moving", "problem": ""}, "moving"),
        ({"camera": "missing", "reading": "empty", "problem": ""}, "attention"),
        ({"camera": "failed", "reading": "moving", "problem": ""}, "attention"),
        ({"camera": "none", "reading": "empty", "problem": "cannot keep 6"}, "attention"),
        ({"camera": "ok", "reading": "settled", "problem": "", "camera_notices": []}, "ready"),
        (
            {"camera": "ok", "reading": "settled", "problem": "", "camera_notices": ["dark"]},
            "attention",
        ),
    ],
)
def test_status_led(table: dict[str, str], led: str) -> None:
    """The status LED asks for attention for a problem or a lost camera, not for no camera."""
    assert led_status({"table": table}) == led


def test_summary_line() -> None:
    """The console line names scores, whose turn, the last event and any problem."""
    state = {
        "game": "kymppitonni",
        "players": [{"name": "Ann", "score": 300}, {"name": "Bob", "score": 0}],
        "to_move": "Bob",
        "last_event": "Ann banked 300",
        "table": {"problem": "check the dice"},
    }
    assert summary_line(state) == (
        "[kymppitonni] Ann 300  Bob 0 | Bob to play | Ann banked 300 | ! check the dice"
    )


SCRIPT: list[dict[str, Any]] = [
    {"roll": [1, 1, 5, 2, 3, 4]},
    {"keep": [1, 1, 5]},
    {"roll": [5, 2, 3]},
    {"keep": [5]},
    {"bank": True},
    {"roll": [2, 3, 4, 6, 6, 3]},
    {"roll": [1, 1, 1, 5, 5, 5]},
    {"keep": [1, 1, 1, 5, 5, 5]},
    {"roll": [3, 3, 4, 4, 6, 6]},
    {"keep": [3, 3, 4, 4, 6, 6]},
    {"bank": True},
    {"roll": [1, 2, 3, 4, 6, 6]},
    {"keep": [1]},
    {"roll": [5, 2, 3, 4, 6]},
    {"keep": [5]},
    {"roll": [1, 2, 3, 4]},
    {"keep": [1]},
    {"bank": True},
]


def test_repeated_kill_9_during_a_scripted_game(run_table: Any) -> None:
    """SIGKILL at random points, restart, continue: every acknowledged action is there, once."""
    import json
    import random

    rng = random.Random(20261122)
    acknowledged = 0
    kills = 0
    while True:
        table = run_table()
        table.wait_for("READY=1")
        client = httpx.Client(base_url=table.base, headers={"X-Table-Pin": PIN}, timeout=5)
        lines = client.get("/api/transcript").text.splitlines()[1:]
        stored = [json.loads(line) for line in lines]
        # Every acknowledged action is there, in order, none twice; at most one more (the
        # request in flight when the process died may have been stored but not answered).
        assert stored == [canonical(a) for a in SCRIPT[: len(stored)]]
        assert acknowledged <= len(stored) <= acknowledged + 1
        acknowledged = len(stored)
        if acknowledged == len(SCRIPT):
            break
        stop_after = rng.randint(1, 4)
        for action in SCRIPT[acknowledged:]:
            if stop_after == 0 and kills < 8:
                # Kill while the next request is on its way (or just before it).
                sender = threading.Thread(target=_post_quietly, args=(client, action))
                sender.start()
                time.sleep(rng.uniform(0, 0.01))
                table.proc.kill()
                sender.join(10)
                break
            assert client.post("/api/actions", json=action).status_code == 200
            acknowledged += 1
            stop_after -= 1
        else:
            break
        table.proc.wait(10)
        kills += 1
    final = httpx.get(f"{table.base}/api/state", timeout=5).json()
    assert kills >= 3
    assert [p["score"] for p in final["players"]] == [3800, 250]


def canonical(action: dict[str, Any]) -> dict[str, Any]:
    """An action as a transcript writes it (dice sorted)."""
    from scoring.core import action_from_json, action_to_json

    return action_to_json(action_from_json(action))


def _post_quietly(client: httpx.Client, action: dict[str, Any]) -> None:
    """Send an action whose answer may never come (the server is being killed)."""
    with contextlib.suppress(httpx.HTTPError):
        client.post("/api/actions", json=action)


@pytest.mark.parametrize("calibrated", [True, False], ids=["calibrated", "not-calibrated"])
def test_a_locked_pi_camera_follows_the_rooms_light(
    tmp_path: Path,
    fake_picamera2: type[FakePicamera2],  # noqa: F811 - the fixture imported above
    monkeypatch: pytest.MonkeyPatch,
    calibrated: bool,
) -> None:
    """A table calibrated under a lamp and played by day: the camera loop brings the locked
    exposure back to the calibrated light while the dice lie still, the game takes nothing
    from it, and the dice read the same. A Pi camera not calibrated keeps its own automatic
    exposure: nothing is locked for it."""
    from tests.vision.lit_scene import REFERENCE
    from vision.light import tray_light, tray_rgb

    with _lit_table(tmp_path, monkeypatch, seed=8, tray="green", calibrated=calibrated) as lit:
        table, run, dice = lit.table, lit.run, lit.dice
        run(2.0, thrown=True)  # the dice are thrown and settle: the roll is taken
        state = table.state_json()
        read = sorted(d["value"] for d in state["table"]["dice_read"])
        assert (state["actions"], read) == (1, sorted(d.value for d in dice))
        camera = fake_picamera2.instances[-1]
        locked = camera.controls.get("ExposureTime")
        assert locked == (REFERENCE.exposure_time if calibrated else None)

        run(10.0, room=4.0)  # the curtains are opened
        state = table.state_json()
        assert (state["actions"], state["table"]["problem"]) == (1, "")
    if not calibrated:
        assert "ExposureTime" not in camera.controls
        return
    total = camera.controls["ExposureTime"] * camera.controls["AnalogueGain"]
    assert total == pytest.approx(REFERENCE.exposure_time * REFERENCE.analogue_gain / 4, rel=0.15)
    assert lit.calibration is not None
    seen = tray_light(camera.capture_array(), lit.calibration.zone)
    assert seen is not None
    ratio = np.array(tray_rgb(seen)) / np.array(tray_rgb(lit.calibration.tray))
    assert np.abs(np.log(ratio)).max() < np.log(1.1)


def test_a_restarted_table_starts_from_the_light_it_followed_last(
    tmp_path: Path,
    fake_picamera2: type[FakePicamera2],  # noqa: F811 - the fixture imported above
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Played by day under a lamp's calibration: the keeper moves the exposure, and a table
    started again in the same light (a power cut) opens the camera as it was followed, reading
    at once with no change to make. A file of another calibration, or a broken one, is
    passed over for the calibration's own settings."""
    from tests.vision.lit_scene import REFERENCE

    light = tmp_path / "light.json"
    with _lit_table(tmp_path / "a", monkeypatch, seed=8, tray="green", light_file=light) as lit:
        lit.run(2.0, thrown=True)
        lit.run(10.0, room=4.0)
        followed = fake_picamera2.instances[-1].controls["ExposureTime"]
    assert followed < REFERENCE.exposure_time / 2
    assert json.loads(light.read_text())["settings"]["exposure_time"] == followed

    with _lit_table(
        tmp_path / "b", monkeypatch, seed=8, tray="green", room=4.0, light_file=light
    ) as lit:
        camera = fake_picamera2.instances[-1]
        assert camera.controls["ExposureTime"] == followed  # before any look at the tray
        lit.run(2.0, thrown=True)
        state = lit.table.state_json()
        assert sorted(d["value"] for d in state["table"]["dice_read"]) == sorted(
            d.value for d in lit.dice
        )
        assert camera.controls["ExposureTime"] == followed  # nothing to change

    recalibrated = replace(REFERENCE, exposure_time=REFERENCE.exposure_time // 2)
    for kept in (light.read_text(), "{not json"):
        light.write_text(kept)
        with _lit_table(
            tmp_path / "c",
            monkeypatch,
            seed=8,
            tray="green",
            locked=recalibrated,
            light_file=light,
        ):
            assert fake_picamera2.instances[-1].controls["ExposureTime"] == (
                recalibrated.exposure_time
            )


def test_the_light_followed_is_kept_in_memory_when_no_file_can_take_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A camera opened again after a failure starts from the light followed, file or not; a
    file that cannot be written is said in the log, and nothing else fails."""
    from tests.vision.lit_scene import REFERENCE

    calibration = calibrate_frame(make_tray(320, 240, colour="grey", seed=1), camera=REFERENCE)
    brighter = replace(REFERENCE, exposure_time=REFERENCE.exposure_time // 3)
    nowhere = KeptLight(None, calibration)
    nowhere.remember(brighter)
    assert nowhere.settings() == brighter
    (tmp_path / "file").write_text("")
    unwritable = KeptLight(tmp_path / "file" / "light.json", calibration)  # under a file
    with caplog.at_level(logging.WARNING, logger="pipcam.run"):
        unwritable.remember(brighter)
    assert unwritable.settings() == brighter
    assert "cannot keep the light followed" in caplog.text
    assert KeptLight(tmp_path / "light.json", None).settings() is None


class _Dazzled:
    """The table's reader, but in a blown-out picture it reads the die nearest the top left
    corner one pip too many (a glare spot taken for a pip): what `pipcam eval --effect day`
    measured on real photos, made certain here."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.zone = reader.zone

    def read(self, frame: Any, status: str = "settled") -> Any:
        from dataclasses import replace

        reading = self.reader.read(frame, status=status)
        if float(np.median(frame)) < 200 or not reading.dice:
            return reading
        dice = list(reading.dice)
        k = min(range(len(dice)), key=lambda i: dice[i].box[0] + dice[i].box[1])
        dice[k] = replace(dice[k], value=dice[k].value % 6 + 1)
        return replace(reading, dice=tuple(dice))


class _Lit(NamedTuple):
    table: Table
    run: Callable[..., None]
    dice: list[DieSpec]
    calibration: Calibration | None


@contextlib.contextmanager
def _lit_table(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    seed: int,
    dazzled: bool = False,
    locked: CameraSettings | None = None,
    room: float = 1.0,
    tray: str = "grey",
    calibrated: bool = True,
    light_file: Path | None = None,
) -> Iterator[_Lit]:
    """A kymppitonni table over a tray calibrated under a lamp (``room`` times the light of
    the fake camera's reference, the camera ``locked`` to its settings), its camera loop, and
    the six dice that ``run(seconds, thrown=True)`` throws into it."""
    from pipcam.vision_cli import build_reader
    from tests.vision.lit_scene import REFERENCE, LitCamera

    monkeypatch.setattr(sys.modules["picamera2"], "Picamera2", LitCamera)
    width, height = 640, 480
    dice = six_dice(width, height, seed=seed)
    empty = make_tray(width, height, colour=tray, seed=seed)
    scene = empty.copy()
    for die in dice:
        draw_die(scene, die)
    monkeypatch.setattr(LitCamera, "scene", empty)
    monkeypatch.setattr(LitCamera, "room", room)
    monkeypatch.setattr(LitCamera, "flicker", 0.0)
    calibration = calibrate_frame(empty, camera=locked or REFERENCE) if calibrated else None
    open_source, _, _ = _open_camera(f"picamera:{width}x{height}", lambda _: None, calibration)
    reader = build_reader(calibration=calibration)
    now = [0.0]
    with Store(tmp_path / "pipcam.db") as store:
        table = Table(store)
        table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
        loop = CameraLoop(
            open_source,
            table,
            _Dazzled(reader) if dazzled else reader,
            settle_seconds=0.5,
            clock=lambda: now[0],
            calibration=calibration,
            light_file=light_file,
        )

        def run(
            seconds: float,
            *,
            room: float | None = None,
            thrown: bool = False,
            flicker: float | None = None,
        ) -> None:
            LitCamera.room = LitCamera.room if room is None else room
            LitCamera.flicker = LitCamera.flicker if flicker is None else flicker
            LitCamera.scene = scene if thrown else LitCamera.scene
            end = now[0] + seconds
            while now[0] < end:
                assert loop.tick() is not None
                now[0] += 0.1

        run(1.0)
        try:
            yield _Lit(table, run, dice, calibration)
        finally:
            loop.stop()


@pytest.mark.usefixtures("fake_picamera2")
def test_a_roll_read_before_the_light_was_set_right_is_taken_once_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sun comes out as the dice are thrown: on the blown-out grey tray the camera loses
    the white dice, and the table refuses a throw of six with two seen. Once the light keeper
    has set the camera right, the dice are seen, and the roll is taken."""
    with _lit_table(tmp_path, monkeypatch, seed=1) as lit:
        table, run, dice = lit.table, lit.run, lit.dice
        run(0.5, room=16.0)
        run(2.0, thrown=True)
        state = table.state_json()
        assert state["actions"] == 0
        assert "were to be thrown" in state["table"]["problem"]
        assert len(state["table"]["dice_read"]) < 6
        run(20.0)
        state = table.state_json()
    assert (state["actions"], state["table"]["problem"]) == (1, "")
    assert sorted(d["value"] for d in state["table"]["dice_read"]) == sorted(d.value for d in dice)


@pytest.mark.usefixtures("fake_picamera2")
def test_a_die_misread_before_the_light_was_set_right_is_corrected_once_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sun comes out as the dice are thrown, and a die is misread in the blown-out picture:
    the roll is taken with it. Once the light keeper has set the camera right, the loop reads
    the dice that still lie there again and the camera corrects the die, as a phone would. (A
    new look at the dice was taken for another throw before: the players were told the dice
    did not follow from those on the table.)"""
    with _lit_table(tmp_path, monkeypatch, seed=1, dazzled=True) as lit:
        table, run, dice = lit.table, lit.run, lit.dice
        run(0.5, room=4.0)
        run(2.0, thrown=True)
        state = table.state_json()
        truth = sorted(d.value for d in dice)
        read = sorted(d["value"] for d in state["table"]["dice_read"])
        assert state["actions"] == 1
        assert read != truth
        run(20.0)
        state = table.state_json()
        assert table.history is not None
        actions = table.history.actions
        assert table.game_id is not None
        sources = [e.source for e in table.store.events(table.game_id)]
    assert (state["actions"], state["table"]["problem"]) == (1, "")
    assert sorted(d["value"] for d in state["table"]["dice_read"]) == truth
    assert actions == [Roll(truth)]
    assert sources == ["camera"] * 3  # the roll, its undo and the corrected roll


@pytest.mark.usefixtures("fake_picamera2")
def test_rolls_are_read_under_a_flickering_lamp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bright room lit by lamps that flicker deeply: the camera is locked to 4 ms, less than
    one flicker, so bands of 0.6 to 1.4 times the light move across every frame. Each roll is
    still read once (before, the tray never came to rest and no roll was read)."""
    locked = CameraSettings(4000, 1.0, (1.8, 1.4), flicker_period=10_000)
    with _lit_table(tmp_path, monkeypatch, seed=3, locked=locked, room=4.5) as lit:
        table, run, dice = lit.table, lit.run, lit.dice
        run(2.0, flicker=0.5)
        assert table.state_json()["table"]["reading"] == "empty"
        run(3.0, thrown=True)
        state = table.state_json()
        read = sorted(d["value"] for d in state["table"]["dice_read"])
        assert (state["actions"], state["table"]["problem"]) == (1, "")
        assert read == sorted(d.value for d in dice)
        run(5.0)  # the dice lie still under the flickering lamp: no second roll
        assert table.state_json()["actions"] == 1


@contextlib.contextmanager
def _camera_table(
    tmp_path: Path, game: str = "kymppitonni", calibration: Calibration | None = None
) -> Iterator[tuple[Table, Callable[[Any, float], None]]]:
    """A table (kymppitonni) fed by the camera loop with the shipped reader (over a calibrated
    tray, if given), on a clock of its own, and ``show(frame, seconds)``, which shows it one
    frame a tenth of a second."""
    from pipcam.vision_cli import build_reader

    now = [0.0]
    with Store(tmp_path / "pipcam.db") as store:
        table = Table(store)
        table.new_game({"game": game, "players": ["Ann", "Bob"]})
        loop = CameraLoop(
            lambda: None,
            table,
            build_reader(calibration=calibration),
            settle_seconds=0.5,
            clock=lambda: now[0],
            calibration=calibration,
        )

        def show(frame: Any, seconds: float) -> None:
            end = now[0] + seconds
            while now[0] < end:
                loop.step(frame)
                now[0] += 0.1

        yield table, show


@pytest.mark.parametrize(
    ("tray", "body"),
    [((28, 28, 28), (30, 30, 30)), ((40, 40, 170), (40, 40, 180)), ((60, 120, 40), (60, 125, 40))],
    ids=["black-on-black", "red-on-red", "green-on-green"],
)
def test_dice_the_colour_of_the_tray_are_read(
    tmp_path: Path, tray: tuple[int, int, int], body: tuple[int, int, int]
) -> None:
    """Dice of the tray's own colour show only their white pips, which the settle detector
    does not see: the camera loop asks the reader, and the table takes the roll; a hand that
    leaves them as they lay is no new roll, and the tray cleared is empty again."""
    from dataclasses import replace

    width, height = 640, 480
    dice = [replace(d, body=body, pip=(235, 235, 235)) for d in six_dice(width, height, seed=9)]
    empty = make_tray(width, height, colour=tray, seed=9)
    lying = empty.copy()
    for die in dice:
        draw_die(lying, die)
    hand = lying.copy()
    draw_hand(hand, width * 0.3, height * 0.75, height * 0.5)
    with _camera_table(tmp_path) as (table, show):
        show(empty, 1.0)
        show(lying, 1.5)  # thrown: at rest, read
        state = table.state_json()
        read = sorted(d["value"] for d in state["table"]["dice_read"])
        assert (state["actions"], read) == (1, sorted(d.value for d in dice))
        assert state["table"]["reading"] == "settled"
        show(hand, 0.3)
        show(lying, 1.5)  # a hand came and went
        state = table.state_json()
        assert (state["actions"], state["table"]["problem"]) == (1, "")
        show(hand, 0.3)
        show(empty, 1.5)  # picked up
        assert table.state_json()["table"]["reading"] == "empty"


def test_a_die_left_leaning_is_asked_to_be_thrown_again(tmp_path: Path) -> None:
    """Six dice thrown, one comes to rest leaning: the shipped reader reports it ``cocked``
    (the face model sees no face, the die check sees a die), and the table asks for it to be
    thrown again, pointing at it. (Without the check the die vanished, and the table said that
    5 dice were in the roll zone but 6 were to be thrown.) Thrown again and lying flat, the
    roll is taken."""
    width, height = 1280, 960
    dice = six_dice(width, height, seed=4)
    empty = make_tray(width, height, colour="green", seed=4)
    leaning = empty.copy()
    for die in dice[:5]:
        draw_die(leaning, die)
    draw_cocked_die(leaning, dice[5], tilt=50.0)
    flat = empty.copy()
    for die in dice:
        draw_die(flat, die)
    with _camera_table(tmp_path) as (table, show):
        show(empty, 1.0)
        show(leaning, 1.5)
        state = table.state_json()
        assert state["actions"] == 0
        assert "leans on something: throw it again" in state["table"]["problem"]
        statuses = sorted(d["status"] for d in state["table"]["dice_read"])
        assert statuses == ["cocked"] + ["ok"] * 5
        show(empty, 1.0)
        show(flat, 1.5)
        state = table.state_json()
        read = sorted(d["value"] for d in state["table"]["dice_read"])
        assert (state["actions"], read) == (1, sorted(d.value for d in dice))


@pytest.mark.parametrize("off", [12.0, 20.0], ids=["past-reading", "past-finding"])
def test_a_camera_out_of_focus_is_said_until_its_dice_are_sharp(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, off: float
) -> None:
    """Roll after roll the dice are too blurred to read (a lens turned off the tray): each die
    is asked about, and from the second such roll the phones and the status LED say to focus
    the camera. Once the dice of a roll are sharp, the notice goes. A lens further off blurs
    the dice past finding (the reader sees none): the soft shapes on the tray say it alike."""
    width, height = 1280, 960

    def tray(seed: int, blur: float) -> tuple[Any, Any]:
        empty = make_tray(width, height, colour="green", seed=seed)
        thrown = make_frame(width, height, six_dice(width, height, seed=seed), seed=seed)
        if blur:
            empty = np.asarray(cv2.GaussianBlur(empty, (0, 0), blur), np.uint8)
            thrown = np.asarray(cv2.GaussianBlur(thrown, (0, 0), blur), np.uint8)
        return empty, thrown

    caplog.set_level(logging.WARNING, logger="vision.focus")
    with _camera_table(tmp_path) as (table, show):
        notices = []
        for seed, blur in ((0, off), (1, off), (2, 0.0)):
            empty, thrown = tray(seed, blur)
            show(empty, 1.0)
            show(thrown, 1.5)
            state = table.state_json()
            notices.append((state["table"]["camera_notices"], led_status(state)))
            if blur:
                assert state["actions"] == 0
                if off < 16:  # each die found, and asked about
                    assert "cannot be read" in state["table"]["problem"]
                else:  # no die found: without the notice, nothing would be said at all
                    assert (state["table"]["problem"], state["table"]["dice_read"]) == ("", [])
        assert state["actions"] == 1  # the sharp roll was taken
    first = "attention" if off < 16 else "ready"
    assert notices == [([], first), (["blurred"], "attention"), ([], "ready")]
    assert len(caplog.records) == 1
    assert "the camera is out of focus" in caplog.records[0].getMessage()


@pytest.mark.parametrize("bare", [10.0, 0.3], ids=["left-bare", "thrown-at-once"])
def test_the_roll_zone_follows_a_pushed_tray(tmp_path: Path, bare: float) -> None:
    """A tray pushed across the table after calibrating: while it lies bare (or the dice lie
    still) the camera loop moves the roll zone onto it, and dice thrown into its far corner
    are a roll, not dice set aside. Thrown at once, before the zone has followed, they are
    taken for dice set aside at first, and read again once it has (before, they stayed so, and
    the throw was lost without a word)."""

    width, height = 640, 480

    def table_with_tray(dx: int, dice: list[DieSpec] | None = None) -> Any:
        frame = make_tray(width, height, colour="brown", seed=1)
        frame[90:390, 120 + dx : 520 + dx] = make_tray(400, 300, colour="green", seed=2)
        for die in dice or []:
            draw_die(frame, die)
        return frame

    calibration = calibrate_frame(table_with_tray(0))
    pushed = 90
    # Dice in the pushed tray's right half, past the calibrated zone's right edge (520 px).
    faces = [2, 5, 6, 3, 3, 4]
    dice = [DieSpec(v, 545 + 45 * (i % 2), 140 + 90 * (i // 2), 32) for i, v in enumerate(faces)]
    with _camera_table(tmp_path, calibration=calibration) as (table, show):
        show(table_with_tray(0), 1.0)
        show(table_with_tray(pushed), bare)  # pushed, and left bare a while
        show(table_with_tray(pushed, dice), 1.5)
        state = table.state_json()
        if bare < 1.0:
            assert (state["actions"], len(state["table"]["aside_read"])) == (0, len(faces))
            show(table_with_tray(pushed, dice), 10.0)
            state = table.state_json()
    read = sorted(d["value"] for d in state["table"]["dice_read"])
    assert (state["actions"], read, state["table"]["aside_read"]) == (1, sorted(faces), [])


@pytest.mark.parametrize("lifted", [True, False], ids=["thrown-with-the-others", "left-lying"])
def test_a_die_thrown_back_onto_its_own_place_is_told_from_one_left_lying(
    tmp_path: Path, lifted: bool
) -> None:
    """Generał, all five thrown again, and one lands where it lay showing the same face. The
    camera saw its place bared when it was picked up: the throw is taken (before, it was refused
    as a die left lying, about one throw in a hundred). A die that was never picked up, its
    place untouched, is still refused."""
    width, height = 1280, 960
    empty = make_tray(width, height, colour="green", seed=3)
    first = six_dice(width, height, seed=3)[:5]
    second = [
        first[0],
        *(replace(d, value=d.value % 6 + 1, cy=d.cy + height * 0.12) for d in first[1:]),
    ]

    def tray(dice: Sequence[DieSpec]) -> Any:
        frame = empty.copy()
        for die in dice:
            draw_die(frame, die)
        return frame

    with _camera_table(tmp_path, "general") as (table, show):
        show(empty, 1.0)
        show(tray(first), 1.5)
        assert table.history is not None
        assert table.history.actions == [Roll([d.value for d in first])]
        show(empty if lifted else tray(first[:1]), 0.3)  # the dice gathered up
        show(tray(second), 1.5)
        state = table.state_json()
    if lifted:
        assert table.history.actions[1:] == [Keep([]), Roll([d.value for d in second])]
        assert state["table"]["problem"] == ""
    else:
        assert len(table.history) == 1
        assert state["table"]["problem_code"] == "left_lying"


def test_the_camera_loop_keeps_the_frame_of_the_last_throw_for_the_phones(tmp_path: Path) -> None:
    """The frame a throw was read from, drawn, until another reading is the table's last;
    nothing before the first throw."""
    from pipcam.vision_cli import build_reader

    width, height = 640, 480
    empty = make_tray(width, height, colour="green", seed=5)
    thrown = make_frame(width, height, six_dice(width, height, seed=5), tray="green", seed=5)
    now = [0.0]
    with Store(tmp_path / "pipcam.db") as store:
        table = Table(store)
        table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
        loop = CameraLoop(
            lambda: None, table, build_reader(), settle_seconds=0.5, clock=lambda: now[0]
        )
        for frame, seconds in ((empty, 1.0), (thrown, 1.5)):
            if seconds == 1.5:
                assert loop.photo() is None  # nothing read yet
            for _ in range(int(seconds * 10)):
                loop.step(frame)
                now[0] += 0.1
        drawn = loop.photo()
        assert drawn is not None
        data, size = drawn
        assert size == (width, height)
        picture = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        assert picture is not None
        assert picture.shape == thrown.shape
        assert np.abs(picture.astype(int) - thrown.astype(int)).max() > 100  # boxes drawn
        table.on_reading(_reading_of(table), settled_now=True)  # another reading, a phone's
        assert loop.photo() is None


def test_the_photo_of_an_earlier_throw_comes_from_the_kept_photos(tmp_path: Path) -> None:
    """Two throws read: the history names the reading of each, and the first one's frame,
    no longer the last, is drawn from the photos the table keeps, its dice as the players left
    them (a die corrected since is drawn so). A table that keeps no photos has none of it."""
    from pipcam.photos import PhotoKeeper
    from pipcam.vision_cli import build_reader

    width, height = 640, 480
    empty = make_tray(width, height, colour="green", seed=5)
    throws = [
        make_frame(width, height, six_dice(width, height, seed=seed)[:5], tray="green", seed=seed)
        for seed in (5, 6)  # five dice: Generał's
    ]
    now = [0.0]
    with Store(tmp_path / "pipcam.db") as store:
        table = Table(store)
        table.new_game({"game": "general", "players": ["Ann", "Bob"]})
        keeper = PhotoKeeper(tmp_path / "photos")
        loop = CameraLoop(
            lambda: None,
            table,
            build_reader(),
            settle_seconds=0.5,
            clock=lambda: now[0],
            keep_photo=keeper.keep,
            photos=tmp_path / "photos",
        )
        for frame, seconds in ((empty, 1.0), (throws[0], 1.5), (empty, 1.0), (throws[1], 1.5)):
            for _ in range(int(seconds * 10)):
                loop.step(frame)
                now[0] += 0.1
            if frame is throws[0]:
                table.act(Score("chance"), source="phone")  # Ann writes; Bob throws next
        first, second = (r.id for r in store.readings())
        entries = table.history_json()["entries"]
        assert isinstance(entries, list)
        assert [e["reading"] for e in entries if isinstance(e, dict)] == [first, None, second]

        def picture(reading: int) -> np.ndarray[Any, Any]:
            drawn = loop.photo(reading)
            assert drawn is not None
            data, size = drawn
            assert size == (width, height)
            decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
            assert decoded is not None
            return np.asarray(decoded, np.int16)

        shown = picture(first)
        off = [float(np.abs(shown - t.astype(np.int16)).mean()) for t in throws]
        assert off[0] < 5 < off[1]  # the first throw's frame, with its dice drawn
        assert picture(second).shape == throws[1].shape  # the last, from memory
        (die, *_), _ = store.dice(first)
        value = die["value"]
        assert isinstance(value, int)
        store.record_correction(first, 0, value % 6 + 1, events=[], source="phone")
        assert np.abs(picture(first) - shown).max() > 100  # its first die's face drawn anew
        loop.photos = None
        assert loop.photo(first) is None
        assert loop.photo(second) is not None


def _reading_of(table: Table) -> Any:
    """The table's last reading's dice again, as a new settled reading (none of the camera's)."""
    from tests.pipcam._fakes import FakeDie, FakeReading

    assert table.last_reading is not None
    return FakeReading(
        tuple(FakeDie(d["value"], box=tuple(d["box"])) for d in table.last_reading.dice)
    )


def test_a_place_said_to_hold_no_die_goes_with_a_pushed_tray(tmp_path: Path) -> None:
    """A die face stuck on the tray after calibrating, said once to be no die: when the tray
    is pushed and the roll zone follows it, the place goes with it, and the next throw is
    taken with no question (before, the sticker was asked about again)."""

    width, height = 640, 480

    def table_with_tray(dx: int, dice: Sequence[DieSpec] = (), *, sticker: bool = True) -> Any:
        frame = make_tray(width, height, colour="brown", seed=1)
        frame[90:390, 120 + dx : 520 + dx] = make_tray(400, 300, colour="green", seed=2)
        if sticker:
            draw_die(frame, DieSpec(5, 165 + dx, 135, 34, angle=20), shadow=False)
        for die in dice:
            draw_die(frame, die)
        return frame

    calibration = calibrate_frame(table_with_tray(0, sticker=False))
    first = [
        DieSpec(v, 260 + 70 * (i % 3), 190 + 90 * (i // 3), 32)
        for i, v in enumerate([1, 1, 5, 2, 3, 4])
    ]
    pushed = 90
    second = [
        DieSpec(v, 330 + 70 * (i % 3), 200 + 90 * (i // 3), 32, angle=15)
        for i, v in enumerate([2, 2, 3, 4, 6, 6])
    ]
    with _camera_table(tmp_path, calibration=calibration) as (table, show):
        show(table_with_tray(0), 1.0)
        show(table_with_tray(0, first), 1.5)
        state = table.state_json()
        assert "7 dice are in the roll zone" in state["table"]["problem"]
        (at,) = [i for i, d in enumerate(state["table"]["dice_read"]) if d["box"][2] < 200]
        assert table.correct(at, 0)["actions"] == 1
        table.undo(source="phone")  # thrown again, once the tray has been pushed
        show(table_with_tray(pushed), 10.0)
        show(table_with_tray(pushed, second), 1.5)
        state = table.state_json()
    assert state["table"]["problem"] == ""
    assert table.history is not None
    assert table.history.actions[-1] == Roll([2, 2, 3, 4, 6, 6])
    assert [d["status"] for d in state["table"]["dice_read"]].count("no_die") == 1


def test_a_die_printed_on_the_tray_is_asked_about_once(tmp_path: Path) -> None:
    """A tray printed with a die face: the shipped reader reads it at every throw, as a
    seventh die. Said once on a phone to be no die, it is left out of the next throws, which
    are taken as they settle (before, every throw asked again)."""
    from dataclasses import replace

    width, height = 1280, 960
    printed = DieSpec(value=5, cx=width * 0.09, cy=height * 0.12, side=height * 0.09, angle=20)
    empty = make_tray(width, height, colour="green", seed=6)
    draw_die(empty, printed, shadow=False)
    throws = [six_dice(width, height, seed=6), six_dice(width, height, seed=7)]
    throws[1] = [replace(d, cy=d.cy + height * 0.1) for d in throws[1]]  # landing elsewhere
    frames = []
    for dice in throws:
        frame = empty.copy()
        for die in dice:
            draw_die(frame, die)
        frames.append(frame)
    with _camera_table(tmp_path) as (table, show):
        show(empty, 1.0)
        show(frames[0], 1.5)
        state = table.state_json()
        assert state["actions"] == 0
        assert "7 dice are in the roll zone" in state["table"]["problem"]
        (at,) = [
            i
            for i, d in enumerate(state["table"]["dice_read"])
            if d["box"][0] < printed.cx < d["box"][2] and d["box"][1] < printed.cy < d["box"][3]
        ]
        state = table.correct(at, 0)
        assert (state["actions"], state["table"]["problem"]) == (1, "")
        table.undo(source="phone")  # thrown again
        show(empty, 1.0)
        show(frames[1], 1.5)
        state = table.state_json()
        assert state["table"]["problem"] == ""
        assert state["actions"] == 1
        read = state["table"]["dice_read"]
        assert sorted(d["value"] for d in read if d["status"] != "no_die") == sorted(
            d.value for d in throws[1]
        )
        assert [d["status"] for d in read].count("no_die") == 1
