"""The ``pipcam`` command line: games, score, replay and play (and the camera commands)."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from scoring.core import JSON, Game, describe_options, options_to_json
from scoring.dice import dice
from scoring.errors import InvalidAction, InvalidOption, ScoringError, UnknownGame
from scoring.registry import available, find_game
from scoring.transcript import TranscriptError, check_new_players, decode, replay

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def parse_option_pairs(pairs: Sequence[str]) -> dict[str, JSON]:
    """``["name=value", ...]`` from ``--option`` into a mapping (values parsed later per type)."""
    out: dict[str, JSON] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise InvalidOption(f"--option takes name=value, such as target=5000; not {pair!r}")
        out[name.strip()] = value.strip()
    return out


def make_game(name: str, option_pairs: Sequence[str]) -> Game[Any, Any]:
    """The engine for a game id or alias with ``--option`` values applied."""
    return find_game(name).from_json(parse_option_pairs(option_pairs))


# --------------------------------------------------------------------------------------------------
# pipcam games


def cmd_games(args: argparse.Namespace) -> int:
    """List the games with their ids, native names, aliases and options."""
    classes = available()
    if args.json:
        out = [
            {
                "id": cls.game_id,
                "name": cls.name,
                "aliases": list(cls.aliases),
                "presets": {k: dict(v) for k, v in cls.presets.items()},
                "options": [
                    {"name": o.name, "default": o.default, "takes": o.takes, "doc": o.doc}
                    for o in describe_options(cls.options_type)
                ],
            }
            for cls in classes
        ]
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return EXIT_OK
    for cls in classes:
        aliases = f" (also: {', '.join(cls.aliases)})" if cls.aliases else ""
        print(f"{cls.game_id:18} {cls.name}{aliases}")
        for o in describe_options(cls.options_type):
            default = "off" if o.default is None else json.dumps(o.default, ensure_ascii=False)
            print(f"    {o.name} = {default}  [{o.takes}]  {o.doc}")
        for preset, values in cls.presets.items():
            print(f"    preset {preset}: {json.dumps(dict(values))}")
        print()
    return EXIT_OK


# --------------------------------------------------------------------------------------------------
# pipcam score


def _scorer(game: Game[Any, Any]) -> Callable[[Sequence[int]], dict[str, JSON]]:
    """The single-roll scorer of a game: a jeopardy reading, points, or every category."""
    score = getattr(game, "score_roll", None)
    categories = getattr(game, "score_all", None)
    if not callable(score) and callable(categories):
        return lambda roll: {"categories": categories(roll)}
    if not callable(score):
        raise InvalidAction(
            f"{game.game_id} has no single-roll score; "
            f"try `pipcam play {game.game_id}` to play a whole game"
        )
    return score  # type: ignore[no-any-return]


def _parse_dice(words: Sequence[str]) -> list[int]:
    """Dice typed as ``1 1 5`` or ``115`` or ``1,1,5``."""
    out: list[int] = []
    for word in words:
        for part in word.replace(",", " ").split():
            if not part.isdigit():
                raise InvalidAction(f"a die is a number from 1 to 6, not {part!r}")
            digits = [int(c) for c in part] if len(part) > 1 else [int(part)]
            out.extend(digits)
    return list(dice(out))


# The keys PROTOCOL.md fixes for a jeopardy roll; the rest of a reading is shown with --explain.
_SCORE_KEYS = ("points", "scoring", "rest")


def cmd_score(args: argparse.Namespace) -> int:
    """Score one roll (or one roll per line of stdin with ``-``) and print JSON."""
    game = make_game(args.game, args.option)
    scorer = _scorer(game)

    def score(roll: Sequence[int]) -> dict[str, JSON]:
        out = scorer(roll)
        if args.explain or "categories" in out:
            return out
        return {k: v for k, v in out.items() if k in _SCORE_KEYS}

    if args.dice != ["-"]:
        print(json.dumps(score(_parse_dice(args.dice))))
        return EXIT_OK
    status = EXIT_OK
    for number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            print(json.dumps(score(_parse_dice([line]))), flush=True)
        except ScoringError as exc:
            print(f"pipcam score: line {number}: {exc}", file=sys.stderr)
            status = EXIT_ERROR
    return status


# --------------------------------------------------------------------------------------------------
# pipcam replay


def read_transcript(path: str) -> list[str]:
    """The lines of a transcript file (``-``: standard input), as :func:`decode` reads them.

    Raises ``InvalidAction`` for a file that cannot be read, ``TranscriptError`` for one that is
    not text."""
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise InvalidAction(f"cannot read {path}: {exc.strerror}") from exc
    return decode(data)


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay a transcript and print the final state as one JSON object."""
    try:
        history = replay(read_transcript(args.file))
    except TranscriptError as exc:
        print(f"pipcam replay: {args.file}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    game = history.game
    state = game.state_json(history.state)
    state["options"] = options_to_json(game.options)
    state["actions"] = len(history)
    print(json.dumps(state, ensure_ascii=False))
    return EXIT_OK


# --------------------------------------------------------------------------------------------------
# pipcam play


def cmd_play(args: argparse.Namespace) -> int:
    """Play a game at the terminal, typing each roll."""
    from pipcam.play import SaveFileError, Terminal, saved_game

    game = make_game(args.game, args.option)
    players: list[str] = args.players
    if not game.min_players <= len(players) <= game.max_players:
        raise InvalidAction(
            f"{game.game_id} is played by {game.min_players} to {game.max_players} players, "
            f"not {len(players)}"
        )
    if len(set(players)) != len(players):
        raise InvalidAction(f"two players share a name in {players}; give each a different name")
    check_new_players(players)
    save = Path(args.save) if args.save else None
    try:
        history = saved_game(save, game, players) if save is not None else None
        terminal = Terminal(game, players, save=save, history=history)
        terminal.save_now()
    except SaveFileError as exc:
        print(f"pipcam play: {exc}", file=sys.stderr)
        return 2
    if history is not None and save is not None:
        print(f"going on with the game saved in {save} ({len(history)} actions)")
    return terminal.run(sys.stdin, sys.stdout)


# --------------------------------------------------------------------------------------------------


def version_text() -> str:
    """``pipcam 0.1.0 (Python 3.11.2)``: the installed version, for a bug report."""
    try:
        mine = metadata.version("pipcam")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        mine = "(not installed)"
    return f"pipcam {mine} (Python {platform.python_version()})"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="pipcam", description="pipcam: a dice companion that reads and scores real dice."
    )
    parser.add_argument(
        "--version", action="version", version=version_text(), help="say which pipcam this is"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("games", help="list the games, their ids and options")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=cmd_games)

    p = sub.add_parser("score", help="score one roll: pipcam score GAME 1 1 5 2 3 4")
    p.add_argument("game", help="game id or alias (see `pipcam games`)")
    p.add_argument("dice", nargs="+", help="the faces, or - to read one roll per line of stdin")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument(
        "--explain",
        action="store_true",
        help="also say how the points are made: the scoring groups, or why the turn ends",
    )
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("replay", help="replay a transcript and print the final state")
    p.add_argument("file", help="the transcript (JSON lines), or - for stdin")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("play", help="play a game at the terminal, typing the rolls")
    p.add_argument("game", help="game id or alias (see `pipcam games`)")
    p.add_argument("--players", nargs="+", required=True, metavar="NAME")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--save", metavar="FILE", help="keep the transcript in FILE after every action")
    p.set_defaults(func=cmd_play)

    from pipcam.run import add_run_command

    add_run_command(sub)
    importlib.import_module("pipcam.advise").add_advise_command(sub)
    try:
        vision_cli = importlib.import_module("pipcam.vision_cli")
        photos = importlib.import_module("pipcam.photos")
        tune = importlib.import_module("pipcam.tune")
    except ImportError:  # the camera commands need numpy/OpenCV; the rules work without them
        pass
    else:
        vision_cli.add_vision_commands(sub)
        photos.add_photos_command(sub)
        tune.add_tune_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pipcam`` and return its exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
    except (UnknownGame, InvalidOption, InvalidAction) as exc:
        print(f"pipcam {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader of our output left (`pipcam bench | head -1`): stop quietly, as Unix tools
        # do, and keep the interpreter's final flush from raising again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by it
    return status


if __name__ == "__main__":
    sys.exit(main())
