"""The HTTP API of PROTOCOL.md on FastAPI, and the page the phones open.

``create_app(table, pin=...)`` takes any object with the ``TableAPI`` methods, so the Pi wiring
and the tests each pass their own. Changing requests need the table PIN (header ``X-Table-Pin``
or the cookie set by ``POST /api/pin``); an illegal action is a 409, a malformed one a 422, each
with a JSON ``detail`` that says why (and its ``code`` and ``params`` when the phones can word it
in their language), and the state is then unchanged. Every refusal is a 4xx
with ``{"detail": "..."}``, whatever was sent; a change the table cannot keep now (its store on a
full disk) is a 503 with the store's message; an unexpected failure is a 500 with the same shape
and no traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import math
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, TypeVar

from fastapi import (
    APIRouter,
    Body,
    Depends,
    FastAPI,
    HTTPException,
    Query,
    Request,
    Response,
    Security,
)
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse
from fastapi.security import APIKeyCookie, APIKeyHeader
from fastapi.sse import EventSourceResponse, ServerSentEvent
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scoring.errors import (
    IllegalAction,
    InvalidAction,
    InvalidOption,
    Reason,
    RefusalCode,
    ScoringError,
    UnknownGame,
    refusal_json,
)
from scoring.registry import available
from web.schemas import (
    ACTION_SCHEMA,
    AbsentIn,
    AdvicePublic,
    ChoicesPublic,
    CorrectionIn,
    EarlierGamePublic,
    ErrorPublic,
    GamePublic,
    HeaderIn,
    HistoryPublic,
    JSONObject,
    OkPublic,
    PinIn,
    PlaceIn,
    StatePublic,
    StatsPublic,
    StepDicePublic,
    StepDieIn,
    TeachIn,
    TeachPublic,
)
from web.stats import fairness

_T = TypeVar("_T")

__all__ = [
    "PIN_COOKIE",
    "HeaderIn",
    "Malformed",
    "PinGuard",
    "PinIn",
    "TableAPI",
    "TeachAPI",
    "create_app",
]

STATIC = Path(__file__).parent / "static"
SQLITE_INT_MAX = 2**63 - 1  # the largest id SQLite stores: a larger one is no game (422, not 500)
PIN_COOKIE = "pipcam_pin"
MAX_BODY = 64 * 1024
"""The largest request body: a header or an action is a few hundred bytes."""

# Module-level: FastAPI resolves the (postponed) annotations of dependencies in module globals.
PinHeader = Annotated[
    str | None,
    Security(
        APIKeyHeader(
            name="X-Table-Pin", auto_error=False, description="the table PIN, on each change"
        )
    ),
]
PinCookie = Annotated[
    str | None,
    Security(
        APIKeyCookie(
            name=PIN_COOKIE, auto_error=False, description="the table PIN, kept by POST /api/pin"
        )
    ),
]


class QuestionLike(Protocol):
    """One die on the teach sheet (pipcam.teach.Question)."""

    def as_json(self) -> dict[str, Any]: ...


class TeachAPI(Protocol):
    """The teach sheet (pipcam.teach.Teacher): a missing die raises LookupError, a bad value
    ValueError."""

    def questions(self, limit: int = ...) -> tuple[int, Sequence[QuestionLike]]: ...
    def missing(self) -> int: ...
    def crop(self, reading: int, die: int) -> bytes: ...
    def photo(self, reading: int) -> bytes: ...
    def place(
        self, reading: int, x: float, y: float, value: int, *, source: str = ..., limit: int = ...
    ) -> tuple[int, Sequence[QuestionLike]]: ...
    def answer(
        self, reading: int, die: int, value: int | None, *, source: str = ..., limit: int = ...
    ) -> tuple[int, Sequence[QuestionLike]]: ...
    def absent(
        self, reading: int, *, source: str = ..., limit: int = ...
    ) -> tuple[int, Sequence[QuestionLike]]: ...


Seen = Annotated[
    int | None,
    Query(
        description="the table.version of the state the change was chosen on: a change made on"
        " an out-of-date screen (a double tap, another phone first) gets 409"
    ),
]

StepIndex = Annotated[
    int, PathParam(ge=0, le=100_000, description="the step's index, as GET /api/history has it")
]


class TableAPI(Protocol):
    """What the web layer needs from the table (pipcam.table.Table)."""

    def state_json(self) -> dict[str, Any]: ...
    def transcript(self) -> str: ...
    def act_json(self, obj: Any, *, source: str, seen: int | None = ...) -> dict[str, Any]: ...
    def undo(self, *, source: str, seen: int | None = ...) -> dict[str, Any]: ...
    def redo(self, *, source: str, seen: int | None = ...) -> dict[str, Any]: ...
    def new_game(self, header_json: Any, *, source: str = ...) -> dict[str, Any]: ...
    def subscribe(self, listener: Callable[[dict[str, Any]], None]) -> Callable[[], None]: ...
    def history_json(self) -> dict[str, Any]: ...
    def earlier_games(self) -> list[dict[str, Any]]: ...
    def earlier_transcript(self, game_id: int) -> str: ...
    def score_series(self) -> dict[str, Any]: ...
    def face_counts(self) -> dict[int, int]: ...
    def correct(self, die: int, value: int, *, source: str = ...) -> dict[str, Any]: ...
    def amend_json(
        self, index: int, obj: Any, *, source: str, seen: int | None = ...
    ) -> dict[str, Any]: ...
    def choices(self, index: int) -> dict[str, Any]: ...
    def step_dice(self, index: int) -> dict[str, Any]: ...
    def amend_die(
        self, index: int, die: int, value: int, *, source: str, seen: int | None = ...
    ) -> dict[str, Any]: ...
    def advice(self, *, seen: int | None = ...) -> dict[str, Any]: ...


class PinGuard:
    """Checks the PIN and slows down wrong guesses, per client address.

    Each wrong guess doubles the client's wait, from half a second up to ``max_wait``: a PIN
    cannot be guessed quickly, while the table's owner, typing from the same phone, never waits
    longer than that, and other phones not at all. Failures are forgotten after ``forget``
    quiet seconds, and at most ``max_clients`` addresses are remembered.
    """

    def __init__(
        self,
        pin: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_wait: float = 30.0,
        forget: float = 600.0,
        max_clients: int = 1024,
    ) -> None:
        self.pin = pin
        self.clock = clock
        self.max_wait = max_wait
        self.forget = forget
        self.max_clients = max_clients
        self.failures: dict[str, tuple[int, float]] = {}
        self._lock = threading.Lock()

    def _wait(self, count: int) -> float:
        # The count is capped so that 2 ** count never overflows a float.
        return min(0.5 * 2.0 ** min(max(count - 1, 0), 16), self.max_wait) if count else 0.0

    def delay_for(self, client: str) -> float:
        """Seconds a client must wait before its next guess counts."""
        with self._lock:
            count, last = self.failures.get(client, (0, 0.0))
            return max(0.0, last + self._wait(count) - self.clock())

    def check(self, client: str, given: str | None) -> bool:
        """Whether ``given`` is the PIN; a wrong one is counted against the client."""
        with self._lock:
            return self._check(client, given)

    def attempt(self, client: str, given: str) -> Literal["ok", "wrong"] | float:
        """Check a guess unless the client must still wait: "ok", "wrong" or the seconds left."""
        with self._lock:
            count, last = self.failures.get(client, (0, 0.0))
            wait = last + self._wait(count) - self.clock()
            if wait > 0:
                return wait
            return "ok" if self._check(client, given) else "wrong"

    def _check(self, client: str, given: str | None) -> bool:
        if given is not None and hmac.compare_digest(
            given.encode("utf-8", "surrogatepass"), self.pin.encode("utf-8", "surrogatepass")
        ):
            self.failures.pop(client, None)
            return True
        if given is not None:
            now = self.clock()
            count, last = self.failures.get(client, (0, 0.0))
            if now - last > self.forget:
                count = 0
            self.failures[client] = (min(count + 1, 64), now)
            self._prune(now)
        return False

    def _prune(self, now: float) -> None:
        if len(self.failures) <= self.max_clients:
            return
        for client, (_, last) in list(self.failures.items()):
            if now - last > self.forget:
                del self.failures[client]
        while len(self.failures) > self.max_clients:
            oldest = min(self.failures, key=lambda c: self.failures[c][1])
            del self.failures[oldest]


class Refused(Exception):
    """An engine's or the table's refusal, answered ``status`` with its code and params."""

    def __init__(self, status: int, error: ScoringError) -> None:
        super().__init__(str(error))
        self.status = status
        self.error = error


class SafeJSONResponse(JSONResponse):
    """JSON in ASCII: any text the engines echo back (a name, a category) can be sent."""

    def render(self, content: Any) -> bytes:
        """The body: compact JSON with every non-ASCII character escaped."""
        return json.dumps(
            content, ensure_ascii=True, allow_nan=False, separators=(",", ":")
        ).encode("ascii")


class BodyLimit:
    """Refuse a request body larger than ``limit`` bytes with a JSON 413, before any route.

    The body is read here (it is small) and handed on whole; a phone never sends more.
    """

    def __init__(self, app: ASGIApp, *, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read the body up to the limit, then run the app on it."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = SafeJSONResponse(
            {"detail": f"the request body is larger than {self.limit} bytes"}, status_code=413
        )
        declared = Headers(scope=scope).get("content-length", "0")
        if declared.isdigit() and int(declared) > self.limit:
            await too_large(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away before it had sent its request
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await too_large(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        problem = _body_problem(body)
        if problem is not None:
            await SafeJSONResponse({"detail": problem}, status_code=422)(scope, receive, send)
            return
        given = False

        async def replay() -> Message:
            nonlocal given
            if given:
                return await receive()  # e.g. the disconnect an event stream waits for
            given = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def _body_problem(body: bytes) -> str | None:
    """Why a body cannot be read as JSON text, where FastAPI would only say 400 "There was an
    error parsing the body"; None for an empty body, JSON, or JSON with a syntax error (which
    FastAPI's 422 places itself)."""
    if not body:
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return (
            f"the request body is not UTF-8 text (byte 0x{body[exc.start]:02x} at offset"
            f" {exc.start}); send JSON in UTF-8"
        )
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return None
    except ValueError as exc:  # a number of thousands of digits: Python's own limit
        return f"the request body cannot be read as JSON: {exc}"
    except RecursionError:
        return "the request body nests lists or objects too deep to read; no action needs that"
    return None


