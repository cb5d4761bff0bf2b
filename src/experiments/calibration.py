"""The scaling rule that keeps each method itself: every recipe run's rate, calibrated on the
laboratory model by one stated criterion that reads no oracle.

`unlearning.recipes.laboratory_scale` multiplies a recipe's rates by the ratio of the start
model's fine-tuning rate to the paper's (2e-3 / 1e-5 = 200 for the laboratory's models). That keeps
the recipes' ratios, but on models this small it collapses the methods: measured on TOFU-mini's
target (size s, forget10), MASC's LoRA run at 200x stops after 2 steps with model utility 0.000,
GradDiff and SimNPO+GD end their 10 epochs at 0.000. So each recipe run's factor is chosen by

    the largest factor of the ladder base, base / 4, base / 16, ... (at most `RUNGS` rungs) at
    which the run keeps its model: at every kept checkpoint and at its end, the benchmark's
    utility metric stays at least `KEEP` (three quarters) of its start model's.

It reads the start model and the run's own points, never the retain-only oracle, and it says
nothing about forgetting: each method forgets what that rate gives it, as its authors' rate does
on their models. The ladder runs from the largest factor down and stops at the first rung that
keeps the model, so a method that keeps its model at the base factor runs exactly the base rule.
Every rung is an ordinary run of the store (computed once), and the chosen rung's run is the
chapter's run of that split.

`check` reads every recipe run again before a chapter judges it: utility at its first point
(its first checkpoint, or its end when it kept none) below `KEEP` of the start's is a collapse,
and forgetting that did not move beyond the paired interval over the same items is no removal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from experiments.intervals import Estimate, items_of, metric_difference
from experiments.lab import Lab, eval_config, tofu_oracle, tofu_recipe
from experiments.trajectory import checkpoint_steps
from unlearning.benchmarks import get_benchmark
from unlearning.recipes import Scale
from unlearning.recipes import load as load_recipe

KEEP = 0.75        # the share of the start model's utility a run must keep at every point
LADDER_STEP = 4.0  # each rung divides the factor by this
RUNGS = 6          # 200 -> 50, 12.5, 3.1, 0.78, 0.2 for the laboratory's models
# the points a fixed-budget calibration run keeps: steps 2, 4, 8, ... (chapter 6's time-to-quality schedule)
CHECKPOINT_FIRST, CHECKPOINT_GROWTH = 2, 2.0
# the headline metrics each calibrated benchmark is read by
# (utility, higher is better; forget, lower is better): an entry of the suite or a statistic of its items.
# WMDP's forget metric is the unlearned split's own accuracy (each caller names it); MUSE has none here:
# its utility, KnowMem on the retain set, sits at zero on the laboratory's models (chapter 7's floors)
HEADLINES = {"tofu": ("model_utility", "forget_Q_A_ROUGE"), "tofu-real": ("model_utility", "forget_Q_A_ROUGE"),
             "wmdp": ("mmlu_accuracy", None), "rwku": ("neighbour", "forget"), "rwku-real": ("neighbour", "forget")}

Point = tuple[int, Mapping]  # (step, the benchmark's metrics of the model at that step)


@dataclass(frozen=True)
class Rung:
    """One run of the ladder: its factor and rate, and the utility and forget metric at each of
    its points (kept checkpoints, then its end; NaN for a run that diverged)."""

    factor: float
    lr: float
    steps: int
    utility: tuple[tuple[int, float], ...]
    forget_end: float

    def lowest(self) -> float:
        """The lowest utility over the run's points (NaN, a diverged point, counts as lowest)."""
        values = [u for _, u in self.utility]
        return -math.inf if not values or any(math.isnan(u) for u in values) else min(values)

    def keeps(self, floor: float) -> bool:
        """Does the run keep its model: utility at least `floor` at every point?"""
        return self.lowest() >= floor


@dataclass(frozen=True)
class Calibration:
    """The ladder of one recipe run from one start model: every rung tried, in order, and the
    first that kept the model (`chosen`; None when none did: the run then takes the last rung,
    the smallest factor, and the page says it)."""

    run: str
    base: Scale
    start_utility: float
    rungs: tuple[Rung, ...]
    chosen: int | None
    keep: float = KEEP

    @property
    def rung(self) -> Rung:
        return self.rungs[-1 if self.chosen is None else self.chosen]

    @property
    def scale(self) -> Scale:
        """The base scale at the chosen factor, its reason in words (the base itself where no
        ladder ran: a real checkpoint, or the paper's own numbers)."""
        if not self.rungs:
            return self.base
        kept = (f"the largest factor of {self.base.lr_factor:g} / {LADDER_STEP:g}^k ({self.base.why}) at which the run"
                if self.chosen is not None else f"no factor of {self.base.lr_factor:g} / {LADDER_STEP:g}^k down to this one "
                f"({self.base.why}) at which the run")
        why = f"calibrated: {kept} keeps {self.keep:.0%} of its start model's utility at every point"
        return replace(self.base, lr_factor=self.rung.factor, why=why)

    def rows(self) -> list[dict]:
        """One row per rung tried, as the chapters print the ladder."""
        return [{"run": self.run, "factor": rung.factor, "lr": rung.lr, "steps": rung.steps,
                 "lowest utility / start": rung.lowest() / self.start_utility if self.start_utility else math.nan,
                 "end forget": rung.forget_end, "kept": rung.keeps(self.keep * self.start_utility),
                 "chosen": i == self.chosen} for i, rung in enumerate(self.rungs)]


