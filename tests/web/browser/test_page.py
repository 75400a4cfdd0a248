"""The phone page in headless Chromium at 360 x 740: join, play, correct, undo, languages.

The server is real (uvicorn on loopback, the SQLite store, the engines); the camera is the test,
handing the table settled readings. Screenshots go to ``artifacts/`` (git-ignored).
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from pipcam.photos import PhotoKeeper
from pipcam.store import Store
from pipcam.teach import DISPUTES
from scoring.core import Bank, Forbidden, Keep, Place, Roll, Score
from scoring.transcript import replay
from tests.pipcam._fakes import FakeDie, FakeReading
from tests.web.browser._server import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    PHONE,
    PIN,
    Served,
    midgame,
    reading,
    serve,
)

if not CHROMIUM.exists():
    pytest.skip(
        f"browser tests need Debian's chromium at {CHROMIUM} (scripts/browser-deps.sh installs it)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
)
Browser = sync_api.Browser
Page = sync_api.Page
expect = sync_api.expect

TIMEOUT_MS = 5000
I18N = Path(__file__).resolve().parents[3] / "web" / "static" / "i18n"
CATCH_ERRORS = """
window.__errors = [];
addEventListener("error", (e) => window.__errors.push(e.message));
addEventListener("unhandledrejection", (e) => window.__errors.push(String(e.reason)));
"""


class Rig:
    """The served table and one headless Chromium for the whole module."""

    def __init__(self, served: Served, browser: Any) -> None:
        self.served = served
        self.browser = browser


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    """A server and a browser, shared by the tests of this module to keep them quick."""
    with (
        serve(tmp_path_factory.mktemp("table")) as served,
        sync_api.sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield Rig(served, browser)
        finally:
            browser.close()


@pytest.fixture
def served(rig: Rig) -> Served:
    """The table of this module."""
    return rig.served


def open_page(rig: Rig, *, lang: str = "en-GB", pin: bool = True) -> Any:
    """A fresh phone (no cookies, no stored language) on the scoreboard; with the PIN entered."""
    context = rig.browser.new_context(viewport=PHONE, locale=lang, device_scale_factor=1)
    context.set_default_timeout(TIMEOUT_MS)
    context.add_init_script(CATCH_ERRORS)
    page = context.new_page()
    if pin:
        page.request.post(f"{rig.served.base}/api/pin", data={"pin": PIN})
    page.goto(f"{rig.served.base}/", wait_until="domcontentloaded")
    expect(page.locator("#conn")).to_have_attribute("data-state", "live")
    return page


def close(page: Any) -> None:
    """Put the phone away, after checking that its script never failed."""
    errors = page.evaluate("window.__errors")
    page.context.close()
    assert errors == [], errors


@pytest.fixture
def phone(rig: Rig) -> Iterator[Any]:
    """A phone whose PIN is already in its cookie, on the scoreboard, in English."""
    page = open_page(rig)
    yield page
    close(page)


def shoot(page: Any, name: str) -> None:
    """Keep a full-page screenshot as a test artefact."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def no_horizontal_scroll(page: Any) -> None:
    """The page fits the 360-px screen: nothing sticks out to the right."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width} px wide on a {PHONE['width']} px screen"


def test_join_and_start_a_game(rig: Rig) -> None:
    """A phone joins by the URL, starts Kymppitonni for Ann and Bob, asked for the PIN once."""
    page = open_page(rig, pin=False)
    try:
        page.click("#tab-new")
        page.select_option("#new-game", "kymppitonni")
        names = page.locator(".player-name")
        while names.count() > 2:
            page.locator("#new-players li").last.get_by_role("button", name="Remove").click()
        while names.count() < 2:
            page.click("#add-player")
        names.nth(0).fill("Ann")
        names.nth(1).fill("Bob")
        page.locator("#new-players li").nth(1).get_by_role("button", name="Move up").click()
        shoot(page, "new-game")
        page.click("#start-game")
        expect(page.locator("#pin-dialog")).to_be_visible()
        page.fill("#pin-input", PIN)
        page.click("#pin-ok")
        expect(page.locator(".players li")).to_have_count(2)
        expect(page.locator(".players li").first).to_contain_text("Bob")
        expect(page.locator("#status")).to_have_text("Bob throws 6 dice")
        assert rig.served.table.state_json()["players"] == [
            {"name": "Bob", "score": 0},
            {"name": "Ann", "score": 0},
        ]
        no_horizontal_scroll(page)
    finally:
        close(page)


def test_a_game_under_way_is_given_up_only_when_confirmed(served: Served, phone: Any) -> None:
    """Starting a new game while one is under way asks first; No keeps the game as it was."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    served.post("/api/actions", {"roll": [1, 1, 1, 2, 3, 6]})
    expect(phone.locator("#table-dice .die")).to_have_count(6)
    asked: list[str] = []

    def answer(dialog: Any, accept: bool) -> None:
        asked.append(dialog.message)
        if accept:
            dialog.accept()
        else:
            dialog.dismiss()

    phone.click("#tab-new")
    phone.select_option("#new-game", "sekvence")
    phone.once("dialog", lambda d: answer(d, accept=False))
    phone.click("#start-game")
    expect(phone.locator("#view-new")).to_be_visible()
    assert asked == [
        "The game of Kymppitonni is not finished. Start a new game anyway? It stays in the"
        " table's history."
    ]
    assert served.table.state_json()["game"] == "kymppitonni"
    phone.once("dialog", lambda d: answer(d, accept=True))
    phone.click("#start-game")
    expect(phone.locator("#status")).to_contain_text("throws 6 dice")
    assert served.table.state_json()["game"] == "sekvence"
    assert len(asked) == 2


def test_a_wrong_pin_is_asked_again(rig: Rig) -> None:
    """A wrong PIN is refused with a message and changes nothing; the right one then retries."""
    rig.served.new_game("sekvence", ["Eva", "Jan"])
    rig.served.post("/api/actions", {"roll": [1, 2, 3, 4, 5, 5]})
    page = open_page(rig, pin=False)
    try:
        page.click("#undo")
        expect(page.locator("#pin-dialog")).to_be_visible()
        page.fill("#pin-input", "0000")
        page.click("#pin-ok")
        expect(page.locator("#pin-error")).to_have_text("Wrong PIN: try again.")
        assert rig.served.table.state_json()["actions"] == 1
        time.sleep(0.6)  # a wrong guess makes the next one wait half a second
        page.fill("#pin-input", PIN)
        page.click("#pin-ok")
        expect(page.locator("#pin-dialog")).to_be_hidden()
        expect(page.locator("#undo")).to_be_disabled()
        assert rig.served.table.state_json()["actions"] == 0
    finally:
        close(page)


def test_a_roll_appears_after_a_reading(served: Served, phone: Any) -> None:
    """The camera settles on six dice: within a second every phone shows the roll."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    expect(phone.locator("#status")).to_have_text("Ann throws 6 dice")
    start = time.monotonic()
    served.table.on_reading(reading([1, 1, 5, 2, 3, 4]), settled_now=True)
    expect(phone.locator("#table-dice .die")).to_have_text(["1", "1", "2", "3", "4", "5"])
    assert time.monotonic() - start < 2.0
    expect(phone.locator("#dice-read .die")).to_have_count(6)
    expect(phone.locator("#dice-read .die").first).to_contain_text("97%")
    expect(phone.locator("#status")).to_have_text("Ann decides")
    expect(phone.locator("#turn-box")).to_contain_text("Ann threw 1 1 2 3 4 5")


def test_correct_a_misread_die(served: Served, phone: Any) -> None:
    """An uncertain die is marked; tapping it and choosing 5 makes the roll go through."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    served.table.on_reading(
        reading([1, 1, None, 2, 3, 4], doubtful={2: "uncertain"}), settled_now=True
    )
    doubtful = phone.locator("#dice-read .die").nth(2)
    expect(doubtful).to_have_class("die read uncertain")
    expect(doubtful).to_have_attribute("aria-label", "Die 3: ?, uncertain. Tap to correct.")
    expect(phone.locator("#problem")).to_contain_text("cannot be read")
    doubtful.click()
    expect(phone.locator("#die-dialog")).to_be_visible()
    phone.click("#die-dialog .faces button[value='5']")
    expect(phone.locator("#table-dice .die")).to_have_text(["1", "1", "2", "3", "4", "5"])
    expect(phone.locator("#problem")).to_have_count(0)
    assert served.table.state_json()["turn"]["dice"] == [1, 1, 2, 3, 4, 5]


def _unread(why: str, confidence: float, box: tuple[int, int, int, int]) -> FakeDie:
    """A die the camera could not read, and why: "blurred", "hidden" or "cut" (hidden by the
    edge of the camera's view)."""
    return FakeDie(
        None,
        confidence,
        "uncertain",
        box,
        blurred=why == "blurred",
        hidden=why in ("hidden", "cut"),
        cut=why == "cut",
    )


@pytest.mark.parametrize(
    ("why", "said", "problem"),
    [
        ("blurred", "blurred", "A die leans on something or cannot be read: throw it again"),
        ("hidden", "partly hidden", "A die is partly hidden: move what covers it, or correct it"),
        (
            "cut",
            "at the camera's edge",
            "A die lies at the edge of the camera's view: slide it into view without turning it",
        ),
    ],
)
def test_a_die_too_blurred_to_read_or_partly_hidden_says_so(
    served: Served, phone: Any, why: str, said: str, problem: str
) -> None:
    """A die the camera saw blurred (still rolling, out of focus), partly hidden (a card over
    it) or cut by the edge of its view is flagged so, not merely uncertain, with no confidence
    shown for the value it has not, and the problem says what to do (a hidden die is not
    thrown again: what covers it is moved, or the die slid into view); a value from the phone
    takes the flag away."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    dice = reading([1, 1, 2, 3, 4]).dice
    unread = _unread(why, 0.12, (300, 10, 340, 50))
    served.table.on_reading(FakeReading((*dice, unread)), settled_now=True)
    die = phone.locator("#dice-read .die").nth(5)
    expect(die).to_have_attribute("aria-label", f"Die 6: ?, {said}. Tap to correct.")
    expect(die.locator(".flag")).to_have_text("?")
    expect(die.locator(".conf")).to_have_text("")  # no "12%" under a "?": sure of nothing
    expect(phone.locator("#problem")).to_contain_text(problem)
    die.click()
    phone.click("#die-dialog .faces button[value='6']")
    expect(phone.locator("#dice-read .die").nth(5)).to_have_attribute(
        "aria-label", "Die 6: 6, confidence 100%. Tap to correct."
    )
    expect(phone.locator("#dice-read .die").nth(5).locator(".conf")).to_have_text("100%")
    assert why not in served.table.state_json()["table"]["dice_read"][5]


def test_say_no_die_is_where_the_camera_read_one(served: Served, phone: Any) -> None:
    """Seven dice read for six thrown: cancelling changes nothing; "No die there" on the phantom
    lets the roll through and marks it, and a value puts it back."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    rid = served.table.on_reading(reading([1, 1, 5, 2, 3, 4, 6]), settled_now=True)

    def fixes() -> list[tuple[int, int]]:
        return [(c.die, c.value) for c in served.table.store.corrections() if c.reading == rid]

    expect(phone.locator("#problem")).to_contain_text("7 dice are in the roll zone")
    phantom = phone.locator("#dice-read .die").nth(6)
    phantom.click()
    phone.click("#die-dialog button[value='']")  # Cancel
    expect(phone.locator("#die-dialog")).not_to_be_visible()
    expect(phone.locator("#problem")).to_contain_text("7 dice are in the roll zone")
    assert fixes() == []
    phantom.click()
    expect(phone.locator("#die-no-die")).to_have_text("No die there")
    phone.click("#die-no-die")
    expect(phone.locator("#problem")).to_have_count(0)
    expect(phone.locator("#table-dice .die")).to_have_text(["1", "1", "2", "3", "4", "5"])
    expect(phantom).to_have_class("die read no_die")
    shoot(phone, "no-die")
    no_horizontal_scroll(phone)
    expect(phantom).to_have_attribute("aria-label", "Die 7: –, no die. Tap to correct.")
    phantom.click()
    phone.click("#die-dialog .faces button[value='6']")
    expect(phone.locator("#problem")).to_contain_text("7 dice are in the roll zone")
    expect(phantom).to_have_class("die read ok")
    assert fixes() == [(6, 0), (6, 6)]


