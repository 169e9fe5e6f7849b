"""The reference evaluator: the papers' definitions, literally, over a finite stream prefix.

Slow on purpose and easy to check line by line against the papers; the judge every faster
engine is compared with. Each module is named after the paper concept it implements.
"""

from sepia.semantics.evaluator import Result, evaluate

__all__ = ["Result", "evaluate"]
