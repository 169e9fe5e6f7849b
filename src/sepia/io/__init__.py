"""Data in and results out: stream readers, background loaders, result writers (io.md)."""
