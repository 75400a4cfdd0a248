"""The teach sheet over HTTP (GET/POST /api/teach, the die's picture), on a real server with the
real table, store and kept photos."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from pipcam.photos import PhotoKeeper
from pipcam.store import Store
from pipcam.table import Table
from pipcam.teach import CROP_SIDE, Teacher
from tests.pipcam.test_photos import play
from tests.web.test_api import Served
from tests.web.test_api_more import serving


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "pipcam.db") as s:
        yield s


@pytest.fixture
def taught(tmp_path: Path, store: Store) -> Iterator[Served]:
    """Three played readings with their photos kept, and the teach sheet served."""
    table = play(store, PhotoKeeper(tmp_path / "photos"))
    with serving(table, Teacher(store, tmp_path / "photos")) as base:
        yield Served(table, base)


def test_the_sheet_lists_the_unsure_dice(taught: Served) -> None:
    r = taught.client.get("/api/teach")
    assert r.status_code == 200
    sheet = r.json()
    assert (sheet["keeping"], sheet["count"]) == (True, 2)
    assert [(q["reading"], q["die"], q["value"], q["status"]) for q in sheet["questions"]] == [
        (3, 0, None, "cocked"),
        (2, 2, 5, "ok"),
    ]
    assert taught.client.get("/api/teach", params={"limit": 1}).json()["count"] == 2
    assert len(taught.client.get("/api/teach", params={"limit": 1}).json()["questions"]) == 1
    assert taught.client.get("/api/teach", params={"limit": 0}).status_code == 422


def test_the_picture_needs_the_pin_and_is_a_jpeg(taught: Served) -> None:
    assert taught.client.get("/api/teach/3/0.jpg").status_code == 401
    r = taught.pinned.get("/api/teach/3/0.jpg")
    assert r.status_code == 200
    assert r.headers["content-type"] == "image/jpeg"
    image = cv2.imdecode(np.frombuffer(r.content, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    assert image.shape == (CROP_SIDE, CROP_SIDE, 3)
    r = taught.pinned.get("/api/teach/1/0.jpg")  # read surely: never asked
    assert r.status_code == 404
    assert "not on the teach sheet" in r.json()["detail"]


def test_an_answer_leaves_the_sheet_and_changes_no_game(taught: Served, store: Store) -> None:
    before = taught.client.get("/api/state").json()
    assert (
        taught.client.post("/api/teach", json={"reading": 3, "die": 0, "value": 4}).status_code
        == 401
    )
    r = taught.pinned.post("/api/teach", json={"reading": 3, "die": 0, "value": 4})
    assert r.status_code == 200
    assert [(q["reading"], q["die"]) for q in r.json()["questions"]] == [(2, 2)]
    assert r.json()["count"] == 1
    assert store.checks() == {3: {0: 4}}
    assert taught.client.get("/api/state").json() == before


def test_cannot_tell_takes_the_die_off_the_sheet(taught: Served, store: Store) -> None:
    """``"value": null``: the picture does not tell; stored apart from the answers."""
    r = taught.pinned.post("/api/teach", json={"reading": 3, "die": 0, "value": None})
    assert r.status_code == 200
    assert [(q["reading"], q["die"]) for q in r.json()["questions"]] == [(2, 2)]
    assert (store.checks(), store.unclear()) == ({}, {3: {0}})
    again = taught.pinned.post("/api/teach", json={"reading": 3, "die": 0, "value": None})
    assert again.status_code == 404  # asked no more


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        (
            {"reading": 3, "die": 0, "value": 7},
            422,
            "value: Input should be less than or equal to 6",
        ),
        ({"reading": 3, "die": 0}, 422, "value: Field required"),
        ({"reading": 3, "die": 0, "value": "x"}, 422, "value: Input should be a valid integer"),
        ({"reading": 3, "die": "0", "value": 2}, 422, "die: Input should be a valid integer"),
        ({"reading": 1, "die": 0, "value": 2}, 404, "die 0 of reading 1 is not on the teach sheet"),
        ({"reading": 99, "die": 0, "value": 2}, 404, "fetch the sheet again"),
    ],
)
def test_a_refused_answer_says_why_and_stores_nothing(
    taught: Served, store: Store, body: dict[str, Any], status: int, detail: str
) -> None:
    r = taught.pinned.post("/api/teach", json=body)
    assert r.status_code == status
    assert detail in r.json()["detail"]
    assert (store.checks(), store.unclear()) == ({}, {})


def test_a_table_that_keeps_no_photos_has_no_sheet(store: Store) -> None:
    table = Table(store)
    with serving(table) as base:
        served = Served(table, base)
        assert served.client.get("/api/teach").json() == {
            "keeping": False,
            "count": 0,
            "missing": 0,
            "questions": [],
        }
        r = served.pinned.post("/api/teach", json={"reading": 1, "die": 0, "value": 2})
        assert (r.status_code, r.json()) == (404, {"detail": "this table keeps no photos"})
        assert served.pinned.get("/api/teach/1/0.jpg").status_code == 404


@pytest.fixture
def missed(tmp_path: Path, store: Store) -> Iterator[tuple[Served, int]]:
    """A kept photo in which the camera read four dice of a six-dice throw typed on a phone."""
    from tests.pipcam.test_teach import missed_two

    teacher, reading_id = missed_two(tmp_path, store)
    table = Table(store)
    with serving(table, teacher) as base:
        yield Served(table, base), reading_id


def test_a_missed_die_is_placed_by_a_tap_on_its_photo(
    missed: tuple[Served, int], store: Store
) -> None:
    served, reading_id = missed
    sheet = served.client.get("/api/teach", params={"limit": 1}).json()
    (question,) = sheet["questions"]
    assert (question["status"], question["missing"], question["die"]) == ("missed", 2, 4)
    assert (sheet["count"], sheet["missing"]) == (1, 2)  # one question, two dice to place
    assert served.client.get(f"/api/teach/{reading_id}/photo.jpg").status_code == 401
    r = served.pinned.get(f"/api/teach/{reading_id}/photo.jpg")
    assert (r.status_code, r.headers["content-type"]) == (200, "image/jpeg")
    image = cv2.imdecode(np.frombuffer(r.content, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    assert image.shape == (200, 300, 3)
    body = {"reading": reading_id, "x": 0.5, "y": 0.75, "value": 4}
    assert served.client.post("/api/teach/place", json=body).status_code == 401
    r = served.pinned.post("/api/teach/place", json=body)
    assert r.status_code == 200
    assert [(q["die"], q["missing"]) for q in r.json()["questions"]] == [(5, 1)]
    assert r.json()["missing"] == 1
    assert store.placed() == {reading_id: {4: (4, [140, 140, 160, 160])}}


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        ({"x": 0.5, "y": 0.75, "value": 7}, 422, "value: Input should be less than or equal to 6"),
        ({"x": 1.2, "y": 0.75, "value": 3}, 422, "x: Input should be less than or equal to 1"),
        ({"x": 0.1, "y": 0.15, "value": 3}, 422, "tap the middle of the missed die"),
        ({"x": 0.5, "y": 0.75, "value": 3, "reading": 99}, 404, "no missed die left to place"),
    ],
)
def test_a_refused_tap_says_why_and_stores_nothing(
    missed: tuple[Served, int], store: Store, body: dict[str, Any], status: int, detail: str
) -> None:
    served, reading_id = missed
    r = served.pinned.post("/api/teach/place", json={"reading": reading_id, **body})
    assert r.status_code == status
    assert detail in r.json()["detail"]
    assert store.placed() == {}
    assert served.pinned.get("/api/teach/99/photo.jpg").status_code == 404


def test_a_missed_die_not_in_the_photo_is_said_so(missed: tuple[Served, int], store: Store) -> None:
    served, reading_id = missed
    body = {"reading": reading_id}
    assert served.client.post("/api/teach/absent", json=body).status_code == 401
    r = served.pinned.post("/api/teach/absent", json=body)
    assert r.status_code == 200
    assert [(q["die"], q["missing"]) for q in r.json()["questions"]] == [(4, 1)]
    assert r.json()["missing"] == 1
    r = served.pinned.post("/api/teach/absent", json=body)
    assert (r.status_code, r.json()["count"], r.json()["missing"]) == (200, 0, 0)
    r = served.pinned.post("/api/teach/absent", json=body)  # none left
    assert r.status_code == 404
    assert "no missed die left to place" in r.json()["detail"]
    r = served.pinned.post("/api/teach/absent", json={"reading": "1"})
    assert r.status_code == 422
    assert "reading: Input should be a valid integer" in r.json()["detail"]
    assert store.absent() == {reading_id: 2}
    assert store.placed() == {}
