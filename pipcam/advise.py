"""``pipcam advise``: the coach's advice for a game state, and the after-game regret report.

* ``pipcam advise GAME --dice 1 1 5 2 3 4 --turn-total 300 [--score 0] [--option ...]``: the
  dice just thrown in a jeopardy game; ``--dice-left N`` instead of ``--dice`` asks bank or roll
  between throws. For ``general``: ``--dice ... --rolls-left N --sheet ones=3,general=50``.
* ``pipcam advise [GAME] --transcript FILE``: replay a game and advise the player to move.
* ``pipcam advise --report FILE [--chart out.svg]``: every decision of the game compared with the
  best one, per player, as a table (or JSON) and an SVG chart.

Text goes to stdout (JSON with ``--json``); errors to stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from coach.advice import Advice
from coach.report import coach_for, report
from scoring.core import JSON, Game, Roll
from scoring.errors import InvalidAction, ScoringError
from scoring.history import History
from scoring.jeopardy import JeopardyGame, Turn
from scoring.registry import find_game
from scoring.transcript import TranscriptError, replay

EXIT_OK, EXIT_USAGE = 0, 2
YOU = "you"


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")


def _fail(text: str) -> int:
    sys.stderr.write(f"pipcam advise: {text}\n")
    return EXIT_USAGE


def _options(pairs: list[str]) -> dict[str, JSON]:
    from pipcam.cli import parse_option_pairs

    return parse_option_pairs(pairs)


def _history(path: str) -> History[Any]:
    from pipcam.cli import read_transcript

    return replay(read_transcript(path))


# --------------------------------------------------------------------------------------------------
# Typed states


_JEOPARDY = "the 10 000 games and thousand"
_FLAGS = {  # argparse key: (the flag, the games whose state it describes)
    "rolls_left": ("--rolls-left", "general"),
    "sheet": ("--sheet", "general"),
    "turn_total": ("--turn-total", _JEOPARDY),
    "dice_left": ("--dice-left", _JEOPARDY),
    "score": ("--score", _JEOPARDY),
    "must_confirm": ("--must-confirm", _JEOPARDY),
    "opened": ("--opened", "thousand"),
    "on_barrel": ("--on-barrel", "thousand"),
    "bolts": ("--bolts", "thousand"),
}


def check_flags(game: Game[Any, Any], args: argparse.Namespace) -> None:
    """Refuse flags that describe another game's state: left unread, they would make the advice
    look like an answer to a question it did not answer."""
    mine = {"general"} if game.game_id == "general" else {_JEOPARDY, game.game_id}
    given = [
        (flag, games)
        for key, (flag, games) in _FLAGS.items()
        if getattr(args, key, None) not in (None, False) and games not in mine
    ]
    if given:
        flags = ", ".join(flag for flag, _ in given)
        whose = " and ".join(sorted({games for _, games in given}))
        raise InvalidAction(f"{flags}: for {whose}, not {game.game_id}; leave it out")


def _check_score(game: JeopardyGame[Any, Any], score: int, *, on_barrel: bool) -> None:
    """A score the player to move cannot have: negative (where scores never are), or at the
    target where reaching it ends the game at once. (Kymppitonni's equalizing round may seat a
    player over the target, a break's bonus; 1000's barrel without the clamp holds 1000 and
    more.)"""
    options = game.options
    floor = getattr(options, "score_floor", 0)
    if floor is not None and score < floor:
        raise InvalidAction(f"--score is at least {floor} in {game.game_id}, not {score}")
    if getattr(options, "equalizing_round", False) or on_barrel:
        return
    target = getattr(options, "target", None) or (1000 if game.game_id == "thousand" else None)
    if target is not None and score >= target:
        raise InvalidAction(
            f"--score {score} has reached the target ({target}): the game is over for this"
            " player; give the score before the turn"
        )


def jeopardy_state(game: JeopardyGame[Any, Any], args: argparse.Namespace) -> tuple[Any, str]:
    """The state a typed jeopardy situation describes, and what the typed throw did (or "")."""
    total: int = args.turn_total or 0
    score: int = args.score or 0
    if total < 0:
        raise InvalidAction(f"--turn-total cannot be negative, not {total}")
    _check_score(game, score, on_barrel=bool(args.on_barrel))
    players = [YOU, "other"]
    state = game.initial_state(players)
    state = replace(state, scores=(score, 0))
    extra = state.extra
    if game.game_id == "thousand":
        o = game.options
        barrel = o.barrel_at
        # With the clamp, climbing sets the score to barrel_at, so the barrel holds 880-999;
        # without it the pass that climbed stays whole (RULES §4.4), 1000 and more included.
        highest = 999 if o.barrel_clamp else None
        if args.on_barrel and not (barrel <= score and (highest is None or score <= highest)):
            held = f"{barrel} to {highest}" if highest is not None else f"{barrel} or more"
            raise InvalidAction(
                f"on the barrel the score is {held} (barrel_at {barrel}), not"
                f" {score}; give --score, or leave out --on-barrel"
            )
        # Off the barrel at barrel_at or more: only after a fall that took nothing, or from a
        # climb kept whole (no clamp).
        fall_lowers = o.barrel_clamp and o.barrel_fall_penalty > 0
        if not args.on_barrel and o.barrel_required and fall_lowers and score >= barrel:
            raise InvalidAction(
                f"a score of {barrel} or more (barrel_at) is on the barrel; add --on-barrel, or"
                f" give the score before the turn"
            )
        bolts = args.bolts or 0
        most = 0 if o.bolts_limit is None else o.bolts_limit - 1
        if not 0 <= bolts <= most:
            counted = (
                "are not counted (bolts_limit is off)"
                if o.bolts_limit is None
                else f"are 0 to {most}: bolt {o.bolts_limit} costs {o.bolt_penalty} and clears them"
            )
            raise InvalidAction(f"--bolts {bolts}: a player's bolts {counted}")
        # A score below 0 comes from bolts, which only an opened player gets.
        opened = args.opened if args.opened is not None else (score != 0 or args.on_barrel)
        extra = replace(
            extra,
            opened=(opened, False),
            on_barrel=(args.on_barrel, False),
            bolts=(bolts, 0),
        )
    state = replace(state, extra=extra)
    n = game.n_dice
    if args.must_confirm:
        if getattr(game.options, "confirmation", "off") == "off":
            raise InvalidAction(
                f"--must-confirm: {game.game_id} has no confirmation throw under these options"
            )
        if args.dice_left not in (None, 0) or (args.dice and len(_dice(args.dice)) != n):
            raise InvalidAction(
                f"--must-confirm: a confirmation throw is of all {n} dice; give --dice-left 0,"
                f" or the {n} dice it showed"
            )
    must = "confirmation throw due" if args.must_confirm else ""
    if args.dice:
        roll = _dice(args.dice)
        if total == 0 and len(roll) != n:
            raise InvalidAction(
                f"with turn total 0 the dice are the turn's first throw: all {n}, not {len(roll)}"
            )
        if not 1 <= len(roll) <= n:
            raise InvalidAction(f"{game.game_id} throws 1 to {n} dice, not {len(roll)}")
        pool = 0 if total and len(roll) == n else len(roll)
        turn = Turn(player=0, total=total, pool=pool, rolls=1 if total else 0, must_roll=must)
        before = replace(state, turn=turn)
        after = game.apply(before, Roll(roll))
        if after.turn.player != 0 or after.winners is not None:
            return after, after.last_event
        return after, ""
    if args.dice_left is None:
        if total:
            raise InvalidAction("give --dice (the throw on the table) or --dice-left N")
        return replace(state, turn=Turn(player=0, pool=n)), ""
    if not 0 <= args.dice_left < n:
        raise InvalidAction(f"--dice-left is 0 (hot dice) to {n - 1}, not {args.dice_left}")
    if total == 0:
        raise InvalidAction("between throws the turn total is more than 0")
    turn = Turn(player=0, total=total, pool=args.dice_left, rolls=1, must_roll=must)
    return replace(state, turn=turn), ""


def _dice(words: list[str]) -> list[int]:
    from pipcam.cli import _parse_dice

    return _parse_dice(words)


def _sheet(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in text.replace(" ", ",").split(","):
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise InvalidAction(
                f"--sheet takes box=points pairs like ones=3,general=50; not {part!r}"
            )
        name = name.strip()
        if name in out:
            raise InvalidAction(f"--sheet names {name} twice ({out[name]} and {int(value)})")
        out[name] = int(value)
    return out


def general_state(game: Game[Any, Any], args: argparse.Namespace) -> Any:
    """The Generał state a typed sheet, dice and rolls left describe."""
    from itertools import combinations_with_replacement

    from scoring.games.general import CATEGORIES, category_points

    column: list[int | None] = [None] * len(CATEGORIES)
    rolls = list(combinations_with_replacement(range(1, 7), 5))
    factors = {1, game.options.first_roll_multiplier}
    for name, value in _sheet(args.sheet or "").items():
        if name not in CATEGORIES:
            raise InvalidAction(f"unknown box {name!r}; the boxes are: {', '.join(CATEGORIES)}")
        # A value no throw writes there is a typo: advice on that sheet would be advice on
        # another game.
        written = {category_points(r, name, game.options) * f for r in rolls for f in factors}
        if value not in written:
            shown = ", ".join(map(str, sorted(written)))
            raise InvalidAction(f"no throw writes {value} in {name}; it takes {shown}")
        column[CATEGORIES.index(name)] = value
    if None not in column:
        raise InvalidAction("every box of the sheet is filled: there is nothing to advise")
    state = game.initial_state([YOU])
    state = replace(state, sheets=((tuple(column),),))
    if not args.dice:
        return state
    roll = _dice(args.dice)
    if len(roll) != 5:
        raise InvalidAction(f"Generał has five dice, not {len(roll)}")
    left = 2 if args.rolls_left is None else args.rolls_left
    if not 0 <= left <= 2:
        raise InvalidAction(f"--rolls-left is 0 to 2, not {left}")
    return replace(state, dice=tuple(roll), throws=3 - left)


# --------------------------------------------------------------------------------------------------
# The command


def _show_advice(advice: Advice, *, as_json: bool) -> None:
    if as_json:
        _say(json.dumps(advice.to_json(), ensure_ascii=False))
    else:
        _say(advice.text())


def cmd_advise(args: argparse.Namespace) -> int:
    """Advise the player to move (typed state or transcript), or report on a whole game."""
    if args.report:
        return _cmd_report(args)
    if args.transcript:
        try:
            history = _history(args.transcript)
        except TranscriptError as exc:
            return _fail(f"{args.transcript}: {exc}")
        game = history.game
        if args.game and find_game(args.game).game_id != game.game_id:
            return _fail(f"the transcript is a game of {game.game_id}, not {args.game}")
        state = history.state
        if game.to_move(state) is None:
            return _fail(f"{args.transcript}: the game is over; try --report")
    else:
        if not args.game:
            return _fail("name the game, or give --transcript FILE or --report FILE")
        game = find_game(args.game).from_json(_options(args.option))
        check_flags(game, args)
        if isinstance(game, JeopardyGame):
            state, ended = jeopardy_state(game, args)
            if ended:
                if args.json:
                    _say(json.dumps({"game": game.game_id, "turn_over": ended}))
                else:
                    _say(f"the turn is over: {ended}")
                return EXIT_OK
        elif game.game_id == "general":
            state = general_state(game, args)
        else:
            coach_for(game)  # raises the message naming the games the coach knows
            raise AssertionError("unreachable")  # pragma: no cover
    advice = coach_for(game).advise(state)
    _show_advice(advice, as_json=args.json)
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    try:
        history = _history(args.report)
    except TranscriptError as exc:
        return _fail(f"{args.report}: {exc}")
    rep = report(history)
    if args.chart:
        try:
            Path(args.chart).write_text(rep.svg(), encoding="utf-8")
        except OSError as exc:
            return _fail(f"cannot write {args.chart}: {exc.strerror}")
    if args.json:
        _say(json.dumps(rep.to_json(), ensure_ascii=False))
    else:
        _say(rep.text(all_decisions=args.all))
        if args.chart:
            _say(f"\nchart written to {args.chart}")
    return EXIT_OK


def _guarded(args: argparse.Namespace) -> int:
    try:
        return cmd_advise(args)
    except (ScoringError, ValueError) as exc:  # the coach's refusals are ValueErrors too
        return _fail(str(exc))


def add_advise_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``pipcam advise``: the coach's advice for a state, or the report of a whole game."""
    p = subparsers.add_parser(
        "advise",
        help="the best play for a state, or a report of a game's decisions",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    p.add_argument("game", nargs="?", help="game id or alias (see `pipcam games`)")
    p.add_argument("--transcript", metavar="FILE", help="replay a game and advise the mover")
    p.add_argument("--report", metavar="FILE", help="compare every decision of a game")
    p.add_argument("--chart", metavar="SVG", help="with --report: write a chart of points lost")
    p.add_argument("--all", action="store_true", help="with --report: list every decision")
    p.add_argument("--dice", nargs="+", metavar="D", help="the dice just thrown")
    p.add_argument("--turn-total", type=int, metavar="T", help="jeopardy turn total (default 0)")
    p.add_argument("--dice-left", type=int, metavar="N", help="dice left to throw (0: hot dice)")
    p.add_argument("--score", type=int, help="the player's score before this turn (default 0)")
    p.add_argument(
        "--must-confirm", action="store_true", help="sest-kostek: a confirmation throw is due"
    )
    p.add_argument(
        "--opened",
        type=lambda v: v.lower() in ("yes", "on", "true", "1"),
        metavar="yes|no",
        help="thousand: whether the player has opened (default: yes once the score is above 0)",
    )
    p.add_argument("--on-barrel", action="store_true", help="thousand: the player is on the barrel")
    p.add_argument("--bolts", type=int, help="thousand: the player's bolts (default 0)")
    p.add_argument("--rolls-left", type=int, metavar="N", help="general: throws left (0-2)")
    p.add_argument("--sheet", metavar="BOX=N,...", help="general: the boxes already written")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=_guarded)