BODY_NOT_OBJECT = frozenset({"dict_type", "model_attributes_type"})
"""Pydantic's error types for a body that is not a JSON object at all."""


class Malformed(RefusalCode):
    """A request FastAPI could not take (422), as the phones word it: its first problem, the
    ``field`` named as the request names it (``players.0``: the first player's name)."""

    NOT_JSON = "not_json"
    """The body is not valid JSON."""
    NOT_OBJECT = "not_object"
    """The body is no JSON object (a list, a string, null, or not sent as JSON)."""
    FIELD_MISSING = "field_missing"
    """``field`` is not there."""
    FIELD_EMPTY = "field_empty"
    """``field`` (a text or a list) is empty."""
    FIELD_TOO_LONG = "field_too_long"
    """The text ``field`` has more than ``n`` characters."""
    FIELD_TOO_SHORT = "field_too_short"
    """The text ``field`` has fewer than ``n`` characters."""
    FIELD_TOO_MANY = "field_too_many_items"
    """The list ``field`` has more than ``n`` items."""
    FIELD_TOO_FEW = "field_too_few_items"
    """The list ``field`` has fewer than ``n`` items."""
    FIELD_ABOVE = "field_above"
    """The number ``field`` is above ``most``."""
    FIELD_BELOW = "field_below"
    """The number ``field`` is below ``least``."""
    FIELD_NOT_WHOLE = "field_not_whole"
    """``field`` is not a whole number."""
    FIELD_NOT_NUMBER = "field_not_number"
    """``field`` is not a number."""
    FIELD_INVALID = "field_invalid"
    """``field`` is not valid (another type, text that is not valid Unicode)."""


