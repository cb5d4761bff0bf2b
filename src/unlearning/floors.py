"""Metrics that cannot move on a profile, found from the numbers and marked in the tables.

A metric says something about unlearning only if it can tell a model that knows the forget set
from one that never saw it. On the laboratory's tiny models several cannot (issue "knowledge with
signal"): the target and the retain-only oracle score the same, or the target already sits at
chance. The chapters mark such columns instead of reading noise as a result, and point to the
real-model chapter where the same metric has signal.

Three tests, each returning `{column: reason}` for the columns that fail it:
- `agreeing`: target and oracle within `tolerance` of each other (the metric cannot see what the
  oracle never learned);
- `separated`: a p-value of target against oracle (TOFU's forget quality) above `alpha` (the KS
  test cannot tell them apart);
- `near_level`: the target within `tolerance` of a level (chance accuracy, zero);
- `below`: the target under a bar it must clear for the metric to mean anything (RWKU: the
  model must recall at least half of its forget probes).
"""

from __future__ import annotations

import pandas as pd

FLAT_MARK = " ‡"
RECALL_BAR = 0.5  # RWKU: a forget level means something only if the target recalls at least half its probes
SIGNAL_ALPHA = 0.01  # a real-model comparison needs the target's forget quality (KS p-value) below this


def agreeing(table: pd.DataFrame, columns: dict[str, str], target: str = "Target", other: str = "Oracle",
             tolerance: float = 0.05) -> dict[str, str]:
    """Columns (`{column: label}`) where the rows `target` and `other` of `table` (indexed by
    model name) differ by at most `tolerance`: a forget metric on which the target and the
    retain-only oracle agree cannot see what the oracle never learned; a utility metric on which
    the target and the most damaged model agree cannot see damage."""
    reasons = {}
    for column, label in columns.items():
        a, b = float(table.loc[target, column]), float(table.loc[other, column])
        if abs(a - b) <= tolerance:
            reasons[column] = (f"{label}: {target} {a:.3f} and {other} {b:.3f} agree within {tolerance:g}, so it cannot "
                               f"tell them apart here")
    return reasons


def separated(table: pd.DataFrame, column: str, label: str, target: str = "Target", alpha: float = 0.05) -> dict[str, str]:
    """`{column: reason}` when the target's p-value against the oracle is above `alpha` (TOFU's
    forget quality: the KS test does not separate target from oracle, so every model scores high)."""
    p = float(table.loc[target, column])
    if p > alpha:
        return {column: f"{label}: the target's own p-value is {p:.2g} > {alpha:g}; the test cannot tell the target "
                        f"from the oracle, so no model's value means anything here"}
    return {}


def near_level(value: float, level: float, column: str, label: str, what: str, tolerance: float = 0.05) -> dict[str, str]:
    """`{column: reason}` when the target's `value` lies within `tolerance` of `level` (`what`
    names the level, e.g. "chance")."""
    if abs(float(value) - float(level)) <= tolerance:
        return {column: f"{label}: the target scores {float(value):.3f}, within {tolerance:.3g} of {what} "
                        f"({float(level):.3g}), so it cannot move on this profile"}
    return {}


def below(value: float, bar: float, column: str, label: str, what: str) -> dict[str, str]:
    """`{column: reason}` when the target's `value` is under `bar` (`what` says why the bar)."""
    if float(value) < float(bar):
        return {column: f"{label}: the target scores {float(value):.3f} < {float(bar):g} ({what})"}
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
