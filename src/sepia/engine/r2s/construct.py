"""Blank nodes of CONSTRUCT templates: fresh for every solution (SPARQL 1.1 section 16.2).

A template blank node ``_:b`` stands for a new blank node in each solution's triples, so
two solutions (even equal ones: results are bags) never share it, nor do two evaluations.
The engine's terms are ids in the session's dictionary, so a fresh blank node is a new
dictionary term labelled by the highest id given so far (``_:sepiaN``, skipping a label some
input already used): labels stay unique in the session (queries of a network share them),
and a replayed or resumed run gives the same ones. The reference names them ``_:cN`` per
query; io.md does not fix the labels, so the two agree up to renaming.
"""

from __future__ import annotations

import pyoxigraph as ox

from sepia.rdf.dictionary import Dictionary


def fresh_blank(dictionary: Dictionary, fresh: dict[str, int], label: str) -> int:
    """The id of template blank node ``label`` in one solution (``fresh``: the solution's
    blank nodes so far), a new dictionary term the first time."""
    found = fresh.get(label)
    if found is None:
        number = dictionary.last_id  # never smaller: forgotten labels are not given again
        while dictionary.lookup(f"_:sepia{number}") is not None:
            number += 1
        found = fresh[label] = dictionary.encode(ox.BlankNode(f"sepia{number}"))
    return found
