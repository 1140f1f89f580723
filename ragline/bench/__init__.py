"""Benchmarks behind `ragline bench`: they print and save their numbers."""
