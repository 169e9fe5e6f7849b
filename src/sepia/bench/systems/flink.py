"""The Flink peer: Apache Flink's CEP through Flink SQL ``MATCH_RECOGNIZE`` (PyFlink, PyPI
``apache-flink``), the engine a CEP user would pick instead, on the event workloads W4, W6, W8.

The workload's events become relational rows (CSV, one row per stream element: its time in
epoch ms and the fields the query tests); ``peers/flink_job.py`` runs in its own virtualenv
``.venv-flink`` (PyFlink pins its own pandas, pyarrow...), declares the CSV as a table with an
event-time attribute and counts the matches of the query written here:

- W4 (SPAseq Q3/Q4): ``PARTITION BY company ORDER BY rowtime``, one pattern variable per GPM,
  ``AFTER MATCH SKIP TO NEXT ROW`` (a run from every event, as SPAseq); strict contiguity is
  ``(A B C)``, skip-till-next is ``(A NOT_B* B NOT_C* C)`` where ``NOT_X`` is the negation of X's
  condition, so X is the first later event that satisfies it. Contiguity is per company, as
  PARTITION BY makes it in SPAseq. ``WITHIN w`` (last - first <= w) is Flink's
  ``WITHIN w + 1 ms`` (Flink drops a partial match when now - first >= its interval).
- W6 (SPAseq Q2, ``SEQ(A, B+)``): SPAseq counts each Kleene iteration count as its own match;
  Flink has one row per match and one match per start row, so the query matches the maximal
  run ``(A B+ END)`` with ``END`` the first row that is not a B (or past WITHIN) and counts
  ``COUNT(B.*)`` iterations: the same number. Flink reports a run only when END arrives, so a
  punctuation row per card follows its last event. The background join (holder, address) is
  a join of the matches with the KB's rows on the card id: the same count when each card has
  one holder and one address (as generated); SPAseq would multiply per iteration otherwise.
- W8 (EP-SPARQL (1), unrestricted SEQ): Flink cannot enumerate every (p1, p2, p3)
  combination (one match per start row), so it counts the price1 events that start at least
  one drop-then-rise within 30 days: the naive baseline counts combinations, so the counts
  differ by design. The RDFS variant is not expressible (no entailment in Flink).

The harness times the whole run, the JVM's start included (several seconds): the job's own
time, from submission to result, is what ``run_job`` returns (``seconds``).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from sepia.bench.memory import TreePeak
from sepia.bench.peers import INSTALL_HINT, PEERS_DIR, install_root
from sepia.bench.streamfile import parse_quads
from sepia.bench.systems.base import RunOutcome
from sepia.io.streams import read_stream
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.workloads import Workload, creditcard, stocks
from sepia.workloads.manifest import Manifest, Variant

JOB = PEERS_DIR / "flink_job.py"
WORKLOADS = ("W4", "W6", "W8")
JVM_GRACE_S = 120.0  # the JVM, Flink's mini-cluster and planning, before any row is read

Row = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Table:
    """A CSV table of the job: columns as (name, Flink SQL type), the epoch-ms time column."""

    name: str
    columns: tuple[tuple[str, str], ...]
    rowtime: str | None = "ts"


STOCKS = Table("stocks", (("ts", "BIGINT"), ("company", "STRING"), ("price", "DECIMAL(12, 2)"),
                          ("volume", "BIGINT")))
CARDS = Table("transactions", (("ts", "BIGINT"), ("id", "STRING"), ("amount", "DECIMAL(12, 2)"),
                               ("punct", "BOOLEAN")))
HOLDERS = Table("holders", (("id", "STRING"), ("name", "STRING"), ("address", "STRING")),
                rowtime=None)
PRICES = Table("prices", (("ts", "BIGINT"), ("company", "STRING"), ("price", "DECIMAL(12, 2)")))


def venv_python() -> Path:
    return install_root() / ".venv-flink" / "bin" / "python"


def _elements(data: Path, manifest: Manifest) -> Iterator[StreamElement]:
    return StreamSet({s.name: read_stream(data / s.path, s.name)
                      for s in manifest.streams}).merged()


def _values(element: StreamElement) -> dict[str, list[tuple[str, str]]]:
    """Predicate IRI -> [(subject, object)] lexical values of one element."""
    values: dict[str, list[tuple[str, str]]] = {}
    for triple in element.triples:
        values.setdefault(triple.predicate.value, []).append(
            (triple.subject.value, triple.object.value))
    return values


# --- events as rows ---------------------------------------------------------------------

def stock_rows(data: Path, manifest: Manifest) -> Iterator[Row]:
    """W4: one row per trade (time, company, price, volume)."""
    for element in _elements(data, manifest):
        values = _values(element)
        ((company, price),) = values[stocks.PRED + "price"]
        ((_, volume),) = values[stocks.PRED + "volume"]
        yield element.time, company, price, int(volume)


def card_rows(data: Path, manifest: Manifest) -> Iterator[Row]:
    """W6: one row per transaction (time, card id, amount, False), then a punctuation row
    (True) per card after the last event, so Flink closes every open Kleene run."""
    last = 0
    cards: dict[str, None] = {}
    for element in _elements(data, manifest):
        values = _values(element)
        ((_, card),) = values[creditcard.PRED + "id"]
        ((_, amount),) = values[creditcard.PRED + "amount"]
        cards[card] = None
        last = element.time
        yield element.time, card, amount, False
    for card in cards:
        yield last + 1, card, "0", True


def holder_rows(data: Path, variant: Variant) -> Iterator[Row]:
    """W6's background as rows: (card id, holder, address) for every holder x address."""
    holders: dict[str, list[str]] = {}
    addresses: dict[str, list[str]] = {}
    for path in variant.background:
        for quad in parse_quads(data / path):
            chosen = {creditcard.DB + "cardHolder": holders,
                      creditcard.DB + "holderAddress": addresses}.get(quad.predicate.value)
            if chosen is not None:
                chosen.setdefault(quad.subject.value, []).append(quad.object.value)
    for card, names in holders.items():
        for name in names:
            for address in addresses.get(card, ()):
                yield card, name, address


