"""An evening at the table, shortened: does `pipcam run` hold its memory, threads and files?

The service runs unattended for hours, so what it holds must not grow with time. This runs
`pipcam run` on the embedded recorded table (the real reader, store and web server) while six
phones come and go: event streams opened and dropped as phones sleep and wake, the scoreboard's
pages and state polled, and a new game started now and then with the PIN (games pile up in the
store). It prints the process's resident memory, threads and open files over the run and the
memory's trend per hour after the first minute. ``PIPCAM_SOAK_SECONDS`` sets the length (180 s
unless set; the figures in the note come from longer runs).

Run with ``make bench``.
"""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.pipcam.test_run import PIN, run_table  # noqa: F401 - the fixture

SECONDS = float(os.environ.get("PIPCAM_SOAK_SECONDS", "180"))
WARM_UP = 60.0
"""Seconds before the trend is taken: the models load and the pages are first served."""
PHONES = 6


def _sample(pid: int) -> tuple[float, int, int]:
    """Resident MB, threads and open file descriptors of ``pid``."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    rss = int(fields["VmRSS"].split()[0]) / 1024
    return rss, int(fields["Threads"]), len(os.listdir(f"/proc/{pid}/fd"))


def _phone(
    base: str, seed: int, stop: threading.Event, errors: list[str], started: list[int]
) -> None:
    """One phone: mostly watching the stream for a while, sometimes reloading the pages."""
    rng = random.Random(seed)
    # The stream says something at least every 15 s (a keep-alive): a longer silence is a fault.
    with httpx.Client(base_url=base, timeout=httpx.Timeout(10, read=30)) as client:
        while not stop.is_set():
            try:
                if rng.random() < 0.5:
                    until = time.monotonic() + rng.uniform(0.2, 5.0)
                    with client.stream("GET", "/api/events") as stream:
                        for _ in stream.iter_lines():
                            if time.monotonic() > until or stop.is_set():
                                break  # the phone sleeps: the stream is dropped mid-way
                else:
                    for path in ("/", "/api/state", "/api/history", "/api/stats", "/api/games"):
                        client.get(path).raise_for_status()
                if rng.random() < 0.05:
                    game = {"game": "kymppitonni", "players": ["Ann", "Bob"]}
                    client.post(
                        "/api/games", json=game, headers={"X-Table-Pin": PIN}
                    ).raise_for_status()
                    started.append(seed)
            except httpx.HTTPError as exc:
                errors.append(f"phone {seed}: {exc!r}")
                stop.wait(1.0)


@pytest.mark.benchmark
def test_an_evening_at_the_table_holds_its_memory(run_table: Any) -> None:  # noqa: F811
    table = run_table("--camera", "recorded")
    table.wait_for("READY=1")
    stop = threading.Event()
    errors: list[str] = []
    started: list[int] = []
    phones = [
        threading.Thread(target=_phone, args=(table.base, i, stop, errors, started), daemon=True)
        for i in range(PHONES)
    ]
    for phone in phones:
        phone.start()
    samples: list[tuple[float, float, int, int]] = []
    start = time.monotonic()
    while (now := time.monotonic() - start) < SECONDS:
        table.drain()  # the watchdog's datagrams, as systemd reads them
        assert table.proc.poll() is None, table.output()
        samples.append((now, *_sample(table.proc.pid)))
        time.sleep(min(5.0, SECONDS / 20))
    stop.set()
    for phone in phones:
        phone.join(15)
    settled = [s for s in samples if s[0] >= min(WARM_UP, SECONDS / 2)]
    times = [s[0] for s in settled]
    rss = [s[1] for s in settled]
    mean_t, mean_r = sum(times) / len(times), sum(rss) / len(rss)
    slope = sum((t - mean_t) * (r - mean_r) for t, r in zip(times, rss, strict=True)) / max(
        sum((t - mean_t) ** 2 for t in times), 1e-9
    )
    print(
        f"\nsoak: {SECONDS:.0f} s, {PHONES} phones, {len(started)} new games started;"
        f" resident {samples[0][1]:.1f} MB at start, {rss[0]:.1f} after warm-up,"
        f" {rss[-1]:.1f} at the end (max {max(s[1] for s in samples):.1f}),"
        f" trend {slope * 3600:+.1f} MB/hour; threads {min(s[2] for s in samples)}-"
        f"{max(s[2] for s in samples)}, open files {min(s[3] for s in samples)}-"
        f"{max(s[3] for s in samples)}; phone errors {len(errors)}"
    )
    assert errors == []
