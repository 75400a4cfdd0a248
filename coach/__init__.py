"""The coach: optimal play computed from the rules engines of ``scoring`` (issue 7)."""

from coach.advice import Advice, Choice
from coach.general import GeneralSolver

__all__ = ["Advice", "Choice", "GeneralSolver"]