def price_rows(data: Path, manifest: Manifest, predicate: str) -> Iterator[Row]:
    """W8: one row per price statement (time, company, price)."""
    for element in _elements(data, manifest):
        for company, price in _values(element).get(predicate, ()):
            yield element.time, company, price


def write_csv(path: Path, rows: Iterator[Row]) -> int:
    with path.open("w", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        count = 0
        for row in rows:
            writer.writerow("true" if v is True else "false" if v is False else v for v in row)
            count += 1
    return count


# --- the queries ------------------------------------------------------------------------

def _interval(ms: int) -> str:
    """An SQL interval of ``ms`` milliseconds (leading precision: as many digits as needed)."""
    seconds = Decimal(ms) / 1000
    return f"INTERVAL '{seconds:.3f}' SECOND({max(2, len(str(int(seconds))))}, 3)"


def _condition(spaseq_filter: str, names: str, step: int, own: str) -> str:
    """A SPAseq GPM filter over ?p1..?pn as a DEFINE condition of step ``step``'s row, called
    ``own`` (the GPM's own variable or its NOT_ variable)."""
    def price(match: re.Match[str]) -> str:
        index = int(match.group(1)) - 1
        return f"{own if index == step else names[index]}.price"
    return re.sub(r"\?p(\d)", price, spaseq_filter).replace("&&", "AND")


def spaseq_sql(pattern: str, strategy: str, within_ms: int) -> str:
    """SPAseq Q3 / Q4 (stocks.PATTERNS) as MATCH_RECOGNIZE, counted."""
    filters = stocks.PATTERNS[pattern]
    names = "ABCDEFG"[: len(filters)]
    skip = strategy == ";"
    steps = [names[0]] + [f"NOT_{n}* {n}" if skip else n for n in names[1:]]
    define = []
    for step in range(1, len(names)):
        name = names[step]
        define.append(f"{name} AS {_condition(filters[step], names, step, name)}")
        if skip:
            negated = _condition(filters[step], names, step, f"NOT_{name}")
            define.append(f"NOT_{name} AS NOT ({negated})")
    return f"""SELECT COUNT(*) FROM {STOCKS.name} MATCH_RECOGNIZE (
  PARTITION BY company ORDER BY rowtime
  MEASURES A.ts AS t1
  ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
  PATTERN ({' '.join(steps)}) WITHIN {_interval(within_ms + 1)}
  DEFINE {', '.join(define)}
)"""


def big_after_small_sql(within_ms: int) -> str:
    """SPAseq Q2 SEQ(A, B+): the maximal run of B per start, its iterations counted."""
    def small(row: str) -> str:
        return (f"NOT {row}.punct AND {row}.amount * 10 <= A.amount "
                f"AND {row}.ts <= A.ts + {within_ms}")
    return f"""SELECT SUM(m.iterations) FROM (
  SELECT * FROM {CARDS.name} MATCH_RECOGNIZE (
    PARTITION BY id ORDER BY rowtime
    MEASURES A.id AS card, COUNT(B.ts) AS iterations
    ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A B+ E)
    DEFINE A AS NOT A.punct AND A.amount > 0,
           B AS {small("B")},
           E AS NOT ({small("E")})
  )
) AS m JOIN {HOLDERS.name} AS h ON m.card = h.id"""


def drop_then_rise_sql(drop: float, rise: float, duration_ms: int) -> str:
    """EP-SPARQL (1) as MATCH_RECOGNIZE: start rows with some later drop, then a rise."""
    return f"""SELECT COUNT(*) FROM {PRICES.name} MATCH_RECOGNIZE (
  PARTITION BY company ORDER BY rowtime
  MEASURES A.ts AS t1
  ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
  PATTERN (A X*? B Y*? C) WITHIN {_interval(duration_ms)}
  DEFINE B AS B.price < A.price * {drop}, C AS C.price > A.price * {rise}
)"""


# --- the job ----------------------------------------------------------------------------

def _table_spec(table: Table, path: Path) -> dict[str, Any]:
    return {"name": table.name, "path": str(path), "columns": [list(c) for c in table.columns],
            "rowtime": table.rowtime}


def flink_job(data: Path, manifest: Manifest, variant: Variant, folder: Path) -> dict[str, Any]:
    """Write the variant's rows as CSV under ``folder``; the job (tables, query, row count)."""
    params = variant.params
    if manifest.workload == "W4":
        sources = [(STOCKS, stock_rows(data, manifest))]
        query = spaseq_sql(params["pattern"], params["strategy"], params["within_ms"])
    elif manifest.workload == "W6":
        sources = [(CARDS, card_rows(data, manifest)), (HOLDERS, holder_rows(data, variant))]
        query = big_after_small_sql(params["within_ms"])
    else:
        sources = [(PRICES, price_rows(data, manifest, params["predicate"]))]
        query = drop_then_rise_sql(params["drop"], params["rise"], params["duration_ms"])
    tables, rows = [], {}
    for table, source in sources:
        path = folder / f"{table.name}.csv"
        rows[table.name] = write_csv(path, source)
        tables.append(_table_spec(table, path))
    return {"tables": tables, "query": query, "rows": rows}


class Flink:
    """Flink SQL MATCH_RECOGNIZE in PyFlink, in its own virtualenv, events as rows."""

    name = "flink"
    startup_s = JVM_GRACE_S  # allowed on top of a time budget: the JVM and Flink's planning
    description = ("Flink SQL MATCH_RECOGNIZE (PyFlink, .venv-flink), events as CSV rows; "
                   "W8 counts start events (one match per start row)")

    def unavailable(self) -> str | None:
        if shutil.which("java") is None and "JAVA_HOME" not in os.environ:
            return "Flink needs Java 11+ (17 here): no java on PATH and no JAVA_HOME"
        if not venv_python().exists():
            return f"apache-flink is not installed in {venv_python().parents[1]} ({INSTALL_HINT})"
        return None

    def cannot_express(self, workload: Workload, variant: Variant) -> str | None:
        if workload.id not in WORKLOADS:
            return f"the Flink peer runs {', '.join(WORKLOADS)} only"
        if "entailment" in variant.params:
            return "no RDFS entailment in Flink: class membership is not derivable"
        return None

    def counts_differ(self, workload: Workload, variant: Variant) -> str | None:
        if workload.id == "W8":
            return ("Flink has one match per start row: it counts price1 events that start a "
                    "drop-then-rise, not (p1, p2, p3) combinations")
        return None

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        """Runs the job to its end (no partial runs: a Flink job cannot stop at a row and say
        how far it read); past the budget plus the JVM's start allowance it is killed."""
        timeout = max(0.0, deadline - time.perf_counter()) + self.startup_s
        raw = run_job(data, manifest, variant, timeout)
        return RunOutcome(manifest.elements, manifest.triples, raw["results"],
                          peer_rss_mib=raw["peer_rss_mib"])


def run_job(data: Path, manifest: Manifest, variant: Variant, timeout: float) -> dict[str, Any]:
    """Convert the events, run the Flink job; its JSON: results, the job's own seconds (from
    submission to result, without the JVM's start), the Flink version, the rows per table,
    and the peak memory of the job's processes (PyFlink's Python and its JVM)."""
    with tempfile.TemporaryDirectory(prefix="sepia-flink-") as scratch:
        folder = Path(scratch)
        job = flink_job(data, manifest, variant, folder)
        (folder / "job.json").write_text(json.dumps(job))
        # its own session: on time-out the whole group goes, the JVM PyFlink started too
        child = subprocess.Popen([str(venv_python()), str(JOB), str(folder / "job.json")],
                                 cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, start_new_session=True)
        try:
            with TreePeak(child) as peak:
                stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            raise RuntimeError(f"the Flink job did not finish within {timeout:.0f} s") from None
    if child.returncode != 0:
        lines = [line for line in stderr.splitlines() if "Exception" in line]
        raise RuntimeError((lines or stderr.strip().splitlines() or ["?"])[-1])
    return {**json.loads(stdout.strip().splitlines()[-1]), "rows": job["rows"],
            "peer_rss_mib": peak.mib}
