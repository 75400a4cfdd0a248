"""A real table served on loopback for the browser tests, and fake camera readings to feed it."""

from __future__ import annotations

import random
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from pipcam.run import drawn_reading, earlier_photo
from pipcam.store import Store, StoreError
from pipcam.table import Table
from pipcam.teach import DISPUTES, Teacher
from scoring.core import Bank, Keep, Roll, Score, action_to_json
from scoring.registry import game_class
from scoring.transcript import parse_header, start
from tests.pipcam._fakes import FakeDie, FakeReading
from web.app import create_app

PIN = "2468"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE = {"width": 360, "height": 740}
ARTIFACTS = Path(__file__).parent / "artifacts"


def reading(values: Sequence[int | None], *, doubtful: dict[int, str] | None = None) -> FakeReading:
    """A settled reading of these faces; ``doubtful`` marks dice (by index) cocked or uncertain.

    A die's place is set by its face and how many of that face come before it, so dice taken
    out of the roll zone leave the others where they lay."""
    marks = doubtful or {}
    dice = tuple(
        FakeDie(
            value=v,
            confidence=0.41 if i in marks else 0.97,
            status=marks.get(i, "ok"),
            box=(60 * (v or 0), 60 * k + 10, 60 * (v or 0) + 40, 60 * k + 50),
        )
        for i, v in enumerate(values)
        for k in [list(values[:i]).count(v)]
    )
    return FakeReading(dice)


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Served:
    """A table served over HTTP: the table itself (for the camera's side) and a PIN'd client."""

    def __init__(self, table: Table, base: str, photos: Path) -> None:
        self.table = table
        self.base = base
        self.photos = photos  # where the table keeps photos, for its teach sheet
        # The camera's frame of the last reading (its id and the frame), as the camera loop
        # keeps it for GET /api/photo.jpg; None: no camera frame.
        self.seen: tuple[int, Any] | None = None
        self.pinned = httpx.Client(base_url=base, timeout=10, headers={"X-Table-Pin": PIN})

    def post(self, path: str, body: object = None) -> dict[str, Any]:
        """POST with the PIN; the state it returns (any refusal fails the test)."""
        r = self.pinned.post(path, json=body) if body is not None else self.pinned.post(path)
        assert r.status_code == 200, (path, body, r.status_code, r.text)
        result: dict[str, Any] = r.json()
        return result

    def new_game(
        self, game: str, players: list[str], options: dict[str, Any] | None = None
    ) -> None:
        """Start a game through the API, as a phone would."""
        self.post("/api/games", {"game": game, "players": players, "options": options or {}})


@contextmanager
def serve(tmp_path: Path) -> Iterator[Served]:
    """A table with its SQLite store, served by uvicorn on 127.0.0.1 in a thread."""
    with Store(tmp_path / "pipcam.db") as store:
        table = Table(store)
        port = free_port()
        served: Served | None = None

        def photo(reading: int | None) -> tuple[bytes, tuple[int, int]] | None:
            # As the camera loop's photo(): the last frame, or an earlier (kept) throw's.
            seen = None if served is None else served.seen
            if reading is not None:
                return earlier_photo(table, reading, seen, tmp_path / "photos")
            return None if seen is None else drawn_reading(table, *seen)

        teacher = Teacher(
            store,
            tmp_path / "photos",
            in_play=table.reading_in_play,
            disputes=tmp_path / "tune" / DISPUTES,
        )
        config = uvicorn.Config(
            create_app(table, pin=PIN, teacher=teacher, unavailable=(StoreError,), photo=photo),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            timeout_graceful_shutdown=1,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)
        served = Served(table, f"http://127.0.0.1:{port}", tmp_path / "photos")
        try:
            yield served
        finally:
            served.pinned.close()
            server.should_exit = True
            thread.join(timeout=10)


def midgame(game: str, players: list[str], steps: int, *, seed: int = 6) -> list[dict[str, Any]]:
    """A plausible opening of ``steps`` actions: random throws, then the best-looking choice.

    Written or kept, the choice is the one worth most now (as the table's confirm button
    would take), so the sheets fill with real scores rather than zeros.
    """
    rng = random.Random(seed)
    history = start(parse_header({"game": game, "players": players}))
    engine = history.game
    preview = getattr(engine, "preview", None)
    for _ in range(steps):
        state = history.state
        legal = list(engine.legal_actions(state))
        if not legal or engine.outcome(state) is not None:
            break
        if any(isinstance(a, Roll) for a in legal):
            throw = Roll([rng.randint(1, 6) for _ in range(engine.roll_size(state))])
            history.push(throw if throw in legal else next(a for a in legal if isinstance(a, Roll)))
            continue
        scores = [a for a in legal if isinstance(a, Score)]
        if scores and callable(preview):
            best = max(scores, key=lambda a: preview(state, a))
            if preview(state, best) > 0 or not [a for a in legal if isinstance(a, Keep)]:
                history.push(best)
                continue
        banks = [a for a in legal if isinstance(a, Bank)]
        if banks and rng.random() < 0.4:
            history.push(banks[0])
            continue
        keeps = [a for a in legal if isinstance(a, Keep)]
        if keeps and game in ("general", "drapky"):
            history.push(rng.choice(keeps))
            continue
        if keeps:
            history.push(max(keeps, key=lambda a: len(a.dice)))
            continue
        history.push(legal[rng.randrange(len(legal))] if len(legal) > 1 else legal[0])
    assert game_class(game).game_id == game
    return [action_to_json(a) for a in history.actions]
