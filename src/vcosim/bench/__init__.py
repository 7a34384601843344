"""Benchmarks that time vcosim against a baseline measured in the same run."""
