"""Hypothesis strategies for the differential tests: streams and RSP-QL queries.

Streams use a small vocabulary (a blank node and literals in unusual forms among the terms)
so that joins, duplicates and filters hit often; times come from gaps of 0 (equal
timestamps), 1-2 (bursts) and 5-12 (gaps). Queries are assembled from window specs, report
policies, streaming operators and pattern families, as text, so they go through the real
parser.
"""

from __future__ import annotations

import re

import pyoxigraph as ox
from hypothesis import strategies as st

from sepia.rdf.stream import StreamElement

EX = "http://example.org/"
S1, S2 = EX + "s1", EX + "s2"
SUBJECTS = [ox.NamedNode(EX + x) for x in "abc"]
PREDICATES = [ox.NamedNode(EX + x) for x in "pq"]
OBJECTS = SUBJECTS + [ox.Literal(str(i), datatype=ox.NamedNode(
    "http://www.w3.org/2001/XMLSchema#integer")) for i in range(1, 5)]

BACKGROUND = """
@prefix : <http://example.org/> .
:a :r :b . :b :r :c . :c :r :a . :a :r 2 . :b :label "bee" .
:g { :a :r :a . :b :r :c . }
"""

SCHEMA = """
@prefix : <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
:p rdfs:subPropertyOf :q . :q rdfs:domain :C . :p rdfs:range :D . :C rdfs:subClassOf :E .
:r rdfs:subPropertyOf :p .
"""

