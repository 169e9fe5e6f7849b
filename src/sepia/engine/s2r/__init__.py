"""Stream-to-relation: window operators kept incrementally and the report policies that
say when a query is evaluated (RSP-QL's S2R operators and report strategies)."""
