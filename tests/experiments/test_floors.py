"""The floor marks of the mini tables, by hand."""

import pandas as pd
import pytest

from experiments.floors import FLAT_MARK, agreeing, mark, near_level, separated
from experiments.intervals import Estimate


STATISTICS = {"rouge": lambda items: items["f"]["r"].mean(axis=-1), "mu": lambda items: items["u"]["m"].mean(axis=-1)}


def _items(rouge, mu):
    return {"f": {"r": rouge}, "u": {"m": mu}}


@pytest.fixture
def table():
    target = _items([0.9, 1.0, 0.8, 0.9, 1.0, 0.8, 0.9, 0.9], [0.4, 0.5, 0.45, 0.4, 0.5, 0.45, 0.4, 0.42])
    oracle = _items([0.4, 0.5, 0.3, 0.4, 0.5, 0.3, 0.4, 0.4], [0.5, 0.4, 0.45, 0.5, 0.4, 0.45, 0.4, 0.42])
    ga = _items([0.3] * 8, [0.2] * 8)
    frame = pd.DataFrame({"rouge": [0.90, 0.40, 0.30], "mu": [0.44, 0.44, 0.20], "fq": [0.28, 1.0, 1e-3],
                          "items": [target, oracle, ga]}, index=["Target", "Oracle", "GA"])
    return frame


def test_agreeing_flags_what_the_paired_interval_cannot_tell_apart(table):
    reasons = agreeing(table, {"rouge": "forget ROUGE-L", "mu": "model utility"}, STATISTICS)
    assert list(reasons) == ["mu"] and "Target 0.440 and Oracle 0.440 cannot be told apart" in reasons["mu"]
    assert agreeing(table, {"mu": "model utility"}, STATISTICS, other="GA") == {}  # a broken model: utility moves
    table.loc["GA", "items"] = None  # a diverged run tells nothing either way
    assert agreeing(table, {"mu": "model utility"}, STATISTICS, other="GA") == {}


def test_separated_flags_a_target_the_test_cannot_tell_from_the_oracle(table):
    assert list(separated(table, "fq", "forget quality")) == ["fq"]
    table.loc["Target", "fq"] = 0.004
    assert separated(table, "fq", "forget quality") == {}


def test_near_level_reads_the_targets_interval():
    assert near_level(Estimate(0.27, 0.22, 0.32), 0.25, "acc", "Bio", "chance")
    assert near_level(Estimate(0.23, 0.18, 0.28), 0.25, "acc", "Bio", "chance")
    assert not near_level(Estimate(0.31, 0.26, 0.36), 0.25, "acc", "Bio", "chance")
    assert not near_level(Estimate(float("nan"), float("nan"), float("nan")), 0.25, "acc", "Bio", "chance")


def test_mark_renames_the_shown_columns_and_writes_the_reasons(table):
    shown = table.drop(columns="items").rename(columns={"mu": "model utility"})
    marked, note = mark(shown, {"mu": "model utility: flat"}, columns={"mu": "model utility"}, elsewhere="See ch. 14.")
    assert list(marked.columns) == ["rouge", "model utility" + FLAT_MARK, "fq"]
    assert "- model utility: flat." in note and note.endswith("See ch. 14.")
    assert mark(shown, {}) == (shown, "")
    with pytest.raises(KeyError, match="no column 'mu'"):
        mark(shown, {"mu": "x"})
