"""The columnar execution core: batches of elements as integer columns, window queries as
vector joins.

Batch API (what a host such as the local session or a Spark task calls):

- ``ColumnBatch`` (``batch``): elements in time order as numpy ``int64`` columns over the
  run's dictionary: per element ``times``, ``stream`` (a number into ``streams``, the
  stream IRIs), ``graph``; per triple ``element`` (offset into the elements), ``s``, ``p``,
  ``o``. Build one with ``ColumnBatch.from_elements(elements, codec)``, with
  ``frontend.read_columns(path, stream, codec)`` straight from a stream file, or from
  Arrow / numpy columns by the constructor (ids from the same ``Codec``).
- ``ColumnarQuery.advance_columns(batch) -> list[Result]`` (``query``): every result due
  through the batch's last time; ``flush()``, ``watermark(t)``, ``snapshot()`` /
  ``restore()`` are the row engine's (``ContinuousQuery``), with the same state rows.
  A batch may hold one element (live input) or a file's worth (replay): the results are
  the same, and each carries the instant it was due at.
- ``uncovered(query) -> str | None``: why a planned query stays on the row engine.
  ``sepia.engine.hosts.engine_path.continuous_query`` picks the path: ``SEPIA_ENGINE_PATH``
  is ``columnar`` (the default: wherever the core covers the query and is the faster,
  i.e. its report policy is time-driven), ``columnar-always`` (wherever it covers it) or
  ``rows`` (the row engine everywhere).
"""

from sepia.engine.columnar.batch import ColumnBatch
from sepia.engine.columnar.query import ColumnarQuery, uncovered

__all__ = ["ColumnBatch", "ColumnarQuery", "uncovered"]
