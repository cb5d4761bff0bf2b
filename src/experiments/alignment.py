"""How the update rules align with retention, read from the gradient geometry runs log (PCGrad /
SAGO, arXiv 2604.14808, section 5 and its geometry table; chapter 10).

A run with `record_geometry=True` logs at every step the cosines of the forget, retain and combined
gradients, the shares of conflicting coordinates and modules (overall and per kind of module), the
cosine with g_r that every rule would have reached on the same gradients (`cos_retain_<rule>`), and
the cosine of the step the optimiser took with -g_r and -g_f (`synthesis.geometry`). These functions
turn the logs of several runs into the chapter's tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from experiments import verdicts
from experiments.claims import record
from experiments.intervals import Estimate, block_length, bootstrap
from unlearning.synthesis import combine

COSINES = {"cos_forget_retain": "Forget-Retain", "cos_final_retain": "Comb-Retain", "cos_final_forget": "Comb-Forget",
           "conflict_coordinates": "conflicting coordinates", "conflict_modules": "conflicting modules"}
# the counterexamples of sago.md s. 5 to "SAGO aligns more tightly than PCGrad": (g_r, g_f), one module
COUNTEREXAMPLES = {"conflicting: g_r=(4,3), g_f=(1,-2)": ((4.0, 3.0), (1.0, -2.0)),
                   "aligned: g_r=(1,0.1), g_f=(0.1,1)": ((1.0, 0.1), (0.1, 1.0))}


def logs_of(runs: dict, **labels) -> "pandas.DataFrame":  # noqa: F821
    """The per-step logs of `runs` (rule -> run record) in one table, a column `rule` (and one per
    label of `labels`) saying which run a row is from."""
    return pd.concat([pd.DataFrame(run["log"]).assign(rule=rule, **labels) for rule, run in runs.items()],
                     ignore_index=True)


def mean_cosines(logs) -> "pandas.DataFrame":  # noqa: F821
    """The SAGO paper's geometry table: each cosine and conflict share averaged over training, per rule."""
    return logs.groupby("rule", sort=False)[list(COSINES)].mean().rename(columns=COSINES)


def module_kinds(logs) -> list[str]:
    """The per-kind conflict columns of the logs (`conflict_q_proj`, ...), sorted."""
    return sorted(c for c in logs.columns if c.startswith("conflict_") and c not in ("conflict_coordinates", "conflict_modules"))


def same_gradients(logs) -> tuple["pandas.DataFrame", "pandas.Series"]:  # noqa: F821
    """The steps at which SAGO and module-wise PCGrad were both applied to the same gradients, and
    whether g_f and g_r conflicted globally there (cos(g_f, g_r) < 0)."""
    both = logs.dropna(subset=["cos_retain_sago", "cos_retain_pcgrad"])
    return both, both.cos_forget_retain < 0


def tighter_table(both, conflict) -> "pandas.DataFrame":  # noqa: F821
    """With and without a global conflict: steps, how many SAGO aligned better with g_r than
    module-wise PCGrad, and each rule's smallest cos(g_final, g_r)."""
    better = both.cos_retain_sago > both.cos_retain_pcgrad
    return pd.DataFrame({
        "steps": [int(conflict.sum()), int((~conflict).sum())],
        "SAGO better aligned": [int(better[conflict].sum()), int(better[~conflict].sum())],
        "min cos(final, g_r), PCGrad": [both.cos_retain_pcgrad[conflict].min(), both.cos_retain_pcgrad[~conflict].min()],
        "min cos(final, g_r), SAGO": [both.cos_retain_sago[conflict].min(), both.cos_retain_sago[~conflict].min()],
    }, index=["global conflict", "no global conflict"])


def counterexample_table(examples: dict = COUNTEREXAMPLES) -> "pandas.DataFrame":  # noqa: F821
    """Each pair (g_r, g_f) of `examples` combined by PCGrad and by SAGO with the library's own
    `combine` (alpha = gamma = 1): the update and its cosine with g_r."""
    rows = []
    for label, (g_r, g_f) in examples.items():
        g_r, g_f = torch.tensor(g_r), torch.tensor(g_f)
        row = {"example": label}
        for rule in ("pcgrad", "sago"):
            final = combine([g_f], [g_r], rule)[0]
            row[f"{rule} update"] = tuple(round(float(v), 2) for v in final)
            row[f"cos with g_r, {rule}"] = round(float(torch.dot(final, g_r) / (final.norm() * g_r.norm())), 3)
        rows.append(row)
    return pd.DataFrame(rows).set_index("example")


def step_table(logs) -> "pandas.DataFrame":  # noqa: F821
    """Per optimiser and rule (logs with columns `optimizer` and `rule`): the mean and smallest
    cosine of the step taken with -g_r, the steps opposing retention, the mean cosine with -g_f."""
    return logs.groupby(["optimizer", "rule"], sort=False).agg(
        **{"mean cos(step, -g_r)": ("cos_update_retain", "mean"), "min cos(step, -g_r)": ("cos_update_retain", "min"),
           "steps opposing retention": ("cos_update_retain", lambda c: int((c < 0).sum())),
           "mean cos(step, -g_f)": ("cos_update_forget", "mean"), "steps": ("step", "count")})


