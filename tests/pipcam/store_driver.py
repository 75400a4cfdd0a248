"""Plays a scripted game of Kymppitonni into a Store; the SIGKILL durability test runs it.

``python store_driver.py DB`` takes up the game stored in DB (or starts it) and plays the rest of
``SCRIPT`` the way the table does: check the step against the engine, ``append`` it, apply it, and
only then acknowledge it. Before each event it waits for a line on stdin, so the test decides how
far it gets whatever the speed of the disk; at the end of stdin it plays on without waiting.
It prints one line per fact, flushed at once:

- ``GAME <id>`` when it starts the scripted game, ``RESUME <n>`` when it takes up a stored log of n
  events (always a prefix of the script; anything else exits with status 3);
- ``ACK <seq>`` after ``append`` returned that event's sequence number;
- ``DONE`` when the whole script is stored and the game is finished.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pipcam.store import Store, replay_events
from scoring.core import JSON, action_from_json, action_to_json
from scoring.history import History
from scoring.transcript import parse_header, start

HEADER: dict[str, JSON] = {
    "game": "kymppitonni",
    "players": ["Ann", "Bob"],
    "options": {"target": 3000},
}

# Rolls, keeps, banks and busts of both players, with undo/redo runs (some undone actions are
# redone, some are replaced by a new action, which empties the redo stack). The last bank ends it.
SCRIPT_TEXT = """\
{"roll": [2, 2, 3, 5, 5, 5]}; {"keep": [5, 5, 5]}; {"bank": true}
{"roll": [4, 4, 4, 5, 5, 6]}; {"keep": [5]}; {"roll": [1, 4, 5, 6, 6]}; {"keep": [1, 5]}
undo; redo; {"roll": [4, 5, 6]}; {"keep": [5]}; {"roll": [4, 4]}
{"roll": [1, 1, 2, 3, 4, 5]}; {"keep": [1, 5]}; {"roll": [3, 4, 4, 5]}; {"keep": [5]}
{"roll": [2, 3, 6]}; {"roll": [1, 2, 3, 5, 6, 6]}; {"keep": [1, 5]}; {"roll": [1, 5, 5, 6]}
{"keep": [1, 5, 5]}; {"bank": true}
undo; undo; undo; redo; redo; redo; {"roll": [1, 1, 1, 2, 3, 4]}; {"keep": [1, 1, 1]}
{"roll": [1, 5, 5]}; {"keep": [1, 5, 5]}; {"bank": true}
{"roll": [1, 2, 3, 3, 4, 5]}; {"keep": [5]}; {"roll": [2, 4, 4, 4, 5]}
{"keep": [4, 4, 4, 5]}; {"roll": [1]}; {"keep": [1]}; {"bank": true}
{"roll": [1, 1, 3, 4, 4, 5]}; {"keep": [1, 1, 5]}; undo; undo; undo; redo; redo
{"keep": [1, 1, 5]}; {"roll": [3, 5, 6]}; {"keep": [5]}; {"roll": [1, 6]}; {"keep": [1]}
{"bank": true}
{"roll": [3, 3, 3, 3, 4, 5]}; undo; {"roll": [2, 2, 3, 3, 5, 6]}; {"keep": [5]}
{"roll": [1, 1, 3, 3, 5]}; {"keep": [1, 1]}; undo; undo; undo; redo
{"roll": [1, 2, 3, 4, 5]}; undo; redo; {"keep": [1, 5]}; {"roll": [2, 3, 3]}
{"roll": [1, 2, 3, 5, 5, 6]}; {"keep": [1, 5, 5]}; {"roll": [3, 4, 6]}
{"roll": [1, 2, 4, 4, 4, 5]}; {"keep": [1, 4, 4, 4, 5]}; {"roll": [5]}; {"keep": [5]}
{"bank": true}
{"roll": [1, 1, 2, 3, 3, 5]}; {"keep": [1, 1, 5]}; {"roll": [1, 4, 5]}; undo; undo; undo
{"roll": [1, 2, 2, 3, 5, 6]}; {"keep": [1, 5]}; {"roll": [1, 2, 3, 5]}; {"keep": [1, 5]}
{"roll": [1, 3]}; {"keep": [1]}; {"roll": [3]}; {"roll": [1, 1, 4, 4, 5, 6]}
{"keep": [1, 1, 5]}; {"roll": [1, 4, 4]}; {"keep": [1]}; {"bank": true}
undo; {"bank": true}
{"roll": [1, 3, 4, 4, 5, 6]}; {"keep": [5]}; {"roll": [1, 2, 5, 6, 6]}; {"keep": [1]}; undo
undo; redo; redo; {"roll": [4, 5, 6, 6]}; {"keep": [5]}; {"roll": [3, 4, 6]}
{"roll": [1, 3, 4, 4, 4, 6]}; {"keep": [1, 4, 4, 4]}; {"bank": true}
{"roll": [1, 1, 3, 3, 3, 5]}; {"keep": [1, 1, 3, 3, 3, 5]}; {"bank": true}
undo; undo; undo; {"roll": [1, 2, 2, 4, 4, 5]}; undo; redo; {"keep": [1]}
{"roll": [1, 1, 1, 4, 6]}; {"keep": [1, 1, 1]}; {"roll": [1, 1]}; {"keep": [1, 1]}
{"bank": true}
{"roll": [1, 2, 2, 2, 4, 6]}; {"keep": [1, 2, 2, 2]}; {"roll": [3, 5]}; {"keep": [5]}
{"bank": true}
"""

Event = tuple[str, dict[str, JSON] | None]


def parse_script(text: str) -> list[Event]:
    """The events of a script: ``undo``, ``redo`` or an action object, separated by ``;``."""
    events: list[Event] = []
    for line in text.splitlines():
        for item in filter(None, (part.strip() for part in line.split(";"))):
            if item in ("undo", "redo"):
                events.append((item, None))
            else:
                events.append(("action", action_to_json(action_from_json(json.loads(item)))))
    return events


SCRIPT = parse_script(SCRIPT_TEXT)


def apply_event(history: History[Any], kind: str, action: dict[str, JSON] | None) -> None:
    """Take one event in a history (``IllegalAction`` or ``IndexError`` when it cannot be)."""
    if kind == "action":
        history.push(action_from_json(action))
    elif kind == "undo":
        history.pop()
    else:
        history.redo()


def check_event(history: History[Any], kind: str, action: dict[str, JSON] | None) -> None:
    """Refuse a step the history would refuse, before anything is stored (as the table does)."""
    if kind == "action":
        history.game.apply(history.state, action_from_json(action))
    elif kind == "undo" and not len(history):
        raise IndexError("nothing to undo")
    elif kind == "redo" and not history.can_redo():
        raise IndexError("nothing to redo")


def say(line: str) -> None:
    """One fact on stdout, flushed, so the test sees it even if the process dies next."""
    print(line, flush=True)


def play(db: Path) -> int:
    """Play the rest of the script into the store at ``db``; the exit status."""
    with Store(db) as store:
        stored = store.current_game()
        if stored is None:
            if store.games():  # an earlier run finished the scripted game
                say("DONE")
                return 0
            game_id = store.new_game(HEADER)
            history = start(parse_header(HEADER))
            done = 0
            say(f"GAME {game_id}")
        else:
            done = len(stored.events)
            if stored.events != SCRIPT[:done]:
                print(
                    f"store_driver: the stored log is not a prefix of the script: {stored}",
                    file=sys.stderr,
                )
                return 3
            game_id = stored.id
            history = replay_events(stored)
            say(f"RESUME {done}")
        paced = True
        for expected, (kind, action) in enumerate(SCRIPT[done:], start=done + 1):
            paced = paced and bool(sys.stdin.readline())
            check_event(history, kind, action)
            seq = store.append(game_id, kind, action, source="terminal")
            if seq != expected:
                print(f"store_driver: append gave seq {seq}, not {expected}", file=sys.stderr)
                return 4
            apply_event(history, kind, action)
            say(f"ACK {seq}")
        if history.game.outcome(history.state) is None:
            print("store_driver: the script ended before the game did", file=sys.stderr)
            return 5
        store.finish_game(game_id)
        say("DONE")
        return 0


def main(argv: list[str]) -> int:
    """``store_driver.py DB``."""
    if len(argv) != 1:
        print("usage: store_driver.py DB", file=sys.stderr)
        return 2
    return play(Path(argv[0]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
