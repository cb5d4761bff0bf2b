"""The smoke book's snapshot comparison (`perf/smoke_snapshot.py compare`): what differs between two
builds, and by how much, on snapshots written here by hand."""

import importlib.util
import math
from pathlib import Path

SPEC = importlib.util.spec_from_file_location("smoke_snapshot",
                                              Path(__file__).resolve().parents[2] / "perf" / "smoke_snapshot.py")
snapshot = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(snapshot)


def test_the_largest_difference_of_numbers_and_of_anything_else():
    assert snapshot.largest_difference({"a": [1.0, 2.0], "b": 3}, {"a": [1.0, 2.5], "b": 3}) == 0.5
    assert snapshot.largest_difference({"a": 1.0}, {"a": 1.0}) == 0.0
    assert snapshot.largest_difference({"a": "held"}, {"a": "partly"}) == math.inf
    assert snapshot.largest_difference({"a": True}, {"a": False}) == math.inf  # a flag is not a number
    assert snapshot.largest_difference([1.0, 2.0], [1.0]) == math.inf
    assert snapshot.largest_difference({"a": 1.0}, {"a": 1.0, "b": 2.0}) == math.inf  # a field only in one


def test_compare_lists_each_difference_with_its_size_and_counts_the_rest():
    before = {"runs": {"r": {"steps": 3}}, "evaluations": {"e": {"prob": 0.5}, "f": {"prob": 0.25}},
              "models": {}, "findings": {"x": {"verdict": "held"}}}
    after = {"runs": {"r": {"steps": 3}}, "evaluations": {"e": {"prob": 0.5 + 1e-6}, "f": {"prob": 0.25}},
             "models": {"m": {}}, "findings": {"x": {"verdict": "partly"}}}
    lines = snapshot.compare(before, after)
    assert "runs: 1 in both, 1 identical" in lines
    assert "evaluations: differs (largest difference 1e-06): e" in lines
    assert "evaluations: 2 in both, 1 identical, the others at most 1e-06 apart" in lines
    assert "models: only after: m" in lines
    assert "findings: differs (largest difference inf): x" in lines
