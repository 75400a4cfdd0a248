"""The optimal Generał solitaire strategy: published figures, a plain recursion, the engine's turns.

The full tables are built at most once per option set and test session, and kept in pytest's cache
folder, so a later session loads them in a fraction of a second.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coach import GeneralSolver
from coach._lattice import LATTICE
from coach.general import GENERAL_ROWS, ROLLS, WriteValue, _Boxes
from scoring.core import Keep, Phase, Roll, Score
from scoring.dice import Dice, outcomes, sub_multisets
from scoring.errors import InvalidOption
from scoring.games.general import (
    CATEGORIES,
    Column,
    Entry,
    General,
    GeneralOptions,
    GeneralState,
    box_choices,
    column_total,
    write_value,
)

GENERAL = CATEGORIES.index("general")

# Yahtzee's rules in Generał's options: the categories are the same (Full needs two faces).
YAHTZEE_FREE = GeneralOptions(upper_bonus=35, extra_general_bonus=100, general_joker="free")
YAHTZEE_FORCED = replace(YAHTZEE_FREE, general_joker="forced")
YAHTZEE_NO_JOKER = GeneralOptions(upper_bonus=35)
GENERAL_DEFAULT = GeneralOptions()
FIRST_THROW_DOUBLE = GeneralOptions(
    first_roll_multiplier=2, general_joker="forced", extra_general_bonus=100
)


Solvers = Callable[..., GeneralSolver]


@pytest.fixture(scope="session")
def solver_for(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Solvers:
    """A solver per option set, built at most once a session and kept in pytest's cache folder."""
    cache = getattr(request.config, "cache", None)  # None with -p no:cacheprovider
    folder = cache.mkdir("coach-general") if cache is not None else tmp_path_factory.mktemp("c")
    made: dict[tuple[GeneralOptions, WriteValue], GeneralSolver] = {}

    def get(options: GeneralOptions, write: WriteValue = write_value) -> GeneralSolver:
        if (options, write) not in made:
            made[options, write] = GeneralSolver(options, cache_dir=folder, write=write)
        return made[options, write]

    return get


# -- published figures ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "write", "figure"),
    [
        # Verhoeff 1999, confirmed by Glenn and Woodward: official rules, free-choice joker.
        pytest.param(YAHTZEE_FREE, write_value, 254.5896, id="free-choice-joker"),
        # Verhoeff: Hasbro's forced joker.
        pytest.param(YAHTZEE_FORCED, write_value, 254.5877, id="forced-joker"),
        # Verhoeff: upper bonus only, no Yahtzee bonus and no joker.
        pytest.param(YAHTZEE_NO_JOKER, write_value, 245.8708, id="no-yahtzee-bonus-no-joker"),
    ],
)
def test_published_optimal_expected_score(
    solver_for: Solvers, options: GeneralOptions, write: WriteValue, figure: float
) -> None:
    assert round(solver_for(options, write).start, 4) == figure


def test_more_freedom_never_scores_less(solver_for: Solvers) -> None:
    forced = solver_for(YAHTZEE_FORCED).start
    free_choice = solver_for(YAHTZEE_FREE).start
    no_joker = solver_for(YAHTZEE_NO_JOKER).start
    assert no_joker < forced < free_choice


# -- a plain recursion over the engine's scoring --------------------------------------------------


