"""Benchmarks that run through Fathom's real pipelines (``fathom bench …``)."""
