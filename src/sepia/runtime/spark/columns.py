"""A key's due element rows as one batch of columns, for a session on the columnar core.

Stepped an element at a time, a key's session made a `StreamElement` per row (one
N-Triples parse each) and the columnar core turned each back into a one-element batch. Here
the rows' triples columns are encoded with the session's dictionary in one go (by text
where the route stage sent term text, else cut into terms by the columnar reader's
expressions, and parsed as one document only where those do not take them), and the step's
elements reach the core as one `ColumnBatch` (`push_columns`): no object per element in
between, one call per step instead of one per instant.

A batch encodes every term of its elements before the first of them is evaluated, where
the element path encodes an instant's terms as it evaluates it; the ids differ, and so
would the labels of blank nodes a query makes (`sepia.engine.r2s.construct`: labelled by
the highest id given). Such queries keep the element path (`labels_by_ids`), so a Spark
run labels them as `--engine local` does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyoxigraph as ox

from sepia.algebra import expression as ex
from sepia.algebra import query as qa
from sepia.algebra.scope import nodes
from sepia.engine.codec import Codec, encode_triples
from sepia.engine.columnar import ColumnBatch
from sepia.engine.columnar.frontend import ntriples_ids
from sepia.engine.columnar.query import plan_uncovered
from sepia.engine.columnar.sequences import plan_sequence_uncovered
from sepia.engine.hosts.engine_path import engine_path
from sepia.engine.hosts.session import Session
from sepia.engine.plan.physical import PhysicalQuery, SequencePlan
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.time import TimeKind
from sepia.runtime.spark.element_batches import ElementBatch
from sepia.runtime.spark.elements import (
    ElementRow,
    TermRefs,
    gathered,
    is_term_text,
    ntriples,
)


def element_columns(rows: Sequence[ElementRow], dictionary: Dictionary) -> ColumnBatch:
    """The elements of `rows` (in arrival order; an `ElementBatch` or rows) as columns over
    `dictionary`."""
    batch = rows if isinstance(rows, ElementBatch) else ElementBatch.of(rows)
    if batch.term_text:
        s, p, o, element = _batch_ids(batch, dictionary)
    else:
        s, p, o, element = triple_ids([row[7] for row in batch], dictionary)
    used = np.unique(batch.stream)
    return ColumnBatch(
        tuple(batch.streams[n] for n in used.tolist()),
        batch.end,
        np.searchsorted(used, batch.stream).astype(np.int64),
        np.zeros(len(batch), dtype=np.int64),
        element, s, p, o,
        TimeKind(batch.kind_at(0)) if len(batch) else TimeKind.ABSTRACT,
    )  # fmt: skip


def triple_ids(texts: Sequence[str | TermRefs], dictionary: Dictionary) -> tuple[np.ndarray, ...]:
    """The triples of element rows' texts as id columns (s, p, o, element: a position in
    `texts`). Term text (`elements.term_text`, the route stage's, packed as `TermRefs` or
    not) is encoded by text (`_batch_ids`); N-Triples lines (one triple per line,
    `elements`) are cut into terms by the columnar reader's expressions
    (`frontend.ntriples_ids`), and only where they hold what those do not take (blank
    nodes, escapes) parsed, all together as one document."""
    if all(isinstance(text, TermRefs) or not text or is_term_text(text) for text in texts):
        return _batch_ids(ElementBatch.of(("", "", 0, "", 0, 0, "", t) for t in texts), dictionary)
    lines = [ntriples(str(text)) for text in texts]
    found = ntriples_ids(lines, dictionary) if isinstance(dictionary, Codec) else None
    if found is not None:
        return found
    document = "\n".join(text for text in lines if text)
    parsed = ox.parse(document, format=ox.RdfFormat.N_TRIPLES) if document else ()
    ids = encode_triples(dictionary, [quad.triple for quad in parsed])
    counts = [text.count("\n") + 1 if text else 0 for text in lines]
    return _columns(np.array(ids, dtype=np.int64), counts)


def _batch_ids(batch: ElementBatch, dictionary: Dictionary) -> tuple[np.ndarray, ...]:
    """A batch's term text as id columns: each table of distinct terms some row refers to
    encoded once and its positions mapped to those ids, each row's slice gathered (numpy).
    Ids are given table by table, not term by term in element order: only the labels of
    blank nodes a query makes follow ids, and such queries do not step as columns
    (`labels_by_ids`)."""
    mapped: list[np.ndarray] = []
    base = np.zeros(len(batch.tables) + 1, dtype=np.int64)  # the last: rows of no terms
    offset = 0
    for n in np.unique(batch.table[batch.table >= 0]).tolist():
        table = batch.tables[n]
        ids = np.array(dictionary.encode_many(table.terms), dtype=np.int64)
        positions = np.asarray(table.positions, dtype=np.int64)
        mapped.append(ids[positions] if len(ids) else positions)
        base[n] = offset
        offset += len(positions)
    if (batch.count % 3).any():
        raise ValueError("element rows whose terms are not whole triples")
    ids = gathered(mapped, base[batch.table] + batch.first, batch.count)
    return _columns(ids, batch.count // 3)


def _columns(ids: np.ndarray, counts: Sequence[int] | np.ndarray) -> tuple[np.ndarray, ...]:
    """(s, p, o, element) from ids listed s p o by triple and each element's triple count."""
    table = ids.reshape(-1, 3)
    if len(table) != int(np.sum(counts)):
        raise ValueError("element rows whose triples are not one per line")
    element = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    return table[:, 0], table[:, 1], table[:, 2], element


