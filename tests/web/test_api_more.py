"""The routes of issue 6 (catalog, history, stats, correct), the PIN guard and the error shapes.

Every test talks HTTP to a real uvicorn server on loopback, with the real table and store.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from pipcam.store import Store
from pipcam.table import Table
from scoring.core import Roll
from scoring.registry import available
from tests.pipcam._fakes import FakeDie, FakeReading
from tests.pipcam.test_table_corrections import reading
from tests.web.test_api import PIN, Served, free_port
from web.app import PinGuard, TableAPI, TeachAPI, create_app


@contextmanager
def serving(
    table: TableAPI,
    teacher: TeachAPI | None = None,
    unavailable: tuple[type[Exception], ...] = (),
) -> Iterator[str]:
    """Serve a table's app on a free loopback port for the block; yields the base URL."""
    port = free_port()
    config = uvicorn.Config(
        create_app(table, pin=PIN, teacher=teacher, unavailable=unavailable),
        host="127.0.0.1",
        port=port,
        log_level="critical",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A real SQLite store in a temporary folder."""
    with Store(tmp_path / "pipcam.db") as s:
        yield s


@pytest.fixture
def served(store: Store) -> Iterator[Served]:
    """A real server with a Kymppitonni game for Ann and Bob."""
    table = Table(store)
    table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    with serving(table) as base:
        yield Served(table, base)


# -- catalog ------------------------------------------------------------------------------------


def test_catalog_lists_every_game_with_its_options(served: Served) -> None:
    """Native names, player counts, option kinds and choices, presets."""
    r = served.client.get("/api/catalog")
    assert r.status_code == 200
    games = {g["id"]: g for g in r.json()}
    assert list(games) == [cls.game_id for cls in available()]
    assert games["general"]["name"] == "Generał"
    assert games["thousand"]["name"] == "Тысяча"
    assert (games["thousand"]["min_players"], games["thousand"]["max_players"]) == (2, 12)
    assert games["kymppitonni"]["presets"] == {
        "niemo": {"straight_value": 2000, "first_roll_reset": True}
    }
    general = {o["name"]: o for o in games["general"]["options"]}
    assert (general["columns"]["kind"], general["columns"]["choices"]) == ("choice", [1, 3])
    assert (general["upper_bonus"]["kind"], general["upper_bonus"]["choices"]) == (
        "int_or_off",
        None,
    )
    assert general["four_kind_exact"]["kind"] == "bool"
    assert general["first_roll_multiplier"]["kind"] == "int"
    thousand = {o["name"]: o for o in games["thousand"]["options"]}
    assert thousand["pits"]["kind"] == "str"
    assert all(o["doc"] for g in games.values() for o in g["options"])


def test_every_catalog_default_is_accepted_back(served: Served) -> None:
    """Each game starts through the API with every option set to the default the catalog shows."""
    for game in served.client.get("/api/catalog").json():
        options = {o["name"]: o["default"] for o in game["options"]}
        players = [f"P{i}" for i in range(game["min_players"])]
        r = served.pinned.post(
            "/api/games", json={"game": game["id"], "players": players, "options": options}
        )
        assert r.status_code == 200, (game["id"], r.json())
        assert r.json()["game"] == game["id"]


# -- history and stats --------------------------------------------------------------------------


def test_history_lists_the_actions_in_effect(served: Served) -> None:
    """Who took each action, its object and words; undone ones drop out and can be redone."""
    for action in ({"roll": [1, 1, 5, 2, 3, 4]}, {"keep": [1, 1, 5]}, {"bank": True}):
        assert served.pinned.post("/api/actions", json=action).status_code == 200
    served.pinned.post("/api/undo")
    r = served.client.get("/api/history")
    assert r.status_code == 200
    assert r.json() == {
        "entries": [
            {
                "index": 0,
                "player": "Ann",
                "action": {"roll": [1, 1, 2, 3, 4, 5]},
                "text": "roll 1 1 2 3 4 5",
                "reading": None,  # typed: no camera reading made it
            },
            {
                "index": 1,
                "player": "Ann",
                "action": {"keep": [1, 1, 5]},
                "text": "keep 1 1 5",
                "reading": None,
            },
        ],
        "can_undo": True,
        "can_redo": True,
    }


def test_stats_series_and_fairness(served: Served) -> None:
    """Scores after each action; faces of the rolls; chi-square and its p-value with 5 df."""
    for action in ({"roll": [1, 1, 5, 2, 3, 4]}, {"keep": [1, 1, 5]}, {"bank": True}):
        served.pinned.post("/api/actions", json=action)
    r = served.client.get("/api/stats")
    assert r.status_code == 200
    stats = r.json()
    assert stats["series"] == {
        "players": ["Ann", "Bob"],
        "points": [[0, 0], [0, 0], [0, 0], [250, 0]],
    }
    assert stats["faces"] == {"1": 2, "2": 1, "3": 1, "4": 1, "5": 1, "6": 0}
    assert stats["dice_read"] == 6
    assert stats["chi_square"] == 2.0  # expected 1 per face: (2-1)^2 + (0-1)^2
    assert stats["p_value"] == pytest.approx(0.849145, abs=1e-6)  # chi2.sf(2, 5)
    assert stats["verdict"] == "too few dice"


def test_history_and_stats_without_a_game(store: Store) -> None:
    """Before the first game: empty lists, not an error."""
    with serving(Table(store)) as base:
        history = httpx.get(f"{base}/api/history").json()
        stats = httpx.get(f"{base}/api/stats").json()
    assert history == {"entries": [], "can_undo": False, "can_redo": False}
    assert stats["series"] == {"players": [], "points": []}
    assert stats["dice_read"] == 0


# -- correct ------------------------------------------------------------------------------------


def test_correct_replaces_the_misread_roll(served: Served, store: Store) -> None:
    """The corrected die counts as read; the roll from the misread is replaced, both logged."""
    served.table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    r = served.client.post("/api/correct", json={"die": 5, "value": 6})
    assert (r.status_code, r.json()) == (401, {"detail": "changing the game needs the table PIN"})
    r = served.pinned.post("/api/correct", json={"die": 5, "value": 6})
    assert r.status_code == 200
    state = r.json()
    assert state["turn"]["dice"] == [1, 1, 2, 3, 5, 6]
    assert state["table"]["dice_read"][5]["value"] == 6
    assert served.client.get("/api/history").json()["entries"][0]["action"] == {
        "roll": [1, 1, 2, 3, 5, 6]
    }
    (correction,) = store.corrections()
    assert [d["value"] for d in correction.replaced] == [1, 1, 5, 2, 3, 4]


def malformed(detail: str, code: str, **params: Any) -> dict[str, Any]:
    """A 422 body of FastAPI's validation: the English detail, and the code and params of its
    first problem, which a phone words in its language."""
    return {"detail": detail, "code": code, "params": params}


@pytest.mark.parametrize(
    ("body", "status", "answer"),
    [
        (
            {"die": 0, "value": 7},
            422,
            malformed(
                "value: Input should be less than or equal to 6",
                "field_above",
                field="value",
                most=6,
            ),
        ),
        (
            {"die": 0, "value": -1},
            422,
            malformed(
                "value: Input should be greater than or equal to 0",
                "field_below",
                field="value",
                least=0,
            ),
        ),
        (
            {"die": 9, "value": 3},
            422,
            {"detail": "the last reading has 6 dice (0 to 5); there is no die 9"},
        ),
        (
            {"die": "0", "value": 3},
            422,
            malformed("die: Input should be a valid integer", "field_not_whole", field="die"),
        ),
        ({"die": 0}, 422, malformed("value: Field required", "field_missing", field="value")),
    ],
)
def test_correct_refuses_bad_requests(
    served: Served, body: dict[str, Any], status: int, answer: dict[str, Any]
) -> None:
    """A die not in the reading or a face not on a die is a 422 that says so; nothing changes."""
    served.table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    before = served.client.get("/api/state").json()
    r = served.pinned.post("/api/correct", json=body)
    assert (r.status_code, r.json()) == (status, answer)
    assert served.client.get("/api/state").json() == before


def test_correct_says_a_phantom_die_is_not_there(served: Served, store: Store) -> None:
    """Value 0 takes a die the camera invented out of the reading: the roll then goes through."""
    served.table.on_reading(reading(1, 1, 5, 2, 3, 4, 4), settled_now=True)
    assert (
        "7 dice are in the roll zone" in served.client.get("/api/state").json()["table"]["problem"]
    )
    r = served.pinned.post("/api/correct", json={"die": 6, "value": 0})
    assert r.status_code == 200
    state = r.json()
    assert (state["table"]["problem"], state["turn"]["dice"]) == ("", [1, 1, 2, 3, 4, 5])
    assert state["table"]["dice_read"][6]["status"] == "no_die"
    assert [(c.die, c.value) for c in store.corrections()] == [(6, 0)]


def test_correct_conflicts(served: Served) -> None:
    """No reading yet, or the game gone on since: 409 with the reason."""
    r = served.pinned.post("/api/correct", json={"die": 0, "value": 3})
    assert (r.status_code, r.json()) == (
        409,
        {
            "detail": "there is no reading to correct: no dice have settled yet",
            "code": "no_reading",
            "params": {},
        },
    )
    served.table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    served.pinned.post("/api/actions", json={"keep": [1, 1, 5]})
    r = served.pinned.post("/api/correct", json={"die": 5, "value": 6})
    assert r.status_code == 409
    assert r.json()["detail"].endswith("undo back to it first")
    assert r.json()["code"] == "gone_on"


def test_correct_lets_a_cocked_die_through(served: Served) -> None:
    """A refused reading (a cocked die) becomes the roll once the die is set."""
    dice = (*[FakeDie(v) for v in (1, 5, 2, 3, 4)], FakeDie(None, 0.3, "cocked"))
    served.table.on_reading(FakeReading(dice), settled_now=True)
    assert served.client.get("/api/state").json()["table"]["problem"] != ""
    state = served.pinned.post("/api/correct", json={"die": 5, "value": 1}).json()
    assert state["turn"]["dice"] == [1, 1, 2, 3, 4, 5]
    assert state["table"]["problem"] == ""


# -- fixing an earlier step ---------------------------------------------------------------------


def test_an_earlier_throw_is_fixed_and_the_game_goes_on_from_it(served: Served) -> None:
    """PUT /api/history/{index}: Ann's throw misread two steps ago is fixed; her keep and bank
    are taken again, and the history shows the fixed throw."""
    served.table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    served.pinned.post("/api/actions", json={"keep": [1, 1, 5]})
    served.pinned.post("/api/actions", json={"bank": True})
    fix = {"roll": [1, 1, 2, 3, 5, 6]}
    r = served.client.put("/api/history/0", json=fix)
    assert (r.status_code, r.json()) == (401, {"detail": "changing the game needs the table PIN"})
    version = served.client.get("/api/state").json()["table"]["version"]
    r = served.pinned.put(f"/api/history/0?seen={version}", json=fix)
    assert r.status_code == 200, r.text
    entries = served.client.get("/api/history").json()["entries"]
    assert [e["action"] for e in entries] == [fix, {"keep": [1, 1, 5]}, {"bank": True}]
    r = served.pinned.put(f"/api/history/0?seen={version}", json=fix)  # a second tap
    assert (r.status_code, r.json()["code"]) == (409, "stale")


@pytest.mark.parametrize(
    ("index", "body", "status", "code"),
    [
        (0, {"roll": [2, 2, 3, 4, 6, 6]}, 409, "fix_breaks"),  # her keep 1 1 5 no longer fits
        (5, {"roll": [1, 1, 2, 3, 5, 6]}, 422, "no_such_step"),
        (0, {"roll": [1, 1, 2, 3, 5, 9]}, 422, None),  # no action: a die shows 1 to 6
    ],
    ids=["breaks-a-later-step", "no-such-step", "malformed"],
)
def test_a_fix_that_cannot_be_made_changes_nothing(
    served: Served, index: int, body: dict[str, Any], status: int, code: str | None
) -> None:
    served.table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    served.pinned.post("/api/actions", json={"keep": [1, 1, 5]})
    before = served.client.get("/api/state").json()
    r = served.pinned.put(f"/api/history/{index}", json=body)
    assert r.status_code == status, r.text
    assert r.json().get("code") == code
    assert served.client.get("/api/state").json() == before


def test_a_set_aside_is_fixed_by_choosing_one_offered(served: Served) -> None:
    """GET /api/history/{index}/choices, read without the PIN: Ann set 1 5 aside and threw
    four; 1 1 and 5 5 are offered (each leaves four to throw). The
    one chosen is taken with the PIN, and her later throw with it."""
    for action in ({"roll": [1, 1, 5, 5, 2, 3]}, {"keep": [1, 5]}, {"roll": [1, 2, 4, 6]}):
        served.pinned.post("/api/actions", json=action)
    r = served.client.get("/api/history/1/choices")
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["index"], body["action"]) == (1, {"keep": [1, 5]})
    offered = {tuple(c["action"]["keep"]): c for c in body["choices"]}
    assert sorted(offered) == [(1, 1), (5, 5)]
    assert (offered[(1, 1)]["text"], offered[(1, 1)]["points"]) == ("keep 1 1", None)
    assert served.client.get("/api/history/0/choices").json()["choices"] == []  # a throw: typed
    r = served.pinned.put("/api/history/1", json=offered[(5, 5)]["action"])
    assert r.status_code == 200, r.text
    entries = served.client.get("/api/history").json()["entries"]
    assert [e["action"] for e in entries][1:] == [{"keep": [5, 5]}, {"roll": [1, 2, 4, 6]}]
    r = served.client.get("/api/history/9/choices")
    assert (r.status_code, r.json()["code"]) == (422, "no_such_step")


def test_an_earlier_throw_is_fixed_by_a_die_of_its_photo(served: Served) -> None:
    """GET /api/history/{index}/dice (no PIN) says which die of a throw's photo is which; PUT
    /api/history/{index}/die (PIN) fixes the throw by one of them, later steps taken again.
    A step the camera did not read has none; a face that is no face is refused, unchanged."""
    served.table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)  # the 4 was a 6
    served.pinned.post("/api/actions", json={"keep": [1, 1, 5]})
    r = served.client.get("/api/history/0/dice")
    assert r.status_code == 200, r.text
    body = r.json()
    assert [d["value"] for d in body["dice"]] == [1, 1, 5, 2, 3, 4]
    assert body["reading"] >= 1
    assert all(len(d["box"]) == 4 for d in body["dice"])
    r = served.client.get("/api/history/1/dice")  # the keep was typed
    assert r.status_code == 422
    assert "step 2 was not read by the camera" in r.json()["detail"]
    before = served.client.get("/api/state").json()
    assert served.client.put("/api/history/0/die", json={"die": 5, "value": 6}).status_code == 401
    r = served.pinned.put("/api/history/0/die", json={"die": 5, "value": 0})
    assert r.status_code == 422  # no die there is no face: the throw is typed for that
    assert served.client.get("/api/state").json() == before
    r = served.pinned.put("/api/history/0/die", json={"die": 5, "value": 6})
    assert r.status_code == 200, r.text
    entries = served.client.get("/api/history").json()["entries"]
    assert [e["action"] for e in entries] == [{"roll": [1, 1, 2, 3, 5, 6]}, {"keep": [1, 1, 5]}]
    fixed = served.client.get("/api/history/0/dice").json()["dice"]
    assert [d["value"] for d in fixed] == [1, 1, 5, 2, 3, 6]  # its photo says so too


# -- the PIN ------------------------------------------------------------------------------------


def test_pin_guard_is_per_client_and_capped() -> None:
    """Wrong guesses slow their own client only, never past the cap, without overflow."""
    now = [1000.0]
    guard = PinGuard("2468", clock=lambda: now[0], max_wait=30.0)
    waits = []
    for _ in range(2000):
        assert guard.check("10.0.0.9", "0000") is False
        waits.append(guard.delay_for("10.0.0.9"))
        now[0] += waits[-1]
    assert waits[:4] == [0.5, 1.0, 2.0, 4.0]
    assert max(waits) == 30.0
    assert guard.delay_for("10.0.0.2") == 0.0  # the owner's phone is not slowed
    assert guard.attempt("10.0.0.2", "2468") == "ok"
    assert guard.attempt("10.0.0.9", "0000") == "wrong"
    assert guard.attempt("10.0.0.9", "2468") == pytest.approx(30.0)  # still waiting
    now[0] += 30.0
    assert guard.attempt("10.0.0.9", "2468") == "ok"  # the right PIN clears the count
    assert guard.delay_for("10.0.0.9") == 0.0


def test_pin_guard_forgets_and_stays_small() -> None:
    """Failures are forgotten after a quiet spell; only so many clients are remembered."""
    now = [0.0]
    guard = PinGuard("2468", clock=lambda: now[0], forget=600.0, max_clients=50)
    for _ in range(6):
        guard.check("a", "1")
        now[0] += 20
    now[0] += 700
    guard.check("a", "1")
    assert guard.delay_for("a") == 0.5  # counted afresh
    for i in range(500):
        guard.check(f"10.1.{i // 250}.{i % 250}", "1")
    assert len(guard.failures) <= 50


def test_right_pin_waits_after_wrong_ones(served: Served) -> None:
    """Right after a wrong guess even the right PIN waits (429), by header or by cookie."""
    r = served.client.post("/api/pin", json={"pin": "1111"})
    assert (r.status_code, r.json()) == (401, {"detail": "wrong table PIN"})
    r = served.client.post("/api/pin", json={"pin": PIN})
    assert r.status_code == 429
    # The first wrong guess costs half a second: told as 1 s, never as "wait 0 s".
    assert r.json()["detail"] == "too many wrong PINs: wait 1 s"
    time.sleep(0.6)
    assert served.client.post("/api/pin", json={"pin": PIN}).status_code == 200
    assert served.client.post("/api/undo").status_code == 409  # the cookie now authorises


# -- error shapes -------------------------------------------------------------------------------

JSON_TYPE = {"content-type": "application/json"}
NOT_OBJECT = "the body must be a JSON object, sent as application/json"


@pytest.mark.parametrize(
    ("method", "path", "content", "headers", "status", "detail"),
    [
        ("POST", "/api/actions", b"[1, 2]", JSON_TYPE, 422, NOT_OBJECT),
        ("POST", "/api/actions", b'"roll"', JSON_TYPE, 422, NOT_OBJECT),
        ("POST", "/api/games", b"[]", JSON_TYPE, 422, NOT_OBJECT),
        ("POST", "/api/actions", b"{", JSON_TYPE, 422, "the body is not valid JSON: "),
        (
            "POST",
            "/api/actions",
            b'{"r\xff": 1}',
            JSON_TYPE,
            422,
            "the request body is not UTF-8 text (byte 0xff at offset 3); send JSON in UTF-8",
        ),
        (
            "POST",
            "/api/games",
            b'{"game": "general", "options": {"target": ' + b"9" * 5000 + b"}}",
            JSON_TYPE,
            422,
            "the request body cannot be read as JSON: Exceeds the limit",
        ),
        (
            "POST",
            "/api/actions",
            b'{"score": "\\ud800"}',
            JSON_TYPE,
            422,
            "text must be valid Unicode: a lone surrogate",
        ),
        ("POST", "/api/actions", b"[" * 70_000, JSON_TYPE, 413, "larger than 65536 bytes"),
        ("POST", "/api/actions", b"[" * 5_000, JSON_TYPE, 422, "nests lists or objects too deep"),
        ("POST", "/api/actions", b'{"roll": [1]}', {"content-type": "text/plain"}, 422, NOT_OBJECT),
        ("POST", "/api/games", b"{}", JSON_TYPE, 422, "game: Field required"),
        (
            "POST",
            "/api/games",
            b'{"game": "general", "players": ["\\ud83d"]}',
            JSON_TYPE,
            422,
            "players.0: ",
        ),
        ("POST", "/api/games", b'{"game": 1, "players": []}', JSON_TYPE, 422, "game: "),
        (  # a key the header does not take is text like any other: no lone surrogate
            "POST",
            "/api/games",
            b'{"game": "general", "players": ["Ann", "Bob"], "\\ud800": 1}',
            JSON_TYPE,
            422,
            "a valid string, unable to parse raw data as a unicode string",
        ),
        ("POST", "/api/pin", b'{"pin": ""}', JSON_TYPE, 422, "pin: "),
        ("POST", "/api/correct", b"null", JSON_TYPE, 422, NOT_OBJECT),
        ("GET", "/api/nothing", b"", {}, 404, "Not Found"),
        ("GET", "/api/undo", b"", {}, 405, "Method Not Allowed"),
        ("DELETE", "/", b"", {}, 405, "Method Not Allowed"),
    ],
)
def test_any_bad_request_is_a_4xx_with_a_detail(
    served: Served,
    method: str,
    path: str,
    content: bytes,
    headers: dict[str, str],
    status: int,
    detail: str,
) -> None:
    """Wrong JSON types, broken or huge bodies, bad Unicode, missing fields: 4xx, never 500."""
    r = served.pinned.request(method, path, content=content, headers=headers)
    assert r.status_code == status, r.text
    body = r.json()
    assert list(body) in (["detail"], ["detail", "code", "params"])
    assert isinstance(body["detail"], str)
    assert detail in body["detail"]
    assert "Traceback" not in r.text


@pytest.mark.parametrize(
    ("path", "content", "code", "params"),
    [
        ("/api/actions", b"{", "not_json", {}),
        ("/api/actions", b"[1, 2]", "not_object", {}),
        ("/api/games", b"{}", "field_missing", {"field": "game"}),
        ("/api/games", b'{"game": "general", "players": []}', "field_empty", {"field": "players"}),
        ("/api/pin", b'{"pin": ""}', "field_empty", {"field": "pin"}),
        (
            "/api/games",
            b'{"game": "general", "players": ["' + b"x" * 41 + b'"]}',
            "field_too_long",
            {"field": "players.0", "n": 40},
        ),
        (
            "/api/games",
            b'{"game": "general", "players": [' + b'"a", ' * 12 + b'"b"]}',
            "field_too_many_items",
            {"field": "players", "n": 12},
        ),
        ("/api/correct", b'{"die": 0, "value": 7}', "field_above", {"field": "value", "most": 6}),
        (
            "/api/teach/place",
            b'{"reading": 1, "x": -0.5, "y": 0.5, "value": 3}',
            "field_below",
            {"field": "x", "least": 0},
        ),
        ("/api/undo?seen=abc", b"", "field_not_whole", {"field": "seen"}),
        (
            "/api/teach/place",
            b'{"reading": 1, "x": "left", "y": 0.5, "value": 3}',
            "field_not_number",
            {"field": "x"},
        ),
        (
            "/api/games",
            b'{"game": "general", "players": "Ann"}',
            "field_invalid",
            {"field": "players"},
        ),
        # A header of wrong JSON types is FastAPI's to refuse, before the rules' header_* codes.
        (
            "/api/games",
            b'{"game": 7, "players": ["Ann", "Bob"]}',
            "field_invalid",
            {"field": "game"},
        ),
        (
            "/api/games",
            b'{"game": "general", "players": ["Ann", 3]}',
            "field_invalid",
            {"field": "players.1"},
        ),
        (
            "/api/games",
            b'{"game": "general", "players": ["Ann", "Bob"], "options": []}',
            "field_invalid",
            {"field": "options"},
        ),
    ],
)
def test_a_malformed_request_carries_the_code_the_phones_word(
    served: Served, path: str, content: bytes, code: str, params: dict[str, Any]
) -> None:
    """FastAPI's 422 keeps its English detail, and says its first problem as a code and params
    (the field, the limit) that a phone words in its language (words.js wordRefusal)."""
    r = served.pinned.post(path, content=content, headers=JSON_TYPE)
    assert r.status_code == 422, r.text
    assert (r.json()["code"], r.json()["params"]) == (code, params)


class Broken(Table):
    """A table whose history fails, as a bug would."""

    def history_json(self) -> dict[str, Any]:
        """Fails."""
        raise RuntimeError("/secret/path/pipcam.db is on fire")


def test_unexpected_failure_is_a_500_without_traceback(store: Store) -> None:
    """A bug gives a JSON 500 that names no file and carries no traceback."""
    with serving(Broken(store)) as base:
        r = httpx.get(f"{base}/api/history")
        assert (r.status_code, r.json()) == (
            500,
            {"detail": "the table failed to answer (RuntimeError); see its log"},
        )
        assert "secret" not in r.text
        assert httpx.get(f"{base}/api/state").status_code == 200  # the server goes on


def test_state_keeps_the_games_own_fields(served: Served) -> None:
    """The response model lets describe() fields through and adds no empty ones."""
    served.pinned.post("/api/games", json={"game": "general", "players": ["Ann", "Bob"]})
    state = served.client.get("/api/state").json()
    assert {"sheets", "throws_left", "can_score"} <= set(state)
    assert state == served.table.state_json()


# -- earlier games ------------------------------------------------------------------------------


def test_earlier_games_are_listed_with_their_transcripts(served: Served) -> None:
    """GET /api/games lists the games before the current one, newest first; each one's
    transcript downloads as JSON lines; an id that is not there is a 404 that says so."""
    from tests.pipcam.test_table import play_to_the_end

    assert served.client.get("/api/games").json() == []
    play_to_the_end(served.table)
    final = served.table.state_json()
    served.table.new_game({"game": "general", "players": ["Cy", "Di"]})
    games = served.client.get("/api/games").json()
    assert [(g["game"], g["ended"], g["winners"]) for g in games] == [
        ("kymppitonni", True, final["winners"])
    ]
    assert games[0]["players"] == final["players"]
    trigger = final["ending"]["params"]["player"]
    assert final["ending"] == {
        "reason": f"{trigger} reached 10000",
        "code": "target_round",
        "params": {"player": trigger, "target": 10000},
    }
    assert games[0]["ending"] == final["ending"]
    r = served.client.get(f"/api/games/{games[0]['id']}/transcript")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/x-ndjson")
    assert f"pipcam-game-{games[0]['id']}.jsonl" in r.headers["content-disposition"]
    assert r.text.splitlines()[0].startswith('{"game": "kymppitonni"')
    r = served.client.get("/api/games/999/transcript")
    assert (r.status_code, r.json()) == (404, {"detail": "there is no game 999 at this table"})
    for beyond in (0, 2**63):  # no id SQLite can hold: refused by the route, not a 500
        assert served.client.get(f"/api/games/{beyond}/transcript").status_code == 422
    served.table.act(Roll([1, 2, 3, 4, 5]), source="phone")
    served.table.new_game({"game": "general", "players": ["Cy", "Di"]})
    left = served.client.get("/api/games").json()[0]
    assert (left["game"], left["ended"], left["ending"]) == ("general", False, None)


@pytest.mark.parametrize(
    ("header", "answer"),
    [
        (
            {"game": "sekvence", "players": ["Ann", "Bob"], "options": {"target": "abc"}},
            {
                "detail": "option target takes int, not 'abc'",
                "code": "option_value",
                "params": {
                    "option": "target",
                    "value": "abc",
                    "takes": [{"kind": "whole"}],
                    "game": "sekvence",
                },
            },
        ),
        (
            {"game": "general", "players": ["Ann", "Ann"]},
            {
                "detail": "two players share a name in ['Ann', 'Ann']; give each a different name",
                "code": "name_twice",
                "params": {"name": "Ann"},
            },
        ),
        (
            {"game": "general", "players": ["Ann", "Bob"], "option": {"target": 100}},
            {
                "detail": "unknown header keys ['option']; allowed: game, players, options",
                "code": "unknown_header_keys",
                "params": {"keys": ["option"], "known": ["game", "players", "options"]},
            },
        ),
        (
            {"game": "general", "players": ["Ann", "Bob"], "seat": 1, "colour": "red"},
            {
                "detail": "unknown header keys ['colour', 'seat']; allowed: game, players, options",
                "code": "unknown_header_keys",
                "params": {"keys": ["colour", "seat"], "known": ["game", "players", "options"]},
            },
        ),
        (
            {"game": "general", "players": ["Ann"]},
            {
                "detail": "general is played by 2 to 12 players, not 1",
                "code": "player_count",
                "params": {"game": "general", "least": 2, "most": 12, "n": 1},
            },
        ),
    ],
)
def test_a_new_game_the_rules_refuse_carries_its_code(
    served: Served, header: dict[str, Any], answer: dict[str, Any]
) -> None:
    """A 422 from the rules (a key the header does not take, an option, the names, the count)
    keeps its English detail for API clients and the command line, with the code and params a
    phone words; nothing changes."""
    before = served.client.get("/api/state").json()
    r = served.pinned.post("/api/games", json=header)
    assert (r.status_code, r.json()) == (422, answer)
    assert served.client.get("/api/state").json() == before