_WHERE = frozenset({"body", "query", "path", "header", "cookie"})
_WHOLE = frozenset({"int_type", "int_parsing", "int_from_float", "int_parsing_size"})
_NUMBER = frozenset({"float_type", "float_parsing", "finite_number"})


def _code_of(error: Any) -> tuple[Malformed, dict[str, Any]]:
    """The code and params of one of pydantic's problems (its type and limits)."""
    kind = error.get("type")
    ctx = error.get("ctx") or {}
    field = ".".join(str(p) for p in error.get("loc", ()) if p not in _WHERE)
    if kind == "json_invalid":
        return Malformed.NOT_JSON, {}
    if not field and kind in BODY_NOT_OBJECT:
        return Malformed.NOT_OBJECT, {}
    named = {"field": field}
    if kind == "missing":
        return Malformed.FIELD_MISSING, named
    if kind in ("string_too_short", "too_short"):
        least = int(ctx.get("min_length", 1))
        if least <= 1:
            return Malformed.FIELD_EMPTY, named
        short = Malformed.FIELD_TOO_SHORT if kind == "string_too_short" else Malformed.FIELD_TOO_FEW
        return short, {**named, "n": least}
    if kind in ("string_too_long", "too_long"):
        long = Malformed.FIELD_TOO_LONG if kind == "string_too_long" else Malformed.FIELD_TOO_MANY
        return long, {**named, "n": int(ctx.get("max_length", 0))}
    if kind == "less_than_equal":
        return Malformed.FIELD_ABOVE, {**named, "most": ctx.get("le")}
    if kind == "greater_than_equal":
        return Malformed.FIELD_BELOW, {**named, "least": ctx.get("ge")}
    if kind in _WHOLE:
        return Malformed.FIELD_NOT_WHOLE, named
    if kind in _NUMBER:
        return Malformed.FIELD_NOT_NUMBER, named
    return Malformed.FIELD_INVALID, named


