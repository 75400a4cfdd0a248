"""The HTTP API of PROTOCOL.md over a real uvicorn server on loopback, with the real store."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from pipcam.store import Store
from pipcam.table import Table
from web.app import create_app

PIN = "2468"


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Served:
    """A table served over HTTP for one test."""

    def __init__(self, table: Table, base: str) -> None:
        self.table = table
        self.base = base
        self.client = httpx.Client(base_url=base, timeout=10)
        self.pinned = httpx.Client(base_url=base, timeout=10, headers={"X-Table-Pin": PIN})


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """A real server with a Kymppitonni game for Ann and Bob."""
    with Store(tmp_path / "pipcam.db") as store:
        table = Table(store)
        table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
        port = free_port()
        config = uvicorn.Config(
            create_app(table, pin=PIN), host="127.0.0.1", port=port, log_level="warning"
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)
        try:
            yield Served(table, f"http://127.0.0.1:{port}")
        finally:
            server.should_exit = True
            thread.join(timeout=10)


def test_state_and_transcript(served: Served) -> None:
    """Anyone may read the state and the transcript."""
    state = served.client.get("/api/state").json()
    assert state["game"] == "kymppitonni"
    assert state["players"] == [{"name": "Ann", "score": 0}, {"name": "Bob", "score": 0}]
    assert state["to_move"] == "Ann"
    served.pinned.post("/api/actions", json={"roll": [1, 1, 5, 2, 3, 4]})
    text = served.client.get("/api/transcript").text
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines == [
        {"game": "kymppitonni", "players": ["Ann", "Bob"], "options": {}},
        {"roll": [1, 1, 2, 3, 4, 5]},
    ]


def test_changing_needs_the_pin(served: Served) -> None:
    """Without the PIN 401; with a wrong one 401 and then a wait; the state is unchanged."""
    r = served.client.post("/api/actions", json={"roll": [1, 1, 5, 2, 3, 4]})
    assert (r.status_code, r.json()) == (401, {"detail": "changing the game needs the table PIN"})
    r = served.client.post("/api/undo", headers={"X-Table-Pin": "0000"})
    assert (r.status_code, r.json()) == (401, {"detail": "wrong table PIN"})
    r = served.client.post("/api/undo", headers={"X-Table-Pin": PIN})
    assert r.status_code == 429  # the wrong guess slows the next one down
    assert served.client.get("/api/state").json()["table"]["seq"] == served.table.view.seq


@pytest.mark.parametrize(
    ("path", "body"),
    [("/api/undo", None), ("/api/redo", None), ("/api/actions", {"roll": [1, 1, 2, 3, 4]})],
)
def test_a_change_from_an_out_of_date_screen_is_refused(
    served: Served, path: str, body: object
) -> None:
    """A change names the version of the game its screen showed (?seen=): made after another
    phone's change (or twice by a double tap), it is refused with 409 and changes nothing."""
    r = served.pinned.post("/api/actions", json={"roll": [1, 1, 5, 2, 3, 4]})
    version = r.json()["table"]["version"]
    assert served.pinned.post(f"/api/actions?seen={version}", json={"keep": [1]}).status_code == 200
    if path == "/api/redo":
        served.pinned.post("/api/undo")
        version = served.client.get("/api/state").json()["table"]["version"]
        served.pinned.post("/api/redo")  # another phone took it again first
    before = served.client.get("/api/state").json()
    r = served.pinned.post(f"{path}?seen={version}", json=body)
    assert r.status_code == 409
    assert r.json()["detail"].startswith("the game has changed since your screen showed it")
    after = served.client.get("/api/state").json()
    assert (after["actions"], after["table"]["version"]) == (
        before["actions"],
        before["table"]["version"],
    )
    # Sent with the version it shows now, the same change goes through; without one, as before.
    current = after["table"]["version"]
    if path != "/api/redo":
        assert served.pinned.post(f"{path}?seen={current}", json=body).status_code == 200


def test_pin_cookie(served: Served) -> None:
    """The PIN entered once is kept in a cookie that then authorises changes."""
    phone = httpx.Client(base_url=served.base, timeout=10)
    assert phone.post("/api/pin", json={"pin": PIN}).status_code == 200
    r = phone.post("/api/actions", json={"roll": [1, 1, 5, 2, 3, 4]})
    assert r.status_code == 200
    assert r.json()["turn"]["dice"] == [1, 1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("path", "body", "status", "detail"),
    [
        (
            "/api/actions",
            {"bank": True},
            409,
            "cannot bank: nothing to bank yet: throw the dice first",
        ),
        ("/api/actions", {"roll": [1, 7]}, 422, "a die shows 1 to 6, not 7 (in [1, 7])"),
        ("/api/actions", {"jump": 1}, 422, "unknown action 'jump'"),
        ("/api/undo", None, 409, "nothing to undo: no action has been taken in this game"),
        ("/api/games", {"game": "yatzy", "players": ["A"]}, 422, "unknown game 'yatzy'"),
        (
            "/api/games",
            {"game": "kymppitonni", "players": ["A", "B"], "options": {"target": "lots"}},
            422,
            "option target takes int, not 'lots'",
        ),
        (
            "/api/games",
            {"game": "sekvence", "players": ["a\u0000b", "c"]},
            422,
            "the name 'a\\x00b' has a control character (a line break, a tab); type it again",
        ),
        (
            "/api/games",
            {"game": "sekvence", "players": ["Ann", " Ann"]},
            422,
            "the name ' Ann' starts or ends with a space; leave it out",
        ),
    ],
)
def test_errors(served: Served, path: str, body: object, status: int, detail: str) -> None:
    """Illegal is 409, malformed 422, each with a detail that says why; nothing changes."""
    before = served.client.get("/api/state").json()
    r = served.pinned.post(path, json=body) if body is not None else served.pinned.post(path)
    assert r.status_code == status
    assert detail in r.json()["detail"]
    after = served.client.get("/api/state").json()
    assert after == before


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "text"),
    [
        ("GET", "/api/catalog", None, 200, "Generał"),
        ("POST", "/api/games", {"game": "general", "players": ["Łucja", "Bob"]}, 200, "Łucja"),
        ("POST", "/api/games", {"game": "general", "players": ["Łucja", "Łucja"]}, 422, "Łucja"),
    ],
)
def test_json_answers_are_ascii_whatever_text_they_carry(
    served: Served, method: str, path: str, body: object, status: int, text: str
) -> None:
    """Every router and refusal answers in escaped ASCII JSON (a lone surrogate in a name can
    be sent too), and the text comes back whole."""
    r = served.pinned.request(method, path, json=body)
    assert r.status_code == status
    assert r.content.isascii()
    assert text in json.dumps(r.json(), ensure_ascii=False)