def brute_force(
    column: Column, bonus: int, options: GeneralOptions, write: WriteValue = write_value
) -> float:
    """The optimal expected final total from a column between turns, by plain recursion."""

    def box_choices_of(col: Column, d: Dice, *, first_throw: bool) -> dict[str, Entry]:
        if write is write_value:
            return box_choices(col, d, options, first_throw=first_throw)
        entries = {c: write(col, d, c, options, first_throw=first_throw) for c in CATEGORIES}
        return {c: e for c, e in entries.items() if e is not None}

    @cache
    def between(column: Column, bonus: int) -> float:
        if None not in column:
            return column_total(column, bonus, options)

        @cache
        def decide(d: Dice, throws: int) -> float:
            choices = box_choices_of(column, d, first_throw=throws == 1)
            best = max(
                between(column[:i] + (e.points,) + column[i + 1 :], bonus + e.bonus)
                for c, e in choices.items()
                for i in [CATEGORIES.index(c)]
            )
            if throws < 3:
                best = max(best, *(throw(k, throws) for k in sub_multisets(d) if len(k) < 5))
            return best

        @cache
        def throw(kept: Dice, throws: int) -> float:
            return sum(
                p * decide(tuple(sorted(kept + rest)), throws + 1)
                for rest, p in outcomes(5 - len(kept))
            )

        return throw((), 0)

    return between(column, bonus)


ENDGAMES = [
    pytest.param(
        YAHTZEE_FORCED,
        write_value,
        (3, 8, 12, 12, 10, None, 20, 24, None, 30, 40, 50, 22),
        100,
        id="forced-sixes-for-the-bonus-and-full",
    ),
    pytest.param(
        YAHTZEE_FREE,
        write_value,
        (2, 6, 9, None, 15, 18, 0, 0, 25, 30, None, 0, 20),
        0,
        id="free-choice-fours-and-large-straight",
    ),
    pytest.param(
        YAHTZEE_NO_JOKER,
        write_value,
        (None, 8, 9, 16, 15, 12, 20, 0, 25, 30, 40, 0, None),
        0,
        id="three-ones-for-the-bonus-or-chance",
    ),
    pytest.param(
        GENERAL_DEFAULT,
        write_value,
        (1, 4, 6, 8, 10, 12, 15, 0, 25, None, 40, None, 18),
        0,
        id="generał-default-small-straight-and-generał",
    ),
    pytest.param(
        FIRST_THROW_DOUBLE,
        write_value,
        (2, 4, 6, 8, 10, 12, 20, 0, 25, None, 40, 50, None),
        0,
        id="first-throw-double-small-straight-and-chance",
    ),
]


@pytest.mark.parametrize(("options", "write", "column", "bonus"), ENDGAMES)
def test_endgame_matches_plain_recursion(
    solver_for: Solvers, options: GeneralOptions, write: WriteValue, column: Column, bonus: int
) -> None:
    solver = solver_for(options, write)
    expected = brute_force(column, bonus, options, write)
    assert solver.expected(column, bonus) == pytest.approx(expected, abs=1e-9)


# -- what the solver assumes of write_value -------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        pytest.param(YAHTZEE_FORCED, id="forced"),
        pytest.param(YAHTZEE_FREE, id="free"),
        pytest.param(
            GeneralOptions(
                general_joker="free",
                four_kind_exact=True,
                full_requires_distinct=False,
                first_roll_multiplier=3,
                extra_general_bonus=100,
            ),
            id="free-exact-four-generał-is-full-triple",
        ),
    ],
)
def test_box_tables_reproduce_box_choices(options: GeneralOptions) -> None:
    boxes = _Boxes(options, write_value)
    tables = boxes.general_tables()
    rng = random.Random(7)
    for _ in range(40):
        mask = rng.randrange(1 << len(CATEGORIES) - 1)
        gs = rng.randrange(1, len(boxes.classes)) if mask >> GENERAL & 1 else 0
        ft = rng.randrange(2)
        column = tuple(
            boxes.classes[gs] if c == GENERAL else (rng.randrange(20) if mask >> c & 1 else None)
            for c in range(len(CATEGORIES))
        )
        for r, d in enumerate(ROLLS):
            engine = box_choices(column, d, options, first_throw=bool(ft))
            if r in GENERAL_ROWS:
                f = d[0] - 1
                kind = tables.kind[mask, f]
                allowed = tables.allowed[mask, f]
                points, bonus = tables.points[kind, gs, ft], tables.bonus[kind, gs, ft]
                assert (tables.box[kind] == np.arange(len(CATEGORIES))).all()
            else:
                allowed = np.array([v is None for v in column])
                points, bonus = boxes.points[0, ft, r], boxes.bonus[0, ft, r]
            table = {
                c: Entry(int(points[i]), int(bonus[i]))
                for i, c in enumerate(CATEGORIES)
                if allowed[i]
            }
            assert table == engine, (column, d, ft)