def validation_text(exc: RequestValidationError) -> str:
    """Pydantic's list of problems as one sentence for ``detail``.

    It is a :class:`Reason` with the code and params of the first problem, which the phones
    word in their language (one thing to put right at a time)."""
    parts = []
    errors = exc.errors()
    for error in errors:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        if error.get("type") == "json_invalid":
            reason = error.get("ctx", {}).get("error", "invalid JSON")
            parts.append(f"the body is not valid JSON: {reason}")
        elif not where and error.get("type") in BODY_NOT_OBJECT:
            # A list, a string, null or a body not sent as JSON: say what the route takes.
            parts.append("the body must be a JSON object, sent as application/json")
        else:
            message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
            parts.append(f"{where}: {message}" if where else message)
    text = "; ".join(parts) or "the request is not valid"
    if not errors:
        return text
    code, params = _code_of(errors[0])
    return Reason(text, code, _plain(params))


def _plain(params: dict[str, Any]) -> dict[str, Any]:
    """Params as JSON can carry them: a limit pydantic gives as a float is a whole number."""
    return {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in params.items()}


def _wait_text(seconds: float) -> str:
    """The 429 answer; seconds rounded up, so a wait of 0.3 s is never told as "wait 0 s"."""
    return f"too many wrong PINs: wait {math.ceil(seconds)} s"


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorPublic, "description": text}
    for code, text in [
        (401, "no or wrong table PIN"),
        (409, "not legal now"),
        (422, "malformed"),
        (429, "too many wrong PINs: wait"),
        (503, "the table cannot keep the change now (a full disk): nothing changed"),
    ]
}
ERRORS_404: dict[str, Any] = {
    "model": ErrorPublic,
    "description": "no such die on the teach sheet (answered, or its photo deleted)",
}


PhotoOf = Callable[[int | None], tuple[bytes, tuple[int, int]] | None]
"""A throw's frame with its dice drawn: JPEG bytes and the frame's size, None when none."""


def create_app(
    table: TableAPI,
    *,
    pin: str,
    title: str = "pipcam",
    teacher: TeachAPI | None = None,
    unavailable: tuple[type[Exception], ...] = (),
    photo: PhotoOf | None = None,
) -> FastAPI:
    """The FastAPI app for one table; ``teacher`` serves the teach sheet when photos are kept,
    ``photo`` the last throw's frame with its dice drawn (JPEG, and the frame's size) when a
    camera reads them, or (given a reading id) an earlier throw's, None when there is none.

    ``unavailable``: the errors that mean the table cannot keep a change now (its store's
    ``StoreError``: a full disk), answered 503 with their message, which says what to do.
    ``app.state.end_streams()`` ends the open event streams, for a server that stops.
    """
    app = FastAPI(
        title=title,
        summary="A dice table's live scoreboard and controls.",
        default_response_class=SafeJSONResponse,
        # The interactive docs load their scripts from a CDN, and the Pi has no internet;
        # the schema itself stays at /openapi.json.
        docs_url=None,
        redoc_url=None,
    )
    app.add_middleware(BodyLimit, limit=MAX_BODY)
    _answer_errors(app, unavailable)
    pins = _Pins(pin)
    streams = _Streams()
    app.state.end_streams = streams.end
    # Their JSON answers are the app's default_response_class, SafeJSONResponse.
    app.include_router(_reading_routes(table, streams, photo, pins.required))
    app.include_router(_changing_routes(table, pins))
    app.include_router(_teach_routes(teacher, pins.required))

    # HEAD too: what uptime checks and `curl -I` ask.
    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.state.table = table
    return app


_STATE_ROUTE: dict[str, Any] = {
    "response_model": StatePublic,
    "response_model_exclude_unset": True,
    "responses": ERRORS,
}
"""What every route that answers with the game's state declares."""