def test_correct_a_die_misread_out_of_the_roll_zone(served: Served, phone: Any) -> None:
    """The 5 set aside as the others are thrown is read as a 1 out of the roll zone, so the
    table took keep 1: the phone lists the dice out of the zone after those in it, and tapping
    that die and choosing 5 makes it keep 5 and the same throw."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    served.table.on_reading(reading([1, 1, 2, 3, 5, 6]), settled_now=True)
    thrown = tuple(  # landed clear of where the dice lay
        FakeDie(v, confidence=0.97, box=(60 * i, 400, 60 * i + 40, 440))
        for i, v in enumerate([4, 4, 2, 2, 6])
    )
    out = (FakeDie(1, confidence=0.88, box=(2000, 10, 2040, 50)),)
    rid = served.table.on_reading(FakeReading(thrown, set_aside=out), settled_now=True)
    expect(phone.locator("#turn-box")).to_contain_text("Ann threw 2 2 4 4 6")
    assert served.table.history is not None
    assert served.table.history.actions[1] == Keep([1])
    expect(phone.locator("#dice-read .die")).to_have_count(5)
    misread = phone.locator("#aside-read .die")
    expect(misread).to_have_count(1)
    expect(phone.locator("#read-box")).to_contain_text("Out of the roll zone:")
    expect(misread).to_have_attribute("aria-label", "Die 6: 1, confidence 88%. Tap to correct.")
    shoot(phone, "aside-read")
    no_horizontal_scroll(phone)
    misread.click()
    expect(phone.locator("#die-dialog")).to_be_visible()
    phone.click("#die-dialog .faces button[value='5']")
    expect(misread).to_contain_text("5")
    assert served.table.history.actions[1:] == [Keep([5]), Roll([2, 2, 4, 4, 6])]
    fixes = [(c.die, c.value) for c in served.table.store.corrections() if c.reading == rid]
    assert fixes == [(5, 5)]
    # Every die out of the zone (the last one set aside): those are still listed to correct.
    served.table.on_reading(FakeReading((), set_aside=(*out, thrown[0])), settled_now=True)
    expect(phone.locator("#dice-read .die")).to_have_count(0)
    expect(phone.locator("#aside-read .die")).to_have_count(2)


def test_type_the_throw_when_the_camera_missed_a_die(served: Served, phone: Any) -> None:
    """Five dice read for six thrown: the problem says what may hide the sixth; the throw typed
    on the phone starts from the five read, the missing face is added (one taken back first),
    and it goes into the game as the phone's; OK waits for all six."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    short = served.table.on_reading(reading([1, 1, 5, 2, 3]), settled_now=True)
    # Too few dice: not "take out what does not belong there", but what could hide a die.
    expect(phone.locator("#problem")).to_contain_text(
        "Only 5 dice are seen in the roll zone, but 6 were to be thrown: throw any left out,"
        " move whatever hides a die from the camera"
    )
    phone.click("#type-roll")
    expect(phone.locator("#roll-title")).to_have_text("The 6 dice thrown")
    expect(phone.locator("#roll-dice .die")).to_have_text(["1", "1", "5", "2", "3"])
    expect(phone.locator("#roll-count")).to_have_text("5 of 6")
    expect(phone.locator("#roll-ok")).to_be_disabled()
    phone.click("#roll-faces button[value='6']")
    expect(phone.locator("#roll-faces button").first).to_be_disabled()  # six are in
    phone.click("#roll-back")
    phone.click("#roll-faces button[value='4']")
    expect(phone.locator("#roll-dice .die")).to_have_text(["1", "1", "5", "2", "3", "4"])
    expect(phone.locator("#roll-count")).to_have_text("6 of 6")
    shoot(phone, "type-throw")
    phone.click("#roll-ok")
    expect(phone.locator("#table-dice .die")).to_have_text(["1", "1", "2", "3", "4", "5"])
    expect(phone.locator("#problem")).to_have_count(0)
    expect(phone.locator("#type-roll")).to_have_count(0)  # Ann decides now: nothing to throw
    assert served.table.game_id is not None
    last = served.table.store.events(served.table.game_id)[-1]
    assert (last.action, last.source) == ({"roll": [1, 1, 2, 3, 4, 5]}, "phone")
    assert short is not None
    assert served.table.store.missed()[short] == 1  # its photo has a die without a label


def test_a_table_without_a_camera_offers_typing_alone(served: Served, phone: Any) -> None:
    """With no camera (pipcam run --camera none) phones show no camera box and no camera
    problem, and type the throw; a camera lost mid-game is said."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    expect(phone.locator("#read-box")).to_be_visible()
    try:
        served.table.camera_status("none")
        expect(phone.locator("#read-box")).to_have_count(0)
        expect(phone.locator(".problem")).to_have_count(0)
        expect(phone.locator("#type-roll")).to_have_text("Type the throw (6 dice)")
        served.table.camera_status("missing")
        expect(phone.locator(".problem.soft")).to_have_text(
            "Camera: not found. Type or correct the dice on a phone."
        )
    finally:
        served.table.camera_status("ok")
    expect(phone.locator("#read-box")).to_be_visible()
    expect(phone.locator(".problem")).to_have_count(0)


def test_phones_say_what_to_mend_at_the_table(served: Served, phone: Any) -> None:
    """The camera at its light limits, a tray that looks another size than calibrated, or a
    lens out of focus: the phones say what the owner should do, in the phone's language, and
    stop once it is done."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    try:
        served.table.camera_notice("light", "dark")
        served.table.camera_notice("tray", "tray_size")
        served.table.camera_notice("focus", "blurred")
        notices = phone.locator(".camera-notice")
        expect(notices).to_have_count(3)
        expect(notices.nth(0)).to_contain_text("the camera is out of focus. Turn its lens")
        expect(notices.nth(1)).to_contain_text("too dark for the camera")
        expect(notices.nth(2)).to_contain_text("calibrate again (pipcam calibrate)")
        served.table.camera_notice("light", "")
        served.table.camera_notice("focus", "")
        expect(notices).to_have_count(1)
    finally:
        served.table.camera_notice("light", "")
        served.table.camera_notice("tray", "")
        served.table.camera_notice("focus", "")
    expect(phone.locator(".camera-notice")).to_have_count(0)


def test_phones_say_what_the_camera_sees_now(served: Served, phone: Any) -> None:
    """A live camera's box says whether it sees no dice or dice still moving, so players know
    it is watching; settled dice are shown without either line."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    served.table.on_reading(FakeReading((), status="empty"), settled_now=False)
    expect(phone.locator("#read-status")).to_have_text("No dice in view.")
    moving = FakeReading(reading([1, 1, 5, 2, 3, 4]).dice, status="moving")
    served.table.on_reading(moving, settled_now=False)
    expect(phone.locator("#dice-read .die")).to_have_count(6)
    expect(phone.locator("#read-status")).to_have_text(
        "The dice are moving: they are read once they lie still."
    )
    served.table.on_reading(reading([1, 1, 5, 2, 3, 4]), settled_now=True)
    expect(phone.locator("#read-status")).to_have_count(0)
    expect(phone.locator("#dice-read .die")).to_have_count(6)
    try:  # a lost camera sees nothing: its problem is said, not "no dice in view"
        served.table.camera_status("missing")
        served.table.on_reading(FakeReading((), status="empty"), settled_now=False)
        expect(phone.locator("#read-status")).to_have_text("No dice read yet.")
    finally:
        served.table.camera_status("ok")


def test_phones_say_when_the_table_keeps_photos(served: Served, phone: Any) -> None:
    """A table that keeps photos of the tray says so on every phone, with the count."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    expect(phone.locator("#read-box")).to_be_visible()
    expect(phone.locator("#photos-note")).to_have_count(0)
    served.table.photos_kept(0)
    expect(phone.locator("#photos-note")).to_contain_text("(0 so far)")
    served.table.on_reading(reading([1, 1, 5, 2, 3, 4]), settled_now=True)
    served.table.photos_kept(1)
    expect(phone.locator("#dice-read .die")).to_have_count(6)
    expect(phone.locator("#photos-note")).to_contain_text("keeps a photo of each roll (1 so far)")
    shoot(phone, "photos-note")
    no_horizontal_scroll(phone)
    # The model tuned on those photos (pipcam tune) is said, and so is going back from it.
    expect(phone.locator("#tuned-note")).to_have_count(0)
    served.table.model_in_use("2026-11-27")
    expect(phone.locator("#tuned-note")).to_have_text(
        "The camera reads your dice with a model tuned on this table's own photos"
        " (since November 27, 2026)."
    )
    served.table.model_in_use(None)
    expect(phone.locator("#tuned-note")).to_have_count(0)


def test_teach_the_dice_the_camera_was_unsure_of(served: Served, phone: Any) -> None:
    """The teach sheet shows each unsure die of the kept photos, outlined in its photo; answers
    are stored and leave the game as it was; with nothing left it says so."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    tray = np.full((480, 640, 3), 40, np.uint8)
    keeper = PhotoKeeper(served.photos)
    unsure = FakeReading(
        (
            *reading([1, 1, None, 2, 3], doubtful={2: "uncertain"}).dice,
            FakeDie(4, 0.7, "ok", (300, 10, 340, 50)),
        )
    )
    first = served.table.on_reading(unsure, settled_now=True)
    assert first is not None
    keeper.keep(first, tray)
    # The reading still in play is corrected on the board: the sheet waits for the next one.
    served.table.on_reading(reading([1, 5, 2, 3, 4, 6]), settled_now=True)
    second = served.table.reading_in_play()
    assert second is not None
    keeper.keep(second, tray)
    # The last tuning run read the first die (a sure 1) otherwise: it is asked first.
    (served.photos.parent / "tune").mkdir(exist_ok=True)
    (served.photos.parent / "tune" / DISPUTES).write_text(
        json.dumps([{"reading": first, "die": 0, "label": 1, "tuned": 4}])
    )
    served.table.photos_kept(2)  # what the keeper says after each photo: phones count again
    expect(phone.locator("#teach-open")).to_have_text("Check the 3 dice the camera was unsure of")
    before = served.table.transcript()
    phone.click("#teach-open")
    dialog = phone.locator("#teach-dialog")
    expect(dialog).to_be_visible()
    expect(phone.locator("#teach-progress")).to_have_text("Die 1 of 3")
    expect(phone.locator("#teach-read")).to_have_text(
        "The camera read 1 (97% sure), but its newly tuned model reads it otherwise."
    )
    phone.click("#teach-dialog .faces button[value='1']")
    expect(phone.locator("#teach-progress")).to_have_text("Die 2 of 3")
    expect(phone.locator("#teach-read")).to_have_text("The camera could not read it (uncertain).")
    phone.wait_for_function("document.getElementById('teach-image').naturalWidth === 240")
    shoot(phone, "teach-sheet")
    phone.click("#teach-dialog .faces button[value='5']")
    expect(phone.locator("#teach-progress")).to_have_text("Die 3 of 3")
    expect(phone.locator("#teach-read")).to_have_text("The camera read 4 (70% sure).")
    phone.click("#teach-no-die")
    expect(dialog).to_be_hidden()
    expect(phone.locator("#toast")).to_have_text(
        "Thank you: 3 dice answered. The next tuning learns from them."
    )
    sheet = served.pinned.get("/api/teach").json()
    assert (sheet["count"], sheet["questions"]) == (0, [])
    with Store(served.photos.parent / "pipcam.db") as store:
        assert store.checks() == {first: {0: 1, 2: 5, 5: 0}}
    assert served.table.transcript() == before
    expect(phone.locator("#teach-open")).to_have_count(0)  # nothing left to ask
    # A new unsure photo brings the button back, counted.
    third = served.table.on_reading(
        FakeReading((FakeDie(4, 0.7, "ok", (300, 10, 340, 50)),)), settled_now=True
    )
    assert third is not None
    keeper.keep(third, tray)
    served.table.photos_kept(3)
    expect(phone.locator("#teach-open")).to_have_count(0)  # in play: the board corrects it
    served.table.on_reading(reading([2, 2, 3, 4, 5, 6]), settled_now=True)  # play moves on
    served.table.photos_kept(3)
    expect(phone.locator("#teach-open")).to_have_text("Check the die the camera was unsure of")


@pytest.mark.parametrize(
    ("why", "said"),
    [("blurred", "blurred"), ("hidden", "partly hidden"), ("cut", "at the camera's edge")],
)
def test_teach_takes_cannot_tell_for_a_die_blurred_or_hidden(
    served: Served, phone: Any, why: str, said: str
) -> None:
    """The sheet says the camera saw the die blurred, or partly hidden; a "can't tell" takes it
    off the sheet without a face; only answers are thanked for."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    keeper = PhotoKeeper(served.photos)
    unsure = FakeReading(
        (
            FakeDie(4, 0.7, "ok", (300, 10, 340, 50)),
            _unread(why, 0.2, (400, 10, 440, 50)),
        )
    )
    first = served.table.on_reading(unsure, settled_now=True)
    assert first is not None
    keeper.keep(first, np.full((480, 640, 3), 40, np.uint8))
    served.table.on_reading(reading([1, 5, 2, 3, 4, 6]), settled_now=True)  # play moves on
    served.table.photos_kept(1)
    # Questions the tests before left open come after these two (read surer, or older).
    left = served.pinned.get("/api/teach").json()["count"] - 2
    expect(phone.locator("#teach-open")).to_have_text(
        f"Check the {left + 2} dice the camera was unsure of"
    )
    phone.click("#teach-open")
    expect(phone.locator("#teach-read")).to_have_text(f"The camera could not read it ({said}).")
    expect(phone.locator("#teach-unclear")).to_have_text("Can't tell")
    phone.click("#teach-unclear")
    expect(phone.locator("#teach-progress")).to_have_text(f"Die 2 of {left + 2}")
    expect(phone.locator("#teach-read")).to_have_text("The camera read 4 (70% sure).")
    phone.click("#teach-dialog .faces button[value='4']")
    if left:
        expect(phone.locator("#teach-progress")).to_have_text(f"Die 3 of {left + 2}")
        phone.click("#teach-done")
    expect(phone.locator("#teach-dialog")).to_be_hidden()
    expect(phone.locator("#toast")).to_have_text(
        "Thank you: 1 die answered. The next tuning learns from it."
    )
    with Store(served.photos.parent / "pipcam.db") as store:
        assert (store.checks()[first], store.unclear()[first]) == ({0: 4}, {1})
    assert served.pinned.get("/api/teach").json()["count"] == left


