"""Thirty phones on one table: every one receives every update, in order, without a gap.

A real uvicorn server on loopback, 30 threads each holding an /api/events stream, and one more
client playing a game through the API as fast as it answers. The test asserts that every
client saw every state (its ``table.seq`` numbers have no gap); the delay from sending an action
to each client's receiving its state is printed (median and 95th percentile), not asserted:
the machine is shared.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pipcam.store import Store
from pipcam.table import Table
from tests.web.test_api import PIN
from tests.web.test_api_more import serving

CLIENTS = 30
TURN = [{"roll": [1, 1, 5, 2, 3, 4]}, {"keep": [1, 1, 5]}, {"bank": True}]
ACTIONS = TURN * 7  # 21 actions: seven banked turns, Ann and Bob in turn
DEADLINE = 25.0  # seconds: every loop below stops by itself by then


class Listener(threading.Thread):
    """One phone: reads state events until it has seen ``last_seq`` or time runs out."""

    def __init__(self, base: str, stop_at: float) -> None:
        super().__init__(daemon=True)
        self.base = base
        self.stop_at = stop_at
        self.last_seq: int | None = None  # set once the actions are known
        self.received: list[tuple[int, float]] = []  # (seq, when)
        self.ready = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        """Listen; any failure is kept for the test to report."""
        try:
            timeout = httpx.Timeout(5.0, read=5.0)
            with httpx.stream("GET", f"{self.base}/api/events", timeout=timeout) as r:
                for line in r.iter_lines():
                    if line.startswith("data:"):
                        seq = json.loads(line[5:])["table"]["seq"]
                        self.received.append((seq, time.monotonic()))
                        self.ready.set()
                        if self.last_seq is not None and seq >= self.last_seq:
                            return
                    if time.monotonic() > self.stop_at:
                        return
        except BaseException as exc:  # reported by the test, not lost in a thread
            self.error = exc


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    """A Kymppitonni game for Ann and Bob on a real store."""
    with Store(tmp_path / "pipcam.db") as store:
        t = Table(store)
        t.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
        yield t


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of some values."""
    ordered = sorted(values)
    rank = max(1, round(q / 100 * len(ordered)))
    return ordered[rank - 1]


def test_thirty_phones_get_every_update(table: Table) -> None:
    """21 actions sent back to back reach all 30 listeners, each state once and in order."""
    with serving(table) as base:
        stop_at = time.monotonic() + DEADLINE
        listeners = [Listener(base, stop_at) for _ in range(CLIENTS)]
        for listener in listeners:
            listener.start()
        for listener in listeners:
            assert listener.ready.wait(10), listener.error
        first_seq = table.view.seq
        last_seq = first_seq + len(ACTIONS)  # each action is one change of state
        for listener in listeners:
            listener.last_seq = last_seq
        sent: dict[int, float] = {}
        with httpx.Client(base_url=base, headers={"X-Table-Pin": PIN}, timeout=10) as phone:
            for action in ACTIONS:
                started = time.monotonic()
                r = phone.post("/api/actions", json=action)
                assert r.status_code == 200, r.text
                sent[r.json()["table"]["seq"]] = started
        assert sorted(sent) == list(range(first_seq + 1, last_seq + 1))
        for listener in listeners:
            listener.join(max(0.0, stop_at - time.monotonic()) + 1)
        assert [p["score"] for p in table.state_json()["players"]] == [1000, 750]

    delays = []
    for i, listener in enumerate(listeners):
        assert listener.error is None, f"client {i}: {listener.error!r}"
        seqs = [seq for seq, _ in listener.received]
        # The first event is the state when the client joined; then every change, no gap.
        assert seqs[0] <= first_seq, f"client {i} started at {seqs[0]}"
        after = [s for s in seqs if s > first_seq]
        assert after == list(range(first_seq + 1, last_seq + 1)), f"client {i} saw {seqs}"
        delays += [when - sent[seq] for seq, when in listener.received if seq in sent]
    assert len(delays) == CLIENTS * len(ACTIONS)
    median, p95 = statistics.median(delays), percentile(delays, 95)
    print(
        f"\n{CLIENTS} clients x {len(ACTIONS)} actions: delay from action to update "
        f"median {median * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max {max(delays) * 1000:.1f} ms"
    )