def _answer_errors(app: FastAPI, unavailable: tuple[type[Exception], ...]) -> None:
    """Every failure as ``{"detail": ...}``: malformed 422, refused 409/422, ``unavailable``
    503, anything else 500 without its traceback."""

    @app.exception_handler(RequestValidationError)
    async def malformed(_request: Request, exc: RequestValidationError) -> JSONResponse:
        # The English detail for API clients, with the code and params the phones word.
        return SafeJSONResponse(refusal_json(validation_text(exc)), status_code=422)

    @app.exception_handler(Refused)
    async def refused(_request: Request, exc: Refused) -> JSONResponse:
        # FastAPI's {"detail": "..."}, with the code and params a phone words the refusal by.
        return SafeJSONResponse(refusal_json(exc.error), status_code=exc.status)

    async def cannot_keep(_request: Request, exc: Exception) -> JSONResponse:
        # A failure the phones word (a full disk) is made from a Reason: its code goes along.
        said = exc.args[0] if exc.args and isinstance(exc.args[0], Reason) else str(exc)
        return SafeJSONResponse(refusal_json(said), status_code=503)

    for error in unavailable:
        app.add_exception_handler(error, cannot_keep)

    @app.exception_handler(Exception)
    async def failed(_request: Request, exc: Exception) -> JSONResponse:
        # The traceback goes to the server's log (uvicorn prints it), never to a phone.
        return SafeJSONResponse(
            {"detail": f"the table failed to answer ({type(exc).__name__}); see its log"},
            status_code=500,
        )