def test_teach_asks_which_of_two_looks_was_right(served: Served, phone: Any) -> None:
    """A die the camera read again otherwise once its light was set right: the sheet says
    what each look read, and the answer is stored."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    first = reading([1, 1, 5, 2, 3, 4])
    reading_id = served.table.on_reading(first, settled_now=True)
    assert reading_id is not None
    PhotoKeeper(served.photos).keep(reading_id, np.full((480, 640, 3), 40, np.uint8))
    second = FakeDie(6, 0.97, "ok", first.dice[5].box)
    assert served.table.look_again(FakeReading((*first.dice[:5], second)))
    served.table.on_reading(reading([1, 5, 2, 3, 4, 6]), settled_now=True)  # play moves on
    served.table.photos_kept(1)
    # Earlier tests' photos may wait on this table's sheet too: this die is asked first.
    expect(phone.locator("#teach-open")).to_contain_text("Check the")
    phone.click("#teach-open")
    expect(phone.locator("#teach-progress")).to_contain_text("Die 1 of")
    expect(phone.locator("#teach-read")).to_have_text(
        "A second look in better light read 6 (97% sure); the first look read 4."
    )
    phone.click("#teach-dialog .faces button[value='6']")
    phone.wait_for_function(  # the next question, or the sheet done
        "document.getElementById('teach-progress').textContent.startsWith('Die 2')"
        " || !document.getElementById('toast').hidden"
    )
    if phone.locator("#teach-dialog").is_visible():
        phone.click("#teach-done")
    expect(phone.locator("#toast")).to_contain_text("Thank you: 1 die answered.")
    with Store(served.photos.parent / "pipcam.db") as store:
        assert store.checks()[reading_id] == {5: 6}


def typed_over_a_missed_die(served: Served) -> int:
    """A kept photo of five dice where the players typed a throw of six (the camera missed the
    4), and play moved on; its reading."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    short = served.table.on_reading(reading([1, 1, 5, 2, 3]), settled_now=True)
    assert short is not None
    PhotoKeeper(served.photos).keep(short, np.full((480, 640, 3), 40, np.uint8))
    served.post("/api/actions", {"roll": [1, 1, 5, 2, 3, 4]})
    served.table.on_reading(reading([1, 5, 2, 3, 4, 6]), settled_now=True)  # play moves on
    served.table.photos_kept(1)
    return short


def thanked_for_one(phone: Any) -> None:
    """Close the sheet past the dice the other tests of the module left unanswered, if they
    come next, and see the thanks for the one answer."""
    phone.wait_for_function(
        "document.getElementById('teach-dialog').open"
        " || document.getElementById('toast').textContent.startsWith('Thank you')"
    )
    if phone.locator("#teach-dialog").is_visible():
        phone.click("#teach-done")
    expect(phone.locator("#toast")).to_have_text(
        "Thank you: 1 die answered. The next tuning learns from it."
    )


def test_place_a_die_the_camera_missed_on_its_photo(served: Served, phone: Any) -> None:
    """A throw typed because the camera missed a die: its photo is on the teach sheet, the faces
    wait for a tap, and the tap and face are stored as that die, boxed round the tap."""
    short = typed_over_a_missed_die(served)
    # A photo with a missed die is one question, not one die: the button says what it asks.
    expect(phone.locator("#teach-open")).to_have_text(
        re.compile(r"^Check what the camera missed or was unsure of \(\d+\)$")
    )
    phone.click("#teach-open")
    dialog = phone.locator("#place-dialog")
    expect(dialog).to_be_visible()
    expect(phone.locator("#place-ask")).to_have_text(
        "The camera missed a die in this photo. Tap it, then pick what it shows."
    )
    phone.wait_for_function("document.getElementById('place-image').naturalWidth === 640")
    expect(phone.locator("#place-faces button").first).to_be_disabled()
    photo = phone.locator("#place-image")
    box = photo.bounding_box()
    assert box is not None
    assert box["width"] <= PHONE["width"]
    photo.click(position={"x": box["width"] * 0.625, "y": box["height"] * 0.625})
    mark = phone.locator("#place-mark")
    expect(mark).to_be_visible()
    shoot(phone, "teach-missed-die")
    # Zoomed in, the photo scrolls to the mark; a tap on the mark there is the same point.
    phone.click("#place-zoom")
    expect(phone.locator("#place-zoom")).to_have_text("Zoom out")
    larger = photo.bounding_box()
    assert larger is not None
    assert larger["width"] > 2 * box["width"]
    at = mark.bounding_box()
    view = phone.locator(".place-scroll").bounding_box()
    assert at is not None
    assert view is not None
    x, y = at["x"] + at["width"] / 2, at["y"] + at["height"] / 2
    assert view["x"] < x < view["x"] + view["width"]
    assert view["y"] < y < view["y"] + view["height"]
    phone.mouse.click(x, y)
    phone.click("#place-faces button[value='4']")
    expect(dialog).to_be_hidden()
    thanked_for_one(phone)
    ((value, (x0, y0, x1, y1)),) = served.table.store.placed()[short].values()
    assert value == 4
    assert (x1 - x0, y1 - y0) == (40, 40)  # the size of the dice the camera saw
    assert abs((x0 + x1) / 2 - 400) <= 8
    assert abs((y0 + y1) / 2 - 300) <= 8
    assert 5 in served.table.store.placed()[short]


def test_say_a_missed_die_is_not_in_the_photo(served: Served, phone: Any) -> None:
    """A die the camera missed that is not in its photo (off the tray): said so, the photo
    question is answered without a tap."""
    short = typed_over_a_missed_die(served)
    phone.click("#teach-open")
    expect(phone.locator("#place-dialog")).to_be_visible()
    expect(phone.locator("#place-absent")).to_have_text("Not in the photo")
    phone.click("#place-absent")
    expect(phone.locator("#place-dialog")).to_be_hidden()
    thanked_for_one(phone)
    assert served.table.store.absent() == {short: 1}
    assert short not in served.table.store.placed()


def test_keep_bank_and_undo(served: Served, phone: Any) -> None:
    """Pick dice and keep them, bank, then undo the bank from the history view."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    served.post("/api/actions", {"roll": [1, 1, 1, 2, 3, 6]})
    dice = phone.locator("#table-dice .die")
    expect(dice).to_have_count(6)
    expect(phone.locator("#keep")).to_have_text("Pick dice that may be kept")
    expect(phone.locator("#keep")).to_be_disabled()
    for i in range(3):
        dice.nth(i).click()
    expect(phone.locator("#keep")).to_have_text("Keep 1 1 1")
    phone.click("#keep")
    expect(phone.locator("#turn-box")).to_contain_text("Turn total: 1000")
    phone.get_by_role("button", name="Bank 1000").click()
    expect(phone.locator(".players li").first.locator(".score")).to_have_text("1000")
    phone.click("#tab-history")
    expect(phone.locator("#history-list li")).to_have_count(3)
    expect(phone.locator("#history-list li").first).to_have_text("Ann: banked")
    shoot(phone, "history")
    phone.click("#history-undo")
    expect(phone.locator("#history-list li")).to_have_count(2)
    phone.click("#tab-board")
    expect(phone.locator(".players li").first.locator(".score")).to_have_text("0")
    expect(phone.locator("#turn-box")).to_contain_text("Turn total: 1000")
    assert served.table.state_json()["can_redo"] is True


def test_a_throw_is_fixed_from_the_history_turns_later(served: Served, phone: Any) -> None:
    """Ann's throw was misread (its 4 a 6) and she kept and banked: seen on Bob's turn, it is
    fixed from the history; her keep and bank stand. A fix her keep no longer follows is
    refused, saying which step and what to do, and changes nothing."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    served.table.on_reading(reading([1, 1, 5, 2, 3, 4]), settled_now=True)
    served.post("/api/actions", {"keep": [1, 1, 5]})
    served.post("/api/actions", {"bank": True})
    phone.click("#tab-history")
    steps = phone.locator("#history-list li")
    expect(steps).to_have_count(3)
    expect(steps.locator("button.fix")).to_have_count(2)  # the throw and the set-aside
    phone.get_by_role("button", name="Fix step 1").click()
    # The throw as it stands is filled in: the misread 4 is taken out, the 6 tapped in.
    expect(phone.locator("#roll-dice .die")).to_have_text(["1", "1", "2", "3", "4", "5"])
    phone.get_by_role("button", name="Take out die 5 (4)").click()
    phone.click("#roll-faces button[value='6']")
    phone.click("#roll-ok")
    expect(steps.last).to_contain_text("1 1 2 3 5 6")
    assert served.table.history is not None
    assert served.table.history.actions == [Roll([1, 1, 2, 3, 5, 6]), Keep([1, 1, 5]), Bank()]
    shoot(phone, "history-fix")
    no_horizontal_scroll(phone)
    phone.get_by_role("button", name="Fix step 1").click()
    for _ in range(6):  # a whole other throw: every die taken out, then typed
        phone.locator("#roll-dice .die").first.click()
    expect(phone.locator("#roll-count")).to_have_text("0 of 6")
    for face in (2, 2, 3, 4, 6, 6):
        phone.click(f"#roll-faces button[value='{face}']")
    phone.click("#roll-ok")
    expect(phone.locator("#toast")).to_contain_text(
        "With step 1 fixed, step 2 no longer follows the rules: undo back to step 2 first,"
        " then fix step 1."
    )
    assert served.table.history.actions[0] == Roll([1, 1, 2, 3, 5, 6])


