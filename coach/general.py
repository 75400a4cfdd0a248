"""The optimal solitaire strategy of one Generał sheet column, from the engine's own scoring.

:class:`GeneralSolver` solves the classic dynamic programme of solitaire Yahtzee (Verhoeff 1999,
Glenn 2006) for the Generał engine (:mod:`scoring.games.general`) with its options: it maximises
the expected final total of one sheet column. A state between turns is

* the set of filled boxes (13 bits),
* the sum of the upper boxes capped at 63 (only with ``upper_bonus``; without it the sum does not
  matter and is not tracked),
* what the Generał box holds: empty, or one of the values it can be written with, values that
  behave alike under the options being merged (with ``extra_general_bonus`` a Generał box of 50
  earns bonuses and one of 0 does not; without it they are one state).

Within a turn the dice (252 results of five dice) and the throws made (1-3) are added, and the keep
(any sub-multiset of at most four of the dice) or the box to write is chosen.

Every box value comes from :func:`scoring.games.general.write_value` (points, Generał bonus, joker
placement, first-throw multiplier) and the upper bonus from ``options.upper_bonus`` at
``UPPER_BONUS_THRESHOLD``, as :func:`~scoring.games.general.column_total` adds it. The solver
relies on what ``write_value`` documents about its inputs: the value depends on the column only
through which boxes are empty and what the Generał box holds, and only a Generał (five equal dice)
is treated differently once the Generał box is filled (the joker and the bonus). The tests check
this against ``box_choices`` on sampled columns.

Supported: every option combination with ``columns=1``. The three-column sheet (``columns=3``) is
not the same game solved three times: one turn's dice may go to any of the three columns, so its
state is the product of three columns; it is refused with ``InvalidOption``.

The whole table (the expected remaining score of every reachable state between turns, about half
a million states with the upper bonus) takes some seconds of numpy to build and is cached on disk
(:func:`default_cache_dir`); advice for one state then re-plays that state's turn alone.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from coach._lattice import LATTICE, N_DICE, FloatArray, IntArray
from coach.advice import Advice, Choice, rank
from scoring.core import Keep, Phase, Score
from scoring.dice import Dice, sub_multisets
from scoring.errors import InvalidOption
from scoring.games.general import (
    CATEGORIES,
    DEFAULT,
    EMPTY_COLUMN,
    MAX_THROWS,
    UPPER,
    UPPER_BONUS_THRESHOLD,
    Column,
    Entry,
    General,
    GeneralOptions,
    GeneralState,
    column_total,
    upper_sum,
    write_value,
)

FORMAT = 1
"""Version of the cached table's layout and meaning; a cache of another version is rebuilt."""

N_BOXES = len(CATEGORIES)
FULL = (1 << N_BOXES) - 1
GENERAL = CATEGORIES.index("general")
N_UPPER = len(UPPER)
ROLLS: tuple[Dice, ...] = LATTICE.rolls
GENERALS: tuple[Dice, ...] = tuple((f,) * N_DICE for f in range(1, 7))
GENERAL_ROWS: IntArray = np.array([ROLLS.index(d) for d in GENERALS], dtype=np.intp)
_OTHER_ROWS: IntArray = np.array(
    [i for i in range(len(ROLLS)) if i not in set(GENERAL_ROWS.tolist())], dtype=np.intp
)
_CHUNK = 2048  # rows per numpy batch: big enough to amortise the calls, small enough for the cache

BoolArray = npt.NDArray[np.bool_]


class WriteValue(Protocol):
    """The signature of :func:`scoring.games.general.write_value`, the one source of box values."""

    def __call__(
        self,
        column: Column,
        values: Sequence[int],
        category: str,
        options: GeneralOptions = ...,
        *,
        first_throw: bool = ...,
    ) -> Entry | None:
        """What writing five dice in a box of a column gives; None if the box cannot take them."""


def default_cache_dir() -> Path:
    """Where solved tables are kept: ``$PIPCAM_CACHE_DIR``, else the user's cache folder."""
    explicit = os.environ.get("PIPCAM_CACHE_DIR")
    if explicit:
        return Path(explicit) / "coach"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pipcam" / "coach"


