"""The 76 one-sided triangle stones of RULES §5.1: names, rotations and pip values.

A stone is its three side values clockwise. It may be written starting from any side: "045", "450"
and "504" are one stone, whose canonical name is the smallest of the three ("045"). Mirror images
are different stones ("045" and "054"), since a stone is only ever rotated, never turned over.
"""

from __future__ import annotations

from collections.abc import Iterable

from scoring.errors import InvalidAction

Sides = tuple[int, int, int]


def rotate(name: str, steps: int) -> str:
    """The same stone written starting ``steps`` sides further clockwise.

    >>> rotate("045", 1), rotate("045", 2)
    ('450', '504')
    """
    steps %= 3
    return name[steps:] + name[:steps]


def _all_stones() -> tuple[str, ...]:
    names = {f"{a}{b}{c}" for a in range(6) for b in range(6) for c in range(6)}
    return tuple(sorted({min(rotate(n, k) for k in range(3)) for n in names}))


STONES: tuple[str, ...] = _all_stones()
"""Every stone by its canonical name, in sorted order; a stone's number is its place here."""

STONE_INDEX: dict[str, int] = {name: n for n, name in enumerate(STONES)}

# Every way of writing every stone -> (stone number, offset of the written first side).
_WRITTEN: dict[str, tuple[int, int]] = {
    rotate(name, k): (n, k) for n, name in enumerate(STONES) for k in (2, 1, 0)
}

SIDES: tuple[Sides, ...] = tuple((int(s[0]), int(s[1]), int(s[2])) for s in STONES)

# ROTATED[stone][rotation] = the side values on a cell's sides 0, 1, 2 (RULES §5.2).
ROTATED: tuple[tuple[Sides, Sides, Sides], ...] = tuple(
    (
        (s[0], s[1], s[2]),
        (s[1], s[2], s[0]),
        (s[2], s[0], s[1]),
    )
    for s in SIDES
)


def pip(side: int) -> int:
    """The count of one side: its value, with 0 counting 6 ("de telwaarde van 'nul' = zes").

    >>> pip(0), pip(4)
    (6, 4)
    """
    return side or 6


PIPS: tuple[int, ...] = tuple(sum(pip(v) for v in s) for s in SIDES)
"""The pip value of every stone, by number."""


def parse_stone(text: str) -> tuple[int, int]:
    """The stone number and the side ``text`` starts from (``InvalidAction`` if it is no stone).

    >>> [(STONES[n], k) for n, k in map(parse_stone, ["045", "450", "504"])]
    [('045', 0), ('045', 1), ('045', 2)]
    """
    found = _WRITTEN.get(text.strip()) if isinstance(text, str) else None
    if found is None:
        raise InvalidAction(
            f'a stone is its three side values 0-5 clockwise, like "045", not {text!r}'
        )
    return found


def canonical(text: str) -> str:
    """The canonical name of a stone however it is written.

    >>> canonical("504"), canonical("540")
    ('045', '054')
    """
    return STONES[parse_stone(text)[0]]


def pip_value(stone: str) -> int:
    """A stone's pip value: the sum of its sides, 0 counting 6 (RULES §5.1).

    >>> pip_value("045"), pip_value("123")
    (15, 6)
    """
    return sum(pip(s) for s in SIDES[parse_stone(stone)[0]])


def pip_total(stones: Iterable[int]) -> int:
    """The pip value of several stones given by number.

    >>> pip_total([STONE_INDEX["045"], STONE_INDEX["123"]])
    21
    """
    return sum(PIPS[s] for s in stones)
