"""Durations and time points of window specs, WITHIN and REPORT EVERY (language.md section 2).

Every duration becomes an integer in the query's time unit: milliseconds for wall-clock
forms (``PT10S``, ``10s``, ``10 SECONDS``), the number itself for a bare integer (abstract
time units). The kind is recorded so that mixing the two is reported, naming both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lark import Token, v_args

from sepia.lang.context import Context, TimedValue
from sepia.rdf.time import TimeKind

_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_UNITS = {"millisecond": "ms", "second": "s", "minute": "m", "hour": "h", "day": "d"}
_ISO = re.compile(
    r"(-?)P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?"
    r"(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$"
)


@dataclass(frozen=True, slots=True)
class Duration:
    """An integer in the query's time unit; ``kind`` None for 0, which fits either unit."""

    value: int
    kind: TimeKind | None


class DurationRules:
    """Transformer methods for the duration forms."""

    ctx: Context

    @v_args(inline=True)
    def abstract_duration(self, token: Token) -> Duration:
        value = int(token)
        return self._record(token, value, TimeKind.ABSTRACT if value else None)

    @v_args(inline=True)
    def unit_duration(self, number: Token, unit: Token) -> Duration:
        name = str(unit).lower().rstrip("s")
        value = int(number) * _MS[_UNITS[name]]
        return self._record(number, value, TimeKind.DATETIME, end=unit.end_pos)

    @v_args(inline=True)
    def short_duration(self, token: Token) -> Duration:
        number, unit = re.fullmatch(r"(\d+)([a-z]+)", str(token)).groups()  # type: ignore[union-attr]
        return self._record(token, int(number) * _MS[unit], TimeKind.DATETIME)

    @v_args(inline=True)
    def iso_duration(self, token: Token) -> Duration:
        match = _ISO.match(str(token))
        if match is None or str(token) in ("P", "-P") or str(token).endswith("T"):
            self.ctx.fail(
                token,
                f"'{token}' is not an ISO 8601 duration",
                expected="a duration such as PT10S, PT5M or P1D",
            )
        sign, years, months, weeks, days, hours, minutes, seconds = match.groups()
        if years or months:
            self.ctx.fail(
                token,
                f"'{token}' has years or months, which have no fixed length",
                expected="days, hours, minutes or seconds",
            )
        total = sum(
            int(amount or 0) * _MS[unit]
            for amount, unit in ((weeks, "w"), (days, "d"), (hours, "h"), (minutes, "m"))
        )
        total += round(float(seconds or 0) * 1000)
        return self._record(token, -total if sign else total, TimeKind.DATETIME)

    @v_args(inline=True)
    def time_point(self, duration: Duration) -> Duration:
        return duration

    def _record(
        self, token: Token, value: int, kind: TimeKind | None, end: int | None = None
    ) -> Duration:
        if kind is not None:
            span = self.ctx.span(token)
            if end is not None:
                span = type(span)(span.line, span.column, span.start, end)
            self.ctx.times.append(TimedValue(kind, span))
        return Duration(value, kind)
