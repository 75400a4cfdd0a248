"""A score sheet as text for the terminal: a row per box, a column per player."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scoring.core import JSON


def sheet_text(
    rows: Sequence[str],
    players: Sequence[str],
    cells: Sequence[Mapping[str, int | None]],
    *,
    now: Mapping[str, int] | None = None,
    totals: Sequence[int] | None = None,
) -> str:
    """A plain-text sheet; ``now`` adds a column with what the dice on the table would write.

    >>> print(sheet_text(["ones", "chance"], ["Ann"], [{"ones": 3}], now={"chance": 11}))
    box     Ann  now
    ones      3
    chance        11
    """
    head = ["box", *players] + (["now"] if now is not None else [])
    table: list[list[str]] = [head]
    for row in rows:
        line = [row] + [_cell(c.get(row)) for c in cells]
        if now is not None:
            line.append(_cell(now.get(row)))
        table.append(line)
    if totals is not None:
        table.append(["total", *(str(t) for t in totals)] + ([""] if now is not None else []))
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    out = []
    for r in table:
        first = r[0].ljust(widths[0])
        rest = [v.rjust(max(w, 3)) for v, w in zip(r[1:], widths[1:], strict=True)]
        out.append("  ".join([first, *rest]).rstrip())
    return "\n".join(out)


def _cell(value: JSON) -> str:
    return "" if value is None else str(value)
