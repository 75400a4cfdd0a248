"""The after-game report: each decision against the coach's best, the regret, table and chart."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from coach.jeopardy import JeopardyCoach
from coach.report import Decision, Report, chosen, coach_for, report
from scoring.core import Action, Bank, Game, Keep, Roll
from scoring.games.kymppitonni import Kymppitonni
from scoring.games.thousand import Thousand
from scoring.history import History
from scoring.jeopardy import JeopardyGame, Turn
from scoring.transcript import replay
from tests.coach.support import threshold

SVG = "{http://www.w3.org/2000/svg}"


def transcript(game_id: str, players: list[str], actions: list[str]) -> list[str]:
    """Transcript lines: a header and the given action objects."""
    header = f'{{"game": "{game_id}", "players": [{", ".join(f"{p!r}" for p in players)}]}}'
    return [header.replace("'", '"'), *actions]


def test_a_short_turn_by_hand() -> None:
    """Ann keeps 1 1 5 of 1 1 5 2 3 4 and banks 250; the coach keeps one 1 and throws."""
    lines = transcript(
        "kymppitonni",
        ["Ann", "Bob"],
        ['{"roll": [1,1,5,2,3,4]}', '{"keep": [1,1,5]}', '{"bank": true}'],
    )
    history = replay(lines)
    rep = report(history)
    game = history.game
    assert isinstance(game, Kymppitonni)
    coach = JeopardyCoach(game)
    first = game.apply(history.root, Roll([1, 1, 5, 2, 3, 4]))
    values = {c.label: c.value for c in coach.choices(first)}
    second = game.apply(first, Keep([1, 1, 5]))
    bank_or_roll = {c.label: c.value for c in coach.choices(second)}
    assert [d.number for d in rep.decisions] == [2, 3]
    keep, bank = rep.decisions
    assert keep.made == "keep 1 1 5 (250), then roll"
    assert keep.best == "keep 1 (100), then roll"
    assert keep.regret == pytest.approx(values[keep.best] - values[keep.made])
    assert bank.made == "bank 250"
    assert bank.regret == pytest.approx(max(bank_or_roll.values()) - bank_or_roll["bank 250"])
    summary = {s.player: s for s in rep.summary()}
    assert summary["Ann"].decisions == 2
    assert summary["Ann"].regret == pytest.approx(keep.regret + bank.regret)
    assert summary["Bob"].decisions == 0


@pytest.mark.parametrize(
    ("actions", "made", "mistakes", "lost"),
    [
        # Keeping what the bank would set aside, then banking, is the advised bank in two steps.
        ([Keep([1, 1, 5]), Bank()], ["bank 1750", "bank 1750"], 0, 0.0),
        ([Bank()], ["bank 1750"], 0, 0.0),
        # Keeping fewer points, then banking, banks 50 less.
        ([Keep([1, 1]), Bank()], ["keep 1 1 (200), then bank", "bank 1700"], 1, 50.0),
    ],
    ids=["keep-then-bank", "bank", "keep-less-then-bank"],
)
def test_a_way_merged_into_the_best_choice_is_no_mistake(
    actions: list[Action], made: list[str], mistakes: int, lost: float
) -> None:
    """Kymppitonni at 1500 with 1 1 5 2 3 4 showing: "bank 1750" is best, and keeping 1 1 5 then
    banking is the same choice (``Choice.same``), so it counts as a best decision, not skipped."""
    game = Kymppitonni()
    start = game.initial_state(["Ann", "Bob"])
    turn = Turn(player=0, total=1500, pool=0, rolls=1)
    history: History[Any] = History(
        game, game.apply(replace(start, turn=turn), Roll([1, 1, 5, 2, 3, 4]))
    )
    for action in actions:
        history.push(action)
    rep = report(history)
    assert [d.made for d in rep.decisions] == made
    assert {d.best for d in rep.decisions} <= {"bank 1750", "bank 1700"}
    ann = rep.summary()[0]
    assert (ann.decisions, ann.mistakes) == (len(actions), mistakes)
    assert ann.regret == pytest.approx(lost, abs=1e-6)


def _play(game: JeopardyGame[Any, Any], policies: list[Any], turns: int, seed: int) -> History[Any]:
    """A seeded game in which each seat follows its policy, recorded as a history."""
    rng = random.Random(seed)
    history: History[Any] = History(game, game.initial_state(["Ann", "Bob"]))
    taken = 0
    while taken < turns and game.to_move(history.state) is not None:
        state = history.state
        seat = state.turn.player
        action: Action = policies[seat](state)
        if isinstance(action, Roll):
            action = Roll([rng.randint(1, 6) for _ in range(game.roll_size(state))])
        history.push(action)
        if history.state.turns_taken != state.turns_taken:
            taken += 1
    return history


@pytest.mark.parametrize("game", [Kymppitonni(), Thousand()], ids=lambda g: g.game_id)
def test_following_the_advice_costs_nothing_and_a_threshold_costs_points(
    game: JeopardyGame[Any, Any],
) -> None:
    """Ann plays the coach's policy, Bob banks at 300 (30 in 1000, whose totals are a tenth)."""
    coach = JeopardyCoach(game)
    bob = threshold(game, 30 if isinstance(game, Thousand) else 300)
    history = _play(game, [coach.policy(), bob], turns=16, seed=3)
    rep = report(history, coach)
    ann, bobs = rep.summary()
    assert ann.decisions > 0
    assert bobs.decisions > 0
    assert ann.mistakes == 0
    assert ann.regret == pytest.approx(0.0, abs=1e-6)
    assert bobs.mistakes > 0
    assert bobs.regret > 0
    print(f"\n{game.game_id}: Bob lost {bobs.regret:.1f} in {bobs.decisions} decisions")