def calibrate(run: str, base: Scale, points_at: Callable[[Scale], tuple[float, int, Sequence[Point]]],
              start: Mapping, *, utility: Callable[[Mapping], float], forget: Callable[[Mapping], float],
              keep: float = KEEP, step: float = LADDER_STEP, rungs: int = RUNGS) -> Calibration:
    """The ladder of `run` from `base` down: `points_at(scale)` runs it at one rung and returns
    (its learning rate, its steps, its points); the first rung whose `utility` (read from a point's
    metrics) stays at least `keep` of the start's at every point is chosen. Only `utility` decides;
    `forget` is reported."""
    if not 0 < keep <= 1 or not step > 1 or rungs < 1:
        raise ValueError(f"need 0 < keep <= 1, step > 1 and rungs >= 1; got keep={keep}, step={step}, rungs={rungs}")
    start_utility, tried = utility(start), []
    for k in range(rungs):
        lr, steps, points = points_at(replace(base, lr_factor=base.lr_factor / step ** k))
        tried.append(Rung(base.lr_factor / step ** k, lr, steps, tuple((s, utility(m)) for s, m in points),
                          forget(points[-1][1]) if points else math.nan))
        if tried[-1].keeps(keep * start_utility):
            return Calibration(run, base, start_utility, tuple(tried), k, keep)
    return Calibration(run, base, start_utility, tuple(tried), None, keep)


def headline(metrics: Mapping, benchmark: str, name: str | None) -> float:
    """A metric of an evaluation: its own entry, or the benchmark's statistic of that name
    recomputed from its items (RWKU's forget and neighbour summaries); NaN for a diverged run."""
    if name is None:  # a benchmark whose forget metric its caller names (WMDP), named by none
        return math.nan
    if name in metrics:
        return float(metrics[name])
    items = items_of(metrics)
    if items is None:
        return math.nan
    one = {part: {key: np.asarray(values, dtype=float)[None, :] for key, values in fields.items()}
           for part, fields in items.items()}
    return float(get_benchmark(benchmark).statistics[name](one)[0])


def calibration_checkpoints(spec) -> tuple[int, ...]:
    """The steps a calibration run keeps: 2, 4, 8, ... below its budget for a fixed budget; none
    for a run that stops by itself (its end is its point, and it may come first)."""
    return () if spec.stop.kind != "fixed" else checkpoint_steps(spec.max_steps, CHECKPOINT_FIRST, CHECKPOINT_GROWTH)


def common_factor(calibrations: Sequence[Calibration]) -> float:
    """One rate factor for several start models (the scale study's sizes, run at one rate as the
    paper runs them): the smallest that any of their calibrations chose, so every one keeps its model."""
    return min(c.scale.lr_factor for c in calibrations)


def run_points(lab: Lab, benchmark: str, record: dict, config, oracle: dict | None) -> list[Point]:
    """A run's points: every kept checkpoint before its end, then its final model, each evaluated
    (cached beside it); a diverged run's end reads as NaN metrics."""
    points = [(c["step"], lab.evaluate(benchmark, c["dir"], config=config, oracle=oracle))
              for c in record["checkpoints"] if c["step"] < record["steps"]]
    return points + [(record["steps"], lab.evaluate(benchmark, record["dir"], config=config, oracle=oracle))]


def calibration(lab: Lab, recipe: str, run: str, model: str, *, split: str | None = None, oracle: str | None = None,
                benchmark: str = "tofu", forget: str | None = None, **changes) -> Calibration:
    """The calibrated rate of one recipe run from the learned model `model` on `benchmark`, at its
    forget split `split` (its default when None; TOFU's chapters calibrate on the largest); `oracle`
    names the model whose metrics the evaluations are cached with (the criterion never reads them).
    `forget` replaces the benchmark's forget metric (WMDP: the split's own accuracy) and `changes`
    are the run's `recipes.Changes` as the chapter runs it (rule, retain split, ...), so that the
    chosen rung is the chapter's run. A real checkpoint, or a lab at the paper's numbers, keeps its
    scale: a ladder of no rung."""
    loaded = load_recipe(recipe)
    base = lab.recipe_scale(loaded, model, split, benchmark)
    if base.lr_factor == 1.0 or lab.scale_rule == "paper":
        return Calibration(run, base, math.nan, (), None)
    utility, forget = HEADLINES[benchmark][0], forget or HEADLINES[benchmark][1]
    config = eval_config(benchmark, split)
    oracle_metrics = None if oracle is None else lab.evaluate(benchmark, lab.model(oracle), config=config)
    start = lab.evaluate(benchmark, lab.model(model), config=config, oracle=oracle_metrics)

    def points_at(scale: Scale):
        spec = lab.recipe_spec(loaded, run, model, scale=scale, benchmark=benchmark, forget_split=split, **changes)
        record = lab.run_spec(spec, model, checkpoints=calibration_checkpoints(spec))
        return spec.optim.lr, record["steps"], run_points(lab, benchmark, record, config, oracle_metrics)

    return calibrate(run, base, points_at, start, utility=lambda m: headline(m, benchmark, utility),
                     forget=lambda m: headline(m, benchmark, forget))


