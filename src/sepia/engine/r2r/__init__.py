"""Relation-to-relation: physical graph-pattern operators over encoded rows, SPARQL
expressions, property paths, the pyoxigraph fallback, and the incremental maintenance of
answers between evaluations (delta joins, maintained operators, GROUP BY by counting)."""
