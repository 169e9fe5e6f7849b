"""Relation-to-stream: RStream, IStream and DStream as steps, and the fresh blank nodes of
CONSTRUCT templates."""