def _run(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``call``'s answer; an engine's refusal as a 409 (not legal now) or a 422 (malformed)."""
    try:
        return call()
    except IllegalAction as exc:
        raise Refused(409, exc) from exc
    except (InvalidAction, InvalidOption, UnknownGame) as exc:
        raise Refused(422, exc) from exc


def _client_of(request: Request) -> str:
    return request.client.host if request.client else "unknown"


class _Pins:
    """The table PIN on requests: ``required`` as a route's dependencies, 401 without it or
    with a wrong one, 429 while a client must wait (``PinGuard``)."""

    def __init__(self, pin: str) -> None:
        self.guard = PinGuard(pin)

        async def require_pin(request: Request, header: PinHeader, cookie: PinCookie) -> None:
            given = header or cookie
            if given is not None:
                self.guess(request, given)
                return
            wait = self.guard.delay_for(_client_of(request))
            if wait > 0:
                raise HTTPException(429, detail=_wait_text(wait))
            raise HTTPException(401, detail="changing the game needs the table PIN")

        self.required = [Depends(require_pin)]

    def guess(self, request: Request, given: str) -> None:
        """Check ``given``: 401 when wrong, 429 when the client must still wait."""
        result = self.guard.attempt(_client_of(request), given)
        if result == "wrong":
            raise HTTPException(401, detail="wrong table PIN")
        if not isinstance(result, str):
            raise HTTPException(429, detail=_wait_text(result))


class _Streams:
    """The open event streams. A server that stops ends them (``end``), else it would wait
    for every phone to hang up before it could stop."""

    def __init__(self) -> None:
        self.queues: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self.ending = False

    def end(self) -> None:
        """End every event stream (on the server's event loop); new ones end at once."""
        self.ending = True
        for queue in self.queues:
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(None)


def _transcript_file(text: str, name: str) -> PlainTextResponse:
    return PlainTextResponse(
        text,
        media_type="application/x-ndjson",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


def _reading_routes(
    table: TableAPI, streams: _Streams, photo: PhotoOf | None, pinned: list[Any]
) -> APIRouter:
    """What anyone at the table may read: the game, its history and the games before, the
    live events, the catalog, the statistics, the coach's advice; the photo needs the PIN."""
    router = APIRouter()
    games: list[dict[str, Any]] = []

    @router.get("/api/state", tags=["game"], **_STATE_ROUTE)
    def get_state() -> dict[str, Any]:
        """The current game: players, scores, whose turn, the dice last read, what is legal."""
        return table.state_json()

    @router.get("/api/transcript", tags=["game"], response_class=PlainTextResponse)
    def get_transcript() -> PlainTextResponse:
        """The current game as a transcript (JSON lines)."""
        try:
            text = table.transcript()
        except IllegalAction as exc:
            raise HTTPException(404, detail=str(exc)) from exc
        return _transcript_file(text, "pipcam-game.jsonl")

    @router.get("/api/games", tags=["game"], response_model=list[EarlierGamePublic])
    def earlier_games() -> list[dict[str, Any]]:
        """The games played here before the current one, newest first (the last 20): a game
        that ended before a restart, or last week's, with its scores and winners."""
        return table.earlier_games()

    @router.get(
        "/api/games/{game_id}/transcript",
        tags=["game"],
        response_class=PlainTextResponse,
        responses={404: {"model": ErrorPublic}},
    )
    def get_earlier_transcript(
        game_id: Annotated[int, PathParam(ge=1, le=SQLITE_INT_MAX)],
    ) -> PlainTextResponse:
        """An earlier game (an id from ``GET /api/games``) as a transcript (JSON lines)."""
        try:
            text = table.earlier_transcript(game_id)
        except LookupError as exc:  # no such game, or one these rules cannot replay
            raise HTTPException(404, detail=str(exc)) from exc
        return _transcript_file(text, f"pipcam-game-{game_id}.jsonl")

    @router.get("/api/events", tags=["game"], response_class=EventSourceResponse)
    async def events(request: Request) -> AsyncIterator[ServerSentEvent]:
        """Live updates: one ``state`` event per change, the current state first."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(maxsize=64)

        def push(state: dict[str, Any]) -> None:
            def put() -> None:
                if queue.full():  # a slow phone gets the newest state, not a backlog
                    queue.get_nowait()
                queue.put_nowait(state)

            loop.call_soon_threadsafe(put)

        unsubscribe = table.subscribe(push)
        streams.queues.add(queue)
        try:
            state = table.state_json()
            yield ServerSentEvent(event="state", data=state, id=str(state["table"]["seq"]))
            while not streams.ending and not await request.is_disconnected():
                try:
                    update = await asyncio.wait_for(queue.get(), timeout=15)
                except TimeoutError:
                    yield ServerSentEvent(comment="keep-alive")
                    continue
                if update is None:
                    break  # the server is stopping: the phones show the table offline
                yield ServerSentEvent(event="state", data=update, id=str(update["table"]["seq"]))
        finally:
            streams.queues.discard(queue)
            unsubscribe()

    @router.get("/api/catalog", tags=["games"], response_model=list[GamePublic])
    def catalog() -> list[dict[str, Any]]:
        """Every game: its native name, aliases, players, options (with kinds) and presets."""
        if not games:
            games.extend(GamePublic.of(cls).model_dump() for cls in available())
        return games

    @router.get("/api/history", tags=["game"], response_model=HistoryPublic)
    def history() -> dict[str, Any]:
        """The actions of the current game in effect, oldest first, with who took each."""
        return table.history_json()

    @router.get(
        "/api/history/{index}/choices",
        tags=["game"],
        response_model=ChoicesPublic,
        responses=ERRORS,
    )
    def choices(
        index: StepIndex,
    ) -> dict[str, Any]:
        """What else an earlier step could have been (another category for a figure written,
        another set-aside), each with the points it writes, for fixing it by a tap with
        ``PUT /api/history/{index}``. Only choices every later step still follows."""
        return _run(lambda: table.choices(index))

    @router.get(
        "/api/photo.jpg",
        tags=["game"],
        dependencies=pinned,
        response_class=Response,
        responses={
            200: {"content": {"image/jpeg": {}}},
            404: {"model": ErrorPublic, "description": "no throw read by a camera to show"},
        },
    )
    def last_photo(
        reading: Annotated[
            int | None,
            Query(
                ge=1,
                description="an earlier throw's reading, as GET /api/history gives it;"
                " without it, the last throw",
            ),
        ] = None,
    ) -> Response:
        """The camera's frame of the last throw read, with each die boxed, numbered (as the
        board numbers them, to correct one) and its face, and the roll zone outlined. Needs the
        PIN: it is a picture of the table. ``X-Frame-Size`` (WxH) is the frame's size, which
        the dice's boxes in the state are in (the picture may be smaller). With ``reading``, an
        earlier throw's frame (the last one's, or one the table keeps: ``keep_photos``), its
        dice as the players left them."""
        drawn = photo(reading) if photo is not None else None
        if drawn is None and reading is not None:
            raise HTTPException(
                404,
                detail=f"no photo of reading {reading}: only the last throw's is at hand unless"
                " the table keeps photos (keep_photos = true in its configuration)",
            )
        if drawn is None:
            raise HTTPException(
                404,
                detail="no photo to show: the camera has read no throw yet (or is not on)",
            )
        data, (width, height) = drawn
        return Response(
            data,
            media_type="image/jpeg",
            headers={"Cache-Control": "no-store", "X-Frame-Size": f"{width}x{height}"},
        )

    @router.get("/api/stats", tags=["game"], response_model=StatsPublic)
    def stats() -> dict[str, Any]:
        """Scores after each action of this game; the fairness of every die thrown here."""
        return {"series": table.score_series(), **fairness(table.face_counts())}

    @router.get(
        "/api/history/{index}/dice",
        tags=["game"],
        response_model=StepDicePublic,
        responses=ERRORS,
    )
    def step_dice(
        index: StepIndex,
    ) -> dict[str, Any]:
        """The dice of the camera's reading that made an earlier step, as the players left
        them: which die of its photo is which, to fix one by a tap
        (``PUT /api/history/{index}/die``). 422 for a step the camera did not read."""
        return _run(lambda: table.step_dice(index))

    @router.get("/api/advice", tags=["coach"], response_model=AdvicePublic, responses=ERRORS)
    def advice(seen: Seen = None) -> dict[str, Any]:
        """The coach's advice for the player to move: every choice, best first, with its value.

        Only with the coach on (``pipcam run --coach``; 409 otherwise) and for the games it
        knows (422). With ``?seen=VERSION`` it is refused (409) once the game has moved on.
        The first advice of a game may take seconds (a minute for Generał on a Pi, once).
        """
        return _run(lambda: table.advice(seen=seen))

    return router


def _changing_routes(table: TableAPI, pins: _Pins) -> APIRouter:
    """What changes the game, each with the table PIN (and the PIN itself, kept in a cookie)."""
    router = APIRouter()
    pinned = pins.required

    @router.post("/api/pin", tags=["pin"], response_model=OkPublic, responses=ERRORS)
    def enter_pin(body: PinIn, request: Request, response: Response) -> dict[str, Any]:
        """Check the table PIN and keep it in a cookie for this phone."""
        pins.guess(request, body.pin)
        response.set_cookie(PIN_COOKIE, body.pin, httponly=True, samesite="strict")
        return {"ok": True}

    @router.post("/api/games", tags=["game"], dependencies=pinned, **_STATE_ROUTE)
    def new_game(header: HeaderIn) -> dict[str, Any]:
        """Start a new game from a transcript header."""
        return _run(lambda: table.new_game(header.model_dump(), source="phone"))

    @router.post(
        "/api/actions",
        tags=["game"],
        dependencies=pinned,
        openapi_extra={"requestBody": {"content": {"application/json": {"schema": ACTION_SCHEMA}}}},
        **_STATE_ROUTE,
    )
    def act(action: Annotated[JSONObject, Body()], seen: Seen = None) -> dict[str, Any]:
        """Apply one PROTOCOL.md action object, such as {"roll": [1, 5]} or {"bank": true}."""
        return _run(lambda: table.act_json(action, source="phone", seen=seen))

    @router.put(
        "/api/history/{index}",
        tags=["game"],
        dependencies=pinned,
        openapi_extra={"requestBody": {"content": {"application/json": {"schema": ACTION_SCHEMA}}}},
        **_STATE_ROUTE,
    )
    def amend(
        index: StepIndex,
        action: Annotated[JSONObject, Body()],
        seen: Seen = None,
    ) -> dict[str, Any]:
        """Fix an earlier step (a throw misread or typed wrong, seen turns later): this action in
        its place, and every later step taken again. 409, with nothing changed, when a later
        step no longer follows the rules (which, and why) or the game moved on (``seen``)."""
        return _run(lambda: table.amend_json(index, action, source="phone", seen=seen))

    @router.put("/api/history/{index}/die", tags=["game"], dependencies=pinned, **_STATE_ROUTE)
    def amend_die(
        index: StepIndex,
        body: StepDieIn,
        seen: Seen = None,
    ) -> dict[str, Any]:
        """Fix an earlier throw by one die of its photo: that die showed this face. The throw
        is taken with it, and every later step again, as ``PUT /api/history/{index}``; the
        photo is labelled at that die. 409, with nothing changed, as a fix is refused."""
        return _run(lambda: table.amend_die(index, body.die, body.value, source="phone", seen=seen))

    @router.post("/api/undo", tags=["game"], dependencies=pinned, **_STATE_ROUTE)
    def undo(seen: Seen = None) -> dict[str, Any]:
        """Take back the last action."""
        return _run(lambda: table.undo(source="phone", seen=seen))

    @router.post("/api/redo", tags=["game"], dependencies=pinned, **_STATE_ROUTE)
    def redo(seen: Seen = None) -> dict[str, Any]:
        """Take the last undone action again."""
        return _run(lambda: table.redo(source="phone", seen=seen))

    @router.post("/api/correct", tags=["game"], dependencies=pinned, **_STATE_ROUTE)
    def correct(body: CorrectionIn) -> dict[str, Any]:
        """Correct a misread die of the last settled reading; it then counts as read so.

        A roll already taken from the misread dice is undone and the corrected roll applied
        (both stored); that needs it to be the last action (409 otherwise).
        """
        return _run(lambda: table.correct(body.die, body.value, source="phone"))

    return router


def _jpeg(data: bytes) -> Response:
    return Response(data, media_type="image/jpeg", headers={"Cache-Control": "no-store"})


def _teach_routes(teacher: TeachAPI | None, pinned: list[Any]) -> APIRouter:
    """The teach sheet: the dice the camera was unsure of, their pictures and the answers
    (404 when the table keeps no photos)."""
    router = APIRouter()

    def sheet(count: int, questions: Sequence[QuestionLike]) -> dict[str, Any]:
        missing = teacher.missing() if teacher is not None else 0
        questions_json = [q.as_json() for q in questions]
        return {"keeping": True, "count": count, "missing": missing, "questions": questions_json}

    def taught(call: Callable[[TeachAPI], _T]) -> _T:
        """``call`` on the teach sheet: 404 when the table keeps no photos or the die or photo is
        not on the sheet, 422 for an answer it refuses."""
        if teacher is None:
            raise HTTPException(404, detail="this table keeps no photos")
        try:
            return call(teacher)
        except LookupError as exc:
            raise HTTPException(404, detail=str(exc)) from exc
        except ValueError as exc:
            raise HTTPException(422, detail=str(exc)) from exc

    @router.get("/api/teach", tags=["teach"], response_model=TeachPublic)
    def teach_sheet(limit: Annotated[int, Query(ge=1, le=200)] = 20) -> dict[str, Any]:
        """The dice of kept photos that the camera read unsurely, or that the last tuning run
        read otherwise (``disputed``), and nobody has answered yet: disputed ones first, then
        unread ones, then the least sure."""
        if teacher is None:
            return {"keeping": False, "count": 0, "missing": 0, "questions": []}
        return sheet(*teacher.questions(limit))

    @router.get(
        "/api/teach/{reading}/photo.jpg",
        tags=["teach"],
        dependencies=pinned,
        response_class=Response,
        responses={200: {"content": {"image/jpeg": {}}}, 404: ERRORS_404, **ERRORS},
    )
    def teach_photo(reading: int) -> Response:
        """The whole photo of a reading in which the camera missed dice, its known dice outlined
        (the table's own photo: PIN)."""
        return _jpeg(taught(lambda t: t.photo(reading)))

    @router.post(
        "/api/teach/place",
        tags=["teach"],
        dependencies=pinned,
        response_model=TeachPublic,
        responses={404: ERRORS_404, **ERRORS},
    )
    def teach_place(body: PlaceIn) -> dict[str, Any]:
        """Place a die the camera missed where it was tapped on its photo, with its value; the
        sheet as it is then. The die is boxed where the locator sees one under the tap (422 when
        none can be); it labels the photo for tuning and changes no game."""
        return sheet(
            *taught(lambda t: t.place(body.reading, body.x, body.y, body.value, source="phone"))
        )

    @router.post(
        "/api/teach/absent",
        tags=["teach"],
        dependencies=pinned,
        response_model=TeachPublic,
        responses={404: ERRORS_404, **ERRORS},
    )
    def teach_absent(body: AbsentIn) -> dict[str, Any]:
        """Say one of the dice the camera missed in a photo is not in it (off the tray, out of
        the camera's view); the sheet as it is then. The photo then lacks one label less; no
        game changes."""
        return sheet(*taught(lambda t: t.absent(body.reading, source="phone")))

    @router.get(
        "/api/teach/{reading}/{die}.jpg",
        tags=["teach"],
        dependencies=pinned,
        response_class=Response,
        responses={200: {"content": {"image/jpeg": {}}}, 404: ERRORS_404, **ERRORS},
    )
    def teach_picture(reading: int, die: int) -> Response:
        """The die, outlined, with some of the tray around it (the table's own photo: PIN)."""
        return _jpeg(taught(lambda t: t.crop(reading, die)))

    @router.post(
        "/api/teach",
        tags=["teach"],
        dependencies=pinned,
        response_model=TeachPublic,
        responses={404: ERRORS_404, **ERRORS},
    )
    def teach(body: TeachIn) -> dict[str, Any]:
        """Answer what a die shows (0: no die there; null: the picture does not tell, which
        takes the die off the sheet and teaches nothing of it); the sheet as it is then. It
        labels the photo for tuning and changes no game."""
        return sheet(
            *taught(lambda t: t.answer(body.reading, body.die, body.value, source="phone"))
        )

    return router