def test_a_figure_written_into_the_wrong_category_is_fixed_by_choosing(
    served: Served, phone: Any
) -> None:
    """Generał: Ann wrote 2 2 2 5 5 as twos and later 3 3 6 6 6 as the full house; seen on
    Bob's turn, her first figure is fixed by choosing the full house, with what it writes.
    Her later full house takes the twos she left (0), and Bob's sixes stand."""
    served.new_game("general", ["Ann", "Bob"])
    for action in (
        {"roll": [2, 2, 2, 5, 5]},
        {"score": "twos"},
        {"roll": [1, 3, 4, 6, 6]},
        {"score": "sixes"},
        {"roll": [3, 3, 6, 6, 6]},
        {"score": "full_house"},
    ):
        served.post("/api/actions", action)
    phone.click("#tab-history")
    steps = phone.locator("#history-list li")
    expect(steps).to_have_count(6)
    phone.get_by_role("button", name="Fix step 2").click()
    dialog = phone.locator("#choice-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#choice-was")).to_contain_text("wrote Twos")
    full = dialog.get_by_role("button", name="Write Full house, 25 points")
    expect(dialog.locator("#choice-hint")).to_be_visible()
    expect(dialog.locator("#choice-list button", has_text="Twos")).to_have_count(0)
    shoot(phone, "history-choose")
    no_horizontal_scroll(phone)
    full.click()
    expect(steps.nth(4)).to_contain_text("Full house")  # newest first: step 2 is fifth
    assert served.table.history is not None
    assert served.table.history.actions[1] == Score("full_house")
    assert served.table.history.actions[5] == Score("twos")
    assert [p["score"] for p in served.table.state_json()["players"]] == [25, 12]