@pytest.mark.parametrize(
    ("options", "classes"),
    [
        pytest.param(YAHTZEE_NO_JOKER, (None, 0), id="no-bonus-one-filled-state"),
        pytest.param(YAHTZEE_FORCED, (None, 0, 50), id="bonus-50-differs-from-0"),
        pytest.param(FIRST_THROW_DOUBLE, (None, 0, 50), id="100-earns-no-bonus-like-0"),
    ],
)
def test_generał_box_states(options: GeneralOptions, classes: tuple[int | None, ...]) -> None:
    assert _Boxes(options, write_value).classes == classes


# -- the keep lattice -----------------------------------------------------------------------------


def test_keep_values_are_expectations_over_the_throw() -> None:
    rng = np.random.default_rng(3)
    value = rng.random((len(ROLLS), 2))
    keep = LATTICE.keep_values(value)
    for kept in [(), (6,), (2, 2), (1, 3, 5), (4, 4, 4, 6)]:
        direct = sum(
            p * value[LATTICE.index[5][tuple(sorted(kept + rest))]]
            for rest, p in outcomes(5 - len(kept))
        )
        assert keep[len(kept)][LATTICE.index[len(kept)][kept]] == pytest.approx(direct)


def test_best_keep_is_the_best_sub_multiset_of_at_most_four() -> None:
    rng = np.random.default_rng(5)
    keep = tuple(rng.random((len(ks), 1)) for ks in LATTICE.by_size)
    best = LATTICE.best_keep(keep)
    for r, d in enumerate(ROLLS):
        direct = max(
            keep[len(k)][LATTICE.index[len(k)][k], 0] for k in sub_multisets(d) if len(k) < 5
        )
        assert best[r, 0] == direct


# -- advice on engine states ----------------------------------------------------------------------


def state_of(column: Column, *, bonus: int = 0) -> GeneralState:
    return GeneralState(("Ann",), ((column,),), ((bonus,),))


def test_advice_ranks_every_legal_decision(solver_for: Solvers) -> None:
    game = General(GENERAL_DEFAULT)
    state = game.apply(game.initial_state(["Ann"]), Roll([2, 3, 3, 5, 6]))
    advice = solver_for(GENERAL_DEFAULT).advise(state)
    actions = [c.actions[0] for c in advice.choices]
    assert sorted(map(str, actions)) == sorted(map(str, game.legal_actions(state)))
    values = [c.value for c in advice.choices]
    assert values == sorted(values, reverse=True)
    assert advice.expected == values[0]


def test_keep_value_is_the_throw_that_follows(solver_for: Solvers) -> None:
    game = General(FIRST_THROW_DOUBLE)
    solver = solver_for(FIRST_THROW_DOUBLE)
    state = state_of((2, 4, 6, 8, 10, 12, 20, 0, 25, None, 40, 50, None))
    state = game.apply(state, Roll([3, 4, 5, 5, 6]))
    advice = solver.advise(state)
    for choice in advice.choices[:4]:
        after = game.apply(state, choice.actions[0])
        if isinstance(choice.actions[0], Score):
            assert choice.value == pytest.approx(solver.value(after))
            continue
        assert solver.value(after) == pytest.approx(choice.value)
        through = sum(
            p * solver.value(game.apply(after, Roll(r))) for r, p in game.roll_outcomes(after)
        )
        assert through == pytest.approx(choice.value)