def test_new_game_undo_redo(served: Served) -> None:
    """A phone starts a game, acts, undoes and redoes through the same engine."""
    r = served.pinned.post("/api/games", json={"game": "sekvence", "players": ["Eva", "Jan"]})
    assert r.status_code == 200
    assert r.json()["game"] == "sekvence"
    served.pinned.post("/api/actions", json={"roll": [1, 2, 3, 5, 5, 6]})
    assert served.pinned.post("/api/undo").json()["players"][0]["score"] == 0
    assert served.pinned.post("/api/redo").json()["players"][0]["score"] == 10


def test_events_arrive_live(served: Served) -> None:
    """A phone listening to /api/events gets the current state, then every change."""
    got: list[dict[str, object]] = []
    ready = threading.Event()

    def listen() -> None:
        with httpx.stream("GET", f"{served.base}/api/events", timeout=10) as r:
            for line in r.iter_lines():
                if line.startswith("data:"):
                    got.append(json.loads(line[5:]))
                    ready.set()
                    if len(got) == 2:
                        return

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    assert ready.wait(10)
    start = time.monotonic()
    served.pinned.post("/api/actions", json={"roll": [1, 1, 5, 2, 3, 4]})
    thread.join(10)
    assert len(got) == 2
    assert time.monotonic() - start < 1.0
    assert got[1]["turn"] == {**got[1]["turn"], "dice": [1, 1, 2, 3, 4, 5]}  # type: ignore[dict-item]


def test_page_is_served(served: Served) -> None:
    """The phone page and its static files come from the Pi itself."""
    page = served.client.get("/")
    assert page.status_code == 200
    assert "/static/app.js" in page.text
    assert served.client.get("/static/app.js").status_code == 200
    # An uptime check (or curl -I) asks with HEAD: the same answer without the page.
    head = served.client.head("/")
    assert (head.status_code, head.content) == (200, b"")
    assert head.headers["content-type"] == page.headers["content-type"]


def test_no_page_needs_the_internet(served: Served) -> None:
    """The Pi has no internet: no CDN-backed docs page, and the page's files are all local."""
    assert served.client.get("/docs").status_code == 404
    assert served.client.get("/openapi.json").status_code == 200
    page = served.client.get("/").text
    assert "http://" not in page
    assert "https://" not in page


@pytest.mark.parametrize(
    ("path", "body", "seen", "code", "params"),
    [
        ("/api/actions", {"bank": True}, False, "nothing_to_bank", {}),
        ("/api/actions", {"roll": [1, 2, 3, 4]}, False, "wrong_dice_count", {"n": 6, "got": 4}),
        ("/api/undo", None, False, "nothing_to_undo", {}),
        ("/api/redo", None, False, "nothing_to_redo", {}),
        ("/api/undo", None, True, "stale", {}),
        ("/api/advice", None, False, "coach_off", {}),
    ],
    ids=["bank", "dice", "undo", "redo", "stale", "coach"],
)
def test_a_refusal_body_has_its_code_and_params(
    served: Served, path: str, body: object, code: str, params: dict[str, object], *, seen: bool
) -> None:
    """A 409 says why in English (``detail``, as before) and as data a phone words itself."""
    query = f"?seen={served.table.version - 1}" if seen else ""
    if path == "/api/advice":
        r = served.client.get(path)
    else:
        r = served.pinned.post(f"{path}{query}", json=body)
    assert r.status_code == 409
    got = r.json()
    assert (got["code"], got["params"]) == (code, params)
    assert isinstance(got["detail"], str)
    assert got["detail"]


def test_a_malformed_action_has_no_code(served: Served) -> None:
    """A refusal the phones have no words for keeps FastAPI's shape alone."""
    r = served.pinned.post("/api/actions", json={"jump": 1})
    assert r.status_code == 422
    assert set(r.json()) == {"detail"}


def test_the_openapi_error_model_names_code_and_params(served: Served) -> None:
    schema = served.client.get("/openapi.json").json()["components"]["schemas"]
    assert {"detail", "code", "params"} <= set(schema["ErrorPublic"]["properties"])
    assert {"problem", "problem_code", "problem_params"} <= set(schema["TablePublic"]["properties"])


def test_camera_notices_are_in_the_state_once_each(served: Served) -> None:
    """What the camera asks of the owner (light keeper, tray follower) is in the state, each
    notice once, none once mended."""

    def notices() -> list[str]:
        return list(served.client.get("/api/state").json()["table"]["camera_notices"])

    assert notices() == []
    served.table.camera_notice("light", "bright")
    served.table.camera_notice("tray", "tray_size")
    served.table.camera_notice("tray", "tray_size")
    assert notices() == ["bright", "tray_size"]
    served.table.camera_notice("light", "")
    assert notices() == ["tray_size"]
