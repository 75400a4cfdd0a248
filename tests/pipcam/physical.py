"""A physical dice table for the table's tests: dice lie at places in the roll zone or out of it.

A simulated player chooses among the actions the engine offers and performs each as at a real
table: a throw lands the thrown dice at fresh places with random faces, a set-aside or a hold
takes dice out of the roll zone (the others stay exactly where they lay), a bank or a written
category is a button or a phone. The table (with a real store) sees only the settled readings of
the roll zone, the buttons and the phones; what the player meant is the engine applied to the
chosen actions directly. :func:`play` returns every step where the two part.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pipcam.table import Table
from scoring.core import Action, Bank, Forbidden, Keep, Roll, Score, Stop
from tests.pipcam._fakes import FakeDie, FakeReading

SIDE = 40  # a die's box, pixels a side
ZONE = 900  # the roll zone is ZONE x ZONE pixels
N_DICE = {
    "general": 5,
    "thousand": 5,
    "kymppitonni": 6,
    "jednicky-a-petky": 6,
    "sest-kostek": 6,
    "drapky": 6,
    "sekvence": 6,
    "zakazana-cisla": 6,
}
HOLDS = ("general", "drapky")  # a keep is the dice held (out of the zone) for the next throw


@dataclass
class Die:
    value: int
    x: int
    y: int

    @property
    def box(self) -> tuple[int, int, int, int]:
        return (self.x, self.y, self.x + SIDE, self.y + SIDE)


@dataclass
class Mismatch:
    game: str
    seed: int
    step: int
    what: str  # the step performed
    seen: list[str]  # the table's last actions
    expected: list[str]  # the intended last actions
    problem: str = ""
    kind: str = ""


@dataclass
class Tray:
    """The dice: in the roll zone and out of it (set aside or held), each at its place."""

    rng: random.Random
    zone: list[Die] = field(default_factory=list)
    out: list[Die] = field(default_factory=list)
    # Whether the camera sees the dice out of the roll zone (a calibrated zone inside the
    # frame), or only the roll zone (the whole frame: dice set aside leave the picture).
    sees_aside: bool = True
    # Careful throws never land a die where one taken out lay (with its face, the table could
    # take it for a die that was not thrown: a rare refusal, see unmoved()).
    careful: bool = False
    ghosts: list[Die] = field(default_factory=list)
    # Camera faults out of the roll zone, per reading: one die there read with another face,
    # or not seen at all (the reading of the dice in the zone is right).
    misreads: float = 0.0
    misses: float = 0.0
    cocked: Die | None = None  # a die of the zone leaning on another or the wall: not read
    # The die out of the zone the last reading misread: its box and its true face.
    misread: tuple[list[int], int] | None = None

    def _free(self, taken: list[tuple[int, int]]) -> tuple[int, int]:
        while True:
            x, y = self.rng.randrange(ZONE - SIDE), self.rng.randrange(ZONE - SIDE)
            if all(abs(x - a) > SIDE + 4 or abs(y - b) > SIDE + 4 for a, b in taken):
                return x, y

    def land(self, values: Sequence[int], avoid: Sequence[Die] = ()) -> None:
        """Dice thrown into the zone (added to those lying there), away from ``avoid`` too."""
        taken = [(d.x, d.y) for d in (*self.zone, *avoid, *self.ghosts)]
        for v in values:
            x, y = self._free(taken)
            taken.append((x, y))
            self.zone.append(Die(v, x, y))

    def throw(self, thrown: list[Die], values: Sequence[int]) -> None:
        """``thrown`` (lying in the zone or not) come to rest with these faces elsewhere."""
        for d in thrown:
            if d in self.zone:
                self.zone.remove(d)
        self.land(values, avoid=thrown)
        self.ghosts.clear()

    @property
    def held(self) -> list[int]:
        return [d.value for d in self.out]

    def _out_place(self) -> tuple[int, int]:
        places = {(d.x, d.y) for d in self.out}
        return next(
            (ZONE + 100 + 60 * (i % 3), 60 * (i // 3))
            for i in range(64)
            if (ZONE + 100 + 60 * (i % 3), 60 * (i // 3)) not in places
        )

    def take_out(self, values: Sequence[int]) -> None:
        """Dice of these faces moved from the roll zone to free places out of it."""
        for v in values:
            die = next(d for d in self.zone if d.value == v)
            self.zone.remove(die)
            x, y = self._out_place()
            self.out.append(Die(v, x, y))
            if self.careful:
                self.ghosts.append(die)

    def bounce(self, die: Die) -> None:
        """A thrown die that bounced out of the zone comes to rest among the dice out of it,
        showing any face."""
        self.zone.remove(die)
        x, y = self.rng.randrange(ZONE + 60, ZONE + 300), self.rng.randrange(0, 300)
        self.out.append(Die(self.rng.randint(1, 6), x, y))

    def tidy(self) -> None:
        """The dice out of the zone pushed together elsewhere there (faces unchanged)."""
        dice, self.out = self.out, []
        dx = self.rng.choice((0, 1, 2))
        for d in dice:
            x, y = self._out_place()
            self.out.append(Die(d.value, x + 200 * dx, y + 300))

    def put_back(self, values: Sequence[int]) -> None:
        for v in values:
            self.out.remove(next(d for d in self.out if d.value == v))
        self.land(values)

    def reading(self) -> FakeReading:
        dice = list(self.zone)
        self.rng.shuffle(dice)
        leaning = FakeDie(None, confidence=0.4, status="cocked", box=(0, 0, 0, 0))
        out = list(self.out) if self.sees_aside else []
        self.misread = None
        if out and self.rng.random() < self.misreads:
            i = self.rng.randrange(len(out))
            wrong = self.rng.choice([v for v in range(1, 7) if v != out[i].value])
            self.misread = (list(out[i].box), out[i].value)
            out[i] = Die(wrong, out[i].x, out[i].y)
        if out and self.rng.random() < self.misses:
            del out[self.rng.randrange(len(out))]
        return FakeReading(
            tuple(
                replace(leaning, box=d.box) if d is self.cocked else FakeDie(d.value, box=d.box)
                for d in dice
            ),
            set_aside=tuple(FakeDie(d.value, box=d.box) for d in out),
        )


def _dice(dice: list[Die], values: Sequence[int]) -> list[Die]:
    """One die of ``dice`` for each of ``values``, first found first."""
    left, found = list(dice), []
    for v in values:
        die = next(d for d in left if d.value == v)
        left.remove(die)
        found.append(die)
    return found


class Player:
    """Plays one game at ``table`` and on a reference engine; collects where they part."""

    def __init__(
        self,
        table: Table,
        game_id: str,
        seed: int,
        *,
        mishaps: bool = True,
        swaps: bool = True,
        careful: bool = False,
        one_motion: bool = False,
        sees_aside: bool = True,
        bounces: float = 0.0,
        tidies: float = 0.0,
        misreads: float = 0.0,
        misses: float = 0.0,
        between_turns: float = 0.0,
        rethinks: float = 0.15,
        cocks: float = 0.0,
        fixes: bool = False,
        releases: float = 0.0,
        tally: Counter[str] | None = None,
    ) -> None:
        """``bounces``: how often a throw bounces a die out of the zone among the dice there
        (it is thrown again); ``tidies``: how often the dice out of the zone are pushed
        elsewhere there as the others are thrown; ``misreads``, ``misses``: how often a reading
        gets a die out of the zone wrong or misses it; ``between_turns``: how often the dice
        are moved between a turn's end and the next throw (the set-aside taken away, some dice
        picked up, those out of the zone pushed into it), with a reading after each move;
        ``rethinks``: how often a player who took a set-aside out puts a die of it back, or
        puts one back and takes another out in the same move (with ``mishaps``); ``cocks``:
        how often a thrown die comes to rest leaning (the camera cannot read it; the player
        throws it again or types its face on a phone); ``fixes``: a player who sees the game
        on the phones part from the one played taps the die the camera misread out of the
        zone and sets its face; ``releases``: how often held dice let go (Generał, Drápky) are
        taken back and thrown with the others in one motion."""
        self.table = table
        self.game_id = game_id
        self.seed = seed
        self.rng = random.Random(seed)
        self.tray = Tray(
            self.rng, careful=careful, sees_aside=sees_aside, misreads=misreads, misses=misses
        )
        self.one_motion = one_motion
        self.bounces = bounces
        self.tidies = tidies
        self.between_turns = between_turns
        self.rethinks = rethinks
        self.cocks = cocks
        self.fixes = fixes
        self.releases = releases
        self.held_unseen: Keep | None = None  # a hold made in one motion with the next throw
        self.tally: Counter[str] = Counter() if tally is None else tally
        self.mishaps = mishaps
        self.swaps = swaps
        self.pending = False
        table.new_game({"game": game_id, "players": ["Ann", "Bob"]})
        assert table.history is not None
        self.game = table.history.game
        self.state: Any = table.history.state
        self.meant: list[Action] = []
        self.turn_of = self.game.to_move(self.state)
        self.n = N_DICE[game_id]

    # -- the reference ---------------------------------------------------------------------------

    def _apply(self, action: Action) -> None:
        self.state = self.game.apply(self.state, action)
        self.meant.append(action)

    def _seen(self) -> list[Action]:
        assert self.table.history is not None
        return list(self.table.history.actions)

    def check(self, step: int, what: str) -> Mismatch | None:
        seen = self._seen()
        problem = str(self.table.view.problem)
        if (seen != self.meant or problem) and self.fixes and self.tray.misread is not None:
            self._fix_misread(*self.tray.misread)
            seen, problem = self._seen(), str(self.table.view.problem)
        if seen != self.meant or problem:
            k = max(0, len(self.meant) - 3)
            return Mismatch(
                self.game_id,
                self.seed,
                step,
                what,
                [str(a) for a in seen[k:]],
                [str(a) for a in self.meant[k:]],
                problem,
            )
        return None

    def _fix_misread(self, box: list[int], value: int) -> None:
        """The die the camera misread out of the zone, tapped on a phone and set right."""
        last = self.table.last_reading
        assert last is not None
        found = [i for i, d in enumerate(last.aside) if d["box"] == box]
        if found:
            self.tally["fixed aside"] += 1
            self.table.correct(len(last.dice) + found[0], value, source="phone")

    # -- the player ------------------------------------------------------------------------------

    def choose(self) -> Action:
        legal = list(self.game.legal_actions(self.state))
        rolls = [a for a in legal if isinstance(a, Roll)]
        other = [a for a in legal if not isinstance(a, Roll)]
        if rolls and (not other or self.rng.random() < 0.75):
            n = self.game.roll_size(self.state)
            return Roll([self.rng.randint(1, 6) for _ in range(n)])
        keeps = [a for a in other if isinstance(a, Keep) and self._may_hold(a)]
        if self.pending and rolls:
            return Roll([self.rng.randint(1, 6) for _ in range(self.game.roll_size(self.state))])
        rest = [a for a in other if not isinstance(a, Keep)]
        if keeps and (not rest or self.rng.random() < 0.7):
            return self.rng.choice(keeps)
        return self.rng.choice(rest)

    def _may_hold(self, keep: Keep) -> bool:
        """Without ``swaps`` a hold puts back held dice or takes more out, not both at once."""
        if self.swaps or self.game_id not in HOLDS:
            return True
        held, want = Counter(self.tray.held), Counter(keep.dice)
        return not (held - want) or not (want - held)

    def step(self, i: int) -> Mismatch | None:
        """Choose and perform one action (with a mishap now and then); where the table parts."""
        if self.game.outcome(self.state) is not None:
            return None
        mover = self.game.to_move(self.state)
        # A new turn: the dice lie as the last turn left them; its first throw gathers them all.
        if mover != self.turn_of and self.rng.random() < self.between_turns:
            self._between_turns()
        self.turn_of = mover
        action = self.choose()
        was_pending, self.pending = self.pending, False
        what = self.perform(action)
        if was_pending and not isinstance(action, Roll):
            raise AssertionError("a hold nobody can see is followed by a throw")
        return None if self.pending else self.check(i, what)

    def _between_turns(self) -> None:
        """The dice moved about before the next player's first throw, a reading after each."""
        tray = self.tray
        self.tally["between turns"] += 1
        how = self.rng.choice(("away", "pick", "push"))
        if how == "away" and tray.out:
            tray.out.clear()  # the last player takes his set-aside (or held) dice away
            self.table.on_reading(tray.reading(), settled_now=True)
        if how in ("away", "pick") and tray.zone:
            for d in self.rng.sample(tray.zone, self.rng.randint(1, len(tray.zone))):
                tray.zone.remove(d)  # the next player picks some up
            self.table.on_reading(tray.reading(), settled_now=True)
        if how == "push" and tray.out:
            values = [d.value for d in tray.out]  # pushed into the zone, faces unchanged
            tray.out.clear()
            tray.land(values)
            self.table.on_reading(tray.reading(), settled_now=True)

    def _gather(self) -> list[Die]:
        """Every die picked up for the first throw of a turn (those out of the zone too)."""
        dice = list(self.tray.zone)
        self.tray.out.clear()
        return dice

    def perform(self, action: Action) -> str:
        tray, table = self.tray, self.table
        if isinstance(action, Roll):
            n = len(action.dice)
            if len(tray.zone) == n:
                thrown = list(tray.zone)
                what = f"threw the {n} dice in the zone"
            else:
                # The start of a turn, or every die set aside: all the dice are thrown.
                thrown = self._gather()
                tray.out.clear()
                what = f"gathered all dice and threw {n}"
            self._apply(action)
            self._land(thrown, action)
            if self.held_unseen is not None:
                self._answer(self.held_unseen, action)
                self.held_unseen = None
            after = self._after_roll(action)
            return f"{what}: {action}{after}"
        if isinstance(action, Keep):
            return self._keep(action)
        if isinstance(action, Bank):
            self._apply(action)
            table.press("bank")
            return "pressed bank"
        if isinstance(action, Score | Stop):
            self._apply(action)
            table.act(action, source="phone")
            return f"phone: {action}"
        if isinstance(action, Forbidden):
            # Two dice thrown for the forbidden numbers (a double first, now and then, which
            # the rules throw again); the others wait out of the zone.
            if self.mishaps and self.rng.random() < 0.3:
                tray.throw(self._gather(), [action.numbers[0]] * 2)
                table.on_reading(tray.reading(), settled_now=True)
            self._apply(action)
            tray.throw(self._gather(), action.numbers)
            table.on_reading(tray.reading(), settled_now=True)
            return f"threw the forbidden numbers: {action}"
        raise AssertionError(action)

    def _land(self, thrown: list[Die], roll: Roll) -> None:
        """The throw comes to rest and is read; the dice out of the zone are tidied as it is
        thrown, now and then, and a die that bounced out among them is thrown again."""
        tray = self.tray
        if tray.out and self.rng.random() < self.tidies:
            self.tally["tidied"] += 1
            tray.tidy()
        tray.throw(thrown, roll.dice)
        if tray.out and len(roll.dice) > 1 and self.rng.random() < self.bounces:
            self.tally["bounced"] += 1
            die = self.rng.choice(tray.zone[len(tray.zone) - len(roll.dice) :])
            tray.bounce(die)
            self.table.on_reading(tray.reading(), settled_now=True)
            tray.out.pop()  # the house rule: a die that left the zone is thrown again
            tray.land([die.value])
        if self.cocks and self.rng.random() < self.cocks:
            self._cocked(tray.zone[len(tray.zone) - len(roll.dice) :])
            return
        self.table.on_reading(tray.reading(), settled_now=True)

    def _cocked(self, thrown: list[Die]) -> None:
        """A die of the throw comes to rest leaning; the table says so. The player throws that
        die again (it lands flat, with the face meant) or types its face on a phone."""
        tray = self.tray
        die = tray.cocked = self.rng.choice(thrown)
        self.tally["cocked"] += 1
        self.table.on_reading(tray.reading(), settled_now=True)
        tray.cocked = None
        if self.rng.random() < 0.5:
            tray.zone.remove(die)
            tray.land([die.value])
            self.table.on_reading(tray.reading(), settled_now=True)
            return
        last = self.table.last_reading
        assert last is not None
        index = next(i for i, d in enumerate(last.dice) if d["box"] == list(die.box))
        self.table.correct(index, die.value, source="phone")

    def _after_roll(self, roll: Roll) -> str:
        """What the player does with the dice after a throw when the rules set some aside."""
        tray = self.tray
        if self.game_id == "thousand":
            turn = self.game.describe(self.state)["turn"]
            if self.game.to_move(self.state) != self.turn_of or turn["rolls"] == 0:
                return " (bust)"
            table_of = getattr(self.game, "table")  # noqa: B009  (jeopardy games only)
            scoring = list(table_of().best(roll.dice).scoring)
            if len(scoring) == len(tray.zone):
                return " (hot dice, left lying)"
            self._take_out(scoring)
            return self._mishap(f", took out {' '.join(map(str, scoring))}")
        if self.game_id == "zakazana-cisla":
            forbidden = self.game.describe(self.state)["forbidden"]
            aside = [v for v in roll.dice if v in forbidden]
            if not aside or len(aside) == len(roll.dice) or self.game.roll_size(self.state) == 0:
                return ""
            if self.game.to_move(self.state) != self.turn_of:
                return ""
            self._take_out(aside)
            return self._mishap(f", put aside {' '.join(map(str, aside))}")
        return ""

    def _take_out(self, dice: list[int]) -> None:
        """Dice the rules set aside taken out of the zone: one first, now and then (a reading
        in between, when the tray settles with the others still in the zone)."""
        if len(dice) > 1 and self.rng.random() < 0.3:
            self.tray.take_out(dice[:1])
            self.table.on_reading(self.tray.reading(), settled_now=True)
            dice = dice[1:]
        self.tray.take_out(dice)
        self.table.on_reading(self.tray.reading(), settled_now=True)

    def _mishap(self, what: str) -> str:
        """Now and then a die in the zone is nudged a little while others are taken out."""
        if not self.mishaps or not self.tray.zone or self.rng.random() > 0.15:
            return what
        die = self.rng.choice(self.tray.zone)
        die.x += self.rng.choice((-6, 6))
        die.y += self.rng.choice((-5, 5))
        self.table.on_reading(self.tray.reading(), settled_now=True)
        return f"{what}, nudged a {die.value}"

    def _keep(self, keep: Keep) -> str:
        tray, table = self.tray, self.table
        if self.game_id in HOLDS:
            held = Counter(tray.held)
            want = Counter(keep.dice)
            back = list((held - want).elements())
            take = list((want - held).elements())
            self._apply(keep)
            if self.one_motion and take and not back and self.rng.random() < 0.4:
                # Taken out in the motion that throws the others: no reading in between.
                tray.take_out(take)
                self.pending = True
                self.held_unseen = keep
                self.tally["one motion"] += 1
                return f"hold {keep.dice}: out {take} as the others are thrown"
            if self.releases and back and not take and self.rng.random() < self.releases:
                # Held dice taken back and thrown with the others in one motion. (Seen in the
                # roll zone only, that is a throw of more dice than lay there: not told.)
                tray.out = [d for d in tray.out if d not in _dice(tray.out, back)]
                tray.zone += [Die(v, -1000, -1000) for v in back]  # in the hand: thrown next
                self.pending = True
                self.held_unseen = keep
                self.tally["released"] += 1
                return f"hold {keep.dice}: {back} taken back and thrown with the others"
            if back:
                tray.put_back(back)
            if take:
                tray.take_out(take)
            if back or take:
                table.on_reading(tray.reading(), settled_now=True)
                # Every held die put back is no hold to see until the dice are thrown.
                self.pending = not keep.dice
                return self._mishap(f"hold {keep.dice}: back {back}, out {take}")
            self.pending = True  # the table sees the hold when the others are thrown
            return f"hold {keep.dice}: nothing moved"
        # A set-aside: the dice taken out of the zone; by the keep button first, now and then.
        suggestion = table.suggestion()
        if suggestion == keep and self.rng.random() < 0.3:
            self._apply(keep)
            table.press("keep")
            how = self._take_out_set_aside(keep, empty=False)
            return f"keep button {keep}, then took them out{how}"
        before = self.state
        self._apply(keep)
        if self.one_motion and self.rng.random() < 0.4 and self.game.roll_size(self.state):
            return self._aside_and_throw(keep)
        how = self._take_out_set_aside(keep)
        if self.mishaps and self.rng.random() < self.rethinks:
            # The player thinks again and puts one die back, or one back and another out of the
            # zone in the same move: another set-aside, if the rules allow it.
            value = self.rng.choice(keep.dice)
            rest = list(keep.dice)
            rest.remove(value)
            legal = self.game.legal_actions(before)
            others = sorted(
                {d.value for d in self.tray.zone if d.value != value}
                & {v for v in range(1, 7) if Keep([*rest, v]) in legal}
            )
            # Seen in the roll zone alone, a swap that leaves no die of it lying still looks
            # like a throw of the die put back (Table._swapped).
            if not self.tray.sees_aside and len(self.tray.zone) < 2:
                others = []
            instead = self.rng.choice(others) if others and self.rng.random() < 0.5 else None
            changed = Keep(rest if instead is None else [*rest, instead])
            if changed.dice and changed in self.game.legal_actions(before):
                if instead is not None:
                    self.tray.take_out([instead])
                    self.tally["changed set-aside"] += 1
                self.tray.put_back([value])
                self.table.on_reading(self.tray.reading(), settled_now=True)
                self.meant[-1] = changed
                self.state = self.game.apply(before, changed)
                return f"took out {keep}{how}, put a {value} back" + (
                    "" if instead is None else f" for a {instead}"
                )
        return self._mishap(f"took out {keep}{how}")

    def _take_out_set_aside(self, keep: Keep, *, empty: bool = True) -> str:
        """The dice of a set-aside taken out of the zone: now and then one at a time, the tray
        settling between (a lone 2 of three is no set-aside yet). ``empty``: an empty roll zone
        is a reading too (after the keep button it says nothing new). A camera that sees the dice
        out of the zone reads them then whatever ``empty`` says: the tray is not empty
        (vision.settle reports a tray with no die at all as empty, and reads nothing)."""
        dice = list(keep.dice)
        slowly = len(dice) > 1 and self.rng.random() < 0.3
        if slowly:
            self.rng.shuffle(dice)
        for group in [[v] for v in dice] if slowly else [dice]:
            self.tray.take_out(group)
            if self.tray.zone or empty or (self.tray.out and self.tray.sees_aside):
                self.table.on_reading(self.tray.reading(), settled_now=True)
        return " one by one" if slowly else ""

    def _aside_and_throw(self, keep: Keep) -> str:
        """The dice set aside and the others thrown in one motion (no reading in between)."""
        tray = self.tray
        self.tally["one motion"] += 1
        roll = Roll([self.rng.randint(1, 6) for _ in range(self.game.roll_size(self.state))])
        self._apply(roll)
        tray.take_out(list(keep.dice))
        thrown = list(tray.zone) if len(tray.zone) == len(roll.dice) else self._gather()
        self._land(thrown, roll)
        self._answer(keep, roll)
        return f"took out {keep} as the others were thrown: {roll}{self._after_roll(roll)}"

    def _answer(self, keep: Keep, roll: Roll) -> None:
        """Where the camera does not see out of the roll zone the table may ask which dice were
        set aside: the player enters the set-aside and the throw on a phone."""
        said = self.table.state_json()["table"]
        if said["problem_code"] == "which_aside":
            self.tally["asked"] += 1
            self.table.act(keep, source="phone")
            self.table.act(roll, source="phone")


def play(
    table_for: Callable[[], Table],
    game_id: str,
    seed: int,
    steps: int,
    tally: Counter[str] | None = None,
    **how: Any,
) -> list[Mismatch]:
    """Play ``steps`` steps of seeded games (a new game after a parting or an end); ``tally``
    counts the steps done in one motion and the set-asides the table asked about."""
    found = []
    i = 0
    while i < steps:
        player = Player(table_for(), game_id, seed, tally=tally, **how)
        while i < steps:
            i += 1
            if player.game.outcome(player.state) is not None:
                break
            bad = player.step(i)
            if bad is not None:
                found.append(bad)
                break
        seed += 1000
    return found