def _sample_report() -> Report:
    decisions = (
        Decision(2, "Ann", "turn total 0", "keep 1 1 5 (250), then bank", "keep 1", 295.0, 399.5),
        Decision(3, "Ann", "turn total 250", "bank 250", "bank 250", 250.0, 250.0),
        Decision(5, "Bob <3", "turn total 300", "roll 2 dice", "bank 300", 274.0, 300.0),
    )
    return Report("kymppitonni", ("Ann", "Bob <3"), "expected points of the turn", decisions)


def test_text_table() -> None:
    """One line per player (decisions, not best, points lost), then the costly decisions."""
    text = _sample_report().text()
    assert "player  decisions  not best  points lost" in text
    assert "Ann             2         1        104.5" in text
    assert "Bob <3          1         1         26.0" in text
    assert "bank 250 (250.0) / bank 250" not in text  # a best decision is left out
    assert "bank 250 (250.0) / bank 250" in _sample_report().text(all_decisions=True)


def test_json() -> None:
    """Per-player totals and every decision with its regret."""
    out = _sample_report().to_json()
    assert out["players"] == [
        {"name": "Ann", "decisions": 2, "mistakes": 1, "regret": 104.5},
        {"name": "Bob <3", "decisions": 1, "mistakes": 1, "regret": 26.0},
    ]
    assert [d["regret"] for d in out["decisions"]] == [104.5, 0.0, 26.0]


def test_svg_chart_is_well_formed() -> None:
    """A parseable SVG with one line per player ending at his total, names escaped."""
    svg = _sample_report().svg()
    root = ET.fromstring(svg)
    lines = root.findall(f"{SVG}polyline")
    assert len(lines) == 2
    titles = [line.find(f"{SVG}title") for line in lines]
    assert [t.text for t in titles if t is not None] == ["Ann: 104.5", "Bob <3: 26.0"]
    # Ann's line rises to her total (the top of the axis, 200 after rounding up) at decision 2.
    last_ann = lines[0].attrib["points"].split()[-1]
    assert last_ann.split(",")[0] == f"{70 + 480 * 2 / 3:.1f}"


def test_chosen_matches_a_throw_to_the_choice_without_actions() -> None:
    """A ``Roll`` in the transcript is the choice to throw; other actions match exactly."""
    from coach.advice import Choice

    picks = [Choice("bank 300", (Bank(),), 300.0), Choice("roll 2 dice", (), 274.0)]
    assert chosen(picks, Bank()) is picks[0]
    assert chosen(picks, Keep([1])) is None


def test_general_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Generał: a keep and a box compared with the solver's ranking."""
    monkeypatch.setenv("PIPCAM_CACHE_DIR", str(tmp_path))
    lines = transcript(
        "general",
        ["Ann", "Bob"],
        [
            '{"roll": [1, 1, 2, 3, 5]}',
            '{"keep": [1, 1]}',
            '{"roll": [6, 6, 6]}',
            '{"score": "chance"}',
        ],
    )
    history = replay(lines)
    game: Game[Any, Any] = history.game
    coach = coach_for(game)
    rep = report(history, coach)
    assert [d.number for d in rep.decisions] == [2, 4]
    keep, box = rep.decisions
    advice = coach.advise(game.apply(history.root, Roll([1, 1, 2, 3, 5])))
    values = {c.label: c.value for c in advice.choices}
    assert keep.made_value == values[keep.made]
    assert keep.best == advice.best.label
    assert box.made == "score chance"
    assert box.regret > 0  # 1 1 6 6 6 is a full house: chance wastes it
    assert rep.objective == "expected final total of the column"


def test_a_winning_bank_given_up_is_a_mistake_and_taken_is_none() -> None:
    """Jedničky a pětky to 1000: after 1 1 1 (three dice left, no bank yet) and a 5, Ann's bank
    of 1050 ends the game with her the winner. Taking it is the best decision whatever a further
    throw would add on average; throwing instead is a win given up, counted apart from points."""
    header = '{"game": "jednicky-a-petky", "players": ["Ann", "Bob"], "options": {"target": 1000}}'
    won = [
        header,
        '{"roll": [1, 1, 1, 2, 3, 4]}',
        '{"keep": [1, 1, 1]}',
        '{"roll": [5, 2, 3]}',
        '{"keep": [5]}',
    ]
    banked = report(replay([*won, '{"bank": true}']))
    assert banked.decisions[-1].number == 5
    assert banked.decisions[-1].best.startswith("bank 1050")
    assert not banked.decisions[-1].mistake
    thrown = report(replay([*won, '{"roll": [2, 3]}']))
    last = thrown.decisions[-1]
    assert (last.number, last.made, last.missed_win, last.regret) == (5, "roll 2 dice", True, 0.0)
    assert thrown.summary()[0].mistakes == banked.summary()[0].mistakes + 1
    assert "   win  roll 2 dice" in thrown.text()
    assert thrown.to_json()["decisions"][-1]["missed_win"] is True


def test_unknown_game_has_no_coach() -> None:
    """The coach names the games it knows."""
    from scoring.games.sekvence import Sekvence

    with pytest.raises(
        ValueError, match="^the coach knows kymppitonni, thousand, .* not sekvence$"
    ):
        coach_for(Sekvence())