def test_a_set_aside_with_nothing_else_to_choose_says_so(served: Served, phone: Any) -> None:
    """Kymppitonni: the lone 1 of a throw set aside, five dice thrown again: no other
    set-aside leaves five to throw, and the phone says what to do instead."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    for action in ({"roll": [1, 2, 3, 4, 6, 6]}, {"keep": [1]}, {"roll": [2, 2, 3, 4, 6]}):
        served.post("/api/actions", action)
    phone.click("#tab-history")
    phone.get_by_role("button", name="Fix step 2").click()
    expect(phone.locator("#toast")).to_contain_text(
        "Nothing else fits step 2 with the later steps as they are: undo back to it to change it."
    )
    expect(phone.locator("#choice-dialog")).to_be_hidden()


def test_the_forbidden_numbers_misread_are_typed_again_from_the_history(
    served: Served, phone: Any
) -> None:
    """Na zakázaná čísla: the set-up throw read 2 and 4 where it showed 2 and 3; seen after
    the first throw, it is typed again, and that throw is scored with 3 forbidden."""
    served.new_game("zakazana-cisla", ["Ann", "Bob"])
    served.post("/api/actions", {"forbidden": [2, 4]})
    served.post("/api/actions", {"roll": [1, 3, 4, 5, 6, 6]})
    phone.click("#tab-history")
    phone.get_by_role("button", name="Fix step 1").click()
    phone.get_by_role("button", name="Take out die 2 (4)").click()
    phone.click("#roll-faces button[value='3']")
    phone.click("#roll-ok")
    expect(phone.locator("#history-list li").last).to_contain_text("3")
    assert served.table.history is not None
    assert served.table.history.actions[0] == Forbidden([2, 3])
    assert served.table.history.actions[1] == Roll([1, 3, 4, 5, 6, 6])


def test_the_photo_of_the_throw_shows_which_die_is_which(served: Served, phone: Any) -> None:
    """Six dice read by the shipped reader from a camera frame: the board opens the frame with
    each die boxed and numbered as the board numbers them, and a die tapped there is corrected
    as on the board. A die said to be no die is drawn so (grey) the next time; without the PIN
    the photo is refused, and with no frame there is none to show."""
    import cv2

    from pipcam.vision_cli import build_reader
    from vision.annotate import COLOURS
    from vision.synthetic import make_frame, six_dice

    def fetched() -> np.ndarray[Any, Any]:
        r = served.pinned.get("/api/photo.jpg")
        assert (r.status_code, r.headers["content-type"]) == (200, "image/jpeg"), r.text
        assert r.headers["x-frame-size"] == "1280x960"
        picture = cv2.imdecode(np.frombuffer(r.content, np.uint8), cv2.IMREAD_COLOR)
        assert picture is not None
        return np.asarray(picture, np.int16)

    served.seen = None
    assert served.pinned.get("/api/photo.jpg").status_code == 404
    served.new_game("kymppitonni", ["Ann", "Bob"])
    served.table.camera_status("ok")
    dice = six_dice(1280, 960, seed=4)
    frame = make_frame(1280, 960, dice, tray="green", seed=4)
    read = build_reader().read(frame)
    assert sorted(d.value or 0 for d in read.dice) == sorted(d.value for d in dice)
    rid = served.table.on_reading(read, settled_now=True)
    assert rid is not None
    served.seen = (rid, frame)
    try:
        assert httpx.get(f"{served.base}/api/photo.jpg").status_code == 401
        phone.click("#photo-open")
        dialog = phone.locator("#photo-dialog")
        expect(dialog).to_be_visible()
        image = phone.locator("#photo-image")
        expect(image).to_have_attribute("alt", "The throw as the camera saw it")
        assert phone.evaluate("() => document.getElementById('photo-image').naturalWidth") == 1280
        shoot(phone, "throw-photo")
        # Die 2 tapped on the photo opens the board's correction of die 2.
        shown = image.bounding_box()
        assert shown is not None
        a0, b0, a1, b1 = read.dice[1].box
        image.click(
            position={
                "x": (a0 + a1) / 2 / 1280 * shown["width"],
                "y": (b0 + b1) / 2 / 960 * shown["height"],
            }
        )
        expect(dialog).to_be_hidden()
        expect(phone.locator("#die-title")).to_have_text(f"Die 2 (read as {read.dice[1].value})")
        phone.click("#die-dialog button[value='']")  # cancelled: nothing changes
        # Die 1 is boxed in the colour of a sure read; said to be no die, it is boxed grey.
        x0, y0, x1, y1 = read.dice[0].box
        side = (x0, (y0 + y1) // 2)
        assert np.abs(fetched()[side[1], side[0]] - COLOURS["ok"]).max() <= 40
        served.post("/api/correct", {"die": 0, "value": 0})
        assert np.abs(fetched()[side[1], side[0]] - COLOURS["no_die"]).max() <= 40
        # Given its face back: the table forgets the place, as it would for the next tests.
        served.post("/api/correct", {"die": 0, "value": read.dice[0].value})
    finally:
        served.seen = None


def dice_of(served: Served, step: int) -> list[dict[str, Any]]:
    """The dice of the photo of a history step, as the players left them."""
    dice: list[dict[str, Any]] = served.pinned.get(f"/api/history/{step}/dice").json()["dice"]
    return dice


def test_the_history_shows_the_photo_of_each_throw_the_camera_read(
    served: Served, phone: Any
) -> None:
    """Generał: two throws read by the shipped reader, a figure typed between them. The
    history has a photo on each throw read (the first from the photos the table keeps), none
    on the figure. A die tapped on the earlier photo fixes that throw by its face (no "no die
    there": that throw is typed), and the photo then shows it so. Without the PIN, or for a
    throw with no photo, there is none."""
    from pipcam.photos import photo_path
    from pipcam.vision_cli import build_reader
    from vision.synthetic import make_frame, six_dice

    served.new_game("general", ["Ann", "Bob"])
    served.table.camera_status("ok")
    reader = build_reader()
    frames = [
        make_frame(1280, 960, six_dice(1280, 960, seed=seed)[:5], tray="green", seed=seed)
        for seed in (8, 9)
    ]
    first = served.table.on_reading(reader.read(frames[0]), settled_now=True)
    assert first is not None
    assert served.table.state_json()["dice"], served.table.state_json()["table"]
    PhotoKeeper(served.photos).keep(first, frames[0])
    served.table.photos_kept(1)
    served.post("/api/actions", {"score": "chance"})
    second = served.table.on_reading(reader.read(frames[1]), settled_now=True)
    assert second is not None
    served.seen = (second, frames[1])
    try:
        phone.click("#tab-history")
        steps = phone.locator("#history-list li")
        expect(steps).to_have_count(3)
        expect(steps.locator("button.photo")).to_have_count(2)
        expect(phone.locator("#history-list li[value='2'] button.photo")).to_have_count(0)
        phone.get_by_role("button", name="The photo of step 1").click()
        dialog = phone.locator("#photo-dialog")
        expect(dialog).to_be_visible()
        expect(phone.locator("#photo-hint")).to_contain_text("tap one read wrong to fix the throw")
        assert phone.evaluate("() => document.getElementById('photo-image').naturalWidth") == 1280
        shoot(phone, "history-photo-open")
        # Die 2 of Ann's throw tapped on its photo: its face chosen fixes her throw.
        (die, *_) = served.pinned.get("/api/history/0/dice").json()["dice"][1:]
        was, box = die["value"], die["box"]
        face = was % 6 + 1
        shown = phone.locator("#photo-image").bounding_box()
        assert shown is not None
        phone.locator("#photo-image").click(
            position={
                "x": (box[0] + box[2]) / 2 / 1280 * shown["width"],
                "y": (box[1] + box[3]) / 2 / 960 * shown["height"],
            }
        )
        expect(dialog).to_be_hidden()
        expect(phone.locator("#die-title")).to_have_text(f"Die 2 (read as {was})")
        expect(phone.locator("#die-no-die")).to_be_hidden()
        assert served.table.history is not None
        before = served.table.history.actions[0]
        phone.click(f"#die-dialog button[value='{face}']")
        deadline = time.monotonic() + 10
        while served.table.history.actions[0] == before:
            assert time.monotonic() < deadline, "the tapped die fixed nothing"
            time.sleep(0.05)
        throw = served.table.history.actions[0]
        assert isinstance(throw, Roll)
        now = [d["value"] for d in dice_of(served, 0)]
        assert now[1] == face  # the photo is labelled at the die tapped
        assert sorted(throw.dice) == sorted(now)
        sheet = served.table.state_json()["sheets"][0]["columns"][0]["boxes"]
        assert sheet["chance"] == sum(throw.dice)  # her chance, written again from it
        expect(steps.first).to_contain_text("Bob")  # the history shown again, newest first
        phone.get_by_role("button", name="The photo of step 3").click()
        expect(dialog).to_be_visible()
        phone.click("#photo-dialog button[value='']")
        earlier = f"/api/photo.jpg?reading={first}"
        r = served.pinned.get(earlier)
        assert (r.status_code, r.headers["x-frame-size"]) == (200, "1280x960")
        assert httpx.get(f"{served.base}{earlier}").status_code == 401
        r = served.pinned.get(f"/api/photo.jpg?reading={second + 1000}")
        assert r.status_code == 404
        assert "keep_photos" in r.json()["detail"]
        shoot(phone, "history-photos")
    finally:
        served.seen = None
        kept = photo_path(served.photos, first)
        for path in (kept, kept.with_suffix(".json")):
            path.unlink(missing_ok=True)


def test_the_history_view_lists_earlier_games(served: Served, phone: Any) -> None:
    """A game that ended is listed under earlier games once the next one starts, newest
    first, with its scores, its winner and its transcript; a game left is marked so."""
    from tests.pipcam.test_table import play_to_the_end

    served.new_game("kymppitonni", ["Ann", "Bob"], {"target": 300})
    play_to_the_end(served.table)
    winner = served.table.state_json()["winners"][0]
    served.new_game("general", ["Cy", "Di"])
    served.post("/api/actions", {"roll": [1, 2, 3, 4, 5]})
    served.new_game("kymppitonni", ["Ann", "Bob"])
    phone.click("#tab-history")
    newest = phone.locator("#earlier-list li")
    expect(newest.first).to_contain_text("Generał")
    expect(newest.first.locator(".tag")).to_have_text("left unfinished")
    expect(newest.nth(1)).to_contain_text("Kymppitonni")
    expect(newest.nth(1).locator(".tag")).to_have_count(0)
    expect(newest.nth(1).locator(".earlier-scores")).to_contain_text(f"🏆 {winner}")
    link = newest.nth(1).get_by_role("link", name="transcript")
    with phone.expect_download() as download:
        link.click()
    text = Path(download.value.path()).read_text()
    assert text.startswith('{"game": "kymppitonni", "players": ["Ann", "Bob"]')
    shoot(phone, "earlier-games")
    no_horizontal_scroll(phone)


def test_a_pick_outlives_updates_that_leave_the_throw_as_it_was(served: Served, phone: Any) -> None:
    """Two dice picked stay picked while the table reports other things (a photo kept, the
    camera watching the tray, a camera status): Keep keeps them. The next throw starts afresh."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    served.table.camera_status("ok")
    served.post("/api/actions", {"roll": [1, 2, 3, 4, 6, 1]})
    dice = phone.locator("#table-dice .die")
    expect(dice).to_have_text(["1", "1", "2", "3", "4", "6"])
    dice.nth(0).click()
    dice.nth(1).click()
    expect(phone.locator("#keep")).to_have_text("Keep 1 1")
    served.table.photos_kept(3)
    expect(phone.locator("#photos-note")).to_be_visible()
    served.table.on_reading(reading([2, 2]), settled_now=False)
    expect(phone.locator("#dice-read .die")).to_have_count(2)
    served.table.camera_status("failed")
    expect(phone.locator(".problem.soft")).to_be_visible()
    expect(dice.nth(0)).to_have_attribute("aria-pressed", "true")
    expect(dice.nth(1)).to_have_attribute("aria-pressed", "true")
    expect(phone.locator("#keep")).to_have_text("Keep 1 1")
    phone.click("#keep")
    expect(phone.locator("#turn-box")).to_contain_text("Turn total: 200")
    assert served.table.state_json()["turn"]["kept"] == [[1, 1]]
    served.post("/api/actions", {"roll": [1, 2, 3, 5]})
    expect(dice).to_have_text(["1", "2", "3", "5"])
    expect(phone.locator("#table-dice .die[aria-pressed='true']")).to_have_count(0)
    served.table.camera_status("ok")


def test_a_double_tap_undoes_once(served: Served, phone: Any) -> None:
    """Two quick taps on Undo send one undo: the second tap meets the first still on its way
    (and, sent anyway, would name a version of the game that is gone)."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    served.post("/api/actions", {"roll": [1, 1, 1, 2, 3, 6]})
    served.post("/api/actions", {"keep": [1, 1, 1]})
    served.post("/api/actions", {"bank": True})
    expect(phone.locator(".players li").first.locator(".score")).to_have_text("1000")
    phone.locator("#undo").dblclick()
    expect(phone.locator(".players li").first.locator(".score")).to_have_text("0")
    phone.wait_for_timeout(300)  # a second undo, had it been sent, would have landed by now
    assert served.table.state_json()["actions"] == 2


def test_score_a_category_by_tapping_its_row(served: Served, phone: Any) -> None:
    """Generał: after a throw, tapping the Full house row writes 25."""
    served.new_game("general", ["Ann", "Bob"])
    served.table.on_reading(reading([2, 2, 5, 5, 5]), settled_now=True)
    row = phone.locator("tr[data-row='full_house']")
    expect(row.locator("td.preview")).to_have_text("25")
    row.locator("button").click()
    expect(row.locator("td").first).to_have_text("25")
    expect(phone.locator("#status")).to_have_text("Bob throws 5 dice")


def test_switch_language(served: Served, rig: Rig) -> None:
    """A Polish browser gets Polish; switched to Czech it stays Czech after a reload."""
    served.new_game("drapky", ["Ann", "Bob"])
    page = open_page(rig, lang="pl-PL")
    try:
        expect(page.locator("#tab-board")).to_have_text("Tablica")
        expect(page.locator("#status")).to_have_text("Ann rzuca 6 kośćmi")
        expect(page.locator("#title")).to_have_text("Drápky")
        page.select_option("#lang", "cs")
        expect(page.locator("#tab-board")).to_have_text("Tabulka")
        expect(page.locator("tr[data-row='hiroshima'] th")).to_have_text("Hirošima")
        page.reload(wait_until="domcontentloaded")
        expect(page.locator("#status")).to_have_text("Ann hází 6 kostkami")
        expect(page.locator("#lang")).to_have_value("cs")
        shoot(page, "language-cs")
        # Czech counts 1 kostka, 2-4 kostky, 5 and more kostek (the browser's plural rules).
        said = page.evaluate(
            "import('/static/i18n.js').then(m => [1, 3, 5, 22].map(n => m.t('teach.missed', {n})))"
        )
        assert [s.split(". ")[0] for s in said] == [
            "Kamera na této fotce přehlédla kostku",
            "Kamera na této fotce přehlédla 3 kostky",
            "Kamera na této fotce přehlédla 5 kostek",
            "Kamera na této fotce přehlédla 22 kostek",
        ]
    finally:
        close(page)


ENGLISH_EVENT = re.compile(r"threw|set aside|turn total|dice left|banked|no combination")


@pytest.mark.parametrize(
    ("lang", "threw", "aside"),
    [
        (
            "cs-CZ",
            "Ann: hod 1 1 2 3 4 5",
            "Ann odkládá 1 1 5 za 250: body v tahu 250, zbývá kostek: 3",
        ),
        (
            "pl-PL",
            "Ann: rzut 1 1 2 3 4 5",
            "Ann odkłada 1 1 5 za 250: suma tury 250, zostało kości: 3",
        ),
        (
            "fi-FI",
            "Ann heitti 1 1 2 3 4 5",
            "Ann pani sivuun 1 1 5, 250 pistettä: vuoron pisteet 250, noppia jäljellä: 3",
        ),
        (
            "nl-NL",
            "Ann gooide 1 1 2 3 4 5",
            "Ann legde 1 1 5 apart voor 250: beurttotaal 250, dobbelstenen over: 3",
        ),
        (
            "en-GB",
            "Ann threw 1 1 2 3 4 5",
            "Ann set aside 1 1 5 for 250: turn total 250, 3 dice left",
        ),
    ],
    ids=["cs", "pl", "fi", "nl", "en"],
)
def test_the_turn_box_says_what_happened_in_the_pages_language(
    served: Served, rig: Rig, lang: str, threw: str, aside: str
) -> None:
    """A throw and a set-aside are told in the phone's language, not in the engine's English."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    page = open_page(rig, lang=lang)
    try:
        served.post("/api/actions", {"roll": [1, 1, 5, 2, 3, 4]})
        event = page.locator("#turn-box .event")
        expect(event).to_have_text(threw)
        served.post("/api/actions", {"keep": [1, 1, 5]})
        expect(event).to_have_text(aside)
        if not lang.startswith("en"):
            assert not ENGLISH_EVENT.search(page.locator("#turn-box").inner_text())
    finally:
        close(page)


def test_a_pass_in_1000_is_told_in_the_pages_language(served: Served, rig: Rig) -> None:
    """1000's bank (a pass) says the score before and after, in Czech too."""
    served.new_game("thousand", ["Ann", "Bob"])
    page = open_page(rig, lang="cs-CZ")
    try:
        served.post("/api/actions", {"roll": [5, 5, 5, 2, 3]})
        served.post("/api/actions", {"bank": True})
        expect(page.locator("#turn-box .event")).to_have_text("Ann zapisuje 50: 0 → 50")
    finally:
        close(page)


def test_refusals_and_problems_are_told_in_the_pages_language(served: Served, rig: Rig) -> None:
    """A refusal from the server (a change from an out-of-date screen) and the table's problem
    (seven dice read where six are thrown) are worded in Polish on a Polish phone; the English
    stays in the server's detail."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    page = open_page(rig, lang="pl-PL")
    try:
        page.evaluate("import('/static/api.js').then(m => m.post('/api/undo?seen=0'))")
        expect(page.locator("#toast")).to_have_text(
            "Teraz niedozwolone: Gra zmieniła się, odkąd pokazał ją twój ekran (inny telefon,"
            " przycisk albo kamera były szybsze): spójrz jeszcze raz i spróbuj ponownie."
        )
        served.table.on_reading(reading([1, 1, 5, 2, 3, 4, 6]), settled_now=True)
        expect(page.locator("#problem")).to_have_text(
            "W strefie rzutu jest kości: 7, a rzucić trzeba było 6: wyjmij to, co tam nie"
            " pasuje, popraw odczyt albo wpisz rzut na telefonie."
        )
        assert served.table.state_json()["table"]["problem"].startswith(
            "7 dice are in the roll zone"
        )
        # Taken out, a die that does not score is refused: both sentences in Polish.
        served.table.on_reading(reading([1, 1, 5, 2, 3, 4]), settled_now=True)
        served.table.on_reading(reading([1, 5, 3, 4]), settled_now=True)
        expect(page.locator("#problem")).to_have_text(
            "Kamera odczytała 1 3 4 5. Nie można odłożyć 1 2: każda odłożona kość musi"
            " punktować. Z 1 1 2 3 4 5 najlepiej odłożyć 1 1 5 za 250."
        )
        shoot(page, "problem-pl")
        page.select_option("#lang", "en")
        expect(page.locator("#problem")).to_have_text(
            "The camera read 1 3 4 5. 1 2 cannot be set aside: every die set aside must score."
            " The best set-aside of 1 1 2 3 4 5 is 1 1 5 for 250."
        )
    finally:
        close(page)


def test_a_set_aside_the_camera_did_not_see_is_one_tap(served: Served, rig: Rig) -> None:
    """Two of 1 1 5 taken out as the other four were thrown, out of the camera's sight: the
    phone asks which, in its language, with a button for each; one tap enters the set-aside
    and the throw the camera read."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    page = open_page(rig, lang="fi-FI")
    try:
        served.table.on_reading(reading([1, 1, 5, 2, 3, 4]), settled_now=True)
        thrown = FakeReading(
            tuple(
                FakeDie(v, box=(500 + 60 * i, 400, 540 + 60 * i, 440))
                for i, v in enumerate([6, 2, 6, 3])
            )
        )
        served.table.on_reading(thrown, settled_now=True)
        expect(page.locator("#problem")).to_contain_text("(2 3 6 6)")
        expect(page.locator("#problem")).to_contain_text("1 1 / 1 5")
        choices = page.locator("#aside-choices button")
        expect(choices).to_have_count(2)
        shoot(page, "which-aside-fi")
        choices.nth(1).click()
        expect(page.locator("#problem")).to_have_count(0)
        history = served.table.history
        assert history is not None
        end = time.monotonic() + 5
        while len(history) < 3 and time.monotonic() < end:  # the throw follows the set-aside
            time.sleep(0.05)
        assert history.actions == [Roll([1, 1, 5, 2, 3, 4]), Keep([1, 5]), Roll([2, 3, 6, 6])]
    finally:
        close(page)


def test_a_general_refusal_is_told_in_the_pages_language(served: Served, rig: Rig) -> None:
    """Generał's own refusal (all five dice held) and the generic one (an action not allowed
    now, with what is) are worded in Czech, the actions with the page's own words."""
    served.new_game("general", ["Ann", "Bob"])
    page = open_page(rig, lang="cs-CZ")
    try:
        post = "(body) => import('/static/api.js').then(m => m.post('/api/actions', body))"
        page.evaluate(post, {"stop": True})
        expect(page.locator("#toast")).to_have_text(
            "Teď není dovoleno: „Skončit a přenést hody“ teď nejde. Jde: Hoď 5 kostkami."
        )
        served.post("/api/actions", {"roll": [2, 2, 5, 5, 5]})
        page.evaluate(post, {"keep": [2, 2, 5, 5, 5]})
        expect(page.locator("#toast")).to_have_text(
            "Teď není dovoleno: Nechat si všech 5 kostek nejde: nechte si nejvýš 4 a se zbytkem"
            " hoďte, nebo zapište kategorii."
        )
        served.post("/api/actions", {"score": "full_house"})
        served.post("/api/actions", {"roll": [1, 2, 3, 4, 6]})
        served.post("/api/actions", {"score": "chance"})
        served.post("/api/actions", {"roll": [2, 2, 3, 3, 3]})
        page.evaluate(post, {"score": "full_house"})
        expect(page.locator("#toast")).to_have_text(
            "Teď není dovoleno: Kategorie Full house už je zapsaná (25)."
        )
        shoot(page, "refusal-general-cs")
    finally:
        close(page)


def test_a_triangle_refusal_is_told_in_the_pages_language(served: Served, rig: Rig) -> None:
    """Driehoeken's refusals on a Dutch phone: a stone whose side does not match (named with the
    page's words for the side and the rotation), and a pass while the stone fits."""
    served.new_game("triangles", ["Ann", "Bob"])
    served.post("/api/actions", {"draw": "123"})
    served.post("/api/actions", {"place": {"stone": "123", "cell": "U(0,0)", "rotation": 0}})
    served.post("/api/actions", {"draw": "345"})
    page = open_page(rig, lang="nl-NL")
    try:
        expect(page.locator("#status")).to_have_text("Bob legt de steen")
        post = "(body) => import('/static/api.js').then(m => m.post('/api/actions', body))"
        page.evaluate(post, {"place": {"stone": "345", "cell": "D(0,0)", "rotation": 0}})
        expect(page.locator("#toast")).to_have_text(
            "Nu niet toegestaan: 345 op D(0,0), draaiing 0: de linkerzijde (5) zou tegen de 3"
            " van U(0,0) komen. Zijden die elkaar raken moeten gelijk zijn."
        )
        shoot(page, "refusal-triangles-nl")
        page.evaluate(post, {"pass": True})
        expect(page.locator("#toast")).to_have_text(
            "Nu niet toegestaan: 345 past, dus passen mag niet: bijvoorbeeld op D(0,0),"
            " draaiing 1 (0 ptn)."
        )
    finally:
        close(page)


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        (
            "cs-CZ",
            "Pole „jméno hráče 2“ je příliš dlouhé (nejvýš znaků: 40): zkraťte ho"
            " a zkuste to znovu.",
        ),
        (
            "pl-PL",
            "Pole „imię gracza 2” jest za długie (maksymalna liczba znaków: 40):"
            " skróć je i spróbuj ponownie.",
        ),
        (
            "fi-FI",
            "Kenttä ”pelaajan 2 nimi” on liian pitkä (enintään 40 merkkiä):"
            " lyhennä sitä ja yritä uudestaan.",
        ),
        (
            "nl-NL",
            "Het veld ‘naam van speler 2’ is te lang (hoogstens 40 tekens): maak"
            " het korter en probeer het nog eens.",
        ),
        (
            "ru-RU",
            "Поле «имя игрока 2» слишком длинное (максимум символов: 40):"
            " сократите его и попробуйте ещё раз.",
        ),
        (
            "en-GB",
            "The field “name of player 2” is too long (at most 40 characters):"
            " shorten it and try again.",
        ),
    ],
    ids=["cs", "pl", "fi", "nl", "ru", "en"],
)
def test_a_malformed_request_is_told_in_the_pages_language(
    served: Served, rig: Rig, lang: str, said: str
) -> None:
    """FastAPI's 422 (a name longer than the table takes) names the field and what to do in the
    phone's language, not in pydantic's English, which stays in the detail for API clients."""
    served.new_game("sekvence", ["Ann", "Bob"])
    page = open_page(rig, lang=lang)
    try:
        post = "(body) => import('/static/api.js').then(m => m.post('/api/games', body))"
        page.evaluate(post, {"game": "sekvence", "players": ["Ann", "B" * 41]})
        expect(page.locator("#toast")).to_have_text(said)
        assert "String should have" not in page.locator("#toast").inner_text()
    finally:
        close(page)


