"""SIGKILL a scripted game at random points, many times: no acknowledged event is lost or doubled.

The driver (store_driver.py) acknowledges an event on stdout only after ``Store.append`` returned.
After every kill the restarted driver must report a stored log that holds every acknowledged event
(and at most the one in flight), continue with the very next sequence number, and the log must
always be a prefix of the script with gap-free sequence numbers.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import random
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from pipcam.store import Store, replay_events
from scoring.core import JSON, Action
from scoring.history import History
from scoring.transcript import parse_header, replay, start

DRIVER = Path(__file__).with_name("store_driver.py")
KILLS = 30
Event = tuple[str, dict[str, JSON] | None]


def load_driver() -> ModuleType:
    """The driver module itself, for its script and header (it is a script, not a package)."""
    spec = importlib.util.spec_from_file_location("store_driver", DRIVER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class Run:
    """What one driver process said before it ended or was killed."""

    started: int | None  # the stored log length it found (0 for a new game); None if it died first
    acks: list[int]
    done: bool
    returncode: int
    stderr: str


def parse_output(text: str, returncode: int, stderr: str) -> Run:
    """Only complete lines count: a line cut by the kill was never acknowledged."""
    started: int | None = None
    acks: list[int] = []
    done = False
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break
        if m := re.fullmatch(r"ACK (\d+)\n", line):
            acks.append(int(m[1]))
        elif m := re.fullmatch(r"RESUME (\d+)\n", line):
            started = int(m[1])
        elif re.fullmatch(r"GAME \d+\n", line):
            started = 0
        elif line == "DONE\n":
            done = True
        else:
            raise AssertionError(f"unexpected driver output {line!r}")
    return Run(started, acks, done, returncode, stderr)


@dataclass
class Timings:
    """How long the driver takes, measured as the test goes, to aim kills at any disk speed."""

    start: list[float] = field(default_factory=lambda: [0.06])  # launch to its first line
    event: list[float] = field(default_factory=lambda: [0.005])  # "go" to the acknowledgement


def go(proc: subprocess.Popen[str]) -> None:
    """Let the driver take one more event."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError):  # it died: its output tells the test why
        proc.stdin.write("go\n")
        proc.stdin.flush()


def run_driver(db: Path, tmp: Path, rng: random.Random | None, timings: Timings) -> Run:
    """Start the driver; with ``rng`` kill it at a random point, else let it finish.

    A killed run takes at most the events it was let go (up to 7), so the script lasts for every
    kill whatever the speed of the disk.
    """
    err_path = tmp / "driver.err"
    launched = time.perf_counter()
    with err_path.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, str(DRIVER), str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    assert proc.stdin is not None
    assert proc.stdout is not None
    stdin = proc.stdin
    guard = threading.Timer(20, proc.kill)  # a hung driver fails the test instead of hanging it
    guard.start()
    try:
        seen = ""
        if rng is None:
            stdin.close()  # end of input: play to the end without waiting
        elif rng.random() < 0.7:
            # k-1 events acknowledged, then the kill lands somewhere in the k-th: reading "go",
            # the engine check, the append (before, during or after its commit) or the ACK.
            k = rng.randint(1, 7)
            seen += proc.stdout.readline()
            timings.start.append(time.perf_counter() - launched)
            for _ in range(k - 1):
                sent = time.perf_counter()
                go(proc)
                seen += proc.stdout.readline()
                timings.event.append(time.perf_counter() - sent)
            go(proc)
            time.sleep(rng.uniform(0, 1.5 * statistics.median(timings.event)))
        else:
            # Early: interpreter start, opening, WAL recovery, the integrity check, the replay.
            for _ in range(rng.randint(0, 2)):
                go(proc)
            time.sleep(rng.uniform(0, 1.2 * statistics.median(timings.start)))
        if rng is not None:
            proc.send_signal(signal.SIGKILL)
        seen += proc.stdout.read()
        returncode = proc.wait()
    finally:
        guard.cancel()
        with contextlib.suppress(BrokenPipeError):
            stdin.close()
    return parse_output(seen, returncode, err_path.read_text())


def redo_stack(history: History[Any]) -> list[Action]:
    """The actions a redo would take again, in order, without touching ``history``."""
    scratch = copy.deepcopy(history)
    out: list[Action] = []
    while scratch.can_redo():
        out.append(scratch.redo())
    return out


def check_stored_log(db: Path, script: list[Event]) -> int:
    """The store's own view: at most one game, its log a gap-free prefix of the script."""
    with Store(db) as store:
        games = store.games()
        assert len(games) <= 1, f"a second game was started: {games}"
        if not games:
            return 0
        events = store.events(games[0].id)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    logged = [(e.kind, e.action) for e in events]
    assert logged == script[: len(logged)], "the stored log is not the script's prefix"
    return len(logged)


def test_sigkill_at_random_points_loses_and_repeats_nothing(tmp_path: Path) -> None:
    """30 kills at random points of a 130-event game, then a clean run to the end."""
    driver = load_driver()
    script: list[Event] = driver.SCRIPT
    header: dict[str, JSON] = driver.HEADER
    db = tmp_path / "data" / "pipcam.db"
    rng = random.Random(20250505)
    timings = Timings()
    # Bounds on the stored log's length: every acknowledged event is in it (low), and at most the
    # one append that was in flight when the last driver died is beyond that (high).
    low = high = 0
    for kill in range(KILLS):
        run = run_driver(db, tmp_path, rng, timings)
        context = f"kill {kill}: {run}, stored length in [{low}, {high}]"
        assert run.returncode == -signal.SIGKILL, f"the driver ended on its own; {context}"
        if run.started is None:
            assert run.acks == [], context  # died before it opened the store: nothing changed
        else:
            assert low <= run.started <= high, context
            first = run.started + 1
            assert run.acks == list(range(first, first + len(run.acks))), context
            low = run.started + len(run.acks)
            high = low + 1
        if rng.random() < 0.5:
            # Checked by a second process only sometimes: its clean close checkpoints the WAL,
            # and the driver must also recover the WAL that a killed driver left.
            stored = check_stored_log(db, script)
            assert low <= stored <= high, context
            low = high = stored
        assert high < len(script), "the script ran out before the kills did: lengthen it"

    last = run_driver(db, tmp_path, None, timings)
    assert (last.returncode, last.done, last.stderr) == (0, True, ""), last
    assert last.started is not None
    assert low <= last.started <= high
    assert last.acks == list(range(last.started + 1, len(script) + 1))

    with Store(db) as store:
        (summary,) = store.games()
        assert summary.finished is not None
        final = store.game(summary.id)
        text = store.transcript(summary.id)
    assert final.header == parse_header(header).to_json()
    assert final.events == script
    resumed = replay_events(final)
    direct = start(parse_header(header))
    for kind, action in script:
        driver.apply_event(direct, kind, action)
    assert resumed.state == direct.state
    assert resumed.actions == direct.actions
    assert redo_stack(resumed) == redo_stack(direct)
    assert resumed.game.outcome(resumed.state) is not None
    assert replay(text.splitlines()).state == direct.state
