"""The lattice of kept dice of a five-dice game: every multiset of 0 to 5 faces, by size.

Two recursions over the lattice make a whole turn cheap to evaluate for many sheets at once:

* the value of keeping ``k`` and throwing the rest is the mean, over the six faces ``f``, of the
  value of keeping ``k + f`` (the missing dice are thrown one after the other), so 210 means of six
  numbers replace a 462 x 252 transition matrix;
* the best keep out of five dice is the best value over their sub-multisets, built up size by size
  from the best keep out of each multiset one die smaller.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations_with_replacement

import numpy as np
import numpy.typing as npt

from scoring.dice import FACES, Dice, outcomes

N_DICE = 5

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]


@dataclass(frozen=True)
class Lattice:
    """Multisets of ``0..N_DICE`` faces, their one-die-larger and one-die-smaller neighbours."""

    by_size: tuple[tuple[Dice, ...], ...]
    """``by_size[s]``: the multisets of ``s`` faces in ``combinations_with_replacement`` order."""
    index: tuple[dict[Dice, int], ...]
    """``index[s][k]``: the position of ``k`` in ``by_size[s]``."""
    grow: tuple[IntArray, ...]
    """``grow[s][i, f - 1]``: the position in ``by_size[s + 1]`` of ``by_size[s][i] + (f,)``."""
    shrink: tuple[IntArray, ...]
    """``shrink[s][i, j]``: the position in ``by_size[s - 1]`` of ``by_size[s][i]`` less a die."""
    probability: FloatArray
    """The chance of each five-dice multiset in one throw of five dice."""

    @property
    def rolls(self) -> tuple[Dice, ...]:
        """The 252 results of five dice."""
        return self.by_size[N_DICE]

    def keep_values(self, value: FloatArray) -> tuple[FloatArray, ...]:
        """Per size, the expected ``value`` of keeping each multiset and throwing the other dice.

        ``value`` has the 252 five-dice results on its first axis; the answer's item ``s`` has the
        multisets of ``s`` faces there (item 5 is ``value`` itself).
        """
        out = [value]
        for s in range(N_DICE - 1, -1, -1):
            # Rows of the bigger table copied whole: the other axis (the states) stays contiguous.
            grow = self.grow[s]
            total = np.take(out[-1], grow[:, 0], axis=0)
            for f in range(1, len(FACES)):
                total += np.take(out[-1], grow[:, f], axis=0)
            total *= 1 / len(FACES)
            out.append(total)
        return tuple(reversed(out))

    def best_keep(self, keep: tuple[FloatArray, ...]) -> FloatArray:
        """Per five-dice result, the best of ``keep`` over the dice one may hold (at most four)."""
        best = keep[0]
        for s in range(1, N_DICE + 1):
            shrink = self.shrink[s]
            smaller = np.take(best, shrink[:, 0], axis=0)
            for j in range(1, s):
                np.maximum(smaller, np.take(best, shrink[:, j], axis=0), out=smaller)
            best = smaller if s == N_DICE else np.maximum(keep[s], smaller, out=smaller)
        return best


def _build() -> Lattice:
    by_size = tuple(tuple(combinations_with_replacement(FACES, s)) for s in range(N_DICE + 1))
    index = tuple({k: i for i, k in enumerate(ks)} for ks in by_size)
    grow = tuple(
        np.array(
            [[index[s + 1][tuple(sorted((*k, f)))] for f in FACES] for k in by_size[s]],
            dtype=np.intp,
        )
        for s in range(N_DICE)
    )
    shrink = tuple(
        np.array(
            [[index[s - 1][k[:j] + k[j + 1 :]] for j in range(s)] for k in by_size[s]],
            dtype=np.intp,
        ).reshape(len(by_size[s]), s)
        for s in range(N_DICE + 1)
    )
    table = dict(outcomes(N_DICE))
    probability = np.array([table[d] for d in by_size[N_DICE]], dtype=np.float64)
    return Lattice(by_size, index, grow, shrink, probability)


LATTICE = _build()
"""The one lattice of five dice (built at import: a few milliseconds)."""
