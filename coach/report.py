"""After a game: every decision of every player compared with the best one, and the points lost.

A decision is a state in which the player to move had at least two choices (a set-aside, a bank
or a throw, a keep or a box). The coach values each choice as the expected points it leads to
under optimal play afterwards; the *regret* of a decision is the value of the best choice less the
value of the choice made. Its sum per player is the expected points that player's play cost. A
choice that wins the game there and then is the best one whatever its points; a decision that gave
such a win up is a mistake counted apart ("win" in the table), not as points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any, Protocol

from coach.advice import Advice, Choice
from scoring.core import JSON, Action, Game, Roll
from scoring.history import History
from scoring.jeopardy import JeopardyGame


class Coach(Protocol):
    """Anything that ranks the choices of the player to move."""

    def advise(self, state: Any) -> Advice:
        """The ranked choices for the player to move."""
        ...


COACHED = ("kymppitonni", "thousand", "jednicky-a-petky", "sest-kostek", "general")
"""The games the coach knows (their ids)."""


def coach_problem(game: Game[Any, Any]) -> str | None:
    """Why the coach cannot advise this game (another game, options it does not solve), or None;
    cheap: nothing is solved."""
    if game.game_id not in COACHED:
        return f"the coach knows {', '.join(COACHED[:-1])} and {COACHED[-1]}, not {game.game_id}"
    if game.game_id == "general":
        from coach.general import check_options
        from scoring.errors import InvalidOption

        try:
            check_options(game.options)
        except InvalidOption as exc:
            return str(exc)
    return None


def coach_for(game: Game[Any, Any]) -> Coach:
    """The coach of a game: the jeopardy turn solver, or the Generał solver; else ``ValueError``."""
    if isinstance(game, JeopardyGame):
        from coach.jeopardy import JeopardyCoach

        return JeopardyCoach(game)
    if game.game_id == "general":
        from coach.general import GeneralSolver

        solver: Coach = GeneralSolver(game.options)
        return solver
    raise ValueError(coach_problem(game))


def chosen(choices: Sequence[Choice], action: Action) -> Choice | None:
    """The choice an action makes: a throw is the choice without actions, and a way merged
    into a choice (``Choice.same``) makes that choice.

    >>> from scoring.core import Bank
    >>> picks = [Choice("bank 300", (Bank(),), 300.0), Choice("roll 2 dice", (), 280.0)]
    >>> chosen(picks, Roll([1, 5])).label
    'roll 2 dice'
    """
    for choice in choices:
        if choice.made_by(action):
            return choice
    return None


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision of the game: what was done, what was best, and the expected points lost."""

    number: int  # the action's place in the transcript (1 = the first action after the header)
    player: str
    situation: str
    made: str
    best: str
    made_value: float
    best_value: float
    missed_win: bool = False  # the best choice won the game there and then; the one made did not

    @property
    def regret(self) -> float:
        """Expected points lost by this decision (0 when it was a best one)."""
        if self.missed_win:
            return 0.0  # a win given up is no number of points; it is counted apart
        return max(0.0, self.best_value - self.made_value)

    @property
    def mistake(self) -> bool:
        """Whether the decision was not a best one."""
        return self.missed_win or self.regret > MISTAKE

    def to_json(self) -> dict[str, JSON]:
        """The decision as a JSON object."""
        return {
            "action": self.number,
            "player": self.player,
            "situation": self.situation,
            "made": self.made,
            "best": self.best,
            "made_value": round(self.made_value, 4),
            "best_value": round(self.best_value, 4),
            "regret": round(self.regret, 4),
            "missed_win": self.missed_win,
        }


@dataclass(frozen=True, slots=True)
class PlayerSummary:
    """One player's decisions, how many were not the best, and the expected points lost."""

    player: str
    decisions: int
    mistakes: int
    regret: float


@dataclass(frozen=True)
class Report:
    """The decisions of a whole game, in order, with the coach's objective."""

    game: str
    players: tuple[str, ...]
    objective: str
    decisions: tuple[Decision, ...]

    def summary(self) -> tuple[PlayerSummary, ...]:
        """Per player, in seating order."""
        out = []
        for name in self.players:
            mine = [d for d in self.decisions if d.player == name]
            out.append(
                PlayerSummary(
                    name,
                    len(mine),
                    sum(1 for d in mine if d.mistake),
                    sum(d.regret for d in mine),
                )
            )
        return tuple(out)

    def to_json(self) -> dict[str, JSON]:
        """The report as ``pipcam advise --report --json`` prints it."""
        return {
            "game": self.game,
            "objective": self.objective,
            "players": [
                {
                    "name": s.player,
                    "decisions": s.decisions,
                    "mistakes": s.mistakes,
                    "regret": round(s.regret, 4),
                }
                for s in self.summary()
            ],
            "decisions": [d.to_json() for d in self.decisions],
        }

    def text(self, *, all_decisions: bool = False) -> str:
        """A table per player, then the decisions that lost points (or all of them)."""
        lines = [f"{self.game}: expected points lost by each decision ({self.objective})", ""]
        width = max(len(p) for p in self.players)
        lines.append(f"{'player':<{width}}  decisions  not best  points lost")
        for s in self.summary():
            lines.append(f"{s.player:<{width}}  {s.decisions:9}  {s.mistakes:8}  {s.regret:11.1f}")
        shown = [d for d in self.decisions if all_decisions or d.mistake]
        if shown:
            lines += ["", "  #  player   lost  made / best (situation)"]
            for d in shown:
                lost = "   win" if d.missed_win else f"{d.regret:6.1f}"
                best = f"{d.best} (wins)" if d.missed_win else f"{d.best} ({d.best_value:.1f})"
                lines.append(
                    f"{d.number:3}  {d.player:<{width}} {lost}  {d.made} "
                    f"({d.made_value:.1f}) / {best}  [{d.situation}]"
                )
        return "\n".join(lines)

    def svg(self) -> str:
        """A line chart of each player's expected points lost, summed over his decisions."""
        return _chart(self)