BLANK = ox.BlankNode("n")
"""Stream data often has blank nodes (an observation's result node); SPARQL's VALUES, which
both evaluators hand rows to pyoxigraph in, cannot hold them."""
UNUSUAL = [
    ox.Literal("02", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#int")),
    ox.Literal("01", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
    ox.Literal("1.50", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#decimal")),
    ox.Literal("1.0E0", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#double")),
    ox.Literal("1.5E0", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#double")),
    ox.Literal("x", language="EN"),
    ox.Literal("x", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
]
"""Literals not in pyoxigraph's canonical form (sepia.rdf.terms.canonical), one ill-typed;
some equal in value to others of another datatype (1.0E0 and 1, 1.5E0 and 1.50), so that
ORDER BY keys, FILTER comparisons and MIN / MAX meet ties the total order on terms
(``sepia.rdf.order``) breaks (general doubles: tests/engine/r2r/test_incremental_aggregates.py)."""
triples = st.builds(
    ox.Triple,
    st.sampled_from([*SUBJECTS, BLANK]),
    st.sampled_from(PREDICATES),
    st.sampled_from([*OBJECTS, BLANK, *UNUSUAL]),
)
linked_triples = st.builds(
    ox.Triple,
    st.sampled_from([*SUBJECTS, BLANK]),
    st.sampled_from(PREDICATES),
    st.one_of(st.sampled_from([*SUBJECTS, BLANK]), st.sampled_from([*OBJECTS, *UNUSUAL])),
)
"""As ``triples``, but half of the objects are subjects too, so that chains (``?x :p ?y .
?y :q ?z``, the background's ``?y :r ?z``) and joins across windows find partners."""
narrow_triples = st.builds(
    ox.Triple,
    st.sampled_from([*SUBJECTS[:2], BLANK]),
    st.sampled_from(PREDICATES),
    st.sampled_from([*SUBJECTS, OBJECTS[3], BLANK]),
)
"""Triples over two subjects and five objects: event patterns whose events join on two
variables (``?x :p ?y`` then ``?x :q ?y``) find the same pair again across elements."""
BLANKS = [ox.BlankNode(x) for x in ("k1", "k2")]
blank_triples = st.builds(
    ox.Triple,
    st.sampled_from(SUBJECTS + BLANKS),
    st.sampled_from(PREDICATES),
    st.sampled_from(OBJECTS + BLANKS),
)
"""Triples with blank nodes as subject or object (chains that DESCRIBE follows)."""
gaps = st.one_of(st.just(0), st.integers(1, 2), st.integers(5, 12))


@st.composite
def stream(
    draw, iri: str, min_size: int = 0, max_size: int = 8, content=triples
) -> list[StreamElement]:
    """Elements of one stream in time order (equal times allowed), their triples drawn
    from ``content``."""
    t = draw(st.integers(0, 3))
    elements = []
    for number in range(draw(st.integers(min_size, max_size))):
        t += draw(gaps) if number else 0
        graph = draw(st.lists(content, min_size=0, max_size=4, unique=True))
        elements.append(StreamElement(iri, f"_:g{number}", t, t, tuple(graph)))
    return elements


@st.composite
def streams(draw, content=triples) -> dict[str, list[StreamElement]]:
    return {
        S1: draw(stream(S1, min_size=2, max_size=10, content=content)),
        S2: draw(stream(S2, min_size=1, content=content)),
    }


@st.composite
def paired_streams(draw, content=linked_triples) -> dict[str, list[StreamElement]]:
    """As ``streams``, but :s2's elements come at the times of :s1's (or just after), so
    that two windows, one on each stream, hold data at the same evaluations."""
    first = draw(stream(S1, min_size=2, max_size=10, content=content))
    near = sorted({t for e in first for t in (e.time, e.time + 1)})
    times = sorted(draw(st.lists(st.sampled_from(near), min_size=1, max_size=8)))
    second = [
        StreamElement(S2, f"_:g{number}", t, t,
                      tuple(draw(st.lists(content, min_size=1, max_size=4, unique=True))))
        for number, t in enumerate(times)
    ]
    return {S1: first, S2: second}


sliding = st.builds(
    lambda a, b, t0: f"[RANGE {a} STEP {b} START {t0}]",
    st.integers(1, 6), st.integers(1, 4), st.integers(0, 3),
)
window_specs = st.one_of(
    sliding,
    sliding,
    st.builds(lambda a: f"[RANGE {a}]", st.integers(1, 5)),
    st.builds(lambda t0: f"[LANDMARK FROM {t0}]", st.integers(0, 4)),
    st.just("[NOW]"),
    st.builds(lambda n: f"[ELEMENTS {n}]", st.integers(1, 3)),
    st.builds(lambda a, b: f"[FROM {a} TO {a + b}]", st.integers(0, 8), st.integers(0, 10)),
)


def declared(draw, windows: list[str], specs=window_specs) -> str:
    """FROM NAMED WINDOW clauses: the i-th of ``windows`` over stream :s<i+1>, each spec
    drawn from ``specs``."""
    return "\n".join(
        f"FROM NAMED WINDOW :{w} ON :s{i + 1} {draw(specs)}" for i, w in enumerate(windows)
    )


def event_head(draw) -> str:
    """The head of an event query: pushed (no REGISTER) or IStream / DStream, then SELECT,
    ASK or CONSTRUCT."""
    operators = ["", "", "REGISTER ISTREAM :out AS", "REGISTER DSTREAM :out AS"]
    operator = draw(st.sampled_from(operators))
    head = draw(st.sampled_from(["SELECT *", "SELECT *", "ASK", "CONSTRUCT { ?x :seen ?y }"]))
    return f"{operator}\n{head}"


@st.composite
def report(draw, windows: list[str]) -> str:
    """A REPORT clause of one or two strategies (or none: the dialect's default)."""

    def strategy() -> str:
        of = draw(st.sampled_from(["", *[f" OF :{w}" for w in windows]]))
        kind = draw(st.sampled_from(["ON WINDOW CLOSE", "ON CONTENT CHANGE", "NON EMPTY", "EVERY"]))
        if kind == "EVERY":
            return f"EVERY {draw(st.integers(1, 5))}{of}"
        return kind + of

    count = draw(st.sampled_from([0, 1, 1, 1, 2]))
    return "" if count == 0 else "REPORT " + " AND ".join(strategy() for _ in range(count))


ONE_WINDOW: list[tuple[str, ...]] = [  # (projection, WHERE body, solution modifiers)
    ("*", "WINDOW :w1 { ?x :p ?y }"),
    ("*", "WINDOW :w1 { ?x :p ?y } ?y :r ?z"),
    ("*", "WINDOW :w1 { ?x :p ?y } GRAPH :g { ?y :r ?z }"),
    ("*", "WINDOW :w1 { ?x :p ?y } GRAPH ?g { ?y ?r ?z }"),
    ("*", "WINDOW :w1 { ?x :p ?y OPTIONAL { ?y :q ?z } }"),
    ("*", "WINDOW :w1 { ?x :p ?y OPTIONAL { ?x :q ?z FILTER(?z != ?y) } }"),
    ("*", "WINDOW :w1 { { ?x :p ?y } UNION { ?x :q ?y } }"),
    ("*", "WINDOW :w1 { ?x ?p ?y FILTER(isLiteral(?y) && ?y > 1) }"),
    ("*", "WINDOW :w1 { ?x :p ?y BIND(STR(?x) AS ?s) }"),
    ("*", "WINDOW :w1 { ?x ?p ?y MINUS { ?x :q :a } }"),
    ("*", "WINDOW :w1 { ?x :p ?y . ?y :p ?z }"),
    ("*", "WINDOW :w1 { ?x :p ?x }"),
    ("*", "WINDOW :w1 { ?x :p _:b . _:b :q ?y }"),
    ("*", "WINDOW :w1 { ?x :p+ ?y }"),
    ("*", "VALUES ?y { :a 3 } WINDOW :w1 { ?x ?p ?y }"),
    ("?x (COUNT(*) AS ?n)", "WINDOW :w1 { ?x ?p ?y }", "GROUP BY ?x"),
    ("?x (MIN(?y) AS ?lo) (MAX(?y) AS ?hi) (SUM(?y) AS ?s) (AVG(?y) AS ?m) (COUNT(?y) AS ?n)",
     "WINDOW :w1 { ?x ?p ?y FILTER(isNumeric(?y)) }", "GROUP BY ?x"),
    ("DISTINCT ?x", "WINDOW :w1 { ?x ?p ?y }"),
    ("?y", "WINDOW :w1 { ?x :q ?y }", "ORDER BY ?y"),
    ("*", "{ SELECT ?x WHERE { WINDOW :w1 { ?x :p ?y } } } WINDOW :w1 { ?x :q ?y }"),
    ("*", "{ SELECT ?x (COUNT(?y) AS ?n) WHERE { WINDOW :w1 { ?x ?p ?y } } GROUP BY ?x } ?x :r ?z"),
    ("*", "WINDOW :w1 { ?x :p ?y FILTER NOT EXISTS { ?y :q ?x } }"),
]
TWO_WINDOWS: list[tuple[str, ...]] = [
    ("*", "WINDOW :w1 { ?x :p ?y } WINDOW :w2 { ?y :q ?z }"),
    ("*", "WINDOW :w1 { ?x :p ?y } OPTIONAL { WINDOW :w2 { ?x :q ?z } }"),
    ("*", "{ WINDOW :w1 { ?x :p ?y } } UNION { WINDOW :w2 { ?x :p ?y } }"),
    ("?x ?n", "WINDOW :w1 { ?x :p ?y } WINDOW :w2 { ?x :q ?n } FILTER(?n != ?y)"),
]


@st.composite
def queries(draw, family: tuple[str, ...] | None = None) -> str:
    """An RSP-QL query over one or two windows, as text: of the pattern ``family`` (an
    entry of ONE_WINDOW or TWO_WINDOWS) if given, else of any."""
    entry = family or draw(st.sampled_from(TWO_WINDOWS if draw(st.booleans()) else ONE_WINDOW))
    projection, where, tail = (*entry, "")[:3]
    windows = ["w1", "w2"] if entry in TWO_WINDOWS else ["w1"]
    declared = "\n".join(
        f"FROM NAMED WINDOW :{w} ON :s{i + 1} {draw(window_specs)}" for i, w in enumerate(windows)
    )
    operator = draw(st.sampled_from(["RSTREAM", "ISTREAM", "DSTREAM"]))
    form = draw(st.sampled_from(["SELECT", "SELECT", "SELECT", "ASK", "CONSTRUCT"]))
    if projection != "*":
        head = f"SELECT {projection}"
    elif form == "ASK":
        head = "ASK"
    elif form == "CONSTRUCT":
        head = "CONSTRUCT { ?x :seen ?y }"
    else:
        head = f"SELECT {projection}"
    return (
        f"PREFIX : <{EX}>\nREGISTER {operator} :out AS\n{head}\n{declared}\n"
        f"{draw(report(windows))}\nWHERE {{ {where} }} {tail}"
    )


@st.composite
def construct_queries(draw, templates: list[str], registered: str = "out") -> str:
    """A window query registered as stream ``:registered`` constructing one of
    ``templates`` from a pattern family's ``?x`` and ``?y``."""
    entry = draw(st.sampled_from([e for e in ONE_WINDOW + TWO_WINDOWS if e[0] == "*"]))
    windows = ["w1", "w2"] if entry in TWO_WINDOWS else ["w1"]
    declared = "\n".join(
        f"FROM NAMED WINDOW :{w} ON :s{i + 1} {draw(window_specs)}" for i, w in enumerate(windows)
    )
    operator = draw(st.sampled_from(["RSTREAM", "RSTREAM", "ISTREAM", "DSTREAM"]))
    return (
        f"PREFIX : <{EX}>\nREGISTER {operator} :{registered} AS\n"
        f"CONSTRUCT {{ {draw(st.sampled_from(templates))} }}\n{declared}\n"
        f"{draw(report(windows))}\nWHERE {{ {entry[1]} }}"
    )


GPMS = {
    "A": "DEFINE GPM A ON S1 { ?x :p ?y }",
    "B": "DEFINE GPM B ON S2 { ?y ?k ?z }",
    "C": "DEFINE GPM C ON S1 { ?x :q ?w FILTER(?w != ?y) }",  # ?y from an earlier GPM
    "D": "DEFINE GPM D ON S2 { ?x ?j ?v }",
    "E": "DEFINE GPM E ON S1 { ?u ?i ?n FILTER(isLiteral(?n)) }",
}


def partition_clause(draw, patterns: list[str]) -> str:
    """PARTITION BY a variable every pattern binds, when there is one (else partitions
    would rarely hold a whole match), else any of theirs."""
    found = [set(re.findall(r"\?\w+", p)) for p in patterns]
    common = set.intersection(*found)
    return f"PARTITION BY {draw(st.sampled_from(sorted(common or set.union(*found))))}"


def epsparql_pattern(draw, groups: list[str], operators: list[str]) -> str:
    """2-3 of ``groups`` (drawn with repeats) joined left to right by EP-SPARQL binary
    ``operators`` (SEQ, EQUALS, OPTIONALSEQ ...): the body of an EP-SPARQL SELECT."""
    chosen = draw(st.lists(st.sampled_from(groups), min_size=2, max_size=3))
    pattern = chosen[0]
    for group in chosen[1:]:
        pattern += f" {draw(st.sampled_from(operators))} {group}"
    return pattern


@st.composite
def sequence_queries(draw, partitioned: bool = False) -> str:
    """A SPAseq query: 2-3 elements joined by , ; : with + ? ! modifiers, & and |
    basic operators, FILTERs on earlier variables, WITHIN sliding or tumbling; with
    ``partitioned``, a PARTITION BY on one of the GPMs' variables."""
    names = draw(st.lists(st.sampled_from(sorted(GPMS)), min_size=2, max_size=3, unique=True))
    pool = list(names)
    parts = []
    while pool:
        name = pool.pop(0)
        if len(pool) >= 2 and draw(st.integers(0, 3)) == 0:  # keep two elements at least
            name = f"({name} {draw(st.sampled_from(['&', '|']))} {pool.pop(0)})"
        modifier = draw(st.sampled_from(["", "", "", "+", "?", "!"]))
        parts.append("!" + name if modifier == "!" else name + modifier)
    expression = parts[0]
    for part in parts[1:]:
        expression += f" {draw(st.sampled_from([',', ';', ':']))} {part}"
    width = draw(st.integers(1, 15))
    within = draw(st.sampled_from(["", f"WITHIN {width}", f"WITHIN {width} TUMBLING"]))
    defines = "\n".join(GPMS[n] for n in names)
    partition = partition_clause(draw, [GPMS[n] for n in names]) if partitioned else ""
    return (
        f"PREFIX : <{EX}>\nSELECT * {within}\nFROM STREAM S1 :s1\nFROM STREAM S2 :s2\n"
        f"{partition}\nWHERE {{ SEQ({expression})\n{defines} }}"
    )


EVENTS = [
    "EVENT :w1 { ?x :p ?y }",
    "EVENT :w2 { ?y ?k ?z }",
    "EVENT :w1 { ?x ?i ?w FILTER(?w != :c) }",
    "EVENT :w2 { ?x ?j ?v }",
    "EVENT :w1 { ?u ?i ?n }",
]
event_windows = st.one_of(
    st.builds(
        lambda a, b, t0: f"[RANGE {a} STEP {b} START {t0}]",
        st.integers(3, 15), st.integers(1, 3), st.integers(0, 3),
    ),
    st.builds(lambda t0: f"[LANDMARK FROM {t0}]", st.integers(0, 4)),
    st.builds(lambda n: f"[ELEMENTS {n}]", st.integers(2, 6)),
)


@st.composite
def event_queries(draw, partitioned: bool = False) -> str:
    """An RSEP-QL query: a chain of 2-3 EVENTs joined by SEQ over two windows, optionally
    joined with background data outside the MATCH (and with ``partitioned``, PARTITION BY).
    (``E SEQ (F SEQ G)`` cannot be written: the lexer reads ``SEQ (`` as CQELS-CEP's
    ``SEQ(``.)"""
    leaves = draw(st.lists(st.sampled_from(EVENTS), min_size=2, max_size=3))
    wraps = [draw(st.sampled_from(["", "", "FIRST", "LAST"])) for _ in leaves]
    leaves = [f"{w}({leaf})" if w else leaf for w, leaf in zip(wraps, leaves, strict=True)]
    pattern = f"{leaves[0]} SEQ {leaves[1]}"
    if len(leaves) == 3:
        pattern = f"{pattern} SEQ {leaves[2]}"
    outside = draw(st.sampled_from(["", "?y :r ?q ."]))
    declared = "\n".join(
        f"FROM NAMED WINDOW :{w} ON :s{i + 1} {draw(event_windows)}"
        for i, w in enumerate(["w1", "w2"])
    )
    policy = draw(st.sampled_from(["", "", "EVENT POLICY NAIVE"]))
    if partitioned:
        declared += "\n" + partition_clause(draw, leaves)
    return (
        f"PREFIX : <{EX}>\nSELECT *\n{declared}\n{policy}\n"
        f"WHERE {{ MATCH {{ {pattern} }} {outside} }}"
    )


PLANTED = re.compile(
    r"(?:(?:EVENT|WINDOW) :(?P<window>\w+)|GPM (?P<gpm>\w+) ON S(?P<stream>\d))"  # a block opens
    r"|(?P<bang>!\{)|(?P<close>\})"  # a negated sequence element opens; a block closes
    r"|(?P<s>\?\w+|:\w+)\s+(?P<p>\?\w+|:[pq])\s+(?P<o>\?\w+|:\w+|\d+)(?=\s*[.}]|\s+FILTER)"
)
"""What ``planted`` reads in a query's text, left to right: the window, event or GPM block
a triple pattern is in, and triple patterns over the streams' predicates (:p, :q or a
variable; the background's :r and :label are left to the background)."""
NEGATED = re.compile(r"!:(\w+)|!\((\w+) [&|] (\w+)\)|!(\w+)")
"""Negated windows (CQELS-CEP's ``!:w2``) and GPMs (SPAseq's ``!B``, ``!(B & C)``)."""


def plantable(text: str) -> list[tuple[str | None, bool, str, str, str]]:
    """The query's stream triple patterns in the order written, each with the stream its
    block reads (None: any, as an EP-SPARQL group) and whether the block is negated."""
    streams = dict(re.findall(r"WINDOW :(\w+) ON :s(\d)", text))
    negated = {name for names in NEGATED.findall(text) for name in names if name}
    found, stream, negation = [], None, False
    for match in PLANTED.finditer(text):
        if match["window"]:
            stream, negation = streams.get(match["window"]), match["window"] in negated
        elif match["stream"]:
            stream, negation = match["stream"], match["gpm"] in negated
        elif match["bang"] or match["close"]:
            negation = bool(match["bang"])
        else:
            found.append(
                (stream and f"{EX}s{stream}", negation, match["s"], match["p"], match["o"])
            )
    return found


def term(name: str, bound: dict[str, ox.NamedNode | ox.Literal]) -> ox.NamedNode | ox.Literal:
    if name.startswith("?"):
        return bound[name]
    return ox.Literal(name) if name.isdigit() else ox.NamedNode(EX + name[1:])


def pool(name: str, position: int, text: str, bound: dict, aimed: bool) -> list:
    """The terms ``planted`` binds a variable to: predicates, else subjects and a literal;
    ``aimed``, no literal for a variable in a subject's place, a literal where the text
    asks ``isLiteral`` of it, and never a term a ``!=`` in the text sets it apart from."""
    if position == 1:
        return PREDICATES
    terms = [*SUBJECTS, OBJECTS[4]]
    if not aimed:
        return terms
    if re.search(rf"(?:^|[{{.]|\))\s*\{name}\s+[?:]", text, re.MULTILINE):
        terms = SUBJECTS  # a subject somewhere: a literal there holds no triple
    if f"isLiteral({name})" in text:
        terms = OBJECTS[3:5]
    apart = re.findall(rf"\{name} != (\?\w+|:\w+)|(\?\w+|:\w+) != \{name}\b", text)
    others = {bound.get(o) if o.startswith("?") else term(o, bound)
              for pair in apart for o in pair if o}
    return [t for t in terms if t not in others] or terms


@st.composite
def planted(
    draw,
    text: str,
    noise=None,
    *,
    aimed: bool = False,
    spans: tuple[int, ...] = (0,),
    after: int | None = None,
) -> dict[str, list[StreamElement]]:
    """Streams drawn from the query ``text``: one instance of each of its stream triple
    patterns (its variables bound once for all, joins and sequences hold), each in an
    element of its own at times in the order written (ties sometimes), among the elements
    of ``noise`` (default ``streams()``). Event patterns, chains and SEQs then answer
    often, where independent draws answer rarely. ``aimed`` steers further: times from 1
    (a time-based window holds nothing at 0), no ties unless the text has ``&`` (a SEQ
    needs its events in order; the noise still ties), FILTERs' ``isLiteral`` and ``!=``
    kept (``pool``), and a negated block's instance planted half the time only (it kills
    the match it follows). With ``after``, each stream ends with an element without
    triples that long after the planted ones (windows slide past them, report again,
    DSTREAM retracts). Each element lasts a width drawn from ``spans`` (interval-stamped
    when not 0), the next starting no earlier than it ends."""
    data = draw(noise if noise is not None else streams())
    if aimed:  # a fresh copy: the noise strategy may hand out one dict to every draw
        data = {iri: list(elements) for iri, elements in data.items()}
    bound: dict[str, ox.NamedNode | ox.Literal] = {}
    t = draw(st.integers(1, 5) if aimed else st.integers(0, 4))
    steps = [1, 1, 2] if aimed and "&" not in text else [1, 1, 2, 0]
    for stream, negated, *names in plantable(text):
        if aimed and negated and draw(st.booleans()):
            continue
        for position, name in enumerate(names):
            if name.startswith("?") and name not in bound:
                bound[name] = draw(st.sampled_from(pool(name, position, text, bound, aimed)))
        s, p, o = (term(name, bound) for name in names)
        if isinstance(s, ox.Literal) or isinstance(p, ox.Literal):
            continue  # a literal bound to a subject or predicate: no triple holds it
        iri = stream or draw(st.sampled_from([S1, S2]))
        width = draw(st.sampled_from(spans)) if len(spans) > 1 else spans[0]
        element = StreamElement(iri, "", t, t + width, (ox.Triple(s, p, o),))
        data.setdefault(iri, []).append(element)
        t += width + draw(st.sampled_from(steps))
    if after is not None:  # time goes on: windows slide past the planted elements
        for iri, elements in data.items():
            elements.append(StreamElement(iri, "", t + after, t + after, ()))
    return {
        iri: [StreamElement(iri, f"_:g{n}", e.start, e.end, e.triples, e.kind)
              for n, e in enumerate(sorted(elements, key=lambda e: e.end))]
        for iri, elements in data.items()
    }


SILENT = st.builds(lambda: {S1: [], S2: []})
"""No noise: ``planted`` streams alone (SEQs under strict contiguity, partitions)."""


def answering(queries: st.SearchStrategy, noise=None, **steer) -> st.SearchStrategy:
    """(query, streams) pairs, the streams ``planted`` from the query (``steer``: its
    ``aimed``, ``spans`` and ``after``)."""
    return queries.flatmap(lambda text: st.tuples(st.just(text), planted(text, noise, **steer)))
