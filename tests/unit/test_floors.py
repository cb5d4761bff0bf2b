"""The floor marks of the mini tables, by hand."""

import pandas as pd
import pytest

from unlearning.floors import FLAT_MARK, agreeing, below, mark, near_level, separated


@pytest.fixture
def table():
    return pd.DataFrame({"rouge": [0.90, 0.40, 0.30], "mu": [0.44, 0.45, 0.20], "fq": [0.28, 1.0, 1e-3]},
                        index=["Target", "Oracle", "GA"])


def test_agreeing_flags_only_what_target_and_oracle_share(table):
    reasons = agreeing(table, {"rouge": "forget ROUGE-L", "mu": "model utility"})
    assert list(reasons) == ["mu"] and "Target 0.440 and Oracle 0.450" in reasons["mu"]
    assert agreeing(table, {"mu": "model utility"}, tolerance=0.005) == {}
    assert list(agreeing(table, {"rouge": "forget ROUGE-L"}, other="GA", tolerance=0.61)) == ["rouge"]
    assert agreeing(table, {"rouge": "forget ROUGE-L"}, other="GA", tolerance=0.59) == {}


def test_separated_flags_a_target_the_test_cannot_tell_from_the_oracle(table):
    assert list(separated(table, "fq", "forget quality")) == ["fq"]
    table.loc["Target", "fq"] = 0.004
    assert separated(table, "fq", "forget quality") == {}


def test_near_level_is_symmetric_and_inclusive():
    assert near_level(0.27, 0.25, "acc", "Bio", "chance")
    assert near_level(0.23, 0.25, "acc", "Bio", "chance")
    assert not near_level(0.31, 0.25, "acc", "Bio", "chance")


def test_mark_renames_the_shown_columns_and_writes_the_reasons(table):
    shown = table.rename(columns={"mu": "model utility"})
    marked, note = mark(shown, {"mu": "model utility: flat"}, columns={"mu": "model utility"}, elsewhere="See ch. 14.")
    assert list(marked.columns) == ["rouge", "model utility" + FLAT_MARK, "fq"]
    assert "- model utility: flat." in note and note.endswith("See ch. 14.")
    assert mark(shown, {}) == (shown, "")
    with pytest.raises(KeyError, match="no column 'mu'"):
        mark(shown, {"mu": "x"})


def test_below_is_strict():
    assert list(below(0.16, 0.5, "f", "forget", "half")) == ["f"]
    assert below(0.5, 0.5, "f", "forget", "half") == {}
