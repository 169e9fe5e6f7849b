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
