"""Benchmarks for sommelier (DESIGN.md §14). Run: python -m bench [--quick]."""
