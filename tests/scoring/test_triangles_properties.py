"""Random legal triangle games to the end (RULES §5), checked after every action.

No two touching sides ever disagree, the scores are the sum of the placements' points, the final
totals subtract exactly the stones still held, undo restores the exact earlier state, and the
transcript replays to the same final state.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.core import Draw, Pass, Phase, Place
from scoring.games.triangles import STONES, Triangles, TrianglesState, pip_value
from scoring.games.triangles.placement import sides_fit
from scoring.history import History
from scoring.transcript import dump, replay

OPTIONS = st.fixed_dictionaries(
    {
        "board": st.sampled_from(["hexagon:2", "hexagon:3", "triangle:5", "rhombus:3x4"]),
        "match": st.sampled_from(["equal", "sum7"]),
        "wide_ring_mode": st.sampled_from(["hole_size", "outline", "loop"]),
        "best_placement_penalty": st.sampled_from(["on", "difference", "off"]),
        "stone_source": st.sampled_from(["top_of_pile", "hand"]),
        "deal": st.sampled_from(["equal", 6]),
    }
)


def check_sides(game: Triangles, state: TrianglesState) -> None:
    """Every pair of touching stones agrees under the game's matching rule."""
    layout = state.layout
    for c, nbs in enumerate(game.board.nb):
        if layout.cells[c] < 0:
            continue
        for k, n in enumerate(nbs):
            if n >= 0 and layout.cells[n] >= 0:
                mine, theirs = layout.sides[3 * c + k], layout.sides[3 * n + k]
                assert sides_fit(mine, theirs, game.options.match), (c, k, n)


def check_scores(state: TrianglesState) -> None:
    """Scores are the sum of each player's placement points; held stones add up to the deal."""
    for p in range(len(state.players)):
        assert state.scores[p] == sum(m.points for m in state.moves if m.player == p)
    assert state.layout.count == len(state.moves)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=OPTIONS, n_players=st.integers(2, 6), data=st.data())
def test_random_games(options: dict[str, Any], n_players: int, data: st.DataObject) -> None:
    """A random legal game ends with consistent sides, scores and totals; undo is exact."""
    game = Triangles.from_json(options)
    players = [f"P{i}" for i in range(n_players)]
    history: History[TrianglesState] = History(game, game.initial_state(players))
    states = [history.state]
    dealt = history.state.counts[0]
    for _ in range(2000):
        state = history.state
        if game.phase(state) is Phase.FINISHED:
            break
        legal = game.legal_actions(state)
        assert legal, game.state_json(state)
        assert (Pass() in legal) == (legal == (Pass(),))
        action = data.draw(st.sampled_from(legal))
        history.push(action)
        after = history.state
        states.append(after)
        if isinstance(action, Place):
            check_sides(game, after)
            move = after.moves[-1]
            assert move.value <= move.best
        elif isinstance(action, Draw) and not state.end:
            assert game.phase(after) is Phase.PLACE
        check_scores(after)
    final = history.state
    outcome = game.outcome(final)
    assert outcome is not None
    assert game.legal_actions(final) == ()
    for p in range(n_players):
        held = [*final.passed[p], *final.revealed[p]]
        laid = sum(1 for m in final.moves if m.player == p)
        assert laid + len(held) == dealt
        pips = sum(pip_value(STONES[s]) for s in held)
        assert outcome.totals[p] == final.scores[p] - pips
    # Undo walks back through exactly the states seen, down to the root.
    undo_to = data.draw(st.integers(0, len(states) - 1))
    while len(history) > undo_to:
        history.pop()
        assert history.state == states[len(history)]
    while history.can_redo():
        history.redo()
    assert history.state == final
    again = replay(dump(game, players, history.actions).splitlines())
    assert again.state == final


def check_placement_points(game: Triangles, state: TrianglesState) -> None:
    """Every legal placement is described with exactly the points applying it writes."""
    described = game.describe(state)["placements"]
    assert isinstance(described, list)
    places = [a for a in game.legal_actions(state) if isinstance(a, Place)]
    shown = {(p["cell"], p["rotation"]): p["points"] for p in described}
    assert set(shown) == {(a.cell, a.rotation) for a in places}
    p = state.player
    for a in places:
        gained = game.apply(state, a).scores[p] - state.scores[p]
        assert shown[(a.cell, a.rotation)] == gained, (a, shown[(a.cell, a.rotation)], gained)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=OPTIONS, n_players=st.integers(2, 4), data=st.data())
def test_every_placement_shows_the_points_it_scores(
    options: dict[str, Any], n_players: int, data: st.DataObject
) -> None:
    """In random games, the points describe() gives each placement are what apply() writes."""
    game = Triangles.from_json(options)
    state = game.initial_state([f"P{i}" for i in range(n_players)])
    for _ in range(400):
        if game.phase(state) is Phase.FINISHED:
            break
        if game.phase(state) is Phase.PLACE and not state.end:
            check_placement_points(game, state)
        state = game.apply(state, data.draw(st.sampled_from(game.legal_actions(state))))
