"""How long the jeopardy coach takes to advise, at a turn's start and mid-turn, for each game.

Run with ``make bench``; the figures are printed, not asserted (timings on a shared machine
flake as tests). ``new coach`` builds a ``JeopardyCoach`` and advises once, as ``pipcam advise``
does; ``same coach`` advises again with the coach kept (``pipcam play``'s hint,
``Table.advice()``), in a fresh situation each time (another score), so no per-situation memo
is reused.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace
from typing import Any

import pytest

from coach.jeopardy import JeopardyCoach
from scoring.core import Roll
from scoring.jeopardy import JeopardyGame, JeopardyState, Turn
from scoring.registry import find_game

REPEAT = 5
AnyGame = JeopardyGame[Any, Any]
State = JeopardyState[Any]
GAMES = ("kymppitonni", "thousand", "jednicky-a-petky", "sest-kostek")


def _opened(game: AnyGame, state: State, score: int) -> State:
    """The first player at ``score`` (in 1000, opened, so the score is a legal one)."""
    if game.game_id == "thousand":
        state = replace(state, extra=replace(state.extra, opened=(True, True)))
    return replace(state, scores=(score, 0))


def situations(game: AnyGame, score: int) -> dict[str, State]:
    """A turn's start, dice showing after the first throw, and bank-or-roll with 3 dice left."""
    start = _opened(game, game.initial_state(["Ann", "Bob"]), score)
    thrown = game.apply(start, Roll([1, 5, 2, 3, 4, 6][: game.n_dice]))
    between = replace(start, turn=Turn(player=0, total=300, pool=3, rolls=1))
    return {"turn start": start, "dice showing": thrown, "3 dice left": between}


def timed(game: AnyGame, name: str, coach: JeopardyCoach | None, repeat: int) -> list[float]:
    """Seconds of each of ``repeat`` pieces of advice in situation ``name``: by a new coach each
    time (``coach`` None, at score 0), or by ``coach`` at a new score each time."""
    out = []
    for k in range(repeat):
        state = situations(game, 0 if coach is None else 100 * (k + 1))[name]
        t = time.perf_counter()
        (coach or JeopardyCoach(game)).advise(state)
        out.append(time.perf_counter() - t)
    return out


@pytest.mark.benchmark
def test_bench_jeopardy_coach() -> None:
    """Print the median and worst times per game and situation."""
    print(f"\n{'game':18} {'situation':13} {'new coach':>16} {'same coach':>16}   (median / worst)")
    for game_id in GAMES:
        game = find_game(game_id)()
        assert isinstance(game, JeopardyGame)
        kept = JeopardyCoach(game)
        for name in situations(game, 0):
            new = timed(game, name, None, REPEAT)
            kept.advise(situations(game, 0)[name])  # the coach's one-off derivations
            same = timed(game, name, kept, REPEAT)
            print(
                f"{game_id:18} {name:13} "
                f"{statistics.median(new) * 1000:7.0f} /{max(new) * 1000:6.0f} ms "
                f"{statistics.median(same) * 1000:7.1f} /{max(same) * 1000:6.1f} ms"
            )