def test_a_full_disk_is_told_in_the_pages_language(
    served: Served, rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change the table cannot keep (its disk is full) is told on a Finnish phone in Finnish,
    as the refusal (503) and as the table's problem; the English with the path goes to the log."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    store = served.table.store
    real = store._transaction

    @contextlib.contextmanager
    def full(*, write: bool) -> Iterator[Any]:
        if write:
            error = sqlite3.OperationalError("database or disk is full")
            error.sqlite_errorname = "SQLITE_FULL"
            raise store._failure(error) from error
        with real(write=write) as db:
            yield db

    page = open_page(rig, lang="fi-FI")
    try:
        monkeypatch.setattr(store, "_transaction", full)
        post = "(body) => import('/static/api.js').then(m => m.post('/api/actions', body))"
        page.evaluate(post, {"roll": [1, 1, 5, 2, 3, 4]})
        said = (
            "Pöydän levy on täynnä, joten se ei voi tallentaa peliä: vapauta levyltä tilaa"
            " (pöydän loki kertoo, mistä) ja yritä uudestaan."
        )
        expect(page.locator("#toast")).to_have_text(said)
        expect(page.locator("#problem")).to_have_text(said)
        assert "is full" in served.table.state_json()["table"]["problem"]
    finally:
        monkeypatch.undo()
        close(page)
    served.new_game("kymppitonni", ["Ann", "Bob"])  # a write that succeeds takes the problem back


@pytest.mark.parametrize(
    ("lang", "game", "rolls", "said"),
    [
        (
            "cs-CZ",
            "thousand",
            [[5, 5, 5, 2, 3], "bank", [2, 3, 4, 6, 6], [2, 3, 4, 6, 6]],
            "Ann: hod 2 3 4 6 6, žádná kombinace; šroub 1 z 3",
        ),
        (
            "fi-FI",
            "kymppitonni",
            [[2, 2, 2, 2, 3, 4]],
            "Ann heitti neljä kakkosta: vuoro vaihtuu, 0 pistettä",
        ),
    ],
    ids=["bolt-cs", "four-twos-fi"],
)
def test_a_games_own_events_are_told_in_the_pages_language(
    served: Served, rig: Rig, lang: str, game: str, rolls: list[Any], said: str
) -> None:
    """A bolt in 1000 and four 2s in Kymppitonni are data the page words, not English."""
    served.new_game(game, ["Ann", "Bob"])
    page = open_page(rig, lang=lang)
    try:
        for roll in rolls:
            served.post("/api/actions", {"bank": True} if roll == "bank" else {"roll": roll})
        expect(page.locator("#turn-box .event")).to_have_text(said)
    finally:
        close(page)


def test_a_russian_phone_follows_1000_in_russian(served: Served, rig: Rig) -> None:
    """A ru-RU browser gets the page in Russian, in the words players of 1000 use (болт, бочка,
    яма): the status line, the turn's events, the standing, a refusal, and dates (the tuned
    model's day, an earlier game's start); counts take Russian's three forms (1 кость, 3 кости,
    5 костей); 360 px wide, with no tab cut off."""
    served.new_game("thousand", ["Ann", "Bob"])
    served.post("/api/actions", {"roll": [5, 5, 5, 2, 3]})
    served.new_game("thousand", ["Ann", "Bob"])  # the first is left unfinished
    page = open_page(rig, lang="ru-RU")
    try:
        expect(page.locator("#lang")).to_have_value("ru")
        assert page.evaluate("document.documentElement.lang") == "ru"
        expect(page.locator("#tab-board")).to_have_text("Счёт")
        expect(page.locator("#title")).to_have_text("Тысяча")
        status, event = page.locator("#status"), page.locator("#turn-box .event")
        expect(status).to_have_text("Ann бросает 5 костей")
        # Ann opens with 50; Bob, not yet open, burns without a bolt; Ann burns and gets one.
        for roll in [[5, 5, 5, 2, 3], "bank", [2, 3, 4, 6, 6], [2, 3, 4, 6, 6]]:
            served.post("/api/actions", {"bank": True} if roll == "bank" else {"roll": roll})
        expect(event).to_have_text("Ann: выпало 2 3 4 6 6, ни одной комбинации; болт 1 из 3")
        expect(status).to_have_text("Bob бросает 5 костей")
        rows = page.locator("table.standing tbody tr")
        expect(rows.nth(0).locator("td.bolts")).to_have_attribute("aria-label", "1 болт")
        expect(rows.nth(1).locator("td.notes")).to_have_text("игра не открыта")
        expect(page.locator("#board-body")).to_contain_text("Бочка: 880")
        served.post("/api/actions", {"roll": [1, 5, 2, 3, 6]})
        expect(event).to_have_text("Bob откладывает 1 5 за 15: за ход 15, осталось 3 кости")
        expect(status).to_have_text("Bob бросает 3 кости")
        served.post("/api/actions", {"roll": [1, 1, 4]})
        expect(event).to_have_text("Bob откладывает 1 1 за 20: за ход 35, осталась 1 кость")
        expect(status).to_have_text("Bob бросает 1 кость")
        assert not ENGLISH_EVENT.search(page.locator("#turn-box").inner_text())
        shoot(page, "language-ru")
        no_horizontal_scroll(page)
        page.evaluate("import('/static/api.js').then(m => m.post('/api/actions', {roll: [2, 3]}))")
        expect(page.locator("#toast")).to_have_text("Сейчас нельзя: Бросать нужно 1 кость, а не 2.")
        # One for 1 and 21, few for 2-4 and 22, many for 5-20 and 0 (Intl.PluralRules("ru")).
        said = page.evaluate(
            "import('/static/i18n.js').then(m => [1, 3, 5, 11, 21, 22, 0].map(n =>"
            " [m.t('phase.roll', {player: 'Ann', n}), m.t('turn.best', {n, dice: '1'})]))"
        )
        assert said == [
            ["Ann бросает 1 кость", "Лучшее прочтение: 1 очко (1)"],
            ["Ann бросает 3 кости", "Лучшее прочтение: 3 очка (1)"],
            ["Ann бросает 5 костей", "Лучшее прочтение: 5 очков (1)"],
            ["Ann бросает 11 костей", "Лучшее прочтение: 11 очков (1)"],
            ["Ann бросает 21 кость", "Лучшее прочтение: 21 очко (1)"],
            ["Ann бросает 22 кости", "Лучшее прочтение: 22 очка (1)"],
            ["Ann бросает 0 костей", "Лучшее прочтение: 0 очков (1)"],
        ]
        # Dates follow the page's language: the day a model was tuned, an earlier game's start.
        served.table.model_in_use("2026-11-27")
        try:
            expect(page.locator("#tuned-note")).to_have_text(
                "Камера распознаёт ваши кости моделью, дообученной на фото этого стола"
                " (с 27 ноября 2026 г.)."
            )
        finally:
            served.table.model_in_use(None)
        page.click("#tab-history")
        earlier = page.locator("#earlier-list li").first
        expect(earlier.locator(".tag")).to_have_text("не доиграна")
        when = earlier.locator(".earlier-head .muted").inner_text()
        assert re.fullmatch(r"\d{1,2} [а-я]+\.? \d{4} г\., \d{1,2}:\d{2}", when), when
        no_horizontal_scroll(page)
        # The longest tab, Статистика, in bold when open, is not cut off.
        page.click("#tab-stats")
        tabs = "[...document.querySelectorAll('nav.tabs a')]"
        cut_off = f"{tabs}.filter(a => a.scrollWidth > a.clientWidth).map(a => a.textContent)"
        assert page.evaluate(cut_off) == []
    finally:
        close(page)


def test_the_coach_gives_a_hint_where_the_player_has_a_choice(
    served: Served, phone: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the coach on, Hint shows the best play and what the others give up, and Do it takes
    it; there is no Hint where the only thing to do is throw, nor with the coach off."""
    monkeypatch.setattr(served.table, "coach", True)
    served.new_game("kymppitonni", ["Ann", "Bob"])
    hint = phone.get_by_role("button", name="Hint")
    expect(phone.locator("#type-roll")).to_be_visible()
    expect(hint).to_have_count(0)  # a turn's first throw: nothing to decide
    served.post("/api/actions", {"roll": [1, 1, 5, 2, 3, 4]})
    hint.click()
    coach = phone.locator("#coach")
    expect(coach.locator(".best")).to_have_text(
        "Best: Keep 1, then throw again (expected 399.5)", timeout=30_000
    )
    expect(coach.locator(".others li").first).to_have_text(
        "Keep 5, then throw again: 363.9 (−35.6)"
    )
    coach.get_by_role("button", name="Do it").click()
    expect(phone.locator("#turn-box")).to_contain_text("Turn total: 100")
    expect(coach).to_have_count(0)  # the advice was for the game as it was
    assert served.table.state_json()["turn"]["total"] == 100
    monkeypatch.setattr(served.table, "coach", False)
    served.post("/api/actions", {"roll": [5, 2, 3, 4, 6]})
    expect(phone.locator("#keep")).to_be_visible()
    expect(hint).to_have_count(0)


def test_a_hint_says_which_ways_come_to_the_same(
    served: Served, phone: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kymppitonni, 1500 in the turn and 1 1 5 2 2 3 showing: banking 1750 is best, and keeping
    1 1 5 then banking is the same choice, said under it rather than listed as another."""
    monkeypatch.setattr(served.table, "coach", True)
    served.new_game("kymppitonni", ["Ann", "Bob"])
    for action in (
        {"roll": [1, 1, 1, 5, 5, 5]},
        {"keep": [1, 1, 1, 5, 5, 5]},
        {"roll": [1, 1, 5, 2, 2, 3]},
    ):
        served.post("/api/actions", action)
    phone.get_by_role("button", name="Hint").click()
    coach = phone.locator("#coach")
    expect(coach.locator(".best")).to_have_text(
        "Best: Bank the turn (expected 1,750.0)", timeout=30_000
    )
    expect(coach.locator("#hint-same")).to_have_text("The same: Keep 1 1 5, then bank.")
    expect(coach.locator(".others li", has_text="Keep 1 1 5, then bank")).to_have_count(0)


def test_do_it_takes_a_keep_then_the_bank_that_wins(
    served: Served, phone: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """6 kostek to 1600: a straight kept whole must be confirmed by a throw of all six; that
    throw is a straight again, and keeping 1 5 then banking wins (no bank with the dice still
    showing). Do it does both."""
    monkeypatch.setattr(served.table, "coach", True)
    served.new_game("sest-kostek", ["Ann", "Bob"], {"target": 1600})
    straight = {"roll": [1, 2, 3, 4, 5, 6]}
    for action in (straight, {"keep": [1, 2, 3, 4, 5, 6]}, straight):
        served.post("/api/actions", action)
    phone.get_by_role("button", name="Hint").click()
    coach = phone.locator("#coach")
    expect(coach.locator(".best")).to_have_text(
        "Best: Keep 1 5, then bank: it wins the game", timeout=30_000
    )
    coach.get_by_role("button", name="Do it").click()
    expect(phone.locator("#status")).to_contain_text("Won by: Ann")
    state = served.table.state_json()
    assert (state["finished"], state["winners"]) == (True, ["Ann"])


def test_the_new_game_form_seats_as_many_as_the_game_needs(served: Served, phone: Any) -> None:
    """From a one-player game, the form for Generał (2+ players, RULES §2.1) has two seats."""
    served.new_game("sekvence", ["Ann"])
    phone.click("#tab-new")
    phone.select_option("#new-game", "sekvence")
    expect(phone.locator(".player-name")).to_have_count(1)
    phone.select_option("#new-game", "general")
    names = phone.locator(".player-name")
    expect(names).to_have_count(2)
    expect(names.nth(0)).to_have_value("Ann")
    phone.click("#start-game")
    expect(phone.locator(".players li")).to_have_count(2)
    assert served.table.state_json()["game"] == "general"


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("cs-CZ", "kdo první dosáhne tolika bodů, hned vyhrává"),
        ("pl-PL", "kto pierwszy zdobędzie tyle punktów, od razu wygrywa"),
        ("fi-FI", "ensimmäinen näin moneen pisteeseen yltävä voittaa heti"),
        ("nl-NL", "wie als eerste zoveel punten haalt, wint meteen"),
        ("ru-RU", "первый, кто наберёт столько очков, сразу побеждает"),
    ],
    ids=["cs", "pl", "fi", "nl", "ru"],
)
def test_the_new_game_form_says_what_options_do_in_the_pages_language(
    served: Served, rig: Rig, lang: str, said: str
) -> None:
    """Each option's help on the new-game form is in the phone's language, for every game: no
    engine doc (English) is left on the form."""
    served.new_game("sekvence", ["Ann", "Bob"])
    catalog = served.pinned.get("/api/catalog").json()
    page = open_page(rig, lang=lang)
    try:
        page.click("#tab-new")
        page.select_option("#new-game", "sekvence")
        expect(page.locator("#opt-target").locator("xpath=..").locator("small")).to_have_text(said)
        for game in catalog:
            page.select_option("#new-game", game["id"])
            shown = page.locator("#new-options small").all_inner_texts()
            assert len(shown) == len(game["options"])
            english = [o["doc"] for o in game["options"] if o["doc"] in shown]
            assert english == [], (game["id"], english)
    finally:
        close(page)


@pytest.mark.parametrize(
    ("lang", "name", "choice"),
    [
        ("cs-CZ", "Generał jako žolík", "volný"),
        ("pl-PL", "Generał jako joker", "dowolny"),
        ("fi-FI", "Generał jokerina", "vapaa"),
        ("nl-NL", "Generał als joker", "vrij"),
        ("ru-RU", "Generał как джокер", "свободный"),
    ],
    ids=["cs", "pl", "fi", "nl", "ru"],
)
def test_the_new_game_form_names_options_and_choices_in_the_pages_language(
    served: Served, rig: Rig, lang: str, name: str, choice: str
) -> None:
    """The new-game form names every option and every worded choice in the phone's language
    (its own words for every one, none left in the engine's English), and the game starts with
    the engine's value of the choice picked by its words."""
    served.new_game("general", ["Ann", "Bob"])
    catalog = served.pinned.get("/api/catalog").json()
    words = json.loads((I18N / f"{lang[:2]}.json").read_text(encoding="utf-8"))
    page = open_page(rig, lang=lang)
    try:
        page.click("#tab-new")
        page.select_option("#new-game", "general")
        joker = page.locator("#opt-general_joker")
        expect(joker.locator("xpath=..").locator("span")).to_have_text(name)
        for game in catalog:
            page.select_option("#new-game", game["id"])
            for option in game["options"]:
                key = f"{game['id']}.{option['name']}"
                label = page.locator(f"#opt-{option['name']}").locator("xpath=..").locator("span")
                expect(label).to_have_text(words[f"opt_name.{key}"])
                listed = page.locator(f"#opt-{option['name']} option").all_inner_texts()
                choices = option["choices"] or []
                assert listed == [words.get(f"opt_choice.{key}.{c}", str(c)) for c in choices]
        page.select_option("#new-game", "general")
        page.select_option("#opt-general_joker", label=choice)
        page.click("#start-game")
        expect(page.locator("#view-board")).to_be_visible()
    finally:
        close(page)
    assert served.table.header is not None
    assert served.table.header.options == {"general_joker": "free"}


@pytest.mark.parametrize(
    ("lang", "option", "names"),
    [
        (
            "cs-CZ",
            "Do volby „cíl“ patří celé číslo, ne „abc“.",
            "Jméno Ann je tu dvakrát: dejte každému vlastní jméno.",
        ),
        (
            "pl-PL",
            "Opcja „cel” przyjmuje liczbę całkowitą, a nie „abc”.",
            "Imię Ann jest podane dwa razy: nadaj każdemu inne imię.",
        ),
        (
            "fi-FI",
            "Asetukseen ”tavoite” käy kokonaisluku, ei ”abc”.",
            "Kahden pelaajan nimi on Ann: anna jokaiselle oma nimi.",
        ),
        (
            "nl-NL",
            "De optie ‘doel’ verwacht een geheel getal, niet ‘abc’.",
            "Twee spelers heten Ann: geef elk een eigen naam.",
        ),
        (
            "ru-RU",
            "Настройка «цель» принимает целое число, а не «abc».",
            "Двух игроков зовут Ann: дайте каждому своё имя.",
        ),
    ],
    ids=["cs", "pl", "fi", "nl", "ru"],
)
def test_a_new_game_the_rules_refuse_is_told_in_the_pages_language(
    served: Served, rig: Rig, lang: str, option: str, names: str
) -> None:
    """The new-game form's refusals from the rules (an option's value, two players of one name)
    are told in the phone's language, the option named as the form names it; nothing starts."""
    served.new_game("sekvence", ["Ann", "Bob"])
    page = open_page(rig, lang=lang)
    try:
        page.click("#tab-new")
        page.select_option("#new-game", "sekvence")
        page.fill("#opt-target", "abc")
        page.click("#start-game")
        expect(page.locator("#toast")).to_have_text(option)
        page.fill("#opt-target", "100")
        page.locator(".player-name").nth(1).fill("Ann")
        page.click("#start-game")
        expect(page.locator("#toast")).to_have_text(names)
    finally:
        close(page)
    assert [p["name"] for p in served.table.state_json()["players"]] == ["Ann", "Bob"]


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("cs-CZ", "{player} je v cíli (300) a kolo se dohrálo do konce."),
        ("pl-PL", "{player} osiąga cel (300), a runda została dograna do końca."),
        ("fi-FI", "{player} saavutti tavoitteen (300 pistettä), ja kierros pelattiin loppuun."),
        ("nl-NL", "{player} haalde het doel van 300 punten, en de ronde is uitgespeeld."),
        ("ru-RU", "{player} достигает цели (300), и круг доигран до конца."),
    ],
    ids=["cs", "pl", "fi", "nl", "ru"],
)
def test_why_a_game_ended_is_told_in_the_pages_language(
    served: Served, rig: Rig, lang: str, said: str
) -> None:
    """At the end of a game the board says why it ended (Kymppitonni: who reached the target,
    and the round played out), and so does the History view among the earlier games; a game
    that simply ran its last round says nothing more."""
    from tests.pipcam.test_table import play_to_the_end

    served.new_game("kymppitonni", ["Ann", "Bob"], {"target": 300})
    play_to_the_end(served.table)
    ending = served.table.state_json()["ending"]
    assert ending["code"] == "target_round"
    said = said.format(player=ending["params"]["player"])
    page = open_page(rig, lang=lang)
    try:
        expect(page.locator("#ending")).to_have_text(said)
        shoot(page, f"ending-{lang}")
        served.new_game("zakazana-cisla", ["Ann", "Bob"])
        page.click("#tab-history")
        expect(page.locator("#earlier-list li").first.locator(".earlier-ending")).to_have_text(said)
    finally:
        close(page)


