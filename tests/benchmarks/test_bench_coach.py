"""How long the Generał coach takes: the whole table, loading it, and one piece of advice.

Run with ``make bench``; the figures are printed. Targets on this machine (2 shared cores): the
table in at most 60 s, loaded in under 1 s, a single advice in under 10 ms.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path

import pytest

from coach import GeneralSolver
from scoring.core import Phase
from scoring.games.general import General, GeneralOptions, GeneralState

BUILD_S = 60.0
LOAD_S = 1.0
QUERY_MS = 10.0

# The biggest table: upper bonus (64 upper sums) and the Generał bonus (two filled Generał boxes).
OPTIONS = GeneralOptions(upper_bonus=35, extra_general_bonus=100, general_joker="forced")


def decisions(game: General, count: int, seed: int = 11) -> list[GeneralState]:
    """States where a decision is due, from random games (all stages of the sheet)."""
    rng = random.Random(seed)
    out: list[GeneralState] = []
    state = game.initial_state(["Ann"])
    while len(out) < count:
        if game.phase(state) is Phase.FINISHED:
            state = game.initial_state(["Ann"])
        if game.phase(state) is Phase.DECIDE:
            out.append(state)
        state = game.apply(state, rng.choice(game.legal_actions(state)))
    return out


@pytest.mark.benchmark
def test_bench_general_solver(tmp_path: Path) -> None:
    """Build the Yahtzee-rules table from nothing, load it back, and time advice on 200 states."""
    wall, cpu = time.perf_counter(), time.process_time()
    built = GeneralSolver(OPTIONS, cache_dir=tmp_path)
    build_s, build_cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert built.built
    assert built.path is not None

    wall = time.perf_counter()
    loaded = GeneralSolver(OPTIONS, cache_dir=tmp_path)
    load_s = time.perf_counter() - wall
    assert not loaded.built

    states = decisions(General(OPTIONS), 200)
    times = []
    for state in states:
        start = time.perf_counter()
        loaded.advise(state)
        times.append(time.perf_counter() - start)
    median_ms = statistics.median(times) * 1000
    worst_ms = max(times) * 1000
    size_mb = built.path.stat().st_size / 1e6
    print(
        f"\ngeneral coach {OPTIONS}: expected {loaded.start:.6f}\n"
        f"  table: built in {build_s:.1f} s ({build_cpu:.1f} s CPU), {size_mb:.1f} MB on disk, "
        f"loaded in {load_s * 1000:.0f} ms\n"
        f"  advice: median {median_ms:.2f} ms, worst {worst_ms:.2f} ms over {len(times)} states"
    )
    assert build_s < BUILD_S
    assert load_s < LOAD_S
    assert median_ms < QUERY_MS