def test_start_of_game_is_the_mean_over_the_first_throw(solver_for: Solvers) -> None:
    game = General(YAHTZEE_FORCED)
    solver = solver_for(YAHTZEE_FORCED)
    state = game.initial_state(["Ann"])
    through = sum(
        p * solver.value(game.apply(state, Roll(d))) for d, p in game.roll_outcomes(state)
    )
    assert solver.value(state) == pytest.approx(through)
    assert solver.value(state) == pytest.approx(solver.start)


def test_last_box_is_worth_what_the_engine_adds(solver_for: Solvers) -> None:
    game = General(YAHTZEE_FORCED)
    solver = solver_for(YAHTZEE_FORCED)
    state = state_of((3, 8, 12, 12, 10, 12, 20, 24, None, 30, 40, 50, 22), bonus=100)
    for d in ([6, 6, 6, 6, 6], [2, 2, 3, 3, 3], [1, 2, 3, 4, 6]):
        decided = game.apply(state, Roll(d))
        for _ in range(2):
            decided = game.apply(game.apply(decided, Keep([])), Roll(d))
        advice = solver.advise(decided)
        assert [c.label for c in advice.choices] == ["score full_house"]
        added = game.preview(decided, Score("full_house"))
        assert advice.expected == game.totals(decided)[0] + added


def test_finished_sheet_advice_is_its_total(solver_for: Solvers) -> None:
    solver = solver_for(GENERAL_DEFAULT)
    column = (3, 6, 12, 16, 10, 18, 17, 24, 25, 30, 40, 50, 19)
    advice = solver.advise(state_of(column))
    assert advice.expected == 270
    assert [c.label for c in advice.choices] == ["stop"]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_play_advice_is_consistent(solver_for: Solvers, seed: int) -> None:
    game = General(GENERAL_DEFAULT)
    solver = solver_for(GENERAL_DEFAULT)
    rng = random.Random(seed)
    state = game.initial_state(["Ann"])
    for _ in range(rng.randrange(1, 30)):
        if game.phase(state) is Phase.FINISHED:
            break
        state = game.apply(state, rng.choice(game.legal_actions(state)))
    advice = solver.advise(state)
    assert advice.expected >= game.totals(state)[0]
    if game.phase(state) is Phase.DECIDE:
        legal = sorted(map(str, game.legal_actions(state)))
        assert sorted(str(c.actions[0]) for c in advice.choices) == legal
        after = game.apply(state, advice.best.actions[0])
        assert solver.value(after) == pytest.approx(advice.expected)


# -- options and the cache ------------------------------------------------------------------------


def test_three_columns_are_refused() -> None:
    with pytest.raises(InvalidOption) as err:
        GeneralSolver(GeneralOptions(columns=3), cache=False)
    assert str(err.value) == (
        "the coach solves a one-column sheet, not columns=3: on a three-column sheet each turn's "
        "dice may go to any column, which is another game"
    )


def test_a_generał_box_the_options_cannot_fill_is_refused(solver_for: Solvers) -> None:
    column = (None,) * 11 + (30, None)
    with pytest.raises(ValueError, match="^no Generał box holds 30 under GeneralOptions"):
        solver_for(GENERAL_DEFAULT).expected(column)


def test_cache_is_written_once_and_loaded(tmp_path: Path) -> None:
    first = GeneralSolver(GENERAL_DEFAULT, cache_dir=tmp_path)
    assert first.built
    assert first.path is not None
    assert first.path.exists()
    again = GeneralSolver(GENERAL_DEFAULT, cache_dir=tmp_path)
    assert not again.built
    assert again.start == first.start
    first.path.write_bytes(b"not a table")
    rebuilt = GeneralSolver(GENERAL_DEFAULT, cache_dir=tmp_path)
    assert rebuilt.built
    assert rebuilt.start == first.start


def test_no_cache_touches_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIPCAM_CACHE_DIR", str(tmp_path))
    solver = GeneralSolver(GENERAL_DEFAULT, cache=False)
    assert solver.path is None
    assert list(tmp_path.iterdir()) == []
