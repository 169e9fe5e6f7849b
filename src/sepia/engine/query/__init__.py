"""The query hosts: one continuous query stepped through time, PARTITION BY, query networks,
and the ``Session`` API that both runtimes host (register, push, watermark, flush,
snapshot)."""
