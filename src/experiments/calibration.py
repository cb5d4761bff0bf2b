"""The scaling rule that keeps each method itself: every recipe run's rate, calibrated on the
laboratory model by one stated criterion that reads no oracle.

`unlearning.recipes.laboratory_scale` multiplies a recipe's rates by the ratio of the start
model's fine-tuning rate to the paper's (2e-3 / 1e-5 = 200 for the laboratory's models). That keeps
the recipes' ratios, but on models this small it collapses the methods: measured on TOFU-mini's
target (size s, forget10), MASC's LoRA run at 200x stops after 2 steps with model utility 0.000,
GradDiff and SimNPO+GD end their 10 epochs at 0.000. So each recipe run's factor is chosen by

    the largest factor of the ladder base, base / 4, base / 16, ... (at most `RUNGS` rungs) at
    which the run keeps its model: at no kept checkpoint and not at its end does the benchmark's
    utility metric fall below `KEEP` (three quarters) of its start model's beyond the paired 95 %
    interval over the same items (`lost_utility`).

It reads the start model and the run's own points, never the retain-only oracle, and it says
nothing about forgetting: each method forgets what that rate gives it, as its authors' rate does
on their models. The ladder runs from the largest factor down and stops at the first rung that
keeps the model, so a method that keeps its model at the base factor runs exactly the base rule.
Every rung is an ordinary run of the store (computed once), and the chosen rung's run is the
chapter's run of that split.

A rung's points are read from its end backwards and the reading stops at the first that lost
the model, so a failed rung costs the evaluations that show it failed.

`check` reads every recipe run again before a chapter judges it: utility at its first point
(its first checkpoint, or its end when it kept none) lost as above is a collapse, and forgetting
that did not move beyond the paired interval over the same items is no removal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import pandas as pd

from experiments.intervals import Estimate, bootstrap, items_of, metric_difference
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
# each benchmark's (utility, higher is better; forget, lower is better), a suite entry or an items statistic;
# WMDP's forget metric is the split's own accuracy (its callers name it); MUSE has none: its KnowMem retain is 0
HEADLINES = {"tofu": ("model_utility", "forget_Q_A_ROUGE"), "tofu-real": ("model_utility", "forget_Q_A_ROUGE"),
             "wmdp": ("mmlu_accuracy", None), "rwku": ("neighbour", "forget"), "rwku-real": ("neighbour", "forget")}


@dataclass(frozen=True)
class Rung:
    """One run of the ladder: its factor, rate and steps, whether it kept its model, the utility at
    each point read (from its end back to the first that lost it) and the forget metric at its end."""

    factor: float
    lr: float
    steps: int
    kept: bool
    utility: tuple[tuple[int, float], ...]
    forget_end: float

    def lowest(self) -> float:
        """The lowest utility over the points read (NaN, a diverged point, counts as lowest)."""
        values = [u for _, u in self.utility]
        return -math.inf if not values or any(math.isnan(u) for u in values) else min(values)


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
        why = f"calibrated: {kept} keeps {KEEP:.0%} of its start model's utility at every point, within its interval"
        return replace(self.base, lr_factor=self.rung.factor, why=why)

    def rows(self) -> list[dict]:
        """One row per rung tried, as the chapters print the ladder."""
        return [{"run": self.run, "factor": rung.factor, "lr": rung.lr, "steps": rung.steps,
                 "lowest utility / start": rung.lowest() / self.start_utility if self.start_utility else math.nan,
                 "end forget": rung.forget_end, "kept": rung.kept, "chosen": i == self.chosen}
                for i, rung in enumerate(self.rungs)]


def calibrate(run: str, base: Scale, points_at: Callable[[Scale], tuple[float, int, Sequence[tuple[int, Callable]]]],
              start: Mapping, *, utility: Callable[[Mapping], float], lost: Callable[[Mapping], bool],
              forget: Callable[[Mapping], float], step: float = LADDER_STEP, rungs: int = RUNGS) -> Calibration:
    """The ladder of `run` from `base` down. `points_at(scale)` runs it at one rung and returns
    (its learning rate, its steps, its points as (step, a function giving that model's metrics));
    the points are read from the end backwards, and a rung keeps its model when `lost` holds at none
    of them; the first rung that keeps it is chosen. `utility` and `forget` only report."""
    if not step > 1 or rungs < 1:
        raise ValueError(f"need step > 1 and rungs >= 1; got step={step}, rungs={rungs}")
    tried = []
    for k in range(rungs):
        lr, steps, points = points_at(replace(base, lr_factor=base.lr_factor / step ** k))
        read, kept, forget_end = [], True, math.nan
        for position, (at, metrics_of) in enumerate(reversed(points)):
            metrics = metrics_of()
            forget_end = forget(metrics) if position == 0 else forget_end
            read.append((at, utility(metrics)))
            if lost(metrics):
                kept = False
                break
        tried.append(Rung(base.lr_factor / step ** k, lr, steps, kept and bool(points), tuple(reversed(read)), forget_end))
        if tried[-1].kept:
            return Calibration(run, base, utility(start), tuple(tried), k)
    return Calibration(run, base, utility(start), tuple(tried), None)


def lost_utility(point: Mapping, start: Mapping, benchmark: str, name: str, keep: float = KEEP) -> bool:
    """Has a model lost its utility: `name` below `keep` of the start model's beyond the paired 95 %
    interval over the same items (point - keep x start, `intervals.bootstrap`), so that one item's
    noise decides nothing; without items, by the values alone; a diverged model (NaN) has lost it."""
    value = headline(point, benchmark, name)
    if math.isnan(value):
        return True
    statistic = get_benchmark(benchmark).statistics.get(name)
    ours, theirs = items_of(point), items_of(start)
    if statistic is None or ours is None or theirs is None:
        return value < keep * headline(start, benchmark, name)
    return bootstrap({"a": ours, "b": theirs}, lambda m: statistic(m["a"]) - keep * statistic(m["b"])).negative


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


def run_models(record: dict) -> list[tuple[int, str | None]]:
    """A run's models by step: every kept checkpoint before its end, then its final model (None
    for a run that diverged)."""
    return [(c["step"], c["dir"]) for c in record["checkpoints"] if c["step"] < record["steps"]] + [
        (record["steps"], record["dir"])]


def run_points(lab: Lab, benchmark: str, record: dict, config, oracle: dict | None) -> list[tuple[int, Mapping]]:
    """A run's points (`run_models`), each evaluated (cached beside it); a diverged run's end reads
    as NaN metrics."""
    return [(at, lab.evaluate(benchmark, folder, config=config, oracle=oracle)) for at, folder in run_models(record)]


def calibration(lab: Lab, recipe: str, run: str, model: str, *, split: str | None = None, oracle: str | None = None,
                benchmark: str = "tofu", forget: str | None = None, **changes) -> Calibration:
    """The calibrated rate of one recipe run from the learned model `model` on `benchmark` at its
    forget split `split` (None: the default); `oracle` names the model the evaluations are cached
    with (never read); `forget` replaces the benchmark's forget metric; `changes` are the run's
    `recipes.Changes` as the chapter runs it, so that the chosen rung is the chapter's run. A real
    checkpoint, or a lab at the paper's numbers, keeps its scale: a ladder of no rung."""
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
        return spec.optim.lr, record["steps"], [(at, partial(lab.evaluate, benchmark, folder, config=config,
                                                             oracle=oracle_metrics)) for at, folder in run_models(record)]

    return calibrate(run, base, points_at, start, utility=lambda m: headline(m, benchmark, utility),
                     lost=lambda m: lost_utility(m, start, benchmark, utility), forget=lambda m: headline(m, benchmark, forget))


def tofu_calibration(lab: Lab, method: str, target: str, size: str, recipe: str | None = None) -> Calibration:
    """A TOFU chapter's calibration of `method` from `target` (of `size`) on TOFU's largest
    forget split: the recipe `recipe` (its paper's, `tofu_recipe`, by default)."""
    split = get_benchmark("tofu").forget_splits[-1]
    return calibration(lab, recipe or tofu_recipe(method), method, target, split=split, oracle=tofu_oracle(split, size))


def ladder_table(calibrations: Mapping[str, Calibration]) -> pd.DataFrame:
    """Every calibration's ladder, one row per rung tried, labelled by its key (the recipes'
    section of a chapter)."""
    rows = [{**row, "run": label} for label, c in calibrations.items() for row in c.rows()]
    return pd.DataFrame(rows).set_index("run") if rows else pd.DataFrame()


@dataclass(frozen=True)
class Check:
    """Before a chapter judges: one run's first point against its start (a collapse when it lost
    its utility, `lost_utility`), its utility's share of the start's at its first point and its end,
    and its forgetting, end minus start with its paired interval over the same items (`moved` when
    the interval lies below zero)."""

    name: str
    first_share: float
    end_share: float
    forget_change: Estimate
    collapsed: bool

    @property
    def moved(self) -> bool:
        return self.forget_change.negative

    def row(self) -> dict:
        return {"run": self.name, "utility at first point / start": self.first_share,
                "utility at end / start": self.end_share, "forget change": self.forget_change.text(),
                "collapsed": self.collapsed, "forgot": self.moved}


def check(name: str, points: Sequence, start: Mapping, benchmark: str = "tofu", forget: str | None = None) -> Check:
    """The check of one run from its points (`run_points`) and its start model's metrics (`forget`
    replaces the benchmark's forget metric, as in `calibration`)."""
    utility, forget = HEADLINES[benchmark][0], forget or HEADLINES[benchmark][1]
    base = headline(start, benchmark, utility)
    share = (lambda m: headline(m, benchmark, utility) / base) if base else (lambda m: math.nan)
    change = (Estimate(math.nan, math.nan, math.nan, "no forget metric named") if forget is None else
              metric_difference(points[-1][1], start, get_benchmark(benchmark).statistics[forget]))
    return Check(name, share(points[0][1]), share(points[-1][1]), change,
                 lost_utility(points[0][1], start, benchmark, utility))


def check_table(checks: Sequence[Check]) -> pd.DataFrame:
    """Every run's check, one row each, as the chapters show it before they judge."""
    return pd.DataFrame([c.row() for c in checks]).set_index("run")


def check_summary(checks: Sequence[Check]) -> str:
    """The check in one sentence: which runs collapsed at their first point and which did not
    forget beyond their interval (none, when every run passed)."""
    collapsed = [c.name for c in checks if c.collapsed]
    still = [c.name for c in checks if not c.moved]
    parts = [f"collapsed at their first point (utility below {KEEP:.0%} of the start's beyond its interval): "
             f"{', '.join(collapsed)}" if collapsed else
             f"no run collapsed at its first point (none fell below {KEEP:.0%} of the start's utility beyond its interval)",
             f"forgetting did not move beyond its interval for {', '.join(still)}" if still else
             "every run's forget metric fell beyond its paired interval"]
    return "; ".join(parts) + "."


def grid_factors(results) -> dict[str, float]:
    """The calibrated rate factor of each recipe run of a SAGO grid's table (`factor` per row; the
    run's name is the first word of `recipe`), for `tables.show_recipe`."""
    return {str(recipe).split(" ")[0]: float(factor) for recipe, factor in zip(results["recipe"], results["factor"])}


def unjudged(checks: Sequence[Check]) -> str:
    """Why a verdict that reads these runs cannot be signed: the runs that collapsed at their first
    point or did not forget beyond their interval ("" when every one passed its check)."""
    failed = [f"{c.name} {'collapsed at its first point' if c.collapsed else 'did not forget beyond its interval'}"
              for c in checks if c.collapsed or not c.moved]
    return f"the check before judging: {'; '.join(failed)}" if failed else ""