MISTAKE = 1e-6
"""A decision that loses less than this (floating-point noise) counts as a best one."""


def report(history: History[Any], coach: Coach | None = None) -> Report:
    """The decisions of a replayed game compared with the coach's best ones."""
    game = history.game
    coach = coach if coach is not None else coach_for(game)
    state = history.root
    names = game.players(state)
    decisions: list[Decision] = []
    objective = ""
    for number, action in enumerate(history.actions, start=1):
        mover = game.to_move(state)
        if mover is not None and _is_decision(game, state):
            advice = coach.advise(state)
            objective = advice.objective
            made = chosen(advice.choices, action)
            if made is not None and len(advice.choices) > 1:
                decisions.append(
                    Decision(
                        number,
                        names[mover],
                        advice.situation,
                        made.label,
                        advice.best.label,
                        made.value,
                        advice.best.value,
                        advice.best.wins and not made.wins,
                    )
                )
        state = game.apply(state, action)
    return Report(game.game_id, tuple(names), objective or "expected points", tuple(decisions))


def _is_decision(game: Game[Any, Any], state: Any) -> bool:
    """Whether the player had more than one non-chance action (a throw counts as one)."""
    legal = game.legal_actions(state)
    others = sum(1 for a in legal if not isinstance(a, Roll))
    return others + (1 if game.roll_size(state) else 0) > 1


# --------------------------------------------------------------------------------------------------
# The chart: plain SVG text, no plotting library

_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def _nice(top: float) -> float:
    """A round axis maximum at or above ``top``.

    >>> _nice(0.0), _nice(73.0), _nice(180.0), _nice(1234.0)
    (10.0, 100.0, 200.0, 2000.0)
    """
    if top <= 0:
        return 10.0
    scale = 10.0 ** len(str(int(top)))
    for step in (0.1, 0.2, 0.5, 1.0):
        if top <= scale * step:
            return scale * step
    return scale


def _chart(rep: Report) -> str:
    width, height, left, right, top_m, bottom = 720, 420, 70, 170, 40, 50
    plot_w, plot_h = width - left - right, height - top_m - bottom
    series: dict[str, list[tuple[int, float]]] = {p: [(0, 0.0)] for p in rep.players}
    running = dict.fromkeys(rep.players, 0.0)
    for index, d in enumerate(rep.decisions, start=1):
        running[d.player] += d.regret
        series[d.player].append((index, running[d.player]))
    n = max(1, len(rep.decisions))
    y_max = _nice(max(running.values(), default=0.0))

    def x(i: float) -> float:
        return left + plot_w * i / n

    def y(v: float) -> float:
        return top_m + plot_h * (1 - v / y_max)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="15">{escape(rep.game)}: expected points lost '
        "(summed over each player's decisions)</text>",
    ]
    for k in range(6):
        v = y_max * k / 5
        out.append(
            f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + plot_w}" y2="{y(v):.1f}" '
            'stroke="#ddd"/>'
        )
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
    out.append(
        f'<line x1="{left}" y1="{top_m + plot_h}" x2="{left + plot_w}" y2="{top_m + plot_h}" '
        'stroke="black"/>'
    )
    out.append(f'<line x1="{left}" y1="{top_m}" x2="{left}" y2="{top_m + plot_h}" stroke="black"/>')
    out.append(
        f'<text x="{left + plot_w / 2}" y="{height - 12}" text-anchor="middle">'
        f"decision ({len(rep.decisions)} in the game)</text>"
    )
    for k, s in enumerate(rep.summary()):
        colour = _COLOURS[k % len(_COLOURS)]
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in series[s.player])
        out.append(
            f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2">'
            f"<title>{escape(s.player)}: {s.regret:.1f}</title></polyline>"
        )
        ly = top_m + 18 * k + 10
        lx = left + plot_w + 14
        out.append(
            f'<line x1="{lx}" y1="{ly}" x2="{lx + 18}" y2="{ly}" stroke="{colour}" '
            'stroke-width="3"/>'
        )
        out.append(
            f'<text x="{lx + 24}" y="{ly + 4}">{escape(s.player)}: {s.regret:.1f} '
            f"({s.mistakes}/{s.decisions})</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