def step_sentences(table, optimizers, rules) -> tuple[str, str]:
    """What `step_table` says, in two sentences: how many steps opposed retention per optimiser and
    rule, and, per optimiser, how SAGO's steps lean against module-wise PCGrad's."""
    opposing = table["steps opposing retention"]
    counts = "; ".join(f"{o}: " + ", ".join(f"{r} {int(opposing[o, r])} of {int(table.loc[(o, r), 'steps'])}"
                                            for r in rules if (o, r) in opposing.index) for o in optimizers)
    lean = "".join(
        f"Under {o}, SAGO's steps descend the forget objective {'less' if f['sago'] < f['pcgrad'] else 'more'} than "
        f"module-wise PCGrad's (mean cos(step, -g_f) {f['sago']:.3f} against {f['pcgrad']:.3f}) and retention "
        f"{'more' if r['sago'] > r['pcgrad'] else 'less'} ({r['sago']:.3f} against {r['pcgrad']:.3f}). "
        for o in optimizers if {(o, "sago"), (o, "pcgrad")} <= set(table.index)
        for f, r in [(table.loc[o, "mean cos(step, -g_f)"], table.loc[o, "mean cos(step, -g_r)"])])
    return counts, lean


def mean_cos_difference(logs, first: str = "sago", second: str = "pcgrad"):
    """The mean cos(g_final, g_r) over the steps of `first`'s run minus `second`'s (the SAGO
    paper's Comb-Retain column), with the 95 % interval of a moving-block bootstrap over each run's
    steps (`intervals.bootstrap`; steps are a time series, so blocks of consecutive steps)."""
    runs = {rule: logs[logs.rule == rule]["cos_final_retain"].dropna().to_numpy(float) for rule in (first, second)}
    if any(len(v) == 0 for v in runs.values()):
        return Estimate(np.nan, np.nan, np.nan, f"no {first} or {second} run")
    items = {"run": {rule: {"cos": list(v)} for rule, v in runs.items()}}
    block = block_length(min(len(v) for v in runs.values()))
    return bootstrap(items, lambda m: m["run"][first]["cos"].mean(axis=-1) - m["run"][second]["cos"].mean(axis=-1),
                     block=block, what="steps")


class GeometryVerdicts:
    """The SAGO paper's two geometry claims judged on the logs of one set of runs: PCGrad and SAGO
    never oppose retention (`verdicts.construction_check` of the smallest cos(g_final, g_r)), and
    SAGO aligns more tightly than module-wise PCGrad (`verdicts.tighter`), by the paper's statistic:
    each run's mean Comb-Retain cosine over its steps, SAGO's minus PCGrad's, with the 95 % interval
    of a moving-block bootstrap over each run's steps (`mean_cos_difference`)."""

    def __init__(self, logs, rules):
        self.rules, self.mean_cos = rules, logs.groupby("rule")["cos_final_retain"].mean()
        self.smallest = {rule: float(logs[logs.rule == rule]["cos_final_retain"].min()) for rule in rules}
        self.both, self.conflict = same_gradients(logs)
        self.better = self.both.cos_retain_sago > self.both.cos_retain_pcgrad
        self.difference = mean_cos_difference(logs)

    def sentences(self) -> dict:
        """The parts of the chapter's conclusion, by the glue name it cites them with."""
        share, better, conflict = float(self.better.mean()), self.better, self.conflict
        return {"nonneg": self.smallest_text(),
                "sum_min": self.smallest.get("sum", float("nan")),
                "mean_cos": ", ".join(f"{r} {self.mean_cos[r]:.2f}" for r in self.rules), "share": share,
                "better_conflict": int(better[conflict].sum()), "conflict": int(conflict.sum()),
                "better_aligned": int(better[~conflict].sum()), "aligned": int((~conflict).sum()),
                "tendency": "true at every step here" if share == 1 else "a tendency, not a theorem",
                "difference": self.difference.text(), "how": self.difference.how or "no interval"}

    def combined(self) -> dict:
        """The smallest cos(g_final, g_r) of every rule but plain summation."""
        return {r: v for r, v in self.smallest.items() if r != "sum"}

    def smallest_text(self) -> str:
        """`combined` as the page writes it: "pcgrad 0.000, sago 0.050"."""
        return ", ".join(f"{r} {v:.3f}" for r, v in self.combined().items())

    def records(self, profile: str) -> str:
        """The two claim rows (`claims.record`), as Markdown."""
        pair = ", ".join(f"{r} {self.mean_cos[r]:.2f}" for r in ("pcgrad", "sago") if r in self.mean_cos)
        return "\n\n".join([
            record("sago-never-opposes", f"smallest cos(g_final, g_r) over all steps: {self.smallest_text()}",
                   verdicts.construction_check(self.combined()), profile),
            record("sago-tighter", f"mean Comb-Retain {pair} (SAGO better aligned than module-wise PCGrad at "
                   f"{float(self.better.mean()):.0%} of the steps on the same gradients)",
                   verdicts.tighter(self.difference), profile)])