def test_a_game_that_ran_its_last_round_says_no_more(served: Served, phone: Any) -> None:
    """Generał ends when every box is filled: the board names the winners, and no reason."""
    served.new_game("general", ["Ann", "Bob"])
    state = served.table.state_json()
    while not state["finished"]:
        scores = [a for a in state["legal"] if "score" in a]
        action = scores[0] if scores else {"roll": [6] * state["roll_size"]}
        state = served.table.act_json(action, source="phone")
    assert state["ending"]["code"] == "last_round"
    expect(phone.locator("#status")).to_contain_text("Game over")
    expect(phone.locator("#ending")).to_have_count(0)


def test_statistics(served: Served, phone: Any) -> None:
    """The scores chart has one line per player; the dice get counts and a verdict."""
    served.new_game("sekvence", ["Eva", "Jan"])
    for roll in ([1, 2, 3, 5, 5, 6], [2, 2, 4, 4, 6, 6], [1, 2, 3, 4, 5, 6]):
        served.post("/api/actions", {"roll": roll})
    phone.click("#tab-stats")
    expect(phone.locator("svg.chart polyline.series")).to_have_count(2)
    expect(phone.locator("svg.bars rect.bar")).to_have_count(6)
    stats = served.pinned.get("/api/stats").json()
    expect(phone.locator("#verdict")).to_contain_text(f"{stats['dice_read']} dice read")
    verdict = {"fair": "fair", "suspicious": "Suspicious", "too few dice": "Too few"}
    expect(phone.locator(".verdict-words")).to_contain_text(verdict[stats["verdict"]])
    shoot(phone, "statistics")
    no_horizontal_scroll(phone)


GAMES = [
    ("general", 17),
    ("kymppitonni", 14),
    ("thousand", 16),
    ("triangles", 15),
    ("jednicky-a-petky", 12),
    ("sest-kostek", 12),
    ("drapky", 16),
    ("sekvence", 7),
    ("zakazana-cisla", 6),
]


@pytest.mark.parametrize(("game", "steps"), GAMES, ids=[g for g, _ in GAMES])
def test_scoreboard_screenshot(served: Served, phone: Any, game: str, steps: int) -> None:
    """Each game mid-game on a 360-px phone: its sheet shows, nothing scrolls sideways."""
    players = ["Ann", "Bob", "Cyril"]
    served.new_game(game, players)
    actions = midgame(game, players, steps)
    for action in actions:
        served.post("/api/actions", action)
    rolls = [a["roll"] for a in actions if "roll" in a]
    if rolls:  # what the camera sees now, one die leaning on another
        served.table.on_reading(reading(rolls[-1], doubtful={0: "cocked"}), settled_now=False)
    expect(phone.locator(".players li")).to_have_count(3)
    expect(phone.locator("#sheet")).not_to_be_empty()
    phone.wait_for_timeout(150)  # the last event's repaint
    shoot(phone, f"scoreboard-{game}")
    no_horizontal_scroll(phone)
    scores = [int(s) for s in phone.locator(".players .score").all_inner_texts()]
    assert scores == [p["score"] for p in served.table.state_json()["players"]]


