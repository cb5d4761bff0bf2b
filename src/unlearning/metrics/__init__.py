"""Metrics of both papers, each a pure function with its formula in the docstring."""
