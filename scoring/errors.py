"""The one error tree of ``scoring``: every leaf is also a builtin exception."""

from __future__ import annotations


class ScoringError(Exception):
    """Root of every error raised by the rules engines."""


class InvalidAction(ScoringError, ValueError):
    """Malformed input: not an action at all (a die showing 7, an unknown category, bad JSON)."""


class IllegalAction(ScoringError, ValueError):
    """A well-formed action that the rules do not allow in this state; the state is unchanged."""


class InvalidOption(ScoringError, ValueError):
    """An unknown option name, or a value the option does not take."""


class UnknownGame(ScoringError, LookupError):
    """A game id or alias that no engine answers to."""
