"""A background dataset encoded once, for many sessions over it.

Encoding a background (each triple's terms into the dictionary, each graph indexed) is paid
by every session made over it: W6's 133,000 triples take 0.5 s, once in each bucket of a
Spark job and once more in each route stage's router. A `PreparedBackground` is encoded
once (per Spark Python worker: `runtime.spark.host.JobSpec.prepared_background`); a session
made from it takes a copy of its dictionary, whose ids are those a fresh encoding of the
same store gives (so its state rows are the same), and shares its graphs' indexes, which no
query changes (the position indexes a first lookup builds are then built once too). The
versions of time-varying graphs and the RDFS closure are still encoded by each session,
into its own dictionary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyoxigraph as ox

from sepia.engine.background import Background
from sepia.engine.codec import Codec


def ntriples_ids(lines: list[str], codec: Codec) -> tuple[np.ndarray, ...] | None:
    """The columnar reader's term cutter (``columnar.frontend.ntriples_ids``) for encoding a
    background in bulk, imported (with polars) only when there is background data."""
    from sepia.engine.columnar.frontend import ntriples_ids as cut

    return cut(lines, codec)


@dataclass(frozen=True, slots=True)
class PreparedBackground:
    """A store's background encoded into `codec`; never changed once made (sessions take
    copies: `for_session`)."""

    store: ox.Store
    codec: Codec
    background: Background

    @classmethod
    def of(cls, store: ox.Store | None) -> PreparedBackground:
        """Encode `store`'s graphs (none: no background data)."""
        codec = Codec()
        background = Background.encode(store, codec, ntriples_ids)
        return cls(background.store, codec, background)

    def for_session(self) -> tuple[Codec, Background]:
        """A dictionary of a session's own, holding the background's terms under their ids,
        and the background over it, sharing the static graphs' columns and indexes (an
        index one session builds on its first read serves the next)."""
        codec = self.codec.copy()
        shared = self.background
        return codec, Background(shared.store, codec, columns=shared.columns,
                                 static=shared.static, graphs=shared.graphs,
                                 varying=dict(shared.varying))
