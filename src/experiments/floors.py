"""Metrics that cannot move on a profile, found from the numbers and marked in the tables.

A metric says something about unlearning only if it can tell a model that knows the forget set
from one that never saw it. On the laboratory's tiny models several cannot (issue "knowledge with
signal"): the target and the retain-only oracle score the same, or the target already sits at
chance. The chapters mark such columns instead of reading noise as a result, and point to the
real-model chapter where the same metric has signal.

Three tests, each returning `{column: reason}` for the columns that fail it, each at the 95 % of
every interval of the book (`experiments.intervals`; no tolerance is typed here):
- `agreeing`: the paired interval of target minus oracle over the same items covers zero (the
  metric cannot see what the oracle never learned);
- `separated`: a p-value of target against oracle (TOFU's forget quality) above `intervals.ALPHA`
  (the KS test cannot tell them apart);
- `near_level`: the target's interval covers a level (chance accuracy, zero recall).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from experiments.intervals import ALPHA, Estimate, metric_difference

FLAT_MARK = " ‡"


def agreeing(table: pd.DataFrame, columns: dict[str, str], statistics: Mapping, target: str = "Target",
             other: str = "Oracle") -> dict[str, str]:
    """Columns (`{column: label}`) where the rows `target` and `other` of `table` (indexed by
    model name, each with its per-item scores) cannot be told apart: the paired 95 % interval of
    their difference over the same items (`statistics[column]`, the benchmark's) covers zero. A
    forget metric on which the target and the retain-only oracle agree cannot see what the oracle
    never learned; a utility metric on which the target and the most damaged model agree cannot
    see damage. A row without items (a diverged run) tells nothing either way and flags nothing."""
    reasons = {}
    for column, label in columns.items():
        d = metric_difference(table.loc[target], table.loc[other], statistics[column])
        if d.value == d.value and not d.resolved:
            reasons[column] = (f"{label}: {target} {float(table.loc[target, column]):.3f} and {other} "
                               f"{float(table.loc[other, column]):.3f} cannot be told apart (difference {d.text()}, "
                               f"95 % paired interval), so it cannot tell them apart here")
    return reasons


def separated(table: pd.DataFrame, column: str, label: str, target: str = "Target", alpha: float = ALPHA) -> dict[str, str]:
    """`{column: reason}` when the target's p-value against the oracle is above `alpha` (TOFU's
    forget quality: the KS test does not separate target from oracle, so every model scores high);
    `alpha` is every interval's level (`intervals.ALPHA`)."""
    p = float(table.loc[target, column])
    if p > alpha:
        return {column: f"{label}: the target's own p-value is {p:.2g} > {alpha:g}; the test cannot tell the target "
                        f"from the oracle, so no model's value means anything here"}
    return {}


def near_level(value: Estimate, level: float, column: str, label: str, what: str) -> dict[str, str]:
    """`{column: reason}` when the target's `value` (with its 95 % interval over its items) cannot
    be told from `level` (`what` names the level, e.g. "chance", "zero"): the interval covers it."""
    if value.value == value.value and not value.above(level) and not value.below(level):
        return {column: f"{label}: the target scores {value.text(3, signed=False)}, an interval that covers {what} "
                        f"({float(level):.3g}), so it cannot move on this profile"}
    return {}


def mark(table: pd.DataFrame, reasons: dict[str, str], columns: dict[str, str] | None = None,
         elsewhere: str = "") -> tuple[pd.DataFrame, str]:
    """`table` with every flagged column's name suffixed by ``FLAT_MARK`` and the note to print
    under it (an empty note when nothing is flagged). `columns` maps the reasons' raw column names
    to the names shown in `table` when the table was renamed; `elsewhere` ends the note (where
    the metric has signal)."""
    columns = columns or {}
    shown = {columns.get(c, c): columns.get(c, c) + FLAT_MARK for c in reasons}
    missing = [c for c in shown if c not in table.columns]
    if missing:
        raise KeyError(f"mark: no column {missing[0]!r} in the table (columns: {list(table.columns)})")
    if not reasons:
        return table, ""
    lines = "\n".join(f"- {reason}." for reason in reasons.values())
    note = f"Columns marked {FLAT_MARK.strip()} cannot move on this profile:\n\n{lines}"
    return table.rename(columns=shown), note + (f"\n\n{elsewhere}" if elsewhere else "")