@pytest.mark.parametrize("game", ["kymppitonni", "general"])
def test_a_long_name_without_spaces_fits_the_screen(served: Served, phone: Any, game: str) -> None:
    """The longest name the API takes, with no space to break at, wraps or is cut with an
    ellipsis everywhere it shows: nothing sticks out of a 360-px screen."""
    long_name = "W" * 40
    served.new_game(game, [long_name, "Bob"])
    expect(phone.locator("#status")).to_contain_text(long_name)
    phone.wait_for_timeout(150)  # the last event's repaint
    no_horizontal_scroll(phone)
    overflow = phone.evaluate(
        "(e => e.scrollWidth - e.clientWidth)(document.getElementById('status'))"
    )
    assert overflow <= 0, f"the status line sticks out by {overflow} px"


def test_artifacts_are_ignored() -> None:
    """Screenshots never get committed: the artefacts folder ignores everything but itself."""
    ignore = (ARTIFACTS / ".gitignore").read_text().split()
    assert ignore == ["*", "!.gitignore"]


# -- the triangle game -----------------------------------------------------------------------------

TRIANGLE_OPENING = [  # a tester's game: Bob then turns up 005, which closes a ring at D(0,-1) only
    ("035", "U(0,0)", 0),
    ("345", "D(-1,0)", 2),
    ("044", "U(-1,0)", 2),
    ("245", "D(-1,-1)", 1),
    ("455", "U(0,-1)", 0),
]


def triangle_game(served: Served, hand: str) -> None:
    """Ann and Bob play the opening above; the player to move then turns up ``hand``."""
    served.new_game("triangles", ["Ann", "Bob"])
    for stone, cell, rotation in TRIANGLE_OPENING:
        served.post("/api/actions", {"draw": stone})
        served.post("/api/actions", {"place": {"stone": stone, "cell": cell, "rotation": rotation}})
    served.post("/api/actions", {"draw": hand})


def test_every_placement_button_shows_the_points_it_scores(served: Served, phone: Any) -> None:
    """Every placement button, shown all, says exactly what laying the stone there scores:
    below the best a placement costs the best (-5 here), never "0 pts"."""
    triangle_game(served, "005")
    expect(phone.locator("#status")).to_have_text("Bob places the stone")
    phone.get_by_role("button", name=re.compile(r"^Show all \d+$")).click()
    buttons = phone.locator(".places button:not(.link)")
    expect(buttons.first).to_have_text("D(0,-1) · rotation 0 · 5 pts")
    history = replay(served.table.transcript().splitlines())
    game, state = history.game, history.state
    shown: dict[tuple[str, int], int] = {}
    for text in buttons.all_inner_texts():
        m = re.fullmatch(r"(\S+) · rotation (\d) · (-?\d+) pts", text)
        assert m, text
        shown[(m[1], int(m[2]))] = int(m[3])
    places = [a for a in game.legal_actions(state) if isinstance(a, Place)]
    scored = {
        (a.cell, a.rotation): game.totals(game.apply(state, a))[1] - game.totals(state)[1]
        for a in places
    }
    assert shown == scored
    assert shown[("D(-2,0)", 0)] == -5
    phone.get_by_role("button", name="D(-2,0) · rotation 0 · -5 pts").click()
    expect(phone.locator(".players li").nth(1).locator(".score")).to_have_text("-5")


@pytest.mark.parametrize("narrowed", ["cell", "show-all"])
def test_the_next_stone_starts_from_the_best_placements(
    served: Served, phone: Any, narrowed: str
) -> None:
    """A cell tapped on the board, or "Show all", narrows or widens the list for one stone only:
    the next player's stone is offered from its best placements again."""
    triangle_game(served, "005")
    expect(phone.locator("#status")).to_have_text("Bob places the stone")
    if narrowed == "cell":
        phone.locator("svg.board g[data-cell='D(0,-1)']").click()
        expect(phone.locator(".places .label")).to_have_text("Place on D(0,-1):")
    else:
        phone.get_by_role("button", name="Show all 5").click()
    phone.get_by_role("button", name="D(0,-1) · rotation 0 · 5 pts").click()
    expect(phone.locator(".players li").nth(1).locator(".score")).to_have_text("5")
    served.post("/api/actions", {"draw": "555"})
    expect(phone.locator("#status")).to_have_text("Ann places the stone")
    expect(phone.locator(".places .label")).to_have_text("Place the stone (best first):")
    expect(phone.locator(".places button:not(.link)")).to_have_count(4)
    expect(phone.get_by_role("button", name="Show all 6")).to_be_visible()


def test_every_cell_a_stone_fits_is_tappable(served: Served, phone: Any) -> None:
    """The first stone fits all 96 cells of the board: each is tappable, the centre too, and a
    tap lists that cell's three rotations."""
    served.new_game("triangles", ["Ann", "Bob"])
    served.post("/api/actions", {"draw": "035"})
    expect(phone.locator("#status")).to_have_text("Ann places the stone")
    expect(phone.locator("svg.board g.tappable")).to_have_count(96)
    phone.locator("svg.board g[data-cell='U(0,0)']").click()
    expect(phone.locator(".places .label")).to_have_text("Place on U(0,0):")
    expect(phone.locator(".places button:not(.link)")).to_have_text(
        [f"U(0,0) · rotation {r} · 0 pts" for r in range(3)]
    )


def test_place_a_stone_with_the_keyboard_alone(served: Served, phone: Any) -> None:
    """Tab reaches the cells the stone fits, and only those, each a button named by its cell
    and the most it scores; Enter or Space on one lists its placements, and Enter lays it."""
    triangle_game(served, "005")
    expect(phone.locator("#status")).to_have_text("Bob places the stone")
    state = served.table.state_json()
    places: list[dict[str, Any]] = state["placements"]
    best: dict[str, int] = {}
    for p in places:
        best[p["cell"]] = max(best.get(p["cell"], p["points"]), p["points"])
    assert 1 < len(best) < state["board_cells"]
    phone.locator("#status").focus()
    stops: list[str] = []
    for _ in range(60):
        phone.keyboard.press("Tab")
        key = focused(phone)
        if key.startswith("cell-"):
            stops.append(key.removeprefix("cell-"))
        elif stops:
            break  # past the board
    assert sorted(stops) == sorted(best)
    cells = phone.locator("svg.board [role='button']")
    expect(cells).to_have_count(len(best))
    expect(phone.locator("svg.board [tabindex]")).to_have_count(len(best))
    for name, points in best.items():
        expect(phone.get_by_role("button", name=f"{name}: up to {points} pts")).to_have_attribute(
            "data-cell", name
        )
    phone.keyboard.press("Shift+Tab")  # back onto the last cell of the board
    last = stops[-1]
    assert focused(phone) == f"cell-{last}"
    phone.keyboard.press("Enter")
    expect(phone.locator(".places .label")).to_have_text(f"Place on {last}:")
    assert focused(phone) == f"cell-{last}"  # drawn again, the focus stays on the cell
    phone.keyboard.press("Shift+Tab")
    other = focused(phone).removeprefix("cell-")
    assert other == stops[-2]
    phone.keyboard.press("Space")
    expect(phone.locator(".places .label")).to_have_text(f"Place on {other}:")
    for _ in range(10):  # on to the first of that cell's placements
        phone.keyboard.press("Tab")
        if focused(phone).startswith(f"place-{other}-"):
            break
    rotation = int(focused(phone).rsplit("-", 1)[1])
    phone.keyboard.press("Enter")
    expect(phone.locator("#status")).to_have_text("Ann turns up a stone")
    move = served.table.state_json()["last_move"]
    assert move == {**move, "cell": other, "rotation": rotation}


def test_the_stones_held_at_the_end_are_turned_up_to_be_subtracted(
    served: Served, phone: Any
) -> None:
    """Once nobody can lay a stone the game is over: the phone says so and asks for the stones
    still held, to be subtracted (RULES §5.5), not for another turn; the last one finishes it."""
    served.new_game("triangles", ["Ann", "Bob"], {"board_cells": "U(0,0)", "deal": 2})
    served.post("/api/actions", {"draw": "555"})
    served.post("/api/actions", {"place": {"stone": "555", "cell": "U(0,0)", "rotation": 0}})
    for stone in ("045", "444"):
        served.post("/api/actions", {"draw": stone})
        served.post("/api/actions", {"pass": True})
    expect(phone.locator("#status")).to_have_text("Game over: Bob turns up the stones still held")
    expect(phone.locator("#reveal")).to_have_text(
        "No player could lay a stone: the game is over."
        "Every stone still held is turned up, and its pips (0 counts 6) are subtracted from its"
        " holder's points. Still to turn up: 1"
    )
    expect(phone.locator("form.draw .label")).to_have_text(
        "A stone Bob still holds (sides clockwise):"
    )
    shoot(phone, "triangles-reveal")
    for k, side in enumerate("123"):
        phone.select_option(f"#draw-{k}", side)
    phone.get_by_role("button", name="Turn up").click()
    expect(phone.locator("#status")).to_have_text("Game over. Won by: Ann")
    expect(phone.locator("#reveal")).to_have_count(0)
    expect(phone.locator(".players .score")).to_have_text(["-14", "-21"])


SIX = ["Ann", "Bob", "Cyril", "Dana", "Eva", "Filip"]
CUT_CELLS = """() => [...document.querySelectorAll("table.sheet td")]
  .filter((td) => td.scrollWidth > td.clientWidth)
  .map((td) => `${td.parentElement.className}: ${td.textContent}`)"""


@pytest.mark.parametrize(
    ("game", "steps", "width"),
    [
        pytest.param("drapky", 150, 320, id="drapky-320"),
        pytest.param("drapky", 150, 360, id="drapky-360"),
        pytest.param("drapky", 150, 412, id="drapky-412"),
        pytest.param("general", 200, 320, id="general-320"),
        pytest.param("general", 200, 360, id="general-360"),
    ],
)
def test_six_players_numbers_are_never_cut(
    served: Served, phone: Any, game: str, steps: int, width: int
) -> None:
    """Six players on a narrow phone: every number on the sheet shows whole (a name may be
    shortened); the carried throws' tally says its count in words too."""
    served.new_game(game, SIX)
    actions = midgame(game, SIX, steps)
    for action in actions:
        served.post("/api/actions", action)
    phone.set_viewport_size({"width": width, "height": 740})
    expect(phone.locator("table.sheet thead th")).to_have_count(7)
    phone.wait_for_timeout(150)  # the last event's repaint
    shoot(phone, f"six-{game}-{width}")
    assert phone.evaluate(CUT_CELLS) == []
    assert phone.evaluate("document.documentElement.scrollWidth") <= width
    totals = phone.locator("table.sheet tr.total td").all_inner_texts()
    assert [int(v) for v in totals[:6]] == [
        p["score"] for p in served.table.state_json()["players"]
    ]
    if game == "drapky":
        marks = [s["marks"] for s in served.table.state_json()["sheets"]]
        tally = phone.locator("table.sheet tr.marks td")
        expect(tally).to_have_count(6)
        for k, n in enumerate(marks):
            expect(tally.nth(k)).to_have_accessible_name(f"Carried throws: {n}")


def focused(page: Any) -> str:
    """The id or data-focus key of the focused element ("BODY" when focus was dropped)."""
    return str(page.evaluate("(e => e.id || e.dataset.focus || e.tagName)(document.activeElement)"))


def test_keyboard_focus_stays_on_its_control_across_updates(served: Served, phone: Any) -> None:
    """A die picked with the keyboard keeps the focus, also when another phone changes the
    game; a control that is gone hands it to the status line, which is a polite live region."""
    served.new_game("kymppitonni", ["Ann", "Bob"])
    served.post("/api/actions", {"roll": [1, 1, 1, 2, 3, 6]})
    expect(phone.locator("#status")).to_have_attribute("aria-live", "polite")
    dice = phone.locator("#table-dice .die")
    for k in (1, 0, 2):
        dice.nth(k).press("Space")
        expect(dice.nth(k)).to_have_attribute("aria-pressed", "true")
        assert focused(phone) == f"die-{k}"
    phone.locator("#keep").press("Space")  # disabled until the next pick: focus to the status
    expect(phone.locator("#turn-box")).to_contain_text("Turn total: 1000")
    assert focused(phone) == "status"
    served.post("/api/actions", {"roll": [2, 3, 5]})
    expect(dice).to_have_count(3)
    dice.nth(2).press("Space")
    assert focused(phone) == "die-2"
    served.table.photos_kept(1)  # an update from elsewhere: the page is drawn again
    expect(phone.locator("#photos-note")).to_be_visible()
    assert focused(phone) == "die-2"
