"""The local runtime: the incremental engine hosted in-process, fed by a push loop.

``run`` replays finite streams at full speed; ``Session`` is the small API for programs
that embed Sepia (register query text, push elements, read results).
"""

from sepia.engine.hosts.session import Session, run

__all__ = ["Session", "run"]
