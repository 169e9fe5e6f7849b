"""Wide tables for a person at a narrow terminal: split by columns, never cut.

A table wider than the console is printed as several tables that each repeat the key
columns (what a row is) and take as many of the other columns as fit, so every cell is
shown whole instead of being cut to `var…`; a long key (a file URI) is folded within a
third of the width.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rich.console import Console, JustifyMethod
from rich.table import Table

_EDGE = 1  # the table's right border
_PER_COLUMN = 3  # a border and a space each side


def print_fitted(
    console: Console,
    title: str,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    keys: int = 1,
    right: Collection[str] = (),
) -> None:
    """Print `rows` under `headers`; the first `keys` columns are repeated in each part."""
    for number, columns in enumerate(column_groups(console.width, headers, rows, keys)):
        table = Table(title=title if number == 0 else None, title_justify="left")
        for index in columns:
            justify: JustifyMethod = "right" if headers[index] in right else "left"
            cap = _key_width(console.width) if index < keys else None
            table.add_column(headers[index], justify=justify, overflow="fold", max_width=cap)
        for row in rows:
            table.add_row(*(row[index] for index in columns))
        console.print(table)


def column_groups(
    width: int, headers: Sequence[str], rows: Sequence[Sequence[str]], keys: int
) -> list[list[int]]:
    """Column indexes of each part: the keys, then the next columns while they fit."""
    needed = [max([len(headers[i]), *(len(row[i]) for row in rows)]) + _PER_COLUMN
              for i in range(len(headers))]  # fmt: skip
    needed[:keys] = [min(n, _key_width(width) + _PER_COLUMN) for n in needed[:keys]]
    base = _EDGE + sum(needed[:keys])
    groups: list[list[int]] = []
    current: list[int] = []
    used = base
    for index in range(keys, len(headers)):
        if current and used + needed[index] > width:
            groups.append(current)
            current, used = [], base
        current.append(index)
        used += needed[index]
    groups.append(current)
    return [[*range(keys), *group] for group in groups]


def _key_width(width: int) -> int:
    return max(width // 3, 12)
