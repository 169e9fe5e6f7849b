"""The incremental engine: the algebra evaluated as elements arrive (architecture.md).

``plan`` compiles a query into a physical plan (windows as ``WindowOperator``s, the report
policy as a ``Schedule``, graph patterns as physical operators over dictionary-encoded
rows); ``ContinuousQuery`` runs it step by step with its state kept as rows; ``explain``
prints the plan. The local runtime (``sepia.runtime.local``) hosts it in-process.
"""

from sepia.algebra.query import Unsupported
from sepia.engine.background import Background
from sepia.engine.hosts.engine_path import explain
from sepia.engine.plan.physical import PhysicalQuery
from sepia.engine.plan.planner import plan
from sepia.engine.query.continuous import ContinuousQuery

__all__ = ["Background", "ContinuousQuery", "PhysicalQuery", "Unsupported", "explain", "plan"]
