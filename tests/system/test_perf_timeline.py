"""The build's timeline (`perf/timeline.py`, fed by the Makefile's stamps): each step's last run, and
the seconds during which 0, 1 or 2+ steps ran at once, on a timeline written here by hand."""

import importlib.util
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location("timeline", Path(__file__).resolve().parents[2] / "perf" / "timeline.py")
timeline = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(timeline)


def test_steps_and_their_overlap_read_off_a_hand_made_timeline(tmp_path):
    # learning 0-10; chapter a 10-30 beside chapter b 12-20; b again 40-50 (its last run counts); c never ends
    path = tmp_path / "timeline.tsv"
    path.write_text("".join(f"{t}\t{kind}\t{step}\n" for t, kind, step in [
        (100, "start", "learning"), (110, "end", "learning"), (110, "start", "a"), (112, "start", "b"),
        (120, "end", "b"), (130, "end", "a"), (140, "start", "b"), (150, "end", "b"), (151, "start", "c")]))
    steps = timeline.read_steps(path)
    assert steps == {"learning": (100.0, 110.0), "a": (110.0, 130.0), "b": (140.0, 150.0)}
    # with b's last run: 0-30 one step, 30-40 none, 40-50 one
    assert timeline.concurrency(steps) == {0: pytest.approx(10.0), 1: pytest.approx(40.0)}
    # a 0-20, b 2-10, learning 0-3: two steps 0-2, three 2-3, two 3-10, one 10-20
    both = {"a": (0.0, 20.0), "b": (2.0, 10.0), "learning": (0.0, 3.0)}
    assert timeline.concurrency(both) == {0: 0.0, 1: pytest.approx(10.0), 2: pytest.approx(9.0), 3: pytest.approx(1.0)}
    text = timeline.report(steps)
    assert "| a | 10 | 30 | 20 |" in text and text.endswith("span 50 s; running at once: 0 steps 20%, 1 steps 80%, 2+ steps 0%\n")
