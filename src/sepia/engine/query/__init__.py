"""The row engine's query hosts: one continuous query stepped through time and the class of
each query kind (window, sequence, event tree, several MATCHes), PARTITION BY, and state
as rows (snapshots)."""
