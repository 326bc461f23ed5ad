"""Benchmarks for sommelier (docs/architecture.md). Run: python -m bench [--quick]."""
