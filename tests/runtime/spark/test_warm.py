"""Per-worker warm state stays bounded: a long-lived worker that has served many queries
keeps the most recently used plans only, found again by equal content."""

from __future__ import annotations

from sepia.runtime.spark.warm import WarmCache


def test_the_least_recently_used_entry_goes_first():
    cache: WarmCache[str, int] = WarmCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c"), len(cache)) == (1, None, 3, 2)


def test_many_queries_do_not_grow_it():
    cache: WarmCache[tuple, str] = WarmCache(4)
    for n in range(1000):
        cache.get_or_make(("query", n), lambda n=n: f"plan {n}")
    assert len(cache) == 4
    assert cache.get(("query", 999)) == "plan 999"


def test_equal_content_finds_the_entry_made_once():
    cache: WarmCache[tuple, list] = WarmCache(4)
    made = []

    def make() -> list:
        made.append(1)
        return ["plan"]

    first = cache.get_or_make(("unit", ("q", "SELECT *")), make)
    again = cache.get_or_make(("unit", ("q", "SELECT *")), make)  # a new but equal key
    assert again is first and made == [1]


def test_a_background_is_encoded_once_per_worker_for_every_key():
    import pyoxigraph as ox

    from sepia.lang import parse_query
    from sepia.runtime.spark.host import job_spec
    from sepia.runtime.spark.incremental_engine import IncrementalEngine
    from sepia.runtime.spark.units import bucket_key, units_of

    ex, db = "http://example.org/", ox.NamedNode("http://example.org/db")
    store = ox.Store()
    store.add(ox.Quad(ox.NamedNode(ex + "c"), ox.NamedNode(ex + "name"), ox.Literal("n"), db))
    query = parse_query(
        f"PREFIX : <{ex}> SELECT ?x ?n FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 5] "
        "WHERE { WINDOW :w { ?x :p :o } GRAPH :db { ?x :name ?n } }"
    )
    spec = job_spec(units_of([("q", query)]), store, streams=(ex + "s",), buckets=2)
    prepared = spec.prepared_background()
    assert spec.prepared_background() is prepared  # found again, not encoded again
    engine = IncrementalEngine(spec.units[0], prepared, False, checked=True)
    sessions = [engine._session(bucket_key(b, 2), None, {})[0] for b in range(2)]
    columns = [session.background.columns[db] for session in sessions]
    assert columns[0] is columns[1] is prepared.background.columns[db]
    indexes = [session.background.graph(db) for session in sessions]  # built on first read
    assert indexes[0] is indexes[1] is prepared.background.graphs[db]
    assert sessions[0].dictionary is not sessions[1].dictionary
