"""How long ``best_placements`` takes on a played-out board of 60 stones (one core).

Run with ``make bench``; the figure is printed. The target is well under 20 ms on this machine so
that a Raspberry Pi answers while the player still holds the stone.
"""

from __future__ import annotations

import random
import statistics
import time

import pytest

from scoring.core import Phase, Place
from scoring.games.triangles import STONES, Triangles, TrianglesState, best_placements

TARGET_MS = 20.0


def played_out(stones: int, seed: int = 7) -> tuple[Triangles, TrianglesState]:
    """A default game (hexagon of side 4, two players) with ``stones`` stones on the board."""
    game = Triangles()
    rng = random.Random(seed)
    state = game.initial_state(["A", "B"])
    while state.layout.count < stones:
        assert game.phase(state) is not Phase.FINISHED
        legal = game.legal_actions(state)
        # Mostly the best placement, sometimes another one, as real players do.
        best = isinstance(legal[0], Place) and rng.random() < 0.7
        action = legal[0] if best else rng.choice(legal)
        state = game.apply(state, action)
    return game, state


@pytest.mark.benchmark
def test_bench_best_placements() -> None:
    """Median time of ``best_placements`` over every stone not yet on a 60-stone board."""
    _, state = played_out(60)
    on_board = {STONES[code // 3] for code in state.layout.cells if code >= 0}
    left = [s for s in STONES if s not in on_board]
    times = []
    for _ in range(20):
        for stone in left:
            start = time.perf_counter()
            best_placements(state, stone)
            times.append(time.perf_counter() - start)
    median_ms = statistics.median(times) * 1000
    worst_ms = max(times) * 1000
    print(
        f"\ntriangles best_placements on {state.layout.count} stones, {len(left)} stones left: "
        f"median {median_ms:.3f} ms, worst {worst_ms:.3f} ms over {len(times)} calls"
    )
    assert median_ms < TARGET_MS
