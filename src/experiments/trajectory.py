"""Time to a good model: forget and utility metrics along a run against its wall-clock time.

MASC's headline (arXiv 2606.02920, Figure 1 and s. 5) is speed: its run ends by itself in a
fraction of the baselines' fixed budgets. End-of-run times alone compare how long each method
runs, not what it reaches: a baseline that overshoots to a destroyed model and a self-stopped run
near the oracle are not the same result. The comparison the paper implies is the *time to a good
model*: the wall-clock seconds at which a run first reaches the oracle's forget level (within a
tolerance) while its model utility stays above a floor.

- `checkpoint_steps(max_steps, ...)`: the steps whose weights a run keeps (`runs.run(checkpoints=...)`);
- `trajectory(lab, benchmark, record, ...)`: one row per point of a run (its start model, each
  checkpoint, its final model) with the seconds into the run and the benchmark's metrics;
- `Criterion` and `time_to_quality(rows, criterion)`: the first point that meets it, or None.

The seconds are the run's own wall time up to that step, probes included and the checkpoint copies
left out (`engine.unlearn`); evaluation time is reported apart, never added.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from experiments.intervals import Estimate, metric_difference
from unlearning.benchmarks import EvalConfig


def checkpoint_steps(max_steps: int, first: int = 2, growth: float = 1.5) -> tuple[int, ...]:
    """Steps first, then each about `growth` times the last (at least one more), below `max_steps`
    (the final model is the run's own): dense early, where the fast runs reach their level."""
    if first < 1 or growth <= 1 or not math.isfinite(growth):
        raise ValueError(f"need first >= 1 and a finite growth > 1, got first={first}, growth={growth}")
    steps, step = [], first
    while step < max_steps:
        steps.append(step)
        step = max(step + 1, round(step * growth))
    return tuple(steps)


def trajectory(lab, benchmark: str, record: dict, start: dict, *, config=None, oracle: dict | None = None) -> list[dict]:
    """The points of one run: its start (step 0, 0 s, the metrics `start` of the model it began
    from), every kept checkpoint and its final model, each with `step`, `seconds` and the
    benchmark's metrics (evaluated and cached beside each checkpoint). A run that diverged ends at
    its last checkpoint."""
    config = config or EvalConfig()
    rows = [{"step": 0, "seconds": 0.0, **start}]
    for checkpoint in record["checkpoints"]:
        if checkpoint["step"] < record["steps"]:
            rows.append({"step": checkpoint["step"], "seconds": checkpoint["seconds"],
                         **lab.evaluate(benchmark, checkpoint["dir"], config=config, oracle=oracle)})
    if record["dir"] is not None:
        rows.append({"step": record["steps"], "seconds": record["train_seconds"] + record["probe_seconds"],
                     **lab.evaluate(benchmark, record["dir"], config=config, oracle=oracle)})
    return rows


@dataclass(frozen=True)
class Criterion:
    """A good model: as good as the retain-only oracle as far as the evaluation can see. Its
    `forget_metric` (lower is more forgotten) is not above the oracle's beyond the paired 95 %
    interval over the same items, and its `utility_metric` is not below the oracle's beyond it
    (`experiments.intervals`, with the benchmark's `statistics`). No tolerance is typed: the
    interval is what the evaluation can see."""

    oracle: Mapping
    statistics: Mapping
    forget_metric: str = "forget_Q_A_ROUGE"
    utility_metric: str = "model_utility"
    labels: tuple[str, str] = ("forget ROUGE-L", "model utility")  # how a page names the two metrics

    @property
    def level(self) -> float:
        """The oracle's forget metric: a good model forgets at least this much, within the interval."""
        return float(self.oracle[self.forget_metric])

    @property
    def floor(self) -> float:
        """The oracle's utility: a good model keeps at least this much, within the interval."""
        return float(self.oracle[self.utility_metric])

    def gaps(self, row: Mapping) -> tuple[Estimate, Estimate]:
        """The row's forget and utility metrics minus the oracle's, with their paired intervals."""
        return tuple(metric_difference(row, self.oracle, self.statistics[key])
                     for key in (self.forget_metric, self.utility_metric))

    def met(self, row: Mapping) -> bool:
        forget, utility = self.gaps(row)
        if math.isnan(forget.value) or math.isnan(utility.value):
            return False
        return not forget.positive and not utility.negative

    def describe(self) -> str:
        return (f"{self.labels[0]} not above the oracle's ({self.level:.3f}) and {self.labels[1]} not below the "
                f"oracle's ({self.floor:.3f}), each beyond the paired 95 % interval over the same items")


def good_model(oracle: Mapping, statistics: Mapping) -> Criterion:
    """What a good TOFU model is: the oracle's forget ROUGE-L and model utility, within the paired
    interval (`Criterion`); `statistics` are the TOFU benchmark's (`Benchmark.statistics`)."""
    return Criterion(oracle, statistics)


def time_to_quality(rows: list[dict], criterion: Criterion) -> dict | None:
    """The first point of a trajectory that meets `criterion` (its row), or None: never."""
    return next((row for row in rows if criterion.met(row)), None)


def held_point(rows: list[dict], criterion: Criterion, self_stopping: bool) -> tuple[dict, float] | None:
    """Where a method *holds* a good model, paying for how it finds it (issue 31's fair speed
    measure, beyond the paper): the point and the evaluation seconds spent to find it, or None:
    never. A self-stopping method (MASC: its probes are already in its run time) has its final
    model, which counts only if it meets `criterion`, at no extra cost; any other method must
    evaluate its checkpoints to find the first good one, so every evaluation up to and including
    that checkpoint (`eval_seconds`) is spent."""
    if self_stopping:
        return (rows[-1], 0.0) if criterion.met(rows[-1]) else None
    spent = 0.0
    for row in rows[1:]:
        spent += row.get("eval_seconds", 0.0)
        if criterion.met(row):
            return row, spent
    return None


def selected_time(rows: list[dict], criterion: Criterion, self_stopping: bool) -> float | None:
    """Seconds until a method holds a good model (`held_point`): the point's seconds into the run
    plus the evaluations spent finding it. None: never."""
    found = held_point(rows, criterion, self_stopping)
    return None if found is None else found[0]["seconds"] + found[1]


def quality_table(trajectories: dict[str, list[dict]], reached: dict[str, dict | None]) -> list[dict]:
    """Per method: when (seconds, step) it first met the criterion, its metrics there, when its run
    ended and what evaluating its checkpoints cost (reported apart, never added to its time)."""
    rows = []
    for method, points in trajectories.items():
        hit = reached.get(method)
        rows.append({"method": method, "good model at (s)": None if hit is None else hit["seconds"],
                     "at step": None if hit is None else hit["step"],
                     "forget ROUGE-L there": None if hit is None else hit["forget_Q_A_ROUGE"],
                     "model utility there": None if hit is None else hit["model_utility"],
                     "run ends at (s)": points[-1]["seconds"], "steps": points[-1]["step"],
                     "forget ROUGE-L at the end": points[-1]["forget_Q_A_ROUGE"],
                     "model utility at the end": points[-1]["model_utility"],
                     "evaluation s (apart)": sum(p.get("eval_seconds", 0.0) for p in points[1:])})
    return rows
