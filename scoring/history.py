"""Undo and redo over (action, state) pairs: the only mutable object in ``scoring``."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from scoring.core import Action, Game

S = TypeVar("S")


class History(Generic[S]):
    """A game's states from the root, with chess's verbs: push, pop, peek, redo.

    >>> from scoring.games.sekvence import Sekvence
    >>> from scoring.core import Roll
    >>> game = Sekvence()
    >>> h = History(game, game.initial_state(["Ann", "Bob"]))
    >>> h.push(Roll([1, 2, 3, 5, 5, 6]))
    >>> game.totals(h.state)
    (10, 0)
    >>> h.pop()
    Roll(dice=(1, 2, 3, 5, 5, 6))
    >>> game.totals(h.state), h.redo() is not None, game.totals(h.state)
    ((0, 0), True, (10, 0))
    """

    def __init__(self, game: Game[S, Any], root: S) -> None:
        self.game = game
        self.root: S = root
        self._stack: list[tuple[Action, S]] = []
        self._undone: list[tuple[Action, S]] = []

    @property
    def state(self) -> S:
        """The current state."""
        return self._stack[-1][1] if self._stack else self.root

    @property
    def actions(self) -> list[Action]:
        """The actions taken so far, oldest first."""
        return [a for a, _ in self._stack]

    def __len__(self) -> int:
        return len(self._stack)

    def state_after(self, k: int) -> S:
        """The state after the first ``k`` actions in effect (the root for 0)."""
        return self._stack[k - 1][1] if k else self.root

    def push(self, action: Action) -> None:
        """Apply an action (refused with ``IllegalAction``, leaving everything as it was)."""
        new = self.game.apply(self.state, action)
        self._stack.append((action, new))
        self._undone.clear()

    def pop(self) -> Action:
        """Undo the last action and return it; ``IndexError`` when there is none."""
        if not self._stack:
            raise IndexError("nothing to undo: no action has been taken in this game")
        entry = self._stack.pop()
        self._undone.append(entry)
        return entry[0]

    def peek(self) -> Action:
        """The last action taken; ``IndexError`` when there is none."""
        if not self._stack:
            raise IndexError("no action has been taken in this game")
        return self._stack[-1][0]

    def can_redo(self) -> bool:
        """Whether an undone action can be taken again."""
        return bool(self._undone)

    def redo(self) -> Action:
        """Take the last undone action again; ``IndexError`` when there is none."""
        if not self._undone:
            raise IndexError("nothing to redo: no action has been undone since the last new one")
        entry = self._undone.pop()
        self._stack.append(entry)
        return entry[0]
