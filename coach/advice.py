"""What the coach says: the choices open to the player, each with its expected value, best first.

These types are shared by every coach (the jeopardy turn solver, the Generał solver) so that the
command line, the after-game report and later the table and the phones show advice the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from scoring.core import JSON, Action, Roll, action_to_json


@dataclass(frozen=True, slots=True)
class Choice:
    """One thing the player may do now and the expected points it leads to under optimal play.

    ``actions`` are the engine actions that make the choice (a set-aside may be followed by the
    advised bank or roll, shown in ``then``); ``value`` is on the scale of the coach's
    ``objective``. ``wins``: the choice ends the game with the player a winner, which no number
    of expected points outweighs. ``same``: other ways of making this very choice, merged into
    it because they come to the same (a set-aside of the dice a bank would set aside, then the
    bank); a player who took one of them made this choice.
    """

    label: str
    actions: tuple[Action, ...]
    value: float
    then: str = ""
    wins: bool = False
    same: tuple[Choice, ...] = ()

    def to_json(self) -> dict[str, JSON]:
        """The choice as a JSON object."""
        out: dict[str, JSON] = {
            "label": self.label,
            "actions": [action_to_json(a) for a in self.actions],
            "value": round(self.value, 4),
        }
        if self.then:
            out["then"] = self.then
        if self.wins:
            out["wins"] = True
        if self.same:
            out["same"] = [c.to_json() for c in self.same]
        return out

    def made_by(self, action: Action) -> bool:
        """Whether ``action`` makes this choice: its first action, or that of a way in ``same``;
        a throw makes the choice without actions."""
        if not self.actions:
            return isinstance(action, Roll)
        return self.actions[0] == action or any(c.made_by(action) for c in self.same)


@dataclass(frozen=True, slots=True)
class Advice:
    """The ranked choices of one decision (best first) and what the values mean.

    ``expected`` is the value of the best choice; ``error_bound`` is how far any value shown may
    be from the exact one (0 when the solution is exact by construction).
    """

    game: str
    player: str
    situation: str
    objective: str
    choices: tuple[Choice, ...]
    error_bound: float = 0.0
    notes: tuple[str, ...] = field(default=())

    @property
    def best(self) -> Choice:
        """The advised choice."""
        return self.choices[0]

    @property
    def expected(self) -> float:
        """The expected value of following the advice."""
        return self.choices[0].value

    def to_json(self) -> dict[str, JSON]:
        """The advice as ``pipcam advise --json`` prints it."""
        return {
            "game": self.game,
            "player": self.player,
            "situation": self.situation,
            "objective": self.objective,
            "advice": self.best.to_json(),
            "expected": round(self.expected, 4),
            "choices": [c.to_json() for c in self.choices],
            "error_bound": self.error_bound,
            "notes": list(self.notes),
        }

    def text(self, *, most: int = 8) -> str:
        """The advice in words, with the next best choices and how much each gives up."""
        best = self.best
        lines = [f"{self.player}: {self.situation}"]
        if best.wins:
            lines.append(f"advice: {best.label}: it wins the game ({best.value:.1f} points)")
        else:
            lines.append(f"advice: {best.label} (expected {best.value:.1f}; {self.objective})")
        lines.extend(_same(best, "  "))
        others = self.choices[1:most]
        if others:
            lines.append("other choices:")
            width = max(len(c.label) for c in others)
            for c in others:
                lines.append(f"  {c.label:<{width}}  {c.value:9.1f}  ({_behind(best, c)})")
                lines.extend(_same(c, "    "))
        lines.extend(self.notes)
        return "\n".join(lines)


def _same(choice: Choice, indent: str) -> list[str]:
    """The ways merged into ``choice``, on a line of their own if there are any."""
    if not choice.same:
        return []
    return [f"{indent}(the same: {', '.join(c.label for c in choice.same)})"]


def _behind(best: Choice, other: Choice) -> str:
    """What ``other`` gives up against ``best``."""
    if best.wins and not other.wins:
        return "does not win now"
    if other.wins:
        return "wins too"
    return f"-{best.value - other.value:.1f}"


def rank(choices: Sequence[Choice]) -> tuple[Choice, ...]:
    """Choices best first: those that win the game now, then by value; equal ones keep their
    given order (stable sort).

    >>> a, b = Choice("bank", (), 300.0), Choice("roll", (), 312.5)
    >>> [c.label for c in rank([a, b])]
    ['roll', 'bank']
    >>> [c.label for c in rank([b, Choice("bank", (), 300.0, wins=True)])]
    ['bank', 'roll']
    """
    return tuple(sorted(choices, key=lambda c: (not c.wins, -c.value)))