def labels_by_ids(query: qa.Query) -> bool:
    """Whether `query` makes blank nodes (a CONSTRUCT template's, BNODE()), whose labels
    follow the dictionary's ids: a batch would give them other labels than a local run."""
    template = nodes(query.form, ox.BlankNode) if isinstance(query.form, qa.Construct) else []
    return bool(template) or any(call.function == "BNODE" for call in nodes(query, ex.Call))


def feed_of(physical: PhysicalQuery) -> str:
    """How the Spark job feeds a query's keys, for `sepia explain` (as
    `incremental_engine.IncrementalEngine.step` decides)."""
    query = physical.query
    chosen = engine_path()
    if query.partition_by is not None:
        if chosen == "rows" or plan_sequence_uncovered(physical) is not None:
            return (
                "spread over buckets, each owning its PARTITION BY values on the row "
                "engine: element by element"
            )
        return (
            "spread over buckets, each owning its PARTITION BY values on the columnar "
            "core: a bucket's due elements of a micro-batch as one batch of columns "
            "(under RDFS entailment: element by element, on the row engine)"
        )
    sequence = isinstance(physical.kind, SequencePlan)
    uncovered = (
        plan_sequence_uncovered(physical)
        if sequence
        else plan_uncovered(physical, costed=chosen == "columnar")
    )
    if chosen == "rows" or uncovered is not None:
        return "element by element, on the row engine"
    if labels_by_ids(query):
        return (
            "element by element on the columnar core (the blank nodes it makes are "
            "labelled by the dictionary's ids, as in a local run)"
        )
    return (
        "each key's due elements of a micro-batch as one batch of columns, columnar core "
        "(under RDFS entailment: element by element, on the row engine)"
    )


def forget_after_batch(session: Session) -> None:
    """Collect the terms nothing holds, once a pushed batch is gone. While the session
    advances over a batch, the batch holds every id of its elements, so a collection then
    (`sepia.engine.forgetting`) keeps them all and puts the next one off until the
    dictionary doubles: the key's stored dictionary would grow by a batch's fresh terms a
    step. A session that forgets and holds its threshold of terms collects again here."""
    forgetting = session.forgetting
    if forgetting is not None and len(session.dictionary) >= forgetting.min_terms:
        forgetting.collect([session, *ColumnBatch.alive.values()])
