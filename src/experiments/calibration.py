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

import pandas as pd

from experiments.intervals import Estimate, metric_difference
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
# the headline metrics each calibrated benchmark is read by: (utility, higher is better; forget, lower is better)
HEADLINES = {"tofu": ("model_utility", "forget_Q_A_ROUGE")}

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
        """The base scale at the chosen factor, its reason in words."""
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
              start: Mapping, *, utility: str, forget: str, keep: float = KEEP, step: float = LADDER_STEP,
              rungs: int = RUNGS) -> Calibration:
    """The ladder of `run` from `base` down: `points_at(scale)` runs it at one rung and returns
    (its learning rate, its steps, its points); the first rung whose utility stays at least `keep`
    of `start[utility]` at every point is chosen. Only `utility` decides; `forget` is reported."""
    if not 0 < keep <= 1 or not step > 1 or rungs < 1:
        raise ValueError(f"need 0 < keep <= 1, step > 1 and rungs >= 1; got keep={keep}, step={step}, rungs={rungs}")
    floor, tried = keep * float(start[utility]), []
    for k in range(rungs):
        lr, steps, points = points_at(replace(base, lr_factor=base.lr_factor / step ** k))
        tried.append(Rung(base.lr_factor / step ** k, lr, steps, tuple((s, float(m[utility])) for s, m in points),
                          float(points[-1][1][forget]) if points else math.nan))
        if tried[-1].keeps(floor):
            return Calibration(run, base, float(start[utility]), tuple(tried), k, keep)
    return Calibration(run, base, float(start[utility]), tuple(tried), None, keep)


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


def calibration(lab: Lab, recipe: str, run: str, model: str, *, split: str, oracle: str | None = None,
                benchmark: str = "tofu") -> Calibration:
    """The calibrated rate of one recipe run from the learned model `model`, on a QA benchmark's
    forget split `split` (the chapters calibrate on the largest); `oracle` names the model whose
    metrics the evaluations are cached with (the criterion never reads them). A real checkpoint,
    or a lab at the paper's numbers, keeps its scale: a ladder of one rung, not run."""
    loaded = load_recipe(recipe)
    base = lab.recipe_scale(loaded, model, split, benchmark)
    utility, forget = HEADLINES[benchmark]
    config = eval_config(benchmark, split)
    oracle_metrics = None if oracle is None else lab.evaluate(benchmark, lab.model(oracle), config=config)
    start = lab.evaluate(benchmark, lab.model(model), config=config, oracle=oracle_metrics)
    if base.lr_factor == 1.0 or lab.scale_rule == "paper":
        return Calibration(run, base, float(start[utility]), (), None)

    def points_at(scale: Scale):
        spec = lab.recipe_spec(loaded, run, model, scale=scale, benchmark=benchmark, forget_split=split)
        record = lab.run_spec(spec, model, checkpoints=calibration_checkpoints(spec))
        return spec.optim.lr, record["steps"], run_points(lab, benchmark, record, config, oracle_metrics)

    return calibrate(run, base, points_at, start, utility=utility, forget=forget)


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


def check(name: str, points: Sequence[Point], start: Mapping, benchmark: str = "tofu") -> Check:
    """The check of one run from its points (`run_points`) and its start model's metrics."""
    utility, forget = HEADLINES[benchmark]
    base = float(start[utility])
    share = (lambda m: float(m[utility]) / base) if base else (lambda m: math.nan)
    statistic = get_benchmark(benchmark).statistics[forget]
    return Check(name, share(points[0][1]), share(points[-1][1]), metric_difference(points[-1][1], start, statistic))


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
