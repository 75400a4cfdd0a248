"""The HTTP API of PROTOCOL.md on FastAPI, and the page the phones open.

``create_app(table, pin=...)`` takes any object with the ``TableAPI`` methods, so the Pi wiring
and the tests each pass their own. Changing requests need the table PIN (header ``X-Table-Pin``
or the cookie set by ``POST /api/pin``); an illegal action is a 409, a malformed one a 422, each
with a JSON ``detail`` that says why, and the state is then unchanged.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Annotated, Any, Protocol

from fastapi import Body, Depends, FastAPI, HTTPException, Request, Response
from fastapi.responses import FileResponse, PlainTextResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from scoring.errors import IllegalAction, InvalidAction, InvalidOption, UnknownGame

STATIC = Path(__file__).parent / "static"
PIN_COOKIE = "pipcam_pin"


class TableAPI(Protocol):
    """What the web layer needs from the table (pipcam.table.Table)."""

    def state_json(self) -> dict[str, Any]: ...
    def transcript(self) -> str: ...
    def act_json(self, obj: Any, *, source: str) -> dict[str, Any]: ...
    def undo(self, *, source: str) -> dict[str, Any]: ...
    def redo(self, *, source: str) -> dict[str, Any]: ...
    def new_game(self, header_json: Any, *, source: str = ...) -> dict[str, Any]: ...
    def subscribe(self, listener: Callable[[dict[str, Any]], None]) -> Callable[[], None]: ...


class PinIn(BaseModel):
    """The table PIN typed on a phone."""

    pin: str = Field(min_length=1, max_length=32)


class HeaderIn(BaseModel):
    """A transcript header: which game, who plays (seat order), which options."""

    game: str
    players: list[str] = Field(min_length=1, max_length=12)
    options: dict[str, Any] = Field(default_factory=dict)


class PinGuard:
    """Checks the PIN and slows down wrong guesses (per client address)."""

    def __init__(self, pin: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.pin = pin
        self.clock = clock
        self.failures: dict[str, tuple[int, float]] = {}

    def delay_for(self, client: str) -> float:
        """Seconds a client must wait before its next guess counts."""
        count, last = self.failures.get(client, (0, 0.0))
        wait = min(0.5 * 2 ** max(count - 1, 0), 30.0) if count else 0.0
        return max(0.0, last + wait - self.clock())

    def check(self, client: str, given: str | None) -> bool:
        """Whether ``given`` is the PIN; a wrong one is counted against the client."""
        if given is not None and hmac.compare_digest(given.encode(), self.pin.encode()):
            self.failures.pop(client, None)
            return True
        if given is not None:
            count, _ = self.failures.get(client, (0, 0.0))
            self.failures[client] = (count + 1, self.clock())
        return False


def create_app(table: TableAPI, *, pin: str, title: str = "pipcam") -> FastAPI:
    """The FastAPI app for one table."""
    app = FastAPI(title=title, summary="A dice table's live scoreboard and controls.")
    guard = PinGuard(pin)

    def client_of(request: Request) -> str:
        return request.client.host if request.client else "unknown"

    async def require_pin(request: Request) -> None:
        client = client_of(request)
        wait = guard.delay_for(client)
        if wait > 0:
            raise HTTPException(429, detail=f"too many wrong PINs: wait {wait:.0f} s")
        given = request.headers.get("x-table-pin") or request.cookies.get(PIN_COOKIE)
        if given is None:
            raise HTTPException(401, detail="changing the game needs the table PIN")
        if not guard.check(client, given):
            raise HTTPException(401, detail="wrong table PIN")

    pinned = [Depends(require_pin)]

    def run(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return call()
        except IllegalAction as exc:
            raise HTTPException(409, detail=str(exc)) from exc
        except (InvalidAction, InvalidOption, UnknownGame) as exc:
            raise HTTPException(422, detail=str(exc)) from exc

    @app.get("/api/state", tags=["game"])
    def get_state() -> dict[str, Any]:
        """The current game: players, scores, whose turn, the dice last read, what is legal."""
        return table.state_json()

    @app.get("/api/transcript", tags=["game"], response_class=PlainTextResponse)
    def get_transcript() -> PlainTextResponse:
        """The current game as a transcript (JSON lines)."""
        try:
            text = table.transcript()
        except IllegalAction as exc:
            raise HTTPException(404, detail=str(exc)) from exc
        return PlainTextResponse(
            text,
            media_type="application/x-ndjson",
            headers={"Content-Disposition": 'attachment; filename="pipcam-game.jsonl"'},
        )

    @app.get("/api/events", tags=["game"], response_class=EventSourceResponse)
    async def events(request: Request) -> AsyncIterator[ServerSentEvent]:
        """Live updates: one ``state`` event per change, the current state first."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=64)

        def push(state: dict[str, Any]) -> None:
            def put() -> None:
                if queue.full():  # a slow phone gets the newest state, not a backlog
                    queue.get_nowait()
                queue.put_nowait(state)

            loop.call_soon_threadsafe(put)

        unsubscribe = table.subscribe(push)
        try:
            state = table.state_json()
            yield ServerSentEvent(event="state", data=state, id=str(state["table"]["seq"]))
            while not await request.is_disconnected():
                try:
                    state = await asyncio.wait_for(queue.get(), timeout=15)
                except TimeoutError:
                    yield ServerSentEvent(comment="keep-alive")
                    continue
                yield ServerSentEvent(event="state", data=state, id=str(state["table"]["seq"]))
        finally:
            unsubscribe()

    @app.post("/api/pin", tags=["pin"])
    def enter_pin(body: PinIn, request: Request, response: Response) -> dict[str, Any]:
        """Check the table PIN and keep it in a cookie for this phone."""
        client = client_of(request)
        wait = guard.delay_for(client)
        if wait > 0:
            raise HTTPException(429, detail=f"too many wrong PINs: wait {wait:.0f} s")
        if not guard.check(client, body.pin):
            raise HTTPException(401, detail="wrong table PIN")
        response.set_cookie(PIN_COOKIE, body.pin, httponly=True, samesite="strict")
        return {"ok": True}

    @app.post("/api/games", tags=["game"], dependencies=pinned)
    def new_game(header: HeaderIn) -> dict[str, Any]:
        """Start a new game from a transcript header."""
        return run(lambda: table.new_game(header.model_dump(), source="phone"))

    @app.post("/api/actions", tags=["game"], dependencies=pinned)
    def act(action: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
        """Apply one PROTOCOL.md action object, such as {"roll": [1, 5]} or {"bank": true}."""
        return run(lambda: table.act_json(action, source="phone"))

    @app.post("/api/undo", tags=["game"], dependencies=pinned)
    def undo() -> dict[str, Any]:
        """Take back the last action."""
        return run(lambda: table.undo(source="phone"))

    @app.post("/api/redo", tags=["game"], dependencies=pinned)
    def redo() -> dict[str, Any]:
        """Take the last undone action again."""
        return run(lambda: table.redo(source="phone"))

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.state.table = table
    app.state.encode = json.dumps
    return app