def tofu_calibration(lab: Lab, method: str, target: str, size: str, recipe: str | None = None) -> Calibration:
    """A TOFU chapter's calibration of `method` from `target` (of `size`) on TOFU's largest
    forget split: the recipe `recipe` (its paper's, `tofu_recipe`, by default)."""
    split = get_benchmark("tofu").forget_splits[-1]
    return calibration(lab, recipe or tofu_recipe(method), method, target, split=split, oracle=tofu_oracle(split, size))


def tofu_scales(lab: Lab, methods, target: str, size: str) -> dict[str, Scale]:
    """The calibrated scale of every method of a TOFU chapter but RMU (which runs its own tuned
    settings under the book's protocol): what `tofu_run` takes as `scale`."""
    return {m: tofu_calibration(lab, m, target, size).scale for m in methods if m != "RMU"}


def ladder_table(calibrations: Mapping[str, Calibration]) -> pd.DataFrame:
    """Every calibration's ladder, one row per rung tried, labelled by its key (the recipes'
    section of a chapter)."""
    rows = [{**row, "run": label} for label, c in calibrations.items() for row in c.rows()]
    return pd.DataFrame(rows).set_index("run") if rows else pd.DataFrame()


@dataclass(frozen=True)
class Check:
    """Before a chapter judges: one run's first point against its start (a collapse when its
    utility keeps less than `KEEP` of the start's) and its forgetting, end minus start with its
    paired interval over the same items (`moved` when the interval lies below zero)."""

    name: str
    first_share: float
    end_share: float
    forget_change: Estimate

    @property
    def collapsed(self) -> bool:
        return not self.first_share >= KEEP

    @property
    def moved(self) -> bool:
        return self.forget_change.negative

    def row(self) -> dict:
        return {"run": self.name, "utility at first point / start": self.first_share,
                "utility at end / start": self.end_share, "forget change": self.forget_change.text(),
                "collapsed": self.collapsed, "forgot": self.moved}


def check(name: str, points: Sequence[Point], start: Mapping, benchmark: str = "tofu", forget: str | None = None) -> Check:
    """The check of one run from its points (`run_points`) and its start model's metrics (`forget`
    replaces the benchmark's forget metric, as in `calibration`)."""
    utility, forget = HEADLINES[benchmark][0], forget or HEADLINES[benchmark][1]
    base = headline(start, benchmark, utility)
    share = (lambda m: headline(m, benchmark, utility) / base) if base else (lambda m: math.nan)
    change = (Estimate(math.nan, math.nan, math.nan, "no forget metric named") if forget is None else
              metric_difference(points[-1][1], start, get_benchmark(benchmark).statistics[forget]))
    return Check(name, share(points[0][1]), share(points[-1][1]), change)


def check_table(checks: Sequence[Check]) -> pd.DataFrame:
    """Every run's check, one row each, as the chapters show it before they judge."""
    return pd.DataFrame([c.row() for c in checks]).set_index("run")


def check_summary(checks: Sequence[Check]) -> str:
    """The check in one sentence: which runs collapsed at their first point and which did not
    forget beyond their interval (none, when every run passed)."""
    collapsed = [c.name for c in checks if c.collapsed]
    still = [c.name for c in checks if not c.moved]
    parts = [f"collapsed at their first point (utility below {KEEP:.0%} of the start's): {', '.join(collapsed)}"
             if collapsed else f"no run collapsed at its first point (each kept at least {KEEP:.0%} of the start's utility)",
             f"forgetting did not move beyond its interval for {', '.join(still)}" if still else
             "every run's forget metric fell beyond its paired interval"]
    return "; ".join(parts) + "."


def grid_factors(results, split_column: str | None = None, split: str | None = None) -> dict[str, float]:
    """The calibrated rate factor of each recipe run of a SAGO grid's table (`factor` per row; the
    run's name is the first word of `recipe`), for `tables.show_recipe`; rows of one split only
    when `split_column` and `split` are given."""
    if split_column is not None:
        results = results[results[split_column] == split]
    return {str(recipe).split(" ")[0]: float(factor) for recipe, factor in zip(results["recipe"], results["factor"])}
