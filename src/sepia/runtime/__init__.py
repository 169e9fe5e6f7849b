"""Hosts that move data through Sepia: the in-process local runtime and the Spark runtime."""
