"""Dice as sorted tuples and count vectors, and the chance outcomes of a throw."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from functools import cache
from itertools import combinations_with_replacement
from math import factorial, prod
from typing import TypeAlias

from scoring.errors import InvalidAction

Dice: TypeAlias = tuple[int, ...]
"""The faces of some dice, sorted ascending: ``(1, 1, 5)``. Order never matters in a roll."""

Counts: TypeAlias = tuple[int, int, int, int, int, int]
"""How many dice show each face: ``counts[f - 1]`` is the number of dice showing ``f``."""

FACES = (1, 2, 3, 4, 5, 6)


def dice(values: Iterable[int]) -> Dice:
    """Check faces and return them sorted.

    >>> dice([5, 1, 1])
    (1, 1, 5)
    """
    out = tuple(values)
    for v in out:
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 6:
            raise InvalidAction(f"a die shows 1 to 6, not {v!r} (in {list(out)!r})")
    return tuple(sorted(out))


def counts(values: Iterable[int]) -> Counts:
    """The count vector of some faces.

    >>> counts([1, 1, 5])
    (2, 0, 0, 0, 1, 0)
    """
    c = Counter(values)
    return (c[1], c[2], c[3], c[4], c[5], c[6])


def from_counts(c: Iterable[int]) -> Dice:
    """The sorted faces of a count vector.

    >>> from_counts((2, 0, 0, 0, 1, 0))
    (1, 1, 5)
    """
    return tuple(face for face, n in zip(FACES, c, strict=True) for _ in range(n))


def contains(big: Iterable[int], small: Iterable[int]) -> bool:
    """Whether the multiset ``small`` is part of ``big``.

    >>> contains([1, 1, 5, 2], [1, 5])
    True
    >>> contains([1, 5], [1, 1])
    False
    """
    have = Counter(big)
    return all(have[f] >= n for f, n in Counter(small).items())


def remove(big: Iterable[int], small: Iterable[int]) -> Dice:
    """``big`` less the multiset ``small`` (which must be part of it).

    >>> remove([1, 1, 5, 2], [1, 5])
    (1, 2)
    """
    rest = Counter(big)
    rest.subtract(small)
    if any(n < 0 for n in rest.values()):
        raise ValueError(f"{list(small)!r} is not part of {list(big)!r}")
    return tuple(sorted(rest.elements()))


@cache
def outcomes(n: int) -> tuple[tuple[Dice, float], ...]:
    """Every result of throwing ``n`` dice as a sorted multiset, with its probability.

    >>> len(outcomes(5)), round(sum(p for _, p in outcomes(5)), 12)
    (252, 1.0)
    """
    result = []
    for combo in combinations_with_replacement(FACES, n):
        ways = factorial(n) // prod(factorial(k) for k in Counter(combo).values())
        result.append((combo, ways / 6**n))
    return tuple(result)


def sub_multisets(values: Iterable[int]) -> Iterator[Dice]:
    """Every distinct sub-multiset of some faces, the empty one first.

    >>> list(sub_multisets([1, 1, 5]))
    [(), (1,), (1, 1), (5,), (1, 5), (1, 1, 5)]
    """
    c = counts(values)

    def rec(face: int) -> Iterator[Dice]:
        if face > 6:
            yield ()
            return
        for rest in rec(face + 1):
            for k in range(c[face - 1] + 1):
                yield (face,) * k + rest

    yield from rec(1)