class _Boxes:
    """The engine's box values laid out on the solver's grid for one set of options."""

    def __init__(self, options: GeneralOptions, write: WriteValue) -> None:
        self.options = options
        self.write = write
        self.threshold = UPPER_BONUS_THRESHOLD
        self.upper_bonus = options.upper_bonus or 0
        self.n_up = self.threshold + 1 if self.upper_bonus else 1
        self.classes = self._general_classes()
        n_gs = len(self.classes)
        contexts = [self._column(0, gs) for gs in range(n_gs)]
        # points[gs, ft, roll, box] and bonus[...]: on a column where only the Generał box may be
        # filled (-1 where the box refuses the dice there).
        self.points = np.full((n_gs, 2, len(ROLLS), N_BOXES), -1, dtype=np.int64)
        self.bonus = np.zeros((n_gs, 2, len(ROLLS), N_BOXES), dtype=np.int64)
        for gs, column in enumerate(contexts):
            for ft in (0, 1):
                for r, d in enumerate(ROLLS):
                    for c, category in enumerate(CATEGORIES):
                        entry = write(column, d, category, options, first_throw=bool(ft))
                        if entry is not None:
                            self.points[gs, ft, r, c] = entry.points
                            self.bonus[gs, ft, r, c] = entry.bonus
        others = self.points[:, :, _OTHER_ROWS]
        same = others[1:, :, :, :GENERAL] == others[:1, :, :, :GENERAL]
        same_after = others[1:, :, :, GENERAL + 1 :] == others[:1, :, :, GENERAL + 1 :]
        if not (same.all() and same_after.all() and (self.bonus[:, :, _OTHER_ROWS] == 0).all()):
            raise RuntimeError("write_value scores dice that are no Generał by the Generał box")
        self._generals: _GeneralTables | None = None

    def _general_classes(self) -> tuple[int | None, ...]:
        """Empty, then one representative per way the Generał box's value plays out."""
        values = sorted(
            {
                entry.points
                for d in ROLLS
                for ft in (False, True)
                if (entry := self.write(EMPTY_COLUMN, d, "general", self.options, first_throw=ft))
                is not None
            }
        )
        seen: dict[tuple[object, ...], int] = {}
        self.class_of: dict[int, int] = {}
        for v in values:
            signature = tuple(
                self.write(column, d, category, self.options, first_throw=ft)
                for column in (
                    _with(EMPTY_COLUMN, {GENERAL: v}),
                    _with(EMPTY_COLUMN, {GENERAL: v, **dict.fromkeys(range(N_UPPER), 0)}),
                )
                for d in GENERALS
                for category in CATEGORIES
                for ft in (False, True)
            )
            self.class_of[v] = seen.setdefault(signature, len(seen) + 1)
        reps: dict[int, int] = {}
        for v, gs in self.class_of.items():
            reps.setdefault(gs, v)
        return (None, *(reps[gs] for gs in sorted(reps)))

    def _column(self, mask: int, gs: int) -> Column:
        """A column with the boxes of ``mask`` written (0; the Generał box its class's value)."""
        filled: dict[int, int | None] = {c: 0 for c in range(N_BOXES) if mask >> c & 1}
        filled[GENERAL] = self.classes[gs]
        return _with(EMPTY_COLUMN, filled)

    def choices(
        self, column: Column, values: Dice, *, first_throw: bool = False
    ) -> dict[str, Entry]:
        """Every box the dice may go into, as ``box_choices`` says, from ``write``."""
        out = {}
        for category, written in zip(CATEGORIES, column, strict=True):
            if written is not None:
                continue  # a filled box takes nothing (write_value's contract)
            entry = self.write(column, values, category, self.options, first_throw=first_throw)
            if entry is not None:
                out[category] = entry
        return out

    def generals_in(
        self, column: Column
    ) -> tuple[BoolArray, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The six Generałs on one real column: ``allowed``, ``points`` and ``bonus`` as in
        :class:`_Generals` (``points`` holds the entries themselves, -1 where refused)."""
        allowed = np.zeros((1, len(GENERALS), N_BOXES), dtype=np.bool_)
        points = np.full((1, 2, len(GENERALS), N_BOXES), -1, dtype=np.int64)
        bonus = np.zeros((1, 2, len(GENERALS), N_BOXES), dtype=np.int64)
        for ft in (0, 1):
            for f, d in enumerate(GENERALS):
                for category, entry in self.choices(column, d, first_throw=bool(ft)).items():
                    c = CATEGORIES.index(category)
                    allowed[0, f, c] = True
                    points[0, ft, f, c] = entry.points
                    bonus[0, ft, f, c] = entry.bonus
        return allowed, points, bonus

    def state_of(self, column: Column) -> tuple[int, int, int]:
        """The solver's (filled boxes, capped upper sum, Generał class) of a sheet column."""
        if len(column) != N_BOXES:
            raise ValueError(f"a sheet column has {N_BOXES} boxes, not {len(column)}")
        mask = sum(1 << c for c, v in enumerate(column) if v is not None)
        up = min(self.threshold, upper_sum(column)) if self.n_up > 1 else 0
        value = column[GENERAL]
        if value is None:
            return mask, up, 0
        if value not in self.class_of:
            raise ValueError(f"no Generał box holds {value} under {self.options}")
        return mask, up, self.class_of[value]

    def general_tables(self) -> _GeneralTables:
        """Where a Generał may be written and what it gives, for every set of filled boxes.

        With the Generał box empty a Generał is ordinary dice (any empty box, its ordinary value).
        With it filled, the engine is asked for every set of filled boxes which boxes each
        Generał may take and for what; each distinct (face, box, entry) is one kind, whose values
        for every Generał-box class and throw come from the first column that showed it.
        """
        if self._generals is not None:
            return self._generals
        n_gs, n_faces = len(self.classes), len(GENERALS)
        bits = (np.arange(FULL + 1)[:, None] >> np.arange(N_BOXES)[None, :]) & 1
        allowed = np.repeat((bits == 0)[:, None, :], n_faces, axis=1)
        # Kinds 0..: the ordinary value of each Generał in each box, whatever the Generał box.
        ordinary = np.arange(n_faces * N_BOXES).reshape(n_faces, N_BOXES)
        kind = np.repeat(ordinary[None], FULL + 1, axis=0)
        points = list(_per_kind(self.points[0][:, GENERAL_ROWS], n_gs))
        bonus = list(_per_kind(self.bonus[0][:, GENERAL_ROWS], n_gs))
        box = list(np.tile(np.arange(N_BOXES), n_faces))
        kinds: dict[tuple[int, str, Entry], int] = {}
        for mask in range(FULL):
            if not mask >> GENERAL & 1:
                continue
            column = self._column(mask, 1)
            allowed[mask] = False
            for f, d in enumerate(GENERALS):
                for category, entry in self.choices(column, d).items():
                    c = CATEGORIES.index(category)
                    key = (f, category, entry)
                    if key not in kinds:
                        kinds[key] = len(points)
                        p, b = self._witness(mask, d, category)
                        points.append(p)
                        bonus.append(b)
                        box.append(c)
                    allowed[mask, f, c] = True
                    kind[mask, f, c] = kinds[key]
        self._generals = _GeneralTables(
            allowed, kind, np.array(box, dtype=np.intp), np.stack(points), np.stack(bonus)
        )
        return self._generals

    def _witness(
        self, mask: int, d: Dice, category: str
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """``[Generał class, first throw]``: a Generał in a box of one column, per class."""
        points = np.full((len(self.classes), 2), -1, dtype=np.int64)
        bonus = np.zeros((len(self.classes), 2), dtype=np.int64)
        for gs in range(1, len(self.classes)):
            column = self._column(mask, gs)
            for ft in (0, 1):
                entry = self.write(column, d, category, self.options, first_throw=bool(ft))
                if entry is None:
                    raise RuntimeError("the boxes a Generał may take depend on the Generał box")
                points[gs, ft] = entry.points
                bonus[gs, ft] = entry.bonus
        return points, bonus

    def fingerprint(self) -> str:
        """A digest of every box value the table was computed from, and of the options."""
        digest = hashlib.sha256()
        digest.update(json.dumps(dataclasses.asdict(self.options), sort_keys=True).encode())
        name = getattr(self.write, "__qualname__", type(self.write).__qualname__)
        digest.update(f"{getattr(self.write, '__module__', '')}.{name}".encode())
        digest.update(repr(self.classes).encode())
        digest.update(self.points.tobytes())
        digest.update(self.bonus.tobytes())
        return f"{FORMAT}-{digest.hexdigest()[:24]}"


def _per_kind(table: npt.NDArray[np.int64], n_gs: int) -> npt.NDArray[np.int64]:
    """``[first throw, face - 1, box]`` as ``[face * box, Generał class, first throw]``."""
    flat = table.transpose(1, 2, 0).reshape(-1, 1, 2)
    return np.repeat(flat, n_gs, axis=1)


def _with(column: Column, values: dict[int, int | None]) -> Column:
    return tuple(values.get(c, v) for c, v in enumerate(column))


class _Grid:
    """Value tables indexed for numpy: each box's distinct entries and where each roll lands."""

    def __init__(self, boxes: _Boxes, extra: Sequence[tuple[int, int]] = ()) -> None:
        self.boxes = boxes
        generals = boxes._generals
        self.values: list[IntArray] = []
        self.index = np.zeros(boxes.points.shape, dtype=np.intp)
        for c in range(N_BOXES):
            seen = [boxes.points[..., c].ravel(), np.array([0] + [v for k, v in extra if k == c])]
            if generals is not None:
                seen.append(generals.points[generals.box == c].ravel())
            flat: npt.NDArray[np.int64] = np.concatenate(seen)
            values = np.unique(flat[flat >= 0])
            self.values.append(values)
            self.index[..., c] = np.searchsorted(values, np.maximum(boxes.points[..., c], 0))
        if generals is not None:
            self.kind_index = np.zeros(generals.points.shape, dtype=np.intp)
            for c in range(N_BOXES):
                mine = generals.box == c
                entries = np.maximum(generals.points[mine], 0)
                self.kind_index[mine] = np.searchsorted(self.values[c], entries)
        # What the Generał box then holds, per value it may be written with.
        self.general_next = np.array(
            [boxes.class_of.get(int(v), 0) for v in self.values[GENERAL]], dtype=np.intp
        )
        self.other_bonus = bool(boxes.bonus[0][:, _OTHER_ROWS].any())

    def locate(self, points: npt.NDArray[np.int64]) -> IntArray:
        """Positions of box entries (boxes on the last axis) in each box's values (0 if -1)."""
        out = np.zeros(points.shape, dtype=np.intp)
        for c in range(N_BOXES):
            out[..., c] = np.searchsorted(self.values[c], np.maximum(points[..., c], 0))
        return out

    def generals_of(self, tables: _GeneralTables, rows: tuple[IntArray, IntArray]) -> _Generals:
        """The boxes and values of the six Generałs for rows of (filled boxes, Generał class)."""
        mask, gs = rows
        kind = tables.kind[mask]
        index = self.kind_index[kind, gs[:, None, None]].transpose(0, 3, 1, 2)
        bonus = tables.bonus[kind, gs[:, None, None]].transpose(0, 3, 1, 2)
        return _Generals(tables.allowed[mask], index, bonus)

    def unseen(self, points: npt.NDArray[np.int64]) -> list[tuple[int, int]]:
        """The (box, entry) pairs among ``points`` (boxes on the last axis) not in the values."""
        return [
            (c, int(v))
            for c in range(N_BOXES)
            for v in np.unique(points[..., c])
            if v >= 0 and v not in self.values[c]
        ]

    def reachable_ups(self) -> list[IntArray]:
        """Per set of filled upper boxes, every capped upper sum it may hold (a superset)."""
        cap = self.boxes.threshold
        out: list[IntArray] = []
        for umask in range(1 << N_UPPER):
            sums = {0}
            if self.boxes.n_up > 1:
                for c in range(N_UPPER):
                    if umask >> c & 1:
                        sums = {min(cap, s + int(v)) for s in sums for v in self.values[c]}
            out.append(np.array(sorted(sums), dtype=np.intp))
        return out

    def score(
        self,
        table: FloatArray,
        rows: tuple[IntArray, IntArray, IntArray],
        generals: _Generals,
        ft: int,
    ) -> FloatArray:
        """``[roll, row]``: the best box's entry plus bonuses plus the expected rest of the game.

        Arrays keep the states on their last axis so that every gather copies whole rows.
        """
        mask, up, gs = rows
        b = self.boxes
        cap = b.threshold
        n = len(mask)
        columns = np.arange(n)
        best = np.full((len(ROLLS), n), -np.inf)
        for c in range(N_BOXES):
            empty = (mask >> c & 1) == 0
            if not empty.any():
                continue
            values = self.values[c][:, None]
            after = mask | (1 << c)
            # small[j, row]: writing the box's j-th possible entry, then the rest of the game.
            small: FloatArray
            if c < N_UPPER and b.n_up > 1:
                new_up = np.minimum(cap, up + values)
                reached = (up < cap) & (new_up >= cap)
                small = values + b.upper_bonus * reached + table[after, new_up, gs]
            elif c == GENERAL:
                small = values + table[after, up, self.general_next[:, None]]
            else:
                small = values + table[after, up, gs]
            small[:, ~empty] = -np.inf
            value = np.take(small, self.index[0, ft, :, c], axis=0)
            if self.other_bonus:
                value += self.boxes.bonus[0, ft, :, c][:, None]
            # Five equal dice: the joker decides the boxes, the Generał box the bonus.
            at = generals.index[:, ft, :, c].T
            gain = small[at, columns] + generals.bonus[:, ft, :, c].T
            value[GENERAL_ROWS] = np.where(generals.allowed[:, :, c].T, gain, -np.inf)
            np.maximum(best, value, out=best)
        return best


@dataclass(frozen=True)
class _GeneralTables:
    """Per set of filled boxes, where the six Generałs may go and which values they get there."""

    allowed: BoolArray  # [mask, face - 1, box]
    kind: IntArray  # [mask, face - 1, box]
    box: IntArray  # [kind]
    points: npt.NDArray[np.int64]  # [kind, Generał class, first throw]; -1: never written so
    bonus: npt.NDArray[np.int64]  # [kind, Generał class, first throw]


@dataclass(frozen=True)
class _Generals:
    """Per row, where each of the six Generałs may be written and what it gives there."""

    allowed: BoolArray  # [row, face - 1, box]
    index: IntArray  # [row, first throw, face - 1, box]: position of the entry in the box's values
    bonus: npt.NDArray[np.int64]  # [row, first throw, face - 1, box]


@dataclass(frozen=True)
class _Turn:
    """One turn of some states: per throw, the value of each roll and of each keep before it."""

    roll: tuple[FloatArray, FloatArray, FloatArray]  # after throw 1, 2, 3: [roll, row]
    keep: tuple[tuple[FloatArray, ...], tuple[FloatArray, ...]]  # before throw 2, 3: [keep, row]

    @property
    def start(self) -> FloatArray:
        """``[row]``: the expected value of the turn before its first throw."""
        # Not a BLAS product: its threads spin idle on a busy machine, for no gain at this size.
        out: FloatArray = (self.roll[0] * LATTICE.probability[:, None]).sum(axis=0)
        return out


def _turn(late: FloatArray, first: FloatArray) -> _Turn:
    """Back up a turn from the value of writing each roll now (``first``: after throw 1)."""
    keep3 = LATTICE.keep_values(late)
    roll2 = np.maximum(late, LATTICE.best_keep(keep3))
    keep2 = LATTICE.keep_values(roll2)
    roll1 = np.maximum(first, LATTICE.best_keep(keep2))
    return _Turn((roll1, roll2, late), (keep2, keep3))


def solve(
    options: GeneralOptions = DEFAULT, *, write: WriteValue = write_value
) -> tuple[FloatArray, str]:
    """The expected remaining score of every reachable state between turns, and its fingerprint.

    The array is indexed ``[filled boxes mask, capped upper sum, Generał class]``; states that no
    game reaches hold NaN. Pure and deterministic; takes seconds.
    """
    check_options(options)
    boxes = _Boxes(options, write)
    tables = boxes.general_tables()
    grid = _Grid(boxes)
    table = np.full((FULL + 1, boxes.n_up, len(boxes.classes)), np.nan)
    table[FULL] = 0.0
    ups = grid.reachable_ups()
    n_gs = len(boxes.classes)
    multiplied = options.first_roll_multiplier != 1
    levels: list[list[int]] = [[] for _ in range(N_BOXES + 1)]
    for mask in range(FULL):
        levels[mask.bit_count()].append(mask)
    for level in reversed(levels):
        if not level:
            continue
        parts = []
        for mask in level:
            up = ups[mask & ((1 << N_UPPER) - 1)]
            classes = np.arange(1, n_gs) if mask >> GENERAL & 1 else np.zeros(1, dtype=np.intp)
            m, u, g = np.meshgrid([mask], up, classes, indexing="ij")
            parts.append(np.stack([m.ravel(), u.ravel(), g.ravel()]))
        rows = np.concatenate(parts, axis=1)
        for start in range(0, rows.shape[1], _CHUNK):
            mask_r, up_r, gs_r = rows[:, start : start + _CHUNK]
            chunk = (mask_r, up_r, gs_r)
            generals = grid.generals_of(tables, (mask_r, gs_r))
            late = grid.score(table, chunk, generals, 0)
            first = grid.score(table, chunk, generals, 1) if multiplied else late
            table[mask_r, up_r, gs_r] = _turn(late, first).start
    return table, boxes.fingerprint()


def check_options(options: GeneralOptions) -> None:
    """Refuse (``InvalidOption``) the options the solver cannot solve: a three-column sheet."""
    if options.columns != 1:
        raise InvalidOption(
            f"the coach solves a one-column sheet, not columns={options.columns}: on a "
            "three-column sheet each turn's dice may go to any column, which is another game"
        )


def _load(path: Path, fingerprint: str) -> FloatArray | None:
    try:
        with np.load(path) as data:
            if str(data["fingerprint"]) != fingerprint:
                return None
            table: FloatArray = np.asarray(data["table"], dtype=np.float64)
            return table
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None


def _save(path: Path, table: FloatArray, fingerprint: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written beside the target and renamed, so a reader never sees half a file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            np.savez_compressed(out, table=table, fingerprint=np.array(fingerprint))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class GeneralSolver:
    """Optimal solitaire play of one Generał sheet column under some options.

    ``GeneralSolver(options)`` loads the solved table from the cache (``cache_dir``, default
    :func:`default_cache_dir`) or solves it (seconds) and stores it there (``path``; None when
    it could not be written); ``cache=False`` solves in memory and touches no file. ``write``
    stands in for the engine's :func:`~scoring.games.general.write_value` (to study a rules
    variant the engine lacks). Queries are pure and take about a millisecond:

    * :meth:`expected` (a column between turns): its expected final total;
    * :meth:`advise` (an engine state): the expected final total of the mover's column and every
      decision open to the mover (the keeps, the boxes to write) ranked by the expected final
      total it leads to.

    Totals are column totals as :func:`~scoring.games.general.column_total` counts them (entries,
    the upper bonus and the Generał bonuses), so they include what is already written.

    >>> from scoring.core import Roll
    >>> solver = GeneralSolver(cache=False)  # Generał's own rules: about a second
    >>> game = General()
    >>> state = game.apply(game.initial_state(["Ann"]), Roll([6, 6, 6, 6, 6]))
    >>> solver.advise(state).best.label
    'score general'
    >>> state = game.apply(game.initial_state(["Ann"]), Roll([1, 2, 3, 4, 6]))
    >>> solver.advise(state).best.label  # the small straight is safe: go for the large one
    'keep 1 2 3 4'
    """

    def __init__(
        self,
        options: GeneralOptions = DEFAULT,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        cache: bool = True,
        write: WriteValue = write_value,
    ) -> None:
        check_options(options)
        self.options = options
        self._game = General(options)
        self._boxes = _Boxes(options, write)
        self._grid: _Grid | None = None
        fingerprint = self._boxes.fingerprint()
        self.path: Path | None = None
        if cache:
            folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
            self.path = folder / f"general-{fingerprint}.npz"
            loaded = _load(self.path, fingerprint)
            if loaded is not None:
                self._table = loaded
                self.built = False
                return
        self._table, _ = solve(options, write=write)
        self.built = True
        if self.path is not None:
            try:
                _save(self.path, self._table, fingerprint)
            except OSError:
                self.path = None  # a cache that cannot be written is only a slower start

    def _grid_for_queries(self) -> _Grid:
        if self._grid is None:
            self._grid = _Grid(self._boxes)
        return self._grid

    @property
    def start(self) -> float:
        """The expected total of an empty column under optimal play."""
        return self.expected(EMPTY_COLUMN)

    def expected(self, column: Column, bonus: int = 0) -> float:
        """The expected final total of a column (with ``bonus`` Generał bonuses) between turns."""
        mask, up, gs = self._boxes.state_of(column)
        return column_total(column, bonus, self.options) + float(self._table[mask, up, gs])

    def value(self, state: GeneralState) -> float:
        """The expected final total of the mover's column from any engine state, optimal play."""
        return self.advise(state).expected

    def advise(self, state: GeneralState) -> Advice:
        """The mover's decisions (keeps, boxes to write) ranked by the expected final total.

        The values are expected final totals of the mover's column (what is written counts).
        When a throw is due the one choice is to throw; when the sheet is full, to stop.
        """
        game, p = self._game, state.player
        player = state.players[p]
        column, bonus = state.sheets[p][0], state.bonuses[p][0]
        base = column_total(column, bonus, self.options)
        phase = game.phase(state)
        empty = column.count(None)
        if phase is Phase.FINISHED:
            return self._advice(player, "the sheet is full", [Choice("stop", (), float(base))])
        if phase is Phase.ROLL and not state.dice:
            value = self.expected(column, bonus)
            situation = f"before the first throw; {_boxes(empty)} to fill"
            return self._advice(player, situation, [Choice("throw 5 dice", (), value)])
        turn = self._turn_of(column)
        if phase is Phase.ROLL:
            kept = state.kept or ()
            value = base + _keep_value(turn.keep[state.throws - 1], kept)
            n = N_DICE - len(kept)
            situation = f"keeping {_text(kept)} before throw {state.throws + 1}; {empty} to fill"
            return self._advice(player, situation, [Choice(f"throw {n} dice", (), value)])
        first = state.throws == 1
        choices = []
        for category, entry in self._boxes.choices(column, state.dice, first_throw=first).items():
            after = _with(column, {CATEGORIES.index(category): entry.points})
            value = self.expected(after, bonus + entry.bonus)
            choices.append(Choice(f"score {category}", (Score(category),), value))
        if state.throws < MAX_THROWS:
            keep = turn.keep[state.throws - 1]
            choices.extend(
                Choice(str(Keep(k)), (Keep(k),), base + _keep_value(keep, k))
                for k in sub_multisets(state.dice)
                if len(k) < N_DICE
            )
        situation = (
            f"dice {_text(state.dice)} after throw {state.throws} of {MAX_THROWS}; "
            f"{_boxes(empty)} to fill"
        )
        return self._advice(player, situation, choices)

    def _advice(self, player: str, situation: str, choices: list[Choice]) -> Advice:
        return Advice(
            game=self._game.game_id,
            player=player,
            situation=situation,
            objective="expected final total of the column",
            choices=rank(sorted(choices, key=lambda c: c.label)),
        )

    def _turn_of(self, column: Column) -> _Turn:
        grid = self._grid_for_queries()
        mask, up, gs = self._boxes.state_of(column)
        rows = (np.array([mask]), np.array([up]), np.array([gs]))
        allowed, points, bonus = self._boxes.generals_in(column)
        unseen = grid.unseen(points)
        if unseen:
            # A joker value no ordinary roll scores: index it on a grid of its own.
            grid = _Grid(self._boxes, unseen)
        generals = _Generals(allowed, grid.locate(points), bonus)
        late = grid.score(self._table, rows, generals, 0)
        first = grid.score(self._table, rows, generals, 1)
        return _turn(late, first)


def _keep_value(keep: tuple[FloatArray, ...], kept: Dice) -> float:
    return float(keep[len(kept)][LATTICE.index[len(kept)][kept], 0])


def _boxes(n: int) -> str:
    """``1 box``, ``2 boxes``."""
    return f"{n} box" if n == 1 else f"{n} boxes"


def _text(values: Dice) -> str:
    return " ".join(map(str, values)) if values else "nothing"
