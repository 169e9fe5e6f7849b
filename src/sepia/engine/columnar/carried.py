"""A run's numbers carried with it, so that a ``;`` state does not read them at each step.

A run waiting in a ``;`` state is asked again at every span until it takes a candidate
(W4's head and shoulders: 630 state steps, each reading the numbers of about 4,400
waiting runs by a sort and a binary search among every number known). The numbers of the
slots a ``;`` state's FILTER reads from the runs are found once, when a run enters the
state, and kept as a column of the run's table (a pseudo slot), one ``int64`` per row:
``mantissa * 32 + digits`` where the value is sure, else a mark of its state. The column
moves with the run (``take``, the joins with candidates, from state to state). It is a
function of the slot's id, so a run's distinctness and grouping ignore it
(``is_carried``); a table without it (restored from a snapshot, a concatenation where one
part lacks it) finds it again.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from sepia.engine.columnar.expressions import ERROR, SURE, UNSURE, Numbers
from sepia.engine.columnar.groups import NumericIds
from sepia.engine.columnar.orderings import read_numbers
from sepia.engine.columnar.tables import Ids, Table

CARRIED = -100
"""Slot k's carried numbers live in the pseudo slot ``CARRIED - k``."""
_ERROR = np.iinfo(np.int64).min
_UNSURE = _ERROR + 1
_FITS = 1 << 57
"""A sure mantissa is carried when below this in magnitude (room for 5 bits of digits)."""


def carried_slot(slot: int) -> int:
    """The pseudo slot holding ``slot``'s numbers."""
    return CARRIED - slot


def is_carried(key: int) -> bool:
    """Whether a table key is a carried numbers column (not a value of the mapping)."""
    return key <= CARRIED


def with_numbers(table: Table, slots: Iterable[int], numbers: NumericIds) -> Table:
    """``table`` with the numbers of each of ``slots`` it binds carried (read once here
    where missing); a slot whose sure mantissas are too wide is left to be read."""
    for slot in slots:
        key = carried_slot(slot)
        if slot in table.columns and key not in table.columns:
            code = _encoded(read_numbers(table.columns[slot], numbers))
            if code is not None:
                table.columns[key] = code
    return table


def carried(table: Table, slot: int) -> Numbers | None:
    """The numbers of ``slot`` the table carries, or None."""
    code = table.columns.get(carried_slot(slot))
    if code is None:
        return None
    state = np.full(len(code), SURE, dtype=np.int8)
    sure = code > _UNSURE
    if sure.all():  # the usual case (amounts, prices): fewer passes
        return Numbers(state, code & 31, code >> 5)
    state[code == _ERROR] = ERROR
    state[code == _UNSURE] = UNSURE
    return Numbers(state, np.where(sure, code & 31, 0), np.where(sure, code >> 5, 0))


def _encoded(found: Numbers) -> Ids | None:
    """One code per row, or None where a sure mantissa does not fit."""
    sure = found.state == SURE
    if (np.abs(found.mantissa[sure]) >= _FITS).any():
        return None
    code = found.mantissa * 32 + found.digits
    code[found.state == ERROR] = _ERROR
    code[found.state == UNSURE] = _UNSURE
    return code
