"""The hosts of registered queries, above both engines (the row engine's ``query`` and the
``columnar`` core): the path each query runs on (``engine_path``), query networks, and the
``Session`` API that both runtimes host (register, push, watermark, flush, snapshot)."""
