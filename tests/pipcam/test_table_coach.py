"""The coach at the table (``pipcam run --coach``): advice for the player to move, asked for on a
phone, on the game as it stands, and refused with a reason where there is none to give."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from coach.jeopardy import JeopardyCoach
from coach.report import COACHED, coach_for
from pipcam.store import Store
from pipcam.table import Table
from scoring.core import Bank, Keep, Roll
from scoring.errors import IllegalAction, InvalidAction
from scoring.games.kymppitonni import Kymppitonni
from scoring.jeopardy import Turn
from scoring.registry import available
from tests.pipcam.test_table import reading
from tests.web.test_api_more import serving
from web.schemas import AdvicePublic


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "pipcam.db") as s:
        yield s


def test_the_coached_games_are_those_the_coach_knows() -> None:
    """COACHED (what the phones are told) is exactly the games coach_for builds a coach for."""
    known = set()
    for cls in available():
        try:
            coach_for(cls())
        except ValueError:
            continue
        known.add(cls.game_id)
    assert known == set(COACHED)


def test_advice_is_for_the_player_to_move_on_the_game_as_it_stands(
    store: Store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PIPCAM_CACHE_DIR", str(tmp_path / "cache"))
    table = Table(store, coach=True)
    table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    assert table.state_json()["table"]["coach"] is True
    table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    advice = table.advice()
    assert advice["player"] == "Ann"
    assert advice["advice"]["label"] == "keep 1 (100), then roll"
    assert advice["advice"]["actions"] == [{"keep": [1]}]
    assert advice["version"] == table.version
    assert "advice: keep 1 (100), then roll" in str(advice["text"])
    # The advised action is one the table takes.
    table.act(Keep([1]), source="phone")
    assert table.advice()["situation"] == "turn total 100, 5 dice to throw"
    # Asked on a screen that showed an earlier version: refused, the game as it was.
    with pytest.raises(IllegalAction, match="the game has changed since your screen showed it"):
        table.advice(seen=table.version - 1)


def test_advice_is_refused_with_a_reason(store: Store) -> None:
    off = Table(store)
    off.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    assert off.state_json()["table"]["coach"] is False
    with pytest.raises(IllegalAction, match="the coach is off at this table: start it with"):
        off.advice()
    table = Table(store, coach=True)
    with pytest.raises(IllegalAction, match="no game is being played"):
        table.advice()
    table.new_game({"game": "sekvence", "players": ["Ann", "Bob"]})
    assert table.state_json()["table"]["coach"] is False
    with pytest.raises(InvalidAction, match="the coach knows kymppitonni, .* not sekvence"):
        table.advice()
    # Generał on three columns: a game the solver does not solve, so no Hint either.
    table.new_game({"game": "general", "players": ["Ann", "Bob"], "options": {"columns": 3}})
    assert table.state_json()["table"]["coach"] is False
    with pytest.raises(InvalidAction, match="the coach solves a one-column sheet, not columns=3"):
        table.advice()
    table.new_game(
        {"game": "jednicky-a-petky", "players": ["Ann", "Bob"], "options": {"target": 300}}
    )
    for action in (Roll([1, 1, 1, 2, 3, 4]), Keep([1, 1, 1]), Roll([5, 2, 3]), Keep([5])):
        table.act(action, source="phone")
    # 1050 at a target of 300 with two dice left: the bank wins, and the coach says so.
    best = table.advice()["advice"]
    assert best["wins"] is True
    table.act(Bank(), source="phone")
    with pytest.raises(IllegalAction, match="the game is over"):
        table.advice()


def test_the_phones_ask_for_advice_over_http(store: Store) -> None:
    """GET /api/advice: 200 with the choices; 409 with the coach off (no PIN needed: advice
    changes nothing)."""
    table = Table(store, coach=True)
    table.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    table.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    with serving(table) as base:
        r = httpx.get(f"{base}/api/advice", params={"seen": table.version}, timeout=30)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["advice"]["actions"] == [{"keep": [1]}]
        assert [c["value"] for c in body["choices"]] == sorted(
            (c["value"] for c in body["choices"]), reverse=True
        )
        stale = httpx.get(f"{base}/api/advice", params={"seen": table.version + 1}, timeout=30)
        assert stale.status_code == 409
    off = Table(store)
    off.resume()
    with serving(off) as base:
        r = httpx.get(f"{base}/api/advice", timeout=30)
        assert r.status_code == 409
        assert "the coach is off" in r.json()["detail"]


def test_a_restarted_table_does_not_take_a_version_seen_before_it(store: Store) -> None:
    """A phone left open across a restart names the version it saw: the restarted table must not
    take it for its own (a stale change or an old hint on a game that moved elsewhere)."""
    first = Table(store, coach=True)
    first.new_game({"game": "kymppitonni", "players": ["Ann", "Bob"]})
    first.on_reading(reading(1, 1, 5, 2, 3, 4), settled_now=True)
    seen = first.version
    again = Table(store, coach=True)
    assert again.resume()
    again.undo(source="button")  # the game moves elsewhere: as many changes since the start
    with pytest.raises(IllegalAction, match="the game has changed since your screen showed it"):
        again.advice(seen=seen)
    with pytest.raises(IllegalAction, match="the game has changed since your screen showed it"):
        again.act(Keep([1]), source="phone", seen=seen)


def test_the_ways_merged_into_a_choice_reach_the_phones() -> None:
    """AdvicePublic (GET /api/advice) keeps a choice's merged ways (``same``) as the advice's
    JSON has them: keeping 1 1 5 then banking, under "bank 1750"."""
    game = Kymppitonni()
    start = game.initial_state(["Ann", "Bob"])
    state = replace(start, turn=Turn(player=0, total=1500, pool=0, rolls=1))
    advice = JeopardyCoach(game).advise(game.apply(state, Roll([1, 1, 5, 2, 3, 4])))
    sent = advice.to_json()
    public = AdvicePublic.model_validate({**sent, "text": advice.text(), "version": 1})
    assert public.model_dump(exclude_none=True)["choices"] == sent["choices"]
    assert public.advice.same is not None
    assert [c.label for c in public.advice.same] == ["keep 1 1 5 (250), then bank"]
